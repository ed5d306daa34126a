//! Damaged and unexpected documents: counted and skipped with a reason, never dropped.

use super::*;

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
