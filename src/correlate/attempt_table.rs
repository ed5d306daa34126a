//! A table of attempts by the hash of a text they hold (an effect id, a key), for the
//! matching indexes: one flat array of 12-byte slots (a part of the hash and the attempt),
//! probed linearly. A lookup is one cache miss where a `hashbrown` table's was two (its
//! control bytes, then its slot), and a slot's place can be asked of memory ahead of the
//! lookup ([`AttemptTable::prefetch`]): matching a month's effects was mostly those misses.
//! The text itself stays in the model; a slot whose part of the hash is the text's is
//! checked against it there.

use super::AttemptId;

#[derive(Clone, Copy)]
struct Slot {
    /// The hash's upper half.
    tag: u32,
    /// [`EMPTY`] in a free slot.
    id: AttemptId,
}

/// No model holds four billion dispatches.
const EMPTY: usize = u32::MAX as usize;

pub(super) struct AttemptTable {
    slots: Box<[Slot]>,
    mask: usize,
}

impl AttemptTable {
    /// Room for `n` attempts: a power of two at least a quarter larger, so that probes
    /// stay short.
    pub(super) fn with_capacity(n: usize) -> Self {
        let len = (n + n / 4 + 1).next_power_of_two().max(16);
        let free = Slot {
            tag: 0,
            id: AttemptId::new(EMPTY, 0),
        };
        AttemptTable {
            slots: vec![free; len].into_boxed_slice(),
            mask: len - 1,
        }
    }

    fn start(&self, hash: u64) -> usize {
        hash as usize & self.mask
    }

    fn tag(hash: u64) -> u32 {
        (hash >> 32) as u32
    }

    /// Asks memory for the slot a lookup of `hash` reads first: nothing is read, so an
    /// effect's lookup can be asked for a few effects before it is made.
    pub(super) fn prefetch(&self, hash: u64) {
        let slot: *const Slot = &self.slots[self.start(hash)];
        super::merge::prefetch(slot.cast());
    }

    /// The attempt held for `hash` that is `same` as the one sought.
    pub(super) fn find(&self, hash: u64, same: impl Fn(AttemptId) -> bool) -> Option<AttemptId> {
        let tag = Self::tag(hash);
        let mut i = self.start(hash);
        loop {
            let slot = self.slots[i];
            if slot.id.dispatch() == EMPTY {
                return None;
            }
            if slot.tag == tag && same(slot.id) {
                return Some(slot.id);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The attempt held for `hash` that is `same` as `id`, to be changed in place; or, when
    /// there is none, `id` put in and `None`. No more attempts than the capacity given may
    /// be put in.
    pub(super) fn find_or_insert(
        &mut self,
        hash: u64,
        id: AttemptId,
        same: impl Fn(AttemptId) -> bool,
    ) -> Option<&mut AttemptId> {
        let tag = Self::tag(hash);
        let mut i = self.start(hash);
        loop {
            let slot = self.slots[i];
            if slot.id.dispatch() == EMPTY {
                self.slots[i] = Slot { tag, id };
                return None;
            }
            if slot.tag == tag && same(slot.id) {
                return Some(&mut self.slots[i].id);
            }
            i = (i + 1) & self.mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        /// The table keeps the first attempt put in for each text, as a map does, however
        /// often hashes (here a text's first byte only) share their slots and tags.
        #[test]
        fn the_first_attempt_of_each_text_is_found(
            texts in proptest::collection::vec("[a-e]{1,3}", 0..300),
            sought in proptest::collection::vec("[a-f]{1,3}", 0..50),
        ) {
            let hash = |t: &str| u64::from(t.as_bytes()[0]) * 0x0101_0101_0101_0101;
            let mut table = AttemptTable::with_capacity(texts.len());
            let mut first: HashMap<&str, AttemptId> = HashMap::new();
            for (i, t) in texts.iter().enumerate() {
                let id = AttemptId::new(i, 0);
                let same = |p: AttemptId| texts[p.dispatch()] == *t;
                let found = table.find_or_insert(hash(t), id, same).map(|p| *p);
                prop_assert_eq!(found, first.get(t.as_str()).copied());
                first.entry(t).or_insert(id);
            }
            for t in texts.iter().chain(&sought) {
                let same = |p: AttemptId| texts[p.dispatch()] == *t;
                prop_assert_eq!(table.find(hash(t), same), first.get(t.as_str()).copied());
            }
        }
    }

    #[test]
    fn an_attempt_kept_can_be_changed_in_place() {
        let mut table = AttemptTable::with_capacity(2);
        let (a, b) = (AttemptId::new(0, 0), AttemptId::new(1, 0));
        assert!(table.find_or_insert(7, a, |_| true).is_none());
        *table.find_or_insert(7, b, |_| true).expect("held") = b;
        assert_eq!(table.find(7, |_| true), Some(b));
        assert_eq!(table.find(8, |_| true), None);
    }
}
