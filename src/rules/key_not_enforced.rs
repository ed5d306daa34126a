//! `key-not-enforced`: two effects carry one idempotency key, or came from attempts that sent
//! the same key: the client did its part and the service ignored the header.

use super::support::{
    amount_text, attempt_evidence, call_finding, disputed_values, groups_by_key, set_effects,
};
use super::{Rule, Settings, Shared};
use crate::correlate::{AttemptRec, Model};
use crate::finding::{Finding, Severity};
use crate::time::Duration;
use rustc_hash::FxHashMap;

pub static RULE: Rule = Rule {
    id: "key-not-enforced",
    default_severity: Severity::Error,
    default_enabled: true,
    summary: "two effects carry the same idempotency key, or came from attempts with the same key: the service does not enforce it",
    explanation: r#"## What it does
Groups the effects that happened by their idempotency key: the key the service logged with
the effect, else the key of the attempt the effect was matched to. Two or more distinct
effects of one kind under one key, each within 24 hours of the one before (how long a
service such as Stripe keeps a key), are reported, once per key and stretch. The same key
a month later is a new request under an expired key, not a key ignored.

## Why is this bad
A header is a request for cooperation. The client sent the same key on every attempt, which
is exactly right, and the service performed the effect again anyway: the deduplication the
team believes in does not exist, and every ambiguous timeout is a duplicate waiting to
happen.

## How to fix
Enforce the key in the service that performs the effect: insert a row into an
`idempotency_records` table under a unique constraint on the key *before* the effect, answer
a duplicate with the stored response (or a 409 while the first is still in progress), and
check that the gateway in front of it forwards the header. Where the downstream has no
idempotency support, keep a local ledger row under a unique constraint before the call.

## Example
```
14:02:11.418  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=21f4d595...
14:02:21.418  urllib3.exceptions.ReadTimeoutError: read timeout=10
14:02:21.930  POST https://payments.internal/v1/refunds  (attempt 2)  idempotency_key=21f4d595...
14:02:23.107  201 Created  refund_id=rf_9KQ2
--- payments service, same window ---
14:02:11.501  refund rf_8XM1  order A-88214  4500p  settled 14:02:22.884
14:02:23.088  refund rf_9KQ2  order A-88214  4500p  settled 14:02:34.010
```
Both attempts carried one key and the service refunded twice.
"#,
    check,
};

fn check(model: &Model, _settings: &Settings, _shared: &Shared, out: &mut Vec<Finding>) {
    // The effect's own key, else the key of the attempt it was matched to.
    let key_of = |i: usize| {
        let e = &model.effects[i];
        e.key
            .as_deref()
            .or_else(|| e.matched.and_then(|m| model.attempt(m).key.as_deref()))
    };
    let keyed: Vec<usize> = (0..model.effects.len())
        .filter(|&i| model.effects[i].happened && key_of(i).is_some())
        .collect();
    let kind_and_key = |i: usize| {
        (
            model.effects[i].kind.as_str(),
            key_of(i).unwrap_or_default(),
        )
    };
    let by_key: Vec<((&str, &str), Vec<usize>)> = groups_by_key(&keyed, kind_and_key)
        .into_iter()
        .flat_map(|g| within_retention(model, g))
        .map(|g| (kind_and_key(g[0]), g))
        .collect();
    // One pass over the attempts for the keys that duplicated, not one per key.
    let mut keyed: FxHashMap<&str, Vec<&AttemptRec>> = FxHashMap::default();
    for ((_, key), _) in by_key.iter() {
        keyed.entry(key).or_default();
    }
    for (_, a) in model.attempts() {
        if let Some(list) = a.key.as_deref().and_then(|k| keyed.get_mut(k)) {
            list.push(a);
        }
    }
    for ((kind, key), effects) in by_key {
        let first_attempt = effects
            .iter()
            .filter_map(|&i| model.effects[i].matched)
            .min();
        let mut f = match first_attempt {
            Some(id) => {
                let call = &model.calls[model.dispatches[id.dispatch()].logical()];
                call_finding(&RULE, model, call, String::new())
            }
            None => Finding::new(RULE.id, RULE.default_severity, String::new()),
        };
        f.key = Some(key.to_string());
        for a in keyed.get(key).into_iter().flatten() {
            attempt_evidence(a, &mut f.evidence);
        }
        let disputed = disputed_values(model, &effects);
        set_effects(&mut f, model, effects);
        let ids: Vec<&str> = f.effects.iter().map(|e| e.id.as_str()).collect();
        f.message = format!(
            "{} {kind}s were made under one idempotency key {key} ({}): the service does not enforce the key, excess {}{disputed}",
            ids.len(),
            ids.join(", "),
            amount_text(f.excess())
        );
        // The money is told here but counted by duplicate-effect, which reports the same
        // effects: a spreadsheet summing the CSV's excess column would count it twice.
        f.excess_minor = None;
        out.push(f);
    }
}

