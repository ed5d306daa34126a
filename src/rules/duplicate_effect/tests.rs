//! The rule on traces shaped like each cause, and its messages.

use crate::event::Lifecycle;
use crate::finding::Cause;
use crate::rules::testkit::scenarios::ARGS;
use crate::rules::testkit::{Trace, ids, t};

fn dup(tr: &Trace) -> crate::finding::Finding {
    let found = tr.of("duplicate-effect");
    assert_eq!(found.len(), 1, "{found:#?}");
    found.into_iter().next().unwrap()
}

/// The write-up's incident.
fn incident() -> Trace {
    let mut tr = Trace::default();
    tr.tool_call(t(0, "14:02:11.402"), "7f3a", 4, "issue_refund", ARGS)
        .attempt(t(0, "14:02:11.418"), "7f3a", 4, 1, None)
        .timeout(t(0, "14:02:21.418"), "7f3a", 4)
        .attempt(t(0, "14:02:21.930"), "7f3a", 4, 2, None)
        .created(t(0, "14:02:23.107"), "7f3a", 4, "rf_9KQ2", false)
        .step_end(t(0, "14:02:23.109"), "7f3a", 4, None);
    tr.refund_settled(
        t(0, "14:02:11.501"),
        "rf_8XM1",
        "A-88214",
        4500,
        t(0, "14:02:22.884"),
    );
    tr.refund_settled(
        t(0, "14:02:23.088"),
        "rf_9KQ2",
        "A-88214",
        4500,
        t(0, "14:02:34.010"),
    );
    tr
}

/// A call that names no order, answered once, and two refunds of the same amount made
/// while it was in flight: one per order, or both for `second_order`.
fn untraced_order(second_order: &str) -> Trace {
    let mut tr = Trace::default();
    tr.tool_call(16_213, "B", 1, "issue_refund", "null")
        .request(
            16_276,
            "B",
            1,
            1,
            "POST",
            "https://payments.internal/v1/refunds",
        )
        .response(16_276, "B", 1, 201, "Created")
        .refund(16_265, "rf_1", "A-1", 4500, None)
        .refund(16_275, "rf_2", second_order, 4500, None);
    tr
}

#[test]
fn refunds_of_two_orders_matched_to_one_call_by_time_are_no_copies() {
    assert!(untraced_order("A-2").of("duplicate-effect").is_empty());
    // The same order twice is one request's two refunds.
    assert_eq!(ids(&dup(&untraced_order("A-1"))), ["rf_1", "rf_2"]);
}

#[test]
fn client_retry_says_what_happened_in_one_sentence() {
    let f = dup(&incident());
    assert_eq!(f.cause, Some(Cause::ClientRetry));
    assert_eq!(
        f.message,
        "attempt 1 timed out after 10.0 s but its refund rf_8XM1 settled 1.5 s later; \
         attempt 2 refunded again (rf_9KQ2): 2 refunds for one call, excess GBP 45.00"
    );
}

/// Two retries, each making a refund: both are named, not the first alone.
#[test]
fn each_retry_that_refunded_again_is_named() {
    let mut tr = Trace::default();
    tr.tool_call(t(0, "14:02:11.402"), "7f3a", 4, "issue_refund", ARGS)
        .attempt(t(0, "14:02:11.418"), "7f3a", 4, 1, None)
        .timeout(t(0, "14:02:21.418"), "7f3a", 4)
        .attempt(t(0, "14:02:21.930"), "7f3a", 4, 2, None)
        .timeout(t(0, "14:02:31.930"), "7f3a", 4)
        .attempt(t(0, "14:02:32.100"), "7f3a", 4, 3, None)
        .created(t(0, "14:02:33.107"), "7f3a", 4, "rf_3", false)
        .step_end(t(0, "14:02:33.109"), "7f3a", 4, None);
    for (created, id) in [
        ("14:02:11.501", "rf_1"),
        ("14:02:22.001", "rf_2"),
        ("14:02:33.088", "rf_3"),
    ] {
        tr.refund_settled(t(0, created), id, "A-88214", 4500, t(0, "14:02:40.000"));
    }
    let f = dup(&tr);
    assert!(
        f.message
            .contains("; attempts 2 and 3 refunded again (rf_2, rf_3)"),
        "{}",
        f.message
    );
}

