//! Which client calls can matter to the audit, decided right after parsing so that a month
//! of lookups and emails is never held in memory (issue 6). Most calls in an agent trace
//! are idle: a single GET that got a 2xx, no key, a step that ended ok. No rule can fire on
//! one, and no effect can be matched to one, so their events are dropped as soon as the
//! step ends; only their times are kept, for the span the client traces cover.
//!
//! A call with a non-idempotent request (a POST that sent an email) is idle too unless its
//! run was resumed: then `renumbered-step` compares it with what the run did after the
//! resume. Such calls are *deferred* per run and restored once every input has been read,
//! for the runs that have a resume anywhere in the inputs.
//!
//! Anything else keeps every event: a tool or URL naming an effect kind, arguments with an
//! amount or currency (for `noncanonical-args`), a key, a retry, a failure, a non-2xx
//! answer, an effect id, a second dispatch of the step, a step that did not end ok, or a
//! call still open at the end of its input. The decision is per input: events of one call
//! spread over several inputs are kept whole in each (an attempt without its tool call is
//! always kept).

use crate::blocks::Blocks;
use crate::correlate::effect_kind_of;
use crate::event::{CallRef, Event, EventKind, Lifecycle, Loc, RunEvent, Text};
use crate::hash_bits::HashBits;
use crate::scan::first_either;
use crate::time::Timestamp;
use hashbrown::{Equivalent, HashMap};
use rustc_hash::{FxBuildHasher, FxHashSet};
use std::hash::{BuildHasher, Hash};
use std::ops::Range;

/// What decides relevance: `--tool-kind` mappings, as correlation uses them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Relevance {
    pub tool_kinds: Vec<(String, String)>,
}

impl Relevance {
    /// The tool names an effect kind (by `--tool-kind` or by its name).
    pub fn tool_names_effect(&self, tool: &str) -> bool {
        effect_kind_of(tool, None, &self.tool_kinds).is_some()
    }
}

/// The calls an input had that no rule needs, for the accounting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dropped {
    pub calls: u64,
    pub events: u64,
    /// Earliest and latest time of a dropped or deferred event.
    pub span: Option<(Timestamp, Timestamp)>,
}

impl Dropped {
    pub fn merge(&mut self, other: &Dropped) {
        self.calls += other.calls;
        self.events += other.events;
        if let Some((a, b)) = other.span {
            self.widen(a);
            self.widen(b);
        }
    }

    fn widen(&mut self, at: Timestamp) {
        self.span = Some(match self.span {
            None => (at, at),
            Some((a, b)) => (a.min(at), b.max(at)),
        });
    }
}

/// A call whose events are held until its step ends.
#[derive(Debug, Default)]
struct Pending {
    events: Vec<Event>,
    /// The bytes of the file from its first line to its last, while every event of it came
    /// with its place ([`Filter::push_placed`]).
    place: Option<Range<u64>>,
    attempts: u32,
    answered: bool,
    /// Every attempt was GET, HEAD or OPTIONS.
    safe: bool,
}

/// Streams one input's events, passing on those that can matter.
#[derive(Debug)]
pub struct Filter {
    relevance: Relevance,
    pending: HashMap<CallRef, Pending, FxBuildHasher>,
    /// Calls found relevant: the rest of their events pass straight on.
    kept: KeptCalls,
    /// Whether a tool names an effect kind, for [`Filter::idle_tool`].
    tools_naming: ShapeCache,
    /// Whether a request's URL does: a month of requests goes to a few dozen URLs, and
    /// searching one for every kind's words was a fifth of the filter's work.
    urls_naming: ShapeCache,
    /// Idle calls with a non-idempotent request, by run: needed only if the run resumed.
    pub deferred: Vec<Deferred>,
    /// The same, kept as where their lines lie in a file (by a parser that can say).
    pub deferred_lines: Blocks<DeferredLines>,
    /// Runs' `started` events: needed only for a run that crashed (a start after a crash
    /// is a resume in all but name), and a month of runs has hardly any.
    pub started: Blocks<HeldStart>,
    pub dropped: Dropped,
}

impl Filter {
    pub fn new(relevance: Relevance) -> Self {
        Filter {
            relevance,
            pending: HashMap::default(),
            kept: KeptCalls::default(),
            tools_naming: ShapeCache::default(),
            urls_naming: ShapeCache::default(),
            deferred: Vec::new(),
            deferred_lines: Blocks::default(),
            started: Blocks::default(),
            dropped: Dropped::default(),
        }
    }

    pub fn push(&mut self, ev: Event, out: &mut Vec<Event>) {
        self.push_placed(ev, None, out);
    }

