//! A Rust agent's step end in tracing's layouts: `info!(run_id, step, "step ok")` writes
//! `step ok run_id=7f3a step=4` (text) or `"fields":{"message":"step ok","run_id":"7f3a",
//! "step":4}` (JSON). It ends the step as SPEC's `agent run 7f3a  step 4  ok` does: a
//! request logged after it, naming no call, is not the step's next attempt.

use assert_cmd::Command;
use idem_audit::report::timeline::TimelineReport;

const TOOL_CALL: &str = r#"tool call run_id=7f3a step=4 tool="issue_refund" args={"amount_minor":4500,"currency":"GBP","order":"A-88214"}"#;
const REQUEST: &str = "POST url=http://127.0.0.1:18981/v1/refunds";

/// tracing-subscriber's default layout, no colour codes; `between` is the agent's line
/// between the step's answer and the next request.
fn text_trace(between: &str) -> String {
    [
        ("35.816096", "agent", TOOL_CALL),
        ("35.816207", "agent::tools", REQUEST),
        (
            "36.222905",
            "agent::tools",
            "refund response status=201 Created refund_id=re_1",
        ),
        ("36.222994", "agent", between),
        ("36.223063", "agent::tools", REQUEST),
    ]
    .iter()
    .map(|(t, target, msg)| format!("2026-12-07T16:36:{t}Z  INFO {target}: {msg}\n"))
    .collect()
}

/// tracing-subscriber's JSON layout of the same trace, `between` the message of the line
/// between the answer and the next request.
fn json_trace(between: &str) -> String {
    let line = |t: &str, fields: &str| {
        format!(
            r#"{{"timestamp":"2026-12-07T16:36:{t}Z","level":"INFO","fields":{fields},"target":"agent"}}"#
        ) + "\n"
    };
    let post = r#"{"message":"POST","url":"http://127.0.0.1:18981/v1/refunds"}"#;
    [
        line("35.816096", r#"{"message":"tool call","run_id":"7f3a","step":4,"tool":"issue_refund","args":"{\"amount_minor\":4500,\"currency\":\"GBP\",\"order\":\"A-88214\"}"}"#),
        line("35.816207", post),
        line("36.222905", r#"{"message":"refund response","status":"201 Created","refund_id":"re_1"}"#),
        line("36.222994", &format!(r#"{{"message":"{between}","run_id":"7f3a","step":4}}"#)),
        line("36.223063", post),
    ]
    .concat()
}

/// The timeline of run 7f3a: each entry's line and what it is.
fn entries(name: &str, trace: &str) -> Vec<(u32, String)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, trace).unwrap();
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .args(["timeline", "--run", "7f3a", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    let t: TimelineReport = serde_json::from_slice(&out.stdout).unwrap();
    t.entries.iter().map(|e| (e.line, e.what.clone())).collect()
}

fn whats(entries: &[(u32, String)]) -> Vec<&str> {
    entries.iter().map(|(_, w)| w.as_str()).collect()
}

#[test]
fn step_ok_in_tracings_text_ends_the_step() {
    let e = entries("agent.log", &text_trace("step ok run_id=7f3a step=4"));
    assert_eq!(e[e.len() - 1], (4, "step_end".to_string()), "{e:?}");
    // The request after it is not the step's second attempt.
    assert!(!e.iter().any(|(line, _)| *line == 5), "{e:?}");
}

#[test]
fn step_ok_in_tracings_json_ends_the_step() {
    let e = entries("agent.jsonl", &json_trace("step ok"));
    assert_eq!(e[e.len() - 1], (4, "step_end".to_string()), "{e:?}");
    assert!(!e.iter().any(|(line, _)| *line == 5), "{e:?}");
}

#[test]
fn other_words_about_a_step_end_nothing() {
    // A step's words that are no end of it: the step stays open, the request its next.
    for e in [
        entries(
            "agent.log",
            &text_trace("step 4 started run_id=7f3a step=4"),
        ),
        entries("agent.jsonl", &json_trace("step 4 started")),
    ] {
        assert!(!whats(&e).contains(&"step_end"), "{e:?}");
        assert_eq!(e[e.len() - 1], (5, "attempt".to_string()), "{e:?}");
    }
    // The end's words with no step named: no end.
    let e = entries("agent.log", &text_trace("step ok run_id=7f3a"));
    assert!(!whats(&e).contains(&"step_end"), "{e:?}");
}
