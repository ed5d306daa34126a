//! The lines Java's `java.net.http.HttpClient` logs of its requests when asked
//! (`-Djdk.httpclient.HttpClient.log=requests,headers,errors`, through `System.Logger` to
//! JUL, logger `jdk.httpclient.HttpClient`): `REQUEST: http://host/v1/refunds POST` (sent),
//! `HEADERS: REQUEST HEADERS:` with the headers on the lines below it, unindented, up to a
//! blank line (the key among them), `RESPONSE: (POST http://host/v1/refunds) 201 HTTP_1_1
//! Local port:  38564` (its answer), and `ERROR: ...` diagnostics of an exchange the client
//! already failed to its caller (`Http1Exchange.cancel: count=1`, `HTTP/1 read subscriber
//! recorded error: ...`, a `jdk.internal.net.http` exception): the caller's own failure
//! (`HttpTimeoutException`) is the attempt's, these are no other attempt.

use super::shapes::{ClientLine, is_url, split_once, status_code};
use crate::event::HTTP_METHODS;

/// The logger's name, where a layout writes it before the message.
const LOGGER: &[u8] = b"jdk.httpclient.HttpClient ";

/// One of the lines above, or `None`.
pub(super) fn read(msg: &[u8]) -> Option<ClientLine<'_>> {
    let msg = msg.strip_prefix(LOGGER).unwrap_or(msg);
    match msg.first()? {
        b'R' => request(msg).or_else(|| response(msg)),
        b'H' if msg.starts_with(b"HEADERS: ") => Some(ClientLine::Headers),
        b'E' | b'H' | b'j' if is_diagnostic(msg) => Some(ClientLine::Diagnostic),
        _ => None,
    }
}

/// `REQUEST: URL METHOD`.
fn request(msg: &[u8]) -> Option<ClientLine<'_>> {
    let rest = msg.strip_prefix(b"REQUEST: ")?;
    let (url, method) = split_once(rest.trim_ascii_end(), b" ")?;
    (is_url(url) && HTTP_METHODS.contains(&method)).then_some(ClientLine::Sending {
        method,
        url,
        headers_below: true,
    })
}

/// `RESPONSE: (METHOD URL) STATUS VERSION ...`.
fn response(msg: &[u8]) -> Option<ClientLine<'_>> {
    let rest = msg.strip_prefix(b"RESPONSE: (")?;
    let (request, rest) = split_once(rest, b") ")?;
    let (method, url) = split_once(request, b" ")?;
    let status = status_code(rest.get(..3)?)?;
    (is_url(url) && HTTP_METHODS.contains(&method) && rest.get(3).is_none_or(|&b| b == b' '))
        .then_some(())?;
    Some(ClientLine::Answered {
        method,
        url: std::str::from_utf8(url).ok()?.to_owned(),
        status,
        reason: b"",
    })
}

/// The client's account of an exchange it failed (`ERROR: ...`, or the same after a layout
/// took `ERROR:` for the record's level).
fn is_diagnostic(msg: &[u8]) -> bool {
    let msg = msg.strip_prefix(b"ERROR: ").unwrap_or(msg);
    // `HTTP/1 read subscriber ...`, `HTTP/2 propagating ...`: words after the protocol, where
    // a status line has its code (`HTTP/2 409 Conflict`).
    let protocol_then_words = (msg
        .strip_prefix(b"HTTP/1 ")
        .or(msg.strip_prefix(b"HTTP/2 ")))
    .and_then(|rest| rest.first())
    .is_some_and(u8::is_ascii_lowercase);
    protocol_then_words
        || [
            &b"Http1Exchange"[..],
            b"Http2Connection",
            b"Http2Stream",
            b"jdk.internal.net.http.",
        ]
        .iter()
        .any(|p| msg.starts_with(p))
}

/// What the request headers logged below a `REQUEST:` line say of its key.
#[derive(Debug, PartialEq)]
pub(super) enum KeyBelow<'a> {
    /// `Idempotency-Key: K` among them.
    Key(&'a [u8]),
    /// The block was read to its end: no key was sent.
    NoKey,
    /// No block in the lines at hand (headers not logged, or past the read buffer).
    Unseen,
}

/// The idempotency key among the request headers logged below a `REQUEST:` line (`bytes`:
/// the bytes after it, `line_end(k)` where the `k`th line ahead ends): the block after
/// the next few lines' `HEADERS: REQUEST HEADERS:`, up to a blank line or any line that is
/// no header's.
pub(super) fn key_below(bytes: &[u8], line_end: impl Fn(usize) -> Option<usize>) -> KeyBelow<'_> {
    let mut start = 0;
    let mut in_block = false;
    for k in 0..64 {
        let Some(end) = line_end(k) else {
            return KeyBelow::Unseen;
        };
        let line = bytes[start..end]
            .strip_suffix(b"\r")
            .unwrap_or(&bytes[start..end]);
        start = end + 1;
        if !in_block {
            in_block = memchr::memmem::find(line, b"HEADERS: REQUEST HEADERS:").is_some();
            if !in_block && k >= 2 {
                return KeyBelow::Unseen;
            }
            continue;
        }
        if line.trim_ascii().is_empty() || !is_header_line(line) {
            return KeyBelow::NoKey;
        }
        let Some((name, value)) = split_once(line, b":") else {
            continue;
        };
        if name.eq_ignore_ascii_case(b"idempotency-key") {
            let value = value.trim_ascii();
            return match crate::ingest::is_key_value(value) {
                true => KeyBelow::Key(value),
                false => KeyBelow::NoKey,
            };
        }
    }
    KeyBelow::Unseen
}

