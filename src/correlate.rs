//! Correlation (SPEC §4): client events become dispatches of logical calls with their
//! attempts and outcomes; service effects are merged by (kind, id) and matched to the attempt
//! that accounts for them by the strongest evidence available. Rules read only this model.

use crate::classify::FailureClass;
use crate::event::{Attrs, CallRef, Lifecycle, Loc, Text};
use crate::money::{Currency, Money};
use crate::time::{Duration, Timestamp};
use rustc_hash::FxHashMap;
use serde_json::Value;
use std::borrow::Cow;
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
}

impl Default for CorrelateOptions {
    fn default() -> Self {
        CorrelateOptions {
            max_skew: Duration::from_secs(2),
            tool_kinds: Vec::new(),
            logs: Vec::new(),
        }
    }
}

/// Index of an attempt: its dispatch and its position in that dispatch's attempts. Two
/// u32 (8 bytes): effects and indexes hold one per attempt of a month.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AttemptId {
    dispatch: u32,
    index: u32,
}

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
    fn may_cause_effects(&self) -> bool {
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
    given_args: Option<Box<Value>>,
    /// The arguments were JSON `null` or missing (an implied dispatch).
    args_null: bool,
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
    logical: u32,
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
    group: u32,
    renumbered_from: Option<u32>,
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

/// An effect as the service recorded it, merged over every line that logged it.
#[derive(Clone, Debug)]
pub struct EffectRec {
    pub kind: Text,
    pub id: Text,
    pub order: Option<Text>,
    /// Read through [`EffectRec::amount`] and [`EffectRec::whole`].
    pub(crate) written: Option<WrittenAmount>,
    pub key: Option<Text>,
    pub created: Timestamp,
    pub state: Option<Text>,
    pub state_at: Option<Timestamp>,
    pub happened: bool,
    /// Every line that logged it: almost always one, so a boxed slice (16 bytes), not a
    /// `Vec` (24).
    pub locs: Box<[Loc]>,
    pub matched: Option<AttemptId>,
    pub matched_by: Option<MatchedBy>,
}

impl EffectRec {
    /// Its amount in minor units, when known.
    pub fn amount(&self) -> Option<Money> {
        self.written
            .filter(|w| w.unit_known)
            .map(WrittenAmount::money)
    }

    /// The bare whole number an amount of unknown unit was written as
    /// ([`crate::event::Effect::whole`]), until correlation learns its unit
    /// (`correlate/whole_amounts.rs`).
    pub fn whole(&self) -> Option<Money> {
        self.written
            .filter(|w| !w.unit_known)
            .map(WrittenAmount::money)
    }

    /// What the effect's amount is compared by: its amount, else the whole number it was
    /// written as (`whole`: equal numbers are equal amounts, whichever the unit), never
    /// equal to a known amount.
    pub fn amount_key(&self) -> Option<(Currency, i64, bool)> {
        (self.written).map(|w| (w.currency, w.minor, w.unit_known))
    }
}

/// An effect's amount as its line wrote it: in minor units, or a bare whole number whose
/// unit is not known yet. One field rather than two `Option<Money>`: the model holds every
/// effect of a month, and the second made each record 16 bytes larger (the rules, walking
/// them, took 12-15 % longer at 1 GB). Money's fields are spelled out so that the flag
/// takes the padding after the currency (a nested `Money` keeps its own padding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WrittenAmount {
    minor: i64,
    currency: Currency,
    unit_known: bool,
}

impl WrittenAmount {
    pub(crate) fn new(money: Money, unit_known: bool) -> Self {
        WrittenAmount {
            minor: money.minor,
            currency: money.currency,
            unit_known,
        }
    }

    /// `amount` when there is one, else `whole` ([`crate::event::Effect`]'s two).
    pub(crate) fn of(amount: Option<Money>, whole: Option<Money>) -> Option<Self> {
        let known = amount.map(|money| WrittenAmount::new(money, true));
        known.or(whole.map(|money| WrittenAmount::new(money, false)))
    }

    pub(crate) fn unit_known(self) -> bool {
        self.unit_known
    }

