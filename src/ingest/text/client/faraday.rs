//! What Ruby's Faraday logs through its logger middleware (`f.response :logger, logger`),
//! each line under the program name `request` or `response`:
//!
//! - `request: POST https://host/v1/refunds`: a request sent (read as go-retryablehttp's
//!   bare request line is);
//! - with `headers: true`, the default, the request's headers as one record below it:
//!   `request: User-Agent: "Faraday v1.1.0"` and then, without a stamp, `Idempotency-Key:
//!   "..."` and the rest, one a line, each value as Ruby's `inspect` writes it;
//! - `response: Status 201`: the answer to the request sent last, and its headers below it
//!   as the request's.
//!
//! Faraday logs no exception: a try its retry middleware sends again is logged again, with
//! no `Status` between (see [`super::TextParser::request_sent`]).

use super::jdk_httpclient::{KeyBelow, is_header_line};
use super::shapes::{ClientLine, status_code};
use crate::ingest::lines::Ahead;

/// `Status 201`, or `None`.
pub(super) fn status(msg: &[u8]) -> Option<ClientLine<'_>> {
    let code = msg.strip_prefix(b"Status ")?;
    (code.len() == 3).then_some(())?;
    Some(ClientLine::Answer {
        url: None,
        status: status_code(code)?,
    })
}

/// A block of headers logged right after a request or answer line: how many of the lines
/// ahead it takes, and the idempotency key among them.
pub(super) struct HeaderBlock<'a> {
    pub(super) lines: usize,
    pub(super) key: KeyBelow<'a>,
    /// It ran past the lines at hand: the lines after them may be its too.
    pub(super) cut: bool,
}

/// The headers Faraday logs below the line just read, under the program name `side`
/// (`request` or `response`): the next line's message is the first header, the lines after
/// it without a stamp the others. A block that runs past the lines at hand says nothing
/// of a key it may hold further on.
pub(super) fn header_block<'a>(ahead: &Ahead<'a>, side: &[u8]) -> Option<HeaderBlock<'a>> {
    let bytes = ahead.bytes();
    let first_end = ahead.line_end(0)?;
    let first = &bytes[..first_end];
    let header = without_tags(after_program_name(first, side)?);
    quoted_header(header).then_some(())?;
    let mut key = key_of(header);
    let mut lines = 1;
    let mut start = first_end + 1;
    let ended = loop {
        let Some(end) = ahead.line_end(lines) else {
            break false;
        };
        let raw = bytes[start..end]
            .strip_suffix(b"\r")
            .unwrap_or(&bytes[start..end]);
        if crate::ingest::starts_with_timestamp(raw) || !quoted_header(raw) {
            break true;
        }
        key = key.or(key_of(raw));
        lines += 1;
        start = end + 1;
    };
    let none = match ended {
        true => KeyBelow::NoKey,
        false => KeyBelow::Unseen,
    };
    Some(HeaderBlock {
        lines,
        key: key.unwrap_or(none),
        cut: !ended,
    })
}

/// The message of a logger's line whose program name is `side`: after Ruby's `-- request:
/// ` (its default formatter), or after a level and blanks (`INFO  request: `, an ISO
/// formatter's), within the line's first hundred bytes or so.
fn after_program_name<'a>(line: &'a [u8], side: &[u8]) -> Option<&'a [u8]> {
    let head = &line[..line.len().min(120)];
    let named = memchr::memmem::find_iter(head, side).find(|&at| {
        let before = head[..at].trim_ascii_end();
        let after_level = (before.rsplit(|&b| b == b' ').next())
            .is_some_and(|w| !w.is_empty() && w.iter().all(u8::is_ascii_uppercase));
        let spaced = head[..at].ends_with(b" ");
        let named = head[at + side.len()..].starts_with(b": ");
        named && spaced && (before.ends_with(b"--") || after_level)
    })?;
    Some(&line[named + side.len() + 2..])
}

