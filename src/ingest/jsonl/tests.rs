use super::fields::{KNOWN, slot};
use super::*;
use crate::money::{Currency, Money};

/// Every known name is found at its place, and a name one byte or letter case away
/// from one (or of another length) is none.
#[test]
fn known_names_are_found_in_their_slot_and_others_are_not() {
    for (i, name) in KNOWN.iter().enumerate() {
        assert_eq!(slot(name), Some(i), "{name}");
        for at in 0..name.len() {
            let mut near = name.as_bytes().to_vec();
            near[at] ^= 0x20;
            let near = String::from_utf8(near).unwrap();
            assert_eq!(slot(&near), None, "{near}");
        }
        assert_eq!(slot(&format!("{name}s")), None);
        // `@timestamp` without its `@` is `timestamp`: another name, not this one.
        assert_ne!(slot(&name[1..]), Some(i), "{name}");
    }
    for other in [
        "",
        "t",
        "tz",
        "types",
        "tools",
        "events",
        "errors",
        "x-request-id",
        "@l",
        "@x",
        "@@t",
    ] {
        assert_eq!(slot(other), None, "{other}");
    }
}

/// The amount of each event, `None` for events that are no effect.
fn effect_amounts(p: &Parsed) -> Vec<Option<Money>> {
    (p.events.iter())
        .map(|e| match &e.kind {
            EventKind::Effect(x) => x.amount,
            _ => None,
        })
        .collect()
}

fn run(text: &str) -> Parsed {
    parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap()
}

/// A time-only `settled_at` or `state_at` is dated from its line's `ts` (that day, or the
/// next when earlier) and moves no rollover; the lines' own times still roll over.
#[test]
fn a_settlement_time_is_dated_from_its_line_and_moves_no_rollover() {
    let opts = ParseOptions {
        date: chrono::NaiveDate::from_ymd_opt(2026, 11, 3),
        ..ParseOptions::default()
    };
    let text = [
        r#"{"settled_at":"23:30:00","ts":"10:00:00.500","type":"effect","effect_id":"rf_1","kind":"refund"}"#,
        r#"{"ts":"10:00:01.900","state_at":"09:00:00","type":"effect","effect_id":"rf_2","kind":"refund"}"#,
        r#"{"ts":"23:59:59.000","type":"effect","effect_id":"rf_3","kind":"refund"}"#,
        r#"{"settled_at":"00:00:30","ts":"00:00:01.000","type":"effect","effect_id":"rf_4","kind":"refund"}"#,
    ]
    .join("\n");
    let p = parse(&mut text.as_bytes(), 0, &opts).unwrap();
    let times: Vec<(String, Option<String>)> = (p.events.iter())
        .map(|e| match &e.kind {
            EventKind::Effect(x) => (e.at.display(), x.state_at.map(|t| t.display())),
            _ => panic!("not an effect"),
        })
        .collect();
    let want = |at: &str, settled: Option<&str>| (at.to_string(), settled.map(String::from));
    assert_eq!(
        times,
        [
            want("2026-11-03T10:00:00.500Z", Some("2026-11-03T23:30:00.000Z")),
            want("2026-11-03T10:00:01.900Z", Some("2026-11-04T09:00:00.000Z")),
            want("2026-11-03T23:59:59.000Z", None),
            want("2026-11-04T00:00:01.000Z", Some("2026-11-04T00:00:30.000Z")),
        ]
    );
}

