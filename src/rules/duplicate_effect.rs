//! `duplicate-effect`: one logical call (or one key) produced two or more effects.

use super::support::{
    amount_text, did, dispatch_evidence, ended_ambiguous, how_it_ended, set_effects, settled_text,
};
use super::{Rule, Settings};
use crate::correlate::Model;
use crate::finding::{Cause, Finding, Severity};
use crate::time::Duration;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

pub static RULE: Rule = Rule {
    id: "duplicate-effect",
    default_severity: Severity::Error,
    default_enabled: true,
    summary: "one logical call (or one key) produced two or more effects",
    explanation: r#"## What it does
Finds logical calls (run, step, tool, canonical arguments) that the service performed more
than once: two or more effects of the same kind matched to the attempts of one call, or
carrying one idempotency key. Effects that no client trace covers are also reported when two
of the same kind, order and amount were created within `--max-skew` plus a few seconds.

Each finding carries a cause, a property of the call:
- `resume`: effects on both sides of a resume of the run;
- `step-retry`: the framework dispatched the same step twice in one segment of the run;
- `client-retry`: the call was retried after an ambiguous failure (timeout, reset, 502...);
- `gateway-retry`: the call sent one attempt only, so something between client and service
  replayed it;
- `unknown`: no client trace covers the effects.

## Why is this bad
Every effect beyond the first is money paid out twice. Its excess (the sum of the effects
beyond the first) is what finance has to recover.

## How to fix
Derive an idempotency key from what stays constant across attempts (run, step, tool and
canonical arguments), compute it once outside the retry loop, send it as `Idempotency-Key`,
and make the service enforce it (a unique record inserted before the effect).

## Example
```
14:02:11.418  POST https://payments.internal/v1/refunds  (attempt 1)
14:02:21.418  urllib3.exceptions.ReadTimeoutError: read timeout=10
14:02:21.930  POST https://payments.internal/v1/refunds  (attempt 2)
--- payments service, same window ---
14:02:11.501  refund rf_8XM1  order A-88214  4500p  settled 14:02:22.884
14:02:23.088  refund rf_9KQ2  order A-88214  4500p  settled 14:02:34.010
```
Two refunds for one call: cause `client-retry`, excess GBP 45.00.
"#,
    check,
};

/// Effects without a client trace this close together (beyond the skew) are one delivery.
const SERVICE_ONLY_SLACK: Duration = Duration(5 * 1_000_000_000);

fn check(model: &Model, settings: &Settings, out: &mut Vec<Finding>) {
    check_calls(model, out);
    check_service_only(model, settings, out);
}

/// Effects matched to the calls of one duplicate group, per effect kind.
fn check_calls(model: &Model, out: &mut Vec<Finding>) {
    let mut by_group: BTreeMap<(usize, &str), Vec<usize>> = BTreeMap::new();
    for (i, e) in model.effects.iter().enumerate() {
        if let (true, Some(m)) = (e.happened, e.matched) {
            let group = model.calls[model.dispatches[m.dispatch].logical].group;
            by_group
                .entry((group, e.kind.as_str()))
                .or_default()
                .push(i);
        }
    }
    for ((group, kind), effects) in by_group {
        if effects.len() < 2 {
            continue;
        }
        out.push(call_finding(model, group, kind, effects));
    }
}

fn call_finding(model: &Model, group: usize, kind: &str, effects: Vec<usize>) -> Finding {
    let dispatches: Vec<usize> = model
        .calls
        .iter()
        .filter(|c| c.group == group)
        .flat_map(|c| c.dispatches.iter().copied())
        .collect();
    let cause = cause_of(model, &dispatches, &effects);
    let head = &model.calls[group];
    let mut f = Finding::new(RULE.id, RULE.default_severity, String::new());
    f.cause = Some(cause);
    f.run = Some(head.run.clone());
    f.step = Some(head.step);
    f.tool = Some(head.tool.clone()).filter(|t| !t.is_empty());
    f.order = dispatches
        .iter()
        .find_map(|&d| model.dispatches[d].order.clone());
    f.key = dispatches
        .iter()
        .flat_map(|&d| &model.dispatches[d].attempts)
        .find_map(|a| a.key.clone());
    for &d in &dispatches {
        dispatch_evidence(&model.dispatches[d], &mut f.evidence);
    }
    set_effects(&mut f, model, effects);
    f.message = story(model, &f, kind, cause);
    f
}

/// The strongest explanation the evidence supports (SPEC §5, issue order).
fn cause_of(model: &Model, dispatches: &[usize], effects: &[usize]) -> Cause {
    let producing: Vec<usize> = {
        let mut d: Vec<usize> = effects
            .iter()
            .filter_map(|&e| model.effects[e].matched.map(|m| m.dispatch))
            .collect();
        d.sort();
        d.dedup();
        d
    };
    let segments = |ds: &[usize]| {
        let mut s: Vec<u32> = ds.iter().map(|&d| model.dispatches[d].segment).collect();
        s.sort();
        s.dedup();
        s
    };
    if segments(&producing).len() > 1 {
        return Cause::Resume;
    }
    let mut per_segment: FxHashMap<u32, usize> = FxHashMap::default();
    for &d in dispatches {
        *per_segment.entry(model.dispatches[d].segment).or_default() += 1;
    }
    if per_segment.values().any(|&n| n > 1) {
        return Cause::StepRetry;
    }
    let attempts: Vec<_> = dispatches
        .iter()
        .flat_map(|&d| &model.dispatches[d].attempts)
        .collect();
    if attempts.len() > 1 {
        return Cause::ClientRetry;
    }
    Cause::GatewayRetry
}

