//! `idem-audit scan`: the audit with every rule, rendered as a table or JSON.

use super::{EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, emit, print_problems};
use crate::audit;
use crate::cli::{FailOn, OutputFormat, ScanArgs};
use crate::config::AuditConfig;
use crate::finding::{Finding, Severity};
use crate::report::{self, json, table};
use std::io::IsTerminal;

pub fn run(args: &ScanArgs) -> anyhow::Result<u8> {
    let cfg = AuditConfig::from_args(&args.input).map_err(anyhow::Error::msg)?;
    let audit = audit::run(&cfg).map_err(|e| anyhow::anyhow!("{e}"))?;
    if !cfg.quiet {
        print_problems(&audit);
    }
    for e in &audit.unreadable {
        eprintln!("idem-audit: error: {e}");
    }
    let report = report::build(audit.inputs.clone(), &audit.findings, audit.metrics());
    let bytes = match args.format {
        OutputFormat::Json => json::render(&report),
        OutputFormat::Table => {
            let width = (args.output.is_none() && std::io::stdout().is_terminal())
                .then(terminal_width)
                .flatten();
            table::render(&report, width)
        }
    };
    if !(cfg.quiet && args.output.is_none()) {
        emit(args.output.as_deref(), &bytes)?;
    }
    Ok(exit_status(
        &audit.findings,
        args.fail_on,
        &audit,
        cfg.strict,
    ))
}

fn terminal_width() -> Option<u16> {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .or(Some(120))
}

/// Computed in one place from the findings and the input accounting (SPEC §6).
pub fn exit_status(
    findings: &[Finding],
    fail_on: FailOn,
    audit: &audit::Audit,
    strict: bool,
) -> u8 {
    if !audit.unreadable.is_empty() || (strict && audit.lines_skipped() > 0) {
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