/// `amount` in major units, a number or a string, with `currency`: converted exactly;
/// a string may carry a sign or code that agrees with it, or name the currency itself.
/// More decimals than the currency has, no currency, or a sign of another, skips the line.
#[test]
fn amounts_in_major_units() {
    let p = run(concat!(
        r#"{"ts":"2026-11-03T14:02:11Z","type":"effect","effect_id":"rf_1","kind":"refund","amount":45.00,"currency":"GBP"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:12Z","type":"effect","effect_id":"rf_2","kind":"refund","amount":"45.5","currency":"eur"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:13Z","type":"effect","effect_id":"rf_3","kind":"refund","amount":45.001,"currency":"GBP"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:14Z","type":"effect","effect_id":"rf_4","kind":"refund","amount":45}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:15Z","type":"effect","effect_id":"rf_5","kind":"refund","amount":"£1,045.00","currency":"GBP"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:16Z","type":"effect","effect_id":"rf_6","kind":"refund","amount":"12.50 EUR"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:17Z","type":"effect","effect_id":"rf_7","kind":"refund","amount":"€12.50","currency":"GBP"}"#,
        "\n",
    ));
    let amounts = effect_amounts(&p);
    let money = |minor, code| Some(Money::new(minor, Currency::parse(code).unwrap()));
    assert_eq!(
        amounts,
        [
            money(4500, "GBP"),
            money(4550, "EUR"),
            money(104_500, "GBP"),
            money(1250, "EUR")
        ]
    );
    let reasons: Vec<&str> = p.stats.problems.iter().map(|p| p.reason.as_str()).collect();
    assert_eq!(p.stats.skipped, 3, "{reasons:?}");
    assert!(reasons[0].contains("more decimals"), "{reasons:?}");
    assert_eq!(reasons[1], "`amount` without `currency`");
    assert!(
        reasons[2].contains("disagrees with currency GBP"),
        "{reasons:?}"
    );
}

/// A key that says there was none (`"None"`, a redaction) is no key, as in text logs.
#[test]
fn keys_that_say_there_is_none() {
    let line = |key: &str| {
        format!(
            r#"{{"ts":"2026-11-03T14:02:11Z","type":"attempt","run":"r","step":1,"attempt":1,"method":"POST","url":"https://p/v1/refunds","idempotency_key":{key}}}"#
        )
    };
    let keys: Vec<Option<String>> = [r#""k-1""#, r#""None""#, r#""[REDACTED]""#, "null"]
        .iter()
        .map(|k| {
            let p = run(&line(k));
            match &p.events[0].kind {
                EventKind::Attempt(a) => a.key.as_ref().map(|k| k.to_string()),
                other => panic!("{other:?}"),
            }
        })
        .collect();
    assert_eq!(keys, [Some("k-1".to_string()), None, None, None]);
}

/// A logger's effect line names its key as pino's and winston's programs do
/// (`idempotencyKey`) or as the header (`Idempotency-Key`); a key saying none is none, and
/// a typed effect reads SPEC's name only.
#[test]
fn a_loggers_effect_line_names_its_key_in_its_own_words() {
    let keys: Vec<Option<String>> = [
        r#""idempotencyKey":"k-1","#,
        r#""Idempotency-Key":"k-2","#,
        r#""idempotencyKey":"undefined","#,
        "",
    ]
    .iter()
    .map(|k| {
        let p = run(&format!(
            r#"{{"level":30,"time":1796551348569,"refundId":"re_1","orderId":"A-1","amount":4500,"currency":"GBP",{k}"msg":"refund created"}}"#
        ));
        match &p.events[0].kind {
            EventKind::Effect(e) => e.key.as_ref().map(|k| k.to_string()),
            other => panic!("{other:?}"),
        }
    })
    .collect();
    assert_eq!(keys, [Some("k-1".into()), Some("k-2".into()), None, None]);
    let typed = run(
        r#"{"ts":"2026-11-03T14:02:11Z","type":"effect","kind":"refund","effect_id":"rf_1","order":"A-1","idempotencyKey":"k-3"}"#,
    );
    match &typed.events[0].kind {
        EventKind::Effect(e) => assert_eq!(e.key, None),
        other => panic!("{other:?}"),
    }
}

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

/// Minor units as a string of an integer (protobuf's JSON mapping of an int64) read as
/// the number does; a string that is no integer is still refused.
#[test]
fn minor_units_as_a_string() {
    let p = run(concat!(
        r#"{"ts":"2026-11-03T14:02:11Z","type":"effect","effect_id":"rf_1","kind":"refund","amount_minor":"4500","currency":"GBP"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:12Z","type":"effect","effect_id":"rf_2","kind":"refund","amount_p":"-1200"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:13Z","type":"effect","effect_id":"rf_3","kind":"refund","amount_minor":"4500.5","currency":"GBP"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:14Z","type":"effect","effect_id":"rf_4","kind":"refund","amount_minor":"","currency":"GBP"}"#,
        "\n",
    ));
    let amounts = effect_amounts(&p);
    let gbp = |minor| Some(Money::new(minor, Currency::GBP));
    assert_eq!(amounts, [gbp(4500), gbp(-1200)]);
    let lines: Vec<u32> = p.stats.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [3, 4], "{:?}", p.stats.problems);
}

