//! `idem-audit timeline` on the incident: the write-up's trace, both sides interleaved, each
//! settlement at its own time, findings marked.

use assert_cmd::Command;
use idem_audit::report::timeline::TimelineReport;

fn timeline(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .arg("timeline")
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

fn incident_json() -> TimelineReport {
    let (code, out) = timeline(&[
        "fixtures/incident-a88214",
        "--order",
        "A-88214",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0));
    serde_json::from_str(&out).unwrap()
}

#[test]
fn the_incident_reads_like_the_write_up() {
    let t = incident_json();
    assert_eq!(t.subject, "order A-88214");
    let what: Vec<&str> = t.entries.iter().map(|e| e.what.as_str()).collect();
    assert_eq!(
        what,
        [
            "tool_call",
            "attempt",
            "effect",
            "failure",
            "attempt",
            "settlement",
            "effect",
            "response",
            "step_end",
            "settlement"
        ]
    );
    // Time order, each a line of the trace.
    assert!(t.entries.windows(2).all(|w| w[0].at <= w[1].at));
    let trace = std::fs::read_to_string("fixtures/incident-a88214/trace.log").unwrap();
    let lines: Vec<&str> = trace.lines().collect();
    for e in &t.entries {
        assert_eq!(e.path, "fixtures/incident-a88214/trace.log");
        let line = lines[e.line as usize - 1];
        if e.what == "settlement" {
            assert!(
                line.ends_with(&format!("settled {}", e.at)),
                "{} at line {}",
                e.at,
                e.line
            );
        } else {
            assert!(line.starts_with(&e.at), "{} at line {}", e.at, e.line);
        }
    }
    // Every one of the eight trace lines is an entry, and each settlement is at its own time.
    let mut cited: Vec<u32> = t.entries.iter().map(|e| e.line).collect();
    cited.dedup();
    cited.sort();
    cited.dedup();
    assert_eq!(cited, [1, 2, 3, 4, 5, 6, 8, 9]);
    let settled: Vec<&str> = t
        .entries
        .iter()
        .filter(|e| e.what == "settlement")
        .map(|e| e.at.as_str())
        .collect();
    assert_eq!(settled, ["14:02:22.884", "14:02:34.010"]);
    // The first refund was created between attempt 1 and its timeout, and it settled between
    // attempt 2 and the second refund's creation.
    let pos = |pred: &dyn Fn(&idem_audit::report::timeline::EntryReport) -> bool| {
        t.entries.iter().position(pred).unwrap()
    };
    let attempt1 = pos(&|e| e.what == "attempt" && e.text.starts_with("attempt 1"));
    let created1 = pos(&|e| e.what == "effect" && e.text.contains("rf_8XM1"));
    let timeout = pos(&|e| e.what == "failure");
    let attempt2 = pos(&|e| e.what == "attempt" && e.text.starts_with("attempt 2"));
    let settled1 = pos(&|e| e.what == "settlement" && e.text.contains("rf_8XM1"));
    let created2 = pos(&|e| e.what == "effect" && e.text.contains("rf_9KQ2"));
    assert!(attempt1 < created1 && created1 < timeout);
    assert!(attempt2 < settled1 && settled1 < created2);
    assert!(
        t.entries[timeout].text.contains("ambiguous"),
        "{}",
        t.entries[timeout].text
    );
}

#[test]
fn findings_are_marked_on_the_lines_they_cite() {
    let t = incident_json();
    let mark = |rule: &str| t.findings.iter().position(|f| f.rule == rule).unwrap() + 1;
    let dup = mark("duplicate-effect");
    let late = mark("effect-after-timeout");
    for e in &t.entries {
        let cited_by_dup = t.findings[dup - 1]
            .evidence
            .iter()
            .any(|ev| ev.line == e.line);
        assert_eq!(e.findings.contains(&dup), cited_by_dup, "{e:?}");
    }
    let created1 = t
        .entries
        .iter()
        .find(|e| e.what == "effect" && e.text.contains("rf_8XM1"))
        .unwrap();
    assert!(created1.findings.contains(&dup) && created1.findings.contains(&late));
    let created2 = t
        .entries
        .iter()
        .find(|e| e.what == "effect" && e.text.contains("rf_9KQ2"))
        .unwrap();
    assert!(created2.findings.contains(&dup) && !created2.findings.contains(&late));
}

#[test]
fn the_incident_timeline_text() {
    let (code, out) = timeline(&["fixtures/incident-a88214", "--order", "A-88214"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("\nfindings:\n[1] error duplicate-effect (client-retry): "),
        "{out}"
    );
    insta::assert_snapshot!("incident_timeline", out);
    let (_, csv) = timeline(&[
        "fixtures/incident-a88214",
        "--order",
        "A-88214",
        "--format",
        "csv",
    ]);
    let mut rows = csv.lines();
    assert_eq!(rows.next(), Some("at,path,line,side,what,text,findings"));
    assert_eq!(rows.count(), 10);
}

/// The timeline's CSV guards a file name that a spreadsheet would run as a formula, as it
/// guards the logs' text; a plain name is written as it is.
#[test]
fn a_path_that_reads_as_a_formula_is_made_inert_in_the_csv() {
    let dir = tempfile::tempdir().unwrap();
    let trace = std::fs::read("fixtures/incident-a88214/trace.log").unwrap();
    std::fs::write(dir.path().join("=1+1.log"), &trace).unwrap();
    let (_, csv) = timeline(&[
        dir.path().to_str().unwrap(),
        "--order",
        "A-88214",
        "--format",
        "csv",
    ]);
    let row = csv.lines().nth(1).unwrap();
    let path = row.split(',').nth(1).unwrap();
    assert!(path.ends_with("/=1+1.log"), "{row}");
    // The guard applies to a cell that starts with a formula's sign: a folder's path starts
    // with `/`, so the cell is safe already, and the file in the current folder is the case.
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .current_dir(dir.path())
        .args([
            "timeline", "=1+1.log", "--order", "A-88214", "--format", "csv",
        ])
        .output()
        .unwrap();
    let csv = String::from_utf8(out.stdout).unwrap();
    let row = csv.lines().nth(1).unwrap();
    assert_eq!(row.split(',').nth(1), Some("'=1+1.log"), "{row}");
}

#[test]
fn by_run_and_by_key_and_nothing() {
    let (_, out) = timeline(&[
        "fixtures/interleaved-runs",
        "--run",
        "r1",
        "--format",
        "json",
    ]);
    let t: TimelineReport = serde_json::from_str(&out).unwrap();
    assert!(!t.entries.is_empty());
    assert!(
        t.entries.iter().all(|e| !e.text.contains("r2")),
        "{:#?}",
        t.entries
    );
    let (_, out) = timeline(&[
        "fixtures/incident-keyed-replay",
        "--key",
        "21f4d5951991bb054dcaf0900af3d015",
        "--format",
        "json",
    ]);
    let t: TimelineReport = serde_json::from_str(&out).unwrap();
    assert!(
        t.entries
            .iter()
            .any(|e| e.what == "response" && e.text.contains("replayed")),
        "{:#?}",
        t.entries
    );
    // A subject nothing concerns: the empty timeline, exit 1 (as grep), and a note on
    // standard error; one that differs only in case is named.
    let (code, out) = timeline(&["fixtures/incident-a88214", "--order", "NOPE"]);
    assert_eq!(code, Some(1));
    assert!(out.contains("Nothing in the inputs concerns it."));
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .args(["timeline", "fixtures/incident-a88214", "--order", "a-88214"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("nothing in the inputs concerns order a-88214 (did you mean A-88214?)"),
        "{err}"
    );
    // One of --order, --run, --key is required.
    assert_eq!(timeline(&["fixtures/incident-a88214"]).0, Some(2));
}

#[test]
fn unknown_jsonl_fields_show_as_attributes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("effects.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"ts":"2026-11-03T14:02:11Z","type":"effect","effect_id":"rf_1","kind":"refund","order":"A-1","amount_minor":4500,"currency":"GBP","settled_at":"2026-11-03T14:02:20Z","reason":"requested_by_customer"}"#,
            "\n",
            r#"{"ts":"2026-11-03T14:03:11Z","type":"effect","effect_id":"rf_2","kind":"refund","order":"A-1","amount_minor":4500,"currency":"GBP"}"#,
            "\n",
        ),
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let (code, out) = timeline(&[p, "--order", "A-1", "--format", "json"]);
    assert_eq!(code, Some(0));
    let report: TimelineReport = serde_json::from_str(&out).unwrap();
    let attrs: Vec<_> = report
        .entries
        .iter()
        .map(|e| (e.what.as_str(), e.attrs.get("reason").map(String::as_str)))
        .collect();
    assert_eq!(
        attrs,
        vec![
            ("effect", Some("requested_by_customer")),
            ("settlement", None),
            ("effect", None)
        ]
    );
    let (_, text) = timeline(&[p, "--order", "A-1"]);
    assert!(text.contains("{reason=requested_by_customer}"), "{text}");
    assert_eq!(text.matches("reason=").count(), 1, "{text}");
}

/// A trace that logs tool calls and not their requests: the request the tool call implies
/// is no line of its own, and each effect says which call it was matched to without naming
/// an attempt number nobody logged.
#[test]
fn a_request_nobody_logged_is_no_entry() {
    let (code, out) = timeline(&[
        "fixtures/tool-calls-only",
        "--order",
        "A-88214",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0));
    let t: TimelineReport = serde_json::from_str(&out).unwrap();
    let what: Vec<&str> = t.entries.iter().map(|e| e.what.as_str()).collect();
    assert_eq!(
        what,
        [
            "tool_call",
            "effect",
            "settlement",
            "effect",
            "step_end",
            "settlement"
        ]
    );
    for e in t.entries.iter().filter(|e| e.what == "effect") {
        assert!(
            e.text
                .ends_with("(run 7f3a step 4, request not logged, by order and time)"),
            "{}",
            e.text
        );
    }
}

/// An OTLP attempt's request is shown with its URL and key, though its span also holds its
/// outcome; an answer logged alone (no request line) implies an attempt and shows none.
#[test]
fn an_otlp_attempt_shows_its_request() {
    let (code, out) = timeline(&[
        "fixtures/otlp-langgraph-openinference",
        "--run",
        "lg-oi-7f3a",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0));
    let t: TimelineReport = serde_json::from_str(&out).unwrap();
    let sent: Vec<&str> = (t.entries.iter())
        .filter(|e| e.what == "attempt")
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(sent[0].starts_with("attempt 1  POST http://127.0.0.1:44925/v1/refunds  key 1dbf4209"));
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("trace.log");
    std::fs::write(
        &log,
        "14:02:11.402  agent run 7f3a  step 4  tool=issue_refund  args={\"order\":\"A-1\",\"amount_p\":4500}\n\
         14:02:12.000  201 Created  refund_id=rf_1\n\
         14:02:12.100  agent run 7f3a  step 4  ok\n",
    )
    .unwrap();
    let (code, out) = timeline(&[log.to_str().unwrap(), "--run", "7f3a", "--format", "json"]);
    assert_eq!(code, Some(0), "{out}");
    let t: TimelineReport = serde_json::from_str(&out).unwrap();
    let what: Vec<&str> = t.entries.iter().map(|e| e.what.as_str()).collect();
    assert!(
        what.contains(&"response") && !what.contains(&"attempt"),
        "{out}"
    );
}

/// A refund no attempt accounts for, copying the call's 3.1 s after the answer, is shown
/// matched to the call's attempt as a copy of the refund it repeats.
#[test]
fn a_delivery_copy_names_the_effect_it_copies() {
    let (_, out) = timeline(&["fixtures/gateway-copy-after-answer", "--order", "A-88214"]);
    let copy = out
        .lines()
        .find(|l| l.contains("refund rf_9KQ2 created"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        copy.contains("(run 7f3a step 4 attempt 1, a delivery copy of rf_8XM1)"),
        "{copy}"
    );
    let original = out
        .lines()
        .find(|l| l.contains("refund rf_8XM1 created"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        original.contains("(run 7f3a step 4 attempt 1, by effect id)"),
        "{original}"
    );
}

/// An attempt read from an HTTP client's own line (Stripe's SDK keys every POST and logs
/// no header) shows its key as unknown; one the agent logged with its headers and no key
/// shows `no key`.
#[test]
fn a_key_no_line_could_show_is_unknown() {
    let attempts = |args: &[&str]| -> Vec<String> {
        let (code, out) = timeline(args);
        assert!(matches!(code, Some(0) | Some(1)), "{out}");
        let t: TimelineReport = serde_json::from_str(&out).unwrap();
        (t.entries.into_iter())
            .filter(|e| e.what == "attempt")
            .map(|e| e.text)
            .collect()
    };
    let sdk = attempts(&[
        "fixtures/python-stripe",
        "--run",
        "r-python-stripe",
        "--format",
        "json",
    ]);
    assert!(
        !sdk.is_empty() && sdk.iter().all(|a| a.ends_with("key unknown")),
        "{sdk:?}"
    );
    let spec = attempts(&[
        "fixtures/incident-a88214",
        "--order",
        "A-88214",
        "--format",
        "json",
    ]);
    assert!(
        !spec.is_empty() && spec.iter().all(|a| a.ends_with("no key")),
        "{spec:?}"
    );
}

/// Two parallel calls' spans share one line of an OTLP export batch: the timeline of the
/// order that was refunded once shows none of the other order's findings, though they
/// cite that line; the other order's shows them.
#[test]
fn findings_about_another_order_on_a_shared_line_are_not_marked() {
    let dir = "fixtures/otel-langgraph-parallel-same-step";
    let trace = format!("{dir}/trace.jsonl");
    let pay = format!("{dir}/payments.jsonl");
    let rules = |order: &str| -> Vec<String> {
        let (code, out) = timeline(&[&trace, &pay, "--order", order, "--format", "json"]);
        assert_eq!(code, Some(0), "{out}");
        let report: serde_json::Value = serde_json::from_str(&out).unwrap();
        (report["findings"].as_array().unwrap().iter())
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(rules("J-2"), Vec::<String>::new());
    let j1 = rules("J-1");
    assert!(j1.contains(&"duplicate-effect".to_string()), "{j1:?}");
    assert!(j1.contains(&"unkeyed-retry".to_string()), "{j1:?}");
}

/// The timeline of order A-7001 (fixture `gateway-nginx-retry-logs`: nginx resent one POST
/// to a second replica) over `inputs`: each entry's side, what, path and marks.
fn gateway_case(inputs: &[&str]) -> Vec<(String, String, String, Vec<usize>)> {
    let mut args = inputs.to_vec();
    args.extend(["--order", "A-7001", "--format", "json"]);
    let (code, out) = timeline(&args);
    assert_eq!(code, Some(0));
    let t: TimelineReport = serde_json::from_str(&out).unwrap();
    assert_eq!(t.findings.len(), 1);
    assert_eq!(t.findings[0].cause.as_deref(), Some("gateway-retry"));
    t.entries
        .iter()
        .map(|e| {
            let side = serde_json::to_value(e.side).unwrap();
            let file = e.path.rsplit('/').next().unwrap().to_string();
            let line = format!("{file}:{}", e.line);
            (
                side.as_str().unwrap().to_string(),
                e.what.clone(),
                line,
                e.findings.clone(),
            )
        })
        .collect()
}

#[test]
fn the_gateway_lines_a_gateway_retry_cites_are_the_gateways() {
    let entries = gateway_case(&["fixtures/gateway-nginx-retry-logs"]);
    let gateway: Vec<_> = entries.iter().filter(|e| e.0 == "gateway").collect();
    let lines: Vec<&str> = gateway.iter().map(|e| e.2.as_str()).collect();
    // The access lines listing two upstreams (JSON and key=value) and the error line.
    assert_eq!(
        lines,
        ["access-json.log:1", "error.log:1", "upstream.log:1"],
        "{entries:?}"
    );
    assert!(
        gateway.iter().all(|e| e.1 == "gateway" && e.3 == [1]),
        "{gateway:?}"
    );
    // Between the first refund and the second, as nginx sent it again.
    let at = |file: &str| entries.iter().position(|e| e.2.starts_with(file)).unwrap();
    assert!(at("payments-a.log") < at("upstream.log") && at("upstream.log") < at("payments-b.log"));
}

#[test]
fn a_gateway_line_about_another_request_is_not_shown() {
    let dir = tempfile::tempdir().unwrap();
    for file in ["agent.log", "payments-a.log", "payments-b.log"] {
        let from = format!("fixtures/gateway-nginx-retry-logs/{file}");
        std::fs::copy(from, dir.path().join(file)).unwrap();
    }
    // nginx's line for another path at the same second, and for the same path an hour on.
    let resent = r#""POST {PATH} HTTP/1.1" 201 115 "-" "python-requests/2.34.2" rt=1.007 ua="127.0.0.2:5201, 127.0.0.3:5201" us="504, 201" urt="1.005, 0.002""#;
    let upstream = [("17:29:42", "/v1/payouts"), ("18:29:42", "/v1/refunds")]
        .map(|(t, path)| {
            let request = resent.replace("{PATH}", path);
            format!("127.0.0.1 - - [07/Dec/2026:{t} +0000] {request}\n")
        })
        .concat();
    std::fs::write(dir.path().join("upstream.log"), upstream).unwrap();
    let entries = gateway_case(&[dir.path().to_str().unwrap()]);
    assert!(entries.iter().all(|e| e.0 != "gateway"), "{entries:?}");
    assert_eq!(entries.len(), 6, "{entries:?}");
}
