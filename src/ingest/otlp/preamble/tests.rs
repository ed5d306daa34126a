//! Finding a console exporter's first span past the head, in the real exporters' output
//! (`fixtures/otlp-console-*`), and nothing in other printed objects.

use super::*;
use crate::ingest::ParseOptions;

const PYTHON_PRETTY: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/otlp-console-langgraph-openinference/trace.jsonl"
));
const PYTHON_COMPACT: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/otlp-console-compact-langgraph-openinference/trace.jsonl"
));
const JAVASCRIPT: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/otlp-console-js-vercel-ai/trace.jsonl"
));

/// A program's start-up output, over 64 KiB: `lines` lines.
fn startup(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("2026-12-07 00:20:00,000 INFO agent: loaded tool schema {i} of many\n"))
        .collect()
}

fn parse(text: &str) -> crate::ingest::Parsed {
    super::super::parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap()
}

#[test]
fn each_exporters_first_span_is_found_past_a_long_startup_log() {
    let log = startup(2000);
    assert!(log.len() > 64 << 10);
    for (dump, exporter) in [
        (PYTHON_PRETTY, Exporter::Python),
        (PYTHON_COMPACT, Exporter::Python),
        (JAVASCRIPT, Exporter::JavaScript),
    ] {
        assert_eq!(in_head(log.as_bytes()), None);
        assert_eq!(
            first_span(format!("{log}{dump}").as_bytes()),
            Some(exporter)
        );
        // Windows' line endings too.
        let crlf = format!("{log}{dump}").replace('\n', "\r\n");
        assert_eq!(first_span(crlf.as_bytes()), Some(exporter));
        // Past the look-ahead, nothing is read further; within it, the first span is found.
        let far = startup(LOOK_AHEAD as usize / 40);
        let read = |limit| {
            let mut head = far.as_bytes()[..64 << 10].to_vec();
            let rest = format!("{}{dump}", &far[64 << 10..]);
            let found = read_past(&mut head, &mut rest.as_bytes(), limit).unwrap();
            (found, head.len())
        };
        assert_eq!(read(LOOK_AHEAD), (None, LOOK_AHEAD as usize));
        assert_eq!(
            read(OTLP_LOOK_AHEAD),
            (Some(exporter), far.len() + dump.len())
        );
    }
}

/// The OTLP reader reads the dump after the start-up log as it reads the dump alone, each
/// line of the log ignored (none skipped), even past detection's look-ahead.
#[test]
fn the_otlp_reader_reads_the_dump_after_a_long_startup_log() {
    let past_detection = LOOK_AHEAD as usize / 40;
    for (dump, lines) in [
        (PYTHON_PRETTY, 2000),
        (PYTHON_COMPACT, 2000),
        (JAVASCRIPT, 2000),
        (JAVASCRIPT, past_detection),
    ] {
        let log = startup(lines);
        let lines = lines as u64;
        let alone = parse(dump);
        let after = parse(&format!("{log}{dump}"));
        assert_eq!(after.stats.skipped, 0, "{:?}", after.stats.problems);
        assert_eq!(after.stats.lines, alone.stats.lines + lines);
        assert_eq!(after.stats.ignored, alone.stats.ignored + lines);
        let ids = |p: &crate::ingest::Parsed| -> Vec<(String, u32)> {
            (p.spans.iter())
                .map(|s| (s.span_id.clone(), s.loc.line))
                .collect()
        };
        let moved: Vec<_> = (ids(&alone).into_iter())
            .map(|(id, line)| (id, line + lines as u32))
            .collect();
        assert!(!moved.is_empty());
        assert_eq!(ids(&after), moved);
    }
}

/// A program's pretty-printed JSON (even with a `name` and a trace id without `0x`), a row
/// it printed with an id, a kind and times, and a JSON log line with a trace id are no span.
#[test]
fn other_printed_objects_are_no_span() {
    let config = "{\n    \"name\": \"refund-worker\",\n    \"context\": {\n        \"trace_id\": \"d483b3125fd8633e7f2d036b32532e13\"\n    }\n}\n";
    let row = "{\n  id: 're_1',\n  kind: 'full',\n  timestamp: 1796603147000000,\n  duration: 2000000\n}\n";
    let json_log =
        "{\"name\": \"agent\", \"context\": {\"trace_id\": \"0x1\"}, \"msg\": \"SpanKind.\"}\n";
    for stray in [config, row, json_log] {
        let text = format!("{}{stray}{}", startup(2000), startup(10));
        assert_eq!(first_span(text.as_bytes()), None, "{stray}");
    }
}

/// Lines that all open with `{` (or an object never closed) are looked at once each: the
/// scan of the whole look-ahead ends at once and finds nothing.
#[test]
fn the_scan_is_linear_in_any_lines() {
    let braces = "{\n".repeat(LOOK_AHEAD as usize / 2);
    assert_eq!(first_span(braces.as_bytes()), None);
    let open = format!(
        "{{\n{}",
        "  traceId: 'x',\n".repeat(LOOK_AHEAD as usize / 16)
    );
    assert_eq!(first_span(open.as_bytes()), None);
    let lines = "{\"name\": 1}\n{\"a\n{\n  \n".repeat(LOOK_AHEAD as usize / 24);
    assert_eq!(first_span(lines.as_bytes()), None);
}
