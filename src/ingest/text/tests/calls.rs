//! Tool calls, requests, answers and step ends: how each line joins its call.

use super::*;

#[test]
fn run_and_step_tokens_override_the_current_call() {
    let p = run(
        "10:00:00.000  agent run r1  step 1  tool=t  args={}\n10:00:00.100  agent run r2  step 3  tool=t  args={}\n\
         10:00:00.120  POST https://x/v1/refunds  (attempt 1)  run=r1  step=1  Idempotency-Key: abc\n\
         10:00:00.130  POST https://x/v1/refunds  (attempt 1)\n10:00:01.000  201 Created  refund_id=rf_1  run=r1  step=1\n",
    );
    let k = kinds(&p);
    let EventKind::Attempt(a1) = k[2] else {
        panic!()
    };
    assert_eq!(
        a1.call,
        Some(CallRef {
            run: "r1".into(),
            step: 1,
            part: 0,
        })
    );
    assert_eq!(a1.key.as_deref(), Some("abc"));
    let EventKind::Attempt(a2) = k[3] else {
        panic!()
    };
    assert_eq!(
        a2.call,
        Some(CallRef {
            run: "r2".into(),
            step: 3,
            part: 0,
        })
    );
    let EventKind::Response(r) = k[4] else {
        panic!()
    };
    assert_eq!(
        r.call,
        Some(CallRef {
            run: "r1".into(),
            step: 1,
            part: 0,
        })
    );
}

#[test]
fn responses_failures_and_step_ends() {
    let p = run(
        "10:00:00  agent run r  step 2  tool=issue_refund  args={\"a\":1}\n10:00:01  POST https://x/v1/refunds  (attempt 1)\n\
         10:00:02  409 Conflict\n10:00:03  agent run r  step 2  failed  error=409 Conflict\n\
         10:00:04  requests.exceptions.ConnectionError: Failed to establish a new connection: [Errno 111] Connection refused\n\
         10:00:05  200 OK  refund_id=rf_9  replayed=true\n",
    );
    let k = kinds(&p);
    let EventKind::Response(r) = k[2] else {
        panic!()
    };
    assert_eq!(
        (r.status, r.class, r.message.as_str()),
        (409, FailureClass::Conflict, "Conflict")
    );
    let EventKind::StepEnd(s) = k[3] else {
        panic!()
    };
    assert!(!s.ok);
    assert_eq!(s.error.as_deref(), Some("409 Conflict"));
    let EventKind::Failure(f) = k[4] else {
        panic!()
    };
    assert_eq!(f.class, FailureClass::Safe);
    let EventKind::Response(r) = k[5] else {
        panic!()
    };
    assert!(r.replayed);
}

/// `console.log(stamp, 'agent run', run, 'step', step, ...)`: SPEC §3.1's lines with one
/// blank between fields, and Node's `<ref *1>` before an error that refers to itself, read
/// as their two-blank spelling is.
#[test]
fn console_logs_one_blank_lines() {
    let p = run(concat!(
        "2026-12-06T00:38:51.296Z agent run r4 step 4 tool=issue_refund args={\"order_id\":\"A-1\",\"amount_minor\":4500,\"currency\":\"GBP\"}\n",
        "2026-12-06T00:38:51.456Z POST http://127.0.0.1:42385/v1/refunds (attempt 1) \n",
        "2026-12-06T00:38:52.482Z <ref *1> AxiosError: timeout of 1000ms exceeded\n",
        "2026-12-06T00:38:52.690Z POST http://127.0.0.1:42385/v1/refunds (attempt 2) \n",
        "2026-12-06T00:38:52.710Z 201 Created refund_id=re_86a1db284821\n",
        "2026-12-06T00:38:52.711Z agent run r4 step 4 ok\n",
    ));
    assert_eq!(
        (p.stats.events, p.stats.skipped),
        (6, 0),
        "{:?}",
        p.stats.problems
    );
    let k = kinds(&p);
    let EventKind::ToolCall(t) = k[0] else {
        panic!("{k:?}")
    };
    assert_eq!((t.call.run.as_str(), t.call.step), ("r4", 4));
    let EventKind::Failure(f) = k[2] else {
        panic!("{k:?}")
    };
    assert_eq!(
        (f.error.as_str(), f.class),
        ("AxiosError", FailureClass::Ambiguous)
    );
    let EventKind::Response(r) = k[4] else {
        panic!("{k:?}")
    };
    assert_eq!(
        (r.status, r.effect_id.as_deref()),
        (201, Some("re_86a1db284821"))
    );
}

