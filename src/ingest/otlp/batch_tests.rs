//! Lines read in batches and parsed side by side ([`parse_in_batches`]) must give what the
//! sequential reading gives, whatever the batch size: documents on one line, documents
//! pretty-printed over many, broken and cut-off ones, lone JSON values and blank lines,
//! in any order.

use super::reading::{BATCH_BYTES, Batch, Reading, parse_in_batches};
use super::tests::{batch, tool_span};
use super::*;
use crate::ingest::lines::{LineNotes, for_each_line};
use serde_json::json;

/// Everything a reading gives, spans and accounting, as text to compare.
fn reading(text: &str, batch_bytes: usize) -> String {
    shown(parse_in_batches(&mut text.as_bytes(), 3, batch_bytes, false).unwrap())
}

fn shown(p: Parsed) -> String {
    format!("{:?}\n{:?}", p.spans, p.stats)
}

/// The reading one line at a time, a line parsed as a document only where the reading
/// would use it (outside a multi-line document): what the batches must agree with.
fn sequential(text: &str) -> String {
    let mut reading = Reading::new(3);
    let mut notes = LineNotes::default();
    for_each_line(&mut text.as_bytes(), &mut notes, |n, line| {
        reading.line_alone(n, line)
    })
    .unwrap();
    let mut parsed = reading.finish();
    notes.add_to(&mut parsed.stats);
    shown(parsed)
}

/// The pieces a trace file is made of, each one or more lines.
fn pieces() -> Vec<String> {
    let tool = |id: &str| tool_span(id);
    let one_line = batch("i-1", vec![tool("9000000000000001")]);
    let doc: Value = serde_json::from_str(&batch("i-2", vec![tool("9000000000000002")])).unwrap();
    let pretty = serde_json::to_string_pretty(&doc).unwrap();
    let no_trace = json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "5000000000000002", "startTimeUnixNano": "1"}]}]}]});
    vec![
        one_line,
        pretty,
        String::new(),
        "\"x\"".into(),
        "{\"resourceSpans\": [oops".into(),
        no_trace.to_string(),
        "{\"resourceSpans\":[]}".into(),
        "{\"resourceSpans\": [{\"scopeSpans\"".into(),
        "}".into(),
        "]".into(),
        "  {".into(),
        "{ \"resource_spans\": []}".into(),
        "{\"resourceMetrics\": [{\"scopeMetrics\": []}]}".into(),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

    #[test]
    fn any_batch_size_reads_as_one_line_at_a_time(
        picks in proptest::collection::vec(0usize..13, 0..30),
        size in 1usize..400,
    ) {
        let pieces = pieces();
        let text: Vec<&str> = picks.iter().map(|&i| pieces[i].as_str()).collect();
        let text = text.join("\n");
        let one_at_a_time = sequential(&text);
        proptest::prop_assert_eq!(&reading(&text, 1), &one_at_a_time);
        proptest::prop_assert_eq!(&reading(&text, size), &one_at_a_time);
        proptest::prop_assert_eq!(&reading(&text, BATCH_BYTES), &one_at_a_time);
    }
}

/// Every real framework trace, read in batches of a few lines and at once.
#[test]
fn the_framework_traces_read_alike_in_any_batch() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut read = 0;
    for entry in std::fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path().join("trace.jsonl");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let whole = sequential(&text);
        assert_eq!(reading(&text, BATCH_BYTES), whole, "{}", path.display());
        assert_eq!(reading(&text, 5000), whole, "{}", path.display());
        read += 1;
    }
    assert!(read >= 30, "{read} traces");
}

/// Blank lines have no bytes, yet a batch of them closes: a file of millions of blank or
/// one-byte lines once grew one batch (and what each line gave) to gigabytes.
#[test]
fn a_batch_of_empty_lines_closes() {
    let mut batch = Batch::default();
    let mut n = 0;
    while !batch.full(BATCH_BYTES) {
        n += 1;
        batch.push(n, b"");
        assert!(n <= 100_000, "{n} empty lines and the batch is still open");
    }
}
