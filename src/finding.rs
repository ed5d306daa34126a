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
        }
    }

    pub fn excess(&self) -> Option<Total> {
        Some(Total::new(self.excess_minor?, self.currency?))
    }

    /// A stable identity for baselines: rule, order, run, step and effect ids, never line
    /// numbers, so that a finding survives edits to the file around it.
    pub fn fingerprint(&self) -> String {
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
        h.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
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