/// Whether `line`, without a timestamp, is one of a logged header block's lines: `Name:
/// value`, the request line (`POST /v1/refunds HTTP/1.1`), or indented (the response's).
pub(in crate::ingest) fn is_header_line(raw: &[u8]) -> bool {
    if raw.first().is_some_and(|b| *b == b' ' || *b == b'\t') {
        return true;
    }
    let name_end = raw.iter().position(|&b| b == b':').unwrap_or(0);
    let is_name = name_end > 0
        && raw[..name_end]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_');
    let request_line = split_once(raw, b" ").is_some_and(|(method, rest)| {
        HTTP_METHODS.contains(&method) && memchr::memmem::find(rest, b" HTTP/").is_some()
    });
    (is_name && raw[name_end..].starts_with(b": ")) || request_line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clients_lines_are_read_and_its_diagnostics_are_nothing() {
        let sending =
            read(b"jdk.httpclient.HttpClient REQUEST: http://127.0.0.1:42495/v1/refunds POST");
        assert_eq!(
            sending,
            Some(ClientLine::Sending {
                method: b"POST",
                url: b"http://127.0.0.1:42495/v1/refunds",
                headers_below: true
            })
        );
        assert_eq!(
            read(b"RESPONSE: (POST http://127.0.0.1:42495/v1/refunds) 201 HTTP_1_1 Local port:  38564"),
            Some(ClientLine::Answered {
                method: b"POST",
                url: "http://127.0.0.1:42495/v1/refunds".into(),
                status: 201,
                reason: b""
            })
        );
        for noise in [
            &b"ERROR: Http1Exchange.cancel: count=1"[..],
            b"ERROR: HTTP/1 read subscriber recorded error: http://h/v1/refunds POST - jdk.internal.net.http.common.ConnectionExpiredException: subscription is finished",
            b"HTTP/1 propagating recorded error: http://h/v1/refunds POST - x",
            b"jdk.internal.net.http.common.ConnectionExpiredException: subscription is finished",
        ] {
            assert_eq!(read(noise), Some(ClientLine::Diagnostic), "{}", String::from_utf8_lossy(noise));
        }
        assert_eq!(
            read(b"HEADERS: REQUEST HEADERS:"),
            Some(ClientLine::Headers)
        );
        for other in [
            &b"REQUEST: refund for order A-1"[..],
            b"HTTP/2 409 Conflict",
            b"ERROR: refund failed",
            b"RESPONSE: (POST http://h/v1/refunds) OK",
        ] {
            assert_eq!(read(other), None, "{}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn the_key_is_read_from_the_header_block_below() {
        let text = b"2026-12-06T09:59:15.526Z INFO jdk.httpclient.HttpClient HEADERS: REQUEST HEADERS:\nPOST /v1/refunds HTTP/1.1\nContent-Length: 49\nIdempotency-Key: 22f76fa0\n\n2026-12-06T09:59:16.469Z INFO next\n";
        let ends: Vec<usize> = (0..text.len()).filter(|&i| text[i] == b'\n').collect();
        assert_eq!(
            key_below(text, |k| ends.get(k).copied()),
            KeyBelow::Key(b"22f76fa0")
        );
        let unkeyed = b"x HEADERS: REQUEST HEADERS:\nPOST /v1/refunds HTTP/1.1\nHost: h\n\nIdempotency-Key: later\n";
        let ends: Vec<usize> = (0..unkeyed.len())
            .filter(|&i| unkeyed[i] == b'\n')
            .collect();
        assert_eq!(
            key_below(unkeyed, |k| ends.get(k).copied()),
            KeyBelow::NoKey
        );
        // The buffer ends inside the block: what it says of the key is not known.
        let cut = b"x HEADERS: REQUEST HEADERS:\nPOST /v1/refunds HTTP/1.1\nHost: h\n";
        let ends: Vec<usize> = (0..cut.len()).filter(|&i| cut[i] == b'\n').collect();
        assert_eq!(key_below(cut, |k| ends.get(k).copied()), KeyBelow::Unseen);
        let none = b"2026-12-06T09:59:16.469Z INFO agent waiting\nsomething\nelse\n";
        let ends: Vec<usize> = (0..none.len()).filter(|&i| none[i] == b'\n').collect();
        assert_eq!(key_below(none, |k| ends.get(k).copied()), KeyBelow::Unseen);
        assert!(is_header_line(b"Idempotency-Key: 22f76fa0"));
        assert!(is_header_line(b"POST /v1/refunds HTTP/1.1"));
        assert!(is_header_line(b"    content-length: 99"));
        assert!(!is_header_line(b"The refund has been issued."));
    }
}