    /// [`Filter::push`] for an event whose line lies at `place` in a file that can be read
    /// again and reads the same out of context: an idle call whose every event came so is
    /// deferred as its place (16 bytes) rather than as its events.
    pub fn push_placed(&mut self, ev: Event, place: Option<Range<u64>>, out: &mut Vec<Event>) {
        let Some(call) = ev.kind.call() else {
            if let EventKind::Run(r) = &ev.kind
                && r.what == Lifecycle::Started
            {
                return self.hold_start(r.run.clone(), ev.at, ev.loc);
            }
            return out.push(ev);
        };
        if self.kept.contains(&call.run, call.step) {
            return out.push(ev);
        }
        // Looked up by reference: a call's run is cloned once, not once per line.
        match self.pending.get_mut(call) {
            None => match &ev.kind {
                EventKind::ToolCall(t) if self.idle_tool(&t.tool, &t.args_raw) => {
                    let call = call.clone();
                    // A tool call, a request, its answer, the step's end.
                    let mut events = Vec::with_capacity(4);
                    events.push(ev);
                    self.pending.insert(
                        call,
                        Pending {
                            events,
                            place,
                            safe: true,
                            ..Pending::default()
                        },
                    );
                }
                _ => {
                    self.kept.insert(call.clone());
                    out.push(ev);
                }
            },
            Some(p) => {
                p.place = (p.place.take().zip(place))
                    .map(|(call, line)| call.start..line.end.max(call.end));
                let idle = still_idle(p, &ev, &mut self.urls_naming);
                let ended = matches!(ev.kind, EventKind::StepEnd(_));
                if idle && !ended {
                    return p.events.push(ev);
                }
                let (call, mut p) = self.pending.remove_entry(call).expect("pending");
                if idle {
                    p.events.push(ev);
                    self.retire(call, p);
                } else {
                    out.extend(p.events);
                    out.push(ev);
                    self.kept.insert(call);
                }
            }
        }
    }

    /// The end of the input: calls still open are kept, since later inputs may go on.
    pub fn finish(&mut self, out: &mut Vec<Event>) {
        let mut open: Vec<_> = self.pending.drain().flat_map(|(_, p)| p.events).collect();
        // The map's order is arbitrary; correlation sorts anyway, but keep `out` stable.
        open.sort_by_key(|e| e.loc);
        out.extend(open);
    }

    /// A run's `started` event, set aside (see [`Filter::started`]); a parser may hand it
    /// over this way rather than as an event.
    pub fn hold_start(&mut self, run: Text, at: Timestamp, loc: Loc) {
        self.kept.prefetch_run(&run);
        self.dropped.widen(at);
        self.started.push(HeldStart { run, at, loc });
    }

    /// Whether the filter holds or keeps events of the call: a parser that judges idle
    /// calls itself ([`crate::ingest::text`]) must leave those to [`Filter::push`].
    pub fn knows(&self, run: &str, step: u32) -> bool {
        self.kept.contains(run, step) || self.pending.contains_key(&CallKey { run, step })
    }

    /// An idle call a parser judged and dropped itself: only its count and times are kept.
    pub fn dropped_idle(&mut self, events: u64, times: impl Iterator<Item = Timestamp>) {
        self.dropped.calls += 1;
        self.dropped.events += events;
        for at in times {
            self.dropped.widen(at);
        }
    }

    /// A call with no tool naming an effect kind and no amount or currency in its arguments.
    /// Whether a tool names a kind is kept per tool: a month of kept calls names a handful,
    /// and asking costs a search of its name for every kind's words.
    pub fn idle_tool(&mut self, tool: &str, args_raw: &str) -> bool {
        let relevance = &self.relevance;
        let names_effect = (self.tools_naming).get(tool, |t| relevance.tool_names_effect(t));
        !names_effect && !args_name_money(args_raw)
    }

    /// The tool names an effect kind ([`Relevance::tool_names_effect`]).
    pub fn tool_names_effect(&self, tool: &str) -> bool {
        self.relevance.tool_names_effect(tool)
    }

    fn retire(&mut self, call: CallRef, p: Pending) {
        self.dropped.calls += 1;
        self.dropped.events += p.events.len() as u64;
        for e in &p.events {
            self.dropped.widen(e.at);
        }
        if needs_keeping_for_a_resume(p.safe, p.attempts) {
            let first_line = p.events.first().map(|e| e.loc.line);
            let lines = p.place.zip(first_line).and_then(|(place, line)| {
                DeferredLines::new(
                    place.start,
                    place.end - place.start,
                    line,
                    run_hash(&call.run),
                )
            });
            match lines {
                Some(lines) => self.deferred_lines.push(lines),
                None => self.deferred.push(Deferred::pack(call, p.events)),
            }
        }
    }
}

