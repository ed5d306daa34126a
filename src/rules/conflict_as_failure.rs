//! `conflict-as-failure`: a call's last answer was a 409 (a duplicate in flight) and the step
//! was failed or abandoned, instead of backing off and retrying.

use super::support::{attempt_evidence, call_attempts, call_finding};
use super::{Rule, Settings, Shared};
use crate::classify::{FailureClass, classify_failure};
use crate::correlate::{Dispatch, Model, Outcome};
use crate::finding::{Finding, Severity};
use crate::time::Timestamp;
use std::collections::BTreeMap;

pub static RULE: Rule = Rule {
    id: "conflict-as-failure",
    default_severity: Severity::Warning,
    default_enabled: true,
    summary: "the call's last answer was a 409 and the step ended failed: it should have backed off and retried",
    explanation: r#"## What it does
Reports a logical call whose last outcome was a 409 Conflict (or whose step ended with a
409 error) when the step then ended `failed`, or was abandoned: no step end, no further
attempt, and the run went on to another step. It does not matter whether the client gave up
at once or ran out of attempts. A 409 followed by a later successful attempt is the correct
behaviour and is not reported.

## Why is this bad
An idempotency-aware service answers 409 when a request with the same key is still in
progress: the first attempt is being performed right now. The step has probably succeeded;
failing it makes the agent (or a person) act on a false failure, typically by issuing the
action again under a new key, which is a duplicate the key was meant to prevent.

## How to fix
Treat `conflict` as its own class in the `retryable(error)` predicate: back off (with
jitter) and retry with the same key until the service returns the stored response, and
allow enough attempts to outlast the service's slowest effect.

## Example
```
15:30:00.010  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=5be0...
15:30:10.010  urllib3.exceptions.ReadTimeoutError: read timeout=10
15:30:10.500  POST https://payments.internal/v1/refunds  (attempt 2)  idempotency_key=5be0...
15:30:10.620  409 Conflict
15:30:10.630  agent run c1  step 3  failed  error=409 Conflict
```
"#,
    check,
};

fn check(model: &Model, _settings: &Settings, _shared: &Shared, out: &mut Vec<Finding>) {
    // When each run dispatched each of its steps, to tell an abandoned step: built only if
    // some conflict has no step end.
    let mut starts: Option<BTreeMap<&str, Vec<(Timestamp, u32)>>> = None;
    for call in &model.calls {
        let Some(&last_d) = call.dispatches.last() else {
            continue;
        };
        let last = &model.dispatches[last_d];
        let final_attempt = (call.dispatches.iter())
            .flat_map(|&d| &model.dispatches[d].attempts)
            .last();
        // A 409 to a request known to carry no key is the service's own business conflict
        // (`charge_already_refunded`), not a duplicate in flight: nothing to retry under.
        if final_attempt.is_some_and(|a| a.key.is_none() && !a.key_unseen) {
            continue;
        }
        let final_outcome = final_attempt.and_then(|a| a.outcome.as_ref());
        let conflict_at = match (final_outcome, &last.end) {
            (Some(o), _) if o.class() == FailureClass::Conflict => Some(o.at),
            (None, Some(end)) if !end.ok && end_says_conflict(end.error.as_deref()) => Some(end.at),
            _ => None,
        };
        let Some(conflict_at) = conflict_at else {
            continue;
        };
        let how = match &last.end {
            Some(end) if !end.ok => "the step ended failed".to_string(),
            Some(_) => continue,
            None => match abandoned_for(
                last,
                conflict_at,
                starts.get_or_insert_with(|| run_starts(model)),
            ) {
                Some(step) => format!("the run went on to step {step} without retrying"),
                None => continue,
            },
        };
        let attempts = call_attempts(model, call);
        let answer = final_outcome.map_or_else(|| "409 Conflict".to_string(), Outcome::describe);
        let conflicts: Vec<_> = (attempts.iter())
            .filter(|a| {
                a.outcome
                    .as_ref()
                    .is_some_and(|o| o.class() == FailureClass::Conflict)
            })
            .collect();
        let tries = conflicts.len();
        // Retried under one key already: the habit is giving up too soon, not not retrying.
        let one_key = conflicts.first().and_then(|a| a.key.as_deref());
        let kept_its_key = tries > 1 && conflicts.iter().all(|a| a.key.as_deref() == one_key);
        let advice = if kept_its_key && one_key.is_some() {
            "it did retry with the same key, but gave up while the first request was still in flight: back off longer (with jitter) until the first request finishes and its answer is replayed"
        } else {
            "it should have backed off and retried with the same key"
        };
        let message = format!(
            "the call's last answer was {answer} (a duplicate still in flight) and {how}{}: {advice}",
            if tries > 1 {
                format!(" after {tries} conflicts")
            } else {
                String::new()
            }
        );
        let mut f = call_finding(&RULE, model, call, message);
        f.key = attempts
            .iter()
            .rev()
            .find_map(|a| a.key.as_deref().map(String::from));
        for &d in &call.dispatches {
            f.evidence.extend(model.dispatches[d].loc);
        }
        for a in &attempts {
            attempt_evidence(a, &mut f.evidence);
        }
        f.evidence.extend(last.end.as_ref().map(|e| e.loc));
        out.push(f);
    }
}

