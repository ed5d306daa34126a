//! `idem-audit explain RULE`: a rule's full explanation (what it does, why it is bad, how to
//! fix it, an example), the same text that lives beside the rule's check.

use super::{EXIT_ERROR, EXIT_OK, emit};
use crate::cli::ExplainArgs;
use crate::cmd::rules::default_level;
use crate::rules::{Rule, find, registry};

pub fn run(args: &ExplainArgs) -> anyhow::Result<u8> {
    match find(args.rule.trim()) {
        Some(rule) => {
            emit(None, render(rule).as_bytes())?;
            Ok(EXIT_OK)
        }
        None => {
            let ids: Vec<&str> = registry().iter().map(|r| r.id).collect();
            eprintln!(
                "idem-audit: error: unknown rule `{}`; known rules: {}",
                args.rule,
                ids.join(", ")
            );
            Ok(EXIT_ERROR)
        }
    }
}

pub fn render(rule: &Rule) -> String {
    let mut out = format!(
        "# {} ({})\n\n{}\n\n{}",
        rule.id,
        default_level(rule),
        rule.summary,
        rule.explanation.trim_start()
    );
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}
