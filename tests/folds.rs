//! Local times in a fold (review36 L3): on the night Berlin's clocks go back (2026-10-25,
//! 03:00 CEST is 02:00 CET) the hour from 02:00 happens twice. A log written in order
//! whose time goes back within that hour is from there in its second pass; times in the
//! hour that come once are its first. The real producers' cases are fixtures
//! (`dst-fold-berlin`, `dst-fold-utc-agent`, `dst-fold-first-pass`); these are the
//! service's own findings, the structured formats, a rotated log and the spring gap.

use idem_audit::report::Report;
use std::path::Path;

mod common;
use common::{fixture, report};

/// A service's refunds across the fold: B-1's two an hour apart (02:00:01 in summer time,
/// 02:00:03 in winter time), C-1's two 3.5 s apart on both sides of the change.
const SERVICE: &str = "\
2026-10-25 01:50:00.000  refund rf_0  order B-0  1000p  created
2026-10-25 02:00:01.000  refund rf_1  order B-1  4500p  created
2026-10-25 02:59:58.000  refund rf_2  order C-1  4500p  created
2026-10-25 02:00:01.500  refund rf_3  order C-1  4500p  created
2026-10-25 02:00:03.000  refund rf_4  order B-1  4500p  created
";

/// The same refunds as JSON Lines.
fn as_json_lines(text: &str) -> String {
    text.lines()
        .map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            format!(
                r#"{{"ts":"{} {}","type":"effect","effect_id":"{}","kind":"refund","order":"{}","amount_minor":{},"currency":"GBP"}}"#,
                f[0],
                f[1],
                f[3],
                f[5],
                f[6].trim_end_matches('p')
            )
        })
        .map(|line| line + "\n")
        .collect()
}

fn scan_one(name: &str, text: &str, extra: &[&str]) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    report(&[&path], extra)
}

/// Each `duplicate-effect`'s order.
fn duplicated(r: &Report) -> Vec<String> {
    (r.findings.iter())
        .filter(|f| f.rule == "duplicate-effect")
        .map(|f| f.order.clone().unwrap_or_default())
        .collect()
}

#[test]
fn refunds_on_both_sides_of_the_fold_are_as_far_apart_as_they_were() {
    for (name, text) in [
        ("payments.log", SERVICE.to_string()),
        ("payments.jsonl", as_json_lines(SERVICE)),
    ] {
        let r = scan_one(name, &text, &["--tz", "Europe/Berlin"]);
        // Read as the first pass, B-1's were 2 s apart and C-1's 59 min.
        assert_eq!(duplicated(&r), ["C-1"], "{name}");
        let note = r.inputs[0].note.as_deref().unwrap_or_default();
        assert!(
            note.starts_with(
                "2 local times in an hour the clocks went back over read as its second pass"
            ) && note.ends_with("(the first: 2026-10-25 02:00:01)"),
            "{name}: {note}"
        );
        // A fixed offset has no fold: every time in it is at +02:00, as written.
        let fixed = scan_one(name, &text, &["--tz", "+02:00"]);
        assert_eq!(duplicated(&fixed), ["B-1"], "{name}");
        assert_eq!(fixed.inputs[0].note, None, "{name}");
    }
}

/// A log that wrote its lines in the hour a few minutes out of order (threads, buffered
/// processes) did not go back to its second pass.
#[test]
fn lines_a_few_minutes_out_of_order_stay_in_the_first_pass() {
    let shuffled = SERVICE
        .replace("02:00:01.500  refund rf_3", "02:52:01.500  refund rf_3")
        .replace("02:00:03.000  refund rf_4", "02:52:03.000  refund rf_4");
    let r = scan_one("payments.log", &shuffled, &["--tz", "Europe/Berlin"]);
    assert_eq!(r.inputs[0].note, None);
    assert!(duplicated(&r).is_empty(), "{:#?}", r.findings);
}

/// The fixture's agent log rotated in the fold (`agent.log.1` ends in summer time,
/// `agent.log` starts in winter time): read as one log, as the whole one was.
#[test]
fn a_rotated_log_goes_on_in_the_pass_its_last_file_left() {
    let whole = fixture("dst-fold-berlin");
    let dir = tempfile::tempdir().unwrap();
    let agent = std::fs::read_to_string(whole.join("agent.log")).unwrap();
    let (older, newer) = agent.split_at(agent.find("2026-10-25 02:00:01").unwrap());
    std::fs::write(dir.path().join("agent.log.1"), older).unwrap();
    std::fs::write(dir.path().join("agent.log"), newer).unwrap();
    let service = dir.path().join("service.log");
    std::fs::copy(whole.join("service.log"), &service).unwrap();
    let tz = ["--tz", "Europe/Berlin"];
    let rotated = report(&[dir.path()], &tz);
    let at_once = report(&[&whole], &tz);
    let messages =
        |r: &Report| -> Vec<String> { r.findings.iter().map(|f| f.message.clone()).collect() };
    assert_eq!(messages(&rotated), messages(&at_once));
    assert_eq!(duplicated(&rotated), ["A-3001"]);
    let note = |r: &Report, file: &str| {
        let input = r.inputs.iter().find(|i| Path::new(&i.path).ends_with(file));
        input.and_then(|i| i.note.clone())
    };
    assert_eq!(note(&rotated, "agent.log.1"), None);
    assert!(
        note(&rotated, "agent.log").is_some_and(|n| n.starts_with("11 local times")),
        "{:?}",
        note(&rotated, "agent.log")
    );
}

/// Times the clocks skipped (2026-03-29, 02:00 to 03:00 in Berlin) are read at the offset
/// before the change, and the input says a log that writes them does not keep summer time.
#[test]
fn times_the_clocks_skipped_are_read_before_the_change_and_said() {
    let spring = "\
2026-03-29 01:59:00.000  refund rf_1  order S-1  4500p  created
2026-03-29 02:30:00.000  refund rf_2  order S-2  4500p  created
2026-03-29 03:30:00.000  refund rf_3  order S-3  4500p  created
";
    let r = scan_one("payments.log", spring, &["--tz", "Europe/Berlin"]);
    let note = r.inputs[0].note.as_deref().unwrap_or_default();
    assert!(
        note.starts_with("1 local time the clocks skipped (the first: 2026-03-29 02:30:00) read at the offset before the change"),
        "{note}"
    );
    let r = scan_one("payments.log", spring, &["--tz", "+01:00"]);
    assert_eq!(r.inputs[0].note, None);
}
