//! Hand-written OTLP documents, one per convention, shaped like what each producer writes
//! (the generated fixtures under `fixtures/otlp-*` are the real thing; see tests/otlp.rs).

use super::link::{Linked, link};
use super::*;
use crate::classify::FailureClass;
use crate::event::{Event, EventKind};
use serde_json::json;

mod attempts;
mod conventions;
mod damaged;
mod frameworks;
mod values;

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
