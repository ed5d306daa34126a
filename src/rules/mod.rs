//! The rule registry (SPEC §5). Each rule lives in its own file named after its id, with its
//! explanation beside its check; `rules` and `explain` print from this same list, so a rule
//! cannot run without being documented.

mod conflict_as_failure;
mod duplicate_decision;
mod duplicate_effect;
mod effect_after_timeout;
mod key_not_derived;
mod key_not_enforced;
mod key_payload_mismatch;
mod key_per_attempt;
mod model_supplied_key;
mod noncanonical_args;
mod record_after_effect;
mod record_stuck;
mod renumbered_step;
mod replay_rate_spike;
mod resume_key_drift;
mod retry_non_retryable;
mod unattributed_effect;
mod unkeyed_retry;

mod shared;
pub mod support;

/// What `metrics` counts as a conflict is what this rule reports.
pub(crate) use key_payload_mismatch::rejects_key;
#[cfg(test)]
pub(crate) mod testkit;

use crate::correlate::Model;
use crate::finding::{Finding, Severity};
use crate::time::Duration;
pub use shared::Shared;
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
    /// Its findings, from the model, the settings and what rules share of the model.
    pub check: fn(&Model, &Settings, &Shared, &mut Vec<Finding>),
}

/// Every rule, in the order `idem-audit rules` lists them.
pub fn registry() -> &'static [&'static Rule] {
    REGISTRY
}

static REGISTRY: &[&Rule] = &[
    &duplicate_effect::RULE,
    &unkeyed_retry::RULE,
    &key_per_attempt::RULE,
    &key_not_enforced::RULE,
    &key_payload_mismatch::RULE,
    &model_supplied_key::RULE,
    &noncanonical_args::RULE,
    &retry_non_retryable::RULE,
    &conflict_as_failure::RULE,
    &key_not_derived::RULE,
    &renumbered_step::RULE,
    &resume_key_drift::RULE,
    &duplicate_decision::RULE,
    &effect_after_timeout::RULE,
    &unattributed_effect::RULE,
    &record_stuck::RULE,
    &record_after_effect::RULE,
    &replay_rate_spike::RULE,
];

/// The rules that read every effect or keyed attempt of a month, slowest first: run
/// first, so that the threads finish together. In the registry's order the slowest
/// started last, and one thread worked alone at the end (the rules' stage at 1 GB on two
/// threads: 0.222 s that way, 0.200 s this way).
const LONGEST_FIRST: &[&str] = &[
    "duplicate-effect",
    "duplicate-decision",
    "key-payload-mismatch",
    "key-not-enforced",
    "effect-after-timeout",
    "replay-rate-spike",
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
    /// `--window`: the metrics windows the replay-rate-spike rule compares.
    pub window: Duration,
    /// `--severity RULE=LEVEL` overrides.
    pub levels: BTreeMap<String, Level>,
    /// `--key-scheme`: how agents are expected to derive keys (`key-not-derived`).
    pub key_scheme: Option<KeyScheme>,
}

/// A declared key derivation that `key-not-derived` checks keys against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyScheme {
    /// The write-up's `idempotency_key(run, step, tool, args)`: see [`crate::canonical`].
    RunStepToolArgs,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_skew: Duration::from_secs(2),
            decision_window: Duration::from_secs(24 * 3600),
            stuck_after: Duration::from_secs(5 * 60),
            window: Duration::from_secs(60),
            levels: BTreeMap::new(),
            key_scheme: None,
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
/// Rules are pure functions of the model, so they run in parallel; their findings are
/// concatenated in registry order and then sorted, so the result is the same whatever the
/// thread count.
pub fn run_all(model: &Model, settings: &Settings) -> Vec<Finding> {
    run_all_sharing(model, settings, &Shared::new(model, settings))
}

/// [`run_all`], with what rules derive alike kept in `shared` for the caller too.
pub fn run_all_sharing(model: &Model, settings: &Settings, shared: &Shared) -> Vec<Finding> {
    use rayon::prelude::*;
    // The slowest first, then the rest in the registry's order; one rule a task.
    let mut rules: Vec<&Rule> = registry().to_vec();
    rules.sort_by_key(|r| {
        let rank = LONGEST_FIRST.iter().position(|&id| id == r.id);
        rank.unwrap_or(LONGEST_FIRST.len())
    });
    let per_rule: Vec<Vec<Finding>> = rules
        .par_iter()
        .with_max_len(1)
        .map(|&rule| {
            let Level::On(severity) = settings.level_of(rule) else {
                return Vec::new();
            };
            let mut found = Vec::new();
            (rule.check)(model, settings, shared, &mut found);
            for f in &mut found {
                // A rule may judge one finding less severe than its default (a renumbered
                // step whose key held): the configured level is lowered to it.
                f.severity = if f.severity < rule.default_severity {
                    severity.min(f.severity)
                } else {
                    severity
                };
                f.evidence.sort();
                f.evidence.dedup();
            }
            found
        })
        .collect();
    // The order they ran in does not show: findings of different rules never tie below.
    let mut all: Vec<Finding> = per_rule.into_iter().flatten().collect();
    // Stable, and each key built once rather than twice per comparison: a key clones the
    // finding's order, run and first effect id.
    all.sort_by_cached_key(Finding::sort_key);
    all
}

