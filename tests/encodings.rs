//! Inputs in other encodings than UTF-8 (review37 M2, M3): UTF-16 decoded as it streams
//! (a byte-order mark decides; NULs every other byte are a guess, said so), and bytes that
//! are no UTF-8 read so that distinct bytes stay distinct, with a note per input.

use idem_audit::report::Report;
use std::io::Write;
use std::path::Path;

mod common;
use common::{duplicate, fixture, scan};

fn scan_json(paths: &[&Path]) -> (Option<i32>, Report, String) {
    let mut args: Vec<&str> = paths.iter().map(|p| p.to_str().unwrap()).collect();
    args.extend(["--format", "json"]);
    let (code, stdout, stderr) = scan(&args);
    let r = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    (code, r, stderr)
}

/// The incident-csv trace in UTF-16 (`mark` first, when given), written to `dir/trace.log`
/// beside its refunds export; `damage` is put on the trace's third line.
fn utf16_incident(dir: &Path, big: bool, mark: bool, damage: &[u16]) {
    let trace = std::fs::read_to_string(fixture("incident-csv/trace.log")).unwrap();
    let mut units: Vec<u16> = Vec::new();
    for (n, line) in trace.split_inclusive('\n').enumerate() {
        if n == 2 {
            units.extend_from_slice(damage);
        }
        units.extend(line.encode_utf16());
    }
    let mut bytes = Vec::new();
    if mark {
        units.insert(0, 0xFEFF);
    }
    for u in units {
        bytes.extend(if big {
            u.to_be_bytes()
        } else {
            u.to_le_bytes()
        });
    }
    std::fs::write(dir.join("trace.log"), bytes).unwrap();
    std::fs::copy(fixture("incident-csv/refunds.csv"), dir.join("refunds.csv")).unwrap();
}

fn trace_input(r: &Report) -> &idem_audit::report::InputReport {
    r.inputs
        .iter()
        .find(|i| i.path.ends_with("trace.log"))
        .unwrap()
}

#[test]
fn utf16_with_a_mark_is_read_in_a_folder_and_named_without_a_note() {
    for big in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        utf16_incident(dir.path(), big, true, &[]);
        let named = [dir.path().join("trace.log"), dir.path().join("refunds.csv")];
        for paths in [
            vec![dir.path()],
            named.iter().map(|p| p.as_path()).collect(),
        ] {
            let (code, r, stderr) = scan_json(&paths);
            assert_eq!(code, Some(1), "{stderr}");
            let trace = trace_input(&r);
            assert_eq!(trace.format.as_deref(), Some("text"));
            assert_eq!(
                (trace.skipped, trace.note.as_deref()),
                (0, None),
                "{stderr}"
            );
            assert_eq!(duplicate(&r).cause.as_deref(), Some("client-retry"));
        }
    }
}

#[test]
fn utf16_without_a_mark_is_read_and_said_to_be_a_guess() {
    let dir = tempfile::tempdir().unwrap();
    utf16_incident(dir.path(), false, false, &[]);
    let (code, r, stderr) = scan_json(&[dir.path()]);
    assert_eq!(code, Some(1), "{stderr}");
    let note = trace_input(&r).note.as_deref().unwrap();
    assert!(note.contains("no byte-order mark"), "{note}");
    assert!(note.contains("iconv -f UTF-16LE -t UTF-8"), "{note}");
    assert!(stderr.contains(&format!("trace.log: {note}")), "{stderr}");
}

#[test]
fn unpaired_surrogates_are_replaced_and_noted_with_their_first_line() {
    let dir = tempfile::tempdir().unwrap();
    // A lone low surrogate, and a lone high one (no low after it), before line 3's text.
    utf16_incident(dir.path(), false, true, &[0xDC00, 0xD800]);
    let (code, r, stderr) = scan_json(&[dir.path()]);
    assert_eq!(code, Some(1), "{stderr}");
    let note = trace_input(&r).note.as_deref().unwrap();
    assert!(note.contains("2 unpaired surrogates"), "{note}");
    assert!(note.contains("first on line 3"), "{note}");
}

