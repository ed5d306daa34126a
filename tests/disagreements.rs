//! A payments log and a settlement export that disagree on one effect: the findings do
//! not depend on which file is read first (file names decide that), the disagreement is a
//! warning naming both lines, and one on an amount never makes a duplicate disappear
//! (review36 L1; `correlate/disputes.rs`).

mod common;

use common::scan;

const LOG: &str = r#"{"ts":"2026-11-10T10:00:00.000Z","type":"effect","effect_id":"rf_1","kind":"refund","order":"M-1","amount_minor":4500,"currency":"GBP"}
{"ts":"2026-11-10T10:00:01.000Z","type":"effect","effect_id":"rf_2","kind":"refund","order":"M-1","amount_minor":4500,"currency":"EUR"}
{"ts":"2026-11-10T11:00:00.000Z","type":"effect","effect_id":"rf_3","kind":"refund","order":"M-2","amount_minor":4500,"currency":"GBP"}
"#;

/// The export's rf_2 in GBP, the log's in EUR: one of them is wrong, and rf_1, a second
/// before it on M-1, is GBP 45.00 in both.
const EXPORT: &str = "id,order_id,amount,currency,created_at,status
rf_1,M-1,45.00,GBP,2026-11-10T10:00:00Z,succeeded
rf_2,M-1,45.00,GBP,2026-11-10T10:00:01Z,succeeded
";

/// The log and the export written as `log_name` and `export_name` in a new folder; the
/// scan's exit code, CSV report and standard error.
fn scan_named(log: &str, export: &str, log_name: &str, export_name: &str) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(log_name), log).unwrap();
    std::fs::write(dir.path().join(export_name), export).unwrap();
    let path = dir.path().to_str().unwrap();
    let (code, out, err) = scan(&[path, "--format", "csv"]);
    // Paths differ between folders; the findings must not.
    (code.unwrap(), out, err.replace(path, "DIR"))
}

#[test]
fn which_file_is_read_first_does_not_change_the_findings() {
    let log_first = scan_named(LOG, EXPORT, "a_pay.jsonl", "z_export.csv");
    let export_first = scan_named(LOG, EXPORT, "z_pay.jsonl", "a_export.csv");
    assert_eq!(log_first.0, export_first.0);
    assert_eq!(log_first.1, export_first.1);
    // Each run names both lines and the amount used, whichever it read first.
    for (err, here, there) in [
        (&log_first.2, "DIR/z_export.csv:3", "DIR/a_pay.jsonl:2"),
        (&export_first.2, "DIR/z_pay.jsonl:2", "DIR/a_export.csv:3"),
    ] {
        let warning = err
            .lines()
            .find(|l| l.contains("refund rf_2: amount"))
            .unwrap_or_else(|| panic!("no warning of the amounts in:\n{err}"));
        assert!(
            warning.starts_with(&format!("{here}: warning: ")),
            "{warning}"
        );
        assert!(warning.contains(&format!("at {there};")), "{warning}");
        assert!(
            warning.contains(
                "GBP 45.00 is used (the amount another refund of its order is written with: \
                 a disagreement never splits a duplicate)"
            ),
            "{warning}"
        );
    }
    // The amount rf_1 is written with: rf_2 is a second GBP refund of M-1, and the finding
    // says its lines disagree. (The lesser code, EUR, made the duplicate disappear.)
    let dup = (log_first.1.lines())
        .find(|l| l.contains("duplicate-effect"))
        .unwrap_or_else(|| panic!("no duplicate in:\n{}", log_first.1));
    assert!(dup.contains("M-1") && dup.contains("GBP"), "{dup}");
    assert!(
        dup.contains("rf_2's lines disagree on its amount (GBP 45.00 used; also EUR 45.00)"),
        "{dup}"
    );
}

/// The amount that keeps an effect with its copies may be the number too: the export's
/// rf_2 is 44.00, the log's 45.00 as rf_1's.
#[test]
fn an_amount_that_differs_in_number_keeps_the_duplicate_too() {
    let log = LOG.replace(
        r#""amount_minor":4500,"currency":"EUR""#,
        r#""amount_minor":4500,"currency":"GBP""#,
    );
    let export = EXPORT.replace("rf_2,M-1,45.00,GBP", "rf_2,M-1,44.00,GBP");
    for names in [("a.jsonl", "z.csv"), ("z.jsonl", "a.csv")] {
        let (code, out, err) = scan_named(&log, &export, names.0, names.1);
        assert_eq!(code, 1, "{out}{err}");
        assert!(out.contains("duplicate-effect"), "{out}");
        assert!(
            err.contains("GBP 45.00 is used (the amount another refund"),
            "{err}"
        );
    }
}

