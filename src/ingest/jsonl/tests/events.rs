//! Each event type, typed or not, and a text trace's line carried as a message.

use super::*;

/// A request logged with its headers names its key among them (any case, `-` or `_`).
#[test]
fn a_requests_key_among_its_logged_headers() {
    let p = run(concat!(
        r#"{"time":"2026-12-06T10:00:00Z","runId":"r1","step":1,"tool":"issue_refund","args":{"order":"A-1"},"msg":"tool call"}"#,
        "
",
        r#"{"time":"2026-12-06T10:00:01Z","method":"POST","url":"http://h/v1/refunds","headers":{"content-type":"application/json","Idempotency-Key":"k-1"},"msg":"refund request"}"#,
        "
",
        r#"{"time":"2026-12-06T10:00:02Z","method":"POST","url":"http://h/v1/refunds","headers":{"content-type":"application/json"},"msg":"refund request"}"#,
    ));
    let keys: Vec<Option<String>> = (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Attempt(a) => Some(a.key.as_ref().map(|k| k.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(keys, [Some("k-1".to_string()), None]);
}

/// A failure's `error` may be a numeric code; its message says what happened. An
/// object is no code.
#[test]
fn a_failure_with_a_numeric_code() {
    let p = run(concat!(
        r#"{"ts":"2026-11-03T14:02:21.418Z","type":"failure","run":"r","step":4,"attempt":1,"error":23,"message":"The operation was aborted due to timeout"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:22Z","type":"failure","run":"r","step":4,"attempt":2,"error":{"code":23}}"#,
        "\n",
    ));
    assert_eq!(p.stats.skipped, 1, "{:?}", p.stats.problems);
    let EventKind::Failure(f) = &p.events[0].kind else {
        panic!("{:?}", p.events)
    };
    assert_eq!(
        (f.error.as_str(), f.class),
        ("23", crate::classify::FailureClass::Ambiguous)
    );
}

#[test]
fn every_event_type() {
    let p = run(concat!(
        r#"{"ts":"2026-11-03T14:02:11.402Z","type":"tool_call","run":"7f3a","step":4,"tool":"issue_refund","args":{"order":"A-88214","amount_p":4500},"span":"x"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:11.418Z","type":"attempt","attempt":1,"method":"POST","url":"https://p/v1/refunds","idempotency_key":null}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:21.418Z","type":"failure","run":"7f3a","step":4,"attempt":1,"error":"read_timeout","message":"read timeout=10"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:23.107Z","type":"response","run":"7f3a","step":4,"attempt":2,"status":201,"effect_id":"rf_9KQ2","replayed":false,"amount_minor":4500,"currency":"gbp"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:23.109Z","type":"step_end","run":"7f3a","step":4,"status":"ok"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:05:00Z","type":"run","run":"7f3a","event":"resumed"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:11.501Z","type":"effect","effect_id":"rf_8XM1","kind":"refund","order":"A-88214","amount_minor":4500,"currency":"GBP","settled_at":"2026-11-03T14:02:22.884Z","idempotency_key":null}"#,
        "\n\n",
        r#"{"ts":"2026-11-03T14:06:00Z","type":"healthcheck","latency_ms":9}"#,
        "\n"
    ));
    assert_eq!(p.stats.problems, vec![]);
    assert_eq!((p.stats.lines, p.stats.events, p.stats.ignored), (9, 7, 2));
    let kinds: Vec<_> = p.events.iter().map(|e| &e.kind).collect();
    let EventKind::Attempt(a) = kinds[1] else {
        panic!()
    };
    assert_eq!(
        a.call.as_ref().unwrap().run,
        "7f3a",
        "inherits the tool call's run"
    );
    assert_eq!(a.key, None);
    let EventKind::Failure(f) = kinds[2] else {
        panic!()
    };
    assert_eq!(f.class, crate::classify::FailureClass::Ambiguous);
    let EventKind::Response(r) = kinds[3] else {
        panic!()
    };
    assert_eq!(r.amount, Some(Money::new(4500, Currency::GBP)));
    let EventKind::Effect(e) = kinds[6] else {
        panic!()
    };
    assert_eq!(e.state.as_deref(), Some("settled"));
    assert!(e.happened && e.state_at.is_some());
    assert_eq!(p.events[6].at.display(), "2026-11-03T14:02:11.501Z");
}

/// A logger's message that is a text trace's line (Go's `slog.Info("POST ...")`) is
/// that line's event at the line's time; an application's own words are no event.
#[test]
fn a_message_that_is_a_text_traces_line_is_its_event() {
    let p = run(concat!(
        r#"{"time":"2026-12-06T03:06:37.46323556Z","level":"INFO","msg":"agent run 7f3a  step 4  tool=issue_refund  args={\"order\":\"A-1\",\"amount_p\":4500}"}"#,
        "\n",
        r#"{"time":"2026-12-06T03:06:37.4632554Z","level":"INFO","msg":"POST http://x/v1/refunds  (attempt 1)"}"#,
        "\n",
        r#"{"time":"2026-12-06T03:06:38.463968262Z","level":"WARN","msg":"Post \"http://x/v1/refunds\": context deadline exceeded"}"#,
        "\n",
        r#"{"time":"2026-12-06T03:06:38.5Z","level":"INFO","msg":"payments service listening","addr":"127.0.0.1:8080"}"#,
        "\n",
        r#"{"time":"2026-12-06T03:06:38.6Z","level":"INFO","msg":"Starting worker pool"}"#,
        "\n",
    ));
    assert_eq!(
        (p.stats.events, p.stats.ignored, p.stats.skipped),
        (3, 2, 0)
    );
    assert!(matches!(&p.events[0].kind, EventKind::ToolCall(t) if t.tool == "issue_refund"));
    match &p.events[1].kind {
        EventKind::Attempt(a) => {
            assert_eq!((a.number, a.call.as_ref().map(|c| c.step)), (1, Some(4)))
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&p.events[2].kind, EventKind::Failure(_)));
}

/// In a trace of typed events, a logger's debug line saying the same is not read again
/// (it made a second, anonymous call).
#[test]
fn a_typed_traces_messages_are_not_read_as_text() {
    let p = run(concat!(
        r#"{"ts":"2026-11-03T14:02:11.402Z","type":"tool_call","run":"7f3a","step":4,"tool":"issue_refund","args":{"order":"A-1","amount_p":4500}}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:11.410Z","msg":"POST https://payments.internal/v1/refunds  (attempt 1)"}"#,
        "\n",
    ));
    assert_eq!((p.stats.events, p.stats.ignored), (1, 1));
}

/// SPEC's fields without `type` are the event they make; fields of no one event beside a
/// message are the application's own line (a logger's context: the MDC's `step`).
#[test]
fn fields_without_a_type_are_the_event_they_make() {
    let p = run(concat!(
        r#"{"time":"2026-12-06T03:06:40.699Z","msg":"refund attempt","run":"7f3a","step":4,"attempt":1,"method":"POST","url":"http://x"}"#,
        "\n",
        r#"{"time":"2026-12-06T03:06:41.700Z","msg":"refund attempt failed","run":"7f3a","step":4,"attempt":1,"err":"Post \"http://x\": EOF"}"#,
        "\n",
        r#"{"time":"2026-12-06T03:06:41.900Z","msg":"retrying","run":"7f3a","attempt":2}"#,
        "\n",
    ));
    assert_eq!(
        (p.stats.events, p.stats.ignored, p.stats.skipped),
        (2, 1, 0)
    );
    // Without a message, such fields are an event that lost its type.
    let p = run(r#"{"time":"2026-12-06T03:06:41.900Z","run":"7f3a","attempt":2}"#);
    assert_eq!((p.stats.events, p.stats.skipped), (0, 1));
    let p = run(concat!(
        r#"{"time":"2026-12-06T03:06:40.699Z","msg":"refund attempt","run":"7f3a","step":4,"attempt":1,"method":"POST","url":"http://x"}"#,
        "\n",
        r#"{"time":"2026-12-06T03:06:41.700Z","msg":"refund attempt failed","run":"7f3a","step":4,"attempt":1,"err":"Post \"http://x\": EOF"}"#,
        "\n",
    ));
    match &p.events[1].kind {
        EventKind::Failure(f) => assert_eq!(f.message, "Post \"http://x\": EOF"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn log_lines_without_a_type_are_ignored_when_they_carry_a_message() {
    let p = run(concat!(
        r#"{"time":"2026-11-03T14:02:11Z","level":30,"msg":"request completed"}"#,
        "\n",
        r#"{"timestamp":"2026-11-03T14:02:11Z","level":"info","message":"GET /health 200"}"#,
        "\n",
        r#"{"timestamp":"2026-11-03T14:02:11Z","event":"refund job started"}"#,
        "\n",
        r#"{"@t":"2026-11-03T14:02:11Z","@mt":"Refund {Id} created","Id":"rf_1"}"#,
        "\n",
        r#"{"@t":"2026-11-03T14:02:11Z","@m":"Refund rf_1 created"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:11Z","effect_id":"rf_1","amount_minor":4500}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:21Z","run":"r","step":4,"attempt":1,"error":"read_timeout","message":"read timeout=10"}"#,
        "\n",
    ));
    // The last line's fields are a failure's, `type` or not ([`untyped`]); the one
    // before makes no event of its own and lost its type.
    assert_eq!(
        (p.stats.ignored, p.stats.skipped, p.stats.events),
        (5, 1, 1)
    );
    let lines: Vec<u32> = p.stats.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [6]);
}

/// Serilog's compact format (CLEF) as `CompactJsonFormatter` writes it: `@t` (the
/// stamp, seven decimals and an offset), `@mt`, `@l` when not Information, then the
/// event's properties under their own names. One that carries an event's `type` and
/// fields is that event, stamped by `@t`; one without `type` is still the application's
/// own line, ignored.
#[test]
fn clef_events_with_a_type_are_stamped_by_at_t() {
    let p = run(concat!(
        r#"{"@t":"2026-11-03T14:02:11.5010000Z","@mt":"Refund {effect_id} created for {order}","type":"effect","effect_id":"rf_8XM1","kind":"refund","order":"A-88214","amount_minor":4500,"currency":"GBP"}"#,
        "\n",
        r#"{"@t":"2026-11-03T15:02:21.4180000+01:00","@mt":"Refund call failed","@l":"Warning","@x":"System.Net.Http.HttpRequestException: timeout","type":"failure","run":"7f3a","step":4,"attempt":1,"error":"read_timeout"}"#,
        "\n",
        r#"{"@t":"2026-11-03T14:02:12.0000000Z","@mt":"Refund {RefundId} created","RefundId":"rf_1"}"#,
        "\n",
        r#"{"@t":"2026-11-03T14:02:13.0000000Z","@mt":"Refund created","type":"effect","effect_id":"rf_2"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:14Z","@t":"2026-11-03T09:00:00.0000000Z","type":"run","run":"7f3a","event":"started"}"#,
        "\n",
    ));
    let at: Vec<(u32, String)> = (p.events.iter())
        .map(|e| (e.loc.line, e.at.display()))
        .collect();
    assert_eq!(
        at,
        [
            (1, "2026-11-03T14:02:11.501Z".to_string()),
            (2, "2026-11-03T14:02:21.418Z".to_string()),
            (5, "2026-11-03T14:02:14.000Z".to_string()),
        ],
        "{:?}",
        p.stats.problems
    );
    let EventKind::Effect(e) = &p.events[0].kind else {
        panic!("not an effect")
    };
    assert_eq!((&*e.id, e.order.as_deref()), ("rf_8XM1", Some("A-88214")));
    assert_eq!(e.amount, Some(Money::new(4500, Currency::GBP)));
    // The typeless line is the logger's own; the typed one lacking its `kind` is skipped.
    assert_eq!((p.stats.ignored, p.stats.skipped), (1, 1));
    assert_eq!(p.stats.problems[0].line, 4);
    assert!(p.stats.problems[0].reason.contains("`kind`"));
}
