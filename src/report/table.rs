//! Human output: a summary block, then one row per finding, worst first (comfy-table).

use super::{CurrencyAmount, Report, money};
use crate::money::{Currency, Money};
use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use std::fmt::Write;

/// Renders the report; `width` fits the table to a terminal, `None` leaves rows unwrapped.
pub fn render(report: &Report, width: Option<u16>) -> Vec<u8> {
    let mut out = String::new();
    summary(report, &mut out);
    if report.findings.is_empty() {
        out.push_str("\nNo findings.\n");
        return out.into_bytes();
    }
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_content_arrangement(ContentArrangement::Dynamic);
    if let Some(w) = width {
        table.set_width(w);
    }
    table.set_header([
        "severity", "rule", "order", "run/step", "effects", "excess", "message",
    ]);
    for f in &report.findings {
        let rule = match &f.cause {
            Some(c) => format!("{}\n({c})", f.rule),
            None => f.rule.clone(),
        };
        let run_step = match (&f.run, f.step) {
            (Some(r), Some(s)) => format!("{r} #{s}"),
            (Some(r), None) => r.clone(),
            _ => String::new(),
        };
        let excess = money(f.currency.as_deref(), f.excess_minor)
            .map(|m| m.display())
            .unwrap_or_default();
        table.add_row([
            f.severity.as_str().to_string(),
            rule,
            f.order.clone().unwrap_or_default(),
            run_step,
            f.effects.join("\n"),
            excess,
            f.message.clone(),
        ]);
    }
    let _ = writeln!(out, "\n{table}");
    out.into_bytes()
}

fn summary(report: &Report, out: &mut String) {
    let s = &report.summary;
    let events: u64 = report.inputs.iter().map(|i| i.events).sum();
    let _ = writeln!(
        out,
        "inputs: {} ({} events, {} lines skipped)",
        report.inputs.len(),
        events,
        s.lines_skipped
    );
    let _ = writeln!(
        out,
        "findings: {} errors, {} warnings, {} infos; orders affected: {}",
        s.errors, s.warnings, s.infos, s.orders_affected
    );
    let _ = writeln!(
        out,
        "delivery duplicates: {} effects, excess {}",
        s.duplicate_effects,
        amounts(&s.excess)
    );
    if !s.decision_excess.is_empty() || s.decision_duplicates > 0 {
        let _ = writeln!(
            out,
            "decision duplicates: {} effects, excess {}",
            s.decision_duplicates,
            amounts(&s.decision_excess)
        );
    }
}

fn amounts(list: &[CurrencyAmount]) -> String {
    if list.is_empty() {
        return "none".into();
    }
    list.iter()
        .map(|a| match Currency::parse(&a.currency) {
            Some(c) => Money::new(a.amount_minor, c).display(),
            None => format!("{} {}", a.currency, a.amount_minor),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
