//! Which effects are one call's duplicates: those matched to one duplicate group, apart
//! by order and amount; and those no client trace covers, by key or close in time.

use super::RULE;
use super::cause::Evidence;
use crate::correlate::Model;
use crate::finding::{Cause, Finding};
use crate::rules::support::{
    DELIVERY_SLACK, dispatch_evidence, disputed_values, effect_amount_text, excess_text,
    groups_by_key, set_effects,
};
use crate::rules::{Settings, Shared};
use crate::time::Duration;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// Effects matched to the calls of one duplicate group, per effect kind.
pub(super) fn check_calls(model: &Model, out: &mut Vec<Finding>) {
    let matched: Vec<usize> = (0..model.effects.len())
        .filter(|&i| model.effects[i].happened && model.effects[i].matched.is_some())
        .collect();
    // One call's one request (sent again after it succeeded, it is another request).
    let group_and_kind = |i: usize| {
        let e = &model.effects[i];
        let m = e.matched.expect("filtered on matched");
        let group = model.calls[model.dispatches[m.dispatch()].logical()].group();
        (group, model.attempt(m).generation, e.kind.as_str())
    };
    // Most calls made one effect: the groups of two or more, in key order.
    let by_group: Vec<(usize, &str, Vec<usize>)> = groups_by_key(&matched, group_and_kind)
        .into_iter()
        .flat_map(|effects| by_order_and_amount(model, effects))
        .map(|effects| {
            let (group, _, kind) = group_and_kind(effects[0]);
            (group, kind, effects)
        })
        .collect();
    // One pass over the calls for the groups that duplicated, not one per group.
    let mut members: FxHashMap<usize, Vec<usize>> = FxHashMap::default();
    for (group, _, _) in &by_group {
        members.entry(*group).or_default();
    }
    for c in &model.calls {
        if let Some(m) = members.get_mut(&c.group()) {
            m.extend(c.dispatches.iter().copied());
        }
    }
    for (group, kind, effects) in by_group {
        let dispatches = members.get(&group).cloned().unwrap_or_default();
        out.push(call_finding(model, group, kind, effects, dispatches));
    }
}

/// A call's effects, apart where their orders differ: one request sent again is made for
/// the same order, so effects of two orders matched to one call by time alone (two Celery
/// tasks in flight at once, neither naming its order) are no copies of each other: each
/// order's apart, and those of no order known, which cannot be told apart, alone. Effects of
/// one order (or none known) are split by [`by_amount`].
fn by_order_and_amount(model: &Model, effects: Vec<usize>) -> Vec<Vec<usize>> {
    let order = |i: usize| model.effects[i].order.as_deref();
    let first = effects.iter().find_map(|&i| order(i));
    if effects
        .iter()
        .all(|&i| order(i).is_none_or(|o| Some(o) == first))
    {
        return by_amount(model, effects);
    }
    let mut split: BTreeMap<Option<&str>, Vec<usize>> = BTreeMap::new();
    for i in effects {
        split.entry(order(i)).or_default().push(i);
    }
    // Those of no order known cannot be told apart: they stay alone.
    split.remove(&None);
    (split.into_values())
        .filter(|g| g.len() > 1)
        .flat_map(|g| by_amount(model, g))
        .collect()
}

/// A call's effects, apart where their amounts differ: one request made for two amounts
/// (the two charges of a split payment, refunded by one request) made no copies of each
/// other. But a request sent again after a failure is the same request: the effect its
/// retry made is a duplicate whatever its amount, when each attempt made one amount
/// (review36 M1: a timeout, a retry without a key, EUR 45.00 then EUR 44.00 refunded).
/// Effects whose amount is not known go with the others when these agree on one, else
/// apart. Groups of one are dropped.
fn by_amount(model: &Model, effects: Vec<usize>) -> Vec<Vec<usize>> {
    let amount = |i: usize| model.effects[i].amount();
    let mut known: Vec<_> = effects.iter().filter_map(|&i| amount(i)).collect();
    known.sort_unstable_by_key(|m| (m.currency, m.minor));
    known.dedup();
    if known.len() < 2 || each_attempt_made_one_amount(model, &effects) {
        return vec![effects];
    }
    let mut split: BTreeMap<Option<(crate::money::Currency, i64)>, Vec<usize>> = BTreeMap::new();
    for i in effects {
        let key = amount(i).map(|m| (m.currency, m.minor));
        split.entry(key).or_default().push(i);
    }
    split.into_values().filter(|g| g.len() > 1).collect()
}

