//! Idle calls judged on the bytes (issue 6). Most calls in a month of traces are a lookup or
//! an email: a tool call, one request, a 2xx answer, the step's end. [`crate::relevance`]
//! drops them once they are events; building those events first (a dozen strings a call)
//! was most of the parse. Here the parser holds the lines of such a call as bytes while
//! each new line keeps it idle, by the same tests as [`crate::relevance::Filter`]: when its
//! step ends ok it is dropped (or deferred) without an event being built, and the moment
//! a line says it matters, the held lines are replayed through the ordinary path, in order,
//! so the filter sees exactly what it would have seen.
//!
//! Only the plain shape is held: the calls a filter already knows of, lines whose `run=` or
//! `step=` name another call, failures, retries, keys and effect ids all take the ordinary
//! path. When the reader's buffer already holds the three lines after the tool call in
//! their usual shape, the call is settled from there at once, with no copies held
//! ([`TextParser::settle_ahead`]).
//! `selfcheck::check_filter_agrees` (a property test and a fuzz target) holds the shortcut to
//! the filter's decisions.

use super::plain::{ToolCallLine, agent_step, plain_answer, plain_first_request};
use super::{AMOUNT_TOKENS, EFFECT_ID_TOKENS, as_text, message_of, parse_u32, small};
use super::{Fields, Local, TextParser, Verdict, http_request, status_line};
use crate::event::{CallRef, Event, EventKind, Lifecycle, Loc, RunEvent};
use crate::event::{SAFE_METHODS, args_nest_too_deep};
use crate::flat_json::is_flat_object;
use crate::ingest::lines::{Ahead, for_each_line_in};
use crate::relevance::ShapeCache;
use crate::relevance::{
    DeferredLines, args_name_money, needs_keeping_for_a_resume, run_hash, url_names_effect,
};
use crate::scan::{after_prefix, same_bytes};
use crate::time::{Stamp, Timestamp};
use serde::de::IgnoredAny;
use std::ops::Range;

mod settle;
mod settle_ahead;
#[cfg(test)]
mod tests;
pub use settle::reread;

/// The held call. Its buffers are reused from call to call.
#[derive(Default)]
pub(super) struct IdleCall {
    active: bool,
    run: String,
    step: u32,
    /// `run` has whitespace, so [`plain_step_ok`](super::plain::plain_step_ok) could not read it from a line (false
    /// for the empty run of a new `IdleCall`, as for any run without).
    run_has_blank: bool,
    /// The held lines' messages (after the timestamp), back to back.
    raw: Vec<u8>,
    lines: Vec<HeldLine>,
    attempts: u32,
    answered: bool,
    /// Every request was GET, HEAD or OPTIONS: nothing to compare after a resume.
    safe: bool,
    /// Every timestamp carried its date, so the lines read the same out of context.
    dated: bool,
    /// Bytes of the file the held lines span, for reading them again.
    span: Range<u64>,
    /// Whether a tool name, or a URL, names an effect kind: a month of traces has a few
    /// dozen tools and URLs, and the answer is looked up rather than searched for.
    tool_kind: ShapeCache,
    url_kind: ShapeCache,
    /// In front of those, the last few tools and plain request lines.
    tools: Recent<bool>,
    requests: Recent<Option<bool>>,
}

/// The answers for the last few texts seen, found by comparing the text with each: a month
/// of traces repeats a handful of request lines (`GET https://orders.internal/v1/orders
/// (attempt 1)`) and tools, and one comparison is cheaper than reading the text again or
/// hashing it. Once full, each new text replaces the oldest (URLs with ids in their path
/// pass through without pushing the common texts out for long).
#[derive(Default)]
struct Recent<V: Copy> {
    known: Vec<(Box<[u8]>, V)>,
    next: usize,
}

impl<V: Copy> Recent<V> {
    const MAX: usize = 8;

    fn get(&mut self, text: &[u8], compute: impl FnOnce() -> V) -> V {
        if let Some((_, v)) = self.known.iter().find(|(known, _)| same_bytes(known, text)) {
            return *v;
        }
        let v = compute();
        let entry = (text.into(), v);
        if self.known.len() < Self::MAX {
            self.known.push(entry);
        } else {
            self.known[self.next] = entry;
            self.next = (self.next + 1) % Self::MAX;
        }
        v
    }
}

/// `Some(safe)` if `msg` is a plain first request to a URL that names no effect, with
/// whether its method is safe.
fn plain_request(msg: &[u8], url_kind: &mut ShapeCache) -> Option<bool> {
    let (method, url) = plain_first_request(msg)?;
    if url_kind.get(url, url_names_effect) {
        return None;
    }
    Some(SAFE_METHODS.contains(&method))
}