/// A gateway's copy of attempt 1's refund beside the client's retry: the copy is told as
/// attempt 1's, made below the client, and only the retry's refund as the retry's.
#[test]
fn a_copy_below_the_client_is_not_credited_to_the_retry() {
    let mut tr = incident();
    tr.refund_settled(
        t(0, "14:02:16.400"),
        "rf_copy",
        "A-88214",
        4500,
        t(0, "14:02:22.000"),
    );
    let f = dup(&tr);
    assert_eq!(ids(&f), ["rf_8XM1", "rf_copy", "rf_9KQ2"]);
    assert!(
        f.message.contains(
            ", and made again below the client (rf_copy: a gateway's or the service's own retry); \
             attempt 2 refunded again (rf_9KQ2): 3 refunds"
        ),
        "{}",
        f.message
    );
    // With no retry's refund beside it, the story is as before.
    assert!(!dup(&incident()).message.contains("below the client"));
}

/// The service's clock 1.5 s behind and no refund id in the answer: both refunds fall
/// to attempt 1. The story claims no key the attempts did not send.
#[test]
fn effects_of_one_keyless_attempt_claim_no_key() {
    let mut tr = Trace::default();
    tr.tool_call(t(0, "14:02:11.402"), "7f3a", 4, "issue_refund", ARGS)
        .attempt(t(0, "14:02:11.418"), "7f3a", 4, 1, None)
        .timeout(t(0, "14:02:21.418"), "7f3a", 4)
        .attempt(t(0, "14:02:21.930"), "7f3a", 4, 2, None)
        .step_end(t(0, "14:02:23.109"), "7f3a", 4, None);
    let settled = [
        ("14:02:10.001", "14:02:21.384"),
        ("14:02:21.588", "14:02:32.510"),
    ];
    for ((created, at), id) in settled.into_iter().zip(["rf_8XM1", "rf_9KQ2"]) {
        tr.refund_settled(t(0, created), id, "A-88214", 4500, t(0, at));
    }
    let f = dup(&tr);
    assert!(
        f.message.contains("; a retry refunded again (rf_9KQ2)"),
        "{}",
        f.message
    );
}

/// Step 4 ran once, timed out, ended failed; the framework dispatched it again
/// (`same_key`: with the key it had, which the service ignores; `replayed`: and the
/// service answered from its records).
fn step_retry(key: Option<&str>, replayed: bool) -> Trace {
    let mut tr = Trace::default();
    tr.tool_call(t(0, "09:00:00"), "s1", 4, "issue_refund", ARGS)
        .attempt(t(0, "09:00:00.010"), "s1", 4, 1, key)
        .refund(t(0, "09:00:00.200"), "rf_S1", "A-88214", 4500, key)
        .timeout(t(0, "09:00:10.010"), "s1", 4)
        .step_end(t(0, "09:00:10.020"), "s1", 4, Some("ReadTimeout"))
        .tool_call(
            t(0, "09:00:12"),
            "s1",
            4,
            "issue_refund",
            r#"{"amount_p":4500,"order":"A-88214"}"#,
        )
        .attempt(t(0, "09:00:12.010"), "s1", 4, 1, key);
    if replayed {
        tr.created(t(0, "09:00:12.300"), "s1", 4, "rf_S1", true);
    } else {
        tr.refund(t(0, "09:00:12.100"), "rf_S2", "A-88214", 4500, key)
            .created(t(0, "09:00:12.300"), "s1", 4, "rf_S2", false);
    }
    tr.step_end(t(0, "09:00:12.310"), "s1", 4, None);
    tr
}

