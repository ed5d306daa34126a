//! `idem-audit metrics PATHS... [--window 1m]`: the dedup layer's health per window, with
//! replay-rate spikes marked and reported.

use super::{EXIT_ERROR, EXIT_OK, emit, run_audit};
use crate::cli::{MetricsArgs, OutputFormat};
use crate::config::AuditConfig;
use crate::metrics;
use crate::report::{finding_report, metrics as render};
use crate::time::{Duration, NANOS_PER_MILLI, NANOS_PER_SEC};

pub fn run(args: &MetricsArgs) -> anyhow::Result<u8> {
    let cfg = AuditConfig::from_args(&args.input).map_err(anyhow::Error::msg)?;
    let audit = run_audit(&cfg, &[args.output.as_deref()])?;
    let all = metrics::windows(&metrics::classify(&audit.model), cfg.rules.window);
    let threshold = metrics::spike_threshold(&all);
    let windows = all
        .into_iter()
        .filter(|w| cfg.period.contains(w.start_at))
        .collect();
    let paths: Vec<&str> = audit.inputs.iter().map(|i| i.path.as_str()).collect();
    let report = render::MetricsReport {
        schema: render::SCHEMA.into(),
        window: duration_text(cfg.rules.window),
        spike_threshold: threshold,
        windows,
        totals: audit.metrics(),
        findings: audit
            .findings
            .iter()
            .filter(|f| f.rule == "replay-rate-spike")
            .map(|f| finding_report(f, &paths))
            .collect(),
    };
    let bytes = match args.format {
        OutputFormat::Table => render::render_text(&report),
        OutputFormat::Json => render::render_json(&report),
        OutputFormat::Csv => render::render_csv(&report),
    };
    if !(cfg.quiet && args.output.is_none()) {
        emit(args.output.as_deref(), &bytes)?;
    }
    Ok(if audit.unreadable.is_empty() {
        EXIT_OK
    } else {
        EXIT_ERROR
    })
}

/// `1m`, `30s`, `2h`, `500ms`: the largest unit that divides the width.
fn duration_text(d: Duration) -> String {
    let n = d.0;
    for (unit, nanos) in [
        ("d", 86_400 * NANOS_PER_SEC),
        ("h", 3600 * NANOS_PER_SEC),
        ("m", 60 * NANOS_PER_SEC),
        ("s", NANOS_PER_SEC),
        ("ms", NANOS_PER_MILLI),
    ] {
        if n % nanos == 0 {
            return format!("{}{unit}", n / nanos);
        }
    }
    format!("{n}ns")
}