/// Effects of several attempts of one sending, no attempt's of two amounts: a retry's
/// effects, not one request's parts.
fn each_attempt_made_one_amount(model: &Model, effects: &[usize]) -> bool {
    let mut made: Vec<_> = (effects.iter())
        .filter_map(|&i| Some((model.effects[i].matched?, model.effects[i].amount()?)))
        .map(|(a, m)| (a, m.currency, m.minor))
        .collect();
    made.sort_unstable();
    made.dedup();
    let attempts = made.windows(2).filter(|w| w[0].0 != w[1].0).count() + 1;
    attempts >= 2 && made.windows(2).all(|w| w[0].0 != w[1].0)
}

/// `, of different amounts (EUR 45.00, EUR 44.00)` when the effects' known amounts differ,
/// in the order made.
fn amounts_differ(f: &Finding) -> String {
    let known: Vec<_> = f.effects.iter().filter_map(|e| e.amount).collect();
    if known.windows(2).all(|w| w[0] == w[1]) {
        return String::new();
    }
    let list: Vec<String> = known.iter().map(|m| m.display()).collect();
    format!(", of different amounts ({})", list.join(", "))
}

fn call_finding(
    model: &Model,
    group: usize,
    kind: &str,
    effects: Vec<usize>,
    mut dispatches: Vec<usize>,
) -> Finding {
    dispatches.sort_by_key(|&d| (model.dispatches[d].first_at(), d));
    let evidence = Evidence::of(model, &dispatches, &effects);
    let cause = evidence.cause();
    let head = &model.calls[group];
    let mut f = Finding::new(RULE.id, RULE.default_severity, String::new());
    f.cause = Some(cause);
    f.run = Some(head.run.to_string());
    f.step = Some(head.step);
    f.tool = Some(head.tool.to_string()).filter(|t| !t.is_empty());
    f.order = dispatches
        .iter()
        .find_map(|&d| model.dispatches[d].order.as_deref().map(String::from));
    f.key = (dispatches.iter())
        .find_map(|&d| evidence.dispatch_key(d))
        .map(String::from);
    for &d in &dispatches {
        dispatch_evidence(&model.dispatches[d], &mut f.evidence);
    }
    let disputed = disputed_values(model, &effects);
    set_effects(&mut f, model, effects);
    let gateway = match cause {
        Cause::GatewayRetry => evidence.gateway_lines(),
        _ => Vec::new(),
    };
    f.evidence.extend(gateway.iter().map(|g| g.loc));
    let lead = evidence.story(kind, cause, &f, &gateway);
    f.message = format!(
        "{lead}: {} {kind}s for one call{}, excess {}{disputed}",
        f.effects.len(),
        amounts_differ(&f),
        excess_text(&f, kind)
    );
    f
}

/// Effects no client trace accounts for: one key, or one kind/order/amount close in time.
pub(super) fn check_service_only(
    model: &Model,
    settings: &Settings,
    shared: &Shared,
    out: &mut Vec<Finding>,
) {
    let gap = Duration(settings.max_skew.0.saturating_add(DELIVERY_SLACK.0));
    for group in shared.service_only_groups() {
        let kind = model.effects[group.effects[0]].kind.clone();
        let mut f = Finding::new(RULE.id, RULE.default_severity, String::new());
        f.cause = Some(Cause::Unknown);
        f.key = group.key.clone();
        set_effects(&mut f, model, group.effects.clone());
        let disputed = disputed_values(model, &group.effects);
        f.message = match &group.key {
            Some(key) => format!(
                "{} {kind}s carry the same key {key} and no client trace covers them, excess {}{disputed}",
                f.effects.len(),
                excess_text(&f, &kind)
            ),
            None => format!(
                "{} {kind}s of {} on one order within {} of each other and no client trace covers them, excess {}{disputed}",
                f.effects.len(),
                effect_amount_text(&model.effects[group.effects[0]]),
                gap.display_secs(),
                excess_text(&f, &kind)
            ),
        };
        out.push(f);
    }
}
