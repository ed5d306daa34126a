//! The normalised event model (SPEC §2). Every input parser turns its bytes into these and
//! nothing else; correlation reads only these. A parser resolves what its format implies
//! (which call a line belongs to, which day a time-only timestamp falls on) so that no later
//! stage needs to know where an event came from beyond its [`Loc`].

use crate::classify::FailureClass;
use crate::money::Money;
use crate::time::{Duration, Timestamp};

/// Where an event was read: the index of its input (into the list of inputs) and its
/// 1-based line number, so that every finding can cite `path:line`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Loc {
    pub input: u32,
    pub line: u32,
}

/// Fields an input gave an event beyond what the audit reads (`reason`, `agent`...), as
/// name and value text, in input order: for people reading a timeline, never for rules.
pub type Attrs = Vec<(String, String)>;

/// The strings of events and the model: ids, keys, tools, states are short, and a
/// `LeanStr` holds up to 16 bytes inline in 16 bytes (an `Option` of it too), so a month
/// of them costs no allocation each; a longer one is one exact-size allocation, shared
/// by its clones. (`CompactString` was 24 bytes: the model and events were 60 MB larger.)
pub type Text = lean_string::LeanStr;

/// The HTTP methods a request is read with, in capitals, as clients log them.
pub const HTTP_METHODS: [&[u8]; 7] = [
    b"GET", b"POST", b"PUT", b"PATCH", b"DELETE", b"HEAD", b"OPTIONS",
];

/// The methods that change nothing: a request by one of them makes no effect.
pub const SAFE_METHODS: [&[u8]; 3] = [b"GET", b"HEAD", b"OPTIONS"];

/// Whether `method` is one of [`SAFE_METHODS`], in any case.
pub fn is_safe_method(method: &str) -> bool {
    SAFE_METHODS
        .iter()
        .any(|safe| method.as_bytes().eq_ignore_ascii_case(safe))
}

/// One thing that happened, at a time, read from one line (or span, or row).
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub at: Timestamp,
    pub loc: Loc,
    pub kind: EventKind,
}

/// What an event records. Each kind is boxed: an event is then 32 bytes whatever its kind (an effect is 192),
/// and a month of kept events is moved, sorted and merged as small values.
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    ToolCall(Box<ToolCall>),
    StepEnd(Box<StepEnd>),
    Run(Box<RunEvent>),
    Attempt(Box<Attempt>),
    Failure(Box<Failure>),
    Response(Box<Response>),
    Effect(Box<Effect>),
    Record(Box<Record>),
    Replay(Box<Replay>),
    GatewayTry(Box<GatewayTry>),
}

/// The logical call a client event belongs to: a step of a run.
///
/// Two `CallRef`s are equal (and hash and order alike) when they name one run's one step,
/// whatever their [`CallRef::part`]: a step's calls told apart by part are still dispatches
/// of that step, and everything that asks whether two events are of one step keeps asking
/// that. Only correlation, finding which dispatch an event is of, reads the part.
#[derive(Clone, Debug)]
pub struct CallRef {
    pub run: Text,
    pub step: u32,
    /// Which of the step's tool calls the event belongs to, where the input can tell and
    /// the step has several at once: 0 where it cannot (text, JSON Lines) or need not (an
    /// OTLP tool span that no other tool span of its step overlaps in time); else a number
    /// the input gives each of the step's calls that overlap (OTLP: the parallel tool calls
    /// of one LangGraph super-step, `ingest::otlp::parts`), unique within the step.
    /// Correlation sends the event to that call's dispatch instead of guessing (as
    /// `correlate::build::parallel` must for a text log). Never printed. It lies in what was
    /// padding: a `CallRef` is 24 bytes with it or without.
    pub part: u32,
}

impl PartialEq for CallRef {
    fn eq(&self, other: &Self) -> bool {
        self.step == other.step && self.run == other.run
    }
}

