//! OTLP/JSON traces (SPEC §3.4): one `{"resourceSpans":[...]}` document (compact or
//! pretty-printed) or JSON Lines of them, one per export batch. This module only reads spans;
//! a trace's spans are spread over lines and files and children come before their parents, so
//! they are turned into events by [`link`] once every input has been read.
//!
//! Liberal in what it accepts: ids in hex (the OTLP/JSON rule) or base64 (the protobuf JSON
//! mapping), enums as integers or names, 64-bit integers as strings or numbers, camelCase or
//! snake_case field names, typed attribute values including arrays and kvlists.
//!
//! Accounting is per span, not per line (one line holds a whole batch): every span counts
//! once, as `skipped` when linking could not use it whole (a tool span with unusable
//! times), else `events` when linking turned it into events and `ignored` otherwise; blank
//! lines and documents without spans are `ignored`, broken documents and spans `skipped`, so
//! that `lines = events + ignored + skipped` still holds.

pub mod console;
pub mod console_js;
pub mod conventions;
pub mod link;
mod parts;
pub mod preamble;
mod processes;
mod reading;
mod unreadable;

use super::{InputStats, ParseOptions, Parsed};
use crate::event::Loc;
use crate::time::Timestamp;
use serde_json::{Map, Value};
use std::io::{self, Read};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    Unspecified,
    Internal,
    Server,
    Client,
    Producer,
    Consumer,
}

/// One span, with what linking needs and nothing of the document around it.
#[derive(Clone, Debug)]
pub struct Span {
    pub loc: Loc,
    /// Lower-case hex, whatever the input used.
    pub trace_id: String,
    pub span_id: String,
    pub parent_id: Option<String>,
    pub name: String,
    pub kind: SpanKind,
    pub start: Timestamp,
    pub end: Timestamp,
    /// What was wrong with the span's times when its interval is not what it wrote (a time
    /// missing, or an end before the start): it is then an instant ([`interval`]).
    pub bad_time: Option<&'static str>,
    /// Status `ERROR`.
    pub error: bool,
    pub status_message: String,
    /// Attribute values as plain JSON (`{"stringValue":"x"}` → `"x"`).
    pub attrs: Vec<(String, Value)>,
    pub events: Vec<SpanEvent>,
    /// It recorded a request header (`http.request.header.*`), kept when the headers
    /// themselves are dropped: a key missing from such a span is known to be missing.
    pub headers_captured: bool,
    /// The resource that emitted it: `service.instance.id`, else all its attributes.
    pub resource: Arc<str>,
}

#[derive(Clone, Debug)]
pub struct SpanEvent {
    pub name: String,
    pub at: Timestamp,
    pub attrs: Vec<(String, Value)>,
}

impl Span {
    pub fn attr(&self, key: &str) -> Option<&Value> {
        find(&self.attrs, key)
    }

    pub fn attr_str(&self, key: &str) -> Option<&str> {
        self.attr(key).and_then(Value::as_str)
    }
}

impl SpanEvent {
    pub fn attr(&self, key: &str) -> Option<&Value> {
        find(&self.attrs, key)
    }

    pub fn attr_str(&self, key: &str) -> Option<&str> {
        self.attr(key).and_then(Value::as_str)
    }
}

fn find<'a>(attrs: &'a [(String, Value)], key: &str) -> Option<&'a Value> {
    attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// A pretty-printed document opens with a lone `{`: it is OTLP when its first key is
/// `resourceSpans`.
pub fn pretty_printed_head(head: &[u8]) -> bool {
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .filter(|l| !l.is_empty());
    lines.next() == Some(b"{".as_slice())
        && lines.next().is_some_and(|l| {
            l.starts_with(b"\"resourceSpans\"") || l.starts_with(b"\"resource_spans\"")
        })
}

