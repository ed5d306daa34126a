//! The hostile-input set (`fixtures/hostile/`, plus inputs too big to commit, generated here):
//! every case runs the binary, which must not panic or die by a signal, must account for every
//! line, and must find what the data shows and nothing it does not.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn hostile(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/hostile")
        .join(name)
}

struct Run {
    code: Option<i32>,
    report: Value,
    stderr: String,
}

/// Runs `scan --format json` with the given arguments; fails on a panic or a signal.
fn scan(args: &[&str]) -> Run {
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .arg("scan")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    assert!(out.status.code().is_some(), "{args:?} died by a signal");
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    Run {
        code: out.status.code(),
        report,
        stderr,
    }
}

fn scan_file(name: &str, extra: &[&str]) -> Run {
    let p = hostile(name);
    let mut args = vec![p.to_str().unwrap()];
    args.extend_from_slice(extra);
    scan(&args)
}

fn input(r: &Run, i: usize) -> &Value {
    &r.report["inputs"][i]
}

/// `lines = events + ignored + skipped` for every input.
fn assert_accounted(r: &Run) {
    for i in r.report["inputs"].as_array().expect("inputs") {
        let n = |k: &str| i[k].as_u64().unwrap();
        assert_eq!(n("lines"), n("events") + n("ignored") + n("skipped"), "{i}");
    }
}

/// (rule, effects, excess) of every finding, for comparisons.
fn findings(r: &Run) -> Vec<(String, Vec<String>, Option<i128>)> {
    r.report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["effects"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e.as_str().unwrap().to_string())
                    .collect(),
                f["excess_minor"].as_i64().map(i128::from).or_else(|| {
                    f["excess_minor"]
                        .as_u64()
                        .map(i128::from)
                        .or_else(|| f["excess_minor"].to_string().parse().ok())
                }),
            )
        })
        .collect()
}

fn rules(r: &Run) -> Vec<String> {
    findings(r).into_iter().map(|f| f.0).collect()
}

fn incident() -> Run {
    scan(&[Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/incident-a88214/trace.log")
        .to_str()
        .unwrap()])
}

#[test]
fn a_text_log_cut_mid_line_is_read_to_its_last_byte() {
    let r = scan_file("cut-mid-line.log", &[]);
    assert_accounted(&r);
    assert_eq!(input(&r, 0)["lines"], 9);
    // The cut line still names the retry's refund: the duplicate is found, and the amount
    // that was cut off is not invented (the excess counts known amounts only).
    let f = findings(&r);
    assert_eq!(f[0].0, "duplicate-effect");
    assert_eq!(f[0].1, ["rf_8XM1", "rf_9KQ2"]);
}

