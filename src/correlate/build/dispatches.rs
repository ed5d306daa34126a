//! Each client event's dispatch, found or made, with its logical call and effect kind
//! (outcomes are attached in [`super::outcomes`]).

use super::Builder;
use crate::correlate::call_args::CallArgs;
use crate::correlate::kinds::effect_kind_of;
use crate::correlate::ready::fresh;
use crate::correlate::{Dispatch, LogicalCall};
use crate::event::{CallRef, Loc, Text};
use crate::money::WholeUnit;
use crate::time::Timestamp;
use rustc_hash::FxBuildHasher;
use serde_json::Value;
use std::hash::BuildHasher;

impl<'o> Builder<'o> {
    pub(super) fn new_dispatch(
        &mut self,
        call: CallRef,
        tool: Text,
        args_raw: Text,
        args: CallArgs,
        event: Option<(Timestamp, Loc)>,
        made_at: Timestamp,
    ) -> usize {
        let call = CallRef {
            run: fresh(call.run),
            step: call.step,
            part: call.part,
        };
        let canonical = args.canonical;
        let segment = self.resumes.get(&call.run).copied().unwrap_or(0);
        let d = self.model.dispatches.len();
        let dispatches = &self.model.dispatches;
        let call_hash = hash_call(&call);
        self.recent.remember(call_hash, d);
        let same = |e: u32| dispatches[e as usize].call == call;
        let rehash = |e: u32| hash_call(&dispatches[e as usize].call);
        let earlier = (self
            .latest
            .find_or_insert(call_hash, d as u32, same, rehash))
        .map(|held| std::mem::replace(held, d as u32));
        let earlier = earlier.filter(|&e| !self.step_is_over(e as usize, made_at, segment));
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
            if earlier.is_some() {
                self.redispatched.push(d as u32);
            }
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

    /// The step whose latest dispatch is `e` is over for a dispatch made at `at`: its last
    /// event is more than [`STEP_RETRIED_WITHIN`] before (both dated), and no resume came
    /// between. A
    /// framework retries a failed step within seconds or minutes; the same run and step
    /// days later is a new conversation under a reused thread id (LangGraph's tutorials
    /// use `"1"`), its calls new logical calls. An explicit resume may come days later (a
    /// run waiting on a person's approval) and still re-run the step. The step's calls
    /// indexed for a long step are taken out of `call_index`, so that none is found again.
    fn step_is_over(&mut self, e: usize, at: Timestamp, segment: u32) -> bool {
        let (last, last_at) = (
            &self.model.dispatches[e],
            self.model.dispatches[e].last_at(),
        );
        // A time-only file's days count from its first line, not from a date: no gap
        // between it and another input can be told.
        let dateless = at.is_dateless() || last_at.is_dateless();
        if dateless || last.segment != segment || at <= last_at.plus(STEP_RETRIED_WITHIN) {
            return false;
        }
        if self.steps[e].depth > WALKED {
            self.unindex_step(e as u32);
        }
        true
    }

    /// Takes the logical calls of the step whose latest dispatch is `last` out of
    /// `call_index`.
    fn unindex_step(&mut self, last: u32) {
        let mut at = last;
        while at != NO_DISPATCH {
            let logical = self.model.dispatches[at as usize].logical();
            let hash = hash_logical(&self.model.calls[logical]);
            if let Ok(entry) = self.call_index.find_entry(hash, |&i| i as usize == logical) {
                entry.remove();
            }
            at = self.steps[at as usize].earlier;
        }
    }

    /// The dispatches of `run`'s step `step`, earliest first (none if it was never
    /// dispatched).
    pub(super) fn dispatches_of(&self, run: &Text, step: u32) -> Option<Vec<usize>> {
        let call = CallRef {
            run: run.clone(),
            step,
            part: 0,
        };
        let dispatches = &self.model.dispatches;
        let latest =
            (self.latest).find(hash_call(&call), |d| dispatches[d as usize].call == call)?;
        let mut all: Vec<usize> =
            std::iter::successors(Some(latest as usize), |&d| self.earlier_of(d)).collect();
        all.reverse();
        Some(all)
    }

    /// The dispatch of the same step before `d`, if any.
    pub(super) fn earlier_of(&self, d: usize) -> Option<usize> {
        let earlier = self.steps[d].earlier;
        (earlier != NO_DISPATCH).then_some(earlier as usize)
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
    /// Where the input named which of the step's calls (its [`CallRef::part`]), the latest
    /// dispatch of the step with that part.
    pub(super) fn dispatch_for(&mut self, call: &CallRef, at: Timestamp) -> usize {
        let dispatches = &self.model.dispatches;
        let hash = hash_call(call);
        // Equal calls are of one step, whatever their parts.
        let is_step = |d: usize| dispatches[d].call == *call;
        let latest = match self.recent.get(hash).filter(|&d| is_step(d)) {
            Some(d) => Some(d),
            None => (self.latest.find(hash, |d| is_step(d as usize))).map(|d| {
                self.recent.remember(hash, d as usize);
                d as usize
            }),
        };
        let found = match latest {
            Some(d) if self.model.dispatches[d].call.part == call.part => Some(d),
            Some(d) => self.part_of_step(d, call.part),
            None => None,
        };
        match found {
            Some(d) => d,
            None => self.new_dispatch(
                call.clone(),
                Text::default(),
                Text::default(),
                CallArgs::of_value(Value::Null, false, WholeUnit::Auto),
                None,
                at,
            ),
        }
    }

    /// The latest dispatch of the step from `d` back whose part is `part`: a step's
    /// calls that the input told apart ([`CallRef::part`]), each event going to its own.
    /// The step's other dispatches are walked, all of them: only parallel calls of one
    /// step have parts, a few dozen at most, each dispatched once or a few times.
    fn part_of_step(&self, d: usize, part: u32) -> Option<usize> {
        std::iter::successors(Some(d), |&e| self.earlier_of(e))
            .find(|&e| self.model.dispatches[e].call.part == part)
    }

    pub(super) fn refresh_kind(&mut self, d: usize, url: Option<&str>) {
        let disp = &self.model.dispatches[d];
        if disp.effect_kind.is_some() {
            return;
        }
        let tool = &self.model.calls[disp.logical()].tool;
        let kind = effect_kind_of(tool, url, &self.opts.tool_kinds);
        self.set_kind(d, kind);
    }

    /// A new dispatch's kind, known from its tool alone.
    pub(super) fn set_kind(&mut self, d: usize, kind: Option<Text>) {
        if let Some(k) = &kind
            && !self.model.client_kinds.contains(k)
        {
            self.model.client_kinds.insert(k.clone());
        }
        self.model.dispatches[d].effect_kind = kind;
    }
}

/// A dispatch's place among its step's: the one before it, and how many there are up to
/// it.
pub(super) struct StepLink {
    earlier: u32,
    depth: u32,
}

/// [`StepLink::earlier`] of a step's first dispatch.
const NO_DISPATCH: u32 = u32::MAX;

/// A step dispatched at most this many times finds the logical call of a new dispatch by
/// walking its earlier ones; one dispatched more uses `call_index`, so that a step
/// dispatched a hundred thousand times (a runaway loop) is not walked every time.
pub(super) const WALKED: u32 = 16;

/// How long after a step's last event it may be dispatched again as a retry
/// ([`Builder::step_is_over`]): a day, as for a resume read from OpenTelemetry spans.
pub(super) const STEP_RETRIED_WITHIN: crate::time::Duration =
    crate::time::Duration::from_secs(24 * 3600);

/// The latest dispatch of a few calls, by their hash: an attempt, its answer and its
/// step's end follow their tool call within a few lines, and each found it in `latest`,
/// a table with a slot for every dispatch of the month, at the cost of a cache miss. A slot
/// holds the latest dispatch of the last call hashed to it: a new dispatch of a call takes
/// its call's slot, so what a slot holds for a call is never stale.
pub(super) struct RecentDispatches([(u64, u32); RecentDispatches::SLOTS]);

impl RecentDispatches {
    const SLOTS: usize = 64;

    fn slot(hash: u64) -> usize {
        (hash >> 58) as usize % Self::SLOTS
    }

    /// The dispatch remembered for `hash`: the latest of the call if it is that call's.
    pub(super) fn get(&self, hash: u64) -> Option<usize> {
        let (h, d) = self.0[Self::slot(hash)];
        (h == hash && d != NO_DISPATCH).then_some(d as usize)
    }

    pub(super) fn remember(&mut self, hash: u64, d: usize) {
        self.0[Self::slot(hash)] = (hash, d as u32);
    }
}

impl Default for RecentDispatches {
    fn default() -> Self {
        RecentDispatches([(0, NO_DISPATCH); Self::SLOTS])
    }
}

pub(in crate::correlate) fn hash_call(call: &CallRef) -> u64 {
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

pub(super) fn orphan_call(loc: Loc) -> CallRef {
    CallRef {
        run: Text::from(format!("?{}", loc.input)),
        step: 0,
        part: 0,
    }
}
