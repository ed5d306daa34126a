//! A payments log and a settlement export that disagree on one effect: the findings do
//! not depend on which file is read first (file names decide that), the disagreement is a
//! warning naming both lines, and one on an amount, an order or a key never makes a
//! duplicate disappear (review36 L1; `correlate/disputes.rs`, `disputes/orders_and_keys.rs`).

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

/// The export writes rf_2's order as M-0: the log's M-1 is used (rf_2 stays on M-1, in EUR,
/// so no duplicate of rf_1's GBP), whichever file is read first.
#[test]
fn an_order_that_differs_is_reported_and_the_logs_used() {
    let other_order = EXPORT.replace("rf_2,M-1,45.00,GBP", "rf_2,M-0,45.00,EUR");
    let runs = [("a.jsonl", "z.csv"), ("z.jsonl", "a.csv")]
        .map(|(log_name, export_name)| scan_named(LOG, &other_order, log_name, export_name));
    assert_eq!(runs[0].1, runs[1].1);
    for (_, out, err) in &runs {
        let warning = err
            .lines()
            .find(|l| l.contains("refund rf_2: order"))
            .unwrap_or_else(|| panic!("no warning of the orders in:\n{err}"));
        assert!(
            warning.contains("M-1 is used (the service log's, over an export's)"),
            "{warning}"
        );
        assert!(!out.contains("duplicate-effect"), "{out}");
    }
}

/// The log and the export give rf_2 two keys: the log's is used whichever file is read
/// first (it decides between `key-per-attempt` and `key-not-enforced`), and the disagreement
/// is a warning naming both lines. rf_1 and rf_2 then share the log's key: the service did
/// not enforce it. (The lesser, the export's `k-new`, split them.)
#[test]
fn a_key_that_differs_is_reported_and_the_logs_used() {
    let log = r#"{"ts":"2026-11-10T10:00:00.000Z","type":"effect","effect_id":"rf_1","kind":"refund","order":"M-1","amount_minor":4500,"currency":"GBP","idempotency_key":"k-same"}
{"ts":"2026-11-10T10:00:01.000Z","type":"effect","effect_id":"rf_2","kind":"refund","order":"M-1","amount_minor":4500,"currency":"GBP","idempotency_key":"k-same"}
"#;
    let export = "id,order_id,amount,currency,created_at,status,idempotency_key
rf_2,M-1,45.00,GBP,2026-11-10T10:00:01Z,succeeded,k-new
";
    let log_first = scan_named(log, export, "a_pay.jsonl", "z_export.csv");
    let export_first = scan_named(log, export, "z_pay.jsonl", "a_export.csv");
    assert_eq!(log_first.1, export_first.1);
    let why = "k-same is used (the service log's, over an export's)";
    assert!(
        log_first.2.contains(&format!(
            "refund rf_2: key k-new here, but k-same at DIR/a_pay.jsonl:2; {why}"
        )),
        "{}",
        log_first.2
    );
    assert!(
        export_first.2.contains(&format!(
            "refund rf_2: key k-same here, but k-new at DIR/a_export.csv:2; {why}"
        )),
        "{}",
        export_first.2
    );
    let not_enforced = (log_first.1.lines())
        .find(|l| l.starts_with("key-not-enforced"))
        .unwrap_or_else(|| panic!("no key-not-enforced in:\n{}", log_first.1));
    assert!(
        not_enforced.contains("rf_2's lines disagree on its key (k-same used; also k-new)"),
        "{not_enforced}"
    );
    // Agreeing keys are no disagreement.
    let agreeing = export.replace("k-new", "k-same");
    let (_, _, err) = scan_named(log, &agreeing, "a_pay.jsonl", "z_export.csv");
    assert!(!err.contains("key k-"), "{err}");
}

/// Each file written as named in a new folder; the scan's exit code, CSV report and
/// standard error.
fn scan_files(files: &[(&str, &str)]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let path = dir.path().to_str().unwrap();
    let (code, out, err) = scan(&[path, "--format", "csv"]);
    (code.unwrap(), out, err.replace(path, "DIR"))
}

