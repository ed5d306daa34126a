//! Human output: a summary block, then one row per finding, worst first (comfy-table).

use super::{CurrencyAmount, Report, money, visible};
use crate::money::{Currency, Total};
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
            (Some(r), Some(s)) => format!("{} #{s}", visible(r)),
            (Some(r), None) => visible(r).into_owned(),
            _ => String::new(),
        };
        let excess = money(f.currency.as_deref(), f.excess_minor)
            .map(|m| match f.excess_partial {
                true => format!("at least {}", m.display()),
                false => m.display(),
            })
            .unwrap_or_default();
        table.add_row([
            f.severity.as_str().to_string(),
            rule,
            visible(f.order.as_deref().unwrap_or_default()).into_owned(),
            run_step,
            (f.effects.iter().map(|e| visible(e)))
                .collect::<Vec<_>>()
                .join("\n"),
            excess,
            visible(&f.message).into_owned(),
        ]);
    }
    let _ = writeln!(out, "\n{table}");
    out.into_bytes()
}

/// The summary block (issue 5, finance): period, inputs, findings by severity, orders
/// affected, and duplicates with their excess per currency, delivery and decision apart.
fn summary(report: &Report, out: &mut String) {
    let s = &report.summary;
    let p = &s.period;
    let span = match (&p.first_event_at, &p.last_event_at) {
        (Some(a), Some(b)) => format!("input spans {a} to {b}"),
        _ => "no events".to_string(),
    };
    let period = match (&p.since, &p.until) {
        (None, None) => "all input".to_string(),
        (Some(a), None) => format!("from {a}"),
        (None, Some(b)) => format!("until {b} (exclusive)"),
        (Some(a), Some(b)) => format!("{a} to {b} (exclusive)"),
    };
    let _ = writeln!(out, "period: {period}; {span}");
    let (lines, events, ignored) = report.inputs.iter().fold((0, 0, 0), |acc, i| {
        (acc.0 + i.lines, acc.1 + i.events, acc.2 + i.ignored)
    });
    // An input that could not be read is an error, not a file of another kind passed over.
    let unreadable = (report.inputs.iter())
        .filter(|i| i.format.is_none())
        .filter(|i| {
            i.note
                .as_deref()
                .is_some_and(|n| n.starts_with("unreadable"))
        })
        .count() as u64;
    let passed_over = report.inputs.len() as u64 - s.inputs_read - unreadable;
    let _ = write!(
        out,
        "inputs read: {} ({lines} lines: {events} events, {ignored} ignored, {} skipped)",
        s.inputs_read, s.lines_skipped
    );
    if passed_over > 0 {
        let _ = write!(out, "; {passed_over} passed over");
    }
    if unreadable > 0 {
        let _ = write!(out, "; {unreadable} unreadable");
    }
    // Read up to a failure mid-way: counted as read, and said to be partial.
    let cut_short = (report.inputs.iter())
        .filter(|i| i.format.is_some())
        .filter(|i| (i.note.as_deref()).is_some_and(|n| n.starts_with("cut short")))
        .count();
    if cut_short > 0 {
        let _ = write!(out, "; {cut_short} cut short");
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "findings: {} {}, {} {}, {} {}; orders affected: {}",
        s.errors,
        plural(s.errors, "error"),
        s.warnings,
        plural(s.warnings, "warning"),
        s.infos,
        plural(s.infos, "info"),
        s.orders_affected
    );
    let _ = writeln!(
        out,
        "delivery duplicates (duplicate-effect): {} {}, excess {}",
        s.duplicate_effects,
        plural(s.duplicate_effects, "effect"),
        excess(&s.excess, s.excess_unknown)
    );
    let _ = writeln!(
        out,
        "decision duplicates (duplicate-decision): {} {}, excess {}",
        s.decision_duplicates,
        plural(s.decision_duplicates, "effect"),
        excess(&s.decision_excess, s.decision_excess_unknown)
    );
    if s.baselined > 0 {
        let _ = writeln!(
            out,
            "baseline: {} known {} accepted, not shown",
            s.baselined,
            plural(s.baselined, "finding")
        );
    }
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

fn excess(list: &[CurrencyAmount], unknown: u64) -> String {
    let findings = plural(unknown, "finding");
    match (list.is_empty(), unknown) {
        (_, 0) => amounts(list),
        (true, n) => format!("unknown ({n} {findings} without amounts)"),
        (false, n) => format!("at least {}, and unknown in {n} {findings}", amounts(list)),
    }
}

fn amounts(list: &[CurrencyAmount]) -> String {
    if list.is_empty() {
        return "none".into();
    }
    list.iter()
        .map(|a| match Currency::parse(&a.currency) {
            Some(c) => Total::new(a.amount_minor, c).display(),
            None => format!("{} {}", a.currency, a.amount_minor),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
