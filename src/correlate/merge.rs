//! Every input's events, merged in time order into one model builder (or two: the client's
//! and the service's side, when no input mixes them).

use super::build::Builder;
use super::nearly_sorted::insertion_sort_within;
use super::ready::{Preparer, Ready};
use super::{CorrelateOptions, Model};
use crate::event::{Event, Loc};
use crate::time::Timestamp;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::iter::Peekable;

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
pub fn correlate_parts(parts: Vec<Vec<Event>>, opts: &CorrelateOptions) -> Model {
    correlate_parts_adding(parts, opts, |_| Vec::new())
}

/// [`correlate_parts`], with `more` making further client-side parts from the client's
/// (the restored calls of resumed runs, say). When no input mixes the two sides, it runs
/// on the thread that then builds the client's side while the other builds the
/// service's: the service's build otherwise held up the client's pipeline longer.
pub fn correlate_parts_adding(
    mut parts: Vec<Vec<Event>>,
    opts: &CorrelateOptions,
    more: impl FnOnce(&[Vec<Event>]) -> Vec<Vec<Event>> + Send,
) -> Model {
    // Client events and the service's effects and records build separate parts of the
    // model until matching: when no input mixes the two (agent traces in some files,
    // service logs in others), the two sides are merged and built on two threads.
    let side = |p: &Vec<Event>| {
        let client = p.iter().filter(|e| e.kind.is_client_side()).count();
        (client > 0, client < p.len())
    };
    let sides: Vec<(bool, bool)> = parts.iter().map(side).collect();
    if sides.iter().any(|&(client, service)| client && service) {
        let added = more(&parts);
        parts.extend(added);
        sort_each(&mut parts);
        return build(parts, opts).finish();
    }
    let (client, service): (Vec<_>, Vec<_>) = parts
        .into_iter()
        .zip(sides)
        .partition(|(_, (client, _))| *client);
    let unzip = |v: Vec<(Vec<Event>, _)>| v.into_iter().map(|(p, _)| p).collect::<Vec<_>>();
    let (mut client, mut service) = (unzip(client), unzip(service));
    let (mut b, s) = rayon::join(
        || {
            let added = more(&client);
            client.extend(added);
            sort_each(&mut client);
            build(client, opts)
        },
        || {
            sort_each(&mut service);
            build(service, opts)
        },
    );
    b.model.effects = s.model.effects;
    b.model.disagreements = s.model.disagreements;
    b.model.amount_disputes = s.model.amount_disputes;
    b.model.order_disputes = s.model.order_disputes;
    b.model.key_disputes = s.model.key_disputes;
    b.model.records = s.model.records;
    b.model.replays = s.model.replays;
    b.model.gateway_tries = s.model.gateway_tries;
    b.model.latest_event = b.model.latest_event.max(s.model.latest_event);
    b.finish()
}

/// Each part sorted by (time, place), stably: in place when it is nearly in order, as a
/// parser's parts are, and in full otherwise.
fn sort_each(parts: &mut [Vec<Event>]) {
    use rayon::prelude::*;
    // A few moves an event: a parser's part needs about one.
    const MOVES_PER_EVENT: usize = 8;
    for part in parts {
        let budget = part.len() * MOVES_PER_EVENT;
        if !insertion_sort_within(part, |e| (e.at, e.loc), budget) {
            part.par_sort_by_key(|e| (e.at, e.loc));
        }
    }
}

/// A builder that has read every event of `parts`, in order. Each batch of events is made
/// [`Ready`] while the builder adds the batch before it: on two threads when the pool has
/// them, one after the other when not, in the same order either way.
fn build(parts: Vec<Vec<Event>>, opts: &CorrelateOptions) -> Builder<'_> {
    const BATCH: usize = 4096;
    let mut b = Builder::new(opts);
    b.reserve(&parts);
    let mut events = Merged::new(parts);
    let mut preparer = Preparer::new(opts);
    let mut next_batch = || -> Vec<Ready> {
        // Sized once: collected from the merge (whose length is unknown), a batch grew by
        // doubling, each step a copy.
        let mut batch = Vec::with_capacity(BATCH);
        batch.extend((events.by_ref().take(BATCH)).map(|e| preparer.ready(e)));
        batch
    };
    let mut batch = next_batch();
    while !batch.is_empty() {
        let add_all = || add_batch(&mut b, batch);
        batch = rayon::join(&mut next_batch, add_all).0;
    }
    b
}

