//! Effects matched by time alone to requests logged with no tool call above them (an HTTP
//! client's own lines in a framework's log that names no tool call: see the text reader's
//! anonymous calls), or under a tool call whose arguments no line gave (a Celery task). Such a request names no order: the effect is the latest request's of
//! its kind sent by the time it was created, as by order and time, and a request whose
//! answer came first is passed over. When another log's request was in flight then too
//! (agents side by side), the effect is matched to none; within one log, the latest may
//! still be another call's: a tool call naming the order settles it.

use super::matching::{attempt_fits, names_another_effect};
use super::*;
use crate::time::{Duration, Timestamp};
use rustc_hash::{FxHashMap, FxHashSet};

/// How long before its failure a request no line logged may have been sent: its client's
/// timeout, unknown here.
const UNLOGGED_SENT_WITHIN: Duration = Duration(60 * 1_000_000_000);

/// The attempts of dispatches with no tool call and no order, by kind and the earliest
/// time each may have been sent.
pub(super) struct TimeIndex(Vec<(Text, Timestamp, AttemptId)>);

impl TimeIndex {
    pub(super) fn new(model: &Model) -> Self {
        // Dispatches first: nearly every one has its tool call, and its attempts are not
        // looked at.
        let mut list: Vec<(Text, Timestamp, AttemptId)> = Vec::new();
        // A log that records effects is a service's: its own requests (to an acquirer, a
        // webhook) made none of them. Found only when there is an untraced dispatch.
        let mut services: Option<Vec<u32>> = None;
        for (i, d) in model.dispatches.iter().enumerate() {
            // No tool call, or one whose arguments no line gave (a Celery task's
            // `received`): no order to match by.
            let (None, Some(kind)) = (&d.order, &d.effect_kind) else {
                continue;
            };
            if d.at.is_some() && !d.args_null {
                continue;
            }
            let services = services.get_or_insert_with(|| {
                let mut logs: Vec<u32> = (model.effects.iter())
                    .flat_map(|e| e.locs.iter().map(|l| model.log_of(l.input)))
                    .collect();
                logs.sort_unstable();
                logs.dedup();
                logs
            });
            for (j, a) in d.attempts.iter().enumerate() {
                let log = model.log_of(a.loc.input);
                if !a.may_cause_effects() || services.binary_search(&log).is_ok() {
                    continue;
                }
                // A request no line logged was sent after its tool call, if one was read.
                let sent = match a.method {
                    Some(_) => a.at,
                    None => Timestamp(a.at.0.saturating_sub(UNLOGGED_SENT_WITHIN.0))
                        .max(d.at.unwrap_or(Timestamp(i64::MIN))),
                };
                list.push((kind.clone(), sent, AttemptId::new(i, j)));
            }
        }
        list.sort_unstable_by(|a, b| (a.0.as_str(), a.1, a.2).cmp(&(b.0.as_str(), b.1, b.2)));
        TimeIndex(list)
    }

    /// The latest attempt of `e`'s kind that may have been sent by `e`'s creation (else by
    /// it and the clocks' skew) and fits it, as matching by order and time chooses; whatever
    /// else was in flight then.
    pub(super) fn latest(&self, model: &Model, e: &EffectRec) -> Option<AttemptId> {
        let created = super::matching::latest_instant(e.created, model.max_skew);
        (self.latest_by(model, e, created))
            .or_else(|| self.latest_by(model, e, e.created.plus(model.max_skew)))
    }

    /// The latest attempt of `e`'s kind sent by `e`'s creation (a time written to the
    /// second standing for an instant in it, as by order and time) that fits it; none sent
    /// after it, within the clocks' skew.
    pub(super) fn sent_by_creation(&self, model: &Model, e: &EffectRec) -> Option<AttemptId> {
        let created = super::matching::latest_instant(e.created, model.max_skew);
        self.latest_by(model, e, created)
    }

    fn latest_by(&self, model: &Model, e: &EffectRec, limit: Timestamp) -> Option<AttemptId> {
        let kind = e.kind.as_str();
        let start = self.0.partition_point(|(k, _, _)| k.as_str() < kind);
        let end = self
            .0
            .partition_point(|(k, at, _)| (k.as_str(), *at) <= (kind, limit));
        // An attempt whose answer named another effect made that one: an earlier one still
        // open made this, if any did; else the latest (a gateway's copy of its request).
        let mut claimed = None;
        for id in (self.0[start..end].iter().rev()).map(|&(_, _, id)| id) {
            if !attempt_fits(model, id, e) {
                continue;
            }
            if !names_another_effect(model, id, e) {
                return Some(id);
            }
            claimed.get_or_insert(id);
        }
        claimed
    }

