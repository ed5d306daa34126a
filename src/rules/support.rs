//! Small helpers the rules share: evidence of a dispatch, effect lists and their excess,
//! and the phrases messages are built from. No rule-specific logic here.

use crate::classify::FailureClass;
use crate::correlate::{AttemptRec, Dispatch, EffectRec, LogicalCall, Model, OutcomeKind};
use crate::event::Loc;
use crate::finding::{EffectRef, Finding};
use crate::money::Money;

/// Every line of a dispatch: its tool call, attempts, outcomes and step end.
pub fn dispatch_evidence(d: &Dispatch, out: &mut Vec<Loc>) {
    out.extend(d.loc);
    for a in &d.attempts {
        attempt_evidence(a, out);
    }
    out.extend(d.end.as_ref().map(|e| e.loc));
}

pub fn attempt_evidence(a: &AttemptRec, out: &mut Vec<Loc>) {
    out.push(a.loc);
    out.extend(a.outcome.as_ref().map(|o| o.loc));
}

/// Fills a finding's effects, currency and excess from effects in any order: the first
/// created is the legitimate one, the rest (in its currency) are the excess.
pub fn set_effects(f: &mut Finding, model: &Model, mut effects: Vec<usize>) {
    effects.sort_by(|&a, &b| {
        let (a, b) = (&model.effects[a], &model.effects[b]);
        (a.created, &a.id).cmp(&(b.created, &b.id))
    });
    effects.dedup();
    let first_currency = effects
        .iter()
        .find_map(|&i| model.effects[i].amount.map(|m| m.currency));
    f.currency = first_currency;
    if let Some(cur) = first_currency {
        let excess: i64 = effects
            .iter()
            .skip(1)
            .filter_map(|&i| model.effects[i].amount)
            .filter(|m| m.currency == cur)
            .map(|m| m.minor)
            .fold(0i64, i64::saturating_add);
        f.excess_minor = Some(excess);
    }
    for &i in &effects {
        let e = &model.effects[i];
        f.evidence.extend(e.locs.iter().copied());
        f.effects.push(EffectRef {
            id: e.id.clone(),
            created: e.created,
            amount: e.amount,
        });
    }
    if f.order.is_none() {
        f.order = effects.iter().find_map(|&i| model.effects[i].order.clone());
    }
}

/// `GBP 45.00`, or `an unknown amount`.
pub fn amount_text(amount: Option<Money>) -> String {
    amount.map_or_else(|| "an unknown amount".to_string(), |m| m.display())
}

/// Did this attempt end in an ambiguous failure (a timeout, a reset, a 502...)?
pub fn ended_ambiguous(a: &AttemptRec) -> bool {
    a.outcome
        .as_ref()
        .is_some_and(|o| o.class == FailureClass::Ambiguous)
}

/// `timed out after 10.0 s`, `failed (connection reset) after 0.2 s`, `got 503 after 1.0 s`.
pub fn how_it_ended(a: &AttemptRec) -> String {
    let Some(o) = &a.outcome else {
        return "got no answer".to_string();
    };
    let after = o.at.since(a.at).display_secs();
    match &o.kind {
        OutcomeKind::Failure { error, message } => {
            let text = format!("{error} {message}").to_ascii_lowercase();
            if text.contains("timeout") || text.contains("timed out") {
                format!("timed out after {after}")
            } else {
                format!("failed ({}) after {after}", o.describe())
            }
        }
        OutcomeKind::Response { status, .. } => format!("got {status} after {after}"),
    }
}

/// The past tense of an effect kind for messages: `refunded`, `charged`, `paid out`.
pub fn did(kind: &str) -> String {
    match kind {
        "payout" => "paid out".to_string(),
        "capture" => "captured".to_string(),
        k if k.ends_with('e') => format!("{k}d"),
        k => format!("{k}ed"),
    }
}

/// The effect's settlement (or other final state), for messages.
pub fn settled_text(e: &EffectRec) -> String {
    match (&e.state, e.state_at) {
        (Some(state), Some(at)) => format!("{state} at {at}"),
        (Some(state), None) => state.clone(),
        _ => format!("created at {}", e.created),
    }
}

/// A finding about one logical call, with its run, step, tool and order filled in.
pub fn call_finding(
    rule: &super::Rule,
    model: &Model,
    call: &LogicalCall,
    message: String,
) -> Finding {
    let mut f = Finding::new(rule.id, rule.default_severity, message);
    f.run = Some(call.run.clone());
    f.step = Some(call.step);
    f.tool = Some(call.tool.clone()).filter(|t| !t.is_empty());
    f.order = call
        .dispatches
        .iter()
        .find_map(|&d| model.dispatches[d].order.clone());
    f
}

/// Every attempt of a call in time order (its dispatches are already in time order).
pub fn call_attempts<'m>(model: &'m Model, call: &LogicalCall) -> Vec<&'m AttemptRec> {
    call.dispatches
        .iter()
        .flat_map(|&d| &model.dispatches[d].attempts)
        .collect()
}

/// Does the dispatch carry the arguments the agent gave (rather than an implied, empty call)?
pub fn has_args(d: &Dispatch) -> bool {
    d.loc.is_some() || !d.args.is_null()
}

/// A list for messages: `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
