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
            self.dramatiq.seen = true;
            return header.len;
        }
        if let Some(len) = super::huey::header_len(rest) {
            self.huey_seen = true;
            return len;
        }
        0
    }

    /// A Dramatiq worker's own line (`Retrying message '...' in 1644 milliseconds.`) or an RQ
    /// worker's (`Worker NAME: QUEUE: FUNCTION(...) (ID)`) at `at`; `None` for any other.
    #[inline]
    pub(super) fn job_queue_line(&mut self, at: Timestamp, msg: &[u8]) -> Option<Verdict> {
        if self.dramatiq.seen
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
