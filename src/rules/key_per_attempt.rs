//! `key-per-attempt`: the attempts of one logical call carry different idempotency keys, so
//! the key is minted inside the retry loop and deduplicates nothing.

use super::support::{
    ServiceKeys, and_list, attempt_evidence, call_finding, same_request, sent_key,
};
use super::{Rule, Settings, Shared};
use crate::correlate::{AttemptId, AttemptRec, LogicalCall, Model};
use crate::finding::{Finding, Severity};
use std::collections::BTreeMap;

pub static RULE: Rule = Rule {
    id: "key-per-attempt",
    default_severity: Severity::Error,
    default_enabled: true,
    summary: "attempts of one logical call carry different idempotency keys: the key is minted inside the retry loop",
    explanation: r#"## What it does
Finds logical calls (run, step, tool, canonical arguments) whose attempts of one request
(the same method and URL, where both are logged) carry two or more different
`Idempotency-Key` values between two resumes of the run (a key that changes across a resume
is `resume-key-drift`). Two requests of one call (create a customer, then refund) may each
have their own key. Reported even when the call produced only one effect: the
habit is the defect, and the next timeout turns it into a duplicate.

An attempt whose line shows no key (a client log that prints no headers) carries the key
the service logged on the effects matched to it, and the message says which keys come
from the service's log. An attempt whose effects carry two different keys has no key read
from them.

## Why is this bad
The service deduplicates by key. A key generated per attempt (`uuid4()` next to the request
builder) makes every retry a new request, so an attempt that timed out after the effect
landed is performed again, exactly as if no key had been sent.

## How to fix
Compute the key once per logical call, outside the retry loop, from what stays constant
across attempts: the run id (persisted state), the step, the tool and the canonical
arguments (`idem-audit key` prints the reference derivation). Send the same value on every
attempt.

## Example
```
14:02:11.418  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=0b6e...
14:02:21.418  urllib3.exceptions.ReadTimeoutError: read timeout=10
14:02:21.930  POST https://payments.internal/v1/refunds  (attempt 2)  idempotency_key=c41d...
```
Attempt 2 carries a fresh key, so the service refunds again.
"#,
    check,
};

/// How many keys a message lists before saying "and N more".
const KEYS_SHOWN: usize = 4;

/// An attempt with the key it was sent with ([`sent_key`]).
struct Sent<'m> {
    attempt: &'m AttemptRec,
    key: &'m str,
    /// The effect the service logged the key on, when the attempt's line shows none.
    logged_on: Option<usize>,
}

fn check(model: &Model, _settings: &Settings, shared: &Shared, out: &mut Vec<Finding>) {
    let service = shared.service_keys();
    for call in &model.calls {
        if !has_two_keys(model, service, call) {
            continue;
        }
        // Between two resumes; across a resume the drift is another rule's finding.
        let mut by_segment: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for &d in &call.dispatches {
            by_segment
                .entry(model.dispatches[d].segment)
                .or_default()
                .push(d);
        }
        for dispatches in by_segment.values() {
            let keyed = dispatches.iter().flat_map(|&d| {
                let attempts = &model.dispatches[d].attempts;
                (0..attempts.len()).filter_map(move |i| {
                    let (key, logged_on) = sent_key(model, service, AttemptId::new(d, i))?;
                    Some(Sent {
                        attempt: &attempts[i],
                        key,
                        logged_on,
                    })
                })
            });
            for request in by_request(keyed) {
                report_keys(model, call, dispatches, request, out);
            }
        }
    }
}

/// The keyed attempts of one segment, grouped by the request they send ([`same_request`])
/// and the sending of it they belong to (`AttemptRec::generation`): a tool that creates a
/// customer and then refunds sends two requests, each with its own key, and one that
/// refunds two charges one by one sends the second on purpose after the first succeeded;
/// neither is a retry. An attempt joins the latest group it matches.
fn by_request<'m>(keyed: impl Iterator<Item = Sent<'m>>) -> Vec<Vec<Sent<'m>>> {
    let mut groups: Vec<Vec<Sent<'m>>> = Vec::new();
    for s in keyed {
        let a = s.attempt;
        let same = |g: &&mut Vec<Sent<'m>>| {
            same_request(g[0].attempt, a) && g[0].attempt.generation == a.generation
        };
        match groups.iter_mut().rev().find(same) {
            Some(group) => group.push(s),
            None => groups.push(vec![s]),
        }
    }
    groups
}

