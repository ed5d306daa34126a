//! Inputs at the edges of what is valid: times three centuries apart (1900 and 2199 are both
//! read), windows as wide as a duration goes, a FIFO in a folder. Each must give an exit
//! status of 0-2 and no panic (the debug build that runs the tests checks overflow).

use assert_cmd::Command;
use std::path::Path;

/// Scans `files` (written into a new folder) with `args`: the exit status and stderr.
fn scan(files: &[(&str, &str)], args: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::cargo_bin("idem-audit").unwrap();
    cmd.arg("scan").args(args);
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        cmd.arg(&path);
    }
    let out = cmd
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_clean((code, stderr): (i32, String)) {
    assert!((0..=2).contains(&code), "exit {code}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

const EFFECT_1900: &str = r#"{"ts":"1900-01-01T14:02:11.501Z","type":"effect","effect_id":"rf_E1","kind":"refund","order":"A-1","amount_minor":4500,"currency":"GBP","idempotency_key":"k1"}"#;

#[test]
fn a_call_whose_failure_comes_three_centuries_after_its_request() {
    let log = "1900-01-01 14:02:11.402  agent run 7f3a  step 4  tool=issue_refund  args={\"order\":\"A-1\",\"amount_p\":4500}\n\
               1900-01-01 14:02:11.418  POST https://payments.internal/v1/refunds  (attempt 1)\n\
               2199-12-31 23:59:59.000  urllib3.exceptions.ReadTimeoutError: read timeout=10\n\
               1900-01-01 14:02:21.930  POST https://payments.internal/v1/refunds  (attempt 2)\n";
    assert_clean(scan(&[("trace.log", log)], &[]));
}

#[test]
fn a_record_three_centuries_after_its_effect() {
    let records = "key,request_hash,status,response,created_at\n\
                   k1,sha256:c4,completed,\"{\"\"status\"\": 201, \"\"refund_id\"\": \"\"rf_E1\"\"}\",2199-12-31 23:59:59+00\n";
    assert_clean(scan(
        &[("trace.jsonl", EFFECT_1900), ("records.csv", records)],
        &[],
    ));
    let stuck = "key,request_hash,status,response,created_at\n\
                 k1,sha256:5d,in_progress,,1900-01-01 00:00:00+00\n\
                 k2,sha256:9e,completed,\"{\"\"status\"\": 201}\",2199-12-31 23:59:59+00\n";
    assert_clean(scan(&[("records.csv", stuck)], &[]));
}

#[test]
fn a_request_of_no_call_three_centuries_after_the_line_before() {
    let log = "1900-01-01 00:00:00.000  healthcheck ok\n\
               2199-12-31 23:59:59.000  POST https://payments.internal/v1/refunds  (attempt 1)\n";
    assert_clean(scan(&[("a.log", log)], &[]));
}

#[test]
fn one_effect_logged_three_centuries_apart() {
    let later = EFFECT_1900.replace("1900-01-01T14:02:11.501Z", "2199-12-31T23:59:59.5Z");
    assert_clean(scan(
        &[("e.jsonl", &format!("{EFFECT_1900}\n{later}\n"))],
        &[],
    ));
}

#[test]
fn windows_as_wide_as_a_duration_goes() {
    let log = "2026-11-03 10:00:00.000  refund rf_1  order A-1  4500p  settled 10:00:05\n\
               2026-11-03 10:00:01.000  refund rf_2  order A-1  4500p  settled 10:00:06\n";
    for args in [["--max-skew", "106752d"], ["--decision-window", "106752d"]] {
        assert_clean(scan(&[("service.log", log)], &args));
    }
}

#[cfg(unix)]
#[test]
fn a_fifo_in_a_folder_is_passed_over_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("no mkfifo here: skipped");
        return;
    }
    std::fs::write(
        dir.path().join("service.log"),
        "2026-11-03 10:00:00.000  refund rf_1  order A-1  4500p  settled 10:00:05\n",
    )
    .unwrap();
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .args(["scan", "--format", "json"])
        .arg(dir.path())
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("pipe: not a regular file (a FIFO, socket or device); passed over"),
        "{stderr}"
    );
    assert!(Path::new(&fifo).exists());
}

#[test]
fn a_thread_count_past_any_machine_is_refused_at_once() {
    let log = "2026-11-03 10:00:00.000  refund rf_1  order A-1  4500p  settled 10:00:05\n";
    let (code, stderr) = scan(&[("service.log", log)], &["--threads", "99999999999"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--threads 99999999999: expected at most 1024"),
        "{stderr}"
    );
    assert_clean(scan(&[("service.log", log)], &["--threads", "1024"]));
}

#[test]
fn a_line_with_a_nul_inside_is_skipped_with_why_not_ignored() {
    let log = "2026-11-03 14:02:11.402 \0 agent run 7f3a  step 4  tool=issue_refund  args={\"order\":\"A-1\"}\n\
               2026-11-03 14:02:12.000  healthcheck ok\n";
    let (code, stderr) = scan(&[("trace.log", log)], &["--strict"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("trace.log:1: skipped: a NUL byte inside the line"),
        "{stderr}"
    );
    assert!(!stderr.contains("trace.log:2:"), "{stderr}");
}