/// The stamp under the names other structured loggers give it, and as unix
/// milliseconds (pino), reads as `ts` does; `ts` wins when a line has both.
#[test]
fn the_stamp_under_other_names() {
    let line = |stamp: &str| {
        format!(r#"{{{stamp},"type":"effect","effect_id":"rf_1","kind":"refund","order":"A-1"}}"#)
    };
    let at = |p: &Parsed| {
        assert_eq!(p.stats.skipped, 0, "{:?}", p.stats.problems);
        p.events
            .iter()
            .chain(p.sealed.iter().flatten())
            .map(|e| e.at)
            .collect::<Vec<_>>()
    };
    let want = at(&run(&line(r#""ts":"2026-11-03T14:02:11.402Z""#)));
    assert_eq!(want.len(), 1);
    for stamp in [
        r#""timestamp":"2026-11-03T14:02:11.402Z""#,
        r#""@timestamp":"2026-11-03T14:02:11.402Z""#,
        r#""time":"2026-11-03T14:02:11.402Z""#,
        r#""time":1793714531402"#,
        r#""ts":"2026-11-03T14:02:11.402Z","time":"1999-01-01T00:00:00Z""#,
        r#""time":"1999-01-01T00:00:00Z","ts":"2026-11-03T14:02:11.402Z""#,
    ] {
        assert_eq!(at(&run(&line(stamp))), want, "{stamp}");
    }
    let none = run(&line(r#""when":"2026-11-03T14:02:11.402Z""#));
    assert_eq!(none.stats.skipped, 1);
    assert!(none.stats.problems[0].reason.contains("`ts`"));
}

/// pino's `logger.info({ refund }, "refund created")`: the effect is the logged object;
/// one without an `id` is still a refund without an id.
#[test]
fn an_effect_logged_as_an_object_under_its_kind() {
    let p = run(concat!(
        r#"{"level":30,"time":1796517702261,"refund":{"id":"re_1","object":"refund","order_id":"P-77","amount":"45.00","currency":"gbp","status":"succeeded"},"msg":"refund created"}"#,
        "\n",
        r#"{"level":30,"time":1796517702262,"refund":{"order_id":"P-77","amount":"45.00","currency":"gbp"},"msg":"refund created"}"#,
        "\n",
    ));
    assert_eq!(p.stats.skipped, 1, "{:?}", p.stats.problems);
    assert!(p.stats.problems[0].reason.contains("without an id"));
    let EventKind::Effect(e) = &p.events[0].kind else {
        panic!("{:?}", p.events)
    };
    assert_eq!(
        (e.id.as_str(), e.order.as_deref(), e.amount.map(|m| m.minor)),
        ("re_1", Some("P-77"), Some(4500))
    );
    assert_eq!(e.state.as_deref(), Some("succeeded"));
}

/// A Stripe object logged under its kind (a webhook handler's `logger.info({ refund },
/// ...)`): its whole `amount` is minor units by Stripe's API. The same object without
/// Stripe's `object` and `created`, a service's own, keeps its number of unknown unit.
#[test]
fn a_stripe_object_logged_under_its_kind_writes_minor_units() {
    let line = |refund: &str| {
        format!(
            r#"{{"level":30,"time":1796517702261,"refund":{{{refund}}},"msg":"refund created"}}"#
        )
    };
    let stripe = r#""id":"re_1","object":"refund","amount":4500,"currency":"gbp","created":1796517702,"metadata":{"order_id":"P-77"}"#;
    let own = r#""id":"re_1","amount":4500,"currency":"gbp","order_id":"P-77""#;
    let isk = stripe.replace("gbp", "isk");
    let read = |refund: &str| {
        let p = run(&format!("{}\n", line(refund)));
        let EventKind::Effect(e) = &p.events[0].kind else {
            panic!("{:?}", p.events)
        };
        let money = |m: Option<Money>| m.map(|m| (m.minor, m.currency.to_string()));
        (e.order.clone(), money(e.amount), money(e.whole))
    };
    let gbp = Some((4500, "GBP".to_string()));
    assert_eq!(read(stripe), (Some("P-77".into()), gbp.clone(), None));
    assert_eq!(read(own), (Some("P-77".into()), None, gbp));
    // Stripe writes ISK with two decimals: 4500 is 45 krónur.
    assert_eq!(read(&isk).1, Some((45, "ISK".to_string())));
}

/// A message that is a sentence about an effect (pino's `msg`), read as a text log's
/// sentence is; a sentence about a refund that names none is the application's line.
#[test]
fn an_effect_logged_as_a_sentence() {
    let p = run(concat!(
        r#"{"level":30,"time":1796517702262,"msg":"Refund re_1a2b3c created for order P-77: 45.00 GBP"}"#,
        "\n",
        r#"{"level":30,"time":1796517702263,"msg":"Refund requested for order P-77"}"#,
        "\n",
        r#"{"level":30,"time":1796517702264,"msg":"user signed in"}"#,
        "\n",
    ));
    assert_eq!(
        (p.stats.events, p.stats.ignored, p.stats.skipped),
        (1, 2, 0)
    );
    let EventKind::Effect(e) = &p.events[0].kind else {
        panic!("{:?}", p.events)
    };
    assert_eq!(
        (e.kind.as_str(), e.id.as_str(), e.order.as_deref()),
        ("refund", "re_1a2b3c", Some("P-77"))
    );
    assert_eq!(
        e.amount.map(|m| (m.minor, m.currency.as_str().to_string())),
        Some((4500, "GBP".into()))
    );
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

#[test]
fn unknown_fields_are_kept_as_attributes() {
    let p = run(concat!(
        r#"{"ts":"2026-11-03T14:02:11Z","type":"effect","effect_id":"rf_1","kind":"refund","reason":"requested_by_customer","meta":{"agent":"billing"},"retries":2,"note":null,"re\u0061son2":"x"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:12Z","type":"run","run":"7f3a","event":"started"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:13Z","type":"healthcheck","latency_ms":9}"#,
        "\n",
    ));
    assert_eq!(p.stats.events, 2);
    let pairs = |v: &[(&str, &str)]| -> Attrs {
        v.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert_eq!(
        p.attrs,
        vec![(
            p.events[0].loc,
            pairs(&[
                ("reason", "requested_by_customer"),
                ("meta", r#"{"agent":"billing"}"#),
                ("retries", "2"),
                ("reason2", "x"),
            ])
        )],
        "strings unquoted, other values as JSON, nulls dropped; a line with none has none"
    );
}

#[test]
fn known_fields_an_event_type_does_not_read_are_kept_too() {
    let p = run(concat!(
        r#"{"ts":"2026-11-03T14:02:11Z","type":"run","run":"7f3a","event":"started","order":"A-1","agent":"billing"}"#,
        "\n",
        // Only a known field unread: no unknown one beside it.
        r#"{"ts":"2026-11-03T14:02:12Z","type":"run","run":"7f3b","event":"started","order":"A-2"}"#,
        "\n",
    ));
    assert_eq!(p.stats.events, 2);
    let attrs = |i: usize| -> Vec<(&str, &str)> {
        (p.attrs[i].1.iter())
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    };
    assert_eq!(attrs(0), [("agent", "billing"), ("order", "A-1")]);
    assert_eq!(attrs(1), [("order", "A-2")]);
}

/// Without attributes asked for (every command but `timeline`), the same events and
/// none: a month of lines with fields the audit does not read must not be held.
#[test]
fn attributes_are_kept_only_when_asked_for() {
    let text = concat!(
        r#"{"level":"info","ts":"2026-11-03T14:02:11Z","type":"run","run":"7f3a","event":"started","order":"A-1"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:12Z","type":"response","run":"7f3a","step":1,"status":200,"trace":{"id":1}}"#,
        "\n",
    );
    let with = run(text);
    let opts = ParseOptions {
        keep_attrs: false,
        ..ParseOptions::default()
    };
    let without = parse(&mut text.as_bytes(), 0, &opts).unwrap();
    assert_eq!(with.attrs.len(), 2);
    assert!(without.attrs.is_empty(), "{:?}", without.attrs);
    assert_eq!(with.events, without.events);
    assert_eq!(with.stats, without.stats);
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

/// `amount_cents` is minor units (Rails' money-rails); `"4500 GBP"` a whole number of
/// unknown unit, `"45.00 GBP"` an amount.
#[test]
fn cents_and_a_number_beside_its_code_are_read_as_written() {
    let p = run(concat!(
        r#"{"timestamp":"2026-11-03T14:02:11Z","event":"refund created","refund_id":"rf_1","order_id":"A-1","amount_cents":4500,"currency":"GBP"}"#,
        "\n",
        r#"{"timestamp":"2026-11-03T14:02:12Z","event":"refund created","refund_id":"rf_2","order_id":"A-2","amount":"4500 GBP"}"#,
        "\n",
        r#"{"timestamp":"2026-11-03T14:02:13Z","event":"refund created","refund_id":"rf_3","order_id":"A-3","amount":"45.00 GBP"}"#,
        "\n",
    ));
    let gbp = |m| Some(Money::new(m, Currency::GBP));
    let amounts: Vec<_> = (p.events.iter())
        .map(|e| match &e.kind {
            EventKind::Effect(x) => (x.amount, x.whole),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        amounts,
        [(gbp(4500), None), (None, gbp(4500)), (gbp(4500), None)]
    );
}

/// A structured logger's own lines (a message, no `type`) are ignored, not skipped;
/// a line with neither is an event that lost its type.
/// A logger's line whose message is an effect kind and what happened, with the effect's
/// id in a field, is that effect; a message that says more, or names no effect kind, is
/// the application's own line; such a message without an id is skipped with the reason.
#[test]
fn a_logged_effect_is_read_from_its_message_and_fields() {
    let p = run(concat!(
        r#"{"timestamp":"2026-11-03T14:02:11Z","event":"refund created","refund_id":"rf_1","order_id":"A-1","amount_minor":4500,"currency":"GBP","status":"succeeded"}"#,
        "\n",
        r#"{"time":1762178532,"msg":"refund.failed","id":7,"order":"A-2","amount":"12.00","currency":"EUR","status":402}"#,
        "\n",
        r#"{"timestamp":"2026-11-03T14:02:13Z","message":"Payout: Paid","effect_id":"po_1","order_id":"A-3","status":"failed"}"#,
        "\n",
        r#"{"timestamp":"2026-11-03T14:02:14Z","event":"refund created successfully","refund_id":"rf_2"}"#,
        "\n",
        r#"{"timestamp":"2026-11-03T14:02:15Z","event":"user created","id":"u_1"}"#,
        "\n",
        r#"{"timestamp":"2026-11-03T14:02:16Z","event":"refund created","order_id":"A-4"}"#,
        "\n",
    ));
    assert_eq!(
        (p.stats.events, p.stats.ignored, p.stats.skipped),
        (3, 2, 1)
    );
    let effects: Vec<_> = (p.events.iter())
        .map(|e| match &e.kind {
            EventKind::Effect(x) => (
                x.kind.to_string(),
                x.id.to_string(),
                x.order.as_deref().map(str::to_string),
                x.amount,
                x.state.as_deref().map(str::to_string),
                x.happened,
            ),
            other => panic!("{other:?}"),
        })
        .collect();
    let s = |t: &str| Some(t.to_string());
    assert_eq!(
        effects,
        [
            (
                "refund".into(),
                "rf_1".into(),
                s("A-1"),
                Some(Money::new(4500, Currency::GBP)),
                s("succeeded"),
                true
            ),
            (
                "refund".into(),
                "7".into(),
                s("A-2"),
                Some(Money::new(1200, Currency::parse("EUR").unwrap())),
                s("failed"),
                false
            ),
            (
                "payout".into(),
                "po_1".into(),
                s("A-3"),
                None,
                s("failed"),
                false
            ),
        ]
    );
    let why = &p.stats.problems[0];
    assert_eq!(why.line, 6);
    assert!(why.reason.contains("`refund_id`"), "{}", why.reason);
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

#[test]
fn an_access_line_beside_json_lines_is_ignored() {
    let p = run(concat!(
        r#"{"ts":"2026-11-03T14:02:11Z","msg":"listening on 3000"}"#,
        "\n",
        r#"::1 - - [03/Nov/2026:14:02:11 +0000] "POST /v1/refunds HTTP/1.1" 201 127 "-" "curl/8""#,
        "\n",
    ));
    assert_eq!(
        (p.stats.ignored, p.stats.skipped),
        (2, 0),
        "{:?}",
        p.stats.problems
    );
}

#[test]
fn broken_lines_are_skipped_with_a_reason() {
    let p = run(concat!(
        "not json at all\n",
        "[1,2]\n",
        r#"{"ts":"2026-11-03T14:02:11Z"}"#,
        "\n",
        r#"{"type":"attempt","attempt":1}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:11Z","type":"attempt","run":"r","step":"four","attempt":1}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:11Z","type":"effect","effect_id":"x","kind":"refund","amount_minor":4500}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:11Z","type":"response","status":"abc"}"#,
        "\n",
    ));
    let reasons: Vec<&str> = p.stats.problems.iter().map(|p| p.reason.as_str()).collect();
    assert_eq!(p.stats.skipped, 7, "{reasons:?}");
    assert!(reasons[0].starts_with("not JSON"));
    assert_eq!(reasons[1], "not a JSON object");
    assert_eq!(reasons[2], "no `type` field");
    assert_eq!(
        reasons[3],
        "no `ts` field (nor `timestamp`, `@timestamp`, `time`, `@t` or `asctime`)"
    );
    assert_eq!(reasons[4], "`step` is not a non-negative integer");
    assert_eq!(reasons[5], "`amount_minor` without `currency`");
    assert!(reasons[6].contains("`status`"));
    assert_eq!(
        p.stats.lines,
        p.stats.events + p.stats.ignored + p.stats.skipped
    );
}

#[test]
fn rejected_effects_did_not_happen_and_args_may_be_a_string() {
    let p = run(concat!(
        r#"{"ts":"2026-11-03T14:02:11Z","type":"effect","effect_id":"rf_7","kind":"Refund","order":1,"status":"rejected"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:11Z","type":"tool_call","run":"r","step":1,"tool":"t","args":"{\"a\":1}"}"#,
    ));
    let EventKind::Effect(e) = &p.events[0].kind else {
        panic!()
    };
    assert!(!e.happened);
    assert_eq!((e.kind.as_str(), e.order.as_deref()), ("refund", Some("1")));
    let EventKind::ToolCall(t) = &p.events[1].kind else {
        panic!()
    };
    assert_eq!(t.parsed_args()["a"], 1);
}

#[test]
fn escapes_spelling_and_numeric_timestamps() {
    let p = run(concat!(
        r#"{"ts":1762178531,"type":"tool_\u0063all","run":7,"step":"2","tool":"issue\u005frefund","args":{"order":"A","amount_p":4500.0}}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:11Z","type":"response","status":201,"replayed":"true","effect_id":null}"#,
    ));
    assert_eq!(p.stats.problems, vec![]);
    let EventKind::ToolCall(t) = &p.events[0].kind else {
        panic!()
    };
    assert_eq!((t.call.run.as_str(), t.call.step), ("7", 2));
    assert_eq!(t.tool, "issue_refund");
    assert_eq!(
        t.args_raw, r#"{"order":"A","amount_p":4500.0}"#,
        "kept as written"
    );
    assert_eq!(p.events[0].at.display(), "2025-11-03T14:02:11.000Z");
    let EventKind::Response(r) = &p.events[1].kind else {
        panic!()
    };
    assert!(r.replayed && r.effect_id.is_none());
}

/// A service's replay line is a replay of the effect it names (by its kind's id field, else
/// `effect_id`) or of its key alone; a client's line saying `replayed` is not one, and
/// neither is a line naming neither an effect nor a key.
#[test]
fn a_services_replay_line_names_the_effect_it_replayed() {
    let replays = |text: &str| crate::ingest::replay::replays_of(run(text).events);
    let pino = r#"{"level":30,"time":1796553188513,"name":"payments","refundId":"re_1","orderId":"A-1","idempotencyKey":"k-1","msg":"idempotent replay"}"#;
    assert_eq!(
        replays(pino),
        [Replay {
            kind: Some("refund".into()),
            effect_id: Some("re_1".into()),
            key: Some("k-1".into()),
        }]
    );
    let structlog = r#"{"timestamp":"2026-12-06T08:33:46.806Z","event":"payout replayed","effect_id":"po_2","idempotency_key":"k-2"}"#;
    assert_eq!(
        replays(structlog),
        [Replay {
            kind: Some("payout".into()),
            effect_id: Some("po_2".into()),
            key: Some("k-2".into()),
        }]
    );
    // logstash's JSON of a Java service: the key in the message only.
    let by_key = r#"{"@timestamp":"2026-12-06T06:28:16.717Z","message":"Idempotency key ebcdf11dd2616e1c seen before, replaying stored response","orderId":"A-88215"}"#;
    assert_eq!(
        replays(by_key),
        [Replay {
            kind: None,
            effect_id: None,
            key: Some("ebcdf11dd2616e1c".into()),
        }]
    );
    for other in [
        r#"{"time":1796553188513,"msg":"refund response replayed","status":200,"refundId":"re_1"}"#,
        r#"{"time":1796553188513,"msg":"idempotent replay"}"#,
        r#"{"time":1796553188513,"msg":"replay-rate spike","refundId":"re_1"}"#,
    ] {
        assert_eq!(replays(other), [], "{other}");
    }
}

/// Stripe's events of a refund: created, then a later one saying it failed; an event of
/// another object is ignored, a refund object alone is its effect.
#[test]
fn stripes_objects_and_events_are_effects() {
    let refund = |id: &str, status: &str| {
        format!(
            r#"{{"id":"{id}","object":"refund","amount":4500,"created":1765040172,"currency":"gbp","metadata":{{"order_id":"A-1"}},"status":"{status}"}}"#
        )
    };
    let event = |ty: &str, object: String| {
        format!(
            r#"{{"id":"evt_1","object":"event","created":1765040232,"type":"{ty}","request":{{"id":"req_1","idempotency_key":"K-1"}},"data":{{"object":{object}}}}}"#
        )
    };
    let p = run(&[
        event("refund.created", refund("re_1", "pending")),
        event("refund.updated", refund("re_1", "failed")),
        event(
            "customer.created",
            r#"{"id":"cus_1","object":"customer"}"#.into(),
        ),
        refund("re_2", "succeeded"),
    ]
    .join("\n"));
    let effects: Vec<(&str, bool, Option<&str>)> = (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some((x.id.as_str(), x.happened, x.key.as_deref())),
            _ => None,
        })
        .collect();
    assert_eq!(
        effects,
        [
            ("re_1", true, Some("K-1")),
            ("re_1", false, Some("K-1")),
            ("re_2", true, None)
        ]
    );
    assert_eq!(
        (p.stats.events, p.stats.ignored, p.stats.skipped),
        (3, 1, 0)
    );
}

/// A tool call whose arguments nest deeper than correlation can read them is skipped and
/// said so, not kept with arguments read as null (review37 H2); one level less is read.
/// Arguments logged as a JSON string are held to the same.
#[test]
fn arguments_nested_too_deep_are_skipped_and_said() {
    let args = |levels: usize| {
        let meta = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        format!(r#"{{"order":"A-1","meta":{meta}}}"#)
    };
    let line = |args: String| {
        format!(
            r#"{{"ts":"2026-11-03T14:02:11Z","type":"tool_call","run":"7f3a","step":4,"tool":"issue_refund","args":{args}}}"#
        )
    };
    let as_string = |args: String| serde_json::to_string(&args).unwrap();
    for deep in [line(args(127)), line(as_string(args(127)))] {
        let read = run(&deep);
        assert_eq!((read.stats.skipped, read.events.len()), (1, 0));
        assert!(
            read.stats.problems[0]
                .reason
                .contains("deeper than 127 levels")
        );
    }
    for fine in [line(args(126)), line(as_string(args(126)))] {
        let read = run(&fine);
        assert_eq!((read.stats.skipped, read.events.len()), (0, 1));
    }
}
