//! CSV effect exports end to end (SPEC §3.3): rows whose status says the effect did not
//! happen are no duplicates, every default column spelling is detected and read, and
//! `--csv-map FIELD=Column` reads an export whose columns have other names.

use idem_audit::event::{Effect, EventKind};
use idem_audit::ingest::csv::FIELDS;
use idem_audit::ingest::{Format, ParseOptions, parse, source};
use idem_audit::money::{Currency, Money};
use idem_audit::report::Report;

mod common;
use common::{duplicate, fixture, report, scan};

fn rules(r: &Report, rule: &str) -> Vec<Vec<String>> {
    r.findings
        .iter()
        .filter(|f| f.rule == rule)
        .map(|f| f.effects.clone())
        .collect()
}

#[test]
fn a_refund_whose_status_says_it_did_not_happen_is_no_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("refunds.csv");
    let write = |second: &str| {
        std::fs::write(
            &export,
            format!(
                "id,order_id,amount,currency,created,status\n\
                 rf_1,A-1,45.00,GBP,2026-11-03T14:02:11Z,succeeded\n\
                 rf_2,A-1,45.00,GBP,2026-11-03T14:02:13Z,{second}\n"
            ),
        )
        .unwrap();
    };
    write("succeeded");
    let r = report(&[&export], &[]);
    assert_eq!(rules(&r, "duplicate-effect"), [["rf_1", "rf_2"]]);
    for status in ["failed", "canceled", "Cancelled", "rejected", "declined"] {
        write(status);
        let r = report(&[&export], &[]);
        assert_eq!(
            r.inputs[0].events, 2,
            "{status}: the row is read, not skipped"
        );
        assert!(r.findings.is_empty(), "{status}: {:#?}", r.findings);
    }
}

/// The incident's trace with its export: the export saying the retry's refund failed
/// overrules the trace's `201 Created`, so nothing was refunded twice.
#[test]
fn a_failed_row_overrules_the_trace_that_saw_the_effect_created() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("refunds.csv");
    let original = std::fs::read_to_string(fixture("incident-csv/refunds.csv")).unwrap();
    let trace = fixture("incident-csv/trace.log");
    std::fs::write(&export, &original).unwrap();
    let r = report(&[&trace, &export], &[]);
    assert_eq!(rules(&r, "duplicate-effect"), [["rf_8XM1", "rf_9KQ2"]]);
    let failed = original.replacen(
        "2026-11-03 14:02:23,succeeded",
        "2026-11-03 14:02:23,failed",
        1,
    );
    assert_ne!(failed, original);
    std::fs::write(&export, failed).unwrap();
    let r = report(&[&trace, &export], &[]);
    assert!(
        rules(&r, "duplicate-effect").is_empty(),
        "{:#?}",
        r.findings
    );
}

/// Every default spelling of every field (the table in docs/inputs/csv.md), in any case:
/// (field, spelling).
const SPELLINGS: &[(&str, &str)] = &[
    ("id", "id"),
    ("id", "effect_id"),
    ("id", "refund_id"),
    ("kind", "kind"),
    ("kind", "effect_kind"),
    ("kind", "object"),
    ("order", "order"),
    ("order", "order_id"),
    ("order", "metadata.order_id"),
    ("order", "order_id (metadata)"),
    ("order", "metadata[order_id]"),
    ("amount", "amount"),
    ("amount_minor", "amount_cents"),
    ("amount_minor", "amount_in_cents"),
    ("amount_minor", "amount_minor"),
    ("amount_minor", "amount_p"),
    ("currency", "currency"),
    ("created", "created"),
    ("created", "created_at"),
    ("created", "created (utc)"),
    ("created", "created date (utc)"),
    ("settled_at", "settled_at"),
    ("settled_at", "settled"),
    ("settled_at", "settled (utc)"),
    ("idempotency_key", "idempotency_key"),
    ("idempotency_key", "idempotency-key"),
    ("status", "status"),
    ("status", "state"),
];

/// A one-row export with every field under its first spelling, `field` under `spelling`.
fn export_with(field: &str, spelling: &str) -> String {
    let mut cols = vec![
        ("id", "id", "rf_1"),
        ("kind", "kind", "refund"),
        ("order", "order", "A-1"),
        ("amount", "amount", "45.00"),
        ("currency", "currency", "GBP"),
        ("created", "created", "2026-11-03T14:02:11Z"),
        ("settled_at", "settled_at", "2026-11-03T14:02:20Z"),
        ("idempotency_key", "idempotency_key", "k-1"),
        ("status", "status", "succeeded"),
    ];
    if field == "amount_minor" {
        // In minor units instead of the decimal amount.
        cols[3] = ("amount_minor", spelling, "4500");
    } else {
        let c = cols.iter_mut().find(|c| c.0 == field).unwrap();
        c.1 = spelling;
    }
    let quote = |s: &str| format!("\"{s}\"");
    let header: Vec<String> = cols.iter().map(|c| quote(c.1)).collect();
    let row: Vec<String> = cols.iter().map(|c| quote(c.2)).collect();
    format!("{}\n{}\n", header.join(","), row.join(","))
}

