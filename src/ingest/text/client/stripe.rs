//! The lines Stripe's Python SDK logs of its requests (logger `stripe`, or its own
//! `stripe.log`), each a logfmt record with its keys sorted, so `message=` comes first and a
//! value with a blank in it is written as Python's `repr` (`'...'`, or `"..."` when it
//! holds a `'`):
//!
//! - `message='Request to Stripe api' method=post url=https://api.stripe.com/v1/refunds`
//!   (INFO): the request is sent;
//! - `message="Encountered a retryable error Unexpected error communicating with Stripe.
//!   ...\n\n(Network error: ReadTimeout: ...)"`: the request just sent failed (the SDK
//!   names no URL: its requests go one at a time);
//! - `message='Initiating retry 1 for request post https://... after sleeping 0.50
//!   seconds.'`: the same request is sent again after the wait, with the same
//!   `Idempotency-Key` (the SDK gives every POST one and logs none of them);
//! - `message='Stripe API response' path=https://... response_code=200`: the answer to the
//!   request sent last.
//!
//! The SDK's other lines (`Post details`, `API response body`, `Dashboard link`, the API
//! error's fields) are none of these.

use super::shapes::{ClientLine, is_url, split_once, status_code};
use crate::event::HTTP_METHODS;
use crate::time::Duration;

/// One of the lines above, or `None`.
pub(super) fn read(msg: &[u8]) -> Option<ClientLine<'_>> {
    let (message, rest) = value(msg.strip_prefix(b"message=")?)?;
    if message == b"Request to Stripe api" {
        let method = method(field(rest, b"method=")?)?;
        let url = field(rest, b"url=").filter(|u| is_url(u))?;
        return Some(ClientLine::Sending {
            method,
            url,
            headers_below: false,
        });
    }
    if message == b"Stripe API response" {
        let url = field(rest, b"path=").filter(|u| is_url(u))?;
        let status = status_code(field(rest, b"response_code=")?)?;
        return Some(ClientLine::Answer {
            url: Some(url),
            status,
        });
    }
    if let Some(error) = message.strip_prefix(b"Encountered a retryable error ") {
        return Some(network_error(error));
    }
    let retry = message.strip_prefix(b"Initiating retry ")?;
    let (number, retry) = split_once(retry, b" for request ")?;
    number.iter().all(u8::is_ascii_digit).then_some(())?;
    let (method_name, retry) = split_once(retry, b" ")?;
    let (url, wait) = split_once(retry, b" after sleeping ")?;
    let wait = wait.strip_suffix(b" seconds.")?;
    is_url(url).then_some(())?;
    Some(ClientLine::Resending {
        method: method(method_name)?,
        url,
        status: None,
        after: seconds(wait)?,
    })
}

/// The failure in `Unexpected error communicating with Stripe. ...\n\n(Network error:
/// ReadTimeout: ...)` (through requests) or `(Network error: A ConnectError was raised)`
/// (through httpx): the HTTP library's exception class and its words, else the SDK's own
/// `APIConnectionError` with the whole text.
fn network_error(text: &[u8]) -> ClientLine<'_> {
    let named = split_once(text, b"(Network error: ").and_then(|(_, rest)| {
        let rest = rest.strip_suffix(b")").unwrap_or(rest);
        let (class, words) = match rest.strip_prefix(b"A ") {
            Some(raised) => {
                let (class, words) = split_once(raised, b" was raised")?;
                let words = words.strip_prefix(b" with error message ").unwrap_or(b"");
                (class, words)
            }
            None => split_once(rest, b": ")?,
        };
        let is_class = !class.is_empty()
            && (class.iter()).all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
        is_class.then_some((class, words))
    });
    let (class, error) = named.unwrap_or((b"APIConnectionError", text));
    ClientLine::Failed {
        url: None,
        class,
        error,
    }
}

/// `post` → `POST`, the method as the event model spells it.
fn method(name: &[u8]) -> Option<&'static [u8]> {
    HTTP_METHODS
        .iter()
        .copied()
        .find(|m| m.eq_ignore_ascii_case(name))
}

/// `0.50` seconds, as the SDK writes a wait (`%.2f`). It waits a few seconds at most: a
/// minute or more is no wait of its.
pub(super) fn seconds(text: &[u8]) -> Option<Duration> {
    const LONGEST: Duration = Duration::from_secs(60);
    super::super::retry_lines::wait_seconds(text).filter(|&d| d < LONGEST)
}

