//! Spans shaped as the Python SDK's `ConsoleSpanExporter` writes them (`to_json()`); the
//! real exporter's output is under `fixtures/otlp-console-*` (tests/otlp.rs).

use super::super::tests::{assert_the_incident, read};
use super::*;
use crate::ingest::{Format, source};
use serde_json::json;

const TRACE: &str = "d483b3125fd8633e7f2d036b32532e13";

/// A span as `ReadableSpan.to_json()` builds it, before it is printed.
fn console_span(
    id: &str,
    parent: Option<&str>,
    name: &str,
    kind: &str,
    times: (&str, &str),
) -> Value {
    json!({
        "name": name,
        "context": {"trace_id": format!("0x{TRACE}"), "span_id": format!("0x{id}"), "trace_state": "[]"},
        "kind": format!("SpanKind.{kind}"),
        "parent_id": parent.map(|p| format!("0x{p}")),
        "start_time": times.0,
        "end_time": times.1,
        "status": {"status_code": "UNSET"},
        "attributes": {},
        "events": [],
        "links": [],
        "resource": {
            "attributes": {"service.name": "agent", "service.instance.id": "4774163b"},
            "schema_url": ""
        }
    })
}

/// The incident through the exporter: a tool span, its first POST timed out (an exception
/// event, status ERROR) with one key, the retry answered 201 with another. Spans are
/// exported as they end: the requests before the tool.
fn incident() -> Vec<Value> {
    let tool = "df6e10e1f19c3de4";
    let mut first = console_span(
        "ff86e1e49cb1ca4a",
        Some(tool),
        "POST",
        "CLIENT",
        ("2026-12-02T14:02:11.418000Z", "2026-12-02T14:02:21.418000Z"),
    );
    first["status"] =
        json!({"status_code": "ERROR", "description": "ReadTimeout: read timeout=10"});
    first["attributes"] = json!({
        "http.method": "POST",
        "http.url": "https://payments.internal/v1/refunds",
        "http.request.header.idempotency_key": ["k-1"]
    });
    first["events"] = json!([{
        "name": "exception",
        "timestamp": "2026-12-02T14:02:21.418000Z",
        "attributes": {"exception.type": "requests.exceptions.ReadTimeout", "exception.message": "read timeout=10"}
    }]);
    let mut second = console_span(
        "0a1b2c3d4e5f6071",
        Some(tool),
        "POST",
        "CLIENT",
        ("2026-12-02T14:02:21.920000Z", "2026-12-02T14:02:22.010000Z"),
    );
    second["attributes"] = json!({
        "http.method": "POST",
        "http.url": "https://payments.internal/v1/refunds",
        "http.request.header.idempotency_key": ["k-2"],
        "http.status_code": 201
    });
    let mut call = console_span(
        tool,
        None,
        "execute_tool issue_refund",
        "INTERNAL",
        ("2026-12-02T14:02:11.402000Z", "2026-12-02T14:02:22.100000Z"),
    );
    call["attributes"] = json!({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "issue_refund",
        "gen_ai.tool.call.arguments": "{\"order\": \"A-88214\", \"amount_p\": 4500}"
    });
    vec![first, second, call]
}

/// The members of a span in the order `to_json()` writes them.
const ORDER: [&str; 11] = [
    "name",
    "context",
    "kind",
    "parent_id",
    "start_time",
    "end_time",
    "status",
    "attributes",
    "events",
    "links",
    "resource",
];

/// `to_json()`'s printing: the members in its order, four blanks of indent, each span
/// followed by a newline.
fn pretty(spans: &[Value]) -> String {
    let mut out = String::new();
    for span in spans {
        let members: Vec<String> = ORDER
            .iter()
            .map(|k| {
                let mut text = Vec::new();
                let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
                let mut ser = serde_json::Serializer::with_formatter(&mut text, formatter);
                serde::Serialize::serialize(&span[*k], &mut ser).unwrap();
                let text = String::from_utf8(text).unwrap().replace('\n', "\n    ");
                format!("    \"{k}\": {text}")
            })
            .collect();
        out += &format!("{{\n{}\n}}\n", members.join(",\n"));
    }
    out
}

/// `to_json(indent=None)`: one span a line, Python's `", "` and `": "` between members.
fn compact(spans: &[Value]) -> String {
    let members = |span: &Value| -> Vec<String> {
        ORDER
            .iter()
            .map(|k| format!("\"{k}\": {}", span[*k]))
            .collect()
    };
    spans
        .iter()
        .map(|s| format!("{{{}}}\n", members(s).join(", ")))
        .collect()
}

