//! Errors a person can act on, `--strict`, broken pipes, determinism, evidence that points at
//! real event lines, exact totals, and inputs left untouched.

use assert_cmd::Command;
use idem_audit::ingest::source::{self, Outcome};
use idem_audit::ingest::{ParseOptions, otlp};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bin() -> Command {
    Command::cargo_bin("idem-audit").unwrap()
}

/// Exit 2 and exactly one line on standard error that contains every `needle`.
fn assert_one_line_error(args: &[&str], needles: &[&str]) {
    let out = bin().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` not in {err}");
    }
}

#[test]
fn errors_name_the_thing_and_what_is_expected() {
    let fixture = root().join("fixtures/incident-a88214");
    let f = fixture.to_str().unwrap();
    assert_one_line_error(
        &["scan", "no/such/path.log"],
        &["no/such/path.log", "no such file"],
    );
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join(".hidden"), "x").unwrap();
    let e = empty.path().to_str().unwrap();
    assert_one_line_error(&["scan", e], &[e, "no readable files"]);
    assert_one_line_error(
        &["scan", f, "--max-skew", "2x"],
        &["--max-skew", "2x", "expected"],
    );
    assert_one_line_error(
        &["scan", f, "--input-format", "xml"],
        &[
            "--input-format",
            "xml",
            "text, jsonl, logfmt, node-console, pino-pretty, jul-xml, csv, otlp",
        ],
    );
    assert_one_line_error(&["scan"], &["PATHS"]);
}

#[test]
fn an_unreadable_input_is_named_and_exits_2_after_the_others_are_read() {
    let dir = tempfile::tempdir().unwrap();
    // A gzip stream cut short cannot be read, whoever runs the test (root reads any file
    // whatever its mode, so a chmod would prove nothing there).
    // So is a zstd stream cut short.
    let good = root().join("fixtures/incident-a88214/trace.log");
    let zst = zstd::encode_all(&std::fs::read(&good).unwrap()[..], 3).unwrap();
    // Chatter of several zstd blocks: half of it decompresses before the cut.
    let chatter: String = (0..40_000)
        .map(|i| {
            format!(
                "14:03:{:02}.{:03}  healthcheck ok  id={}\n",
                i % 60,
                i % 1000,
                i * 7919
            )
        })
        .collect();
    let long_zst = zstd::encode_all(chatter.as_bytes(), 3).unwrap();
    // A stream that fails before its first line is unreadable; one that fails after some
    // is read up to there, and said to be cut short (review37 M1).
    for (name, bytes, said) in [
        (
            "rotated.log.gz",
            vec![0x1f, 0x8b, 0x08, 0x00, b'x', b'y'],
            "; 1 unreadable\n",
        ),
        (
            "rotated.log.zst",
            zst[..zst.len() / 2].to_vec(),
            "; 1 unreadable\n",
        ),
        (
            "chatter.log.zst",
            long_zst[..long_zst.len() / 2].to_vec(),
            "; 1 cut short\n",
        ),
    ] {
        let bad = dir.path().join(name);
        std::fs::write(&bad, bytes).unwrap();
        let out = bin()
            .args(["scan", bad.to_str().unwrap(), good.to_str().unwrap()])
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(name) && !err.contains("panicked"), "{err}");
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            report["summary"]["errors"], 1,
            "the readable input is audited"
        );
        // The table's summary calls it unreadable, not passed over as another kind of file.
        let out = bin()
            .args(["scan", bad.to_str().unwrap(), good.to_str().unwrap()])
            .output()
            .unwrap();
        let table = String::from_utf8_lossy(&out.stdout);
        assert!(table.contains(said), "{table}");
        assert!(!table.contains("passed over"), "{table}");
    }
}

/// An input whose stream fails names the line it stopped at: after a line that ended, or
/// inside one it cut (then said to be cut by the failure, not by a writer still at work),
/// by its physical number in every format (an OTLP export's `lines` counts spans).
#[test]
fn a_failed_input_names_the_line_it_stopped_at() {
    use std::io::Write;
    let gzip = |bytes: &[u8]| {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    };
    let trace = std::fs::read(root().join("fixtures/incident-a88214/trace.log")).unwrap();
    let otlp = std::fs::read(root().join("fixtures/otlp-adk-genai/trace.jsonl")).unwrap();
    // The last line cut to `14:02:23.088  ref`: no event.
    let unended = &trace[..trace.len() - 57];
    let dir = tempfile::tempdir().unwrap();
    for (name, text, said) in [
        ("whole.log.gz", &trace[..], "cut short after line 9 ("),
        ("cut.log.gz", unended, "cut short inside line 9 ("),
        ("spans.jsonl.gz", &otlp[..], "cut short after line 7 ("),
    ] {
        // Bytes after the last gzip member that are none: the stream fails where they start.
        let bytes = [gzip(text), b"junk".to_vec()].concat();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = bin()
            .args(["scan", path.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(said), "{name}: {err}");
        let cut = err.contains("cut short by the failure that ended the input's stream");
        assert_eq!(cut, name == "cut.log.gz", "{name}: {err}");
        assert!(
            !err.contains("no newline at the end of the file"),
            "{name}: {err}"
        );
    }
}

#[test]
fn strict_exits_2_after_writing_the_report() {
    let cut = root().join("fixtures/hostile/cut-mid-line.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("report.json");
    let out = bin()
        .args([
            "scan",
            cut.to_str().unwrap(),
            "--strict",
            "--format",
            "json",
        ])
        .arg("-o")
        .arg(&out_file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let report: Value = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    assert_eq!(report["summary"]["lines_skipped"], 1);
    // Without --strict the same input is not an error.
    let out = bin()
        .args(["scan", cut.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

/// A report written as it is made still fails loudly when its output does (a full disk).
#[test]
fn a_report_that_cannot_be_written_exits_2_naming_the_output() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let month = root().join("fixtures/finance-month");
    for format in ["json", "csv", "table"] {
        let path = month.to_str().unwrap();
        let args = [
            "scan",
            path,
            "--quiet",
            "--format",
            format,
            "-o",
            "/dev/full",
        ];
        assert_one_line_error(&args, &["/dev/full", "cannot write the report"]);
    }
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let month = root().join("fixtures/finance-month");
    let cases: [&[&str]; 5] = [
        &["scan", month.to_str().unwrap()],
        &["scan", month.to_str().unwrap(), "--format", "json"],
        &["timeline", month.to_str().unwrap(), "--order", "A-1"],
        &["rules"],
        &["explain", "duplicate-effect"],
    ];
    for args in cases {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("idem-audit"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // `| head -0`: the reader is gone before anything is written.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code().is_some(), "{args:?}: killed by a signal");
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{args:?}: {err}"
        );
        assert_ne!(out.status.code(), Some(2), "{args:?}: {err}");
    }
}

/// Every fixture case: its inputs and extra arguments, as `tests/fixtures.rs` runs them.
fn cases() -> Vec<(String, Vec<String>, Vec<String>)> {
    let dir = root().join("fixtures");
    let mut out = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".expect.json"))
        .collect();
    names.sort();
    for n in names {
        let expect: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(&n)).unwrap()).unwrap();
        let case = n.trim_end_matches(".expect.json").to_string();
        let base = dir.join(&case);
        let inputs: Vec<String> = match expect["inputs"].as_array() {
            Some(list) => list
                .iter()
                .map(|i| {
                    base.join(i.as_str().unwrap())
                        .to_string_lossy()
                        .into_owned()
                })
                .collect(),
            None => vec![base.to_string_lossy().into_owned()],
        };
        let args = expect["args"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        out.push((case, inputs, args));
    }
    // The hostile set's folders too.
    for d in ["replicas", "replicas-single"] {
        let p = root().join("fixtures/hostile").join(d);
        out.push((d.into(), vec![p.to_string_lossy().into_owned()], vec![]));
    }
    out.push((
        "hostile-crlf-csv".into(),
        vec![
            root()
                .join("fixtures/hostile/crlf.csv")
                .to_string_lossy()
                .into_owned(),
            root()
                .join("fixtures/incident-csv/trace.log")
                .to_string_lossy()
                .into_owned(),
        ],
        vec![],
    ));
    out.push((
        "hostile-amounts".into(),
        ["amounts.jsonl", "amounts.log", "amounts.csv"]
            .iter()
            .map(|f| {
                root()
                    .join("fixtures/hostile")
                    .join(f)
                    .to_string_lossy()
                    .into_owned()
            })
            .collect(),
        vec![],
    ));
    out
}

fn scan_json(inputs: &[String], args: &[String], extra: &[&str]) -> (Vec<u8>, Value) {
    let out = bin()
        .arg("scan")
        .args(inputs)
        .args(args)
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{inputs:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.stdout, v)
}

/// The input files of a case, listed one by one (so their order can be shuffled).
fn files_of(inputs: &[String]) -> Vec<String> {
    source::resolve(inputs, &[])
        .unwrap()
        .into_iter()
        .map(|i| i.display)
        .collect()
}

#[test]
fn same_inputs_in_any_order_and_thread_count_give_identical_json() {
    let mut cases = cases();
    // All fixtures at once, as one big mixed audit.
    let all: Vec<String> = cases
        .iter()
        .filter(|c| c.2.is_empty())
        .flat_map(|c| c.1.clone())
        .collect();
    cases.push(("everything".into(), all, vec![]));
    for (case, inputs, args) in cases {
        let mut files = files_of(&inputs);
        let (reference, _) = scan_json(&files, &args, &["--threads", "1"]);
        files.reverse();
        let (reversed, _) = scan_json(&files, &args, &["--threads", "4"]);
        assert!(reference == reversed, "{case}: reversed order, 4 threads");
        let half = files.len() / 2;
        files.rotate_left(half);
        let (rotated, _) = scan_json(&files, &args, &["--threads", "2"]);
        assert!(reference == rotated, "{case}: rotated order, 2 threads");
    }
}

/// The lines of every input that became an event, by displayed path, read with the library's
/// own parsers (OTLP spans linked as the audit links them).
fn event_lines(inputs: &[String], opts: &ParseOptions) -> BTreeSet<(String, u32)> {
    let resolved = source::resolve(inputs, &[]).unwrap();
    let outcomes = source::read_all(&resolved, None, opts);
    let mut set = BTreeSet::new();
    let mut spans = Vec::new();
    for outcome in outcomes {
        if let Outcome::Parsed(_, parsed) = outcome {
            for e in parsed.all_events() {
                set.insert((resolved[e.loc.input as usize].display.clone(), e.loc.line));
            }
            spans.extend(parsed.spans);
        }
    }
    for (_, e) in otlp::link::link(&spans).events {
        set.insert((resolved[e.loc.input as usize].display.clone(), e.loc.line));
    }
    set
}

fn line_of(path: &str, line: u64, cache: &mut BTreeMap<String, Vec<String>>) -> Option<String> {
    let lines = cache.entry(path.to_string()).or_insert_with(|| {
        let bytes = std::fs::read(path).unwrap();
        String::from_utf8_lossy(&bytes)
            .split('\n')
            .map(str::to_string)
            .collect()
    });
    lines.get(line as usize - 1).cloned()
}

#[test]
fn every_cited_line_is_a_real_event_and_names_the_effects_it_is_cited_for() {
    let mut cache = BTreeMap::new();
    let mut checked = 0;
    for (case, inputs, args) in cases() {
        let (_, report) = scan_json(&inputs, &args, &[]);
        let mut opts = ParseOptions::default();
        if let Some(i) = args.iter().position(|a| a == "--date") {
            opts.date = args[i + 1].parse().ok();
        }
        let events = event_lines(&inputs, &opts);
        for f in report["findings"].as_array().unwrap() {
            let evidence = f["evidence"].as_array().unwrap();
            assert!(
                !evidence.is_empty(),
                "{case}: a finding without evidence: {f}"
            );
            let mut cited = Vec::new();
            for ev in evidence {
                let path = ev["path"].as_str().unwrap();
                let line = ev["line"].as_u64().unwrap();
                assert!(
                    events.contains(&(path.to_string(), line as u32)),
                    "{case}: {path}:{line} is cited by {} but is no event",
                    f["rule"]
                );
                let mut text = line_of(path, line, &mut cache)
                    .unwrap_or_else(|| panic!("{case}: {path} has no line {line}"));
                // A record's indented lines below it are its own (pino-pretty's members,
                // an object Node's console printed over several lines).
                let mut below = line + 1;
                while let Some(next) =
                    line_of(path, below, &mut cache).filter(|l| l.starts_with("  "))
                {
                    text.push_str(&next);
                    below += 1;
                }
                cited.push(text);
                checked += 1;
            }
            // Each effect a finding lists is named on a line it cites (its service-side
            // record, or the response that returned its id).
            for id in f["effects"].as_array().unwrap() {
                let id = id.as_str().unwrap();
                assert!(
                    cited.iter().any(|l| l.contains(id)),
                    "{case}: {} lists {id}, but no cited line names it",
                    f["rule"]
                );
            }
        }
    }
    assert!(checked > 100, "only {checked} citations checked");
}

#[test]
fn summary_totals_are_the_exact_sums_of_the_findings() {
    for (case, inputs, args) in cases() {
        let (_, report) = scan_json(&inputs, &args, &[]);
        for (rule, key) in [
            ("duplicate-effect", "excess"),
            ("duplicate-decision", "decision_excess"),
        ] {
            let mut sums: BTreeMap<String, i128> = BTreeMap::new();
            for f in report["findings"].as_array().unwrap() {
                if f["rule"] == rule
                    && let Some(c) = f["currency"].as_str()
                    && !f["excess_minor"].is_null()
                {
                    let v: i128 = f["excess_minor"].to_string().parse().unwrap();
                    *sums.entry(c.to_string()).or_default() += v;
                }
            }
            let reported: BTreeMap<String, i128> = report["summary"][key]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| {
                    (
                        a["currency"].as_str().unwrap().to_string(),
                        a["amount_minor"].to_string().parse().unwrap(),
                    )
                })
                .collect();
            assert_eq!(reported, sums, "{case}: summary.{key}");
        }
        let counted: u64 = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "duplicate-effect")
            .map(|f| f["effects"].as_array().unwrap().len() as u64 - 1)
            .sum();
        assert_eq!(report["summary"]["duplicate_effects"], counted, "{case}");
    }
}

fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let meta = std::fs::metadata(&p).unwrap();
                out.insert(
                    p.clone(),
                    (std::fs::read(&p).unwrap(), meta.modified().unwrap()),
                );
            }
        }
    }
    out
}

#[test]
fn inputs_are_left_untouched_and_only_the_output_file_is_written() {
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    for case in [
        "incident-a88214",
        "incident-csv",
        "incident-jsonl",
        "records",
    ] {
        let src = root().join("fixtures").join(case);
        for e in std::fs::read_dir(&src).unwrap().flatten() {
            std::fs::copy(
                e.path(),
                logs.join(format!("{case}-{}", e.file_name().to_string_lossy())),
            )
            .unwrap();
        }
    }
    // Read-only files: a tool that opened them for writing would fail (for a non-root user).
    for p in snapshot(&logs).keys() {
        let mut perm = std::fs::metadata(p).unwrap().permissions();
        perm.set_readonly(true);
        std::fs::set_permissions(p, perm).unwrap();
    }
    let before = snapshot(work.path());
    let cwd = work.path().join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    for format in ["table", "json", "csv"] {
        let out = bin()
            .current_dir(&cwd)
            .args(["scan", logs.to_str().unwrap(), "--format", format])
            .output()
            .unwrap();
        assert!(out.status.code().is_some());
    }
    bin()
        .current_dir(&cwd)
        .args([
            "scan",
            logs.to_str().unwrap(),
            "-o",
            "out.json",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    bin()
        .current_dir(&cwd)
        .args(["timeline", logs.to_str().unwrap(), "--order", "A-88214"])
        .output()
        .unwrap();
    let after = snapshot(work.path());
    let mut expected = before.clone();
    let written: Vec<_> = after.keys().filter(|p| !before.contains_key(*p)).collect();
    assert_eq!(
        written,
        vec![&cwd.join("out.json")],
        "only -o's file is new"
    );
    expected.insert(cwd.join("out.json"), after[&cwd.join("out.json")].clone());
    assert!(after == expected, "an input changed");
}

/// `-o` or `--write-baseline` naming an input (a slip of the shell: `-o logs/trace.log`)
/// exits 2 naming both, and the input is as it was; a new file beside it is written.
#[test]
fn an_output_path_that_is_an_input_is_refused_and_the_input_kept() {
    let work = tempfile::tempdir().unwrap();
    let trace = work.path().join("trace.log");
    let incident = root().join("fixtures/incident-a88214");
    let source = std::fs::read_dir(&incident)
        .unwrap()
        .flatten()
        .next()
        .unwrap();
    std::fs::copy(source.path(), &trace).unwrap();
    let before = std::fs::read(&trace).unwrap();
    let dir = work.path().to_str().unwrap();
    let trace_path = trace.to_str().unwrap();
    for (command, flag) in [
        ("scan", "-o"),
        ("scan", "--write-baseline"),
        ("metrics", "-o"),
        ("timeline", "-o"),
    ] {
        let mut args = vec![command, dir, flag, trace_path, "--quiet"];
        if command == "timeline" {
            args.extend(["--order", "A-88214"]);
        }
        assert_one_line_error(&args, &[trace_path, "is an input of this run"]);
        assert_eq!(std::fs::read(&trace).unwrap(), before, "{args:?}");
    }
    // The same folder, a new file: written, and the trace untouched.
    let report = work.path().join("report.csv");
    let out = bin()
        .args(["scan", dir, "--format", "csv", "-o"])
        .arg(&report)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        std::fs::read_to_string(&report)
            .unwrap()
            .contains("duplicate-effect")
    );
    assert_eq!(std::fs::read(&trace).unwrap(), before);
}
