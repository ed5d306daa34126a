//! The client side of the model: dispatches of logical calls, their attempts and what
//! ended each, a step's end and a run's lifecycle events.

use super::*;
use crate::classify::FailureClass;
use crate::event::CallRef;
use crate::money::Money;
use serde_json::Value;
use std::borrow::Cow;

/// Index of an attempt: its dispatch and its position in that dispatch's attempts. Two
/// u32 (8 bytes): effects and indexes hold one per attempt of a month.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AttemptId {
    dispatch: u32,
    index: u32,
}

// SAFETY: two u32s.
unsafe impl crate::flat_table::ZeroValid for AttemptId {}

impl AttemptId {
    pub fn new(dispatch: usize, index: usize) -> Self {
        // A model of four billion dispatches would not fit in memory.
        AttemptId {
            dispatch: dispatch as u32,
            index: index as u32,
        }
    }

    /// The dispatch's index in [`Model::dispatches`].
    pub fn dispatch(self) -> usize {
        self.dispatch as usize
    }

    /// The attempt's position in its dispatch's attempts.
    pub fn index(self) -> usize {
        self.index as usize
    }
}

/// What ended an attempt. The failure class sits in each variant, beside the fields it
/// packs with: an outcome is then 56 bytes and an attempt 128, not 64 and 136 (a month
/// has 300 k of them).
#[derive(Clone, Debug)]
pub enum OutcomeKind {
    Failure {
        class: FailureClass,
        error: Text,
        message: Text,
    },
    Response {
        class: FailureClass,
        status: u16,
        effect_id: Option<Text>,
        replayed: bool,
        message: Text,
    },
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub at: Timestamp,
    pub loc: Loc,
    pub kind: OutcomeKind,
}

impl Outcome {
    pub fn class(&self) -> FailureClass {
        match self.kind {
            OutcomeKind::Failure { class, .. } | OutcomeKind::Response { class, .. } => class,
        }
    }

    pub fn status(&self) -> Option<u16> {
        match &self.kind {
            OutcomeKind::Response { status, .. } => Some(*status),
            OutcomeKind::Failure { .. } => None,
        }
    }

    pub fn is_replay(&self) -> bool {
        matches!(self.kind, OutcomeKind::Response { replayed: true, .. })
    }

