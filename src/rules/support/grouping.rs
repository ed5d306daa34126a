//! Grouping effects and items the rules share: by a key, by creation time, and the
//! untraced effects that are one delivery.

use crate::correlate::Model;
use crate::time::Duration;
use rustc_hash::{FxBuildHasher, FxHashMap};
use std::hash::{BuildHasher, Hash};

/// Effects no client attempt accounts for that are one delivery (SPEC §4.6): those that
/// share a key, and those of one kind, order and known amount created within `--max-skew`
/// plus [`DELIVERY_SLACK`] of each other. Only groups of two or more, in a fixed order.
pub struct ServiceGroup {
    pub effects: Vec<usize>,
    /// Set when the group is the effects carrying this key.
    pub key: Option<String>,
}

/// How close (beyond the skew) untraced effects must be to count as one delivery: the
/// window correlation matches a traced effect's delivery copies in, so that one traced and
/// one untraced effect are judged as two untraced ones are.
pub use crate::correlate::DELIVERY_SLACK;

pub fn service_only_groups(model: &Model, max_skew: Duration) -> Vec<ServiceGroup> {
    let unmatched: Vec<usize> = (0..model.effects.len())
        .filter(|&i| model.effects[i].happened && model.effects[i].matched.is_none())
        .collect();
    let keyed: Vec<usize> = unmatched
        .iter()
        .copied()
        .filter(|&i| model.effects[i].key.is_some())
        .collect();
    let mut out = Vec::new();
    let mut grouped = vec![false; model.effects.len()];
    let kind_and_key = |i: usize| {
        let e = &model.effects[i];
        (e.kind.as_str(), e.key.as_deref().unwrap_or_default())
    };
    for effects in groups_by_key(&keyed, kind_and_key) {
        effects.iter().for_each(|&i| grouped[i] = true);
        let key = Some(kind_and_key(effects[0]).1.to_string());
        out.push(ServiceGroup { effects, key });
    }
    let ungrouped: Vec<usize> = unmatched
        .into_iter()
        .filter(|&i| !grouped[i])
        .filter(|&i| model.effects[i].order.is_some() && model.effects[i].amount_key().is_some())
        .collect();
    let order_and_amount = |i: usize| {
        let e = &model.effects[i];
        (e.kind.as_str(), e.order.as_deref(), e.amount_key())
    };
    let gap = Duration(max_skew.0.saturating_add(DELIVERY_SLACK.0));
    for mut effects in groups_by_key(&ungrouped, order_and_amount) {
        sort_by_creation(model, &mut effects);
        for cluster in clusters(model, &effects, gap) {
            out.push(ServiceGroup {
                effects: cluster,
                key: None,
            });
        }
    }
    out
}

/// An empty map with room for `n` entries, for grouping every effect or attempt: grown entry
/// by entry instead, a map rehashes all it holds at each doubling and faults in each larger
/// table, which was most of the grouping rules' time on a month of logs.
pub fn map_with_room<K, V>(n: usize) -> FxHashMap<K, V> {
    FxHashMap::with_capacity_and_hasher(n, Default::default())
}

/// Groups `items` (indexes) by `key`: the groups of two or more, in key order, each in
/// index order. The items that may share a key (`maybe_shared`) sorted by the key's hash
/// (keys compared only where hashes tie) instead of a map of lists, which held a list per
/// order (or key, or call) of the month; only the few groups are put in key order.
pub fn groups_by_key<K: Ord + Hash>(items: &[usize], key: impl Fn(usize) -> K) -> Vec<Vec<usize>> {
    let hashed: Vec<(u64, usize)> = items
        .iter()
        .map(|&i| (FxBuildHasher.hash_one(key(i)), i))
        .collect();
    let mut hashed = maybe_shared(hashed);
    hashed.sort_unstable_by(|&(ha, a), &(hb, b)| {
        ha.cmp(&hb)
            .then_with(|| key(a).cmp(&key(b)))
            .then(a.cmp(&b))
    });
    let mut groups: Vec<Vec<usize>> = hashed
        .chunk_by(|&(ha, a), &(hb, b)| ha == hb && key(a) == key(b))
        .filter(|g| g.len() > 1)
        .map(|g| g.iter().map(|&(_, i)| i).collect())
        .collect();
    groups.sort_unstable_by(|a, b| key(a[0]).cmp(&key(b[0])));
    groups
}

