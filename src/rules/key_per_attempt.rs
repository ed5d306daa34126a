//! `key-per-attempt`: the attempts of one logical call carry different idempotency keys, so
//! the key is minted inside the retry loop and deduplicates nothing.

use super::support::{and_list, attempt_evidence, call_finding, same_request};
use super::{Rule, Settings, Shared};
use crate::correlate::{AttemptRec, LogicalCall, Model};
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

fn check(model: &Model, _settings: &Settings, _shared: &Shared, out: &mut Vec<Finding>) {
    for call in &model.calls {
        if !has_two_keys(model, call) {
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
            let keyed = dispatches
                .iter()
                .flat_map(|&d| &model.dispatches[d].attempts)
                .filter(|a| a.key.is_some());
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
fn by_request<'m>(keyed: impl Iterator<Item = &'m AttemptRec>) -> Vec<Vec<&'m AttemptRec>> {
    let mut groups: Vec<Vec<&AttemptRec>> = Vec::new();
    for a in keyed {
        let same =
            |g: &&mut Vec<&AttemptRec>| same_request(g[0], a) && g[0].generation == a.generation;
        match groups.iter_mut().rev().find(same) {
            Some(group) => group.push(a),
            None => groups.push(vec![a]),
        }
    }
    groups
}

/// One finding when the attempts of one request carried two or more keys.
fn report_keys(
    model: &Model,
    call: &LogicalCall,
    dispatches: &[usize],
    keyed: Vec<&AttemptRec>,
    out: &mut Vec<Finding>,
) {
    let mut keys: Vec<&str> = Vec::new();
    for a in &keyed {
        let k = a.key.as_deref().unwrap_or_default();
        if !keys.contains(&k) {
            keys.push(k);
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
    let message = format!(
        "{} attempts of one call carried {} different keys ({}): the key is minted per attempt, so every retry is a new request to the service",
        keyed.len(),
        keys.len(),
        and_list(&shown)
    );
    let mut f = call_finding(&RULE, model, call, message);
    f.key = Some(keys[0].to_string());
    for &d in dispatches {
        f.evidence.extend(model.dispatches[d].loc);
    }
    for a in keyed {
        attempt_evidence(a, &mut f.evidence);
    }
    out.push(f);
}

/// A cheap first look, without allocating: does any segment see two different keys?
fn has_two_keys(model: &Model, call: &LogicalCall) -> bool {
    let mut first: Option<(u32, &str)> = None;
    for &d in &call.dispatches {
        let disp = &model.dispatches[d];
        for k in disp.attempts.iter().filter_map(|a| a.key.as_deref()) {
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
