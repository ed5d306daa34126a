//! Reports: the [`Report`] every output format renders, built once from the findings and
//! the input accounting. Each format is a module that turns a report into bytes; none of
//! them decides the exit status or where the bytes go.

pub mod csv;
pub mod json;
pub mod metrics;
pub mod table;
pub mod timeline;

use crate::finding::{Finding, Severity};
use crate::money::{Currency, Total};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

pub const SCHEMA: &str = "idem-audit.report.v1";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub inputs: Vec<InputReport>,
    pub summary: Summary,
    pub findings: Vec<FindingReport>,
    pub metrics: Metrics,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InputReport {
    pub path: String,
    /// The detected (or forced) format; `null` for inputs passed over.
    pub format: Option<String>,
    pub lines: u64,
    pub events: u64,
    pub ignored: u64,
    pub skipped: u64,
    /// The first skipped lines, with why.
    #[serde(default)]
    pub problems: Vec<ProblemReport>,
    /// How many records were used by a choice the input does not settle (an OTLP request
    /// two tool calls could have made), and the first of them, with why.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warned: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<ProblemReport>,
    /// Why the input was passed over or could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Nothing but blanks and NUL bytes, if anything: counted as an empty input.
    #[serde(skip)]
    pub blank: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProblemReport {
    pub line: u32,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurrencyAmount {
    pub currency: String,
    pub amount_minor: i128,
    /// `amount_minor`'s digits, where a reader of doubles would misread it
    /// ([`digits_beyond_doubles`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount_minor_string: Option<String>,
}

impl CurrencyAmount {
    pub fn new(currency: impl Into<String>, amount_minor: i128) -> Self {
        CurrencyAmount {
            currency: currency.into(),
            amount_minor,
            amount_minor_string: digits_beyond_doubles(amount_minor),
        }
    }
}

/// Money in the JSON report is exact integer minor units, whatever its size. A parser that
/// reads every JSON number as a double (JavaScript's `JSON.parse`, jq before 1.7) misreads
/// integers beyond 2^53 - 1 (`Number.MAX_SAFE_INTEGER`) without a word: 18446744073709551614
/// becomes ...552000. Such a value is also written as its digits in a string, beside the
/// number and only then, so that ordinary reports do not change and such a reader still
/// has the exact value. (Python, serde_json and Go's `json.Number` read the number exactly.)
pub fn digits_beyond_doubles(minor: i128) -> Option<String> {
    const MAX_SAFE_INTEGER: u128 = (1 << 53) - 1;
    (minor.unsigned_abs() > MAX_SAFE_INTEGER).then(|| minor.to_string())
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub errors: u64,
    pub warnings: u64,
    pub infos: u64,
    /// Orders with duplicated money (delivery or decision duplicates).
    pub orders_affected: u64,
    /// Delivery duplicates (`duplicate-effect`), per currency.
    pub excess: Vec<CurrencyAmount>,
    /// Decision duplicates (`duplicate-decision`), per currency.
    pub decision_excess: Vec<CurrencyAmount>,
    /// Delivery and decision duplicates whose excess is unknown (amounts not logged, or
    /// bare whole numbers of unknown unit): left out of the sums above, which are then
    /// less than the whole.
    #[serde(default)]
    pub excess_unknown: u64,
    #[serde(default)]
    pub decision_excess_unknown: u64,
    /// Effects beyond the first in delivery duplicates.
    pub duplicate_effects: u64,
    /// Effects beyond the first in decision duplicates.
    pub decision_duplicates: u64,
    pub lines_skipped: u64,
    /// The period reported on (`--since` / `--until`), and the span the input covers.
    #[serde(default)]
    pub period: PeriodReport,
    /// Inputs parsed (not counting those passed over as not a log, or unreadable).
    #[serde(default)]
    pub inputs_read: u64,
    /// Findings accepted by `--baseline`, left out of `findings`.
    #[serde(default)]
    pub baselined: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeriodReport {
    pub since: Option<String>,
    pub until: Option<String>,
    /// The earliest and latest event of the input.
    pub first_event_at: Option<String>,
    pub last_event_at: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FindingReport {
    pub rule: String,
    pub severity: Severity,
    pub cause: Option<String>,
    pub order: Option<String>,
    pub run: Option<String>,
    pub step: Option<u32>,
    pub tool: Option<String>,
    pub key: Option<String>,
    pub effects: Vec<String>,
    pub currency: Option<String>,
    pub excess_minor: Option<i128>,
    /// `excess_minor`'s digits, where a reader of doubles would misread it
    /// ([`digits_beyond_doubles`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excess_minor_string: Option<String>,
    /// Some duplicate's amount is unknown: `excess_minor` is what the others add up to, a
    /// lower bound. Written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub excess_partial: bool,
    pub first_effect_at: Option<String>,
    pub last_effect_at: Option<String>,
    pub message: String,
    pub evidence: Vec<EvidenceRef>,
    pub fingerprint: String,
    /// The window a finding about a span of time is about (replay-rate-spike).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceRef {
    pub path: String,
    pub line: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub keyed_requests: u64,
    pub replays: u64,
    pub replay_rate: Option<f64>,
    pub conflicts: u64,
    pub conflict_rate: Option<f64>,
}

/// Builds the report. `paths[i]` is the display path of input `i`.
/// The report of `findings`.
pub fn build(inputs: Vec<InputReport>, findings: Vec<Finding>, metrics: Metrics) -> Report {
    let mut report = summarise(inputs, &findings, metrics);
    report.findings = rows(findings, &report.inputs);
    report
}

/// The report without its finding rows: the inputs, the summary of `findings` and the
/// metrics. [`rows`] makes the rows, or [`json::write_with_rows`] writes them as it makes
/// them: a month's findings and their rows are never held side by side.
pub fn summarise(inputs: Vec<InputReport>, findings: &[Finding], metrics: Metrics) -> Report {
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count() as u64;
    let money_rules = ["duplicate-effect", "duplicate-decision"];
    let orders_affected = findings
        .iter()
        .filter(|f| money_rules.contains(&f.rule))
        .filter_map(|f| f.order.as_deref())
        .collect::<BTreeSet<&str>>()
        .len() as u64;
    let summary = Summary {
        errors: count(Severity::Error),
        warnings: count(Severity::Warning),
        infos: count(Severity::Info),
        orders_affected,
        excess: excess_of(findings, "duplicate-effect"),
        decision_excess: excess_of(findings, "duplicate-decision"),
        excess_unknown: unknown_excess(findings, "duplicate-effect"),
        decision_excess_unknown: unknown_excess(findings, "duplicate-decision"),
        duplicate_effects: beyond_first(findings, "duplicate-effect"),
        decision_duplicates: beyond_first(findings, "duplicate-decision"),
        lines_skipped: inputs.iter().map(|i| i.skipped).sum(),
        period: PeriodReport::default(),
        inputs_read: inputs.iter().filter(|i| i.format.is_some()).count() as u64,
        baselined: 0,
    };
    Report {
        schema: SCHEMA.into(),
        inputs,
        summary,
        findings: Vec::new(),
        metrics,
    }
}

/// The findings' rows, each finding freed as soon as its row is made.
pub fn rows(findings: Vec<Finding>, inputs: &[InputReport]) -> Vec<FindingReport> {
    let paths = input_paths(inputs);
    findings
        .into_iter()
        .map(|f| finding_report(&f, &paths))
        .collect()
}

/// Input paths by input index, as evidence names them.
pub fn input_paths(inputs: &[InputReport]) -> Vec<&str> {
    inputs.iter().map(|i| i.path.as_str()).collect()
}

/// Exact integer sums per currency, sorted by currency. An i128 cannot wrap here: every
/// amount summed is that of an effect some finding lists, held in memory (fewer than 2^59
/// of them), and each is at most 2^63 minor units (an i64), so a sum stays below 2^122.
fn excess_of(findings: &[Finding], rule: &str) -> Vec<CurrencyAmount> {
    let mut sums: BTreeMap<Currency, i128> = BTreeMap::new();
    for f in findings.iter().filter(|f| f.rule == rule) {
        if let Some(m) = f.excess() {
            *sums.entry(m.currency).or_default() += m.minor;
        }
    }
    (sums.into_iter())
        .map(|(c, v)| CurrencyAmount::new(c.to_string(), v))
        .collect()
}

/// Findings of `rule` whose excess is unknown, or known only in part (a duplicate without
/// an amount): the sums leave them out or short, and say so.
fn unknown_excess(findings: &[Finding], rule: &str) -> u64 {
    (findings.iter())
        .filter(|f| f.rule == rule && (f.excess().is_none() || f.excess_partial()))
        .count() as u64
}

fn beyond_first(findings: &[Finding], rule: &str) -> u64 {
    findings
        .iter()
        .filter(|f| f.rule == rule)
        .map(|f| f.effects.len().saturating_sub(1) as u64)
        .sum()
}

pub fn finding_report(f: &Finding, paths: &[&str]) -> FindingReport {
    FindingReport {
        rule: f.rule.to_string(),
        severity: f.severity,
        cause: f.cause.map(|c| c.as_str().to_string()),
        order: f.order.clone(),
        run: f.run.clone(),
        step: f.step,
        tool: f.tool.clone(),
        key: f.key.clone(),
        effects: f.effects.iter().map(|e| e.id.clone()).collect(),
        currency: f.currency.map(|c| c.to_string()),
        excess_minor: f.excess_minor,
        excess_minor_string: f.excess_minor.and_then(digits_beyond_doubles),
        excess_partial: f.excess_partial(),
        first_effect_at: f.effects.first().map(|e| e.created.display()),
        last_effect_at: f.effects.last().map(|e| e.created.display()),
        message: f.message.clone(),
        evidence: f
            .evidence
            .iter()
            .map(|l| EvidenceRef {
                path: paths.get(l.input as usize).unwrap_or(&"?").to_string(),
                line: l.line,
            })
            .collect(),
        fingerprint: f.fingerprint(),
        at: f.at.map(|t| t.display()),
    }
}

/// Money from a report's currency code and minor units, for renderers.
pub fn money(currency: Option<&str>, minor: Option<i128>) -> Option<Total> {
    Some(Total::new(minor?, Currency::parse(currency?)?))
}

/// Text taken from the logs, made harmless for a terminal: control characters (C0 but a
/// tab, DEL, C1; ESC among them) written as `\x1b`, `\u{9b}`, so that a log cannot clear
/// the screen, retitle the window or draw a fake line over the report (review36 L5). The
/// table, the timeline's text and the lines on standard error print log text through it;
/// JSON escapes them itself, and CSV keeps them, as RFC 4180 allows (a spreadsheet runs no
/// escape sequence; `inert` guards it from formulas).
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    let control = |c: char| c.is_control() && c != '\t';
    if !text.chars().any(control) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !control(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    out.into()
}

/// Text taken from the logs, made inert for a spreadsheet: a cell starting with `=`, `+`,
/// `-`, `@`, a tab or a carriage return is a formula to Excel, LibreOffice and Google Sheets
/// (an order `=HYPERLINK(...)` from a log would run), so it gets a leading `'`, which they
/// read as "text" and do not show (OWASP's advice for CSV injection).
pub(crate) fn inert(text: &str) -> std::borrow::Cow<'_, str> {
    match text.bytes().next() {
        Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r') => format!("'{text}").into(),
        _ => text.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::visible;

    #[test]
    fn control_characters_are_shown_and_the_rest_kept() {
        assert_eq!(visible("A-1\u{1b}[2J"), r"A-1\x1b[2J");
        assert_eq!(visible("a\u{7f}b\u{9b}c\u{0}\n"), r"a\x7fb\u{9b}c\x00\x0a");
        // Nothing to escape: the text itself, not a copy.
        for kept in ["A-1", "tab\there", "Zürich ₩ 1"] {
            assert!(matches!(visible(kept), std::borrow::Cow::Borrowed(k) if k == kept));
        }
    }
}
