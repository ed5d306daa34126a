//! Format detection inside folders (SPEC §3, §9): a log whose first line is damaged is still
//! detected from the lines after it, read, and its bad line reported; a README or a stray JSON
//! document is still passed over and noted once.

use idem_audit::report::Report;
use std::path::Path;

mod common;
use common::{duplicate, fixture, scan};

/// `scan DIR --format json [extra]`: the report and standard error.
fn scan_dir(dir: &Path, extra: &[&str]) -> (Option<i32>, Report, String) {
    let mut args = vec![dir.to_str().unwrap(), "--format", "json"];
    args.extend(extra);
    let (code, stdout, stderr) = scan(&args);
    let r = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    (code, r, stderr)
}

/// A fixture's lines with `bad` written before them, in `dir/name`.
fn with_bad_first_line(dir: &Path, name: &str, case: &str, bad: &str) {
    let body = std::fs::read_to_string(fixture(case)).unwrap();
    std::fs::write(dir.join(name), format!("{bad}\n{body}")).unwrap();
}

/// The folder's one log was read as `format`, its line 1 skipped with `reason`, and the
/// incident's duplicate found; with `--strict` the skipped line makes the exit 2.
fn assert_read_past_line_one(dir: &Path, name: &str, format: &str, reason: &str) {
    let (code, r, stderr) = scan_dir(dir, &[]);
    assert_eq!(code, Some(1), "{stderr}");
    let input = r
        .inputs
        .iter()
        .find(|i| i.path.ends_with(name))
        .expect("the log is listed");
    assert_eq!(input.format.as_deref(), Some(format), "{stderr}");
    assert_eq!(input.note, None);
    assert_eq!(input.skipped, 1);
    assert_eq!(input.problems[0].line, 1);
    assert!(
        input.problems[0].reason.contains(reason),
        "{:?}",
        input.problems
    );
    assert_eq!(
        input.lines,
        input.events + input.ignored + input.skipped,
        "every line accounted for"
    );
    let shown = format!("{}:1: skipped: {reason}", input.path);
    assert!(stderr.contains(&shown), "{stderr}");
    let dup = duplicate(&r);
    assert_eq!(dup.effects, ["rf_8XM1", "rf_9KQ2"]);
    assert_eq!(dup.cause.as_deref(), Some("client-retry"));
    let (strict, _, stderr) = scan(&[dir.to_str().unwrap(), "--strict"]);
    assert_eq!(strict, Some(2), "{stderr}");
}

#[test]
fn a_json_lines_log_whose_first_line_is_broken_is_still_read() {
    let dir = tempfile::tempdir().unwrap();
    // Half a line, as a log rotation or a crash mid-write leaves it.
    with_bad_first_line(
        dir.path(),
        "events.jsonl",
        "incident-jsonl/events.jsonl",
        r#"{"ts":"2026-11-03T14:02:11.0","type":"heal"#,
    );
    assert_read_past_line_one(dir.path(), "events.jsonl", "jsonl", "not JSON");
}

#[test]
fn a_text_log_whose_first_line_has_no_timestamp_is_still_read() {
    let dir = tempfile::tempdir().unwrap();
    with_bad_first_line(
        dir.path(),
        "trace.log",
        "incident-a88214/trace.log",
        "2.418  healthcheck ok  latency_ms=9",
    );
    assert_read_past_line_one(
        dir.path(),
        "trace.log",
        "text",
        "no parsable timestamp at the start of the line",
    );
}

#[test]
fn a_readme_and_a_stray_json_document_are_still_passed_over_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::copy(
        fixture("incident-jsonl/events.jsonl"),
        root.join("events.jsonl"),
    )
    .unwrap();
    // A README with a dated line among its prose, and a setext heading's `---`.
    std::fs::write(
        root.join("README.md"),
        "Incident A-88214\n---\n\nLogs from the incident.\n2026-11-03: finance found the double refund.\n\
         The trace is events.jsonl.\nAsk #payments for access.\n",
    )
    .unwrap();
    std::fs::write(
        root.join("truth.json"),
        "{\n  \"expected\": [\"rf_8XM1\"],\n  \"orders\": {\"A-88214\": 4500}\n}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("truth-compact.json"),
        "{\"expected\":[\"rf_8XM1\"]}\n",
    )
    .unwrap();
    let (code, r, stderr) = scan_dir(root, &["--strict"]);
    assert_eq!(code, Some(1), "nothing was skipped: {stderr}");
    for name in ["README.md", "truth.json", "truth-compact.json"] {
        let input = r.inputs.iter().find(|i| i.path.ends_with(name)).unwrap();
        assert_eq!(input.format, None, "{name}");
        assert_eq!((input.lines, input.skipped), (0, 0), "{name}");
        let note = format!("{}: {}", input.path, input.note.as_deref().unwrap());
        assert_eq!(stderr.matches(&note).count(), 1, "{name}: {stderr}");
    }
    assert_eq!(stderr.lines().count(), 3, "{stderr}");
}

