//! Correlation (SPEC §4): client events become dispatches of logical calls with their
//! attempts and outcomes; service effects are merged by (kind, id) and matched to the attempt
//! that accounts for them by the strongest evidence available. Rules read only this model.

use crate::event::{Attrs, Lifecycle, Loc, Text};
use crate::money::WholeUnit;
use crate::time::{Duration, Timestamp};
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet};

/// How long after an attempt that got no answer its effect may still be created and
/// credited to it: long enough for a slow service, short enough that a later, unrelated
/// effect on the same order is not pinned on an old call.
pub const LATE_EFFECT_HORIZON: Duration = Duration(5 * 60 * 1_000_000_000);

#[derive(Clone, Debug)]
pub struct CorrelateOptions {
    /// `--max-skew`: widens every matching window.
    pub max_skew: Duration,
    /// `--tool-kind TOOL=KIND`: which effect kind a tool produces, beyond the built-in guess.
    pub tool_kinds: Vec<(String, String)>,
    /// The log each input is a file of, by input index: a rotated log's files
    /// (`worker.log.1`, `worker.log`) share their oldest file's index. Empty: every input
    /// is a log of its own.
    pub logs: Vec<u32>,
    /// `--whole-amounts`: the unit each input writes its bare whole numbers in, by input
    /// index, where the user declared one. Empty, or an input past its end: learnt.
    pub whole_units: Vec<WholeUnit>,
    /// The inputs that are effect exports (CSV), by index: where an effect's lines
    /// disagree on its amount, order or key, its log's is used over an export's
    /// ([`disputes`]).
    pub exports: Vec<u32>,
}

impl CorrelateOptions {
    /// The unit input `input` writes its bare whole numbers in, as declared.
    pub fn whole_unit(&self, input: u32) -> WholeUnit {
        self.whole_units
            .get(input as usize)
            .copied()
            .unwrap_or_default()
    }
}

impl Default for CorrelateOptions {
    fn default() -> Self {
        CorrelateOptions {
            max_skew: Duration::from_secs(2),
            tool_kinds: Vec::new(),
            logs: Vec::new(),
            whole_units: Vec::new(),
            exports: Vec::new(),
        }
    }
}

/// Everything the rules see.
#[derive(Debug, Default)]
pub struct Model {
    pub dispatches: Vec<Dispatch>,
    pub calls: Vec<LogicalCall>,
    pub effects: Vec<EffectRec>,
    pub records: Vec<RecordRec>,
    /// The service's replays ([`crate::event::Replay`]), in time order.
    pub replays: Vec<ReplayRec>,
    /// Gateways' lines about requests they gave up on or sent again, in time order.
    pub gateway_tries: Vec<GatewayTryRec>,
    /// Lifecycle events per run, in time order.
    pub runs: BTreeMap<Text, Vec<RunEventRec>>,
    /// When each resume of a run happened: segment `n` of the run starts at `resumes[n-1]`.
    pub resumes: BTreeMap<Text, Vec<Timestamp>>,
    /// Earliest and latest client event: the span the client traces cover.
    pub client_span: Option<(Timestamp, Timestamp)>,
    /// Effect kinds that some client call in the inputs produces.
    pub client_kinds: BTreeSet<Text>,
    /// The newest event of any kind: "now" for rules that ask how old something is.
    pub latest_event: Option<Timestamp>,
    pub max_skew: Duration,
    /// [`CorrelateOptions::logs`].
    pub logs: Vec<u32>,
    /// Input attributes of events (JSON Lines' unknown fields), by where they were read:
    /// carried for display only, no rule reads them.
    pub attrs: FxHashMap<Loc, Attrs>,
    /// Lines of one effect that give it different amounts, orders or keys ([`Disagreement`]).
    pub disagreements: Vec<Disagreement>,
    /// The amounts written by each effect whose lines disagree on it, and which rule chose
    /// the one used ([`disputes`]).
    pub amount_disputes: disputes::AmountDisputes,
    /// The orders, and the keys, written by each effect whose lines disagree on it, and
    /// which rule chose the one used ([`disputes::TextDispute`]).
    pub order_disputes: disputes::TextDisputes,
    pub key_disputes: disputes::TextDisputes,
    /// Lines of parallel calls given to one of them by the order they were dispatched, where
    /// that choice shapes their findings ([`GuessedCall`]).
    pub guessed_calls: Vec<GuessedCall>,
    /// Effects matched to none because requests of two logs could each have made them
    /// (agents side by side, their requests naming no call), in effect order.
    pub unsettled_effects: Vec<UnsettledEffect>,
    /// The inputs in which some request's line shows its key: such a client log shows
    /// keys, so a request of it without one sent none.
    pub inputs_showing_keys: BTreeSet<u32>,
    /// The number of each keyed attempt's key ([`Model::attempts_with_keys`]).
    pub keys: KeyNumbers,
}

