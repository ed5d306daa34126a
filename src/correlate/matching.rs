//! Effects matched to the attempts that account for them (SPEC §4.2), and calls re-issued
//! under another step number after a resume joined to the call they repeat.

use super::by_time::{Rivals, UnsettledEffect};
use super::key_numbers::KeyTexts;
use super::*;
use crate::classify::FailureClass;
use crate::flat_table::FlatTable;
use crate::time::{Duration, Timestamp};
use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};
use std::hash::BuildHasher;

/// Matches each effect to at most one attempt (SPEC §4.2). The three indexes are built
/// side by side and effects matched in parallel: each reads the model only, and results
/// are kept in effect order, so the thread count changes nothing.
pub(super) fn match_effects(
    model: &mut Model,
    replays: &super::replays::ReplayIndex,
    keys: KeyTexts,
) {
    use rayon::prelude::*;
    let m = &*model;
    let ((by_effect_id, by_key), (by_order, by_time)) = rayon::join(
        || rayon::join(|| EffectIdIndex::new(m), || KeyIndex::new(m, keys)),
        || (OrderIndex::new(m), super::by_time::TimeIndex::new(m)),
    );
    let skew = model.max_skew;
    let found: Vec<Option<Result<(AttemptId, MatchedBy), Rivals>>> = model
        .effects
        .par_iter()
        .enumerate()
        .map(|(i, e)| {
            // Most effects are found by their id: the table's slot is asked for ahead.
            if let Some(ahead) = m.effects.get(i + PREFETCH_AHEAD) {
                by_effect_id.prefetch(&ahead.id);
            }
            by_effect_id
                .get(m, &e.id)
                .map(|id| match replayed_from(m, id, e, replays) {
                    Some(origin) => (origin, MatchedBy::Key),
                    None => (id, MatchedBy::EffectId),
                })
                .or_else(|| {
                    // Named only by a replay: the earlier try it replayed, if it is told.
                    let id = by_effect_id.replayed(m, &e.id)?;
                    Some((replayed_from(m, id, e, replays)?, MatchedBy::Key))
                })
                .or_else(|| {
                    let id = by_key.get(m, e.key.as_deref()?)?;
                    Some((id, MatchedBy::Key))
                })
                .or_else(|| {
                    let order = e.order.as_deref()?;
                    let created = latest_instant(e.created, skew);
                    let fits = |id| attempt_fits(m, id, e);
                    // An attempt whose answer named another effect made that one: an
                    // earlier attempt still open (timed out, the service slower than
                    // the retry) made this one, if any did; else the answered one (a
                    // gateway's copy of its request).
                    let unclaimed = |id| !names_another_effect(m, id, e);
                    let pair = (&*e.kind, order);
                    let within = |limit| by_order.latest_fitting(m, pair, limit, fits, unclaimed);
                    let found = match within(created) {
                        Some((id, true)) => Some(id),
                        first => match (first, within(created.plus(skew))) {
                            (_, Some((id, true))) => Some(id),
                            (first, later) => first.or(later).map(|(id, _)| id),
                        },
                    };
                    // A call whose order is unknown (its arguments untraced) may be any
                    // order's: its attempt sent later, nearer the effect, is the likelier.
                    let found = match (found, by_time.sent_by_creation(m, e)) {
                        (Some(id), Some(t)) if m.attempt(t).at > m.attempt(id).at => Some(t),
                        (found, _) => found,
                    };
                    found.map(|id| (answered_before(m, id, e), MatchedBy::OrderAndTime))
                })
                .map(Ok)
                .or_else(|| {
                    let id = by_time.get(m, e).transpose()?;
                    Some(id.map(|id| (answered_before(m, id, e), MatchedBy::OrderAndTime)))
                })
        })
        .collect();
    // Effects two logs' requests could each have made: matched to none, and said.
    let mut unsettled = Vec::new();
    let mut matches: Vec<Option<(AttemptId, MatchedBy)>> = Vec::with_capacity(found.len());
    for (i, found) in found.into_iter().enumerate() {
        matches.push(match found {
            Some(Ok(found)) => Some(found),
            Some(Err(rivals)) => {
                let effect = i as u32;
                unsettled.push(UnsettledEffect { effect, rivals });
                None
            }
            None => None,
        });
    }
    super::by_time::one_order_per_call(m, &by_time, &mut matches);
    super::answers::one_effect_per_answer(m, &by_order, replays, &mut matches);
    for (e, found) in model.effects.iter_mut().zip(matches) {
        if let Some((id, by)) = found {
            e.matched = Some(id);
            e.matched_by = Some(by);
        }
    }
    model.unsettled_effects = unsettled;
}

