//! Correlation (SPEC §4): client events become dispatches of logical calls with their
//! attempts and outcomes; service effects are merged by (kind, id) and matched to the attempt
//! that accounts for them by the strongest evidence available. Rules read only this model.

use crate::canonical::canonical;
use crate::classify::FailureClass;
use crate::event::{Attrs, CallRef, Event, EventKind, Lifecycle, Loc};
use crate::money::{Currency, Money};
use crate::time::{Duration, Timestamp};
use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use rustc_hash::{FxBuildHasher, FxHashMap};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::BuildHasher;

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
}

impl Default for CorrelateOptions {
    fn default() -> Self {
        CorrelateOptions {
            max_skew: Duration::from_secs(2),
            tool_kinds: Vec::new(),
        }
    }
}

/// Index of an attempt: its dispatch and its position in that dispatch's attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AttemptId {
    pub dispatch: usize,
    pub index: usize,
}

#[derive(Clone, Debug)]
pub enum OutcomeKind {
    Failure {
        error: String,
        message: String,
    },
    Response {
        status: u16,
        effect_id: Option<String>,
        replayed: bool,
        message: String,
    },
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub at: Timestamp,
    pub loc: Loc,
    pub class: FailureClass,
    pub kind: OutcomeKind,
}

impl Outcome {
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
            OutcomeKind::Failure { error, message } => {
                let short = error.rsplit('.').next().unwrap_or(error);
                if message.is_empty() {
                    short.to_string()
                } else {
                    format!("{short}: {message}")
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
    pub method: Option<String>,
    pub url: Option<String>,
    pub key: Option<String>,
    pub outcome: Option<Outcome>,
}

impl AttemptRec {
    /// POST and PATCH (and requests of unknown method) are not idempotent by definition.
    pub fn is_non_idempotent(&self) -> bool {
        match self.method.as_deref() {
            None => true,
            Some(m) => m.eq_ignore_ascii_case("POST") || m.eq_ignore_ascii_case("PATCH"),
        }
    }

    fn may_cause_effects(&self) -> bool {
        !matches!(
            self.method
                .as_deref()
                .map(|m| m.to_ascii_uppercase())
                .as_deref(),
            Some("GET" | "HEAD" | "OPTIONS")
        )
    }
}

#[derive(Clone, Debug)]
pub struct StepEndRec {
    pub at: Timestamp,
    pub loc: Loc,
    pub ok: bool,
    pub error: Option<String>,
}

/// One dispatch of a step: a tool-call line (or an implied one) with its attempts.
#[derive(Clone, Debug)]
pub struct Dispatch {
    pub call: CallRef,
    pub tool: String,
    pub args_raw: String,
    /// The arguments as a value when the parser gave one; `None` when `args_raw` is their
    /// JSON, read again by [`Dispatch::args`]: the parsed arguments of a month of refunds
    /// were a fifth of the model's memory, and few rules look at them.
    given_args: Option<Value>,
    /// The arguments were JSON `null` or missing (an implied dispatch).
    args_null: bool,
    pub canonical: String,
    /// The tool-call event; `None` when attempts arrived without one.
    pub at: Option<Timestamp>,
    pub loc: Option<Loc>,
    /// How many times the run had been resumed when this dispatch was made.
    pub segment: u32,
    pub attempts: Vec<AttemptRec>,
    pub end: Option<StepEndRec>,
    /// The kind of effect this call produces (`refund`), from its tool and URL.
    pub effect_kind: Option<String>,
    pub order: Option<String>,
    pub amount: Option<Money>,
    /// Index into [`Model::calls`].
    pub logical: usize,
}

impl Dispatch {
    /// The arguments as JSON (`Null` when there were none, or they were not JSON).
    pub fn args(&self) -> Cow<'_, Value> {
        match &self.given_args {
            Some(v) => Cow::Borrowed(v),
            None if self.args_null => Cow::Owned(Value::Null),
            None => Cow::Owned(serde_json::from_str(&self.args_raw).unwrap_or(Value::Null)),
        }
    }

    pub fn args_are_null(&self) -> bool {
        self.args_null
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
    pub run: String,
    pub step: u32,
    pub tool: String,
    pub canonical: String,
    pub dispatches: Vec<usize>,
    pub group: usize,
    /// The earlier call (another step of the same run, same tool and canonical args,
    /// completed before a resume) that this one repeats under a new step number.
    pub renumbered_from: Option<usize>,
}

/// An effect as the service recorded it, merged over every line that logged it.
#[derive(Clone, Debug)]
pub struct EffectRec {
    pub kind: String,
    pub id: String,
    pub order: Option<String>,
    pub amount: Option<Money>,
    pub key: Option<String>,
    pub created: Timestamp,
    pub state: Option<String>,
    pub state_at: Option<Timestamp>,
    pub happened: bool,
    pub locs: Vec<Loc>,
    pub matched: Option<AttemptId>,
    pub matched_by: Option<MatchedBy>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchedBy {
    EffectId,
    Key,
    OrderAndTime,
}

#[derive(Clone, Debug)]
pub struct RecordRec {
    pub key: String,
    pub request_hash: Option<String>,
    pub status: String,
    pub response: Option<String>,
    pub created: Timestamp,
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
    /// Lifecycle events per run, in time order.
    pub runs: BTreeMap<String, Vec<RunEventRec>>,
    /// When each resume of a run happened: segment `n` of the run starts at `resumes[n-1]`.
    pub resumes: BTreeMap<String, Vec<Timestamp>>,
    /// Earliest and latest client event: the span the client traces cover.
    pub client_span: Option<(Timestamp, Timestamp)>,
    /// Effect kinds that some client call in the inputs produces.
    pub client_kinds: BTreeSet<String>,
    /// The newest event of any kind: "now" for rules that ask how old something is.
    pub latest_event: Option<Timestamp>,
    pub max_skew: Duration,
    /// Input attributes of events (JSON Lines' unknown fields), by where they were read:
    /// carried for display only, no rule reads them.
    pub attrs: FxHashMap<Loc, Attrs>,
}

impl Model {
    pub fn attempt(&self, id: AttemptId) -> &AttemptRec {
        &self.dispatches[id.dispatch].attempts[id.index]
    }

    /// Every attempt with its id, in dispatch order.
    pub fn attempts(&self) -> impl Iterator<Item = (AttemptId, &AttemptRec)> {
        self.dispatches.iter().enumerate().flat_map(|(d, disp)| {
            disp.attempts.iter().enumerate().map(move |(i, a)| {
                (
                    AttemptId {
                        dispatch: d,
                        index: i,
                    },
                    a,
                )
            })
        })
    }

    /// The effects that happened, matched to attempts of `dispatch`.
    pub fn effects_of_dispatch(&self, dispatch: usize) -> impl Iterator<Item = usize> + '_ {
        self.effects
            .iter()
            .enumerate()
            .filter(move |(_, e)| e.happened && e.matched.is_some_and(|m| m.dispatch == dispatch))
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

    /// Is `at` inside the span the client traces cover (widened by the skew)?
    pub fn within_client_span(&self, at: Timestamp) -> bool {
        self.client_span
            .is_some_and(|(lo, hi)| at >= lo.minus(self.max_skew) && at <= hi.plus(self.max_skew))
    }
}

/// Builds the model from every input's events.
pub fn correlate(events: Vec<Event>, opts: &CorrelateOptions) -> Model {
    correlate_parts(vec![events], opts)
}

/// Builds the model from events in parts (one per input, say), in the order a stable sort
/// of all of them by time and place would give: time order, then input order, so that a
/// dispatch precedes its attempts even across files, and events of one span (which share a
/// time and a line) keep the parser's order whatever the thread count. Each part is sorted
/// on its own and the parts merged as the model is built: joining them first, and a sort's
/// buffer beside that, were twice the events' memory.
pub fn correlate_parts(mut parts: Vec<Vec<Event>>, opts: &CorrelateOptions) -> Model {
    {
        use rayon::prelude::*;
        for part in &mut parts {
            if !part.is_sorted_by_key(|e| (e.at, e.loc)) {
                part.par_sort_by_key(|e| (e.at, e.loc));
            }
        }
    }
    // Client events and the service's effects and records build separate parts of the
    // model until matching: when no input mixes the two (agent traces in some files,
    // service logs in others), the two sides are merged and built on two threads.
    let side = |p: &Vec<Event>| {
        let client = p.iter().filter(|e| e.kind.is_client_side()).count();
        (client > 0, client < p.len())
    };
    let sides: Vec<(bool, bool)> = parts.iter().map(side).collect();
    if sides.iter().any(|&(client, service)| client && service) {
        return build(parts, opts).finish();
    }
    let (client, service): (Vec<_>, Vec<_>) = parts
        .into_iter()
        .zip(sides)
        .partition(|(_, (client, _))| *client);
    let unzip = |v: Vec<(Vec<Event>, _)>| v.into_iter().map(|(p, _)| p).collect::<Vec<_>>();
    let (client, service) = (unzip(client), unzip(service));
    let (mut b, s) = rayon::join(|| build(client, opts), || build(service, opts));
    b.model.effects = s.model.effects;
    b.model.records = s.model.records;
    b.model.latest_event = b.model.latest_event.max(s.model.latest_event);
    b.finish()
}

/// A builder that has read every event of `parts`, in order.
fn build(parts: Vec<Vec<Event>>, opts: &CorrelateOptions) -> Builder<'_> {
    let mut b = Builder::new(opts);
    b.reserve(&parts);
    merge_in_order(parts, |ev| b.add(ev));
    b
}

/// Calls `each` with every event of the sorted `parts`, by (time, place, part).
fn merge_in_order(parts: Vec<Vec<Event>>, mut each: impl FnMut(Event)) {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut iters: Vec<_> = parts
        .into_iter()
        .map(|p| p.into_iter().peekable())
        .collect();
    let mut heads = BinaryHeap::with_capacity(iters.len());
    for (i, it) in iters.iter_mut().enumerate() {
        if let Some(e) = it.peek() {
            heads.push(Reverse((e.at, e.loc, i)));
        }
    }
    while let Some(Reverse((_, _, i))) = heads.pop() {
        let it = &mut iters[i];
        let Some(ev) = it.next() else { continue };
        each(ev);
        // The rest of the part while it stays ahead of every other part's next event.
        while let Some(next) = it.peek() {
            let key = (next.at, next.loc, i);
            if heads.peek().is_some_and(|Reverse(h)| *h < key) {
                heads.push(Reverse(key));
                break;
            }
            each(it.next().expect("peeked"));
        }
        if it.peek().is_none() {
            // Read out: its memory is freed now, not when every part is.
            iters[i] = Vec::new().into_iter().peekable();
        }
    }
}

struct Builder<'o> {
    opts: &'o CorrelateOptions,
    model: Model,
    // Indexes into the model that hash and compare what the model holds, rather than
    // keeping copies of its strings as keys.
    /// The latest dispatch of each (run, step).
    latest: HashTable<usize>,
    /// (run, step, tool, canonical) → logical call.
    call_index: HashTable<usize>,
    /// (kind, id) → effect.
    effect_index: HashTable<usize>,
    resumes: FxHashMap<String, u32>,
}

impl<'o> Builder<'o> {
    fn new(opts: &'o CorrelateOptions) -> Self {
        Builder {
            opts,
            model: Model {
                max_skew: opts.max_skew,
                ..Model::default()
            },
            latest: HashTable::new(),
            call_index: HashTable::new(),
            effect_index: HashTable::new(),
            resumes: FxHashMap::default(),
        }
    }

