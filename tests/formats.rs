//! Input formats end to end (issue 8): the incident written as JSON Lines, and as a text
//! trace plus a settlement export, gives the text fixture's duplicate; gzip and zstd are
//! transparent; folders are read in order with non-logs passed over; bad rows are reported
//! as `path:line: why` and the rest audited; `--tz`, `--date` and `--max-skew` take effect.

use assert_cmd::Command;
use idem_audit::report::{FindingReport, Report};
use std::io::Write;
use std::path::Path;

mod common;
use common::{duplicate, fixture, report, scan};

/// What must agree between two spellings of one incident.
fn essentials(f: &FindingReport) -> impl PartialEq + std::fmt::Debug {
    (
        f.order.clone(),
        f.run.clone(),
        f.step,
        f.tool.clone(),
        f.effects.clone(),
        f.currency.clone(),
        f.excess_minor,
        f.cause.clone(),
    )
}

#[test]
fn the_incident_as_json_lines_gives_the_text_fixtures_duplicate() {
    let text = report(&[&fixture("incident-a88214/trace.log")], &[]);
    let jsonl = report(&[&fixture("incident-jsonl/events.jsonl")], &[]);
    assert_eq!(essentials(duplicate(&jsonl)), essentials(duplicate(&text)));
    assert_eq!(duplicate(&jsonl).cause.as_deref(), Some("client-retry"));
    assert_eq!(jsonl.inputs[0].format.as_deref(), Some("jsonl"));
    let rules = |r: &Report| {
        r.findings
            .iter()
            .map(|f| f.rule.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(rules(&jsonl), rules(&text));
}

#[test]
fn the_incident_as_a_text_trace_and_a_csv_export_gives_the_same_duplicate() {
    let text = report(&[&fixture("incident-a88214/trace.log")], &[]);
    let mixed = report(&[&fixture("incident-csv")], &[]);
    assert_eq!(essentials(duplicate(&mixed)), essentials(duplicate(&text)));
    let formats: Vec<_> = mixed
        .inputs
        .iter()
        .map(|i| {
            (
                i.path.rsplit('/').next().unwrap().to_string(),
                i.format.clone(),
            )
        })
        .collect();
    assert_eq!(
        formats,
        [
            ("refunds.csv".to_string(), Some("csv".to_string())),
            ("trace.log".to_string(), Some("text".to_string()))
        ]
    );
    // Two rows span two physical lines each; every line is accounted for.
    let csv = &mixed.inputs[0];
    assert_eq!((csv.lines, csv.events, csv.skipped), (6, 3, 0));
    // rf_8XM1 is exported to the second (14:02:11), before attempt 1 was sent (14:02:11.418):
    // only `--max-skew` lets it be matched to the call, so without skew it is no duplicate.
    let no_skew = report(&[&fixture("incident-csv")], &["--max-skew", "0s"]);
    assert!(
        !no_skew.findings.iter().any(|f| f.rule == "duplicate-effect"
            && f.effects == ["rf_8XM1", "rf_9KQ2"]
            && f.cause.as_deref() == Some("client-retry")),
        "{:#?}",
        no_skew.findings
    );
}

/// The JSON report of `copy` (a compressed copy of `plain`) is the plain file's, but for the
/// path; returns it.
fn same_report_as_plain(plain: &Path, copy: &Path) -> Report {
    let report_of = |p: &Path| scan(&[p.to_str().unwrap(), "--format", "json"]).1;
    let a = report_of(plain);
    let b = report_of(copy).replace(copy.to_str().unwrap(), plain.to_str().unwrap());
    assert_eq!(a, b, "{}", plain.display());
    serde_json::from_str(&a).unwrap()
}

#[test]
fn a_gzip_copy_gives_byte_identical_json_apart_from_its_path() {
    let dir = tempfile::tempdir().unwrap();
    for (case, name) in [
        ("incident-jsonl/events.jsonl", "events.jsonl.gz"),
        // Detected by its magic bytes, not its name.
        ("incident-a88214/trace.log", "trace.log"),
    ] {
        let plain = fixture(case);
        let gz = dir.path().join(name);
        let mut enc = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).unwrap(),
            flate2::Compression::default(),
        );
        enc.write_all(&std::fs::read(&plain).unwrap()).unwrap();
        enc.finish().unwrap();
        let r = same_report_as_plain(&plain, &gz);
        assert!(r.findings.iter().any(|f| f.rule == "duplicate-effect"));
    }
}