/// How many effects ahead [`match_effects`] asks for an effect id's slot.
const PREFETCH_AHEAD: usize = 8;

/// The indexes hash the model's strings and hold only attempt ids, sized once: tables keyed
/// by copies of the strings, grown by doubling, were the largest part of a scan's memory.
fn hash_str(s: &str) -> u64 {
    FxBuildHasher.hash_one(s)
}

/// The first attempt answered with each effect id (a replayed answer names an effect
/// made before, not by it); apart, the first whose answer named it as a replay.
struct EffectIdIndex {
    made: FlatTable<AttemptId>,
    replayed: FlatTable<AttemptId>,
}

impl EffectIdIndex {
    fn effect_id(model: &Model, id: AttemptId) -> &str {
        match &model.attempt(id).outcome {
            Some(Outcome {
                kind:
                    OutcomeKind::Response {
                        effect_id: Some(eid),
                        ..
                    },
                ..
            }) => eid,
            _ => "",
        }
    }

    /// Both tables from two walks of the attempts: one to count, one to fill.
    fn new(model: &Model) -> Self {
        let answered = || {
            model
                .attempts()
                .filter_map(move |(id, a)| match &a.outcome.as_ref()?.kind {
                    OutcomeKind::Response {
                        effect_id: Some(eid),
                        replayed,
                        ..
                    } => Some((id, eid.as_str(), *replayed)),
                    _ => None,
                })
        };
        let replays = answered().filter(|&(_, _, replayed)| replayed).count();
        let made = answered().count() - replays;
        let mut tables = [made, replays].map(FlatTable::with_capacity);
        for (id, eid, replayed) in answered() {
            let same = |p: AttemptId| Self::effect_id(model, p) == eid;
            let rehash = |p: AttemptId| hash_str(Self::effect_id(model, p));
            tables[usize::from(replayed)].find_or_insert(hash_str(eid), id, same, rehash);
        }
        let [made, replayed] = tables;
        EffectIdIndex { made, replayed }
    }

    fn get(&self, model: &Model, eid: &str) -> Option<AttemptId> {
        Self::find(&self.made, model, eid)
    }

    /// Asks memory for what [`EffectIdIndex::get`] of `eid` reads first.
    fn prefetch(&self, eid: &str) {
        self.made.prefetch(hash_str(eid));
    }

    /// The first attempt whose answer named `eid` as a replay of it.
    fn replayed(&self, model: &Model, eid: &str) -> Option<AttemptId> {
        Self::find(&self.replayed, model, eid)
    }

    fn find(table: &FlatTable<AttemptId>, model: &Model, eid: &str) -> Option<AttemptId> {
        table.find(hash_str(eid), |p| Self::effect_id(model, p) == eid)
    }
}

/// The earliest attempt sent with each idempotency key, by the key's number.
struct KeyIndex {
    texts: KeyTexts,
    earliest: Vec<AttemptId>,
}

impl KeyIndex {
    fn new(model: &Model, texts: KeyTexts) -> Self {
        let sent = |p: AttemptId| (model.attempt(p).at, p);
        let mut earliest = texts.named_by().to_vec();
        for (id, _, n) in model.attempts_with_keys() {
            if let Some(held) = n.map(|n| &mut earliest[n as usize])
                && sent(id) < sent(*held)
            {
                *held = id;
            }
        }
        KeyIndex { texts, earliest }
    }

    fn get(&self, model: &Model, key: &str) -> Option<AttemptId> {
        let n = self.texts.number(model, key)?;
        Some(self.earliest[n as usize])
    }
}

/// Attempts that may have caused an effect, by (effect kind, order) and then time: one
/// flat list sorted by the hash of the pair, read back by the pair itself. A pair's
/// entries are found through a directory of where each range of hashes starts
/// ([`OrderIndex::hashes_from`]): a binary search over the month's list missed the cache
/// at most of its steps, and was most of matching an effect by its order.
pub(super) struct OrderIndex {
    list: Vec<(u64, Timestamp, AttemptId)>,
    /// `starts[b]`: the first entry whose hash's top bits are `b` or more.
    starts: Vec<u32>,
    /// The hash's bits below the directory's.
    shift: u32,
}

impl OrderIndex {
    pub(super) fn pair(model: &Model, p: AttemptId) -> Option<(&str, &str)> {
        let d = &model.dispatches[p.dispatch()];
        Some((d.effect_kind.as_deref()?, d.order.as_deref()?))
    }

