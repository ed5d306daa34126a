use super::*;

const STRIPE_REFUNDS: &str = "https://api.stripe.com/v1/refunds";

/// A line of Stripe's SDK through Python's logging, at `14:02:TIME`.
fn stripe(time: &str, msg: &str) -> String {
    format!("2026-11-03 14:02:{time} INFO stripe {msg}")
}

/// The SDK's `Request to Stripe api` line for the refunds URL.
fn stripe_request(time: &str, method: &str) -> String {
    let msg = format!("message='Request to Stripe api' method={method} url={STRIPE_REFUNDS}");
    stripe(time, &msg)
}

/// The SDK's `Stripe API response` line for the refunds URL.
fn stripe_answer(time: &str, status: u16) -> String {
    let msg = format!("message='Stripe API response' path={STRIPE_REFUNDS} response_code={status}");
    stripe(time, &msg)
}

/// Stripe's SDK: the request, its failure (no URL named), the keyed resend after the
/// wait, and the answer to the request sent last.
#[test]
fn stripes_request_failure_resend_and_answer() {
    let lines = [
        TOOL.to_string(),
        stripe_request("11,410", "post"),
        stripe(
            "21,412",
            "message=\"Encountered a retryable error Unexpected error communicating with Stripe.  If this problem persists,\\nlet us know at support@stripe.com.\\n\\n(Network error: ReadTimeout: HTTPSConnectionPool(host='api.stripe.com', port=443): Read timed out. (read timeout=10))\"",
        ),
        stripe(
            "21,412",
            &format!(
                "message='Initiating retry 1 for request post {STRIPE_REFUNDS} after sleeping 0.50 seconds.'"
            ),
        ),
        stripe_answer("22,100", 200),
        END.to_string(),
    ];
    let p = run(&lines.join("\n"));
    assert_eq!(
        shown(&p),
        [
            "1 tool 4",
            "2 attempt 1 POST https://api.stripe.com/v1/refunds key=-",
            "3 failure 1 ReadTimeout Ambiguous",
            "4 attempt 2 POST https://api.stripe.com/v1/refunds key=-",
            "5 response 2 200",
            "6 end 4",
        ]
    );
    // Sent once the wait was over.
    assert_eq!(p.events[3].at.0 - p.events[2].at.0, 500_000_000);
}

/// An answer after a read the SDK sent (a `GET`, no attempt) is the read's, not that of a
/// refund request whose failure no line said.
#[test]
fn stripes_answer_to_a_read_is_no_refunds() {
    let lines = [
        TOOL.to_string(),
        stripe_request("11,410", "post"),
        stripe_request("21,500", "get"),
        stripe_answer("21,600", 200),
        END.to_string(),
    ];
    let p = run(&lines.join("\n"));
    assert_eq!(
        shown(&p),
        [
            "1 tool 4",
            "2 attempt 1 POST https://api.stripe.com/v1/refunds key=-",
            "5 end 4",
        ]
    );
}

/// Two tool calls side by side (threads, `asyncio.gather`): a line that names no request,
/// Stripe's failure or answer, may be either call's, so it is given to neither.
#[test]
fn stripes_unnamed_outcomes_are_nobodys_while_calls_overlap() {
    let tool = |time: &str, run: &str| {
        format!(
            r#"2026-11-03 14:02:{time} INFO agent tool call run_id={run} step=1 tool=issue_refund args={{"order": "A-1", "amount_p": 4500}}"#
        )
    };
    let lines = [
        tool("11,402", "r1"),
        stripe_request("11,410", "post"),
        tool("12,000", "r2"),
        stripe_request("12,010", "post"),
        stripe(
            "12,420",
            "message=\"Encountered a retryable error Unexpected error communicating with Stripe.\\n\\n(Network error: ReadTimeout: Read timed out. (read timeout=1))\"",
        ),
        stripe_answer("12,500", 200),
    ];
    let p = run(&lines.join("\n"));
    assert_eq!(
        shown(&p),
        [
            "1 tool 1",
            "2 attempt 1 POST https://api.stripe.com/v1/refunds key=-",
            "3 tool 1",
            "4 attempt 1 POST https://api.stripe.com/v1/refunds key=-",
        ]
    );
}
