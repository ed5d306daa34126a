//! `key-not-derived` (off unless `--key-scheme run-step-tool-args`): the key an attempt sent
//! is not the reference derivation of its logical call.

use super::support::{attempt_evidence, call_finding, has_args};
use super::{KeyScheme, Rule, Settings, Shared};
use crate::canonical::reference_key;
use crate::correlate::Model;
use crate::finding::{Finding, Severity};

pub static RULE: Rule = Rule {
    id: "key-not-derived",
    default_severity: Severity::Warning,
    default_enabled: false,
    summary: "the attempt's key is not the reference derivation of its logical call (needs --key-scheme)",
    explanation: r#"## What it does
With `--key-scheme run-step-tool-args`, recomputes each keyed attempt's expected key from its
logical call, exactly as the write-up's `idempotency_key(run_id, step, tool, args)` does
(`idem-audit key` prints it), and reports a call whose attempts sent anything else. The key
of the normalised arguments (`idem-audit key --normalize`) is accepted too. Calls with no
logged arguments cannot be checked and are passed over. Off unless the scheme is given:
without a declared scheme any stable key is acceptable.

## Why is this bad
When a team has agreed on a derivation, a key that differs from it was made some other way:
a `uuid4()`, a value the model supplied, a key built before a resume renumbered the step.
Such keys tend to change exactly when they must not (on a retry, a step retry or a resume),
and they cannot be recomputed by a replaying worker or checked by an auditor.

## How to fix
Compute the key with the shared derivation, once per logical call, from the run id kept in
the run's persisted state, the step index, the tool name and the arguments, and send it on
every attempt.

## Example
```
14:02:11.402  agent run 7f3a  step 4  tool=issue_refund  args={"order":"A-88214","amount_p":4500}
14:02:11.418  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=9f1c0a77
```
The derivation gives `21f4d5951991bb054dcaf0900af3d015`; `9f1c0a77` is something else.
"#,
    check,
};

fn check(model: &Model, settings: &Settings, _shared: &Shared, out: &mut Vec<Finding>) {
    let Some(KeyScheme::RunStepToolArgs) = settings.key_scheme else {
        return;
    };
    for call in &model.calls {
        let mut f: Option<Finding> = None;
        for &d in &call.dispatches {
            let disp = &model.dispatches[d];
            let tool = model.tool_of(disp);
            if !has_args(disp) || tool.is_empty() {
                continue;
            }
            let (run, step) = (&disp.call.run, disp.call.step);
            let args = disp.args();
            let expected = reference_key(run, step, tool, &args, false);
            let normalized = reference_key(run, step, tool, &args, true);
            for a in &disp.attempts {
                let Some(key) = a.key.as_deref() else {
                    continue;
                };
                if key == expected || key == normalized {
                    continue;
                }
                let finding = f.get_or_insert_with(|| {
                    let message = format!(
                        "attempt {} sent the key {key}, but run {run} step {step} {tool} derives {expected}: the key is not derived from the call",
                        a.number
                    );
                    let mut f = call_finding(&RULE, model, call, message);
                    f.key = Some(key.to_string());
                    f
                });
                finding.evidence.extend(disp.loc);
                attempt_evidence(a, &mut finding.evidence);
            }
        }
        out.extend(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testkit::Trace;

    fn scheme() -> Settings {
        Settings {
            key_scheme: Some(KeyScheme::RunStepToolArgs),
            ..Settings::default()
        }
    }

    fn keyed(key: &str, args: &str) -> Trace {
        let mut t = Trace::new();
        t.tool_call(0, "7f3a", 4, "issue_refund", args)
            .attempt(10, "7f3a", 4, 1, Some(key));
        t
    }

    #[test]
    fn a_key_that_is_not_the_derivation() {
        let t = keyed("9f1c0a77", r#"{"order":"A-88214","amount_p":4500}"#);
        let found = t.check_with(&RULE, &scheme());
        assert_eq!(found.len(), 1);
        assert!(
            found[0]
                .message
                .contains("21f4d5951991bb054dcaf0900af3d015"),
            "{}",
            found[0].message
        );
        // Without a declared scheme the rule has nothing to check against.
        assert!(t.check(&RULE).is_empty());
    }

    #[test]
    fn the_derived_key_raw_or_normalised_is_accepted() {
        let raw = r#"{"order":"A-88214","amount_p":4500}"#;
        assert!(
            keyed("21f4d5951991bb054dcaf0900af3d015", raw)
                .check_with(&RULE, &scheme())
                .is_empty()
        );
        let float = r#"{"order":"A-88214","amount_p":4500.0}"#;
        // The write-up's function on the float spelling, and on the normalised one.
        for key in [
            "7add4d603c2305a832dd5606cefc03db",
            "21f4d5951991bb054dcaf0900af3d015",
        ] {
            assert!(
                keyed(key, float).check_with(&RULE, &scheme()).is_empty(),
                "{key}"
            );
        }
    }
}