    /// Room for every dispatch and effect the events can make, taken once: growing the
    /// model's vectors and maps by doubling copied and faulted in most of its memory again.
    fn reserve(&mut self, parts: &[Vec<Event>]) {
        let (mut dispatches, mut effects) = (0, 0);
        for e in parts.iter().flatten() {
            match e.kind {
                EventKind::ToolCall(_) => dispatches += 1,
                EventKind::Effect(_) => effects += 1,
                _ => {}
            }
        }
        self.model.dispatches.reserve(dispatches);
        self.model.calls.reserve(dispatches);
        let dispatch_hash = |d: &usize| hash_call(&self.model.dispatches[*d].call);
        self.latest.reserve(dispatches, dispatch_hash);
        let calls = &self.model.calls;
        self.call_index
            .reserve(dispatches, |&i| hash_logical(&calls[i]));
        self.model.effects.reserve(effects);
        let all = &self.model.effects;
        self.effect_index
            .reserve(effects, |&i| hash_effect(&all[i].kind, &all[i].id));
    }

    fn add(&mut self, ev: Event) {
        self.model.latest_event = self.model.latest_event.max(Some(ev.at));
        if ev.kind.is_client_side() {
            let span = self.model.client_span.get_or_insert((ev.at, ev.at));
            span.0 = span.0.min(ev.at);
            span.1 = span.1.max(ev.at);
        }
        let (at, loc) = (ev.at, ev.loc);
        match ev.kind {
            EventKind::ToolCall(t) => {
                let given = !t.args.is_null();
                let args = t.parsed_args();
                let at_loc = Some((at, loc));
                let d = self.new_dispatch(t.call, t.tool, t.args_raw, (args, given), at_loc);
                self.refresh_kind(d, None);
            }
            EventKind::Attempt(a) => {
                let call = a.call.unwrap_or_else(|| orphan_call(loc));
                let d = self.dispatch_for(&call, at);
                // A new attempt 1 on a dispatch that already has attempts is a re-dispatch
                // whose tool-call line was not logged.
                let d = if a.number == 1 && !self.model.dispatches[d].attempts.is_empty() {
                    let prev = &self.model.dispatches[d];
                    let (tool, raw) = (prev.tool.clone(), prev.args_raw.clone());
                    let args = (prev.args().into_owned(), prev.given_args.is_some());
                    self.new_dispatch(call, tool, raw, args, None)
                } else {
                    d
                };
                self.refresh_kind(d, a.url.as_deref());
                self.model.dispatches[d].attempts.push(AttemptRec {
                    number: a.number,
                    at,
                    loc,
                    method: a.method,
                    url: a.url,
                    key: a.key,
                    outcome: None,
                });
            }
            EventKind::Failure(f) => {
                let outcome = Outcome {
                    at,
                    loc,
                    class: f.class,
                    kind: OutcomeKind::Failure {
                        error: f.error,
                        message: f.message,
                    },
                };
                self.attach_outcome(f.call, f.attempt, outcome, loc);
            }
            EventKind::Response(r) => {
                let outcome = Outcome {
                    at,
                    loc,
                    class: r.class,
                    kind: OutcomeKind::Response {
                        status: r.status,
                        effect_id: r.effect_id,
                        replayed: r.replayed,
                        message: r.message,
                    },
                };
                self.attach_outcome(r.call, r.attempt, outcome, loc);
            }
            EventKind::StepEnd(s) => {
                let d = self.dispatch_for(&s.call, at);
                self.model.dispatches[d].end = Some(StepEndRec {
                    at,
                    loc,
                    ok: s.ok,
                    error: s.error,
                });
            }
            EventKind::Run(r) => {
                // A `started` after a crash, with no `resumed` between, is a restart of a run
                // whose id survived: a resume in all but name.
                let last = self
                    .model
                    .runs
                    .get(&r.run)
                    .and_then(|v| v.last())
                    .map(|e| e.what);
                let opens_segment = r.what == Lifecycle::Resumed
                    || (r.what == Lifecycle::Started && last == Some(Lifecycle::Crashed));
                if opens_segment {
                    *self.resumes.entry(r.run.clone()).or_default() += 1;
                    self.model
                        .resumes
                        .entry(r.run.clone())
                        .or_default()
                        .push(at);
                }
                self.model.runs.entry(r.run).or_default().push(RunEventRec {
                    at,
                    loc,
                    what: r.what,
                });
            }
            EventKind::Effect(e) => self.add_effect(e, at, loc),
            EventKind::Record(r) => self.model.records.push(RecordRec {
                key: r.key,
                request_hash: r.request_hash,
                status: r.status,
                response: r.response,
                created: at,
                loc,
            }),
        }
    }

