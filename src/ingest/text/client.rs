//! The lines Python's HTTP clients log of their own requests, read as the attempts they
//! stand for. An agent's trace is often its logging output and nothing more: the tool-call
//! lines it writes, and what `httpx` and `urllib3` (under `requests`) log beside them:
//!
//! - `HTTP Request: POST https://host/v1/refunds "HTTP/1.1 201 Created"` (httpx, INFO), and
//!   `https://host:443 "POST /v1/refunds HTTP/1.1" 201 57` (urllib3, DEBUG): a request and
//!   its answer, logged once the answer came: an attempt and its response;
//! - `Retrying (Retry(total=2, ...)) after connection broken by 'ReadTimeoutError("...")':
//!   /v1/refunds` (urllib3, WARNING): the request to that path failed (no answer: urllib3
//!   never logs such a request itself) and is being sent again, unchanged: a failure of
//!   that attempt and a new attempt with its method, URL and key;
//! - `Starting new HTTPS connection (1): host:443` (urllib3, DEBUG): no event, but the
//!   earliest a request not yet logged can have been sent.
//!
//! They carry no run, step or number: each belongs to the current tool call (the latest
//! `agent run R  step N  tool=...` line) while its step is open, and is that dispatch's next
//! attempt, numbered on from its others. The model's own calls and telemetry an agent
//! sends while a tool runs ([`agents_own`]) are no attempts of the tool. Where the agent
//! numbers its attempts itself (`(attempt N)` lines), the client's lines of that dispatch
//! repeat them and are ignored.
//!
//! Off the hot path: only lines that reach the general classification are looked at, and
//! one byte turns away nearly all of those ([`may_be_client_line`]).

use super::{TextParser, Verdict, as_text, small};
use crate::classify::FailureClass;
use crate::event::{Attempt, CallRef, EventKind, Failure, Text, same_url};
use crate::ingest::lines::Ahead;
use crate::time::Timestamp;
use jdk_httpclient::KeyBelow;
pub(in crate::ingest) use jdk_httpclient::is_header_line;
pub(super) use retryablehttp::go_duration;
pub(crate) use shapes::agents_own;
use shapes::{ClientLine, read};

/// What the parser knows of the current dispatch's requests from its client's lines.
#[derive(Default)]
pub(super) struct ClientLog {
    /// The current dispatch's step has ended (or there is none): client lines now are not
    /// its requests.
    pub(super) over: bool,
    /// The earliest a request not yet logged can have been sent: the latest line of the
    /// dispatch (its tool call, a client line).
    since: Timestamp,
    /// `https://host[:port]` of the latest connection urllib3 opened for the dispatch.
    origin: String,
    /// Requests read from client lines, oldest first (at most [`ClientLog::KEPT`]).
    sent: Vec<Sent>,
    /// The number of the latest of them, to tell the agent's own numbering from it.
    last_number: Option<u32>,
    /// Outcomes read with no attempt before them: correlation implies one for each.
    implied: u32,
    /// The client logs each try and each answer (Faraday's logger: its header blocks or
    /// `Status` lines were read): a request logged again with no outcome between failed.
    pub(super) logs_every_try: bool,
    /// Retry lines that named no request while none was open ([`stainless::Unnamed`]).
    unnamed: Vec<stainless::Unnamed>,
    /// The latest outcome was such a one, a failure, and no request was read after it: an
    /// SDK's line that the request is retried ([`ClientLine::Retried`]) is of that one.
    implied_failure_last: bool,
    /// The request sent last was none of the tool's (a `GET`, the model's call: not
    /// recorded): an answer or failure that names no request ([`ClientLine::Answer`],
    /// Stripe's unnamed failure, Faraday's `Status`) is its.
    read_in_flight: bool,
    /// The dispatch began while the one before still waited for an answer (tool calls
    /// side by side, threads or `asyncio.gather`): an answer or failure that names no
    /// request may be either's, so it is given to none.
    overlapping: bool,
}

/// Where a client's line falls in the current dispatch: `call`, its tool call; `at`, the
/// line's time; `since`, the earliest a request it names that no line gave can have been
/// sent (the dispatch's latest line before it).
struct InDispatch {
    call: CallRef,
    since: Timestamp,
    at: Timestamp,
}