#[derive(Clone)]
struct HeldLine {
    n: u32,
    at: Local,
    msg: Range<usize>,
    /// Where the line lies, if it can be read again alone (see `TextParser::place`).
    place: Option<Range<u64>>,
}

/// What settling a call needs of its lines: how many, the first one's number, the
/// earliest and latest time.
struct HeldSpan {
    first_line: u32,
    lines: u64,
    earliest: Timestamp,
    latest: Timestamp,
}

/// One line as [`TextParser::message_line`] has read it, before any splitting.
#[derive(Clone, Copy)]
pub(super) struct Unsplit<'a> {
    pub n: u32,
    pub span: &'a Range<u64>,
    pub at: Local,
    pub dated: bool,
    pub msg: &'a [u8],
}

impl IdleCall {
    pub(super) fn is_active(&self) -> bool {
        self.active
    }

    /// Whether the line's `run=` and `step=` tokens, if it has any, name this call, as
    /// `TextParser::call_of` resolves them once the call's tool line has made it the current
    /// call: concurrent runs sharing a log name each line's call (SPEC §3.1), and such
    /// lines keep their call idle as unnamed ones do.
    fn is_named_by(&self, f: &Fields) -> bool {
        let run = f
            .token(b"run")
            .is_none_or(|run| same_bytes(run, self.run.as_bytes()));
        let step = f
            .token(b"step")
            .is_none_or(|s| parse_u32(s) == Some(self.step));
        run && step
    }

    /// `msg` without a last `  run=R  step=N` that names this call, spelt as logs of
    /// concurrent runs write it, so that the rest can be read in its plain shape; any
    /// other `msg` as it is (the fields' reading then decides, in [`Self::is_named_by`]).
    fn without_own_names<'m>(&self, msg: &'m [u8]) -> &'m [u8] {
        if !msg.last().is_some_and(u8::is_ascii_digit) || self.run_has_blank {
            return msg;
        }
        let digits = msg.iter().rev().take_while(|b| b.is_ascii_digit()).count();
        let (rest, digits) = msg.split_at(msg.len() - digits);
        let named = (canonical_step(digits) == Some(self.step))
            .then(|| rest.strip_suffix(b"  step="))
            .flatten()
            .and_then(|rest| rest.strip_suffix(self.run.as_bytes()))
            .and_then(|rest| rest.strip_suffix(b"  run="));
        named.unwrap_or(msg)
    }

    /// Whether `msg` is `agent run R  step N  ok` for this call, as
    /// `plain_step_ok(msg) == Some((run, step))` would say, compared against the call's own
    /// run and step rather than read afresh (it runs for every idle call of a month).
    fn is_end_line(&self, msg: &[u8]) -> bool {
        let digits = msg
            .strip_prefix(b"agent run ")
            .and_then(|rest| after_prefix(rest, self.run.as_bytes()))
            .and_then(|rest| rest.strip_prefix(b"  step "))
            .and_then(|rest| rest.strip_suffix(b"  ok"));
        digits
            .filter(|_| !self.run_has_blank)
            .is_some_and(|digits| canonical_step(digits) == Some(self.step))
    }
}

/// A step number of nine digits at most and no leading zero, as `plain_step_ok` reads one.
/// (Decided before the digits are read: ten of them or more overflow a `u32`, a panic in a
/// debug build, found by `cargo fuzz run parse_text`.)
fn canonical_step(digits: &[u8]) -> Option<u32> {
    let canonical = (1..=9).contains(&digits.len()) && (digits[0] != b'0' || digits.len() == 1);
    if !canonical {
        return None;
    }
    let mut step = 0u32;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        step = step * 10 + u32::from(d - b'0');
    }
    Some(step)
}

impl TextParser {
    /// Holds the line if it starts or continues an idle call (`Some(Held)`); replays a held
    /// call the line shows to matter. `None`: the ordinary path reads the line.
    pub(super) fn hold_if_idle(&mut self, l: Unsplit, f: &Fields) -> Option<Verdict> {
        self.out.filter.as_ref()?;
        if self.idle.active {
            match self.continues_idle(f) {
                Some(true) => {
                    self.hold_line(l);
                    return Some(Verdict::Held);
                }
                Some(false) => {
                    self.hold_line(l);
                    self.retire_idle(l.span.end);
                    return Some(Verdict::Held);
                }
                None => self.replay_idle(),
            }
        }
        if self.starts_idle(l, f) {
            self.hold_line(l);
            return Some(Verdict::Held);
        }
        None
    }

