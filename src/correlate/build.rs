//! The model built event by event: dispatches and logical calls from client events, effects
//! merged by (kind, id) from the service's. Matching comes after, in [`super::matching`].

use super::call_args::CallArgs;
use super::copies::attach_delivery_copies;
use super::generations::number_generations;
use super::kinds::effect_kind_of;
use super::matching::{join_renumbered, match_effects};
use super::ready::{Ready, fresh};
use super::replays::{ReplayIndex, mark_replayed_answers};
use super::restated::absorb;
use super::whole_amounts::learn_whole_amounts;
use super::*;
use crate::event::{CallRef, Event, EventKind, Lifecycle, Loc, Text};
use crate::time::{NANOS_PER_SEC, Timestamp};
use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};
use serde_json::Value;
use std::hash::BuildHasher;

pub(super) struct Builder<'o> {
    opts: &'o CorrelateOptions,
    pub(super) model: Model,
    // Indexes into the model that hash and compare what the model holds, rather than
    // keeping copies of its strings as keys.
    // Indexes hold u32 positions: each has a slot per dispatch or effect of the month, and
    // they live beside the whole model at the end of its build.
    /// The latest dispatch of each (run, step).
    latest: HashTable<u32>,
    /// In front of `latest`, the dispatches most recently made or asked for
    /// ([`RecentDispatches`]).
    recent: RecentDispatches,
    /// Each dispatch's place among its step's ([`StepLink`]), by dispatch.
    steps: Vec<StepLink>,
    /// (run, step, tool, canonical) → logical call, for the steps dispatched more than
    /// [`WALKED`] times only: most steps are dispatched once, and a table of every logical
    /// call of a month cost a cache miss for each.
    call_index: HashTable<u32>,
    /// (kind, id) → effect.
    effect_index: HashTable<u32>,
    resumes: FxHashMap<Text, u32>,
}

impl<'o> Builder<'o> {
    pub(super) fn new(opts: &'o CorrelateOptions) -> Self {
        Builder {
            opts,
            model: Model {
                max_skew: opts.max_skew,
                logs: opts.logs.clone(),
                ..Model::default()
            },
            latest: HashTable::new(),
            recent: RecentDispatches::default(),
            steps: Vec::new(),
            call_index: HashTable::new(),
            effect_index: HashTable::new(),
            resumes: FxHashMap::default(),
        }
    }

    /// Room for every dispatch and effect the events can make, taken once: growing the
    /// model's vectors and maps by doubling copied and faulted in most of its memory again.
    pub(super) fn reserve(&mut self, parts: &[Vec<Event>]) {
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
        let dispatch_hash = |&d: &u32| hash_call(&self.model.dispatches[d as usize].call);
        self.latest.reserve(dispatches, dispatch_hash);
        self.steps.reserve(dispatches);
        self.model.effects.reserve(effects);
        let all = &self.model.effects;
        self.effect_index.reserve(effects, |&i| {
            let e = &all[i as usize];
            hash_effect(&e.kind, &e.id)
        });
    }

