//! CSV effect exports end to end (SPEC §3.3): rows whose status says the effect did not
//! happen are no duplicates.

use idem_audit::report::Report;
use std::path::Path;

mod common;
use common::{fixture, scan};

fn report(paths: &[&Path], extra: &[&str]) -> Report {
    let mut args: Vec<&str> = paths.iter().map(|p| p.to_str().unwrap()).collect();
    args.extend(["--format", "json"]);
    args.extend(extra);
    let (code, stdout, stderr) = scan(&args);
    assert!(matches!(code, Some(0 | 1)), "exit {code:?}: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

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
