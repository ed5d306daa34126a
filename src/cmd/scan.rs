//! `idem-audit scan`: the audit with every rule, rendered as a table, JSON or CSV; with a
//! baseline, known findings are accepted and only new ones are reported and counted.

use super::{EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, emit, emit_with, run_audit};
use crate::audit;
use crate::baseline::Baseline;
use crate::cli::{FailOn, OutputFormat, ScanArgs};
use crate::config::AuditConfig;
use crate::finding::{Finding, Severity};
use crate::report::{self, PeriodReport, csv, json, table};
use anyhow::Context;
use std::io::IsTerminal;

pub fn run(args: &ScanArgs) -> anyhow::Result<u8> {
    let mut cfg = AuditConfig::from_args(&args.input).map_err(anyhow::Error::msg)?;
    cfg.progress = !cfg.quiet && std::io::stderr().is_terminal();
    // Flags win over the config file.
    let fail_on = args.fail_on.or(cfg.fail_on).unwrap_or(FailOn::Error);
    let baseline = args
        .baseline
        .as_deref()
        .map(Baseline::read)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let mut audit = run_audit(
        &cfg,
        &[args.output.as_deref(), args.write_baseline.as_deref()],
    )?;
    if audit.nothing_read() {
        eprintln!("idem-audit: error: {}", nothing_read_why(&audit));
    }
    // Moved, not copied: a month's findings are tens of megabytes.
    let findings = std::mem::take(&mut audit.findings);
    if let Some(path) = &args.write_baseline {
        std::fs::write(path, Baseline::of(&findings).to_bytes())
            .with_context(|| format!("{path}: cannot write the baseline"))?;
    }
    let (new, accepted) = match &baseline {
        Some(b) => b.split(findings),
        None => (findings, Vec::new()),
    };
    // Writing a baseline accepts every current finding.
    let fail_on = if args.write_baseline.is_some() {
        FailOn::Never
    } else {
        fail_on
    };
    let status = exit_status(&new, fail_on, &audit, cfg.strict);
    let mut report = report::summarise(audit.inputs.clone(), &new, audit.metrics());
    report.summary.baselined = accepted.len() as u64;
    let span = audit.span();
    report.summary.period = PeriodReport {
        since: cfg.period.since.map(|t| t.display()),
        until: cfg.period.until.map(|t| t.display()),
        first_event_at: span.map(|s| s.0.display()),
        last_event_at: span.map(|s| s.1.display()),
    };
    if !(cfg.quiet && args.output.is_none()) {
        let output = args.output.as_deref();
        match args.format {
            OutputFormat::Json => {
                // The rows are made on as many threads as the audit ran on.
                let pool = (cfg.threads)
                    .and_then(|n| rayon::ThreadPoolBuilder::new().num_threads(n).build().ok());
                emit_with(output, |w| {
                    json::write_with_rows(&report, &new, w, pool.as_ref())
                })?
            }
            OutputFormat::Csv => {
                report.findings = report::rows(new, &report.inputs);
                emit(output, &csv::render(&report))?
            }
            OutputFormat::Table => {
                report.findings = report::rows(new, &report.inputs);
                let width = (output.is_none() && std::io::stdout().is_terminal())
                    .then(terminal_width)
                    .flatten();
                emit(output, &table::render(&report, width))?
            }
        }
    }
    // The model of a large scan is millions of small allocations: freeing them one by one
    // took a tenth of the run (perf), and the process is about to exit anyway.
    std::mem::forget(audit);
    Ok(status)
}

/// Why nothing was audited: inputs passed over as no recognised format, or empty.
fn nothing_read_why(audit: &audit::Audit) -> String {
    match audit.empty_and_passed_over() {
        (0, passed) => format!(
            "no input was read as a log ({passed} passed over: not a recognised format); \
             name a file to read it anyway, or give --input-format"
        ),
        (empty, 0) => {
            format!(
                "no input was read as a log ({empty} empty: not one line with content): nothing was audited"
            )
        }
        (empty, passed) => format!(
            "no input was read as a log ({passed} passed over: not a recognised format; \
             {empty} empty); name a file to read it anyway, or give --input-format"
        ),
    }
}

fn terminal_width() -> Option<u16> {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .or(Some(120))
}

/// Computed in one place from the findings not accepted by a baseline and the input
/// accounting (SPEC §6).
pub fn exit_status(
    findings: &[Finding],
    fail_on: FailOn,
    audit: &audit::Audit,
    strict: bool,
) -> u8 {
    // Nothing read is nothing audited: a CI job pointed at the wrong folder must not pass.
    // Lines that cannot be placed in the period asked for are as good as unread: a month-end
    // job over time-only logs got an empty CSV and exit 0.
    if !audit.unreadable.is_empty()
        || audit.nothing_read()
        || audit.dateless_in_a_period()
        || (strict && audit.lines_skipped() > 0)
    {
        return EXIT_ERROR;
    }
    let threshold = match fail_on {
        FailOn::Error => Some(Severity::Error),
        FailOn::Warning => Some(Severity::Warning),
        FailOn::Info => Some(Severity::Info),
        FailOn::Never => None,
    };
    match threshold {
        Some(t) if findings.iter().any(|f| f.severity >= t) => EXIT_FINDINGS,
        _ => EXIT_OK,
    }
}