impl Eq for CallRef {}

/// Hashes the run and step, as [`PartialEq`] compares them; a call looked up by its run
/// and step alone (`relevance::CallKey`) hashes alike.
impl std::hash::Hash for CallRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.run.hash(state);
        self.step.hash(state);
    }
}

impl PartialOrd for CallRef {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for CallRef {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (&self.run, self.step).cmp(&(&other.run, other.step))
    }
}

/// An agent dispatching a tool for a step. A second `ToolCall` for the same step is a new
/// dispatch (a step retry or a resume); attempt numbers restart with it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub call: CallRef,
    pub tool: Text,
    /// The arguments as written, for rules that look at their spelling.
    pub args_raw: Text,
    /// The arguments parsed (JSON), for canonical comparison and field lookup. A parser
    /// may leave this `Null` when `args_raw` is the JSON it stands for: most calls are
    /// dropped as idle before anything reads them. Correlation reads `args_raw` itself
    /// (`correlate::call_args`); [`ToolCall::parsed_args`] gives the value either way.
    pub args: serde_json::Value,
}

impl ToolCall {
    /// The arguments as JSON, parsing `args_raw` if the parser left them unparsed. The
    /// parsers skip a call whose arguments are no JSON or nest too deep to be read
    /// ([`args_nest_too_deep`]), so `Null` here is only arguments that are missing.
    pub fn parsed_args(&self) -> serde_json::Value {
        match &self.args {
            serde_json::Value::Null => {
                serde_json::from_str(&self.args_raw).unwrap_or(serde_json::Value::Null)
            }
            v => v.clone(),
        }
    }
}

/// How deep JSON may nest and still be read into a value: serde_json's recursion limit
/// refuses the 128th level of arrays and objects.
pub const MAX_JSON_DEPTH: usize = 127;

/// Why a tool call whose arguments nest deeper than [`MAX_JSON_DEPTH`] is skipped.
pub const ARGS_TOO_DEEP: &str =
    "tool call args are nested deeper than 127 levels: more than the JSON reader reads";