    fn hash(pair: (&str, &str)) -> u64 {
        FxBuildHasher.hash_one(pair)
    }

    fn new(model: &Model) -> Self {
        use rayon::prelude::*;
        let mut list: Vec<(u64, Timestamp, AttemptId)> = model
            .attempts()
            .filter(|(_, a)| a.may_cause_effects())
            .filter_map(|(id, a)| {
                let p = id;
                Some((Self::hash(Self::pair(model, p)?), a.at, p))
            })
            .collect();
        list.par_sort_unstable();
        // About four entries a range: the directory is a sixteenth of the list's size.
        let bits = (list.len() / 4).max(2).ilog2().min(24);
        let shift = 64 - bits;
        let mut starts = Vec::with_capacity((1 << bits) + 1);
        for (i, &(x, _, _)) in list.iter().enumerate() {
            let range = (x >> shift) as usize;
            while starts.len() <= range {
                starts.push(i as u32);
            }
        }
        starts.resize((1 << bits) + 1, list.len() as u32);
        OrderIndex {
            list,
            starts,
            shift,
        }
    }

    /// The entries from the first whose hash's range is that of `h` on: `before` holds of
    /// the range's first entries up to the one sought, which is then found in its range.
    fn hashes_from(&self, h: u64, before: impl Fn(&(u64, Timestamp, AttemptId)) -> bool) -> usize {
        let range = (h >> self.shift) as usize;
        let (from, to) = (self.starts[range] as usize, self.starts[range + 1] as usize);
        from + self.list[from..to].partition_point(before)
    }

    /// The latest attempt for `pair` sent at or before `limit` that `fits` and is
    /// `preferred` (with `true`), else the latest that fits (with `false`). The search
    /// for a preferred one ends a [`LATE_EFFECT_HORIZON`] before the latest that fits.
    fn latest_fitting(
        &self,
        model: &Model,
        pair: (&str, &str),
        limit: Timestamp,
        fits: impl Fn(AttemptId) -> bool,
        preferred: impl Fn(AttemptId) -> bool,
    ) -> Option<(AttemptId, bool)> {
        let h = Self::hash(pair);
        let start = self.hashes_from(h, |&(x, _, _)| x < h);
        let end = self.end_from(start, h, limit);
        let mut fallback: Option<(AttemptId, Timestamp)> = None;
        for &(_, at, p) in self.list[start..end].iter().rev() {
            if fallback.is_some_and(|(_, first)| at < first.minus(LATE_EFFECT_HORIZON)) {
                break;
            }
            if Self::pair(model, p) != Some(pair) || !fits(p) {
                continue;
            }
            if preferred(p) {
                return Some((p, true));
            }
            fallback.get_or_insert((p, at));
        }
        fallback.map(|(p, _)| (p, false))
    }

    /// The end of the entries of hash `h` sent at or before `limit`, `start` being at or
    /// before it: found by galloping from `start`, since a pair has a few attempts, where a
    /// second binary search over the month's list missed the cache at nearly every step.
    fn end_from(&self, start: usize, h: u64, limit: Timestamp) -> usize {
        let rest = &self.list[start..];
        let within = |&(x, at, _): &(u64, Timestamp, AttemptId)| (x, at) <= (h, limit);
        // `rest[..reach / 2]` are within, and `rest[reach - 1]` is not, or is past the end.
        let mut reach = 1;
        while reach <= rest.len() && within(&rest[reach - 1]) {
            reach *= 2;
        }
        let known = reach / 2;
        start + known + rest[known..reach.min(rest.len())].partition_point(within)
    }

    /// The attempts for `pair` sent from `from` to `to` (both included), in time order.
    pub(super) fn sent_within<'a>(
        &'a self,
        model: &'a Model,
        pair: (&'a str, &'a str),
        from: Timestamp,
        to: Timestamp,
    ) -> impl Iterator<Item = AttemptId> + 'a {
        let h = Self::hash(pair);
        let start = self.hashes_from(h, |&(x, at, _)| (x, at) < (h, from));
        let end = self.end_from(start, h, to);
        (self.list[start..end].iter())
            .map(|&(_, _, p)| p)
            .filter(move |&p| Self::pair(model, p) == Some(pair))
    }
}

