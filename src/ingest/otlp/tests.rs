//! Hand-written OTLP documents, one per convention, shaped like what each producer writes
//! (the generated fixtures under `fixtures/otlp-*` are the real thing; see tests/otlp.rs).

use super::link::{Linked, link};
use super::*;
use crate::classify::FailureClass;
use crate::event::{Event, EventKind};
use serde_json::json;

pub(super) const T0: i64 = 1_764_684_000_000_000_000; // 2025-12-02T14:00:00Z
const MS: i64 = 1_000_000;

pub(super) fn s(v: &str) -> Value {
    json!({"stringValue": v})
}

pub(super) fn kv(pairs: &[(&str, Value)]) -> Value {
    Value::Array(
        pairs
            .iter()
            .map(|(k, v)| json!({"key": k, "value": v}))
            .collect(),
    )
}

/// A span as the SDK's OTLP/JSON encoder writes it (hex ids, integer enums, string nanos).
#[allow(clippy::too_many_arguments)]
pub(super) fn span(
    trace: &str,
    id: &str,
    parent: Option<&str>,
    name: &str,
    kind: i64,
    start_ms: i64,
    end_ms: i64,
    attrs: Value,
) -> Value {
    let mut v = json!({
        "traceId": trace, "spanId": id, "name": name, "kind": kind,
        "startTimeUnixNano": (T0 + start_ms * MS).to_string(),
        "endTimeUnixNano": (T0 + end_ms * MS).to_string(),
        "attributes": attrs, "status": {"code": 1}
    });
    if let Some(p) = parent {
        v["parentSpanId"] = json!(p);
    }
    v
}

/// A tool span (OpenInference's mark) of trace [`TR`], from 0 to 10 ms: the least a
/// document needs to be read as holding a tool call.
pub(super) fn tool_span(id: &str) -> Value {
    span(
        TR,
        id,
        None,
        "refund",
        1,
        0,
        10,
        kv(&[("openinference.span.kind", s("TOOL"))]),
    )
}

pub(super) fn batch(instance: &str, spans: Vec<Value>) -> String {
    json!({"resourceSpans": [{
        "resource": {"attributes": kv(&[("service.name", s("agent")), ("service.instance.id", s(instance))])},
        "scopeSpans": [{"scope": {"name": "test"}, "spans": spans}]
    }]})
    .to_string()
}

pub(super) fn read(text: &str, input: u32) -> Parsed {
    parse(&mut text.as_bytes(), input, &ParseOptions::default()).unwrap()
}

pub(super) fn linked(texts: &[&str]) -> (Vec<Span>, Linked) {
    let mut spans = Vec::new();
    for (i, t) in texts.iter().enumerate() {
        let p = read(t, i as u32);
        assert_eq!(p.stats.skipped, 0, "{:?}", p.stats.problems);
        spans.extend(p.spans);
    }
    let l = link(&spans);
    (spans, l)
}

fn events(l: &Linked) -> Vec<&Event> {
    l.events.iter().map(|(_, e)| e).collect()
}

pub(super) fn tool_calls(l: &Linked) -> Vec<&crate::event::ToolCall> {
    events(l)
        .into_iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall(t) => Some(&**t),
            _ => None,
        })
        .collect()
}

pub(super) fn attempts(l: &Linked) -> Vec<&crate::event::Attempt> {
    events(l)
        .into_iter()
        .filter_map(|e| match &e.kind {
            EventKind::Attempt(a) => Some(&**a),
            _ => None,
        })
        .collect()
}

/// The incident read from a console exporter's spans: one `issue_refund` call on order
/// A-88214, its two attempts sent with the keys `k-1` and `k-2`.
pub(super) fn assert_the_incident(spans: &[Span]) {
    let linked = link(spans);
    let calls = tool_calls(&linked);
    assert_eq!(calls.len(), 1);
    assert_eq!(&*calls[0].tool, "issue_refund");
    assert_eq!(calls[0].args["order"], "A-88214");
    let tries = attempts(&linked);
    let keys: Vec<_> = tries.iter().map(|a| a.key.as_deref()).collect();
    assert_eq!(keys, [Some("k-1"), Some("k-2")]);
    assert!(tries.iter().all(|a| a.call == Some(calls[0].call.clone())));
}