/// One finding when the attempts of one request carried two or more keys.
fn report_keys(
    model: &Model,
    call: &LogicalCall,
    dispatches: &[usize],
    keyed: Vec<Sent>,
    out: &mut Vec<Finding>,
) {
    let mut keys: Vec<&str> = Vec::new();
    for s in &keyed {
        if !keys.contains(&s.key) {
            keys.push(s.key);
        }
    }
    if keys.len() < 2 {
        return;
    }
    let mut shown: Vec<String> = keys
        .iter()
        .take(KEYS_SHOWN)
        .map(|k| k.to_string())
        .collect();
    if keys.len() > KEYS_SHOWN {
        shown.push(format!("{} more", keys.len() - KEYS_SHOWN));
    }
    let mut message = format!(
        "{} attempts of one call carried {} different keys ({}): the key is minted per attempt, so every retry is a new request to the service",
        keyed.len(),
        keys.len(),
        and_list(&shown)
    );
    message.push_str(&from_the_service(model, &keyed));
    let mut f = call_finding(&RULE, model, call, message);
    f.key = Some(keys[0].to_string());
    for &d in dispatches {
        f.evidence.extend(model.dispatches[d].loc);
    }
    for s in &keyed {
        attempt_evidence(s.attempt, &mut f.evidence);
        if let Some(e) = s.logged_on {
            f.evidence.extend(model.effects[e].locs.iter().copied());
        }
    }
    out.push(f);
}

