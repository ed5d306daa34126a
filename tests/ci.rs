//! CI workflows (issue 5): `--fail-on`, baselines, the config file and `--quiet`.

use assert_cmd::Command;
use idem_audit::report::Report;
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn scan_in(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .current_dir(dir)
        .arg("scan")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A copy of the incident in a temporary folder, with `logs/trace.log`.
fn incident_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("logs")).unwrap();
    std::fs::copy(
        Path::new(ROOT).join("fixtures/incident-a88214/trace.log"),
        dir.path().join("logs/trace.log"),
    )
    .unwrap();
    dir
}

/// One more duplicate on another order: a gateway retry (one attempt, two refunds).
const NEW_DUPLICATE: &str = "\
15:10:00.000  agent run 9b2c  step 1  tool=issue_refund  args={\"order\":\"B-77\",\"amount_p\":1999}
15:10:00.016  POST https://payments.internal/v1/refunds  (attempt 1)
15:10:00.900  201 Created  refund_id=rf_B1  amount_p=1999
15:10:00.902  agent run 9b2c  step 1  ok
--- payments service ---
15:10:00.120  refund rf_B1  order B-77  1999p  settled 15:10:11.000
15:10:00.420  refund rf_B2  order B-77  1999p  settled 15:10:11.300
";

#[test]
fn a_baseline_accepts_known_findings_and_reports_only_new_ones() {
    let dir = incident_copy();
    let d = dir.path();
    let (code, _, _) = scan_in(d, &["logs", "--write-baseline", "baseline.json", "--quiet"]);
    assert_eq!(code, Some(0), "writing a baseline accepts what it writes");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("baseline.json")).unwrap()).unwrap();
    assert_eq!(written["schema"], "idem-audit.baseline.v1");
    assert_eq!(written["findings"].as_array().unwrap().len(), 3);

    let (code, out, _) = scan_in(
        d,
        &["logs", "--baseline", "baseline.json", "--format", "json"],
    );
    assert_eq!(code, Some(0));
    let report: Report = serde_json::from_str(&out).unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    assert_eq!(report.summary.baselined, 3);

    // Lines moved: a comment at the top shifts every line number; still accepted.
    let trace = std::fs::read_to_string(d.join("logs/trace.log")).unwrap();
    std::fs::write(
        d.join("logs/trace.log"),
        format!("# month-end export\n\n{trace}"),
    )
    .unwrap();
    assert_eq!(
        scan_in(d, &["logs", "--baseline", "baseline.json"]).0,
        Some(0)
    );

    std::fs::write(d.join("logs/more.log"), NEW_DUPLICATE).unwrap();
    let (code, out, _) = scan_in(
        d,
        &["logs", "--baseline", "baseline.json", "--format", "json"],
    );
    assert_eq!(code, Some(1));
    let report: Report = serde_json::from_str(&out).unwrap();
    assert_eq!(report.findings.len(), 1, "{:#?}", report.findings);
    let f = &report.findings[0];
    assert_eq!(
        (f.rule.as_str(), f.order.as_deref()),
        ("duplicate-effect", Some("B-77"))
    );
    assert_eq!(f.effects, ["rf_B1", "rf_B2"]);
    assert_eq!(report.summary.baselined, 3);
    // The summary counts only what is reported.
    assert_eq!(report.summary.excess[0].amount_minor, 1999);
}

#[test]
fn a_missing_or_broken_baseline_is_an_error() {
    let dir = incident_copy();
    let d = dir.path();
    let (code, _, err) = scan_in(d, &["logs", "--baseline", "nope.json"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("nope.json"), "{err}");
    std::fs::write(d.join("bad.json"), "{}").unwrap();
    assert_eq!(scan_in(d, &["logs", "--baseline", "bad.json"]).0, Some(2));
}

#[test]
fn the_config_file_sets_severities_windows_and_fail_on_and_flags_win() {
    let dir = incident_copy();
    let d = dir.path();
    assert_eq!(scan_in(d, &["logs"]).0, Some(1));
    std::fs::write(
        d.join("idem-audit.toml"),
        "fail-on = \"never\"\nmax-skew = \"3s\"\n[severity]\nduplicate-effect = \"warning\"\n",
    )
    .unwrap();
    let (code, out, _) = scan_in(d, &["logs", "--format", "json"]);
    assert_eq!(code, Some(0), "fail-on from the file");
    let report: Report = serde_json::from_str(&out).unwrap();
    let dup = report
        .findings
        .iter()
        .find(|f| f.rule == "duplicate-effect")
        .unwrap();
    assert_eq!(dup.severity.as_str(), "warning");
    // Flags win over the file.
    assert_eq!(scan_in(d, &["logs", "--fail-on", "warning"]).0, Some(1));
    let (_, out, _) = scan_in(
        d,
        &[
            "logs",
            "--format",
            "json",
            "--severity",
            "duplicate-effect=error",
        ],
    );
    let report: Report = serde_json::from_str(&out).unwrap();
    assert_eq!(report.summary.errors, 1);

    // --config names another file; a typo in it is an error naming the file and the key.
    std::fs::write(d.join("ci.toml"), "max-skwe = \"3s\"\n").unwrap();
    let (code, _, err) = scan_in(d, &["logs", "--config", "ci.toml"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("ci.toml") && err.contains("max-skwe"), "{err}");
    std::fs::write(
        d.join("ci.toml"),
        "[severity]\nduplicate-effect = \"loud\"\n",
    )
    .unwrap();
    let (code, _, err) = scan_in(d, &["logs", "--config", "ci.toml"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("severity.duplicate-effect in ci.toml"),
        "{err}"
    );
    std::fs::write(d.join("ci.toml"), "window = \"0s\"\n").unwrap();
    assert_eq!(scan_in(d, &["logs", "--config", "ci.toml"]).0, Some(2));
    assert_eq!(scan_in(d, &["logs", "--config", "missing.toml"]).0, Some(2));
}

#[test]
fn quiet_prints_nothing_but_errors() {
    let dir = incident_copy();
    let d = dir.path();
    std::fs::write(d.join("logs/notes.md"), "not a log\n").unwrap();
    let trace = std::fs::read_to_string(d.join("logs/trace.log")).unwrap();
    let mut lines: Vec<&str> = trace.lines().collect();
    lines.insert(2, "14:02:xx  agent run");
    std::fs::write(d.join("logs/trace.log"), lines.join("\n")).unwrap();
    let (code, out, err) = scan_in(d, &["logs", "--quiet"]);
    assert_eq!(code, Some(1));
    assert_eq!((out.as_str(), err.as_str()), ("", ""));
    let (code, out, err) = scan_in(d, &["logs", "missing", "--quiet"]);
    assert_eq!(code, Some(2));
    assert!(out.is_empty());
    assert!(err.contains("missing"), "{err}");
}