    fn new_dispatch(
        &mut self,
        call: CallRef,
        tool: String,
        args_raw: String,
        (args, given): (Value, bool),
        event: Option<(Timestamp, Loc)>,
    ) -> usize {
        let canonical = canonical(&args);
        let segment = self.resumes.get(&call.run).copied().unwrap_or(0);
        let next_call = self.model.calls.len();
        let calls = &self.model.calls;
        let hash = FxBuildHasher.hash_one((call.run.as_str(), call.step, &*tool, &*canonical));
        let found = self.call_index.find(hash, |&i| {
            let c = &calls[i];
            c.step == call.step && c.run == call.run && c.tool == tool && c.canonical == canonical
        });
        let logical = found.copied().unwrap_or(next_call);
        if logical == next_call {
            self.call_index
                .insert_unique(hash, next_call, |&i| hash_logical(&calls[i]));
            self.model.calls.push(LogicalCall {
                run: call.run.clone(),
                step: call.step,
                tool: tool.clone(),
                canonical: canonical.clone(),
                dispatches: Vec::new(),
                group: logical,
                renumbered_from: None,
            });
        }
        let d = self.model.dispatches.len();
        self.model.calls[logical].dispatches.push(d);
        let (order, amount) = order_and_amount(&args);
        let dispatches = &self.model.dispatches;
        match self.latest.entry(
            hash_call(&call),
            |&e| dispatches[e].call == call,
            |&e| hash_call(&dispatches[e].call),
        ) {
            Entry::Occupied(mut o) => *o.get_mut() = d,
            Entry::Vacant(v) => {
                v.insert(d);
            }
        }
        self.model.dispatches.push(Dispatch {
            call,
            tool,
            args_raw,
            args_null: args.is_null(),
            given_args: given.then_some(args),
            canonical,
            at: event.map(|e| e.0),
            loc: event.map(|e| e.1),
            segment,
            // Most dispatches have one attempt; a first push would make room for four
            // (700 bytes), a fifth of the model's memory on a month of refunds.
            attempts: Vec::with_capacity(1),
            end: None,
            effect_kind: None,
            order,
            amount,
            logical,
        });
        d
    }