#[test]
fn a_jsonl_log_cut_mid_line_skips_the_cut_line_with_its_reason() {
    let r = scan_file("cut-mid-line.jsonl", &[]);
    assert_accounted(&r);
    let i = input(&r, 0);
    assert_eq!(
        (i["lines"].as_u64(), i["skipped"].as_u64()),
        (Some(9), Some(1))
    );
    assert_eq!(i["problems"][0]["line"], 9);
    assert!(
        i["problems"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("not JSON")
    );
    assert!(r.stderr.contains("cut-mid-line.jsonl:9: skipped: not JSON"));
}

#[test]
fn crlf_line_endings_read_like_lf_in_every_format() {
    let base = findings(&incident());
    for f in ["crlf.log", "crlf.jsonl"] {
        let r = scan_file(f, &[]);
        assert_accounted(&r);
        assert_eq!(input(&r, 0)["skipped"], 0, "{f}");
        assert_eq!(findings(&r), base, "{f}");
    }
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/incident-csv/trace.log");
    let r = scan(&[
        hostile("crlf.csv").to_str().unwrap(),
        trace.to_str().unwrap(),
    ]);
    assert_eq!(input(&r, 0)["skipped"], 0);
    assert_eq!(findings(&r), base);
}

#[test]
fn invalid_utf8_is_replaced_not_fatal() {
    let r = scan_file("invalid-utf8.log", &[]);
    assert_accounted(&r);
    let i = input(&r, 0);
    // The tool call with invalid bytes inside a string is an event; the one whose JSON is
    // followed by a stray byte is skipped with its reason.
    assert_eq!(
        (i["events"].as_u64(), i["skipped"].as_u64()),
        (Some(4), Some(1))
    );
    assert!(
        i["problems"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("not JSON")
    );
    assert_eq!(r.code, Some(0));
}

#[test]
fn nul_bytes_are_trimmed_or_skipped_never_fatal() {
    let r = scan_file("nul-byte.log", &[]);
    assert_accounted(&r);
    let i = input(&r, 0);
    // Line 2 ends in NUL padding and line 3 is only NULs (trimmed: read, and blank);
    // NULs inside a field or before a JSON line are skipped with a reason.
    assert_eq!(i["lines"], 5);
    let problems: Vec<u64> = i["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["line"].as_u64().unwrap())
        .collect();
    assert!(!problems.contains(&2) && !problems.contains(&3), "{i}");
}

#[test]
fn empty_and_blank_files_are_inputs_with_nothing_in_them() {
    // Alone, an empty file audited nothing: exit 2 (tests/scan.rs), its report written.
    let r = scan_file("empty.log", &[]);
    assert_eq!(input(&r, 0)["lines"], 0);
    assert_eq!(r.code, Some(2));
    let r = scan_file("blank-lines.log", &[]);
    assert_accounted(&r);
    assert_eq!(
        (
            input(&r, 0)["lines"].as_u64(),
            input(&r, 0)["ignored"].as_u64()
        ),
        (Some(6), Some(6))
    );
    // Nothing but blank lines is nothing to audit either, alone (review37 M4).
    assert_eq!(r.code, Some(2));
}

#[test]
fn a_text_line_in_a_jsonl_file_is_skipped_and_the_rest_read() {
    let r = scan_file("jsonl-with-text-line.jsonl", &[]);
    assert_accounted(&r);
    assert_eq!(input(&r, 0)["format"], "jsonl");
    assert_eq!(input(&r, 0)["skipped"], 1);
    assert_eq!(input(&r, 0)["problems"][0]["line"], 5);
    assert_eq!(findings(&r), findings(&incident()));
}

#[test]
fn timestamps_out_of_order_are_sorted_before_matching() {
    let base = findings(&incident());
    for f in ["out-of-order.log", "out-of-order.jsonl"] {
        let r = scan_file(f, &[]);
        assert_accounted(&r);
        assert_eq!(findings(&r), base, "{f}");
    }
}

#[test]
fn a_time_only_file_crossing_midnight_twice_lands_on_the_third_day() {
    let r = scan_file("midnight-twice.log", &["--date", "2026-11-05"]);
    assert_accounted(&r);
    let f = &r.report["findings"][0];
    assert_eq!(f["rule"], "duplicate-effect");
    assert_eq!(f["effects"], serde_json::json!(["rf_M2", "rf_M3"]));
    assert_eq!(f["first_effect_at"], "2026-11-06T23:59:58.300Z");
    assert_eq!(f["last_effect_at"], "2026-11-07T00:00:08.900Z");
    assert_eq!(
        r.report["summary"]["period"]["first_event_at"],
        "2026-11-05T22:00:00.000Z"
    );
    // The first call (day one) is no duplicate of anything.
    assert_eq!(
        rules(&r)
            .iter()
            .filter(|r| *r == "duplicate-effect")
            .count(),
        1
    );
}

#[test]
fn amounts_are_exact_or_refused_with_a_reason() {
    let r = scan_file("amounts.jsonl", &[]);
    assert_accounted(&r);
    let reasons: Vec<(u64, String)> = input(&r, 0)["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["line"].as_u64().unwrap(),
                p["reason"].as_str().unwrap().into(),
            )
        })
        .collect();
    // 4500.5 minor units and an amount beyond i64 are refused, never rounded or clamped;
    // a currency that is no code at all is refused.
    assert_eq!(
        reasons.iter().map(|r| r.0).collect::<Vec<_>>(),
        [5, 6, 12],
        "{reasons:?}"
    );
    let f = findings(&r);
    let excess = |id: &str| f.iter().find(|x| x.1[0] == id).and_then(|x| x.2);
    // A ledger's minus sign is not the refund's size: the excess is 45.00, not -45.00.
    assert_eq!(excess("rf_neg"), Some(4500));
    assert_eq!(excess("rf_zero"), Some(0));
    // Two effects of i64::MAX beyond the first: the exact sum, beyond i64.
    assert_eq!(excess("rf_max"), Some(2 * i64::MAX as i128));
    // A well-formed code that is not ISO 4217 is kept as it is, with its own total.
    assert_eq!(excess("rf_iso"), Some(4500));
    let sums = &r.report["summary"]["excess"];
    assert_eq!(sums[0]["currency"], "GBP");
    assert_eq!(
        sums[0]["amount_minor"].to_string(),
        (2 * i64::MAX as i128 + 4500).to_string()
    );
    assert_eq!(sums[1]["currency"], "ZZZ");

    let r = scan_file("amounts.csv", &[]);
    assert_accounted(&r);
    let lines: Vec<u64> = input(&r, 0)["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["line"].as_u64().unwrap())
        .collect();
    // 45.005 GBP, a decimal beyond i64, 45.00 in a currency with no known exponent, 1e3.
    assert_eq!(lines, [4, 5, 6, 8]);
    assert_eq!(input(&r, 0)["events"], 3);

    let r = scan_file("amounts.log", &[]);
    assert_accounted(&r);
    assert_eq!(input(&r, 0)["events"], 1, "only -4500p is an amount");
    assert_eq!(input(&r, 0)["skipped"], 4);
}

#[test]
fn an_order_id_with_spaces_and_quotes_survives_every_format() {
    let r = scan_file("order-quotes.jsonl", &[]);
    let order = "A 88214 \"rush\", 'x'";
    assert_eq!(r.report["findings"][0]["order"], order);
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .args(["scan", hostile("order-quotes.jsonl").to_str().unwrap()])
        .args(["--format", "csv"])
        .output()
        .unwrap();
    let mut rdr = csv::Reader::from_reader(&out.stdout[..]);
    let row = rdr.records().next().unwrap().unwrap();
    assert_eq!(&row[3], order);
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .args(["timeline", hostile("order-quotes.jsonl").to_str().unwrap()])
        .args(["--order", order])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("rf_Q2"));
}

#[test]
fn the_same_effect_from_several_replicas_counts_once() {
    // One call, one refund, logged by three replicas: no duplicate at all.
    let r = scan(&[hostile("replicas-single").to_str().unwrap()]);
    assert!(findings(&r).is_empty(), "{:?}", findings(&r));
    // The incident with both refunds logged by two more replicas: still one duplicate of
    // one refund, GBP 45.00, not three.
    let r = scan(&[hostile("replicas").to_str().unwrap()]);
    assert_eq!(findings(&r), findings(&incident()));
}

/// A 50 MB line is longer than a line is read (16 MiB): skipped with its length, the
/// incident around it read as ever (`tests/long_lines.rs` has the rest).
#[test]
fn a_50_mb_single_line_is_skipped_and_accounted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.log");
    let trace = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/incident-a88214/trace.log"),
    )
    .unwrap();
    let mut data = Vec::with_capacity(51 << 20);
    data.extend_from_slice(&trace[..trace.iter().position(|&b| b == b'\n').unwrap() + 1]);
    data.extend_from_slice(b"14:02:11.403  healthcheck ok  payload=");
    data.resize(data.len() + (50 << 20), b'x');
    data.push(b'\n');
    data.extend_from_slice(&trace[trace.iter().position(|&b| b == b'\n').unwrap() + 1..]);
    std::fs::write(&path, &data).unwrap();
    let r = scan(&[path.to_str().unwrap()]);
    assert_accounted(&r);
    assert_eq!(input(&r, 0)["lines"], 10);
    assert_eq!(input(&r, 0)["events"], 8);
    assert_eq!(input(&r, 0)["skipped"], 1);
    let why = &input(&r, 0)["problems"][0];
    assert_eq!(why["line"], 2);
    let long = 38 + (50 << 20);
    let said = format!("line longer than 16 MiB ({long} bytes): not read");
    assert!(why["reason"].as_str().unwrap().starts_with(&said), "{why}");
    assert_eq!(findings(&r), findings(&incident()));
}