/// A request read from a client's line.
struct Sent {
    number: u32,
    method: Option<Text>,
    url: Text,
    key: Option<Text>,
    /// Its headers were logged (the JDK client's): no key among them is none sent, not
    /// one unknown.
    headers_seen: bool,
    /// It has an outcome: a later line cannot be its answer.
    answered: bool,
    /// The status it got, when answered.
    status: Option<u16>,
    /// A failure of it was read (its client's line, or the program's own traceback): an
    /// SDK's line that it is retried ([`ClientLine::Retried`]) adds none.
    failure_read: bool,
    /// When it was sent, as placed: no answer to it is earlier.
    at: Timestamp,
    /// Sent again on an SDK's word ([`ClientLine::Retried`]): the SDK's own line of the
    /// request sent, if it logs one (`Sending HTTP Request:` at DEBUG), is this one.
    announced: bool,
}

impl Sent {
    /// The same request, its texts copied.
    fn copied(&self) -> Sent {
        Sent {
            method: self.method.clone(),
            url: self.url.clone(),
            key: self.key.clone(),
            ..*self
        }
    }

    /// It sent again as request `number` at `at`: the same method, URL and key (a client
    /// resends its headers), no outcome yet.
    fn again(self, number: u32, at: Timestamp) -> Sent {
        Sent {
            number,
            at,
            answered: false,
            status: None,
            failure_read: false,
            announced: false,
            ..self
        }
    }

    /// A client may send it again: no answer yet, or one a client retries (408, 409, 429,
    /// 5xx).
    fn may_be_retried(&self) -> bool {
        (self.status).is_none_or(|st| matches!(st, 408 | 409 | 429) || st >= 500)
    }

    /// Request `number` to `url`, sent `at`: its method and key unknown, no outcome yet.
    fn new(number: u32, url: Text, at: Timestamp) -> Self {
        Sent {
            number,
            method: None,
            url,
            key: None,
            headers_seen: false,
            answered: false,
            status: None,
            failure_read: false,
            at,
            announced: false,
        }
    }
}

impl ClientLog {
    /// A runaway loop's requests are not all kept: a retry follows its request closely.
    const KEPT: usize = 16;

    /// A tool call at `at` opened a dispatch.
    pub(super) fn new_dispatch(&mut self, at: Timestamp) {
        self.overlapping = !self.over && self.sent.iter().any(|s| !s.answered);
        self.over = false;
        self.since = at;
        self.clear();
    }

    /// The current dispatch's step ended.
    pub(super) fn end_dispatch(&mut self) {
        self.over = true;
        self.clear();
    }

    fn clear(&mut self) {
        self.origin.clear();
        self.sent.clear();
        self.last_number = None;
        self.implied = 0;
        self.unnamed.clear();
        self.implied_failure_last = false;
        self.read_in_flight = false;
    }

    fn record(&mut self, sent: Sent) {
        if self.sent.len() == Self::KEPT {
            self.sent.remove(0);
        }
        self.last_number = Some(sent.number);
        self.implied_failure_last = false;
        self.sent.push(sent);
    }

    /// The latest request to `target` (a URL, or a path when that is all a line gives).
    fn latest_to(&mut self, target: &[u8]) -> Option<&mut Sent> {
        let target = as_text(target)?;
        (self.sent.iter_mut()).rfind(|s| same_url(&s.url, target))
    }

    /// The request sent last, when it is unanswered and was recorded (no read sent after
    /// it): what a client that sends one request at a time answers next.
    fn open_last(&mut self) -> Option<&mut Sent> {
        if std::mem::take(&mut self.read_in_flight) || self.overlapping {
            return None;
        }
        self.sent.last_mut().filter(|s| !s.answered)
    }
}

/// The failure of attempt `number` of `call` that no line gave, read from its client
/// sending it again: a timeout, or a connection lost, the client does not say which.
fn unlogged_failure(call: &CallRef, number: u32) -> EventKind {
    EventKind::Failure(Box::new(Failure {
        call: Some(call.clone()),
        attempt: Some(number),
        class: FailureClass::Ambiguous,
        error: Text::from_static_str("unlogged failure"),
        message: Text::from_static_str("the client sent the request again without saying why"),
        raised_in: None,
        resent_after: None,
    }))
}

/// A method that changes nothing (`GET`, `HEAD`, `OPTIONS`).
fn is_safe_method(method: &[u8]) -> bool {
    crate::event::SAFE_METHODS.contains(&method)
}

/// Whether `msg` may be a client's line: the first byte of each shape. Inlined into the
/// general path; what passes goes to [`TextParser::client_line`].
#[inline]
pub(super) fn may_be_client_line(msg: &[u8]) -> bool {
    matches!(
        msg.first(),
        Some(b'H' | b'h' | b'R' | b'S' | b'P' | b'D' | b'p' | b'r' | b'E' | b'j' | b'm' | b'G')
    )
}

