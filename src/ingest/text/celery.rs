//! Celery's worker log (`[2026-12-06 07:39:46,898: INFO/MainProcess] Task
//! tasks.issue_refund[9fc5...] received`): a task is a tool's call, its id the run and the
//! task its one step. `received` is a dispatch, and a second one after `retry:` is the step
//! run again (Celery's `autoretry_for` and `self.retry` run the whole task anew: a step
//! retry, SPEC §5); `retry: Retry in 2s: ReadTimeout(...)` is the dispatch's failure;
//! `succeeded in 0.003s: {...}` and `raised unexpected: Exc(...)` end the step. The task's
//! arguments are not in these lines: its effects are matched by time.

use super::client::ClientLog;
use super::{TextParser, Verdict, small};
use crate::classify::classify_failure;
use crate::event::{CallRef, EventKind, Failure, Text, ToolCall};
use crate::time::Timestamp;
use std::collections::VecDeque;

/// A worker's pool of processes (`-c 2`: `ForkPoolWorker-1`, `ForkPoolWorker-2`), each
/// running one task at a time, their lines interleaved in one log. The task lines name
/// their task; the lines of the libraries a task calls (httpx's `HTTP Request: POST ...`)
/// name only their process, so each process's task is remembered once a line of the
/// process names it. Until then a call stands in for it (`?celery:PROCESS:N`), renamed to
/// the task when a line names it, or at the input's end to the task received longest ago
/// that no process was seen running (the pool takes them in turn). Each process keeps its
/// own HTTP client's state.
#[derive(Default)]
pub(super) struct Pool {
    /// A Celery header naming a process was read: the file's lines say their process.
    pub(super) seen: bool,
    /// Tasks received and not yet seen in a process, oldest first, with when received.
    waiting: VecDeque<(CallRef, Timestamp)>,
    processes: Vec<Process>,
    /// The process whose client state is the parser's now.
    current: Option<usize>,
    /// The calls standing in for tasks not yet named, each with when its first line was
    /// written and the task it turned out to be.
    stand_ins: Vec<(CallRef, Timestamp, Option<CallRef>)>,
    /// Each process's place in `processes`: a worker restarting its processes
    /// (`--max-tasks-per-child`) names a new one each time.
    by_name: rustc_hash::FxHashMap<Box<[u8]>, usize>,
}

struct Process {
    /// The task it runs, with when that task was received (or the call standing in for it).
    task: Option<(CallRef, Timestamp)>,
    /// `task` is the stand-in of this index in [`Pool::stand_ins`].
    stand_in: Option<usize>,
    client: ClientLog,
}

impl Process {
    fn runs(&self, task: &CallRef) -> bool {
        self.task.as_ref().is_some_and(|(t, _)| t == task)
    }
}

impl Pool {
    fn index_of(&mut self, name: &[u8]) -> usize {
        if let Some(&i) = self.by_name.get(name) {
            return i;
        }
        self.processes.push(Process {
            task: None,
            stand_in: None,
            client: ClientLog::default(),
        });
        self.by_name.insert(name.into(), self.processes.len() - 1);
        self.processes.len() - 1
    }

    /// Process `i` runs `task`: taken from the waiting tasks (with when it was received)
    /// or from another process it was wrongly given to. A task given to `i` before by
    /// turn, that was not this one, goes back to the front of the queue.
    fn place_named(&mut self, i: usize, task: CallRef, at: Timestamp) -> Option<Timestamp> {
        if self.processes[i].runs(&task) {
            return None;
        }
        let received = match self.waiting.iter().position(|(t, _)| *t == task) {
            Some(w) => self.waiting.remove(w).map_or(at, |(_, r)| r),
            None => (self.processes.iter_mut())
                .find(|p| p.runs(&task))
                .and_then(|p| p.task.take())
                .map_or(at, |(_, r)| r),
        };
        if let Some(guessed) = self.processes[i].task.replace((task, received)) {
            self.waiting.push_front(guessed);
        }
        Some(received)
    }

    /// `task` ended or is to be run again: no process runs it now.
    fn task_over(&mut self, task: &CallRef) {
        for p in self.processes.iter_mut().filter(|p| p.runs(task)) {
            p.task = None;
        }
        self.waiting.retain(|(t, _)| t != task);
    }

    fn received(&mut self, task: CallRef, at: Timestamp) {
        if self.waiting.len() == WAITING_KEPT {
            self.waiting.pop_front();
        }
        self.waiting.push_back((task, at));
    }
}

