//! A list that grows a block at a time.

use std::iter::{Chain, Flatten};

/// Items in blocks of a fixed size, never copied to grow. A month of small records kept by
/// the parse (runs' starts, idle calls' places) in one vector was copied, and its pages
/// touched afresh, at each doubling: a tenth of a scan's page faults.
#[derive(Clone, Debug, PartialEq)]
pub struct Blocks<T> {
    full: Vec<Vec<T>>,
    last: Vec<T>,
}

impl<T> Blocks<T> {
    /// About 64 KiB a block.
    const PER_BLOCK: usize = {
        let size = std::mem::size_of::<T>();
        if size == 0 || size > 1 << 16 {
            1
        } else {
            (1 << 16) / size
        }
    };

    pub fn push(&mut self, item: T) {
        if self.last.len() == Self::PER_BLOCK {
            let full = std::mem::replace(&mut self.last, Vec::with_capacity(Self::PER_BLOCK));
            self.full.push(full);
        } else if self.last.capacity() == 0 {
            // A first block as small as a vector's: most inputs of a test are a few lines.
            self.last.reserve(4);
        } else if self.last.len() == self.last.capacity() {
            // The first block grows to its full size; later ones start at it.
            self.last
                .reserve_exact((2 * self.last.len()).min(Self::PER_BLOCK) - self.last.len());
        }
        self.last.push(item);
    }

    pub fn len(&self) -> usize {
        self.full.len() * Self::PER_BLOCK + self.last.len()
    }

    pub fn is_empty(&self) -> bool {
        self.full.is_empty() && self.last.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.full.iter().flatten().chain(&self.last)
    }
}

impl<T> Default for Blocks<T> {
    fn default() -> Self {
        Blocks {
            full: Vec::new(),
            last: Vec::new(),
        }
    }
}

impl<T> Extend<T> for Blocks<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        items.into_iter().for_each(|item| self.push(item));
    }
}

impl<T> FromIterator<T> for Blocks<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut blocks = Blocks::default();
        blocks.extend(items);
        blocks
    }
}

impl<T> IntoIterator for Blocks<T> {
    type Item = T;
    type IntoIter = Chain<Flatten<std::vec::IntoIter<Vec<T>>>, std::vec::IntoIter<T>>;

    fn into_iter(self) -> Self::IntoIter {
        self.full.into_iter().flatten().chain(self.last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks keep every item in order, whatever the block size, by reference and by value.
    #[test]
    fn blocks_hold_items_in_order() {
        for n in [0, 1, 5, 8191, 8192, 8193, 3 * 8192 + 7] {
            let blocks: Blocks<u64> = (0..n as u64).collect();
            assert_eq!(blocks.len(), n);
            assert_eq!(blocks.is_empty(), n == 0);
            assert!(blocks.iter().copied().eq(0..n as u64));
            assert!(blocks.into_iter().eq(0..n as u64));
        }
        // Big items take a block each.
        let big: Blocks<[u8; 70_000]> = (0..3).map(|i| [i; 70_000]).collect();
        assert_eq!(big.len(), 3);
        assert!(big.iter().map(|b| b[69_999]).eq(0..3));
    }

    /// A full block is never copied to grow: its items stay where they were put.
    #[test]
    fn full_blocks_stay_in_place() {
        let mut blocks = Blocks::default();
        blocks.extend(0..Blocks::<u32>::PER_BLOCK as u32);
        let first = blocks.iter().next().map(|x| x as *const u32);
        blocks.extend(0..5 * Blocks::<u32>::PER_BLOCK as u32);
        assert_eq!(blocks.iter().next().map(|x| x as *const u32), first);
    }
}
