//! Effect lines: states, amounts, keys, ids, and the service's replays.

use super::*;

#[test]
fn effects_states_and_amounts() {
    let p = run(
        "10:00:00  refund rf_7  order A-1  1250p  rejected amount_exceeds_capture\n\
         10:00:01  refund rf_1  order A-1  4500p  pending\n\
         10:00:02  charge ch_1  order A-2  amount_minor=1200  currency=eur  captured 2026-11-03T10:00:05Z  key=k1\n\
         23:59:59  payout po_1  order A-3  100p  settled 00:00:03\n",
    );
    let effects: Vec<&Effect> = p
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some(&**x),
            _ => None,
        })
        .collect();
    assert_eq!(effects.len(), 4);
    assert!(!effects[0].happened);
    assert!(
        effects[1].happened
            && effects[1].state.as_deref() == Some("pending")
            && effects[1].state_at.is_none()
    );
    assert_eq!(
        effects[2].amount,
        Some(Money::new(1200, Currency::parse("EUR").unwrap()))
    );
    assert_eq!(effects[2].key.as_deref(), Some("k1"));
    assert!(effects[2].state_at.is_some());
    assert_eq!(
        effects[3].state_at,
        Some(Timestamp(NANOS_PER_DAY + 3 * NANOS_PER_SEC))
    );
}

/// An amount written for people reads as `4500p` does; one written twice must agree, and a
/// sign of several currencies (unless a `currency=` token names one of them) is not
/// guessed at. A minus sign is kept, as `-4500p` keeps it.
#[test]
fn effect_amounts_written_for_people() {
    let p = run(
        "10:00:00  refund rf_1  order A-1  £45.00  settled 10:00:05\n\
         10:00:01  refund rf_2  order A-1  45.00 GBP  4500p  settled 10:00:06\n\
         10:00:02  refund rf_3  order A-1  45.00 GBP  52.61 EUR  settled 10:00:07\n\
         10:00:03  refund rf_4  order A-1  4500p  €52.00\n\
         10:00:04  refund rf_5  order A-1  $45.00\n\
         10:00:05  refund rf_6  order A-1  -£45.00\n\
         10:00:06  refund rf_7  order A-1  $45.00  settled 10:00:08  currency=USD\n\
         10:00:07  refund rf_8  order A-1  £45.00  currency=EUR\n",
    );
    let amounts: Vec<Option<Money>> = p
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some(x.amount),
            _ => None,
        })
        .collect();
    let gbp = |minor| Some(Money::new(minor, Currency::GBP));
    let usd = Some(Money::new(4500, Currency::parse("USD").unwrap()));
    assert_eq!(amounts, [gbp(4500), gbp(4500), gbp(-4500), usd]);
    let lines: Vec<u32> = p.stats.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [3, 4, 5, 8], "{:?}", p.stats.problems);
    assert!(p.stats.problems[0].reason.contains("disagree"));
}

#[test]
fn general_amounts_and_keys() {
    let p = run("10:00:00  agent run r  step 1  tool=t  args={\"a\":1}\n\
         10:00:01  POST https://x/v1/charges  (attempt 1)  idempotency_key=k-1\n\
         10:00:02  201 Created  charge_id=ch_1  amount_minor=1200  currency=EUR\n\
         10:00:03  charge ch_1  amount_minor=1200  currency=jpy  captured 2026-11-03T10:00:05+09:00  idempotency_key=k-1\n");
    let k = kinds(&p);
    let EventKind::Attempt(a) = k[1] else {
        panic!()
    };
    assert_eq!(a.key.as_deref(), Some("k-1"));
    let EventKind::Response(r) = k[2] else {
        panic!()
    };
    let eur = Currency::parse("EUR").unwrap();
    assert_eq!(
        (r.effect_id.as_deref(), r.amount, r.attempt),
        (Some("ch_1"), Some(Money::new(1200, eur)), Some(1))
    );
    let e = effects(&p);
    assert_eq!(
        e[0].amount,
        Some(Money::new(1200, Currency::parse("JPY").unwrap()))
    );
    assert_eq!(e[0].order, None, "an amount alone makes an effect");
    assert_eq!(e[0].key.as_deref(), Some("k-1"));
    assert_eq!(e[0].state_at, Some(ts("2026-11-03", 1, 0, 5, 0)));
}

