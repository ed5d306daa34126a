//! `unkeyed-retry`: a non-idempotent request retried after an ambiguous failure without a key.

use super::support::{attempt_evidence, ended_ambiguous, how_it_ended, retries};
use super::{Rule, Settings, Shared};
use crate::correlate::{AttemptRec, Model};
use crate::finding::{Finding, Severity};

pub static RULE: Rule = Rule {
    id: "unkeyed-retry",
    default_severity: Severity::Warning,
    default_enabled: true,
    summary: "a POST or PATCH was retried after an ambiguous failure without an idempotency key",
    explanation: r#"## What it does
Finds calls where an attempt ended ambiguously (read timeout, connection reset mid-response,
502, 503, 504) and the same request (method and URL) was sent again as a POST or PATCH
without an `Idempotency-Key`. One finding per call. A different request of the call (the
refund after a lookup that got a 503) is no retry.

## Why is this bad
An ambiguous failure says nothing about whether the effect happened. Retrying it without a
key asks the service to perform it again: if the first attempt landed, the retry duplicates
it. Whether it did duplicate depends on timing, so the habit is reported even when the inputs
show no second effect.

## How to fix
Compute a key once per logical call, outside the retry loop, from what stays constant across
attempts (run, step, tool, canonical arguments), and send it on every attempt. Retry without
a key only after `safe` failures (connection refused, DNS, connect timeout), where nothing
reached the server.

## Example
```
14:02:11.418  POST https://payments.internal/v1/refunds  (attempt 1)
14:02:21.418  urllib3.exceptions.ReadTimeoutError: read timeout=10
14:02:21.930  POST https://payments.internal/v1/refunds  (attempt 2)
```
Attempt 2 carries no key after attempt 1 timed out.
"#,
    check,
};

fn check(model: &Model, _settings: &Settings, _shared: &Shared, out: &mut Vec<Finding>) {
    for call in &model.calls {
        let mut f: Option<Finding> = None;
        for &d in &call.dispatches {
            let disp = &model.dispatches[d];
            let attempts: Vec<&AttemptRec> = disp.attempts.iter().collect();
            for (failed, retry) in retries(&attempts) {
                if !ended_ambiguous(failed) || !retry.is_non_idempotent() || retry.key.is_some() {
                    continue;
                }
                let finding = f.get_or_insert_with(|| {
                    let mut f = Finding::new(
                        RULE.id,
                        RULE.default_severity,
                        format!(
                            "attempt {} {} and attempt {} was sent again without an idempotency key",
                            failed.number,
                            how_it_ended(failed),
                            retry.number
                        ),
                    );
                    f.run = Some(call.run.to_string());
                    f.step = Some(call.step);
                    f.tool = Some(call.tool.to_string()).filter(|t| !t.is_empty());
                    f.order = disp.order.as_deref().map(String::from);
                    f.evidence.extend(disp.loc);
                    f
                });
                attempt_evidence(failed, &mut finding.evidence);
                attempt_evidence(retry, &mut finding.evidence);
            }
        }
        out.extend(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testkit::Trace;

    const ARGS: &str = r#"{"order":"A-1","amount_p":4500}"#;
    const REFUNDS: &str = "https://payments.internal/v1/refunds";

    /// A lookup that got a 503 and the refund after it are two requests, not a retry.
    #[test]
    fn another_request_after_an_ambiguous_failure_is_no_retry() {
        let mut t = Trace::new();
        t.tool_call(0, "r", 1, "issue_refund", ARGS)
            .request(
                10,
                "r",
                1,
                1,
                "GET",
                "https://payments.internal/v1/orders/A-1",
            )
            .response(200, "r", 1, 503, "Service Unavailable")
            .request(300, "r", 1, 2, "POST", REFUNDS)
            .response(400, "r", 1, 201, "Created");
        assert!(t.check(&RULE).is_empty());
    }

    /// The refund sent again after a read-back between: still a retry of the refund.
    #[test]
    fn the_same_request_sent_again_after_another_is_a_retry() {
        let mut t = Trace::new();
        t.tool_call(0, "r", 1, "issue_refund", ARGS)
            .request(10, "r", 1, 1, "POST", REFUNDS)
            .timeout(10_010, "r", 1)
            .request(
                10_100,
                "r",
                1,
                2,
                "GET",
                "https://payments.internal/v1/refunds?order=A-1",
            )
            .response(10_200, "r", 1, 200, "OK")
            .request(10_300, "r", 1, 3, "POST", REFUNDS);
        let found = t.check(&RULE);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].message.starts_with("attempt 1 timed out")
                && found[0].message.contains("attempt 3"),
            "{}",
            found[0].message
        );
    }
}
