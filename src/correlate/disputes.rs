//! Which amount an effect is, when its lines disagree on it (a payments log says GBP 45.00,
//! the settlement export EUR 45.00; review36 L1). Whether effects are copies of each other
//! (one call's, or one order's within seconds) asks whether their amounts agree: taken by
//! an order of file names, or as the lesser currency code, the disagreement could split a
//! duplicate and its excess vanished from the month's totals. Decided once every line is
//! in, by what the lines say, never by which file was read first:
//!
//! 1. the amount another effect of its kind and order was written with: a disagreement
//!    never makes a duplicate disappear, and the duplicate's excess stays in its copies'
//!    currency;
//! 2. else the amount the service's own log wrote, over an export's (a CSV export is a
//!    later report of what the service did, and has the currency column to get wrong);
//! 3. else the lesser as written (by currency code, then number).
//!
//! The disagreement itself is always reported ([`crate::audit`]'s warnings, and the
//! message of a finding that counts the effect), with the rule that chose. Orders and keys
//! are chosen by rules of their own, before amounts ([`orders_and_keys`]).

mod orders_and_keys;

pub(crate) use orders_and_keys::note;
pub(super) use orders_and_keys::resolve_orders_and_keys;
pub use orders_and_keys::{TextDispute, TextDisputes};

use super::service_side::WrittenAmount;
use super::{Disputed, EffectRec, Model};
use crate::event::Loc;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;

/// The amounts the lines of one effect wrote, where two of them disagree.
#[derive(Clone, Debug, Default)]
pub struct AmountDispute {
    /// Each line's amount: the lines before the first disagreement with the amount the
    /// effect had then (they agreed on it, or wrote none).
    pub(crate) written: Vec<(Loc, WrittenAmount)>,
    pub chosen_by: ChosenBy,
}

/// Which rule chose an effect's amount, order or key among those its lines wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChosenBy {
    /// Another effect of its kind (and, for an amount, its order) was written with it; for
    /// a key, or an idempotency record is stored under it.
    Copies,
    /// The service's log wrote it; an export wrote another.
    Log,
    /// The client's side says it (an order or key only): the call answered with the
    /// effect's id, or a request sent with the key.
    Client,
    #[default]
    Lesser,
}

impl ChosenBy {
    /// Why the value of `field` used was used, for the warning.
    pub fn why(self, kind: &str, field: Disputed) -> String {
        const NEVER_SPLITS: &str = "a disagreement never splits a duplicate";
        match (self, field) {
            (ChosenBy::Copies, Disputed::Amount) => {
                format!("the amount another {kind} of its order is written with: {NEVER_SPLITS}")
            }
            (ChosenBy::Copies, Disputed::Order) => {
                format!("the order another {kind} is written with: {NEVER_SPLITS}")
            }
            (ChosenBy::Copies, Disputed::Key) => format!(
                "the key another {kind} or an idempotency record is written with: {NEVER_SPLITS}"
            ),
            (ChosenBy::Client, Disputed::Key) => {
                "the key the client's request was sent with".to_string()
            }
            (ChosenBy::Client, _) => "the order of the call answered with its id".to_string(),
            (ChosenBy::Log, _) => "the service log's, over an export's".to_string(),
            (ChosenBy::Lesser, _) => {
                "the lesser as written, whichever file is read first".to_string()
            }
        }
    }
}

impl AmountDispute {
    /// The amounts written other than `used`, each once, in their order.
    pub(crate) fn others(&self, used: Option<WrittenAmount>) -> Vec<WrittenAmount> {
        let mut seen = Vec::new();
        for &(_, w) in &self.written {
            if Some(w) != used && !seen.contains(&w) {
                seen.push(w);
            }
        }
        seen.sort_by_key(|w| w.ordering_key());
        seen
    }
}

/// Sets the amount of each effect whose lines disagree on it (`model.amount_disputes`), by
/// the rules above; `exports` are the inputs that are effect exports.
pub(super) fn resolve_amounts(model: &mut Model, exports: &[u32]) {
    if model.amount_disputes.is_empty() {
        return;
    }
    let disputes = std::mem::take(&mut model.amount_disputes);
    let effects = &model.effects;
    // The amounts each (kind, order) of a disputed effect was written with, by effect.
    let wanted: FxHashSet<(&str, &str)> = (disputes.keys())
        .filter_map(|&i| of_order(&effects[i as usize]))
        .collect();
    let mut by_order: FxHashMap<(&str, &str), Vec<(u32, WrittenAmount)>> = FxHashMap::default();
    for (i, e) in effects.iter().enumerate() {
        let Some(key) = of_order(e).filter(|k| wanted.contains(k)) else {
            continue;
        };
        let written = match disputes.get(&(i as u32)) {
            Some(d) => d.written.iter().map(|&(_, w)| w).collect(),
            None => e.written.into_iter().collect::<Vec<_>>(),
        };
        let amounts = by_order.entry(key).or_default();
        amounts.extend(written.into_iter().map(|w| (i as u32, w)));
    }
    let chosen: Vec<(u32, (WrittenAmount, ChosenBy))> = (disputes.iter())
        .map(|(&i, d)| {
            let copies = (of_order(&effects[i as usize]))
                .and_then(|key| by_order.get(&key))
                .map_or(&[][..], Vec::as_slice);
            (i, choose(d, i, copies, exports))
        })
        .collect();
    drop(by_order);
    let mut disputes = disputes;
    for (i, (amount, by)) in chosen {
        model.effects[i as usize].written = Some(amount);
        disputes.entry(i).or_default().chosen_by = by;
    }
    model.amount_disputes = disputes;
}