/// A logfmt value at the start of `text`: bare up to the next blank, or Python's `repr` of
/// a string (quoted, backslash escapes left as written); and what follows it.
fn value(text: &[u8]) -> Option<(&[u8], &[u8])> {
    match text.first()? {
        &q @ (b'\'' | b'"') => {
            let mut i = 1;
            while i < text.len() {
                match text[i] {
                    b'\\' => i += 2,
                    b if b == q => return Some((&text[1..i], &text[i + 1..])),
                    _ => i += 1,
                }
            }
            None
        }
        _ => {
            let end = text.iter().position(|&b| b == b' ').unwrap_or(text.len());
            Some((&text[..end], &text[end..]))
        }
    }
}

/// The value of `key` (`url=`) among the record's fields after its message.
fn field<'a>(fields: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let mut rest = fields;
    loop {
        rest = rest.trim_ascii_start();
        if rest.is_empty() {
            return None;
        }
        let eq = rest.iter().position(|&b| b == b'=')?;
        let (name, after) = (&rest[..=eq], &rest[eq + 1..]);
        let (found, next) = value(after)?;
        if name == key {
            return Some(found);
        }
        rest = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &[u8] = b"https://api.stripe.com/v1/refunds";

    #[test]
    fn the_sdks_four_lines() {
        let sent = read(
            b"message='Request to Stripe api' method=post url=https://api.stripe.com/v1/refunds",
        );
        assert_eq!(
            sent,
            Some(ClientLine::Sending {
                method: b"POST",
                url: URL,
                headers_below: false
            })
        );
        let answer = read(
            b"message='Stripe API response' path=https://api.stripe.com/v1/refunds response_code=200",
        );
        assert_eq!(
            answer,
            Some(ClientLine::Answer {
                url: Some(URL),
                status: 200
            })
        );
        let failed = read(
            br#"message="Encountered a retryable error Unexpected error communicating with Stripe.  If this problem persists,\nlet us know at support@stripe.com.\n\n(Network error: ReadTimeout: HTTPSConnectionPool(host='api.stripe.com', port=443): Read timed out. (read timeout=10))""#,
        );
        assert_eq!(
            failed,
            Some(ClientLine::Failed {
                url: None,
                class: b"ReadTimeout",
                error: b"HTTPSConnectionPool(host='api.stripe.com', port=443): Read timed out. (read timeout=10)",
            })
        );
        let retry = read(
            b"message='Initiating retry 2 for request post https://api.stripe.com/v1/refunds after sleeping 0.71 seconds.'",
        );
        assert_eq!(
            retry,
            Some(ClientLine::Resending {
                method: b"POST",
                url: URL,
                status: None,
                after: Duration(710_000_000),
            })
        );
    }

    #[test]
    fn an_error_raised_through_httpx_names_its_class() {
        let failed = read(
            br#"message="Encountered a retryable error Unexpected error communicating with Stripe. If this problem\npersists, let us know at support@stripe.com.\n\n(Network error: A ConnectError was raised)""#,
        );
        assert_eq!(
            failed,
            Some(ClientLine::Failed {
                url: None,
                class: b"ConnectError",
                error: b"",
            })
        );
    }

    #[test]
    fn an_error_without_the_libraries_words_is_the_sdks_own() {
        let failed = read(b"message='Encountered a retryable error Network is down'");
        assert_eq!(
            failed,
            Some(ClientLine::Failed {
                url: None,
                class: b"APIConnectionError",
                error: b"Network is down",
            })
        );
    }

    #[test]
    fn the_sdks_other_lines_and_look_alikes_are_none_of_these() {
        for line in [
            &b"api_version=2026-10-28 message='Post details' post_data=amount=4500"[..],
            b"body='{\"id\": \"re_1\"}' message='API response body'",
            b"link=https://dashboard.stripe.com/test/logs/req_1 message='Dashboard link for request'",
            b"message='Stripe v1 API error received' error_code=None",
            b"message='Request to Stripe api' method=post",
            b"message='Request to Stripe api' method=fetch url=https://api.stripe.com/v1/refunds",
            b"message='Stripe API response' path=https://api.stripe.com/v1/refunds response_code=abc",
            b"message='Initiating retry x for request post https://a/v1/refunds after sleeping 0.50 seconds.'",
            b"message='Initiating retry 1 for request post https://a/v1/refunds after sleeping 999999.00 seconds.'",
            b"message='Request to Stripe api",
            b"message=ready",
        ] {
            assert_eq!(read(line), None, "{}", String::from_utf8_lossy(line));
        }
    }
}
