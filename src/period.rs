//! `--since` / `--until` (issue 5, finance): which findings belong to a period.
//!
//! The whole input is correlated and audited first, so events outside the period still serve
//! as evidence for effects inside it; only then are findings kept by the time they belong to:
//! - a finding about duplicated effects belongs to the creation time of each duplicate (every
//!   effect after the first), the moment it happened (refunded on 30 November and again on 1
//!   December is a December duplicate: in November the order had been refunded once). When
//!   its duplicates fall in several periods it is kept in each, with the first effect and
//!   the duplicates created in that period only, and their excess;
//! - a finding about one effect, to that effect's creation;
//! - a finding about a window (a replay-rate spike), to the window's start;
//! - any other finding (a habit: a retry without a key, a key minted per attempt), to its
//!   latest cited event: the habit is shown when it was acted on (a retry sent on 1 December
//!   of a request first sent on 30 November is December's, with the duplicate it made).
//!
//! So each duplicate belongs to exactly one period, and the totals of consecutive periods add
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
        .filter_map(|f| match f.effects.as_slice() {
            [_, _, ..] if f.at.is_none() => duplicates_within(f, period),
            _ => belongs_at(&f, &times)
                .is_some_and(|t| period.contains(t))
                .then_some(f),
        })
        .collect()
}

/// A finding about duplicated effects, if one of its duplicates was created in `period`,
/// with those only (and the first effect, the one that should have happened) and their
/// excess: a month's total and count hold no refund made the next month.
fn duplicates_within(mut f: Finding, period: &Period) -> Option<Finding> {
    let all = f.effects.len() - 1;
    // Asked only of a finding the period cuts: a fingerprint is a SHA-256.
    let cut = f
        .effects
        .iter()
        .skip(1)
        .any(|e| !period.contains(e.created));
    let whole = cut.then(|| f.fingerprint());
    let mut effects = std::mem::take(&mut f.effects).into_iter();
    let first = effects.next()?;
    f.effects = std::iter::once(first)
        .chain(effects.filter(|e| period.contains(e.created)))
        .collect();
    let inside = &f.effects[1..];
    if inside.is_empty() {
        return None;
    }
    f.whole_fingerprint = whole;
    if let (true, Some(cur), Some(_)) = (inside.len() < all, f.currency, f.excess_minor) {
        f.excess_minor = (inside.iter())
            .filter_map(|e| e.amount)
            .filter(|m| m.currency == cur)
            .map(|m| i128::from(m.minor))
            .reduce(|a, b| a + b);
    }
    Some(f)
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
            .max()
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
        crate::config::parse_instant(s, crate::time::Zone::default()).unwrap()
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

    /// Three refunds, the third in December: November holds the second's excess, December
    /// the third's, and together they make the whole.
    #[test]
    fn duplicates_in_two_periods_split_the_excess() {
        let gbp = |minor| Some(crate::money::Money::new(minor, crate::money::Currency::GBP));
        let mut f = Finding::new("duplicate-effect", Severity::Error, String::new());
        let created = [
            "2026-11-30T23:59:57Z",
            "2026-11-30T23:59:59Z",
            "2026-12-01T00:00:01Z",
        ];
        for (id, at) in ["a", "b", "c"].into_iter().zip(created) {
            f.effects.push(EffectRef {
                id: id.into(),
                created: ts(at),
                amount: gbp(4500),
            });
        }
        f.currency = Some(crate::money::Currency::GBP);
        f.excess_minor = Some(9000);
        let month = |since: &str, until: &str| Period {
            since: Some(ts(since)),
            until: Some(ts(until)),
        };
        let excess = |p: Period| -> Vec<(Option<i128>, String)> {
            let kept = filter(vec![f.clone()], &Model::default(), &p);
            let ids = |f: &Finding| f.effects.iter().map(|e| e.id.as_str()).collect();
            kept.iter().map(|f| (f.excess_minor, ids(f))).collect()
        };
        let row = |minor, ids: &str| (Some(minor), ids.to_string());
        assert_eq!(excess(month("2026-11-01", "2026-12-01")), [row(4500, "ab")]);
        assert_eq!(excess(month("2026-12-01", "2027-01-01")), [row(4500, "ac")]);
        assert_eq!(
            excess(month("2026-11-01", "2027-01-01")),
            [row(9000, "abc")]
        );
        assert!(excess(month("2026-10-01", "2026-11-01")).is_empty());
    }

    /// Three refunds, the second with no amount logged (review36 H2): the whole excess and
    /// November's are lower bounds; December's, the third's alone, is exact.
    #[test]
    fn a_duplicate_without_an_amount_makes_its_periods_excess_a_lower_bound() {
        let gbp = Some(crate::money::Money::new(4500, crate::money::Currency::GBP));
        let mut f = Finding::new("duplicate-effect", Severity::Error, String::new());
        let effects = [
            ("a", "2026-11-30T23:59:57Z", gbp),
            ("b", "2026-11-30T23:59:59Z", None),
            ("c", "2026-12-01T00:00:01Z", gbp),
        ];
        for (id, at, amount) in effects {
            f.effects.push(EffectRef {
                id: id.into(),
                created: ts(at),
                amount,
            });
        }
        f.currency = Some(crate::money::Currency::GBP);
        f.excess_minor = Some(4500);
        assert!(f.excess_partial());
        let month = |since: &str, until: &str| Period {
            since: Some(ts(since)),
            until: Some(ts(until)),
        };
        let view = |p: Period| -> Vec<(Option<i128>, bool)> {
            let kept = filter(vec![f.clone()], &Model::default(), &p);
            kept.iter()
                .map(|f| (f.excess_minor, f.excess_partial()))
                .collect()
        };
        // November holds only the refund without an amount: unknown, not partial.
        assert_eq!(view(month("2026-11-01", "2026-12-01")), [(None, false)]);
        assert_eq!(
            view(month("2026-12-01", "2027-01-01")),
            [(Some(4500), false)]
        );
        assert_eq!(
            view(month("2026-11-01", "2027-01-01")),
            [(Some(4500), true)]
        );
    }

    /// A finding a period cuts keeps the whole finding's fingerprint, so that a baseline
    /// written from the whole input (or another month) still accepts it; one the period
    /// holds whole is fingerprinted as always.
    #[test]
    fn a_cut_finding_keeps_the_whole_findings_fingerprint() {
        let november = Period {
            since: Some(ts("2026-11-01")),
            until: Some(ts("2026-12-01")),
        };
        let mut three = dup("2026-11-30T23:59:50Z", "2026-11-30T23:59:55Z");
        three.effects.push(EffectRef {
            id: "c".into(),
            created: ts("2026-12-01T00:00:01Z"),
            amount: None,
        });
        let kept = filter(vec![three.clone()], &Model::default(), &november);
        assert_eq!(kept[0].effects.len(), 2);
        assert_eq!(kept[0].fingerprint(), three.fingerprint());
        let whole = dup("2026-11-30T23:59:50Z", "2026-11-30T23:59:55Z");
        let kept = filter(vec![whole.clone()], &Model::default(), &november);
        assert_eq!(kept[0].whole_fingerprint, None);
        assert_eq!(kept[0].fingerprint(), whole.fingerprint());
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
