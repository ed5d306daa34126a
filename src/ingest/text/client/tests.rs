use super::super::{ParseOptions, Parsed, parse};
use super::shapes::*;
use super::*;
use crate::classify::FailureClass;

mod faraday_client;
mod stainless_sdks;
mod stripe_sdk;

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

/// The lines of a client's log between the tool call and its step's end, read.
fn in_call(lines: &[String]) -> Parsed {
    let all = [&[TOOL.to_string()][..], lines, &[END.to_string()]].concat();
    run(&all.join("\n"))
}

fn stainless(time: &str, logger: &str, msg: &str) -> String {
    format!("2026-11-03 14:02:{time} INFO {logger}: {msg}")
}

const MT_POST: &str = r#"HTTP Request: POST https://app.moderntreasury.com/api/payment_orders "HTTP/1.1 201 Created""#;
