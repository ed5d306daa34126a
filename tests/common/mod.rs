//! Helpers the integration tests share: where fixtures live, and running `idem-audit scan`.
#![allow(dead_code)] // each test binary uses its own subset

use assert_cmd::Command;
use idem_audit::report::{FindingReport, Report};
use std::path::{Path, PathBuf};

pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

/// Runs `idem-audit scan ARGS`: exit code, standard output, standard error.
pub fn scan(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .arg("scan")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `idem-audit scan PATHS --format json EXTRA`, which must exit 0 or 1, as a report.
pub fn report(paths: &[&Path], extra: &[&str]) -> Report {
    let mut args: Vec<&str> = paths.iter().map(|p| p.to_str().unwrap()).collect();
    args.extend(["--format", "json"]);
    args.extend(extra);
    let (code, stdout, stderr) = scan(&args);
    assert!(matches!(code, Some(0 | 1)), "exit {code:?}: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// The report's one `duplicate-effect` finding (fails the test unless there is exactly one).
pub fn duplicate(r: &Report) -> &FindingReport {
    let dups: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.rule == "duplicate-effect")
        .collect();
    assert_eq!(dups.len(), 1, "{:#?}", r.findings);
    dups[0]
}