    /// `read timeout=10`, `409 Conflict`: for messages.
    pub fn describe(&self) -> String {
        match &self.kind {
            OutcomeKind::Failure { error, message, .. } => {
                let short = error.rsplit('.').next().unwrap_or(error);
                match (short.is_empty(), message.is_empty()) {
                    (_, true) => short.to_string(),
                    // An error logged as its sentence alone (Go's `err.Error()`).
                    (true, false) => message.to_string(),
                    (false, false) => format!("{short}: {message}"),
                }
            }
            OutcomeKind::Response {
                status, message, ..
            } => format!("{status} {message}").trim().to_string(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct AttemptRec {
    pub number: u32,
    pub at: Timestamp,
    pub loc: Loc,
    pub method: Option<Text>,
    pub url: Option<Text>,
    pub key: Option<Text>,
    pub outcome: Option<Outcome>,
    /// No line logged this request: a tool call that names an effect kind and logged no
    /// attempt (an agent trace without HTTP logging, a framework's tool spans without
    /// HTTP instrumentation) is taken to have sent one, at the tool call's time, so that
    /// its effects are still matched to it. Rules do not read its absent method or key as
    /// evidence.
    pub unlogged: bool,
    /// Which deliberate sending of its request this is, from 0: one more than the attempt
    /// it repeats when that one succeeded (see `generations`). Effects of different
    /// sendings are no copies of each other. (Two bytes fit in the record's padding.)
    pub generation: u16,
    /// The input could not show the request's headers ([`crate::event::Attempt`]): a
    /// `None` key is unknown, not absent. So is an implied attempt's.
    pub key_unseen: bool,
}

impl AttemptRec {
    /// POST and PATCH (and requests of unknown method) are not idempotent by definition.
    pub fn is_non_idempotent(&self) -> bool {
        match self.method.as_deref() {
            None => true,
            Some(m) => m.eq_ignore_ascii_case("POST") || m.eq_ignore_ascii_case("PATCH"),
        }
    }

    /// Any request but GET, HEAD and OPTIONS (in any case). Asked of every attempt of a
    /// month: compared in place, not through an upper-cased copy.
    pub(super) fn may_cause_effects(&self) -> bool {
        !self
            .method
            .as_deref()
            .is_some_and(crate::event::is_safe_method)
    }
}

#[derive(Clone, Debug)]
pub struct StepEndRec {
    pub at: Timestamp,
    pub loc: Loc,
    pub ok: bool,
    pub error: Option<Text>,
}

/// One dispatch of a step: a tool-call line (or an implied one) with its attempts.
#[derive(Clone, Debug)]
pub struct Dispatch {
    pub call: CallRef,
    pub args_raw: Text,
    /// The arguments as a value when the parser gave one; `None` when `args_raw` is their
    /// JSON, read again by [`Dispatch::args`]: the parsed arguments of a month of refunds
    /// were a fifth of the model's memory, and few rules look at them.
    pub(super) given_args: Option<Box<Value>>,
    /// The arguments were JSON `null` or missing (an implied dispatch).
    pub(super) args_null: bool,
    /// The tool-call event; `None` when attempts arrived without one.
    pub at: Option<Timestamp>,
    pub loc: Option<Loc>,
    /// How many times the run had been resumed when this dispatch was made.
    pub segment: u32,
    pub attempts: Vec<AttemptRec>,
    pub end: Option<StepEndRec>,
    /// The kind of effect this call produces (`refund`), from its tool and URL.
    pub effect_kind: Option<Text>,
    pub order: Option<Text>,
    pub amount: Option<Money>,
    /// Index into [`Model::calls`] ([`Dispatch::logical`]).
    pub(super) logical: u32,
}

impl Dispatch {
    /// The dispatch's logical call: its index into [`Model::calls`].
    pub fn logical(&self) -> usize {
        self.logical as usize
    }

    /// The arguments as JSON (`Null` when there were none, or they were not JSON).
    pub fn args(&self) -> Cow<'_, Value> {
        match &self.given_args {
            Some(v) => Cow::Borrowed(&**v),
            None if self.args_null => Cow::Owned(Value::Null),
            None => Cow::Owned(serde_json::from_str(&self.args_raw).unwrap_or(Value::Null)),
        }
    }

    pub fn args_are_null(&self) -> bool {
        self.args_null
    }

    /// Some request of the dispatch was logged (not only implied: [`AttemptRec::unlogged`]),
    /// so the trace can say whether it carried a key.
    pub fn requests_logged(&self) -> bool {
        self.attempts.iter().any(|a| !a.unlogged)
    }

    /// The key the dispatch was sent with: that of its first keyed attempt.
    pub fn key(&self) -> Option<&str> {
        self.attempts.iter().find_map(|a| a.key.as_deref())
    }

    pub fn first_at(&self) -> Timestamp {
        self.at
            .or_else(|| self.attempts.first().map(|a| a.at))
            .unwrap_or_default()
    }

    /// The time of its latest line before a request no line gave: its latest request's
    /// outcome, else that request, else its tool call. Such a request was sent after it.
    pub(super) fn latest_line_at(&self) -> Option<Timestamp> {
        let last = self.attempts.last();
        last.map(|a| a.outcome.as_ref().map_or(a.at, |o| o.at))
            .or(self.at)
    }

    /// The time of the dispatch's latest event: its tool call, a request, an answer or its
    /// step's end.
    pub fn last_at(&self) -> Timestamp {
        let attempts = (self.attempts.iter())
            .flat_map(|a| std::iter::once(a.at).chain(a.outcome.as_ref().map(|o| o.at)));
        (self.at.into_iter())
            .chain(attempts)
            .chain(self.end.as_ref().map(|e| e.at))
            .max()
            .unwrap_or_default()
    }
}

/// A logical call (SPEC §2): (run, step, tool, canonical args), with its dispatches in time
/// order. `group` joins calls that count as one for duplicates (SPEC §4.3): a call that
/// a resume renumbered belongs to the group of the call it repeats.
#[derive(Clone, Debug)]
pub struct LogicalCall {
    pub run: Text,
    pub step: u32,
    pub tool: Text,
    pub canonical: Text,
    pub dispatches: Vec<usize>,
    // u32, read through methods: a month has 300 k calls, and these were 24 of their bytes.
    pub(super) group: u32,
    pub(super) renumbered_from: Option<u32>,
}

impl LogicalCall {
    /// The duplicate group (SPEC §4.3): the index of the first call of those that count as
    /// one.
    pub fn group(&self) -> usize {
        self.group as usize
    }

    /// The earlier call (another step of the same run, same tool and canonical args,
    /// completed before a resume) that this one repeats under a new step number.
    pub fn renumbered_from(&self) -> Option<usize> {
        self.renumbered_from.map(|c| c as usize)
    }
}

#[derive(Clone, Debug)]
pub struct RunEventRec {
    pub at: Timestamp,
    pub loc: Loc,
    pub what: Lifecycle,
}

/// A line of one step's parallel calls that named none of them (a SPEC §3.1 line names only
/// the run and step; an HTTP client's names neither) and was given to one by the order they
/// were dispatched, while another could as well have been its (`correlate/build/parallel.rs`).
/// Kept to tell the user where the calls' stories rest on that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GuessedCall {
    pub at: Loc,
    pub line: DealtLine,
    /// The dispatch the line was given to, and the attempt (its index there) it made or
    /// ended.
    pub chosen: u32,
    pub attempt: u32,
    /// Another dispatch that could have been its, and how many more could.
    pub other: u32,
    pub more: u32,
}

/// What a [`GuessedCall`]'s line was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DealtLine {
    Request,
    Answer,
    Failure,
}

impl DealtLine {
    pub fn as_str(self) -> &'static str {
        match self {
            DealtLine::Request => "request",
            DealtLine::Answer => "answer",
            DealtLine::Failure => "failure",
        }
    }
}
