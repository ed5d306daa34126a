//! Putting a part that is nearly in order into order. A parser's events come out a few
//! places late where a call was held until it was judged (at 1 GB, a part of 29 k events
//! has ~55 out of place, each ~1 place on average): moving those few is about one
//! comparison an event, where the full sort made ~15 (at 100 MB, 28.4 against 6.2 M
//! instructions; the wall time hardly moved, since the pass is the first read of the events
//! after the parse and waits on memory either way).

/// Sorts `v` stably by `key` by insertion, giving up once more than `budget` elements have
/// been moved past: then `false`, with `v` some permutation of what it was, for a full sort
/// to finish. Bounded so that a part far out of order never costs quadratic time.
pub(super) fn insertion_sort_within<T, K: Ord>(
    v: &mut [T],
    key: impl Fn(&T) -> K,
    mut budget: usize,
) -> bool {
    for i in 1..v.len() {
        let k = key(&v[i]);
        if key(&v[i - 1]) <= k {
            continue;
        }
        // Equal keys stay in front: the sort is stable.
        let mut j = i - 1;
        while j > 0 && key(&v[j - 1]) > k {
            j -= 1;
        }
        let moved = i - j;
        if moved > budget {
            return false;
        }
        budget -= moved;
        v[j..=i].rotate_right(1);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// (key, original position): stability shows in the positions of equal keys.
    fn tagged(keys: &[u8]) -> Vec<(u8, usize)> {
        keys.iter()
            .copied()
            .enumerate()
            .map(|(i, k)| (k, i))
            .collect()
    }

    #[test]
    fn a_few_late_items_are_moved_into_place_stably() {
        let mut v = tagged(&[1, 2, 4, 5, 3, 6, 2, 7, 7, 1]);
        let mut expected = v.clone();
        expected.sort_by_key(|&(k, _)| k);
        assert!(insertion_sort_within(&mut v, |&(k, _)| k, 100));
        assert_eq!(v, expected);
    }

    #[test]
    fn a_part_far_out_of_order_gives_up_within_its_budget() {
        let keys: Vec<u8> = (0..100).rev().collect();
        let mut v = tagged(&keys);
        assert!(!insertion_sort_within(&mut v, |&(k, _)| k, 200));
        let mut seen: Vec<usize> = v.iter().map(|&(_, i)| i).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..100).collect::<Vec<_>>(), "still every item once");
        // The budget is what is spent: a sorted prefix of 20 took 190 moves.
        assert!(v[..20].is_sorted_by_key(|&(k, _)| k));
        assert!(!v[..21].is_sorted_by_key(|&(k, _)| k));
    }

    #[test]
    fn a_sorted_part_costs_nothing() {
        let mut v = tagged(&[1, 1, 2, 3, 3, 3, 9]);
        let before = v.clone();
        assert!(insertion_sort_within(&mut v, |&(k, _)| k, 0));
        assert_eq!(v, before);
    }

    proptest! {
        /// Whenever it finishes, the result is the stable sort's; when it gives up, a stable
        /// sort of what it leaves is (it never reorders equal keys).
        #[test]
        fn finishing_is_sorting_stably(keys in proptest::collection::vec(0u8..8, 0..64),
                                       budget in 0usize..400) {
            let mut v = tagged(&keys);
            let mut expected = v.clone();
            expected.sort_by_key(|&(k, _)| k);
            if insertion_sort_within(&mut v, |&(k, _)| k, budget) {
                prop_assert_eq!(v, expected);
            } else {
                v.sort_by_key(|&(k, _)| k);
                prop_assert_eq!(v, expected);
            }
        }
    }
}