#[test]
fn a_step_the_framework_dispatched_twice_is_a_step_retry() {
    let f = dup(&step_retry(None, false));
    assert_eq!(f.cause, Some(Cause::StepRetry));
    assert_eq!(ids(&f), ["rf_S1", "rf_S2"]);
    assert_eq!(f.excess_minor, Some(4500));
    assert!(
        f.message
            .starts_with("step 4 ended failed (ReadTimeout) though its refund rf_S1 was settled;"),
        "{}",
        f.message
    );
    assert!(
        f.message.contains("dispatched step 4 again without a key"),
        "{}",
        f.message
    );
    // The same key, ignored by the service: both effects match the first attempt by key,
    // and the cause is still the step retry.
    let f = dup(&step_retry(Some("k"), false));
    assert_eq!(f.cause, Some(Cause::StepRetry));
    assert!(f.message.contains("with the same key"), "{}", f.message);
    // The service replays the second dispatch: nothing was duplicated.
    assert!(
        step_retry(Some("k"), true)
            .of("duplicate-effect")
            .is_empty()
    );
}

/// A client log that prints no headers, and the service's log showing each dispatch's
/// refund with its own key: the story says a new key, not "without a key", and the
/// finding is about the first key.
#[test]
fn keys_the_service_logged_are_the_keys_the_story_tells() {
    let step_retry = |keys: [Option<&str>; 2]| {
        let mut tr = Trace::default();
        tr.tool_call(t(0, "09:00:00"), "s1", 4, "issue_refund", ARGS)
            .attempt(t(0, "09:00:00.010"), "s1", 4, 1, None)
            .refund(t(0, "09:00:00.200"), "rf_S1", "A-88214", 4500, keys[0])
            .timeout(t(0, "09:00:10.010"), "s1", 4)
            .step_end(t(0, "09:00:10.020"), "s1", 4, Some("ReadTimeout"))
            .tool_call(t(0, "09:00:12"), "s1", 4, "issue_refund", ARGS)
            .attempt(t(0, "09:00:12.010"), "s1", 4, 1, None)
            .refund(t(0, "09:00:12.100"), "rf_S2", "A-88214", 4500, keys[1])
            .created(t(0, "09:00:12.300"), "s1", 4, "rf_S2", false)
            .step_end(t(0, "09:00:12.310"), "s1", 4, None);
        dup(&tr)
    };
    let f = step_retry([Some("k1"), Some("k2")]);
    assert_eq!(f.cause, Some(Cause::StepRetry));
    assert_eq!(f.key.as_deref(), Some("k1"));
    assert!(
        f.message
            .contains("dispatched step 4 again with a new key and"),
        "{}",
        f.message
    );
    let f = step_retry([Some("k1"), Some("k1")]);
    assert!(
        f.message.contains("with the same key, which"),
        "{}",
        f.message
    );
    // No key on either refund: as before, none was sent.
    let f = step_retry([None, None]);
    assert_eq!(f.key, None);
    assert!(f.message.contains("again without a key"), "{}", f.message);
}

#[test]
fn one_attempt_that_reached_the_service_is_a_gateway_retry() {
    let mut tr = Trace::default();
    tr.tool_call(t(0, "09:00:00"), "g", 2, "issue_refund", ARGS)
        .attempt(t(0, "09:00:00.010"), "g", 2, 1, None)
        .failure(
            t(0, "09:00:00.020"),
            "g",
            2,
            "requests.exceptions.ConnectionError",
            "Connection refused",
        )
        .attempt(t(0, "09:00:00.600"), "g", 2, 2, None)
        .refund(t(0, "09:00:00.700"), "rf_1", "A-88214", 4500, None)
        .refund(t(0, "09:00:01.000"), "rf_2", "A-88214", 4500, None)
        .created(t(0, "09:00:01.100"), "g", 2, "rf_2", false);
    let f = dup(&tr);
    assert_eq!(
        f.cause,
        Some(Cause::GatewayRetry),
        "a refused connection reached nothing"
    );
}

