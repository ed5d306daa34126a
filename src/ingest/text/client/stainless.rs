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
use super::{Sent, TextParser, agents_own, unlogged_failure};
use crate::event::{CallRef, EventKind, HTTP_METHODS, url_parts};
use crate::time::{Duration, Timestamp};

/// A retry line that named no request, none of the dispatch's being open: its request is
/// the next the client logs ([`TextParser::unnamed_retries`]).
#[derive(Clone, Copy)]
pub(super) struct Unnamed {
    /// The earliest the try retried was sent: the dispatch's latest line before it.
    since: Timestamp,
    /// The retry line's time, when the try before failed.
    at: Timestamp,
    after: Duration,
}

type Placed = (Timestamp, EventKind);

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

impl TextParser {
    /// The events of [`ClientLine::Retried`] at `at` (`since`: the dispatch's latest line):
    /// the try retried, its failure when no line gave one, and the resend once the wait is
    /// over; `None` when the line is no request of the dispatch's.
    pub(super) fn sdk_retry(
        &mut self,
        call: &CallRef,
        path: Option<&[u8]>,
        after: Duration,
        at: Timestamp,
        since: Timestamp,
    ) -> Option<Vec<Placed>> {
        let mut events = Vec::with_capacity(3);
        let Some(failed) = self.retried(call, path, since, &mut events) else {
            if path.is_none() && !self.process.client.overlapping {
                // At INFO the newer template's request that timed out is in no line: the
                // next request the client logs says which it was.
                self.process
                    .client
                    .unnamed
                    .push(Unnamed { since, at, after });
                return Some(events);
            }
            return None;
        };
        if !failed.failure_read && failed.status.is_none() {
            // Its failure is in no line: a timeout, or a connection lost.
            events.push((at, unlogged_failure(call, failed.number)));
        }
        // Sent again as it was, once the wait is over (the SDK keeps its key).
        let again = Sent {
            announced: true,
            ..failed.again(self.next_attempt(call), at.plus(after))
        };
        events.push((again.at, self.client_attempt(call, &again)));
        self.process.client.record(again);
        Some(events)
    }

    /// The request an SDK's [`ClientLine::Retried`] sends again, marked answered: the
    /// latest to `path` (else the one sent last), unless its answer says it is no retry
    /// (a 201, a 422: the request retried is a later one). A request to `path` that no line
    /// gave was sent after the dispatch's latest line (`since`): its attempt is pushed.
    fn retried(
        &mut self,
        call: &CallRef,
        path: Option<&[u8]>,
        since: Timestamp,
        events: &mut Vec<Placed>,
    ) -> Option<Sent> {
        let latest = match path {
            Some(p) => {
                let p = std::str::from_utf8(p).ok()?;
                (self.process.client.sent.iter_mut())
                    .rfind(|s| url_parts(&s.url).1.ends_with(p))
                    .filter(|s| s.may_be_retried())
            }
            None => self.process.client.last_retryable(),
        };
        if let Some(s) = latest {
            s.answered = true;
            return Some(s.copied());
        }
        let path = path.filter(|p| !agents_own(p) && !models_path(p))?;
        let mut sent = self.unanswered(call, b"", path, since)?;
        sent.answered = true;
        if std::mem::take(&mut self.process.client.implied_failure_last) {
            // The failure read last (a traceback at DEBUG) was of this request, whose
            // attempt correlation implies.
            sent.failure_read = true;
            return Some(sent);
        }
        events.push((since, self.placed_attempt(call, &sent)));
        Some(sent)
    }

    /// The request `method url` the client logs after retry lines that named none
    /// ([`Unnamed`]): the try each retried, its unlogged failure and the resend, pushed;
    /// the last resend is left open for the line to answer (or, `Sending`, to be).
    /// Nothing when there are none, or the request is the agent's own (the model's call).
    pub(super) fn unnamed_retries(
        &mut self,
        call: &CallRef,
        method: &[u8],
        url: &[u8],
        events: &mut Vec<Placed>,
    ) {
        // A read is no payment's retry; the model's own call was the one retried.
        if self.process.client.unnamed.is_empty() || super::is_safe_method(method) {
            return;
        }
        let unnamed = std::mem::take(&mut self.process.client.unnamed);
        if agents_own(url) {
            return;
        }
        let since = unnamed[0].since;
        let Some(mut tried) = self.unanswered(call, method, url, since) else {
            return;
        };
        events.push((since, self.placed_attempt(call, &tried)));
        for retry in unnamed {
            events.push((retry.at, unlogged_failure(call, tried.number)));
            let again = tried.again(self.next_attempt(call), retry.at.plus(retry.after));
            events.push((again.at, self.client_attempt(call, &again)));
            tried = again;
        }
        tried.announced = true;
        self.process.client.record(tried);
    }
}

/// A model's endpoint as the SDKs name it in a retry line, relative to their base URL
/// (Anthropic's `/v1/messages`, OpenAI's `/responses` under `/v1`): a path alone, so the
/// host that would tell is not there. Another host's `/v1/messages` is no model's.
fn models_path(path: &[u8]) -> bool {
    [&b"/v1/messages"[..], b"/responses", b"/messages"].contains(&path)
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
