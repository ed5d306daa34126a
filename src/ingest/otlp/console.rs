//! The OpenTelemetry Python SDK's `ConsoleSpanExporter`, the usual way to get spans into a
//! file without a collector: each span as `ReadableSpan.to_json()` writes it, pretty-printed
//! one after another (the default) or one to a line (`to_json(indent=None)`):
//! `{"name", "context": {"trace_id": "0x…", "span_id"}, "kind": "SpanKind.CLIENT",
//! "parent_id", "start_time": "…Z", "end_time", "status": {"status_code", "description"},
//! "attributes": {…}, "events": [{"name", "timestamp", "attributes"}], "resource":
//! {"attributes": {…}}}`. It holds what an OTLP/JSON span holds, with plain JSON values
//! and ISO 8601 times, so it is read into the same [`Span`] and linked with the others.

use super::{Span, SpanEvent, Spans, identity_of, members_of, normalise_id, span_kind_name};
use crate::event::Loc;
use crate::time::Timestamp;
use serde_json::{Map, Value};

/// Whether a document is such a span: a name, a context with a trace or span id, and a
/// `SpanKind.` kind (a span missing an id is still one, skipped with why). A logger's record
/// with a `name` and a trace `context` (Bunyan-style) has no kind.
pub(super) fn is_span(doc: &Value) -> bool {
    let context = doc.get("context");
    let kind = doc.get("kind").and_then(Value::as_str);
    doc.get("name").is_some_and(Value::is_string)
        && context.is_some_and(|c| c.get("trace_id").is_some() || c.get("span_id").is_some())
        && kind.is_some_and(|k| k.starts_with("SpanKind."))
}

/// Whether the head of a file holds the exporter's output: a span pretty-printed (`{` at
/// the margin, then `"name": …` and the context's `"trace_id": "0x…"` indented below), or
/// one on a line. The exporter writes to standard output by default, so the program's own
/// lines may come before it.
pub fn looks_like(head: &[u8]) -> bool {
    let lines: Vec<&[u8]> = (head.split(|&b| b == b'\n'))
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.trim_ascii().is_empty())
        .collect();
    lines.iter().enumerate().any(|(i, &line)| match line {
        b"{" => {
            let below = |k: usize| lines.get(i + k).map(|l| l.trim_ascii());
            below(1).is_some_and(|l| l.starts_with(b"\"name\":"))
                && (2..5).any(|k| below(k).is_some_and(|l| l.starts_with(b"\"trace_id\": \"0x")))
        }
        // One to a line, `name` first, or after a container runtime's stamp.
        _ if line.starts_with(b"{\"") && memchr::memmem::find(line, b"\"context\"").is_some() => {
            serde_json::from_slice::<Value>(line).is_ok_and(|doc| is_span(&doc))
        }
        _ => false,
    })
}

/// Reads one span into `out`: the span, or why it is skipped, at `line` (its first).
pub(super) fn read(doc: Value, line: u32, input: u32, out: &mut Spans) {
    out.stats.lines += 1;
    out.push_read(span(doc, Loc { input, line }), line);
}

fn span(doc: Value, loc: Loc) -> Result<Span, &'static str> {
    let Value::Object(mut obj) = doc else {
        return Err("span is not an object");
    };
    let context = obj.get("context");
    let id = |v: Option<&Value>, bytes| {
        let text = v?.as_str()?.trim();
        let hex = text.strip_prefix("0x").unwrap_or(text);
        (!hex.is_empty()).then(|| normalise_id(hex, bytes))
    };
    let trace_id =
        id(context.and_then(|c| c.get("trace_id")), 16).ok_or("span without trace_id")?;
    let span_id = id(context.and_then(|c| c.get("span_id")), 8).ok_or("span without span_id")?;
    let parent_id = id(obj.get("parent_id"), 8);
    let (start, end, bad_time) = interval(&obj)?;
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let kind = span_kind_name(kind.strip_prefix("SpanKind.").unwrap_or(kind));
    let status = obj.get("status");
    let text_of = |key| status.and_then(|s| s.get(key)).and_then(Value::as_str);
    let error = text_of("status_code").is_some_and(|c| c.eq_ignore_ascii_case("ERROR"));
    let status_message = text_of("description").unwrap_or_default().to_string();
    let name = obj.get("name").and_then(Value::as_str).unwrap_or_default();
    let name = name.to_string();
    let attrs = members_of(obj.remove("attributes"));
    let events = match obj.remove("events") {
        Some(Value::Array(events)) => events.into_iter().filter_map(|e| event(e, end)).collect(),
        _ => Vec::new(),
    };
    // `{"attributes": {...}, "schema_url": ""}`; the SDKs up to 1.11 wrote the attributes
    // themselves.
    let resource = obj
        .remove("resource")
        .map(|mut r| match r.get_mut("attributes") {
            Some(attributes) => attributes.take(),
            None => r,
        });
    Ok(Span {
        loc,
        trace_id,
        span_id,
        parent_id,
        name,
        kind,
        start: Timestamp(start),
        end: Timestamp(end),
        bad_time,
        error,
        status_message,
        attrs,
        events,
        headers_captured: false,
        resource: identity_of(members_of(resource)),
    })
}

/// The span's start and end, as [`super::interval`] reads OTLP's: one missing is an instant
/// at the other, an end before the start the start.
fn interval(obj: &Map<String, Value>) -> Result<(i64, i64, Option<&'static str>), &'static str> {
    let time = |key| obj.get(key).and_then(Value::as_str).and_then(nanos);
    match (time("start_time"), time("end_time")) {
        (Some(start), Some(end)) if end >= start => Ok((start, end, None)),
        (Some(start), Some(_)) => Ok((start, start, Some("ends before it starts"))),
        (Some(start), None) => Ok((start, start, Some("has no end_time"))),
        (None, Some(end)) => Ok((end, end, Some("has no start_time"))),
        (None, None) => Err("span without start_time or end_time"),
    }
}

/// `2026-12-07T00:22:20.165067Z` (`ns_to_iso_str`), or any RFC 3339 time, in nanoseconds.
fn nanos(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text.trim())
        .ok()?
        .timestamp_nanos_opt()
}

/// An event, at the span's end when its time is unreadable (as OTLP's are).
fn event(mut e: Value, end: i64) -> Option<SpanEvent> {
    let name = e.get("name")?.as_str()?.to_string();
    let at = e.get("timestamp").and_then(Value::as_str).and_then(nanos);
    let attrs = members_of(e.get_mut("attributes").map(Value::take));
    Some(SpanEvent {
        name,
        at: Timestamp(at.unwrap_or(end)),
        attrs,
    })
}

#[cfg(test)]
mod tests;