#[test]
fn gzipped_utf16_on_standard_input_is_read() {
    let dir = tempfile::tempdir().unwrap();
    utf16_incident(dir.path(), false, true, &[]);
    let raw = std::fs::read(dir.path().join("trace.log")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&raw).unwrap();
    let out = assert_cmd::Command::cargo_bin("idem-audit")
        .unwrap()
        .args([
            "scan",
            "-",
            dir.path().join("refunds.csv").to_str().unwrap(),
        ])
        .args(["--format", "json"])
        .write_stdin(gz.finish().unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let r: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(duplicate(&r).cause.as_deref(), Some("client-retry"));
}

/// One input line of an order, an effect id and a time.
type Line = dyn Fn(&[u8], &str, &str) -> Vec<u8>;

/// Two orders that differ only in a Latin-1 byte, in each line format and a CSV export:
/// no finding, and a note naming how many lines were read so and the first.
#[test]
fn latin1_orders_stay_distinct_and_are_noted_once_per_input() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (&b"M\xFCller-1"[..], &b"M\xF6ller-1"[..]);
    let lines = |each: &Line| -> Vec<u8> {
        [each(a, "rf_1", "14:02:11"), each(b, "rf_2", "14:05:11")].concat()
    };
    let text = lines(&|order, id, at| {
        [
            format!("2026-11-03 {at}.501  refund {id}  order ").as_bytes(),
            order,
            b"  4500p\n",
        ]
        .concat()
    });
    let jsonl = lines(&|order, id, at| {
        [
            format!(r#"{{"ts":"2026-11-03T{at}Z","type":"effect","effect_id":"{id}","kind":"refund","order":""#).as_bytes(),
            order,
            b"\",\"amount_p\":4500}\n",
        ]
        .concat()
    });
    let csv = [
        &b"id,amount,currency,created,order\n"[..],
        &lines(&|order, id, at| {
            [
                format!("{id},45.00,gbp,2026-11-03 {at},").as_bytes(),
                order,
                b"\n",
            ]
            .concat()
        }),
    ]
    .concat();
    for (name, bytes, first) in [("a.log", text, 1), ("b.jsonl", jsonl, 1), ("c.csv", csv, 2)] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let (code, r, stderr) = scan_json(&[&path]);
        assert_eq!(code, Some(0), "{name}: {stderr}");
        assert!(r.findings.is_empty(), "{name}: {:#?}", r.findings);
        assert_eq!(r.inputs[0].events, 2, "{name}: {stderr}");
        let note = r.inputs[0].note.as_deref().unwrap_or_default();
        let said = format!(
            "2 lines are not UTF-8 (the first: line {first}): they were read as Windows-1252"
        );
        assert!(note.starts_with(&said), "{name}: {note}");
        assert_eq!(stderr.matches("not UTF-8").count(), 1, "{stderr}");
    }
}

/// The same orders in UTF-8: no note, and one of them twice is still one order.
#[test]
fn utf8_input_has_no_note() {
    let (code, r, stderr) = scan_json(&[&fixture("incident-csv")]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(r.inputs.iter().all(|i| i.note.is_none()), "{stderr}");
    assert!(!stderr.contains("UTF"), "{stderr}");
}

/// A service's pino-pretty records read as text, in Windows-1252, their orders in the
/// members below each record, lines the reader reads ahead of the record's own: read as
/// the same log in UTF-8 is (one order refunded twice, the other once), and every such line
/// noted. Before, the members ahead were given as their bytes, no JSON string, and dropped:
/// the refunds had no order, and the duplicate was missed.
#[test]
fn latin1_members_read_ahead_read_as_in_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let record = |at: &str, id: &str, order: &str| {
        format!(
            "[2026-12-06 08:46:{at} +0000] INFO (payments/20213): refund created\n    \
             refundId: \"{id}\"\n    orderId: \"{order}\"\n    amount: 4500\n    \
             currency: \"GBP\"\n"
        )
    };
    let log = [
        record("19.056", "re_1", "Müller-1"),
        record("19.357", "re_2", "Müller-1"),
        record("20.357", "re_3", "Möller-1"),
    ]
    .concat();
    let latin: Vec<u8> = (log.chars())
        .map(|c| u8::try_from(u32::from(c)).unwrap())
        .collect();
    let mut reports = Vec::new();
    for (name, bytes) in [("utf8.log", log.as_bytes()), ("latin.log", &latin[..])] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let path = path.to_str().unwrap();
        let (code, stdout, stderr) = scan(&[path, "--input-format", "text", "--format", "json"]);
        assert_eq!(code, Some(1), "{name}: {stderr}");
        let r: Report = serde_json::from_str(&stdout).unwrap();
        reports.push((r, stderr));
    }
    let (utf8, latin) = (&reports[0], &reports[1]);
    let found = |r: &Report| -> Vec<(Option<String>, Vec<String>)> {
        (r.findings.iter())
            .map(|f| (f.order.clone(), f.effects.clone()))
            .collect()
    };
    assert_eq!(found(&latin.0), found(&utf8.0));
    assert_eq!(duplicate(&latin.0).order.as_deref(), Some("Müller-1"));
    assert!(utf8.0.inputs[0].note.is_none(), "{}", utf8.1);
    let note = latin.0.inputs[0].note.as_deref().unwrap_or_default();
    assert!(
        note.starts_with("3 lines are not UTF-8 (the first: line 3)"),
        "{note}"
    );
}
