//! The events of client lines that say a request is sent, its outcome not yet known: a
//! request line (go-retryablehttp's, the JDK client's, Faraday's, Stripe's SDK's, a
//! Stainless SDK's at DEBUG), and a request sent again after a wait (go-retryablehttp,
//! Stripe's SDK).

use super::super::{Verdict, as_text, small};
use super::jdk_httpclient::{self, KeyBelow};
use super::{InDispatch, Sent, TextParser, agents_own, is_safe_method, unlogged_failure};
use crate::event::{CallRef, EventKind, Response, Text, same_url, url_parts};
use crate::ingest::lines::Ahead;
use crate::time::Duration;

impl TextParser {
    /// [`ClientLine::Sending`](super::ClientLine::Sending) of `method url`: the dispatch's
    /// next attempt, its key read from the headers below (on the lines `ahead` when
    /// `headers_below`, else as `below` already gave them).
    pub(super) fn request_sent<'a>(
        &mut self,
        InDispatch { call, at, .. }: InDispatch,
        method: &[u8],
        url: &[u8],
        headers_below: bool,
        ahead: &Ahead<'a>,
        below: KeyBelow<'a>,
    ) -> Option<Verdict> {
        if agents_own(url) || is_safe_method(method) {
            // An answer naming no request after it is this one's.
            self.process.client.read_in_flight = true;
            return Some(Verdict::Ignored);
        }
        self.process.client.read_in_flight = false;
        let mut events = Vec::new();
        self.unnamed_retries(&call, method, url, &mut events);
        if self.announced_again(url) {
            return Some(match events.is_empty() {
                true => Verdict::Ignored,
                false => Verdict::Events(events),
            });
        }
        // The same request logged again with no outcome of the last between: its client
        // (Faraday's retry middleware) sent it again after a failure no line gave.
        let every_try = self.process.client.logs_every_try;
        let failed = self.process.client.sent.last_mut().filter(|s| {
            let again = every_try && !s.answered && !s.failure_read && s.status.is_none();
            again
                && s.method.as_deref().is_none_or(|m| m.as_bytes() == method)
                && as_text(url).is_some_and(|u| same_url(&s.url, u))
        });
        let failure = failed.map(|s| {
            s.answered = true;
            unlogged_failure(&call, s.number)
        });
        let mut sent = self.unanswered(&call, method, url, at)?;
        let below = match headers_below {
            true => jdk_httpclient::key_below(ahead.bytes(), |k| ahead.line_end(k)),
            false => below,
        };
        match below {
            KeyBelow::Key(key) => sent.key = Some(small(key)),
            KeyBelow::NoKey => sent.headers_seen = true,
            KeyBelow::Unseen => {}
        }
        let attempt = self.client_attempt(&call, &sent);
        self.process.client.record(sent);
        events.extend(failure.map(|f| (at, f)));
        events.push((at, attempt));
        let verdict = match events.len() {
            1 => Verdict::Event(at, events.pop()?.1),
            _ => Verdict::Events(events),
        };
        self.read_as_latest(at, verdict)
    }

    /// A request to `url` logged now is the one a retry line already said was sent again
    /// (the SDK's own line of it, a line logged below a retry middleware): no other.
    fn announced_again(&mut self, url: &[u8]) -> bool {
        let announced = self.process.client.sent.last_mut().filter(|s| {
            let path = |u: &str| url_parts(u).1.ends_with(url_parts(&s.url).1);
            s.announced && !s.answered && as_text(url).is_some_and(path)
        });
        announced.map(|s| s.announced = false).is_some()
    }

    /// A request the program logs in its own words with no number, in `call`'s open
    /// dispatch (tracing's `info!(%url, "POST")`: `POST url=http://...`): the dispatch's
    /// next attempt, as a client's request line is read (go-retryablehttp's `POST
    /// http://...`), so a retry line after it is its retry. Its key is the line's `key`
    /// when it names one, else unknown: such a line shows no header. `None` for a request
    /// that is no attempt of the tool (a read, the model's call) and for the resend a
    /// retry line already read.
    pub(in crate::ingest::text) fn unnumbered_request(
        &mut self,
        call: &CallRef,
        method: &[u8],
        url: &[u8],
        key: Option<&[u8]>,
    ) -> Option<EventKind> {
        let at = self.line_at;
        if agents_own(url) || is_safe_method(method) {
            self.process.client.read_in_flight = true;
            return None;
        }
        self.process.client.read_in_flight = false;
        if self.announced_again(url) {
            return None;
        }
        let mut sent = self.unanswered(call, method, url, at)?;
        sent.key = key.map(small);
        let attempt = self.client_attempt(call, &sent);
        self.process.client.record(sent);
        self.process.client.since = at;
        Some(attempt)
    }

    /// A retry library's line says `call`'s request `number`, whose failure it gives at
    /// `at`, is sent again `after` the wait. When a line gave that request and nothing
    /// answered it (the program's own `POST url=...` before the function the library wraps:
    /// backon's closure), the resend is the dispatch's next request, the same method and URL,
    /// its key unknown (a function called again may mint a new one): the lines after are of
    /// it (an answer the program logs, the client's line of it). Its attempt is left for
    /// correlation to imply, from the failure or the answer (`correlate/build/resends.rs`).
    pub(in crate::ingest::text) fn resent_by_library(
        &mut self,
        call: &CallRef,
        number: u32,
        at: crate::time::Timestamp,
        after: Duration,
    ) {
        let open = !self.process.client.over && self.process.current_call.as_ref() == Some(call);
        let Some(failed) = (self.process.client.sent.last_mut())
            .filter(|s| open && s.number == number && !s.answered)
        else {
            return;
        };
        failed.answered = true;
        let again = Sent {
            key: None,
            announced: true,
            ..failed
                .copied()
                .again(number.saturating_add(1), at.plus(after))
        };
        self.last_attempt.insert(call.clone(), again.number);
        self.process.client.record(again);
    }

    /// [`ClientLine::Resending`](super::ClientLine::Resending): `method url` is sent again
    /// `after` a wait, the try before having got `status` if named.
    pub(super) fn request_resent(
        &mut self,
        InDispatch { call, at, .. }: InDispatch,
        method: &[u8],
        url: &[u8],
        status: Option<u16>,
        after: Duration,
    ) -> Option<Verdict> {
        if agents_own(url) || is_safe_method(method) {
            self.process.client.read_in_flight = is_safe_method(method);
            return Some(Verdict::Ignored);
        }
        self.process.client.read_in_flight = false;
        let mut events = Vec::with_capacity(2);
        if let Some(status) = status
            && let Some(s) = self.process.client.latest_to(url).filter(|s| !s.answered)
        {
            s.answered = true;
            s.status = Some(status);
            let answer = Response::status_only(call.clone(), s.number, status, Text::default());
            events.push((at, EventKind::Response(Box::new(answer))));
        }
        // Sent once the wait is over: an effect made during it is the last try's.
        let sent = self.unanswered(&call, method, url, at.plus(after))?;
        events.push((sent.at, self.client_attempt(&call, &sent)));
        self.process.client.record(sent);
        self.read_as_latest(at, Verdict::Events(events))
    }
}
