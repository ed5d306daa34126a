//! Each idempotency key the client's attempts were sent with, numbered once: the rules'
//! and the replay rate's tables of every keyed attempt of a month (the first attempt of
//! each key, its state in the classification, whether it is worth a look) each hashed
//! every key's text again, a cache miss or two per attempt in tables of megabytes. Given
//! a number here, in the one pass that matching's key index made anyway, those tables are
//! arrays indexed by it.

use super::{AttemptId, AttemptRec, Model};
use crate::flat_table::FlatTable;
use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;

/// The number of each keyed attempt's key, from 0 in the order keys were first sent in
/// attempt order ([`Model::attempts`]); read through [`Model::attempts_with_keys`].
#[derive(Debug, Default)]
pub struct KeyNumbers {
    /// Per attempt with a key, in attempt order.
    of_keyed: Vec<u32>,
    count: u32,
}

/// The keys by their texts, for what looks a key up by its text (an effect the service
/// logged under a key, in matching): made with the numbers, dropped after matching.
pub(super) struct KeyTexts {
    /// Key numbers, by the hash of the key's text.
    table: FlatTable<u32>,
    /// Per key number: the first attempt (in attempt order) sent with it, which names it.
    named_by: Vec<AttemptId>,
}

fn hash(key: &str) -> u64 {
    FxBuildHasher.hash_one(key)
}

fn key(model: &Model, id: AttemptId) -> &str {
    model.attempt(id).key.as_deref().unwrap_or("")
}

/// Numbers the keys of `model`'s attempts, which must not change after.
pub(super) fn number_keys(model: &Model) -> (KeyNumbers, KeyTexts) {
    let keyed = model.attempts().filter(|(_, a)| a.key.is_some()).count();
    let mut table = FlatTable::with_capacity(keyed);
    let mut named_by: Vec<AttemptId> = Vec::new();
    let mut of_keyed = Vec::with_capacity(keyed);
    for (id, a) in model.attempts() {
        let Some(k) = a.key.as_deref() else {
            continue;
        };
        let next = named_by.len() as u32;
        let same = |n: u32| key(model, named_by[n as usize]) == k;
        let rehash = |n: u32| hash(key(model, named_by[n as usize]));
        match table.find_or_insert(hash(k), next, same, rehash) {
            Some(&mut n) => of_keyed.push(n),
            None => {
                named_by.push(id);
                of_keyed.push(next);
            }
        }
    }
    let count = named_by.len() as u32;
    (KeyNumbers { of_keyed, count }, KeyTexts { table, named_by })
}

impl KeyTexts {
    /// Per key number, the first attempt (in attempt order) sent with the key.
    pub(super) fn named_by(&self) -> &[AttemptId] {
        &self.named_by
    }

    /// The number of the key `k`, if some attempt was sent with it.
    pub(super) fn number(&self, model: &Model, k: &str) -> Option<u32> {
        let same = |n: u32| key(model, self.named_by[n as usize]) == k;
        self.table.find(hash(k), same)
    }
}

impl Model {
    /// How many distinct keys the attempts were sent with: each keyed attempt's key's
    /// number ([`Model::attempts_with_keys`]) is below it.
    pub fn key_count(&self) -> usize {
        self.keys.count as usize
    }

    /// Every attempt with its id, in dispatch order ([`Model::attempts`]), and the number
    /// of the key it was sent with, if any.
    pub fn attempts_with_keys(
        &self,
    ) -> impl Iterator<Item = (AttemptId, &AttemptRec, Option<u32>)> {
        let mut numbers = self.keys.of_keyed.iter().copied();
        self.attempts().map(move |(id, a)| {
            let number = a.key.as_ref().map(|_| {
                // Given when the attempts were final (`Builder::finish`).
                numbers
                    .next()
                    .expect("every keyed attempt's key is numbered")
            });
            (id, a, number)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testkit::Trace;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        /// Two attempts have one number exactly when they were sent with one key, numbers
        /// run from 0 in the order keys first appear, and a key's text finds its number,
        /// however the keys repeat across runs, steps and attempts.
        #[test]
        fn numbers_name_keys_as_their_texts_do(
            keys in proptest::collection::vec(proptest::option::of("[a-d]{1,2}"), 1..40),
            asked in proptest::collection::vec("[a-e]{1,2}", 0..10),
        ) {
            let mut t = Trace::new();
            for (i, k) in keys.iter().enumerate() {
                let (run, step) = (format!("r{}", i % 3), (i / 6) as u32 + 1);
                let ms = i as i64 * 1000;
                if i % 2 == 0 {
                    t.tool_call(ms, &run, step, "issue_refund", r#"{"order":"A-1"}"#);
                }
                t.attempt(ms + 1, &run, step, (i % 2) as u32 + 1, k.as_deref());
            }
            let model = t.model();
            let (numbers, texts) = number_keys(&model);
            let mut first: HashMap<&str, u32> = HashMap::new();
            let mut keyed = 0;
            for (_, a, n) in model.attempts_with_keys() {
                prop_assert_eq!(a.key.is_some(), n.is_some());
                let (Some(k), Some(n)) = (a.key.as_deref(), n) else { continue };
                keyed += 1;
                let next = first.len() as u32;
                prop_assert_eq!(*first.entry(k).or_insert(next), n);
                prop_assert_eq!(texts.number(&model, k), Some(n));
            }
            prop_assert_eq!(numbers.of_keyed.len(), keyed);
            prop_assert_eq!(model.key_count(), first.len());
            for k in &asked {
                prop_assert_eq!(texts.number(&model, k), first.get(k.as_str()).copied());
            }
        }
    }
}
