//! Spans as the JavaScript SDK's `ConsoleSpanExporter` prints them: `testdata/incident.txt`,
//! printed by Node's own `util.inspect` (`testdata/incident.js`); the SDK's real output is
//! under `fixtures/otlp-console-js-*` (tests/otlp.rs).

use super::super::tests::assert_the_incident;
use super::*;
use crate::ingest::{Format, source};

const INCIDENT: &str = include_str!("testdata/incident.txt");

fn read(text: &str) -> Parsed {
    super::super::parse(
        &mut text.as_bytes(),
        0,
        &crate::ingest::ParseOptions::default(),
    )
    .unwrap()
}

#[test]
fn printed_spans_are_read_as_otlp_spans_and_the_programs_other_output_ignored() {
    assert_eq!(source::detect(INCIDENT.as_bytes(), &[]), Some(Format::Otlp));
    let parsed = read(INCIDENT);
    assert_eq!(parsed.stats.skipped, 0, "{:?}", parsed.stats.problems);
    assert_eq!(parsed.spans.len(), 3);
    // Two lines of the program's own, three spans.
    assert_eq!((parsed.stats.lines, parsed.stats.ignored), (5, 2));
    assert_the_incident(&parsed.spans);
}

#[test]
fn kinds_times_status_and_events_are_the_sdks_own_numbers() {
    let parsed = read(INCIDENT);
    let first = &parsed.spans[0];
    assert_eq!(first.parent_id.as_deref(), Some("df6e10e1f19c3de4"));
    // JavaScript's SpanKind 2 is a client (OTLP's 3), 0 internal.
    assert_eq!(first.kind, SpanKind::Client);
    assert_eq!(parsed.spans[2].kind, SpanKind::Internal);
    assert!(first.error);
    assert_eq!(first.status_message, "Headers Timeout Error");
    // 2025-12-02T14:02:11.418Z, ten seconds.
    assert_eq!(first.start.0, 1_764_684_131_418_000_000);
    assert_eq!(first.end.0 - first.start.0, 10_000_000_000);
    // A duration's fraction of a microsecond is kept to the nanosecond.
    let second = &parsed.spans[1];
    assert_eq!(second.end.0 - second.start.0, 90_000_500);
    assert_eq!(first.events[0].at.0, 1_764_684_141_418_000_000);
    assert_eq!(first.loc.line, 2);
}

#[test]
fn a_span_cut_off_or_without_its_ids_is_skipped_with_why() {
    let cut = INCIDENT.lines().take(30).collect::<Vec<_>>().join("\n");
    let parsed = read(&cut);
    assert_eq!(parsed.spans.len(), 0);
    assert_eq!(parsed.stats.skipped, 1);
    assert_eq!(parsed.stats.problems[0].line, 2);
    assert_eq!(
        parsed.stats.problems[0].reason,
        "a span not closed by the end of the input"
    );
    let no_trace = INCIDENT.replacen("  traceId: 'd483b3125fd8633e7f2d036b32532e13',\n", "", 1);
    let parsed = read(&no_trace);
    assert_eq!(parsed.spans.len(), 2);
    assert_eq!(parsed.stats.problems[0].reason, "span without traceId");
}

#[test]
fn node_console_objects_are_not_taken_for_spans() {
    // A program's own objects printed the same way: no span's ids and times.
    let console =
        "2026-12-02T14:02:11.402Z tool call\n{\n  runId: 'r-1',\n  id: 'x',\n  kind: 2\n}\n";
    assert!(!looks_like(console.as_bytes()));
    assert_ne!(source::detect(console.as_bytes(), &[]), Some(Format::Otlp));
    // An object printed among the spans that is none is ignored, not skipped.
    let with_object = format!("{INCIDENT}{{\n  order: 'A-1',\n  amount: 4500\n}}\n");
    let parsed = read(&with_object);
    assert_eq!(parsed.stats.skipped, 0);
    assert_eq!(parsed.stats.ignored, 3);
}

proptest::proptest! {
    /// Any mix of a printed span's lines, cut anywhere, is accounted for: each record (a
    /// line outside an object, or an object) is a span, ignored or skipped.
    #[test]
    fn printed_lines_in_any_order_are_accounted_for(
        picks in proptest::collection::vec(0usize..12, 0..60)
    ) {
        const LINES: [&str; 12] = [
            "{", "}", "  traceId: 'd483b3125fd8633e7f2d036b32532e13',", "  id: 'ff86e1e49cb1ca4a',",
            "  kind: 2,", "  timestamp: 1764684131418000,", "  duration: 1.5,",
            "  status: { code: 2, message: 'x' },", "  events: [", "  ],",
            "    'a.b': 'c\\n' +", "refund agent listening",
        ];
        let text: String = picks.iter().map(|&i| format!("{}\n", LINES[i])).collect();
        let parsed = read(&text);
        let s = &parsed.stats;
        proptest::prop_assert_eq!(s.lines, parsed.spans.len() as u64 + s.ignored + s.skipped);
    }
}