impl TextParser {
    /// A client library's line at `at` (see the module's doc): its events, or ignored when
    /// it is no request of the current dispatch; `None` when the message is no such line.
    #[cold]
    pub(super) fn client_line(
        &mut self,
        at: Timestamp,
        msg: &[u8],
        ahead: &Ahead,
    ) -> Option<Verdict> {
        let line = read(msg)?;
        // Faraday's headers below its request or answer line belong to it, whatever is made
        // of the line.
        let below = match &line {
            ClientLine::Sending {
                headers_below: false,
                ..
            } => self.read_header_block(ahead, b"request"),
            ClientLine::Answer { url: None, .. } => {
                self.process.client.logs_every_try = true;
                self.read_header_block(ahead, b"response")
            }
            _ => KeyBelow::Unseen,
        };
        match line {
            ClientLine::Headers => {
                self.process.tail = super::tail::Tail::Headers;
                return Some(Verdict::Ignored);
            }
            ClientLine::Diagnostic => return Some(Verdict::Ignored),
            _ => {}
        }
        let call = match &self.process.current_call {
            Some(call) if !self.process.client.over => call.clone(),
            Some(_) => return Some(Verdict::Ignored),
            // Only a request that may have an effect, or a retry, opens a call of its own: a
            // connection is no request, a GET changes nothing.
            None if matches!(line, ClientLine::Connecting { .. }) => return Some(Verdict::Ignored),
            None if matches!(&line, ClientLine::Answered { method, .. } if is_safe_method(method)) =>
            {
                return Some(Verdict::Ignored);
            }
            None if matches!(
                line,
                ClientLine::Failed { .. } | ClientLine::Answer { .. } | ClientLine::Retried { .. }
            ) =>
            {
                return Some(Verdict::Ignored);
            }
            None => match self.call_or_anonymous(at) {
                Some(call) => call,
                None => return Some(Verdict::Ignored),
            },
        };
        // The agent numbered this dispatch's attempts itself (`(attempt N)` lines): these
        // lines repeat them.
        let last = self.last_attempt.get(&call).copied();
        if last.is_some() && last != self.process.client.last_number {
            return Some(Verdict::Ignored);
        }
        let since = self.process.client.since.min(at);
        let dispatch = InDispatch { call, since, at };
        match line {
            ClientLine::Headers | ClientLine::Diagnostic => Some(Verdict::Ignored),
            ClientLine::Connecting { origin } => self.urllib3_connection(origin, at),
            ClientLine::Answered {
                method,
                url,
                status,
                reason,
            } => self.request_answered(dispatch, method, url, status, reason),
            ClientLine::Retrying {
                error,
                message,
                path,
                origin,
            } => self.urllib3_retry(dispatch, error, message, path, origin),
            ClientLine::Sending {
                method,
                url,
                headers_below,
            } => self.request_sent(dispatch, method, url, headers_below, ahead, below),
            ClientLine::Failed { url, class, error } => {
                self.request_failed(dispatch, url, class, error)
            }
            ClientLine::Retried { path, after } => {
                match self.sdk_retry(&dispatch.call, path, after, at, since) {
                    Some(events) => self.read_as_latest(at, Verdict::Events(events)),
                    None => Some(Verdict::Ignored),
                }
            }
            ClientLine::Resending {
                method,
                url,
                status,
                after,
            } => self.request_resent(dispatch, method, url, status, after),
            ClientLine::Answer { url, status } => self.last_request_answered(dispatch, url, status),
            ClientLine::MiddlewareRetry { after } => self.middleware_retry(dispatch, after),
        }
    }

    /// `verdict`, of a client's line at `at` that the dispatch's requests were read from:
    /// the line is now the dispatch's latest, so a request not yet logged was sent after it
    /// ([`ClientLog::since`]). The lines that return early (none of its requests, or one
    /// already read) leave that where it was.
    fn read_as_latest(&mut self, at: Timestamp, verdict: Verdict) -> Option<Verdict> {
        self.process.client.since = at;
        Some(verdict)
    }

