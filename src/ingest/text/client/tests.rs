use super::super::{ParseOptions, Parsed, parse};
use super::shapes::*;
use super::*;
use crate::classify::FailureClass;

pub(super) fn run(text: &str) -> Parsed {
    parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap()
}

/// Each event as one line of text: `line kind number method url key/status/class`.
pub(super) fn shown(p: &Parsed) -> Vec<String> {
    p.events
        .iter()
        .map(|e| {
            let line = e.loc.line;
            match &e.kind {
                EventKind::Attempt(a) => format!(
                    "{line} attempt {} {} {} key={}",
                    a.number,
                    a.method.as_deref().unwrap_or("?"),
                    a.url.as_deref().unwrap_or("?"),
                    a.key.as_deref().unwrap_or("-"),
                ),
                EventKind::Response(r) => {
                    format!("{line} response {} {}", r.attempt.unwrap_or(0), r.status)
                }
                EventKind::Failure(f) => format!(
                    "{line} failure {} {} {:?}",
                    f.attempt.unwrap_or(0),
                    f.error,
                    f.class
                ),
                EventKind::ToolCall(t) => format!("{line} tool {}", t.call.step),
                EventKind::StepEnd(s) => format!("{line} end {}", s.call.step),
                EventKind::Effect(x) => format!("{line} effect {}", x.id),
                other => format!("{line} {other:?}"),
            }
        })
        .collect()
}

const TOOL: &str = r#"2026-11-03 14:02:11,402 INFO agent: agent run 7f3a  step 4  tool=issue_refund  args={"order":"A-88214","amount_p":4500}"#;
const RETRYING: &str = r#"2026-11-03 14:02:21,930 WARNING urllib3.connectionpool: Retrying (Retry(total=2, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ReadTimeoutError("HTTPSConnectionPool(host='payments.internal', port=443): Read timed out. (read timeout=10)")': /v1/refunds"#;
const END: &str = "2026-11-03 14:02:23,109 INFO agent: agent run 7f3a  step 4  ok";