#[test]
fn the_exporters_spans_are_read_as_otlp_spans_pretty_or_one_to_a_line() {
    for text in [pretty(&incident()), compact(&incident())] {
        assert_eq!(
            source::detect(text.as_bytes(), &[]),
            Some(Format::Otlp),
            "{text}"
        );
        let parsed = read(&text, 0);
        assert_eq!(parsed.stats.skipped, 0, "{:?}", parsed.stats.problems);
        assert_eq!(parsed.spans.len(), 3);
        assert_the_incident(&parsed.spans);
    }
}

#[test]
fn times_ids_kind_status_and_events_are_the_spans_own() {
    let parsed = read(&pretty(&incident()), 0);
    let first = &parsed.spans[0];
    assert_eq!(first.trace_id, TRACE);
    assert_eq!(first.span_id, "ff86e1e49cb1ca4a");
    assert_eq!(first.parent_id.as_deref(), Some("df6e10e1f19c3de4"));
    assert_eq!(first.kind, super::super::SpanKind::Client);
    assert!(first.error);
    assert_eq!(first.status_message, "ReadTimeout: read timeout=10");
    // 2026-12-02T14:02:11.418Z and ten seconds later.
    assert_eq!(first.end.0 - first.start.0, 10_000_000_000);
    assert_eq!(first.start.0 % 1_000_000_000, 418_000_000);
    assert_eq!(first.events.len(), 1);
    assert_eq!(first.events[0].at, first.end);
    assert_eq!(first.loc.line, 1);
    // The second span starts on the line after the first one's closing brace.
    let lines_of_first = pretty(&incident()[..1]).lines().count() as u32;
    assert_eq!(parsed.spans[1].loc.line, lines_of_first + 1);
}

#[test]
fn a_span_missing_its_ids_or_times_is_skipped_with_why() {
    let mut no_trace = incident()[0].clone();
    no_trace["context"] = json!({"span_id": "0x0a1b2c3d4e5f6071"});
    let mut no_times = incident()[1].clone();
    no_times["start_time"] = Value::Null;
    no_times["end_time"] = Value::Null;
    let parsed = read(&compact(&[no_trace, no_times, incident()[2].clone()]), 0);
    let reasons: Vec<_> = parsed
        .stats
        .problems
        .iter()
        .map(|p| (p.line, p.reason.as_str()))
        .collect();
    assert_eq!(
        reasons,
        [
            (1, "span without trace_id"),
            (2, "span without start_time or end_time")
        ]
    );
    assert_eq!(parsed.spans.len(), 1);
    assert_eq!(parsed.stats.lines, 3);
}

#[test]
fn a_span_cut_off_is_reported_and_the_next_one_read() {
    let whole = pretty(&incident());
    let first_len = pretty(&incident()[..1]).lines().count();
    // The first span loses its last ten lines (a process killed while writing it).
    let lines: Vec<&str> = whole.lines().collect();
    let cut: Vec<&str> = lines[..first_len - 10]
        .iter()
        .chain(&lines[first_len..])
        .copied()
        .collect();
    let parsed = read(&(cut.join("\n") + "\n"), 0);
    assert_eq!(parsed.spans.len(), 2);
    assert_eq!(parsed.stats.skipped, 1);
    assert_eq!(parsed.stats.problems[0].line, 1);
    assert_eq!(parsed.stats.problems[0].reason, "incomplete JSON document");
}

#[test]
fn other_json_is_not_taken_for_the_exporters_output() {
    let jsonl = r#"{"ts":"2026-12-02T14:02:11Z","type":"tool_call","run":"7f3a","step":4,"tool":"issue_refund"}"#;
    let otlp_pretty = "{\n  \"resourceSpans\": []\n}\n";
    // A log line that names something and has a context of its own, but no span ids.
    let context = r#"{"name": "refund", "context": {"request_id": "r-1"}}"#;
    assert!(!looks_like(jsonl.as_bytes()));
    assert!(!looks_like(otlp_pretty.as_bytes()));
    assert!(!looks_like(context.as_bytes()));
    assert_ne!(source::detect(context.as_bytes(), &[]), Some(Format::Otlp));
    assert!(!is_span(&serde_json::from_str(context).unwrap()));
}