/// A run's `started` event, set aside in a fraction of an event's size: 32 bytes, with
/// no allocation for a run id of up to 16 bytes (a month has one per run).
#[derive(Clone, Debug, PartialEq)]
pub struct HeldStart {
    run: Text,
    at: Timestamp,
    loc: Loc,
}

/// The runs that crashed and those that resumed anywhere in the inputs: only their
/// set-aside events are restored.
pub struct Lifecycles<'a> {
    crashed: RunSet<'a>,
    resumed: RunSet<'a>,
}

impl<'a> Lifecycles<'a> {
    /// Read from the inputs' events (`parts`), on every thread and in one pass: a month's
    /// events are read through between the parse and correlation.
    pub fn of(parts: &'a [Vec<Event>]) -> Self {
        use rayon::prelude::*;
        let runs: Vec<(Lifecycle, &str)> = parts
            .par_iter()
            .flat_map_iter(|part| {
                part.iter().filter_map(|e| match &e.kind {
                    EventKind::Run(r) if r.what != Lifecycle::Started => {
                        Some((r.what, r.run.as_str()))
                    }
                    _ => None,
                })
            })
            .collect();
        let of = |what| RunSet::new(runs.iter().filter(|r| r.0 == what).map(|r| r.1));
        Lifecycles {
            crashed: of(Lifecycle::Crashed),
            resumed: of(Lifecycle::Resumed),
        }
    }
}

/// Run ids, with a [`HashBits`] table of their [`run_hash`]es in front: millions of held
/// starts and deferred calls ask, and almost none belong to such a run.
struct RunSet<'a> {
    ids: FxHashSet<&'a str>,
    hashes: FxHashSet<u32>,
    bits: HashBits,
}

impl<'a> RunSet<'a> {
    fn new(runs: impl Iterator<Item = &'a str>) -> Self {
        let ids: FxHashSet<&str> = runs.collect();
        let hashes: FxHashSet<u32> = ids.iter().map(|r| run_hash(r)).collect();
        let bits = match hashes.is_empty() {
            true => HashBits::default(),
            false => {
                HashBits::with_room_for(hashes.len(), hashes.iter().map(|&h| HashBits::spread(h)))
            }
        };
        RunSet { ids, hashes, bits }
    }

    fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Whether a run hashing to `hash` may be in the set (always, when one is).
    fn has_hash(&self, hash: u32) -> bool {
        self.bits.may_hold(HashBits::spread(hash)) && self.hashes.contains(&hash)
    }

    fn contains(&self, run: &str) -> bool {
        self.has_hash(run_hash(run)) && self.ids.contains(run)
    }
}

/// The `started` events (each input's) of runs that crashed somewhere in the inputs, as
/// events; the rest are dropped.
pub fn restore_started(runs: &Lifecycles, started: Vec<Blocks<HeldStart>>) -> Vec<Event> {
    if runs.crashed.is_empty() {
        return Vec::new();
    }
    started
        .into_iter()
        .flatten()
        .filter(|s| runs.crashed.contains(s.run.as_str()))
        .map(HeldStart::into_event)
        .collect()
}

impl HeldStart {
    /// The `started` event again, as read.
    pub fn into_event(self) -> Event {
        Event {
            at: self.at,
            loc: self.loc,
            kind: EventKind::Run(Box::new(RunEvent {
                run: self.run,
                what: Lifecycle::Started,
            })),
        }
    }
}

/// Answers per distinct text (does this tool or URL name an effect kind), forgotten when
/// too many (URLs with ids in their path).
#[derive(Debug, Default)]
pub(crate) struct ShapeCache(HashMap<Box<[u8]>, bool, FxBuildHasher>);

impl ShapeCache {
    const MAX: usize = 4096;

    pub(crate) fn get(&mut self, text: &str, compute: impl FnOnce(&str) -> bool) -> bool {
        if let Some(&v) = self.0.get(text.as_bytes()) {
            return v;
        }
        let v = compute(text);
        if self.0.len() >= Self::MAX {
            self.0.clear();
        }
        self.0.insert(text.as_bytes().into(), v);
        v
    }
}

/// A call looked up by borrowed parts; hashes as [`CallRef`] does.
#[derive(Hash)]
struct CallKey<'a> {
    run: &'a str,
    step: u32,
}

impl Equivalent<CallRef> for CallKey<'_> {
    fn equivalent(&self, key: &CallRef) -> bool {
        self.step == key.step && self.run == key.run
    }
}

