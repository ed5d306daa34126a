//! Stage timings for profiling a large scan: with `IDEM_AUDIT_STAGES=1` in the environment,
//! each stage of the audit prints its wall time, the process's resident memory and its
//! minor page faults so far to standard error. Off by default and never part of a report.

use std::time::Instant;

pub struct Stages {
    last: Option<Instant>,
}

impl Stages {
    pub fn start() -> Self {
        let on = std::env::var_os("IDEM_AUDIT_STAGES").is_some_and(|v| v != "0");
        Stages {
            last: on.then(Instant::now),
        }
    }

    /// Prints the time since the previous mark (or the start) under `name`.
    pub fn mark(&mut self, name: &str) {
        let Some(last) = self.last else { return };
        let now = Instant::now();
        let (rss, peak) = memory_mb();
        eprintln!(
            "stage {name:<12} {:>8.3} s  rss {rss:>6} MB  peak {peak:>6} MB  faults {:>7}",
            (now - last).as_secs_f64(),
            minor_faults()
        );
        self.last = Some(now);
    }
}

/// The process's minor page faults so far, from /proc (zero where there is none): each is
/// a page the kernel zeroed, which on this project's VMs costs microseconds.
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // After the command's name in parentheses: state, ppid, pgrp, session, tty_nr, tpgid,
    // flags, minflt.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(7))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Current and peak resident memory in MB, from /proc (zero where there is none).
fn memory_mb() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb / 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