    /// A tool call that the filter would hold: an idle tool, valid JSON arguments, and a
    /// call the filter has not seen.
    fn starts_idle(&mut self, l: Unsplit, f: &Fields) -> bool {
        let Some((run, step)) = agent_step(f) else {
            return false;
        };
        let (Some(tool), Some(args)) = (f.token(b"tool"), f.token(b"args")) else {
            return false;
        };
        self.start_idle(l.msg, run, step, tool, args, l.span)
    }

    /// A tool call's line in the usual spelling ([`plain_tool_call`](super::plain::plain_tool_call)), read without
    /// splitting it into fields: held if it starts an idle call, else an event, as the
    /// ordinary path would make it. A held call is settled from `ahead` when it can be
    /// ([`TextParser::settle_ahead`]; the lines read are left in `read_ahead`), and its
    /// line copied aside only when it cannot.
    pub(super) fn tool_call_plainly(
        &mut self,
        l: Unsplit,
        call: ToolCallLine,
        ahead: Ahead,
    ) -> Verdict {
        if self.out.filter.is_some() {
            // A tool call never continues a held call: that one is settled first, as
            // `hold_if_idle` would settle it.
            if self.idle.active {
                self.replay_idle();
            }
            if self.start_idle(l.msg, call.run, call.step, call.tool, call.args, l.span) {
                self.read_ahead = self.settle_ahead(l, ahead);
                if self.read_ahead == 0 {
                    self.hold_line(l);
                }
                return Verdict::Held;
            }
        }
        let call_ref = CallRef {
            run: small(call.run),
            step: call.step,
            part: 0,
        };
        match self.tool_call(call_ref, call.tool, Some(call.args), l.at.at) {
            Ok(kind) => Verdict::Event(l.at.at, kind),
            Err(why) => Verdict::Skipped(why),
        }
    }

    /// `agent run R  step N  ok` ([`plain_step_ok`](super::plain::plain_step_ok)) that does not end the held call (that
    /// one was seen by `continue_idle_plainly`): a held one is settled first, as
    /// `hold_if_idle` would settle it.
    pub(super) fn step_ok_plainly(&mut self, at: Timestamp, run: &[u8], step: u32) -> Verdict {
        if self.idle.active {
            self.replay_idle();
        }
        let call = CallRef {
            run: small(run),
            step,
            part: 0,
        };
        Verdict::Event(at, self.step_end(call, true, None))
    }

    /// `agent run R  started` ([`plain_run_start`](super::plain::plain_run_start)): never part of an idle call, so a
    /// held one is settled first, as `hold_if_idle` would settle it. With a filter, the
    /// start goes straight to where the filter sets starts aside (a month has one per
    /// run), without an event made to be taken apart.
    pub(super) fn run_start_plainly(&mut self, n: u32, at: Timestamp, run: &[u8]) -> Verdict {
        if self.idle.active {
            self.replay_idle();
        }
        if let Some(filter) = self.out.filter.as_mut() {
            let loc = Loc {
                input: self.input,
                line: n,
            };
            filter.hold_start(small(run), at, loc);
            self.out.stats.events += 1;
            return Verdict::Held;
        }
        let run = RunEvent {
            run: small(run),
            what: Lifecycle::Started,
        };
        Verdict::Event(at, EventKind::Run(Box::new(run)))
    }

    /// `run`, `tool` and `args` are slices of `msg`, the line's message.
    fn start_idle(
        &mut self,
        msg: &[u8],
        run: &[u8],
        step: u32,
        tool: &[u8],
        args: &[u8],
        span: &Range<u64>,
    ) -> bool {
        // One check of the line's text rather than one per field.
        let Some([run, tool, args]) = text_parts(msg, [run, tool, args]) else {
            return false;
        };
        let filter = self.out.filter.as_ref().expect("filtering");
        let idle = &mut self.idle;
        let tool_kind = &mut idle.tool_kind;
        if tool.is_empty()
            || idle.tools.get(tool.as_bytes(), || {
                tool_kind.get(tool, |t| filter.tool_names_effect(t))
            })
            || args_name_money(args)
            || filter.knows(run, step)
            || !(is_flat_object(args.as_bytes())
                || (serde_json::from_str::<IgnoredAny>(args).is_ok()
                    && !args_nest_too_deep(args.as_bytes())))
        {
            return false;
        }
        idle.active = true;
        // A run makes several calls in a row: its id is copied (and read) once for them.
        if !same_bytes(idle.run.as_bytes(), run.as_bytes()) {
            idle.run.clear();
            idle.run.push_str(run);
            idle.run_has_blank = run.bytes().any(|b| b.is_ascii_whitespace());
        }
        idle.step = step;
        idle.raw.clear();
        idle.lines.clear();
        idle.attempts = 0;
        idle.answered = false;
        idle.safe = true;
        idle.dated = true;
        idle.span = span.clone();
        true
    }