/// Two service logs (replicas, say) that disagree on rf_2's order: neither is an export.
const REPLICA_A: &str = r#"{"ts":"2026-11-10T10:00:01.000Z","type":"effect","effect_id":"rf_2","kind":"refund","order":"M-1","amount_minor":4500,"currency":"GBP","idempotency_key":"k-b"}
"#;
const REPLICA_B: &str = r#"{"ts":"2026-11-10T10:00:01.000Z","type":"effect","effect_id":"rf_2","kind":"refund","order":"M-0","amount_minor":4500,"currency":"GBP","idempotency_key":"k-a"}
"#;

/// The client's call for M-1, sent with key k-b and answered with rf_2's id.
const TRACE: &str = r#"{"ts":"2026-11-10T10:00:00.500Z","type":"tool_call","run":"r1","step":1,"tool":"issue_refund","args":{"order":"M-1","amount_p":4500}}
{"ts":"2026-11-10T10:00:00.510Z","type":"attempt","run":"r1","step":1,"attempt":1,"method":"POST","url":"https://pay/v1/refunds","idempotency_key":"k-b"}
{"ts":"2026-11-10T10:00:01.200Z","type":"response","run":"r1","step":1,"attempt":1,"status":201,"effect_id":"rf_2","replayed":false}
{"ts":"2026-11-10T10:00:01.210Z","type":"step_end","run":"r1","step":1,"status":"ok"}
"#;

/// Two logs disagree: the order of the call answered with the effect's id, and the key its
/// request was sent with, over the lesser as written, whichever log is read first.
#[test]
fn between_two_logs_the_client_decides() {
    for (a, b) in [(REPLICA_A, REPLICA_B), (REPLICA_B, REPLICA_A)] {
        let (code, out, err) =
            scan_files(&[("a.jsonl", a), ("b.jsonl", b), ("trace.jsonl", TRACE)]);
        assert_eq!(code, 0, "{out}{err}");
        assert!(
            err.contains("M-1 is used (the order of the call answered with its id)"),
            "{err}"
        );
        assert!(
            err.contains("k-b is used (the key the client's request was sent with)"),
            "{err}"
        );
        // Matched to its call: no refund that no attempt accounts for.
        assert!(!out.contains("unattributed-effect"), "{out}");
    }
    // Without the trace nothing decides but the text: the lesser, M-0 and k-a.
    for (a, b) in [(REPLICA_A, REPLICA_B), (REPLICA_B, REPLICA_A)] {
        let (code, out, err) = scan_files(&[("a.jsonl", a), ("b.jsonl", b)]);
        assert_eq!(code, 0, "{out}{err}");
        assert!(
            err.contains("M-0 is used (the lesser as written, whichever file is read first)"),
            "{err}"
        );
        assert!(err.contains("k-a is used (the lesser"), "{err}");
    }
}

/// Two logs disagree and no client trace covers the effect: the order (and key) another
/// refund carries, so that a disagreement never splits a duplicate.
#[test]
fn between_two_logs_another_effect_keeps_the_duplicate() {
    let first = r#"{"ts":"2026-11-10T10:00:00.000Z","type":"effect","effect_id":"rf_1","kind":"refund","order":"M-1","amount_minor":4500,"currency":"GBP","idempotency_key":"k-b"}
"#;
    for (a, b) in [(REPLICA_A, REPLICA_B), (REPLICA_B, REPLICA_A)] {
        let (code, out, err) = scan_files(&[("a.jsonl", a), ("b.jsonl", b), ("c.jsonl", first)]);
        assert_eq!(code, 1, "{out}{err}");
        assert!(
            err.contains("M-1 is used (the order another refund is written with: a disagreement never splits a duplicate)"),
            "{err}"
        );
        assert!(
            err.contains(
                "k-b is used (the key another refund or an idempotency record is written with"
            ),
            "{err}"
        );
        let dup = (out.lines())
            .find(|l| l.starts_with("duplicate-effect"))
            .unwrap_or_else(|| panic!("no duplicate in:\n{out}"));
        assert!(dup.contains("rf_1;rf_2"), "{dup}");
        assert!(
            dup.contains("rf_2's lines disagree on its order (M-1 used; also M-0) and its key (k-b used; also k-a)"),
            "{dup}"
        );
        assert!(out.contains("key-not-enforced"), "{out}");
    }
}
