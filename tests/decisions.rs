//! Delivery duplicates and decision duplicates end to end: the summary keeps their money
//! apart, and `--decision-window` decides what counts as one decision repeated.

use assert_cmd::Command;
use idem_audit::report::{CurrencyAmount, Report};
use std::path::PathBuf;

fn fixture(rel: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn scan(args: &[&str]) -> (Option<i32>, Report) {
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .arg("scan")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).expect("a JSON report");
    (out.status.code(), report)
}

fn gbp(minor: i128) -> Vec<CurrencyAmount> {
    vec![CurrencyAmount::new("GBP", minor)]
}

#[test]
fn delivery_and_decision_excess_are_summed_apart() {
    let (code, r) = scan(&[
        &fixture("step-retry"),
        &fixture("decision-two-runs"),
        &fixture("decision-service-only"),
    ]);
    assert_eq!(code, Some(1));
    // step-retry's 25.99 and the untraced 32.00 delivery duplicate...
    assert_eq!(r.summary.excess, gbp(2599 + 3200));
    assert_eq!(r.summary.duplicate_effects, 2);
    // ...apart from the two runs' 45.00 and the untraced 32.00 decided again 47 min later.
    assert_eq!(r.summary.decision_excess, gbp(4500 + 3200));
    assert_eq!(r.summary.decision_duplicates, 2);
    assert_eq!(r.summary.orders_affected, 3);
}

#[test]
fn the_decision_window_bounds_what_is_one_decision_repeated() {
    let two_runs = fixture("decision-two-runs");
    let (_, r) = scan(&[&two_runs, "--decision-window", "1h"]);
    assert!(r.findings.is_empty(), "98 minutes is beyond a 1h window");
    let (_, r) = scan(&[&two_runs, "--decision-window", "2h"]);
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].rule, "duplicate-decision");
    let thirty_days = fixture("decision-30-days");
    let (_, r) = scan(&[&thirty_days, "--decision-window", "31d"]);
    assert_eq!(r.findings.len(), 1, "a 31-day window takes in the repeat");
    assert_eq!(r.summary.decision_excess, gbp(4500));
    assert!(r.summary.excess.is_empty());
}

#[test]
fn a_decision_duplicate_is_a_warning_unless_made_an_error() {
    let two_runs = fixture("decision-two-runs");
    assert_eq!(scan(&[&two_runs]).0, Some(0));
    assert_eq!(scan(&[&two_runs, "--fail-on", "warning"]).0, Some(1));
    assert_eq!(
        scan(&[&two_runs, "--severity", "duplicate-decision=error"]).0,
        Some(1)
    );
}
