//! Effects as services log them: objects under their kind, sentences, Stripe's objects, keys, rejections and replays.

use super::*;

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
