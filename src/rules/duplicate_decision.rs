//! `duplicate-decision`: effects of one kind, order and amount from different logical calls
//! within the decision window: a planning defect, not a delivery one.

use super::support::{
    DELIVERY_SLACK, clusters, did, dispatch_evidence, disputed_values, effect_amount_text,
    excess_text, groups_by_key, set_effects, sort_by_creation, span_text,
};
use super::{Rule, Settings, Shared};
use crate::correlate::Model;
use crate::finding::{Finding, Severity};
use crate::time::Duration;
use std::collections::BTreeMap;

pub static RULE: Rule = Rule {
    id: "duplicate-decision",
    default_severity: Severity::Warning,
    default_enabled: true,
    summary: "two logical calls decided on the same effect (kind, order, amount) within the decision window",
    explanation: r#"## What it does
Finds effects of the same kind, order and amount that come from different logical calls
(two runs, or two steps of one run that are neither a resume nor a step retry), or from
untraced effects further apart than `--max-skew` plus a few seconds (closer, an untraced
effect is a delivery copy: of the call's effect it copies, else of the untraced one, and
`duplicate-effect` reports it; one under another key is a decision), created within
`--decision-window` (default 24h) of each other. One finding per cluster, listing the
first effect of each decision. Effects on one order further apart than the window are
legitimate repeats, and effects of different amounts are partial refunds: neither is
reported. Its excess is reported apart from delivery duplicates (`decision_excess`).

## Why is this bad
Idempotency keys protect against duplicate delivery, not duplicate decisions. When an agent
decides on a refund at 14:02 and another run decides on the same refund at 15:40, the keys
differ, both refunds are issued, and every system behaved as designed. The customer was
refunded twice all the same.

## How to fix
Give the agent state it must check before acting: a ledger of what has already been done
for the order (refunds issued, amounts, when), read before deciding and written under a
unique constraint with the effect.

## Example
```
14:02:11.402  agent run 7f3a  step 4  tool=issue_refund  args={"order":"A-88214","amount_p":4500}
15:40:05.118  agent run 9b21  step 3  tool=issue_refund  args={"order":"A-88214","amount_p":4500}
--- payments service ---
14:02:11.501  refund rf_8XM1  order A-88214  4500p  settled 14:02:22.884
15:40:05.230  refund rf_Q7P4  order A-88214  4500p  settled 15:40:16.002
```
Two runs refunded the same order the same amount 98 minutes apart.
"#,
    check,
};

/// Who decided on an effect: a client call's duplicate group and which of its deliberate
/// sendings of the request (`AttemptRec::generation`: one sent again after it succeeded is
/// another decision), or (for untraced effects) the first effect of its service-side
/// delivery group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Source {
    Call(usize, u16),
    Service(usize),
}

fn check(model: &Model, settings: &Settings, shared: &Shared, out: &mut Vec<Finding>) {
    let mut source: Vec<Source> = model
        .effects
        .iter()
        .enumerate()
        .map(|(i, e)| match e.matched {
            Some(m) => Source::Call(
                model.calls[model.dispatches[m.dispatch()].logical()].group(),
                model.attempt(m).generation,
            ),
            None => Source::Service(i),
        })
        .collect();
    for g in shared.service_only_groups() {
        let mut effects = g.effects.clone();
        sort_by_creation(model, &mut effects);
        let head = effects[0];
        effects
            .iter()
            .for_each(|&i| source[i] = Source::Service(head));
    }
    // Effects by (kind, order, amount): partial refunds of other amounts are other buckets.
    // An amount written as a bare whole number, its unit unknown, is compared by that
    // number: equal numbers are one amount, whichever the unit.
    let bucket = |i: usize| {
        let e = &model.effects[i];
        (e.kind.as_str(), e.order.as_deref(), e.amount_key())
    };
    let bucketed: Vec<usize> = (0..model.effects.len())
        .filter(|&i| {
            let e = &model.effects[i];
            e.happened && e.order.is_some() && e.amount_key().is_some()
        })
        .collect();
    let delivery_gap = Duration(settings.max_skew.0.saturating_add(DELIVERY_SLACK.0));
    // A bucket of one effect is one decision: only the others, in key order.
    for mut effects in groups_by_key(&bucketed, bucket) {
        sort_by_creation(model, &mut effects);
        let decisions = decisions(model, &effects, &mut source, delivery_gap);
        if decisions.len() < 2 {
            continue;
        }
        let (kind, order, _) = bucket(effects[0]);
        let order = order.unwrap_or_default();
        // Decisions each created within the window of the previous one, two or more.
        for cluster in clusters(model, &decisions, settings.decision_window) {
            out.push(finding(model, kind, order, &cluster, delivery_gap));
        }
    }
}

