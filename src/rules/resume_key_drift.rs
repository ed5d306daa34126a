//! `resume-key-drift`: after a resume, the same step was issued again with a different key.

use super::support::{
    amount_text, dispatch_evidence, effects_by_dispatch, resume_evidence, show_effects,
};
use super::{Rule, Settings, Shared};
use crate::correlate::Model;
use crate::finding::{Finding, Severity};
use rustc_hash::FxHashMap;

pub static RULE: Rule = Rule {
    id: "resume-key-drift",
    default_severity: Severity::Error,
    default_enabled: true,
    summary: "after a resume, the same step was issued again with a different key",
    explanation: r#"## What it does
Finds a logical call (same run, step, tool and canonical arguments) that was sent with one
idempotency key before a resume of its run and with another after it. One finding per
change of key; whether a second effect resulted is in the message, and when one did,
`duplicate-effect` reports it with cause `resume`.

## Why is this bad
A resumed run is meant to replay its completed steps against stored responses. That only
works when each step's key is the same after the crash as before it. A key that changed was
derived from something that was not persisted: a timestamp taken at dispatch, a random
value, an in-memory counter. The service sees a new request and performs the effect again.

## How to fix
Derive the key only from what the run's persisted state holds: the run id, the step index,
the tool and its canonical arguments (`idem-audit key` prints the reference derivation).
If a time bucket is part of the key, persist the bucket with the step.

## Example
```
14:00:01.010  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=7f3a-3-1762178401010
14:00:03.000  agent run 7f3a  crashed
14:01:00.000  agent run 7f3a  resumed
14:01:02.010  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=7f3a-3-1762178462010
```
Step 3's key came from the dispatch time, so the resume sent a new one.
"#,
    check,
};

fn check(model: &Model, _settings: &Settings, _shared: &Shared, out: &mut Vec<Finding>) {
    let mut drifts: Vec<(&str, usize, usize)> = Vec::new();
    for call in &model.calls {
        // The latest keyed dispatch so far; a dispatch in a later segment with another key
        // is a drift.
        let mut last: Option<usize> = None;
        for &d in &call.dispatches {
            let disp = &model.dispatches[d];
            let Some(key) = disp.key() else { continue };
            if let Some(p) = last {
                let prev = &model.dispatches[p];
                if disp.segment > prev.segment && prev.key() != Some(key) {
                    drifts.push((call.run.as_str(), p, d));
                }
            }
            last = Some(d);
        }
    }
    if drifts.is_empty() {
        return;
    }
    let drifted = drifts.iter().flat_map(|&(_, prev, next)| [prev, next]);
    let by_dispatch = effects_by_dispatch(model, drifted);
    for (run, prev, next) in drifts {
        out.push(finding(model, &by_dispatch, run, prev, next));
    }
}

fn finding(
    model: &Model,
    by_dispatch: &FxHashMap<usize, Vec<usize>>,
    run: &str,
    prev: usize,
    next: usize,
) -> Finding {
    let effects_of = |d: usize| by_dispatch.get(&d).into_iter().flatten().copied();
    let (old, new) = (&model.dispatches[prev], &model.dispatches[next]);
    let mut f = Finding::new(RULE.id, RULE.default_severity, String::new());
    f.run = Some(run.to_string());
    f.step = Some(new.call.step);
    f.tool = Some(model.tool_of(new).to_string()).filter(|t| !t.is_empty());
    f.order = new.order.as_deref().map(String::from);
    f.key = new.key().map(String::from);
    dispatch_evidence(old, &mut f.evidence);
    dispatch_evidence(new, &mut f.evidence);
    resume_evidence(model, run, new.segment, &mut f.evidence);
    let after: Vec<usize> = effects_of(next).collect();
    show_effects(model, effects_of(prev).chain(after.iter().copied()), &mut f);
    let resumed = model
        .resume_at(run, new.segment)
        .map(|r| format!(" at {r}"))
        .unwrap_or_default();
    let outcome = match after.as_slice() {
        [] => "no second effect resulted".to_string(),
        some => {
            let ids: Vec<&str> = some.iter().map(|&i| model.effects[i].id.as_str()).collect();
            format!(
                "a second effect resulted ({}, {})",
                ids.join(", "),
                amount_text(model.effects[some[0]].amount())
            )
        }
    };
    f.message = format!(
        "after run {run} was resumed{resumed}, step {} was issued again with key {} instead of {}: the key was derived from something not persisted; {outcome}",
        new.call.step,
        new.key().unwrap_or(""),
        old.key().unwrap_or(""),
    );
    f
}