/// A bare request line followed by the agent's own numbered line for it is one attempt.
#[test]
fn a_numbered_line_after_a_bare_one_repeats_it() {
    let p = run(
        "10:00:00  agent run r  step 1  tool=issue_refund  args={\"order\":\"A-1\"}\n\
         10:00:00.100  POST https://x/v1/refunds\n\
         10:00:00.101  POST https://x/v1/refunds  (attempt 1)\n\
         10:00:10.000  urllib3.exceptions.ReadTimeoutError: read timeout=10\n\
         10:00:10.100  POST https://x/v1/refunds\n\
         10:00:10.101  POST https://x/v1/refunds  (attempt 2)\n",
    );
    let numbers: Vec<u32> = (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Attempt(a) => Some(a.number),
            _ => None,
        })
        .collect();
    assert_eq!(numbers, [1, 2]);
    assert_eq!((p.stats.events, p.stats.ignored), (4, 2));
}

/// Celery: a task received while another runs waits for the pool; the client lines that
/// follow are the running task's.
#[test]
fn a_celery_task_received_while_another_runs_takes_no_client_lines() {
    let p = run(
        "[2026-12-06 08:42:57,604: INFO/MainProcess] Task tasks.issue_refund[a1] received\n\
         [2026-12-06 08:42:57,700: INFO/MainProcess] Task tasks.send_receipt[b2] received\n\
         [2026-12-06 08:42:58,700: DEBUG/ForkPoolWorker-1] http://x:80 \"POST /v1/refunds HTTP/1.1\" 201 61\n\
         [2026-12-06 08:42:58,701: INFO/ForkPoolWorker-1] Task tasks.issue_refund[a1] succeeded in 1.1s: None\n",
    );
    let runs: Vec<(&str, &str)> = (p.events.iter())
        .map(|e| match &e.kind {
            EventKind::ToolCall(t) => ("tool_call", t.call.run.as_str()),
            EventKind::Attempt(a) => ("attempt", a.call.as_ref().map_or("", |c| c.run.as_str())),
            EventKind::Response(r) => ("response", r.call.as_ref().map_or("", |c| c.run.as_str())),
            EventKind::StepEnd(s) => ("step_end", s.call.run.as_str()),
            _ => ("other", ""),
        })
        .collect();
    assert_eq!(
        runs,
        [
            ("tool_call", "a1"),
            ("tool_call", "b2"),
            ("attempt", "a1"),
            ("response", "a1"),
            ("step_end", "a1")
        ]
    );
}

/// A request written without its number (go-retryablehttp's `[DEBUG] POST http://...`) is
/// the open call's next attempt; sent again after a wait, the next after that, at the
/// wait's end.
#[test]
fn a_request_without_its_number_is_the_calls_next() {
    let p = run(
        "10:00:00  agent run r  step 1  tool=issue_refund  args={\"order\":\"A-1\"}\n         10:00:00.100  [DEBUG] POST https://x/v1/refunds\n         10:00:01.100  [ERR] POST https://x/v1/refunds request failed: Post \"https://x/v1/refunds\": context deadline exceeded\n         10:00:01.100  [DEBUG] POST https://x/v1/refunds: retrying in 500ms (2 left)\n         10:00:01.700  201 Created  refund_id=re_1\n",
    );
    assert_eq!(p.stats.skipped, 0, "{:?}", p.stats.problems);
    let shape: Vec<(String, i64)> = (p.events.iter().skip(1))
        .map(|e| {
            let ms = (e.at.0 % (60 * NANOS_PER_SEC)) / 1_000_000;
            let what = match &e.kind {
                EventKind::Attempt(a) => format!("attempt {}", a.number),
                EventKind::Failure(f) => format!("failure {:?} {:?}", f.attempt, f.class),
                EventKind::Response(r) => format!("response {:?} {}", r.attempt, r.status),
                other => format!("{other:?}"),
            };
            (what, ms)
        })
        .collect();
    let at = |what: &str, ms: i64| (what.to_string(), ms);
    assert_eq!(
        shape,
        [
            at("attempt 1", 100),
            at("failure Some(1) Ambiguous", 1100),
            at("attempt 2", 1600),
            at("response Some(2) 201", 1700),
        ]
    );
}

