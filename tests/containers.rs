//! Logs as container runtimes keep them (`src/ingest/container.rs`): the payments service's
//! lines of the A-88214 incident wrapped by containerd (CRI) and by Docker's `json-file`
//! driver give the same duplicate as the bare log, with the service's JSON lines detected
//! inside the wrapper; a wrapped file's bad line is cited on its own line.

use idem_audit::report::Report;

mod common;
use common::{duplicate, fixture, report};

/// The structlog fixture's service lines.
fn service_lines() -> Vec<String> {
    let text = std::fs::read_to_string(fixture("service-structlog/payments.jsonl")).unwrap();
    text.lines().map(str::to_string).collect()
}

fn scan_with(service_name: &str, service: &str) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let trace = fixture("service-structlog/trace.log");
    let wrapped = dir.path().join(service_name);
    std::fs::write(&wrapped, service).unwrap();
    report(&[&trace, &wrapped], &[])
}

/// The report's entry for the wrapped file.
fn wrapped(r: &Report) -> &idem_audit::report::InputReport {
    (r.inputs.iter())
        .find(|i| !i.path.contains("trace.log"))
        .expect("the wrapped file")
}

fn essentials(r: &Report) -> (Option<String>, Vec<String>, Option<i128>) {
    let d = duplicate(r);
    (d.cause.clone(), d.effects.clone(), d.excess_minor)
}

#[test]
fn a_cri_log_of_json_lines_gives_the_bare_logs_duplicate() {
    let bare = essentials(&report(
        &[
            &fixture("service-structlog/trace.log"),
            &fixture("service-structlog/payments.jsonl"),
        ],
        &[],
    ));
    assert_eq!(bare.0.as_deref(), Some("client-retry"));
    // The runtime's own stamp; the first line split in two parts.
    let mut cri = String::new();
    for (i, line) in service_lines().iter().enumerate() {
        let at = format!("2026-11-03T14:02:{:02}.000000000Z", 10 + i);
        if i == 1 {
            let (a, b) = line.split_at(40);
            cri += &format!("{at} stdout P {a}\n{at} stdout F {b}\n");
        } else {
            cri += &format!("{at} stdout F {line}\n");
        }
    }
    let r = scan_with("payments-0.log", &cri);
    assert_eq!(wrapped(&r).format.as_deref(), Some("jsonl"));
    assert_eq!(essentials(&r), bare);
    // Docker's json-file driver, each line a JSON string of the application's.
    let mut docker = String::new();
    for line in service_lines() {
        let entry = serde_json::json!({"log": format!("{line}\n"), "stream": "stdout", "time": "2026-11-03T14:02:50.000Z"});
        docker += &format!("{entry}\n");
    }
    docker += "not an entry\n";
    let r = scan_with("payments-json.log", &docker);
    assert_eq!(essentials(&r), bare);
    let problems: Vec<u32> = wrapped(&r).problems.iter().map(|p| p.line).collect();
    assert_eq!(problems, [8]);
}

/// A line that is not the runtime's, first in the file, leaves the file as it is: an
/// ordinary text log whose lines say `stdout` is not unwrapped.
#[test]
fn a_log_that_only_mentions_stdout_is_not_unwrapped() {
    let text = "2026-11-03T14:02:11.501Z  refund rf_8XM1  order A-88214  4500p\n\
                2026-11-03T14:02:23.088Z stdout F refund rf_9KQ2  order A-88214  4500p\n";
    let r = scan_with("payments.log", text);
    assert_eq!(wrapped(&r).format.as_deref(), Some("text"));
    assert_eq!(wrapped(&r).events, 1);
}

/// The A-88214 incident's log as containerd keeps it, its last line (the duplicate refund)
/// split in two parts: ending in its `F` part it is the bare log's duplicate, the refund on
/// the physical line of that part; ending in its `P` part (the runtime had not written the
/// rest), what there is of it is a line cut short on that part's line, the last of the
/// file, skipped as such (not one past the file's end), and no duplicate is invented.
#[test]
fn a_cri_log_ending_inside_a_split_line_counts_its_lines_and_cuts_the_last() {
    let text = std::fs::read_to_string(fixture("incident-a88214/trace.log")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (last, before) = lines.split_last().unwrap();
    let at = |i: usize| format!("2026-11-03T14:02:{:02}.000000000Z stdout", 10 + i);
    let mut cri = String::new();
    for (i, line) in before.iter().enumerate() {
        cri += &format!("{} F {line}\n", at(i));
    }
    let (start, rest) = last.split_at("14:02:23.088  refund rf_9KQ2  ".len());
    cri += &format!("{} P {start}\n", at(8));
    let dir = tempfile::tempdir().unwrap();
    let scan = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        report(&[&path], &[])
    };
    let ended = scan("ended-0.log", &format!("{cri}{} F {rest}\n", at(9)));
    let input = &ended.inputs[0];
    assert_eq!(
        (input.lines, input.skipped),
        (10, 0),
        "{:?}",
        input.problems
    );
    let d = duplicate(&ended);
    assert!(d.evidence.iter().any(|e| e.line == 10), "{:?}", d.evidence);
    let unended = scan("unended-0.log", &cri);
    let input = &unended.inputs[0];
    assert_eq!((input.lines, input.skipped), (9, 1));
    assert_eq!(input.problems[0].line, 9);
    assert_eq!(
        input.problems[0].reason,
        idem_audit::ingest::container::CUT_INSIDE_SPLIT
    );
    assert!(
        (unended.findings.iter()).all(|f| f.rule != "duplicate-effect"),
        "{:?}",
        unended.findings
    );
}