#[test]
fn a_cut_span_gives_way_to_the_next_and_output_without_a_newline_opens_one() {
    // The first span cut after 20 lines by a restart, then the whole output again, its
    // last span printed straight after `process.stdout.write("working...")`.
    let lines: Vec<&str> = INCIDENT.lines().collect();
    let opens: Vec<usize> = (0..lines.len()).filter(|&i| lines[i] == "{").collect();
    let (first, last) = (opens[0], opens[opens.len() - 1]);
    let mut text: Vec<String> = lines[..20].iter().map(|l| l.to_string()).collect();
    text.extend(lines[first..last].iter().map(|l| l.to_string()));
    text.push("working...{".into());
    text.extend(lines[last + 1..].iter().map(|l| l.to_string()));
    let text = text.join("\n") + "\n";
    let parsed = read(&text);
    let reasons: Vec<_> = parsed
        .stats
        .problems
        .iter()
        .map(|p| (p.line, p.reason.as_str()))
        .collect();
    assert_eq!(reasons, [(2, "a span not closed before the next one")]);
    assert_eq!(parsed.spans.len(), 3);
}

#[test]
fn the_programs_objects_are_ignored_and_an_old_sdks_spans_are_their_files_process() {
    // A row with an id but no trace is the program's; its printing does not make the file
    // a span dump either.
    let row = "{\n  id: 're_1',\n  amount: 4500,\n  status: 'succeeded',\n  order: 'A-88214'\n}\n";
    // Nor does an object with a span's ids, kind and times but none of its other members.
    let like = "{\n  traceId: 'd483b3125fd8633e7f2d036b32532e13',\n  id: 'x',\n  kind: 2,\n  \
        timestamp: 1,\n  duration: 2\n}\n";
    assert!(!looks_like(row.as_bytes()) && !looks_like(like.as_bytes()));
    let parsed = read(&format!("{INCIDENT}{row}"));
    assert_eq!((parsed.stats.skipped, parsed.spans.len()), (0, 3));
    // SDKs before about 1.25 print no resource: each file is its own process.
    let old = INCIDENT.replace("  resource: {\n    attributes: {\n      'service.name': 'agent',\n      'telemetry.sdk.language': 'nodejs',\n      'process.pid': 4242\n    }\n  },\n", "");
    assert!(!old.contains("resource"), "the test removes every resource");
    let a = super::super::parse(
        &mut old.as_bytes(),
        0,
        &crate::ingest::ParseOptions::default(),
    )
    .unwrap();
    let b = super::super::parse(
        &mut old.as_bytes(),
        1,
        &crate::ingest::ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(a.spans.len(), 3);
    assert_ne!(a.spans[0].resource, b.spans[0].resource);
}

/// A value printed past the exporter's depth (`[Array]`, `[Object]`: console.dir's depth 3
/// reaches an event's attributes but not an array in them) is read as unknown and said, at
/// its line, with its path; the span is read all the same. util.inspect's other marks
/// (`[Function: f]`, `[Circular *1]`, `[Getter]`) and an ordinary span are no cut.
#[test]
fn values_cut_at_the_printed_depth_are_warned_of_at_their_line() {
    let span = |event_attrs: &str| {
        format!(
            "{{\n  traceId: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',\n  name: 'ai.toolCall',\n  id: 'b4f456717b9b1f07',\n  kind: 0,\n  timestamp: 1796604103549000,\n  duration: 982.213,\n  attributes: {{ 'ai.toolCall.name': 'issue_refund' }},\n  status: {{ code: 0 }},\n  events: [\n    {{\n      name: 'refund.requested',\n      attributes: {event_attrs},\n      time: [ 1796604103, 549000000 ],\n      droppedAttributesCount: 0\n    }}\n  ],\n  links: []\n}}\n"
        )
    };
    let cut = read(&format!(
        "program output\n{}",
        span("{ 'refund.orders': [Array], meta: [Object], n: 1 }")
    ));
    assert_eq!((cut.spans.len(), cut.stats.skipped), (1, 0));
    assert_eq!(cut.stats.warned, 1);
    let warning = &cut.stats.warnings[0];
    // The event's attributes are on the file's 14th line.
    assert_eq!(warning.line, 14);
    assert_eq!(
        warning.reason,
        "span `ai.toolCall`: `events[0].attributes['refund.orders']` as [Array], \
         `events[0].attributes.meta` as [Object] printed past the depth the exporter prints \
         (console.dir's depth 3): what they held is not in the file, read as unknown"
    );
    for whole in [
        "{ 'refund.orders': [ 'A-1' ], n: 1 }",
        "{ f: [Function: post], self: [Circular *1], g: [Getter] }",
    ] {
        let read = read(&span(whole));
        assert_eq!((read.spans.len(), read.stats.warned), (1, 0), "{whole}");
    }
    // Another object the program printed, cut or not, is ignored, not warned of.
    let row = "{\n  id: 'row-1',\n  nested: { deeper: [Object] }\n}\n";
    let other = read(&format!("{}{row}", span("{ n: 1 }")));
    assert_eq!(
        (other.spans.len(), other.stats.ignored, other.stats.warned),
        (1, 1, 0)
    );
}