/// Whether JSON arguments nest deeper than [`MAX_JSON_DEPTH`]. The parsers check that
/// arguments are JSON without building them, which has no depth limit; correlation builds
/// them, and read deeper ones as null (no order, no amount: a retry's error became a
/// warning, review37 H2). A count of brackets outside strings, on JSON already checked.
pub fn args_nest_too_deep(raw: &[u8]) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in raw {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

#[derive(Clone, Debug, PartialEq)]
pub struct StepEnd {
    pub call: CallRef,
    pub ok: bool,
    pub error: Option<Text>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lifecycle {
    Started,
    Crashed,
    Resumed,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RunEvent {
    pub run: Text,
    pub what: Lifecycle,
}

/// One request sent for a call.
#[derive(Clone, Debug, PartialEq)]
pub struct Attempt {
    /// `None` when the input gives no way to tell which call it belongs to.
    pub call: Option<CallRef>,
    /// 1-based, restarting at each dispatch of the step.
    pub number: u32,
    pub method: Option<Text>,
    pub url: Option<Text>,
    pub key: Option<Text>,
    /// The input cannot show the request's headers (an HTTP client's own log line, an
    /// OpenTelemetry HTTP span with no request header captured): a `None` key is unknown,
    /// not absent.
    pub key_unseen: bool,
    /// No line gave when it was sent (httpx logs a request once answered): it is placed at
    /// the earliest it can have been, after its dispatch's latest line before it.
    pub placed: bool,
}

/// Whether two requests' URLs name one target: the same path and query, and the same host
/// and port (any case; a scheme's own port written or not) where both name a host. A URL
/// that is only a path (urllib3's retry line names no host) is the same as a full URL with
/// that path. A fragment is never sent, so never compared.
pub fn same_url(a: &str, b: &str) -> bool {
    let ((host_a, path_a), (host_b, path_b)) = (url_parts(a), url_parts(b));
    path_a == path_b && (host_a.is_none() || host_b.is_none() || host_a == host_b)
}

/// A URL's host and port in lower case (`None` for a path), the scheme's own port left
/// out, and its path and query, from the `/` on, without a fragment.
pub fn url_parts(url: &str) -> (Option<String>, &str) {
    let url = url.split_once('#').map_or(url, |(u, _)| u);
    let Some((scheme, rest)) = url.split_once("://") else {
        return (None, url);
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let mut authority = rest[..end].to_ascii_lowercase();
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "https" => ":443",
        "http" => ":80",
        _ => "",
    };
    if !default_port.is_empty() && authority.ends_with(default_port) {
        authority.truncate(authority.len() - default_port.len());
    }
    (Some(authority), &rest[end..])
}

/// An attempt that got no response: an exception or a client-side error code.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub call: Option<CallRef>,
    /// The attempt it ends, when the input says (else: the call's latest attempt).
    pub attempt: Option<u32>,
    pub class: FailureClass,
    /// Exception class or error code (`urllib3.exceptions.ReadTimeoutError`, `read_timeout`).
    pub error: Text,
    pub message: Text,
    /// The function a retry library's line says raised it (tenacity's `Retrying
    /// agent.tools.issue_refund in 2.0 seconds as it raised ...`), as written: among a
    /// step's parallel calls, the one whose tool it is.
    pub raised_in: Option<Text>,
    /// A retry library's line says the function is called again after this wait
    /// (tenacity's `Retrying ... in 2.0 seconds`, backoff's `Backing off ... for 0.2s`,
    /// stamina's `stamina.retry_scheduled`; zero when the wait is not written): that call
    /// is a request sent again, even where the client logs none (aiohttp's).
    pub resent_after: Option<Duration>,
}

/// An HTTP response to an attempt.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub call: Option<CallRef>,
    pub attempt: Option<u32>,
    pub status: u16,
    pub class: FailureClass,
    pub effect_id: Option<Text>,
    /// The service answered from its idempotency records instead of acting again.
    pub replayed: bool,
    pub amount: Option<Money>,
    /// Any text after the status (`Conflict`, an error body).
    pub message: Text,
}

impl Response {
    /// An answer known only by its status (a span's, an HTTP client's log line): no effect
    /// id, amount or replay named.
    pub fn status_only(call: CallRef, attempt: u32, status: u16, message: Text) -> Self {
        Response {
            call: Some(call),
            attempt: Some(attempt),
            status,
            class: crate::classify::classify_status(status),
            effect_id: None,
            replayed: false,
            amount: None,
            message,
        }
    }
}

/// What the service recorded as done (or refused). The event's `at` is its creation time.
#[derive(Clone, Debug, PartialEq)]
pub struct Effect {
    /// `refund`, `charge`, `payout`...
    pub kind: Text,
    pub id: Text,
    pub order: Option<Text>,
    pub amount: Option<Money>,
    /// When `amount` is unknown because it was written as a bare whole number in a currency
    /// with decimals (`"amount": 4500` GBP: 45.00 or 4,500.00), that number, as if minor
    /// units ([`crate::money::whole_amount`]).
    pub whole: Option<Money>,
    pub key: Option<Text>,
    /// The last state the input gives (`settled`, `pending`, `rejected`...).
    pub state: Option<Text>,
    /// When it reached that state, if given.
    pub state_at: Option<Timestamp>,
    /// False when the final state says the effect did not happen (rejected, failed...).
    pub happened: bool,
}

/// A row of the service's idempotency-records table (SPEC §3.5).
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub key: Text,
    pub request_hash: Option<Text>,
    pub status: Text,
    pub response: Option<Text>,
}

