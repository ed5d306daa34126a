//! Money at the edge of the JSON report: amounts up to i64::MAX minor units, and sums of
//! them past any i64, are written exactly and never wrap; a value a reader of doubles
//! (JavaScript, jq before 1.7) would misread also carries its digits as a string, and an
//! ordinary report is unchanged (`report::digits_beyond_doubles`).

mod common;

use common::{fixture, scan};
use idem_audit::report::Report;
use serde_json::Value;

/// Two duplicates: M-1 refunded `a` minor units twice, M-2 `b` twice; their excess
/// adds up to `a + b`.
fn duplicates(a: i64, b: i64) -> String {
    let effect = |id: &str, order: &str, at: &str, minor: i64| {
        format!(
            r#"{{"ts":"2026-11-10T{at}Z","type":"effect","effect_id":"{id}","kind":"refund","order":"{order}","amount_minor":{minor},"currency":"GBP"}}"#
        )
    };
    [
        effect("rf_1", "M-1", "10:00:00.000", a),
        effect("rf_2", "M-1", "10:00:01.000", a),
        effect("rf_3", "M-2", "11:00:00.000", b),
        effect("rf_4", "M-2", "11:00:01.000", b),
    ]
    .join("\n")
}

/// Each excess i64::MAX, their sum 2 * i64::MAX: past any i64, and far past 2^53.
fn huge_duplicates() -> String {
    duplicates(i64::MAX, i64::MAX)
}

fn scan_text(text: &str, format: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pay.jsonl");
    std::fs::write(&path, text).unwrap();
    let (code, out, err) = scan(&[path.to_str().unwrap(), "--format", format]);
    assert!(!err.contains("skipped"), "{err}");
    (code.unwrap(), out)
}

#[test]
fn a_total_past_any_i64_is_exact_and_also_written_as_digits() {
    let (code, out) = scan_text(&huge_duplicates(), "json");
    assert_eq!(code, 1, "{out}");
    let sum = 2 * i128::from(i64::MAX);
    // The number itself, exact (not wrapped, not saturated, not a float).
    let report: Report = serde_json::from_str(&out).unwrap();
    let excess = &report.summary.excess;
    assert_eq!(excess.len(), 1, "{excess:?}");
    assert_eq!(excess[0].amount_minor, sum);
    assert_eq!(excess[0].amount_minor_string, Some(sum.to_string()));
    assert!(
        out.contains(&format!(
            "\"amount_minor\": {sum},\n        \"amount_minor_string\": \"{sum}\""
        )),
        "{out}"
    );
    for f in &report.findings {
        assert_eq!(f.excess_minor, Some(i128::from(i64::MAX)), "{f:?}");
        assert_eq!(f.excess_minor_string, Some(i64::MAX.to_string()), "{f:?}");
    }
    // The table and the CSV, in major units, are exact too.
    let (_, table) = scan_text(&huge_duplicates(), "table");
    assert!(
        table.contains("excess GBP 184,467,440,737,095,516.14"),
        "{table}"
    );
    let (_, csv) = scan_text(&huge_duplicates(), "csv");
    assert!(csv.contains(",GBP,92233720368547758.07,"), "{csv}");
}

/// Within 2^53 - 1 a double holds every integer: no string beside it, and the report's
/// bytes are those of any report without the field (the incident's GBP 45.00, and a sum
/// of exactly 2^53 - 1).
#[test]
fn an_ordinary_total_is_a_number_alone() {
    let (code, out, _) = scan(&[
        fixture("incident-a88214").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(1));
    assert!(!out.contains("_string"), "{out}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        report["summary"]["excess"],
        serde_json::json!([{"currency": "GBP", "amount_minor": 4500}])
    );
    let safe = (1i64 << 53) - 1;
    let (_, out) = scan_text(&duplicates(safe / 2, safe - safe / 2), "json");
    let report: Report = serde_json::from_str(&out).unwrap();
    assert_eq!(report.summary.excess[0].amount_minor, i128::from(safe));
    assert!(!out.contains("_string"), "{out}");
    // One more is past what a double holds exactly: the digits are written beside it.
    let (_, out) = scan_text(&duplicates(safe / 2, safe - safe / 2 + 1), "json");
    let report: Report = serde_json::from_str(&out).unwrap();
    let total = &report.summary.excess[0];
    assert_eq!(total.amount_minor, i128::from(safe) + 1);
    assert_eq!(total.amount_minor_string, Some((1i64 << 53).to_string()));
    // Each finding's excess is within it: a number alone.
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.excess_minor_string.is_none())
    );
}
