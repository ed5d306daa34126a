//! A Bloom table of hashes, small enough to stay in a core's cache, in front of a set: when
//! most questions are about members the set does not have (a month's runs that never
//! crashed or resumed), most are answered with one load instead of a probe of the set. A
//! clear answer is certain; a "maybe" is asked of the set.

/// Hashes as two bits each, in one 64-bit word of the table.
#[derive(Debug, Default)]
pub struct HashBits {
    words: Vec<u64>,
}

impl HashBits {
    /// 2 KiB at least; at most 1 MiB, past which it would not stay in the cache.
    const MIN_BITS: usize = 1 << 14;
    const MAX_BITS: usize = 1 << 23;
    /// Bits per hash: about one "maybe" in fifty is then false.
    const BITS_PER_HASH: usize = 16;

    /// A table of the `count` hashes of `hashes`. Hashes must mix their high bits well
    /// (FxHash's do; see [`HashBits::spread`] for others).
    pub fn with_room_for(count: usize, hashes: impl Iterator<Item = u64>) -> Self {
        let wanted = (count * Self::BITS_PER_HASH).next_power_of_two();
        let mut table = HashBits {
            words: vec![0; wanted.clamp(Self::MIN_BITS, Self::MAX_BITS) / 64],
        };
        hashes.for_each(|h| table.insert(h));
        table
    }

    /// A 32-bit hash with its bits spread over 64, as [`HashBits`] reads them.
    pub fn spread(hash: u32) -> u64 {
        u64::from(hash).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    /// A word of the table and two bits in it, from the hash's high bits.
    fn place(&self, hash: u64) -> (usize, u64) {
        let word = (hash >> 40) as usize & (self.words.len() - 1);
        (word, 1 << ((hash >> 17) & 63) | 1 << ((hash >> 23) & 63))
    }

    fn insert(&mut self, hash: u64) {
        let (word, bits) = self.place(hash);
        self.words[word] |= bits;
    }

    /// False only if `hash` was never inserted.
    pub fn may_hold(&self, hash: u64) -> bool {
        if self.words.is_empty() {
            return false;
        }
        let (word, bits) = self.place(hash);
        self.words[word] & bits == bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustc_hash::FxBuildHasher;
    use std::hash::BuildHasher;

    #[test]
    fn a_table_never_forgets_a_hash_and_rarely_claims_one() {
        let hash = |i: u64| FxBuildHasher.hash_one(("r", i));
        assert!(!HashBits::default().may_hold(hash(0)), "empty");
        let inserted: Vec<u64> = (0..20_000).map(hash).collect();
        let table = HashBits::with_room_for(inserted.len(), inserted.iter().copied());
        assert!(inserted.iter().all(|&h| table.may_hold(h)));
        let claimed = (20_000..120_000)
            .filter(|&i| table.may_hold(hash(i)))
            .count();
        assert!(claimed < 10_000, "{claimed} of 100000 claimed");
    }

    #[test]
    fn spread_small_hashes_are_told_apart_too() {
        let hashes: Vec<u64> = (0..3000u32).map(HashBits::spread).collect();
        let table = HashBits::with_room_for(hashes.len(), hashes.iter().copied());
        assert!(hashes.iter().all(|&h| table.may_hold(h)));
        let claimed = (3000..103_000u32)
            .filter(|&h| table.may_hold(HashBits::spread(h)))
            .count();
        assert!(claimed < 10_000, "{claimed} of 100000 claimed");
    }
}
