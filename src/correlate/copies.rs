//! Delivery copies (SPEC §4.2, §4.6): an effect that no attempt accounts for by id, key or
//! order and time, created within `--max-skew` plus [`DELIVERY_SLACK`] of an effect of the
//! same kind, order and amount that an attempt does account for, is a copy of that
//! attempt's request (a gateway's retry, a queue's redelivery) and is matched to it.
//!
//! Without this, a copy landing just after the client's answer (the answer closes the
//! attempt for matching by time) or of an amount the call's arguments do not show (a
//! refund asked in EUR, logged in GBP) matched nothing; the rules take two untraced
//! effects that close as one delivery (`duplicate-effect`, cause `unknown`), yet one
//! traced and one untraced were neither a delivery duplicate nor a decision, and the
//! closest, most clearly delivery-shaped copy went unreported.

use super::matching::latest_instant;
use super::*;
use crate::money::Money;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// How close (beyond `--max-skew`) two effects of one kind, order and amount must be
/// created to be one delivery rather than two decisions: a gateway's or a queue's retry
/// comes within seconds. Shared with the rules that judge untraced effects alone.
pub const DELIVERY_SLACK: Duration = Duration(5 * 1_000_000_000);

/// Matches each unmatched effect that copies a matched one (see the module's comment) to
/// the matched one's attempt, by [`MatchedBy::DeliveryCopy`]. In a run of such effects
/// each within the gap of the next (as the rules cluster untraced ones), a copy of a copy
/// is one too. Effects of another amount (a partial refund, the remainder) or further
/// apart (a decision made again) are not copies, nor is one whose key (as the service
/// logged it, or none) is not its would-be original's (another request: a replayed request
/// carries its key), nor one created before that original's request was sent.
pub(super) fn attach_delivery_copies(model: &mut Model) {
    let gap = Duration(model.max_skew.0.saturating_add(DELIVERY_SLACK.0));
    let candidate = |e: &EffectRec| e.happened && e.order.is_some() && e.amount().is_some();
    // Most effects are matched: the buckets are only those an unmatched effect is in.
    let mut buckets: FxHashMap<(&str, &str, Money), Vec<usize>> = FxHashMap::default();
    for e in model
        .effects
        .iter()
        .filter(|e| candidate(e) && e.matched.is_none())
    {
        if let Some(b) = bucket(e) {
            buckets.entry(b).or_default();
        }
    }
    if buckets.is_empty() {
        return;
    }
    // Every effect's bucket is looked up, on every thread: the few in one are then added
    // in effect order.
    let members: Vec<(usize, (&str, &str, Money))> = (model.effects.par_iter().enumerate())
        .filter(|(_, e)| candidate(e))
        .filter_map(|(i, e)| {
            bucket(e)
                .filter(|b| buckets.contains_key(b))
                .map(|b| (i, b))
        })
        .collect();
    for (i, b) in members {
        buckets.get_mut(&b).expect("a bucket looked up").push(i);
    }
    let mut lists: Vec<Vec<usize>> = buckets.into_values().filter(|l| l.len() > 1).collect();
    let mut copies: Vec<(usize, AttemptId)> = Vec::new();
    for list in &mut lists {
        let effects = &model.effects;
        list.sort_by(|&a, &b| {
            (effects[a].created, &effects[a].id).cmp(&(effects[b].created, &effects[b].id))
        });
        copies_in(model, list, gap, &mut copies);
    }
    for (i, attempt) in copies {
        let e = &mut model.effects[i];
        e.matched = Some(attempt);
        e.matched_by = Some(MatchedBy::DeliveryCopy);
    }
}

/// An effect's bucket: its kind, order and amount.
fn bucket(e: &EffectRec) -> Option<(&str, &str, Money)> {
    Some((e.kind.as_str(), e.order.as_deref()?, e.amount()?))
}

/// The copies in one bucket (sorted by creation), with the attempt each is matched to:
/// first forwards (a copy after its original, the usual case), then backwards for those
/// left (a copy the service stamped before the original the client was told of).
fn copies_in(model: &Model, sorted: &[usize], gap: Duration, out: &mut Vec<(usize, AttemptId)>) {
    let mut matched: Vec<Option<AttemptId>> =
        sorted.iter().map(|&i| model.effects[i].matched).collect();
    // (effect, its attempt) of the effect that copies are read against.
    let mut pass = |order: &mut dyn Iterator<Item = usize>| {
        let mut anchor: Option<(usize, AttemptId)> = None;
        for k in order {
            let i = sorted[k];
            match (matched[k], anchor) {
                (Some(id), _) => anchor = Some((i, id)),
                (None, Some((a, id))) if is_copy(model, i, a, id, gap) => {
                    matched[k] = Some(id);
                    out.push((i, id));
                    anchor = Some((i, id));
                }
                // Another request's effect between an original and its copy leaves the
                // original the one to compare with.
                (None, _) => {}
            }
        }
    };
    pass(&mut (0..sorted.len()));
    pass(&mut (0..sorted.len()).rev());
}

/// Is effect `copy` a delivery copy of effect `original`, matched to attempt `id`?
fn is_copy(model: &Model, copy: usize, original: usize, id: AttemptId, gap: Duration) -> bool {
    let (c, o) = (&model.effects[copy], &model.effects[original]);
    let apart = if c.created >= o.created {
        c.created.since(o.created)
    } else {
        o.created.since(c.created)
    };
    let sent = model.attempt(id).at.minus(model.max_skew);
    apart <= gap && latest_instant(c.created, model.max_skew) >= sent && c.key == o.key
}

