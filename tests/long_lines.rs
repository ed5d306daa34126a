//! Lines longer than a line is read ([`MAX_LINE`], 16 MiB) are skipped with their length and
//! not held, whatever reads them (plain, gzip, zstd, UTF-16, JSON Lines); the lines after
//! them are read as ever, numbered as they were. A line under the cap is read; an OTLP
//! export's batch of tens of MiB on one line is read whole (its cap is 256 MiB). The lines
//! are generated here, into a temporary folder.

use idem_audit::ingest::lines::MAX_LINE;
use serde_json::Value;
use std::path::Path;

mod common;
use common::{fixture, scan};

/// `scan FILE --format json` of `bytes` written as `name` in `dir`: the report.
fn report(dir: &Path, name: &str, bytes: &[u8]) -> Value {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let (code, stdout, stderr) = scan(&[path.to_str().unwrap(), "--format", "json"]);
    assert!(
        matches!(code, Some(0 | 1)),
        "{name}: exit {code:?}: {stderr}"
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{name}: {e}: {stderr}"))
}

/// The findings' rules and effects, to compare two reports by.
fn findings(r: &Value) -> Vec<(String, String)> {
    (r["findings"].as_array().unwrap().iter())
        .map(|f| (f["rule"].to_string(), f["effects"].to_string()))
        .collect()
}

/// The incident's trace with a line of `len` bytes (a stamp, then `x`s) after its first.
fn incident_with_a_line_of(len: usize) -> Vec<u8> {
    let trace = std::fs::read(fixture("incident-a88214/trace.log")).unwrap();
    let first = trace.iter().position(|&b| b == b'\n').unwrap() + 1;
    let mut text = trace[..first].to_vec();
    let stamp = b"14:02:11.403  healthcheck ok  payload=";
    text.extend_from_slice(stamp);
    text.resize(first + len, b'x');
    text.push(b'\n');
    text.extend_from_slice(&trace[first..]);
    text
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// UTF-16 LE with its byte-order mark, as Windows PowerShell 5 writes.
fn utf16(bytes: &[u8]) -> Vec<u8> {
    let text = std::str::from_utf8(bytes).unwrap();
    let mut out = vec![0xFF, 0xFE];
    out.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    out
}

#[test]
fn a_line_over_the_cap_is_skipped_in_every_reading_and_the_rest_read() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read(fixture("incident-a88214/trace.log")).unwrap();
    let incident = report(dir.path(), "incident.log", &plain);
    let long = MAX_LINE + 1000;
    let text = incident_with_a_line_of(long);
    let zst = zstd::encode_all(&text[..], 1).unwrap();
    for (name, bytes) in [
        ("trace.log", text.clone()),
        ("trace.log.gz", gzip(&text)),
        ("trace.log.zst", zst),
        ("trace-utf16.log", utf16(&text)),
    ] {
        let r = report(dir.path(), name, &bytes);
        let input = &r["inputs"][0];
        // The incident's 9 lines and the long one: its events all read, the long line
        // skipped with its length, on its own line.
        assert_eq!(
            (&input["lines"], &input["events"], &input["skipped"]),
            (&Value::from(10), &Value::from(8), &Value::from(1)),
            "{name}: {input}"
        );
        let problem = &input["problems"][0];
        assert_eq!(problem["line"], 2, "{name}");
        let said = format!("line longer than 16 MiB ({long} bytes): not read");
        let reason = problem["reason"].as_str().unwrap();
        assert!(reason.starts_with(&said), "{name}: {reason}");
        assert_eq!(findings(&r), findings(&incident), "{name}");
        // Cited at their own lines: the lines after the long one, one below the incident's.
        let lines = |r: &Value| -> Vec<u64> {
            (r["findings"][0]["evidence"].as_array().unwrap().iter())
                .map(|e| e["line"].as_u64().unwrap())
                .collect()
        };
        let moved: Vec<u64> = (lines(&incident).iter())
            .map(|&n| if n > 1 { n + 1 } else { n })
            .collect();
        assert_eq!(lines(&r), moved, "{name}");
    }
}

/// A line of the cap exactly is read as a line (here chatter, ignored); a byte more and it
/// is skipped.
#[test]
fn a_line_of_the_cap_is_read() {
    let dir = tempfile::tempdir().unwrap();
    for (len, skipped) in [(MAX_LINE, 0), (MAX_LINE + 1, 1)] {
        let r = report(dir.path(), "trace.log", &incident_with_a_line_of(len));
        let input = &r["inputs"][0];
        assert_eq!(input["skipped"], skipped, "{len}: {input}");
        assert_eq!(input["lines"], 10, "{len}");
    }
}

/// A JSON Lines event with a field of nearly 16 MiB is read; one past the cap is skipped and
/// the events after it are read.
#[test]
fn a_json_line_over_the_cap_is_skipped_and_one_under_it_read() {
    let dir = tempfile::tempdir().unwrap();
    let effect = |id: &str, note: usize| {
        let mut line = format!(
            r#"{{"ts":"2026-11-03T10:00:00Z","type":"effect","effect_id":"{id}","kind":"refund","order":"B-1","amount_minor":4500,"currency":"GBP","note":""#
        )
        .into_bytes();
        line.resize(line.len() + note, b'n');
        line.extend_from_slice(b"\"}\n");
        line
    };
    let mut text = effect("rf_1", MAX_LINE - 200);
    text.extend(effect("rf_2", MAX_LINE));
    text.extend(effect("rf_3", 10));
    let r = report(dir.path(), "effects.jsonl", &text);
    let input = &r["inputs"][0];
    assert_eq!(input["format"], "jsonl");
    assert_eq!(
        (&input["events"], &input["skipped"]),
        (&Value::from(2), &Value::from(1)),
        "{input}"
    );
    assert_eq!(input["problems"][0]["line"], 2);
    // rf_1 and rf_3 are one order's two refunds: both were read.
    assert_eq!(
        r["findings"][0]["effects"],
        serde_json::json!(["rf_1", "rf_3"])
    );
}

/// An OTLP export whose batch is one line of 20 MiB (a span's attribute holding a prompt) is
/// read whole, as it was before the cap: a batch is a document, read up to 256 MiB.
#[test]
fn an_otlp_batch_of_tens_of_mib_on_one_line_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let trace = std::fs::read_to_string(fixture("otlp-adk-genai/trace.jsonl")).unwrap();
    let as_is = report(dir.path(), "as-is.jsonl", trace.as_bytes());
    let mut lines: Vec<String> = trace.lines().map(String::from).collect();
    let mut batch: Value = serde_json::from_str(&lines[0]).unwrap();
    let prompt = "p".repeat(20 << 20);
    let attrs = &mut batch["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"];
    attrs.as_array_mut().unwrap().push(serde_json::json!(
        {"key": "gen_ai.prompt", "value": {"stringValue": prompt}}
    ));
    lines[0] = batch.to_string();
    assert!(lines[0].len() > MAX_LINE);
    let r = report(
        dir.path(),
        "trace.jsonl",
        (lines.join("\n") + "\n").as_bytes(),
    );
    let input = &r["inputs"][0];
    assert_eq!(input["format"], "otlp");
    assert_eq!(input["skipped"], 0, "{input}");
    assert_eq!(input["events"], as_is["inputs"][0]["events"]);
    assert_eq!(findings(&r), findings(&as_is));
}