fn read(text: &str, csv_map: Vec<(String, String)>) -> (Vec<(String, Effect)>, u64) {
    let opts = ParseOptions {
        csv_map,
        ..ParseOptions::default()
    };
    let parsed = parse(Format::Csv, &mut text.as_bytes(), 0, &opts).unwrap();
    let effects = parsed
        .events
        .into_iter()
        .map(|e| match e.kind {
            EventKind::Effect(f) => (e.at.display(), *f),
            other => panic!("not an effect: {other:?}"),
        })
        .collect();
    (effects, parsed.stats.skipped)
}

#[test]
fn every_default_column_spelling_is_detected_and_read() {
    // The table covers every spelling the parser knows, and nothing else.
    let mut known: Vec<(&str, &str)> = FIELDS
        .iter()
        .flat_map(|(f, spellings)| spellings.iter().map(move |s| (*f, *s)))
        .collect();
    let mut table = SPELLINGS.to_vec();
    known.sort();
    table.sort();
    assert_eq!(
        table, known,
        "a default spelling without a test, or a test without one"
    );
    for &(field, spelling) in SPELLINGS {
        for cased in [spelling.to_string(), spelling.to_uppercase()] {
            let text = export_with(field, &cased);
            let why = format!("{field} as `{cased}`: {text}");
            assert_eq!(
                source::detect(text.as_bytes(), &[]),
                Some(Format::Csv),
                "{why}"
            );
            let (effects, skipped) = read(&text, Vec::new());
            assert_eq!((effects.len(), skipped), (1, 0), "{why}");
            let (at, e) = &effects[0];
            assert_eq!(at, "2026-11-03T14:02:11.000Z", "{why}");
            assert_eq!(e.id, "rf_1", "{why}");
            assert_eq!(e.kind, "refund", "{why}");
            assert_eq!(e.order.as_deref(), Some("A-1"), "{why}");
            assert_eq!(e.amount, Some(Money::new(4500, Currency::GBP)), "{why}");
            assert_eq!(e.key.as_deref(), Some("k-1"), "{why}");
            assert_eq!(e.state.as_deref(), Some("succeeded"), "{why}");
            assert_eq!(
                e.state_at.map(|t| t.display()).as_deref(),
                Some("2026-11-03T14:02:20.000Z"),
                "{why}"
            );
            assert!(e.happened, "{why}");
        }
    }
}

/// The incident's trace with a settlement export whose columns have names of its own: read
/// with `--csv-map`, the export's first refund is the call's second effect.
#[test]
fn csv_map_reads_an_export_with_other_column_names() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("settlements.csv");
    std::fs::write(
        &export,
        "Refund Ref,Order Ref,Value,Ccy,Booked At,Outcome\n\
         rf_8XM1,A-88214,45.00,GBP,2026-11-03T14:02:11.501Z,paid\n\
         rf_9KQ2,A-88214,45.00,GBP,2026-11-03T14:02:23.088Z,paid\n",
    )
    .unwrap();
    let trace = fixture("incident-csv/trace.log");
    let map = [
        "--csv-map",
        "id=Refund Ref",
        "--csv-map",
        "order=order ref",
        "--csv-map",
        "amount=Value",
        "--csv-map",
        "currency=Ccy",
        "--csv-map",
        "created=Booked At",
        "--csv-map",
        "status=Outcome",
    ];
    let r = report(&[&trace, &export], &map);
    let csv = r.inputs.iter().find(|i| i.path.ends_with(".csv")).unwrap();
    assert_eq!(csv.format.as_deref(), Some("csv"));
    assert_eq!((csv.lines, csv.events, csv.skipped), (3, 2, 0));
    let dup = duplicate(&r);
    assert_eq!(dup.effects, ["rf_8XM1", "rf_9KQ2"]);
    assert_eq!(dup.cause.as_deref(), Some("client-retry"));
    assert_eq!(dup.excess_minor, Some(4500));
    // Without the map the export is no effect export: nothing in it is read as an effect.
    let r = report(&[&trace, &export], &[]);
    let csv = r.inputs.iter().find(|i| i.path.ends_with(".csv")).unwrap();
    assert_ne!(csv.format.as_deref(), Some("csv"));
    assert_eq!(csv.events, 0);
}

