//! One answer that says the service made something, one effect (review31 H4, L1). Matching by
//! order and time gives each effect the latest attempt sent by its creation (SPEC §4.2(c)),
//! one effect at a time, so it can give one attempt two effects while another attempt of the
//! same order, answered `201 Created`, gets none: two runs refunding one order 0.4 s apart
//! (both refunds created after the second request was sent) read as one call's gateway
//! retry, and with the service's clock behind, a retry's refund was pinned on the attempt
//! before it. An attempt answered 2xx that is not a replay made an effect; when it was
//! left with none and an attempt of its order holds two or more by time alone, one of those
//! is its own.
//!
//! Repaired here, after matching: only effects matched by order and time move (an effect an
//! answer named, or a key, stays where it is), only from an attempt that keeps one, only to
//! an attempt whose answer named no effect, that accounts for none, that the effect fits
//! (amount, and created before its answer plus `--max-skew`) and that was sent no later
//! than the effect's creation plus `--max-skew`, with the holder's method and URL (a call's
//! email is no refund request). An effect made by the time the holder was answered 2xx stays
//! its when the other was sent after that answer. Attempts and effects keep their order: an
//! attempt sent before the holder takes the holder's earliest such effect, one sent after
//! it the latest. A gateway's copy of a request (one attempt, one answer, two effects)
//! has no other answered attempt beside it and stays a gateway retry.

use super::generations::same_request;
use super::matching::{OrderIndex, attempt_fits};
use super::replays::ReplayIndex;
use super::*;
use crate::time::Timestamp;

/// What matching found for each effect, in effect order.
type Matches = [Option<(AttemptId, MatchedBy)>];