/// `lines` as the Collector's compressing file exporter writes them: each a batch, a 4-byte
/// big-endian length and then one zstd frame.
fn length_framed<'a>(lines: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut bytes = Vec::new();
    for line in lines {
        let frame = zstd::encode_all(line, 1).unwrap();
        bytes.extend((frame.len() as u32).to_be_bytes());
        bytes.extend(frame);
    }
    bytes
}

/// A compressed OTLP batch that unpacks past 256 MiB (a frame of some KiB: damage, or a
/// hostile file) is skipped with its length as a plain line that long is, its memory that of
/// any line dropped as it streams past, not the batch's; the batches around it are read
/// (review: one such frame was unpacked whole, 2.1 GB of memory for one of 1 GiB). Batches
/// under the cap, one of 20 MiB among them, read as the plain file.
#[test]
fn a_length_framed_zstd_batch_past_the_cap_is_skipped_and_the_rest_read() {
    use idem_audit::ingest::lines::MAX_DOCUMENT_LINE;
    let dir = tempfile::tempdir().unwrap();
    let trace = std::fs::read_to_string(fixture("otlp-adk-genai/trace.jsonl")).unwrap();
    let as_is = report(dir.path(), "as-is.jsonl", trace.as_bytes());
    let lines: Vec<&[u8]> = trace.lines().map(str::as_bytes).collect();
    let framed = report(dir.path(), "framed.zst", &length_framed(lines.clone()));
    assert_eq!(framed["inputs"][0]["format"], "otlp");
    for key in ["lines", "events", "skipped", "problems"] {
        assert_eq!(framed["inputs"][0][key], as_is["inputs"][0][key], "{key}");
    }
    assert_eq!(findings(&framed), findings(&as_is));
    let mut under = br#"{"resourceSpans":[],"pad":""#.to_vec();
    under.resize(20 << 20, b'p');
    under.extend_from_slice(b"\"}");
    let long = MAX_DOCUMENT_LINE + 1000;
    let mut over = br#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":""#.to_vec();
    over.resize(long, b'x');
    let mut with_both = vec![lines[0], &under[..], &over[..]];
    with_both.extend(&lines[1..]);
    let r = report(dir.path(), "traces.zst", &length_framed(with_both));
    let input = &r["inputs"][0];
    assert_eq!(input["format"], "otlp");
    assert_eq!(input["lines"], lines.len() + 2);
    assert_eq!(input["events"], as_is["inputs"][0]["events"]);
    assert_eq!(input["skipped"], 1, "{input}");
    let problem = &input["problems"][0];
    assert_eq!(problem["line"], 3);
    let said = format!("line longer than 256 MiB ({long} bytes): not read");
    let reason = problem["reason"].as_str().unwrap();
    assert!(reason.starts_with(&said), "{reason}");
    assert_eq!(findings(&r), findings(&as_is));
}