/// One call with `n` attempts, each timing out, and one order with `n` effects.
fn many(dir: &Path, n: usize) -> PathBuf {
    use std::fmt::Write;
    let mut s = String::with_capacity(n * 200);
    s.push_str("# date: 2026-11-03\n");
    s.push_str("00:00:00.000  agent run big  step 1  tool=issue_refund  args={\"order\":\"Z-1\",\"amount_p\":1}\n");
    for i in 0..n {
        let ms = i as u64 * 100;
        let t = |ms: u64| {
            format!(
                "{:02}:{:02}:{:02}.{:03}",
                ms / 3_600_000,
                ms / 60_000 % 60,
                ms / 1000 % 60,
                ms % 1000
            )
        };
        let _ = writeln!(
            s,
            "{}  POST https://payments.internal/v1/refunds  (attempt {})",
            t(ms),
            i + 1
        );
        let _ = writeln!(
            s,
            "{}  urllib3.exceptions.ReadTimeoutError: read timeout=10",
            t(ms + 50)
        );
    }
    s.push_str("--- payments service ---\n");
    for i in 0..n {
        let ms = i as u64 * 100 + 10;
        let _ = writeln!(
            s,
            "{:02}:{:02}:{:02}.{:03}  refund rf_{i}  order Z-1  1p",
            ms / 3_600_000,
            ms / 60_000 % 60,
            ms / 1000 % 60,
            ms % 1000
        );
    }
    let p = dir.join(format!("many-{n}.log"));
    std::fs::write(&p, s).unwrap();
    p
}