/// The disputes of a model being built, by effect.
pub type AmountDisputes = BTreeMap<u32, AmountDispute>;

fn of_order(e: &EffectRec) -> Option<(&str, &str)> {
    Some((e.kind.as_str(), e.order.as_deref()?))
}

/// Effect `i`'s amount among those its lines wrote (`d`), given what each effect of its kind
/// and order was written with (`copies`, its own lines among them).
fn choose(
    d: &AmountDispute,
    i: u32,
    copies: &[(u32, WrittenAmount)],
    exports: &[u32],
) -> (WrittenAmount, ChosenBy) {
    // A known amount wins over a whole number of unknown unit, as when lines are merged.
    let any_known = d.written.iter().any(|(_, w)| w.unit_known());
    let mut candidates: Vec<WrittenAmount> = (d.written.iter())
        .map(|&(_, w)| w)
        .filter(|w| w.unit_known() || !any_known)
        .collect();
    candidates.sort_by_key(|w| w.ordering_key());
    candidates.dedup();
    let shared: Vec<WrittenAmount> = (candidates.iter().copied())
        .filter(|c| copies.iter().any(|&(j, w)| j != i && w == *c))
        .collect();
    match shared.len() {
        1 => return (shared[0], ChosenBy::Copies),
        0 => {}
        _ => candidates = shared,
    }
    let logged: Vec<WrittenAmount> = (candidates.iter().copied())
        .filter(|c| (d.written.iter()).any(|(loc, w)| w == c && !exports.contains(&loc.input)))
        .collect();
    if let [one] = logged[..] {
        return (one, ChosenBy::Log);
    }
    // Sorted: the first is the lesser.
    (candidates[0], ChosenBy::Lesser)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::money::{Currency, Money};

    fn eur() -> Currency {
        Currency::parse("EUR").unwrap()
    }

    fn amount(minor: i64, currency: Currency) -> WrittenAmount {
        WrittenAmount::new(Money::new(minor, currency), true)
    }

    /// Lines of effect 0 in inputs 0 (a log) and 1 (an export).
    fn dispute(log: WrittenAmount, export: WrittenAmount) -> AmountDispute {
        let at = |input| Loc { input, line: 1 };
        AmountDispute {
            written: vec![(at(0), log), (at(1), export)],
            chosen_by: ChosenBy::Lesser,
        }
    }

    #[test]
    fn copies_then_the_log_then_the_lesser_choose() {
        let (gbp, eur) = (amount(4500, Currency::GBP), amount(4500, eur()));
        let exports = [1];
        // Another effect of the order in GBP: GBP, even against the log.
        let d = dispute(eur, gbp);
        let copies = [(0, eur), (0, gbp), (7, gbp)];
        assert_eq!(choose(&d, 0, &copies, &exports), (gbp, ChosenBy::Copies));
        // Its own lines are no copies: the log's.
        assert_eq!(choose(&d, 0, &copies[..2], &exports), (eur, ChosenBy::Log));
        // Copies in both: the log's of those.
        let both = [(0, eur), (0, gbp), (7, gbp), (8, eur)];
        assert_eq!(choose(&d, 0, &both, &exports), (eur, ChosenBy::Log));
        // No log among the lines: the lesser code.
        assert_eq!(choose(&d, 0, &[], &[0, 1]), (eur, ChosenBy::Lesser));
        assert_eq!(
            choose(&dispute(gbp, eur), 0, &[], &[]),
            (eur, ChosenBy::Lesser)
        );
    }

    /// A known amount wins over a whole number of unknown unit, as when lines merge.
    #[test]
    fn a_known_amount_wins_over_an_unknown_unit() {
        let whole = WrittenAmount::new(Money::new(45, Currency::GBP), false);
        let known = amount(4500, eur());
        let d = dispute(whole, known);
        assert_eq!(
            choose(&d, 0, &[(3, whole)], &[1]),
            (known, ChosenBy::Lesser)
        );
        assert_eq!(d.others(Some(known)), [whole]);
    }
}