    /// [`Self::latest`], unless another log's request fits the effect as well; then none,
    /// and the two that could each have made it.
    pub(super) fn get(&self, model: &Model, e: &EffectRec) -> Result<Option<AttemptId>, Rivals> {
        let Some(chosen) = self.latest(model, e) else {
            return Ok(None);
        };
        let kind = e.kind.as_str();
        let start = self.0.partition_point(|(k, _, _)| k.as_str() < kind);
        // Another log's request in flight then too (agents side by side, each logging no
        // tool call): which made the effect is not known, unless its answer named another
        // effect (while the chosen one's did not): it made that one.
        // A rotated log's files are one log: its requests one after another.
        let log = model.log_of(model.attempt(chosen).loc.input);
        let chosen_claimed = names_another_effect(model, chosen, e);
        let limit = e.created.plus(model.max_skew);
        let earliest = Timestamp(
            e.created
                .0
                .saturating_sub(LATE_EFFECT_HORIZON.0 + UNLOGGED_SENT_WITHIN.0),
        );
        let end = self
            .0
            .partition_point(|(k, at, _)| (k.as_str(), *at) <= (kind, limit));
        let mut rivals = (self.0[start..end].iter().rev())
            .take_while(|(_, at, _)| *at >= earliest)
            .map(|&(_, _, id)| id)
            .filter(|&id| {
                model.log_of(model.attempt(id).loc.input) != log
                    && attempt_fits(model, id, e)
                    && (chosen_claimed || !names_another_effect(model, id, e))
            });
        match rivals.next() {
            None => Ok(Some(chosen)),
            Some(other) => Err(Rivals {
                chosen,
                other,
                more: rivals.count() as u32,
            }),
        }
    }
}

/// Requests of two logs that could each have made an effect matched by time alone, and
/// nothing on their lines telling which: the effect is matched to neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rivals {
    /// The latest request sent by the effect's creation, which one log alone would have
    /// been given it.
    pub chosen: AttemptId,
    /// A request of another log in flight then too, and how many more were.
    pub other: AttemptId,
    pub more: u32,
}

/// An effect left unmatched because requests of two logs could each have made it
/// ([`Rivals`]): said as a warning on its line, not dropped unsaid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnsettledEffect {
    /// Its index in [`Model::effects`].
    pub effect: u32,
    pub rivals: Rivals,
}