/// Adds a batch in order, each event's fields (and its slot of the builder's table of
/// dispatches or effects) asked of memory a few events before the builder reads them.
fn add_batch(b: &mut Builder, batch: Vec<Ready>) {
    let ask = |b: &Builder, ahead: &Ready| {
        prefetch(ahead.event.kind.payload());
        b.prefetch_slot(ahead);
    };
    let mut rest = batch.into_iter();
    for ready in rest.as_slice().iter().take(PREFETCH_AHEAD) {
        ask(b, ready);
    }
    while let Some(ready) = rest.next() {
        if let Some(ahead) = rest.as_slice().get(PREFETCH_AHEAD - 1) {
            ask(b, ahead);
        }
        b.add(ready);
    }
}

/// How many events ahead an event's fields are asked for: 4 to 16 measured the same.
const PREFETCH_AHEAD: usize = 8;

/// A hint that `p` will be read soon: nothing is read, and nothing happens where there is
/// no such instruction.
pub(crate) fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: SSE is part of x86-64's baseline, and a prefetch reads nothing: it
        // neither faults nor needs `p` to be valid.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p.cast());
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64).cast());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The events of sorted parts, merged by (time, place, part).
pub(super) struct Merged {
    parts: Vec<Peekable<Chunked>>,
    /// The next event's key of each part but the one being read.
    heads: BinaryHeap<Reverse<(Timestamp, Loc, usize)>>,
    /// The part being read, while it stays ahead of every other part's next event.
    reading: Option<usize>,
}

impl Merged {
    pub(super) fn new(parts: Vec<Vec<Event>>) -> Self {
        let mut parts: Vec<_> = parts
            .into_iter()
            .map(|p| Chunked::new(p).peekable())
            .collect();
        let mut heads = BinaryHeap::with_capacity(parts.len());
        for (i, part) in parts.iter_mut().enumerate() {
            if let Some(e) = part.peek() {
                heads.push(Reverse((e.at, e.loc, i)));
            }
        }
        Merged {
            parts,
            heads,
            reading: None,
        }
    }
}

impl Iterator for Merged {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(i) = self.reading {
                let part = &mut self.parts[i];
                let Some(next) = part.peek() else {
                    self.reading = None;
                    continue;
                };
                let key = (next.at, next.loc, i);
                if self.heads.peek().is_some_and(|Reverse(h)| *h < key) {
                    self.heads.push(Reverse(key));
                    self.reading = None;
                    continue;
                }
                return part.next();
            }
            let Reverse((_, _, i)) = self.heads.pop()?;
            self.reading = Some(i);
            if let Some(e) = self.parts[i].next() {
                return Some(e);
            }
            self.reading = None;
        }
    }
}

/// Events a chunk at a time: a large part's events are read over the whole build (an
/// input read whole spans the month), and freed a chunk at a time as they are read rather
/// than all at the end, when the model is at its largest. A part no larger than a parser's
/// block ([`crate::ingest::EVENT_BLOCK`], the usual part of a scan) is one chunk as it is:
/// split, every event of a month was copied once more, into memory touched afresh.
struct Chunked {
    current: std::vec::IntoIter<Event>,
    /// The chunks still to read, last first.
    rest: Vec<Vec<Event>>,
}

impl Chunked {
    const EVENTS: usize = 1 << 15;

    fn new(part: Vec<Event>) -> Self {
        if part.len() <= crate::ingest::EVENT_BLOCK {
            return Chunked {
                current: part.into_iter(),
                rest: Vec::new(),
            };
        }
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