    /// The latest dispatch of `call`, or an implied one when the input gave no tool call.
    fn dispatch_for(&mut self, call: &CallRef, _at: Timestamp) -> usize {
        let dispatches = &self.model.dispatches;
        match self
            .latest
            .find(hash_call(call), |&d| dispatches[d].call == *call)
        {
            Some(&d) => d,
            None => self.new_dispatch(
                call.clone(),
                String::new(),
                String::new(),
                (Value::Null, false),
                None,
            ),
        }
    }

    fn refresh_kind(&mut self, d: usize, url: Option<&str>) {
        let disp = &self.model.dispatches[d];
        if disp.effect_kind.is_some() {
            return;
        }
        let kind = effect_kind_of(&disp.tool, url, &self.opts.tool_kinds);
        if let Some(k) = &kind {
            self.model.client_kinds.insert(k.clone());
        }
        self.model.dispatches[d].effect_kind = kind;
    }

    fn attach_outcome(
        &mut self,
        call: Option<CallRef>,
        attempt: Option<u32>,
        outcome: Outcome,
        loc: Loc,
    ) {
        let call = call.unwrap_or_else(|| orphan_call(loc));
        let d = self.dispatch_for(&call, outcome.at);
        let attempts = &mut self.model.dispatches[d].attempts;
        let slot = match attempt {
            Some(n) => attempts.iter().rposition(|a| a.number == n),
            None => attempts.iter().rposition(|a| a.outcome.is_none()),
        }
        .or(attempts.len().checked_sub(1));
        match slot {
            Some(i) if attempts[i].outcome.is_none() => attempts[i].outcome = Some(outcome),
            _ => {
                // An outcome with no attempt logged: imply the attempt, so the outcome is
                // still evidence (its time is the best guess of when it was sent).
                let number = attempt.unwrap_or(attempts.len() as u32 + 1);
                attempts.push(AttemptRec {
                    number,
                    at: outcome.at,
                    loc: outcome.loc,
                    method: None,
                    url: None,
                    key: None,
                    outcome: Some(outcome),
                });
            }
        }
    }