pub(super) const TR: &str = "5b8efff798038103d269b633813fc60c";
const TR2: &str = "0af7651916cd43dd8448eb211c80319c";
const TR3: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

fn read_timeout() -> Value {
    json!([{"name": "exception", "timeUnixNano": (T0 + 1500 * MS).to_string(), "attributes": kv(&[
        ("exception.type", s("requests.exceptions.ReadTimeout")),
        ("exception.message", s("HTTPConnectionPool(host='127.0.0.1', port=8080): Read timed out. (read timeout=1.0)")),
    ])}])
}

/// GenAI semconv as the OpenAI Agents contrib instrumentation writes it: HTTP spans are
/// children of the tool span, the run is `gen_ai.conversation.id` on an ancestor, the chat
/// span is CLIENT-kind. Children are exported (and so written) before their parents.
#[test]
fn genai_semconv_children_before_parents_across_lines() {
    let header = |key: &str| json!({"arrayValue": {"values": [{"stringValue": key}]}});
    let mut http1 = span(
        TR,
        "00f067aa0ba902b1",
        Some("00f067aa0ba902b0"),
        "POST",
        3,
        510,
        1510,
        kv(&[
            ("http.request.method", s("POST")),
            ("url.full", s("http://127.0.0.1:8080/v1/refunds")),
            ("http.request.header.idempotency_key", header("k-1")),
            ("error.type", s("ReadTimeout")),
        ]),
    );
    http1["events"] = read_timeout();
    http1["status"] = json!({"code": 2, "message": "ReadTimeout: Read timed out."});
    let http2 = span(
        TR,
        "00f067aa0ba902b2",
        Some("00f067aa0ba902b0"),
        "POST",
        3,
        2010,
        2100,
        kv(&[
            ("http.request.method", s("POST")),
            ("url.full", s("http://127.0.0.1:8080/v1/refunds")),
            ("http.request.header.idempotency_key", header("k-2")),
            ("http.response.status_code", json!({"intValue": "201"})),
        ]),
    );
    // An LLM call: CLIENT-kind, and here even with an HTTP method, a root inside the tool's
    // interval in the same resource. Never an attempt.
    let chat = span(
        TR2,
        "00f067aa0ba902b3",
        None,
        "chat gpt",
        3,
        600,
        700,
        kv(&[
            ("gen_ai.operation.name", s("chat")),
            ("http.request.method", s("POST")),
            ("server.address", s("api.openai.com")),
        ]),
    );
    let tool = span(
        TR,
        "00f067aa0ba902b0",
        Some("00f067aa0ba902aa"),
        "execute_tool issue_refund",
        1,
        500,
        2200,
        kv(&[
            ("gen_ai.operation.name", s("execute_tool")),
            ("gen_ai.tool.name", s("issue_refund")),
            (
                "gen_ai.tool.call.arguments",
                s(r#"{"order":"A-88214","amount_p":4500}"#),
            ),
        ]),
    );
    let root = span(
        TR,
        "00f067aa0ba902aa",
        None,
        "invoke_agent refunds",
        1,
        0,
        3000,
        kv(&[
            ("gen_ai.operation.name", s("invoke_agent")),
            ("gen_ai.conversation.id", s("conv-7f3a")),
        ]),
    );
    let text = [
        batch("i1", vec![http1]),
        batch("i1", vec![http2, chat]),
        batch("i1", vec![tool]),
    ]
    .join("\n");
    let root_file = batch("i1", vec![root]);
    let (spans, l) = linked(&[&text, &root_file]);
    let calls = tool_calls(&l);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].call.run, "conv-7f3a");
    assert_eq!(calls[0].call.step, 1, "the run's first tool span");
    assert_eq!(calls[0].tool, "issue_refund");
    assert_eq!(calls[0].args, json!({"order": "A-88214", "amount_p": 4500}));
    let a = attempts(&l);
    assert_eq!(a.len(), 2);
    assert_eq!((a[0].number, a[0].key.as_deref()), (1, Some("k-1")));
    assert_eq!((a[1].number, a[1].key.as_deref()), (2, Some("k-2")));
    assert_eq!(a[0].method.as_deref(), Some("POST"));
    assert_eq!(
        a[0].url.as_deref(),
        Some("http://127.0.0.1:8080/v1/refunds")
    );
    let outcomes: Vec<_> = events(&l)
        .into_iter()
        .filter_map(|e| match &e.kind {
            EventKind::Failure(f) => Some((f.attempt, f.class, f.error.clone())),
            EventKind::Response(r) => Some((r.attempt, r.class, r.status.to_string().into())),
            _ => None,
        })
        .collect();
    assert_eq!(
        outcomes,
        vec![
            (
                Some(1),
                FailureClass::Ambiguous,
                "requests.exceptions.ReadTimeout".into()
            ),
            (Some(2), FailureClass::Success, "201".into()),
        ]
    );
    // Each event points at the line of its span; the chat span produced none.
    for (i, e) in &l.events {
        assert_eq!(e.loc, spans[*i].loc);
        assert_ne!(spans[*i].name, "chat gpt");
    }
    let line_of = |name: &str| spans.iter().find(|s| s.name == name).unwrap().loc;
    assert_eq!(
        line_of("execute_tool issue_refund"),
        Loc { input: 0, line: 3 }
    );
    assert_eq!(line_of("invoke_agent refunds"), Loc { input: 1, line: 1 });
}

