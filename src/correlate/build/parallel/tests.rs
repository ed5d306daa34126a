//! Lines of a step's parallel calls dealt to the call they name, else by dispatch order,
//! the guesses settled by the effects or kept.

use super::super::tests::{attempts_of, model_of};
use crate::correlate::{DealtLine, Model, OutcomeKind};

/// Two refunds of one model turn, dispatched together.
const TWO_CALLS: &str = "\
2026-11-16T15:30:00.000Z  agent run q1  step 2  tool=issue_refund  args={\"order\":\"Q-1\",\"amount_p\":1000}
2026-11-16T15:30:00.001Z  agent run q1  step 2  tool=issue_refund  args={\"order\":\"Q-2\",\"amount_p\":1000}
";

/// Each dispatch's order and its requests, each as `number URL-path -> outcome`.
fn story(model: &Model) -> Vec<(String, Vec<String>)> {
    let outcome = |o: &crate::correlate::Outcome| match &o.kind {
        OutcomeKind::Response { status, .. } => status.to_string(),
        OutcomeKind::Failure { .. } => "failed".to_string(),
    };
    (model.dispatches.iter())
        .map(|d| {
            let requests = (d.attempts.iter()).map(|a| {
                let path = a
                    .url
                    .as_deref()
                    .map(|u| crate::event::url_parts(u).1.to_string());
                let answer = a.outcome.as_ref().map_or("…".to_string(), outcome);
                format!("{} {} -> {answer}", a.number, path.unwrap_or_default())
            });
            (
                d.order.as_deref().unwrap_or_default().to_string(),
                requests.collect(),
            )
        })
        .collect()
}

fn owned(calls: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    (calls.iter())
        .map(|(o, r)| (o.to_string(), r.iter().map(|s| s.to_string()).collect()))
        .collect()
}

/// A retry carrying the key of the first call's request is the first call's, not the
/// latest call's; one with a key no call has sent goes to the latest, a guess kept.
#[test]
fn a_retry_goes_to_the_call_whose_key_it_carries() {
    let trace = |key: &str| {
        format!(
            "{TWO_CALLS}\
2026-11-16T15:30:00.010Z  POST https://pay/v1/refunds  (attempt 1)  idempotency_key=k1
2026-11-16T15:30:00.011Z  POST https://pay/v1/refunds  (attempt 1)  idempotency_key=k2
2026-11-16T15:30:02.000Z  POST https://pay/v1/refunds  (attempt 2)  idempotency_key={key}
"
        )
    };
    let keys = |m: &Model| -> Vec<Vec<Option<String>>> {
        (attempts_of(m).into_iter())
            .map(|d| d.into_iter().map(|(key, _)| key).collect())
            .collect()
    };
    let some = |k: &str| Some(k.to_string());
    let model = model_of(&trace("k1"));
    assert_eq!(
        keys(&model),
        [vec![some("k1"), some("k1")], vec![some("k2")]]
    );
    assert!(
        model.guessed_calls.iter().all(|g| g.at.line != 5),
        "named by its key"
    );
    let model = model_of(&trace("k9"));
    assert_eq!(
        keys(&model),
        [vec![some("k1")], vec![some("k2"), some("k9")]]
    );
    let retry = model.guessed_calls.iter().find(|g| g.at.line == 5);
    assert!(
        retry.is_some_and(|g| g.line == DealtLine::Request && (g.chosen, g.other) == (1, 0)),
        "{:?}",
        model.guessed_calls
    );
}

/// A request whose URL names one call's argument (its order, an item) is that call's; one
/// naming both calls', or only what they share, names neither and goes by dispatch order.
#[test]
fn a_request_goes_to_the_call_its_url_names() {
    let first_request = |calls: &str, path: &str| {
        let trace =
            format!("{calls}2026-11-16T15:30:00.010Z  POST https://pay{path}  (attempt 1)\n");
        let model = model_of(&trace);
        (model.dispatches.iter())
            .position(|d| !d.attempts.is_empty())
            .unwrap()
    };
    assert_eq!(first_request(TWO_CALLS, "/v1/orders/Q-2/refunds"), 1);
    assert_eq!(
        first_request(TWO_CALLS, "/v1/refunds?order=Q-2&amount=1000"),
        1
    );
    assert_eq!(first_request(TWO_CALLS, "/v1/orders/Q-1/refunds"), 0);
    // Both named: nothing tells.
    assert_eq!(
        first_request(TWO_CALLS, "/v1/orders/Q-2/refunds?from=Q-1"),
        0
    );
    // A part of the value is no segment.
    assert_eq!(first_request(TWO_CALLS, "/v1/orders/Q-22/refunds"), 0);
    let items = "\
2026-11-16T15:30:00.000Z  agent run q1  step 2  tool=refund_item  args={\"order\":\"Q-1\",\"item\":{\"sku\":\"S-1\"}}
2026-11-16T15:30:00.001Z  agent run q1  step 2  tool=refund_item  args={\"order\":\"Q-1\",\"item\":{\"sku\":\"S-2\"}}
";
    assert_eq!(first_request(items, "/v1/orders/Q-1/refunds"), 0, "shared");
    assert_eq!(first_request(items, "/v1/orders/Q-1/items/S-2/refunds"), 1);
}

/// httpx logs no request that got no answer: tenacity's line is the failure of a request
/// no line gave. When the latest call was answered 201, that request was the other call's;
/// when it was answered 503, the latest may have sent it (a retry of its own). Either way
/// tenacity sends it again, in no line before the trace ends (`…`: no answer yet).
#[test]
fn a_failure_the_latest_call_cannot_have_had_goes_to_the_other() {
    let trace = |status: &str| {
        format!(
            "\
2026-11-16 15:30:00,000 INFO agent: agent run q1  step 2  tool=issue_refund  args={{\"order\":\"Q-1\",\"amount_p\":1000}}
2026-11-16 15:30:00,001 INFO agent: agent run q1  step 2  tool=issue_refund  args={{\"order\":\"Q-2\",\"amount_p\":1000}}
2026-11-16 15:30:00,020 INFO httpx: HTTP Request: POST https://pay/v1/orders/Q-2/refunds \"HTTP/1.1 {status}\"
2026-11-16 15:30:01,010 WARNING agent.tools: Retrying agent.tools.post_refund in 0.25 seconds as it raised ReadTimeout: timed out.
"
        )
    };
    assert_eq!(
        story(&model_of(&trace("201 Created"))),
        owned(&[
            ("Q-1", &["1  -> failed", "2  -> …"]),
            ("Q-2", &["1 /v1/orders/Q-2/refunds -> 201"])
        ])
    );
    assert_eq!(
        story(&model_of(&trace("503 Service Unavailable"))),
        owned(&[
            ("Q-1", &[]),
            (
                "Q-2",
                &["1 /v1/orders/Q-2/refunds -> 503", "2  -> failed", "3  -> …"]
            )
        ])
    );
}

/// Requests and answers that name no call, answers naming the effects they made: the
/// answer dealt by dispatch order to Q-1 named Q-2's refund, so it was Q-2's and trades
/// places with the timeout dealt to Q-2; the service's keys confirm the first request was
/// Q-1's. Without the service's log the guesses stand and are kept.
#[test]
fn an_answer_naming_the_other_calls_effect_trades_places() {
    let client = format!(
        "{TWO_CALLS}\
2026-11-16T15:30:00.010Z  POST https://pay/v1/refunds  (attempt 1)  idempotency_key=k1
2026-11-16T15:30:00.011Z  POST https://pay/v1/refunds  (attempt 1)  idempotency_key=k2
2026-11-16T15:30:00.300Z  201 Created  refund_id=rf_2
2026-11-16T15:30:01.010Z  httpx.ReadTimeout: timed out
"
    );
    let service = "\
2026-11-16T15:30:00.050Z  refund rf_1  order Q-1  1000p  pending  key=k1
2026-11-16T15:30:00.290Z  refund rf_2  order Q-2  1000p  pending  key=k2
";
    let model = model_of(&format!("{client}{service}"));
    let dealt = [
        ("Q-1", &["1 /v1/refunds -> failed"][..]),
        ("Q-2", &["1 /v1/refunds -> 201"]),
    ];
    assert_eq!(story(&model), owned(&dealt));
    assert!(model.guessed_calls.is_empty(), "{:?}", model.guessed_calls);
    let model = model_of(&client);
    let guessed = [
        ("Q-1", &["1 /v1/refunds -> 201"][..]),
        ("Q-2", &["1 /v1/refunds -> failed"]),
    ];
    assert_eq!(story(&model), owned(&guessed));
    let lines: Vec<_> = (model.guessed_calls.iter())
        .map(|g| (g.at.line, g.line))
        .collect();
    assert_eq!(lines, [(3, DealtLine::Request), (5, DealtLine::Answer)]);
}

/// Two calls that each sent one request answered 2xx tell the same story whichever was
/// whose: their guesses are dropped.
#[test]
fn guesses_nothing_rests_on_are_dropped() {
    let model = model_of(&format!(
        "{TWO_CALLS}\
2026-11-16T15:30:00.010Z  POST https://pay/v1/refunds  (attempt 1)
2026-11-16T15:30:00.011Z  POST https://pay/v1/refunds  (attempt 1)
2026-11-16T15:30:00.300Z  201 Created  refund_id=rf_1
2026-11-16T15:30:00.310Z  201 Created  refund_id=rf_2
"
    ));
    assert!(model.dispatches.iter().all(|d| d.attempts.len() == 1));
    assert!(model.guessed_calls.is_empty(), "{:?}", model.guessed_calls);
}

/// An HTTP client's lines number requests through the step; once dealt, each call's are
/// numbered from 1. An agent's own numbering is kept.
#[test]
fn requests_of_parallel_calls_are_numbered_per_call() {
    let model = model_of(
        "\
2026-11-16 15:30:00,000 INFO agent: agent run q1  step 2  tool=issue_refund  args={\"order\":\"Q-1\",\"amount_p\":1000}
2026-11-16 15:30:00,001 INFO agent: agent run q1  step 2  tool=issue_refund  args={\"order\":\"Q-2\",\"amount_p\":1000}
2026-11-16 15:30:00,020 INFO httpx: HTTP Request: POST https://pay/v1/orders/Q-2/refunds \"HTTP/1.1 503 Service Unavailable\"
2026-11-16 15:30:00,030 INFO httpx: HTTP Request: POST https://pay/v1/orders/Q-1/refunds \"HTTP/1.1 201 Created\"
2026-11-16 15:30:00,530 INFO httpx: HTTP Request: POST https://pay/v1/orders/Q-2/refunds \"HTTP/1.1 201 Created\"
",
    );
    assert_eq!(
        story(&model),
        owned(&[
            ("Q-1", &["1 /v1/orders/Q-1/refunds -> 201"]),
            (
                "Q-2",
                &[
                    "1 /v1/orders/Q-2/refunds -> 503",
                    "2 /v1/orders/Q-2/refunds -> 201"
                ]
            )
        ])
    );
}

/// Two tools side by side, both retried whole by tenacity, both first requests timed out:
/// each failure goes to the call whose tool its line names, each resend to the one call
/// making the kind of effect its URL names. A retried function that is neither tool tells
/// nothing: both failures go to the latest call, each a guess (the other had sent none).
#[test]
fn a_failure_goes_to_the_call_whose_tool_its_retry_line_names() {
    let trace = |refund_fn: &str, credit_fn: &str| {
        format!(
            "\
2026-11-16 15:30:00,000 INFO agent: agent run q1  step 2  tool=issue_refund  args={{\"order\":\"Q-1\",\"amount_p\":1000}}
2026-11-16 15:30:00,001 INFO agent: agent run q1  step 2  tool=issue_credit  args={{\"order\":\"Q-2\",\"amount_p\":500}}
2026-11-16 15:30:01,010 WARNING agent.tools: Retrying {refund_fn} in 0.25 seconds as it raised ReadTimeout: timed out.
2026-11-16 15:30:01,011 WARNING agent.tools: Retrying {credit_fn} in 0.25 seconds as it raised ReadTimeout: timed out.
2026-11-16 15:30:01,300 INFO httpx: HTTP Request: POST https://pay/v1/refunds \"HTTP/1.1 201 Created\"
2026-11-16 15:30:01,310 INFO httpx: HTTP Request: POST https://pay/v1/credits \"HTTP/1.1 201 Created\"
"
        )
    };
    let model = model_of(&trace(
        "agent.tools.issue_refund",
        "agent.tools.issue_credit",
    ));
    assert_eq!(
        story(&model),
        owned(&[
            ("Q-1", &["1  -> failed", "2 /v1/refunds -> 201"]),
            ("Q-2", &["1  -> failed", "2 /v1/credits -> 201"])
        ])
    );
    assert!(model.guessed_calls.is_empty(), "{:?}", model.guessed_calls);
    let model = model_of(&trace("agent.tools.post", "agent.tools.post"));
    assert_eq!(
        story(&model),
        owned(&[
            ("Q-1", &["1 /v1/refunds -> 201"]),
            (
                "Q-2",
                &["1  -> failed", "2  -> failed", "3 /v1/credits -> 201"]
            )
        ])
    );
    let lines: Vec<_> = (model.guessed_calls.iter())
        .map(|g| (g.at.line, g.line))
        .collect();
    assert_eq!(lines, [(3, DealtLine::Failure), (4, DealtLine::Failure)]);
}
