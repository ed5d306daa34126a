//! `--since` / `--until` (issue 5, finance): which findings belong to a period.
//!
//! The whole input is correlated and audited first, so events outside the period still serve
//! as evidence for effects inside it; only then are findings kept by the time they belong to:
//! - a finding about duplicated effects belongs to the creation time of its *second* effect,
//!   the moment the duplicate happened (refunded on 30 November and again on 1 December is a
//!   December duplicate: in November the order had been refunded once);
//! - a finding about one effect, to that effect's creation;
//! - a finding about a window (a replay-rate spike), to the window's start;
//! - any other finding, to its earliest cited event.
//!
//! So each finding belongs to exactly one period, and the totals of consecutive periods add
//! up to the total of their union.

use crate::config::Period;
use crate::correlate::Model;
use crate::event::Loc;
use crate::finding::Finding;
use crate::time::Timestamp;
use rustc_hash::{FxHashMap, FxHashSet};

/// Keeps the findings that belong to `period`.
pub fn filter(findings: Vec<Finding>, model: &Model, period: &Period) -> Vec<Finding> {
    if period.is_open() {
        return findings;
    }
    let times = evidence_times(model, &findings);
    findings
        .into_iter()
        .filter(|f| belongs_at(f, &times).is_some_and(|t| period.contains(t)))
        .collect()
}

/// The instant a finding belongs to (see the module doc); `None` if nothing it cites has a time.
pub fn belongs_at(f: &Finding, times: &FxHashMap<Loc, Timestamp>) -> Option<Timestamp> {
    if let Some(at) = f.at {
        return Some(at);
    }
    match f.effects.as_slice() {
        [] => f
            .evidence
            .iter()
            .filter_map(|l| times.get(l))
            .min()
            .copied(),
        [only] => Some(only.created),
        [_, second, ..] => Some(second.created),
    }
}

/// The time of every event cited by a finding that has no effect and no window.
pub fn evidence_times(model: &Model, findings: &[Finding]) -> FxHashMap<Loc, Timestamp> {
    let wanted: FxHashSet<Loc> = findings
        .iter()
        .filter(|f| f.at.is_none() && f.effects.is_empty())
        .flat_map(|f| f.evidence.iter().copied())
        .collect();
    let mut out = FxHashMap::default();
    if wanted.is_empty() {
        return out;
    }
    let mut note = |loc: Loc, at: Timestamp| {
        if wanted.contains(&loc) {
            out.entry(loc).or_insert(at);
        }
    };
    for d in &model.dispatches {
        if let (Some(loc), Some(at)) = (d.loc, d.at) {
            note(loc, at);
        }
        for a in &d.attempts {
            note(a.loc, a.at);
            if let Some(o) = &a.outcome {
                note(o.loc, o.at);
            }
        }
        if let Some(e) = &d.end {
            note(e.loc, e.at);
        }
    }
    for r in model.runs.values().flatten() {
        note(r.loc, r.at);
    }
    for r in &model.records {
        note(r.loc, r.created);
    }
    for e in &model.effects {
        for &loc in &e.locs {
            note(loc, e.created);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{EffectRef, Severity};

    fn ts(s: &str) -> Timestamp {
        crate::config::parse_instant(s, chrono::FixedOffset::east_opt(0).unwrap()).unwrap()
    }

    fn dup(first: &str, second: &str) -> Finding {
        let mut f = Finding::new("duplicate-effect", Severity::Error, String::new());
        for (id, at) in [("a", first), ("b", second)] {
            f.effects.push(EffectRef {
                id: id.into(),
                created: ts(at),
                amount: None,
            });
        }
        f
    }

    #[test]
    fn a_duplicate_belongs_to_the_period_of_its_second_effect() {
        let november = Period {
            since: Some(ts("2026-11-01")),
            until: Some(ts("2026-12-01")),
        };
        let model = Model::default();
        let kept = |f: Finding| filter(vec![f], &model, &november).len();
        assert_eq!(kept(dup("2026-11-30T23:59:50Z", "2026-11-30T23:59:59Z")), 1);
        // Straddling the end: the duplicate happened in December.
        assert_eq!(kept(dup("2026-11-30T23:59:50Z", "2026-12-01T00:00:01Z")), 0);
        // Straddling the start: it happened in November, and the first effect is evidence.
        assert_eq!(kept(dup("2026-10-31T23:59:50Z", "2026-11-01T00:00:00Z")), 1);
        assert_eq!(
            kept(dup("2026-10-31T23:59:50Z", "2026-10-31T23:59:59.999Z")),
            0
        );
    }

    #[test]
    fn an_open_period_keeps_everything() {
        let all = filter(
            vec![dup("2026-11-01T00:00:00Z", "2026-11-01T00:00:01Z")],
            &Model::default(),
            &Period::default(),
        );
        assert_eq!(all.len(), 1);
    }
}
