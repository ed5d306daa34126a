//! The binary: parse the command line, run the command, map the result to an exit status.

use clap::Parser;
use idem_audit::cli::{Cli, Command};
use idem_audit::cmd;
use std::process::ExitCode;

/// Parsing and correlating allocate many small strings and free them in bulk; glibc's
/// allocator spent about a third of a scan's time on that (perf), mimalloc a fraction.
/// mimalloc is called through [`idem_audit::alloc::Allocator`] (why not its own crate's: see there).
#[global_allocator]
static GLOBAL: idem_audit::alloc::Allocator = idem_audit::alloc::Allocator;

/// mimalloc's `purge_delay` option (the same index in its v2 and v3 headers).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn main() -> ExitCode {
    // Freed memory goes back to the kernel 10 ms after it is freed (v2's default; v3 waits
    // a second). A scan frees its parsed events while it builds the model: handed back
    // soon, the peak at 1 GB was about 495 MB; kept a second, 495 to 655 MB by the
    // timing of each run; never handed back (`-1`), 765 MB, and no faster.
    // SAFETY: sets a plain integer option; mimalloc allows it at any time.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 10) };
    // No transparent huge pages: mimalloc asks for them, and then every page the scan
    // touches, frees and touches again is zeroed 2 MiB at a time. Without them the kernel's
    // time at 1 GB fell from about 2.6 s to 1.3 s (alternating runs), the peak no higher.
    // SAFETY: a process flag for later page faults; no memory is read or written.
    #[cfg(target_os = "linux")]
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0)
    };
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let result = match &cli.command {
        Command::Scan(args) => cmd::scan::run(args),
        Command::Key(args) => cmd::key::run(args),
        Command::Rules => cmd::rules::run(),
        Command::Explain(args) => cmd::explain::run(args),
        Command::Timeline(args) => cmd::timeline::run(args),
        Command::Metrics(args) => cmd::metrics::run(args),
        Command::Completions(args) => cmd::completions::run(args),
        Command::Man(args) => cmd::man::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("idem-audit: error: {e:#}");
            ExitCode::from(cmd::EXIT_ERROR)
        }
    }
}

/// A wrong call is one line naming the flag or value and what is expected, exit 2; help and
/// version print as clap writes them.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    eprintln!("idem-audit: {}", one_line(&e.render().to_string()));
    ExitCode::from(cmd::EXIT_ERROR)
}

/// clap's first line (`error: invalid value 'xml' for '--input-format <FORMAT>'`), with the
/// possible values or a tip from the lines after it.
fn one_line(rendered: &str) -> String {
    let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut out = lines.next().unwrap_or("error: invalid call").to_string();
    for l in lines {
        if out.ends_with(':') {
            // `the following required arguments were not provided:` names them next.
            out.push(' ');
            out.push_str(l);
        } else if let Some(values) = l
            .strip_prefix("[possible values: ")
            .and_then(|v| v.strip_suffix(']'))
        {
            out.push_str(&format!("; expected one of: {values}"));
        } else if let Some(tip) = l.strip_prefix("tip: ") {
            out.push_str(&format!("; {tip}"));
        }
    }
    out
}
