//! Rotated logs (`agent.log.1`, then `agent.log`) are one log cut in two: a tool call at the
//! end of one file keeps the requests at the start of the next. Files under other names,
//! or whose times overlap, are separate logs. The real producer's case (Python's
//! `RotatingFileHandler`) is the fixture `client-log-rotated`.

use idem_audit::report::Report;
use std::path::PathBuf;

mod common;
use common::report;

/// The write-up's incident, cut after the first attempt's timeout.
const BEFORE_CUT: &str = "\
2026-11-03T14:02:11.402Z  agent run 7f3a  step 4  tool=issue_refund  args={\"order\":\"A-88214\",\"amount_p\":4500}
2026-11-03T14:02:11.418Z  POST https://payments.internal/v1/refunds  (attempt 1)
2026-11-03T14:02:21.418Z  urllib3.exceptions.ReadTimeoutError: read timeout=10
";
const AFTER_CUT: &str = "\
2026-11-03T14:02:21.930Z  POST https://payments.internal/v1/refunds  (attempt 2)
2026-11-03T14:02:23.107Z  201 Created  refund_id=rf_9KQ2  amount_p=4500
2026-11-03T14:02:23.109Z  agent run 7f3a  step 4  ok
";
const SERVICE: &str = "\
2026-11-03T14:02:11.501Z  refund rf_8XM1  order A-88214  4500p  settled 14:02:22.884
2026-11-03T14:02:23.088Z  refund rf_9KQ2  order A-88214  4500p  settled 14:02:34.010
";

/// Scans the two halves written as `older` and `newer`, beside the service's log, with
/// the newer file's times moved by `shift` (a `str::replace` pair).
fn scan_cut(older: &str, newer: &str, shift: (&str, &str)) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| -> PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    write(older, BEFORE_CUT);
    write(newer, &AFTER_CUT.replace(shift.0, shift.1));
    write("payments.log", SERVICE);
    report(&[dir.path()], &[])
}

fn duplicate_causes(r: &Report) -> Vec<String> {
    (r.findings.iter())
        .filter(|f| f.rule == "duplicate-effect")
        .map(|f| f.cause.clone().unwrap_or_default())
        .collect()
}

#[test]
fn a_rotated_log_is_read_as_one_log() {
    let as_is = ("", "");
    for (older, newer) in [
        ("agent.log.1", "agent.log"),
        ("agent.log.2", "agent.log.1"),
        ("agent.log-20261102", "agent.log-20261103"),
        ("agent.log.2026-11-02", "agent.log"),
    ] {
        let r = scan_cut(older, newer, as_is);
        assert_eq!(
            duplicate_causes(&r),
            ["client-retry"],
            "{older} then {newer}"
        );
        assert!(
            r.findings.iter().any(|f| f.rule == "unkeyed-retry"),
            "{older} then {newer}: {:#?}",
            r.findings
        );
        // Each file keeps its own accounts, the older listed first.
        let inputs: Vec<_> = (r.inputs.iter())
            .map(|i| {
                (
                    i.path.rsplit('/').next().unwrap().to_string(),
                    i.lines,
                    i.events,
                )
            })
            .collect();
        assert_eq!(
            inputs,
            [
                (older.to_string(), 3, 3),
                (newer.to_string(), 3, 3),
                ("payments.log".to_string(), 2, 2)
            ]
        );
    }
}

#[test]
fn files_under_other_names_are_other_logs() {
    // Numbered shards, not rotations: the retry after the cut is no call's.
    let r = scan_cut("agent-0.log", "agent-1.log", ("", ""));
    assert_ne!(duplicate_causes(&r), ["client-retry"], "{:#?}", r.findings);
}

#[test]
fn a_file_that_starts_before_the_last_one_ended_does_not_continue_it() {
    // The same names, but the newer file starts ten minutes before the older one ends:
    // another process's log, whose requests are not the older file's call's.
    let r = scan_cut(
        "agent.log.1",
        "agent.log",
        ("14:02:21.930Z", "13:52:21.930Z"),
    );
    assert_ne!(duplicate_causes(&r), ["client-retry"], "{:#?}", r.findings);
}

#[test]
fn a_compressed_older_file_continues_too() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(BEFORE_CUT.as_bytes()).unwrap();
    std::fs::write(dir.path().join("agent.log.1.gz"), gz.finish().unwrap()).unwrap();
    std::fs::write(dir.path().join("agent.log"), AFTER_CUT).unwrap();
    std::fs::write(dir.path().join("payments.log"), SERVICE).unwrap();
    let r = report(&[dir.path()], &[]);
    assert_eq!(duplicate_causes(&r), ["client-retry"], "{:#?}", r.findings);
}