#[test]
fn lifecycle_step_ends_and_dispatch_restarts_attempts() {
    let p = run("10:00:00  agent run r  started\n\
         10:00:01  agent run r  step 1  tool=t  args={}\n\
         10:00:02  POST https://x/v1/refunds  (attempt 2)\n\
         10:00:03  agent run r  crashed\n\
         10:00:04  agent run r  resumed\n\
         10:00:05  agent run r  step 1  tool=t  args={}\n\
         10:00:06  503 Service Unavailable\n\
         10:00:07  agent run r  step 1  failed\n\
         10:00:08  agent run r  step 1  thinking\n");
    let k = kinds(&p);
    let lifecycle: Vec<Lifecycle> = k
        .iter()
        .filter_map(|e| match e {
            EventKind::Run(r) => Some(r.what),
            _ => None,
        })
        .collect();
    assert_eq!(
        lifecycle,
        vec![Lifecycle::Started, Lifecycle::Crashed, Lifecycle::Resumed]
    );
    let EventKind::Response(r) = k[6] else {
        panic!("{:?}", k[6])
    };
    assert_eq!(
        (r.attempt, r.class),
        (None, FailureClass::Ambiguous),
        "a new dispatch"
    );
    let EventKind::StepEnd(s) = k[7] else {
        panic!("{:?}", k[7])
    };
    assert_eq!((s.ok, s.error.as_deref()), (false, None));
    assert_eq!((p.stats.events, p.stats.ignored), (8, 1));
}

