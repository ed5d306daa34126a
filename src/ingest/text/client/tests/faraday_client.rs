use super::*;

fn faraday(time: &str, program: &str, msg: &str) -> String {
    format!("I, [2026-11-03T14:02:{time} #27866]  INFO -- {program}: {msg}")
}

/// Faraday's logger below its retry middleware: each try's request line and headers (the
/// key among them, the unstamped lines part of the record), a try sent again with no
/// `Status` between failed unlogged, and `Status 201` answers the request sent last.
#[test]
fn faradays_tries_headers_and_answers() {
    let headers = |time: &str, key: &str| {
        format!(
            "{}\nContent-Type: \"application/json\"\nIdempotency-Key: \"{key}\"",
            faraday(time, "request", "User-Agent: \"Faraday v1.1.0\"")
        )
    };
    let post = "POST https://payments.internal/v1/refunds";
    let p = in_call(&[
        faraday("11.500000", "request", post),
        headers("11.500100", "k-1"),
        faraday("13.000000", "request", post),
        headers("13.000100", "k-1"),
        faraday("13.200000", "response", "Status 201"),
        format!(
            "{}\nserver: \"WEBrick/1.8.1\"",
            faraday(
                "13.200100",
                "response",
                "content-type: \"application/json\""
            )
        ),
    ]);
    assert_eq!(
        shown(&p),
        [
            "1 tool 4",
            "2 attempt 1 POST https://payments.internal/v1/refunds key=k-1",
            "6 failure 1 unlogged failure Ambiguous",
            "6 attempt 2 POST https://payments.internal/v1/refunds key=k-1",
            "10 response 2 201",
            "13 end 4",
        ]
    );
    assert_eq!(
        (p.stats.lines, p.stats.skipped),
        (13, 0),
        "{:?}",
        p.stats.problems
    );
    // Without headers logged the key is unknown; a header block with none says no key.
    let bare = [TOOL, &faraday("11.5", "request", post), END].join("\n");
    let p = run(&bare);
    let EventKind::Attempt(a) = &p.events[1].kind else {
        panic!()
    };
    assert!(a.key.is_none() && a.key_unseen);
    let keyless = [
        TOOL.to_string(),
        faraday("11.5", "request", post),
        faraday("11.6", "request", "User-Agent: \"Faraday v1.1.0\""),
        END.to_string(),
    ];
    let p = run(&(keyless.join("\n") + "\n"));
    let EventKind::Attempt(a) = &p.events[1].kind else {
        panic!()
    };
    assert!(a.key.is_none() && !a.key_unseen);
}

/// A request answered (`Status 500`) and then logged again is a resend, with no failure of
/// its own; a `Status` line with no request open is nobody's answer.
#[test]
fn faradays_answered_request_sent_again_is_no_failure() {
    let post = "POST https://payments.internal/v1/refunds";
    let p = in_call(&[
        faraday("11.5", "response", "Status 200"),
        faraday("12.0", "request", post),
        faraday("12.5", "response", "Status 500"),
        faraday("13.0", "request", post),
        faraday("13.5", "response", "Status 201"),
    ]);
    assert_eq!(
        shown(&p),
        [
            "1 tool 4",
            "3 attempt 1 POST https://payments.internal/v1/refunds key=-",
            "4 response 1 500",
            "5 attempt 2 POST https://payments.internal/v1/refunds key=-",
            "6 response 2 201",
            "7 end 4",
        ]
    );
}