/// A refund and the email telling the customer, both POSTs of one call, are two
/// requests: two refunds with one refund request sent are a gateway's replay, not the
/// client's retry. The refund sent twice is.
#[test]
fn two_different_requests_of_a_call_are_no_client_retry() {
    let refunds = "https://payments.internal/v1/refunds";
    let with_second = |url: &str| {
        let mut tr = Trace::default();
        tr.tool_call(t(0, "09:00:00"), "e", 3, "issue_refund", ARGS)
            .request(t(0, "09:00:00.010"), "e", 3, 1, "POST", refunds)
            .refund(t(0, "09:00:00.100"), "rf_1", "A-88214", 4500, None)
            .refund(t(0, "09:00:00.300"), "rf_2", "A-88214", 4500, None)
            .response(t(0, "09:00:00.400"), "e", 3, 201, "Created")
            .request(t(0, "09:00:00.500"), "e", 3, 2, "POST", url)
            .response(t(0, "09:00:00.600"), "e", 3, 200, "OK");
        dup(&tr).cause
    };
    assert_eq!(
        with_second("https://mail.internal/v1/emails"),
        Some(Cause::GatewayRetry)
    );
    assert_eq!(with_second(refunds), Some(Cause::ClientRetry));
}

/// A keyed refund of step 4, a crash and a resume at 09:01:00, then step 4 dispatched,
/// sent and refunded again at the `redo` times (tool call, attempt, refund).
fn keyed_refund_across_resume(redo: [&str; 3]) -> Trace {
    let mut tr = Trace::default();
    tr.tool_call(t(0, "09:00:00"), "r", 4, "issue_refund", ARGS)
        .attempt(t(0, "09:00:00.010"), "r", 4, 1, Some("k"))
        .refund(t(0, "09:00:00.100"), "rf_1", "A-88214", 4500, Some("k"))
        .run_event(t(0, "09:00:00.500"), "r", Lifecycle::Crashed)
        .run_event(t(0, "09:01:00"), "r", Lifecycle::Resumed)
        .tool_call(t(0, redo[0]), "r", 4, "issue_refund", ARGS)
        .attempt(t(0, redo[1]), "r", 4, 1, Some("k"))
        .refund(t(0, redo[2]), "rf_2", "A-88214", 4500, Some("k"))
        .step_end(t(0, "09:01:02"), "r", 4, None);
    tr
}

#[test]
fn a_resume_that_reuses_an_unenforced_key_is_a_resume() {
    // Both effects carry the key, so both match the first attempt; they straddle the
    // resume, and the call was dispatched on both sides of it.
    let tr = keyed_refund_across_resume(["09:01:01", "09:01:01.010", "09:01:01.100"]);
    let f = dup(&tr);
    assert_eq!(f.cause, Some(Cause::Resume));
    assert!(
        f.message.starts_with(
            "refund rf_1 was created before run r crashed at 2026-11-03T09:00:00.500Z and \
             was resumed at 2026-11-03T09:01:00.000Z; after the resume step 4 was re-issued \
             with the same key k, which the service did not enforce, and refunded again (rf_2)"
        ),
        "{}",
        f.message
    );
}
/// The service's clock runs 1.6 s behind the agent's: the second refund, made by the
/// dispatch after the resume, is stamped 0.5 s before the resume. Within `--max-skew`
/// (2 s by default) of it, it is on the far side of the resume all the same.
#[test]
fn effects_straddling_a_resume_within_the_skew_are_a_resume() {
    let tr = keyed_refund_across_resume(["09:01:00.100", "09:01:00.110", "09:00:59.500"]);
    let f = dup(&tr);
    assert_eq!(ids(&f), ["rf_1", "rf_2"]);
    assert_eq!(f.cause, Some(Cause::Resume), "{}", f.message);
    assert!(
        f.message.contains("after the resume step 4 was re-issued"),
        "{}",
        f.message
    );
}
/// A client retry just before a crash, the run resumed a second later, its re-issue
/// answered 409: the effects are within the skew of the resume, but only the dispatch
/// before it reached the service, so the resume is not between them.
#[test]
fn a_client_retry_just_before_a_resume_is_still_a_client_retry() {
    let mut tr = Trace::default();
    tr.tool_call(t(0, "09:00:00"), "r", 4, "issue_refund", ARGS)
        .attempt(t(0, "09:00:00.010"), "r", 4, 1, None)
        .refund(t(0, "09:00:00.100"), "rf_1", "A-88214", 4500, None)
        .timeout(t(0, "09:00:10.010"), "r", 4)
        .attempt(t(0, "09:00:10.500"), "r", 4, 2, None)
        .refund(t(0, "09:00:10.600"), "rf_2", "A-88214", 4500, None)
        .run_event(t(0, "09:00:10.800"), "r", Lifecycle::Crashed)
        .run_event(t(0, "09:00:11.500"), "r", Lifecycle::Resumed)
        .tool_call(t(0, "09:00:11.600"), "r", 4, "issue_refund", ARGS)
        .attempt(t(0, "09:00:11.610"), "r", 4, 1, None)
        .response(t(0, "09:00:11.700"), "r", 4, 409, "Conflict")
        .step_end(t(0, "09:00:11.710"), "r", 4, Some("409 Conflict"));
    let f = dup(&tr);
    assert_eq!(ids(&f), ["rf_1", "rf_2"]);
    assert_eq!(f.cause, Some(Cause::ClientRetry), "{}", f.message);
}