/// Joins each call that a resume renumbered to the call it repeats (SPEC §4.3): a call first
/// dispatched after a resume, under a step number the run had not used for it before, with
/// the same tool and canonical args as another step of the run that had completed (or had
/// produced an effect) in an earlier segment. Only calls that can have an effect count: a
/// re-planned lookup is harmless, and so is a repeat of one. Calls are visited in creation
/// (time) order, so a call renumbered twice joins the group of the first.
pub(super) fn join_renumbered(model: &mut Model) {
    let m = &*model;
    // Which dispatches produced an effect, computed once (a scan per candidate would be
    // quadratic on a month of logs), while the calls are grouped on the other thread.
    let (produced, by_shape) = rayon::join(
        || {
            let mut produced = vec![false; m.dispatches.len()];
            for e in m.effects.iter().filter(|e| e.happened) {
                if let Some(matched) = e.matched {
                    produced[matched.dispatch()] = true;
                }
            }
            produced
        },
        || calls_of_resumed_runs_by_shape(m),
    );
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
                    disp.segment < seg
                        && (disp.end.as_ref().is_some_and(|e| e.ok) || produced[d])
                        && !only_read(disp)
                })
                .max_by_key(|&(_, d)| (model.dispatches[d].first_at(), d))
                .map(|(c, _)| c);
            if let Some(original) = original {
                joins.push((later, original));
            }
        }
    }
    for &(later, original) in &joins {
        model.calls[later].renumbered_from = Some(original as u32);
    }
    // Follow chains to the first call: each link goes to a strictly earlier segment, so a
    // chain ends; the bound is only a guard.
    for (later, _) in joins {
        let mut root = later;
        for _ in 0..model.calls.len() {
            match model.calls[root].renumbered_from() {
                Some(prev) => root = prev,
                None => break,
            }
        }
        model.calls[later].group = model.calls[root].group;
    }
}

/// The logical calls of runs that resumed, by (run, tool, canonical arguments). Only a run
/// that resumed can have a call dispatched after a resume, and a call is only joined within
/// its run: a month of runs that never resumed is passed over. The runs are those the
/// model records a resume of (a few), read without a walk of every dispatch; a run with
/// no dispatch after its resume has only calls of segment 0, which are passed over below.
fn calls_of_resumed_runs_by_shape(model: &Model) -> FxHashMap<(&str, &str, &str), Vec<usize>> {
    let resumed: FxHashSet<&str> = model.resumes.keys().map(|r| r.as_str()).collect();
    let mut by_shape: FxHashMap<(&str, &str, &str), Vec<usize>> = FxHashMap::default();
    if resumed.is_empty() {
        return by_shape;
    }
    for (i, c) in model.calls.iter().enumerate() {
        if resumed.contains(c.run.as_str()) {
            by_shape
                .entry((c.run.as_str(), c.tool.as_str(), c.canonical.as_str()))
                .or_default()
                .push(i);
        }
    }
    by_shape
}

/// A dispatch whose every logged request (one at least) was a read (GET, HEAD, OPTIONS):
/// the call it repeats was no renumbering of it, since a read did nothing to repeat.
/// (Reading a month, an idle read is dropped as soon as its step ends: `crate::relevance`.)
/// An answer logged without its request implies an attempt of unknown method; in a log that
/// runs share, an unnamed answer after another call's request goes to the latest tool call,
/// so such an attempt says nothing of what the call sent, and is not counted here.
fn only_read(d: &Dispatch) -> bool {
    let mut logged = d.attempts.iter().filter(|a| logged_request(a)).peekable();
    logged.peek().is_some() && !logged.any(AttemptRec::may_cause_effects)
}

/// A dispatch that may have an effect: its tool or URL names an effect kind, or it sent a
/// non-idempotent request (a logged one: see [`only_read`]).
fn can_have_effect(d: &Dispatch) -> bool {
    d.effect_kind.is_some()
        || d.attempts
            .iter()
            .any(|a| logged_request(a) && a.is_non_idempotent())
}

/// The attempt's request was logged, not implied by an answer.
fn logged_request(a: &AttemptRec) -> bool {
    a.method.is_some() || a.url.is_some()
}

/// Amount agrees (where both sides have one) and the effect was created while the attempt
/// could still have caused it.
pub(super) fn attempt_fits(model: &Model, id: AttemptId, e: &EffectRec) -> bool {
    let d = &model.dispatches[id.dispatch()];
    if let (Some(a), Some(b)) = (d.amount, e.amount())
        && a != b
    {
        return false;
    }
    let attempt = &d.attempts[id.index()];
    let open_until = match (&attempt.outcome, &d.end) {
        (Some(o), _) if o.status().is_some() && o.class() != FailureClass::Ambiguous => o.at,
        // A request nobody logged was answered by the time its step ended ok.
        (None, Some(end)) if attempt.unlogged && end.ok => end.at,
        _ => attempt.at.plus(LATE_EFFECT_HORIZON),
    };
    e.created <= open_until.plus(model.max_skew)
}

