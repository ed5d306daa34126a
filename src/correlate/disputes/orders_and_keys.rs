//! Which order or idempotency key an effect has, when its lines disagree on it (the
//! payments log says order A-1001, the settlement export A-1000; the log key `6d0e...`, the
//! export another). The order groups an effect with its copies (one order's refunds within
//! seconds are one delivery) and matches it to a call by order and time; the key matches it
//! to the request sent with it and groups the effects one key made. Taken as the lesser as
//! written, an export's slip moved a duplicate refund to another order, or out of its key's
//! group, and the duplicate vanished. Decided once every line is in, by what the lines and
//! the rest of the inputs say, never by which file was read first:
//!
//! 1. the value the service's own log wrote, over an export's (an export is a later report
//!    of what the service did; the log wrote what the request carried);
//! 2. else the value the client's side agrees with: for an order, the order of the call
//!    whose request was answered with the effect's id; for a key, the key that request was
//!    sent with, else a key some request was sent with;
//! 3. else the value another effect of its kind is written with (for a key, or an
//!    idempotency record is stored under): a disagreement never splits a duplicate;
//! 4. else the lesser as written.
//!
//! Unlike an amount's ([`super::resolve_amounts`]), the log's value goes before another
//! effect's: an order or key names *which* effect a line is about, and one that another
//! refund happens to carry is a neighbour's as often as a copy's (an export row given the
//! order of the row above it made a false duplicate).

use super::ChosenBy;
use crate::correlate::ready::fresh;
use crate::correlate::{Model, OutcomeKind};
use crate::event::{Loc, Text};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;

/// The orders (or keys) the lines of one effect wrote, where two of them disagree.
#[derive(Clone, Debug, Default)]
pub struct TextDispute {
    /// Each line's value: the lines before the first disagreement with the value the effect
    /// had then (they agreed on it, or wrote none).
    pub(crate) written: Vec<(Loc, Text)>,
    pub chosen_by: ChosenBy,
}