/// Effects matched by time alone, each to an attempt, moved where a call's order says:
/// one call refunds one order, so where a call (its dispatches together) took effects of
/// several orders and another call in flight then took only effects of one of them, an
/// effect of that order goes to that call's latest-sent attempt that fits it and had made
/// none (one request, one refund: a second effect of the order stays where it was). Two
/// Celery tasks running at once, neither naming its order, each take their own refunds.
/// Only matches by order and time to calls this index holds are moved or learned from: an
/// effect an answer named, or a key, stays where it is.
pub(super) fn one_order_per_call(
    model: &Model,
    index: &TimeIndex,
    matches: &mut [Option<(AttemptId, MatchedBy)>],
) {
    // Nearly every month has no call that names no order: nothing to read then.
    if index.0.is_empty() {
        return;
    }
    let indexed: FxHashSet<AttemptId> = index.0.iter().map(|&(_, _, id)| id).collect();
    let by_time = |found: &Option<(AttemptId, MatchedBy)>| match found {
        Some((id, MatchedBy::OrderAndTime)) if indexed.contains(id) => Some(*id),
        _ => None,
    };
    let logical = |id: AttemptId| model.dispatches[id.dispatch()].logical();
    let mut orders: FxHashMap<usize, Vec<&str>> = FxHashMap::default();
    for (e, found) in model.effects.iter().zip(matches.iter()) {
        if let (Some(id), Some(order)) = (by_time(found), e.order.as_deref()) {
            let seen = orders.entry(logical(id)).or_default();
            if !seen.contains(&order) {
                seen.push(order);
            }
        }
    }
    if orders.values().all(|o| o.len() < 2) {
        return;
    }
    // Attempts that account for an effect already, however matched.
    let mut made: FxHashSet<AttemptId> = matches.iter().flatten().map(|&(id, _)| id).collect();
    let only = |call: usize, order: &str| orders.get(&call).is_some_and(|o| o == &[order]);
    for (e, found) in model.effects.iter().zip(matches.iter_mut()) {
        let (Some(id), Some(order)) = (by_time(found), e.order.as_deref()) else {
            continue;
        };
        if orders.get(&logical(id)).is_none_or(|o| o.len() < 2) {
            continue;
        }
        let kind = e.kind.as_str();
        let start = index.0.partition_point(|(k, _, _)| k.as_str() < kind);
        let limit = super::matching::latest_instant(e.created, model.max_skew);
        let end = (index.0).partition_point(|(k, at, _)| (k.as_str(), *at) <= (kind, limit));
        let other = (index.0[start..end].iter().rev())
            .map(|&(_, _, other)| other)
            .find(|&other| {
                !made.contains(&other)
                    && only(logical(other), order)
                    && attempt_fits(model, other, e)
            });
        if let Some(other) = other {
            made.insert(other);
            *found = Some((other, MatchedBy::OrderAndTime));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::correlate::{CorrelateOptions, Model};
    use crate::rules::testkit::Trace;

    const REFUNDS: &str = "https://payments.internal/v1/refunds";

    /// Which attempt (`run #step attempt`) each effect was matched to, in effect order.
    fn matched(t: &Trace) -> Vec<Option<String>> {
        matched_in(&t.model())
    }

    fn matched_in(m: &Model) -> Vec<Option<String>> {
        (m.effects.iter())
            .map(|e| {
                e.matched.map(|id| {
                    let d = &m.dispatches[id.dispatch()];
                    format!("{} #{} {}", d.call.run, d.call.step, m.attempt(id).number)
                })
            })
            .collect()
    }

    #[test]
    fn requests_of_no_tool_call_take_the_effects_made_while_they_were_in_flight() {
        let mut t = Trace::new();
        // No tool call: a failure (its request unlogged), the retry, then another call.
        t.failure(1_000, "?0", 1, "ReadTimeout", "timed out")
            .request(1_010, "?0", 1, 2, "POST", REFUNDS)
            .response(1_200, "?0", 1, 201, "Created")
            .request(1_300, "?0", 2, 1, "POST", REFUNDS)
            .response(1_400, "?0", 2, 201, "Created")
            .refund(600, "rf_1", "A-1", 4500, None)
            .in_input(5)
            .refund(1_150, "rf_2", "A-1", 4500, None)
            .in_input(5)
            .refund(1_350, "rf_3", "A-2", 1250, None)
            .in_input(5);
        assert_eq!(
            matched(&t),
            [
                Some("?0 #1 1".into()),
                Some("?0 #1 2".into()),
                Some("?0 #2 1".into())
            ]
        );
    }

    /// Two Celery tasks in flight at once, neither naming its order: A's first request
    /// (unlogged) timed out, B's was answered, then A ran again. A request logged only with
    /// its answer (httpx) is placed at its task's start, the earliest it can have been sent.
    fn two_tasks(with_as_retry: bool) -> Trace {
        let mut t = Trace::new();
        t.tool_call(16_212, "A", 1, "issue_refund", "null")
            .tool_call(16_213, "B", 1, "issue_refund", "null")
            .request(16_213, "B", 1, 1, "POST", REFUNDS)
            .response(16_276, "B", 1, 201, "Created")
            .failure(17_278, "A", 1, "ReadTimeout", "timed out")
            .refund(16_265, "rf_1", "A-1", 4500, None)
            .in_input(5)
            .refund(16_275, "rf_2", "A-2", 4500, None)
            .in_input(5);
        if with_as_retry {
            t.tool_call(18_216, "A", 1, "issue_refund", "null")
                .request(18_216, "A", 1, 1, "POST", REFUNDS)
                .response(19_293, "A", 1, 201, "Created")
                .refund(19_292, "rf_3", "A-1", 4500, None)
                .in_input(5);
        }
        t
    }

    #[test]
    fn a_call_that_took_effects_of_two_orders_gives_one_to_the_call_of_that_order() {
        // By time alone B's answered request took both early refunds; A's retry made an
        // A-1 refund only, so A-1's early refund is A's timed-out request's.
        assert_eq!(
            matched(&two_tasks(true)),
            [
                Some("A #1 1".into()),
                Some("B #1 1".into()),
                Some("A #1 1".into())
            ]
        );
    }

    #[test]
    fn with_no_call_of_one_order_the_effects_stay_where_time_put_them() {
        // A made no refund of its own: nothing says which order it was for.
        assert_eq!(
            matched(&two_tasks(false)),
            [Some("B #1 1".into()), Some("B #1 1".into())]
        );
    }

    #[test]
    fn one_timed_out_request_takes_one_refund_of_its_order() {
        // X timed out (its request unlogged), ran again and refunded A-1; Y and Z were
        // answered. By time Z's request took the three early refunds.
        let mut t = Trace::new();
        t.tool_call(16_000, "X", 1, "issue_refund", "null")
            .tool_call(16_001, "Y", 1, "issue_refund", "null")
            .request(16_001, "Y", 1, 1, "POST", REFUNDS)
            .response(16_300, "Y", 1, 201, "Created")
            .tool_call(16_002, "Z", 1, "issue_refund", "null")
            .request(16_002, "Z", 1, 1, "POST", REFUNDS)
            .response(16_400, "Z", 1, 201, "Created")
            .failure(17_000, "X", 1, "ReadTimeout", "timed out")
            .tool_call(18_000, "X", 1, "issue_refund", "null")
            .request(18_000, "X", 1, 1, "POST", REFUNDS)
            .response(18_500, "X", 1, 201, "Created");
        for (ms, id, order) in [
            (16_100, "re_1", "A-1"),
            (16_200, "re_2", "A-2"),
            (16_350, "re_3", "A-1"),
            (18_400, "re_4", "A-1"),
        ] {
            t.refund(ms, id, order, 4500, None).in_input(5);
        }
        // re_1 goes to X's timed-out request; re_3 cannot go there too.
        let m = matched(&t);
        assert_eq!(m[0].as_deref(), Some("X #1 1"));
        assert_eq!(m[2].as_deref(), Some("Z #1 1"));
        assert_eq!(m[3].as_deref(), Some("X #1 1"));
    }

    #[test]
    fn effects_an_answer_named_are_neither_moved_nor_learned_from() {
        // Batch call X's answers named refunds of two orders; task Y made an A-1 refund by
        // time, and was in flight when X's A-1 refund was made.
        let mut t = Trace::new();
        t.tool_call(16_000, "X", 1, "issue_refund", r#"{"batch":"b1"}"#)
            .request(16_001, "X", 1, 1, "POST", REFUNDS)
            .created(16_100, "X", 1, "re_1", false)
            .request(16_200, "X", 1, 2, "POST", REFUNDS)
            .created(16_300, "X", 1, "re_2", false)
            .tool_call(16_002, "Y", 1, "issue_refund", "null")
            .request(16_002, "Y", 1, 1, "POST", REFUNDS)
            .failure(16_060, "Y", 1, "ReadTimeout", "timed out")
            .request(16_400, "Y", 1, 2, "POST", REFUNDS)
            .response(16_500, "Y", 1, 201, "Created")
            .refund(16_050, "re_1", "A-1", 4500, None)
            .in_input(5)
            .refund(16_250, "re_2", "A-2", 4500, None)
            .in_input(5)
            .refund(16_450, "re_3", "A-1", 4500, None)
            .in_input(5);
        assert_eq!(
            matched(&t),
            [
                Some("X #1 1".into()),
                Some("X #1 2".into()),
                Some("Y #1 2".into())
            ]
        );
    }

    /// A settlement written to the second (`10:02:49`) by a request sent at 49.197: the
    /// second stands for an instant in it, so the retry sent in it made the refund, not the
    /// attempt before it.
    #[test]
    fn a_refund_timed_to_the_second_is_the_attempt_sent_in_that_second() {
        let mut t = Trace::new();
        t.request(47_690, "?0", 1, 1, "POST", REFUNDS)
            .failure(48_696, "?0", 1, "ReadTimeout", "timed out")
            .request(49_197, "?0", 1, 2, "POST", REFUNDS)
            .response(49_300, "?0", 1, 201, "Created")
            .refund(48_000, "rf_1", "A-1", 4500, None)
            .in_input(5)
            .refund(49_000, "rf_2", "A-1", 4500, None)
            .in_input(5);
        assert_eq!(
            matched(&t),
            [Some("?0 #1 1".into()), Some("?0 #1 2".into())]
        );
    }

    /// A call of order A-1 timed out (its effect may still land), and a call whose order is
    /// unknown (no arguments traced) sent a request later, just before the refund: the later
    /// request is the likelier maker; sent before the timed-out one, or after the refund
    /// was created, it is not.
    #[test]
    fn an_unordered_calls_later_request_wins_over_an_older_open_one_of_the_order() {
        let trace = |unordered_at: i64| {
            let mut t = Trace::new();
            t.tool_call(1_000, "r1", 1, "issue_refund", r#"{"order":"A-1"}"#)
                .attempt(1_010, "r1", 1, 1, None)
                .timeout(2_010, "r1", 1)
                .step_end(2_020, "r1", 1, Some("timed out"))
                .tool_call(unordered_at, "r2", 1, "issue_refund", "null")
                .in_input(1)
                .attempt(unordered_at + 10, "r2", 1, 1, None)
                .in_input(1)
                // Timed out too: open as long as the other.
                .timeout(unordered_at + 1_010, "r2", 1)
                .in_input(1)
                .refund(20_050, "rf_1", "A-1", 4500, None)
                .in_input(5);
            t
        };
        assert_eq!(matched(&trace(19_000)), [Some("r2 #1 1".into())]);
        assert_eq!(matched(&trace(500)), [Some("r1 #1 1".into())]);
        // Sent after the refund was created, if within the clocks' skew: not its maker.
        assert_eq!(matched(&trace(20_060)), [Some("r1 #1 1".into())]);
    }

    #[test]
    fn requests_of_two_logs_in_flight_at_once_take_no_effect() {
        let mut t = Trace::new();
        t.request(1_000, "?a", 1, 1, "POST", REFUNDS)
            .response(1_200, "?a", 1, 201, "Created")
            .refund(1_100, "rf_1", "A-1", 4500, None)
            .in_input(5);
        let mut other = t.clone();
        other
            .request(1_050, "?b", 1, 1, "POST", REFUNDS)
            .in_input(1);
        other.response(1_250, "?b", 1, 201, "Created").in_input(1);
        assert_eq!(matched(&t), [Some("?a #1 1".into())]);
        assert_eq!(matched(&other), [None]);
        // Inputs 0 and 1 the files of one rotated log: one log's requests, the latest
        // sent takes the effect.
        let rotated = CorrelateOptions {
            logs: vec![0, 0, 2, 3, 4, 5],
            ..CorrelateOptions::default()
        };
        assert_eq!(
            matched_in(&other.model_with(&rotated)),
            [Some("?b #1 1".into())]
        );
    }

    /// Two agents' logs, each only its HTTP client's lines: A's request timed out (its
    /// line unlogged), B's was answered. Which made rf_1 is told only when B's answer named
    /// its own refund; else rf_1 is matched to none, and said.
    #[test]
    fn another_logs_request_whose_answer_named_another_effect_is_no_rival() {
        let two_agents = |b_named: bool| {
            let mut t = Trace::new();
            t.failure(2_000, "?a", 1, "ReadTimeout", "timed out")
                .request(2_250, "?a", 1, 2, "POST", REFUNDS)
                .created(2_400, "?a", 1, "rf_3", false);
            t.request(1_150, "?b", 1, 1, "POST", REFUNDS).in_input(1);
            if b_named {
                t.created(1_250, "?b", 1, "rf_2", false).in_input(1);
            } else {
                t.response(1_250, "?b", 1, 201, "Created").in_input(1);
            }
            // rf_3 of another amount: no delivery copy of rf_1.
            for (ms, id, amount) in [
                (1_100, "rf_1", 4500),
                (1_200, "rf_2", 4500),
                (2_350, "rf_3", 1250),
            ] {
                t.refund(ms, id, "A-1", amount, None).in_input(5);
            }
            t.model()
        };
        let named = two_agents(true);
        assert_eq!(
            matched_in(&named),
            [
                Some("?a #1 1".into()),
                Some("?b #1 1".into()),
                Some("?a #1 2".into())
            ]
        );
        assert!(named.unsettled_effects.is_empty());
        let untold = two_agents(false);
        assert_eq!(matched_in(&untold)[..2], [None, None]);
        let input = |id| untold.attempt(id).loc.input;
        let unsettled: Vec<_> = (untold.unsettled_effects.iter())
            .map(|u| (u.effect, input(u.rivals.chosen) + input(u.rivals.other)))
            .collect();
        // rf_3 was named by A's answer; rf_1 and rf_2 each had both logs' requests open.
        assert_eq!(unsettled, [(0, 1), (1, 1)]);
    }

    #[test]
    fn a_services_own_requests_take_none_of_its_effects() {
        let mut t = Trace::new();
        // The service's request to its acquirer, logged beside its own refund.
        t.request(1_000, "?s", 1, 1, "POST", REFUNDS)
            .in_input(5)
            .response(1_200, "?s", 1, 201, "Created")
            .in_input(5)
            .refund(1_100, "rf_1", "A-1", 4500, None)
            .in_input(5);
        assert_eq!(matched(&t), [None]);
    }

    #[test]
    fn a_traced_call_is_never_matched_by_time_alone() {
        let mut t = Trace::new();
        // The tool call names order A-1: a refund of order B-9 is none of its.
        t.tool_call(
            0,
            "r",
            1,
            "issue_refund",
            r#"{"order":"A-1","amount_p":4500}"#,
        )
        .attempt(10, "r", 1, 1, None)
        .response(200, "r", 1, 201, "Created")
        .refund(100, "rf_9", "B-9", 4500, None)
        .in_input(5);
        assert_eq!(matched(&t), [None]);
    }
}