/// The items of `hashed` (hash, item) whose hash lands in a slot of a bit table that
/// another's lands in too: every item that shares its hash, and so its key, with another,
/// and a few that share a slot by chance. Sorting every item of a month by its hash was
/// most of the time of the rules that group effects; most items are alone, and two
/// passes over a table of about eight bits per item (in cache) set them aside.
fn maybe_shared(mut hashed: Vec<(u64, usize)>) -> Vec<(u64, usize)> {
    let bits = (hashed.len().max(64).ilog2() + 3).min(26);
    let slot = |h: u64| {
        let s = (h >> (64 - bits)) as usize;
        (s / 64, 1u64 << (s % 64))
    };
    let mut once = vec![0u64; (1 << bits) / 64];
    let mut twice = vec![0u64; (1 << bits) / 64];
    for &(h, _) in &hashed {
        let (word, bit) = slot(h);
        if once[word] & bit != 0 {
            twice[word] |= bit;
        }
        once[word] |= bit;
    }
    hashed.retain(|&(h, _)| {
        let (word, bit) = slot(h);
        twice[word] & bit != 0
    });
    hashed
}

pub fn sort_by_creation(model: &Model, effects: &mut [usize]) {
    effects.sort_by(|&a, &b| {
        let (a, b) = (&model.effects[a], &model.effects[b]);
        (a.created, &a.id).cmp(&(b.created, &b.id))
    });
}

/// Runs of two or more effects (sorted by creation), each created within `gap` of the
/// previous one.
pub fn clusters(model: &Model, sorted: &[usize], gap: Duration) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    for &i in sorted {
        if let Some(&last) = current.last()
            && model.effects[i].created.since(model.effects[last].created) > gap
        {
            if current.len() > 1 {
                out.push(std::mem::take(&mut current));
            }
            current.clear();
        }
        current.push(i);
    }
    if current.len() > 1 {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_by_key_gives_groups_of_two_or_more_in_key_order_indexes_ascending() {
        let keys = ["b", "a", "c", "b", "a", "b"];
        let items: Vec<usize> = vec![5, 4, 3, 2, 1, 0];
        assert_eq!(
            groups_by_key(&items, |i| keys[i]),
            vec![vec![1, 4], vec![0, 3, 5]]
        );
        // Every key hashing alike still groups by key.
        let same_hash = |i: usize| Collide(keys[i]);
        assert_eq!(
            groups_by_key(&items, same_hash),
            vec![vec![1, 4], vec![0, 3, 5]]
        );
    }

    proptest::proptest! {
        /// The groups are those a map of lists gives, however many items share a slot of
        /// the bit table by chance (few keys among many items, or many keys).
        #[test]
        fn groups_by_key_is_a_map_of_lists(
            keys in proptest::collection::vec(0u32..3000, 0..4000),
            spread in 1u32..3000,
        ) {
            let key = |i: usize| keys[i] % spread;
            let items: Vec<usize> = (0..keys.len()).rev().collect();
            let mut lists: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
            for &i in &items {
                lists.entry(key(i)).or_default().push(i);
            }
            let expected: Vec<Vec<usize>> = lists
                .into_values()
                .filter(|l| l.len() > 1)
                .map(|mut l| {
                    l.sort();
                    l
                })
                .collect();
            proptest::prop_assert_eq!(groups_by_key(&items, key), expected);
        }
    }

    #[derive(PartialEq, Eq, PartialOrd, Ord)]
    struct Collide(&'static str);

    impl Hash for Collide {
        fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
            state.write_u8(0);
        }
    }
}