/// `amount=` in major units with `currency=`, as services log amounts: converted exactly by
/// the currency's exponent; an amount with more decimals than the currency has, or without a
/// currency, is skipped with the reason.
#[test]
fn amounts_in_major_units() {
    let p = run(
        "10:00:00  refund rf_1  order A-1  amount=45.00  currency=GBP  settled 10:00:05\n\
         10:00:01  charge ch_1  order A-2  amount=1200  currency=jpy  captured 10:00:06\n\
         10:00:02  201 Created  refund_id=rf_1  amount=45.5  currency=EUR\n\
         10:00:03  refund rf_2  order A-3  amount=45.001  currency=GBP  settled 10:00:07\n\
         10:00:04  refund rf_3  order A-4  amount=45.00  settled 10:00:08\n",
    );
    let amounts: Vec<Option<Money>> = p
        .events
        .iter()
        .map(|e| match &e.kind {
            EventKind::Effect(x) => x.amount,
            EventKind::Response(r) => r.amount,
            _ => None,
        })
        .collect();
    let money = |minor, code| Some(Money::new(minor, Currency::parse(code).unwrap()));
    assert_eq!(
        amounts,
        [money(4500, "GBP"), money(1200, "JPY"), money(4550, "EUR")]
    );
    let r = reasons(&p);
    assert_eq!(p.stats.skipped, 2, "{r:?}");
    assert!(r[0].1.contains("more decimals"), "{r:?}");
    assert!(r[1].1.contains("`amount=` without `currency=`"), "{r:?}");
}

/// Services that log key=value: the order as a token, the id as a token after a word that
/// says what happened (`refund created  refund_id=rf_2`), the state as a `status=` token. A
/// line whose id is such a word and names no other is skipped: read as the id, every
/// `refund created` of a month would be one refund.
#[test]
fn effect_lines_with_tokens_and_event_words() {
    let p = run(
        "10:00:00  refund rf_1  order=A-1  amount_p=4500  settled 10:00:05\n\
         10:00:01  refund created  refund_id=rf_2  order_id=A-2  amount_p=100\n\
         10:00:02  refund failed  effect_id=rf_3  order=A-3  amount_p=100\n\
         10:00:03  refund rf_4  order A-4  4500p  status=failed\n\
         10:00:04  refund created  order=A-5  amount_p=100\n\
         10:00:05  refund issued  order A-6  4500p  settled 10:00:09\n\
         10:00:06  refund abc  order A-7  4500p\n\
         10:00:07  refund rf_8  order A-8  4500p  settled 10:00:09  status=failed\n\
         10:00:08  healthcheck ok  latency_ms=9\n\
         10:00:09  refund duplicate  order_id=A-9  idempotency_key=k1\n\
         10:00:10  webhook received  id=evt_1  order_id=A-9\n\
         10:00:11  refund created  refund_id=rf_10  order_id=A-10\n\
         10:00:12  refund failed  refund_id=rf_11  order_id=A-11  amount_p=1999  status=402  error=card_declined\n\
         10:00:13  refund failed  refund_id=rf_12  order_id=A-12  amount_p=4500  card_declined\n\
         10:00:14  refund created  refund_id=  id=rf_13  order=A-13  amount_p=1\n\
         10:00:15  refund created  refund_id=rf_14  order=A-14  amount_p=1  status=402\n",
    );
    let effects: Vec<(String, Option<String>, Option<String>, bool)> = p
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some((
                x.id.to_string(),
                x.order.as_ref().map(|o| o.to_string()),
                x.state.as_ref().map(|s| s.to_string()),
                x.happened,
            )),
            _ => None,
        })
        .collect();
    let e = |id: &str, order: &str, state: Option<&str>, happened| {
        (
            id.to_string(),
            Some(order.to_string()),
            state.map(String::from),
            happened,
        )
    };
    assert_eq!(
        effects,
        [
            e("rf_1", "A-1", Some("settled"), true),
            e("rf_2", "A-2", Some("created"), true),
            e("rf_3", "A-3", Some("failed"), false),
            e("rf_4", "A-4", Some("failed"), false),
            e("abc", "A-7", None, true),
            // The final state written with its time wins over a status token.
            e("rf_8", "A-8", Some("settled"), true),
            // An id token and a word saying what happened make an effect, amount or not.
            e("rf_10", "A-10", Some("created"), true),
            // A word saying it did not happen wins over a code or a reason.
            e("rf_11", "A-11", Some("failed"), false),
            e("rf_12", "A-12", Some("failed"), false),
            // An empty id token is passed over for the next.
            e("rf_13", "A-13", Some("created"), true),
            // A status that is a code is no state.
            e("rf_14", "A-14", Some("created"), true),
        ]
    );
    let lines: Vec<u32> = p.stats.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [5, 6], "{:?}", p.stats.problems);
    assert!(p.stats.problems[0].reason.contains("without an id"));
    // The health check, and lines that only mention an order: no effects.
    assert_eq!(p.stats.ignored, 3);
}

