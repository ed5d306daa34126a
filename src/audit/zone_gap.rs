//! A service logging local time without an offset, read beside an agent logging UTC: its
//! effects sit a whole number of hours (or half hours) from the calls of their orders and
//! match none, and the report calls them untraced. Nothing in either log says so; the gap
//! does. Found, it is a warning naming the input and `--input-tz`.

use crate::correlate::{EffectRec, MatchedBy, Model};
use crate::time::Timestamp;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

const HALF_HOUR: i64 = 30 * 60 * 1_000_000_000;

/// Effects of one input that sit `half_hours` × 30 min from a call of their order.
pub struct ZoneGap<'m> {
    pub input: u32,
    pub half_hours: i64,
    pub effects: usize,
    pub example: &'m EffectRec,
    pub call_at: Timestamp,
}

/// The input whose effects most often sit a whole number of half hours (up to 14 hours),
/// within `--max-skew` and a few seconds, from their calls: unmatched effects from a call of
/// the same kind and order, and effects an answer names from the request it answered. Two
/// such effects at least, or one from an input none of whose effects matched.
pub fn zone_gap(model: &Model) -> Option<ZoneGap<'_>> {
    let slack = model.max_skew.0.saturating_add(15_000_000_000);
    let whole = |gap: i64| {
        let half_hours = (gap as f64 / HALF_HOUR as f64).round() as i64;
        let off = (gap.saturating_sub(half_hours.saturating_mul(HALF_HOUR))).abs();
        (half_hours != 0 && half_hours.abs() <= 28 && off <= slack).then_some(half_hours)
    };
    // Each pass walks a month's effects or calls, and the scan waits for it before its
    // report: they run on every core, merged in the effects' order so the example is the
    // first one either way.
    // An effect an answer names, created whole hours after (or before) its request.
    let named = (model.effects.par_iter())
        .filter(|e| e.matched_by == Some(MatchedBy::EffectId))
        .fold(Found::default, |mut found, e| {
            if let Some(m) = e.matched {
                let sent = model.attempt(m).at;
                if let Some(half_hours) = whole(e.created.0.saturating_sub(sent.0)) {
                    count(&mut found, e, half_hours, sent);
                }
            }
            found
        });
    let mut found = named.reduce(Found::default, merge);
    let unmatched: Vec<&EffectRec> = (model.effects.par_iter())
        .filter(|e| e.happened && e.matched.is_none() && e.order.is_some())
        .collect();
    let wanted: FxHashSet<(&str, &str)> = (unmatched.iter())
        .filter_map(|e| Some((e.kind.as_str(), e.order.as_deref()?)))
        .collect();
    let calls = if wanted.is_empty() {
        Calls::default()
    } else {
        calls_of(model, &wanted)
    };
    for e in unmatched {
        let order = e.order.as_deref().unwrap_or_default();
        let Some(times) = calls.get(&(e.kind.as_str(), order)) else {
            continue;
        };
        let gaps =
            (times.iter()).filter_map(|&t| Some((whole(e.created.0.saturating_sub(t.0))?, t)));
        if let Some((half_hours, t)) = gaps.min_by_key(|&(h, _)| h.abs()) {
            count(&mut found, e, half_hours, t);
        }
    }
    // A gap of one effect counts only in an input none of whose effects matched: asked
    // only when there is such a gap.
    let matched_inputs: FxHashSet<u32> = if found.values().any(|&(n, _, _)| n < 2) {
        (model.effects.par_iter())
            .filter(|e| e.matched.is_some())
            .filter_map(|e| e.locs.first().map(|l| l.input))
            .collect()
    } else {
        FxHashSet::default()
    };
    found
        .into_iter()
        .filter(|&((input, _), (n, _, _))| n >= 2 || !matched_inputs.contains(&input))
        .max_by_key(|&((input, h), (n, _, _))| (n, std::cmp::Reverse((input, h))))
        .map(
            |((input, half_hours), (effects, example, call_at))| ZoneGap {
                input,
                half_hours,
                effects,
                example,
                call_at,
            },
        )
}

/// The calls of each wanted kind and order, with when each was first sent, in the model's
/// order.
type Calls<'m> = FxHashMap<(&'m str, &'m str), Vec<Timestamp>>;

fn calls_of<'m>(model: &'m Model, wanted: &FxHashSet<(&str, &str)>) -> Calls<'m> {
    let found = (model.dispatches.par_iter()).fold(Calls::default, |mut calls, d| {
        if let (Some(kind), Some(order)) = (d.effect_kind.as_deref(), d.order.as_deref())
            && wanted.contains(&(kind, order))
        {
            calls.entry((kind, order)).or_default().push(d.first_at());
        }
        calls
    });
    found.reduce(Calls::default, |mut before, after| {
        for (call, times) in after {
            before.entry(call).or_default().extend(times);
        }
        before
    })
}

/// Effects found at each (input, half hours), with the first of them and its call's time.
type Found<'m> = FxHashMap<(u32, i64), (usize, &'m EffectRec, Timestamp)>;

/// `after`'s counts added to `before`'s, whose examples come first.
fn merge<'m>(mut before: Found<'m>, after: Found<'m>) -> Found<'m> {
    for (at, (n, example, call_at)) in after {
        before.entry(at).or_insert((0, example, call_at)).0 += n;
    }
    before
}

fn count<'m>(found: &mut Found<'m>, e: &'m EffectRec, half_hours: i64, call_at: Timestamp) {
    let input = e.locs.first().map_or(0, |l| l.input);
    found
        .entry((input, half_hours))
        .or_insert((0, e, call_at))
        .0 += 1;
}

/// `+1 h`, `-5 h 30 min`.
pub fn describe(half_hours: i64) -> String {
    let sign = if half_hours < 0 { '-' } else { '+' };
    let minutes = half_hours.abs() * 30;
    match minutes % 60 {
        0 => format!("{sign}{} h", minutes / 60),
        m => format!("{sign}{} h {m} min", minutes / 60),
    }
}
