//! Amounts in minor and major units, as numbers and strings, and settlement times.

use super::*;

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
