//! Traces that log tool calls and not the requests under them (no HTTP logging, or a
//! framework's tool spans without HTTP instrumentation): each such call is taken to have
//! sent one request at its time (`AttemptRec::unlogged`), and the rules must neither lose
//! its effects nor claim what the trace does not show (a key, a gateway's replay).

use super::testkit::scenarios::ARGS;
use super::testkit::{Trace, ids, t};
use crate::event::Lifecycle;
use crate::finding::Cause;

/// One call, two refunds 11 s apart, nothing logged between the tool call and its end.
fn refunded_twice() -> Trace {
    let mut tr = Trace::default();
    tr.tool_call(t(0, "09:00:00"), "u", 4, "issue_refund", ARGS)
        .refund(t(0, "09:00:00.100"), "rf_1", "A-88214", 4500, None)
        .refund(t(0, "09:00:11.000"), "rf_2", "A-88214", 4500, None)
        .step_end(t(0, "09:00:11.200"), "u", 4, None);
    tr
}

#[test]
fn a_call_whose_requests_were_not_logged_has_its_duplicate_with_an_unknown_cause() {
    let tr = refunded_twice();
    let found = tr.of("duplicate-effect");
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f.cause, Some(Cause::Unknown));
    assert_eq!((f.run.as_deref(), f.step), (Some("u"), Some(4)));
    assert_eq!(ids(f), ["rf_1", "rf_2"]);
    assert!(
        f.message.contains("requests were not logged"),
        "{}",
        f.message
    );
    assert!(tr.of("unattributed-effect").is_empty());
    assert!(tr.of("duplicate-decision").is_empty());
}

#[test]
fn the_same_call_with_its_one_request_logged_is_a_gateway_retry() {
    let mut tr = refunded_twice();
    tr.attempt(t(0, "09:00:00.010"), "u", 4, 1, None);
    assert_eq!(
        tr.of("duplicate-effect")[0].cause,
        Some(Cause::GatewayRetry)
    );
}

/// A request nobody logged was answered by the time its step ended ok: a refund on the
/// same order two minutes later is not the call's.
#[test]
fn an_unlogged_request_is_closed_by_its_step_ending_ok() {
    let mut tr = Trace::default();
    tr.tool_call(
        t(0, "09:00:00"),
        "u",
        4,
        "issue_refund",
        r#"{"order":"A-88214"}"#,
    )
    .refund(t(0, "09:00:00.100"), "rf_1", "A-88214", 1200, None)
    .step_end(t(0, "09:00:00.700"), "u", 4, None)
    .refund(t(0, "09:02:00"), "rf_2", "A-88214", 1200, None)
    .tool_call(
        t(0, "09:10:00"),
        "u",
        5,
        "lookup_order",
        r#"{"order":"A-1"}"#,
    );
    assert!(tr.of("duplicate-effect").is_empty());
    let unattributed = tr.of("unattributed-effect");
    assert_eq!(unattributed.len(), 1, "{unattributed:#?}");
    assert_eq!(ids(&unattributed[0]), ["rf_2"]);
}

/// A run that logs its requests is taken at its word: a re-dispatch that failed before
/// sending anything is no request, and the refunds stay with the attempts that timed out.
#[test]
fn a_run_that_logs_its_requests_implies_none() {
    let mut tr = Trace::default();
    tr.tool_call(t(0, "09:00:00"), "m", 4, "issue_refund", ARGS)
        .attempt(t(0, "09:00:00.010"), "m", 4, 1, None)
        .timeout(t(0, "09:00:10.010"), "m", 4)
        .attempt(t(0, "09:00:10.500"), "m", 4, 2, None)
        .timeout(t(0, "09:00:20.500"), "m", 4)
        .step_end(t(0, "09:00:20.600"), "m", 4, Some("ReadTimeout"))
        .tool_call(t(0, "09:00:21"), "m", 4, "issue_refund", ARGS)
        .step_end(t(0, "09:00:21.003"), "m", 4, Some("401 Unauthorized"))
        .refund(t(0, "09:00:05"), "rf_1", "A-88214", 4500, None)
        .refund(t(0, "09:00:19"), "rf_2", "A-88214", 4500, None);
    let found = tr.of("duplicate-effect");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].cause, Some(Cause::ClientRetry));
    assert_eq!(tr.of("effect-after-timeout").len(), 2);
}

/// After a resume the call is issued again under a new step; neither side logged a
/// request, so no message may say it was sent without a key.
#[test]
fn a_resume_says_nothing_of_keys_nobody_logged() {
    let mut tr = Trace::default();
    tr.tool_call(t(0, "09:00:00"), "r", 4, "issue_refund", ARGS)
        .refund(t(0, "09:00:00.100"), "rf_1", "A-88214", 4500, None)
        .step_end(t(0, "09:00:00.500"), "r", 4, None)
        .run_event(t(0, "09:00:01"), "r", Lifecycle::Crashed)
        .run_event(t(0, "09:01:00"), "r", Lifecycle::Resumed)
        .tool_call(t(0, "09:01:01"), "r", 5, "issue_refund", ARGS)
        .refund(t(0, "09:01:01.100"), "rf_2", "A-88214", 4500, None)
        .step_end(t(0, "09:01:01.500"), "r", 5, None);
    let dup = tr.of("duplicate-effect");
    assert_eq!(dup.len(), 1, "{dup:#?}");
    assert_eq!(dup[0].cause, Some(Cause::Resume));
    let renumbered = tr.of("renumbered-step");
    assert_eq!(renumbered.len(), 1, "{renumbered:#?}");
    for f in dup.iter().chain(&renumbered) {
        assert!(!f.message.contains("key"), "{}", f.message);
    }
    assert!(
        renumbered[0]
            .message
            .contains("was issued again as step 5; a second effect"),
        "{}",
        renumbered[0].message
    );
}

/// A tool call whose requests nobody logged and whose step failed with a lost answer (a
/// read timeout) gave up on a refund that landed; one that failed otherwise says nothing of
/// its requests.
#[test]
fn a_tool_that_timed_out_gave_up_on_its_effect() {
    let trace = |error: &str| {
        let mut tr = Trace::default();
        tr.tool_call(t(0, "09:00:00"), "u", 4, "issue_refund", ARGS)
            .refund(t(0, "09:00:00.100"), "rf_1", "A-88214", 4500, None)
            .step_end(t(0, "09:00:10"), "u", 4, Some(error));
        tr
    };
    let timed_out = trace("requests.exceptions.ReadTimeout: Read timed out. (read timeout=10)");
    let found = timed_out.of("effect-after-timeout");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].message.starts_with(
            "the tool call gave up at 2026-11-03T09:00:10.000Z after 10.0 s (requests.exceptions.ReadTimeout"
        ),
        "{}",
        found[0].message
    );
    assert!(
        trace("ValueError: amount_p must be positive")
            .of("effect-after-timeout")
            .is_empty()
    );
}
