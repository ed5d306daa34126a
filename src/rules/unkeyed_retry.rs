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
and the service logged no key on the retry's. Where the line shows no key but the service
logged keys on the effects of the dispatch's attempts, the client sent keys whatever its log
printed: the retry is reported only when the service logged no key on its own effects, or,
when it made none, another line of the dispatch shows a key (the log prints keys) or no
effect of the dispatch carries one. Keys that differ per attempt are `key-per-attempt`'s.

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

fn check(model: &Model, _settings: &Settings, shared: &Shared, out: &mut Vec<Finding>) {
    let service = shared.service_keys();
    // Calls with a retry whose missing key the service's log may contradict: judged by
    // their effects.
    let mut judged: Vec<(Finding, Vec<Retry>)> = Vec::new();
    for call in &model.calls {
        let mut f: Option<Finding> = None;
        let mut to_judge: Vec<Retry> = Vec::new();
        let mut keyless = false;
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
                let index = disp.attempts.iter().position(|a| std::ptr::eq(a, retry));
                let id = AttemptId::new(d, index.unwrap_or_default());
                // A line that shows no key where the service logged none on any effect of
                // its dispatch: nothing contradicts it.
                let contradicted = !service.is_empty()
                    && (0..disp.attempts.len()).any(|i| service.shows_a_key(AttemptId::new(d, i)));
                if retry.key_unseen || contradicted {
                    to_judge.push(Retry {
                        id,
                        unseen: retry.key_unseen,
                    });
                } else {
                    keyless = true;
                }
            }
        }
        match f {
            Some(f) if keyless => out.push(f),
            Some(f) => judged.push((f, to_judge)),
            None => {}
        }
    }
    out.extend(keyless_by_their_effects(model, judged));
}

/// A retry whose line shows no key, and whether the input could show it at all.
struct Retry {
    id: AttemptId,
    unseen: bool,
}

/// Calls whose retries' missing keys the effects may contradict, reported when the effects
/// show a retry was keyless.
///
/// Where no line or span could show the key (an HTTP client's own log line, an
/// OpenTelemetry span without captured request headers), a missing key is unknown, not
/// absent, and reporting every such retry blamed clients that sent one. The effects say
/// what the trace cannot: a retry whose effect the service logged with a key was sent with
/// it; a dispatch that made two or more effects was not deduplicated, keyed or not. Such a
/// retry is keyless when its dispatch made two or more effects and its own effects show no
/// key, or, when it made none, its dispatch's effects show none (Stripe's SDK resends a
/// request with a key it logs nowhere: the service replays it, and the refunds are keyed).
///
/// Where the line shows no key (SPEC §3.1: a missing token is no key) but the service
/// logged keys on the effects of the dispatch's attempts, the client sent keys whatever its
/// log printed: the retry is keyless when its own effects show no key, or, when it made
/// none, some line of the dispatch shows a key (the log prints keys, so this retry had
/// none) or no effect of the dispatch was logged with one.
fn keyless_by_their_effects(model: &Model, judged: Vec<(Finding, Vec<Retry>)>) -> Vec<Finding> {
    if judged.is_empty() {
        return Vec::new();
    }
    let dispatches = judged
        .iter()
        .flat_map(|(_, r)| r.iter().map(|a| a.id.dispatch()));
    let by_dispatch = effects_by_dispatch(model, dispatches);
    let keyless = |retry: &Retry| {
        let d = retry.id.dispatch();
        let effects = by_dispatch.get(&d).map_or(&[][..], Vec::as_slice);
        let keyed = |e: &usize| model.effects[*e].key.is_some();
        // The retry's own effects say its key; one that made none (the SDK's resend the
        // service answered as a replay of the first's key, or a retry whose refund the
        // clocks' skew gave to the attempt before) is keyless when no effect of its
        // dispatch was keyed.
        let mut own = (effects.iter()).filter(|&&e| model.effects[e].matched == Some(retry.id));
        let shown = match own.next() {
            Some(first) => !keyed(first) && !own.any(keyed),
            None if retry.unseen => !effects.iter().any(keyed),
            None => {
                let lines_show_keys = model.dispatches[d].attempts.iter().any(|a| a.key.is_some());
                lines_show_keys || !effects.iter().any(keyed)
            }
        };
        shown && (!retry.unseen || effects.len() >= 2)
    };
    judged
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

    /// In the SPEC's shape a line without a key has none, unless the service's log shows
    /// one: a retry whose refund the service logged with a key was sent with it, whatever
    /// the client's log printed (that is key-per-attempt's finding when the keys differ).
    #[test]
    fn a_missing_key_the_services_log_contradicts_is_no_claim() {
        let trace = |keys: [Option<&str>; 2]| {
            let mut t = Trace::new();
            t.tool_call(0, "r", 1, "issue_refund", ARGS)
                .request(10, "r", 1, 1, "POST", REFUNDS)
                .refund(500, "rf_1", "A-1", 4500, keys[0])
                .timeout(10_010, "r", 1)
                .request(10_300, "r", 1, 2, "POST", REFUNDS)
                .refund(10_400, "rf_2", "A-1", 4500, keys[1])
                .created(10_500, "r", 1, "rf_2", false);
            t.check(&RULE).len()
        };
        // Each refund logged with a key: both attempts were keyed.
        assert_eq!(trace([Some("k1"), Some("k2")]), 0);
        assert_eq!(trace([None, Some("k2")]), 0);
        // The retry's own refund logged without one: it went without a key.
        assert_eq!(trace([Some("k1"), None]), 1);
        assert_eq!(trace([None, None]), 1);

        // A retry that made no refund (the service replayed it): keyed when no line of the
        // call shows a key (a log printing no headers) and the refund was logged with one.
        let replayed = |first_line: Option<&str>, logged: Option<&str>| {
            let mut t = Trace::new();
            t.tool_call(0, "r", 1, "issue_refund", ARGS)
                .sent(10, "r", 1, 1, "POST", REFUNDS, first_line)
                .refund(500, "rf_1", "A-1", 4500, logged)
                .timeout(10_010, "r", 1)
                .request(10_300, "r", 1, 2, "POST", REFUNDS)
                .created(10_500, "r", 1, "rf_1", true);
            t.check(&RULE).len()
        };
        assert_eq!(replayed(None, Some("k1")), 0);
        assert_eq!(replayed(None, None), 1);
        // The log prints keys (attempt 1's line shows it) and the retry's shows none.
        assert_eq!(replayed(Some("k1"), Some("k1")), 1);
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
