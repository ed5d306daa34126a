//! A Celery worker's log rotated in the middle of a task's lines: the pool's stand-in calls
//! are renamed across the files read as one log (fixtures/python-celery-concurrent, its
//! worker log cut after process 2's request and before the line naming its task).

use assert_cmd::Command;
use std::path::Path;

#[test]
fn a_rotated_worker_log_names_the_tasks_of_its_processes() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/python-celery-concurrent");
    let worker = std::fs::read_to_string(fixture.join("worker.log")).unwrap();
    let cut = worker.find("issue_refund[9e43344a-dd19-4993-bf74-a315e0a8801a] succeeded");
    let cut = cut.unwrap();
    let cut = worker[..cut].rfind('\n').unwrap() + 1;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("worker.log.1"), &worker[..cut]).unwrap();
    std::fs::write(dir.path().join("worker.log"), &worker[cut..]).unwrap();
    for f in ["agent.log", "service.log"] {
        std::fs::copy(fixture.join(f), dir.path().join(f)).unwrap();
    }
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .args(["scan", "--format", "json"])
        .arg(dir.path())
        .output()
        .unwrap();
    let json = String::from_utf8_lossy(&out.stdout);
    assert!(!json.contains("?celery:"), "{json}");
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let step_retry = report["findings"].as_array().unwrap().iter().any(|f| {
        f["rule"] == "duplicate-effect"
            && f["cause"] == "step-retry"
            && f["run"].as_str().is_some_and(|r| r.starts_with("a333f3f0"))
    });
    assert!(step_retry, "{json}");
    // The files are one log: a request of one is no rival from another log for a refund
    // matched by time to a request of the other (A-2's refund stayed unattributed).
    assert_eq!(
        rules_and_effects(&report),
        rules_and_effects(&scan(&fixture))
    );
}

fn scan(dir: &Path) -> serde_json::Value {
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .args(["scan", "--format", "json", "--fail-on", "never"])
        .arg(dir)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each finding's rule, run and effects.
fn rules_and_effects(report: &serde_json::Value) -> Vec<String> {
    let findings = report["findings"].as_array().unwrap().iter();
    findings
        .map(|f| format!("{} {} {}", f["rule"], f["run"], f["effects"]))
        .collect()
}