/// Services whose loggers use Java's default layouts, or write the message for people
/// (`Refund created`, one blank apart), log effects too; a line about a request (`refund
/// received  order_id=...  amount=...`) is none: the word after the kind is no id.
#[test]
fn effects_in_java_layouts_and_sentences() {
    let p = run(
        "2026-11-03 14:02:11.501 [main] INFO  c.e.payments.RefundService - Refund created refund_id=rf_1 order_id=A-1 amount=45.00 currency=GBP\n\
         2026-11-03T14:02:12.501Z  INFO 12345 --- [           main] c.e.p.RefundService   : refund rf_2  order A-2  4500p\n\
         2026-11-03T14:02:13.501Z  refund received  order_id=A-3  amount=45.00  currency=GBP\n\
         2026-11-03T14:02:14.501Z  refund queued  order_id=A-3  amount_p=4500\n\
         2026-11-03T14:02:15.501Z  Order created order_id=A-4 amount=45.00 currency=GBP id=ord_1\n\
         2026-11-03T14:02:16.501Z  refund abc  order A-7  4500p\n",
    );
    let effects: Vec<(String, String, Option<String>)> = (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some((
                x.kind.to_string(),
                x.id.to_string(),
                x.order.as_ref().map(|o| o.to_string()),
            )),
            _ => None,
        })
        .collect();
    let e = |id: &str, order: &str| {
        (
            "refund".to_string(),
            id.to_string(),
            Some(order.to_string()),
        )
    };
    assert_eq!(
        effects,
        [e("rf_1", "A-1"), e("rf_2", "A-2"), e("abc", "A-7")]
    );
    assert_eq!((p.stats.ignored, p.stats.skipped), (3, 0));
}

/// An object logged after the message (`json.dumps`, a Python dict's `%s`) gives the
/// effect's tokens; without an id the line is skipped, and an object after another message
/// (another kind's, a refund's request) is no effect.
#[test]
fn effects_with_an_object_after_the_message() {
    let p = run(
        "2026-11-03T14:02:11.501Z INFO refund created: {\"refund_id\": \"rf_1\", \"order_id\": \"A-1\", \"amount\": 45.00, \"currency\": \"GBP\"}\n\
         2026-11-03T14:02:12.501Z  Refund failed {'id': 'rf_2', 'order': 'A-2', 'amount_p': 4500, 'meta': {'try': 2}}\n\
         2026-11-03T14:02:13.501Z  refund created: {\"order_id\": \"A-3\", \"amount_p\": 4500}\n\
         2026-11-03T14:02:14.501Z  user created: {\"id\": \"u_1\", \"order_id\": \"A-4\", \"amount_p\": 4500}\n\
         2026-11-03T14:02:15.501Z  refund requested: {\"id\": \"req_1\", \"order_id\": \"A-5\", \"amount_p\": 4500}\n",
    );
    let effects: Vec<(String, Option<String>, Option<i64>, bool)> = (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some((
                x.id.to_string(),
                x.order.as_ref().map(|o| o.to_string()),
                x.amount.map(|m| m.minor),
                x.happened,
            )),
            _ => None,
        })
        .collect();
    let e = |id: &str, order: &str, happened| (id.into(), Some(order.into()), Some(4500), happened);
    assert_eq!(effects, [e("rf_1", "A-1", true), e("rf_2", "A-2", false)]);
    let lines: Vec<u32> = p.stats.problems.iter().map(|p| p.line).collect();
    assert_eq!((lines, p.stats.ignored), (vec![3], 2));
}

/// A ledger's sign on one of two spellings of an effect's amount is no disagreement: the
/// amounts are compared as the sizes correlation reads.
#[test]
fn two_spellings_of_an_amount_agree_whatever_the_sign() {
    let p = run(
        "10:00:00  refund rf_1  order A-1  -1200p  £12.00  settled 10:00:05\n\
         10:00:01  refund rf_2  order A-1  -1200p  £12.01  settled 10:00:05\n",
    );
    let amounts: Vec<Option<i64>> = p
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some(x.amount.map(|m| m.size().minor)),
            _ => None,
        })
        .collect();
    assert_eq!(amounts, [Some(1200)]);
    let lines: Vec<u32> = p.stats.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [2], "{:?}", p.stats.problems);
}