/// See the module's documentation. The work is a pass over the matches; attempts are read
/// only near an attempt that holds two effects by order and time.
pub(super) fn one_effect_per_answer(
    model: &Model,
    by_order: &OrderIndex,
    replays: &ReplayIndex,
    matches: &mut Matches,
) {
    // Effects matched by order and time, by attempt: the attempts (naming an order) that
    // hold two or more.
    let mut held: Vec<(AttemptId, usize)> = (matches.iter().enumerate())
        .filter_map(|(i, found)| match found {
            Some((id, MatchedBy::OrderAndTime)) => Some((*id, i)),
            _ => None,
        })
        .collect();
    if held.len() < 2 {
        return;
    }
    held.sort_unstable();
    let holders: Vec<&[(AttemptId, usize)]> = (held.chunk_by(|a, b| a.0 == b.0))
        .filter(|g| g.len() >= 2 && OrderIndex::pair(model, g[0].0).is_some())
        .collect();
    if holders.is_empty() {
        return;
    }
    let skew = model.max_skew;
    // (candidate, holder): answered attempts of a holder's order sent while its effects
    // may have been made.
    let mut candidates: Vec<(AttemptId, usize)> = Vec::new();
    for (h, group) in holders.iter().enumerate() {
        let holder = group[0].0;
        let Some(pair) = OrderIndex::pair(model, holder) else {
            continue;
        };
        let created = || group.iter().map(|&(_, e)| model.effects[e].created);
        let (Some(first), Some(last)) = (created().min(), created().max()) else {
            continue;
        };
        let (from, to) = (first.minus(LATE_EFFECT_HORIZON), last.plus(skew));
        candidates.extend(
            (by_order.sent_within(model, pair, from, to))
                .filter(|&c| c != holder && made_something(model, replays, c))
                .filter(|&c| logged_as_a_write(model, c, model.attempt(holder)))
                .filter(|&c| {
                    let (a, b) = (model.attempt(c), model.attempt(holder));
                    same_request(a, b) && !same_key(a, b)
                })
                .map(|c| (c, h)),
        );
    }
    if candidates.is_empty() {
        return;
    }
    // An attempt that accounts for an effect already (by id, key or time) is no candidate.
    candidates.sort_unstable();
    let mut holding = vec![false; candidates.len()];
    for &(id, _) in matches.iter().flatten() {
        let at = candidates.partition_point(|&(c, _)| c < id);
        for (slot, _) in
            (holding[at..].iter_mut().zip(&candidates[at..])).take_while(|(_, c)| c.0 == id)
        {
            *slot = true;
        }
    }
    let mut candidates: Vec<(AttemptId, usize)> = (candidates.into_iter().zip(holding))
        .filter(|&(_, holds)| !holds)
        .map(|(c, _)| c)
        .collect();
    // In the order they were sent; a candidate near two holders is seen once per holder.
    candidates.sort_unstable_by_key(|&(c, h)| (model.attempt(c).at, c, h));
    // The effects each holder still has.
    let mut owned: Vec<Vec<usize>> = (holders.iter())
        .map(|g| g.iter().map(|&(_, e)| e).collect())
        .collect();
    let mut i = 0;
    while i < candidates.len() {
        let c = candidates[i].0;
        let of_c = candidates[i..].iter().take_while(|&&(x, _)| x == c).count();
        let sent = model.attempt(c).at;
        // Of its holders', the effect created nearest its sending, then the first holder.
        let mut best: Option<(i64, usize, usize)> = None;
        for &(_, h) in &candidates[i..i + of_c] {
            if owned[h].len() < 2 {
                continue;
            }
            let holder = holders[h][0].0;
            let effect = |e: usize| &model.effects[e];
            // Made by the time the holder was answered 2xx, and the candidate sent since:
            // the holder's (as `answered_before` reads a dispatch's attempts).
            let answered = answered_2xx(model.attempt(holder)).filter(|&t| sent >= t);
            let movable = |&&e: &&usize| {
                effect(e).created.plus(skew) >= sent
                    && answered.is_none_or(|t| effect(e).created > t)
                    && attempt_fits(model, c, effect(e))
            };
            let by_creation = |&&e: &&usize| (effect(e).created, e);
            let sent_before_holder = (sent, c) < (model.attempt(holder).at, holder);
            let pick = match sent_before_holder {
                true => owned[h].iter().filter(movable).min_by_key(by_creation),
                false => owned[h].iter().filter(movable).max_by_key(by_creation),
            };
            if let Some(&e) = pick {
                let gap = (effect(e).created.0.saturating_sub(sent.0)).saturating_abs();
                if best.is_none_or(|(g, _, _)| gap < g) {
                    best = Some((gap, h, e));
                }
            }
        }
        if let Some((_, h, e)) = best {
            owned[h].retain(|&x| x != e);
            matches[e] = Some((c, MatchedBy::OrderAndTime));
        }
        i += of_c;
    }
}

/// Only a request the trace shows as a write of the holder's amount may take an effect
/// from it: logged with a POST or PATCH (an answer logged alone implies an attempt of no
/// known method: a status check's `200 OK` is no refund), to the holder's URL where that is
/// known, by a call whose arguments name an amount (a call naming none fits any refund).
fn logged_as_a_write(model: &Model, c: AttemptId, holder: &AttemptRec) -> bool {
    let a = model.attempt(c);
    let write = (a.method.as_deref())
        .is_some_and(|m| m.eq_ignore_ascii_case("POST") || m.eq_ignore_ascii_case("PATCH"));
    let url_known = holder.url.is_none() || a.url.is_some();
    write && url_known && model.dispatches[c.dispatch()].amount.is_some()
}

/// The attempt's answer says the service made something: 2xx, naming no effect (an answer
/// naming one is matched by it), not a replay (by its answer or the service's log). A
/// keyed retry's answer may be the record its first try left, replayed unsaid: not one.
fn made_something(model: &Model, replays: &ReplayIndex, id: AttemptId) -> bool {
    let a = model.attempt(id);
    let Some(Outcome {
        kind:
            OutcomeKind::Response {
                status,
                effect_id: None,
                replayed: false,
                ..
            },
        ..
    }) = &a.outcome
    else {
        return false;
    };
    let earlier = &model.dispatches[id.dispatch()].attempts[..id.index()];
    (200..300).contains(status)
        && !replays.replayed(id)
        && !(a.key.is_some() && earlier.iter().any(|p| p.key == a.key))
}

