//! The rule registry (SPEC §5). Each rule lives in its own file named after its id, with its
//! explanation beside its check; `rules` and `explain` print from this same list, so a rule
//! cannot run without being documented.

mod duplicate_effect;
mod effect_after_timeout;
mod unattributed_effect;
mod unkeyed_retry;

pub mod support;

use crate::correlate::Model;
use crate::finding::{Finding, Severity};
use crate::time::Duration;
use std::collections::BTreeMap;

/// A rule: a pure function of the correlated model, and its documentation.
pub struct Rule {
    /// Kebab-case id, stable: baselines and configs refer to it.
    pub id: &'static str,
    pub default_severity: Severity,
    /// Off unless asked for (e.g. a rule that needs a declared key scheme).
    pub default_enabled: bool,
    /// One line for `idem-audit rules`.
    pub summary: &'static str,
    /// What it detects, why it matters, how to fix it, an example: `idem-audit explain`.
    pub explanation: &'static str,
    pub check: fn(&Model, &Settings, &mut Vec<Finding>),
}

/// Every rule, in the order `idem-audit rules` lists them.
pub fn registry() -> &'static [&'static Rule] {
    REGISTRY
}

static REGISTRY: &[&Rule] = &[
    &duplicate_effect::RULE,
    &unkeyed_retry::RULE,
    &effect_after_timeout::RULE,
    &unattributed_effect::RULE,
];

pub fn find(id: &str) -> Option<&'static Rule> {
    registry().iter().copied().find(|r| r.id == id)
}

/// A rule's level after overrides: a severity, or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Off,
    On(Severity),
}

impl Level {
    pub fn parse(text: &str) -> Option<Level> {
        if text.eq_ignore_ascii_case("off") {
            Some(Level::Off)
        } else {
            Severity::parse(text).map(Level::On)
        }
    }
}

/// What the rules may be configured with.
#[derive(Clone, Debug)]
pub struct Settings {
    pub max_skew: Duration,
    pub decision_window: Duration,
    pub stuck_after: Duration,
    /// `--severity RULE=LEVEL` overrides.
    pub levels: BTreeMap<String, Level>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_skew: Duration::from_secs(2),
            decision_window: Duration::from_secs(24 * 3600),
            stuck_after: Duration::from_secs(5 * 60),
            levels: BTreeMap::new(),
        }
    }
}

impl Settings {
    pub fn level_of(&self, rule: &Rule) -> Level {
        match self.levels.get(rule.id) {
            Some(l) => *l,
            None if rule.default_enabled => Level::On(rule.default_severity),
            None => Level::Off,
        }
    }
}

/// Runs every enabled rule and returns the findings in report order.
pub fn run_all(model: &Model, settings: &Settings) -> Vec<Finding> {
    let mut all = Vec::new();
    for rule in registry() {
        let Level::On(severity) = settings.level_of(rule) else {
            continue;
        };
        let mut found = Vec::new();
        (rule.check)(model, settings, &mut found);
        for mut f in found {
            f.severity = severity;
            f.evidence.sort();
            f.evidence.dedup();
            all.push(f);
        }
    }
    all.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_rule_is_documented_and_ids_are_unique() {
        let mut ids = BTreeSet::new();
        for r in registry() {
            assert!(ids.insert(r.id), "duplicate rule id {}", r.id);
            assert!(r.id.chars().all(|c| c.is_ascii_lowercase() || c == '-'));
            assert!(!r.summary.is_empty(), "{} has no summary", r.id);
            for section in ["What it does", "Why is this bad", "How to fix", "Example"] {
                assert!(
                    r.explanation.contains(section),
                    "{} lacks `{section}`",
                    r.id
                );
            }
        }
    }
}