/// How long a service keeps a key: an effect under a key used more than this after the
/// last one is a new request once the key has expired (Stripe keeps keys 24 hours), not
/// a key ignored.
const KEY_KEPT: Duration = Duration::from_secs(24 * 3600);

/// One key's effects in runs no more than [`KEY_KEPT`] apart, by creation; runs of one
/// effect dropped.
fn within_retention(model: &Model, mut effects: Vec<usize>) -> Vec<Vec<usize>> {
    effects.sort_by_key(|&i| (model.effects[i].created, i));
    let mut runs: Vec<Vec<usize>> = Vec::new();
    for i in effects {
        let created = model.effects[i].created;
        match runs.last_mut() {
            Some(run)
                if run
                    .last()
                    .is_some_and(|&j| created.since(model.effects[j].created) <= KEY_KEPT) =>
            {
                run.push(i)
            }
            _ => runs.push(vec![i]),
        }
    }
    runs.retain(|run| run.len() >= 2);
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testkit::Trace;

    const ARGS: &str = r#"{"order":"A-1","amount_p":4500}"#;

    fn retried(service_dedupes: bool) -> Trace {
        let mut t = Trace::new();
        t.tool_call(0, "r", 4, "issue_refund", ARGS)
            .attempt(10, "r", 4, 1, Some("k1"))
            .timeout(10_010, "r", 4)
            .attempt(10_500, "r", 4, 2, Some("k1"))
            .refund(100, "rf_1", "A-1", 4500, None);
        if service_dedupes {
            t.created(11_000, "r", 4, "rf_1", true);
        } else {
            t.created(11_000, "r", 4, "rf_2", false)
                .refund(10_900, "rf_2", "A-1", 4500, None);
        }
        t
    }

    #[test]
    fn one_key_two_refunds_is_reported() {
        let found = retried(false).check(&RULE);
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(f.key.as_deref(), Some("k1"));
        let ids: Vec<&str> = f.effects.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["rf_1", "rf_2"]);
        assert!(f.message.ends_with("excess GBP 45.00"), "{}", f.message);
        assert_eq!(
            f.excess_minor, None,
            "the money belongs to duplicate-effect"
        );
        let dup = retried(false).of("duplicate-effect");
        assert_eq!(dup.len(), 1, "{dup:#?}");
        assert_eq!(dup[0].excess_minor, Some(4500));
        assert_eq!(f.run.as_deref(), Some("r"));
    }

    /// The same key a month later (a key derived from the order alone, used again by a
    /// new run): the first key had expired, so the second refund is no key ignored.
    #[test]
    fn the_same_key_after_the_service_forgot_it_is_no_finding() {
        let month = 31 * 24 * 3600 * 1000;
        let mut t = Trace::new();
        t.refund(0, "rf_1", "A-1", 4500, Some("kk"))
            .refund(month, "rf_2", "A-1", 4500, Some("kk"));
        assert!(t.check(&RULE).is_empty());
        // Within the day: reported, once, with the two effects that were.
        t.refund(month + 60_000, "rf_3", "A-1", 4500, Some("kk"));
        let found = t.check(&RULE);
        assert_eq!(found.len(), 1);
        let ids: Vec<&str> = found[0].effects.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["rf_2", "rf_3"]);
    }

    #[test]
    fn a_replay_is_enforcement() {
        assert!(retried(true).check(&RULE).is_empty());
    }

    #[test]
    fn effects_logging_the_same_key_without_a_client_trace() {
        let mut t = Trace::new();
        t.refund(0, "rf_1", "A-1", 4500, Some("kk"))
            .refund(60_000, "rf_2", "A-1", 4500, Some("kk"))
            .refund(60_000, "rf_3", "A-1", 4500, Some("other"));
        let found = t.check(&RULE);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].effects.len(), 2);
        assert_eq!(found[0].run, None);
    }
}