    /// Adds an event, its texts and arguments made [`Ready`] beforehand.
    pub(super) fn add(&mut self, ready: Ready) {
        let Ready { event: ev, call } = ready;
        self.model.latest_event = self.model.latest_event.max(Some(ev.at));
        if ev.kind.is_client_side() {
            let span = self.model.client_span.get_or_insert((ev.at, ev.at));
            span.0 = span.0.min(ev.at);
            span.1 = span.1.max(ev.at);
        }
        let (at, loc) = (ev.at, ev.loc);
        match ev.kind {
            EventKind::ToolCall(t) => {
                let ready = call.expect("a tool call's arguments are read when it is made ready");
                let at_loc = Some((at, loc));
                let d = self.new_dispatch(t.call, t.tool, t.args_raw, ready.args, at_loc);
                self.set_kind(d, ready.kind);
            }
            EventKind::Attempt(a) => {
                let call = a.call.unwrap_or_else(|| orphan_call(loc));
                let d = self.dispatch_for(&call, at);
                // A new attempt 1 on a dispatch that already has attempts is a re-dispatch
                // whose tool-call line was not logged.
                let d = if a.number == 1 && !self.model.dispatches[d].attempts.is_empty() {
                    let prev = &self.model.dispatches[d];
                    let logical = &self.model.calls[prev.logical()];
                    let tool = logical.tool.clone();
                    let raw = prev.args_raw.clone();
                    // The same arguments: what was read of them is copied, not read again.
                    let args = CallArgs {
                        canonical: logical.canonical.clone(),
                        order: prev.order.clone(),
                        amount: prev.amount,
                        null: prev.args_null,
                        given: prev.given_args.clone(),
                    };
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
                    unlogged: false,
                    generation: 0,
                    key_unseen: a.key_unseen,
                });
            }
            EventKind::Failure(f) => {
                let outcome = Outcome {
                    at,
                    loc,
                    kind: OutcomeKind::Failure {
                        class: f.class,
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
                    kind: OutcomeKind::Response {
                        class: r.class,
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
            EventKind::Effect(e) => self.add_effect(*e, at, loc),
            EventKind::Record(r) => self.model.records.push(RecordRec {
                key: r.key,
                request_hash: r.request_hash,
                status: r.status,
                response: r.response,
                created: at,
                loc,
            }),
            EventKind::Replay(r) => self.model.replays.push(ReplayRec {
                kind: r.kind,
                effect_id: r.effect_id,
                key: r.key,
                at,
                loc,
            }),
        }
    }

    fn new_dispatch(
        &mut self,
        call: CallRef,
        tool: Text,
        args_raw: Text,
        args: CallArgs,
        event: Option<(Timestamp, Loc)>,
    ) -> usize {
        let call = CallRef {
            run: fresh(call.run),
            step: call.step,
        };
        let canonical = args.canonical;
        let segment = self.resumes.get(&call.run).copied().unwrap_or(0);
        let d = self.model.dispatches.len();
        let dispatches = &self.model.dispatches;
        let call_hash = hash_call(&call);
        self.recent.remember(call_hash, d);
        let earlier = match self.latest.entry(
            call_hash,
            |&e| dispatches[e as usize].call == call,
            |&e| hash_call(&dispatches[e as usize].call),
        ) {
            Entry::Occupied(mut o) => Some(std::mem::replace(o.get_mut(), d as u32)),
            Entry::Vacant(v) => {
                v.insert(d as u32);
                None
            }
        };
        let depth = earlier.map_or(1, |e| self.steps[e as usize].depth + 1);
        self.steps.push(StepLink {
            earlier: earlier.unwrap_or(NO_DISPATCH),
            depth,
        });
        // Hashed only for a step dispatched more often than is walked: most never are.
        let hash = || FxBuildHasher.hash_one((call.run.as_str(), call.step, &*tool, &*canonical));
        let found = match earlier {
            None => None,
            Some(e) if depth <= WALKED => self.walk_step(e, &tool, &canonical),
            Some(e) => {
                if depth == WALKED + 1 {
                    self.index_step(e);
                }
                let calls = &self.model.calls;
                let same = |&i: &u32| {
                    let c = &calls[i as usize];
                    c.step == call.step
                        && c.run == call.run
                        && c.tool == tool
                        && c.canonical == canonical
                };
                self.call_index.find(hash(), same).map(|&i| i as usize)
            }
        };
        let logical = found.unwrap_or(self.model.calls.len());
        if found.is_none() {
            if depth > WALKED {
                let calls = &self.model.calls;
                self.call_index.insert_unique(hash(), logical as u32, |&i| {
                    hash_logical(&calls[i as usize])
                });
            }
            // Moved, not cloned: a clone of a text on the heap is an atomic add on a count
            // the preparing thread has just written, a cache miss on the builder's thread.
            self.model.calls.push(LogicalCall {
                run: call.run.clone(),
                step: call.step,
                tool,
                canonical,
                dispatches: Vec::with_capacity(1),
                group: logical as u32,
                renumbered_from: None,
            });
        }
        self.model.calls[logical].dispatches.push(d);
        self.model.dispatches.push(Dispatch {
            call,
            args_raw,
            args_null: args.null,
            given_args: args.given,
            at: event.map(|e| e.0),
            loc: event.map(|e| e.1),
            segment,
            // Most dispatches have one attempt; a first push would make room for four
            // (700 bytes), a fifth of the model's memory on a month of refunds.
            attempts: Vec::with_capacity(1),
            end: None,
            effect_kind: None,
            order: args.order,
            amount: args.amount,
            logical: logical as u32,
        });
        d
    }

    /// The logical call of `tool` with `canonical` arguments among the dispatches of one
    /// step, from its dispatch `last` back.
    fn walk_step(&self, last: u32, tool: &str, canonical: &str) -> Option<usize> {
        let mut at = last;
        while at != NO_DISPATCH {
            let logical = self.model.dispatches[at as usize].logical();
            let c = &self.model.calls[logical];
            if c.tool == tool && c.canonical == canonical {
                return Some(logical);
            }
            at = self.steps[at as usize].earlier;
        }
        None
    }

    /// Puts the logical calls of the step whose latest dispatch is `last` in `call_index`,
    /// once each: the step has now been dispatched more times than are walked.
    fn index_step(&mut self, last: u32) {
        let mut at = last;
        while at != NO_DISPATCH {
            let logical = self.model.dispatches[at as usize].logical();
            let calls = &self.model.calls;
            let hash = hash_logical(&calls[logical]);
            if self
                .call_index
                .find(hash, |&i| i as usize == logical)
                .is_none()
            {
                self.call_index
                    .insert_unique(hash, logical as u32, |&i| hash_logical(&calls[i as usize]));
            }
            at = self.steps[at as usize].earlier;
        }
    }

    /// The latest dispatch of `call`, or an implied one when the input gave no tool call.
    fn dispatch_for(&mut self, call: &CallRef, _at: Timestamp) -> usize {
        let dispatches = &self.model.dispatches;
        let hash = hash_call(call);
        let is_call = |d: usize| dispatches[d].call == *call;
        if let Some(d) = self.recent.get(hash).filter(|&d| is_call(d)) {
            return d;
        }
        match self.latest.find(hash, |&d| is_call(d as usize)) {
            Some(&d) => {
                self.recent.remember(hash, d as usize);
                d as usize
            }
            None => self.new_dispatch(
                call.clone(),
                Text::default(),
                Text::default(),
                CallArgs::of_value(Value::Null, false),
                None,
            ),
        }
    }

    fn refresh_kind(&mut self, d: usize, url: Option<&str>) {
        let disp = &self.model.dispatches[d];
        if disp.effect_kind.is_some() {
            return;
        }
        let tool = &self.model.calls[disp.logical()].tool;
        let kind = effect_kind_of(tool, url, &self.opts.tool_kinds);
        self.set_kind(d, kind);
    }

    /// A new dispatch's kind, known from its tool alone.
    fn set_kind(&mut self, d: usize, kind: Option<Text>) {
        if let Some(k) = &kind
            && !self.model.client_kinds.contains(k)
        {
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
        let dispatch_at = self.model.dispatches[d].at;
        let attempts = &mut self.model.dispatches[d].attempts;
        let slot = match attempt {
            Some(n) => attempts.iter().rposition(|a| a.number == n),
            None => attempts.iter().rposition(|a| a.outcome.is_none()),
        }
        .or(attempts.len().checked_sub(1));
        let last = attempts.len().checked_sub(1);
        match slot {
            Some(i) if attempts[i].outcome.is_none() => attempts[i].outcome = Some(outcome),
            // The answer of the latest attempt, which the line named (or named none: a
            // tool's own error saying the 422 its request got), told again.
            Some(i)
                if Some(i) == last
                    && (attempt.is_some() || restates_an_answer(&attempts[i], &outcome))
                    && attempts[i]
                        .outcome
                        .as_mut()
                        .is_some_and(|kept| absorb(kept, &outcome)) => {}
            _ => {
                // An outcome with no attempt logged: imply the attempt, so the outcome is
                // still evidence. It was sent at the earliest after the dispatch's latest
                // line before it (its tool call, the previous attempt's outcome): placed
                // there, as a request a client logs with its answer is, the effect it made
                // before its failure was logged (a timeout's, ten seconds on) is still its.
                let number = attempt.unwrap_or(attempts.len() as u32 + 1);
                let previous = attempts
                    .last()
                    .map(|a| a.outcome.as_ref().map_or(a.at, |o| o.at));
                let earliest = previous.or(dispatch_at).filter(|&t| t <= outcome.at);
                attempts.push(AttemptRec {
                    number,
                    at: earliest.unwrap_or(outcome.at),
                    loc: outcome.loc,
                    method: None,
                    url: None,
                    key: None,
                    outcome: Some(outcome),
                    unlogged: false,
                    generation: 0,
                    key_unseen: true,
                });
            }
        }
    }

    fn add_effect(&mut self, e: crate::event::Effect, at: Timestamp, loc: Loc) {
        /// Whether a later line's state replaces the one kept: the later reached, by the
        /// times written with them, or the line read later; but a state saying the effect
        /// did not happen always replaces one on the way (`pending`, `created`), and is
        /// never replaced by one (an export's `failed` row against a log's `created` line,
        /// whichever is read first).
        fn state_overrides(
            kept: &crate::correlate::EffectRec,
            state: &str,
            happened: bool,
            state_at: Option<Timestamp>,
        ) -> bool {
            let on_the_way = crate::event::is_state_on_the_way;
            let kept_on_the_way = kept.state.as_deref().is_none_or(on_the_way);
            if !happened && kept.happened && kept_on_the_way {
                return true;
            }
            if !kept.happened && happened && on_the_way(state) {
                return false;
            }
            kept.state_at.is_none() || state_at > kept.state_at
        }

        let written = WrittenAmount::of(e.amount.map(Money::size), e.whole.map(Money::size));
        let hash = hash_effect(&e.kind, &e.id);
        let effects = &self.model.effects;
        let found = self.effect_index.find(hash, |&i| {
            let known = &effects[i as usize];
            known.id == e.id && known.kind == e.kind
        });
        if let Some(&i) = found {
            let i = i as usize;
            // The same effect logged again (a replica, an export): merge, never duplicate.
            let rec = &mut self.model.effects[i];
            rec.created = merged_created(rec.created, at);
            rec.order = rec.order.take().or(e.order.map(fresh));
            // A known amount wins over a whole number of unknown unit, whichever came first.
            if rec.amount().is_none()
                && written.is_some_and(|w| w.unit_known() || rec.written.is_none())
            {
                rec.written = written;
            }
            rec.key = rec.key.take().or(e.key.map(fresh));
            let overrides = (e.state.as_deref())
                .is_some_and(|state| state_overrides(rec, state, e.happened, e.state_at));
            if overrides {
                rec.state = e.state.map(fresh);
                rec.state_at = e.state_at;
                rec.happened = e.happened;
            }
            let mut locs = std::mem::take(&mut rec.locs).into_vec();
            locs.push(loc);
            rec.locs = locs.into_boxed_slice();
            return;
        }
        self.effect_index
            .insert_unique(hash, effects.len() as u32, |&i| {
                let e = &effects[i as usize];
                hash_effect(&e.kind, &e.id)
            });
        self.model.effects.push(EffectRec {
            kind: fresh(e.kind),
            id: fresh(e.id),
            order: e.order.map(fresh),
            written,
            key: e.key.map(fresh),
            created: at,
            state: e.state.map(fresh),
            state_at: e.state_at,
            happened: e.happened,
            locs: Box::new([loc]),
            matched: None,
            matched_by: None,
        });
    }

    pub(super) fn finish(mut self) -> Model {
        use rayon::prelude::*;
        let dispatches = &self.model.dispatches;
        (self.model.calls.par_iter_mut())
            .for_each(|call| call.dispatches.sort_by_key(|&d| dispatches[d].first_at()));
        (self.model.effects.par_iter_mut()).for_each(|e| e.locs.sort());
        imply_unlogged_requests(&mut self.model);
        number_generations(&mut self.model);
        let replays = ReplayIndex::new(&self.model);
        match_effects(&mut self.model, &replays);
        mark_replayed_answers(&mut self.model, &replays);
        learn_whole_amounts(&mut self.model);
        attach_delivery_copies(&mut self.model);
        join_renumbered(&mut self.model);
        self.model
    }
}

/// Gives each tool call that names an effect kind and logged no attempt the request it must
/// have sent to have an effect (see [`AttemptRec::unlogged`]), unless its run logged the
/// requests of such calls elsewhere: then it is taken at its word, and a dispatch without
/// one sent nothing (it failed before sending). Without it, the effects of a trace that logs
/// tool calls only matched nothing, and a refund paid twice for one call read as two
/// decisions by untraced callers. Only calls naming an effect kind are asked, since only
/// they are always kept whole: a run's lookups, dropped as idle while reading a month, must
/// not decide (`--keep-idle-calls` gives the same report).
fn imply_unlogged_requests(model: &mut Model) {
    // A dispatch without attempts was made by its tool-call line, so it has a time and place.
    let wants = |d: &Dispatch| d.attempts.is_empty() && d.effect_kind.is_some();
    let candidates: FxHashSet<Text> = model
        .dispatches
        .iter()
        .filter(|d| wants(d))
        .map(|d| d.call.run.clone())
        .collect();
    if candidates.is_empty() {
        return;
    }
    let logging: FxHashSet<Text> = model
        .dispatches
        .iter()
        .filter(|d| {
            // A request logged as one: an attempt implied by a failure or an answer read
            // with none before it (a Celery task's `retry:`) is no request logged.
            let logged = |a: &AttemptRec| a.method.is_some() || a.url.is_some();
            d.effect_kind.is_some()
                && !d.attempts.is_empty()
                && candidates.contains(&d.call.run)
                && d.attempts.iter().any(logged)
        })
        .map(|d| d.call.run.clone())
        .collect();
    for d in &mut model.dispatches {
        if !wants(d) || logging.contains(&d.call.run) {
            continue;
        }
        if let (Some(at), Some(loc)) = (d.at, d.loc) {
            d.attempts.push(AttemptRec {
                number: 1,
                at,
                loc,
                method: None,
                url: None,
                key: None,
                outcome: None,
                unlogged: true,
                generation: 0,
                key_unseen: true,
            });
        }
    }
}

/// A dispatch's place among its step's: the one before it, and how many there are up to
/// it.
struct StepLink {
    earlier: u32,
    depth: u32,
}

/// [`StepLink::earlier`] of a step's first dispatch.
const NO_DISPATCH: u32 = u32::MAX;

/// A step dispatched at most this many times finds the logical call of a new dispatch by
/// walking its earlier ones; one dispatched more uses `call_index`, so that a step
/// dispatched a hundred thousand times (a runaway loop) is not walked every time.
const WALKED: u32 = 16;

/// The latest dispatch of a few calls, by their hash: an attempt, its answer and its
/// step's end follow their tool call within a few lines, and each found it in `latest`,
/// a table with a slot for every dispatch of the month, at the cost of a cache miss. A slot
/// holds the latest dispatch of the last call hashed to it: a new dispatch of a call takes
/// its call's slot, so what a slot holds for a call is never stale.
struct RecentDispatches([(u64, u32); RecentDispatches::SLOTS]);

impl RecentDispatches {
    const SLOTS: usize = 64;

    fn slot(hash: u64) -> usize {
        (hash >> 58) as usize % Self::SLOTS
    }

    /// The dispatch remembered for `hash`: the latest of the call if it is that call's.
    fn get(&self, hash: u64) -> Option<usize> {
        let (h, d) = self.0[Self::slot(hash)];
        (h == hash && d != NO_DISPATCH).then_some(d as usize)
    }

    fn remember(&mut self, hash: u64, d: usize) {
        self.0[Self::slot(hash)] = (hash, d as u32);
    }
}

impl Default for RecentDispatches {
    fn default() -> Self {
        RecentDispatches([(0, NO_DISPATCH); Self::SLOTS])
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

/// An unnumbered failure after an answer: the program's own error saying the answer (a
/// tool raising on the 422 its request got). An unnumbered failure after a failure is a
/// retry's, never the same told again.
fn restates_an_answer(kept: &AttemptRec, outcome: &Outcome) -> bool {
    matches!(
        (kept.outcome.as_ref().map(|o| &o.kind), &outcome.kind),
        (
            Some(OutcomeKind::Response { .. }),
            OutcomeKind::Failure { .. }
        )
    )
}

fn orphan_call(loc: Loc) -> CallRef {
    CallRef {
        run: Text::from(format!("?{}", loc.input)),
        step: 0,
    }
}

/// When an effect was created, from two lines that log it: the earlier, except that a whole
/// second (an export's `14:02:11`) gives way to a finer time within it (the log's
/// `14:02:11.501`): it stands for any instant of that second, and taken as its start it put
/// the refund before the call that made it.
fn merged_created(a: Timestamp, b: Timestamp) -> Timestamp {
    let within = |whole: Timestamp, fine: Timestamp| {
        whole.0.rem_euclid(NANOS_PER_SEC) == 0
            && fine.0 >= whole.0
            && fine.0.saturating_sub(whole.0) < NANOS_PER_SEC
    };
    if within(a, b) {
        b
    } else if within(b, a) {
        a
    } else {
        a.min(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_second_gives_way_to_a_finer_time_within_it() {
        let ms = Timestamp::from_millis;
        assert_eq!(merged_created(ms(11_000), ms(11_501)), ms(11_501));
        assert_eq!(merged_created(ms(11_501), ms(11_000)), ms(11_501));
        // Not within the second: the earlier stands.
        assert_eq!(merged_created(ms(11_000), ms(12_000)), ms(11_000));
        assert_eq!(merged_created(ms(10_999), ms(11_000)), ms(10_999));
        assert_eq!(merged_created(ms(11_200), ms(11_501)), ms(11_200));
    }

    /// A step dispatched far more often than its dispatches are walked, with three sets of
    /// arguments in turn: each set is one logical call, before the step is indexed, as it
    /// is, and after.
    #[test]
    fn a_step_dispatched_many_times_has_a_logical_call_per_set_of_arguments() {
        let times = 3 * WALKED as usize + 5;
        let mut trace = String::new();
        for i in 0..times {
            let s = i % 60;
            trace.push_str(&format!(
                "2026-11-01T00:{:02}:{s:02}.000Z  agent run r1  step 4  tool=issue_refund  \
                 args={{\"order\":\"A-{}\",\"amount_p\":100}}\n",
                i / 60,
                i % 3
            ));
        }
        let opts = crate::ingest::ParseOptions::default();
        let events = crate::ingest::text::parse(&mut trace.as_bytes(), 0, &opts).unwrap();
        let model = crate::correlate::correlate(events.events, &CorrelateOptions::default());
        assert_eq!(model.dispatches.len(), times);
        assert_eq!(model.calls.len(), 3, "{:?}", model.calls);
        for (i, d) in model.dispatches.iter().enumerate() {
            let call = &model.calls[d.logical()];
            assert_eq!(
                call.canonical,
                format!(r#"{{"amount_p":100,"order":"A-{}"}}"#, i % 3)
            );
        }
        let counts: Vec<usize> = model.calls.iter().map(|c| c.dispatches.len()).collect();
        assert_eq!(counts, [times.div_ceil(3), (times + 1) / 3, times / 3]);
    }

    #[test]
    fn a_dispatch_without_its_tool_call_line_keeps_the_earlier_ones_arguments() {
        let trace = "\
2026-11-01T00:00:01.000Z  agent run r1  step 1  tool=issue_refund  args={\"order\":\"A-1\",\"amount_p\":100}
2026-11-01T00:00:02.000Z  POST https://pay/v1/refunds  (attempt 1)
2026-11-01T00:00:03.000Z  503 Service Unavailable
2026-11-01T00:00:09.000Z  POST https://pay/v1/refunds  (attempt 1)
";
        let opts = crate::ingest::ParseOptions::default();
        let events = crate::ingest::text::parse(&mut trace.as_bytes(), 0, &opts).unwrap();
        let model = crate::correlate::correlate(events.events, &CorrelateOptions::default());
        let [first, again] = &model.dispatches[..] else {
            panic!("{:?}", model.dispatches);
        };
        assert_eq!(first.logical(), again.logical(), "one logical call");
        assert!(again.at.is_none(), "implied by its attempt");
        assert_eq!(again.args_raw, first.args_raw);
        assert_eq!(
            (again.order.as_deref(), again.amount),
            (Some("A-1"), first.amount)
        );
        assert_eq!(again.amount.map(|m| m.minor), Some(100));
        assert_eq!(
            model.calls[again.logical()].canonical,
            r#"{"amount_p":100,"order":"A-1"}"#
        );
    }

    /// A slot answers only for the hash it holds, and a newer dispatch or another call
    /// landing in it replaces what it held.
    #[test]
    fn recent_dispatches_answer_for_the_last_hash_of_each_slot() {
        let mut recent = RecentDispatches::default();
        let (a, b) = (3u64 << 58 | 1, 3u64 << 58 | 2); // one slot, two hashes
        let c = 4u64 << 58;
        assert_eq!(recent.get(a), None, "empty");
        assert_eq!(
            recent.get(0),
            None,
            "an empty slot holds hash 0 but no dispatch"
        );
        recent.remember(a, 5);
        recent.remember(c, 6);
        assert_eq!(
            (recent.get(a), recent.get(b), recent.get(c)),
            (Some(5), None, Some(6))
        );
        recent.remember(a, 7);
        assert_eq!(recent.get(a), Some(7), "the newer dispatch of the call");
        recent.remember(b, 8);
        assert_eq!(
            (recent.get(a), recent.get(b), recent.get(c)),
            (None, Some(8), Some(6))
        );
    }
}
