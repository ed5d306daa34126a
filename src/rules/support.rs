//! Small helpers the rules share, no rule-specific logic: here a finding's evidence and
//! effects (and their excess); the phrases messages are built from in [`phrases`]; grouping
//! effects by key or time in [`grouping`]; keys and idempotency records in [`keys`].

use crate::classify::FailureClass;
use crate::correlate::{AttemptRec, Dispatch, LogicalCall, Model};
use crate::event::{Lifecycle, Loc};
use crate::finding::{EffectRef, Finding};
use rustc_hash::FxHashMap;

mod disputed;
mod grouping;
mod keys;
mod phrases;

pub use disputed::disputed_values;
pub use grouping::*;
pub use keys::*;
pub use phrases::*;

/// Every line of a dispatch: its tool call, attempts, outcomes and step end.
pub fn dispatch_evidence(d: &Dispatch, out: &mut Vec<Loc>) {
    out.extend(d.loc);
    for a in &d.attempts {
        attempt_evidence(a, out);
    }
    out.extend(d.end.as_ref().map(|e| e.loc));
}

pub fn attempt_evidence(a: &AttemptRec, out: &mut Vec<Loc>) {
    out.push(a.loc);
    out.extend(a.outcome.as_ref().map(|o| o.loc));
}

/// Fills a finding's effects, currency and excess from effects in any order: the first
/// created is the legitimate one, the rest (in its currency) are the excess.
pub fn set_effects(f: &mut Finding, model: &Model, mut effects: Vec<usize>) {
    effects.sort_by(|&a, &b| {
        let (a, b) = (&model.effects[a], &model.effects[b]);
        (a.created, &a.id).cmp(&(b.created, &b.id))
    });
    effects.dedup();
    // A whole number written without its unit still names its currency.
    let first_currency = (effects.iter())
        .find_map(|&i| model.effects[i].amount().map(|m| m.currency))
        .or_else(|| (effects.iter()).find_map(|&i| model.effects[i].whole().map(|m| m.currency)));
    f.currency = first_currency;
    if let Some(cur) = first_currency {
        // Exact: i128 holds any sum of i64 amounts, so nothing saturates or wraps. When no
        // duplicate has an amount in the currency, the excess is unknown, never zero.
        f.excess_minor = effects
            .iter()
            .skip(1)
            .filter_map(|&i| model.effects[i].amount())
            .filter(|m| m.currency == cur)
            .map(|m| i128::from(m.minor))
            .reduce(|a, b| a + b);
    }
    for &i in &effects {
        let e = &model.effects[i];
        f.evidence.extend(e.locs.iter().copied());
        f.effects.push(EffectRef {
            id: e.id.to_string(),
            created: e.created,
            amount: e.amount(),
        });
    }
    if f.order.is_none() {
        f.order = effects
            .iter()
            .find_map(|&i| model.effects[i].order.as_deref().map(String::from));
    }
}

pub use crate::correlate::same_request;

/// The attempts that were sent again: each with the latest earlier attempt in `attempts`
/// of the same request ([`same_request`]), which it retried.
pub fn retries<'m>(
    attempts: &[&'m AttemptRec],
) -> impl Iterator<Item = (&'m AttemptRec, &'m AttemptRec)> {
    (1..attempts.len()).filter_map(move |i| {
        let retry = attempts[i];
        let earlier = attempts[..i]
            .iter()
            .rev()
            .find(|a| same_request(a, retry))?;
        Some((*earlier, retry))
    })
}

/// Did this attempt end in an ambiguous failure (a timeout, a reset, a 502...)?
pub fn ended_ambiguous(a: &AttemptRec) -> bool {
    a.outcome
        .as_ref()
        .is_some_and(|o| o.class() == FailureClass::Ambiguous)
}

/// A finding about one logical call, with its run, step, tool and order filled in.
pub fn call_finding(
    rule: &super::Rule,
    model: &Model,
    call: &LogicalCall,
    message: String,
) -> Finding {
    let mut f = Finding::new(rule.id, rule.default_severity, message);
    f.run = Some(call.run.to_string());
    f.step = Some(call.step);
    f.tool = Some(call.tool.to_string()).filter(|t| !t.is_empty());
    f.order = call
        .dispatches
        .iter()
        .find_map(|&d| model.dispatches[d].order.as_deref().map(String::from));
    f
}

/// Every attempt of a call in time order (its dispatches are already in time order).
pub fn call_attempts<'m>(model: &'m Model, call: &LogicalCall) -> Vec<&'m AttemptRec> {
    call.dispatches
        .iter()
        .flat_map(|&d| &model.dispatches[d].attempts)
        .collect()
}

/// Does the dispatch carry the arguments the agent gave (rather than an implied, empty call)?
pub fn has_args(d: &Dispatch) -> bool {
    d.loc.is_some() || !d.args_are_null()
}

/// The effects as the finding's effects (in creation order, each once) and their lines as
/// evidence, for rules that show effects the money of which another rule counts.
pub fn show_effects(model: &Model, effects: impl Iterator<Item = usize>, f: &mut Finding) {
    for i in effects {
        let e = &model.effects[i];
        f.evidence.extend(e.locs.iter().copied());
        f.effects.push(EffectRef {
            id: e.id.to_string(),
            created: e.created,
            amount: e.amount(),
        });
    }
    f.effects
        .sort_by(|a, b| (a.created, &a.id).cmp(&(b.created, &b.id)));
    f.effects.dedup_by(|a, b| a.id == b.id);
}

/// The line of the lifecycle event that opened `segment` of `run` (its resume).
pub fn resume_evidence(model: &Model, run: &str, segment: u32, out: &mut Vec<Loc>) {
    if let (Some(at), Some(events)) = (model.resume_at(run, segment), model.runs.get(run)) {
        out.extend(
            events
                .iter()
                .filter(|e| e.at == at && e.what != Lifecycle::Crashed)
                .map(|e| e.loc)
                .take(1),
        );
    }
}

/// The effects that happened, per dispatch they were matched to, in effect order, for the
/// `dispatches` a rule will look up: built once rather than scanning every effect per lookup,
/// and only for those dispatches (a few, where a map of every dispatch's effects cost more
/// than the rule's findings).
pub fn effects_by_dispatch(
    model: &Model,
    dispatches: impl IntoIterator<Item = usize>,
) -> FxHashMap<usize, Vec<usize>> {
    let mut out: FxHashMap<usize, Vec<usize>> =
        dispatches.into_iter().map(|d| (d, Vec::new())).collect();
    for (i, e) in model.effects.iter().enumerate() {
        if let (true, Some(m)) = (e.happened, e.matched)
            && let Some(effects) = out.get_mut(&m.dispatch())
        {
            effects.push(i);
        }
    }
    out
}
