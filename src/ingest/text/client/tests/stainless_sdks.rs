use super::*;

/// A Stainless-generated SDK at INFO: a request that timed out is in no line but the SDK's
/// `Retrying request to PATH`: its attempt (sent after the tool call), an unlogged failure,
/// and the resend that httpx's line answers.
#[test]
fn a_stainless_sdks_retry_is_the_unlogged_try_and_the_next() {
    let retry = "Retrying request to /api/payment_orders in 0.470717 seconds";
    let p = in_call(&[
        stainless("12,405", "modern_treasury._base_client", retry),
        stainless("12,880", "httpx", MT_POST),
    ]);
    assert_eq!(
        shown(&p),
        [
            "1 tool 4",
            "2 attempt 1 ? /api/payment_orders key=-",
            "2 failure 1 unlogged failure Ambiguous",
            "2 attempt 2 ? /api/payment_orders key=-",
            "3 response 2 201",
            "4 end 4",
        ]
    );
    assert_eq!(p.events[1].at, p.events[0].at, "sent at the tool call");
    assert_eq!(p.events[3].at.0 - p.events[2].at.0, 470_717_000);
    // Stamps to the second (the SDK's own layout): the answer logged in the retry's second
    // is not placed before the resend, sent after the wait.
    let whole =
        |t: &str, logger: &str, msg: &str| format!("2026-11-03 14:02:{t} INFO {logger}: {msg}");
    let p = in_call(&[
        whole("12", "modern_treasury._base_client", retry),
        whole("12", "httpx", MT_POST),
    ]);
    let (sent, answered) = (&p.events[3], &p.events[4]);
    assert!(matches!(answered.kind, EventKind::Response(_)) && answered.at >= sent.at);
}

/// After an answer the SDK retries (a 500), the retry line is a resend only; after one it
/// does not (a 201), the request retried is a later one nobody logged; at DEBUG, a failure
/// already read from the traceback is not said twice.
#[test]
fn a_stainless_retry_after_an_answer_or_a_traceback_adds_no_failure() {
    let retry = |t: &str| {
        stainless(
            t,
            "modern_treasury._base_client",
            "Retrying request to /api/payment_orders in 0.5 seconds",
        )
    };
    let answered =
        |t: &str, status: &str| stainless(t, "httpx", &MT_POST.replace("201 Created", status));
    let p = in_call(&[
        answered("12,000", "500 Internal Server Error"),
        retry("12,001"),
        answered("12,600", "201 Created"),
        retry("15,000"),
    ]);
    assert_eq!(
        shown(&p),
        [
            "1 tool 4",
            "2 attempt 1 POST https://app.moderntreasury.com/api/payment_orders key=-",
            "2 response 1 500",
            "3 attempt 2 POST https://app.moderntreasury.com/api/payment_orders key=-",
            "4 response 2 201",
            "5 attempt 3 ? /api/payment_orders key=-",
            "5 failure 3 unlogged failure Ambiguous",
            "5 attempt 4 ? /api/payment_orders key=-",
            "6 end 4",
        ]
    );
    let debug = [
        TOOL.to_string(),
        stainless(
            "12,000",
            "modern_treasury._base_client",
            "Sending HTTP Request: POST https://app.moderntreasury.com/api/payment_orders",
        ),
        "2026-11-03 14:02:13,000 DEBUG modern_treasury._base_client: Encountered httpx.TimeoutException".to_string(),
        "httpx.ReadTimeout: timed out".to_string(),
        retry("13,001"),
        // The SDK's own line of the resend it announced: the same attempt.
        stainless(
            "13,502",
            "modern_treasury._base_client",
            "Sending HTTP Request: POST https://app.moderntreasury.com/api/payment_orders",
        ),
        END.to_string(),
    ];
    let p = run(&debug.join("\n"));
    assert_eq!(
        shown(&p),
        [
            "1 tool 4",
            "2 attempt 1 POST https://app.moderntreasury.com/api/payment_orders key=-",
            "4 failure 1 httpx.ReadTimeout Ambiguous",
            "5 attempt 2 POST https://app.moderntreasury.com/api/payment_orders key=-",
            "7 end 4",
        ]
    );
    // The same with no request line: the traceback's failure implies the attempt.
    let p = run(&[&debug[..1], &debug[2..]].concat().join("\n"));
    let failures = shown(&p).iter().filter(|l| l.contains("failure")).count();
    assert_eq!(failures, 1, "{:?}", shown(&p));
}