/// The hash [`DeferredLines`] keeps of a run id instead of the id itself. Runs that hash
/// alike are told apart once their lines are read again.
pub fn run_hash(run: &str) -> u32 {
    let h = FxBuildHasher.hash_one(run);
    (h >> 32) as u32 ^ h as u32
}

/// Deferred idle calls matter only to runs resumed somewhere in the inputs (`runs`): the
/// events of theirs, the rest dropped. Calls kept as lines of a file (each with its input)
/// are read again by `reread`, given those of resumed runs (and, rarely, of a run whose id
/// hashes alike, which are dropped after reading).
pub fn restore_resumed(
    runs: &Lifecycles,
    deferred: Vec<Deferred>,
    lines: impl IntoIterator<Item = (u32, DeferredLines)>,
    reread: impl FnOnce(Vec<(u32, DeferredLines)>) -> Vec<Event>,
) -> Vec<Event> {
    let resumed = &runs.resumed;
    if resumed.is_empty() {
        return Vec::new();
    }
    let mut restored: Vec<Event> = deferred
        .into_iter()
        .filter(|d| resumed.contains(d.run()))
        .flat_map(Deferred::into_events)
        .collect();
    let lines: Vec<(u32, DeferredLines)> = lines
        .into_iter()
        .filter(|(_, l)| resumed.has_hash(l.run_hash))
        .collect();
    if !lines.is_empty() {
        let of_resumed = reread(lines).into_iter().filter(|e| {
            e.kind
                .call()
                .is_none_or(|c| resumed.ids.contains(c.run.as_str()))
        });
        restored.extend(of_resumed);
    }
    restored
}

/// Whether an idle call that ended is set aside for its run's resume rather than dropped:
/// `renumbered-step` compares a call issued after a resume with the earlier steps of its
/// shape, and only a call whose every request was a read (GET, HEAD, OPTIONS) can never be
/// one. A call that sent no request at all is kept too: its shape is all there is to go by.
pub(crate) fn needs_keeping_for_a_resume(safe: bool, attempts: u32) -> bool {
    !safe || attempts == 0
}

/// Whether a request's URL names an effect kind (`/v1/refunds`).
pub(crate) fn url_names_effect(url: &str) -> bool {
    effect_kind_of("", Some(url), &[]).is_some()
}

/// Whether the call is still idle with `ev` added to what it has shown so far.
fn still_idle(p: &mut Pending, ev: &Event, urls_naming: &mut ShapeCache) -> bool {
    match &ev.kind {
        // A second dispatch of the step: a step retry or a resume.
        EventKind::ToolCall(_) | EventKind::Failure(_) | EventKind::Run(_) => false,
        EventKind::Attempt(a) => {
            p.attempts += 1;
            let names_effect =
                (a.url.as_deref()).is_some_and(|url| urls_naming.get(url, url_names_effect));
            p.safe &= a
                .method
                .as_deref()
                .is_some_and(crate::event::is_safe_method);
            p.attempts == 1 && a.number == 1 && a.key.is_none() && !names_effect
        }
        EventKind::Response(r) => {
            let idle = p.attempts == 1
                && !p.answered
                && (200..300).contains(&r.status)
                && r.effect_id.is_none()
                && !r.replayed
                && r.amount.is_none();
            p.answered = true;
            idle
        }
        EventKind::StepEnd(s) => s.ok && p.answered == (p.attempts == 1),
        EventKind::Effect(_)
        | EventKind::Record(_)
        | EventKind::Replay(_)
        | EventKind::GatewayTry(_) => true,
    }
}

/// Arguments with an amount or a currency: `noncanonical-args` reads them.
/// Both words have a `u` (the fourth letter of one, the second of the other), and most
/// arguments have few: only places around one are compared (this runs for every tool call).
pub fn args_name_money(args_raw: &str) -> bool {
    let b = args_raw.as_bytes();
    let at = |i: usize, word: &[u8]| {
        b.get(i..i + word.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(word))
    };
    // Both words have a `u`: only around one is there anything to compare. Arguments are
    // short, and a search sixteen bytes at a time has no set-up to pay.
    let mut from = 0;
    while let Some(i) = first_either(&b[from..], b'u', b'U') {
        let u = from + i;
        if (u >= 3 && at(u - 3, b"amount")) || (u >= 1 && at(u - 1, b"currency")) {
            return true;
        }
        from = u + 1;
    }
    false
}

mod deferred;
pub use deferred::{Deferred, DeferredLines};
mod kept;
use kept::KeptCalls;

#[cfg(test)]
mod tests;
