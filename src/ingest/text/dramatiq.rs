//! Dramatiq's worker log, in its own layout (`[2026-12-07 15:56:29,196] [PID 27452]
//! [Thread-4] [dramatiq.middleware.retries.Retries] [INFO] Retrying message '303c...' in
//! 1644 milliseconds.`): a message is a tool's call, its id the run and the message its one
//! step, as a Celery task is ([`super::celery`]). What the worker logs at its default level
//! (INFO) is a message's failure, `Failed to process message issue_refund(order='A-1',
//! amount_p=4500) with unhandled exception.` (its actor and arguments, a traceback below),
//! and what the Retries middleware then does with it, on the same thread: `Retrying message
//! '<id>' in N milliseconds.` (the whole message runs again, a step retry: SPEC §5),
//! `Retries exceeded for message '<id>'.` or `Aborting message '<id>'.` (the step ends
//! failed). Its start (`Received message ... with id '<id>'.`) is logged at DEBUG only, and
//! its success never.
//!
//! So a failed message that no `Received` line named is a call standing in for it
//! (`?dramatiq:PID 27452/Thread-4:N`), renamed to the message's id at the input's end once
//! the Retries line after it named it. Its dispatch is dated at its thread's latest line
//! since that thread's previous message ended (the task's own `calling payments ...`), the
//! nearest its start is known, else at the failure; the retry's dispatch at the retry line
//! plus its delay, the earliest Dramatiq runs it again (on any thread).

use super::{TextParser, Verdict, small};
use crate::event::{CallRef, EventKind, Text, ToolCall};
use crate::ingest::python_repr::python_call;
use crate::time::{Duration, Timestamp};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// A Dramatiq worker's threads, by `PID n/THREAD`, and the calls that stood in for
/// messages until a line named them.
#[derive(Default)]
pub(super) struct Workers {
    /// A line in Dramatiq's layout was read: its lines say their thread.
    pub(super) seen: bool,
    threads: FxHashMap<Box<[u8]>, Thread>,
    /// The thread of the line being read, when it is Dramatiq's own line (its logger's
    /// name starts `dramatiq`).
    own_line: Option<Box<[u8]>>,
    /// The thread of the line being read, when it is a task's or a library's line.
    line_thread: Option<Box<[u8]>>,
    /// Messages to be run again (a Retries line), oldest first, each with when it is due.
    waiting: VecDeque<(Message, Timestamp)>,
    /// Each stand-in's call and the message it turned out to be.
    named: FxHashMap<CallRef, CallRef>,
    stand_ins: usize,
}

/// How many messages to be run again are remembered while no thread has taken them.
const WAITING_KEPT: usize = 1024;

#[derive(Default)]
struct Thread {
    /// The message it runs or last failed, once a line named it or its failure.
    message: Option<Message>,
    /// Its latest line, not Dramatiq's own, since its previous message ended.
    latest: Option<Timestamp>,
}

#[derive(Clone)]
struct Message {
    call: CallRef,
    /// Named by its id (else a stand-in).
    named: bool,
    /// Taken by its thread as the message due to run again ([`TextParser::dramatiq_line`]).
    taken: bool,
    actor: Text,
    /// Its arguments as JSON, when they could be read.
    args: Option<Text>,
}

/// The parts of Dramatiq's layout after the stamp: ` [PID 27452] [Thread-4]
/// [dramatiq.worker.WorkerThread] [ERROR]`, from `LOGFORMAT` in `dramatiq/cli.py`.
pub(super) struct Header<'a> {
    /// `PID 27452/Thread-4`, the parts that say the thread.
    pid: &'a [u8],
    thread: &'a [u8],
    logger: &'a [u8],
    /// How many bytes it takes, up to the blank before the message.
    pub(super) len: usize,
}

/// Dramatiq's header at the start of `rest` (what follows the stamp's closing bracket).
pub(super) fn header(rest: &[u8]) -> Option<Header<'_>> {
    if !rest.starts_with(b" [PID ") {
        return None;
    }
    let mut parts = [&b""[..]; 4];
    let mut at = 0;
    for part in &mut parts {
        let open = at + 1;
        (rest.get(at) == Some(&b' ') && rest.get(open) == Some(&b'[')).then_some(())?;
        let close = open + memchr::memchr(b']', &rest[open..])?;
        *part = &rest[open + 1..close];
        at = close + 1;
    }
    let [pid, thread, logger, level] = parts;
    let pid_ok = pid.len() > 4 && pid[4..].iter().all(u8::is_ascii_digit);
    let level_ok = !level.is_empty() && level.iter().all(u8::is_ascii_uppercase);
    let named = !thread.is_empty() && !logger.is_empty() && !logger.contains(&b' ');
    (pid_ok && level_ok && named).then_some(Header {
        pid,
        thread,
        logger,
        len: at,
    })
}

