//! Several processes writing one file: a host's syslog file, a journal's export (two agent
//! workers, an agent and its service). A line without a run or step (`urllib3 ... Retrying
//! ...`, `HTTP Request: POST ...`) belongs to the latest tool call of the process that
//! wrote it, not of the file: read in one state, another worker's tool call logged in
//! between took the first worker's retry, the duplicate's cause fell to `unknown` and its
//! `unkeyed-retry` was lost. So each process is read in a state of its own
//! ([`ProcessState`]), the process being what the format names: a syslog header's `HOST
//! TAG[PID]` or RFC 5424's `HOST APP-NAME PROCID` ([`crate::ingest::syslog::Header`]), a
//! journald entry's `_PID` with its identifier, unit and host
//! ([`crate::ingest::export::LineProcesses`]). A line that names no process (a tag without
//! a pid, a continuation line, a log with no such headers) is read in the state of the
//! latest that did; a file whose lines name one process, or none, reads as one state.

use super::{TextParser, anonymous, celery, client, dramatiq, tail, told_effect};
use crate::event::{CallRef, Text};
use crate::ingest::export::LineProcesses;
use std::collections::BTreeMap;

/// What a line is read with that belongs to the process that wrote it.
#[derive(Default)]
pub(super) struct ProcessState {
    pub(super) current_call: Option<CallRef>,
    /// The tool of the latest call dispatched through a tool call line, for the program's
    /// words that name it (`issue_refund failed: ReadTimeout: ...`).
    pub(super) call_tool: Option<(CallRef, Text)>,
    /// Calls made of requests logged with no tool call above them ([`anonymous`]).
    pub(super) anonymous: anonymous::Anonymous,
    /// The latest 2xx answer, which a line naming its effect may tell ([`told_effect`]).
    pub(super) last_answer: Option<told_effect::LastAnswer>,
    /// The current dispatch's requests as its HTTP client logged them ([`client`]).
    pub(super) client: client::ClientLog,
    /// Where the lines after a stamped one stand ([`tail`]).
    pub(super) tail: tail::Tail,
    /// The time of the java.util.logging header just read, for its message line
    /// ([`super::jul`]).
    pub(super) jul_time: Option<String>,
    /// The Celery task whose client lines the log's are now ([`celery`]).
    pub(super) celery_running: Option<CallRef>,
    /// A Celery worker's processes and their tasks ([`celery::Pool`]).
    pub(super) pool: celery::Pool,
    /// A Dramatiq worker's threads and their messages ([`dramatiq::Workers`]).
    pub(super) dramatiq: dramatiq::Workers,
    /// A line in Huey's layout was read ([`super::huey`]).
    pub(super) huey_seen: bool,
    /// The reader of the JSON objects among the lines, once one is met
    /// ([`super::json_messages`]).
    pub(super) objects: Option<Box<crate::ingest::jsonl::ObjectLines>>,
}

impl ProcessState {
    /// The calls open are forgotten (a rotated log's next file that does not go on from
    /// the last: [`super::Rotated`]).
    pub(super) fn forget_calls(&mut self) {
        self.current_call = None;
        self.client = client::ClientLog::default();
        self.tail = tail::Tail::default();
    }
}

/// The processes met so far, beside the one being read.
#[derive(Default)]
pub(super) struct Processes {
    /// The process whose state is [`TextParser::process`]; empty while no line has named
    /// one (the first to be named takes that state on).
    current: Vec<u8>,
    /// The others' states, by process (ordered: they are settled at the end in that order).
    parked: BTreeMap<Box<[u8]>, ProcessState>,
    /// The process of each line of a journald export that names one.
    pub(super) by_line: Option<LineProcesses>,
}

impl Processes {
    pub(super) fn new(by_line: Option<LineProcesses>) -> Self {
        Processes {
            by_line,
            ..Processes::default()
        }
    }

    /// The states parked, each with the calls open forgotten.
    pub(super) fn forget_calls(&mut self) {
        self.parked
            .values_mut()
            .for_each(ProcessState::forget_calls);
    }
}

/// The process of a journald entry's line, by its number among the export's writers: no
/// header's bytes can be the same (none starts with this byte).
fn entry_process(writer: u32) -> [u8; 5] {
    let [a, b, c, d] = writer.to_le_bytes();
    [0xff, a, b, c, d]
}

impl TextParser {
    /// Line `n` of a journald export is read in the state of the process that wrote it.
    #[inline]
    pub(super) fn entry_process(&mut self, n: u32) {
        let by_line = self.processes.by_line.as_ref();
        if let Some(writer) = by_line.and_then(|by_line| by_line.of_line(n)) {
            self.switch_process(&entry_process(writer));
        }
    }

    /// The line being read is `process`'s: read in its state from here on.
    #[inline]
    pub(super) fn switch_process(&mut self, process: &[u8]) {
        if self.processes.current != process {
            self.switch_process_cold(process);
        }
    }

    #[cold]
    fn switch_process_cold(&mut self, process: &[u8]) {
        let processes = &mut self.processes;
        if processes.current.is_empty() {
            processes.current.extend_from_slice(process);
            return;
        }
        // A held call is settled in its own process's state ([`super::idle`]).
        if self.idle.is_active() {
            self.replay_idle();
        }
        let processes = &mut self.processes;
        let state = processes.parked.remove(process).unwrap_or_default();
        let was = std::mem::replace(&mut self.process, state);
        let was_named = std::mem::replace(&mut processes.current, process.to_vec());
        processes.parked.insert(was_named.into_boxed_slice(), was);
    }

    /// Does `settle` in every process's state (the input has ended), the current one's
    /// first, then the others' in their order.
    pub(super) fn in_every_process(&mut self, mut settle: impl FnMut(&mut Self)) {
        settle(self);
        let parked = std::mem::take(&mut self.processes.parked);
        for (process, state) in parked {
            let was = std::mem::replace(&mut self.process, state);
            let was_named = std::mem::replace(&mut self.processes.current, process.into_vec());
            settle(self);
            self.processes
                .parked
                .insert(was_named.into_boxed_slice(), was);
        }
    }
}

#[cfg(test)]
mod tests;
