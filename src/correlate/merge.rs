//! Every input's events, merged in time order into one model builder (or two: the client's
//! and the service's side, when no input mixes them).

use super::build::Builder;
use super::{CorrelateOptions, Model};
use crate::event::Event;

/// Builds the model from every input's events.
pub fn correlate(events: Vec<Event>, opts: &CorrelateOptions) -> Model {
    correlate_parts(vec![events], opts)
}

/// Builds the model from events in parts (one per input, say), in the order a stable sort
/// of all of them by time and place would give: time order, then input order, so that a
/// dispatch precedes its attempts even across files, and events of one span (which share a
/// time and a line) keep the parser's order whatever the thread count. Each part is sorted
/// on its own and the parts merged as the model is built: joining them first, and a sort's
/// buffer beside that, were twice the events' memory.
pub fn correlate_parts(mut parts: Vec<Vec<Event>>, opts: &CorrelateOptions) -> Model {
    {
        use rayon::prelude::*;
        for part in &mut parts {
            if !part.is_sorted_by_key(|e| (e.at, e.loc)) {
                part.par_sort_by_key(|e| (e.at, e.loc));
            }
        }
    }
    // Client events and the service's effects and records build separate parts of the
    // model until matching: when no input mixes the two (agent traces in some files,
    // service logs in others), the two sides are merged and built on two threads.
    let side = |p: &Vec<Event>| {
        let client = p.iter().filter(|e| e.kind.is_client_side()).count();
        (client > 0, client < p.len())
    };
    let sides: Vec<(bool, bool)> = parts.iter().map(side).collect();
    if sides.iter().any(|&(client, service)| client && service) {
        return build(parts, opts).finish();
    }
    let (client, service): (Vec<_>, Vec<_>) = parts
        .into_iter()
        .zip(sides)
        .partition(|(_, (client, _))| *client);
    let unzip = |v: Vec<(Vec<Event>, _)>| v.into_iter().map(|(p, _)| p).collect::<Vec<_>>();
    let (client, service) = (unzip(client), unzip(service));
    let (mut b, s) = rayon::join(|| build(client, opts), || build(service, opts));
    b.model.effects = s.model.effects;
    b.model.records = s.model.records;
    b.model.latest_event = b.model.latest_event.max(s.model.latest_event);
    b.finish()
}

/// A builder that has read every event of `parts`, in order.
fn build(parts: Vec<Vec<Event>>, opts: &CorrelateOptions) -> Builder<'_> {
    let mut b = Builder::new(opts);
    b.reserve(&parts);
    merge_in_order(parts, |ev| b.add(ev));
    b
}

/// Calls `each` with every event of the sorted `parts`, by (time, place, part).
pub(super) fn merge_in_order(parts: Vec<Vec<Event>>, mut each: impl FnMut(Event)) {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut iters: Vec<_> = parts
        .into_iter()
        .map(|p| Chunked::new(p).peekable())
        .collect();
    let mut heads = BinaryHeap::with_capacity(iters.len());
    for (i, it) in iters.iter_mut().enumerate() {
        if let Some(e) = it.peek() {
            heads.push(Reverse((e.at, e.loc, i)));
        }
    }
    while let Some(Reverse((_, _, i))) = heads.pop() {
        let it = &mut iters[i];
        let Some(ev) = it.next() else { continue };
        each(ev);
        // The rest of the part while it stays ahead of every other part's next event.
        while let Some(next) = it.peek() {
            let key = (next.at, next.loc, i);
            if heads.peek().is_some_and(|Reverse(h)| *h < key) {
                heads.push(Reverse(key));
                break;
            }
            each(it.next().expect("peeked"));
        }
    }
}

/// Events a chunk at a time: a part's events are read over the whole build (every input
/// spans the month), and freed a chunk at a time as they are read rather than all at the
/// end, when the model is at its largest.
struct Chunked {
    current: std::vec::IntoIter<Event>,
    /// The chunks still to read, last first.
    rest: Vec<Vec<Event>>,
}

impl Chunked {
    const EVENTS: usize = 1 << 15;

    fn new(part: Vec<Event>) -> Self {
        let mut rest = Vec::with_capacity(part.len().div_ceil(Self::EVENTS));
        let mut events = part.into_iter();
        while events.len() > 0 {
            rest.push(events.by_ref().take(Self::EVENTS).collect::<Vec<_>>());
        }
        rest.reverse();
        Chunked {
            current: Vec::new().into_iter(),
            rest,
        }
    }
}

impl Iterator for Chunked {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(e) = self.current.next() {
                return Some(e);
            }
            self.current = self.rest.pop()?.into_iter();
        }
    }
}
