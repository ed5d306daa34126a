//! Baselines (SPEC §5, CI): a file of accepted findings, so that CI fails only on new ones.
//! Findings are matched by [`Finding::fingerprint`] (rule, order, run, step, key, effect ids,
//! window), never by line numbers, so a baseline survives edits to the logs around them. The
//! other fields are written for the people who review the file.

use crate::finding::Finding;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

pub const SCHEMA: &str = "idem-audit.baseline.v1";

#[derive(Debug, Serialize, Deserialize)]
pub struct Baseline {
    pub schema: String,
    pub findings: Vec<Entry>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Entry {
    pub fingerprint: String,
    pub rule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<String>,
    #[serde(default)]
    pub message: String,
}

impl Baseline {
    /// The baseline of these findings, sorted by fingerprint so that rewriting it after an
    /// unrelated change gives a small diff.
    pub fn of(findings: &[Finding]) -> Baseline {
        let mut entries: Vec<Entry> = findings
            .iter()
            .map(|f| Entry {
                fingerprint: f.fingerprint(),
                rule: f.rule.to_string(),
                order: f.order.clone(),
                run: f.run.clone(),
                step: f.step,
                effects: f.effects.iter().map(|e| e.id.clone()).collect(),
                message: f.message.clone(),
            })
            .collect();
        entries.sort_by(|a, b| (&a.fingerprint, &a.rule).cmp(&(&b.fingerprint, &b.rule)));
        entries.dedup_by(|a, b| a.fingerprint == b.fingerprint);
        Baseline {
            schema: SCHEMA.into(),
            findings: entries,
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).unwrap_or_default();
        out.push(b'\n');
        out
    }

    pub fn parse(bytes: &[u8], path: &str) -> Result<Baseline, String> {
        let b: Baseline = serde_json::from_slice(bytes)
            .map_err(|e| format!("{path}: not a baseline file: {e}"))?;
        if b.schema != SCHEMA {
            return Err(format!(
                "{path}: baseline schema `{}`, expected `{SCHEMA}`",
                b.schema
            ));
        }
        Ok(b)
    }

    pub fn read(path: &str) -> Result<Baseline, String> {
        let bytes =
            std::fs::read(path).map_err(|e| format!("{path}: cannot read the baseline: {e}"))?;
        Baseline::parse(&bytes, path)
    }

    pub fn fingerprints(&self) -> BTreeSet<&str> {
        self.findings
            .iter()
            .map(|e| e.fingerprint.as_str())
            .collect()
    }

    /// Splits findings into (new, accepted by this baseline).
    pub fn split(&self, findings: Vec<Finding>) -> (Vec<Finding>, Vec<Finding>) {
        let known = self.fingerprints();
        findings
            .into_iter()
            .partition(|f| !known.contains(f.fingerprint().as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Severity;

    fn finding(order: &str) -> Finding {
        let mut f = Finding::new("duplicate-effect", Severity::Error, "m".into());
        f.order = Some(order.into());
        f
    }

    #[test]
    fn round_trips_and_splits_by_fingerprint() {
        let b = Baseline::of(&[finding("A-1")]);
        let b = Baseline::parse(&b.to_bytes(), "b.json").unwrap();
        let (new, old) = b.split(vec![finding("A-1"), finding("A-2")]);
        assert_eq!(new.len(), 1);
        assert_eq!(new[0].order.as_deref(), Some("A-2"));
        assert_eq!(old.len(), 1);
    }

    #[test]
    fn a_line_move_keeps_the_fingerprint() {
        let mut a = finding("A-1");
        let mut b = finding("A-1");
        a.evidence.push(crate::event::Loc { input: 0, line: 3 });
        b.evidence.push(crate::event::Loc { input: 0, line: 30 });
        b.message = "reworded".into();
        assert_eq!(a.fingerprint(), b.fingerprint());
    }

    #[test]
    fn rejects_other_files() {
        assert!(Baseline::parse(b"{\"schema\":\"x\",\"findings\":[]}", "b").is_err());
        assert!(Baseline::parse(b"not json", "b").is_err());
    }
}
