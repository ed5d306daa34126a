//! The calls a [`super::Filter`] found relevant: every later event of theirs passes
//! straight on. Asked by every event of a call and, through [`super::Filter::knows`], by
//! every idle tool call a parser judges itself, which almost never is one: at 1 GB the
//! `hashbrown` set of the calls this replaces was the largest function outside the
//! parsers, a cache miss on its control bytes and often another on a 24-byte slot. A flat
//! table ([`FlatTable`]) placed by run, its slot asked for when the run starts, makes most
//! of those lookups find their slot in the cache ([`hash`]).

use crate::event::CallRef;
use crate::flat_table::FlatTable;
use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;

pub(super) struct KeptCalls {
    /// Each kept call once, in the order it was kept.
    calls: Vec<CallRef>,
    /// Positions in `calls`, by [`hash`].
    table: FlatTable<u32>,
}

impl Default for KeptCalls {
    fn default() -> Self {
        KeptCalls {
            calls: Vec::new(),
            table: FlatTable::with_capacity(0),
        }
    }
}

impl std::fmt::Debug for KeptCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(&self.calls).finish()
    }
}

/// Hashes a call as [`CallRef`]'s equality sees it, by its run and step, but places it by
/// its run alone: the lower half (the slot a lookup starts at) is the run's, the upper (the
/// tag) mixes in the step. A run's kept steps then lie side by side, the slot is asked for
/// when the run's start is read ([`KeptCalls::prefetch_run`]), and the run's later calls
/// find it in the cache. Hashed by (run, step), every lookup was a random slot of a table
/// of a megabyte (71 k kept calls an input at 1 GB) and lost to the `hashbrown` set, whose
/// control bytes (one a slot) stay in the cache for the misses.
fn hash(run: &str, step: u32) -> u64 {
    let of_run = FxBuildHasher.hash_one(run);
    let step_mixed = (of_run >> 32) as u32 ^ step.wrapping_mul(0x9E37_79B9);
    u64::from(step_mixed) << 32 | (of_run & 0xFFFF_FFFF)
}

impl KeptCalls {
    /// Asks memory for the slots of `run`'s calls, when its start is read: its first tool
    /// call follows a line or two later, and finds them in the cache.
    pub(super) fn prefetch_run(&self, run: &str) {
        self.table.prefetch(hash(run, 0));
    }

    pub(super) fn contains(&self, run: &str, step: u32) -> bool {
        let calls = &self.calls;
        let same = |i: u32| {
            let c = &calls[i as usize];
            c.step == step && c.run.as_str() == run
        };
        self.table.find(hash(run, step), same).is_some()
    }

    /// Keeps `call` (once, however often it is put in).
    pub(super) fn insert(&mut self, call: CallRef) {
        let calls = &self.calls;
        let same = |i: u32| calls[i as usize] == call;
        let rehash = |i: u32| {
            let c = &calls[i as usize];
            hash(&c.run, c.step)
        };
        let next = calls.len() as u32;
        let held = self
            .table
            .find_or_insert(hash(&call.run, call.step), next, same, rehash);
        if held.is_none() {
            self.calls.push(call);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    proptest! {
        /// The table holds what a set of the calls holds, parts ignored as `CallRef`'s
        /// equality ignores them, however many calls share a run or a step.
        #[test]
        fn holds_what_a_set_holds(
            kept in proptest::collection::vec(("[a-c]{1,2}", 0u32..6, 0u32..3), 0..200),
            asked in proptest::collection::vec(("[a-d]{1,2}", 0u32..8), 0..60),
        ) {
            let mut table = KeptCalls::default();
            let mut set: HashSet<(String, u32)> = HashSet::new();
            for (run, step, part) in &kept {
                let call = CallRef { run: run.as_str().into(), step: *step, part: *part };
                table.insert(call);
                set.insert((run.clone(), *step));
                prop_assert_eq!(table.calls.len(), set.len());
            }
            let all = kept.iter().map(|(r, s, _)| (r.clone(), *s)).chain(asked);
            for (run, step) in all {
                prop_assert_eq!(table.contains(&run, step), set.contains(&(run.clone(), step)));
            }
        }
    }
}