#[cfg(test)]
mod unlogged_requests_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn the_rules_run_first_are_rules() {
        for id in LONGEST_FIRST {
            assert!(find(id).is_some(), "{id} is not a rule");
        }
    }

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

    use crate::finding::Cause;
    use testkit::{Trace, with_level};

    /// The issue's trace: a refund retried twice, a fresh key on every attempt, a service
    /// that does not dedupe (`fixed`: one key, and the service replays).
    fn refund_retried_twice(fixed: bool) -> Trace {
        let key = |n: &'static str| Some(if fixed { "k-fixed" } else { n });
        let args = r#"{"order":"A-88214","amount_p":4500}"#;
        let mut t = Trace::new();
        t.tool_call(0, "7f3a", 4, "issue_refund", args)
            .attempt(16, "7f3a", 4, 1, key("k1"))
            .timeout(10_016, "7f3a", 4)
            .refund(99, "rf_1", "A-88214", 4500, None)
            .attempt(10_500, "7f3a", 4, 2, key("k2"))
            .timeout(20_500, "7f3a", 4)
            .attempt(21_500, "7f3a", 4, 3, key("k3"));
        if fixed {
            t.created(22_600, "7f3a", 4, "rf_1", true);
        } else {
            t.refund(10_600, "rf_2", "A-88214", 4500, None)
                .refund(21_600, "rf_3", "A-88214", 4500, None)
                .created(22_600, "7f3a", 4, "rf_3", false);
        }
        t.step_end(22_610, "7f3a", 4, None);
        t
    }

    #[test]
    fn a_fresh_key_per_attempt_duplicates_and_is_named() {
        let found = refund_retried_twice(false).run_all(&Settings::default());
        let per_attempt: Vec<_> = found
            .iter()
            .filter(|f| f.rule == "key-per-attempt")
            .collect();
        assert_eq!(per_attempt.len(), 1);
        let dup: Vec<_> = found
            .iter()
            .filter(|f| f.rule == "duplicate-effect")
            .collect();
        assert_eq!(dup.len(), 1);
        assert_eq!(dup[0].cause, Some(Cause::ClientRetry));
        let ids: Vec<&str> = dup[0].effects.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["rf_1", "rf_2", "rf_3"]);
        assert_eq!(dup[0].excess_minor, Some(2 * 4500));
        assert!(!found.iter().any(|f| f.rule == "key-not-enforced"));
    }

    #[test]
    fn the_fixed_trace_yields_neither() {
        let found = refund_retried_twice(true).run_all(&Settings::default());
        for rule in [
            "key-per-attempt",
            "duplicate-effect",
            "key-not-enforced",
            "unkeyed-retry",
        ] {
            assert!(!found.iter().any(|f| f.rule == rule), "{rule}: {found:?}");
        }
    }

    #[test]
    fn severity_overrides_change_or_disable_a_rule() {
        let t = refund_retried_twice(false);
        let off = t.run_all(&with_level("key-per-attempt", Level::Off));
        assert!(!off.iter().any(|f| f.rule == "key-per-attempt"));
        assert!(off.iter().any(|f| f.rule == "duplicate-effect"));
        let info = t.run_all(&with_level("key-per-attempt", Level::On(Severity::Info)));
        let f = info.iter().find(|f| f.rule == "key-per-attempt").unwrap();
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(Level::parse("OFF"), Some(Level::Off));
        assert_eq!(Level::parse("warn"), Some(Level::On(Severity::Warning)));
        assert_eq!(Level::parse("loud"), None);
    }

    #[test]
    fn key_not_derived_runs_only_when_enabled() {
        let rule = find("key-not-derived").unwrap();
        assert_eq!(Settings::default().level_of(rule), Level::Off);
        let t = refund_retried_twice(true);
        let scheme = Settings {
            key_scheme: Some(KeyScheme::RunStepToolArgs),
            ..with_level("key-not-derived", Level::On(Severity::Warning))
        };
        assert!(
            t.run_all(&scheme)
                .iter()
                .any(|f| f.rule == "key-not-derived")
        );
        assert!(
            !t.run_all(&Settings::default())
                .iter()
                .any(|f| f.rule == "key-not-derived")
        );
    }
}