/// A service's effect line names the key it was sent as `key=`, or as the client spelt it;
/// a value that says there was none is none (on the payments fast path too).
#[test]
fn effect_keys_and_their_absence() {
    let p = run(
        "10:00:00  refund rf_1  order A-1  4500p  settled 10:00:05  key=None\n\
         10:00:01  refund rf_2  order A-1  4500p  settled 10:00:05  key=k2\n\
         10:00:02  refund rf_3  order A-1  4500p  settled 10:00:05  X-Idempotency-Key: k3\n\
         10:00:03  refund rf_4  order A-1  4500p  settled 10:00:05  idempotency_key=k4\n",
    );
    let keys: Vec<Option<String>> = p
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some(x.key.as_ref().map(|k| k.to_string())),
            _ => None,
        })
        .collect();
    let k = |s: &str| Some(s.to_string());
    assert_eq!(keys, [None, k("k2"), k("k3"), k("k4")]);
}

/// The first state word is the state; a word after it is its reason. A line naming only
/// the effect and a state that says it did not happen is an update; one saying it happened,
/// or naming only a job, is no effect.
#[test]
fn effect_states_with_reasons_and_updates_by_id() {
    let p = run(
        "10:00:00  refund rf_1  order A-1  1250p  rejected  amount_exceeds_capture\n\
         10:00:01  refund rf_2  order A-2  1250p  failed  card_declined\n\
         10:00:02  refund rf_3  order A-3  1250p  partial  failed\n\
         10:00:03  refund rf_4  failed 10:00:03.500\n\
         10:00:04  refund rf_5  succeeded\n\
         10:00:05  worker job_1  done\n\
         10:00:06  healthcheck db  failed\n\
         10:00:07  retry 2  failed\n\
         10:00:08  refund worker  failed\n",
    );
    let got: Vec<(&str, Option<&str>, Option<&str>, bool)> = effects(&p)
        .iter()
        .map(|e| (&*e.id, e.order.as_deref(), e.state.as_deref(), e.happened))
        .collect();
    assert_eq!(
        got,
        [
            ("rf_1", Some("A-1"), Some("rejected"), false),
            ("rf_2", Some("A-2"), Some("failed"), false),
            // Not a state a service writes, then one that is: the second.
            ("rf_3", Some("A-3"), Some("failed"), false),
            ("rf_4", None, Some("failed"), false),
        ]
    );
    assert_eq!(effects(&p)[3].state_at, Some(tod(10, 0, 3, 500)));
    assert_eq!(p.stats.ignored, 5);
}

/// A service's replay line, tokens two blanks or one apart, is a replay of the effect its
/// kind's id token names, or of the key its message names; a client's answer with a status
/// is not one.
#[test]
fn a_services_replay_line_names_the_effect_it_replayed() {
    let replays = |text: &str| crate::ingest::replay::replays_of(run(text).events);
    let replay = |id: &str, key: &str| Replay {
        kind: Some("refund".into()),
        effect_id: Some(id.into()),
        key: Some(key.into()),
    };
    assert_eq!(
        replays("2026-12-06T06:27:11.030Z  idempotent replay  refund_id=re_1  key=k1\n"),
        [replay("re_1", "k1")]
    );
    assert_eq!(
        replays(
            "2026-12-06T06:27:11.030Z  INFO payments: idempotent replay refund_id=re_b9b41bae087f46 idempotency_key=7f855f4a115c18a8195bd55fea5a9928\n"
        ),
        [replay(
            "re_b9b41bae087f46",
            "7f855f4a115c18a8195bd55fea5a9928"
        )]
    );
    // Python's logging, a sentence naming the refund and its key.
    assert_eq!(
        replays(
            "2026-12-06 02:11:32,850 INFO payments: Replaying stored response for refund re_1 (key k1)\n"
        ),
        [replay("re_1", "k1")]
    );
    // JUL's SimpleFormatter of a Java service: the key in the message only.
    assert_eq!(
        replays(
            "2026-12-06T06:27:11.030Z  INFO: idempotent replay for key d49d19e4-f3d1 order A-1\n"
        ),
        [Replay {
            kind: None,
            effect_id: None,
            key: Some("d49d19e4-f3d1".into()),
        }]
    );
    for other in [
        "2026-12-06T06:27:11.030Z  replayed  status=200  refund_id=re_1\n",
        "2026-12-06T06:27:11.030Z  idempotent replay for order A-1\n",
        "2026-12-06T06:27:11.030Z  refund created  refund_id=re_1\n",
    ] {
        assert_eq!(replays(other), [], "{other}");
    }
}