/// One sentence on what happened, e.g. "attempt 1 timed out after 10.0 s but its refund
/// rf_8XM1 settled at 14:02:22.884; attempt 2 refunded again (rf_9KQ2)".
fn story(model: &Model, f: &Finding, kind: &str, cause: Cause) -> String {
    let effect = |id: &str| model.effects.iter().find(|e| e.kind == kind && e.id == id);
    let first = f.effects.first().and_then(|e| effect(&e.id));
    let others: Vec<&str> = f.effects.iter().skip(1).map(|e| e.id.as_str()).collect();
    let n = f.effects.len();
    let tail = format!(
        "{n} {kind}s for one call, excess {}",
        amount_text(f.excess())
    );
    let Some(first) = first else {
        return tail;
    };
    let first_attempt = first.matched.map(|m| model.attempt(m));
    let lead = match (cause, first_attempt) {
        (Cause::ClientRetry, Some(a)) if ended_ambiguous(a) => {
            let retry = f
                .effects
                .iter()
                .skip(1)
                .filter_map(|e| effect(&e.id)?.matched.map(|m| model.attempt(m).number))
                .next();
            let again = match retry {
                Some(n) if n != a.number => format!("attempt {n} {} again", did(kind)),
                _ => "the call was retried".to_string(),
            };
            format!(
                "attempt {} {} but its {kind} {} was {}; {again} ({})",
                a.number,
                how_it_ended(a),
                first.id,
                settled_text(first),
                others.join(", ")
            )
        }
        (Cause::ClientRetry, _) => format!(
            "the call was retried and {} {} again ({})",
            did(kind),
            if n > 2 { "more than once" } else { "once" },
            others.join(", ")
        ),
        (Cause::GatewayRetry, _) => format!(
            "the client sent one attempt but the service {} {n} times ({}, {}): something between them replayed the request",
            did(kind),
            first.id,
            others.join(", ")
        ),
        (Cause::StepRetry, _) => format!(
            "the framework dispatched step {} again and it {} again ({})",
            f.step.unwrap_or(0),
            did(kind),
            others.join(", ")
        ),
        (Cause::Resume, _) => format!(
            "the run was resumed and the call {} again ({} after {})",
            did(kind),
            others.join(", "),
            first.id
        ),
        (Cause::Unknown, _) => format!("{} and {}", first.id, others.join(", ")),
    };
    format!("{lead}: {tail}")
}

/// Effects no client trace accounts for: one key, or one kind/order/amount close in time.
fn check_service_only(model: &Model, settings: &Settings, out: &mut Vec<Finding>) {
    let unmatched: Vec<usize> = (0..model.effects.len())
        .filter(|&i| model.effects[i].happened && model.effects[i].matched.is_none())
        .collect();
    let mut by_key: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for &i in &unmatched {
        let e = &model.effects[i];
        if let Some(k) = &e.key {
            by_key
                .entry((e.kind.as_str(), k.as_str()))
                .or_default()
                .push(i);
        }
    }
    let mut reported = vec![false; model.effects.len()];
    for ((kind, key), effects) in by_key {
        if effects.len() < 2 {
            continue;
        }
        effects.iter().for_each(|&i| reported[i] = true);
        let mut f = Finding::new(RULE.id, RULE.default_severity, String::new());
        f.cause = Some(Cause::Unknown);
        f.key = Some(key.to_string());
        set_effects(&mut f, model, effects);
        f.message = format!(
            "{} {kind}s carry the same key {key} and no client trace covers them, excess {}",
            f.effects.len(),
            amount_text(f.excess())
        );
        out.push(f);
    }
    let mut by_order: BTreeMap<(&str, &str, Option<_>), Vec<usize>> = BTreeMap::new();
    for &i in unmatched.iter().filter(|&&i| !reported[i]) {
        let e = &model.effects[i];
        if let Some(order) = &e.order {
            let amount = e.amount.map(|m| (m.currency, m.minor));
            by_order
                .entry((e.kind.as_str(), order.as_str(), amount))
                .or_default()
                .push(i);
        }
    }
    let gap = settings.max_skew.0.saturating_add(SERVICE_ONLY_SLACK.0);
    for ((kind, _order, amount), mut effects) in by_order {
        if effects.len() < 2 || amount.is_none() {
            continue;
        }
        effects.sort_by_key(|&i| (model.effects[i].created, model.effects[i].id.clone()));
        for cluster in clusters(model, &effects, gap) {
            let mut f = Finding::new(RULE.id, RULE.default_severity, String::new());
            f.cause = Some(Cause::Unknown);
            set_effects(&mut f, model, cluster);
            f.message = format!(
                "{} {kind}s of {} on one order within {} of each other and no client trace covers them, excess {}",
                f.effects.len(),
                amount_text(f.effects[0].amount),
                Duration(gap).display_secs(),
                amount_text(f.excess())
            );
            out.push(f);
        }
    }
}

/// Runs of effects (sorted by creation) each created within `gap` of the previous one.
fn clusters(model: &Model, sorted: &[usize], gap: i64) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    for &i in sorted {
        if let Some(&last) = current.last()
            && model.effects[i]
                .created
                .since(model.effects[last].created)
                .0
                > gap
        {
            if current.len() > 1 {
                out.push(std::mem::take(&mut current));
            }
            current.clear();
        }
        current.push(i);
    }
    if current.len() > 1 {
        out.push(current);
    }
    out
}
