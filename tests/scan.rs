//! `idem-audit scan` end to end on the incident: the JSON report, the table, exit statuses
//! and bad input.

use assert_cmd::Command;
use idem_audit::report::Report;
use std::path::Path;

mod common;
use common::{fixture, scan};

fn incident_json() -> Report {
    let trace = fixture("incident-a88214/trace.log");
    let (code, stdout, _) = scan(&[trace.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, Some(1));
    serde_json::from_str(&stdout).expect("the JSON report parses back into a Report")
}

#[test]
fn incident_duplicate_is_found_with_its_evidence() {
    let report = incident_json();
    assert_eq!(report.schema, "idem-audit.report.v1");
    let dup = report
        .findings
        .iter()
        .find(|f| f.rule == "duplicate-effect")
        .unwrap();
    assert_eq!(dup.effects, ["rf_8XM1", "rf_9KQ2"]);
    assert_eq!(dup.excess_minor, Some(4500));
    assert!(
        dup.message.contains("timed out after 10.0 s"),
        "{}",
        dup.message
    );
    // Every cited line is a real line of the trace, and the attempts and both effects are cited.
    let text = std::fs::read_to_string(fixture("incident-a88214/trace.log")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let cited: Vec<&str> = dup
        .evidence
        .iter()
        .map(|e| lines[e.line as usize - 1])
        .collect();
    for needle in [
        "(attempt 1)",
        "(attempt 2)",
        "ReadTimeoutError",
        "refund rf_8XM1",
        "refund rf_9KQ2",
    ] {
        assert!(
            cited.iter().any(|l| l.contains(needle)),
            "{needle} not cited: {cited:?}"
        );
    }
    assert_eq!(report.summary.excess.len(), 1);
    assert_eq!(report.summary.excess[0].currency, "GBP");
    assert_eq!(report.summary.excess[0].amount_minor, 4500);
    assert_eq!(report.summary.orders_affected, 1);
    assert_eq!(
        (
            report.summary.errors,
            report.summary.warnings,
            report.summary.infos
        ),
        (1, 1, 1)
    );
}

#[test]
fn incident_effect_after_timeout_names_the_times() {
    let report = incident_json();
    let f = report
        .findings
        .iter()
        .find(|f| f.rule == "effect-after-timeout")
        .unwrap();
    assert!(f.message.contains("14:02:21.418"), "{}", f.message);
    assert!(f.message.contains("after 10"), "{}", f.message);
    assert!(f.message.contains("14:02:22.884"), "{}", f.message);
}

#[test]
fn input_accounting_adds_up() {
    let report = incident_json();
    let input = &report.inputs[0];
    assert_eq!(input.format.as_deref(), Some("text"));
    assert_eq!(input.lines, 9);
    assert_eq!((input.events, input.ignored, input.skipped), (8, 1, 0));
    assert_eq!(input.lines, input.events + input.ignored + input.skipped);
}

#[test]
fn fail_on_controls_the_exit_status() {
    let trace = fixture("incident-a88214/trace.log");
    let t = trace.to_str().unwrap();
    assert_eq!(scan(&[t, "--fail-on", "never"]).0, Some(0));
    assert_eq!(scan(&[t, "--fail-on", "error"]).0, Some(1));
    let keyed = fixture("incident-keyed-replay/trace.log");
    let k = keyed.to_str().unwrap();
    assert_eq!(scan(&[k]).0, Some(0));
    assert_eq!(scan(&[k, "--fail-on", "info"]).0, Some(1));
}

#[test]
fn table_output_shows_the_amount_in_major_units() {
    let (code, stdout, _) = scan(&["fixtures/incident-a88214"]);
    assert_eq!(code, Some(1));
    assert!(stdout.contains("GBP 45.00"));
    insta::assert_snapshot!("incident_table", stdout);
}

#[test]
fn output_file_gets_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.json");
    let trace = fixture("incident-a88214/trace.log");
    let (code, stdout, _) = scan(&[
        trace.to_str().unwrap(),
        "--format",
        "json",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1));
    assert!(stdout.is_empty());
    let report: Report = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    assert_eq!(report.findings.len(), 3);
}

#[test]
fn a_malformed_line_is_reported_and_the_rest_audited() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("incident-a88214/trace.log")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, "14:02:xx  agent run");
    let path = dir.path().join("broken.log");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let p = path.to_str().unwrap();
    let (code, stdout, stderr) = scan(&[p, "--format", "json"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains(&format!("{p}:3: ")), "{stderr}");
    let report: Report = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report.inputs[0].skipped, 1);
    assert_eq!(report.inputs[0].problems[0].line, 3);
    assert!(report.findings.iter().any(|f| f.rule == "duplicate-effect"));
    assert_eq!(scan(&[p, "--strict"]).0, Some(2));
}