#[test]
fn httpx_and_urllib3_lines_are_read_as_logged() {
    assert_eq!(
        read(br#"HTTP Request: POST https://payments.internal/v1/refunds "HTTP/1.1 201 Created""#),
        Some(ClientLine::Answered {
            method: b"POST",
            url: "https://payments.internal/v1/refunds".into(),
            status: 201,
            reason: b"Created",
        })
    );
    // httpx writes the reason even when empty; HTTP/2 has none.
    assert_eq!(
        read(br#"HTTP Request: GET https://o.internal/v1/orders/A-1?x=1 "HTTP/2 200 ""#),
        Some(ClientLine::Answered {
            method: b"GET",
            url: "https://o.internal/v1/orders/A-1?x=1".into(),
            status: 200,
            reason: b"",
        })
    );
    assert_eq!(
        read(br#"https://payments.internal:443 "POST /v1/refunds HTTP/1.1" 201 57"#),
        Some(ClientLine::Answered {
            method: b"POST",
            url: "https://payments.internal/v1/refunds".into(),
            status: 201,
            reason: b"",
        })
    );
    assert_eq!(
        read(br#"http://127.0.0.1:8080 "GET /v1/orders?id=7 HTTP/1.1" 404 None"#),
        Some(ClientLine::Answered {
            method: b"GET",
            url: "http://127.0.0.1:8080/v1/orders?id=7".into(),
            status: 404,
            reason: b"",
        })
    );
    assert_eq!(
        read(b"Starting new HTTPS connection (2): payments.internal:443"),
        Some(ClientLine::Connecting {
            origin: "https://payments.internal".into()
        })
    );
    let Some(ClientLine::Retrying {
        error,
        message,
        path,
        origin,
    }) = read(
        RETRYING
            .split_once("connectionpool: ")
            .unwrap()
            .1
            .as_bytes(),
    )
    else {
        panic!("not a retry");
    };
    assert_eq!(
        (error, path),
        (&b"ReadTimeoutError"[..], &b"/v1/refunds"[..])
    );
    assert_eq!(
        as_text(message),
        Some(
            "HTTPSConnectionPool(host='payments.internal', port=443): Read timed out. (read timeout=10)"
        )
    );
    assert_eq!(origin.as_deref(), Some("https://payments.internal"));
    // Several arguments are kept as written; no pool named, no origin.
    let broken = b"Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ProtocolError('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))': /v1/refunds?order=A-1";
    let Some(ClientLine::Retrying {
        message,
        path,
        origin,
        ..
    }) = read(broken)
    else {
        panic!("not a retry");
    };
    assert!(message.starts_with(b"'Connection aborted.', RemoteDisconnected("));
    assert_eq!((path, origin), (&b"/v1/refunds?order=A-1"[..], None));
}

#[test]
fn other_lines_are_no_clients() {
    for msg in [
        "HTTP/1.1 201 Created",
        "HTTP Request: FETCH https://x/y \"HTTP/1.1 200 OK\"",
        "HTTP Request: POST https://x/y",
        "HTTP Request: POST https://x/y \"HTTP/1.1 20 OK\"",
        "https://x:443 \"POST /v1/refunds HTTP/1.1\" 201",
        "https://x:443 \"POST v1/refunds HTTP/1.1\" 201 5",
        "Retrying __main__.issue_refund in 0.5 seconds as it raised ReadTimeout: timed out.",
        "Retry: /v1/refunds",
        "Starting the worker",
        "Starting new FTP connection (1): x:21",
        "healthcheck ok",
        "POST https://payments.internal/v1/refunds  (attempt 1)",
    ] {
        assert_eq!(read(msg.as_bytes()), None, "{msg}");
    }
}

/// The incident with urllib3 at WARNING: its `Retrying` line is all there is of the
/// requests. Attempt 1 was sent at the tool call (the earliest it can have been), failed
/// with the read timeout, and attempt 2 went out unchanged: no method known, no key.
#[test]
fn a_retry_without_debug_is_the_failed_attempt_and_the_next() {
    let p = run(&[TOOL, RETRYING, END].join("\n"));
    assert_eq!(
        shown(&p),
        [
            "1 tool 4",
            "2 attempt 1 ? https://payments.internal/v1/refunds key=-",
            "2 failure 1 urllib3.exceptions.ReadTimeoutError Ambiguous",
            "2 attempt 2 ? https://payments.internal/v1/refunds key=-",
            "3 end 4",
        ]
    );
    assert_eq!(p.events[1].at, p.events[0].at, "sent at the tool call");
    assert!(p.events[2].at > p.events[0].at);
    assert_eq!((p.stats.lines, p.stats.events, p.stats.ignored), (3, 3, 0));
}

/// With urllib3 at DEBUG: the connection's line times attempt 1; the answered request after
/// the retry is the answer to attempt 2, not a third attempt.
#[test]
fn a_retry_with_debug_is_answered_by_the_next_request_line() {
    let text = [
        TOOL,
        "2026-11-03 14:02:11,418 DEBUG urllib3.connectionpool: Starting new HTTPS connection (1): payments.internal:443",
        "2026-11-03 14:02:21,929 DEBUG urllib3.util.retry: Incremented Retry for (url='/v1/refunds'): Retry(total=2, connect=None, read=None, redirect=None, status=None)",
        RETRYING,
        "2026-11-03 14:02:21,931 DEBUG urllib3.connectionpool: Starting new HTTPS connection (2): payments.internal:443",
        r#"2026-11-03 14:02:23,107 DEBUG urllib3.connectionpool: https://payments.internal:443 "POST /v1/refunds HTTP/1.1" 201 57"#,
        END,
    ]
    .join("\n");
    let p = run(&text);
    assert_eq!(
        shown(&p),
        [
            "1 tool 4",
            "4 attempt 1 ? https://payments.internal/v1/refunds key=-",
            "4 failure 1 urllib3.exceptions.ReadTimeoutError Ambiguous",
            "4 attempt 2 ? https://payments.internal/v1/refunds key=-",
            "6 response 2 201",
            "7 end 4",
        ]
    );
    // 2026-11-03T14:02:11.418Z.
    let opened = crate::time::Timestamp::from_millis(1_793_664_000_000 + 50_531_418);
    assert_eq!(p.events[1].at, opened, "when its connection was opened");
    assert_eq!((p.stats.lines, p.stats.events, p.stats.ignored), (7, 4, 3));
    // The retry of the retry: attempt 2 failed too, and attempt 3 went out.
    let again = text.replace(END, &RETRYING.replace("14:02:21,930", "14:02:22,500"));
    let p = run(&again.replace(
        r#"2026-11-03 14:02:23,107 DEBUG urllib3.connectionpool: https://payments.internal:443 "POST /v1/refunds HTTP/1.1" 201 57"#,
        "2026-11-03 14:02:22,000 INFO agent: thinking",
    ));
    let shown = shown(&p);
    assert_eq!(
        shown[4..],
        [
            "7 failure 2 urllib3.exceptions.ReadTimeoutError Ambiguous",
            "7 attempt 3 ? https://payments.internal/v1/refunds key=-",
        ]
    );
}

/// Each answered request is the dispatch's next attempt, whatever its URL: a lookup and
/// the refund are attempts 1 and 2 (rules tell them apart by their requests). The model's
/// requests and lines after the step ended belong to no attempt; a request before any tool
/// call is an anonymous call's ([`super::super::anonymous`]).
#[test]
fn answered_requests_are_the_calls_next_attempts() {
    let text = r#"2026-11-03 14:00:00,000 INFO httpx: HTTP Request: POST https://payments.internal/v1/refunds "HTTP/1.1 201 Created"
2026-11-03 14:00:01,000 INFO agent: agent run r1  step 2  tool=issue_refund  args={"order":"A-1","amount_p":1250}
2026-11-03 14:00:01,200 INFO httpx: HTTP Request: POST https://api.openai.com/v1/chat/completions "HTTP/1.1 503 Service Unavailable"
2026-11-03 14:00:01,300 INFO httpx: HTTP Request: POST https://llm.internal/v1/chat/completions "HTTP/1.1 200 OK"
2026-11-03 14:00:01,400 INFO httpx: HTTP Request: GET https://payments.internal/v1/orders/A-1/refunds "HTTP/1.1 404 Not Found"
2026-11-03 14:00:01,500 INFO httpx: HTTP Request: POST https://payments.internal/v1/refunds "HTTP/1.1 201 Created"
2026-11-03 14:00:01,600 INFO agent: agent run r1  step 2  ok
2026-11-03 14:00:01,700 INFO httpx: HTTP Request: POST https://crm.internal/v1/notes "HTTP/1.1 503 Service Unavailable"
"#;
    let p = run(text);
    assert_eq!(
        shown(&p)[2..],
        [
            "2 tool 2",
            "5 attempt 1 GET https://payments.internal/v1/orders/A-1/refunds key=-",
            "5 response 1 404",
            "6 attempt 2 POST https://payments.internal/v1/refunds key=-",
            "6 response 2 201",
            "7 end 2",
        ]
    );
    assert_eq!(
        shown(&p)[..2],
        [
            "1 attempt 1 POST https://payments.internal/v1/refunds key=-",
            "1 response 1 201"
        ]
    );
    assert!(
        matches!(&p.events[0].kind, EventKind::Attempt(a) if a.call.as_ref().is_some_and(|c| c.run.starts_with("?2026-11-03T14:00:00")))
    );
    // Sent after the call's previous line; answered at its own.
    let p_events = &p.events[2..];
    assert_eq!(p_events[1].at, p_events[0].at);
    assert_eq!(p_events[3].at, p_events[2].at);
    assert!(p_events[4].at > p_events[3].at);
    assert_eq!((p.stats.lines, p.stats.events, p.stats.ignored), (8, 5, 3));
}

/// A dispatch whose attempts the agent numbers itself: the client's lines repeat them.
#[test]
fn the_agents_own_numbering_wins() {
    let text = r#"2026-11-03 14:00:01,000 INFO agent: agent run r1  step 2  tool=issue_refund  args={"order":"A-1","amount_p":1250}
2026-11-03 14:00:01,010 INFO agent: POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=k1
2026-11-03 14:00:01,500 INFO httpx: HTTP Request: POST https://payments.internal/v1/refunds "HTTP/1.1 201 Created"
2026-11-03 14:00:01,510 INFO agent: 201 Created  refund_id=rf_1"#;
    assert_eq!(
        shown(&run(text)),
        [
            "1 tool 2",
            "2 attempt 1 POST https://payments.internal/v1/refunds key=k1",
            "4 response 1 201",
        ]
    );
}

/// An answer or failure logged with no request before it makes correlation imply attempt
/// 1: the client's next request is attempt 2, not a new dispatch's attempt 1.
#[test]
fn attempts_are_numbered_after_those_implied_by_an_outcome() {
    let text = r#"2026-11-03 14:00:01,000 INFO agent: agent run r1  step 2  tool=issue_refund  args={"order":"A-1","amount_p":1250}
2026-11-03 14:00:11,000 WARNING agent: httpx.ReadTimeout: The read operation timed out
2026-11-03 14:00:12,000 INFO httpx: HTTP Request: POST https://payments.internal/v1/refunds "HTTP/1.1 201 Created""#;
    let p = run(text);
    assert_eq!(
        shown(&p),
        [
            "1 tool 2",
            "2 failure 0 httpx.ReadTimeout Ambiguous",
            "3 attempt 2 POST https://payments.internal/v1/refunds key=-",
            "3 response 2 201",
        ]
    );
    let model = crate::correlate::correlate(p.events, &Default::default());
    assert_eq!(model.dispatches.len(), 1, "{:?}", model.dispatches);
    let numbers: Vec<u32> = model.dispatches[0]
        .attempts
        .iter()
        .map(|a| a.number)
        .collect();
    assert_eq!(numbers, [1, 2]);
}

/// A connection urllib3 cannot make is a safe failure, and the retry is still attempt 2.
#[test]
fn a_retry_after_a_refused_connection_is_safe() {
    let refused = "2026-11-03 14:02:12,000 WARNING urllib3.connectionpool: Retrying (Retry(total=2, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7f1c>: Failed to establish a new connection: [Errno 111] Connection refused')': /v1/refunds";
    let p = run(&[TOOL, refused].join("\n"));
    let EventKind::Failure(f) = &p.events[2].kind else {
        panic!("{:?}", p.events);
    };
    assert_eq!(f.class, FailureClass::Safe);
    assert_eq!(shown(&p)[3], "2 attempt 2 ? /v1/refunds key=-");
}

#[test]
fn the_agents_own_requests_are_told_by_host_or_endpoint() {
    for url in [
        "https://api.openai.com/v1/chat/completions",
        "https://myres.openai.azure.com/openai/deployments/gpt/chat/completions?api-version=1",
        "https://api.anthropic.com/v1/messages",
        "https://bedrock-runtime.eu-west-1.amazonaws.com/model/x/converse",
        "http://127.0.0.1:4000/v1/chat/completions",
        "http://litellm.internal:4000/v1/responses",
        "https://generativelanguage.googleapis.com/v1beta/models/gemini:generateContent",
        "http://localhost:11434/api/chat",
        "https://api.smith.langchain.com/runs/multipart",
        "http://collector:4318/v1/traces",
        "https://API.OPENAI.COM:443/v1/files",
    ] {
        assert!(agents_own(url.as_bytes()), "{url}");
    }
    for url in [
        "https://payments.internal/v1/refunds",
        "https://payments.internal/v1/refunds/completions-report",
        "https://messaging.internal/v1/messages",
        "https://tickets.internal/v1/tickets/7/responses",
        "/v1/refunds",
        "https://openai.com.evil.internal/v1/refunds",
    ] {
        assert!(!agents_own(url.as_bytes()), "{url}");
    }
}

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

/// The lines of a client's log between the tool call and its step's end, read.
fn in_call(lines: &[String]) -> Parsed {
    let all = [&[TOOL.to_string()][..], lines, &[END.to_string()]].concat();
    run(&all.join("\n"))
}

fn stainless(time: &str, logger: &str, msg: &str) -> String {
    format!("2026-11-03 14:02:{time} INFO {logger}: {msg}")
}

const MT_POST: &str = r#"HTTP Request: POST https://app.moderntreasury.com/api/payment_orders "HTTP/1.1 201 Created""#;

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
