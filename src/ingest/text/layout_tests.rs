//! Lines as other languages' loggers write them (Ruby's `Logger`, Rails, Go's `log`): each
//! read as its SPEC spelling is, and lines that only look alike left alone.

use super::*;
use crate::classify::FailureClass;
use crate::money::Currency;

fn run(text: &str) -> Parsed {
    parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap()
}

fn effects(p: &Parsed) -> Vec<&Effect> {
    (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some(&**x),
            _ => None,
        })
        .collect()
}

fn counts(p: &Parsed) -> (u64, u64, u64) {
    (p.stats.events, p.stats.ignored, p.stats.skipped)
}

#[test]
fn rubys_default_layout_is_read_to_its_message() {
    let p = run(concat!(
        "I, [2026-12-06T03:05:31.860855 #5365]  INFO -- : refund created id=re_1 order_id=A-1 amount=45.00 currency=GBP\n",
        "W, [2026-12-06T03:05:32.862766 #5365]  WARN -- agent: POST http://x/v1/refunds  (attempt 1)\n",
    ));
    assert_eq!(counts(&p), (2, 0, 0));
    assert_eq!(effects(&p)[0].id, "re_1");
    assert_eq!(p.events[0].at, Timestamp(1_796_526_331_860_855_000));
    // The layout's brackets without its process id are no stamp of it.
    let p = run("I, [2026-12-06T03:05:31.860855]  INFO -- : refund created id=re_1\n");
    assert_eq!(counts(&p), (0, 0, 1));
}

#[test]
fn an_exception_handed_to_rubys_logger_is_a_failure_and_its_backtrace_part_of_it() {
    let p = run(concat!(
        "2026-12-06T03:05:31.000Z  POST http://x/v1/refunds  (attempt 1)\n",
        "2026-12-06T03:05:32.000Z  Net::ReadTimeout with #<Socket:(closed)> (Net::ReadTimeout)\n",
        "/usr/lib/ruby/3.1.0/net/protocol.rb:219:in `rbuf_fill'\n",
        "\tfrom /usr/lib/ruby/3.1.0/net/protocol.rb:193:in `readuntil'\n",
    ));
    assert_eq!(counts(&p), (2, 2, 0));
    match &p.events[1].kind {
        EventKind::Failure(f) => {
            assert_eq!(
                (f.error.as_str(), f.class),
                ("Net::ReadTimeout", FailureClass::Ambiguous)
            );
            assert_eq!(f.message, "Net::ReadTimeout with #<Socket:(closed)>");
        }
        other => panic!("{other:?}"),
    }
    // Words in brackets after a message are no exception's class.
    let p = run("2026-12-06T03:05:32.000Z  retrying issue_refund (attempt 2)\n");
    assert_eq!(counts(&p), (0, 1, 0));
}

#[test]
fn a_programs_name_or_a_requests_tags_before_the_message_are_read_past() {
    let p = run(concat!(
        "2026-12-06T03:07:41.878Z INFO  agent: issue_refund: POST http://x/v1/refunds attempt=1\n",
        "2026-12-06T03:07:43.389Z INFO  payments: [6073fddd-4d0f] refund.created refund_id=re_1 order_id=A-1 amount_cents=4500 currency=GBP\n",
    ));
    assert_eq!(counts(&p), (2, 0, 0));
    assert!(matches!(&p.events[0].kind, EventKind::Attempt(a) if a.number == 1));
    let e = effects(&p)[0];
    assert_eq!((e.id.as_str(), e.order.as_deref()), ("re_1", Some("A-1")));
    assert_eq!(e.amount, Some(Money::new(4500, Currency::GBP)));
    // An exception's class, an effect's kind and a level are not a program's name.
    let p = run(concat!(
        "2026-12-06T03:07:41.878Z  requests.exceptions.ReadTimeout: read timeout=10\n",
        "2026-12-06T03:07:42.000Z  refund: re_2 created\n",
        "2026-12-06T03:07:43.000Z  [WARN] agent: nothing here\n",
    ));
    assert!(matches!(&p.events[0].kind, EventKind::Failure(_)));
    assert_eq!(counts(&p), (1, 2, 0));
}

