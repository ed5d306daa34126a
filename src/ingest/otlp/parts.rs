//! Parallel tool calls of one step (SPEC §3.4): LangGraph's ToolNode runs the tool calls a
//! model asked for in one turn side by side in one super-step, so their tool spans carry
//! the same run and step. Events name a call by its run and step only, and correlation,
//! which cannot tell such calls apart in a text log (`correlate::build::parallel` guesses
//! there), gave every request, answer and end to one of them: a timeout of one order's
//! refund was read as the other's, its retry as a second attempt of the other call. The
//! trace tells them apart (each its own span), so each such call gets its own
//! [`CallRef::part`] and correlation sends its events to it.
//!
//! Only tool spans of one run and step whose intervals meet (touching counts: at equal
//! times, the events of one and of the other could be read in either order) get a part; a
//! span that meets no other keeps part 0, as every call of a text log has. A step the
//! framework ran again after it ended (a retry policy) is still one step, its dispatches one
//! after another: parts only say which dispatch an event is of.

use super::Span;
use crate::event::CallRef;
use rustc_hash::FxHashMap;

/// Sets the part of each call in `refs` (one per tool span of `calls`, which are in order
/// of start) that meets another call of its run and step in time: 1, 2, ... in order of
/// start among the step's calls, so that no two of a step's calls share one.
pub(super) fn set_parts(spans: &[Span], calls: &[usize], refs: &mut [CallRef]) {
    let mut by_step: FxHashMap<(&str, u32), Vec<usize>> = FxHashMap::default();
    for (c, r) in refs.iter().enumerate() {
        by_step.entry((r.run.as_str(), r.step)).or_default().push(c);
    }
    let mut parts = vec![0; refs.len()];
    for members in by_step.values().filter(|m| m.len() > 1) {
        // In order of start (as `calls` is): a call meets an earlier one when it starts by
        // the latest end so far, and then meets the one that ends latest too. Any earlier
        // call that it meets holds its start, as that one does, so the two meet each other
        // and were marked when the later of them was reached.
        let mut concurrent = vec![false; members.len()];
        let mut latest_end: Option<(usize, crate::time::Timestamp)> = None;
        for (i, &c) in members.iter().enumerate() {
            let s = &spans[calls[c]];
            if let Some((j, end)) = latest_end
                && s.start <= end
            {
                concurrent[i] = true;
                concurrent[j] = true;
            }
            if latest_end.is_none_or(|(_, end)| s.end > end) {
                latest_end = Some((i, s.end));
            }
        }
        for (i, &c) in members.iter().enumerate() {
            if concurrent[i] {
                parts[c] = i as u32 + 1;
            }
        }
    }
    for (r, part) in refs.iter_mut().zip(parts) {
        r.part = part;
    }
}