impl Model {
    /// The tool a dispatch called: its logical call's (a dispatch keeps no copy).
    pub fn tool_of(&self, d: &Dispatch) -> &str {
        &self.calls[d.logical()].tool
    }

    pub fn attempt(&self, id: AttemptId) -> &AttemptRec {
        &self.dispatches[id.dispatch()].attempts[id.index()]
    }

    /// The attempt was sent without a key, as its input shows: its line has none, and the
    /// input could show one ([`AttemptRec::key_unseen`]) and does on some other request.
    /// A key the service logged on its effect is then the service's own id, not the
    /// client's key.
    pub fn key_known_absent(&self, a: &AttemptRec) -> bool {
        a.key.is_none() && !a.key_unseen && self.inputs_showing_keys.contains(&a.loc.input)
    }

    /// Every attempt with its id, in dispatch order.
    pub fn attempts(&self) -> impl Iterator<Item = (AttemptId, &AttemptRec)> {
        self.dispatches.iter().enumerate().flat_map(|(d, disp)| {
            disp.attempts
                .iter()
                .enumerate()
                .map(move |(i, a)| (AttemptId::new(d, i), a))
        })
    }

    /// The effects that happened, matched to attempts of `dispatch`.
    pub fn effects_of_dispatch(&self, dispatch: usize) -> impl Iterator<Item = usize> + '_ {
        self.effects
            .iter()
            .enumerate()
            .filter(move |(_, e)| e.happened && e.matched.is_some_and(|m| m.dispatch() == dispatch))
            .map(|(i, _)| i)
    }

    /// When segment `segment` (> 0) of `run` began, i.e. the time of its resume.
    pub fn resume_at(&self, run: &str, segment: u32) -> Option<Timestamp> {
        let i = (segment as usize).checked_sub(1)?;
        self.resumes.get(run)?.get(i).copied()
    }

    /// The latest crash of `run` before `at`, if the trace logged one.
    pub fn crash_before(&self, run: &str, at: Timestamp) -> Option<Timestamp> {
        self.runs
            .get(run)?
            .iter()
            .filter(|r| r.what == Lifecycle::Crashed && r.at <= at)
            .map(|r| r.at)
            .next_back()
    }

    /// The log `input` is a file of: a rotated log's files are one log.
    pub fn log_of(&self, input: u32) -> u32 {
        self.logs.get(input as usize).copied().unwrap_or(input)
    }

    /// Is `at` inside the span the client traces cover (widened by the skew)?
    pub fn within_client_span(&self, at: Timestamp) -> bool {
        self.client_span
            .is_some_and(|(lo, hi)| at >= lo.minus(self.max_skew) && at <= hi.plus(self.max_skew))
    }
}

mod answers;
mod build;
mod by_time;
mod call_args;
mod client_side;
mod copies;
pub mod disputes;
mod generations;
mod key_numbers;
mod kinds;
mod matching;
mod merge;
pub(crate) use merge::prefetch;
mod nearly_sorted;
mod ready;
mod replays;
mod restated;
mod service_side;
mod whole_amounts;

pub use by_time::{Rivals, UnsettledEffect};
pub use client_side::{
    AttemptId, AttemptRec, DealtLine, Dispatch, GuessedCall, LogicalCall, Outcome, OutcomeKind,
    RunEventRec, StepEndRec,
};
pub use copies::DELIVERY_SLACK;
pub use generations::same_request;
pub use key_numbers::KeyNumbers;
pub use kinds::{effect_kind_of, order_and_amount};
pub use merge::{correlate, correlate_parts, correlate_parts_adding};
pub(crate) use service_side::WrittenAmount;
pub use service_side::{
    Disagreement, Disputed, EffectRec, GatewayTryRec, MatchedBy, RecordRec, ReplayRec,
};

#[cfg(test)]
mod tests;