/// A container log whose only skipped line is the split line it ends inside is no sign of a
/// layout not read (that line says nothing of the layout, as a plain log's last line cut
/// short does not); a line skipped for what it is still is.
#[test]
fn an_unended_split_line_is_no_sign_of_another_layout() {
    let dir = tempfile::tempdir().unwrap();
    let start = "2026-11-03T14:02:10.000000000Z stdout F starting worker\n";
    for (last, warned) in [
        (
            "2026-11-03T14:02:11.000000000Z stdout P refund rf_9KQ2  \n",
            false,
        ),
        ("garbage from elsewhere\n", true),
    ] {
        let path = dir.path().join("worker-0.log");
        std::fs::write(&path, format!("{start}{last}")).unwrap();
        let (code, _, stderr) = common::scan(&[path.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{stderr}");
        assert!(stderr.contains("worker-0.log:2: skipped: "), "{stderr}");
        let said = stderr.contains("is it a layout idem-audit reads?");
        assert_eq!(said, warned, "{last}: {stderr}");
    }
}

/// A container log ending inside a split line whose first part ends inside an order id
/// (`order A-`): the refund is read without that order, which may be part of a longer one,
/// and the line is warned of; the same part ending after a blank reads its order whole.
#[test]
fn an_order_id_a_split_line_ends_inside_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let start = "2026-11-03T14:02:10.000000000Z stdout F 14:02:10.000  starting worker\n";
    for (part, order, warned) in [
        ("refund rf_9KQ2  4500p  order A-", None::<&str>, 1),
        ("refund rf_9KQ2  4500p  order A-88214  ", Some("A-88214"), 0),
    ] {
        let path = dir.path().join("worker-0.log");
        let last = format!("2026-11-03T14:02:11.000000000Z stdout P 14:02:11.000  {part}\n");
        std::fs::write(&path, format!("{start}{last}")).unwrap();
        let r = report(&[&path], &[]);
        let input = &r.inputs[0];
        assert_eq!(
            (input.events, input.skipped, input.warned),
            (1, 0, warned),
            "{part}: {input:?}"
        );
        // The refund's order, as the timeline of each order says.
        let concerns = |order: &str| {
            let out = assert_cmd::Command::cargo_bin("idem-audit")
                .unwrap()
                .args(["timeline", "--order", order, path.to_str().unwrap()])
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).contains("refund rf_9KQ2")
        };
        assert!(!concerns("A-"), "{part}");
        assert_eq!(concerns("A-88214"), order.is_some(), "{part}");
    }
}

/// Docker's rotated files (`-json.log.1`, then `-json.log`) with a line the runtime split
/// across the two: the older file's last line is what there is of it, cut short on its own
/// physical line and skipped as such (not joined to the next file's part, which would put
/// the runtime's stamp inside it), and each file counts its own lines.
#[test]
fn a_split_line_across_rotated_docker_files_is_cut_short_in_each() {
    let entry = |log: &str, at: &str| {
        let entry = serde_json::json!({"log": log, "stream": "stdout", "time": at});
        format!("{entry}\n")
    };
    let older = entry(
        "2026-11-03T14:02:11.000Z  refund rf_1  order A-1  4500p\n",
        "2026-11-03T14:02:11Z",
    ) + &entry(
        "2026-11-03T14:02:12.000Z  refund rf_2  ",
        "2026-11-03T14:02:12Z",
    );
    let newer = entry("order A-1  4500p\n", "2026-11-03T14:02:12Z")
        + &entry(
            "2026-11-03T14:02:13.000Z  healthcheck ok\n",
            "2026-11-03T14:02:13Z",
        );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c-json.log.1"), older).unwrap();
    std::fs::write(dir.path().join("c-json.log"), newer).unwrap();
    let r = report(&[dir.path()], &[]);
    let lines: Vec<(&str, u64)> = (r.inputs.iter())
        .map(|i| (i.path.rsplit('/').next().unwrap(), i.lines))
        .collect();
    assert_eq!(lines, [("c-json.log.1", 2), ("c-json.log", 2)]);
    let problems: Vec<(u32, &str)> = (r.inputs[0].problems.iter())
        .map(|p| (p.line, p.reason.as_str()))
        .collect();
    let cut = idem_audit::ingest::container::CUT_INSIDE_SPLIT;
    assert_eq!(problems, [(2, cut)]);
}
