//! The OpenTelemetry JavaScript SDK's `ConsoleSpanExporter`: each span printed to standard
//! output by `console.dir(…, { depth: 3 })`, Node's `util.inspect` rendering of
//! `{ resource: { attributes }, instrumentationScope, traceId, parentSpanContext, traceState,
//! name, id, kind, timestamp, duration, attributes, status, events, links }`, a member a line
//! from a `{` at the margin to a `}` at the margin. Node users keep it by redirecting the
//! program's output to a file, so other lines may stand between the spans: they are
//! ignored. Each span is read into the same [`Span`] as OTLP's and linked with the others.
//!
//! Its numbers are the SDK's own: `kind` is JavaScript's `SpanKind` (0 internal, 1 server,
//! 2 client, 3 producer, 4 consumer: one less than OTLP's), `timestamp` and `duration` are
//! microseconds, an event's `time` is `[seconds, nanoseconds]`; the 1.x SDKs wrote
//! `parentId` where 2.x writes `parentSpanContext`.

use super::{Span, SpanEvent, SpanKind, Spans, identity_of, members_of, normalise_id};
use crate::event::Loc;
use crate::ingest::lines::for_each_line_at;
use crate::ingest::node_console::inspect;
use crate::ingest::{InputStats, Parsed};
use crate::time::Timestamp;
use serde_json::Value;
use std::io::{self, Read};
use std::sync::Arc;

/// The members every span of the exporter has, at the first level of its object (a
/// program's own object with an id, a kind and a time has not all of them).
const MEMBERS: [&[u8]; 8] = [
    b"traceId: ",
    b"id: ",
    b"kind: ",
    b"timestamp: ",
    b"duration: ",
    b"status: {",
    b"events: [",
    b"links: [",
];

/// A span's lines are kept up to this many bytes (its attributes may hold a prompt): a
/// runaway object must not hold the file in memory.
const MAX_SPAN: usize = 4 << 20;

/// Whether the head of a file holds the exporter's output: an object opened at the margin
/// whose first-level members (two blanks in) include a span's ids, kind and times. Other
/// output may come before it.
pub fn looks_like(head: &[u8]) -> bool {
    let mut found = [false; MEMBERS.len()];
    let mut inside = false;
    for line in head.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line == b"{" {
            (inside, found) = (true, [false; MEMBERS.len()]);
        } else if line == b"}" && inside {
            if found.iter().all(|&f| f) {
                return true;
            }
            inside = false;
        } else if inside && let Some(member) = first_level(line) {
            for (f, m) in found.iter_mut().zip(MEMBERS) {
                *f |= member.starts_with(m);
            }
        }
    }
    // A head that ends inside the first span (a file cut short, a span longer than the
    // head) shows at least its ids, kind and times, printed before the rest.
    inside && found[..5].iter().all(|&f| f)
}

/// A member two blanks in: a member of the printed object itself.
fn first_level(line: &[u8]) -> Option<&[u8]> {
    let member = line.strip_prefix(b"  ")?;
    (!member.starts_with(b" ")).then_some(member)
}

/// Reads the spans of one input; every other line is ignored.
pub(super) fn parse(reader: &mut dyn Read, input: u32) -> io::Result<Parsed> {
    let mut out = Spans::default();
    let mut open: Option<(u32, String)> = None;
    let mut notes = crate::ingest::lines::LineNotes::default();
    for_each_line_at(reader, &mut notes, |n, _, bytes| {
        let line = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        match open.as_mut() {
            // A span printed straight after output that ended no line (`process.stdout.write`):
            // its `{` ends the program's line. A class instance (`Refund {`) opens the same way.
            None if line.ends_with(b"{") => open = Some((n, String::from("{"))),
            None => ignored(&mut out.stats),
            // util.inspect indents what is inside an object: a `{` at the margin is the next
            // one, and the one open was cut off (a killed process, a truncated print).
            Some((first, _)) if line == b"{" => {
                out.stats.lines += 1;
                out.stats
                    .skip(*first, "a span not closed before the next one");
                open = Some((n, String::from("{")));
            }
            Some((first, text)) => {
                if text.len() + line.len() > MAX_SPAN {
                    out.stats.lines += 1;
                    out.stats.skip(*first, "a span over 4 MiB: read no further");
                    open = None;
                    return;
                }
                text.push('\n');
                text.push_str(&String::from_utf8_lossy(line));
                if line == b"}" {
                    let (first, text) = open.take().expect("a span is open");
                    read(&text, first, input, &mut out);
                }
            }
        }
    })?;
    if let Some((first, _)) = open {
        out.stats.lines += 1;
        out.stats
            .skip(first, "a span not closed by the end of the input");
    }
    notes.add_to(&mut out.stats);
    Ok(Parsed {
        spans: out.spans,
        stats: out.stats,
        ..Parsed::default()
    })
}

fn ignored(stats: &mut InputStats) {
    stats.lines += 1;
    stats.ignored += 1;
}