/// Reads every span of one input: OTLP/JSON or the Python SDK's console exporter's JSON
/// (documents either way), or the JavaScript SDK's console exporter's printed objects.
pub fn parse(reader: &mut dyn Read, input: u32, _opts: &ParseOptions) -> io::Result<Parsed> {
    let mut head = Vec::new();
    reader.take(HEAD_BYTES).read_to_end(&mut head)?;
    let mut exporter = preamble::in_head(&head);
    // A console exporter's spans after a long start-up log; an OTLP export needs no look.
    if exporter.is_none() && head.len() as u64 >= HEAD_BYTES && !opens_an_export(&head) {
        exporter = preamble::read_past(&mut head, reader, preamble::OTLP_LOOK_AHEAD)?;
    }
    let mut whole = io::Cursor::new(head).chain(reader);
    match exporter {
        Some(preamble::Exporter::JavaScript) => console_js::parse(&mut whole, input),
        printed => {
            let among_output = printed == Some(preamble::Exporter::Python);
            reading::parse_in_batches(&mut whole, input, reading::BATCH_BYTES, among_output)
        }
    }
}

/// How much of an input [`parse`] looks at first to tell a console exporter's output.
const HEAD_BYTES: u64 = 64 * 1024;

/// The input opens with an OTLP/JSON export document, on one line or pretty-printed.
fn opens_an_export(head: &[u8]) -> bool {
    let first = head
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .find(|l| !l.is_empty());
    let first = first.map(|l| l.strip_prefix("\u{feff}".as_bytes()).unwrap_or(l));
    first.is_some_and(super::looks_like_otlp_document) || pretty_printed_head(head)
}

fn broken(stats: &mut InputStats, line: u32, reason: &str) {
    stats.lines += 1;
    stats.skip(line, reason);
}

/// What documents gave: their spans, and the accounting of their records.
#[derive(Debug, Default)]
struct Spans {
    spans: Vec<Span>,
    stats: InputStats,
}

impl Spans {
    /// A span read at `line`, kept with only what linking reads, or why it could not be.
    fn push_read(&mut self, span: Result<Span, impl Into<String>>, line: u32) {
        match span {
            Ok(mut span) => {
                conventions::keep_what_is_read(&mut span);
                self.spans.push(span);
            }
            Err(why) => self.stats.skip(line, why),
        }
    }
}

/// A JSON object's members, in order, as attributes (the console exporters write them as
/// plain values); none for anything else (`null`, `[Object]` past a printed depth).
fn members_of(v: Option<Value>) -> Vec<(String, Value)> {
    match v {
        Some(Value::Object(map)) => map.into_iter().collect(),
        _ => Vec::new(),
    }
}

/// Parses one export batch and collects its spans.
fn read_document(bytes: &[u8], first_line: u32, input: u32, out: &mut Spans) {
    match parse_document(bytes) {
        Ok(doc) => read_parsed(doc, bytes, first_line, input, out),
        Err(e) => broken(
            &mut out.stats,
            first_line,
            &crate::ingest::unreadable_json(&e),
        ),
    }
}

/// A document's JSON. Invalid UTF-8 is replaced, not fatal (SPEC §9), as in the other
/// formats: one bad byte in an attribute would otherwise cost a whole export batch, which
/// a Collector fills with hundreds of spans. Tried only once the bytes failed as they are.
pub(super) fn parse_document(bytes: &[u8]) -> serde_json::Result<Value> {
    serde_json::from_slice(bytes).or_else(|e| match std::str::from_utf8(bytes) {
        Ok(_) => Err(e),
        Err(_) => serde_json::from_str(&String::from_utf8_lossy(bytes)),
    })
}