/// Log4j 2's JsonLayout keeps its time in `instant` (no stamp field of the usual names): a
/// folder of such logs is read, not passed over as unrecognised (the files were read only
/// when named). Written by Log4j 2.19 (fixtures/java-log4j2-json/make).
#[test]
fn a_folder_of_log4j2_json_layout_logs_is_read() {
    let (code, r, stderr) = scan_dir(&fixture("java-log4j2-json"), &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(!stderr.contains("passed over"), "{stderr}");
    assert_eq!(r.inputs.len(), 2);
    assert!(
        r.inputs
            .iter()
            .all(|i| i.format.as_deref() == Some("jsonl") && i.events > 0)
    );
    assert!(r.findings.iter().any(|f| f.rule == "duplicate-effect"));
}

/// A JSON document with an `instant` or a `timeMillis` (a test report's duration) but no
/// logger's name is no Log4j 2 log: still passed over.
#[test]
fn json_documents_with_only_a_log4j2_time_field_are_still_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("java-log4j2-json/payments.log"),
        dir.path().join("payments.log"),
    )
    .unwrap();
    for (name, body) in [
        (
            "test-results.json",
            r#"{"suite":"refunds","tests":12,"failures":0,"timeMillis":1532}"#,
        ),
        (
            "snapshot.json",
            r#"{"instant":{"epochSecond":1796538480,"nanoOfSecond":0},"state":"ok"}"#,
        ),
    ] {
        std::fs::write(dir.path().join(name), format!("{body}\n")).unwrap();
    }
    let (code, r, stderr) = scan_dir(dir.path(), &["--strict", "--fail-on", "never"]);
    assert_eq!(code, Some(0), "{stderr}");
    let read: Vec<&str> = (r.inputs.iter())
        .filter(|i| i.format.is_some())
        .map(|i| i.path.rsplit('/').next().unwrap())
        .collect();
    assert_eq!(read, ["payments.log"], "{stderr}");
}

/// bzip2 and xz files are not unpacked, and said so (review37 L2): in a folder, passed over
/// with that note, the logs beside them still read; named, an unreadable input (exit 2).
#[test]
fn bzip2_and_xz_are_said_to_be_compressed_not_read_as_binary_lines() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("incident-csv/trace.log"),
        dir.path().join("trace.log"),
    )
    .unwrap();
    std::fs::copy(
        fixture("incident-csv/refunds.csv"),
        dir.path().join("refunds.csv"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("old.log.bz2"),
        b"BZh91AY&SY\x8a\x01\n\x02\x03",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("old.log.1.xz"),
        b"\xFD7zXZ\0\0\x04\xe6\xd6\n",
    )
    .unwrap();
    let (code, r, stderr) = scan_dir(dir.path(), &[]);
    assert_eq!(code, Some(1), "{stderr}");
    for (name, how) in [("old.log.bz2", "bzip2"), ("old.log.1.xz", "xz")] {
        let input = r.inputs.iter().find(|i| i.path.ends_with(name)).unwrap();
        let note = input.note.as_deref().unwrap();
        assert!(
            note.starts_with(&format!("compressed with {how}: not unpacked")),
            "{note}"
        );
        assert_eq!(input.skipped, 0);
    }
    let named = dir.path().join("old.log.bz2");
    let (code, _, stderr) = scan(&[named.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("compressed with bzip2: not unpacked; decompress it first"),
        "{stderr}"
    );
    assert!(!stderr.contains("no parsable timestamp"), "{stderr}");
}
