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
        let (user, sys) = cpu_seconds();
        eprintln!(
            "stage {name:<12} {:>8.3} s  cpu {:>7.3} s  sys {:>7.3} s  rss {rss:>6} MB  peak {peak:>6} MB  faults {:>7}",
            (now - last).as_secs_f64(),
            user + sys,
            sys,
            minor_faults()
        );
        self.last = Some(now);
    }
}

/// The process's CPU time so far (user and system, every thread), in seconds: beside a
/// stage's wall time, how many cores it kept busy; the system part is mostly page faults
/// and `read`'s copy.
fn cpu_seconds() -> (f64, f64) {
    // SAFETY: getrusage writes the struct it is given and reads nothing else.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Work on this thread shows as CPU time: a stage's CPU beside its wall time says how
    /// many cores it kept busy.
    #[test]
    fn counts_the_cpu_time_of_work() {
        let total = || {
            let (user, sys) = cpu_seconds();
            user + sys
        };
        let (before, start) = (total(), Instant::now());
        let mut x = 1u64;
        while start.elapsed().as_millis() < 100 {
            for i in 0..100_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
        }
        // A tenth of a second spinning: at least a fifth of it on a loaded machine.
        let spent = total() - before;
        assert!(spent >= 0.02, "{spent} s");
        assert!(spent < 10.0, "{spent} s");
        assert_ne!(x, 0);
    }

    /// Touching a fresh mebibyte faults its pages in, and the count says so. Mapped here
    /// rather than allocated: an allocator may hand back memory already faulted in.
    #[test]
    fn counts_the_page_faults_of_fresh_memory() {
        const LEN: usize = 1 << 20;
        // SAFETY: sysconf reads a constant of the system.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let before = minor_faults();
        assert!(before > 0, "a running process has faulted");
        // SAFETY: a private anonymous mapping of LEN bytes, written within its bounds and
        // unmapped before the test ends.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                LEN,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            let bytes = p.cast::<u8>();
            for at in (0..LEN).step_by(page) {
                bytes.add(at).write_volatile(1);
            }
            libc::munmap(p, LEN);
        }
        let pages = (LEN / page) as u64;
        assert!(
            minor_faults() >= before + pages * 3 / 4,
            "{before}, {pages} pages"
        );
    }
}