    fn money(self) -> Money {
        Money::new(self.minor, self.currency)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchedBy {
    EffectId,
    Key,
    OrderAndTime,
    /// A copy (a gateway's retry, a queue's redelivery) of an effect of the same kind,
    /// order and amount matched to the attempt by one of the others, created within
    /// `--max-skew` plus [`DELIVERY_SLACK`] of it: see `correlate/copies.rs`.
    DeliveryCopy,
}

#[derive(Clone, Debug)]
pub struct RecordRec {
    pub key: Text,
    pub request_hash: Option<Text>,
    pub status: Text,
    pub response: Option<Text>,
    pub created: Timestamp,
    pub loc: Loc,
}

/// A replay the service logged: the effect `effect_id` (of `kind`, where said), or an
/// answer stored under `key`, confirmed again to a request at `at`.
#[derive(Clone, Debug)]
pub struct ReplayRec {
    pub kind: Option<Text>,
    pub effect_id: Option<Text>,
    pub key: Option<Text>,
    pub at: Timestamp,
    pub loc: Loc,
}

#[derive(Clone, Debug)]
pub struct RunEventRec {
    pub at: Timestamp,
    pub loc: Loc,
    pub what: Lifecycle,
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
}

impl Model {
    /// The tool a dispatch called: its logical call's (a dispatch keeps no copy).
    pub fn tool_of(&self, d: &Dispatch) -> &str {
        &self.calls[d.logical()].tool
    }

    pub fn attempt(&self, id: AttemptId) -> &AttemptRec {
        &self.dispatches[id.dispatch()].attempts[id.index()]
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

mod build;
mod by_time;
mod call_args;
mod copies;
mod generations;
mod kinds;
mod matching;
mod merge;
mod nearly_sorted;
mod ready;
mod replays;
mod restated;
mod whole_amounts;

pub use copies::DELIVERY_SLACK;
pub use generations::same_request;
pub use kinds::{effect_kind_of, order_and_amount};
pub use merge::{correlate, correlate_parts, correlate_parts_adding};

#[cfg(test)]
mod tests {
    use super::matching::latest_instant;
    use super::merge::Merged;
    use super::*;
    use crate::event::{Event, EventKind};
    use crate::money::Currency;

    #[test]
    fn only_requests_other_than_get_head_and_options_may_cause_effects() {
        let attempt = |method: Option<&str>| AttemptRec {
            number: 1,
            at: Timestamp(0),
            loc: Loc { input: 0, line: 1 },
            method: method.map(Text::from),
            url: None,
            key: None,
            outcome: None,
            unlogged: false,
            generation: 0,
            key_unseen: false,
        };
        for safe in ["GET", "get", "Head", "OPTIONS", "options"] {
            assert!(!attempt(Some(safe)).may_cause_effects(), "{safe}");
        }
        for unsafe_ in ["POST", "post", "PATCH", "PUT", "DELETE", "GETS", ""] {
            assert!(attempt(Some(unsafe_)).may_cause_effects(), "{unsafe_}");
        }
        assert!(attempt(None).may_cause_effects(), "unknown method");
    }

    #[test]
    fn client_and_service_parts_built_apart_give_the_model_built_together() {
        let trace = include_str!("../fixtures/incident-a88214/trace.log");
        let parsed = crate::ingest::text::parse(
            &mut trace.as_bytes(),
            0,
            &crate::ingest::ParseOptions::default(),
        )
        .unwrap();
        let (client, service): (Vec<Event>, Vec<Event>) = parsed
            .events
            .iter()
            .cloned()
            .partition(|e| e.kind.is_client_side());
        assert!(!client.is_empty() && !service.is_empty());
        let opts = CorrelateOptions::default();
        let together = correlate(parsed.events, &opts);
        let apart = correlate_parts(vec![service, client], &opts);
        assert_eq!(format!("{apart:?}"), format!("{together:?}"));
    }

    /// Events are made ready a batch ahead of the builder, on another thread when there is
    /// one: the model is the same with one thread or two, over many batches.
    #[test]
    fn the_model_is_the_same_on_one_thread_or_two() {
        use std::fmt::Write;
        let mut trace = String::new();
        for i in 0..4000u32 {
            let (m, s) = (i / 60 % 60, i % 60);
            let at = |ms: u32| format!("2026-11-01T{:02}:{m:02}:{s:02}.{ms:03}Z", i / 3600);
            let run = format!("r{}", i / 3);
            let step = i % 3 + 1;
            let tool = ["issue_refund", "lookup_order", "send_email"][i as usize % 3];
            let _ = writeln!(
                trace,
                "{}  agent run {run}  step {step}  tool={tool}  args={{\"order\":\"A-{}\",\"amount_p\":{}}}\n\
                 {}  POST https://pay/v1/refunds/{}  (attempt 1)\n\
                 {}  201 Created  refund_id=rf_{i}\n\
                 {}  agent run {run}  step {step}  ok",
                at(0),
                i % 500,
                100 + i % 7,
                at(10),
                i % 5000,
                at(20),
                at(30),
            );
        }
        let parsed = crate::ingest::text::parse(
            &mut trace.as_bytes(),
            0,
            &crate::ingest::ParseOptions::default(),
        )
        .unwrap();
        assert!(parsed.events.len() > 3 * 4096, "{}", parsed.events.len());
        let opts = CorrelateOptions::default();
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let model = pool.install(|| correlate(parsed.events.clone(), &opts));
            assert_eq!(model.dispatches.len(), 4000);
            format!("{model:?}")
        };
        let one = on(1);
        assert_eq!(on(2), one);
        assert_eq!(on(3), one);
    }

    #[test]
    fn parts_merge_as_a_stable_sort_of_them_all_would_order_them() {
        use crate::event::{Lifecycle, RunEvent};
        // Times with ties inside and across parts; the run id records where each came from.
        let ev = |part: usize, i: usize, at: i64, line: u32| Event {
            at: Timestamp(at),
            loc: Loc { input: 0, line },
            kind: EventKind::Run(Box::new(RunEvent {
                run: format!("{part}.{i}").into(),
                what: Lifecycle::Started,
            })),
        };
        let mut parts = Vec::new();
        for p in 0..4usize {
            let part: Vec<Event> = (0..50usize)
                .map(|i| ev(p, i, ((i * 7 + p * 3) % 11) as i64, (i % 3) as u32))
                .collect();
            parts.push(part);
        }
        let mut expected: Vec<Event> = parts.iter().flatten().cloned().collect();
        expected.sort_by_key(|e| (e.at, e.loc));
        for part in &mut parts {
            part.sort_by_key(|e| (e.at, e.loc));
        }
        let merged: Vec<Event> = Merged::new(parts).collect();
        assert_eq!(merged, expected);
    }

    #[test]
    fn a_time_to_the_second_may_be_late_in_its_second() {
        let skew = Duration::from_secs(2);
        let whole = Timestamp(1_764_684_009 * crate::time::NANOS_PER_SEC);
        assert_eq!(latest_instant(whole, skew).0 - whole.0, 999_999_999);
        assert_eq!(
            latest_instant(whole, Duration::from_millis(300)).0 - whole.0,
            300_000_000
        );
        assert_eq!(latest_instant(whole, Duration(0)), whole);
        let precise = Timestamp(whole.0 + 1);
        assert_eq!(latest_instant(precise, skew), precise);
    }

    #[test]
    fn effect_kind_from_tool_or_url() {
        assert_eq!(
            effect_kind_of("issue_refund", None, &[]).as_deref(),
            Some("refund")
        );
        assert_eq!(
            effect_kind_of("pay", Some("https://payments.internal/v1/refunds?x=1"), &[]).as_deref(),
            Some("refund")
        );
        assert_eq!(
            effect_kind_of("lookup_customer", Some("https://crm/v1/customers"), &[]),
            None
        );
        assert_eq!(
            effect_kind_of("IssueRefund", None, &[]).as_deref(),
            Some("refund")
        );
        assert_eq!(
            effect_kind_of("capture_charge", Some("https://p/v1/REFUNDS"), &[]).as_deref(),
            Some("refund"),
            "the first kind of the list named anywhere"
        );
        let map = vec![("send_money".to_string(), "payout".to_string())];
        assert_eq!(
            effect_kind_of("send_money", None, &map).as_deref(),
            Some("payout")
        );
    }

    #[test]
    fn order_and_amount_from_args() {
        let v: Value = serde_json::from_str(r#"{"order":"A-1","amount_p":4500.0}"#).unwrap();
        assert_eq!(
            order_and_amount(&v),
            (Some("A-1".into()), Some(Money::new(4500, Currency::GBP)))
        );
        let v: Value =
            serde_json::from_str(r#"{"order_id":"B","amount_minor":12,"currency":"eur"}"#).unwrap();
        let eur = Currency::parse("EUR").unwrap();
        assert_eq!(
            order_and_amount(&v),
            (Some("B".into()), Some(Money::new(12, eur)))
        );
        // A payments API's shape: the order in `metadata`, read when the top level has none.
        let v: Value = serde_json::from_str(
            r#"{"charge":"ch_1","amount_minor":4500,"currency":"GBP","metadata":{"order_id":"A-7"}}"#,
        )
        .unwrap();
        assert_eq!(
            order_and_amount(&v),
            (Some("A-7".into()), Some(Money::new(4500, Currency::GBP)))
        );
        let v: Value =
            serde_json::from_str(r#"{"order":"A-1","metadata":{"order_id":"X"}}"#).unwrap();
        assert_eq!(order_and_amount(&v).0, Some("A-1".into()));
        let v: Value = serde_json::from_str(r#"{"metadata":"order_id=A-1"}"#).unwrap();
        assert_eq!(order_and_amount(&v).0, None);
    }

    /// A month holds every effect: the whole number of unknown unit shares the amount's
    /// place (`WrittenAmount`), and a second field would make each record 16 bytes larger.
    #[test]
    fn an_effect_record_stays_152_bytes() {
        assert_eq!(std::mem::size_of::<EffectRec>(), 152);
    }
}
