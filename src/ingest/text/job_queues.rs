//! Where the text parser meets the job queues' workers ([`super::dramatiq`], [`super::rq`],
//! [`super::huey`]; Celery's is [`super::celery`]): their headers after a bracketed stamp,
//! and their lines about a task.

use super::{TextParser, Verdict};
use crate::time::Timestamp;

impl TextParser {
    /// How many bytes after a stamp's closing bracket (`rest` starts after it) a worker's
    /// header takes: Dramatiq's ` [PID 27452] [Thread-4] [LOGGER] [INFO]`, Huey's `
    /// INFO:huey:Worker-1:`; none for any other line.
    #[cold]
    pub(super) fn worker_header(&mut self, rest: &[u8]) -> usize {
        if let Some(header) = super::dramatiq::header(rest) {
            self.process.dramatiq.seen = true;
            return header.len;
        }
        if let Some(len) = super::huey::header_len(rest) {
            self.process.huey_seen = true;
            return len;
        }
        0
    }

    /// A Dramatiq worker's own line (`Retrying message '...' in 1644 milliseconds.`) or an RQ
    /// worker's (`Worker NAME: QUEUE: FUNCTION(...) (ID)`) at `at`; `None` for any other.
    #[inline]
    pub(super) fn job_queue_line(&mut self, at: Timestamp, msg: &[u8]) -> Option<Verdict> {
        if self.process.dramatiq.seen
            && let Some(verdict) = self.dramatiq_message(at, msg)
        {
            return Some(verdict);
        }
        if msg.first() == Some(&b'W') {
            return self.rq_line(at, msg);
        }
        None
    }
}

/// The job queues' tests' reading of a worker's log: each client event, in the log's order,
/// with its time and as `SS.mmm run what`, and the lines skipped.
#[cfg(test)]
pub(super) fn client_events(log: &str) -> (Vec<(crate::time::Timestamp, String)>, u64) {
    use crate::event::EventKind;
    let opts = crate::ingest::ParseOptions::default();
    let p = super::parse(&mut log.as_bytes(), 0, &opts).unwrap();
    let events = (p.events.iter())
        .filter_map(|e| {
            let what = match &e.kind {
                EventKind::ToolCall(t) => format!("{} {}", t.tool, t.args_raw),
                EventKind::Failure(f) => format!("failed {}", f.error),
                EventKind::StepEnd(s) => format!("end ok={}", s.ok),
                _ => return None,
            };
            let time = e.at.display();
            let run = &e.kind.call()?.run;
            Some((e.at, format!("{} {run} {what}", &time[17..23])))
        })
        .collect();
    (events, p.stats.skipped)
}