#[test]
fn the_programs_own_lines_among_the_spans_are_ignored() {
    // The exporter prints to standard output by default, beside the program's `print`s.
    let spans = incident();
    let text = format!(
        "refund agent starting\n{}retrying A-88214\n{}done\n",
        pretty(&spans[..1]),
        pretty(&spans[1..])
    );
    assert_eq!(source::detect(text.as_bytes(), &[]), Some(Format::Otlp));
    let parsed = read(&text, 0);
    assert_eq!(parsed.stats.skipped, 0, "{:?}", parsed.stats.problems);
    assert_eq!(parsed.spans.len(), 3);
    assert_eq!(parsed.stats.ignored, 3);
    // The second span's first line is the line after the program's between them.
    let first_lines = pretty(&spans[..1]).lines().count() as u32;
    assert_eq!(parsed.spans[1].loc.line, first_lines + 3);
}

#[test]
fn a_stray_line_in_an_otlp_file_is_still_skipped() {
    // Without the console exporter's spans, a line that is no JSON is a broken document.
    let otlp = super::super::tests::batch("i-1", vec![super::super::tests::tool_span("a1")]);
    let parsed = read(&format!("garbage line\n{otlp}\n"), 0);
    assert_eq!(parsed.stats.skipped, 1);
}

#[test]
fn among_output_only_a_spans_opening_opens_a_document() {
    let spans = incident();
    // Output with no newline before a span, a printed dict, the program's JSON log, a
    // compact span cut off by a killed process, and a ConsoleLogExporter record.
    let cut: String = compact(&spans[..1]).chars().take(200).collect();
    let log_record = r#"{"body": "refund sent", "severity_number": 9, "severity_text": "INFO", "attributes": {}}"#;
    let text = format!(
        "working...{}{{'order': 'A-88214'}}\n{{\"event\": \"retrying\", \"level\": \"info\"}}\n{cut}\n{}{log_record}\n",
        pretty(&spans[..1]),
        compact(&spans[1..]),
    );
    let parsed = read(&text, 0);
    assert_eq!(parsed.spans.len(), 3, "{:?}", parsed.stats.problems);
    let reasons: Vec<_> = parsed
        .stats
        .problems
        .iter()
        .map(|p| p.reason.as_str())
        .collect();
    assert_eq!(reasons, ["incomplete JSON document"]);
    // The dict, the JSON log line, the log record and the line the first span ended.
    assert_eq!(parsed.stats.ignored, 4);
}

#[test]
fn a_loggers_record_with_a_trace_context_is_no_span() {
    // Bunyan-style: `name` first and the trace's context, but no `SpanKind.` kind.
    let record = r#"{"name":"agent","context":{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7"},"level":30,"msg":"agent run started"}"#;
    assert!(!is_span(&serde_json::from_str(record).unwrap()));
    assert!(!looks_like(format!("{record}\n{record}\n").as_bytes()));
}

#[test]
fn the_older_sdks_resource_without_its_attributes_wrapper_is_read() {
    // Up to 1.11, `to_json` wrote the resource's attributes as the resource itself.
    let mut spans = incident();
    let mut other = incident();
    for s in &mut other {
        s["resource"] = json!({"service.name": "agent", "service.instance.id": "worker-2"});
    }
    spans[0]["resource"] = json!({"service.name": "agent", "service.instance.id": "worker-1"});
    let parsed = read(&compact(&[spans[0].clone(), other[0].clone()]), 0);
    assert_eq!(parsed.spans.len(), 2);
    assert_ne!(parsed.spans[0].resource, parsed.spans[1].resource);
    assert_eq!(&*parsed.spans[0].resource, "instance:worker-1");
}

#[test]
fn lines_of_text_before_a_pretty_document_are_skipped_alone() {
    // A log's own lines before the spans (a file forced to be read as OTLP): each is broken
    // on its own, and the pretty-printed document after them is read.
    let doc: Value = serde_json::from_str(&super::super::tests::batch(
        "i-1",
        vec![super::super::tests::tool_span("a1")],
    ))
    .unwrap();
    let text = format!("starting up\nlistening on :8080\n{:#}\n", doc);
    let parsed = read(&text, 0);
    let lines: Vec<_> = parsed.stats.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [1, 2]);
    assert!(parsed.stats.problems[0].reason.starts_with("not JSON"));
    assert_eq!(parsed.spans.len(), 1);
}

#[test]
fn a_span_on_one_line_with_a_runtimes_stamp_before_its_members_is_read() {
    // A container runtime's unwrapping puts its stamp first in an unstamped JSON line.
    let stamped: String = compact(&incident())
        .lines()
        .map(|l| format!("{{\"ts\":\"2026-12-02T14:02:30Z\",{}\n", &l[1..]))
        .collect();
    let parsed = read(&format!("starting\n{stamped}"), 0);
    assert_eq!(parsed.spans.len(), 3, "{:?}", parsed.stats.problems);
    assert_eq!((parsed.stats.ignored, parsed.stats.skipped), (1, 0));
}
