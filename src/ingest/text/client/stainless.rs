//! The line the SDKs Stainless generates (OpenAI's, Anthropic's, and payments APIs' such as
//! Modern Treasury's, Increase's, Lithic's) log at INFO when they send a request again,
//! from their `_base_client` logger:
//!
//! - `Retrying request to /api/payment_orders in 0.470717 seconds`: the path is the
//!   request's, relative to the client's base URL;
//! - `Retrying request in 0.473848 seconds (retry 1 of 2)` (the newer template): no path,
//!   so the request sent last.
//!
//! The line names no error. The SDK retries a timeout, a connection error, and the
//! statuses 408, 409, 429 and 5xx; httpx logs a request only once answered, so a request
//! that timed out is in no other line at INFO. At DEBUG the SDK's own `Sending HTTP
//! Request: POST ...` and the traceback under `Encountered httpx.TimeoutException` give the
//! request and its failure, and this line then only says it is sent again.

use super::shapes::{ClientLine, is_url, split_once};
use super::stripe::seconds;
use crate::event::HTTP_METHODS;

/// One of the lines above, or `None`.
pub(super) fn read(msg: &[u8]) -> Option<ClientLine<'_>> {
    if let Some(request) = msg.strip_prefix(b"Sending HTTP Request: ") {
        return sending(request);
    }
    let rest = msg.strip_prefix(b"Retrying request ")?;
    let (path, wait) = match rest.strip_prefix(b"to ") {
        Some(rest) => {
            let (path, wait) = split_once(rest, b" in ")?;
            let plain = !path.is_empty() && !path.iter().any(u8::is_ascii_whitespace);
            plain.then_some(())?;
            (Some(path), wait)
        }
        None => (None, rest.strip_prefix(b"in ")?),
    };
    let (wait, tail) = split_once(wait, b" seconds")?;
    let tail_ok = match path {
        Some(_) => tail.is_empty(),
        None => tail.starts_with(b" (retry ") && tail.ends_with(b")"),
    };
    tail_ok.then_some(())?;
    Some(ClientLine::Retried {
        path,
        after: seconds(wait)?,
    })
}

/// `POST https://host/path` of the older template's DEBUG line (the newer one names no
/// URL, and is not read).
fn sending(request: &[u8]) -> Option<ClientLine<'_>> {
    let (method, url) = split_once(request, b" ")?;
    (HTTP_METHODS.contains(&method) && is_url(url)).then_some(ClientLine::Sending {
        method,
        url,
        headers_below: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    #[test]
    fn both_templates_are_read_and_other_words_are_not() {
        assert_eq!(
            read(b"Retrying request to /api/payment_orders in 0.470717 seconds"),
            Some(ClientLine::Retried {
                path: Some(b"/api/payment_orders"),
                after: Duration(470_717_000),
            })
        );
        assert_eq!(
            read(b"Retrying request in 0.473848 seconds (retry 1 of 2)"),
            Some(ClientLine::Retried {
                path: None,
                after: Duration(473_848_000),
            })
        );
        assert_eq!(
            read(b"Sending HTTP Request: POST https://x/api/payment_orders"),
            Some(ClientLine::Sending {
                method: b"POST",
                url: b"https://x/api/payment_orders",
                headers_below: false,
            })
        );
        for other in [
            &b"Sending HTTP Request: POST"[..],
            b"Retrying request to /v1/refunds in a moment",
            b"Retrying request to the payments API in 2 seconds",
            b"Retrying request in 0.5 seconds",
            b"Retrying request to /v1/refunds in 90 seconds",
        ] {
            assert_eq!(read(other), None, "{}", String::from_utf8_lossy(other));
        }
    }
}