#[cfg(test)]
mod tests {
    use crate::event::Lifecycle;
    use crate::finding::Cause;
    use crate::rules::testkit::scenarios::{ARGS, resumed};
    use crate::rules::testkit::{Trace, ids, t};

    /// Step 3's key is the run, the step and the dispatch time in milliseconds.
    fn drifting(resume_replays: bool) -> Trace {
        let mut tr = Trace::default();
        tr.tool_call(t(0, "14:00:01"), "7f3a", 3, "issue_refund", ARGS)
            .attempt(
                t(0, "14:00:01.010"),
                "7f3a",
                3,
                1,
                Some("7f3a-3-1762178401000"),
            )
            .refund(
                t(0, "14:00:01.100"),
                "rf_1",
                "A-88214",
                4500,
                Some("7f3a-3-1762178401000"),
            )
            .timeout(t(0, "14:00:11.010"), "7f3a", 3)
            .run_event(t(0, "14:00:11.500"), "7f3a", Lifecycle::Crashed)
            .run_event(t(0, "14:01:00"), "7f3a", Lifecycle::Resumed)
            .tool_call(t(0, "14:01:02"), "7f3a", 3, "issue_refund", ARGS);
        if resume_replays {
            tr.attempt(
                t(0, "14:01:02.010"),
                "7f3a",
                3,
                1,
                Some("7f3a-3-1762178401000"),
            )
            .created(t(0, "14:01:02.300"), "7f3a", 3, "rf_1", true);
        } else {
            tr.attempt(
                t(0, "14:01:02.010"),
                "7f3a",
                3,
                1,
                Some("7f3a-3-1762178462000"),
            )
            .refund(
                t(0, "14:01:02.100"),
                "rf_2",
                "A-88214",
                4500,
                Some("7f3a-3-1762178462000"),
            )
            .created(t(0, "14:01:02.300"), "7f3a", 3, "rf_2", false);
        }
        tr.step_end(t(0, "14:01:02.310"), "7f3a", 3, None);
        tr
    }

    #[test]
    fn a_key_from_the_dispatch_time_drifts_across_the_resume() {
        let tr = drifting(false);
        let found = tr.of("resume-key-drift");
        assert_eq!(found.len(), 1, "{found:#?}");
        let f = &found[0];
        assert_eq!((f.run.as_deref(), f.step), (Some("7f3a"), Some(3)));
        assert_eq!(f.key.as_deref(), Some("7f3a-3-1762178462000"));
        assert!(
            f.message
                .contains("with key 7f3a-3-1762178462000 instead of 7f3a-3-1762178401000"),
            "{}",
            f.message
        );
        assert!(
            f.message.contains("a second effect resulted (rf_2"),
            "{}",
            f.message
        );
        assert_eq!(ids(f), ["rf_1", "rf_2"]);
        let dup = tr.of("duplicate-effect");
        assert_eq!(dup.len(), 1);
        assert_eq!(dup[0].cause, Some(Cause::Resume));
        assert_eq!(dup[0].excess_minor, Some(4500));
        assert!(tr.of("renumbered-step").is_empty());
    }

    #[test]
    fn the_same_key_after_the_resume_is_not_drift() {
        let tr = drifting(true);
        assert!(tr.of("resume-key-drift").is_empty());
        assert!(tr.of("duplicate-effect").is_empty());
        assert!(resumed(false).of("resume-key-drift").is_empty());
    }
}