#[test]
fn a_dotted_event_name_is_the_kind_and_what_happened() {
    let p = run("2026-12-06T03:07:43Z  refund.created  refund_id=re_1  order_id=A-1\n");
    assert_eq!(effects(&p)[0].id, "re_1");
    // Another object's event is the application's own line.
    let p = run("2026-12-06T03:07:43Z  user.created user_id=u_1 order_id=A-1\n");
    assert_eq!(counts(&p), (0, 1, 0));
}

#[test]
fn gos_log_layout_and_printf_lines_are_read() {
    let p = run(concat!(
        "2026/12/06 03:10:17 refund created re_gtb4 order_id=A-1 amount=45.00 currency=GBP idempotency_key=\"\"\n",
        "2026/12/06 03:10:17.123456 refund created re_h7 order_id=A-2 amount=12.50 currency=GBP idempotency_key=\"k_1\"\n",
        "2026/12/06 03:10:18 refund rejected order_id=A-4 amount=999.00 currency=GBP status=422\n",
    ));
    assert_eq!(counts(&p), (2, 1, 0));
    let e = effects(&p);
    assert_eq!((e[0].id.as_str(), e[0].key.as_deref()), ("re_gtb4", None));
    assert_eq!(
        (e[1].id.as_str(), e[1].key.as_deref()),
        ("re_h7", Some("k_1"))
    );
    assert_eq!(p.events[1].at, Timestamp(1_796_526_617_123_456_000));
    // A refund said created with nothing that is an id stays a broken line.
    let p = run("2026/12/06 03:10:17 refund created order_id=A-1 amount=45.00 currency=GBP\n");
    assert_eq!(counts(&p), (0, 0, 1));
    // A date of two separators is no date.
    let p = run("2026/12-06 03:10:17 refund created re_1 order_id=A-1\n");
    assert_eq!(counts(&p), (0, 0, 1));
}

#[test]
fn a_whole_number_beside_a_currency_code_is_kept_as_the_number() {
    let p = run(concat!(
        "2026-12-06T03:10:17Z  Refund re_1 created for order A-1: 4500 GBP (key: k_9)\n",
        "2026-12-06T03:10:18Z  Refund re_2 created for order A-2: 45.00 GBP\n",
    ));
    let e = effects(&p);
    assert_eq!(
        (e[0].amount, e[0].whole),
        (None, Some(Money::new(4500, Currency::GBP)))
    );
    assert_eq!(e[0].key.as_deref(), Some("k_9"));
    assert_eq!(
        (e[1].amount, e[1].whole),
        (Some(Money::new(4500, Currency::GBP)), None)
    );
}

/// From the code review of these readings: each line once misread.
#[test]
fn prefixes_that_change_the_meaning_or_never_end_are_not_read_past() {
    // Any number of prefixes, read in a loop (3,000 once overflowed the stack).
    let tags = format!(
        "2026-12-06T03:07:43Z  {}refund created refund_id=re_1 order_id=A-1\n",
        "[a] ".repeat(3000)
    );
    assert_eq!(effects(&run(&tags)).len(), 1);
    // Words saying the line is not for real stay, and the line is no effect.
    let p = run(concat!(
        "2026-12-06T03:07:43Z  [dry-run] refund created refund_id=re_sim order_id=A-1 amount_minor=4500 currency=GBP\n",
        "2026-12-06T03:07:44Z  simulate: refund created refund_id=re_sim2 order_id=A-1 amount_minor=4500 currency=GBP\n",
    ));
    assert_eq!(counts(&p), (0, 2, 0));
    // Go's `log.Lshortfile`: the source's place before the message.
    let p = run(
        "2026/12/06 03:41:37 main.go:88: refund created re_1 order_id=A-1 amount=45.00 currency=GBP\n",
    );
    assert_eq!(effects(&p)[0].id, "re_1");
}