/// SPEC §3.6: only a row's own time moves a time-only export's midnight rollover. A
/// settlement late in the evening once moved the next row to the next day, so two refunds
/// 1.4 s apart were not found (without the `settled_at` column they were).
#[test]
fn a_settlement_time_does_not_move_the_next_row_to_the_next_day() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("refunds.csv");
    std::fs::write(
        &export,
        "id,order_id,amount,currency,created,settled_at,status\n\
         rf_1,A-1,45.00,GBP,10:00:00.500,23:30:00,succeeded\n\
         rf_2,A-1,45.00,GBP,10:00:01.900,23:30:00,succeeded\n",
    )
    .unwrap();
    let r = report(&[&export], &["--date", "2026-11-03"]);
    let dup = duplicate(&r);
    assert_eq!(dup.effects, ["rf_1", "rf_2"]);
    assert_eq!(
        dup.last_effect_at.as_deref(),
        Some("2026-11-03T10:00:01.900Z")
    );
}

/// A row's own time still rolls over midnight, and a settlement earlier in the day than
/// its row's time is on the next day.
#[test]
fn a_row_time_still_rolls_over_midnight_and_dates_its_settlement() {
    let opts = ParseOptions {
        date: Some(chrono::NaiveDate::from_ymd_opt(2026, 11, 3).unwrap()),
        ..ParseOptions::default()
    };
    let text = "id,order_id,amount,currency,created,settled_at\n\
                rf_1,A-1,45.00,GBP,23:59:59.500,00:00:30\n\
                rf_2,A-2,45.00,GBP,00:00:01.000,00:00:40\n";
    let parsed = parse(Format::Csv, &mut text.as_bytes(), 0, &opts).unwrap();
    let times: Vec<(String, String)> = parsed
        .events
        .iter()
        .map(|e| match &e.kind {
            EventKind::Effect(f) => (e.at.display(), f.state_at.unwrap().display()),
            _ => panic!("not an effect"),
        })
        .collect();
    assert_eq!(
        times,
        [
            (
                "2026-11-03T23:59:59.500Z".to_string(),
                "2026-11-04T00:00:30.000Z".to_string()
            ),
            (
                "2026-11-04T00:00:01.000Z".to_string(),
                "2026-11-04T00:00:40.000Z".to_string()
            ),
        ]
    );
}

/// SPEC §9, never a silent drop: an export row whose quote never closes (`"12"" pizza`) once
/// swallowed the rows after it, counted ignored, and the duplicate among them was missed.
/// Its row is skipped with why; the rows after it are read.
#[test]
fn a_quote_that_never_closes_is_skipped_and_the_rows_after_it_audited() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("refunds.csv");
    std::fs::write(
        &export,
        "id,Description,Amount,Currency,Created (UTC),Status,order_id (metadata)\n\
         rf_1,\"12\"\" pizza, cold,45.00,gbp,2026-11-03 14:02:11,succeeded,A-1\n\
         rf_2,refund,45.00,gbp,2026-11-03 14:02:12,succeeded,A-2\n\
         rf_3,refund,45.00,gbp,2026-11-03 14:02:13,succeeded,A-2\n\
         rf_4,refund,45.00,gbp,2026-11-03 14:02:14,succeeded,A-3\n",
    )
    .unwrap();
    let path = export.to_str().unwrap();
    let (_, stdout, stderr) = scan(&[path, "--format", "json"]);
    assert!(
        stderr.contains(&format!(
            "{path}:2: skipped: a quoted field is never closed"
        )),
        "{stderr}"
    );
    let r: Report = serde_json::from_str(&stdout).unwrap();
    let i = &r.inputs[0];
    assert_eq!((i.lines, i.events, i.ignored, i.skipped), (5, 3, 1, 1));
    assert_eq!(duplicate(&r).effects, ["rf_2", "rf_3"]);
    // Closed as RFC 4180 writes it, the same row is read and nothing is skipped.
    std::fs::write(
        &export,
        "id,Description,Amount,Currency,Created (UTC),Status,order_id (metadata)\n\
         rf_1,\"12\"\" pizza, cold\",45.00,gbp,2026-11-03 14:02:11,succeeded,A-1\n\
         rf_2,refund,45.00,gbp,2026-11-03 14:02:12,succeeded,A-2\n\
         rf_3,refund,45.00,gbp,2026-11-03 14:02:13,succeeded,A-2\n",
    )
    .unwrap();
    let r = report(&[&export], &[]);
    let i = &r.inputs[0];
    assert_eq!((i.lines, i.events, i.ignored, i.skipped), (4, 3, 1, 0));
    assert_eq!(duplicate(&r).effects, ["rf_2", "rf_3"]);
}