#[test]
fn step_and_attempt_numbers_read_as_the_standard_library_reads_them() {
    for s in [
        "0",
        "7",
        "07",
        "123456789",
        "1234567890",
        "",
        "1a",
        "-1",
        "+1",
        " 1",
        "٣",
        "999999999",
    ] {
        let std = (s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten();
        assert_eq!(parse_u32(s.as_bytes()), std, "{s:?}");
    }
}

#[test]
fn attempts_to_one_endpoint_share_its_url() {
    let p = run("\
10:00:00.000  agent run r1  step 1  tool=issue_refund  args={\"order\":\"A-1\",\"amount_p\":100}
10:00:00.010  POST https://payments.internal/v1/refunds  (attempt 1)
10:00:10.010  POST https://payments.internal/v1/refunds  (attempt 2)
10:00:20.010  POST https://payments.internal/v1/refunds/other  (attempt 3)
");
    let urls: Vec<&Text> = kinds(&p)
        .into_iter()
        .filter_map(|k| match k {
            EventKind::Attempt(a) => a.url.as_ref(),
            _ => None,
        })
        .collect();
    assert_eq!(urls.len(), 3);
    assert_eq!(urls[0], "https://payments.internal/v1/refunds");
    assert_eq!(urls[0].as_ptr(), urls[1].as_ptr());
    assert_eq!(urls[2], "https://payments.internal/v1/refunds/other");
}

/// A request's number as an `attempt=N` token, as key=value logs write it, reads as
/// `(attempt N)` does; a request with neither is its open step's next attempt, and outside
/// a step skipped naming both.
#[test]
fn an_attempt_number_as_a_token() {
    let p = run(
        "09:59:59  POST https://pay/v1/refunds  idempotency_key=k-1\n\
         10:00:00  agent run r  step 1  tool=issue_refund  args={\"order\":\"A-1\"}\n\
         10:00:01  POST https://pay/v1/refunds  attempt=2  idempotency_key=k-2\n\
         10:00:02  POST https://pay/v1/refunds  idempotency_key=k-3\n",
    );
    let k = kinds(&p);
    let numbered: Vec<_> = (k.iter())
        .filter_map(|e| match e {
            EventKind::Attempt(a) => Some((a.number, a.key.as_deref())),
            _ => None,
        })
        .collect();
    assert_eq!(numbered, [(2, Some("k-2")), (3, Some("k-3"))]);
    let r = reasons(&p);
    assert_eq!(p.stats.skipped, 1, "{r:?}");
    assert!(r[0].1.contains("`attempt=N`") && r[0].0 == 1, "{r:?}");
}

#[test]
fn a_status_line_may_name_its_protocol() {
    let answers = [
        (
            "HTTP/1.1 201 Created  refund_id=rf_1",
            Some((201, "Created")),
        ),
        ("HTTP/2 409 Conflict", Some((409, "Conflict"))),
        ("http/1.0 503", Some((503, ""))),
        ("HTTP 200 OK", Some((200, "OK"))),
        // Not a status line: no version after the slash, no space, a word not a protocol.
        ("HTTP/ 201 Created", None),
        ("HTTP/1.1201 Created", None),
        ("HTTPS 201 Created", None),
        // Interim answers and a proxy's open tunnel end no attempt.
        ("HTTP/1.1 100 Continue", None),
        ("103 Early Hints", None),
        ("HTTP/1.1 200 Connection established", None),
    ];
    for (line, want) in answers {
        let p = run(&format!(
            "10:00:00  agent run r1  step 1  tool=lookup  args={{}}\n\
             10:00:01  POST https://x/v1/refunds  (attempt 1)\n10:00:02  {line}\n"
        ));
        let got = p.events.iter().find_map(|e| match &e.kind {
            EventKind::Response(r) => Some((r.status, r.message.to_string())),
            _ => None,
        });
        let want = want.map(|(s, m): (u16, &str)| (s, m.to_string()));
        assert_eq!(got, want, "{line}");
        if want.is_none() {
            assert_eq!(p.stats.ignored, 1, "{line}");
        }
    }
}

/// Tokens one blank apart in one field (`amount=45.00 currency=GBP`, as structlog's console
/// layout joins them) are each a token; an amount with no currency at all is still refused.
#[test]
fn tokens_one_blank_apart_are_each_a_token() {
    let p = run(
        "10:00:00  refund rf_1  order A-1  amount=45.00 currency=GBP\n\
         10:00:01  refund rf_2  order A-1  amount=45.00\n",
    );
    let reasons: Vec<&str> = p.stats.problems.iter().map(|p| p.reason.as_str()).collect();
    assert_eq!(reasons, ["`amount=` without `currency=`"]);
    match &p.events[0].kind {
        EventKind::Effect(e) => assert_eq!(e.amount, Some(Money::new(4500, Currency::GBP))),
        other => panic!("{other:?}"),
    }
}

/// A request's key as clients and providers write it: the SPEC's token, a header field of
/// any prefix (`X-Idempotency-Key`, Checkout.com's `Cko-Idempotency-Key`), or inside a dump
/// of the headers, JSON or a Python dict. An empty one is no key.
#[test]
fn request_keys_in_the_spellings_clients_log() {
    let lines = [
        ("idempotency_key=k1", Some("k1")),
        ("Idempotency-Key: k2", Some("k2")),
        ("X-Idempotency-Key: k3", Some("k3")),
        ("x-idempotency-key=k4", Some("k4")),
        ("Cko-Idempotency-Key: k5", Some("k5")),
        (
            r#"headers={"Content-Type": "application/json", "Idempotency-Key": "k6"}"#,
            Some("k6"),
        ),
        (
            "headers={'X-Idempotency-Key': 'k7', 'Accept': '*/*'}",
            Some("k7"),
        ),
        ("idempotency_key=", None),
        ("Idempotency-Key:", None),
        (r#"headers={"Idempotency-Key": ""}"#, None),
        (r#"headers={"Idempotency-Key-Hint": "x"}"#, None),
        ("X-Request-Id: r1", None),
        ("key=k8", None),
        // A name that merely ends so, values that say there is none, a redaction.
        ("has_idempotency_key=false", None),
        ("idempotency_key=None", None),
        ("Idempotency-Key: null", None),
        ("headers={'Idempotency-Key': '[REDACTED]'}", None),
        ("Idempotency-Key: ***", None),
        ("idempotency_key=<filtered>", None),
        // A key of any other characters is a key.
        (
            "idempotency_key=7f3a|4|issue_refund",
            Some("7f3a|4|issue_refund"),
        ),
        // A dump inside a quoted value, and one with the Python keyword's spelling.
        (r#"headers="{\"Idempotency-Key\": \"k9\"}""#, Some("k9")),
        (r#"headers={"idempotency_key": "k10"}"#, Some("k10")),
    ];
    for (field, want) in lines {
        let p = run(&format!(
            "10:00:00  agent run r1  step 1  tool=issue_refund  args={{}}\n\
             10:00:01  POST https://p/v1/refunds  (attempt 1)  {field}\n"
        ));
        let key = p.events.iter().find_map(|e| match &e.kind {
            EventKind::Attempt(a) => Some(a.key.as_ref().map(|k| k.to_string())),
            _ => None,
        });
        assert_eq!(key, Some(want.map(String::from)), "{field}");
    }
}

/// Loggers that join with one blank: Python logging's level and name before the message, and
/// effect lines whose tokens are one blank apart, read as the two-blank spelling is.
#[test]
fn one_blank_loggers_and_tokens() {
    let p = run(
        "2026-11-03 14:02:11,501 INFO payments.refunds: refund created  refund_id=rf_1  order_id=A-1  amount_p=4500\n\
         2026-11-03 14:02:12,088  refund created refund_id=rf_2 order_id=A-2 amount_p=4500 status=succeeded\n\
         2026-11-03 14:02:13,000  refund rf_3 order_id=A-3 amount_p=100 status=failed\n\
         2026-11-03 14:02:14,000  tool lookup args=x\n\
         2026-11-03 14:02:15,000  refund created reason=none\n\
         2026-11-03 14:02:16,000  refund request received order_id=A-1 amount_p=4500\n",
    );
    let got: Vec<(&str, Option<&str>, Option<i64>, bool)> = effects(&p)
        .iter()
        .map(|e| {
            (
                &*e.id,
                e.order.as_deref(),
                e.amount.map(|m| m.minor),
                e.happened,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("rf_1", Some("A-1"), Some(4500), true),
            ("rf_2", Some("A-2"), Some(4500), true),
            ("rf_3", Some("A-3"), Some(100), false),
        ]
    );
    assert_eq!(p.stats.ignored, 3, "{:?}", p.stats.problems);
}

/// The JDK client's `HEADERS:` line: the header lines below it are its record's, the key
/// among them the request's; the same lines below any other line are still skipped.
#[test]
fn a_logged_header_block_is_its_records_and_names_the_requests_key() {
    let p = run(
        "2026-12-06T09:59:15.438Z INFO agent agent run 7f3a  step 4  tool=issue_refund  args={\"order\":\"A-1\"}\n\
         2026-12-06T09:59:15.523Z INFO jdk.httpclient.HttpClient REQUEST: http://h/v1/refunds POST\n\
         2026-12-06T09:59:15.526Z INFO jdk.httpclient.HttpClient HEADERS: REQUEST HEADERS:\n\
         POST /v1/refunds HTTP/1.1\n\
         Idempotency-Key: k-1\n\
         \n\
         2026-12-06T09:59:16.469Z INFO jdk.httpclient.HttpClient ERROR: Http1Exchange.cancel: count=1\n\
         2026-12-06T09:59:16.470Z INFO agent waiting\n\
         Idempotency-Key: k-2\n",
    );
    let keys: Vec<Option<&str>> = (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Attempt(a) => Some(a.key.as_deref()),
            _ => None,
        })
        .collect();
    assert_eq!(keys, [Some("k-1")]);
    let skipped: Vec<u32> = p.stats.problems.iter().map(|x| x.line).collect();
    assert_eq!(skipped, [9]);
    // A header block without a key: none was sent. No block (headers not logged): unknown.
    let unseen = |text: &str| -> Vec<bool> {
        (run(text).events.iter())
            .filter_map(|e| match &e.kind {
                EventKind::Attempt(a) => Some(a.key_unseen),
                _ => None,
            })
            .collect()
    };
    let call = "2026-12-06T09:59:15.438Z INFO agent agent run 7f3a  step 4  tool=issue_refund  args={\"order\":\"A-1\"}\n\
                2026-12-06T09:59:15.523Z INFO jdk.httpclient.HttpClient REQUEST: http://h/v1/refunds POST\n";
    let block = "2026-12-06T09:59:15.526Z INFO jdk.httpclient.HttpClient HEADERS: REQUEST HEADERS:\n\
                 POST /v1/refunds HTTP/1.1\nHost: h\n\n";
    assert_eq!(unseen(&format!("{call}{block}")), [false]);
    assert_eq!(unseen(call), [true]);
}

/// The `debug` module's namespace before a message (`DEBUG=openai-agents:*`) is read past
/// when the line is otherwise nothing; a word with a colon that is no namespace is not.
#[test]
fn a_debug_namespace_before_a_message_is_read_past() {
    let p = run(
        "2026-12-06T07:43:20.120Z openai-agents:core Invoking tool issue_refund with input {\"order\":\"A-1\",\"amount_p\":4500}\n\
         2026-12-06T07:43:20.130Z Note:Invoking tool issue_refund with input {\"order\":\"A-2\"}\n",
    );
    let tools: Vec<String> = (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall(t) => Some(t.args_raw.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(tools, [r#"{"order":"A-1","amount_p":4500}"#]);
    assert_eq!(
        super::level::after_debug_namespace(b"app:http POST x"),
        Some((&b"app:http"[..], &b"POST x"[..]))
    );
    assert_eq!(super::level::after_debug_namespace(b"12:30 lunch"), None);
    assert_eq!(
        super::level::after_debug_namespace(b"refund: created"),
        None
    );
}
