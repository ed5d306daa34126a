//! A tool span's arguments written as JSON text nested deeper than the JSON reader reads
//! (127 levels): the span is reported at its `path:line`, counted skipped, with the depth
//! limit, not read as though its arguments were a plain string with no order in it. The
//! real ADK trace (fixtures/otlp-adk-genai) with its arguments nested 127 and 128 levels.

use serde_json::Value;

mod common;
use common::{fixture, scan};

/// The ADK fixture's trace and settlement, the tool's arguments given a `meta` of `levels`
/// nested arrays (the arguments' object is one level more), scanned as JSON.
fn scan_nested(levels: usize) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let case = fixture("otlp-adk-genai");
    std::fs::copy(
        case.join("settlement.csv"),
        dir.path().join("settlement.csv"),
    )
    .unwrap();
    let trace = std::fs::read_to_string(case.join("trace.jsonl")).unwrap();
    let meta = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
    let written = r#"{\"order\": \"A-88214\", \"amount_p\": 4500}"#;
    assert!(trace.contains(written));
    let nested = format!(r#"{{\"order\": \"A-88214\", \"amount_p\": 4500, \"meta\": {meta}}}"#);
    std::fs::write(
        dir.path().join("trace.jsonl"),
        trace.replace(written, &nested),
    )
    .unwrap();
    let (code, stdout, stderr) = scan(&[dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, Some(1), "{stderr}");
    (serde_json::from_str(&stdout).unwrap(), stderr)
}

fn rules(r: &Value) -> Vec<(String, String)> {
    (r["findings"].as_array().unwrap().iter())
        .map(|f| (f["rule"].to_string(), f["cause"].to_string()))
        .collect()
}

fn trace_input(r: &Value) -> &Value {
    (r["inputs"].as_array().unwrap().iter())
        .find(|i| i["path"].as_str().unwrap().ends_with("trace.jsonl"))
        .unwrap()
}

#[test]
fn arguments_too_deep_to_read_are_reported_and_those_that_are_not_read() {
    let as_is = {
        let case = fixture("otlp-adk-genai");
        let (_, stdout, _) = scan(&[case.to_str().unwrap(), "--format", "json"]);
        serde_json::from_str::<Value>(&stdout).unwrap()
    };
    // 127 levels in all: read, the call's order and amount with them; nothing said.
    let (read, stderr) = scan_nested(126);
    assert_eq!(rules(&read), rules(&as_is));
    assert_eq!(trace_input(&read)["skipped"], 0, "{stderr}");
    // 128: not read, and said so where the span is, with the limit.
    let (deep, stderr) = scan_nested(127);
    let input = trace_input(&deep);
    assert_eq!(input["skipped"], 1);
    let problem = &input["problems"][0];
    let line = problem["line"].as_u64().unwrap();
    let reason = problem["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "tool span `issue_refund`: its arguments are JSON nested deeper than 127 levels"
        ),
        "{reason}"
    );
    assert!(
        stderr.contains(&format!(
            "trace.jsonl:{line}: skipped: tool span `issue_refund`"
        )),
        "{stderr}"
    );
    // The call's arguments are not guessed at: its refunds are no longer its order's retry.
    assert_ne!(rules(&deep), rules(&as_is));
}