/// The service's word that it answered a request from its idempotency record, naming the
/// effect an earlier request made (`"msg": "idempotent replay", "refundId": "re_1"`) or the
/// key (`Idempotency key K seen before, replaying stored response`): the answer a client
/// got then confirms an effect, whatever the effect's creation time says (a service may
/// reserve the id, answer the replay and log the creation after both). One or both of the
/// effect and the key is known.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    /// The effect's kind, where the line says it (`refund_id`, `refund replayed`).
    pub kind: Option<Text>,
    pub effect_id: Option<Text>,
    pub key: Option<Text>,
}

/// A gateway's (a reverse proxy's) own record that it gave up on an upstream it had sent a
/// client's request to, or sent the request to another (`ingest::gateway`): nginx's
/// access line whose `$upstream_addr` lists two or more upstreams, HAProxy's line with a
/// retry count, nginx's `upstream timed out ... while reading response header from
/// upstream`. Neither an attempt (the client sent the request once) nor an effect: evidence
/// of what replayed a request below the client, read by `duplicate-effect` alone.
#[derive(Clone, Debug, PartialEq)]
pub struct GatewayTry {
    /// The request as the gateway logged it: its method, and its target (path and query).
    pub method: Text,
    pub target: Text,
    /// The line shows the request sent again (to another upstream, or the same); else only
    /// that the gateway gave up on an upstream after sending it the request.
    pub resent: bool,
    /// What the line shows, in words: `sent the request to 127.0.0.2:5201 (504), then to
    /// 127.0.0.3:5201 (201)`.
    pub shows: Text,
}

/// Final states meaning the effect did not happen.
pub const NOT_HAPPENED_STATES: &[&str] = &[
    "rejected",
    "failed",
    "declined",
    "canceled",
    "cancelled",
    "voided",
    "reversed_before_settlement",
    "refused",
    "denied",
    "expired",
    "errored",
    "error",
    "aborted",
];

/// Endings of states that say so too (`processor_declined`, `gateway_rejected`,
/// `REFUND_FAILED`), any case.
const NOT_HAPPENED_ENDINGS: &[&str] = &["_failed", "_declined", "_rejected", "_denied"];

/// Effect kinds recognised in tool names, URL paths and service lines, singular.
pub const EFFECT_KINDS: &[&str] = &[
    "refund", "charge", "payout", "payment", "transfer", "capture", "credit",
];

/// Whether `word` is one of [`EFFECT_KINDS`].
pub fn is_effect_kind(word: &str) -> bool {
    EFFECT_KINDS.contains(&word)
}

/// The words a service writes after an effect's kind to say what happened to it (`refund
/// created`, `refund failed`), lower case, and `updated` (a later state, `refund updated
/// refund_id=rf_1  status=failed`, as Stripe names the event). Not `requested` nor
/// `submitted`: a request for a refund is no refund (`refund requested  id=req_1`).
pub const EVENT_WORDS: [&str; 23] = [
    "created",
    "issued",
    "initiated",
    "processed",
    "completed",
    "succeeded",
    "settled",
    "pending",
    "failed",
    "rejected",
    "declined",
    "canceled",
    "cancelled",
    "voided",
    "captured",
    "paid",
    "refunded",
    "reversed",
    "approved",
    "posted",
    "accepted",
    "done",
    "updated",
];

/// Whether `word` is one of [`EVENT_WORDS`].
pub fn is_event_word(word: &[u8]) -> bool {
    EVENT_WORDS.iter().any(|w| w.as_bytes() == word)
}

/// Whether a state is one on the way to a final one (`pending`, `created`, `updated`...),
/// which a final state replaces whenever it was written.
pub fn is_state_on_the_way(state: &str) -> bool {
    const ON_THE_WAY: [&str; 12] = [
        "created",
        "pending",
        "initiated",
        "processing",
        "requested",
        "submitted",
        "accepted",
        "approved",
        "updated",
        "issued",
        "queued",
        "received",
    ];
    let state = state.trim();
    ON_THE_WAY.iter().any(|s| s.eq_ignore_ascii_case(state))
}

