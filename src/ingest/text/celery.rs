//! Celery's worker log (`[2026-12-06 07:39:46,898: INFO/MainProcess] Task
//! tasks.issue_refund[9fc5...] received`): a task is a tool's call, its id the run and the
//! task its one step. `received` is a dispatch, and a second one after `retry:` is the step
//! run again (Celery's `autoretry_for` and `self.retry` run the whole task anew: a step
//! retry, SPEC §5); `retry: Retry in 2s: ReadTimeout(...)` is the dispatch's failure;
//! `succeeded in 0.003s: {...}` and `raised unexpected: Exc(...)` end the step. The task's
//! arguments are not in these lines: its effects are matched by time.

use super::{TextParser, Verdict, small};
use crate::classify::classify_failure;
use crate::event::{CallRef, EventKind, Failure, Text, ToolCall};
use crate::time::Timestamp;

/// What a task line says.
#[derive(Debug, PartialEq)]
enum Said<'a> {
    Received,
    Retry { error: &'a [u8], message: &'a [u8] },
    Succeeded,
    Raised { error: &'a [u8], message: &'a [u8] },
}

/// `Task NAME[ID] WHAT`: the task's name, its id and what happened.
fn task_line(msg: &[u8]) -> Option<(&[u8], &[u8], Said<'_>)> {
    let rest = msg.strip_prefix(b"Task ")?;
    let open = rest.iter().position(|&b| b == b'[')?;
    let close = open + rest[open..].iter().position(|&b| b == b']')?;
    let (name, id) = (&rest[..open], &rest[open + 1..close]);
    let is_name = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':');
    if name.is_empty() || id.is_empty() || !name.iter().all(is_name) || id.contains(&b' ') {
        return None;
    }
    let what = rest[close + 1..].strip_prefix(b" ")?;
    let said = if what == b"received" {
        Said::Received
    } else if let Some(retry) = what.strip_prefix(b"retry: ") {
        // `Retry in 2s: EXC` or `Retry at 2026-...: EXC`.
        let (error, message) = exception(after(retry, b": ")?);
        Said::Retry { error, message }
    } else if what.starts_with(b"succeeded in ") {
        Said::Succeeded
    } else if let Some(raised) = what.strip_prefix(b"raised unexpected: ") {
        let (error, message) = exception(raised);
        Said::Raised { error, message }
    } else {
        return None;
    };
    Some((name, id, said))
}

/// What follows the first `sep` in `text`.
fn after<'a>(text: &'a [u8], sep: &[u8]) -> Option<&'a [u8]> {
    let at = text.windows(sep.len()).position(|w| w == sep)?;
    Some(&text[at + sep.len()..])
}

/// Python's `repr` of an exception, `ReadTimeout(ReadTimeoutError("..."))`: its class and
/// what is inside its parentheses.
fn exception(repr: &[u8]) -> (&[u8], &[u8]) {
    let repr = repr.trim_ascii();
    match repr.iter().position(|&b| b == b'(') {
        Some(open) if repr.ends_with(b")") => (&repr[..open], &repr[open + 1..repr.len() - 1]),
        _ => (repr, &b""[..]),
    }
}

impl TextParser {
    /// A Celery worker's task line at `at` (see the module's doc); `None` for any other.
    #[cold]
    pub(super) fn celery_task(&mut self, at: Timestamp, msg: &[u8]) -> Option<Verdict> {
        let (name, id, said) = task_line(msg)?;
        let call = CallRef {
            run: small(id),
            step: 1,
        };
        // Another task received while one runs waits for the pool: the client lines
        // that follow are the running one's.
        let running = self.celery_running.clone();
        if !matches!(said, Said::Received) && running.as_ref() == Some(&call) {
            self.celery_running = None;
        }
        let kind = match said {
            Said::Received => {
                if running.is_none_or(|r| r == call) {
                    self.celery_running = Some(call.clone());
                    self.begin_call(&call, at);
                }
                EventKind::ToolCall(Box::new(ToolCall {
                    call,
                    tool: small(name),
                    args_raw: Text::from_static_str("null"),
                    args: serde_json::Value::Null,
                }))
            }
            Said::Retry { error, message } => {
                let (error, message) = (small(error), small(message));
                self.note_outcome(&Some(call.clone()), true);
                EventKind::Failure(Box::new(Failure {
                    call: Some(call),
                    attempt: None,
                    class: classify_failure(&error, &message),
                    error,
                    message,
                }))
            }
            Said::Succeeded => self.step_end(call, true, None),
            Said::Raised { error, message } => {
                let error = format!("{}: {}", small(error), small(message));
                self.step_end(call, false, Some(error.as_str().into()))
            }
        };
        Some(Verdict::Event(at, kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tasks_lines_say_what_happened_to_it() {
        let id = b"9fc57886-e389-4be0-bc99-e18789513046";
        let received =
            task_line(b"Task tasks.issue_refund[9fc57886-e389-4be0-bc99-e18789513046] received");
        assert_eq!(
            received,
            Some((&b"tasks.issue_refund"[..], &id[..], Said::Received))
        );
        let retry = task_line(b"Task tasks.issue_refund[9fc57886-e389-4be0-bc99-e18789513046] retry: Retry in 2s: ReadTimeout(ReadTimeoutError(\"HTTPConnectionPool(host='127.0.0.1', port=8716): Read timed out. (read timeout=1.0)\"))");
        let Some((_, _, Said::Retry { error, message })) = retry else {
            panic!("{retry:?}")
        };
        assert_eq!(error, b"ReadTimeout");
        assert!(message.starts_with(b"ReadTimeoutError(\"HTTPConnectionPool"));
        let done =
            task_line(b"Task tasks.issue_refund[9fc5] succeeded in 0.0034s: {'id': 're_0002'}");
        assert!(matches!(done, Some((_, _, Said::Succeeded))));
        let raised = task_line(
            b"Task tasks.issue_refund[9fc5] raised unexpected: HTTPError('422 Client Error')",
        );
        assert!(matches!(
            raised,
            Some((
                _,
                _,
                Said::Raised {
                    error: b"HTTPError",
                    ..
                }
            ))
        ));
    }

    #[test]
    fn other_lines_are_no_tasks() {
        for line in [
            &b"Task tasks.issue_refund[9fc5] started thinking"[..],
            b"Task list [3 items] received",
            b"Task tasks.issue_refund[] received",
            b"Tasks done",
        ] {
            assert_eq!(task_line(line), None, "{}", String::from_utf8_lossy(line));
        }
    }
}