    fn add_effect(&mut self, e: crate::event::Effect, at: Timestamp, loc: Loc) {
        let hash = hash_effect(&e.kind, &e.id);
        let effects = &self.model.effects;
        let found = self.effect_index.find(hash, |&i| {
            effects[i].id == e.id && effects[i].kind == e.kind
        });
        if let Some(&i) = found {
            // The same effect logged again (a replica, an export): merge, never duplicate.
            let rec = &mut self.model.effects[i];
            rec.created = rec.created.min(at);
            rec.order = rec.order.take().or(e.order);
            rec.amount = rec.amount.or(e.amount);
            rec.key = rec.key.take().or(e.key);
            if e.state.is_some() && (rec.state_at.is_none() || e.state_at > rec.state_at) {
                rec.state = e.state;
                rec.state_at = e.state_at;
                rec.happened = e.happened;
            }
            rec.locs.push(loc);
            return;
        }
        self.effect_index.insert_unique(hash, effects.len(), |&i| {
            hash_effect(&effects[i].kind, &effects[i].id)
        });
        self.model.effects.push(EffectRec {
            kind: e.kind,
            id: e.id,
            order: e.order,
            amount: e.amount,
            key: e.key,
            created: at,
            state: e.state,
            state_at: e.state_at,
            happened: e.happened,
            locs: vec![loc],
            matched: None,
            matched_by: None,
        });
    }

