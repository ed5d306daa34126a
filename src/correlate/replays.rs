//! Replays the service logged (`"msg": "idempotent replay", "refundId": "re_1"`), each
//! given to the one answer it was: an answer naming an effect confirms it rather than
//! making it when the service says it replayed that effect for that request. A service that
//! reserves an effect's id, answers a keyed retry from its record and logs the effect's
//! creation after both would otherwise have the retry credited with the effect, and the
//! attempt that timed out, whose request made it, with nothing.

use super::{AttemptId, AttemptRec, Model, OutcomeKind};
use crate::time::{Duration, Timestamp};
use rustc_hash::{FxHashMap, FxHashSet};

/// How long after a replay its answer may still be logged: the service logs the replay
/// and answers at once, so an answer much later than the line is another request's.
const ANSWER_WITHIN: Duration = Duration(30 * 1_000_000_000);

/// How long before a replay its answer may have been logged: the service logs the replay
/// before it answers, so only clocks out of step put the answer first. By a little only:
/// a replay logged well after an answer is another request's (a run whose log is not among
/// the inputs), and taking it for this one's would move this answer's effect.
const REPLAYED_AFTER_ANSWER: Duration = Duration(250 * 1_000_000);

/// Replays by the effect id or key they name.
type Replays<'m> = FxHashMap<&'m str, Vec<usize>>;
/// Answers by the effect id they name or the key they were sent with.
type Answers<'m> = FxHashMap<&'m str, Vec<AttemptId>>;

/// The attempts whose answers the service logged as replays.
#[derive(Default)]
pub(super) struct ReplayIndex(FxHashSet<AttemptId>);

impl ReplayIndex {
    /// Gives each logged replay to at most one answer naming its effect (or, for a replay
    /// naming only a key, sent with it), and each answer at most one replay: of the answers sent by the replay's time (widened by `--max-skew`)
    /// and answered since (less a quarter second, or `--max-skew` if smaller), the one
    /// answered nearest after it, else nearest before. Only a request whose key an earlier request carried can be answered from a
    /// record: the answer that made the effect is never taken for a replay of it, however
    /// near another request's replay is logged.
    pub(super) fn new(model: &Model) -> Self {
        if model.replays.is_empty() {
            return ReplayIndex::default();
        }
        // Replays naming an effect, by its id; those naming only a key, by the key.
        let (mut by_effect, mut by_key): (Replays, Replays) = Default::default();
        for (i, r) in model.replays.iter().enumerate() {
            match (r.effect_id.as_deref(), r.key.as_deref()) {
                (Some(effect), _) => by_effect.entry(effect).or_default().push(i),
                (None, Some(key)) => by_key.entry(key).or_default().push(i),
                (None, None) => {}
            }
        }
        let first_sent = first_sent_by_key(model);
        // The answers each replay may have been: naming its effect, or sent with its key.
        let (mut naming, mut keyed): (Answers, Answers) = Default::default();
        for (id, a, key) in model.attempts_with_keys() {
            let repeated_key = match key {
                Some(n) => first_sent[n as usize] < a.at,
                None => a.key_unseen,
            };
            if !repeated_key {
                continue;
            }
            if let Some(effect) = effect_named(a).filter(|e| by_effect.contains_key(e)) {
                naming.entry(effect).or_default().push(id);
            }
            if let Some(key) = a.key.as_deref().filter(|k| by_key.contains_key(k)) {
                keyed.entry(key).or_default().push(id);
            }
        }
        let mut given = FxHashSet::default();
        for (replays, answers) in [(&by_effect, naming), (&by_key, keyed)] {
            for (name, mut candidates) in answers {
                candidates.sort_by_key(|&id| (answered(model.attempt(id)), id));
                for &r in &replays[name] {
                    if let Some(id) = nearest(model, &candidates, &given, r) {
                        given.insert(id);
                    }
                }
            }
        }
        ReplayIndex(given)
    }

    /// Whether the service logged `id`'s answer as a replay.
    pub(super) fn replayed(&self, id: AttemptId) -> bool {
        self.0.contains(&id)
    }
}

/// The effect an attempt's answer names.
fn effect_named(a: &AttemptRec) -> Option<&str> {
    match &a.outcome.as_ref()?.kind {
        OutcomeKind::Response {
            effect_id: Some(effect),
            ..
        } => Some(effect),
        _ => None,
    }
}

fn answered(a: &AttemptRec) -> Timestamp {
    a.outcome.as_ref().map_or(a.at, |o| o.at)
}

/// When each key was first sent, by its number.
fn first_sent_by_key(model: &Model) -> Vec<Timestamp> {
    let mut first = vec![Timestamp(i64::MAX); model.key_count()];
    for (_, a, key) in model.attempts_with_keys() {
        if let Some(n) = key {
            first[n as usize] = first[n as usize].min(a.at);
        }
    }
    first
}

/// The answer replay `r` was, among `candidates` (answers naming its effect, by answer
/// time) not `given` to another replay: see [`ReplayIndex::new`].
fn nearest(
    model: &Model,
    candidates: &[AttemptId],
    given: &FxHashSet<AttemptId>,
    r: usize,
) -> Option<AttemptId> {
    let replay = &model.replays[r];
    let skew = model.max_skew;
    let fits = |id: AttemptId| {
        let a = model.attempt(id);
        let kind = model.dispatches[id.dispatch()].effect_kind.as_deref();
        !given.contains(&id)
            && a.at.minus(skew) <= replay.at
            && replay.at <= answered(a).plus(Duration(skew.0.min(REPLAYED_AFTER_ANSWER.0)))
            && answered(a) <= replay.at.plus(skew).plus(ANSWER_WITHIN)
            && (replay.kind.as_deref().zip(kind)).is_none_or(|(a, b)| a == b)
            && (replay.key.as_deref().zip(a.key.as_deref())).is_none_or(|(a, b)| a == b)
    };
    let after = candidates.partition_point(|&id| answered(model.attempt(id)) < replay.at);
    let later = candidates[after..].iter().copied().find(|&id| fits(id));
    later.or_else(|| {
        candidates[..after]
            .iter()
            .rev()
            .copied()
            .find(|&id| fits(id))
    })
}

/// Marks as replayed each answer the service logged as a replay ([`ReplayIndex`]): the
/// rules and the replay rate then read it as what it was. Done after matching, which
/// reads the same index to tell the replayed effect's maker.
pub(super) fn mark_replayed_answers(model: &mut Model, index: &ReplayIndex) {
    for &id in &index.0 {
        let attempt = &mut model.dispatches[id.dispatch()].attempts[id.index()];
        if let Some(OutcomeKind::Response { replayed, .. }) =
            attempt.outcome.as_mut().map(|o| &mut o.kind)
        {
            *replayed = true;
        }
    }
}
