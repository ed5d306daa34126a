//! A console exporter's span dump after a long start-up log: the program's own output fills
//! more than the 64 KiB detection reads first, and the spans must still be read, with the
//! findings of the dump alone; a text log with a stray printed object must stay text.

mod common;

use serde_json::Value;
use std::path::Path;

/// A Python program's start-up log through `logging` (a text log to detection): over 64 KiB.
fn python_startup_log() -> String {
    (0..1000)
        .map(|i| {
            format!(
                "2026-12-07 00:20:{:02},{:03} INFO agent: loaded tool schema {i}: \
                 issue_refund(order: str, amount_p: int) -> dict\n",
                i / 1000,
                i % 1000
            )
        })
        .collect()
}

/// A Node program's plain `console.log` lines (no log format to detection): `lines` lines
/// of about 80 bytes.
fn console_output(lines: usize) -> String {
    (0..lines)
        .map(|i| {
            format!(
                "warming up cache entry {i}: product catalogue page loaded, 48 items, 0 errors\n"
            )
        })
        .collect()
}

/// `idem-audit scan` over a fixture's settlement CSV and its span dump with `preamble` before
/// it, in a folder of its own: the report and the exit status.
fn scan_with_preamble(case: &str, preamble: &str, args: &[&str]) -> (Value, Option<i32>) {
    let fixture = common::fixture(case);
    let dir = tempfile::tempdir().unwrap();
    let dump = std::fs::read_to_string(fixture.join("trace.jsonl")).unwrap();
    std::fs::write(dir.path().join("trace.log"), format!("{preamble}{dump}")).unwrap();
    std::fs::copy(
        fixture.join("settlement.csv"),
        dir.path().join("settlement.csv"),
    )
    .unwrap();
    scan_dir(dir.path(), args)
}

fn scan_dir(dir: &Path, args: &[&str]) -> (Value, Option<i32>) {
    let out = assert_cmd::Command::cargo_bin("idem-audit")
        .unwrap()
        .arg("scan")
        .arg(dir)
        .args(["--format", "json", "--fail-on", "never"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    (report, out.status.code())
}

/// The report's input whose path ends with `name`.
fn input<'a>(report: &'a Value, name: &str) -> &'a Value {
    let inputs = report["inputs"].as_array().unwrap();
    inputs
        .iter()
        .find(|i| i["path"].as_str().unwrap().ends_with(name))
        .unwrap_or_else(|| panic!("no input {name}: {inputs:?}"))
}

/// Each finding without where its evidence is (its file's name and line differ), with the
/// lines of its evidence in the dump apart.
fn findings(report: &Value, dump: &str) -> (Vec<Value>, Vec<u64>) {
    let mut lines = Vec::new();
    let mut found = Vec::new();
    for f in report["findings"].as_array().unwrap() {
        let mut f = f.clone();
        let evidence = f.as_object_mut().unwrap().remove("evidence");
        for e in evidence.iter().flat_map(|e| e.as_array().unwrap()) {
            if e["path"].as_str().unwrap().ends_with(dump) {
                lines.push(e["line"].as_u64().unwrap());
            }
        }
        f.as_object_mut().unwrap().remove("fingerprint");
        found.push(f);
    }
    (found, lines)
}

/// The dump after the preamble is read as the dump alone is: an OTLP input whose spans give
/// the same findings, at the same places moved down by the preamble, the preamble's lines
/// ignored and none skipped.
fn assert_read_as_the_dump_alone(case: &str, preamble: &str, args: &[&str]) {
    assert!(preamble.len() > 64 << 10, "the preamble fills the head");
    let added = preamble.lines().count() as u64;
    let (alone, alone_exit) = scan_dir(&common::fixture(case), args);
    let (after, after_exit) = scan_with_preamble(case, preamble, args);
    let what = format!("{case} {args:?}");
    let (dump_alone, dump_after) = (input(&alone, "trace.jsonl"), input(&after, "trace.log"));
    assert_eq!(dump_after["format"], "otlp", "{what}: {dump_after}");
    assert_eq!(dump_after["skipped"], 0, "{what}: {dump_after}");
    let count = |input: &Value, key: &str| input[key].as_u64().unwrap();
    for key in ["lines", "ignored"] {
        assert_eq!(
            count(dump_after, key),
            count(dump_alone, key) + added,
            "{what}: {key}"
        );
    }
    assert_eq!(dump_after["events"], dump_alone["events"], "{what}");
    let (found_alone, lines_alone) = findings(&alone, "trace.jsonl");
    let (found_after, lines_after) = findings(&after, "trace.log");
    assert!(!found_alone.is_empty(), "{what}");
    assert_eq!(found_after, found_alone, "{what}");
    let moved: Vec<u64> = lines_alone.iter().map(|l| l + added).collect();
    assert_eq!(lines_after, moved, "{what}");
    assert_eq!(after_exit, alone_exit, "{what}");
}