/// The process in a Celery header (`[2026-12-06 07:39:46,898: INFO/ForkPoolWorker-2]`).
fn header_process(line: &[u8]) -> Option<&[u8]> {
    let close = memchr::memchr(b']', line)?;
    let head = line.get(1..close)?;
    let slash = head.iter().rposition(|&b| b == b'/')?;
    let name = &head[slash + 1..];
    (!name.is_empty()).then_some(name)
}

/// Where tasks are received: in a pool of processes it runs none of them.
const MAIN_PROCESS: &[u8] = b"MainProcess";

/// How many received tasks are remembered while no process has taken them: a worker whose
/// processes never log would otherwise keep every task of a month.
const WAITING_KEPT: usize = 1024;

/// The task a line names: a task line's (`Task NAME[ID] succeeded ...`), or the task
/// logger's prefix (`NAME[ID]: message`).
fn task_named(msg: &[u8]) -> Option<&[u8]> {
    if let Some((_, id, _)) = task_line(msg) {
        return Some(id);
    }
    let open = memchr::memchr(b'[', msg)?;
    let close = open + memchr::memchr(b']', &msg[open..])?;
    let (name, id) = (&msg[..open], &msg[open + 1..close]);
    let is_name = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':');
    let named = !name.is_empty() && !id.is_empty() && name.iter().all(is_name);
    (named && !id.contains(&b' ') && msg[close + 1..].starts_with(b": ")).then_some(id)
}

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
    /// A line with a Celery header (`line`, its message `msg`): if a pool process wrote it,
    /// its task is the current call, with that process's client state.
    #[cold]
    pub(super) fn pool_line(&mut self, line: &[u8], msg: &[u8], at: Timestamp) {
        let Some(process) = header_process(line) else {
            return;
        };
        let i = self.process.pool.index_of(process);
        if self.process.pool.current != Some(i) {
            // The live state goes to its process's slot; `i`'s comes out of its own.
            if let Some(c) = self.process.pool.current {
                std::mem::swap(
                    &mut self.process.client,
                    &mut self.process.pool.processes[c].client,
                );
            }
            std::mem::swap(
                &mut self.process.client,
                &mut self.process.pool.processes[i].client,
            );
            self.process.pool.current = Some(i);
        }
        if process == MAIN_PROCESS {
            // Its client lines (and those of its libraries) are no task's.
            self.process.current_call = None;
            return;
        }
        let named = task_named(msg).map(|id| CallRef {
            run: small(id),
            step: 1,
            part: 0,
        });
        match named {
            // The task its lines so far stood for: renamed at the input's end.
            Some(task) if self.process.pool.processes[i].stand_in.is_some() => {
                let k = self.process.pool.processes[i]
                    .stand_in
                    .take()
                    .expect("checked");
                let (stand_in, _) = self.process.pool.processes[i]
                    .task
                    .take()
                    .expect("a stand-in");
                self.process.pool.stand_ins[k].2 = Some(task.clone());
                self.process.pool.place_named(i, task.clone(), at);
                if let Some(n) = self.last_attempt.remove(&stand_in) {
                    self.last_attempt.insert(task.clone(), n);
                }
                self.process.current_call = Some(task);
            }
            Some(task) => match self.process.pool.place_named(i, task.clone(), at) {
                Some(received) => self.begin_call(&task, received),
                None => self.process.current_call = Some(task),
            },
            None => match &self.process.pool.processes[i].task {
                Some((task, _)) => self.process.current_call = Some(task.clone()),
                None => {
                    let k = self.process.pool.stand_ins.len();
                    let name = String::from_utf8_lossy(process);
                    let stand_in = CallRef {
                        run: format!("?celery:{name}:{k}").as_str().into(),
                        step: 1,
                        part: 0,
                    };
                    // Sent after the task it runs was received: at the latest, the last
                    // task received by now (an older one never run must not date it).
                    let since = (self.process.pool.waiting.iter().rev())
                        .map(|(_, r)| *r)
                        .find(|r| *r <= at)
                        .unwrap_or(at);
                    self.process
                        .pool
                        .stand_ins
                        .push((stand_in.clone(), at, None));
                    self.process.pool.processes[i].task = Some((stand_in.clone(), since));
                    self.process.pool.processes[i].stand_in = Some(k);
                    self.begin_call(&stand_in, since);
                }
            },
        }
    }

    /// The input's end: each stand-in's events renamed to its task, or, never named, to the
    /// tasks received before its first line and never seen running, in turn.
    pub(super) fn settle_pool(&mut self) {
        if self.process.pool.stand_ins.is_empty() {
            return;
        }
        let mut unclaimed: Vec<Option<&(CallRef, Timestamp)>> =
            self.process.pool.waiting.iter().map(Some).collect();
        let mut renamed: rustc_hash::FxHashMap<CallRef, CallRef> = Default::default();
        for (stand_in, first, named) in &self.process.pool.stand_ins {
            let task = named.clone().or_else(|| {
                let slot = (unclaimed.iter_mut()).find(|w| w.is_some_and(|(_, r)| r <= first))?;
                slot.take().map(|(t, _)| t.clone())
            });
            if let Some(task) = task {
                renamed.insert(stand_in.clone(), task);
            }
        }
        self.rename_calls(&renamed);
    }

    /// A Celery worker's task line at `at` (see the module's doc); `None` for any other.
    #[cold]
    pub(super) fn celery_task(&mut self, at: Timestamp, msg: &[u8]) -> Option<Verdict> {
        let (name, id, said) = task_line(msg)?;
        let call = CallRef {
            run: small(id),
            step: 1,
            part: 0,
        };
        // Each process's task is known from its lines ([`Pool`]), once a pool process has
        // written one: the tasks received before that wait for one too.
        match said {
            Said::Received => self.process.pool.received(call.clone(), at),
            _ => self.process.pool.task_over(&call),
        }
        // Another task received while one runs waits for the pool: the client lines
        // that follow are the running one's (where the lines do not say their process).
        let running = self
            .process
            .celery_running
            .clone()
            .filter(|_| !self.process.pool.seen);
        if !matches!(said, Said::Received) && running.as_ref() == Some(&call) {
            self.process.celery_running = None;
        }
        let kind = match said {
            Said::Received => {
                if !self.process.pool.seen && running.is_none_or(|r| r == call) {
                    self.process.celery_running = Some(call.clone());
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
                self.note_outcome(&Some(call.clone()), None, None);
                EventKind::Failure(Box::new(Failure {
                    call: Some(call),
                    attempt: None,
                    class: classify_failure(&error, &message),
                    error,
                    message,
                    raised_in: None,
                    resent_after: None,
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

    /// Each attempt's call, as `run: method url status` of the answer read with it.
    fn attempts_by_call(log: &str) -> Vec<String> {
        use crate::ingest::ParseOptions;
        use crate::ingest::text::parse;
        let p = parse(&mut log.as_bytes(), 0, &ParseOptions::default()).unwrap();
        (p.events.iter())
            .filter_map(|e| match &e.kind {
                EventKind::Attempt(a) => Some(format!("{} {}", a.call.as_ref()?.run, e.loc.line)),
                _ => None,
            })
            .collect()
    }

    /// A worker's log: each line `(seconds,millis, process, message)` on 2026-12-06 14:52.
    fn worker(lines: &[(&str, &str, &str)]) -> String {
        (lines.iter())
            .map(|(at, process, msg)| format!("[2026-12-06 14:52:{at}: INFO/{process}] {msg}\n"))
            .collect()
    }

    const REFUND_POSTED: &str = "HTTP Request: POST http://x/v1/refunds \"HTTP/1.1 201 Created\"";
    const MAIN: &str = "MainProcess";
    const P1: &str = "ForkPoolWorker-1";
    const P2: &str = "ForkPoolWorker-2";

    /// Tasks A and B received, one after the other.
    fn received() -> Vec<(&'static str, &'static str, &'static str)> {
        vec![
            ("16,212", MAIN, "Task tasks.issue_refund[A] received"),
            ("16,213", MAIN, "Task tasks.issue_refund[B] received"),
        ]
    }

    #[test]
    fn a_pool_process_lines_are_the_task_it_names_later() {
        // A runs in process 1 and logs nothing until its retry; B's request is process 2's.
        let mut lines = received();
        lines.extend([
            ("16,276", P2, REFUND_POSTED),
            (
                "16,278",
                P2,
                "Task tasks.issue_refund[B] succeeded in 0.06s: {}",
            ),
            (
                "17,278",
                P1,
                "Task tasks.issue_refund[A] retry: Retry in 2s: ReadTimeout('timed out')",
            ),
            ("18,216", MAIN, "Task tasks.issue_refund[A] received"),
            ("19,293", P2, REFUND_POSTED),
            (
                "19,294",
                P2,
                "Task tasks.issue_refund[A] succeeded in 0.02s: {}",
            ),
        ]);
        assert_eq!(attempts_by_call(&worker(&lines)), ["B 3", "A 7"]);
    }

    #[test]
    fn a_process_task_is_named_however_far_on_its_naming_line_is() {
        // More than a read's block (256 KiB) of the main process's chatter between B's
        // request and the line that names B: where the blocks fall decides nothing.
        let mut lines = received();
        lines.push(("16,276", P2, REFUND_POSTED));
        let chatter = (
            "16,277",
            MAIN,
            "mingle: sync with 3 nodes, all alive and well",
        );
        lines.extend(std::iter::repeat_n(chatter, 5_000));
        lines.push((
            "16,278",
            P2,
            "Task tasks.issue_refund[B] succeeded in 0.06s: {}",
        ));
        assert_eq!(attempts_by_call(&worker(&lines)), ["B 3"]);
    }

    #[test]
    fn a_stand_in_never_named_takes_no_task_received_after_its_lines() {
        let lines = [
            ("16,212", MAIN, "Task tasks.issue_refund[A] received"),
            ("16,276", P1, REFUND_POSTED),
            (
                "16,300",
                P2,
                "Task tasks.issue_refund[A] succeeded in 0.06s: {}",
            ),
            ("30,000", MAIN, "Task tasks.issue_refund[LATE] received"),
        ];
        let calls = attempts_by_call(&worker(&lines));
        assert_eq!(calls, ["?celery:ForkPoolWorker-1:0 2"]);
    }

    #[test]
    fn a_stand_in_is_sent_after_the_last_task_received_not_the_oldest_waiting() {
        use crate::ingest::ParseOptions;
        use crate::ingest::text::parse;
        // OLD was received and never run; T runs in process 1 and names itself after its
        // request.
        let lines = [
            ("01,000", MAIN, "Task tasks.issue_refund[OLD] received"),
            ("16,212", MAIN, "Task tasks.issue_refund[T] received"),
            ("16,276", P1, REFUND_POSTED),
            (
                "16,300",
                P1,
                "Task tasks.issue_refund[T] succeeded in 0.09s: {}",
            ),
        ];
        let log = worker(&lines);
        let p = parse(&mut log.as_bytes(), 0, &ParseOptions::default()).unwrap();
        let sent: Vec<String> = (p.events.iter())
            .filter(|e| matches!(e.kind, EventKind::Attempt(_)))
            .map(|e| e.at.display())
            .collect();
        assert_eq!(sent, ["2026-12-06T14:52:16.212Z"]);
    }

    #[test]
    fn a_process_whose_task_is_never_named_takes_the_one_waiting_longest() {
        // Neither task's end is in the log: each process's stand-in is, at the end, the next
        // task received that no process was seen running.
        let mut lines = received();
        lines.extend([("16,276", P1, REFUND_POSTED), ("16,290", P2, REFUND_POSTED)]);
        lines.push(("16,295", P1, REFUND_POSTED));
        assert_eq!(attempts_by_call(&worker(&lines)), ["A 3", "B 4", "A 5"]);
    }

    #[test]
    fn a_worker_whose_every_line_is_the_main_process_keeps_the_older_rule() {
        // A solo or threads pool: the client lines after a task's `received` are its.
        let lines = [
            ("16,000", MAIN, "Task tasks.issue_refund[A] received"),
            ("16,100", MAIN, REFUND_POSTED),
            (
                "16,150",
                MAIN,
                "Task tasks.issue_refund[A] succeeded in 0.15s: {}",
            ),
        ];
        assert_eq!(attempts_by_call(&worker(&lines)), ["A 2"]);
    }

    #[test]
    fn the_main_process_lines_in_a_pool_are_no_tasks() {
        let mut lines = received();
        lines.extend([
            ("16,276", P1, REFUND_POSTED),
            (
                "16,278",
                P1,
                "Task tasks.issue_refund[A] succeeded in 0.06s: {}",
            ),
            ("16,300", MAIN, REFUND_POSTED),
        ]);
        let calls = attempts_by_call(&worker(&lines));
        assert_eq!(calls[0], "A 3");
        assert!(
            calls[1].starts_with('?') && calls[1].ends_with(" 5"),
            "{calls:?}"
        );
    }

    #[test]
    fn the_task_loggers_prefix_names_the_task_of_its_process() {
        let mut lines = received();
        lines.extend([
            ("16,250", P1, "tasks.issue_refund[B]: calling payments"),
            ("16,276", P1, REFUND_POSTED),
        ]);
        assert_eq!(attempts_by_call(&worker(&lines)), ["B 4"]);
        assert_eq!(
            task_named(b"tasks.issue_refund[B]: calling"),
            Some(&b"B"[..])
        );
        assert_eq!(task_named(b"retrying [3 left]: calling"), None);
        assert_eq!(task_named(b"tasks.issue_refund[B] calling"), None);
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
