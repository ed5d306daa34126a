//! The lines Go's go-retryablehttp logs of its requests. Its default logger: `[DEBUG] POST
//! http://host/v1/refunds` (the request is sent; logged once, before the first try),
//! `[ERR] POST http://... request failed: Post "...": context deadline exceeded` (that try
//! failed) and `[DEBUG] POST http://... (status: 503): retrying in 1s (2 left)` (it is sent
//! again after the wait, having got that answer if one is named). Through a leveled logger
//! (hclog, slog's text through an adapter) the same three say `performing request:
//! method=POST url=...`, `request failed: error="..." method=POST url=...` and `retrying
//! request: request="POST http://... (status: 503)" timeout=1s remaining=2`.

use super::shapes::{ClientLine, is_url, rfind, split_once, status_code};
use crate::event::HTTP_METHODS;
use crate::time::Duration;

/// One of the lines above, or `None`.
pub(super) fn read(msg: &[u8]) -> Option<ClientLine<'_>> {
    match msg.first()? {
        b'p' => performing(msg),
        b'r' => leveled_failure(msg).or_else(|| leveled_retry(msg)),
        _ => default_logger(msg),
    }
}

/// `POST http://...`, `POST http://... request failed: ERR`, `POST http://...[ (status:
/// N)]: retrying in WAIT (N left)`.
fn default_logger(msg: &[u8]) -> Option<ClientLine<'_>> {
    let (method, rest) = split_once(msg, b" ")?;
    HTTP_METHODS.contains(&method).then_some(())?;
    let (url, rest) = match rest.iter().position(|&b| b == b' ') {
        Some(end) => (&rest[..end], &rest[end..]),
        None => (rest, &b""[..]),
    };
    if rest.is_empty() {
        return is_url(url).then_some(ClientLine::Sending {
            method,
            url,
            headers_below: false,
        });
    }
    if let Some(error) = rest.strip_prefix(b" request failed: ") {
        return is_url(url).then_some(go_failure(url, error));
    }
    let (url, status, rest) = match url.strip_suffix(b":") {
        Some(url) => (url, None, rest),
        None => {
            let rest = rest.strip_prefix(b" (status: ")?;
            let (status, rest) = split_once(rest, b"):")?;
            (url, Some(status_code(status)?), rest)
        }
    };
    let wait = rest.strip_prefix(b" retrying in ")?;
    let (wait, left) = split_once(wait, b" (")?;
    (is_url(url) && left.ends_with(b" left)")).then_some(())?;
    Some(ClientLine::Resending {
        method,
        url,
        status,
        after: go_duration(wait)?,
    })
}

/// `performing request: method=POST url=http://...`.
fn performing(msg: &[u8]) -> Option<ClientLine<'_>> {
    let rest = msg.strip_prefix(b"performing request: ")?;
    let (method, url) = (token(rest, b"method=")?, token(rest, b"url=")?);
    (HTTP_METHODS.contains(&method) && is_url(url)).then_some(ClientLine::Sending {
        method,
        url,
        headers_below: false,
    })
}

/// `request failed: error="Post "http://...": context deadline exceeded" method=POST
/// url=http://...`: hclog quotes a value with blanks, not the quotes inside it.
fn leveled_failure(msg: &[u8]) -> Option<ClientLine<'_>> {
    let rest = msg.strip_prefix(b"request failed: ")?;
    let url = token(rest, b"url=")?;
    let error = match rest.strip_prefix(b"error=\"") {
        Some(quoted) => {
            &quoted[..rfind(quoted, b"\" method=").or_else(|| rfind(quoted, b"\" url="))?]
        }
        None => token(rest, b"error=")?,
    };
    is_url(url).then_some(go_failure(url, error))
}

/// `retrying request: request="POST http://...[ (status: N)]" timeout=WAIT remaining=N`.
fn leveled_retry(msg: &[u8]) -> Option<ClientLine<'_>> {
    let rest = msg.strip_prefix(b"retrying request: request=\"")?;
    let (request, rest) = split_once(rest, b"\" ")?;
    let (method, request) = split_once(request, b" ")?;
    let (url, status) = match split_once(request, b" (status: ") {
        Some((url, status)) => (url, Some(status_code(status.strip_suffix(b")")?)?)),
        None => (request, None),
    };
    let wait = token(rest, b"timeout=")?;
    (HTTP_METHODS.contains(&method) && is_url(url)).then_some(ClientLine::Resending {
        method,
        url,
        status,
        after: go_duration(wait)?,
    })
}

/// The request to `url` failed with Go's `*url.Error` saying `error`.
fn go_failure<'a>(url: &'a [u8], error: &'a [u8]) -> ClientLine<'a> {
    ClientLine::Failed {
        url: Some(url),
        class: b"url.Error",
        error,
    }
}

