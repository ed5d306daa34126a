//! Effects merged by (kind, id) as the service's lines log them.

use super::Builder;
use crate::correlate::disputes::{AmountDispute, note};
use crate::correlate::ready::fresh;
use crate::correlate::{Disagreement, Disputed, EffectRec, WrittenAmount};
use crate::event::Loc;
use crate::money::Money;
use crate::time::{NANOS_PER_SEC, Timestamp};
use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;

impl<'o> Builder<'o> {
    pub(super) fn add_effect(&mut self, e: crate::event::Effect, at: Timestamp, loc: Loc) {
        /// Whether a later line's state replaces the one kept: the later reached, by the
        /// times written with them, or the line read later; but a state saying the effect
        /// did not happen always replaces one on the way (`pending`, `created`), and is
        /// never replaced by one (an export's `failed` row against a log's `created` line,
        /// whichever is read first).
        fn state_overrides(
            kept: &crate::correlate::EffectRec,
            state: &str,
            happened: bool,
            state_at: Option<Timestamp>,
        ) -> bool {
            let on_the_way = crate::event::is_state_on_the_way;
            let kept_on_the_way = kept.state.as_deref().is_none_or(on_the_way);
            if !happened && kept.happened && kept_on_the_way {
                return true;
            }
            if !kept.happened && happened && on_the_way(state) {
                return false;
            }
            kept.state_at.is_none() || state_at > kept.state_at
        }

        // A whole number in the unit the user declared for this input is its amount.
        let declared = e
            .whole
            .and_then(|w| self.opts.whole_unit(loc.input).read(w));
        let amount = e.amount.or(declared).map(Money::size);
        let written = WrittenAmount::of(amount, e.whole.map(Money::size));
        let hash = hash_effect(&e.kind, &e.id);
        let effects = &self.model.effects;
        let same = |i: u32| {
            let known = &effects[i as usize];
            known.id == e.id && known.kind == e.kind
        };
        let rehash = |i: u32| {
            let e = &effects[i as usize];
            hash_effect(&e.kind, &e.id)
        };
        // A new effect's index is put in at once: it is pushed below.
        let new = effects.len() as u32;
        let found = (self.effect_index.find_or_insert(hash, new, same, rehash)).map(|&mut i| i);
        if let Some(i) = found {
            let i = i as usize;
            // The same effect logged again (a replica, an export): merge, never duplicate.
            let rec = &mut self.model.effects[i];
            rec.created = merged_created(rec.created, at);
            let disagreed = (rec.order.as_deref().zip(e.order.as_deref()))
                .filter(|(kept, other)| kept != other)
                .map(|(kept, other)| (Disputed::Order, kept.to_string(), other.to_string()));
            // An effect whose lines disagree on its order or key keeps what each wrote: the
            // value is chosen once every line is in ([`crate::correlate::disputes`]).
            let (locs, effect) = (&rec.locs, i as u32);
            let orders = &mut self.model.order_disputes;
            note(
                orders,
                effect,
                locs,
                rec.order.as_ref(),
                e.order.as_ref(),
                loc,
            );
            let keys = &mut self.model.key_disputes;
            note(keys, effect, locs, rec.key.as_ref(), e.key.as_ref(), loc);
            match (&rec.order, e.order) {
                (None, order) => rec.order = order.map(fresh),
                // Until then, not the first read, which file names decide, but the lesser:
                // the same evidence gives the same answer.
                (Some(kept), Some(other)) if other.as_str() < kept.as_str() => {
                    rec.order = Some(fresh(other))
                }
                _ => {}
            }
            let key_disagreed = (rec.key.as_deref().zip(e.key.as_deref()))
                .filter(|(kept, other)| kept != other)
                .map(|(kept, other)| (Disputed::Key, kept.to_string(), other.to_string()));
            // As for the order: the lesser until every line is in.
            match (&rec.key, &e.key) {
                (None, Some(_)) => rec.key = e.key.clone().map(fresh),
                (Some(kept), Some(other)) if other.as_str() < kept.as_str() => {
                    rec.key = Some(fresh(other.clone()))
                }
                _ => {}
            }
            let amount_disagreed = amounts_disagree(rec.written, written);
            // An effect whose lines disagree on its amount keeps what each wrote: its
            // amount is chosen once every line is in ([`crate::correlate::disputes`]).
            let disputes = &mut self.model.amount_disputes;
            let disputed = amount_disagreed.is_some()
                || (!disputes.is_empty() && disputes.contains_key(&(i as u32)));
            if let (true, Some(w)) = (disputed, written) {
                let dispute = disputes.entry(i as u32).or_insert_with(|| AmountDispute {
                    written: (rec.locs.iter())
                        .filter_map(|&l| Some((l, rec.written?)))
                        .collect(),
                    ..AmountDispute::default()
                });
                dispute.written.push((loc, w));
            }
            let disagreed = [disagreed, amount_disagreed, key_disagreed];
            // A known amount wins over a whole number of unknown unit, whichever came first;
            // of two known (or two unknown), the lesser, as for the order, until every line
            // is in and `disputes` chooses.
            let replaces = match (rec.written, written) {
                (_, None) => false,
                (None, Some(_)) => true,
                (Some(kept), Some(other)) if kept.unit_known() != other.unit_known() => {
                    other.unit_known()
                }
                (Some(kept), Some(other)) => other.ordering_key() < kept.ordering_key(),
            };
            if replaces {
                rec.written = written;
            }
            for (field, kept, other) in disagreed.into_iter().flatten() {
                let earlier = rec.locs.to_vec();
                self.model.disagreements.push(Disagreement {
                    effect: i as u32,
                    at: loc,
                    earlier,
                    field,
                    kept,
                    other,
                });
            }
            let rec = &mut self.model.effects[i];
            let overrides = (e.state.as_deref())
                .is_some_and(|state| state_overrides(rec, state, e.happened, e.state_at));
            if overrides {
                rec.state = e.state.map(fresh);
                rec.state_at = e.state_at;
                rec.happened = e.happened;
            }
            let mut locs = std::mem::take(&mut rec.locs).into_vec();
            locs.push(loc);
            rec.locs = locs.into_boxed_slice();
            return;
        }
        self.model.effects.push(EffectRec {
            kind: fresh(e.kind),
            id: fresh(e.id),
            order: e.order.map(fresh),
            written,
            key: e.key.map(fresh),
            created: at,
            state: e.state.map(fresh),
            state_at: e.state_at,
            happened: e.happened,
            locs: Box::new([loc]),
            matched: None,
            matched_by: None,
        });
    }
}