impl TextDispute {
    /// The values written other than `used`, each once, in their order.
    pub fn others(&self, used: Option<&str>) -> Vec<&str> {
        let mut out: Vec<&str> = (self.written.iter())
            .map(|(_, w)| w.as_str())
            .filter(|&w| Some(w) != used)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The order (or key) disputes of a model being built, by effect.
pub type TextDisputes = BTreeMap<u32, TextDispute>;

/// Notes line `loc`'s value (`other`) of effect `i`, whose lines so far (`locs`) gave it
/// `kept`, when the two disagree or the effect's lines already did. A line that writes no
/// value is no disagreement.
pub(crate) fn note(
    disputes: &mut TextDisputes,
    i: u32,
    locs: &[Loc],
    kept: Option<&Text>,
    other: Option<&Text>,
    loc: Loc,
) {
    let Some(other) = other else { return };
    let disagrees = kept.is_some_and(|k| k != other);
    if !disagrees && (disputes.is_empty() || !disputes.contains_key(&i)) {
        return;
    }
    let dispute = disputes.entry(i).or_insert_with(|| TextDispute {
        written: (kept.into_iter())
            .flat_map(|k| locs.iter().map(move |&l| (l, k.clone())))
            .collect(),
        ..TextDispute::default()
    });
    dispute.written.push((loc, fresh(other.clone())));
}

/// Sets the order and the key of each effect whose lines disagree on it
/// (`model.order_disputes`, `model.key_disputes`) by the rules above; `exports` are the
/// inputs that are effect exports. Before amounts are chosen: another effect's amount
/// counts when it is of the same order.
pub(in crate::correlate) fn resolve_orders_and_keys(model: &mut Model, exports: &[u32]) {
    if model.order_disputes.is_empty() && model.key_disputes.is_empty() {
        return;
    }
    let orders = std::mem::take(&mut model.order_disputes);
    let keys = std::mem::take(&mut model.key_disputes);
    let client = ClientWord::new(model, &orders, &keys);
    let order_copies = Copies::new(model, &orders, |e| e.order.as_ref());
    let mut key_copies = Copies::new(model, &keys, |e| e.key.as_ref());
    key_copies.add_records(model);
    let kind_and_id = |i: u32| {
        let e = &model.effects[i as usize];
        (e.kind.as_str(), e.id.as_str())
    };
    let chosen_orders: Vec<(u32, Text, ChosenBy)> = (orders.iter())
        .filter_map(|(&i, d)| {
            let (kind, id) = kind_and_id(i);
            let answered = |c: &str| client.answered(id).any(|a| a.order == Some(c));
            let another = |c: &str| order_copies.other(kind, i, c);
            let tiers: [Tier<'_>; 3] = [
                (ChosenBy::Log, &logged(d, exports)),
                (ChosenBy::Client, &answered),
                (ChosenBy::Copies, &another),
            ];
            let (order, by) = choose(d, &tiers)?;
            Some((i, order, by))
        })
        .collect();
    let chosen_keys: Vec<(u32, Text, ChosenBy)> = (keys.iter())
        .filter_map(|(&i, d)| {
            let (kind, id) = kind_and_id(i);
            let answered = |c: &str| client.answered(id).any(|a| a.key == Some(c));
            let sent = |c: &str| client.sent.contains(c);
            let another = |c: &str| key_copies.other(kind, i, c);
            let tiers: [Tier<'_>; 4] = [
                (ChosenBy::Log, &logged(d, exports)),
                (ChosenBy::Client, &answered),
                (ChosenBy::Client, &sent),
                (ChosenBy::Copies, &another),
            ];
            let (key, by) = choose(d, &tiers)?;
            Some((i, key, by))
        })
        .collect();
    drop((client, order_copies, key_copies));
    let (mut orders, mut keys) = (orders, keys);
    for (i, order, by) in chosen_orders {
        model.effects[i as usize].order = Some(order);
        orders.entry(i).or_default().chosen_by = by;
    }
    for (i, key, by) in chosen_keys {
        model.effects[i as usize].key = Some(key);
        keys.entry(i).or_default().chosen_by = by;
    }
    model.order_disputes = orders;
    model.key_disputes = keys;
}

/// One of the rules that may choose a value: which it is, and whether it names a value.
type Tier<'a> = (ChosenBy, &'a dyn Fn(&str) -> bool);

/// Whether a service log (an input not among `exports`) wrote the value, for `d`.
fn logged<'d>(d: &'d TextDispute, exports: &'d [u32]) -> impl Fn(&str) -> bool + 'd {
    move |c| (d.written.iter()).any(|(loc, w)| w == c && !exports.contains(&loc.input))
}

/// The value written in `d` chosen by the first of `tiers` that names exactly one of the
/// values still in the running (each tier that names several leaves only those), else the
/// lesser of those left. `None` only for a dispute with no value (none is ever made).
fn choose(d: &TextDispute, tiers: &[Tier<'_>]) -> Option<(Text, ChosenBy)> {
    let mut candidates: Vec<&Text> = d.written.iter().map(|(_, w)| w).collect();
    candidates.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
    candidates.dedup();
    for &(by, says) in tiers {
        let named: Vec<&Text> = (candidates.iter().copied())
            .filter(|c| says(c.as_str()))
            .collect();
        match named.len() {
            1 => return Some((named[0].clone(), by)),
            0 => {}
            _ => candidates = named,
        }
    }
    // Sorted: the first is the lesser.
    Some(((*candidates.first()?).clone(), ChosenBy::Lesser))
}

/// What the client's side says of the disputed effects: the calls whose requests were
/// answered with their ids, and the disputed keys some request was sent with.
struct ClientWord<'m> {
    answered: FxHashMap<&'m str, Vec<Answered<'m>>>,
    sent: FxHashSet<&'m str>,
}

/// A request answered with an effect's id: its call's order and the key it was sent with.
struct Answered<'m> {
    order: Option<&'m str>,
    key: Option<&'m str>,
}