    fn finish(mut self) -> Model {
        for call in &mut self.model.calls {
            call.dispatches
                .sort_by_key(|&d| self.model.dispatches[d].first_at());
        }
        for e in &mut self.model.effects {
            e.locs.sort();
        }
        match_effects(&mut self.model);
        join_renumbered(&mut self.model);
        self.model
    }
}

fn hash_call(call: &CallRef) -> u64 {
    FxBuildHasher.hash_one((call.run.as_str(), call.step))
}

fn hash_logical(c: &LogicalCall) -> u64 {
    FxBuildHasher.hash_one((
        c.run.as_str(),
        c.step,
        c.tool.as_str(),
        c.canonical.as_str(),
    ))
}

fn hash_effect(kind: &str, id: &str) -> u64 {
    FxBuildHasher.hash_one((kind, id))
}

fn orphan_call(loc: Loc) -> CallRef {
    CallRef {
        run: format!("?{}", loc.input),
        step: 0,
    }
}

/// Matches each effect to at most one attempt (SPEC §4.2).
fn match_effects(model: &mut Model) {
    let mut by_effect_id: FxHashMap<&str, AttemptId> = FxHashMap::default();
    let mut by_key: FxHashMap<&str, (Timestamp, AttemptId)> = FxHashMap::default();
    let mut by_order: FxHashMap<(&str, &str), Vec<(Timestamp, AttemptId)>> = FxHashMap::default();
    for (id, a) in model.attempts() {
        if let Some(o) = &a.outcome
            && let OutcomeKind::Response {
                effect_id: Some(eid),
                replayed: false,
                ..
            } = &o.kind
        {
            by_effect_id.entry(eid.as_str()).or_insert(id);
        }
        if let Some(k) = &a.key {
            let slot = by_key.entry(k.as_str()).or_insert((a.at, id));
            if (a.at, id) < *slot {
                *slot = (a.at, id);
            }
        }
        let d = &model.dispatches[id.dispatch];
        if let (Some(kind), Some(order)) = (&d.effect_kind, &d.order)
            && a.may_cause_effects()
        {
            by_order
                .entry((kind.as_str(), order.as_str()))
                .or_default()
                .push((a.at, id));
        }
    }
    for list in by_order.values_mut() {
        list.sort();
    }
    let skew = model.max_skew;
    let mut matches = Vec::with_capacity(model.effects.len());
    for e in &model.effects {
        let found = by_effect_id
            .get(e.id.as_str())
            .map(|&id| (id, MatchedBy::EffectId))
            .or_else(|| {
                e.key
                    .as_deref()
                    .and_then(|k| by_key.get(k))
                    .map(|&(_, id)| (id, MatchedBy::Key))
            })
            .or_else(|| {
                let order = e.order.as_deref()?;
                let list = by_order.get(&(e.kind.as_str(), order))?;
                let fits = |&&(_, id): &&(Timestamp, AttemptId)| attempt_fits(model, id, e);
                let created = latest_instant(e.created, skew);
                latest_at_or_before(list, created, fits)
                    .or_else(|| latest_at_or_before(list, created.plus(skew), fits))
                    .map(|id| (id, MatchedBy::OrderAndTime))
            });
        matches.push(found);
    }
    for (e, found) in model.effects.iter_mut().zip(matches) {
        if let Some((id, by)) = found {
            e.matched = Some(id);
            e.matched_by = Some(by);
        }
    }
}

/// Joins each call that a resume renumbered to the call it repeats (SPEC §4.3): a call first
/// dispatched after a resume, under a step number the run had not used for it before, with
/// the same tool and canonical args as another step of the run that had completed (or had
/// produced an effect) in an earlier segment. Only calls that can have an effect count: a
/// re-planned lookup is harmless. Calls are visited in creation (time) order, so a call
/// renumbered twice joins the group of the first.
fn join_renumbered(model: &mut Model) {
    // Which dispatches produced an effect, computed once: a scan per candidate would be
    // quadratic on a month of logs.
    let mut produced = vec![false; model.dispatches.len()];
    for e in model.effects.iter().filter(|e| e.happened) {
        if let Some(m) = e.matched {
            produced[m.dispatch] = true;
        }
    }
    let mut by_shape: FxHashMap<(&str, &str, &str), Vec<usize>> = FxHashMap::default();
    for (i, c) in model.calls.iter().enumerate() {
        by_shape
            .entry((c.run.as_str(), c.tool.as_str(), c.canonical.as_str()))
            .or_default()
            .push(i);
    }
    let mut joins: Vec<(usize, usize)> = Vec::new();
    for candidates in by_shape.values().filter(|v| v.len() > 1) {
        for &later in candidates {
            let Some(&first) = model.calls[later].dispatches.first() else {
                continue;
            };
            let seg = model.dispatches[first].segment;
            if seg == 0 || !can_have_effect(&model.dispatches[first]) {
                continue;
            }
            // The most recent earlier-segment dispatch of another step that finished its work.
            let original = candidates
                .iter()
                .filter(|&&c| model.calls[c].step != model.calls[later].step)
                .flat_map(|&c| model.calls[c].dispatches.iter().map(move |&d| (c, d)))
                .filter(|&(_, d)| {
                    let disp = &model.dispatches[d];
                    disp.segment < seg && (disp.end.as_ref().is_some_and(|e| e.ok) || produced[d])
                })
                .max_by_key(|&(_, d)| (model.dispatches[d].first_at(), d))
                .map(|(c, _)| c);
            if let Some(original) = original {
                joins.push((later, original));
            }
        }
    }
    for &(later, original) in &joins {
        model.calls[later].renumbered_from = Some(original);
    }
    // Follow chains to the first call: each link goes to a strictly earlier segment, so a
    // chain ends; the bound is only a guard.
    for (later, _) in joins {
        let mut root = later;
        for _ in 0..model.calls.len() {
            match model.calls[root].renumbered_from {
                Some(prev) => root = prev,
                None => break,
            }
        }
        model.calls[later].group = model.calls[root].group;
    }
}

/// A dispatch that may have an effect: its tool or URL names an effect kind, or it sent a
/// non-idempotent request.
fn can_have_effect(d: &Dispatch) -> bool {
    d.effect_kind.is_some() || d.attempts.iter().any(|a| a.is_non_idempotent())
}

/// Amount agrees (where both sides have one) and the effect was created while the attempt
/// could still have caused it.
fn attempt_fits(model: &Model, id: AttemptId, e: &EffectRec) -> bool {
    let d = &model.dispatches[id.dispatch];
    if let (Some(a), Some(b)) = (d.amount, e.amount)
        && a != b
    {
        return false;
    }
    let attempt = &model.dispatches[id.dispatch].attempts[id.index];
    let open_until = match &attempt.outcome {
        Some(o) if o.status().is_some() && o.class != FailureClass::Ambiguous => o.at,
        _ => attempt.at.plus(LATE_EFFECT_HORIZON),
    };
    e.created <= open_until.plus(model.max_skew)
}

/// A creation time written to the second (a settlement export's `Created (UTC)`) stands for
/// some instant in that second: matching reads it as late in that second as `--max-skew`
/// allows, so an attempt sent in the same second, a fraction after the printed time, still
/// counts as sent before it (else two refunds a second apart are both pinned on the first
/// attempt). With `--max-skew 0s` the printed time is taken as it is.
fn latest_instant(t: Timestamp, skew: Duration) -> Timestamp {
    const SEC: i64 = crate::time::NANOS_PER_SEC;
    if t.0.rem_euclid(SEC) == 0 {
        Timestamp(t.0.saturating_add(skew.0.clamp(0, SEC - 1)))
    } else {
        t
    }
}

fn latest_at_or_before(
    list: &[(Timestamp, AttemptId)],
    limit: Timestamp,
    fits: impl Fn(&&(Timestamp, AttemptId)) -> bool,
) -> Option<AttemptId> {
    let end = list.partition_point(|(at, _)| *at <= limit);
    list[..end].iter().rev().find(fits).map(|&(_, id)| id)
}

/// Effect kinds recognised in tool names and URL paths, singular.
const KNOWN_KINDS: &[&str] = &[
    "refund", "charge", "payout", "payment", "transfer", "capture", "credit",
];

/// Which kind of effect a call produces: `--tool-kind` first, then a known kind named in
/// the tool (`issue_refund`) or the URL path (`/v1/refunds`).
pub fn effect_kind_of(
    tool: &str,
    url: Option<&str>,
    tool_kinds: &[(String, String)],
) -> Option<String> {
    if let Some((_, kind)) = tool_kinds.iter().find(|(t, _)| t == tool) {
        return Some(kind.clone());
    }
    let path = url.map(|u| {
        let no_scheme = u.split_once("://").map_or(u, |(_, rest)| rest);
        let path = no_scheme.find('/').map_or("", |i| &no_scheme[i..]);
        path.split(['?', '#']).next().unwrap_or("")
    });
    let named = kinds_named_in(tool) | path.map_or(0, kinds_named_in);
    KNOWN_KINDS
        .iter()
        .enumerate()
        .find(|(i, _)| named & (1 << i) != 0)
        .map(|(_, k)| k.to_string())
}

/// Which of [`KNOWN_KINDS`] `text` names, any case, as a bit per kind. Without allocating:
/// this runs for every tool call and request read.
fn kinds_named_in(text: &str) -> u32 {
    let b = text.as_bytes();
    let mut named = 0;
    for i in 0..b.len() {
        if !matches!(b[i].to_ascii_lowercase(), b'r' | b'c' | b'p' | b't') {
            continue;
        }
        for (k, kind) in KNOWN_KINDS.iter().enumerate() {
            if b[i..].len() >= kind.len()
                && b[i..i + kind.len()].eq_ignore_ascii_case(kind.as_bytes())
            {
                named |= 1 << k;
            }
        }
    }
    named
}

/// The order and amount a call's arguments name, for matching by order and time.
pub fn order_and_amount(args: &Value) -> (Option<String>, Option<Money>) {
    let Value::Object(map) = args else {
        return (None, None);
    };
    let order = ["order", "order_id", "orderId", "order_ref"]
        .iter()
        .find_map(|k| match map.get(*k) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        });
    let currency = map
        .get("currency")
        .and_then(Value::as_str)
        .and_then(Currency::parse);
    let int_of = |k: &str| map.get(k).and_then(integral_amount);
    let amount = if let Some(p) = int_of("amount_p") {
        Some(Money::new(p, Currency::GBP))
    } else {
        int_of("amount_minor").map(|m| Money::new(m, currency.unwrap_or(Currency::GBP)))
    };
    (order, amount)
}

/// An integer amount, accepting `4500.0` and `"4500"` (which other rules flag).
fn integral_amount(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9e15)
                .map(|f| f as i64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn parts_merge_as_a_stable_sort_of_them_all_would_order_them() {
        use crate::event::{Lifecycle, RunEvent};
        // Times with ties inside and across parts; the run id records where each came from.
        let ev = |part: usize, i: usize, at: i64, line: u32| Event {
            at: Timestamp(at),
            loc: Loc { input: 0, line },
            kind: EventKind::Run(RunEvent {
                run: format!("{part}.{i}"),
                what: Lifecycle::Started,
            }),
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
        let mut merged = Vec::new();
        merge_in_order(parts, |e| merged.push(e));
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
    }
}
