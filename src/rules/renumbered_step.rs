//! `renumbered-step`: after a resume, a completed step's call was issued again under another
//! step number, so a key derived from the step changed.

use super::support::{
    amount_text, dispatch_evidence, effects_by_dispatch, resume_evidence, show_effects,
};
use super::{Rule, Settings, Shared};
use crate::correlate::Model;
use crate::finding::{Finding, Severity};

pub static RULE: Rule = Rule {
    id: "renumbered-step",
    default_severity: Severity::Error,
    default_enabled: true,
    summary: "after a resume, a completed step's call was issued again under another step number",
    explanation: r#"## What it does
After a run is resumed, finds a call with the same tool and the same canonical arguments as
another step of the run that had already completed (or had already produced an effect)
before the resume, issued under a different step number. The finding names both step
numbers, both keys, and whether a second effect resulted (at most a warning when the same
key was sent again and nothing repeated: the key held); when one did, `duplicate-effect`
reports it too, with cause `resume`. Two different refunds under one tool name (other
arguments) are not a renumbering, and neither is a re-planned read (a call that can have no
effect) nor a repeat of a step that only read (GET, HEAD, OPTIONS): it left nothing to repeat.

## Why is this bad
A framework that regenerates the plan on resume renumbers the steps. A key derived from
(run, step, tool, args) then changes with the step number, the service sees a new request,
and the effect repeats, while the trace looks like an agent doing its job twice.

## How to fix
Persist the plan and the step index with the run's state, so that a resumed run replays
steps 1..k under the same numbers and gets the stored responses. Test it: crash a run after
an effect, resume it, and check that every key it sends was sent before.

## Example
```
14:00:02.210  agent run 7f3a  step 4  ok
14:00:03.000  agent run 7f3a  crashed
14:01:00.000  agent run 7f3a  resumed
14:01:02.000  agent run 7f3a  step 5  tool=issue_refund  args={"order":"A-88214","amount_p":4500}
```
Step 4's refund is issued again as step 5 under a new key.
"#,
    check,
};