/// Past the skipped lines the report keeps, standard error says how many more there were.
#[test]
fn skipped_lines_past_those_kept_are_counted_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("incident-a88214/trace.log")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let kept = idem_audit::ingest::MAX_PROBLEMS_KEPT;
    for _ in 0..kept + 3 {
        lines.insert(2, "14:02:xx  agent run");
    }
    let path = dir.path().join("broken.log");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let p = path.to_str().unwrap();
    let (_, _, stderr) = scan(&[p, "--format", "json"]);
    assert_eq!(stderr.matches(": skipped: ").count(), kept, "{stderr}");
    assert!(
        stderr.contains(&format!("{p}: 3 more lines skipped")),
        "{stderr}"
    );
    let (_, _, stderr) = scan(&[fixture("incident-a88214/trace.log").to_str().unwrap()]);
    assert!(!stderr.contains("more lines skipped"), "{stderr}");
}

#[test]
fn stdin_is_read_with_a_dash() {
    let text = std::fs::read(fixture("incident-a88214/trace.log")).unwrap();
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .args(["scan", "-", "--format", "json"])
        .write_stdin(text)
        .output()
        .unwrap();
    let report: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report.inputs[0].path, "-");
    assert!(report.findings.iter().any(|f| f.rule == "duplicate-effect"));
}

