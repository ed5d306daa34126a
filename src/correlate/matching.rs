//! Effects matched to the attempts that account for them (SPEC §4.2), and calls re-issued
//! under another step number after a resume joined to the call they repeat.

use super::*;
use crate::time::{Duration, Timestamp};
use rustc_hash::{FxHashMap, FxHashSet};

/// Matches each effect to at most one attempt (SPEC §4.2). The three indexes are built
/// side by side and effects matched in parallel: each reads the model only, and results
/// are kept in effect order, so the thread count changes nothing.
pub(super) fn match_effects(model: &mut Model) {
    use rayon::prelude::*;
    let m = &*model;
    let ((by_effect_id, by_key), by_order) = rayon::join(
        || rayon::join(|| index_by_effect_id(m), || index_by_key(m)),
        || index_by_order(m),
    );
    let skew = model.max_skew;
    let matches: Vec<Option<(AttemptId, MatchedBy)>> = model
        .effects
        .par_iter()
        .map(|e| {
            by_effect_id
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
                    let fits = |&&(_, id): &&(Timestamp, AttemptId)| attempt_fits(m, id, e);
                    let created = latest_instant(e.created, skew);
                    latest_at_or_before(list, created, fits)
                        .or_else(|| latest_at_or_before(list, created.plus(skew), fits))
                        .map(|id| (id, MatchedBy::OrderAndTime))
                })
        })
        .collect();
    for (e, found) in model.effects.iter_mut().zip(matches) {
        if let Some((id, by)) = found {
            e.matched = Some(id);
            e.matched_by = Some(by);
        }
    }
}

/// The first attempt answered with each effect id (a replayed answer names an effect
/// made before, not by it).
fn index_by_effect_id(model: &Model) -> FxHashMap<&str, AttemptId> {
    let mut by_effect_id = FxHashMap::default();
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
    }
    by_effect_id
}

/// The earliest attempt sent with each idempotency key.
fn index_by_key(model: &Model) -> FxHashMap<&str, (Timestamp, AttemptId)> {
    let mut by_key: FxHashMap<&str, (Timestamp, AttemptId)> = FxHashMap::default();
    for (id, a) in model.attempts() {
        if let Some(k) = &a.key {
            let slot = by_key.entry(k.as_str()).or_insert((a.at, id));
            if (a.at, id) < *slot {
                *slot = (a.at, id);
            }
        }
    }
    by_key
}

/// Attempts that may have caused an effect, by (effect kind, order), in time order.
type OrderIndex<'m> = FxHashMap<(&'m str, &'m str), Vec<(Timestamp, AttemptId)>>;

fn index_by_order(model: &Model) -> OrderIndex<'_> {
    let mut by_order = OrderIndex::default();
    for (id, a) in model.attempts() {
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
    by_order
}

/// Joins each call that a resume renumbered to the call it repeats (SPEC §4.3): a call first
/// dispatched after a resume, under a step number the run had not used for it before, with
/// the same tool and canonical args as another step of the run that had completed (or had
/// produced an effect) in an earlier segment. Only calls that can have an effect count: a
/// re-planned lookup is harmless. Calls are visited in creation (time) order, so a call
/// renumbered twice joins the group of the first.
pub(super) fn join_renumbered(model: &mut Model) {
    // Which dispatches produced an effect, computed once: a scan per candidate would be
    // quadratic on a month of logs.
    let mut produced = vec![false; model.dispatches.len()];
    for e in model.effects.iter().filter(|e| e.happened) {
        if let Some(m) = e.matched {
            produced[m.dispatch] = true;
        }
    }
    // Only runs dispatched something after a resume can have a renumbered call, and a call
    // is only joined within its run: a month of runs that never resumed is passed over.
    let resumed: FxHashSet<&str> = model
        .dispatches
        .iter()
        .filter(|d| d.segment > 0)
        .map(|d| d.call.run.as_str())
        .collect();
    let mut by_shape: FxHashMap<(&str, &str, &str), Vec<usize>> = FxHashMap::default();
    for (i, c) in model.calls.iter().enumerate() {
        if !resumed.contains(c.run.as_str()) {
            continue;
        }
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
pub(super) fn latest_instant(t: Timestamp, skew: Duration) -> Timestamp {
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