/// OpenInference (LangGraph): base64 ids, named enums, no `parentSpanId` on roots, the step
/// inside the JSON `metadata`, and HTTP spans as roots of their own traces, tied to the tool
/// only by time within the same resource. A pretty-printed document, to check span lines.
#[test]
fn openinference_roots_linked_by_time_in_one_resource() {
    let b64 = |hex: &str| {
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        base64(&bytes)
    };
    let mut tool = span(
        &b64(TR),
        &b64("1111111111111111"),
        Some(&b64("2222222222222222")),
        "issue_refund",
        1,
        100,
        3000,
        kv(&[
            ("openinference.span.kind", s("TOOL")),
            ("tool.name", s("issue_refund")),
            (
                "input.value",
                s(r#"{"order": "A-88214", "amount_p": 4500}"#),
            ),
            ("input.mime_type", s("application/json")),
            (
                "metadata",
                s(r#"{"thread_id": "t-1", "langgraph_step": 2, "langgraph_node": "tools"}"#),
            ),
        ]),
    );
    tool["kind"] = json!("SPAN_KIND_INTERNAL");
    let mut node = span(
        &b64(TR),
        &b64("2222222222222222"),
        None,
        "tools",
        1,
        90,
        3100,
        kv(&[
            ("openinference.span.kind", s("CHAIN")),
            ("session.id", s("t-1")),
        ]),
    );
    node.as_object_mut().unwrap().remove("parentSpanId");
    let http = |trace: &str, id: &str, start: i64, end: i64, status: Option<i64>| {
        let mut v = span(
            &b64(trace),
            &b64(id),
            None,
            "POST",
            3,
            start,
            end,
            kv(&[
                ("http.method", s("POST")),
                ("http.url", s("http://127.0.0.1:8080/v1/refunds")),
            ]),
        );
        v["kind"] = json!("SPAN_KIND_CLIENT");
        match status {
            Some(code) => v["attributes"]
                .as_array_mut()
                .unwrap()
                .push(json!({"key": "http.status_code", "value": {"intValue": code}})),
            None => {
                v["status"] = json!({"code": "STATUS_CODE_ERROR", "message": "ReadTimeout: Read timed out. (read timeout=1.0)"});
            }
        }
        v
    };
    let inside_1 = http(TR2, "3333333333333333", 200, 1200, None);
    let inside_2 = http(TR3, "4444444444444444", 1700, 1800, Some(201));
    let outside = http(
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "5555555555555555",
        2900,
        3200,
        Some(201),
    );
    let doc = json!({"resourceSpans": [
        {"resource": {"attributes": kv(&[("service.instance.id", s("proc-a"))])},
         "scopeSpans": [{"spans": [inside_1, inside_2, outside, tool, node]}]},
        // Another process's request in the same interval: not this tool's attempt.
        {"resource": {"attributes": kv(&[("service.instance.id", s("proc-b"))])},
         "scopeSpans": [{"spans": [http("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "6666666666666666", 300, 400, Some(201))]}]},
    ]});
    let text = serde_json::to_string_pretty(&doc).unwrap();
    assert_eq!(
        crate::ingest::source::detect(text.as_bytes(), &[]),
        Some(crate::ingest::Format::Otlp)
    );
    let (spans, l) = linked(&[&text]);
    let calls = tool_calls(&l);
    assert_eq!(calls.len(), 1);
    assert_eq!((calls[0].call.run.as_str(), calls[0].call.step), ("t-1", 2));
    assert_eq!(calls[0].args, json!({"order": "A-88214", "amount_p": 4500}));
    let a = attempts(&l);
    assert_eq!(
        a.len(),
        2,
        "two roots inside the tool's interval, same resource"
    );
    let attempt_spans: Vec<&str> = l
        .events
        .iter()
        .filter(|(_, e)| matches!(e.kind, EventKind::Attempt(_)))
        .map(|(i, _)| spans[*i].span_id.as_str())
        .collect();
    assert_eq!(attempt_spans, ["3333333333333333", "4444444444444444"]);
    let failure = events(&l).into_iter().find_map(|e| match &e.kind {
        EventKind::Failure(f) => Some(f.clone()),
        _ => None,
    });
    assert_eq!(
        failure.unwrap().class,
        FailureClass::Ambiguous,
        "from the ERROR status message"
    );
    // Ids were base64 and are hex now; spans sit on their own lines of the document.
    assert!(
        spans
            .iter()
            .all(|s| s.trace_id.len() == 32 && s.span_id.len() == 16)
    );
    let lines: Vec<u32> = spans.iter().map(|s| s.loc.line).collect();
    assert!(lines.windows(2).all(|w| w[0] < w[1]), "{lines:?}");
    let tool_line = text
        .lines()
        .position(|l| l.contains(&b64("1111111111111111")) && l.contains("\"spanId\""))
        .unwrap()
        + 1;
    assert_eq!(spans[3].loc.line as usize, tool_line);
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (*b as u32) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    while !out.len().is_multiple_of(4) {
        out.push('=');
    }
    out
}

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

#[test]
fn typed_attribute_values() {
    let attrs = kv(&[
        ("s", s("x")),
        ("i", json!({"intValue": "9007199254740993"})),
        ("d", json!({"doubleValue": 1.5})),
        ("b", json!({"boolValue": true})),
        (
            "a",
            json!({"arrayValue": {"values": [s("p"), {"intValue": "2"}]}}),
        ),
        (
            "k",
            json!({"kvlistValue": {"values": [{"key": "n", "value": {"intValue": 3}}]}}),
        ),
        ("empty", json!({})),
    ]);
    let got: Vec<(String, Value)> = attributes(attrs);
    let m: Map<String, Value> = got.into_iter().collect();
    assert_eq!(m["s"], json!("x"));
    assert_eq!(m["i"].as_i64(), Some(9_007_199_254_740_993));
    assert_eq!(m["d"].as_f64(), Some(1.5));
    assert_eq!(m["b"], json!(true));
    assert_eq!(m["a"], json!(["p", 2]));
    assert_eq!(m["k"], json!({"n": 3}));
    assert_eq!(m["empty"], Value::Null);
}

#[test]
fn ids_hex_or_base64() {
    assert_eq!(
        normalise_id("5B8EFFF798038103D269B633813FC60C", 16),
        "5b8efff798038103d269b633813fc60c"
    );
    assert_eq!(
        normalise_id("W47/95gDgQPSabYzgT/GDA==", 16),
        "5b8efff798038103d269b633813fc60c"
    );
    assert_eq!(
        normalise_id("AAAAAAAAAAE", 8),
        "0000000000000001",
        "unpadded base64"
    );
    assert_eq!(normalise_id("odd-id", 8), "odd-id");
}

/// A span missing one end of its interval is an instant at the other, whichever is
/// missing, and nothing is reported for it; a span with neither is skipped with its reason.
#[test]
fn a_span_missing_its_start_or_its_end_is_an_instant_at_the_other() {
    let at = |keep: &[&str]| {
        let mut v = span(TR, "5000000000000001", None, "x", 1, 10, 20, kv(&[]));
        for k in ["startTimeUnixNano", "endTimeUnixNano"] {
            if !keep.contains(&k) {
                v.as_object_mut().unwrap().remove(k);
            }
        }
        read(&batch("p", vec![v]), 0)
    };
    let ms = |n: i64| Timestamp(T0 + n * MS);
    for (keep, want) in [
        (&["endTimeUnixNano"][..], (ms(20), ms(20))),
        (&["startTimeUnixNano"][..], (ms(10), ms(10))),
        (
            &["startTimeUnixNano", "endTimeUnixNano"][..],
            (ms(10), ms(20)),
        ),
    ] {
        let p = at(keep);
        assert_eq!(p.stats.skipped, 0, "{keep:?}: {:?}", p.stats.problems);
        assert_eq!((p.spans[0].start, p.spans[0].end), want, "{keep:?}");
    }
    let neither = at(&[]);
    assert!(neither.spans.is_empty());
    assert_eq!(neither.stats.skipped, 1);
    assert_eq!(
        neither.stats.problems[0].reason,
        "span without startTimeUnixNano or endTimeUnixNano"
    );
}

/// Broken documents and spans are skipped with a reason; the rest is still read; every
/// unit is accounted for.
#[test]
fn bad_input_is_counted_never_dropped() {
    let good = batch(
        "p",
        vec![span(TR, "5000000000000001", None, "x", 1, 0, 1, kv(&[]))],
    );
    let no_trace = json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "5000000000000002", "startTimeUnixNano": "1"}]}]}]});
    let text = format!(
        "{good}\n\n{{\"resourceSpans\": [oops\n{no_trace}\n{{\"resourceSpans\":[]}}\n{{\"resourceSpans\": [{{\"scopeSpans\""
    );
    let p = read(&text, 0);
    assert_eq!(p.spans.len(), 1);
    let reasons: Vec<(u32, &str)> = p
        .stats
        .problems
        .iter()
        .map(|p| (p.line, p.reason.as_str()))
        .collect();
    assert_eq!(reasons.len(), 3, "{reasons:?}");
    assert_eq!(reasons[0].0, 3);
    assert!(
        reasons[0].1.starts_with("incomplete JSON document"),
        "{reasons:?}"
    );
    assert_eq!(reasons[1], (4, "span without traceId"));
    assert_eq!(reasons[2], (6, "incomplete JSON document at end of input"));
    // 1 span + blank line + 3 broken + 1 empty batch.
    assert_eq!(p.stats.lines, 6);
    assert_eq!(p.stats.ignored, 2);
    assert_eq!(p.stats.skipped, 3);
}