/// The newer template's retry line names no request, and at INFO the request that timed
/// out is in no line: the next request the client logs says which it was. When that is the
/// model's call, the retry was the agent's own.
#[test]
fn a_retry_naming_no_request_is_of_the_next_one_logged() {
    let retry = "Retrying request in 0.5 seconds (retry 1 of 2)";
    let p = in_call(&[
        stainless("12,405", "openai._base_client", retry),
        stainless("12,990", "httpx", MT_POST),
    ]);
    assert_eq!(
        shown(&p),
        [
            "1 tool 4",
            "3 attempt 1 POST https://app.moderntreasury.com/api/payment_orders key=-",
            "3 failure 1 unlogged failure Ambiguous",
            "3 attempt 2 POST https://app.moderntreasury.com/api/payment_orders key=-",
            "3 response 2 201",
            "4 end 4",
        ]
    );
    // Sent at the tool call, failed at the retry line, sent again after the wait.
    let at: Vec<i64> = p.events.iter().map(|e| e.at.0).collect();
    assert_eq!(
        (at[1], at[2] - at[0], at[3] - at[2]),
        (at[0], 1_003_000_000, 500_000_000)
    );
    let model =
        r#"HTTP Request: POST https://api.openai.com/v1/chat/completions "HTTP/1.1 200 OK""#;
    let lines = [
        TOOL.to_string(),
        stainless("12,405", "openai._base_client", retry),
        stainless("12,990", "httpx", model),
        END.to_string(),
    ];
    assert_eq!(shown(&run(&lines.join("\n"))), ["1 tool 4", "4 end 4"]);
}

/// A client that logs a request once and nothing on success (go-retryablehttp's default
/// logger) sends two requests to one URL in one call: neither failed. Only a client known
/// to log every try and every answer (Faraday's) tells a failure by the request logged
/// again.
#[test]
fn a_request_logged_again_fails_the_last_only_for_a_client_that_logs_every_try() {
    let go = [
        "2026/12/06 08:28:19 agent run 7f3a  step 2  tool=refund_order  args={\"order\":\"A-1\"}",
        "2026/12/06 08:28:19 [DEBUG] POST http://127.0.0.1:18971/v1/refunds",
        "2026/12/06 08:28:19 [DEBUG] POST http://127.0.0.1:18971/v1/refunds",
        "2026/12/06 08:28:20 agent run 7f3a  step 2  ok",
    ];
    let shown_go = shown(&run(&go.join("\n")));
    assert!(
        !shown_go.iter().any(|l| l.contains("failure")),
        "{shown_go:?}"
    );
    assert_eq!(shown_go.iter().filter(|l| l.contains("attempt")).count(), 2);
}

/// Faraday's `Status` line names no request: after a read or the model's call it is
/// theirs, not the answer to a refund request that timed out before them.
#[test]
fn faradays_status_after_a_read_is_the_reads() {
    let p = in_call(&[
        faraday(
            "11.5",
            "request",
            "POST https://payments.internal/v1/refunds",
        ),
        faraday(
            "13.0",
            "request",
            "GET https://payments.internal/v1/orders/A-1",
        ),
        faraday("13.1", "response", "Status 200"),
        faraday(
            "14.0",
            "request",
            "POST https://api.openai.com/v1/chat/completions",
        ),
        faraday("14.5", "response", "Status 200"),
    ]);
    assert_eq!(
        shown(&p),
        [
            "1 tool 4",
            "2 attempt 1 POST https://payments.internal/v1/refunds key=-",
            "7 end 4",
        ]
    );
}

/// Without its headers logged, Faraday's lines are still told by their program names: a
/// request logged again with nothing between failed unlogged.
#[test]
fn faradays_resend_without_headers_is_the_last_ones_failure() {
    let post = "POST https://payments.internal/v1/refunds";
    let p = in_call(&[
        faraday("11.5", "request", post),
        faraday("13.0", "request", post),
        faraday("13.5", "response", "Status 201"),
    ]);
    assert_eq!(
        shown(&p),
        [
            "1 tool 4",
            "2 attempt 1 POST https://payments.internal/v1/refunds key=-",
            "3 failure 1 unlogged failure Ambiguous",
            "3 attempt 2 POST https://payments.internal/v1/refunds key=-",
            "4 response 2 201",
            "5 end 4",
        ]
    );
}