#[test]
fn a_hundred_thousand_attempts_and_effects_take_near_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let small = many(dir.path(), 10_000);
    let large = many(dir.path(), 100_000);
    let time = |p: &Path| {
        let start = Instant::now();
        let r = scan(&[p.to_str().unwrap()]);
        (start.elapsed(), r)
    };
    let (t_small, _) = time(&small);
    let (t_large, r) = time(&large);
    assert_accounted(&r);
    let f = r.report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "duplicate-effect")
        .expect("a duplicate-effect");
    assert_eq!(f["effects"].as_array().unwrap().len(), 100_000);
    assert_eq!(f["excess_minor"], 99_999);
    // Ten times the input: a quadratic matcher takes a hundred times as long. Allow 30x
    // (a debug build, a loaded CI machine) and a generous absolute bound.
    let ratio = t_large.as_secs_f64() / t_small.as_secs_f64().max(0.05);
    assert!(
        ratio < 30.0,
        "10k took {t_small:?}, 100k took {t_large:?} ({ratio:.1}x)"
    );
    assert!(t_large < Duration::from_secs(120), "100k took {t_large:?}");
}

/// Order ids carrying escape sequences (clear the screen, retitle the window, BEL), and a
/// skipped line's reason quoting them (a text log's are stripped as it is read; JSON's
/// `\u001b` is not): the table, the timeline and standard error show them
/// as `\x1b`, never send them to the terminal (review36 L5). JSON escapes them itself.
#[test]
fn escape_sequences_from_the_logs_never_reach_the_terminal() {
    let run = |args: &[&str]| {
        let out = Command::cargo_bin("idem-audit")
            .unwrap()
            .args(args)
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (text(&out.stdout), text(&out.stderr))
    };
    let jsonl = hostile("terminal-escapes.jsonl");
    let jsonl = jsonl.to_str().unwrap();
    let (table, stderr) = run(&["scan", jsonl]);
    let (timeline, _) = run(&[
        "timeline",
        jsonl,
        "--order",
        "A-1\u{1b}[2J\u{1b}]0;pwned\u{7}",
    ]);
    for out in [&table, &stderr, &timeline] {
        assert!(!out.contains(['\u{1b}', '\u{7}']), "{out}");
    }
    assert!(table.contains(r"A-1\x1b[2J\x1b]0;pwned\x07"), "{table}");
    assert!(timeline.contains(r"order A-1\x1b[2J"), "{timeline}");
    assert!(stderr.contains(r"45\x1b]0;pwned\x07"), "{stderr}");
    let (json, _) = run(&["scan", jsonl, "--format", "json"]);
    assert!(json.contains(r"A-1\u001b[2J"), "{json}");
}
