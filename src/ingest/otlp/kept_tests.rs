//! A span keeps only the attributes and events the conventions read
//! ([`conventions::keep_what_is_read`]).

use super::link::link;
use super::tests::{T0, TR, batch, kv, read, s, span};
use super::*;
use serde_json::json;

/// Every span of `text`'s documents as read, before [`conventions::keep_what_is_read`].
fn spans_whole(text: &str, input: u32) -> Vec<Span> {
    let mut spans = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let mut doc: Value = serde_json::from_str(line).unwrap();
        let batches = field_mut(&mut doc, "resourceSpans", "resource_spans").unwrap();
        for mut rs in into_array(std::mem::take(batches)).unwrap() {
            let resource = resource_identity(&mut rs);
            let scopes = field_mut(&mut rs, "scopeSpans", "scope_spans").map(std::mem::take);
            for mut scope in scopes.and_then(into_array).unwrap() {
                let raw = field_mut(&mut scope, "spans", "spans").map(std::mem::take);
                for raw in raw.and_then(into_array).unwrap() {
                    let loc = Loc {
                        input,
                        line: n as u32 + 1,
                    };
                    spans.push(read_span(raw, loc, &resource).unwrap());
                }
            }
        }
    }
    spans
}

/// Spans keep only what the conventions read: linking the real frameworks' traces and a
/// batch of every convention's shapes (below) gives the same events from the kept attributes as from
/// all of them, while most attributes (prompts, outputs, token counts) are dropped.
#[test]
fn spans_keep_every_attribute_linking_reads() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut traces: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("otlp-")
        })
        // The console exporter's spans are read into the same spans and trimmed by the same
        // call; this reads OTLP batches.
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("otlp-console-")
        })
        .map(|p| std::fs::read_to_string(p.join("trace.jsonl")).unwrap())
        .collect();
    assert!(traces.len() >= 30, "the real frameworks' traces");
    traces.push(every_convention_batch());
    let (mut all, mut kept) = (0, 0);
    for text in &traces {
        let whole = spans_whole(text, 0);
        let mut trimmed = whole.clone();
        for s in &mut trimmed {
            conventions::keep_what_is_read(s);
        }
        all += whole.iter().map(|s| s.attrs.len()).sum::<usize>();
        kept += trimmed.iter().map(|s| s.attrs.len()).sum::<usize>();
        let (a, b) = (link(&whole), link(&trimmed));
        assert!(!a.events.is_empty());
        assert_eq!(a.used, b.used);
        assert_eq!(format!("{:?}", a.events), format!("{:?}", b.events));
    }
    assert!(kept * 2 < all, "kept {kept} attributes of {all}");
}

/// A batch with one span of each convention's tool, LLM and HTTP shapes.
fn every_convention_batch() -> String {
    let spans = vec![
        span(
            TR,
            "a000000000000001",
            None,
            "agent",
            1,
            0,
            900,
            kv(&[
                ("gen_ai.conversation.id", s("run-1")),
                ("metadata", s(r#"{"thread_id":"t-9","langgraph_step":3}"#)),
            ]),
        ),
        span(
            TR,
            "a000000000000002",
            Some("a000000000000001"),
            "execute_tool issue_refund",
            1,
            10,
            800,
            kv(&[
                ("gen_ai.operation.name", s("execute_tool")),
                ("gen_ai.tool.name", s("issue_refund")),
                (
                    "gen_ai.tool.call.arguments",
                    s(r#"{"order":"A-1","amount":100}"#),
                ),
                ("agent.step", json!({"intValue": "4"})),
            ]),
        ),
        span(
            TR,
            "a000000000000003",
            Some("a000000000000002"),
            "POST",
            3,
            20,
            700,
            kv(&[
                ("http.request.method", s("POST")),
                ("url.full", s("https://pay.example/v1/refunds")),
                ("http.response.status_code", json!({"intValue": "201"})),
                (
                    "http.request.header.idempotency-key",
                    json!({"arrayValue": {"values": [s("k-1")]}}),
                ),
                ("http.request.body.size", json!({"intValue": "120"})),
            ]),
        ),
        span(
            TR,
            "a000000000000004",
            Some("a000000000000001"),
            "chat",
            3,
            5,
            9,
            kv(&[
                ("gen_ai.operation.name", s("chat")),
                ("http.request.method", s("POST")),
                ("gen_ai.prompt", s("refund order A-1 please")),
            ]),
        ),
        span(
            TR,
            "a000000000000005",
            Some("a000000000000001"),
            "lookup.tool",
            1,
            810,
            890,
            kv(&[
                ("traceloop.span.kind", s("tool")),
                (
                    "traceloop.entity.input",
                    s(r#"{"inputs":{"order":"A-1"},"tags":[]}"#),
                ),
                ("traceloop.association.properties.thread_id", s("t-10")),
            ]),
        ),
    ];
    batch("i-1", spans)
}

/// An LLM span's prompt, output and message events, a tool span's unread attributes and a
/// span's events other than exceptions are not held; a tool span's arguments and exceptions
/// are.
#[test]
fn prompts_and_outputs_are_not_held() {
    let prompt = "x".repeat(100_000);
    let mut llm = span(
        TR,
        "b000000000000002",
        Some("b000000000000001"),
        "chat",
        3,
        5,
        9,
        kv(&[
            ("gen_ai.operation.name", s("chat")),
            ("input.value", s(&prompt)),
            ("output.value", s(&prompt)),
        ]),
    );
    llm["events"] = json!([
        {"name": "gen_ai.content.prompt", "timeUnixNano": T0.to_string(),
         "attributes": kv(&[("gen_ai.prompt", s(&prompt))])},
        {"name": "gen_ai.tool.message", "timeUnixNano": T0.to_string(),
         "attributes": kv(&[("content", s(&prompt))])},
        {"name": "exception", "timeUnixNano": T0.to_string(),
         "attributes": kv(&[("exception.type", s("ReadTimeout")),
                            ("exception.stacktrace", s(&prompt))])},
    ]);
    let tool = span(
        TR,
        "b000000000000001",
        None,
        "refund",
        1,
        0,
        10,
        kv(&[
            ("openinference.span.kind", s("TOOL")),
            ("input.value", s(r#"{"order":"A-1"}"#)),
            ("llm.token_count.total", json!({"intValue": "12"})),
        ]),
    );
    let p = read(&batch("i-1", vec![tool, llm]), 0);
    let names = |s: &Span| s.attrs.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&p.spans[0]),
        ["openinference.span.kind", "input.value"]
    );
    assert_eq!(names(&p.spans[1]), ["gen_ai.operation.name"]);
    let events = &p.spans[1].events;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].name, "exception");
    assert_eq!(events[0].attrs.len(), 1);
    assert_eq!(events[0].attr_str("exception.type"), Some("ReadTimeout"));
}