/// A Go `time.Duration` as its `String` writes it: `500ms`, `1s`, `1.5s`, `2m0s`, `1h2m3s`;
/// so Rust's `Duration` as `Debug` writes it (`9.234692ms`, `1.5s`, `0ns`: one number and
/// its unit, `µs` for microseconds as Go writes them).
pub(in crate::ingest::text) fn go_duration(text: &[u8]) -> Option<Duration> {
    let text = std::str::from_utf8(text).ok()?;
    if text == "0s" {
        return Some(Duration(0));
    }
    let mut nanos = 0f64;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit() && c != '.')?;
        let value: f64 = rest[..digits].parse().ok()?;
        let unit_end = rest[digits..]
            .find(|c: char| c.is_ascii_digit())
            .map_or(rest.len(), |i| digits + i);
        let scale = match &rest[digits..unit_end] {
            "h" => 3.6e12,
            "m" => 6e10,
            "s" => 1e9,
            "ms" => 1e6,
            "us" | "µs" => 1e3,
            "ns" => 1.0,
            _ => return None,
        };
        nanos += value * scale;
        rest = &rest[unit_end..];
    }
    Some(Duration(nanos.round() as i64))
}

/// The value of `name` (`method=`) among blank-separated tokens, up to the next blank.
fn token<'a>(text: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let at = text
        .windows(name.len())
        .enumerate()
        .find(|&(i, w)| w == name && (i == 0 || text[i - 1] == b' '))?
        .0;
    let value = &text[at + name.len()..];
    let end = value.iter().position(|&b| b == b' ').unwrap_or(value.len());
    (end > 0).then_some(&value[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &[u8] = b"http://127.0.0.1:18941/v1/refunds";

    #[test]
    fn the_default_loggers_three_lines() {
        let sending = read(b"POST http://127.0.0.1:18941/v1/refunds");
        assert_eq!(
            sending,
            Some(ClientLine::Sending {
                method: b"POST",
                url: URL,
                headers_below: false
            })
        );
        let failed = read(b"POST http://127.0.0.1:18941/v1/refunds request failed: Post \"http://127.0.0.1:18941/v1/refunds\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)");
        let Some(ClientLine::Failed {
            url: Some(url),
            error,
            ..
        }) = failed
        else {
            panic!("{failed:?}")
        };
        assert_eq!(url, URL);
        assert!(error.starts_with(b"Post \"http://") && error.ends_with(b"awaiting headers)"));
        let again = read(b"POST http://127.0.0.1:18941/v1/refunds: retrying in 500ms (2 left)");
        assert_eq!(
            again,
            Some(ClientLine::Resending {
                method: b"POST",
                url: URL,
                status: None,
                after: Duration(500_000_000)
            })
        );
        let answered =
            read(b"POST http://127.0.0.1:18941/v1/refunds (status: 422): retrying in 1s (1 left)");
        assert!(matches!(
            answered,
            Some(ClientLine::Resending {
                status: Some(422),
                ..
            })
        ));
    }

    #[test]
    fn the_leveled_loggers_three_lines() {
        let sending =
            read(b"performing request: method=POST url=http://127.0.0.1:18941/v1/refunds");
        assert_eq!(
            sending,
            Some(ClientLine::Sending {
                method: b"POST",
                url: URL,
                headers_below: false
            })
        );
        let failed = read(b"request failed: error=\"Post \"http://127.0.0.1:18941/v1/refunds\": context deadline exceeded\" method=POST url=http://127.0.0.1:18941/v1/refunds");
        let Some(ClientLine::Failed { error, .. }) = failed else {
            panic!("{failed:?}")
        };
        assert_eq!(
            error,
            &b"Post \"http://127.0.0.1:18941/v1/refunds\": context deadline exceeded"[..]
        );
        let again = read(b"retrying request: request=\"POST http://127.0.0.1:18941/v1/refunds (status: 503)\" timeout=1.5s remaining=2");
        assert_eq!(
            again,
            Some(ClientLine::Resending {
                method: b"POST",
                url: URL,
                status: Some(503),
                after: Duration(1_500_000_000)
            })
        );
    }

    #[test]
    fn other_lines_are_none_of_these() {
        for line in [
            &b"POST http://x/v1/refunds  (attempt 1)"[..],
            b"POST /v1/refunds",
            b"POST http://x/v1/refunds: created",
            b"PUSH http://x/v1/refunds",
            b"performing request: method=POST",
            b"request failed: timeout",
            b"retrying request: request=\"POST http://x\" timeout=soon remaining=2",
        ] {
            assert_eq!(read(line), None, "{}", String::from_utf8_lossy(line));
        }
        assert_eq!(go_duration(b"2m0s"), Some(Duration(120_000_000_000)));
        assert_eq!(go_duration(b"1h2m3.5s"), Some(Duration(3_723_500_000_000)));
        assert_eq!(go_duration(b"5 s"), None);
    }
}