    /// A numbered request line (`POST ...  (attempt N)`) of `call` that a client's line
    /// already read as its attempt `number` (go-retryablehttp's `[DEBUG] POST ...` logged
    /// before the agent's own): the same request.
    pub(super) fn repeats_client_line(
        &self,
        call: &Option<CallRef>,
        number: u32,
        url: &[u8],
    ) -> bool {
        self.process.client.last_number == Some(number)
            && !self.process.client.over
            && call.is_some()
            && *call == self.process.current_call
            && (self.process.client.sent.last())
                .is_some_and(|s| !s.answered && as_text(url).is_some_and(|u| same_url(&s.url, u)))
    }

    /// The headers Faraday logs below the line just read ([`faraday::header_block`]), read
    /// with it: their lines are counted as ignored, and what they say of a key returned.
    fn read_header_block<'a>(&mut self, ahead: &Ahead<'a>, side: &[u8]) -> KeyBelow<'a> {
        match faraday::header_block(ahead, side) {
            Some(block) => {
                self.process.client.logs_every_try = true;
                if block.cut {
                    // Its lines past the buffer continue the record.
                    self.process.tail = super::tail::Tail::Headers;
                }
                self.read_ahead += block.lines;
                self.out.stats.ignored += block.lines as u64;
                block.key
            }
            None => KeyBelow::Unseen,
        }
    }

    /// The dispatch's next request, to `url` with `method` (none when empty), unanswered.
    fn unanswered(
        &mut self,
        call: &CallRef,
        method: &[u8],
        url: &[u8],
        at: Timestamp,
    ) -> Option<Sent> {
        let url = self.urls.get(as_text(url)?);
        Some(Sent {
            method: (!method.is_empty()).then(|| small(method)),
            ..Sent::new(self.next_attempt(call), url, at)
        })
    }

    /// The dispatch's next attempt number: after its latest, and after those correlation
    /// implies for outcomes read without one (else its attempt 1 would read as a new
    /// dispatch).
    fn next_attempt(&self, call: &CallRef) -> u32 {
        let last = self.last_attempt.get(call).copied().unwrap_or(0);
        last.max(self.process.client.implied).saturating_add(1)
    }

    /// The attempt event of a request read from a client's line; it is the dispatch's
    /// latest.
    fn client_attempt(&mut self, call: &CallRef, sent: &Sent) -> EventKind {
        self.last_attempt.insert(call.clone(), sent.number);
        self.process.client.last_number = Some(sent.number);
        EventKind::Attempt(Box::new(Attempt {
            call: Some(call.clone()),
            number: sent.number,
            method: sent.method.clone(),
            url: Some(sent.url.clone()),
            key: sent.key.clone(),
            // No client line shows a header but the JDK client's.
            key_unseen: sent.key.is_none() && !sent.headers_seen,
            placed: false,
        }))
    }

    /// The attempt event of a request no line's own time gives, placed at `since`, the
    /// dispatch's latest line ([`Attempt::placed`]): among parallel calls, correlation
    /// places it after its own call's latest line instead.
    fn placed_attempt(&mut self, call: &CallRef, sent: &Sent) -> EventKind {
        let mut attempt = self.client_attempt(call, sent);
        if let EventKind::Attempt(a) = &mut attempt {
            a.placed = true;
        }
        attempt
    }

    /// A failure or answer of the agent's own: the client's next request was sent after
    /// it (else an exception the agent logs of an answer, read after that request, would
    /// be the request's failure). Read with no attempt before it (`implied`), correlation
    /// implies one, which the client's next attempt must be numbered after.
    /// The outcome is of `attempt` (`None`: implied), an answer `status` or else a failure.
    pub(super) fn note_outcome(
        &mut self,
        call: &Option<CallRef>,
        attempt: Option<u32>,
        status: Option<u16>,
    ) {
        if !self.process.client.over && call.is_some() && *call == self.process.current_call {
            // Retries that named no request are left unread: the call's outcome came first.
            self.process.client.unnamed.clear();
            self.process.client.implied += u32::from(attempt.is_none());
            self.process.client.implied_failure_last = attempt.is_none() && status.is_none();
            self.process.client.since = self.process.client.since.max(self.line_at);
            let told = (self.process.client.sent.iter_mut()).rfind(|s| Some(s.number) == attempt);
            if let Some(s) = told {
                match status {
                    Some(status) => _ = s.status.get_or_insert(status),
                    None => s.failure_read = true,
                }
            }
        }
    }
}

mod faraday;
mod jdk_httpclient;
mod outcomes;
mod requests;
mod reqwest_retry;
mod retryablehttp;
mod shapes;
mod stainless;
mod stripe;
#[cfg(test)]
mod tests;
mod urllib3;
