//! `retry-non-retryable`: a request sent again after a permanent failure (400, 401, 403, 404,
//! 422), which will fail the same way.

use super::support::{attempt_evidence, call_attempts, call_finding, common_key, retries};
use super::{Rule, Settings, Shared};
use crate::classify::FailureClass;
use crate::correlate::{AttemptRec, Model};
use crate::finding::{Finding, Severity};

pub static RULE: Rule = Rule {
    id: "retry-non-retryable",
    default_severity: Severity::Warning,
    default_enabled: true,
    summary: "a request was retried after a permanent failure (400, 401, 403, 404, 422)",
    explanation: r#"## What it does
Reports a logical call with an attempt that ended in a permanent failure (400, 401, 403,
404, 422, or another 4xx other than 409 and 429: the one classification every rule uses)
followed by the same request (method and URL) sent again in the same call, whether the HTTP
client or the framework (a step retry) sent it. One finding per call. A different request of
the call (the refund after a lookup of the order's refunds answered 404) is no retry.

## Why is this bad
A permanent failure says the request itself is wrong: it will fail identically however
often it is sent. The retries consume rate limit, delay the step's real failure, and show a
retry policy inherited from a library default instead of written down; the same policy is
usually the one retrying a timeout without a key.

## How to fix
Write the retry policy in one `retryable(error)` predicate and use it in every tool wrapper:
retry `safe` failures freely, `ambiguous` ones only with an idempotency key, back off on a
409, and never retry 400, 401, 403, 404 or 422: fail the step with the service's message.

## Example
```
11:00:00.010  POST https://payments.internal/v1/refunds  (attempt 1)
11:00:00.200  422 Unprocessable Entity  amount exceeds captured total
11:00:00.700  POST https://payments.internal/v1/refunds  (attempt 2)
11:00:00.890  422 Unprocessable Entity  amount exceeds captured total
```
"#,
    check,
};

fn check(model: &Model, _settings: &Settings, _shared: &Shared, out: &mut Vec<Finding>) {
    for call in &model.calls {
        let mut f: Option<Finding> = None;
        let mut sent_again = 0;
        let mut involved: Vec<&AttemptRec> = Vec::new();
        let attempts = call_attempts(model, call);
        for (failed, retry) in retries(&attempts) {
            let Some(o) = failed
                .outcome
                .as_ref()
                .filter(|o| o.class() == FailureClass::Permanent)
            else {
                continue;
            };
            sent_again += 1;
            let finding = f.get_or_insert_with(|| {
                // Said of what the trace shows: a retry that got through (a token refreshed
                // between the two) did not fail the same way.
                let then = match retry.outcome.as_ref() {
                    Some(r) if r.class() == FailureClass::Success => format!(
                        "it got {}: if something changed between the two (a token refreshed), \
                         log it; else the first was not the permanent failure it said",
                        r.describe()
                    ),
                    _ => "it fails the same way".to_string(),
                };
                let message = format!(
                    "attempt {} got {}, a permanent failure, and attempt {} was sent anyway: {then}",
                    failed.number,
                    o.describe(),
                    retry.number
                );
                call_finding(&RULE, model, call, message)
            });
            attempt_evidence(failed, &mut finding.evidence);
            attempt_evidence(retry, &mut finding.evidence);
            involved.extend([failed, retry]);
        }
        if let Some(mut f) = f {
            f.key = common_key(involved);
            if sent_again > 1 {
                f.message
                    .push_str(&format!(" ({sent_again} retries after permanent failures)"));
            }
            out.push(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testkit::Trace;

    const ARGS: &str = r#"{"order":"A-1","amount_p":99999}"#;

    /// A resend that got through after a 401 (a token refreshed between the two) is still
    /// reported, without saying it failed the same way.
    #[test]
    fn a_retry_that_got_through_is_not_said_to_fail() {
        let mut t = Trace::new();
        t.tool_call(0, "r", 1, "issue_refund", ARGS)
            .attempt(10, "r", 1, 1, Some("k"))
            .response(200, "r", 1, 401, "Unauthorized")
            .attempt(700, "r", 1, 2, Some("k"))
            .response(900, "r", 1, 201, "Created");
        let found = t.check(&RULE);
        assert_eq!(found.len(), 1);
        let message = &found[0].message;
        assert!(!message.contains("fails the same way"), "{message}");
        assert!(message.contains("it got 201 Created"), "{message}");
        // The attempts shared their key: the finding is about it.
        assert_eq!(found[0].key.as_deref(), Some("k"));
    }

    /// The finding's key is the one its attempts shared; none when they carried none, or
    /// two different ones.
    #[test]
    fn the_key_is_the_one_the_attempts_shared() {
        let key = |keys: [Option<&str>; 2]| {
            let mut t = Trace::new();
            t.tool_call(0, "r", 1, "issue_refund", ARGS)
                .attempt(10, "r", 1, 1, keys[0])
                .response(200, "r", 1, 400, "Bad Request")
                .attempt(700, "r", 1, 2, keys[1])
                .response(900, "r", 1, 400, "Bad Request");
            let found = t.check(&RULE);
            assert_eq!(found.len(), 1, "{found:?}");
            found[0].key.clone()
        };
        assert_eq!(key([Some("kv1"), Some("kv1")]).as_deref(), Some("kv1"));
        assert_eq!(key([Some("kv1"), None]).as_deref(), Some("kv1"));
        assert_eq!(key([None, None]), None);
        assert_eq!(key([Some("kv1"), Some("kv2")]), None);
    }

    #[test]
    fn retrying_a_422_is_reported_once_per_call() {
        let mut t = Trace::new();
        t.tool_call(0, "r", 1, "issue_refund", ARGS)
            .attempt(10, "r", 1, 1, None)
            .response(200, "r", 1, 422, "Unprocessable Entity")
            .attempt(700, "r", 1, 2, None)
            .response(900, "r", 1, 422, "Unprocessable Entity")
            .attempt(1700, "r", 1, 3, None)
            .response(1900, "r", 1, 422, "Unprocessable Entity");
        let found = t.check(&RULE);
        assert_eq!(found.len(), 1);
        assert!(
            found[0]
                .message
                .contains("attempt 1 got 422 Unprocessable Entity"),
            "{}",
            found[0].message
        );
        assert!(
            found[0].message.contains("2 retries"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn a_step_retry_after_a_404_counts_too() {
        let mut t = Trace::new();
        t.tool_call(0, "r", 1, "issue_refund", ARGS)
            .attempt(10, "r", 1, 1, None)
            .response(200, "r", 1, 404, "Not Found")
            .step_end(210, "r", 1, Some("404 Not Found"))
            .tool_call(5000, "r", 1, "issue_refund", ARGS)
            .attempt(5010, "r", 1, 1, None);
        assert_eq!(t.check(&RULE).len(), 1);
    }

    /// A lookup answered 404 (no refunds yet) and the refund after it are two requests.
    #[test]
    fn another_request_after_a_permanent_failure_is_no_retry() {
        let mut t = Trace::new();
        t.tool_call(0, "r", 1, "issue_refund", ARGS)
            .request(
                10,
                "r",
                1,
                1,
                "GET",
                "https://payments.internal/v1/orders/A-1/refunds",
            )
            .response(100, "r", 1, 404, "Not Found")
            .request(
                200,
                "r",
                1,
                2,
                "POST",
                "https://payments.internal/v1/refunds",
            )
            .response(300, "r", 1, 201, "Created");
        assert!(t.check(&RULE).is_empty());
        // The same request sent again after the other is still reported.
        t.request(
            400,
            "r",
            1,
            3,
            "GET",
            "https://payments.internal/v1/orders/A-1/refunds",
        );
        let found = t.check(&RULE);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].message.contains("attempt 3 was sent"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn retrying_timeouts_conflicts_and_rate_limits_is_not_this_rule() {
        let mut t = Trace::new();
        t.tool_call(0, "r", 1, "issue_refund", ARGS)
            .attempt(10, "r", 1, 1, Some("k"))
            .timeout(10_010, "r", 1)
            .attempt(10_500, "r", 1, 2, Some("k"))
            .response(10_600, "r", 1, 409, "Conflict")
            .attempt(11_600, "r", 1, 3, Some("k"))
            .response(11_700, "r", 1, 429, "Too Many Requests")
            .attempt(13_700, "r", 1, 4, Some("k"))
            .response(13_800, "r", 1, 422, "Unprocessable Entity")
            .step_end(13_900, "r", 1, Some("422"));
        assert!(t.check(&RULE).is_empty());
    }
}