/// One attempt, answered 201 naming rf_8XM1; a second refund of the order and amount
/// lands 3.1 s after the answer (a gateway's retry or a queue's redelivery the client
/// never saw). Closed by its answer, the attempt no longer matched it by time, and
/// every rule passed it over; it is the call's delivery duplicate.
fn copy_after_answer(copy_at: &str) -> Trace {
    let mut tr = Trace::default();
    tr.tool_call(t(0, "14:02:11.402"), "7f3a", 4, "issue_refund", ARGS)
        .attempt(t(0, "14:02:11.418"), "7f3a", 4, 1, Some("9f1c0a"))
        .refund(t(0, "14:02:11.501"), "rf_8XM1", "A-88214", 4500, None)
        .created(t(0, "14:02:12.107"), "7f3a", 4, "rf_8XM1", false)
        .step_end(t(0, "14:02:12.109"), "7f3a", 4, None)
        .refund(t(0, copy_at), "rf_9KQ2", "A-88214", 4500, None);
    tr
}

#[test]
fn a_copy_just_after_the_answer_is_the_calls_gateway_retry() {
    let tr = copy_after_answer("14:02:14.600");
    let f = dup(&tr);
    assert_eq!(ids(&f), ["rf_8XM1", "rf_9KQ2"]);
    assert_eq!(f.cause, Some(Cause::GatewayRetry), "{}", f.message);
    assert_eq!((f.run.as_deref(), f.step), (Some("7f3a"), Some(4)));
    assert_eq!(f.excess_minor, Some(4500));
    assert!(tr.of("duplicate-decision").is_empty());
    assert!(tr.of("unattributed-effect").is_empty());
    // Half a minute later it may as well be another decision: SPEC §4.6's window.
    let tr = copy_after_answer("14:02:41.600");
    assert!(tr.of("duplicate-effect").is_empty());
    assert_eq!(tr.of("duplicate-decision").len(), 1);
}

/// The call sent before the crash made its refund after the resume (a slow queue): the
/// story gives that refund's time rather than saying it was made before the crash.
#[test]
fn a_refund_made_after_the_resume_by_the_call_before_the_crash_is_told_so() {
    let mut tr = Trace::default();
    tr.run_event(t(0, "14:00:00"), "L1", Lifecycle::Started)
        .tool_call(t(0, "14:00:01"), "L1", 4, "issue_refund", ARGS)
        .attempt(t(0, "14:00:01.012"), "L1", 4, 1, None)
        .run_event(t(0, "14:00:03"), "L1", Lifecycle::Crashed)
        .run_event(t(0, "14:00:10"), "L1", Lifecycle::Resumed)
        .tool_call(t(0, "14:00:11"), "L1", 4, "issue_refund", ARGS)
        .attempt(t(0, "14:00:11.010"), "L1", 4, 1, None)
        .created(t(0, "14:00:12.300"), "L1", 4, "rf_L2", false)
        .step_end(t(0, "14:00:12.310"), "L1", 4, None)
        .refund(t(0, "14:00:10.800"), "rf_L1", "A-88214", 4500, None)
        .refund(t(0, "14:00:12.100"), "rf_L2", "A-88214", 4500, None);
    let f = dup(&tr);
    assert_eq!(f.cause, Some(Cause::Resume));
    assert!(
        f.message
            .starts_with("refund rf_L1 (created at 2026-11-03T14:00:10.800Z) came from the call sent before run L1 crashed"),
        "{}",
        f.message
    );
}