/// What a finding says, without where it was read (paths and lines differ once cut).
fn gist(r: &Report) -> Vec<String> {
    let mut out: Vec<String> = (r.findings.iter())
        .map(|f| {
            format!(
                "{} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
                f.rule,
                f.severity,
                f.cause,
                f.order,
                f.run,
                f.step,
                f.effects,
                f.currency,
                f.excess_minor
            )
        })
        .collect();
    out.sort();
    out
}

/// Every fixture's text log, cut after any of its lines into `NAME.1` and `NAME`, gives
/// the same findings as the whole log, and the two files' accounts add up to its own.
#[test]
fn a_log_cut_anywhere_reads_as_the_whole() {
    let cases = [
        ("incident-a88214", "trace.log"),
        ("interleaved-runs", "trace.log"),
        ("midnight-rollover", "trace.log"),
        ("resume-key-drift", "trace.log"),
        ("resume-renumbered", "trace.log"),
        ("key-per-attempt", "trace.log"),
        ("retry-non-retryable", "trace.log"),
        ("gateway-retry", "trace.log"),
        ("decision-two-runs", "trace.log"),
        ("client-log-agent-restates", "agent.log"),
        ("client-log-traceback", "agent.log"),
    ];
    for (case, log) in cases {
        let folder = common::fixture(case);
        let whole = report(&[&folder], &[]);
        let text = std::fs::read_to_string(folder.join(log)).unwrap();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let others: Vec<_> = (std::fs::read_dir(&folder).unwrap())
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap() != log)
            .collect();
        for cut in 1..lines.len() {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join(format!("{log}.1")), lines[..cut].concat()).unwrap();
            std::fs::write(dir.path().join(log), lines[cut..].concat()).unwrap();
            for other in &others {
                std::fs::copy(other, dir.path().join(other.file_name().unwrap())).unwrap();
            }
            let parts = report(&[dir.path()], &[]);
            assert_eq!(
                gist(&parts),
                gist(&whole),
                "{case}/{log} cut after line {cut}"
            );
            let count = |r: &Report, name: &str| {
                (r.inputs.iter())
                    .filter(|i| i.path.ends_with(name))
                    .map(|i| (i.lines, i.events, i.ignored, i.skipped))
                    .fold((0, 0, 0, 0), |a, b| {
                        (a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3 + b.3)
                    })
            };
            let both = count(&parts, &format!("/{log}.1"));
            let newer = count(&parts, &format!("/{log}"));
            let sum = (
                both.0 + newer.0,
                both.1 + newer.1,
                both.2 + newer.2,
                both.3 + newer.3,
            );
            assert_eq!(
                sum,
                count(&whole, &format!("/{log}")),
                "{case} cut after {cut}"
            );
        }
    }
}

/// `--input-tz agent.log=ZONE` names the rotated log, so its older files take the zone too.
#[test]
fn an_input_zone_named_for_a_rotated_log_holds_for_its_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let local = |text: &str| {
        text.replace("2026-11-03T14:", "2026-11-03T19:")
            .replace("Z  ", "  ")
    };
    std::fs::write(dir.path().join("agent.log.1"), local(BEFORE_CUT)).unwrap();
    std::fs::write(dir.path().join("agent.log"), local(AFTER_CUT)).unwrap();
    std::fs::write(dir.path().join("payments.log"), SERVICE).unwrap();
    let r = report(&[dir.path()], &["--input-tz", "agent.log=+05:00"]);
    assert_eq!(duplicate_causes(&r), ["client-retry"], "{:#?}", r.findings);
}

/// A file under a rotated name that is no text log (an `.xz` this tool does not unpack,
/// bytes) is passed over as it would be under any name, not read as broken text lines.
#[test]
fn a_rotated_file_that_is_no_log_is_passed_over() {
    for name in ["agent.log.1.xz", "agent.log.1"] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("agent.log.2"), BEFORE_CUT).unwrap();
        std::fs::write(
            dir.path().join(name),
            [0xfdu8, 0x37, 0x7a, 0x58, 0x5a, 0, 1, 2],
        )
        .unwrap();
        std::fs::write(dir.path().join("agent.log"), AFTER_CUT).unwrap();
        std::fs::write(dir.path().join("payments.log"), SERVICE).unwrap();
        let r = report(&[dir.path()], &["--strict"]);
        let junk = (r.inputs.iter()).find(|i| i.path.ends_with(name)).unwrap();
        assert_eq!(
            (junk.format.as_deref(), junk.skipped),
            (None, 0),
            "{name}: {junk:?}"
        );
        assert_eq!(duplicate_causes(&r), ["client-retry"], "{name}");
    }
}
