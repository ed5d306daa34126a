//! The progress bar (issue 6): drawn on standard error when it is a terminal and the scan
//! runs past a second; never with `--quiet`, nor when standard error is not a terminal.
//! A terminal comes from util-linux's `script`, which runs a command on a pseudo-terminal
//! and copies what it wrote there; the scan is kept running by standard input that stays
//! open for a while.

use std::process::Command;

mod common;
use common::fixture;

/// The bar's message (`{files} files`); nothing else the scan prints has it.
const BAR: &str = "1 files";

/// A scan of the incident read from standard input, which stays open 2.5 s.
fn slow_scan(extra: &str) -> String {
    let bin = env!("CARGO_BIN_EXE_idem-audit");
    let trace = fixture("incident-a88214/trace.log");
    format!(
        "(cat '{}'; sleep 2.5) | '{bin}' scan - --fail-on never {extra}",
        trace.display()
    )
}

/// What `command` wrote to its terminal (standard output and error together).
fn on_a_terminal(command: &str) -> String {
    let out = Command::new("script")
        .args(["-qec", command, "/dev/null"])
        .output()
        .expect("util-linux `script` runs the command on a terminal");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_scan_past_a_second_shows_a_bar_on_a_terminal() {
    let seen = on_a_terminal(&slow_scan(""));
    assert!(seen.contains(BAR), "{seen}");
    assert!(
        seen.contains("duplicate-effect"),
        "the report follows: {seen}"
    );
}

#[test]
fn quiet_hides_the_bar() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let quiet = format!("--quiet --format json -o '{}'", report.display());
    let seen = on_a_terminal(&slow_scan(&quiet));
    assert!(!seen.contains(BAR), "{seen}");
    let written = std::fs::read_to_string(&report).unwrap();
    assert!(
        written.contains("duplicate-effect"),
        "the scan ran: {written}"
    );
}

#[test]
fn no_bar_when_standard_error_is_not_a_terminal() {
    let out = Command::new("sh")
        .args(["-c", &slow_scan("")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains(BAR), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("duplicate-effect"));
}

#[test]
fn a_quick_scan_shows_no_bar_even_on_a_terminal() {
    let bin = env!("CARGO_BIN_EXE_idem-audit");
    let trace = fixture("incident-a88214/trace.log");
    let seen = on_a_terminal(&format!(
        "'{bin}' scan '{}' --fail-on never",
        trace.display()
    ));
    assert!(!seen.contains(BAR), "{seen}");
    assert!(seen.contains("duplicate-effect"), "{seen}");
}
