//! Frameworks' own spellings: OpenLLMetry's wrapped arguments, LangSmith's metadata, an HTTP wrapper span, and runs and steps where none is named.

use super::*;

/// OpenLLMetry wraps the arguments (`inputs`, beside a Python-repr `input_str` and
/// per-call metadata) and carries run and step as association properties.
#[test]
fn openllmetry_wrapped_arguments_and_association_properties() {
    let args = r#"{"input_str": "{'order': 'A-88214', 'amount_p': 4500}", "tags": ["seq:step:1"], "metadata": {"thread_id": "t-9", "langgraph_step": 2, "run_uuid": "8c1e"}, "inputs": {"order": "A-88214", "amount_p": 4500}, "kwargs": {"tool_call_id": "call_1"}}"#;
    let tool = span(
        TR,
        "1000000000000001",
        Some("1000000000000000"),
        "execute_tool issue_refund",
        1,
        0,
        2000,
        kv(&[
            ("traceloop.span.kind", s("tool")),
            ("gen_ai.operation.name", s("execute_tool")),
            ("gen_ai.tool.name", s("issue_refund")),
            ("traceloop.association.properties.thread_id", s("t-9")),
            (
                "traceloop.association.properties.langgraph_step",
                json!({"intValue": "2"}),
            ),
            ("gen_ai.tool.call.arguments", s(args)),
        ]),
    );
    let http = span(
        TR,
        "1000000000000002",
        Some("1000000000000001"),
        "POST",
        3,
        10,
        20,
        kv(&[
            ("http.method", s("POST")),
            ("http.status_code", json!({"intValue": 201})),
        ]),
    );
    let (_, l) = linked(&[&batch("p", vec![http, tool])]);
    let calls = tool_calls(&l);
    assert_eq!((calls[0].call.run.as_str(), calls[0].call.step), ("t-9", 2));
    assert_eq!(calls[0].args, json!({"order": "A-88214", "amount_p": 4500}));
    assert!(!calls[0].args_raw.contains("input_str"));
    assert_eq!(attempts(&l).len(), 1);
}

/// LangSmith's OTel mode: arguments in `gen_ai.prompt`, run and step as `langsmith.metadata.*`,
/// and a tool error that leaves the status OK with only an `exception` event.
#[test]
fn langsmith_prompt_metadata_and_hidden_error() {
    let mut tool = span(
        TR,
        "2000000000000001",
        Some("2000000000000000"),
        "issue_refund",
        1,
        0,
        4000,
        kv(&[
            ("gen_ai.operation.name", s("execute_tool")),
            ("langsmith.span.kind", s("tool")),
            ("gen_ai.tool.name", s("issue_refund")),
            ("langsmith.metadata.thread_id", s("ls-1")),
            (
                "langsmith.metadata.langgraph_step",
                json!({"intValue": "4"}),
            ),
            ("gen_ai.prompt", s(r#"{"order":"A-88214","amount_p":4500}"#)),
        ]),
    );
    tool["events"] = json!([{"name": "exception", "attributes": kv(&[
        ("exception.type", s("Exception")),
        ("exception.message", s("ReadTimeout(ReadTimeoutError(\"Read timed out. (read timeout=1.0)\"))")),
    ])}]);
    let (_, l) = linked(&[&batch("p", vec![tool])]);
    let calls = tool_calls(&l);
    assert_eq!(
        (calls[0].call.run.as_str(), calls[0].call.step),
        ("ls-1", 4)
    );
    assert_eq!(calls[0].args, json!({"order": "A-88214", "amount_p": 4500}));
    let end = events(&l).into_iter().find_map(|e| match &e.kind {
        EventKind::StepEnd(s) => Some(s.clone()),
        _ => None,
    });
    let end = end.unwrap();
    assert!(
        !end.ok,
        "an exception event fails the step even with status OK"
    );
    assert!(end.error.unwrap().contains("Read timed out"));
}

/// No run attribute anywhere: the trace id; no step attribute: the position among the
/// run's tool spans by start time, whatever order they were written in.
#[test]
fn run_falls_back_to_trace_and_step_to_position() {
    let tool = |id: &str, start: i64, name: &str| {
        span(
            TR,
            id,
            None,
            name,
            1,
            start,
            start + 100,
            kv(&[
                ("openinference.span.kind", s("TOOL")),
                ("tool.name", s(name)),
                ("input.value", s("not json {")),
            ]),
        )
    };
    let (_, l) = linked(&[&batch(
        "p",
        vec![
            tool("3000000000000002", 500, "second"),
            tool("3000000000000001", 100, "first"),
        ],
    )]);
    let calls = tool_calls(&l);
    let got: Vec<(&str, &str, u32)> = calls
        .iter()
        .map(|c| (c.tool.as_str(), c.call.run.as_str(), c.call.step))
        .collect();
    assert_eq!(got, [("first", TR, 1), ("second", TR, 2)]);
    assert_eq!(
        calls[0].args,
        json!("not json {"),
        "kept as text, not guessed at"
    );
}

/// A `requests` span wrapping a lower library's span is one attempt, not two; the inner
/// span inherits what only the wrapper captured.
#[test]
fn wrapper_http_span_is_one_attempt() {
    let tool = span(
        TR,
        "4000000000000001",
        None,
        "execute_tool t",
        1,
        0,
        1000,
        kv(&[
            ("gen_ai.operation.name", s("execute_tool")),
            ("gen_ai.tool.name", s("issue_refund")),
            ("agent.step", json!({"intValue": 7})),
        ]),
    );
    let outer = span(
        TR,
        "4000000000000002",
        Some("4000000000000001"),
        "POST",
        3,
        10,
        900,
        kv(&[
            ("http.method", s("POST")),
            (
                "http.request.header.idempotency-key",
                json!({"arrayValue": {"values": [s("k-outer")]}}),
            ),
        ]),
    );
    let inner = span(
        TR,
        "4000000000000003",
        Some("4000000000000002"),
        "POST",
        3,
        20,
        890,
        kv(&[
            ("http.request.method", s("POST")),
            ("http.response.status_code", json!({"intValue": "503"})),
        ]),
    );
    let (_, l) = linked(&[&batch("p", vec![inner, outer, tool])]);
    assert_eq!(tool_calls(&l)[0].call.step, 7);
    let a = attempts(&l);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].key.as_deref(), Some("k-outer"));
}
