//! A hash table of small copied values (a dispatch's or an effect's index, an attempt's id)
//! keyed by texts the model holds: one flat array of slots (a part of the hash beside the
//! value), probed linearly. A lookup is one cache miss where a `hashbrown` table's was two
//! (its control bytes, then its slot), and a slot's place can be asked of memory ahead of
//! the lookup ([`FlatTable::prefetch`]): the builder's `latest` and effect tables, the
//! matching indexes, `key-payload-mismatch`'s keys and the relevance filter's kept calls,
//! each a slot per dispatch, effect, answer, keyed attempt or kept call of a month, spent
//! most of their time in those misses. The keys stay where they were (the model, a list
//! beside the table): a slot whose part of the hash is the key's is checked against it
//! there (`same`).

#[derive(Clone, Copy)]
struct Slot<V> {
    /// The hash's upper half, its lowest bit set; 0 in a free slot.
    tag: u32,
    value: V,
}

pub(crate) struct FlatTable<V> {
    slots: Box<[Slot<V>]>,
    mask: usize,
    len: usize,
}

/// A value whose bytes may all be zero: a table's slots are allocated zeroed, so that its
/// pages are touched only as slots are filled (the builder's tables are made while every
/// parsed event is still held, and writing a month's free slots at once raised the scan's
/// peak by about 10 MB).
///
/// # Safety
/// Every value of all zero bytes must be a valid `Self`.
pub(crate) unsafe trait ZeroValid: Copy {}

// SAFETY: an integer of zero bytes is 0.
unsafe impl ZeroValid for u32 {}

impl<V: ZeroValid> FlatTable<V> {
    /// Room for `n` values without growing.
    pub(crate) fn with_capacity(n: usize) -> Self {
        // A quarter more slots than values at most, so that probes stay short.
        let len = (n + n / 4 + 1).next_power_of_two().max(16);
        FlatTable {
            slots: free_slots(len),
            mask: len - 1,
            len: 0,
        }
    }

    fn start(&self, hash: u64) -> usize {
        hash as usize & self.mask
    }

    fn tag(hash: u64) -> u32 {
        (hash >> 32) as u32 | 1
    }

    fn fits(&self, n: usize) -> bool {
        n + n / 4 < self.slots.len()
    }

    /// Room for `n` more values; `rehash` gives a held value's hash.
    pub(crate) fn reserve(&mut self, n: usize, rehash: impl Fn(V) -> u64) {
        if self.fits(self.len + n) {
            return;
        }
        let mut grown = Self::with_capacity(self.len + n);
        for slot in self.slots.iter().filter(|s| s.tag != 0) {
            let mut i = grown.start(rehash(slot.value));
            while grown.slots[i].tag != 0 {
                i = (i + 1) & grown.mask;
            }
            grown.slots[i] = *slot;
        }
        grown.len = self.len;
        *self = grown;
    }

    /// Asks memory for the slot a lookup of `hash` reads first: nothing is read, so a
    /// lookup can be asked for a few items before it is made.
    pub(crate) fn prefetch(&self, hash: u64) {
        let slot: *const Slot<V> = &self.slots[self.start(hash)];
        crate::correlate::prefetch(slot.cast());
    }

    /// The value held for `hash` that is `same` as the one sought.
    pub(crate) fn find(&self, hash: u64, same: impl Fn(V) -> bool) -> Option<V> {
        let tag = Self::tag(hash);
        let mut i = self.start(hash);
        loop {
            let slot = self.slots[i];
            if slot.tag == 0 {
                return None;
            }
            if slot.tag == tag && same(slot.value) {
                return Some(slot.value);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The value held for `hash` that is `same` as `value`, to be changed in place; or,
    /// when there is none, `value` put in and `None`. `rehash` gives a held value's hash,
    /// should the table grow.
    pub(crate) fn find_or_insert(
        &mut self,
        hash: u64,
        value: V,
        same: impl Fn(V) -> bool,
        rehash: impl Fn(V) -> u64,
    ) -> Option<&mut V> {
        self.reserve(1, rehash);
        let tag = Self::tag(hash);
        let mut i = self.start(hash);
        loop {
            let slot = self.slots[i];
            if slot.tag == 0 {
                self.slots[i] = Slot { tag, value };
                self.len += 1;
                return None;
            }
            if slot.tag == tag && same(slot.value) {
                return Some(&mut self.slots[i].value);
            }
            i = (i + 1) & self.mask;
        }
    }
}

/// `len` free slots (all zero bytes: a tag of 0), from the allocator's zeroed memory.
fn free_slots<V: ZeroValid>(len: usize) -> Box<[Slot<V>]> {
    let layout = std::alloc::Layout::array::<Slot<V>>(len).expect("a table fits in memory");
    // SAFETY: `len` is at least 16 and a slot is not empty, so the layout is not of zero
    // size; all zero bytes are a valid slot (a tag of 0, and a value `ZeroValid` says is
    // valid so); the pointer comes from the global allocator with the layout a boxed slice
    // of `len` slots is freed with.
    unsafe {
        let p = std::alloc::alloc_zeroed(layout).cast::<Slot<V>>();
        if p.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        /// The table keeps the first value put in for each text, as a map does, however
        /// often hashes (here a text's first byte only) share their slots and tags, and
        /// whether it was sized for them or grew.
        #[test]
        fn the_first_value_of_each_text_is_found(
            texts in proptest::collection::vec("[a-e]{1,3}", 0..300),
            sought in proptest::collection::vec("[a-f]{1,3}", 0..50),
            sized in any::<bool>(),
        ) {
            let hash = |t: &str| u64::from(t.as_bytes()[0]) * 0x0101_0101_0101_0101;
            let mut table = FlatTable::with_capacity(if sized { texts.len() } else { 0 });
            let rehash = |i: u32| hash(&texts[i as usize]);
            let mut first: HashMap<&str, u32> = HashMap::new();
            for (i, t) in texts.iter().enumerate() {
                let same = |p: u32| texts[p as usize] == *t;
                let found = table.find_or_insert(hash(t), i as u32, same, rehash).map(|p| *p);
                prop_assert_eq!(found, first.get(t.as_str()).copied());
                first.entry(t).or_insert(i as u32);
            }
            for t in texts.iter().chain(&sought) {
                let same = |p: u32| texts[p as usize] == *t;
                prop_assert_eq!(table.find(hash(t), same), first.get(t.as_str()).copied());
            }
        }
    }

    #[test]
    fn a_value_held_can_be_changed_in_place() {
        let mut table = FlatTable::with_capacity(2);
        let rehash = |_| 7;
        assert!(table.find_or_insert(7, 1u32, |_| true, rehash).is_none());
        *table.find_or_insert(7, 2, |_| true, rehash).expect("held") = 2;
        assert_eq!(table.find(7, |_| true), Some(2));
        assert_eq!(table.find(8, |_| true), None);
    }
}