    /// The usual next lines of a held call (`POST url  (attempt 1)`, `200 OK`, the step's
    /// `ok`) recognised without splitting them into fields: three lines in four of a month
    /// of traces. `None` leaves the line to [`TextParser::hold_if_idle`], which decides
    /// every case, these included, the same way.
    pub(super) fn continue_idle_plainly(&mut self, l: Unsplit) -> Option<Verdict> {
        let msg = l.msg;
        let idle = &mut self.idle;
        if !idle.active || self.out.filter.is_none() {
            return None;
        }
        let ended = idle.is_end_line(msg);
        let unnamed = idle.without_own_names(msg);
        if ended {
            if idle.answered != (idle.attempts == 1) {
                return None;
            }
        } else if let Some(status) = plain_answer(unnamed) {
            if idle.attempts != 1 || idle.answered || !(200..300).contains(&status) {
                return None;
            }
            idle.answered = true;
        } else if idle.attempts == 0
            && let Some(safe) =
                (idle.requests).get(unnamed, || plain_request(unnamed, &mut idle.url_kind))
        {
            idle.attempts = 1;
            idle.safe &= safe;
        } else {
            return None;
        }
        self.hold_line(l);
        if ended {
            self.retire_idle(l.span.end);
        }
        Some(Verdict::Held)
    }

    /// `Some(true)`: the call is still idle; `Some(false)`: its step ended and it stayed
    /// idle; `None`: the line is not the plain next line of an idle call.
    fn continues_idle(&mut self, f: &Fields) -> Option<bool> {
        if !self.idle.is_named_by(f) {
            return None;
        }
        let first = *f.plain.first()?;
        let idle = &mut self.idle;
        if let Some((method, url)) = http_request(first) {
            let number = f.plain.iter().find_map(|p| {
                p.strip_prefix(b"(attempt ")
                    .and_then(|r| r.strip_suffix(b")"))
            })?;
            let number = parse_u32(number.trim_ascii())?;
            let keyed = f.idempotency_key().is_some();
            let url = as_text(url)?;
            idle.attempts += 1;
            idle.safe &= SAFE_METHODS.contains(&method);
            let plain = idle.attempts == 1
                && number == 1
                && !keyed
                && !idle.url_kind.get(url, url_names_effect);
            return plain.then_some(true);
        }
        if let Some((status, _)) = status_line(first) {
            let plain = idle.attempts == 1
                && !idle.answered
                && (200..300).contains(&status)
                && EFFECT_ID_TOKENS
                    .iter()
                    .all(|t| f.token(t.as_bytes()).is_none())
                && !f
                    .token(b"replayed")
                    .is_some_and(|v| v.eq_ignore_ascii_case(b"true"))
                && AMOUNT_TOKENS.iter().all(|t| f.token(t).is_none());
            idle.answered = true;
            return plain.then_some(true);
        }
        let (run, step) = agent_step(f)?;
        let ended_ok = run == idle.run.as_bytes()
            && step == idle.step
            && f.token(b"tool").is_none()
            && f.plain.get(2).copied() == Some(&b"ok"[..])
            && idle.answered == (idle.attempts == 1);
        ended_ok.then_some(false)
    }

    fn hold_line(&mut self, l: Unsplit) {
        let idle = &mut self.idle;
        let start = idle.raw.len();
        idle.raw.extend_from_slice(l.msg);
        idle.lines.push(HeldLine {
            n: l.n,
            at: l.at,
            msg: start..idle.raw.len(),
            place: self.place.clone(),
        });
        idle.dated &= l.dated;
    }
}

/// `part`, a slice of `whole`'s bytes, as text (`None` if it is not one).
fn within<'a>(whole: &'a str, part: &[u8]) -> Option<&'a str> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    whole.get(start..start.checked_add(part.len())?)
}

/// `parts`, slices of `whole`, as text, if `whole` is UTF-8 and each part lies within it
/// on character boundaries. An ASCII line (nearly every one) needs no boundary checks.
fn text_parts<'a, const N: usize>(whole: &'a [u8], parts: [&'a [u8]; N]) -> Option<[&'a str; N]> {
    let inside = |part: &[u8]| {
        let start = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
        start <= whole.len() && part.len() <= whole.len() - start
    };
    if whole.is_ascii() && parts.iter().all(|p| inside(p)) {
        // SAFETY: every part lies within `whole`, whose bytes are all ASCII: valid UTF-8.
        return Some(parts.map(|p| unsafe { std::str::from_utf8_unchecked(p) }));
    }
    let whole = as_text(whole)?;
    let mut texts = [""; N];
    for (text, part) in texts.iter_mut().zip(parts) {
        *text = within(whole, part)?;
    }
    Some(texts)
}