/// The first effect of each source in a bucket (sorted by creation), in creation order.
/// An untraced effect within the delivery gap of an earlier untraced decision is a delivery
/// copy of it, not a decision of its own. One within the gap of a call's effect that
/// correlation did not take as that call's delivery copy (it carries another key: another
/// request) is a decision: folded into the call's, it was reported by no rule.
fn decisions(
    model: &Model,
    sorted: &[usize],
    source: &mut [Source],
    delivery_gap: Duration,
) -> Vec<usize> {
    let mut seen: BTreeMap<Source, usize> = BTreeMap::new();
    let mut out: Vec<usize> = Vec::new();
    for &i in sorted {
        let src = source[i];
        if seen.contains_key(&src) {
            continue;
        }
        if matches!(src, Source::Service(_))
            && let Some(&prev) = out.last()
            && matches!(source[prev], Source::Service(_))
            && model.effects[i].created.since(model.effects[prev].created) <= delivery_gap
        {
            source[i] = source[prev];
            continue;
        }
        seen.insert(src, i);
        out.push(i);
    }
    out
}

/// `run 7f3a step 4`, or `an untraced call` for effects no client trace accounts for.
fn who(model: &Model, e: usize) -> String {
    match model.effects[e].matched {
        Some(m) => {
            let d = &model.dispatches[m.dispatch()];
            format!("run {} step {}", d.call.run, d.call.step)
        }
        None => "an untraced call".to_string(),
    }
}