#[test]
fn duplicate_spans_and_parent_cycles() {
    let a = span(
        TR,
        "6000000000000001",
        Some("6000000000000002"),
        "a",
        1,
        0,
        10,
        kv(&[("openinference.span.kind", s("TOOL"))]),
    );
    let b = span(
        TR,
        "6000000000000002",
        Some("6000000000000001"),
        "b",
        1,
        0,
        10,
        kv(&[]),
    );
    let text = batch("p", vec![a.clone(), b, a]);
    let (_, l) = linked(&[&text]);
    assert_eq!(tool_calls(&l).len(), 1, "a span exported twice is one span");
    assert_eq!(l.used.iter().filter(|u| **u).count(), 1);
}

/// Braces and escaped quotes inside strings do not confuse the document scanner, and a
/// snake_case document (protobuf's field names) is read like a camelCase one.
#[test]
fn strings_with_braces_and_snake_case_fields() {
    let doc = json!({"resource_spans": [{"scope_spans": [{"spans": [{
        "trace_id": TR, "span_id": "7000000000000001", "name": "a } { \" ]", "kind": 3,
        "start_time_unix_nano": "1000", "end_time_unix_nano": 2000,
        "attributes": kv(&[("http.method", s("POST")), ("note", s("{\"unbalanced\": [")) ])
    }]}]}]})
    .to_string();
    assert_eq!(
        crate::ingest::source::detect(doc.as_bytes(), &[]),
        Some(crate::ingest::Format::Otlp)
    );
    let p = read(&format!("{doc}\n{doc}"), 0);
    assert_eq!(p.stats.skipped, 0, "{:?}", p.stats.problems);
    assert_eq!(p.spans.len(), 2);
    assert_eq!(p.spans[1].loc.line, 2);
    assert_eq!(
        (p.spans[0].start, p.spans[0].end),
        (Timestamp(1000), Timestamp(2000))
    );
    assert_eq!(p.spans[0].kind, SpanKind::Client);
}