/// An effect with no other of its order: its log's amount is used over an export's,
/// whichever is read first and whichever code is the lesser; two exports (or two logs)
/// that disagree use the lesser. No duplicate either way.
#[test]
fn an_effect_alone_takes_its_logs_amount_over_an_exports() {
    let export = EXPORT.replace("rf_2,M-1,45.00,GBP", "rf_3,M-2,45.00,EUR");
    for names in [("a.jsonl", "z.csv"), ("z.jsonl", "a.csv")] {
        let (code, out, err) = scan_named(LOG, &export, names.0, names.1);
        assert_eq!(code, 0, "{out}{err}");
        let warning = (err.lines())
            .find(|l| l.contains("refund rf_3: amount"))
            .unwrap_or_else(|| panic!("no warning of rf_3 in:\n{err}"));
        assert!(
            warning.contains("GBP 45.00 is used (the service log's, over an export's)"),
            "{warning}"
        );
    }
    let other_export = "id,order_id,amount,currency,created_at,status\nrf_3,M-2,45.00,GBP,2026-11-10T11:00:00Z,succeeded\n";
    for names in [("a.csv", "z.csv"), ("z.csv", "a.csv")] {
        let (code, out, err) = scan_named(other_export, &export, names.0, names.1);
        assert_eq!(code, 0, "{out}{err}");
        assert!(
            err.contains("EUR 45.00 is used (the lesser as written, whichever file is read first)"),
            "{err}"
        );
    }
}

#[test]
fn lines_that_agree_or_fill_each_others_gaps_are_no_disagreement() {
    // The export says the same amounts; a line without an order leaves the other's.
    let agreeing = EXPORT.replace("rf_2,M-1,45.00,GBP", "rf_2,,45.00,EUR");
    let (code, out, err) = scan_named(LOG, &agreeing, "a_pay.jsonl", "z_export.csv");
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("warning"), "{err}");
}

#[test]
fn an_order_that_differs_is_reported_and_the_lesser_used() {
    let other_order = EXPORT.replace("rf_2,M-1,45.00,GBP", "rf_2,M-0,45.00,EUR");
    for (log_name, export_name) in [("a.jsonl", "z.csv"), ("z.jsonl", "a.csv")] {
        let (_, out, err) = scan_named(LOG, &other_order, log_name, export_name);
        let warning = err
            .lines()
            .find(|l| l.contains("refund rf_2: order"))
            .unwrap_or_else(|| panic!("no warning of the orders in:\n{err}"));
        assert!(warning.contains("M-0 is used"), "{warning}");
        assert!(!out.contains("duplicate-effect"), "{out}");
    }
}

/// The log and the export give rf_2 two keys (one the client's, one another's): the key
/// used is the same whichever file is read first (it decides between `key-per-attempt` and
/// `key-not-enforced`), and the disagreement is a warning naming both lines.
#[test]
fn a_key_that_differs_is_reported_and_the_lesser_used() {
    let log = r#"{"ts":"2026-11-10T10:00:00.000Z","type":"effect","effect_id":"rf_1","kind":"refund","order":"M-1","amount_minor":4500,"currency":"GBP","idempotency_key":"k-same"}
{"ts":"2026-11-10T10:00:01.000Z","type":"effect","effect_id":"rf_2","kind":"refund","order":"M-1","amount_minor":4500,"currency":"GBP","idempotency_key":"k-same"}
"#;
    let export = "id,order_id,amount,currency,created_at,status,idempotency_key
rf_2,M-1,45.00,GBP,2026-11-10T10:00:01Z,succeeded,k-new
";
    let log_first = scan_named(log, export, "a_pay.jsonl", "z_export.csv");
    let export_first = scan_named(log, export, "z_pay.jsonl", "a_export.csv");
    assert_eq!(log_first.1, export_first.1);
    assert!(
        log_first.2.contains(
            "refund rf_2: key k-new here, but k-same at DIR/a_pay.jsonl:2; k-new is used"
        ),
        "{}",
        log_first.2
    );
    assert!(
        export_first.2.contains(
            "refund rf_2: key k-same here, but k-new at DIR/a_export.csv:2; k-new is used"
        ),
        "{}",
        export_first.2
    );
    // Agreeing keys are no disagreement.
    let agreeing = export.replace("k-new", "k-same");
    let (_, _, err) = scan_named(log, &agreeing, "a_pay.jsonl", "z_export.csv");
    assert!(!err.contains("key k-"), "{err}");
}
