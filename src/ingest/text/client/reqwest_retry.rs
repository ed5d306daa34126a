//! The line Rust's reqwest-retry logs (through `tracing`, WARN by default, target
//! `reqwest_retry::middleware`) when its `RetryTransientMiddleware` sends a request again:
//! `Retry attempt #0. Sleeping 9.234692ms before the next attempt` (the number counts the
//! retries before this one, from 0; the wait is Rust's `Debug` of a `Duration`). It names
//! neither the request nor why: the middleware retries a timeout, a connection error and
//! the statuses 408, 429 and 5xx, and reqwest logs no request of its own. The request sent
//! again is a clone of the one that failed, headers and all: a key set on it before the
//! middleware (`.header("Idempotency-Key", ...)` on the `RequestBuilder`) is sent again.
//! tracing's text layout writes the span the program was in before the message and the
//! text reader puts that span's fields after it (`  run="7f3a" step=4`): they may follow.

use super::shapes::{ClientLine, split_once};
use super::{InDispatch, Sent, TextParser, Verdict};
use crate::classify::FailureClass;
use crate::event::{EventKind, Failure, Text};
use crate::time::Duration;

/// The line above, or `None`.
pub(super) fn read(msg: &[u8]) -> Option<ClientLine<'_>> {
    let rest = msg.strip_prefix(b"Retry attempt #")?;
    let (number, rest) = split_once(rest, b". Sleeping ")?;
    let counted = !number.is_empty() && number.iter().all(u8::is_ascii_digit);
    let (wait, tail) = split_once(rest, b" before the next attempt")?;
    // Nothing after it but the fields of the spans the text reader put there.
    let alone = tail.is_empty() || tail.starts_with(b"  ");
    (counted && alone && !wait.is_empty()).then_some(())?;
    Some(ClientLine::MiddlewareRetry {
        after: super::retryablehttp::go_duration(wait)?,
    })
}

impl TextParser {
    /// [`ClientLine::MiddlewareRetry`]: the dispatch's request sent last failed and is sent
    /// again, the same headers, `after` the wait. When a line gave that request (the
    /// program's own `POST url=...` before `send()`), it is read as a Stainless SDK's
    /// unnamed retry: its unlogged failure, and the resend with its method, URL and key.
    /// Else the request is in no line (reqwest logs none): the failure of a request
    /// correlation implies, sent again after the wait, as a retry library's line is read
    /// (its key unknown, as no line showed it).
    pub(super) fn middleware_retry(
        &mut self,
        InDispatch { call, since, at }: InDispatch,
        after: Duration,
    ) -> Option<Verdict> {
        if std::mem::take(&mut self.client.read_in_flight) {
            // A read was sent last: its retry changes nothing.
            return Some(Verdict::Ignored);
        }
        if self.client.last_retryable().is_some() {
            let events = self.sdk_retry(&call, None, after, at, since)?;
            return self.read_as_latest(at, Verdict::Events(events));
        }
        self.note_outcome(&Some(call.clone()), None, None);
        let failure = Failure {
            call: Some(call),
            attempt: None,
            class: FailureClass::Ambiguous,
            error: Text::from_static_str("unlogged failure"),
            message: Text::from_static_str(
                "reqwest-retry sent the request again without naming the error",
            ),
            raised_in: None,
            resent_after: Some(after),
        };
        self.read_as_latest(at, Verdict::Event(at, EventKind::Failure(Box::new(failure))))
    }
}

impl super::ClientLog {
    /// The request sent last, when a client that sends one at a time retries it next: no
    /// answer yet, or one a client retries (408, 409, 429, 5xx); none while calls overlap
    /// or retries that named no request wait for theirs ([`super::stainless::Unnamed`]).
    pub(super) fn last_retryable(&mut self) -> Option<&mut Sent> {
        if self.overlapping || !self.unnamed.is_empty() {
            return None;
        }
        self.sent.last_mut().filter(|s| s.may_be_retried())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_middlewares_line_and_its_wait_are_read() {
        let after = |msg: &str| match read(msg.as_bytes()) {
            Some(ClientLine::MiddlewareRetry { after }) => Some(after),
            _ => None,
        };
        assert_eq!(
            after("Retry attempt #0. Sleeping 9.234692ms before the next attempt"),
            Some(Duration(9_234_692))
        );
        assert_eq!(
            after("Retry attempt #2. Sleeping 1.5s before the next attempt"),
            Some(Duration(1_500_000_000))
        );
        assert_eq!(
            after("Retry attempt #1. Sleeping 250µs before the next attempt"),
            Some(Duration(250_000))
        );
        // The fields of the span it was logged in, put after the message.
        assert_eq!(
            after(r#"Retry attempt #0. Sleeping 0ns before the next attempt  run="7f3a" step=4"#),
            Some(Duration(0))
        );
    }

    #[test]
    fn other_words_are_no_such_line() {
        for other in [
            "Retry attempt #0. Sleeping before the next attempt",
            "Retry attempt #x. Sleeping 1s before the next attempt",
            "Retry attempt #1. Sleeping 1 second before the next attempt",
            "Retry attempt #1. Sleeping 1s before the next attempt, said the agent",
            "Retry attempt 1. Sleeping 1s before the next attempt",
            "Retry attempt #1 failed",
        ] {
            assert!(read(other.as_bytes()).is_none(), "{other}");
        }
    }
}
