//! One module per subcommand, each with a `run` that returns the exit status.

pub mod completions;
pub mod explain;
pub mod key;
pub mod man;
pub mod metrics;
pub mod rules;
pub mod scan;
pub mod timeline;

use crate::report::visible;
use std::io::{self, Write};

/// Exit statuses (SPEC §6).
pub const EXIT_OK: u8 = 0;
pub const EXIT_FINDINGS: u8 = 1;
pub const EXIT_ERROR: u8 = 2;

/// Runs the audit every report subcommand starts from, then what each does before its
/// report: refuses an output path that is an input, and prints the skipped lines' reasons
/// (unless `--quiet`) and the unreadable inputs' errors.
pub fn run_audit(
    cfg: &crate::config::AuditConfig,
    outputs: &[Option<&str>],
) -> anyhow::Result<crate::audit::Audit> {
    let audit = crate::audit::run(cfg).map_err(|e| anyhow::anyhow!("{e}"))?;
    for path in outputs {
        refuse_overwriting_an_input(*path, &audit)?;
    }
    if !cfg.quiet {
        print_problems(&audit);
    }
    for e in &audit.unreadable {
        eprintln!("idem-audit: error: {e}");
    }
    Ok(audit)
}

/// Refuses a path to write (`-o`, `--write-baseline`) that is one of the inputs just read:
/// the report written over the trace it came from would destroy the evidence (SPEC §9: no
/// input is changed). Only a file that exists can be one, so a new report's path costs one
/// `stat`.
pub fn refuse_overwriting_an_input(
    path: Option<&str>,
    audit: &crate::audit::Audit,
) -> anyhow::Result<()> {
    let Some(out) = path.and_then(|p| std::fs::metadata(p).ok()) else {
        return Ok(());
    };
    let path = path.unwrap_or_default();
    let input = (audit.inputs.iter())
        .filter(|i| i.path != "-")
        .find(|i| std::fs::metadata(&i.path).is_ok_and(|m| same_file(&out, &m)));
    match input {
        Some(input) => anyhow::bail!(
            "{path} is an input of this run ({}): writing there would overwrite it; give \
             another path",
            input.path
        ),
        None => Ok(()),
    }
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    // Without inode numbers: the same size and modification time is as close as the
    // standard library gets; a false refusal names the input, and is rare.
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

/// Writes output to `-o FILE` or standard output; a closed pipe (`| head`) is not an error.
pub fn emit(output: Option<&str>, bytes: &[u8]) -> anyhow::Result<()> {
    emit_with(output, |w| w.write_all(bytes))
}

/// As [`emit`], with the output written by `write` as it is made: a large report is not
/// held whole in memory beside the findings it renders.
pub fn emit_with(
    output: Option<&str>,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> anyhow::Result<()> {
    match output {
        Some(path) => {
            let written = std::fs::File::create(path).and_then(|f| {
                let mut out = io::BufWriter::with_capacity(1 << 16, f);
                write(&mut out)?;
                out.flush()
            });
            written.map_err(|e| anyhow::anyhow!("{path}: cannot write the report: {e}"))
        }
        None => {
            let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
            match write(&mut out).and_then(|_| out.flush()) {
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
                other => other.map_err(Into::into),
            }
        }
    }
}

/// Prints each skipped line as `path:line: skipped: why`, and each record used by a choice
/// the input does not settle as `path:line: warning: why`, on standard error.
/// An input that gave no event and was mostly skipped lines: most likely a layout this
/// tool does not read (a report of "No findings" alone would hide that).
fn reads_as_another_format(input: &crate::report::InputReport) -> bool {
    // A last line cut short says nothing of the layout (a log being written, or copied).
    let cut_reasons = [
        crate::ingest::lines::CUT_SHORT,
        crate::ingest::lines::CUT_BY_FAILURE,
        crate::ingest::container::CUT_INSIDE_SPLIT,
    ];
    let cut = (input.problems.last()).is_some_and(|p| cut_reasons.contains(&p.reason.as_str()));
    let skipped = input.skipped - u64::from(cut);
    input.format.is_some() && input.events == 0 && skipped > 0 && 2 * skipped >= input.lines
}

/// Whether a log of some length had no line read as an event and hardly any skipped: all
/// its lines were an application's own, or a layout read as such. Said as a note: a service
/// log of a quiet hour is like that too.
fn read_as_nothing(input: &crate::report::InputReport) -> bool {
    const SOME_LENGTH: u64 = 10;
    input.format.is_some()
        && input.events == 0
        && input.lines >= SOME_LENGTH
        && 2 * input.skipped < input.lines
}

/// An input's skipped lines or warnings, each as `path:line: label: why`, then how many more
/// there were than the report keeps.
fn print_located(
    err: &mut impl Write,
    path: &str,
    items: &[crate::report::ProblemReport],
    total: u64,
    (label, more_label): (&str, &str),
) {
    for p in items {
        let _ = writeln!(
            err,
            "{}:{}: {label}: {}",
            visible(path),
            p.line,
            visible(&p.reason)
        );
    }
    let more = total.saturating_sub(items.len() as u64);
    if more > 0 {
        let _ = writeln!(err, "{}: {more} more {more_label}", visible(path));
    }
}

pub fn print_problems(audit: &crate::audit::Audit) {
    let mut err = io::stderr().lock();
    for input in &audit.inputs {
        print_located(
            &mut err,
            &input.path,
            &input.problems,
            input.skipped,
            ("skipped", "lines skipped"),
        );
        print_located(
            &mut err,
            &input.path,
            &input.warnings,
            input.warned,
            ("warning", "warnings"),
        );
        // An unreadable input's note is its error, printed once after the notes.
        let unreadable = audit.unreadable.iter().any(|u| u.path == input.path);
        if let Some(note) = input.note.as_ref().filter(|_| !unreadable) {
            let _ = writeln!(err, "{}: {note}", input.path);
        }
        if reads_as_another_format(input) {
            let _ = writeln!(
                err,
                "{}: warning: no line was read as an event and {} of its {} lines were skipped: \
                 is it a layout idem-audit reads? (docs/inputs.md; --input-format forces one)",
                input.path, input.skipped, input.lines
            );
        }
        if read_as_nothing(input) {
            let _ = writeln!(
                err,
                "{}: note: none of its {} lines was read as an event ({} ignored as an \
                 application's own): if it logs refunds or requests, is it a layout idem-audit \
                 reads? (docs/inputs.md)",
                input.path, input.lines, input.ignored
            );
        }
    }
    if let Some((lead, effect, attempt)) = audit.clock_lead() {
        let at = |input: u32, line: u32| {
            let path = audit
                .inputs
                .get(input as usize)
                .map_or("?", |i| i.path.as_str());
            format!("{path}:{line}")
        };
        // Twice the lead, in whole seconds: this one effect's lead is the least the clocks
        // differ by.
        let skew = lead.0.saturating_mul(2).div_euclid(1_000_000_000) + 1;
        let _ = writeln!(
            err,
            "idem-audit: warning: {} {} was created {} before the attempt whose answer names it \
             was sent ({}): the agent's clock is ahead of the service's by at least that, near \
             or past what --max-skew allows, so effects matched by order and time may be \
             missed; run again with --max-skew {skew}s",
            effect.kind,
            effect.id,
            lead.display_secs(),
            at(attempt.loc.input, attempt.loc.line),
        );
    }
    let unused = (audit.unused_input_tz.iter().map(|n| ("input-tz", n))).chain(
        audit
            .unused_whole_amounts
            .iter()
            .map(|n| ("whole-amounts", n)),
    );
    for (flag, name) in unused {
        let _ = writeln!(
            err,
            "idem-audit: warning: --{flag} {name}=...: no input is {name} (give an input's path as \
             shown in the report, or its file name)"
        );
    }
    if let Some(gap) = audit.zone_gap() {
        let path = (audit.inputs.get(gap.input as usize)).map_or("?", |i| i.path.as_str());
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let _ = writeln!(
            err,
            "idem-audit: warning: {path}: {} effect(s) sit about {} from a \
             call of their order ({} {} created {}, the call at {}): if {path} logs local time \
             without an offset, give --input-tz {name}=ZONE (or --tz when every input does)",
            gap.effects,
            crate::audit::zone_gap::describe(gap.half_hours),
            gap.example.kind,
            gap.example.id,
            gap.example.created,
            gap.call_at,
        );
    }
    const GIVE_A_DATE: &str = "give --date YYYY-MM-DD, or a `# date: YYYY-MM-DD` line in each \
                               time-only file";
    if audit.dateless_beside_dated() {
        let _ = writeln!(
            err,
            "idem-audit: warning: some lines have a time of day and no date (placed on \
             1970-01-01) and others a date, so they cannot be matched in time: {GIVE_A_DATE}"
        );
    } else if audit.dateless_in_a_period() {
        let _ = writeln!(
            err,
            "idem-audit: error: lines with a time of day and no date cannot be placed in \
             --since/--until, so the report leaves them out (exit 2): {GIVE_A_DATE}"
        );
    }
}