fn finding(
    model: &Model,
    kind: &str,
    order: &str,
    cluster: &[usize],
    delivery_gap: Duration,
) -> Finding {
    let mut f = Finding::new(RULE.id, RULE.default_severity, String::new());
    f.order = Some(order.to_string());
    // The finding is about the first repeat: the decision that should not have been made.
    if let Some(m) = model.effects[cluster[1]].matched {
        let d = &model.dispatches[m.dispatch()];
        f.run = Some(d.call.run.to_string());
        f.step = Some(d.call.step);
        f.tool = Some(model.tool_of(d).to_string()).filter(|t| !t.is_empty());
    }
    for &e in cluster {
        if let Some(m) = model.effects[e].matched {
            dispatch_evidence(&model.dispatches[m.dispatch()], &mut f.evidence);
        }
    }
    set_effects(&mut f, model, cluster.to_vec());
    let first = &model.effects[cluster[0]];
    let did = did(kind);
    let mut text = format!(
        "{} {did} {} on order {order} ({} at {})",
        who(model, cluster[0]),
        effect_amount_text(first),
        first.id,
        first.created
    );
    let group_of = |e: usize| {
        let m = model.effects[e].matched?;
        Some(model.calls[model.dispatches[m.dispatch()].logical()].group())
    };
    for pair in cluster.windows(2) {
        let (prev, e) = (&model.effects[pair[0]], &model.effects[pair[1]]);
        let again = if group_of(pair[0]).is_some() && group_of(pair[0]) == group_of(pair[1]) {
            "the same call".to_string()
        } else if same_step(model, pair[0], pair[1]) {
            "the same step".to_string()
        } else {
            who(model, pair[1])
        };
        text.push_str(&format!(
            ", then {again} {did} the same amount again {} later ({})",
            span_text(e.created.since(prev.created)),
            e.id
        ));
    }
    // Only calls the trace shows deciding are known to be decisions: an untraced effect
    // may be a person's, another system's, or a retry nobody logged.
    let one_call = group_of(cluster[0]).is_some()
        && cluster.iter().all(|&e| group_of(e) == group_of(cluster[0]));
    let reading = if one_call {
        format!(
            "{} requests the call sent one after the other, each after the last succeeded: not a retry, so a second decision (a loop over items, or a planning defect)",
            cluster.len()
        )
    } else if let Some(apart) = one_step_calls_apart(model, cluster) {
        format!(
            "{} calls of one step, apart in {apart}: things of one price, or one {} asked for twice (a planning defect)",
            cluster.len(),
            kind
        )
    } else if cluster.iter().all(|&e| model.effects[e].matched.is_some()) {
        format!(
            "{} separate decisions, not a delivery retry, so a planning defect",
            cluster.len()
        )
    } else if let far @ 1.. = cluster
        .windows(2)
        .filter(|p| {
            let (a, b) = (&model.effects[p[0]], &model.effects[p[1]]);
            b.created.since(a.created) > delivery_gap
        })
        .count()
    {
        // Some close, some far: neither reading alone fits all of them.
        let apart = match far == cluster.len() - 1 {
            true => "too far apart to be one request delivered again",
            false => {
                "some too far apart to be one request delivered again, the others no copies of a traced request (made before it was sent, or under another key)"
            }
        };
        format!(
            "{} requests {apart}; no trace shows who made the untraced ones (another decision, a person, or a retry nobody logged)",
            cluster.len()
        )
    } else {
        // Close enough to be copies, but correlation took none for the traced request's:
        // made before that request was sent, or under another key.
        format!(
            "{} requests close together, but the untraced ones are no copies of a traced request (made before it was sent, or under another key); no trace shows who made them (another decision, a person, a retry nobody logged, or a run whose spans were lost, such as a worker killed before it exported them)",
            cluster.len()
        )
    };
    f.message = format!(
        "{text}: {reading}; check the order's ledger before deciding, excess {}{}",
        excess_text(&f, kind),
        disputed_values(model, cluster)
    );
    f
}

/// Were two effects made by dispatches of one run's one step?
fn same_step(model: &Model, a: usize, b: usize) -> bool {
    let call = |e: usize| {
        let m = model.effects[e].matched?;
        Some(&model.dispatches[m.dispatch()].call)
    };
    call(a).is_some_and(|c| Some(c) == call(b))
}

/// For a cluster made by one step's calls (a model turn asking for two refunds of one order
/// and one amount, parallel calls or one after the other), the arguments' top-level members
/// that tell the first two apart, with their values: `` `item` ("sku-1", "sku-2") ``. Two
/// line items of one price are no defect; the same refund asked for twice is, and the
/// members say which at a glance.
fn one_step_calls_apart(model: &Model, cluster: &[usize]) -> Option<String> {
    if !cluster.iter().all(|&e| same_step(model, cluster[0], e)) {
        return None;
    }
    let dispatch = |e: usize| Some(&model.dispatches[model.effects[e].matched?.dispatch()]);
    let (da, db) = (dispatch(cluster[0])?, dispatch(cluster[1])?);
    // Two tools of one step (`issue_refund` and `refund_order`) asking for one refund.
    let tools = (model.tool_of(da) != model.tool_of(db)).then(|| {
        format!(
            "the tool (`{}`, `{}`)",
            model.tool_of(da),
            model.tool_of(db)
        )
    });
    let (a, b) = (da.args().into_owned(), db.args().into_owned());
    let (serde_json::Value::Object(a), serde_json::Value::Object(b)) = (&a, &b) else {
        return tools;
    };
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    let shown = |v: Option<&serde_json::Value>| match v {
        None => "none".to_string(),
        Some(v) => {
            let text = v.to_string();
            match text.char_indices().nth(40) {
                Some((cut, _)) => format!("{}...", &text[..cut]),
                None => text,
            }
        }
    };
    let apart: Vec<String> = (tools.into_iter())
        .chain(
            (names.into_iter())
                // A key-like member differs between any two requests: it tells nothing.
                .filter(|n| a.get(*n) != b.get(*n) && !crate::canonical::is_key_field(n))
                .map(|n| format!("`{n}` ({}, {})", shown(a.get(n)), shown(b.get(n)))),
        )
        .collect();
    (!apart.is_empty()).then(|| apart.join(", "))
}