impl<'m> ClientWord<'m> {
    fn new(model: &'m Model, orders: &TextDisputes, keys: &'m TextDisputes) -> Self {
        let ids: FxHashSet<&str> = (orders.keys().chain(keys.keys()))
            .map(|&i| model.effects[i as usize].id.as_str())
            .collect();
        let disputed_keys: FxHashSet<&str> = (keys.values())
            .flat_map(|d| d.written.iter().map(|(_, k)| k.as_str()))
            .collect();
        let mut answered: FxHashMap<&str, Vec<Answered>> = FxHashMap::default();
        let mut sent = FxHashSet::default();
        for d in &model.dispatches {
            for a in &d.attempts {
                if let Some(key) = a.key.as_deref().filter(|k| disputed_keys.contains(k)) {
                    sent.insert(key);
                }
                let named = match a.outcome.as_ref().map(|o| &o.kind) {
                    Some(OutcomeKind::Response {
                        effect_id: Some(id),
                        ..
                    }) if ids.contains(id.as_str()) => id.as_str(),
                    _ => continue,
                };
                (answered.entry(named).or_default()).push(Answered {
                    order: d.order.as_deref(),
                    key: a.key.as_deref(),
                });
            }
        }
        ClientWord { answered, sent }
    }

    fn answered(&self, id: &str) -> impl Iterator<Item = &Answered<'m>> {
        self.answered.get(id).into_iter().flatten()
    }
}

/// The effects written with each disputed value, by (kind, value): a value another effect
/// of the kind carries (any of its lines, where they disagree too).
struct Copies<'m> {
    /// Up to two effects per value: enough to tell whether one other than the asker has it.
    effects: FxHashMap<(&'m str, &'m str), Vec<u32>>,
    /// Idempotency records' keys among the disputed values (keys only).
    records: FxHashSet<&'m str>,
}

impl<'m> Copies<'m> {
    fn new(
        model: &'m Model,
        disputes: &'m TextDisputes,
        value: impl Fn(&'m crate::correlate::EffectRec) -> Option<&'m Text>,
    ) -> Self {
        let mut effects: FxHashMap<(&str, &str), Vec<u32>> = FxHashMap::default();
        for (&i, d) in disputes {
            let kind = model.effects[i as usize].kind.as_str();
            for (_, w) in &d.written {
                effects.entry((kind, w.as_str())).or_default();
            }
        }
        if !effects.is_empty() {
            for (j, e) in model.effects.iter().enumerate() {
                let j = j as u32;
                let mut holds = |v: &'m Text| {
                    if let Some(holders) = effects.get_mut(&(e.kind.as_str(), v.as_str()))
                        && holders.len() < 2
                        && !holders.contains(&j)
                    {
                        holders.push(j);
                    }
                };
                // Every effect of a month is asked: no list made per effect.
                match disputes.get(&j) {
                    Some(d) => d.written.iter().for_each(|(_, w)| holds(w)),
                    None => value(e).into_iter().for_each(holds),
                }
            }
        }
        Copies {
            effects,
            records: FxHashSet::default(),
        }
    }

    /// Counts idempotency records' keys as carried by another effect.
    fn add_records(&mut self, model: &'m Model) {
        let wanted: FxHashSet<&str> = self.effects.keys().map(|&(_, v)| v).collect();
        self.records = (model.records.iter())
            .map(|r| r.key.as_str())
            .filter(|k| wanted.contains(k))
            .collect();
    }

