//! `idem-audit rules`: every registered rule with its default severity and one line, from
//! the same registry the scanner runs.

use super::{EXIT_OK, emit};
use crate::rules::{Rule, registry};

pub fn run() -> anyhow::Result<u8> {
    emit(None, render(registry()).as_bytes())?;
    Ok(EXIT_OK)
}

/// `warning`, or `warning (off by default)` for a rule that must be asked for.
pub fn default_level(rule: &Rule) -> String {
    if rule.default_enabled {
        rule.default_severity.as_str().to_string()
    } else {
        format!("{} (off by default)", rule.default_severity.as_str())
    }
}

/// One aligned line per rule: id, default level, summary.
pub fn render(rules: &[&Rule]) -> String {
    let id_w = rules.iter().map(|r| r.id.len()).max().unwrap_or(0);
    let lvl_w = rules
        .iter()
        .map(|r| default_level(r).len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for r in rules {
        let line = format!("{:id_w$}  {:lvl_w$}  {}", r.id, default_level(r), r.summary);
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