#[cfg(test)]
mod tests {
    use crate::rules::testkit::scenarios::two_runs;
    use crate::rules::testkit::{Trace, ids, t};
    use crate::rules::{Settings, run_all};
    use crate::time::Duration;

    #[test]
    fn two_runs_refunding_one_order_98_minutes_apart() {
        let tr = two_runs(0, 4500);
        let all = tr.findings();
        assert_eq!(all.len(), 1, "{all:#?}");
        let f = &all[0];
        assert_eq!(f.rule, "duplicate-decision");
        assert_eq!(ids(f), ["rf_8XM1", "rf_Q7P4"]);
        assert_eq!((f.run.as_deref(), f.step), (Some("9b21"), Some(3)));
        assert_eq!(f.excess_minor, Some(4500));
        for part in [
            "run 7f3a step 4",
            "run 9b21 step 3",
            "1 h 38 min later",
            "planning defect",
        ] {
            assert!(f.message.contains(part), "{part}: {}", f.message);
        }
    }

    /// Two parallel calls of one step refunding two items of one price: the message says
    /// it was one step and which arguments tell the calls apart; two runs' message names
    /// both runs and no arguments.
    #[test]
    fn one_steps_calls_are_told_apart_by_their_arguments() {
        let mut tr = Trace::default();
        let item = |sku: &str| format!(r#"{{"order":"Q-7","amount_p":1000,"item":"{sku}"}}"#);
        tr.tool_call(t(0, "15:30:00"), "q2", 2, "issue_refund", &item("sku-1"))
            .tool_call(
                t(0, "15:30:00.001"),
                "q2",
                2,
                "issue_refund",
                &item("sku-2"),
            )
            .attempt(t(0, "15:30:00.010"), "q2", 2, 1, None)
            .attempt(t(0, "15:30:00.011"), "q2", 2, 1, None)
            .refund(t(0, "15:30:00.500"), "rf_Q71", "Q-7", 1000, None)
            .refund(t(0, "15:30:00.501"), "rf_Q72", "Q-7", 1000, None)
            .created(t(0, "15:30:01"), "q2", 2, "rf_Q71", false)
            .created(t(0, "15:30:01.001"), "q2", 2, "rf_Q72", false);
        let found = tr.of("duplicate-decision");
        assert_eq!(found.len(), 1, "{found:#?}");
        let message = &found[0].message;
        for part in [
            "run q2 step 2 refunded",
            "then the same step refunded",
            "2 calls of one step",
            r#"`item` ("sku-1", "sku-2")"#,
        ] {
            assert!(message.contains(part), "{part}: {message}");
        }
        assert!(!message.contains("amount_p"), "{message}");
        // Two tools of one step with the same arguments: the tools are what differs.
        let mut tools = Trace::default();
        let args = r#"{"order":"Q-8","amount_p":1000}"#;
        tools
            .tool_call(t(0, "15:30:00"), "q3", 2, "issue_refund", args)
            .attempt(t(0, "15:30:00.010"), "q3", 2, 1, None)
            .refund(t(0, "15:30:00.500"), "rf_1", "Q-8", 1000, None)
            .created(t(0, "15:30:01"), "q3", 2, "rf_1", false)
            .tool_call(t(0, "15:30:05"), "q3", 2, "refund_order", args)
            .attempt(t(0, "15:30:05.010"), "q3", 2, 1, None)
            .refund(t(0, "15:30:05.500"), "rf_2", "Q-8", 1000, None)
            .created(t(0, "15:30:06"), "q3", 2, "rf_2", false);
        let found = tools.of("duplicate-decision");
        let message = &found[0].message;
        assert!(
            message.contains("apart in the tool (`issue_refund`, `refund_order`)"),
            "{message}"
        );
        let two_runs = two_runs(0, 4500).of("duplicate-decision");
        let message = &two_runs[0].message;
        assert!(!message.contains("the same step"), "{message}");
        assert!(!message.contains("arguments apart"), "{message}");
    }

    /// An untraced refund three seconds before a traced call's (a worker killed before it
    /// exported its spans, then the step run again): close enough to be a copy, so the
    /// message does not call them too far apart, but says why neither is the other's copy.
    #[test]
    fn an_untraced_effect_just_before_a_traced_request_is_not_called_far_apart() {
        let mut tr = Trace::default();
        tr.refund(t(0, "15:59:59"), "rf_1", "E-5", 3000, None)
            .tool_call(
                t(0, "16:00:02"),
                "w2",
                2,
                "issue_refund",
                r#"{"order":"E-5","amount_p":3000}"#,
            )
            .attempt(t(0, "16:00:02.010"), "w2", 2, 1, None)
            .refund(t(0, "16:00:02.100"), "rf_2", "E-5", 3000, None)
            .created(t(0, "16:00:02.200"), "w2", 2, "rf_2", false);
        let found = tr.of("duplicate-decision");
        assert_eq!(found.len(), 1, "{found:#?}");
        let message = &found[0].message;
        assert!(message.contains("close together"), "{message}");
        assert!(message.contains("spans were lost"), "{message}");
        assert!(!message.contains("too far apart"), "{message}");
        // And one more untraced four hours on: some too far apart, the others no copies.
        tr.refund(t(0, "20:00:00"), "rf_3", "E-5", 3000, None);
        let found = tr.of("duplicate-decision");
        assert_eq!(ids(&found[0]), ["rf_1", "rf_2", "rf_3"]);
        let message = &found[0].message;
        assert!(
            message.contains("3 requests some too far apart"),
            "{message}"
        );
        assert!(message.contains("the others no copies"), "{message}");
    }

    #[test]
    fn repeats_beyond_the_window_and_partial_refunds_are_legitimate() {
        assert_eq!(two_runs(30, 4500).findings(), vec![]);
        assert_eq!(two_runs(0, 1500).findings(), vec![]);
        // The next day, 25 h 38 min later: outside the default 24 h window, inside a 2 d one.
        assert_eq!(two_runs(1, 4500).findings(), vec![]);
        let wide = Settings {
            decision_window: Duration::from_secs(2 * 86_400),
            ..Settings::default()
        };
        let found = run_all(&two_runs(1, 4500).model(), &wide);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0].message.contains("1 d 2 h later"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn three_decisions_in_a_day_are_one_cluster() {
        let mut tr = two_runs(0, 4500);
        tr.tool_call(
            t(0, "20:00:00"),
            "c3",
            1,
            "issue_refund",
            r#"{"order":"A-88214","amount_p":4500}"#,
        )
        .attempt(t(0, "20:00:00.010"), "c3", 1, 1, Some("kc"))
        .refund(t(0, "20:00:00.100"), "rf_C", "A-88214", 4500, Some("kc"))
        .created(t(0, "20:00:00.200"), "c3", 1, "rf_C", false);
        let found = tr.of("duplicate-decision");
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(ids(&found[0]), ["rf_8XM1", "rf_Q7P4", "rf_C"]);
        assert_eq!(found[0].excess_minor, Some(9000));
    }

    #[test]
    fn untraced_effects_apart_are_decisions_and_close_together_a_delivery_duplicate() {
        let mut tr = Trace::default();
        tr.refund(t(0, "09:00:00"), "rf_1", "B-1", 2000, None)
            .refund(t(0, "09:01:00"), "rf_2", "B-1", 2000, None)
            .refund(t(0, "09:01:03"), "rf_3", "B-1", 2000, None);
        let decision = tr.of("duplicate-decision");
        assert_eq!(decision.len(), 1, "{decision:#?}");
        // rf_3 is a delivery copy of rf_2, not a third decision.
        assert_eq!(ids(&decision[0]), ["rf_1", "rf_2"]);
        assert_eq!(decision[0].excess_minor, Some(2000));
        let message = &decision[0].message;
        assert!(message.contains("an untraced call"), "{message}");
        // No trace shows a decision: the message does not say there were two.
        assert!(!message.contains("planning defect"), "{message}");
        assert!(message.contains("no trace shows who made"), "{message}");
        let delivery = tr.of("duplicate-effect");
        assert_eq!(delivery.len(), 1, "{delivery:#?}");
        assert_eq!(ids(&delivery[0]), ["rf_2", "rf_3"]);
    }

    #[test]
    fn two_steps_of_one_run_are_two_decisions_but_a_delivery_duplicate_is_not() {
        let mut tr = Trace::default();
        let args = r#"{"order":"A-1","amount_p":700}"#;
        tr.tool_call(t(0, "09:00:00"), "r", 2, "issue_refund", args)
            .attempt(t(0, "09:00:00.010"), "r", 2, 1, None)
            .refund(t(0, "09:00:00.100"), "rf_1", "A-1", 700, None)
            .refund(t(0, "09:00:00.300"), "rf_1b", "A-1", 700, None)
            .created(t(0, "09:00:00.400"), "r", 2, "rf_1b", false)
            .tool_call(t(0, "09:30:00"), "r", 6, "issue_refund", args)
            .attempt(t(0, "09:30:00.010"), "r", 6, 1, None)
            .refund(t(0, "09:30:00.100"), "rf_2", "A-1", 700, None)
            .created(t(0, "09:30:00.400"), "r", 6, "rf_2", false);
        let decision = tr.of("duplicate-decision");
        assert_eq!(decision.len(), 1, "{decision:#?}");
        // One decision per call: rf_1b is step 2's gateway duplicate, counted there.
        assert_eq!(ids(&decision[0]), ["rf_1", "rf_2"]);
        assert_eq!(decision[0].excess_minor, Some(700));
        let delivery = tr.of("duplicate-effect");
        assert_eq!(delivery.len(), 1);
        assert_eq!(delivery[0].step, Some(2));
    }

    /// A traced refund, and an untraced one of the same order and amount `later`, with the
    /// keys the service logged on each.
    fn traced_then_untraced(later: &str, keys: [Option<&str>; 2]) -> Trace {
        let mut tr = Trace::default();
        let args = r#"{"order":"A-1","amount_p":700}"#;
        tr.tool_call(t(0, "09:00:00"), "r", 2, "issue_refund", args)
            .attempt(t(0, "09:00:00.010"), "r", 2, 1, Some("k1"))
            .refund(t(0, "09:00:00.100"), "rf_1", "A-1", 700, keys[0])
            .created(t(0, "09:00:00.400"), "r", 2, "rf_1", false)
            .step_end(t(0, "09:00:00.410"), "r", 2, None)
            .refund(t(0, later), "rf_2", "A-1", 700, keys[1]);
        tr
    }

    #[test]
    fn an_untraced_refund_close_to_a_traced_one_is_its_copy_unless_another_request() {
        // Its copy (the service logs no keys): the call's delivery duplicate, no decision.
        let tr = traced_then_untraced("09:00:03.500", [None, None]);
        assert_eq!(tr.of("duplicate-decision"), vec![]);
        assert_eq!(tr.of("duplicate-effect").len(), 1);
        // Another key, or none where the service logged the call's: another request, a
        // second decision 3.4 s later. Taken for a delivery copy of rf_1 here while no rule
        // reported it, it was lost.
        for keys in [[None, Some("k2")], [Some("k1"), None]] {
            let tr = traced_then_untraced("09:00:03.500", keys);
            assert_eq!(tr.of("duplicate-effect"), vec![], "{keys:?}");
            let found = tr.of("duplicate-decision");
            assert_eq!(found.len(), 1, "{found:#?}");
            assert_eq!(ids(&found[0]), ["rf_1", "rf_2"]);
            assert_eq!(found[0].excess_minor, Some(700));
        }
        // Further apart than the delivery gap: a decision.
        let found = traced_then_untraced("09:00:30", [None, None]).of("duplicate-decision");
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0].message.contains("then an untraced call refunded"),
            "{}",
            found[0].message
        );
    }
}
