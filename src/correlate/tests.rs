//! The model's types and the stage's entry points, tested together.

use super::matching::latest_instant;
use super::merge::Merged;
use super::*;
use crate::event::{Event, EventKind};
use crate::money::{Currency, Money, WholeUnit};
use serde_json::Value;

#[test]
fn only_requests_other_than_get_head_and_options_may_cause_effects() {
    let attempt = |method: Option<&str>| AttemptRec {
        number: 1,
        at: Timestamp(0),
        loc: Loc { input: 0, line: 1 },
        method: method.map(Text::from),
        url: None,
        key: None,
        outcome: None,
        unlogged: false,
        generation: 0,
        key_unseen: false,
    };
    for safe in ["GET", "get", "Head", "OPTIONS", "options"] {
        assert!(!attempt(Some(safe)).may_cause_effects(), "{safe}");
    }
    for unsafe_ in ["POST", "post", "PATCH", "PUT", "DELETE", "GETS", ""] {
        assert!(attempt(Some(unsafe_)).may_cause_effects(), "{unsafe_}");
    }
    assert!(attempt(None).may_cause_effects(), "unknown method");
}

#[test]
fn client_and_service_parts_built_apart_give_the_model_built_together() {
    let trace = include_str!("../../fixtures/incident-a88214/trace.log");
    let parsed = crate::ingest::text::parse(
        &mut trace.as_bytes(),
        0,
        &crate::ingest::ParseOptions::default(),
    )
    .unwrap();
    let (client, service): (Vec<Event>, Vec<Event>) = parsed
        .events
        .iter()
        .cloned()
        .partition(|e| e.kind.is_client_side());
    assert!(!client.is_empty() && !service.is_empty());
    let opts = CorrelateOptions::default();
    let together = correlate(parsed.events, &opts);
    let apart = correlate_parts(vec![service, client], &opts);
    assert_eq!(format!("{apart:?}"), format!("{together:?}"));
}

/// Events are made ready a batch ahead of the builder, on another thread when there is
/// one: the model is the same with one thread or two, over many batches.
#[test]
fn the_model_is_the_same_on_one_thread_or_two() {
    use std::fmt::Write;
    let mut trace = String::new();
    for i in 0..4000u32 {
        let (m, s) = (i / 60 % 60, i % 60);
        let at = |ms: u32| format!("2026-11-01T{:02}:{m:02}:{s:02}.{ms:03}Z", i / 3600);
        let run = format!("r{}", i / 3);
        let step = i % 3 + 1;
        let tool = ["issue_refund", "lookup_order", "send_email"][i as usize % 3];
        let _ = writeln!(
            trace,
            "{}  agent run {run}  step {step}  tool={tool}  args={{\"order\":\"A-{}\",\"amount_p\":{}}}\n\
             {}  POST https://pay/v1/refunds/{}  (attempt 1)\n\
             {}  201 Created  refund_id=rf_{i}\n\
             {}  agent run {run}  step {step}  ok",
            at(0),
            i % 500,
            100 + i % 7,
            at(10),
            i % 5000,
            at(20),
            at(30),
        );
    }
    let parsed = crate::ingest::text::parse(
        &mut trace.as_bytes(),
        0,
        &crate::ingest::ParseOptions::default(),
    )
    .unwrap();
    assert!(parsed.events.len() > 3 * 4096, "{}", parsed.events.len());
    let opts = CorrelateOptions::default();
    let on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let model = pool.install(|| correlate(parsed.events.clone(), &opts));
        assert_eq!(model.dispatches.len(), 4000);
        format!("{model:?}")
    };
    let one = on(1);
    assert_eq!(on(2), one);
    assert_eq!(on(3), one);
}

#[test]
fn parts_merge_as_a_stable_sort_of_them_all_would_order_them() {
    use crate::event::{Lifecycle, RunEvent};
    // Times with ties inside and across parts; the run id records where each came from.
    let ev = |part: usize, i: usize, at: i64, line: u32| Event {
        at: Timestamp(at),
        loc: Loc { input: 0, line },
        kind: EventKind::Run(Box::new(RunEvent {
            run: format!("{part}.{i}").into(),
            what: Lifecycle::Started,
        })),
    };
    let mut parts = Vec::new();
    for p in 0..4usize {
        let part: Vec<Event> = (0..50usize)
            .map(|i| ev(p, i, ((i * 7 + p * 3) % 11) as i64, (i % 3) as u32))
            .collect();
        parts.push(part);
    }
    let mut expected: Vec<Event> = parts.iter().flatten().cloned().collect();
    expected.sort_by_key(|e| (e.at, e.loc));
    for part in &mut parts {
        part.sort_by_key(|e| (e.at, e.loc));
    }
    let merged: Vec<Event> = Merged::new(parts).collect();
    assert_eq!(merged, expected);
}

#[test]
fn a_time_to_the_second_may_be_late_in_its_second() {
    let skew = Duration::from_secs(2);
    let whole = Timestamp(1_764_684_009 * crate::time::NANOS_PER_SEC);
    assert_eq!(latest_instant(whole, skew).0 - whole.0, 999_999_999);
    assert_eq!(
        latest_instant(whole, Duration::from_millis(300)).0 - whole.0,
        300_000_000
    );
    assert_eq!(latest_instant(whole, Duration(0)), whole);
    let precise = Timestamp(whole.0 + 1);
    assert_eq!(latest_instant(precise, skew), precise);
}

