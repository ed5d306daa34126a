//! The model built event by event: merged effects, a step's logical calls, the recent
//! dispatches.

use super::dispatches::WALKED;
use super::effects::merged_created;
use super::*;

#[test]
fn a_whole_second_gives_way_to_a_finer_time_within_it() {
    let ms = Timestamp::from_millis;
    assert_eq!(merged_created(ms(11_000), ms(11_501)), ms(11_501));
    assert_eq!(merged_created(ms(11_501), ms(11_000)), ms(11_501));
    // Not within the second: the earlier stands.
    assert_eq!(merged_created(ms(11_000), ms(12_000)), ms(11_000));
    assert_eq!(merged_created(ms(10_999), ms(11_000)), ms(10_999));
    assert_eq!(merged_created(ms(11_200), ms(11_501)), ms(11_200));
}

/// A step dispatched far more often than its dispatches are walked, with three sets of
/// arguments in turn: each set is one logical call, before the step is indexed, as it
/// is, and after.
#[test]
fn a_step_dispatched_many_times_has_a_logical_call_per_set_of_arguments() {
    let times = 3 * WALKED as usize + 5;
    let mut trace = String::new();
    for i in 0..times {
        let s = i % 60;
        trace.push_str(&format!(
            "2026-11-01T00:{:02}:{s:02}.000Z  agent run r1  step 4  tool=issue_refund  \
             args={{\"order\":\"A-{}\",\"amount_p\":100}}\n",
            i / 60,
            i % 3
        ));
    }
    let opts = crate::ingest::ParseOptions::default();
    let events = crate::ingest::text::parse(&mut trace.as_bytes(), 0, &opts).unwrap();
    let model = crate::correlate::correlate(events.events, &CorrelateOptions::default());
    assert_eq!(model.dispatches.len(), times);
    assert_eq!(model.calls.len(), 3, "{:?}", model.calls);
    for (i, d) in model.dispatches.iter().enumerate() {
        let call = &model.calls[d.logical()];
        assert_eq!(
            call.canonical,
            format!(r#"{{"amount_p":100,"order":"A-{}"}}"#, i % 3)
        );
    }
    let counts: Vec<usize> = model.calls.iter().map(|c| c.dispatches.len()).collect();
    assert_eq!(counts, [times.div_ceil(3), (times + 1) / 3, times / 3]);
}

#[test]
fn a_dispatch_without_its_tool_call_line_keeps_the_earlier_ones_arguments() {
    let trace = "\
2026-11-01T00:00:01.000Z  agent run r1  step 1  tool=issue_refund  args={\"order\":\"A-1\",\"amount_p\":100}
2026-11-01T00:00:02.000Z  POST https://pay/v1/refunds  (attempt 1)
2026-11-01T00:00:03.000Z  503 Service Unavailable
2026-11-01T00:00:09.000Z  POST https://pay/v1/refunds  (attempt 1)
";
    let opts = crate::ingest::ParseOptions::default();
    let events = crate::ingest::text::parse(&mut trace.as_bytes(), 0, &opts).unwrap();
    let model = crate::correlate::correlate(events.events, &CorrelateOptions::default());
    let [first, again] = &model.dispatches[..] else {
        panic!("{:?}", model.dispatches);
    };
    assert_eq!(first.logical(), again.logical(), "one logical call");
    assert!(again.at.is_none(), "implied by its attempt");
    assert_eq!(again.args_raw, first.args_raw);
    assert_eq!(
        (again.order.as_deref(), again.amount),
        (Some("A-1"), first.amount)
    );
    assert_eq!(again.amount.map(|m| m.minor), Some(100));
    assert_eq!(
        model.calls[again.logical()].canonical,
        r#"{"amount_p":100,"order":"A-1"}"#
    );
}

/// A slot answers only for the hash it holds, and a newer dispatch or another call
/// landing in it replaces what it held.
#[test]
fn recent_dispatches_answer_for_the_last_hash_of_each_slot() {
    let mut recent = RecentDispatches::default();
    let (a, b) = (3u64 << 58 | 1, 3u64 << 58 | 2); // one slot, two hashes
    let c = 4u64 << 58;
    assert_eq!(recent.get(a), None, "empty");
    assert_eq!(
        recent.get(0),
        None,
        "an empty slot holds hash 0 but no dispatch"
    );
    recent.remember(a, 5);
    recent.remember(c, 6);
    assert_eq!(
        (recent.get(a), recent.get(b), recent.get(c)),
        (Some(5), None, Some(6))
    );
    recent.remember(a, 7);
    assert_eq!(recent.get(a), Some(7), "the newer dispatch of the call");
    recent.remember(b, 8);
    assert_eq!(
        (recent.get(a), recent.get(b), recent.get(c)),
        (None, Some(8), Some(6))
    );
}

pub(super) fn model_of(trace: &str) -> crate::correlate::Model {
    let opts = crate::ingest::ParseOptions::default();
    let events = crate::ingest::text::parse(&mut trace.as_bytes(), 0, &opts).unwrap();
    crate::correlate::correlate(events.events, &CorrelateOptions::default())
}

/// Each dispatch's attempts as (key, effect id of the answer).
pub(super) fn attempts_of(
    model: &crate::correlate::Model,
) -> Vec<Vec<(Option<String>, Option<String>)>> {
    let answer = |a: &crate::correlate::AttemptRec| {
        a.outcome.as_ref().and_then(|o| match &o.kind {
            crate::correlate::OutcomeKind::Response { effect_id, .. } => {
                effect_id.as_deref().map(String::from)
            }
            _ => None,
        })
    };
    (model.dispatches.iter())
        .map(|d| {
            (d.attempts.iter())
                .map(|a| (a.key.as_deref().map(String::from), answer(a)))
                .collect()
        })
        .collect()
}

/// Two calls of one step dispatched together (a model turn asking for both), then their
/// requests and answers naming only the run and step: each call takes one request and one
/// answer, in the order they were dispatched, not the latest call both as a retry.
#[test]
fn parallel_calls_of_one_step_each_take_their_request_and_answer() {
    let model = model_of(
        "\
2026-11-16T15:30:00.000Z  agent run q1  step 2  tool=issue_refund  args={\"order\":\"Q-1\",\"amount_p\":1000}
2026-11-16T15:30:00.001Z  agent run q1  step 2  tool=issue_refund  args={\"order\":\"Q-2\",\"amount_p\":1000}
2026-11-16T15:30:00.010Z  POST https://pay/v1/refunds  (attempt 1)  run=q1  step=2  idempotency_key=kq1
2026-11-16T15:30:00.011Z  POST https://pay/v1/refunds  (attempt 1)  run=q1  step=2  idempotency_key=kq2
2026-11-16T15:30:01.000Z  201 Created  refund_id=rf_Q1  run=q1  step=2
2026-11-16T15:30:01.001Z  201 Created  refund_id=rf_Q2  run=q1  step=2
",
    );
    let some = |s: &str| Some(s.to_string());
    assert_eq!(
        attempts_of(&model),
        [
            vec![(some("kq1"), some("rf_Q1"))],
            vec![(some("kq2"), some("rf_Q2"))]
        ]
    );
}

/// The step dispatched again seconds later with new arguments, after a request that got no
/// answer: not a parallel call. Its request and answer are its own, and the first stays
/// unanswered.
#[test]
fn a_call_made_again_with_new_arguments_later_is_no_parallel_call() {
    let model = model_of(
        "\
2026-11-16T15:30:00.000Z  agent run q1  step 2  tool=issue_refund  args={\"order\":\"Q-1\",\"amount_p\":1000}
2026-11-16T15:30:00.010Z  POST https://pay/v1/refunds  (attempt 1)  run=q1  step=2
2026-11-16T15:30:12.000Z  agent run q1  step 2  tool=issue_refund  args={\"order\":\"Q-1\",\"amount_p\":1000,\"reason\":\"again\"}
2026-11-16T15:30:12.010Z  POST https://pay/v1/refunds  (attempt 1)  run=q1  step=2
2026-11-16T15:30:13.000Z  201 Created  refund_id=rf_Q1  run=q1  step=2
",
    );
    assert_eq!(
        attempts_of(&model),
        [vec![(None, None)], vec![(None, Some("rf_Q1".to_string()))]]
    );
}

/// A failed step dispatched again with arguments that differ only in a key-like member
/// joins the first call's duplicate group (the step's failure logged after a parallel
/// sibling's dispatch); one with another value elsewhere does not, nor a sibling.
#[test]
fn a_failed_step_dispatched_again_with_a_new_key_is_the_same_call() {
    let trace = "\
2026-11-01T10:00:00.000Z  agent run r1  step 2  tool=cancel_ticket  args={\"ticket\":\"T-1\",\"request_id\":\"a1\"}
2026-11-01T10:00:00.200Z  agent run r1  step 2  tool=cancel_ticket  args={\"ticket\":\"T-0\",\"request_id\":\"a0\"}
2026-11-01T10:00:05.000Z  agent run r1  step 2  failed  error=ReadTimeout
2026-11-01T10:00:06.000Z  agent run r1  step 2  tool=cancel_ticket  args={\"ticket\":\"T-1\",\"request_id\":\"b2\"}
2026-11-01T10:00:07.000Z  agent run r1  step 2  failed  error=ReadTimeout
2026-11-01T10:00:08.000Z  agent run r1  step 2  tool=cancel_ticket  args={\"ticket\":\"T-2\",\"request_id\":\"c3\"}
";
    let opts = crate::ingest::ParseOptions::default();
    let events = crate::ingest::text::parse(&mut trace.as_bytes(), 0, &opts).unwrap();
    let model = crate::correlate::correlate(events.events, &CorrelateOptions::default());
    let group = |key: &str| {
        let c = model.calls.iter().find(|c| c.canonical.contains(key));
        c.unwrap_or_else(|| panic!("no call with {key}: {:?}", model.calls))
            .group()
    };
    assert_eq!(model.calls.len(), 4);
    assert_ne!(group("a0"), group("a1"));
    assert_eq!(group("b2"), group("a1"));
    assert_ne!(group("c3"), group("a1"));
}

/// Events of two parallel calls of one step told apart by part (an OTLP trace's tool spans,
/// [`crate::event::CallRef::part`]): each request, answer, failure and end goes to its own
/// call, though the step's latest dispatch is the other and the text-log guess
/// ([`super::parallel`]) would give the timed-out call's retry to the latest.
fn parallel_parts_events() -> Vec<Event> {
    use crate::classify::FailureClass;
    use crate::event::{Attempt, CallRef, Failure, Response, StepEnd, ToolCall};
    let call = |part: u32| CallRef {
        run: "th".into(),
        step: 2,
        part,
    };
    let ev = |ms: i64, line: u32, kind: EventKind| Event {
        at: Timestamp::from_millis(1_700_000_000_000 + ms),
        loc: crate::event::Loc { input: 0, line },
        kind,
    };
    let tool = |part: u32, order: &str| {
        EventKind::ToolCall(Box::new(ToolCall {
            call: call(part),
            tool: "issue_refund".into(),
            args_raw: format!(r#"{{"order":"{order}","amount_p":2500}}"#).into(),
            args: serde_json::Value::Null,
        }))
    };
    let attempt = |part: u32, number: u32| {
        EventKind::Attempt(Box::new(Attempt {
            call: Some(call(part)),
            number,
            method: Some("POST".into()),
            url: Some("https://pay/v1/refunds".into()),
            key: None,
            key_unseen: false,
            placed: false,
        }))
    };
    let answer = |part: u32, number: u32| {
        let message = Text::default();
        EventKind::Response(Box::new(Response::status_only(
            call(part),
            number,
            201,
            message,
        )))
    };
    let end = |part: u32| {
        EventKind::StepEnd(Box::new(StepEnd {
            call: call(part),
            ok: true,
            error: None,
        }))
    };
    let timeout = EventKind::Failure(Box::new(Failure {
        call: Some(call(1)),
        attempt: Some(1),
        class: FailureClass::Ambiguous,
        error: "ReadTimeout".into(),
        message: "Read timed out.".into(),
        raised_in: None,
        resent_after: None,
    }));
    vec![
        ev(0, 1, tool(1, "J-1")),
        ev(1, 2, attempt(1, 1)),
        ev(50, 3, tool(2, "J-2")),
        ev(51, 4, attempt(2, 1)),
        ev(360, 5, answer(2, 1)),
        ev(364, 6, end(2)),
        ev(1017, 7, timeout),
        ev(1218, 8, attempt(1, 2)),
        ev(1273, 9, answer(1, 2)),
        ev(1274, 10, end(1)),
    ]
}

#[test]
fn parallel_calls_told_apart_by_part_each_keep_their_own_events() {
    let model = crate::correlate::correlate(parallel_parts_events(), &CorrelateOptions::default());
    assert_eq!(model.dispatches.len(), 2);
    let outcomes = |d: &crate::correlate::Dispatch| -> Vec<(u32, u32, bool)> {
        (d.attempts.iter())
            .map(|a| {
                let o = a.outcome.as_ref().expect("every attempt was answered");
                let failed = matches!(o.kind, crate::correlate::OutcomeKind::Failure { .. });
                (a.number, a.loc.line, failed)
            })
            .collect()
    };
    let (j1, j2) = (&model.dispatches[0], &model.dispatches[1]);
    assert_eq!(outcomes(j1), [(1, 2, true), (2, 8, false)]);
    assert_eq!(outcomes(j2), [(1, 4, false)]);
    assert_eq!(j1.end.as_ref().map(|e| e.loc.line), Some(10));
    assert_eq!(j2.end.as_ref().map(|e| e.loc.line), Some(6));
    // Still one step: the second call's dispatch follows the first's.
    assert_eq!(j1.call, j2.call);
    assert_eq!((j1.call.part, j2.call.part), (1, 2));
}

/// The step run again (a retry policy re-running a node of parallel calls): a dispatch with
/// the first call's arguments under a new part is that logical call dispatched again, and
/// its events are its own.
#[test]
fn a_parallel_step_run_again_dispatches_each_call_again() {
    let mut events = parallel_parts_events();
    let again: Vec<Event> = (events.iter())
        .filter(|e| matches!(e.kind, EventKind::ToolCall(_)))
        .cloned()
        .map(|mut e| {
            e.at = Timestamp(e.at.0 + 2_000_000_000);
            e.loc.line += 20;
            let call = e.kind.call_mut().expect("a tool call names its call");
            call.part += 2;
            e
        })
        .collect();
    events.extend(again);
    let model = crate::correlate::correlate(events, &CorrelateOptions::default());
    assert_eq!(model.dispatches.len(), 4);
    assert_eq!(model.calls.len(), 2, "{:?}", model.calls);
    let logical: Vec<usize> = model.dispatches.iter().map(|d| d.logical()).collect();
    assert_eq!(logical, [0, 1, 0, 1]);
    assert!(model.dispatches[2..].iter().all(|d| d.attempts.is_empty()));
}

/// A step dispatched again more than a day after its last event, with no resume between, is
/// a new conversation under a reused run id: a logical call of its own, even with the same
/// arguments. Within the day it is the same call dispatched again; after a resume, days
/// later too. A step dispatched more often than is walked is cut as well.
#[test]
fn a_step_dispatched_again_after_a_day_is_a_new_conversation() {
    let call = |at: &str, run: &str| {
        format!(
            "{at}  agent run {run}  step 2  tool=issue_refund  args={{\"order\":\"A-1\",\"amount_p\":100}}\n"
        )
    };
    let calls_of = |trace: &str| {
        let opts = crate::ingest::ParseOptions::default();
        let events = crate::ingest::text::parse(&mut trace.as_bytes(), 0, &opts).unwrap();
        crate::correlate::correlate(events.events, &CorrelateOptions::default()).calls
    };
    let within = call("2026-11-01T10:00:00.000Z", "r1") + &call("2026-11-02T09:59:59.000Z", "r1");
    assert_eq!(calls_of(&within).len(), 1);
    let after = call("2026-11-01T10:00:00.000Z", "r1") + &call("2026-11-02T10:00:01.000Z", "r1");
    assert_eq!(calls_of(&after).len(), 2);
    let resumed = call("2026-11-01T10:00:00.000Z", "r1")
        + "2026-11-04T10:00:00.000Z  agent run r1  resumed\n"
        + &call("2026-11-04T10:00:01.000Z", "r1");
    let calls = calls_of(&resumed);
    assert_eq!(calls.len(), 1, "{calls:?}");

    let mut long = String::new();
    for day in [1, 5] {
        for i in 0..2 * WALKED {
            long += &call(&format!("2026-11-0{day}T10:00:{i:02}.000Z"), "r1");
        }
    }
    let calls = calls_of(&long);
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[1].dispatches.len(), 2 * WALKED as usize);
}