/// A line that is JSON but no batch (a lone string) is skipped with its reason, and the batch
/// on the next line is read: it once stayed pending (no bracket seen) and swallowed the next.
#[test]
fn a_lone_json_value_is_skipped_and_the_next_batch_read() {
    let good = batch("i-1", vec![tool_span("8000000000000001")]);
    let p = read(&format!("\"x\"\n{good}\n"), 0);
    assert_eq!(p.spans.len(), 1);
    assert_eq!(p.stats.skipped, 1);
    assert_eq!(p.stats.problems[0].line, 1);
    assert!(
        p.stats.problems[0].reason.contains("resourceSpans"),
        "{:?}",
        p.stats.problems
    );
}

/// A document cut off by a crash mid-write ends where the next line opens a whole document,
/// in any spelling: the cut one is skipped with its line, the next ones read.
#[test]
fn a_whole_document_in_any_spelling_ends_a_cut_off_one() {
    let tool = |id: &str| {
        let s = tool_span(id);
        json!({"scopeSpans": [{"spans": [s]}]})
    };
    let snake = json!({"resource_spans": [tool("8100000000000001")]}).to_string();
    let spaced = json!({"resourceSpans": [tool("8100000000000002")]})
        .to_string()
        .replacen('{', "{ ", 1);
    let p = read(
        &format!("{{\"resource_spans\":[{{\"resource\":{{\n{snake}\n{spaced}\n"),
        0,
    );
    assert_eq!(p.spans.len(), 2, "{:?}", p.stats.problems);
    assert_eq!(p.stats.skipped, 1);
    assert_eq!(p.stats.problems[0].line, 1);
    assert!(
        p.stats.problems[0]
            .reason
            .starts_with("incomplete JSON document")
    );
    assert_eq!(p.stats.lines, 3);
}