/// Rails' tagged logging puts `[tag] ` before each message.
fn without_tags(mut msg: &[u8]) -> &[u8] {
    while msg.first() == Some(&b'[') {
        let Some(close) = memchr::memchr(b']', msg) else {
            break;
        };
        msg = msg[close + 1..].trim_ascii_start();
    }
    msg
}

/// `Name: "value"`: a header as Faraday dumps it.
fn quoted_header(line: &[u8]) -> bool {
    !line.starts_with(b" ") && is_header_line(line) && memchr::memmem::find(line, b": \"").is_some()
}

/// The key an `Idempotency-Key: "..."` line gives: a filtered value (`logger.filter`'s
/// `"[FILTERED]"`) hides a key that was sent.
fn key_of(line: &[u8]) -> Option<KeyBelow<'_>> {
    let colon = memchr::memchr(b':', line)?;
    let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
    name.eq_ignore_ascii_case(b"idempotency-key")
        .then_some(())?;
    let value = (value
        .strip_prefix(b"\"")
        .and_then(|v| v.strip_suffix(b"\"")))
    .unwrap_or(value);
    Some(match crate::ingest::is_key_value(value) {
        true => KeyBelow::Key(value),
        false => KeyBelow::Unseen,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(text: &str) -> Option<(usize, Option<String>)> {
        let bytes = text.as_bytes();
        let newlines: Vec<usize> = memchr::memchr_iter(b'\n', bytes).collect();
        let ahead = Ahead::new(bytes, &newlines);
        let b = header_block(&ahead, b"request")?;
        let key = match b.key {
            KeyBelow::Key(k) => Some(String::from_utf8_lossy(k).into_owned()),
            KeyBelow::NoKey => None,
            KeyBelow::Unseen => Some("?".into()),
        };
        Some((b.lines, key))
    }

    #[test]
    fn the_headers_below_a_request_and_their_key() {
        let dump = "I, [2026-12-06T19:02:22.511142 #27866]  INFO -- request: User-Agent: \"Faraday v1.1.0\"\n\
                    Content-Type: \"application/json\"\n\
                    Idempotency-Key: \"7edeebc3\"\n\
                    I, [2026-12-06T19:02:24.033640 #27866]  INFO -- response: Status 409\n";
        assert_eq!(block(dump), Some((3, Some("7edeebc3".into()))));
        let keyless = dump.replace("Idempotency-Key: \"7edeebc3\"", "Accept: \"*/*\"");
        assert_eq!(block(&keyless), Some((3, None)));
        let filtered = dump.replace("7edeebc3", "[FILTERED]");
        assert_eq!(block(&filtered), Some((3, Some("?".into()))));
        let tagged = "2026-12-06T19:01:53.790Z INFO  request: [RefundAgent] [pid=1] Idempotency-Key: \"k\"\n";
        assert_eq!(block(tagged), Some((1, Some("k".into()))));
        // Headers not logged: the next line is the answer, or anything else.
        let none = "I, [2026-12-06T19:02:24.033640 #27866]  INFO -- response: Status 201\n";
        assert_eq!(block(none), None);
        assert_eq!(
            block("I, [2026-12-06T19:02:24.0 #1]  INFO -- agent: refund ok\n"),
            None
        );
        // `request: ` inside another program's words is no header.
        let words = "E, [2026-12-06T19:02:24.0 #1] ERROR -- agent: failed refund request: TimeoutError: \"execution expired\"\n";
        assert_eq!(block(words), None);
        // A block cut by the end of the lines at hand: its key may be further on.
        let cut = "I, [2026-12-06T19:02:22.5 #1]  INFO -- request: User-Agent: \"Faraday v1.1.0\"\nContent-Type: \"application/json\"";
        assert_eq!(block(cut), Some((1, Some("?".into()))));
    }

    #[test]
    fn a_status_line_is_an_answer() {
        assert_eq!(
            status(b"Status 201"),
            Some(ClientLine::Answer {
                url: None,
                status: 201
            })
        );
        assert_eq!(status(b"Status 2010"), None);
        assert_eq!(status(b"Status: ok"), None);
    }
}