fn run_starts(model: &Model) -> BTreeMap<&str, Vec<(Timestamp, u32)>> {
    let mut starts: BTreeMap<&str, Vec<(Timestamp, u32)>> = BTreeMap::new();
    for d in &model.dispatches {
        starts
            .entry(d.call.run.as_str())
            .or_default()
            .push((d.first_at(), d.call.step));
    }
    starts
}

fn end_says_conflict(error: Option<&str>) -> bool {
    error.is_some_and(|e| classify_failure("", e) == FailureClass::Conflict)
}

/// The first other step of the same run dispatched after the conflict, if any.
fn abandoned_for(
    d: &Dispatch,
    after: Timestamp,
    starts: &BTreeMap<&str, Vec<(Timestamp, u32)>>,
) -> Option<u32> {
    starts
        .get(d.call.run.as_str())?
        .iter()
        .filter(|(at, step)| *at > after && *step != d.call.step)
        .min()
        .map(|&(_, step)| step)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testkit::Trace;

    const ARGS: &str = r#"{"order":"A-1","amount_p":1000}"#;

    fn conflicted() -> Trace {
        let mut t = Trace::new();
        t.tool_call(0, "c", 3, "issue_refund", ARGS)
            .attempt(10, "c", 3, 1, Some("k"))
            .timeout(10_010, "c", 3)
            .attempt(10_500, "c", 3, 2, Some("k"))
            .response(10_620, "c", 3, 409, "Conflict");
        t
    }

    #[test]
    fn a_409_then_a_failed_step() {
        let mut t = conflicted();
        t.step_end(10_630, "c", 3, Some("409 Conflict"));
        let found = t.check(&RULE);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].message.contains("409 Conflict"),
            "{}",
            found[0].message
        );
        assert!(
            found[0].message.contains("ended failed"),
            "{}",
            found[0].message
        );
        assert_eq!(found[0].key.as_deref(), Some("k"));
    }

    /// One 409 and a failed step: retry with the key. Three 409s under one key: it did, and
    /// gave up too soon.
    #[test]
    fn conflicts_retried_under_one_key_are_told_to_back_off_longer() {
        let mut once = conflicted();
        once.step_end(10_630, "c", 3, Some("409 Conflict"));
        let message = &once.check(&RULE)[0].message;
        assert!(message.contains("should have backed off"), "{message}");
        let mut thrice = conflicted();
        thrice
            .attempt(11_000, "c", 3, 3, Some("k"))
            .response(11_100, "c", 3, 409, "Conflict")
            .attempt(12_000, "c", 3, 4, Some("k"))
            .response(12_100, "c", 3, 409, "Conflict")
            .step_end(12_110, "c", 3, Some("409 Conflict"));
        let found = thrice.check(&RULE);
        assert_eq!(found.len(), 1, "{found:#?}");
        let message = &found[0].message;
        assert!(message.contains("after 3 conflicts"), "{message}");
        assert!(
            message.contains("it did retry with the same key"),
            "{message}"
        );
        assert!(!message.contains("should have backed off"), "{message}");
    }

    #[test]
    fn a_409_then_the_run_moves_on() {
        let mut t = conflicted();
        t.tool_call(11_000, "c", 4, "send_email", r#"{"to":"x"}"#);
        let found = t.check(&RULE);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].message.contains("went on to step 4"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn a_step_end_naming_a_409_without_a_response_line() {
        let mut t = Trace::new();
        t.tool_call(0, "c", 3, "issue_refund", ARGS)
            .step_end(10, "c", 3, Some("409 Conflict"));
        assert_eq!(t.check(&RULE).len(), 1);
    }

    /// A 409 to a request that carried no key is the service's business conflict (the
    /// charge already refunded), not a duplicate in flight: no key to retry under.
    #[test]
    fn a_409_to_an_unkeyed_request_is_no_conflict_of_keys() {
        let mut t = Trace::new();
        t.tool_call(0, "c", 3, "issue_refund", ARGS)
            .attempt(10, "c", 3, 1, None)
            .response(120, "c", 3, 409, "Conflict")
            .step_end(130, "c", 3, Some("409 Conflict"));
        assert!(t.check(&RULE).is_empty());
    }

    #[test]
    fn a_409_then_a_successful_retry_is_correct() {
        let mut t = conflicted();
        t.attempt(12_000, "c", 3, 3, Some("k"))
            .created(12_100, "c", 3, "rf_1", true)
            .step_end(12_110, "c", 3, None);
        assert!(t.check(&RULE).is_empty());
        // Still waiting (no end, nothing after): not yet a failure.
        assert!(conflicted().check(&RULE).is_empty());
        // A step that failed for another reason is not a conflict.
        let mut t = Trace::new();
        t.tool_call(0, "c", 3, "issue_refund", ARGS)
            .attempt(10, "c", 3, 1, Some("k"))
            .response(100, "c", 3, 400, "Bad Request")
            .step_end(110, "c", 3, Some("400 Bad Request"));
        assert!(t.check(&RULE).is_empty());
    }
}