/// A line inside a pretty-printed document that opens an object of its own (a span written
/// on one line) is part of that document, not a new one.
#[test]
fn an_object_line_inside_a_document_does_not_end_it() {
    let one = tool_span("8200000000000001");
    let text =
        format!("{{\"resourceSpans\": [{{\"scopeSpans\": [{{\"spans\": [\n{one}\n]}}]}}]}}\n");
    let p = read(&text, 0);
    assert_eq!(p.stats.skipped, 0, "{:?}", p.stats.problems);
    assert_eq!(p.spans.len(), 1);
}

/// A byte-order mark before a file's one document is no part of it: the document, and so
/// every span of the file, is read. Before a later line the mark is that line's and breaks it.
#[test]
fn a_byte_order_mark_before_the_first_document_is_not_part_of_it() {
    let doc = |id: &str| batch("i-1", vec![tool_span(id)]);
    let (a, b) = (doc("8300000000000001"), doc("8300000000000002"));
    let p = read(&format!("\u{feff}{a}\n{b}\n"), 0);
    assert_eq!(
        (p.spans.len(), p.stats.skipped),
        (2, 0),
        "{:?}",
        p.stats.problems
    );
    let p = read(&format!("{a}\n\u{feff}{b}\n"), 0);
    assert_eq!((p.spans.len(), p.stats.skipped), (1, 1));
    assert_eq!(p.stats.problems[0].line, 2);
}

