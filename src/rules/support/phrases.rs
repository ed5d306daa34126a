//! The phrases rule messages are built from: amounts, outcomes, effect kinds' past tense,
//! lists and spans.

use crate::correlate::{AttemptRec, EffectRec, OutcomeKind};
use crate::finding::Finding;
use crate::money::Total;
use crate::time::Duration;

/// A finding's excess for its message: `GBP 45.00`, `an unknown amount`, or a lower bound
/// when a duplicate's amount is unknown (`at least GBP 45.00, 1 refund's amount unknown`).
pub fn excess_text(f: &Finding, kind: &str) -> String {
    let known = amount_text(f.excess());
    if !f.excess_partial() {
        return known;
    }
    let cur = f.currency;
    let unknown = (f.effects.iter().skip(1))
        .filter(|e| e.amount.is_none_or(|m| Some(m.currency) != cur))
        .count();
    let whose = if unknown == 1 {
        format!("1 {kind}'s amount")
    } else {
        format!("{unknown} {kind}s' amounts")
    };
    format!("at least {known}, {whose} unknown")
}

/// `GBP 45.00`, or `an unknown amount`.
pub fn amount_text(amount: Option<impl Into<Total>>) -> String {
    amount.map_or_else(|| "an unknown amount".to_string(), |m| m.into().display())
}

/// An effect's amount for a message: `GBP 45.00`; for a bare whole number whose unit is
/// unknown, what was written and both readings (`4500 GBP without its unit: GBP 45.00 or
/// GBP 4,500.00`); else `an unknown amount`.
pub fn effect_amount_text(e: &EffectRec) -> String {
    match (e.amount(), e.whole()) {
        (None, Some(w)) => {
            let major = (w.currency.exponent())
                .and_then(|exp| w.minor.checked_mul(10i64.checked_pow(exp)?))
                .map(|m| crate::money::Money::new(m, w.currency));
            match major {
                Some(major) => format!(
                    "{} {} without its unit: {} or {}",
                    w.minor,
                    w.currency,
                    amount_text(Some(w)),
                    amount_text(Some(major))
                ),
                None => amount_text(None::<crate::money::Money>),
            }
        }
        (amount, _) => amount_text(amount),
    }
}

/// `timed out after 10.0 s`, `failed (connection reset) after 0.2 s`, `got 503 after 1.0 s`.
pub fn how_it_ended(a: &AttemptRec) -> String {
    let Some(o) = &a.outcome else {
        return "got no answer".to_string();
    };
    // A request no line logged (implied by its outcome) was sent at a time nobody knows.
    let after = match a.method.is_none() && o.at == a.at {
        true => String::new(),
        false => format!(" after {}", o.at.since(a.at).display_secs()),
    };
    match &o.kind {
        OutcomeKind::Failure { error, message, .. } => {
            let text = format!("{error} {message}").to_ascii_lowercase();
            if text.contains("timeout") || text.contains("timed out") {
                format!("timed out{after}")
            } else {
                format!("failed ({}){after}", o.describe())
            }
        }
        OutcomeKind::Response { status, .. } => format!("got {status}{after}"),
    }
}

/// The past tense of an effect kind for messages: `refunded`, `charged`, `paid out`. A
/// kind that is no verb (`payment`, `payment_order`, a `--tool-kind` name) is said as
/// what was made: `made a payment`.
pub fn did(kind: &str) -> String {
    match kind {
        "payout" => "paid out".to_string(),
        "payment" => "paid".to_string(),
        "transfer" => "transferred".to_string(),
        "refund" | "charge" | "capture" | "credit" => match kind.strip_suffix('e') {
            Some(stem) => format!("{stem}ed"),
            None => format!("{kind}ed"),
        },
        k => format!("made a {}", k.replace('_', " ")),
    }
}

/// What became of the effect, as a predicate: `was settled at T`, `was created at T`, or,
/// for a state that is no passive (a payment provider's `succeeded`), `succeeded`.
pub fn state_predicate(e: &EffectRec) -> String {
    let state = match (&e.state, e.state_at) {
        (Some(state), Some(at)) => format!("{state} at {at}"),
        (Some(state), None) => state.to_string(),
        _ => format!("created at {}", e.created),
    };
    let active = e.state.as_deref().is_some_and(|s| {
        INTRANSITIVE_STATES
            .iter()
            .any(|v| s.eq_ignore_ascii_case(v))
    });
    if active {
        state
    } else {
        format!("was {state}")
    }
}

/// States named by a verb that takes no object: "was succeeded" is not English.
const INTRANSITIVE_STATES: [&str; 2] = ["succeeded", "failed"];

/// A list for messages: `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// `1 h 38 min`, `3 min 20 s`, `12.5 s`, `2 d 4 h`: a human span for messages, its last
/// unit rounded to the nearest.
pub fn span_text(d: Duration) -> String {
    let secs = d.0.max(0).saturating_add(500_000_000) / 1_000_000_000;
    if secs >= 86_400 {
        let hours = (secs + 1800) / 3600;
        format!("{} d {} h", hours / 24, hours % 24)
    } else if secs >= 3600 {
        let mins = (secs + 30) / 60;
        format!("{} h {} min", mins / 60, mins % 60)
    } else if secs >= 60 {
        format!("{} min {} s", secs / 60, secs % 60)
    } else {
        d.display_secs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::correlate::Model;
    use crate::rules::testkit::Trace;

    /// A provider's `succeeded` is no passive: "refund rf_1 succeeded", not "was succeeded".
    #[test]
    fn an_effects_state_reads_as_a_predicate() {
        let mut t = Trace::new();
        t.refund(0, "rf_1", "A-1", 4500, None)
            .refund_settled(0, "rf_2", "A-2", 4500, 1_000);
        let mut model = t.model();
        let predicate = |model: &Model, i: usize| state_predicate(&model.effects[i]);
        assert_eq!(predicate(&model, 0), "was settled");
        assert!(
            predicate(&model, 1).starts_with("was settled at "),
            "{}",
            predicate(&model, 1)
        );
        model.effects[0].state = Some("Succeeded".into());
        assert_eq!(predicate(&model, 0), "Succeeded");
        model.effects[0].state = None;
        assert!(
            predicate(&model, 0).starts_with("was created at "),
            "{}",
            predicate(&model, 0)
        );
    }

    /// Each kind's past tense reads as English: no `paymented`, `transfered`.
    #[test]
    fn every_kind_is_said_in_the_past_tense() {
        let said: Vec<String> = crate::event::EFFECT_KINDS.iter().map(|k| did(k)).collect();
        assert_eq!(
            said,
            [
                "refunded",
                "charged",
                "paid out",
                "paid",
                "transferred",
                "captured",
                "credited"
            ]
        );
        assert_eq!(did("payment_order"), "made a payment order");
    }
}