/// What one of Dramatiq's own lines says of a message.
#[derive(Debug, PartialEq)]
enum Said<'a> {
    /// `Received message REPR with id 'ID'.` (DEBUG).
    Received { repr: &'a [u8], id: &'a [u8] },
    /// `Failed to process message REPR with unhandled exception.`
    Failed { repr: &'a [u8] },
    /// `Retrying message 'ID' in N milliseconds.`
    Retrying { id: &'a [u8], after: Duration },
    /// `Retries exceeded for message 'ID'.`, `Aborting message 'ID'.`
    GaveUp { id: &'a [u8], why: &'static str },
}

fn said(msg: &[u8]) -> Option<Said<'_>> {
    if let Some(rest) = msg.strip_prefix(b"Retrying message ") {
        let (id, rest) = quoted(rest)?;
        let ms = rest
            .strip_prefix(b" in ")?
            .strip_suffix(b" milliseconds.")?;
        let ms = (ms.len() <= 12 && !ms.is_empty() && ms.iter().all(u8::is_ascii_digit))
            .then(|| ms.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))?;
        return Some(Said::Retrying {
            id,
            after: Duration(ms * 1_000_000),
        });
    }
    if let Some(rest) = msg.strip_prefix(b"Failed to process message ") {
        let repr = rest.strip_suffix(b" with unhandled exception.")?;
        return Some(Said::Failed { repr });
    }
    if let Some(rest) = msg.strip_prefix(b"Received message ") {
        let cut = memchr::memmem::rfind(rest, b" with id ")?;
        let (id, end) = quoted(&rest[cut + 9..])?;
        return (end == b".").then_some(Said::Received {
            repr: &rest[..cut],
            id,
        });
    }
    let (rest, why) = match msg.strip_prefix(b"Retries exceeded for message ") {
        Some(rest) => (rest, "Dramatiq: retries exceeded"),
        None => (
            msg.strip_prefix(b"Aborting message ")?,
            "Dramatiq: aborted (an exception the actor throws)",
        ),
    };
    let (id, end) = quoted(rest)?;
    (end == b".").then_some(Said::GaveUp { id, why })
}

/// `'ID'REST`: Python's `repr` of a message id, and what follows it.
fn quoted(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let inner = text.strip_prefix(b"'")?;
    let close = memchr::memchr(b'\'', inner)?;
    let id = &inner[..close];
    (!id.is_empty() && !id.contains(&b' ')).then_some((id, &inner[close + 1..]))
}

fn message_call(id: &[u8]) -> CallRef {
    CallRef {
        run: small(id),
        step: 1,
        part: 0,
    }
}

/// A message's dispatch: a tool call of its actor, with its arguments when read.
fn dispatch(message: &Message, call: CallRef) -> EventKind {
    let (args_raw, args) = match &message.args {
        Some(json) => (json.clone(), serde_json::Value::Null),
        None => (Text::from_static_str("null"), serde_json::Value::Null),
    };
    EventKind::ToolCall(Box::new(ToolCall {
        call,
        tool: message.actor.clone(),
        args_raw,
        args,
    }))
}

impl TextParser {
    /// The input's end: each stand-in's events given the message its Retries line named.
    pub(super) fn settle_dramatiq(&mut self) {
        if !self.process.dramatiq.named.is_empty() {
            let named = std::mem::take(&mut self.process.dramatiq.named);
            self.rename_calls(&named);
        }
    }

    /// A line in Dramatiq's layout (`line`, whose header ends at `used`): notes its
    /// thread, and makes the call whose lines the thread's are now current.
    #[cold]
    pub(super) fn dramatiq_line(&mut self, line: &[u8], used: usize, at: Timestamp) {
        self.process.dramatiq.own_line = None;
        let Some(close) = memchr::memchr(b']', line) else {
            return;
        };
        let Some(h) = line.get(close + 1..used).and_then(header) else {
            return;
        };
        let key: Box<[u8]> = [h.pid, b"/", h.thread].concat().into();
        self.process.dramatiq.line_thread = None;
        if h.logger.starts_with(b"dramatiq") {
            self.process.dramatiq.own_line = Some(key);
            return;
        }
        let workers = &mut self.process.dramatiq;
        let thread = workers.threads.entry(key.clone()).or_default();
        thread.latest = Some(at);
        workers.line_thread = Some(key);
        // A line of the task or of a library it calls: its message's, when named. A thread
        // that runs none known runs the message due to run again longest ago, if one is due
        // by now: a guess by turn, as a Celery pool's ([`super::celery::Pool`]).
        if thread.message.as_ref().is_some_and(|m| !m.named) {
            // A failed message no Retries line named: it is over.
            thread.message = None;
        }
        let mut taken = None;
        if thread.message.is_none()
            && let Some(w) = workers.waiting.iter().position(|(_, due)| *due <= at)
            && let Some((message, _)) = workers.waiting.remove(w)
        {
            taken = Some(message.call.clone());
            thread.message = Some(Message {
                taken: true,
                ..message
            });
        }
        let named = thread.message.as_ref().filter(|m| m.named);
        self.process.current_call = named.map(|m| m.call.clone());
        if let Some(call) = taken {
            self.begin_call(&call, at);
        }
    }