#[test]
fn an_id_after_a_dotted_event_is_the_effects() {
    let p = run(
        "2026-12-06T03:07:43Z  refund.created re_1  order_id=A-1  amount_minor=4500  currency=GBP\n",
    );
    assert_eq!(effects(&p)[0].id, "re_1");
}

#[test]
fn words_in_brackets_about_another_failure_are_no_requests_failure() {
    let p = run(concat!(
        "2026-12-06T03:05:31.000Z  POST http://x/v1/refunds  (attempt 1)\n",
        "2026-12-06T03:05:32.000Z  receipt email failed: execution expired (Net::OpenTimeout)\n",
        "2026-12-06T03:05:33.000Z  order sync job finished (Failed)\n",
        "2026-12-06T03:05:34.000Z  webhook wait (Timeout)\n",
        "2026-12-06T03:05:35.000Z  refund attempt 1 failed: execution expired (Net::OpenTimeout)\n",
    ));
    assert_eq!(counts(&p), (2, 3, 0));
    assert!(matches!(&p.events[1].kind, EventKind::Failure(f) if f.error == "Net::OpenTimeout"));
}

/// Python beyond the standard library's layouts: loguru's default, structlog's console.
#[test]
fn loguru_and_structlog_console_lines_are_read() {
    let p = run(concat!(
        "2026-12-06 03:49:55.768 | INFO     | __main__:do_POST:171 - refund created refund_id=re_1 order_id=A-1 amount=45.00 currency=GBP idempotency_key=None\n",
        "2026-12-06 03:51:31 [info     ] refund created                 amount=45.00 currency=GBP idempotency_key=- order_id=A-2 refund_id=re_2\n",
        // A field of one token whose value has words stays one token.
        "2026-12-06 03:51:32  refund re_3  order A-3  4500p  failed  error=card declined by issuer\n",
    ));
    let e = effects(&p);
    assert_eq!(e.len(), 3);
    assert_eq!((e[0].id.as_str(), e[0].key.as_deref()), ("re_1", None));
    assert_eq!(
        (e[1].id.as_str(), e[1].order.as_deref(), e[1].key.as_deref()),
        ("re_2", Some("A-2"), None)
    );
    assert_eq!(e[1].amount, Some(Money::new(4500, Currency::GBP)));
    // A layout of bars that is not loguru's stays the message it is.
    let p = run("2026-12-06 03:49:55.768 | a table | of words - refund created refund_id=re_9\n");
    assert_eq!(counts(&p), (0, 1, 0));
}

#[test]
fn backoffs_lines_are_the_failure_they_name() {
    let p = run(concat!(
        "2026-12-06T03:49:55.000Z  POST http://x/v1/refunds  (attempt 1)\n",
        "2026-12-06T03:49:56.719Z  Backing off post_refund(...) for 0.2s (httpx.ReadTimeout: timed out)\n",
        "2026-12-06T03:49:57.000Z  Backing off sync(...) for 0.2s (waiting for the cache)\n",
    ));
    assert_eq!(counts(&p), (2, 1, 0));
    assert!(matches!(&p.events[1].kind, EventKind::Failure(f) if f.error == "httpx.ReadTimeout"));
}

