//! The model built event by event: dispatches and logical calls from client events, effects
//! merged by (kind, id) from the service's. Matching comes after, in [`super::matching`].

use super::call_args::CallArgs;
use super::ready::Ready;
use super::*;
use crate::event::{Event, EventKind, Lifecycle};
use crate::flat_table::FlatTable;
pub(super) use dispatches::hash_call;
use dispatches::{RecentDispatches, StepLink, orphan_call};
pub(super) use effects::hash_effect;
use hashbrown::HashTable;
use parallel::Dealt;
use rustc_hash::FxHashMap;

mod dispatches;
mod effects;
mod finish;
mod outcomes;
mod parallel;
mod resends;
mod step_retries;

pub(super) struct Builder<'o> {
    opts: &'o CorrelateOptions,
    pub(super) model: Model,
    // Indexes into the model that hash and compare what the model holds, rather than
    // keeping copies of its strings as keys.
    // Indexes hold u32 positions: each has a slot per dispatch or effect of the month, and
    // they live beside the whole model at the end of its build.
    /// The latest dispatch of each (run, step).
    latest: FlatTable<u32>,
    /// In front of `latest`, the dispatches most recently made or asked for
    /// ([`RecentDispatches`]).
    recent: RecentDispatches,
    /// Each dispatch's place among its step's ([`StepLink`]), by dispatch.
    steps: Vec<StepLink>,
    /// (run, step, tool, canonical) → logical call, for the steps dispatched more than
    /// [`WALKED`](dispatches::WALKED) times only: most steps are dispatched once, and a table of every logical
    /// call of a month cost a cache miss for each.
    call_index: HashTable<u32>,
    /// (kind, id) → effect.
    effect_index: FlatTable<u32>,
    resumes: FxHashMap<Text, u32>,
    /// The dispatches that made a new logical call in a step dispatched before
    /// ([`step_retries`]).
    redispatched: Vec<u32>,
    /// The dispatches that lines of parallel calls were dealt to ([`parallel`]).
    dealt_in_parallel: Vec<u32>,
    /// Failures whose request a retry library sends again ([`resends`]).
    resends: Vec<resends::Resend>,
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
            latest: FlatTable::with_capacity(0),
            recent: RecentDispatches::default(),
            steps: Vec::new(),
            call_index: HashTable::new(),
            effect_index: FlatTable::with_capacity(0),
            resumes: FxHashMap::default(),
            redispatched: Vec::new(),
            dealt_in_parallel: Vec::new(),
            resends: Vec::new(),
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
        let dispatch_hash = |d: u32| hash_call(&self.model.dispatches[d as usize].call);
        self.latest.reserve(dispatches, dispatch_hash);
        self.steps.reserve(dispatches);
        self.model.effects.reserve(effects);
        let all = &self.model.effects;
        self.effect_index.reserve(effects, |i| {
            let e = &all[i as usize];
            hash_effect(&e.kind, &e.id)
        });
    }

    /// Asks memory for the slot that adding `ready` reads first ([`Ready::slot_hash`]): a
    /// new dispatch's or effect's probe was a cache miss in a table of the month's.
    pub(super) fn prefetch_slot(&self, ready: &Ready) {
        match (&ready.event.kind, ready.slot_hash) {
            (EventKind::Effect(_), Some(hash)) => self.effect_index.prefetch(hash),
            (_, Some(hash)) => self.latest.prefetch(hash),
            (_, None) => {}
        }
    }

    /// Adds an event, its texts and arguments made [`Ready`] beforehand.
    pub(super) fn add(&mut self, ready: Ready) {
        let Ready {
            event: ev, call, ..
        } = ready;
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
                let d = self.new_dispatch(t.call, t.tool, t.args_raw, ready.args, at_loc, at);
                self.set_kind(d, ready.kind);
            }
            EventKind::Attempt(a) => {
                let call = a.call.unwrap_or_else(|| orphan_call(loc));
                let d = self.dispatch_for(&call, at);
                // The step's parallel call the line names, or else the first to send
                // ([`parallel`]), unless the input said which of the step's calls sent it.
                let dealt = match call.part {
                    0 => self.deal_request(d, a.number, a.key.as_deref(), a.url.as_deref()),
                    _ => Dealt::default(),
                };
                // A first attempt on a dispatch that already has attempts is a re-dispatch
                // whose tool-call line was not logged.
                let d = if let Some(sibling) = dealt.to {
                    sibling
                } else if a.number == 1 && !self.model.dispatches[d].attempts.is_empty() {
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
                    self.new_dispatch(call, tool, raw, args, None, at)
                } else {
                    d
                };
                self.refresh_kind(d, a.url.as_deref());
                // Placed at the step's latest line, which among parallel calls may be
                // another call's: after its own call's latest line, the earliest it can have
                // been sent, so an effect it made before that other line is still its.
                let at = match dealt.parallel && a.placed {
                    true => (self.model.dispatches[d].latest_line_at())
                        .filter(|&t| t < at)
                        .unwrap_or(at),
                    false => at,
                };
                let attempts = &mut self.model.dispatches[d].attempts;
                attempts.push(AttemptRec {
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
                let index = attempts.len() - 1;
                self.note_dealt(&dealt, DealtLine::Request, loc, (d, index));
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
                let resent = f.resent_after.map(|after| (at, after));
                self.attach_outcome(
                    f.call,
                    f.attempt,
                    outcome,
                    loc,
                    f.raised_in.as_deref(),
                    resent,
                );
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
                self.attach_outcome(r.call, r.attempt, outcome, loc, None, None);
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
            EventKind::GatewayTry(g) => {
                self.model
                    .gateway_tries
                    .push(GatewayTryRec { at, loc, shows: *g })
            }
        }
    }
}

#[cfg(test)]
mod tests;