#[cfg(test)]
mod tests {
    use super::*;
    /// One call, its one attempt sent at 0.016 s and answered 201 naming `rf_1` at 0.7 s,
    /// then `rf_1` and `others` (id, created at, amount in pence, key) on its order.
    fn model(args: &str, others: &[(&str, f64, i64, Option<&str>)]) -> Model {
        let mut t = crate::rules::testkit::Trace::new();
        t.tool_call(0, "r", 4, "issue_refund", args)
            .attempt(16, "r", 4, 1, Some("k"))
            .created(700, "r", 4, "rf_1", false)
            .refund(100, "rf_1", "A-1", 4500, None);
        for &(id, secs, pence, key) in others {
            t.refund((secs * 1000.0) as i64, id, "A-1", pence, key);
        }
        t.model()
    }

    fn matched_by(m: &Model, id: &str) -> Option<MatchedBy> {
        m.effects.iter().find(|e| e.id == id).unwrap().matched_by
    }

    const ARGS: &str = r#"{"order":"A-1","amount_p":4500}"#;

    #[test]
    fn a_copy_just_after_the_answer_is_matched_to_the_attempt() {
        let m = model(ARGS, &[("rf_2", 3.2, 4500, None)]);
        assert_eq!(matched_by(&m, "rf_1"), Some(MatchedBy::EffectId));
        assert_eq!(matched_by(&m, "rf_2"), Some(MatchedBy::DeliveryCopy));
        assert_eq!(m.effects[1].matched, m.effects[0].matched);
    }

    #[test]
    fn a_copy_of_an_amount_the_arguments_do_not_show_is_matched_by_the_effects_amount() {
        // Asked in EUR, refunded in GBP: the arguments' amount matches neither effect.
        let eur = r#"{"order":"A-1","amount_minor":5200,"currency":"EUR"}"#;
        let m = model(eur, &[("rf_2", 0.3, 4500, None)]);
        assert_eq!(matched_by(&m, "rf_2"), Some(MatchedBy::DeliveryCopy));
    }

    #[test]
    fn later_repeats_other_amounts_and_other_keys_are_no_copies() {
        let gap = 2.0 + 5.0;
        let m = model(
            ARGS,
            &[
                ("rf_other_amount", 1.0, 2500, None),
                // After the answer (0.7 s) and the skew: matching by time takes it no more.
                ("rf_other_key", 3.5, 4500, Some("k2")),
                ("rf_later", 0.1 + gap + 0.2, 4500, None),
            ],
        );
        for id in ["rf_other_amount", "rf_other_key", "rf_later"] {
            assert_eq!(matched_by(&m, id), None, "{id}");
        }
        // A copy of a copy, each within the gap of the last, is one as well, past another
        // request's effect between them.
        let m = model(
            ARGS,
            &[
                ("rf_2", 6.0, 4500, None),
                ("rf_other_key", 8.0, 4500, Some("k2")),
                ("rf_3", 12.0, 4500, None),
            ],
        );
        assert_eq!(matched_by(&m, "rf_2"), Some(MatchedBy::DeliveryCopy));
        assert_eq!(matched_by(&m, "rf_other_key"), None);
        assert_eq!(matched_by(&m, "rf_3"), Some(MatchedBy::DeliveryCopy));
    }

    /// The service logs keys: a refund it logged with none beside one it logged with the
    /// attempt's key came from another, keyless, request.
    #[test]
    fn a_refund_without_the_key_its_original_was_logged_with_is_no_copy() {
        let mut t = crate::rules::testkit::Trace::new();
        t.tool_call(0, "r", 4, "issue_refund", ARGS)
            .attempt(16, "r", 4, 1, Some("k"))
            .created(700, "r", 4, "rf_1", false)
            .refund(100, "rf_1", "A-1", 4500, Some("k"))
            .refund(3_500, "rf_2", "A-1", 4500, None)
            .refund(4_000, "rf_3", "A-1", 4500, Some("k"));
        let m = t.model();
        assert_eq!(matched_by(&m, "rf_2"), None);
        // Under the attempt's key: matched by the key itself, before copies are looked for.
        assert_eq!(matched_by(&m, "rf_3"), Some(MatchedBy::Key));
    }

    #[test]
    fn a_copy_may_come_first_but_not_before_the_request() {
        // The service stamped the copy before the effect the answer named (a gateway
        // retried a request whose first answer was lost), after the request was sent: the
        // arguments' amount differs, so matching by time did not take it.
        let eur = r#"{"order":"A-1","amount_minor":5200,"currency":"EUR"}"#;
        let m = model(eur, &[("rf_0", 0.05, 4500, None)]);
        assert_eq!(matched_by(&m, "rf_0"), Some(MatchedBy::DeliveryCopy));
        // Made before the request could have reached the service (beyond the skew): not its.
        let mut t = crate::rules::testkit::Trace::new();
        t.refund(0, "rf_0", "A-1", 4500, None)
            .tool_call(3_000, "r", 4, "issue_refund", eur)
            .attempt(3_010, "r", 4, 1, None)
            .refund(3_100, "rf_1", "A-1", 4500, None)
            .created(3_700, "r", 4, "rf_1", false);
        assert_eq!(matched_by(&t.model(), "rf_0"), None);
    }

    #[test]
    fn an_effect_without_an_amount_is_no_copy() {
        let mut t = crate::rules::testkit::Trace::new();
        t.tool_call(0, "r", 4, "issue_refund", ARGS)
            .attempt(16, "r", 4, 1, None)
            .created(700, "r", 4, "rf_1", false)
            .refund(100, "rf_1", "A-1", 4500, None)
            .refund_unpriced(3_000, "rf_2", "A-1");
        assert_eq!(matched_by(&t.model(), "rf_2"), None);
    }
}