/// Two amounts of one effect, both known or both of unknown unit, that differ: what
/// [`Disagreement`] says of them.
fn amounts_disagree(
    kept: Option<WrittenAmount>,
    other: Option<WrittenAmount>,
) -> Option<(Disputed, String, String)> {
    let (kept, other) = (kept?, other?);
    (kept.unit_known() == other.unit_known() && kept != other)
        .then(|| (Disputed::Amount, kept.describe(), other.describe()))
}

pub(in crate::correlate) fn hash_effect(kind: &str, id: &str) -> u64 {
    FxBuildHasher.hash_one((kind, id))
}

/// When an effect was created, from two lines that log it: the earlier, except that a whole
/// second (an export's `14:02:11`) gives way to a finer time within it (the log's
/// `14:02:11.501`): it stands for any instant of that second, and taken as its start it put
/// the refund before the call that made it.
pub(super) fn merged_created(a: Timestamp, b: Timestamp) -> Timestamp {
    let within = |whole: Timestamp, fine: Timestamp| {
        whole.0.rem_euclid(NANOS_PER_SEC) == 0
            && fine.0 >= whole.0
            && fine.0.saturating_sub(whole.0) < NANOS_PER_SEC
    };
    if within(a, b) {
        b
    } else if within(b, a) {
        a
    } else {
        a.min(b)
    }
}
