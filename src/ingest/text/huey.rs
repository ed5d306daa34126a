//! Huey's consumer log, in its default layout (`[%(asctime)s] %(levelname)s:%(name)s:
//! %(threadName)s:%(message)s`, `huey/consumer_options.py`: `[2026-12-07 16:25:25,289]
//! INFO:huey:Worker-1:Executing huey_tasks.issue_refund: 1d23... 3 retries`): a task is a
//! tool's call, its id the run and the task its one step, as a Celery task is
//! ([`super::celery`]). Each `Executing TASK` is a dispatch of its step, so a task that
//! Huey's `retries=` runs again (`Requeueing ID, 2 retries`, then `Executing` once more) is
//! a step retry (SPEC §5); `Unhandled exception in task ID.` opens the traceback whose
//! exception is the dispatch's failure; `TASK executed in 0.006s` ends the step. The task's
//! arguments are not in these lines: its effects are matched by time. The lines after
//! `Executing` are its task's, as in a solo Celery worker.

use super::{TextParser, Verdict, small};
use crate::event::{CallRef, EventKind, Text, ToolCall};
use crate::time::Timestamp;

/// The length of Huey's header after its stamp's bracket (` INFO:huey:Worker-1:`): a
/// level in capitals, the logger's name and the worker's (a thread's or a process id).
pub(super) fn header_len(rest: &[u8]) -> Option<usize> {
    let rest = rest.strip_prefix(b" ")?;
    let mut words = [&b""[..]; 3];
    let mut at = 0;
    for word in &mut words {
        let colon = at + memchr::memchr(b':', &rest[at..])?;
        *word = &rest[at..colon];
        at = colon + 1;
    }
    let [level, logger, worker] = words;
    let level_ok = !level.is_empty() && level.iter().all(u8::is_ascii_uppercase);
    // The logger is Huey's own (`huey`, `huey.consumer`): another `LEVEL:name:word:` line
    // is Python's default layout with a colon in its message.
    let hueys = logger == b"huey" || logger.starts_with(b"huey.");
    let worker_ok = !worker.is_empty() && !worker.iter().any(u8::is_ascii_whitespace);
    (level_ok && hueys && worker_ok).then_some(at + 1)
}

/// What a consumer's line says of a task.
#[derive(Debug, PartialEq)]
enum Said<'a> {
    /// `Executing NAME: ID ...`.
    Executing { name: &'a [u8], id: &'a [u8] },
    /// `Unhandled exception in task ID.`: its traceback follows.
    Raised { id: &'a [u8] },
    /// `NAME: ID ... executed in 0.006s`.
    Done { id: &'a [u8] },
}

/// `huey_tasks.issue_refund: 1d23... @2026-12-07 16:25:28.317579 2 retries`: Huey's
/// `repr` of a task, its name and id.
fn task(repr: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = memchr::memmem::find(repr, b": ")?;
    let name = &repr[..colon];
    let rest = &repr[colon + 2..];
    let id = &rest[..memchr::memchr(b' ', rest).unwrap_or(rest.len())];
    let is_name = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.');
    let named = !name.is_empty() && name.iter().all(is_name) && name.contains(&b'.');
    (named && !id.is_empty()).then_some((name, id))
}

fn said(msg: &[u8]) -> Option<Said<'_>> {
    if let Some(repr) = msg.strip_prefix(b"Executing ") {
        let (name, id) = task(repr)?;
        return Some(Said::Executing { name, id });
    }
    if let Some(rest) = msg.strip_prefix(b"Unhandled exception in task ") {
        let id = rest.strip_suffix(b".")?;
        return (!id.is_empty() && !id.contains(&b' ')).then_some(Said::Raised { id });
    }
    let cut = memchr::memmem::rfind(msg, b" executed in ")?;
    let seconds = msg[cut + 13..].strip_suffix(b"s")?;
    let timed = !seconds.is_empty() && seconds.iter().all(|b| b.is_ascii_digit() || *b == b'.');
    let (_, id) = task(&msg[..cut])?;
    timed.then_some(Said::Done { id })
}

fn task_call(id: &[u8]) -> CallRef {
    CallRef {
        run: small(id),
        step: 1,
        part: 0,
    }
}

impl TextParser {
    /// A Huey consumer's line at `at` (see the module's doc); `None` for any other.
    #[cold]
    pub(super) fn huey_line(&mut self, at: Timestamp, msg: &[u8]) -> Option<Verdict> {
        if msg == b"The following commands are available:" {
            // Its `+ NAME` lines follow, without a stamp.
            self.process.tail = super::tail::Tail::Listing;
            return Some(Verdict::Ignored);
        }
        let said = said(msg)?;
        if self.idle.is_active() {
            // A held call is settled before a task's line moves the current call on, as
            // before a Celery pool's line.
            self.replay_idle();
        }
        let kind = match said {
            Said::Executing { name, id } => {
                let call = task_call(id);
                self.begin_call(&call, at);
                EventKind::ToolCall(Box::new(ToolCall {
                    call,
                    tool: small(name),
                    args_raw: Text::from_static_str("null"),
                    args: serde_json::Value::Null,
                }))
            }
            Said::Raised { id } => {
                // Its traceback below is the failure of the task's latest dispatch.
                self.process.current_call = Some(task_call(id));
                return Some(Verdict::Ignored);
            }
            Said::Done { id } => self.step_end(task_call(id), true, None),
        };
        Some(Verdict::Event(at, kind))
    }
}

#[cfg(test)]
mod tests;