/// The OpenTelemetry Collector's file exporter, compressing, writes a zstd frame per batch: a
/// trace in frames (and a log in one frame, named as a plain log) reads as the plain file.
#[test]
fn a_zstd_copy_in_frames_gives_byte_identical_json_apart_from_its_path() {
    let dir = tempfile::tempdir().unwrap();
    for (case, name, frames) in [
        ("otlp-strands-genai/trace.jsonl", "trace.jsonl.zst", 3),
        ("incident-a88214/trace.log", "trace.log", 1),
    ] {
        let plain = fixture(case);
        let text = std::fs::read_to_string(&plain).unwrap();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let per_frame = lines.len().div_ceil(frames);
        let mut bytes = Vec::new();
        for chunk in lines.chunks(per_frame) {
            bytes.extend(zstd::encode_all(chunk.concat().as_bytes(), 3).unwrap());
        }
        let zst = dir.path().join(name);
        std::fs::write(&zst, bytes).unwrap();
        let r = same_report_as_plain(&plain, &zst);
        assert!(!r.findings.is_empty(), "{case}");
    }
}

#[test]
fn bad_csv_rows_and_non_json_lines_are_reported_and_the_rest_audited() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = std::fs::read_to_string(fixture("incident-jsonl/events.jsonl")).unwrap();
    // The agent's side as JSON Lines with a broken line; the service's side as an export with
    // a bad amount.
    let client: Vec<&str> = jsonl
        .lines()
        .filter(|l| !l.contains("\"effect\""))
        .collect();
    let mut lines = client.clone();
    lines.insert(
        3,
        "{\"ts\":\"2026-11-03T14:02:21.500Z\",\"type\":\"attempt\" oops",
    );
    let events = dir.path().join("agent.jsonl");
    std::fs::write(&events, lines.join("\n")).unwrap();
    let export = dir.path().join("refunds.csv");
    std::fs::write(
        &export,
        "id,amount,currency,created,order_id\n\
         rf_8XM1,45.00,GBP,2026-11-03T14:02:11.501Z,A-88214\n\
         rf_5ZZ9,forty-five,GBP,2026-11-03T14:02:12Z,A-88214\n\
         rf_9KQ2,45.00,GBP,2026-11-03T14:02:23.088Z,A-88214\n",
    )
    .unwrap();
    let (e, x) = (events.to_str().unwrap(), export.to_str().unwrap());
    let (code, stdout, stderr) = scan(&[e, x, "--format", "json"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("{e}:4: skipped: not JSON")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "{x}:3: skipped: amount `forty-five` is not a decimal amount"
        )),
        "{stderr}"
    );
    let r: Report = serde_json::from_str(&stdout).unwrap();
    assert_eq!((r.inputs[0].skipped, r.inputs[1].skipped), (1, 1));
    for i in &r.inputs {
        assert_eq!(i.lines, i.events + i.ignored + i.skipped, "{}", i.path);
    }
    let dup = duplicate(&r);
    assert_eq!(dup.effects, ["rf_8XM1", "rf_9KQ2"]);
    assert_eq!(dup.cause.as_deref(), Some("client-retry"));
    assert_eq!(scan(&[e, x, "--strict"]).0, Some(2));
}

#[test]
fn folders_are_read_in_order_skipping_dotfiles_excludes_and_non_logs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("b/nested")).unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::copy(
        fixture("incident-jsonl/events.jsonl"),
        root.join("b/nested/events.jsonl"),
    )
    .unwrap();
    std::fs::copy(
        fixture("incident-csv/refunds.csv"),
        root.join("a-refunds.csv"),
    )
    .unwrap();
    std::fs::write(
        root.join("truth.json"),
        "{\n  \"expected\": [\"rf_8XM1\"]\n}\n",
    )
    .unwrap();
    std::fs::write(root.join("README.md"), "Logs from the A-88214 incident.\n").unwrap();
    std::fs::write(root.join(".hidden.log"), "garbage\n").unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(root.join("b/skip-me.log"), "garbage\n").unwrap();
    let r = report(&[root], &["--exclude", "skip-*"]);
    let shown: Vec<(String, Option<String>, bool)> = r
        .inputs
        .iter()
        .map(|i| {
            let rel = i
                .path
                .strip_prefix(root.to_str().unwrap())
                .unwrap()
                .to_string();
            (rel, i.format.clone(), i.note.is_some())
        })
        .collect();
    let s = |p: &str, f: Option<&str>, note: bool| (p.to_string(), f.map(str::to_string), note);
    assert_eq!(
        shown,
        [
            s("/README.md", None, true),
            s("/a-refunds.csv", Some("csv"), false),
            s("/b/nested/events.jsonl", Some("jsonl"), false),
            s("/truth.json", None, true),
        ]
    );
    // Correlation is across all of them: the export's rf_8XM1 merges with the log's.
    let dup = duplicate(&r);
    assert_eq!(dup.effects, ["rf_8XM1", "rf_9KQ2"]);
}