/// Collects the spans of one export batch, parsed from `bytes`.
fn read_parsed(mut doc: Value, bytes: &[u8], first_line: u32, input: u32, out: &mut Spans) {
    let Some(batches) = field_mut(&mut doc, "resourceSpans", "resource_spans") else {
        if is_other_signal(&doc) {
            return no_spans(&mut out.stats);
        }
        if console::is_span(&doc) {
            return console::read(doc, first_line, input, out);
        }
        return broken(&mut out.stats, first_line, "JSON without resourceSpans");
    };
    let Value::Array(batches) = std::mem::take(batches) else {
        return broken(&mut out.stats, first_line, "resourceSpans is not an array");
    };
    let multi_line = bytes.contains(&b'\n');
    let mut locator = Locator::new(bytes, first_line);
    let before = out.spans.len() as u64 + out.stats.skipped;
    for mut rs in batches {
        let resource = resource_identity(&mut rs);
        let scopes = ["scopeSpans", "instrumentationLibrarySpans"]
            .iter()
            .zip(["scope_spans", "instrumentation_library_spans"])
            .find_map(|(c, s)| field_mut(&mut rs, c, s).map(std::mem::take));
        for mut scope in scopes.and_then(into_array).unwrap_or_default() {
            let spans = field_mut(&mut scope, "spans", "spans").map(std::mem::take);
            for raw in spans.and_then(into_array).unwrap_or_default() {
                let line = if multi_line {
                    locator.line_of(&raw)
                } else {
                    first_line
                };
                out.stats.lines += 1;
                out.push_read(read_span(raw, Loc { input, line }, &resource), line);
            }
        }
    }
    if out.spans.len() as u64 + out.stats.skipped == before {
        no_spans(&mut out.stats);
    }
}

/// A document with no spans at all still accounts for its line.
fn no_spans(stats: &mut InputStats) {
    stats.lines += 1;
    stats.ignored += 1;
}

/// A metrics, logs or profiles document: what a Collector's file exporter writes beside the
/// spans when it serves several pipelines. Valid, and nothing to read here.
fn is_other_signal(doc: &Value) -> bool {
    doc.as_object().is_some_and(|o| {
        super::OTLP_OTHER_SIGNALS.iter().any(|k| o.contains_key(*k))
            // The Python SDK's ConsoleLogExporter's record, beside its spans on stdout.
            || (o.contains_key("body") && o.contains_key("severity_number"))
    })
}

fn into_array(v: Value) -> Option<Vec<Value>> {
    match v {
        Value::Array(a) => Some(a),
        _ => None,
    }
}

fn field_mut<'a>(v: &'a mut Value, camel: &str, snake: &str) -> Option<&'a mut Value> {
    let obj = v.as_object_mut()?;
    if obj.contains_key(camel) {
        obj.get_mut(camel)
    } else {
        obj.get_mut(snake)
    }
}

fn field<'a>(obj: &'a Map<String, Value>, camel: &str, snake: &str) -> Option<&'a Value> {
    obj.get(camel).or_else(|| obj.get(snake))
}

/// `service.instance.id` when the resource has one (the SDK sets it per process), else all
/// of its attributes: batches from one process carry the same resource.
fn resource_identity(rs: &mut Value) -> Arc<str> {
    let attrs = rs
        .get_mut("resource")
        .and_then(|r| r.get_mut("attributes"))
        .map(std::mem::take)
        .map(attributes)
        .unwrap_or_default();
    identity_of(attrs)
}

/// A resource's identity from its attributes, as plain JSON ([`resource_identity`]).
fn identity_of(attrs: Vec<(String, Value)>) -> Arc<str> {
    match find(&attrs, "service.instance.id").and_then(Value::as_str) {
        Some(id) => Arc::from(format!("instance:{id}")),
        None => {
            let mut sorted = attrs;
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            let text: Vec<String> = sorted.iter().map(|(k, v)| format!("{k}={v}")).collect();
            Arc::from(text.join("\u{1f}"))
        }
    }
}