    /// Whether an effect of `kind` other than `i` carries `value` (or a record does).
    fn other(&self, kind: &str, i: u32, value: &str) -> bool {
        self.records.contains(value)
            || (self.effects.get(&(kind, value)))
                .is_some_and(|holders| holders.iter().any(|&j| j != i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(input: u32, line: u32) -> Loc {
        Loc { input, line }
    }

    /// Effect 0's lines: a log's (input 0) and an export's (input 1).
    fn dispute(log: &str, export: &str) -> TextDispute {
        TextDispute {
            written: vec![(at(0, 1), log.into()), (at(1, 1), export.into())],
            chosen_by: ChosenBy::Lesser,
        }
    }

    #[test]
    fn the_first_tier_naming_one_value_chooses_and_one_naming_several_narrows() {
        let d = dispute("A-1001", "A-1000");
        let exports = [1];
        let log = logged(&d, &exports);
        let nobody = |_: &str| false;
        let everybody = |_: &str| true;
        let says_1000 = |c: &str| c == "A-1000";
        // The log's, whatever the others say.
        let tiers: [Tier<'_>; 2] = [(ChosenBy::Log, &log), (ChosenBy::Copies, &says_1000)];
        assert_eq!(choose(&d, &tiers), Some(("A-1001".into(), ChosenBy::Log)));
        // A tier that names none or both passes to the next.
        let tiers: [Tier<'_>; 3] = [
            (ChosenBy::Log, &nobody),
            (ChosenBy::Client, &everybody),
            (ChosenBy::Copies, &says_1000),
        ];
        assert_eq!(
            choose(&d, &tiers),
            Some(("A-1000".into(), ChosenBy::Copies))
        );
        // None decides: the lesser, whichever line came first.
        let tiers: [Tier<'_>; 1] = [(ChosenBy::Log, &everybody)];
        assert_eq!(
            choose(&d, &tiers),
            Some(("A-1000".into(), ChosenBy::Lesser))
        );
        let swapped = dispute("A-1000", "A-1001");
        assert_eq!(
            choose(&swapped, &tiers),
            Some(("A-1000".into(), ChosenBy::Lesser))
        );
        // Two exports: no log wrote either.
        assert_eq!(
            choose(&d, &[(ChosenBy::Log, &logged(&d, &[0, 1]))]),
            Some(("A-1000".into(), ChosenBy::Lesser))
        );
        assert_eq!(choose(&TextDispute::default(), &tiers), None);
    }

    #[test]
    fn a_dispute_holds_every_line_that_wrote_a_value_from_the_first_disagreement() {
        let mut disputes = TextDisputes::new();
        let kept = Text::from("k-1");
        let (same, other) = (Text::from("k-1"), Text::from("k-2"));
        // Agreeing lines, or a line with no key, are no dispute.
        note(
            &mut disputes,
            0,
            &[at(0, 1)],
            Some(&kept),
            Some(&same),
            at(0, 2),
        );
        note(&mut disputes, 0, &[at(0, 1)], Some(&kept), None, at(0, 2));
        note(&mut disputes, 0, &[], None, Some(&other), at(0, 2));
        assert!(disputes.is_empty());
        // The first disagreement: the lines before it wrote the value kept.
        let locs = [at(0, 1), at(0, 2)];
        note(&mut disputes, 0, &locs, Some(&kept), Some(&other), at(1, 5));
        // Later lines count once the effect is disputed, agreeing or not; none without one.
        let locs = [at(0, 1), at(0, 2), at(1, 5)];
        note(&mut disputes, 0, &locs, Some(&kept), Some(&same), at(2, 3));
        note(&mut disputes, 0, &locs, Some(&kept), None, at(2, 4));
        let written: Vec<(Loc, &str)> = (disputes[&0].written.iter())
            .map(|(l, w)| (*l, w.as_str()))
            .collect();
        assert_eq!(
            written,
            [
                (at(0, 1), "k-1"),
                (at(0, 2), "k-1"),
                (at(1, 5), "k-2"),
                (at(2, 3), "k-1")
            ]
        );
        assert_eq!(disputes[&0].others(Some("k-1")), ["k-2"]);
    }
}