#[test]
fn input_format_forces_a_parser_and_stdin_is_detected() {
    let text = std::fs::read(fixture("incident-jsonl/events.jsonl")).unwrap();
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .args(["scan", "-", "--format", "json"])
        .write_stdin(text)
        .output()
        .unwrap();
    let r: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r.inputs[0].format.as_deref(), Some("jsonl"));
    assert_eq!(duplicate(&r).effects, ["rf_8XM1", "rf_9KQ2"]);
    // Forced to CSV, a JSON Lines file has no effect id column: a clear error, exit 2.
    let p = fixture("incident-jsonl/events.jsonl");
    let (code, _, stderr) = scan(&[p.to_str().unwrap(), "--input-format", "csv"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("no effect id column"), "{stderr}");
}

#[test]
fn tz_and_date_place_offset_less_and_time_only_stamps() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("refunds.csv");
    std::fs::write(
        &export,
        "id,amount,currency,created,order_id\nrf_1,45.00,GBP,2026-11-03 15:02:11,A-1\nrf_2,45.00,GBP,2026-11-03 15:02:12,A-1\n",
    )
    .unwrap();
    let r = report(&[&export], &["--tz", "+01:00"]);
    let dup = duplicate(&r);
    assert_eq!(dup.cause.as_deref(), Some("unknown"));
    assert_eq!(
        dup.first_effect_at.as_deref(),
        Some("2026-11-03T14:02:11.000Z")
    );
    let log = dir.path().join("effects.jsonl");
    std::fs::write(
        &log,
        "{\"ts\":\"23:59:59.500\",\"type\":\"effect\",\"effect_id\":\"rf_1\",\"kind\":\"refund\",\"order\":\"A-1\",\"amount_p\":4500}\n\
         {\"ts\":\"00:00:01.000\",\"type\":\"effect\",\"effect_id\":\"rf_2\",\"kind\":\"refund\",\"order\":\"A-1\",\"amount_p\":4500}\n",
    )
    .unwrap();
    let r = report(&[&log], &["--date", "2026-11-03"]);
    let dup = duplicate(&r);
    assert_eq!(
        dup.first_effect_at.as_deref(),
        Some("2026-11-03T23:59:59.500Z")
    );
    assert_eq!(
        dup.last_effect_at.as_deref(),
        Some("2026-11-04T00:00:01.000Z")
    );
    let (code, _, stderr) = scan(&[log.to_str().unwrap(), "--csv-map", "ordr=Order"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("unknown field `ordr`"), "{stderr}");
}

/// SPEC §3.6: only a line's own `ts` moves a time-only log's midnight rollover. An
/// effect's `settled_at` late in the evening (read before its `ts`) once moved the next
/// line to the next day, so two refunds 1.4 s apart were not found. A settlement earlier
/// in the day than its line is on the next day.
#[test]
fn a_settlement_time_does_not_move_the_next_json_line_to_the_next_day() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("effects.jsonl");
    let effect = |id: &str, ts: &str, settled: &str| {
        format!(
            "{{\"settled_at\":\"{settled}\",\"ts\":\"{ts}\",\"type\":\"effect\",\"effect_id\":\"{id}\",\"kind\":\"refund\",\"order\":\"A-1\",\"amount_p\":4500}}\n"
        )
    };
    let write = |settled: &str| {
        let lines =
            effect("rf_1", "10:00:00.500", settled) + &effect("rf_2", "10:00:01.900", settled);
        std::fs::write(&log, lines).unwrap();
    };
    write("23:30:00");
    let r = report(&[&log], &["--date", "2026-11-03"]);
    let dup = duplicate(&r);
    assert_eq!(dup.effects, ["rf_1", "rf_2"]);
    assert_eq!(
        dup.last_effect_at.as_deref(),
        Some("2026-11-03T10:00:01.900Z")
    );
    // Settled before its line's time: the next morning, and still no rollover of the lines.
    write("09:00:00");
    let r = report(&[&log], &["--date", "2026-11-03"]);
    assert_eq!(
        duplicate(&r).last_effect_at.as_deref(),
        Some("2026-11-03T10:00:01.900Z")
    );
}

#[test]
fn a_real_postgresql_dump_parses_row_by_row() {
    for (dump, rows) in [
        ("stuck.csv", 4),
        ("after-effect.csv", 2),
        ("clean.csv", 3),
        ("payload.csv", 2),
    ] {
        let r = report(&[&fixture(&format!("records/{dump}"))], &[]);
        let i = &r.inputs[0];
        assert_eq!(i.format.as_deref(), Some("records"), "{dump}");
        assert_eq!(
            (i.events, i.skipped, i.lines),
            (rows, 0, rows + 1),
            "{dump}"
        );
    }
}