#[test]
fn unreadable_paths_and_bad_flags_exit_2_with_one_line() {
    let (code, _, stderr) = scan(&["no/such/file.log"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("no/such/file.log: no such file or folder"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"));
    let trace = fixture("incident-a88214/trace.log");
    let (code, _, stderr) = scan(&[trace.to_str().unwrap(), "--max-skew", "2x"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("--max-skew 2x"), "{stderr}");
}

/// A symbolic link loop, named or found in a folder, is said in words, not as the system's
/// `(os error 40)`; the folder's other files are read.
#[cfg(unix)]
#[test]
fn a_symbolic_link_loop_is_named_in_words() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("b.log", dir.path().join("a.log")).unwrap();
    std::os::unix::fs::symlink("a.log", dir.path().join("b.log")).unwrap();
    std::fs::copy(
        fixture("incident-a88214/trace.log"),
        dir.path().join("trace.log"),
    )
    .unwrap();
    let named = dir.path().join("a.log");
    let (code, _, stderr) = scan(&[named.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("a.log: a symbolic link loop: its links lead back to each other"),
        "{stderr}"
    );
    let (code, out, stderr) = scan(&[dir.path().to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains(
            "b.log: a symbolic link to `a.log`, which leads back to it: a symbolic link loop"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("os error"), "{stderr}");
    assert!(out.contains("duplicate-effect"), "{out}");
}

/// `--date` dates time-only lines; a year whose instants do not fit is refused by name,
/// never wrapped into another century.
#[test]
fn a_date_out_of_range_exits_2_by_name() {
    let trace = fixture("incident-a88214/trace.log");
    let trace = trace.to_str().unwrap();
    for date in ["2300-01-01", "1500-01-01", "2026-13-01"] {
        let (code, _, stderr) = scan(&[trace, "--date", date]);
        assert_eq!(code, Some(2), "{date}");
        assert!(
            stderr.contains(&format!("--date {date}: expected")),
            "{stderr}"
        );
    }
    let (code, _, _) = scan(&[trace, "--date", "2026-11-03"]);
    assert_eq!(code, Some(1));
}

/// A folder whose files are all passed over as no log audits nothing: exit 2, saying so,
/// so that a CI job pointed at the wrong folder does not pass. One log beside them is read.
#[test]
fn a_folder_with_no_log_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("truth.json"), "{\"a\":1}\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "remember the milk\n").unwrap();
    let folder = dir.path().to_str().unwrap();
    let (code, _, stderr) = scan(&[folder]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("no input was read as a log (2 passed over"),
        "{stderr}"
    );
    let trace = fixture("incident-a88214/trace.log");
    std::fs::copy(trace, dir.path().join("trace.log")).unwrap();
    let (code, _, stderr) = scan(&[folder, "--fail-on", "never"]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// An input with nothing to audit, named alone, exits 2 saying it is empty (a pipeline that
/// found no logs must not pass CI); so does the same on standard input. Beside a log it is
/// read as the empty log it is.
fn assert_empty_input(path: &Path, stdin: &str) {
    let (code, _, stderr) = scan(&[path.to_str().unwrap(), "--fail-on", "warning"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("(1 empty: not one line with content)"),
        "{stderr}"
    );
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .args(["scan", "-", "--fail-on", "warning"])
        .write_stdin(stdin)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let trace = fixture("incident-a88214/trace.log");
    let beside = [path.to_str().unwrap(), trace.to_str().unwrap()];
    let (code, _, stderr) = scan(&[beside[0], beside[1], "--fail-on", "never"]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// Empty input audits nothing either: an empty file, an empty stream.
#[test]
fn empty_input_exits_2_and_an_empty_file_beside_a_log_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.log");
    std::fs::write(&empty, "").unwrap();
    assert_empty_input(&empty, "");
}

/// An input of nothing but blank lines, or NUL bytes past the first read (a file a crash
/// left zeroed), or `echo "" |`, has nothing to audit either (review37 M4). One byte of
/// content is a log of chatter, audited.
#[test]
fn blank_or_zeroed_input_is_empty_and_one_byte_of_content_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let zeroed = dir.path().join("zeroed.log");
    std::fs::write(&zeroed, vec![0u8; 1_000_000]).unwrap();
    let blank = dir.path().join("blank.log");
    std::fs::write(&blank, "\n\n  \r\n\t\n").unwrap();
    assert_empty_input(&zeroed, "\n");
    assert_empty_input(&blank, "\n");
    // Content past the first 64 KiB of NULs is seen: a log, not an empty input.
    let mut late = vec![0u8; 100_000];
    late.extend_from_slice(b"\n14:02:30.000  healthcheck ok\n");
    std::fs::write(&zeroed, late).unwrap();
    let (code, _, stderr) = scan(&[zeroed.to_str().unwrap(), "--fail-on", "warning"]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// Times of day without a date beside dated lines, or in a period, are warned about: they
/// sit on 1970-01-01 and can match nothing dated. Not when every line is time-only, nor
/// once `--date` dates them.
#[test]
fn time_only_lines_beside_dated_ones_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let trace = std::fs::read_to_string(fixture("incident-a88214/trace.log")).unwrap();
    let agent = dir.path().join("agent.log");
    let head: Vec<&str> = trace.lines().take(6).collect();
    std::fs::write(&agent, head.join("\n") + "\n").unwrap();
    let pay = dir.path().join("pay.log");
    std::fs::write(
        &pay,
        "2026-11-03T14:02:11.501Z  refund rf_8XM1  order A-88214  4500p\n\
         2026-11-03T14:02:23.088Z  refund rf_9KQ2  order A-88214  4500p\n",
    )
    .unwrap();
    let (agent, pay) = (agent.to_str().unwrap(), pay.to_str().unwrap());
    let warned = |args: &[&str]| scan(args).2.contains("no date");
    assert!(warned(&[agent, pay]));
    assert!(!warned(&[agent, pay, "--date", "2026-11-03"]));
    let incident = fixture("incident-a88214/trace.log");
    let incident = incident.to_str().unwrap();
    assert!(!warned(&[incident]));
    assert!(warned(&[incident, "--since", "2026-11-01"]));
    assert!(!warned(&[
        incident,
        "--since",
        "2026-11-01",
        "--date",
        "2026-11-03"
    ]));
    // Time-only lines outside every period leave the report without them: exit 2, not an
    // empty month-end CSV with exit 0. Dated, the duplicate is in the period (exit 1).
    let period = [incident, "--since", "2026-11-01", "--until", "2026-12-01"];
    assert_eq!(scan(&period).0, Some(2));
    let dated = [&period[..], &["--date", "2026-11-03"]].concat();
    assert_eq!(scan(&dated).0, Some(1));
}

/// A named file whose lines are mostly skipped and none an event is most likely a layout
/// the tool does not read: said once, beside "No findings". A log with events, or with
/// only a few broken lines, is not.
#[test]
fn an_input_read_as_nothing_but_skipped_lines_is_pointed_out() {
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("agent.xml.log");
    std::fs::write(
        &xml,
        "<?xml version=\"1.0\"?>\n<events>\n<event>\n  <message>refund re_1 created</message>\n</event>\n</events>\n",
    )
    .unwrap();
    let (code, _, stderr) = scan(&[xml.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    assert!(
        stderr.contains("no line was read as an event and 6 of its 6 lines were skipped"),
        "{stderr}"
    );
    let trace = fixture("incident-a88214/trace.log");
    let (_, _, stderr) = scan(&[trace.to_str().unwrap()]);
    assert!(!stderr.contains("no line was read"), "{stderr}");
    // A log of some length whose every line was an application's own is pointed out too,
    // as a note; a short one is not.
    let quiet = dir.path().join("app.log");
    let app_line = "2026-11-03T14:02:11Z  INFO  cache warmed\n";
    std::fs::write(&quiet, app_line.repeat(12)).unwrap();
    let (code, _, stderr) = scan(&[quiet.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    assert!(
        stderr.contains("note: none of its 12 lines was read as an event"),
        "{stderr}"
    );
    std::fs::write(&quiet, app_line.repeat(3)).unwrap();
    let (_, _, stderr) = scan(&[quiet.to_str().unwrap()]);
    assert!(!stderr.contains("none of its"), "{stderr}");
    let one_broken = dir.path().join("mostly.log");
    std::fs::write(&one_broken, "garbage\n# comment\n\n# date: 2026-11-03\n").unwrap();
    let (_, _, stderr) = scan(&[one_broken.to_str().unwrap()]);
    assert!(!stderr.contains("no line was read"), "{stderr}");
}

/// Refunds written as a bare whole number, its unit unknown: the message says what was
/// written and both readings, rather than "an unknown amount".
#[test]
fn a_whole_number_of_unknown_unit_is_shown_with_both_readings() {
    let folder = fixture("service-whole-amount-untraced");
    let (_, stdout, _) = scan(&[folder.to_str().unwrap(), "--format", "json"]);
    let report: Report = serde_json::from_str(&stdout).unwrap();
    let message = &report.findings[0].message;
    assert!(
        message.contains("2 refunds of 4500 GBP without its unit: GBP 45.00 or GBP 4,500.00"),
        "{message}"
    );
    // An amount of known unit is written as before.
    let known = fixture("service-whole-amount-major");
    let (_, stdout, _) = scan(&[known.to_str().unwrap(), "--format", "json"]);
    assert!(!stdout.contains("without its unit"), "{stdout}");
}

/// An input that failed (here a `.gz` cut short) is named once, as an error, not also as a
/// note before it (review37 L2).
#[test]
fn a_failed_input_is_named_once() {
    let folder = fixture("gz-cut-short");
    let (code, _, stderr) = scan(&[folder.to_str().unwrap(), "--fail-on", "never"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr.matches("cut short inside line 1489 (").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("idem-audit: error: "), "{stderr}");
}
