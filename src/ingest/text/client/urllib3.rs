//! The events of the lines only urllib3 logs (its answered requests are httpx's shape:
//! [`super::outcomes`]): the connection it opens, which places a request not yet logged,
//! and its retry, which stands for the failure of a request no line gave and the request
//! sent again.

use super::super::{Verdict, as_text, small};
use super::{InDispatch, Sent, TextParser, agents_own};
use crate::classify::classify_failure;
use crate::event::{EventKind, Failure, Text};
use crate::time::Timestamp;

impl TextParser {
    /// [`ClientLine::Connecting`](super::ClientLine::Connecting) to `origin` at `at`: no
    /// event, but the origin of the paths urllib3's retries name, and the earliest a
    /// request not yet logged can have been sent.
    pub(super) fn urllib3_connection(&mut self, origin: String, at: Timestamp) -> Option<Verdict> {
        if !agents_own(origin.as_bytes()) {
            self.process.client.origin = origin;
            self.process.client.since = at;
        }
        Some(Verdict::Ignored)
    }

    /// [`ClientLine::Retrying`](super::ClientLine::Retrying): the request to `path` (on
    /// `origin`, else the connection's) failed with `error(message)`, and is sent again.
    pub(super) fn urllib3_retry(
        &mut self,
        InDispatch { call, since, at }: InDispatch,
        error: &[u8],
        message: &[u8],
        path: &[u8],
        origin: Option<String>,
    ) -> Option<Verdict> {
        let origin = origin.or_else(|| {
            let known = &self.process.client.origin;
            (!known.is_empty()).then(|| known.clone())
        });
        let url = match &origin {
            Some(o) if path.starts_with(b"/") => format!("{o}{}", as_text(path)?),
            _ => as_text(path)?.to_string(),
        };
        if agents_own(url.as_bytes()) {
            return Some(Verdict::Ignored);
        }
        let mut events = Vec::with_capacity(3);
        let failed = match self.process.client.latest_to(url.as_bytes()) {
            Some(s) if !s.answered => {
                s.answered = true;
                Sent {
                    failure_read: true,
                    ..s.copied()
                }
            }
            // urllib3 logs a request once answered: the one that failed is in no line. Its
            // method and key are not known.
            _ => {
                let sent = Sent {
                    answered: true,
                    failure_read: true,
                    ..Sent::new(self.next_attempt(&call), self.urls.get(&url), since)
                };
                events.push((since, self.placed_attempt(&call, &sent)));
                sent
            }
        };
        let error = match error.contains(&b'.') {
            true => small(error),
            false => Text::from(format!("urllib3.exceptions.{}", as_text(error)?)),
        };
        let message = small(message);
        let failure = Failure {
            call: Some(call.clone()),
            attempt: Some(failed.number),
            class: classify_failure(&error, &message),
            error,
            message,
            raised_in: None,
            resent_after: None,
        };
        events.push((at, EventKind::Failure(Box::new(failure))));
        // Sent again as it was: the same method, URL and headers (no key stays none).
        let again = failed.again(self.next_attempt(&call), at);
        events.push((at, self.client_attempt(&call, &again)));
        self.process.client.record(again);
        self.read_as_latest(at, Verdict::Events(events))
    }
}