/// From the second code review: a quoted value's words are the value's, and an exception's
/// brackets inside backoff's are matched.
#[test]
fn quoted_values_and_nested_brackets_keep_their_words() {
    let p = run(concat!(
        "2026-11-03 14:02:25 [info     ] refund created                 amount=45.00 currency=GBP note=\"was order_id=A-1 refund_id=rf_0001\" order_id=A-88214 refund_id=rf_7AAA\n",
        "14:02:20.000  POST https://payments.internal/v1/refunds  (attempt 1)\n",
        "14:02:21.418  Backing off post_refund(...) for 0.5s (requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='payments.internal', port=443): Read timed out. (read timeout=10))\n",
    ));
    let e = effects(&p);
    assert_eq!(
        (e[0].id.as_str(), e[0].order.as_deref()),
        ("rf_7AAA", Some("A-88214"))
    );
    match &p.events[2].kind {
        EventKind::Failure(f) => assert_eq!(f.error, "requests.exceptions.ReadTimeout"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_tool_call_in_a_programs_own_words_is_read_from_its_tokens() {
    let call = |p: &Parsed| match &p.events[0].kind {
        EventKind::ToolCall(c) => (
            c.call.run.to_string(),
            c.call.step,
            c.tool.to_string(),
            c.args_raw.to_string(),
        ),
        other => panic!("{other:?}"),
    };
    // One blank apart, JSON arguments with blanks in them.
    let p = run(
        r#"2026-12-06 05:00:00,000 INFO agent: tool call run_id=r1 step=4 tool="issue_refund" args={"order": "A-1", "amount_minor": 4500}"#,
    );
    assert_eq!(counts(&p), (1, 0, 0));
    assert_eq!(
        call(&p),
        (
            "r1".into(),
            4,
            "issue_refund".into(),
            r#"{"order": "A-1", "amount_minor": 4500}"#.into()
        )
    );
    // structlog's console layout: keys sorted, a Python dict's repr first.
    let p = run(
        "2026-12-06T05:00:00.000000Z [info     ] tool call                      args={'order': 'A-1', 'urgent': True} run_id=r1 step=4 tool=issue_refund\n",
    );
    assert_eq!(counts(&p), (1, 0, 0));
    assert_eq!(call(&p).3, r#"{"order": "A-1", "urgent": true}"#);
    // The tool's end with its status word is the step's end, not another call.
    let p = run("2026-12-06T05:00:00Z  tool done run_id=r1 step=4 tool=issue_refund status=ok\n");
    assert!(matches!(&p.events[0].kind, EventKind::StepEnd(s) if s.ok && s.call.step == 4));
    // A line about a tool without its run, step and arguments is no call of it.
    for line in [
        "2026-12-06T05:00:00Z  tool call tool=issue_refund args={\"order\": \"A-1\"}\n",
        "2026-12-06T05:00:00Z  calling tool issue_refund for run r1 step 4\n",
    ] {
        let p = run(line);
        assert_eq!(counts(&p), (0, 1, 0), "{line}");
    }
    // Arguments that are neither JSON nor Python's plain values: the call is skipped, said why.
    let p = run(
        "2026-12-06T05:00:00Z  tool call run_id=r1 step=4 tool=t args={'amount': Decimal('45.00')}\n",
    );
    assert_eq!(counts(&p), (0, 0, 1));
}

#[test]
fn rusts_tracing_and_env_logger_layouts_are_read() {
    let p = run(concat!(
        // tracing-subscriber's default layout, colour codes and all.
        "\x1b[2m2026-12-06T05:25:13.478642Z\x1b[0m \x1b[32m INFO\x1b[0m \x1b[2magent\x1b[0m\x1b[2m:\x1b[0m tool call run_id=7f3a step=4 tool=\"issue_refund\" args={\"order\":\"A-1\"}\n",
        "2026-12-06T05:25:13.478725Z  INFO issue_refund{run=\"7f3a\" step=4}: agent::tools: POST attempt=1 url=http://x/v1/refunds idempotency_key=\"-\"\n",
        "2026-12-06T05:25:13.780405Z  WARN issue_refund{run=\"7f3a\" step=4}: agent::tools: refund request timed out, retrying attempt=1 error=error sending request for url (http://x/v1/refunds)\n",
        "2026-12-06T05:25:13.984019Z  INFO issue_refund{run=\"7f3a\" step=4}: agent::tools: refund response status=201 Created refund_id=re_2\n",
        "2026-12-06T05:25:13.479985Z  INFO request{method=POST uri=/v1/refunds}:create_refund{order_id=A-1}: payments: refund created refund_id=re_1 amount_minor=4500 currency=GBP\n",
        // env_logger's header, and an amount with its currency's code after it.
        "[2026-12-06T05:25:20Z INFO  payments] refund created id=re_3 order=A-2 amount=4500 GBP key=-\n",
        "[2026-12-06T05:25:21Z WARN  agent::tools] refund request failed: reqwest::Error { kind: Request, url: \"http://x\", source: TimedOut }; retrying\n",
    ));
    assert_eq!(counts(&p), (7, 0, 0));
    let kinds: Vec<&str> = (p.events.iter())
        .map(|e| match &e.kind {
            EventKind::ToolCall(_) => "call",
            EventKind::Attempt(a) => {
                assert_eq!(
                    (
                        a.call.as_ref().unwrap().run.as_str(),
                        a.number,
                        a.key.is_none()
                    ),
                    ("7f3a", 1, true)
                );
                "attempt"
            }
            EventKind::Failure(f) => {
                assert_eq!(f.class, FailureClass::Ambiguous);
                "failure"
            }
            EventKind::Response(r) => {
                assert_eq!((r.status, r.effect_id.as_deref()), (201, Some("re_2")));
                "response"
            }
            EventKind::Effect(_) => "effect",
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "call", "attempt", "failure", "response", "effect", "effect", "failure"
        ]
    );
    let e = effects(&p);
    // The order named by the handler's span, and the code after the amount.
    assert_eq!(
        (e[0].id.as_str(), e[0].order.as_deref()),
        ("re_1", Some("A-1"))
    );
    assert_eq!(
        (e[1].id.as_str(), e[1].order.as_deref()),
        ("re_3", Some("A-2"))
    );
    assert_eq!(
        e[1].whole.map(|w| w.currency),
        Some(crate::money::Currency::GBP)
    );
}

#[test]
fn lines_that_only_look_like_rusts_layouts_are_left_alone() {
    for line in [
        // A service's own delivery: tokens of an answer, but of no agent's call.
        "2026-12-06T05:25:13Z  webhook failed attempt=2 status=500 url=https://m.example/hook\n",
        // A bracketed header with words that are no level and target.
        "[2026-12-06T05:25:20Z payments service up] listening\n",
        // A struct's Debug that is no error.
        "2026-12-06T05:25:13Z  refund request failed: Config { retries: 2 }\n",
    ] {
        let p = run(line);
        assert_eq!(p.stats.events, 0, "{line}");
    }
}

#[test]
fn javas_layouts_nested_classes_and_root_causes_are_read() {
    let p = run(concat!(
        // Log4j 2's `%d{ISO8601} %-5p [%t] %c{1.} - %m`: a padded level, then the thread.
        "2026-12-06T05:35:26,419 INFO  [main] c.a.agent.RefundAgent - Executing tool call: tool=issue_refund, runId=7f3a, step=2, args={\"order_id\":\"A-1\"}\n",
        "2026-12-06T05:35:26,420 INFO  [main] c.a.agent.RefundAgent$RefundsClient - Sending POST http://x/v1/refunds attempt=1 idempotencyKey=k-1\n",
        "2026-12-06T05:35:26,720 WARN  [main] c.a.agent.RefundAgent$RefundsClient - attempt 1 failed, retrying\n",
        "com.acme.agent.RefundAgent$RefundApiException: POST /v1/refunds failed for order A-1\n",
        "\tat com.acme.agent.RefundAgent$RefundsClient.post(RefundAgent.java:88)\n",
        "Caused by: java.io.IOException: wrapped\n",
        "\tat java.base/java.net.Socket.connect(Socket.java:633)\n",
        "Caused by: java.net.ConnectException: Connection refused\n",
        "\t... 3 more\n",
        "2026-12-06T05:35:27,420 INFO  [main] c.a.agent.RefundAgent - Tool call finished: tool=issue_refund, runId=7f3a, step=2, status=ok\n",
    ));
    assert_eq!(counts(&p), (4, 6, 0));
    match &p.events[1].kind {
        EventKind::Attempt(a) => {
            assert_eq!(
                (a.number, a.key.as_deref(), a.method.as_deref()),
                (1, Some("k-1"), Some("POST"))
            );
            assert_eq!(
                a.call.as_ref().map(|c| (c.run.as_str(), c.step)),
                Some(("7f3a", 2))
            );
        }
        other => panic!("{other:?}"),
    }
    match &p.events[2].kind {
        // The application's wrapper names no cause; its root does: never sent.
        EventKind::Failure(f) => {
            assert_eq!(f.error, "com.acme.agent.RefundAgent$RefundApiException");
            assert_eq!(f.class, FailureClass::Safe, "{}", f.message);
            assert!(
                f.message
                    .ends_with("(caused by java.net.ConnectException: Connection refused)")
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&p.events[3].kind, EventKind::StepEnd(s) if s.ok));
    // A wrapped timeout stays ambiguous: the root decides, not the wrapper.
    let p = run(concat!(
        "2026-12-06T05:35:26,720 WARN  [main] c.a.Client - attempt 1 failed, retrying\n",
        "com.acme.ApiException: POST /v1/refunds failed\n",
        "Caused by: java.net.http.HttpTimeoutException: request timed out\n",
    ));
    match &p.events[0].kind {
        EventKind::Failure(f) => assert_eq!(f.class, FailureClass::Ambiguous),
        other => panic!("{other:?}"),
    }
    // A tool's end in other words, or a status that is no step's, is none.
    let p = run(
        "2026-12-06T05:35:27,420 INFO  [main] c.a.A - Tool call finished: tool=t, runId=7f3a, step=2, status=pending\n",
    );
    assert_eq!(counts(&p), (0, 1, 0));
}

#[test]
fn a_key_logged_as_a_rust_option_is_the_key_inside_it() {
    let key = |line: &str| match &run(line).events[0].kind {
        EventKind::Attempt(a) => a.key.as_ref().map(|k| k.to_string()),
        other => panic!("{other:?}"),
    };
    let line = "2026-12-06T05:25:13Z  POST http://x/v1/refunds  (attempt 1)  idempotency_key=";
    assert_eq!(
        key(&format!("{line}Some(\"k-7f85\")\n")).as_deref(),
        Some("k-7f85")
    );
    assert_eq!(key(&format!("{line}None\n")), None);
    // A key that merely starts so is its own.
    assert_eq!(
        key(&format!("{line}Something-1\n")).as_deref(),
        Some("Something-1")
    );
}

#[test]
fn only_an_amount_takes_the_currency_code_after_it() {
    let p = run(
        "2026-12-06T05:25:20Z  refund created refund_id=re_1 order_id=1001 ABC amount=4500 GBP\n",
    );
    let e = effects(&p);
    assert_eq!(e[0].order.as_deref(), Some("1001"));
    assert_eq!(
        e[0].whole.map(|w| w.currency),
        Some(crate::money::Currency::GBP)
    );
}

/// The layout the Stainless-generated SDKs install for Python's logging when their
/// `*_LOG` variable is set (`[stamp - name:line - LEVEL] message`): the application's own
/// lines take it too. A bracket that is no such header stays unread.
#[test]
fn the_stainless_sdks_layout_is_read() {
    let p = run(concat!(
        "[2026-12-06 19:02:31 - agent:59 - INFO] tool call run_id=r1 step=1 tool=create_payment_order args={\"order\": \"A-1\"}\n",
        "[2026-12-06 19:02:33 - httpx:1025 - INFO] HTTP Request: POST http://127.0.0.1:8761/api/payment_orders \"HTTP/1.1 201 Created\"\n",
        "[2026-12-06 19:02:34 - agent - INFO] tool call run_id=r1 step=2 tool=t args={}\n",
        "[2026-12-06 19:02:35 - agent:x - INFO] tool call run_id=r1 step=3 tool=t args={}\n",
    ));
    assert_eq!(counts(&p), (2, 0, 2), "{:?}", p.stats.problems);
}