fn read_span(raw: Value, loc: Loc, resource: &Arc<str>) -> Result<Span, String> {
    let Value::Object(mut obj) = raw else {
        return Err("span is not an object".into());
    };
    let id = |obj: &Map<String, Value>, camel: &str, snake: &str, bytes: usize| {
        field(obj, camel, snake)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(|s| normalise_id(s, bytes))
    };
    let trace_id = id(&obj, "traceId", "trace_id", 16).ok_or("span without traceId")?;
    let span_id = id(&obj, "spanId", "span_id", 8).ok_or("span without spanId")?;
    let parent_id = id(&obj, "parentSpanId", "parent_span_id", 8);
    let (start, end, bad_time) = interval(&obj)?;
    let kind = match field(&obj, "kind", "kind") {
        Some(Value::Number(n)) => span_kind_number(n.as_i64().unwrap_or(0)),
        Some(Value::String(s)) => span_kind_name(s),
        _ => SpanKind::Unspecified,
    };
    let (error, status_message) = match obj.get("status").and_then(Value::as_object) {
        Some(st) => {
            let error = match st.get("code") {
                Some(Value::Number(n)) => n.as_i64() == Some(2),
                Some(Value::String(s)) => {
                    s == "2" || s.to_ascii_uppercase().trim_start_matches("STATUS_CODE_") == "ERROR"
                }
                _ => false,
            };
            let msg = st.get("message").and_then(Value::as_str).unwrap_or("");
            (error, msg.to_string())
        }
        None => (false, String::new()),
    };
    let name = obj
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let attrs = obj.remove("attributes").map(attributes).unwrap_or_default();
    let events = obj
        .remove("events")
        .and_then(into_array)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|mut e| {
            let obj = e.as_object_mut()?;
            Some(SpanEvent {
                name: obj.get("name").and_then(Value::as_str)?.to_string(),
                at: Timestamp(
                    field(obj, "timeUnixNano", "time_unix_nano")
                        .and_then(int_of)
                        .unwrap_or(end),
                ),
                attrs: obj.remove("attributes").map(attributes).unwrap_or_default(),
            })
        })
        .collect();
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
        headers_captured: false,
        attrs,
        events,
        resource: resource.clone(),
    })
}

/// The span's start and end, and what was wrong with them when they are not as written. A
/// span missing one of them is taken as an instant at the other (either way round: an
/// exporter that drops one drops either), and an end before the start as the start; only a
/// span with neither has no time at all. A time of 0 is protobuf's unset value (the JSON
/// mapping leaves it out), not 1970: as good as missing.
fn interval(obj: &Map<String, Value>) -> Result<(i64, i64, Option<&'static str>), &'static str> {
    let time = |camel, snake| {
        field(obj, camel, snake)
            .and_then(int_of)
            .filter(|&t| t != 0)
    };
    let start = time("startTimeUnixNano", "start_time_unix_nano");
    let end = time("endTimeUnixNano", "end_time_unix_nano");
    match (start, end) {
        (Some(start), Some(end)) if end >= start => Ok((start, end, None)),
        (Some(start), Some(_)) => Ok((start, start, Some("ends before it starts"))),
        (Some(start), None) => Ok((start, start, Some("has no endTimeUnixNano"))),
        (None, Some(end)) => Ok((end, end, Some("has no startTimeUnixNano"))),
        (None, None) => Err("span without startTimeUnixNano or endTimeUnixNano"),
    }
}

fn span_kind_number(n: i64) -> SpanKind {
    match n {
        1 => SpanKind::Internal,
        2 => SpanKind::Server,
        3 => SpanKind::Client,
        4 => SpanKind::Producer,
        5 => SpanKind::Consumer,
        _ => SpanKind::Unspecified,
    }
}

fn span_kind_name(s: &str) -> SpanKind {
    if let Ok(n) = s.parse::<i64>() {
        return span_kind_number(n);
    }
    match s.to_ascii_uppercase().trim_start_matches("SPAN_KIND_") {
        "INTERNAL" => SpanKind::Internal,
        "SERVER" => SpanKind::Server,
        "CLIENT" => SpanKind::Client,
        "PRODUCER" => SpanKind::Producer,
        "CONSUMER" => SpanKind::Consumer,
        _ => SpanKind::Unspecified,
    }
}

/// A 64-bit integer written as a decimal string (the OTLP/JSON rule) or a number.
pub fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_u64().map(|u| u.min(i64::MAX as u64) as i64))
            .or_else(|| n.as_f64().filter(|f| f.is_finite()).map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `[{"key":k,"value":{"stringValue":"x"}}]` → `[(k, "x")]`.
fn attributes(list: Value) -> Vec<(String, Value)> {
    into_array(list)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|kv| match kv {
            Value::Object(mut o) => {
                let key = match o.remove("key") {
                    Some(Value::String(k)) => k,
                    _ => return None,
                };
                Some((key, o.remove("value").map(any_value).unwrap_or(Value::Null)))
            }
            _ => None,
        })
        .collect()
}