#[test]
fn effect_kind_from_tool_or_url() {
    assert_eq!(
        effect_kind_of("issue_refund", None, &[]).as_deref(),
        Some("refund")
    );
    assert_eq!(
        effect_kind_of("pay", Some("https://payments.internal/v1/refunds?x=1"), &[]).as_deref(),
        Some("refund")
    );
    assert_eq!(
        effect_kind_of("lookup_customer", Some("https://crm/v1/customers"), &[]),
        None
    );
    assert_eq!(
        effect_kind_of("IssueRefund", None, &[]).as_deref(),
        Some("refund")
    );
    assert_eq!(
        effect_kind_of("capture_charge", Some("https://p/v1/REFUNDS"), &[]).as_deref(),
        Some("refund"),
        "the first kind of the list named anywhere"
    );
    let map = vec![("send_money".to_string(), "payout".to_string())];
    assert_eq!(
        effect_kind_of("send_money", None, &map).as_deref(),
        Some("payout")
    );
    // A tool that reads a kind makes none, whatever the case or separator; one that joins
    // a second action to its read, or a write named with a read word inside, still does.
    for read in [
        "get_refund_status",
        "getRefundStatus",
        "list-refunds",
        "refunds.retrieve",
        "refund_status",
        "RefundDetails",
    ] {
        assert_eq!(effect_kind_of(read, None, &[]), None, "{read}");
    }
    for write in [
        "check_and_refund",
        "refund_order_items",
        "issue_refund",
        "refund",
    ] {
        assert_eq!(
            effect_kind_of(write, None, &[]).as_deref(),
            Some("refund"),
            "{write}"
        );
    }
    let mapped = [("get_refund_status".to_string(), "refund".to_string())];
    assert_eq!(
        effect_kind_of("get_refund_status", None, &mapped).as_deref(),
        Some("refund")
    );
}

#[test]
fn order_and_amount_from_args() {
    let v: Value = serde_json::from_str(r#"{"order":"A-1","amount_p":4500.0}"#).unwrap();
    assert_eq!(
        order_and_amount(&v, WholeUnit::Auto),
        (Some("A-1".into()), Some(Money::new(4500, Currency::GBP)))
    );
    let v: Value =
        serde_json::from_str(r#"{"order_id":"B","amount_minor":12,"currency":"eur"}"#).unwrap();
    let eur = Currency::parse("EUR").unwrap();
    assert_eq!(
        order_and_amount(&v, WholeUnit::Auto),
        (Some("B".into()), Some(Money::new(12, eur)))
    );
    // A payments API's shape: the order in `metadata`, read when the top level has none.
    let v: Value = serde_json::from_str(
        r#"{"charge":"ch_1","amount_minor":4500,"currency":"GBP","metadata":{"order_id":"A-7"}}"#,
    )
    .unwrap();
    assert_eq!(
        order_and_amount(&v, WholeUnit::Auto),
        (Some("A-7".into()), Some(Money::new(4500, Currency::GBP)))
    );
    let v: Value = serde_json::from_str(r#"{"order":"A-1","metadata":{"order_id":"X"}}"#).unwrap();
    assert_eq!(order_and_amount(&v, WholeUnit::Auto).0, Some("A-1".into()));
    let v: Value = serde_json::from_str(r#"{"metadata":"order_id=A-1"}"#).unwrap();
    assert_eq!(order_and_amount(&v, WholeUnit::Auto).0, None);
}

/// `amount` is read as an effect's is: major units with `currency`, and a bare whole number
/// in a currency with decimals only in the unit declared for the call's input.
#[test]
fn an_amount_argument_is_read_as_an_effects_amount_is() {
    let amount = |args: &str, whole: WholeUnit| {
        let v: Value = serde_json::from_str(args).unwrap();
        (order_and_amount(&v, whole).1).map(|m| (m.minor, m.currency.to_string()))
    };
    let gbp = |minor: i64| Some((minor, "GBP".to_string()));
    let stripe = r#"{"charge":"ch_1","amount":4500,"currency":"gbp"}"#;
    assert_eq!(amount(stripe, WholeUnit::Auto), None);
    assert_eq!(amount(stripe, WholeUnit::Minor), gbp(4500));
    assert_eq!(amount(stripe, WholeUnit::Major), gbp(450_000));
    let decimal = r#"{"amount":45.5,"currency":"GBP"}"#;
    for whole in [WholeUnit::Auto, WholeUnit::Minor, WholeUnit::Major] {
        assert_eq!(
            amount(decimal, whole),
            gbp(4550),
            "a decimal is major units"
        );
    }
    assert_eq!(
        amount(r#"{"amount":"45.00 GBP"}"#, WholeUnit::Auto),
        gbp(4500)
    );
    assert_eq!(amount(r#"{"amount":"4500 GBP"}"#, WholeUnit::Auto), None);
    assert_eq!(
        amount(r#"{"amount":"4500 GBP"}"#, WholeUnit::Minor),
        gbp(4500)
    );
    // Yen have no minor unit: the number is the amount, declared or not.
    let yen = Some((4500, "JPY".to_string()));
    assert_eq!(
        amount(r#"{"amount":4500,"currency":"jpy"}"#, WholeUnit::Auto),
        yen
    );
    assert_eq!(
        amount(r#"{"amount":4500,"currency":"jpy"}"#, WholeUnit::Major),
        yen
    );
    // No currency: no amount, whatever is declared; minor units named as such win.
    assert_eq!(amount(r#"{"amount":4500}"#, WholeUnit::Minor), None);
    let both = r#"{"amount_minor":4500,"amount":45,"currency":"GBP"}"#;
    assert_eq!(amount(both, WholeUnit::Major), gbp(4500));
}

/// A month holds every effect: the whole number of unknown unit shares the amount's
/// place (`WrittenAmount`), and a second field would make each record 16 bytes larger.
#[test]
fn an_effect_record_stays_152_bytes() {
    assert_eq!(std::mem::size_of::<EffectRec>(), 152);
}
