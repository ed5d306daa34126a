//! `model-supplied-key`: the idempotency key an attempt sent is a value the model wrote into
//! the tool arguments, rather than one derived from the request that started the run.

use super::support::{attempt_evidence, call_finding, has_args, sent_key};
use super::{Rule, Settings, Shared};
use crate::canonical::is_key_field;
use crate::correlate::{AttemptId, Model};
use crate::finding::{Finding, Severity};
use serde_json::Value;

pub static RULE: Rule = Rule {
    id: "model-supplied-key",
    default_severity: Severity::Warning,
    default_enabled: true,
    summary: "the idempotency key came from the model's tool arguments, not from the request that started the run",
    explanation: r#"## What it does
Looks for key-like fields in the tool arguments the model produced (`idempotency_key`,
`idempotencyKey`, `Idempotency-Key`, `request_id`, `client_request_id`, `dedup_key`, ... at
any depth, compared without case, `-` or `_`) and reports a call whose attempt sent one of
their values as its `Idempotency-Key`. One finding per logical call.

## Why is this bad
A model regenerating a tool call after an error will not reproduce a random identifier it
emitted a minute ago, so the key changes exactly when it must not: on the retry. And a
prompt-injected model can choose the key deliberately, to collide with someone else's
request or to defeat deduplication.

## How to fix
Derive the key in code, from the request that started the run and the call itself (run id,
step, tool, canonical arguments: `idem-audit key`), and keep key fields out of the tool
schema the model sees.

## Example
```
09:00:00.000  agent run q1  step 2  tool=issue_refund  args={"order":"A-1","amount_p":1000,"idempotency_key":"refund-A-1-abc"}
09:00:00.010  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=refund-A-1-abc
```
The header's value is the model's `idempotency_key` argument.
"#,
    check,
};

fn check(model: &Model, _settings: &Settings, shared: &Shared, out: &mut Vec<Finding>) {
    let service = shared.service_keys();
    for call in &model.calls {
        let mut f: Option<Finding> = None;
        for &d in &call.dispatches {
            let disp = &model.dispatches[d];
            // The key each attempt was sent with: its line's, else the one the service logged
            // on its effects (a client log that prints no headers).
            let sent = |i: usize| sent_key(model, service, AttemptId::new(d, i));
            // Most calls carry no key, or arguments whose text cannot hold it: their arguments
            // are not parsed (the parse was most of this rule's time).
            let may_hold_a_key = (0..disp.attempts.len())
                .filter_map(sent)
                .any(|(key, _)| may_hold(&disp.args_raw, key));
            if !has_args(disp) || !may_hold_a_key {
                continue;
            }
            let args = disp.args();
            for (i, a) in disp.attempts.iter().enumerate() {
                let Some((key, logged_on)) = sent(i) else {
                    continue;
                };
                let Some(mut path) = find_key_field(&args, key) else {
                    continue;
                };
                path.reverse();
                let finding = f.get_or_insert_with(|| {
                    let by = match logged_on {
                        Some(e) => format!(
                            "the service logged the key {key} on {} {}, made by attempt {}",
                            model.effects[e].kind, model.effects[e].id, a.number
                        ),
                        None => format!("attempt {} sent the key {key}", a.number),
                    };
                    let message = format!(
                        "{by}, which is the model's `{}` argument: a regenerated call will not reproduce it",
                        path.join(".")
                    );
                    let mut f = call_finding(&RULE, model, call, message);
                    f.key = Some(key.to_string());
                    f
                });
                finding.evidence.extend(disp.loc);
                attempt_evidence(a, &mut finding.evidence);
                if let Some(e) = logged_on {
                    finding
                        .evidence
                        .extend(model.effects[e].locs.iter().copied());
                }
            }
        }
        out.extend(f);
    }
}

/// Can arguments written as `raw` hold `key` as a string or number value? Numbers keep their
/// literal text and strings without escapes appear verbatim in the raw JSON, so a raw text
/// free of backslashes that does not contain the key cannot. (Arguments a parser handed over
/// already parsed are the JSON of `raw`, or `raw` as one string when it is not JSON.)
fn may_hold(raw: &str, key: &str) -> bool {
    raw.contains(key) || raw.contains('\\')
}