/// Where some keys were read from the service's log: `; the client's log shows no key on
/// attempts 1 and 2: these keys are those the service logged on the refunds they made`.
fn from_the_service(model: &Model, keyed: &[Sent]) -> String {
    let mut numbers: Vec<String> = Vec::new();
    let mut kinds: Vec<&str> = Vec::new();
    for s in keyed {
        let Some(e) = s.logged_on else { continue };
        let n = s.attempt.number.to_string();
        if !numbers.contains(&n) {
            numbers.push(n);
        }
        let kind = model.effects[e].kind.as_str();
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    let what = match kinds.as_slice() {
        [] => return String::new(),
        [kind] => format!("{kind}s"),
        _ => "effects".to_string(),
    };
    let all = keyed.iter().all(|s| s.logged_on.is_some());
    let (attempts, these, made) = match numbers.as_slice() {
        [one] => (format!("attempt {one}"), "its key is the one", "it made"),
        _ if all => (
            format!("attempts {}", and_list(&numbers)),
            "these keys are those",
            "they made",
        ),
        _ => (
            format!("attempts {}", and_list(&numbers)),
            "their keys are those",
            "they made",
        ),
    };
    format!(
        "; the client's log shows no key on {attempts}: {these} the service logged on the {what} {made}"
    )
}

/// A cheap first look, without allocating: does any segment see two different keys?
fn has_two_keys(model: &Model, service: &ServiceKeys, call: &LogicalCall) -> bool {
    let mut first: Option<(u32, &str)> = None;
    for &d in &call.dispatches {
        let disp = &model.dispatches[d];
        let keys = (0..disp.attempts.len())
            .filter_map(|i| sent_key(model, service, AttemptId::new(d, i)).map(|(k, _)| k));
        for k in keys {
            match first {
                None => first = Some((disp.segment, k)),
                Some((seg, k0)) if seg == disp.segment && k0 != k => return true,
                // Another segment: the full check sorts it out.
                Some((seg, _)) if seg != disp.segment => return true,
                _ => {}
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Lifecycle;
    use crate::rules::testkit::Trace;

    const ARGS: &str = r#"{"order":"A-1","amount_p":4500}"#;

    #[test]
    fn a_fresh_key_per_attempt_is_reported_even_with_one_effect() {
        let mut t = Trace::new();
        t.tool_call(0, "r", 4, "issue_refund", ARGS)
            .attempt(10, "r", 4, 1, Some("k1"))
            .timeout(10_010, "r", 4)
            .attempt(10_500, "r", 4, 2, Some("k2"))
            .created(11_000, "r", 4, "rf_1", false)
            .refund(10_900, "rf_1", "A-1", 4500, None);
        let found = t.check(&RULE);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].key.as_deref(), Some("k1"));
        assert!(
            found[0].message.contains("k1 and k2"),
            "{}",
            found[0].message
        );
        assert_eq!(found[0].step, Some(4));
    }

    #[test]
    fn one_key_across_attempts_or_across_a_resume_is_not_reported() {
        let mut t = Trace::new();
        t.tool_call(0, "r", 4, "issue_refund", ARGS)
            .attempt(10, "r", 4, 1, Some("k1"))
            .timeout(10_010, "r", 4)
            .attempt(10_500, "r", 4, 2, Some("k1"))
            .run_event(20_000, "r", Lifecycle::Crashed)
            .run_event(30_000, "r", Lifecycle::Resumed)
            .tool_call(30_100, "r", 4, "issue_refund", ARGS)
            .attempt(30_200, "r", 4, 1, Some("k2"));
        assert!(t.check(&RULE).is_empty());
    }

    #[test]
    fn two_requests_of_one_call_may_each_have_their_own_key() {
        let mut t = Trace::new();
        let customers = "https://payments.internal/v1/customers";
        let refunds = "https://payments.internal/v1/refunds";
        t.tool_call(0, "r", 4, "issue_refund", ARGS)
            .sent(10, "r", 4, 1, "POST", customers, Some("cust-key"))
            .sent(500, "r", 4, 2, "POST", refunds, Some("refund-key"))
            .timeout(10_500, "r", 4)
            .sent(11_000, "r", 4, 3, "POST", refunds, Some("refund-key"));
        assert!(t.check(&RULE).is_empty());

        // The refund sent again with a fresh key is still found, beside the other request.
        let mut t = Trace::new();
        t.tool_call(0, "r", 4, "issue_refund", ARGS)
            .sent(10, "r", 4, 1, "POST", customers, Some("cust-key"))
            .sent(500, "r", 4, 2, "POST", refunds, Some("k1"))
            .timeout(10_500, "r", 4)
            .sent(11_000, "r", 4, 3, "POST", refunds, Some("k2"));
        let found = t.check(&RULE);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].message.contains("k1 and k2"),
            "{}",
            found[0].message
        );
        assert!(
            !found[0].message.contains("cust-key"),
            "{}",
            found[0].message
        );
    }

    /// Two charges of one order refunded one after the other, each with its own key: the
    /// second POST follows the first's 201, so it is sent on purpose, not retried.
    #[test]
    fn a_request_sent_again_after_it_succeeded_may_have_its_own_key() {
        let mut t = Trace::new();
        t.tool_call(0, "r", 4, "issue_refund", ARGS)
            .attempt(10, "r", 4, 1, Some("k1"))
            .created(300, "r", 4, "rf_1", false)
            .attempt(400, "r", 4, 2, Some("k2"))
            .created(700, "r", 4, "rf_2", false);
        assert!(t.check(&RULE).is_empty());
        // After a timeout, the fresh key is a key minted per attempt.
        let mut t = Trace::new();
        t.tool_call(0, "r", 4, "issue_refund", ARGS)
            .attempt(10, "r", 4, 1, Some("k1"))
            .timeout(10_010, "r", 4)
            .attempt(10_400, "r", 4, 2, Some("k2"))
            .created(10_700, "r", 4, "rf_2", false);
        assert_eq!(t.check(&RULE).len(), 1);
    }

    /// A client log that prints no headers, and a service that logs the key of each
    /// refund (`keys`): attempt 1 timed out after its refund was made, attempt 2 refunded
    /// again.
    fn keys_on_the_service_side(keys: [Option<&str>; 2]) -> Trace {
        let mut t = Trace::new();
        t.tool_call(0, "r", 4, "issue_refund", ARGS)
            .attempt(10, "r", 4, 1, None)
            .refund(100, "rf_1", "A-1", 4500, keys[0])
            .timeout(10_010, "r", 4)
            .attempt(10_500, "r", 4, 2, None)
            .refund(10_600, "rf_2", "A-1", 4500, keys[1])
            .created(10_700, "r", 4, "rf_2", false);
        t
    }

    /// The keys the service logged on the refunds of the attempts are the keys they were
    /// sent with: two of them are a key minted per attempt, said to come from its log.
    #[test]
    fn keys_the_service_logged_on_each_attempts_effects_are_theirs() {
        let found = keys_on_the_service_side([Some("k1"), Some("k2")]).check(&RULE);
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(f.key.as_deref(), Some("k1"));
        assert!(f.message.contains("(k1 and k2)"), "{}", f.message);
        assert!(
            f.message.ends_with(
                "the client's log shows no key on attempts 1 and 2: these keys are those the service logged on the refunds they made"
            ),
            "{}",
            f.message
        );
        // The refunds' lines are evidence: 2 attempts, their outcomes, the 2 refunds.
        assert_eq!(f.evidence.len(), 7, "{:?}", f.evidence);

        // One key on both (a service not enforcing it is another rule's), or on one only:
        // no second key.
        for keys in [[Some("k1"), Some("k1")], [Some("k1"), None], [None, None]] {
            let found = keys_on_the_service_side(keys).check(&RULE);
            assert!(found.is_empty(), "{keys:?}: {found:?}");
        }

        // An attempt whose line shows its key keeps it; the service's key of the other's
        // refund, read from another client log that shows no keys, makes the second, and
        // only that one is said to come from its log.
        let two_logs = |second_input: u32| {
            let mut t = Trace::new();
            t.tool_call(0, "r", 4, "issue_refund", ARGS)
                .attempt(10, "r", 4, 1, Some("k1"))
                .refund(100, "rf_1", "A-1", 4500, Some("k1"))
                .timeout(10_010, "r", 4)
                .attempt(10_500, "r", 4, 2, None)
                .in_input(second_input)
                .created(10_700, "r", 4, "rf_2", false)
                .in_input(second_input)
                .refund(10_600, "rf_2", "A-1", 4500, Some("k2"));
            t
        };
        // In the log that showed attempt 1's key, attempt 2 showing none sent none: the
        // service's `k2` is its own id, and the retry an unkeyed one, not a key per attempt.
        assert_eq!(two_logs(0).check(&RULE), vec![]);
        let found = two_logs(1).check(&RULE);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].message.ends_with(
                "the client's log shows no key on attempt 2: its key is the one the service logged on the refunds it made"
            ),
            "{}",
            found[0].message
        );
    }

    /// Both refunds pinned on attempt 1 (no refund id answered, the service's clock
    /// behind): which attempt sent which key is not known, and no key is read for it.
    #[test]
    fn an_attempt_whose_effects_carry_two_keys_has_no_known_key() {
        let mut t = Trace::new();
        t.tool_call(0, "r", 4, "issue_refund", ARGS)
            .attempt(10, "r", 4, 1, None)
            .refund(100, "rf_1", "A-1", 4500, Some("k1"))
            .timeout(10_010, "r", 4)
            .refund(10_200, "rf_2", "A-1", 4500, Some("k2"))
            .attempt(10_500, "r", 4, 2, None);
        let model = t.model();
        assert!(
            model
                .effects
                .iter()
                .all(|e| e.matched.map(|a| a.index()) == Some(0)),
            "both refunds are attempt 1's"
        );
        assert!(t.check(&RULE).is_empty());
    }

    #[test]
    fn unkeyed_attempts_are_not_a_second_key() {
        let mut t = Trace::new();
        t.tool_call(0, "r", 4, "issue_refund", ARGS)
            .attempt(10, "r", 4, 1, None)
            .timeout(10_010, "r", 4)
            .attempt(10_500, "r", 4, 2, Some("k1"));
        assert!(t.check(&RULE).is_empty());
    }
}
