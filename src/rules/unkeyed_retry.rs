//! `unkeyed-retry`: a non-idempotent request retried after an ambiguous failure without a key.

use super::support::{attempt_evidence, ended_ambiguous, how_it_ended};
use super::{Rule, Settings, Shared};
use crate::correlate::Model;
use crate::finding::{Finding, Severity};

pub static RULE: Rule = Rule {
    id: "unkeyed-retry",
    default_severity: Severity::Warning,
    default_enabled: true,
    summary: "a POST or PATCH was retried after an ambiguous failure without an idempotency key",
    explanation: r#"## What it does
Finds calls where an attempt ended ambiguously (read timeout, connection reset mid-response,
502, 503, 504) and the next attempt of the same call was a POST or PATCH sent without an
`Idempotency-Key`. One finding per call.

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
            for pair in disp.attempts.windows(2) {
                let (failed, retry) = (&pair[0], &pair[1]);
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
