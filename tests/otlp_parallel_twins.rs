//! Two parallel tool spans of one LangGraph step with the same arguments (the model asked
//! for the same refund twice in one turn), each answered 201: the duplicate's story says
//! the step dispatched the call twice at once, not that the framework dispatched it again;
//! the same two spans one after the other, the first failed, are a step retry's story.

mod common;

use common::scan;
use serde_json::{Value, json};

const TRACE: &str = "5b8efff798038103d269b633813fc60c";
const T0: i64 = 1_794_488_400_000_000_000;
const MS: i64 = 1_000_000;

fn kv(pairs: &[(&str, Value)]) -> Value {
    Value::Array(
        pairs
            .iter()
            .map(|(k, v)| json!({"key": k, "value": v}))
            .collect(),
    )
}

fn span(
    id: &str,
    parent: Option<&str>,
    name: &str,
    kind: i64,
    ms: (i64, i64),
    attrs: Value,
    error: bool,
) -> Value {
    let mut v = json!({
        "traceId": TRACE, "spanId": id, "name": name, "kind": kind,
        "startTimeUnixNano": (T0 + ms.0 * MS).to_string(),
        "endTimeUnixNano": (T0 + ms.1 * MS).to_string(),
        "attributes": attrs, "status": {"code": if error { 2 } else { 1 }}
    });
    if let Some(p) = parent {
        v["parentSpanId"] = json!(p);
    }
    v
}

/// A tool span of thread `th` step 2 refunding order J-5, and its POST answered `status`.
fn call(n: u8, tool: (i64, i64), post: (i64, i64), status: i64) -> [Value; 2] {
    let tool_id = format!("a00000000000000{n}");
    let attrs = kv(&[
        (
            "gen_ai.operation.name",
            json!({"stringValue": "execute_tool"}),
        ),
        ("gen_ai.tool.name", json!({"stringValue": "issue_refund"})),
        (
            "gen_ai.tool.call.arguments",
            json!({"stringValue": "{\"order\": \"J-5\", \"amount_p\": 2500}"}),
        ),
        (
            "traceloop.association.properties.thread_id",
            json!({"stringValue": "th"}),
        ),
        (
            "traceloop.association.properties.langgraph_step",
            json!({"stringValue": "2"}),
        ),
    ]);
    let http = kv(&[
        ("http.method", json!({"stringValue": "POST"})),
        (
            "http.url",
            json!({"stringValue": "http://127.0.0.1:9/v1/refunds"}),
        ),
        ("http.status_code", json!({"intValue": status.to_string()})),
    ]);
    let failed = status >= 500;
    [
        span(
            &tool_id,
            None,
            "execute_tool issue_refund",
            1,
            tool,
            attrs,
            failed,
        ),
        span(
            &format!("b00000000000000{n}"),
            Some(&tool_id),
            "POST",
            3,
            post,
            http,
            failed,
        ),
    ]
}

fn story(calls: Vec<Value>, refunds_ms: (i64, i64)) -> String {
    let dir = tempfile::tempdir().unwrap();
    let doc = json!({"resourceSpans": [{
        "resource": {"attributes": kv(&[("service.name", json!({"stringValue": "agent"}))])},
        "scopeSpans": [{"scope": {"name": "agent"}, "spans": calls}]
    }]});
    std::fs::write(dir.path().join("trace.jsonl"), format!("{doc}\n")).unwrap();
    let at = |ms: i64| {
        let secs = (T0 + ms * MS) / 1_000_000_000;
        let t = chrono::DateTime::from_timestamp(secs, ((T0 + ms * MS) % 1_000_000_000) as u32)
            .unwrap();
        t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
    };
    let effect = |id: &str, ms: i64| {
        format!(
            r#"{{"ts":"{}","type":"effect","effect_id":"{id}","kind":"refund","order":"J-5","amount_minor":2500,"currency":"GBP"}}"#,
            at(ms)
        )
    };
    let pay = format!(
        "{}\n{}\n",
        effect("rf_1", refunds_ms.0),
        effect("rf_2", refunds_ms.1)
    );
    std::fs::write(dir.path().join("payments.jsonl"), pay).unwrap();
    let (_, out, err) = scan(&[dir.path().to_str().unwrap(), "--format", "json"]);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let dup = (report["findings"].as_array().unwrap().iter())
        .find(|f| f["rule"] == "duplicate-effect")
        .unwrap_or_else(|| panic!("no duplicate-effect: {out}"));
    dup["message"].as_str().unwrap().to_string()
}

#[test]
fn one_turn_asking_for_the_same_refund_twice_at_once_is_told_so() {
    let [t1, p1] = call(1, (0, 400), (10, 300), 201);
    let [t2, p2] = call(2, (5, 420), (20, 320), 201);
    let message = story(vec![t1, p1, t2, p2], (100, 110));
    assert!(
        message.contains("dispatched the same call twice at once"),
        "{message}"
    );
    assert!(!message.contains("dispatched step 2 again"), "{message}");
}

#[test]
fn the_same_call_again_after_a_failure_is_a_step_retry() {
    let [t1, p1] = call(1, (0, 1000), (10, 1000), 503);
    let [t2, p2] = call(2, (1500, 1900), (1510, 1800), 201);
    let message = story(vec![t1, p1, t2, p2], (100, 1600));
    assert!(message.contains("dispatched step 2 again"), "{message}");
    assert!(!message.contains("twice at once"), "{message}");
}