/// The agent's tool, its two requests to the payments service (a read timeout, then 201),
/// and what the payments service traced of the first: the SERVER span that took it and its
/// own request to its provider, keyed and answered 200.
fn agent_and_payments_spans() -> (Vec<Value>, Vec<Value>) {
    let tool = span(
        TR,
        "9100000000000001",
        None,
        "execute_tool issue_refund",
        1,
        0,
        3000,
        kv(&[
            ("gen_ai.operation.name", s("execute_tool")),
            ("gen_ai.tool.name", s("issue_refund")),
        ]),
    );
    let post = |url: &str| vec![("http.request.method", s("POST")), ("url.full", s(url))];
    let mut h1 = span(
        TR,
        "9100000000000002",
        Some("9100000000000001"),
        "POST",
        3,
        100,
        1100,
        kv(&post("https://pay/v1/refunds")),
    );
    h1["events"] = read_timeout();
    h1["status"] = json!({"code": 2});
    let mut ok = post("https://pay/v1/refunds");
    ok.push(("http.response.status_code", json!({"intValue": "201"})));
    let h2 = span(
        TR,
        "9100000000000003",
        Some("9100000000000001"),
        "POST",
        3,
        2000,
        2100,
        kv(&ok),
    );
    let server = span(
        TR,
        "9100000000000004",
        Some("9100000000000002"),
        "POST /v1/refunds",
        2,
        110,
        900,
        kv(&[("http.request.method", s("POST"))]),
    );
    let mut provider = post("https://psp/v1/refunds");
    provider.push(("http.response.status_code", json!({"intValue": "200"})));
    provider.push((
        "http.request.header.idempotency-key",
        json!({"arrayValue": {"values": [s("psp-k1")]}}),
    ));
    let psp = span(
        TR,
        "9100000000000005",
        Some("9100000000000004"),
        "POST",
        3,
        120,
        800,
        kv(&provider),
    );
    (vec![tool, h1, h2], vec![server, psp])
}

/// What each attempt was: its URL, key and outcome.
fn attempt_outcomes(l: &Linked) -> Vec<String> {
    events(l)
        .into_iter()
        .filter_map(|e| match &e.kind {
            EventKind::Attempt(a) => Some(format!("#{} {:?} {:?}", a.number, a.url, a.key)),
            EventKind::Response(r) => Some(format!("{} {:?}", r.status, r.class)),
            EventKind::Failure(f) => Some(format!("{} {:?}", f.error, f.class)),
            _ => None,
        })
        .collect()
}

/// A service traced in the same trace (a Collector gathering both): the SERVER span that
/// took the agent's request, and the requests it made itself, are the service's. The
/// agent's attempts are what the agent alone gave, whether the service shares its process
/// or not; the service's spans alone give no attempt.
#[test]
fn a_services_own_requests_under_its_server_span_are_no_attempts_of_the_agent() {
    let (agent, payments) = agent_and_payments_spans();
    let (_, alone) = linked(&[&batch("agent", agent.clone())]);
    let want = attempt_outcomes(&alone);
    assert_eq!(want.len(), 4, "{want:?}");
    assert!(
        want[0].contains("pay/v1/refunds") && want[1].contains("Ambiguous"),
        "{want:?}"
    );
    let (_, apart) = linked(&[
        &batch("agent", agent.clone()),
        &batch("payments", payments.clone()),
    ]);
    assert_eq!(attempt_outcomes(&apart), want);
    let (_, one_process) = linked(&[&batch("agent", [agent, payments.clone()].concat())]);
    assert_eq!(attempt_outcomes(&one_process), want);
    let (_, service_only) = linked(&[&batch("payments", payments)]);
    assert!(attempt_outcomes(&service_only).is_empty());
}

