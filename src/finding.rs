//! Findings: what a rule concluded, with the evidence it rests on. A [`Finding`] knows
//! nothing of output formats; reporters render it.

use crate::event::Loc;
use crate::money::{Currency, Money, Total};
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    pub fn parse(text: &str) -> Option<Severity> {
        match text.to_ascii_lowercase().as_str() {
            "info" => Some(Severity::Info),
            "warning" | "warn" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }
}

/// Why a duplicate effect happened (SPEC §5), strongest evidence first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    Resume,
    StepRetry,
    ClientRetry,
    GatewayRetry,
    Unknown,
}

impl Cause {
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Resume => "resume",
            Cause::StepRetry => "step-retry",
            Cause::ClientRetry => "client-retry",
            Cause::GatewayRetry => "gateway-retry",
            Cause::Unknown => "unknown",
        }
    }
}

/// One effect a finding is about, for reports.
#[derive(Clone, Debug, PartialEq)]
pub struct EffectRef {
    pub id: String,
    pub created: Timestamp,
    pub amount: Option<Money>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub rule: &'static str,
    pub severity: Severity,
    pub cause: Option<Cause>,
    pub order: Option<String>,
    pub run: Option<String>,
    pub step: Option<u32>,
    pub tool: Option<String>,
    pub key: Option<String>,
    /// Effects in creation order; the first is the one that should have happened.
    pub effects: Vec<EffectRef>,
    pub currency: Option<Currency>,
    /// The sum of the effects beyond the first, in minor units of `currency`.
    pub excess_minor: Option<i128>,
    pub message: String,
    /// Every line the finding rests on, sorted.
    pub evidence: Vec<Loc>,
    /// For a finding about a span of time rather than effects (a metrics window): its start.
    /// Part of the fingerprint, so that two spikes on different days are different findings.
    pub at: Option<Timestamp>,
    /// The fingerprint of the whole finding, when `--since`/`--until` kept only some of its
    /// effects: a finding is the same finding in every period's view of it, so a baseline
    /// written from one view accepts it in the others.
    pub whole_fingerprint: Option<String>,
}

impl Finding {
    /// A finding with only the rule and message set; rules fill in the rest.
    pub fn new(rule: &'static str, severity: Severity, message: String) -> Self {
        Finding {
            rule,
            severity,
            cause: None,
            order: None,
            run: None,
            step: None,
            tool: None,
            key: None,
            effects: Vec::new(),
            currency: None,
            excess_minor: None,
            message,
            evidence: Vec::new(),
            at: None,
            whole_fingerprint: None,
        }
    }

    pub fn excess(&self) -> Option<Total> {
        Some(Total::new(self.excess_minor?, self.currency?))
    }

    /// A known excess that leaves out a duplicate whose amount is not known in its currency
    /// (no amount logged, a whole number of unknown unit): what it says is a lower bound.
    pub fn excess_partial(&self) -> bool {
        match (self.excess_minor, self.currency) {
            (Some(_), Some(cur)) => {
                (self.effects.iter().skip(1)).any(|e| e.amount.is_none_or(|m| m.currency != cur))
            }
            _ => false,
        }
    }

    /// A stable identity for baselines: rule, order, run, step and effect ids, never line
    /// numbers, so that a finding survives edits to the file around it.
    pub fn fingerprint(&self) -> String {
        if let Some(whole) = &self.whole_fingerprint {
            return whole.clone();
        }
        let mut h = Sha256::new();
        h.update(self.rule.as_bytes());
        for part in [
            self.order.as_deref().unwrap_or(""),
            self.run.as_deref().unwrap_or(""),
            &self.step.map(|s| s.to_string()).unwrap_or_default(),
            self.key.as_deref().unwrap_or(""),
        ] {
            h.update([0]);
            h.update(part.as_bytes());
        }
        for e in &self.effects {
            h.update([1]);
            h.update(e.id.as_bytes());
        }
        if let Some(at) = self.at {
            h.update([2]);
            h.update(at.nanos().to_le_bytes());
        }
        // Hex by hand: a `format!` per byte was half of a fingerprint's cost, and a month's
        // report has tens of thousands of findings.
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = String::with_capacity(16);
        for b in &h.finalize()[..8] {
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        }
        out
    }

    /// Report order: worst first, then by order, run, step, rule, first evidence.
    pub fn sort_key(&self) -> impl Ord + use<> {
        (
            std::cmp::Reverse(self.severity),
            self.order.clone(),
            self.run.clone(),
            self.step,
            self.rule,
            self.evidence.first().copied(),
            self.effects.first().map(|e| e.id.clone()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fingerprints are in baselines on disk: their spelling must never change. The expected
    /// values are Python's `hashlib.sha256(...).hexdigest()[:16]` of the same bytes.
    #[test]
    fn fingerprints_are_the_first_eight_bytes_of_the_sha256_in_lowercase_hex() {
        let bare = Finding::new("x", Severity::Info, String::new());
        assert_eq!(bare.fingerprint(), "17c996ae257a9954");
        let mut f = Finding::new("duplicate-effect", Severity::Error, String::new());
        f.order = Some("A-88214".into());
        f.run = Some("7f3a".into());
        f.step = Some(4);
        f.effects.push(EffectRef {
            id: "rf_1".into(),
            created: Timestamp(0),
            amount: None,
        });
        assert_eq!(f.fingerprint(), "d97b1b68c40cb197");
    }
}