/// When the attempt was answered 2xx, if it was.
fn answered_2xx(a: &AttemptRec) -> Option<Timestamp> {
    let o = a.outcome.as_ref()?;
    o.status()
        .is_some_and(|s| (200..300).contains(&s))
        .then_some(o.at)
}

/// Both attempts were sent with one key: the service made one effect for both, or did not
/// enforce the key; either way which made which is not for time to say.
fn same_key(a: &AttemptRec, b: &AttemptRec) -> bool {
    a.key.is_some() && a.key == b.key
}

#[cfg(test)]
mod tests {
    use crate::rules::testkit::Trace;

    const ARGS: &str = r#"{"order":"A-1","amount_p":4500}"#;

    /// Which run each effect was matched to, in effect order.
    fn matched(t: &Trace) -> Vec<Option<String>> {
        let m = t.model();
        (m.effects.iter())
            .map(|e| {
                e.matched
                    .map(|id| m.dispatches[id.dispatch()].call.run.to_string())
            })
            .collect()
    }

    /// Run ra's request sent at 10 ms and answered at `ra_answered` (201 unless `answer`
    /// says otherwise), run rb's sent at 410 and answered 201 at 1 300; two refunds of the
    /// order, after rb's request was sent, at 600 and 900 (by time alone, both rb's).
    fn two_runs(ra_sent: i64, ra_answered: i64, answer: impl Fn(&mut Trace, i64)) -> Trace {
        let mut t = Trace::new();
        t.tool_call(ra_sent - 10, "ra", 1, "issue_refund", ARGS)
            .attempt(ra_sent, "ra", 1, 1, None);
        answer(&mut t, ra_answered);
        t.tool_call(400, "rb", 1, "issue_refund", ARGS)
            .attempt(410, "rb", 1, 1, None)
            .response(1_300, "rb", 1, 201, "Created")
            .refund(600, "rf_1", "A-1", 4500, None)
            .refund(900, "rf_2", "A-1", 4500, None);
        t
    }

    fn created(t: &mut Trace, at: i64) {
        t.response(at, "ra", 1, 201, "Created");
    }

    fn runs(names: &[&str]) -> Vec<Option<String>> {
        names.iter().map(|n| Some(n.to_string())).collect()
    }

    #[test]
    fn an_answered_attempt_left_with_no_effect_takes_the_earlier_of_two_held_by_time() {
        assert_eq!(matched(&two_runs(10, 1_000, created)), runs(&["ra", "rb"]));
    }

    #[test]
    fn an_answer_that_made_nothing_takes_nothing() {
        // A conflict, a replay and an answer naming another effect made none of these.
        let conflict = |t: &mut Trace, at| {
            t.response(at, "ra", 1, 409, "Conflict");
        };
        let replay = |t: &mut Trace, at| {
            t.created(at, "ra", 1, "rf_1", true);
        };
        let other = |t: &mut Trace, at| {
            t.created(at, "ra", 1, "rf_0", false);
        };
        assert_eq!(matched(&two_runs(10, 1_000, conflict)), runs(&["rb", "rb"]));
        // The replay confirms rf_1, as before: made by ra's request (no earlier one).
        let replayed = matched(&two_runs(10, 1_000, replay));
        assert_eq!(replayed[1].as_deref(), Some("rb"));
        assert_eq!(matched(&two_runs(10, 1_000, other)), runs(&["rb", "rb"]));
    }