/// One printed object: a span, skipped with why when it is not one, or ignored when it is
/// some other object the program printed.
fn read(text: &str, line: u32, input: u32, out: &mut Spans) {
    out.stats.lines += 1;
    let Some((object, cuts)) = inspect::as_value_noting_cuts(text) else {
        return out
            .stats
            .skip(line, "not an object as util.inspect prints one");
    };
    // Some other object the program printed (a refund row with its own `id`): no trace id
    // and no span's times.
    let span_shaped = object.get("timestamp").is_some() && object.get("duration").is_some();
    if object.get("traceId").is_none() && !span_shaped {
        out.stats.ignored += 1;
        return;
    }
    let name = object
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string);
    let span = span(object, Loc { input, line });
    if span.is_ok()
        && let Some(first) = cuts.first()
    {
        let at = line + text[..first.at].bytes().filter(|&b| b == b'\n').count() as u32;
        out.stats
            .warn(at, cut_values(name.as_deref().unwrap_or_default(), &cuts));
    }
    out.push_read(span, line);
}

/// Why a span is read without the values util.inspect cut at the exporter's depth.
fn cut_values(span: &str, cuts: &[inspect::Cut]) -> String {
    const NAMED: usize = 3;
    let named: Vec<String> = (cuts.iter().take(NAMED))
        .map(|c| format!("`{}` as {}", c.path, c.mark))
        .collect();
    let (more, held) = match cuts.len().saturating_sub(NAMED) {
        0 if cuts.len() == 1 => (String::new(), "what it held is"),
        0 => (String::new(), "what they held is"),
        n => (format!(" and {n} more"), "what they held is"),
    };
    format!(
        "span `{span}`: {}{more} printed past the depth the exporter prints (console.dir's \
         depth 3): {held} not in the file, read as unknown",
        named.join(", ")
    )
}

fn span(mut obj: Value, loc: Loc) -> Result<Span, &'static str> {
    let id = |v: Option<&Value>, bytes| {
        let text = v?.as_str()?.trim();
        (!text.is_empty()).then(|| normalise_id(text, bytes))
    };
    let trace_id = id(obj.get("traceId"), 16).ok_or("span without traceId")?;
    let span_id = id(obj.get("id"), 8).ok_or("span without id")?;
    let parent = obj.get("parentSpanContext").and_then(|p| p.get("spanId"));
    let parent_id = id(parent.or_else(|| obj.get("parentId")), 8);
    let micros = |key| {
        obj.get(key)
            .and_then(Value::as_f64)
            .and_then(nanos_of_micros)
    };
    let start = micros("timestamp").ok_or("span without timestamp")?;
    let (end, bad_time) = match micros("duration") {
        Some(d) if d >= 0 => (start.saturating_add(d), None),
        Some(_) => (start, Some("ends before it starts")),
        None => (start, Some("has no duration")),
    };
    let kind = match obj.get("kind").and_then(Value::as_i64) {
        Some(0) => SpanKind::Internal,
        Some(1) => SpanKind::Server,
        Some(2) => SpanKind::Client,
        Some(3) => SpanKind::Producer,
        Some(4) => SpanKind::Consumer,
        _ => SpanKind::Unspecified,
    };
    let status = obj.get("status");
    let error = status.and_then(|s| s.get("code")).and_then(Value::as_i64) == Some(2);
    let status_message = (status
        .and_then(|s| s.get("message"))
        .and_then(Value::as_str))
    .unwrap_or_default()
    .to_string();
    let name = obj.get("name").and_then(Value::as_str).unwrap_or_default();
    let name = name.to_string();
    let events = match obj.get_mut("events").map(Value::take) {
        Some(Value::Array(events)) => events.into_iter().filter_map(|e| event(e, end)).collect(),
        _ => Vec::new(),
    };
    let attrs = members_of(obj.get_mut("attributes").map(Value::take));
    // The 1.x SDKs before about 1.25 print no resource: the file is then the process (two
    // workers' outputs are not one process's, to be linked by time).
    let resource = match obj
        .get_mut("resource")
        .and_then(|r| r.get_mut("attributes"))
    {
        Some(attributes) => identity_of(members_of(Some(attributes.take()))),
        None => Arc::from(format!("input:{}", loc.input)),
    };
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
        resource,
    })
}

/// Microseconds (a float: a duration has fractions) in nanoseconds. The whole
/// microseconds are multiplied as an integer: a time since the epoch in nanoseconds is
/// past what a float holds exactly.
fn nanos_of_micros(micros: f64) -> Option<i64> {
    if !micros.is_finite() || micros.abs() >= 9e15 {
        return None;
    }
    let whole = micros.trunc() as i64;
    Some(whole * 1_000 + (micros.fract() * 1_000.0).round() as i64)
}

/// An event at its `time`, `[seconds, nanoseconds]`; at the span's end when it has none.
fn event(mut e: Value, end: i64) -> Option<SpanEvent> {
    let name = e.get("name")?.as_str()?.to_string();
    let time = e.get("time").and_then(Value::as_array);
    let part = |i: usize| time.and_then(|t| t.get(i)).and_then(Value::as_i64);
    let at = match (part(0), part(1)) {
        (Some(s), Some(ns)) => s.saturating_mul(1_000_000_000).saturating_add(ns),
        _ => end,
    };
    Some(SpanEvent {
        name,
        at: Timestamp(at),
        attrs: members_of(e.get_mut("attributes").map(Value::take)),
    })
}

#[cfg(test)]
mod tests;
