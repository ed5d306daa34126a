//! The CSV reader's tests: rows read into effects, the lines they are cited on, and a row
//! whose quote never closes skipped with the rows after it read.

use super::*;

fn run(text: &str, map: &[(&str, &str)]) -> Parsed {
    let opts = ParseOptions {
        csv_map: map
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        ..ParseOptions::default()
    };
    parse(&mut text.as_bytes(), 0, &opts).unwrap()
}

fn effects(p: &Parsed) -> Vec<(&Effect, String)> {
    p.events
        .iter()
        .map(|e| match &e.kind {
            EventKind::Effect(f) => (&**f, e.at.display()),
            _ => panic!("not an effect"),
        })
        .collect()
}

/// A key column that says there was none (`None`, a redaction) gives no key: read as
/// one, every such row would share it.
#[test]
fn keys_that_say_there_is_none() {
    let p = run(
        "id,order_id,amount,currency,created_at,idempotency_key\n\
         rf_1,A-1,45.00,GBP,2026-11-03T10:00:00Z,k-1\n\
         rf_2,A-2,45.00,GBP,2026-11-03T10:00:01Z,None\n\
         rf_3,A-3,45.00,GBP,2026-11-03T10:00:02Z,[REDACTED]\n",
        &[],
    );
    let keys: Vec<Option<&str>> = effects(&p).iter().map(|e| e.0.key.as_deref()).collect();
    assert_eq!(keys, [Some("k-1"), None, None]);
}

#[test]
fn settlement_export_with_decimal_amounts_and_lower_case_currency() {
    let p = run(
        "id,Amount,Currency,Created (UTC),Status,order_id (metadata)\n\
         rf_8XM1,45.00,gbp,2026-11-03 14:02:11,succeeded,A-88214\n\
         rf_1,1200,jpy,2026-11-03 14:05:00,succeeded,A-1\n\
         rf_2,1.250,kwd,2026-11-03 14:06:00,failed,A-2\n",
        &[],
    );
    assert_eq!(p.stats.problems, vec![]);
    let e = effects(&p);
    assert_eq!(e[0].0.amount, Some(Money::new(4500, Currency::GBP)));
    assert_eq!(e[0].0.kind, "refund");
    assert_eq!(e[0].0.order.as_deref(), Some("A-88214"));
    assert_eq!(e[0].1, "2026-11-03T14:02:11.000Z");
    assert_eq!(e[1].0.amount.unwrap().minor, 1200);
    assert_eq!(e[2].0.amount.unwrap().minor, 1250);
    assert!(
        !e[2].0.happened,
        "a failed row is not an effect that happened"
    );
    assert_eq!((p.stats.lines, p.stats.events, p.stats.ignored), (4, 3, 1));
}

#[test]
fn api_style_export_is_in_minor_units_and_unix_seconds() {
    let p = run(
        "id,object,amount,currency,created,metadata[order_id]\nch_1,charge,4500,usd,1762178531,A-9\n",
        &[],
    );
    let e = effects(&p);
    assert_eq!(e[0].0.kind, "charge");
    assert_eq!(e[0].0.amount.unwrap().minor, 4500);
    assert_eq!(e[0].1, "2025-11-03T14:02:11.000Z");
}

#[test]
fn crlf_rows_cite_the_line_they_start_on() {
    // Found by the evidence test: the reader placed each row after a `\r\n` one line
    // early, so findings cited the header.
    let p = run(
        "id,order_id,amount,currency,created\r\n\
         rf_1,A-1,45.00,GBP,2026-11-03 14:02:11\r\n\
         rf_2,\"A\r\n2\",45.00,GBP,2026-11-03 14:02:12\r\n\
         rf_3,A-3,45.00,GBP,2026-11-03 14:02:13\n\
         rf_4,A-4,45.00,GBP,2026-11-03 14:02:14\r\n",
        &[],
    );
    let lines: Vec<u32> = p.events.iter().map(|e| e.loc.line).collect();
    assert_eq!(lines, [2, 3, 5, 6]);
    assert_eq!(p.stats.lines, 6);
}

#[test]
fn mapped_columns_and_quoted_fields_spanning_lines() {
    let p = run(
        "Ref,Order Ref,amount_p,When,Note\n\
         \"rf_1\",\"A-1\",4500,2026-11-03T14:02:11Z,\"first line\nsecond, line\"\n\
         rf_2,A-2,300,2026-11-03T14:03:11Z,plain\n",
        &[("id", "Ref"), ("order", "order ref"), ("created", "When")],
    );
    assert_eq!(p.stats.problems, vec![]);
    let e = effects(&p);
    assert_eq!(e.len(), 2);
    assert_eq!(e[0].0.order.as_deref(), Some("A-1"));
    assert_eq!(e[0].0.amount, Some(Money::new(4500, Currency::GBP)));
    assert_eq!(p.events[1].loc.line, 4, "the row after a two-line field");
    assert_eq!((p.stats.lines, p.stats.events, p.stats.ignored), (4, 2, 2));
}

