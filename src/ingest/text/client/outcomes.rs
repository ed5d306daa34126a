//! The events of client lines that give a request's outcome: a request with the answer it
//! got (httpx's, urllib3's and the JDK client's), an answer to the request sent last
//! (Stripe's SDK, Faraday's `Status`), and a request's failure (go-retryablehttp, Stripe).

use super::super::{Verdict, as_text, small};
use super::{InDispatch, Sent, TextParser, agents_own};
use crate::classify::classify_failure;
use crate::event::{EventKind, Failure, Response, Text, same_url};

impl TextParser {
    /// [`ClientLine::Answered`](super::ClientLine::Answered): `method url` got `status`
    /// (`reason`), logged once answered: the request's attempt, unless a line gave it, and
    /// its response.
    pub(super) fn request_answered(
        &mut self,
        InDispatch { call, since, at }: InDispatch,
        method: &[u8],
        url: String,
        status: u16,
        reason: &[u8],
    ) -> Option<Verdict> {
        if agents_own(url.as_bytes()) {
            self.process.client.unnamed.clear();
            return Some(Verdict::Ignored);
        }
        let mut events = Vec::with_capacity(2);
        self.unnamed_retries(&call, method, url.as_bytes(), &mut events);
        // The answer to a request urllib3 said it was sending again.
        let resent = (self.process.client.latest_to(url.as_bytes()))
            .filter(|s| !s.answered && s.method.as_deref().is_none_or(|m| m.as_bytes() == method));
        // An answer logged in the same whole second as the resend it answers, placed after
        // its wait, is not earlier than it.
        let mut answered_at = at;
        let number = match resent {
            Some(s) => {
                s.answered = true;
                s.status = Some(status);
                answered_at = at.max(s.at);
                s.number
            }
            None => {
                let number = self.next_attempt(&call);
                let url = self.urls.get(&url);
                let method = Some(small(method));
                let sent = Sent {
                    method,
                    answered: true,
                    status: Some(status),
                    ..Sent::new(number, url, since)
                };
                events.push((since, self.placed_attempt(&call, &sent)));
                self.process.client.record(sent);
                number
            }
        };
        let response = Response::status_only(call, number, status, small(reason));
        events.push((answered_at, EventKind::Response(Box::new(response))));
        self.answered(status);
        self.read_as_latest(at, Verdict::Events(events))
    }

    /// [`ClientLine::Failed`](super::ClientLine::Failed): the latest request to `url` (else
    /// the one sent last) failed with exception `class` and its words `error`.
    pub(super) fn request_failed(
        &mut self,
        InDispatch { call, since, at }: InDispatch,
        url: Option<&[u8]>,
        class: &[u8],
        error: &[u8],
    ) -> Option<Verdict> {
        let mut events = Vec::with_capacity(2);
        let number = match url {
            Some(url) if agents_own(url) => return Some(Verdict::Ignored),
            // The request sent last: none open, the failure is no request's here.
            None => match self.process.client.open_last() {
                Some(s) => {
                    s.answered = true;
                    s.failure_read = true;
                    s.number
                }
                None => return Some(Verdict::Ignored),
            },
            Some(url) => match self.process.client.latest_to(url) {
                Some(s) if !s.answered => {
                    s.answered = true;
                    s.failure_read = true;
                    s.number
                }
                // Its request was logged before this file begins, or not at all.
                _ => {
                    let mut sent = self.unanswered(&call, b"", url, since)?;
                    sent.answered = true;
                    sent.failure_read = true;
                    let number = sent.number;
                    events.push((since, self.placed_attempt(&call, &sent)));
                    self.process.client.record(sent);
                    number
                }
            },
        };
        let (error, message) = (small(class), small(error));
        let failure = Failure {
            call: Some(call.clone()),
            attempt: Some(number),
            class: classify_failure(&error, &message),
            error,
            message,
            raised_in: None,
            resent_after: None,
        };
        events.push((at, EventKind::Failure(Box::new(failure))));
        self.read_as_latest(at, Verdict::Events(events))
    }

    /// [`ClientLine::Answer`](super::ClientLine::Answer): the request sent last, when it is
    /// open and `url` (when named) is its, got `status`.
    pub(super) fn last_request_answered(
        &mut self,
        InDispatch { call, at, .. }: InDispatch,
        url: Option<&[u8]>,
        status: u16,
    ) -> Option<Verdict> {
        let named =
            |s: &&mut Sent| url.is_none_or(|url| as_text(url).is_some_and(|u| same_url(&s.url, u)));
        let Some(s) = self.process.client.open_last().filter(named) else {
            return Some(Verdict::Ignored);
        };
        s.answered = true;
        s.status = Some(status);
        let answered_at = at.max(s.at);
        let response = Response::status_only(call, s.number, status, Text::default());
        self.answered(status);
        self.read_as_latest(
            at,
            Verdict::Event(answered_at, EventKind::Response(Box::new(response))),
        )
    }
}