/// Whether a state says the effect did not happen ([`NOT_HAPPENED_STATES`], or one of
/// [`NOT_HAPPENED_ENDINGS`], any case).
pub fn state_means_not_happened(state: &str) -> bool {
    // Trimmed once: every service line of a month asks.
    let state = state.trim();
    let ends = |end: &str| {
        state.len() > end.len()
            && state.is_char_boundary(state.len() - end.len())
            && state[state.len() - end.len()..].eq_ignore_ascii_case(end)
    };
    NOT_HAPPENED_STATES
        .iter()
        .any(|s| s.eq_ignore_ascii_case(state))
        || (state.contains('_') && NOT_HAPPENED_ENDINGS.iter().any(|e| ends(e)))
}

impl EventKind {
    /// The kind's name as SPEC §3.2's `type` spells it.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventKind::ToolCall(_) => "tool_call",
            EventKind::Attempt(_) => "attempt",
            EventKind::Failure(_) => "failure",
            EventKind::Response(_) => "response",
            EventKind::StepEnd(_) => "step_end",
            EventKind::Run(_) => "run",
            EventKind::Effect(_) => "effect",
            EventKind::Record(_) => "record",
            EventKind::Replay(_) => "replay",
            EventKind::GatewayTry(_) => "gateway_try",
        }
    }

    /// The call a client event names, if any.
    /// [`EventKind::call`], to rename it.
    pub fn call_mut(&mut self) -> Option<&mut CallRef> {
        match self {
            EventKind::ToolCall(t) => Some(&mut t.call),
            EventKind::StepEnd(s) => Some(&mut s.call),
            EventKind::Attempt(a) => a.call.as_mut(),
            EventKind::Failure(f) => f.call.as_mut(),
            EventKind::Response(r) => r.call.as_mut(),
            EventKind::Run(_)
            | EventKind::Effect(_)
            | EventKind::Record(_)
            | EventKind::Replay(_)
            | EventKind::GatewayTry(_) => None,
        }
    }

    pub fn call(&self) -> Option<&CallRef> {
        match self {
            EventKind::ToolCall(t) => Some(&t.call),
            EventKind::StepEnd(s) => Some(&s.call),
            EventKind::Attempt(a) => a.call.as_ref(),
            EventKind::Failure(f) => f.call.as_ref(),
            EventKind::Response(r) => r.call.as_ref(),
            EventKind::Run(_)
            | EventKind::Effect(_)
            | EventKind::Record(_)
            | EventKind::Replay(_)
            | EventKind::GatewayTry(_) => None,
        }
    }

    /// Where the kind's boxed fields lie, to fetch them into the cache a little before
    /// they are read: a month's events were boxed by the parse long before correlation
    /// reads them, and most of the builder's time was waiting for them.
    pub fn payload(&self) -> *const u8 {
        fn at<T>(b: &T) -> *const u8 {
            (b as *const T).cast()
        }
        match self {
            EventKind::ToolCall(b) => at(&**b),
            EventKind::StepEnd(b) => at(&**b),
            EventKind::Run(b) => at(&**b),
            EventKind::Attempt(b) => at(&**b),
            EventKind::Failure(b) => at(&**b),
            EventKind::Response(b) => at(&**b),
            EventKind::Effect(b) => at(&**b),
            EventKind::Record(b) => at(&**b),
            EventKind::Replay(b) => at(&**b),
            EventKind::GatewayTry(b) => at(&**b),
        }
    }

    /// Is this something the client (the agent) recorded, rather than the service?
    pub fn is_client_side(&self) -> bool {
        !matches!(
            self,
            EventKind::Effect(_)
                | EventKind::Record(_)
                | EventKind::Replay(_)
                | EventKind::GatewayTry(_)
        )
    }
}

#[cfg(test)]
mod tests;