fn check(model: &Model, _settings: &Settings, _shared: &Shared, out: &mut Vec<Finding>) {
    if model.calls.iter().all(|c| c.renumbered_from().is_none()) {
        return;
    }
    let renumbered = model
        .calls
        .iter()
        .filter_map(|c| Some((c, c.renumbered_from()?)));
    let shown = renumbered
        .flat_map(|(call, orig)| call.dispatches.iter().chain(&model.calls[orig].dispatches))
        .copied();
    let by_dispatch = effects_by_dispatch(model, shown);
    let effects_of = |d: &usize| by_dispatch.get(d).into_iter().flatten().copied();
    for call in &model.calls {
        let Some(orig) = call.renumbered_from() else {
            continue;
        };
        let original = &model.calls[orig];
        let Some(&new_d) = call.dispatches.first() else {
            continue;
        };
        let seg = model.dispatches[new_d].segment;
        let Some(&old_d) = original
            .dispatches
            .iter()
            .filter(|&&d| model.dispatches[d].segment < seg)
            .max_by_key(|&&d| (model.dispatches[d].first_at(), d))
        else {
            continue;
        };
        let (old, new) = (&model.dispatches[old_d], &model.dispatches[new_d]);
        let before: Vec<usize> = original.dispatches.iter().flat_map(effects_of).collect();
        let after: Vec<usize> = call.dispatches.iter().flat_map(effects_of).collect();
        let mut f = Finding::new(RULE.id, RULE.default_severity, String::new());
        f.run = Some(call.run.to_string());
        f.step = Some(call.step);
        f.tool = Some(call.tool.to_string()).filter(|t| !t.is_empty());
        f.order = new
            .order
            .as_deref()
            .map(String::from)
            .or_else(|| old.order.as_deref().map(String::from));
        f.key = new.key().map(String::from);
        dispatch_evidence(old, &mut f.evidence);
        for &d in &call.dispatches {
            dispatch_evidence(&model.dispatches[d], &mut f.evidence);
        }
        resume_evidence(model, &call.run, seg, &mut f.evidence);
        // The effects of both sides, for the reader; the money is `duplicate-effect`'s.
        show_effects(model, before.iter().chain(&after).copied(), &mut f);
        // Each spelled with its leading blank: none at all where no key can be told.
        let keys = match (old.key(), new.key()) {
            (Some(a), Some(b)) if a == b => format!(" with the same key {b}"),
            (Some(a), Some(b)) => format!(" so its key changed from {a} to {b}"),
            (Some(a), None) => format!(" without its key {a}"),
            (None, Some(b)) => format!(" with key {b} (step {} sent none)", old.call.step),
            (None, None) if old.requests_logged() && new.requests_logged() => {
                " without a key either time".to_string()
            }
            // Whether a key was sent is not in the trace.
            (None, None) => String::new(),
        };
        let resumed = model
            .resume_at(&call.run, seg)
            .map(|r| format!(" at {r}"))
            .unwrap_or_default();
        let outcome = match after.as_slice() {
            [] => "no second effect resulted".to_string(),
            some => {
                let ids: Vec<&str> = some.iter().map(|&i| model.effects[i].id.as_str()).collect();
                let amount = model.effects[some[0]].amount();
                format!(
                    "a second effect resulted ({}, {})",
                    ids.join(", "),
                    amount_text(amount)
                )
            }
        };
        // The same key sent again and nothing repeated: the key held (it is not derived from
        // the step), and the renumbering is a habit to fix, not a failure.
        let key_held = after.is_empty() && old.key().is_some() && old.key() == new.key();
        if key_held {
            f.severity = f.severity.min(Severity::Warning);
        }
        f.message = format!(
            "after run {} was resumed{resumed}, step {}'s {} call, done before the resume, was issued again as step {}{keys}; {outcome}",
            call.run,
            old.call.step,
            if call.tool.is_empty() {
                "tool"
            } else {
                &call.tool
            },
            call.step,
        );
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::event::Lifecycle;
    use crate::finding::{Cause, Severity};
    use crate::rules::testkit::scenarios::{ARGS, resumed};
    use crate::rules::testkit::{Trace, ids, t};

    #[test]
    fn a_replanned_refund_is_a_renumbering_and_a_resume_duplicate() {
        let tr = resumed(true);
        let found = tr.of("renumbered-step");
        assert_eq!(found.len(), 1, "{found:#?}");
        let f = &found[0];
        assert_eq!((f.run.as_deref(), f.step), (Some("7f3a"), Some(5)));
        assert_eq!(f.key.as_deref(), Some("k5"));
        for part in [
            "step 4",
            "step 5",
            "from k4 to k5",
            "a second effect resulted (rf_R2",
        ] {
            assert!(f.message.contains(part), "{part}: {}", f.message);
        }
        assert_eq!(ids(f), ["rf_R1", "rf_R2"]);
        assert_eq!(
            f.excess_minor, None,
            "the money belongs to duplicate-effect"
        );
        let dup = tr.of("duplicate-effect");
        assert_eq!(dup.len(), 1, "{dup:#?}");
        assert_eq!(dup[0].cause, Some(Cause::Resume));
        assert_eq!(dup[0].step, Some(4));
        assert_eq!(dup[0].excess_minor, Some(4500));
        assert!(tr.of("duplicate-decision").is_empty());
        assert!(tr.of("resume-key-drift").is_empty());
    }

    /// The same key sent under the new step number, and the service replayed: the key held
    /// (it was not derived from the step), so the renumbering is a warning; with the key
    /// changed and a second refund it is an error, as above.
    #[test]
    fn a_renumbering_the_key_survived_is_a_warning() {
        let mut tr = Trace::default();
        tr.run_event(t(0, "14:00:00"), "7f3a", Lifecycle::Started)
            .tool_call(t(0, "14:00:01"), "7f3a", 4, "issue_refund", ARGS)
            .attempt(t(0, "14:00:01.010"), "7f3a", 4, 1, Some("k"))
            .refund(t(0, "14:00:01.100"), "rf_R1", "A-88214", 4500, Some("k"))
            .created(t(0, "14:00:02.200"), "7f3a", 4, "rf_R1", false)
            .step_end(t(0, "14:00:02.210"), "7f3a", 4, None)
            .run_event(t(0, "14:00:03"), "7f3a", Lifecycle::Crashed)
            .run_event(t(0, "14:01:00"), "7f3a", Lifecycle::Resumed)
            .tool_call(t(0, "14:01:02"), "7f3a", 5, "issue_refund", ARGS)
            .attempt(t(0, "14:01:02.010"), "7f3a", 5, 1, Some("k"))
            .created(t(0, "14:01:02.100"), "7f3a", 5, "rf_R1", true)
            .step_end(t(0, "14:01:02.110"), "7f3a", 5, None);
        let found = tr.of("renumbered-step");
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].severity, Severity::Warning);
        let held = "with the same key k; no second effect resulted";
        assert!(found[0].message.contains(held), "{}", found[0].message);
        assert_eq!(
            resumed(true).of("renumbered-step")[0].severity,
            Severity::Error
        );
    }

    #[test]
    fn a_resume_that_replays_its_steps_is_clean() {
        let tr = resumed(false);
        assert_eq!(tr.findings(), vec![]);
    }

    #[test]
    fn other_arguments_or_reads_are_not_renumberings() {
        // After the resume: a different refund (another amount) under the same tool, and the
        // order lookup re-planned from step 3 to step 6.
        let mut tr = Trace::default();
        tr.tool_call(
            t(0, "10:00:00"),
            "r",
            3,
            "lookup_order",
            r#"{"order":"A-88214"}"#,
        )
        .get(t(0, "10:00:00.010"), "r", 3)
        .step_end(t(0, "10:00:00.100"), "r", 3, None)
        .tool_call(t(0, "10:00:01"), "r", 4, "issue_refund", ARGS)
        .attempt(t(0, "10:00:01.010"), "r", 4, 1, Some("k4"))
        .refund(t(0, "10:00:01.100"), "rf_1", "A-88214", 4500, Some("k4"))
        .step_end(t(0, "10:00:02"), "r", 4, None)
        .run_event(t(0, "10:00:03"), "r", Lifecycle::Crashed)
        .run_event(t(0, "10:01:00"), "r", Lifecycle::Resumed)
        .tool_call(
            t(0, "10:01:01"),
            "r",
            6,
            "lookup_order",
            r#"{"order":"A-88214"}"#,
        )
        .get(t(0, "10:01:01.010"), "r", 6)
        .step_end(t(0, "10:01:01.100"), "r", 6, None)
        .tool_call(
            t(0, "10:01:02"),
            "r",
            7,
            "issue_refund",
            r#"{"order":"A-88214","amount_p":1200}"#,
        )
        .attempt(t(0, "10:01:02.010"), "r", 7, 1, Some("k7"))
        .refund(t(0, "10:01:02.100"), "rf_2", "A-88214", 1200, Some("k7"))
        .step_end(t(0, "10:01:03"), "r", 7, None);
        assert_eq!(tr.findings(), vec![]);
    }

    #[test]
    fn a_step_that_never_completed_is_not_renumbered() {
        // Step 4 was dispatched but crashed before any effect or end: re-planning it as
        // step 5 repeats nothing.
        let mut tr = Trace::default();
        tr.tool_call(t(0, "10:00:01"), "r", 4, "issue_refund", ARGS)
            .run_event(t(0, "10:00:01.005"), "r", Lifecycle::Crashed)
            .run_event(t(0, "10:01:00"), "r", Lifecycle::Resumed)
            .tool_call(t(0, "10:01:02"), "r", 5, "issue_refund", ARGS)
            .attempt(t(0, "10:01:02.010"), "r", 5, 1, Some("k5"))
            .refund(t(0, "10:01:02.100"), "rf_2", "A-88214", 4500, Some("k5"))
            .step_end(t(0, "10:01:03"), "r", 5, None);
        assert_eq!(tr.findings(), vec![]);
    }

    #[test]
    fn a_started_after_a_crash_counts_as_a_resume() {
        let mut tr = Trace::default();
        tr.run_event(t(0, "10:00:00"), "r", Lifecycle::Started)
            .tool_call(t(0, "10:00:01"), "r", 4, "issue_refund", ARGS)
            .attempt(t(0, "10:00:01.010"), "r", 4, 1, Some("k4"))
            .refund(t(0, "10:00:01.100"), "rf_1", "A-88214", 4500, Some("k4"))
            .step_end(t(0, "10:00:02"), "r", 4, None)
            .run_event(t(0, "10:00:03"), "r", Lifecycle::Crashed)
            .run_event(t(0, "10:01:00"), "r", Lifecycle::Started)
            .tool_call(t(0, "10:01:02"), "r", 1, "issue_refund", ARGS)
            .attempt(t(0, "10:01:02.010"), "r", 1, 1, None)
            .created(t(0, "10:01:02.200"), "r", 1, "rf_1", true)
            .step_end(t(0, "10:01:03"), "r", 1, None);
        let found = tr.of("renumbered-step");
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0].message.contains("no second effect resulted"),
            "{}",
            found[0].message
        );
        assert!(
            found[0].message.contains("without its key k4"),
            "{}",
            found[0].message
        );
        assert!(tr.of("duplicate-effect").is_empty());
    }
}
