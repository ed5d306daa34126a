//! Replays the service logged (`"msg": "idempotent replay", "refundId": "re_1"`), asked by
//! effect id: an answer naming an effect confirms it rather than making it when the
//! service says it replayed that effect while the request was in flight. A service that
//! reserves an effect's id, answers a keyed retry from its record and logs the effect's
//! creation after both would otherwise have the retry credited with the effect, and the
//! attempt that timed out, whose request made it, with nothing.

use super::{AttemptId, AttemptRec, EffectRec, Model, OutcomeKind};
use rustc_hash::FxHashMap;

/// The service's replays by effect id, each in time order.
pub(super) struct ReplayIndex<'m>(FxHashMap<&'m str, Vec<usize>>);

impl<'m> ReplayIndex<'m> {
    pub(super) fn new(model: &'m Model) -> Self {
        let mut by_id: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        for (i, r) in model.replays.iter().enumerate() {
            by_id.entry(&r.effect_id).or_default().push(i);
        }
        ReplayIndex(by_id)
    }

    /// Whether the service logged a replay of `effect` from `attempt`'s sending to its
    /// answer (each widened by `--max-skew`), under the attempt's key where both name one
    /// and of the effect's kind where the replay says one.
    pub(super) fn during(&self, model: &Model, attempt: &AttemptRec, effect: &EffectRec) -> bool {
        self.of(model, attempt, &effect.id, Some(&effect.kind))
    }

    /// [`ReplayIndex::during`] for the effect `id` of kind `kind`, where known.
    fn of(&self, model: &Model, attempt: &AttemptRec, id: &str, kind: Option<&str>) -> bool {
        let Some(replays) = self.0.get(id) else {
            return false;
        };
        let skew = model.max_skew;
        let answered = attempt.outcome.as_ref().map_or(attempt.at, |o| o.at);
        let (from, to) = (attempt.at.minus(skew), answered.plus(skew));
        replays.iter().map(|&i| &model.replays[i]).any(|r| {
            (from..=to).contains(&r.at)
                && (r.kind.as_deref().zip(kind)).is_none_or(|(a, b)| a == b)
                && (r.key.as_deref().zip(attempt.key.as_deref())).is_none_or(|(a, b)| a == b)
        })
    }
}

/// Marks as replayed each answer naming an effect that the service logged a replay of
/// while its attempt was in flight: the rules and the replay rate then read the answer as
/// what it was. Done after matching, which tells the replay's maker itself.
pub(super) fn mark_replayed_answers(model: &mut Model) {
    if model.replays.is_empty() {
        return;
    }
    let index = ReplayIndex::new(model);
    let replayed: Vec<AttemptId> = (model.attempts())
        .filter(|(id, a)| {
            let Some(OutcomeKind::Response {
                effect_id: Some(effect),
                replayed: false,
                ..
            }) = a.outcome.as_ref().map(|o| &o.kind)
            else {
                return false;
            };
            let kind = model.dispatches[id.dispatch()].effect_kind.as_deref();
            index.of(model, a, effect, kind)
        })
        .map(|(id, _)| id)
        .collect();
    for id in replayed {
        let attempt = &mut model.dispatches[id.dispatch()].attempts[id.index()];
        if let Some(OutcomeKind::Response { replayed, .. }) =
            attempt.outcome.as_mut().map(|o| &mut o.kind)
        {
            *replayed = true;
        }
    }
}