#[test]
fn the_python_exporters_spans_after_a_long_startup_log_are_read() {
    let log = python_startup_log();
    assert_read_as_the_dump_alone("otlp-console-langgraph-openinference", &log, &[]);
    assert_read_as_the_dump_alone("otlp-console-compact-langgraph-openinference", &log, &[]);
    assert_read_as_the_dump_alone(
        "otlp-console-openai-agents-genai",
        &console_output(1000),
        &[],
    );
    // Forced, the program's lines are its own, ignored rather than skipped one by one.
    let forced = ["--input-format", "otlp"];
    assert_read_as_the_dump_alone("otlp-console-langgraph-openinference", &log, &forced);
}

#[test]
fn the_javascript_exporters_spans_after_a_long_startup_log_are_read() {
    let out = console_output(1000);
    let forced = ["--input-format", "otlp"];
    for case in [
        "otlp-console-js-vercel-ai",
        "otlp-console-js-langchain-js-openinference-tool-fails",
        "otlp-console-js-mixed-langchain-js-openinference",
    ] {
        assert_read_as_the_dump_alone(case, &out, &[]);
        assert_read_as_the_dump_alone(case, &out, &forced);
    }
    // A start-up log a text log to detection is no different.
    assert_read_as_the_dump_alone("otlp-console-js-vercel-ai", &python_startup_log(), &[]);
}

/// Detection looks through the first MiB only: past it, the file is what its head said (here
/// no log, passed over), and `--input-format otlp` still reads the spans.
#[test]
fn past_detections_look_ahead_only_the_forced_reader_finds_the_dump() {
    let out = console_output(20_000);
    assert!(out.len() > 1 << 20);
    let case = "otlp-console-js-vercel-ai";
    let (report, _) = scan_with_preamble(case, &out, &[]);
    let dump = input(&report, "trace.log");
    assert_eq!(dump["format"], Value::Null, "{dump}");
    assert_read_as_the_dump_alone(case, &out, &["--input-format", "otlp"]);
}

/// A text log over 64 KiB with a pretty-printed JSON document (a config dump, with a
/// `name` and a trace id of its own) and a printed JavaScript object (a row) past its head
/// stays a text log: the same events and findings as without them.
#[test]
fn a_text_log_with_a_stray_printed_object_stays_text() {
    let healthchecks: String = (0..3000)
        .map(|i| format!("14:00:{:02}.{:03}  healthcheck ok\n", i / 1000, i % 1000))
        .collect();
    let incident = std::fs::read_to_string(common::fixture("incident-a88214/trace.log")).unwrap();
    let plain = format!("{healthchecks}{incident}");
    let stray = concat!(
        "{\n",
        "    \"name\": \"refund-worker\",\n",
        "    \"context\": {\n",
        "        \"trace_id\": \"d483b3125fd8633e7f2d036b32532e13\",\n",
        "        \"span_id\": \"df6e10e1f19c3de4\"\n",
        "    },\n",
        "    \"kind\": \"worker\"\n",
        "}\n",
        "{\n",
        "  id: 're_1',\n",
        "  object: 'refund',\n",
        "  kind: 'full',\n",
        "  timestamp: 1796603147000000,\n",
        "  duration: 2000000\n",
        "}\n",
    );
    let with_stray = format!("{plain}{stray}");
    assert!(plain.len() > 64 << 10);
    let report_of = |text: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("trace.log"), text).unwrap();
        scan_dir(dir.path(), &[]).0
    };
    let (plain, with_stray) = (report_of(&plain), report_of(&with_stray));
    let (a, b) = (input(&plain, "trace.log"), input(&with_stray, "trace.log"));
    assert_eq!(b["format"], "text", "{b}");
    assert_eq!(b["events"], a["events"]);
    assert!(a["events"].as_u64().unwrap() > 0);
    // Every line of the objects is still counted.
    let count = |i: &Value, key: &str| i[key].as_u64().unwrap();
    assert_eq!(count(b, "lines"), count(a, "lines") + 15);
    assert_eq!(
        count(b, "ignored") + count(b, "skipped"),
        count(a, "ignored") + count(a, "skipped") + 15
    );
    assert_eq!(findings(&with_stray, "x").0, findings(&plain, "x").0);
    assert!(!findings(&plain, "x").0.is_empty());
}
