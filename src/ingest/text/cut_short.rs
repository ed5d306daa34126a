//! A text log's line cut short: the values its end ran into are not read whole
//! ([`crate::ingest::cut_values`]).

use super::*;
use crate::ingest::cut_values::{self, Cut};

impl TextParser {
    /// `verdict`, line `n`'s reading, without the values the cut ran into: warned of when
    /// dropped, skipped as cut short when the event cannot stand without them.
    #[cold]
    pub(super) fn read_to_cut(&mut self, n: u32, line: &[u8], verdict: Verdict) -> Verdict {
        let Some(word) = cut_values::word_at_cut(line) else {
            return verdict;
        };
        let mut dropped = Vec::new();
        let mut stands = |kind: &mut EventKind| match cut_values::drop_cut_values(kind, word) {
            Cut::Whole => true,
            Cut::Dropped(values) => {
                dropped.extend(values);
                true
            }
            Cut::Unreadable => false,
        };
        let verdict = match verdict {
            Verdict::Event(at, mut kind) => match stands(&mut kind) {
                true => Verdict::Event(at, kind),
                false => Verdict::Skipped(CUT_SHORT.into()),
            },
            Verdict::Events(mut events) => {
                events.retain_mut(|(_, kind)| stands(kind));
                match events.is_empty() {
                    true => Verdict::Skipped(CUT_SHORT.into()),
                    false => Verdict::Events(events),
                }
            }
            other => other,
        };
        if !dropped.is_empty() {
            dropped.dedup();
            self.out.stats.warn(n, cut_values::warning(word, &dropped));
        }
        verdict
    }
}