    /// A final answer was read (a success, or a refusal sending again cannot change): the
    /// message its thread took by turn is over, its success unlogged, and the thread's next
    /// lines are another message's.
    pub(super) fn dramatiq_answered(&mut self) {
        let workers = &mut self.process.dramatiq;
        let Some(thread) = (workers.line_thread.as_ref()).and_then(|k| workers.threads.get_mut(k))
        else {
            return;
        };
        if thread.message.as_ref().is_some_and(|m| m.taken) {
            thread.message = None;
        }
    }

    /// One of Dramatiq's own lines at `at` (see the module's doc); `None` for any other.
    #[cold]
    pub(super) fn dramatiq_message(&mut self, at: Timestamp, msg: &[u8]) -> Option<Verdict> {
        let key = self.process.dramatiq.own_line.clone()?;
        let said = said(msg)?;
        // Not read again alone: what it says rests on the lines before it.
        self.place = None;
        let thread = self
            .process
            .dramatiq
            .threads
            .entry(key.clone())
            .or_default();
        match said {
            Said::Received { repr, id } => {
                let (actor, args) = python_call(repr)?;
                let call = message_call(id);
                self.process
                    .dramatiq
                    .waiting
                    .retain(|(m, _)| m.call != call);
                let message = Message {
                    call,
                    named: true,
                    taken: false,
                    actor: small(actor),
                    args: args.map(|a| a.as_str().into()),
                };
                thread.message = Some(message.clone());
                thread.latest = None;
                self.begin_call(&message.call, at);
                Some(Verdict::Event(at, dispatch(&message, message.call.clone())))
            }
            Said::Failed { repr } => {
                let (actor, args) = python_call(repr)?;
                let since = thread.latest.take().unwrap_or(at);
                if let Some(m) = thread.message.as_ref().filter(|m| m.named) {
                    // Its traceback below is the failure of the message its thread runs.
                    self.process.current_call = Some(m.call.clone());
                    return Some(Verdict::Ignored);
                }
                let name = format!(
                    "?dramatiq:{}:{}",
                    String::from_utf8_lossy(&key),
                    self.process.dramatiq.stand_ins
                );
                self.process.dramatiq.stand_ins += 1;
                let message = Message {
                    call: message_call(name.as_bytes()),
                    named: false,
                    taken: false,
                    actor: small(actor),
                    args: args.map(|a| a.as_str().into()),
                };
                thread.message = Some(message.clone());
                self.begin_call(&message.call, since);
                Some(Verdict::Event(
                    since,
                    dispatch(&message, message.call.clone()),
                ))
            }
            Said::Retrying { id, after } => {
                let failed = thread.message.take()?;
                thread.latest = None;
                let call = message_call(id);
                if !failed.named {
                    self.process
                        .dramatiq
                        .named
                        .insert(failed.call.clone(), call.clone());
                }
                self.process.current_call = None;
                let due = at.plus(after);
                let workers = &mut self.process.dramatiq;
                if workers.waiting.len() == WAITING_KEPT {
                    workers.waiting.pop_front();
                }
                let again = Message {
                    call: call.clone(),
                    named: true,
                    taken: false,
                    ..failed.clone()
                };
                workers.waiting.push_back((again, due));
                Some(Verdict::Event(due, dispatch(&failed, call)))
            }
            Said::GaveUp { id, why } => {
                let failed = thread.message.take();
                thread.latest = None;
                let call = message_call(id);
                self.process
                    .dramatiq
                    .waiting
                    .retain(|(m, _)| m.call != call);
                if let Some(failed) = failed.filter(|m| !m.named) {
                    self.process
                        .dramatiq
                        .named
                        .insert(failed.call, call.clone());
                }
                let end = self.step_end(call, false, Some(Text::from_static_str(why)));
                self.process.current_call = None;
                Some(Verdict::Event(at, end))
            }
        }
    }
}

#[cfg(test)]
mod tests;