/// An OTLP `AnyValue` as plain JSON.
fn any_value(v: Value) -> Value {
    let Value::Object(mut o) = v else {
        return v;
    };
    let take = |o: &mut Map<String, Value>, camel: &str, snake: &str| {
        o.remove(camel).or_else(|| o.remove(snake))
    };
    if let Some(s) = take(&mut o, "stringValue", "string_value") {
        return s;
    }
    if let Some(b) = take(&mut o, "boolValue", "bool_value") {
        return b;
    }
    if let Some(i) = take(&mut o, "intValue", "int_value") {
        return int_of(&i).map(Value::from).unwrap_or(i);
    }
    if let Some(d) = take(&mut o, "doubleValue", "double_value") {
        return d;
    }
    if let Some(b) = take(&mut o, "bytesValue", "bytes_value") {
        return b;
    }
    if let Some(mut a) = take(&mut o, "arrayValue", "array_value") {
        let values = a.get_mut("values").map(std::mem::take);
        let items = values.and_then(into_array).unwrap_or_default();
        return Value::Array(items.into_iter().map(any_value).collect());
    }
    if let Some(mut kv) = take(&mut o, "kvlistValue", "kvlist_value") {
        let values = kv.get_mut("values").map(std::mem::take).unwrap_or_default();
        return Value::Object(attributes(values).into_iter().collect());
    }
    Value::Null
}

/// Ids as lower-case hex: hex as given, else base64 of `bytes` bytes decoded, else the text
/// as it is (still usable as an id, just not comparable across encodings).
pub fn normalise_id(s: &str, bytes: usize) -> String {
    let s = s.trim();
    if s.len() == bytes * 2 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return s.to_ascii_lowercase();
    }
    match base64_decode(s) {
        Some(raw) if raw.len() == bytes => raw.iter().map(|b| format!("{b:02x}")).collect(),
        _ => s.to_string(),
    }
}

/// Standard or URL-safe base64, padding optional.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for b in s.trim_end_matches('=').bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Finds the line of each span of a pretty-printed document: spans appear in document order,
/// so each is looked for (by its `"spanId": "..."` pair) after the previous one.
struct Locator<'a> {
    doc: &'a [u8],
    first_line: u32,
    from: usize,
    line_at_from: u32,
}

impl<'a> Locator<'a> {
    fn new(doc: &'a [u8], first_line: u32) -> Self {
        Locator {
            doc,
            first_line,
            from: 0,
            line_at_from: first_line,
        }
    }

    fn line_of(&mut self, span: &Value) -> u32 {
        let Some(id) = span
            .get("spanId")
            .or_else(|| span.get("span_id"))
            .and_then(Value::as_str)
        else {
            return self.line_at_from.max(self.first_line);
        };
        let needle = format!("\"{id}\"");
        let finder = memchr::memmem::Finder::new(needle.as_bytes());
        let mut search = self.from;
        while let Some(pos) = finder.find(&self.doc[search..]) {
            let at = search + pos;
            search = at + needle.len();
            let before = self.doc[..at].trim_ascii_end();
            let Some(before) = before.strip_suffix(b":") else {
                continue;
            };
            let before = before.trim_ascii_end();
            if before.ends_with(b"\"spanId\"") || before.ends_with(b"\"span_id\"") {
                self.line_at_from +=
                    memchr::memchr_iter(b'\n', &self.doc[self.from..at]).count() as u32;
                self.from = at;
                return self.line_at_from;
            }
        }
        self.line_at_from
    }
}

#[cfg(test)]
mod batch_tests;
#[cfg(test)]
mod by_time_tests;
#[cfg(test)]
mod kept_tests;
#[cfg(test)]
mod nested_tests;
#[cfg(test)]
mod resume_tests;
#[cfg(test)]
mod tests;