#[test]
fn bad_rows_are_skipped_with_their_line_and_the_rest_read() {
    let p = run(
        "id,amount,currency,created\n\
         rf_1,45.0x,GBP,2026-11-03T14:02:11Z\n\
         rf_2,45.00,XYZ,2026-11-03T14:02:11Z\n\
         rf_3,45.001,GBP,2026-11-03T14:02:11Z\n\
         rf_4,45.00,GBP,yesterday\n\
         \n\
         rf_5,45.00,GBP,2026-11-03T14:02:11Z\n",
        &[],
    );
    let lines: Vec<u32> = p.stats.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [2, 3, 4, 5]);
    assert!(
        p.stats.problems[0]
            .reason
            .contains("`45.0x` is not a decimal amount")
    );
    assert!(
        p.stats.problems[1]
            .reason
            .contains("no known ISO 4217 exponent")
    );
    assert!(p.stats.problems[2].reason.contains("more decimals"));
    assert!(
        p.stats.problems[3]
            .reason
            .contains("`yesterday` is not a timestamp")
    );
    assert_eq!(effects(&p).len(), 1);
    assert_eq!(p.stats.lines, 7);
    assert_eq!(
        p.stats.lines,
        p.stats.events + p.stats.ignored + p.stats.skipped
    );
}

/// A quote that never closes once swallowed every row after its own, counted ignored
/// (SPEC §9: never a silent drop): its row is skipped with why, the rows after it read.
#[test]
fn a_quote_that_never_closes_skips_its_row_and_the_rows_after_are_read() {
    for end in ["\n", "\r\n"] {
        let text = [
            "id,Description,Amount,Currency,Created (UTC),Status,order_id (metadata)",
            "rf_1,\"12\"\" pizza, cold,45.00,gbp,2026-11-03 14:02:11,succeeded,A-1",
            "rf_2,ok,45.00,gbp,2026-11-03 14:02:12,succeeded,A-1",
            "rf_3,ok,45.00,gbp,2026-11-03 14:02:13,succeeded,A-1",
            "rf_4,ok,45.00,gbp,2026-11-03 14:02:14,succeeded,A-1",
            "",
        ]
        .join(end);
        let p = run(&text, &[]);
        let lines: Vec<u32> = p.stats.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, [2], "{end:?}");
        let why = &p.stats.problems[0].reason;
        assert!(why.starts_with("a quoted field is never closed"), "{why}");
        assert!(why.contains("line 2"), "{why}");
        let read: Vec<(&str, u32)> = (effects(&p).iter().map(|e| &*e.0.id))
            .zip(p.events.iter().map(|e| e.loc.line))
            .collect();
        assert_eq!(read, [("rf_2", 3), ("rf_3", 4), ("rf_4", 5)], "{end:?}");
        let s = &p.stats;
        assert_eq!((s.lines, s.events, s.skipped, s.ignored), (5, 3, 1, 1));
    }
}

/// A quote that never closes on the last line swallows nothing, and its row is skipped
/// all the same: its fields cannot be told apart.
#[test]
fn a_quote_that_never_closes_on_the_last_line_skips_its_row() {
    let p = run(
        "id,note,amount,currency,created\n\
         rf_1,a,45.00,GBP,2026-11-03T14:02:11Z\n\
         rf_2,\"b,45.00,GBP,2026-11-03T14:02:12Z",
        &[],
    );
    let lines: Vec<u32> = p.stats.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [3]);
    let why = &p.stats.problems[0].reason;
    assert!(why.contains("runs to the end of the file"), "{why}");
    assert_eq!(effects(&p).len(), 1);
    assert_eq!((p.stats.lines, p.stats.ignored), (3, 1));
}

/// Quotes that close are no such row: a field's escaped `""`, one spanning lines (up to
/// the last byte), and a `"` inside an unquoted field (`12" pizza`), which is text.
#[test]
fn quotes_that_close_and_quotes_inside_a_field_skip_nothing() {
    let p = run(
        "id,note,amount,currency,created\n\
         rf_1,12\" pizza,45.00,GBP,2026-11-03T14:02:11Z\n\
         rf_2,\"a \"\"b\"\"\",45.00,GBP,2026-11-03T14:02:12Z\n\
         rf_3,45.00,45.00,GBP,2026-11-03T14:02:13Z,\"two\nlines\"",
        &[],
    );
    assert_eq!(p.stats.problems, vec![]);
    assert_eq!(effects(&p).len(), 3);
    assert_eq!((p.stats.lines, p.stats.ignored), (5, 2));
}

#[test]
fn a_header_whose_quote_never_closes_is_an_error() {
    let opts = ParseOptions::default();
    let text = b"id,\"amount,currency,created\nrf_1,1,GBP,2026-11-03T14:02:11Z\n";
    let err = parse(&mut &text[..], 0, &opts).unwrap_err();
    assert!(err.to_string().contains("never closed"), "{err}");
}

#[test]
fn a_header_without_an_id_column_is_an_error() {
    let opts = ParseOptions::default();
    let err = parse(&mut &b"amount,currency\n1,GBP\n"[..], 0, &opts).unwrap_err();
    assert!(err.to_string().contains("--csv-map id=COLUMN"));
}
