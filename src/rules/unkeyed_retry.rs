//! `unkeyed-retry`: a non-idempotent request retried after an ambiguous failure without a key.

use super::support::{
    attempt_evidence, effects_by_dispatch, ended_ambiguous, how_it_ended, retries,
};
use super::{Rule, Settings, Shared};
use crate::correlate::{AttemptId, AttemptRec, Model};
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
refund after a lookup that got a 503) is no retry. Where the input cannot show headers (an
HTTP client's own log line, an OpenTelemetry span recording no request header), a missing
key is unknown: such a retry is reported only when its dispatch made two or more effects
and the service logged no key on the retry's.

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
    // Calls whose every such retry's key the input could not show: judged by their effects.
    let mut unseen: Vec<(Finding, Vec<AttemptId>)> = Vec::new();
    for call in &model.calls {
        let mut f: Option<Finding> = None;
        let mut unseen_retries: Vec<AttemptId> = Vec::new();
        let mut seen = false;
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
                if retry.key_unseen {
                    let index = disp.attempts.iter().position(|a| std::ptr::eq(a, retry));
                    unseen_retries.push(AttemptId::new(d, index.unwrap_or_default()));
                } else {
                    seen = true;
                }
            }
        }
        match f {
            Some(f) if seen => out.push(f),
            Some(f) => unseen.push((f, unseen_retries)),
            None => {}
        }
    }
    out.extend(keyless_by_their_effects(model, unseen));
}

/// Calls whose retries' keys no line or span could show (an HTTP client's own log line,
/// an OpenTelemetry span without captured request headers): a missing key there is
/// unknown, not absent, and reporting every such retry blamed clients that sent one. The
/// effects say what the trace cannot: a retry whose effect the service logged with a key
/// was sent with it; a dispatch that made two or more effects was not deduplicated, keyed
/// or not. Reported are the calls with a retry of such a dispatch whose own effects show no
/// key, or, when it made none, whose dispatch's effects show none (Stripe's SDK resends a
/// request with a key it logs nowhere: the service replays it, and the refunds are keyed).
fn keyless_by_their_effects(model: &Model, unseen: Vec<(Finding, Vec<AttemptId>)>) -> Vec<Finding> {
    if unseen.is_empty() {
        return Vec::new();
    }
    let dispatches = unseen
        .iter()
        .flat_map(|(_, r)| r.iter().map(|a| a.dispatch()));
    let by_dispatch = effects_by_dispatch(model, dispatches);
    let keyless = |retry: &AttemptId| {
        let effects = by_dispatch
            .get(&retry.dispatch())
            .map_or(&[][..], Vec::as_slice);
        let keyed = |e: &usize| model.effects[*e].key.is_some();
        // The retry's own effects say its key; one that made none (the SDK's resend the
        // service answered as a replay of the first's key, or a retry whose refund the
        // clocks' skew gave to the attempt before) is keyless when no effect of its
        // dispatch was keyed.
        let mut own = (effects.iter()).filter(|&&e| model.effects[e].matched == Some(*retry));
        let shown = match own.next() {
            Some(first) => !keyed(first) && !own.any(keyed),
            None => !effects.iter().any(keyed),
        };
        effects.len() >= 2 && shown
    };
    unseen
        .into_iter()
        .filter(|(_, retries)| retries.iter().any(keyless))
        .map(|(f, _)| f)
        .collect()
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

    /// A retry whose headers the input cannot show (an HTTP client's own line, a span
    /// without captured headers) is reported only when its effects show no key was
    /// honoured: two refunds with none logged on the retry's.
    #[test]
    fn a_retry_whose_key_is_unseen_is_judged_by_its_effects() {
        let trace = |second: bool, key: Option<&str>| {
            let mut t = Trace::new();
            t.tool_call(0, "r", 1, "issue_refund", ARGS)
                .request(10, "r", 1, 1, "POST", REFUNDS)
                .headers_unseen()
                .refund(500, "rf_1", "A-1", 4500, key)
                .timeout(10_010, "r", 1)
                .request(10_300, "r", 1, 2, "POST", REFUNDS)
                .headers_unseen();
            if second {
                t.refund(10_400, "rf_2", "A-1", 4500, None);
            }
            t.response(10_500, "r", 1, 201, "Created");
            t.check(&RULE)
        };
        // One refund (the service replayed the keyed retry): nothing shows a missing key.
        assert!(trace(false, None).is_empty());
        // Two refunds, no key on either: the retry went without one.
        assert_eq!(trace(true, None).len(), 1);
        // Both refunds made before the retry was sent, as a service's clock behind the
        // agent's dates them: the retry, answered 201, still made the second (by the match,
        // `correlate/answers.rs`; it took none before): reported when neither refund was
        // keyed, not when both were (its own refund shows the retry's key).
        let skewed = |keys: [Option<&str>; 2]| {
            let mut t = Trace::new();
            t.tool_call(0, "r", 1, "issue_refund", ARGS)
                .request(10, "r", 1, 1, "POST", REFUNDS)
                .headers_unseen()
                .refund(500, "rf_1", "A-1", 4500, keys[0])
                .timeout(10_010, "r", 1)
                .refund(10_250, "rf_2", "A-1", 4500, keys[1])
                .request(10_300, "r", 1, 2, "POST", REFUNDS)
                .headers_unseen()
                .response(10_500, "r", 1, 201, "Created");
            let m = t.model();
            let by_attempt: Vec<_> = (m.effects.iter())
                .map(|e| e.matched.map(|a| a.index()))
                .collect();
            assert_eq!(by_attempt, [Some(0), Some(1)], "one refund per attempt");
            t.check(&RULE).len()
        };
        assert_eq!(skewed([None, None]), 1);
        assert_eq!(skewed([Some("K-1"), Some("K-2")]), 0);
        // The same retry in the SPEC's shape, where a line without a key has none: reported
        // with one refund.
        let mut t = Trace::new();
        t.tool_call(0, "r", 1, "issue_refund", ARGS)
            .request(10, "r", 1, 1, "POST", REFUNDS)
            .timeout(10_010, "r", 1)
            .request(10_300, "r", 1, 2, "POST", REFUNDS);
        assert_eq!(t.check(&RULE).len(), 1);
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