/// The answer to attempt `id` named an effect other than `e`.
pub(super) fn names_another_effect(model: &Model, id: AttemptId, e: &EffectRec) -> bool {
    matches!(
        &model.attempt(id).outcome,
        Some(Outcome { kind: OutcomeKind::Response { effect_id: Some(named), .. }, .. })
            if *named != e.id
    )
}

/// The attempt before `id` in its dispatch, when it was answered 2xx no earlier than the
/// effect was created and `id` was sent no earlier than that answer: a request answered
/// that it succeeded made its effect before answering. The attempt after it, placed at the
/// answer (the earliest a request logged only with its own answer, as httpx logs them, can
/// have been sent), was otherwise the latest for the order at that instant, and took the
/// first refund of a call that refunds two items one after the other. An answer naming
/// another effect keeps `id`.
fn answered_before(model: &Model, id: AttemptId, e: &EffectRec) -> AttemptId {
    let Some(prev) = id.index().checked_sub(1) else {
        return id;
    };
    let attempts = &model.dispatches[id.dispatch()].attempts;
    let Some(Outcome {
        at: answered,
        kind: OutcomeKind::Response {
            status, effect_id, ..
        },
        ..
    }) = &attempts[prev].outcome
    else {
        return id;
    };
    let earlier = AttemptId::new(id.dispatch(), prev);
    let names_other = effect_id.as_ref().is_some_and(|named| *named != e.id);
    if (200..300).contains(status)
        && !names_other
        && e.created <= *answered
        && attempts[id.index()].at >= *answered
        && attempt_fits(model, earlier, e)
    {
        earlier
    } else {
        id
    }
}

/// The attempt that made an effect named in the answer to `id`, when that answer is a
/// keyed retry's replay: `id` was sent after the effect was created, or the service logged
/// a replay of the effect while `id` was in flight (`replays`), under a key an earlier
/// attempt of its dispatch was sent with before it (a replay needs no clocks out of step to
/// explain it). Only its dispatch's: another call sharing the key (another order, a
/// resumed run) is not taken for the maker on the strength of the key alone. The latest
/// such attempt that may have reached the service.
/// Taken as the answer's own, the effect was made by a request not yet sent: a false
/// clock warning, and no `effect-after-timeout` for the attempt that timed out.
/// A client that never logged its key (axios-retry resending the key set in the request's
/// config) is taken at its answer's word: an answer that says it was replayed was sent with
/// a key an earlier try of its dispatch carried too, and only such tries, keys unknown,
/// may have made the effect; or a try sent with the key the service logged the effect
/// with (a function retried by backon or tenacity, its first request logged with its key,
/// the one sent again by no line).
fn replayed_from(
    model: &Model,
    id: AttemptId,
    e: &EffectRec,
    replays: &super::replays::ReplayIndex,
) -> Option<AttemptId> {
    let attempt = model.attempt(id);
    let says_replayed = attempt.outcome.as_ref().is_some_and(Outcome::is_replay);
    let key = match attempt.key.as_deref() {
        Some(key) if e.key.as_deref().is_some_and(|logged| logged != key) => return None,
        Some(key) => Some(key),
        None if says_replayed || replays.replayed(id) => None,
        None => return None,
    };
    let created = latest_instant(e.created, model.max_skew);
    if key.is_some() && attempt.at <= created && !replays.replayed(id) {
        return None;
    }
    // An attempt whose failure says it never reached the service (refused) made nothing.
    // Keys unknown, the service's log of the effect may come after the replay it answered
    // (it logs when the first request's handler ends): the earlier tries all may have.
    let effects_own = |a: &AttemptRec| key.is_none() && a.key.is_some() && a.key == e.key;
    let may_have_made = |a: &AttemptRec| {
        (a.key.as_deref() == key || effects_own(a))
            && (key.is_none() || a.at <= created)
            && a.outcome
                .as_ref()
                .is_none_or(|o| o.class() != FailureClass::Safe)
    };
    let attempts = &model.dispatches[id.dispatch()].attempts[..id.index()];
    let i = attempts.iter().rposition(may_have_made)?;
    Some(AttemptId::new(id.dispatch(), i))
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