/// The path of a key-like field whose value is `key`, at any depth (innermost name first:
/// built only on a match, so a call without one allocates nothing).
fn find_key_field<'v>(v: &'v Value, key: &str) -> Option<Vec<&'v str>> {
    match v {
        Value::Object(map) => map.iter().find_map(|(k, child)| {
            let matches = is_key_field(k)
                && match child {
                    Value::String(s) => s == key,
                    Value::Number(n) => n.as_str() == key,
                    _ => false,
                };
            if matches {
                return Some(vec![k.as_str()]);
            }
            let mut path = find_key_field(child, key)?;
            path.push(k);
            Some(path)
        }),
        Value::Array(items) => items.iter().find_map(|i| find_key_field(i, key)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testkit::Trace;

    #[test]
    fn recognised_spellings() {
        for name in [
            "idempotency_key",
            "idempotencyKey",
            "Idempotency-Key",
            "request_id",
            "requestId",
        ] {
            assert!(is_key_field(name), "{name}");
        }
        assert!(!is_key_field("order_id"));
        assert!(!is_key_field("key"));
    }

    #[test]
    fn the_header_carries_the_models_value() {
        let mut t = Trace::new();
        t.tool_call(
            0,
            "q",
            2,
            "issue_refund",
            r#"{"order":"A-1","meta":{"requestId":"m-77"}}"#,
        )
        .attempt(10, "q", 2, 1, Some("m-77"));
        let found = t.check(&RULE);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].message.contains("`meta.requestId`"),
            "{}",
            found[0].message
        );
        assert_eq!(found[0].key.as_deref(), Some("m-77"));
    }

    /// The raw text does not contain `m-77` (its dash is escaped), the value does.
    #[test]
    fn an_escaped_key_in_the_arguments_is_still_found() {
        let mut t = Trace::new();
        t.tool_call(0, "q", 2, "issue_refund", r#"{"request_id":"m\u002d77"}"#)
            .attempt(10, "q", 2, 1, Some("m-77"));
        assert_eq!(t.check(&RULE).len(), 1);
        assert!(may_hold(r#"{"request_id":"m-77"}"#, "m-77"));
        assert!(may_hold(r#"{"request_id":77}"#, "77"));
        assert!(!may_hold(r#"{"request_id":"m-78"}"#, "m-77"));
    }

    /// A client log that prints no headers: the key the service logged on the refund the
    /// attempt made is the one it sent. Not where that log shows keys on other requests
    /// (the request went without one; the service's column is its own id).
    #[test]
    fn a_key_the_service_logged_is_the_attempts() {
        let mut t = Trace::new();
        let args = r#"{"order":"A-1","amount_p":1000,"idempotency_key":"m-77"}"#;
        t.tool_call(0, "q", 2, "issue_refund", args)
            .attempt(10, "q", 2, 1, None)
            .headers_unseen()
            .refund(500, "rf_1", "A-1", 1000, Some("m-77"));
        let found = t.check(&RULE);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0]
                .message
                .starts_with("the service logged the key m-77 on refund rf_1"),
            "{}",
            found[0].message
        );

        let mut t = Trace::new();
        t.tool_call(0, "q", 2, "issue_refund", args)
            .attempt(10, "q", 2, 1, None)
            .refund(500, "rf_1", "A-1", 1000, Some("m-77"))
            .tool_call(100_000, "q", 3, "issue_refund", r#"{"order":"A-2"}"#)
            .attempt(100_010, "q", 3, 1, Some("k-2"));
        assert!(t.check(&RULE).is_empty());
    }

    #[test]
    fn a_key_field_the_header_does_not_use_is_not_reported() {
        let mut t = Trace::new();
        t.tool_call(
            0,
            "q",
            2,
            "issue_refund",
            r#"{"order":"A-1","request_id":"m-77"}"#,
        )
        .attempt(10, "q", 2, 1, Some("21f4d5951991bb054dcaf0900af3d015"))
        .tool_call(100, "q", 3, "issue_refund", r#"{"order":"A-2"}"#)
        .attempt(110, "q", 3, 1, Some("A-2"));
        assert!(t.check(&RULE).is_empty());
    }
}
