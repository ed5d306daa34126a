//! An idle call set aside until every input is read, in a third of the memory of its events:
//! a month of emails is held this way. The usual shape (a tool call, one request, its
//! answer, the step's end) is packed; anything else is kept as events.

use crate::classify::FailureClass;
use crate::event::{Attempt, CallRef, Event, EventKind, Loc, Response, StepEnd, Text, ToolCall};
use crate::time::Timestamp;
use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
pub enum Deferred {
    Packed(Box<PackedCall>),
    Loose(Text, Vec<Event>),
}

/// Where a deferred call's lines lie in a file that can be read again, from its tool-call
/// line to its step's end: 16 bytes instead of its events, for the idle POSTs (emails) that
/// fill a month of traces (a million or more). The file is known from the list it is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeferredLines {
    /// Byte offset of the first line (the low 40 bits: up to a terabyte) and length of the
    /// lines (the high 24 bits: up to 16 MiB), in the file as stored.
    place: u64,
    pub first_line: u32,
    /// [`super::run_hash`] of the call's run.
    pub run_hash: u32,
}

impl DeferredLines {
    const OFFSET_BITS: u32 = 40;

    /// `None` when the offset or the length does not fit: the call is then kept as events.
    pub fn new(offset: u64, len: u64, first_line: u32, run_hash: u32) -> Option<Self> {
        Self::fits(offset, len).then_some(DeferredLines {
            place: offset | len << Self::OFFSET_BITS,
            first_line,
            run_hash,
        })
    }

    /// Whether a place of `len` bytes at `offset` can be kept.
    pub fn fits(offset: u64, len: u64) -> bool {
        offset >> Self::OFFSET_BITS == 0 && len >> (64 - Self::OFFSET_BITS) == 0
    }

    pub fn offset(&self) -> u64 {
        self.place & ((1 << Self::OFFSET_BITS) - 1)
    }

    pub fn byte_len(&self) -> usize {
        (self.place >> Self::OFFSET_BITS) as usize
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct PackedCall {
    call: CallRef,
    tool: Text,
    /// The arguments as written; correlation parses them.
    args_raw: Text,
    number: u32,
    method: Option<Text>,
    url: Option<Text>,
    status: u16,
    class: FailureClass,
    answers: Option<u32>,
    message: Text,
    end_error: Option<Text>,
    /// Time and line of the tool call, the request, the answer and the step's end.
    stamps: [(Timestamp, Loc); 4],
}

impl Deferred {
    pub fn run(&self) -> &str {
        match self {
            Deferred::Packed(p) => &p.call.run,
            Deferred::Loose(run, _) => run,
        }
    }

    pub fn pack(call: CallRef, events: Vec<Event>) -> Deferred {
        let [a, b, c, d] = match <[Event; 4]>::try_from(events) {
            Ok(four) => four,
            Err(events) => return Deferred::Loose(call.run, events),
        };
        let stamps = [(a.at, a.loc), (b.at, b.loc), (c.at, c.loc), (d.at, d.loc)];
        let same = |c: &Option<CallRef>| c.as_ref() == Some(&call);
        match (a.kind, b.kind, c.kind, d.kind) {
            (
                EventKind::ToolCall(t),
                EventKind::Attempt(at),
                EventKind::Response(r),
                EventKind::StepEnd(e),
            ) if t.call == call
                && same(&at.call)
                && same(&r.call)
                && e.call == call
                && at.key.is_none()
                // A client library's request line says nothing of its headers: the key is
                // unknown, which the packed form does not keep.
                && !at.key_unseen
                && r.effect_id.is_none()
                && !r.replayed
                && r.amount.is_none()
                && e.ok =>
            {
                Deferred::Packed(Box::new(PackedCall {
                    call,
                    tool: t.tool,
                    args_raw: t.args_raw,
                    number: at.number,
                    method: at.method,
                    url: at.url,
                    status: r.status,
                    class: r.class,
                    answers: r.attempt,
                    message: r.message,
                    end_error: e.error,
                    stamps,
                }))
            }
            (ka, kb, kc, kd) => {
                let events = [ka, kb, kc, kd]
                    .into_iter()
                    .zip(stamps)
                    .map(|(kind, (at, loc))| Event { at, loc, kind })
                    .collect();
                Deferred::Loose(call.run, events)
            }
        }
    }

    /// The events again, as read.
    pub fn into_events(self) -> Vec<Event> {
        let p = match self {
            Deferred::Loose(_, events) => return events,
            Deferred::Packed(p) => *p,
        };
        let ev = |i: usize, kind| Event {
            at: p.stamps[i].0,
            loc: p.stamps[i].1,
            kind,
        };
        let call = || Some(p.call.clone());
        vec![
            ev(
                0,
                EventKind::ToolCall(Box::new(ToolCall {
                    call: p.call.clone(),
                    tool: p.tool,
                    args: Value::Null,
                    args_raw: p.args_raw,
                })),
            ),
            ev(
                1,
                EventKind::Attempt(Box::new(Attempt {
                    call: call(),
                    number: p.number,
                    method: p.method,
                    url: p.url,
                    key: None,
                    key_unseen: false,
                    placed: false,
                })),
            ),
            ev(
                2,
                EventKind::Response(Box::new(Response {
                    call: call(),
                    attempt: p.answers,
                    status: p.status,
                    class: p.class,
                    effect_id: None,
                    replayed: false,
                    amount: None,
                    message: p.message,
                })),
            ),
            ev(
                3,
                EventKind::StepEnd(Box::new(StepEnd {
                    call: p.call.clone(),
                    ok: true,
                    error: p.end_error,
                })),
            ),
        ]
    }
}