/// A `requests` span whose urllib3 retried inside it: the wrapper's final 200 is the second
/// inner attempt's; the first keeps its own read timeout. An inner span that recorded no
/// outcome takes the wrapper's.
#[test]
fn an_attempts_own_outcome_wins_over_its_wrappers() {
    let tool = span(
        TR,
        "9200000000000001",
        None,
        "execute_tool t",
        1,
        0,
        3000,
        kv(&[
            ("gen_ai.operation.name", s("execute_tool")),
            ("gen_ai.tool.name", s("issue_refund")),
        ]),
    );
    let post = |status: Option<&str>| {
        let mut attrs = vec![("http.request.method", s("POST"))];
        if let Some(code) = status {
            attrs.push(("http.response.status_code", json!({"intValue": code})));
        }
        kv(&attrs)
    };
    let wrapper = |status| {
        span(
            TR,
            "9200000000000002",
            Some("9200000000000001"),
            "POST",
            3,
            10,
            2900,
            post(status),
        )
    };
    let mut timed_out = span(
        TR,
        "9200000000000003",
        Some("9200000000000002"),
        "POST",
        3,
        20,
        1100,
        post(None),
    );
    timed_out["events"] = read_timeout();
    timed_out["status"] = json!({"code": 2});
    let answered = span(
        TR,
        "9200000000000004",
        Some("9200000000000002"),
        "POST",
        3,
        2000,
        2800,
        post(Some("200")),
    );
    let (_, l) = linked(&[&batch(
        "p",
        vec![tool.clone(), wrapper(Some("200")), timed_out, answered],
    )]);
    let got = attempt_outcomes(&l);
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(got[1], "requests.exceptions.ReadTimeout Ambiguous");
    assert_eq!(got[3], "200 Success");
    let silent = span(
        TR,
        "9200000000000003",
        Some("9200000000000002"),
        "POST",
        3,
        20,
        1100,
        post(None),
    );
    let (_, l) = linked(&[&batch("p", vec![tool, wrapper(Some("503")), silent])]);
    assert_eq!(attempt_outcomes(&l)[1], "503 Ambiguous");
}

/// A Collector's file exporter in several pipelines writes metrics and logs documents beside
/// the spans: they are valid and carry no spans, so they are ignored, not skipped. A JSON
/// document of no signal at all is still skipped.
#[test]
fn other_signals_documents_are_ignored_and_no_signal_is_skipped() {
    let spans = batch("i-1", vec![tool_span("9300000000000001")]);
    let metrics = json!({"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"name": "m"}]}]}]});
    let logs = json!({"resource_logs": [{"scope_logs": []}]});
    let p = read(
        &format!("{metrics}\n{spans}\n{logs}\n{{\"resourceMetricz\": []}}\n"),
        0,
    );
    assert_eq!(p.spans.len(), 1);
    assert_eq!((p.stats.lines, p.stats.ignored, p.stats.skipped), (4, 2, 1));
    assert_eq!(p.stats.problems[0].line, 4);
    // A metrics line after a cut-off document ends it too.
    let p = read(&format!("{{\"resourceSpans\": [\n{metrics}\n{spans}\n"), 0);
    assert_eq!((p.spans.len(), p.stats.ignored, p.stats.skipped), (1, 1, 1));
}

/// One invalid byte in an attribute is replaced, not fatal (SPEC §9): the batch's spans are
/// read, on one line and pretty-printed over many; a batch that is no JSON still is not.
#[test]
fn invalid_utf8_in_a_batch_is_replaced() {
    let one_line = batch("inst-\u{e9}", vec![tool_span("9000000000000001")]);
    let pretty =
        serde_json::to_string_pretty(&serde_json::from_str::<Value>(&one_line).unwrap()).unwrap();
    for text in [one_line, pretty] {
        let bytes = text.replacen("\u{e9}", "\u{1}", 1).into_bytes();
        // `\u{1}` stands in for the lone byte: a JSON string cannot hold a raw control
        // character, so replace it by a byte that is no UTF-8 of its own (0xE9).
        let bytes: Vec<u8> = bytes
            .iter()
            .map(|&b| if b == 1 { 0xE9 } else { b })
            .collect();
        assert!(std::str::from_utf8(&bytes).is_err());
        let p = parse(&mut &bytes[..], 0, &ParseOptions::default()).unwrap();
        assert_eq!(p.stats.skipped, 0, "{:?}", p.stats.problems);
        assert_eq!(p.spans.len(), 1);
    }
    let broken = b"{\"resourceSpans\": [\xE9\n";
    let p = parse(&mut &broken[..], 0, &ParseOptions::default()).unwrap();
    assert_eq!(
        (p.spans.len(), p.stats.skipped),
        (0, 1),
        "{:?}",
        p.stats.problems
    );
}