    #[test]
    fn an_effect_that_cannot_be_the_answered_attempts_stays() {
        // Answered more than --max-skew before either refund was created.
        let mut t = Trace::new();
        t.tool_call(0, "ra", 1, "issue_refund", ARGS)
            .attempt(10, "ra", 1, 1, None)
            .response(1_000, "ra", 1, 201, "Created")
            .tool_call(4_890, "rb", 1, "issue_refund", ARGS)
            .attempt(4_900, "rb", 1, 1, None)
            .response(6_000, "rb", 1, 201, "Created")
            .refund(5_000, "rf_1", "A-1", 4500, None)
            .refund(5_300, "rf_2", "A-1", 4500, None);
        assert_eq!(matched(&t), runs(&["rb", "rb"]));
        // Sent more than --max-skew after both were created (and so matched to neither).
        let late = |t: &mut Trace, at| {
            t.response(at, "ra", 1, 201, "Created");
        };
        assert_eq!(matched(&two_runs(3_000, 3_500, late)), runs(&["rb", "rb"]));
    }

    #[test]
    fn attempts_sent_with_one_key_are_not_told_apart_by_time() {
        let mut t = Trace::new();
        t.tool_call(0, "ra", 1, "issue_refund", ARGS)
            .attempt(10, "ra", 1, 1, Some("k1"))
            .response(1_000, "ra", 1, 201, "Created")
            .tool_call(400, "rb", 1, "issue_refund", ARGS)
            .attempt(410, "rb", 1, 1, Some("k1"))
            .response(1_300, "rb", 1, 201, "Created")
            .refund(600, "rf_1", "A-1", 4500, None)
            .refund(900, "rf_2", "A-1", 4500, None);
        assert_eq!(matched(&t), runs(&["rb", "rb"]));
    }

    #[test]
    fn three_answered_runs_take_the_three_refunds_in_order() {
        let mut t = Trace::new();
        for (i, run) in ["ra", "rb", "rc"].into_iter().enumerate() {
            let at = 200 * i as i64;
            t.tool_call(at, run, 1, "issue_refund", ARGS)
                .attempt(at + 10, run, 1, 1, None)
                .response(2_000 + at, run, 1, 201, "Created");
        }
        for (ms, id) in [(700, "rf_1"), (800, "rf_2"), (900, "rf_3")] {
            t.refund(ms, id, "A-1", 4500, None);
        }
        assert_eq!(matched(&t), runs(&["ra", "rb", "rc"]));
    }

    /// One call: a refund request answered 201 after both refunds were logged, then a
    /// second request answered 200 (`url`). Neither takes one of the first's refunds: an
    /// email is no refund request, and a request sent after the first was answered 2xx did
    /// not make what was made before that answer.
    #[test]
    fn a_request_sent_after_the_holders_answer_or_another_request_takes_nothing() {
        let refunds = "https://payments.internal/v1/refunds";
        let second = |url: &str| {
            let mut t = Trace::new();
            t.tool_call(0, "ra", 1, "issue_refund", ARGS)
                .request(10, "ra", 1, 1, "POST", refunds)
                .refund(100, "rf_1", "A-1", 4500, None)
                .refund(300, "rf_2", "A-1", 4500, None)
                .response(400, "ra", 1, 201, "Created")
                .request(500, "ra", 1, 2, "POST", url)
                .response(600, "ra", 1, 200, "OK");
            let m = t.model();
            (m.effects.iter())
                .map(|e| e.matched.map(|a| a.index()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            second("https://mail.internal/v1/emails"),
            [Some(0), Some(0)]
        );
        assert_eq!(second(refunds), [Some(0), Some(0)]);
    }

    #[test]
    fn a_refund_of_another_amount_is_not_the_answered_attempts() {
        let mut t = Trace::new();
        t.tool_call(
            0,
            "ra",
            1,
            "issue_refund",
            r#"{"order":"A-1","amount_p":1250}"#,
        )
        .attempt(10, "ra", 1, 1, None)
        .response(1_000, "ra", 1, 201, "Created")
        .tool_call(400, "rb", 1, "issue_refund", ARGS)
        .attempt(410, "rb", 1, 1, None)
        .response(1_300, "rb", 1, 201, "Created")
        .refund(600, "rf_1", "A-1", 4500, None)
        .refund(900, "rf_2", "A-1", 4500, None);
        assert_eq!(matched(&t), runs(&["rb", "rb"]));
    }
}
