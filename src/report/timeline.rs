//! Timeline output: one line per event (time, `path:line`, side, what happened, the marks of
//! the findings that cite it), the findings listed below; or the same as JSON / CSV.

use super::{FindingReport, finding_report, visible};
use crate::timeline::{Side, Timeline};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

pub const SCHEMA: &str = "idem-audit.timeline.v1";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelineReport {
    pub schema: String,
    /// `order A-88214`, `run 7f3a`, `key 9f1c...`.
    pub subject: String,
    pub entries: Vec<EntryReport>,
    /// Marked findings; an entry's `findings` holds their 1-based marks.
    pub findings: Vec<FindingReport>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EntryReport {
    pub at: String,
    pub path: String,
    pub line: u32,
    pub side: Side,
    pub what: String,
    pub text: String,
    /// The input's own fields of the event beyond those the audit reads, when it has any.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attrs: BTreeMap<String, String>,
    pub findings: Vec<usize>,
}

impl EntryReport {
    /// The text, then the attributes as `{name=value, ...}` for the line-oriented renderers.
    fn text_with_attrs(&self) -> String {
        if self.attrs.is_empty() {
            return self.text.clone();
        }
        let attrs: Vec<String> = self.attrs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{}  {{{}}}", self.text, attrs.join(", "))
    }
}

pub fn build(t: &Timeline, paths: &[&str]) -> TimelineReport {
    let path = |input: u32| paths.get(input as usize).unwrap_or(&"?").to_string();
    TimelineReport {
        schema: SCHEMA.into(),
        subject: t.subject.describe(),
        entries: t
            .entries
            .iter()
            .map(|e| EntryReport {
                at: e.at.display(),
                path: path(e.loc.input),
                line: e.loc.line,
                side: e.side,
                what: e.what.to_string(),
                text: e.text.clone(),
                attrs: e.attrs.iter().cloned().collect(),
                findings: e.findings.iter().map(|n| n + 1).collect(),
            })
            .collect(),
        findings: t
            .findings
            .iter()
            .map(|f| finding_report(f, paths))
            .collect(),
    }
}

pub fn render_json(r: &TimelineReport) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(r).unwrap_or_default();
    out.push(b'\n');
    out
}

pub fn render_csv(r: &TimelineReport) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(["at", "path", "line", "side", "what", "text", "findings"]);
    for e in &r.entries {
        let marks: Vec<String> = e.findings.iter().map(|n| n.to_string()).collect();
        let _ = w.write_record([
            e.at.as_str(),
            // A file's name is the user's text too (`=1+1.log`); `-` is standard input.
            &if e.path == "-" {
                e.path.as_str().into()
            } else {
                super::inert(&e.path)
            },
            &e.line.to_string(),
            side(e.side),
            &e.what,
            &super::inert(&e.text_with_attrs()),
            &marks.join(";"),
        ]);
    }
    w.into_inner().unwrap_or_default()
}

fn side(s: Side) -> &'static str {
    match s {
        Side::Client => "client",
        Side::Service => "service",
        Side::Gateway => "gateway",
    }
}

/// Aligned columns; marks like `[1,2]` at the end of the line.
pub fn render_text(r: &TimelineReport) -> Vec<u8> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "timeline of {}: {} {}, {} {}",
        visible(&r.subject),
        r.entries.len(),
        if r.entries.len() == 1 {
            "event"
        } else {
            "events"
        },
        r.findings.len(),
        if r.findings.len() == 1 {
            "finding"
        } else {
            "findings"
        }
    );
    if r.entries.is_empty() {
        out.push_str("\nNothing in the inputs concerns it.\n");
        return out.into_bytes();
    }
    out.push('\n');
    let source = |e: &EntryReport| format!("{}:{}", visible(&e.path), e.line);
    let at_w = r.entries.iter().map(|e| e.at.len()).max().unwrap_or(0);
    let src_w = r.entries.iter().map(|e| source(e).len()).max().unwrap_or(0);
    for e in &r.entries {
        let marks = if e.findings.is_empty() {
            String::new()
        } else {
            let m: Vec<String> = e.findings.iter().map(|n| n.to_string()).collect();
            format!("  [{}]", m.join(","))
        };
        let _ = writeln!(
            out,
            "{:at_w$}  {:src_w$}  {:7}  {}{marks}",
            e.at,
            source(e),
            side(e.side),
            visible(&e.text_with_attrs())
        );
    }
    if !r.findings.is_empty() {
        out.push_str("\nfindings:\n");
        for (n, f) in r.findings.iter().enumerate() {
            let cause = f
                .cause
                .as_ref()
                .map(|c| format!(" ({c})"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "[{}] {} {}{cause}: {}",
                n + 1,
                f.severity.as_str(),
                f.rule,
                visible(&f.message)
            );
        }
    }
    out.into_bytes()
}
