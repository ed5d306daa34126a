//! RQ's worker log (`rq worker`, its default layout `%(asctime)s %(message)s` with the time
//! of day only: `15:56:43 Worker e6a7...: default: rq_tasks.issue_refund(amount_p=4500,
//! order='A-1') (0c3e...)`): a job is a tool's call, its id the run and the job its one
//! step, as a Celery task is ([`super::celery`]). Each line that takes a job off a queue
//! (`Worker NAME: QUEUE: DESCRIPTION (ID)`, the description its function's call unless
//! the job was given its own; `Worker NAME: QUEUE: ID` under `--disable-job-desc-logging`)
//! is a dispatch of its step, so a job that RQ's `Retry`
//! runs again is a step retry (SPEC §5); `Worker NAME: job ID: exception raised while
//! executing (FUNC)` opens the traceback whose exception is the dispatch's failure;
//! `Worker NAME: QUEUE: Job OK (ID)` ends the step. Jobs run one at a time in a worker, so
//! the lines after a job is taken are its, as in a solo Celery worker.

use super::{TextParser, Verdict, small};
use crate::event::{CallRef, EventKind, Text, ToolCall};
use crate::ingest::python_repr::python_call;
use crate::time::Timestamp;

/// What a worker's line says of a job.
#[derive(Debug, PartialEq)]
enum Said<'a> {
    /// Taken off `queue`: its function's call as RQ describes it, when logged.
    Taken {
        id: &'a [u8],
        call: Option<&'a [u8]>,
    },
    /// `job ID: exception raised while executing (FUNC)`: its traceback follows.
    Raised { id: &'a [u8] },
    /// `Job OK (ID)`.
    Ok { id: &'a [u8] },
}

/// A word RQ prints whole: a worker's name, a queue's, a job's id.
fn is_word(w: &[u8]) -> bool {
    !w.is_empty() && !w.iter().any(|b| b.is_ascii_whitespace())
}

fn said(msg: &[u8]) -> Option<Said<'_>> {
    let rest = msg.strip_prefix(b"Worker ")?;
    let colon = memchr::memmem::find(rest, b": ")?;
    let rest = is_word(&rest[..colon]).then_some(&rest[colon + 2..])?;
    if let Some(job) = rest.strip_prefix(b"job ") {
        let cut = memchr::memmem::find(job, b": exception raised while executing (")?;
        let id = &job[..cut];
        return (is_word(id) && job.ends_with(b")")).then_some(Said::Raised { id });
    }
    let colon = memchr::memmem::find(rest, b": ")?;
    let (queue, what) = (&rest[..colon], &rest[colon + 2..]);
    if !is_word(queue) {
        return None;
    }
    if is_word(what) {
        return Some(Said::Taken {
            id: what,
            call: None,
        });
    }
    // `DESCRIPTION (ID)`, `Job OK (ID)`.
    let inner = what.strip_suffix(b")")?;
    let open = memchr::memmem::rfind(inner, b" (")?;
    let (head, id) = (&inner[..open], &inner[open + 2..]);
    if !is_word(id) {
        return None;
    }
    if head == b"Job OK" {
        return Some(Said::Ok { id });
    }
    // The job's description: its function's call, unless it was enqueued with its own.
    Some(Said::Taken {
        id,
        call: Some(head),
    })
}

fn job_call(id: &[u8]) -> CallRef {
    CallRef {
        run: small(id),
        step: 1,
        part: 0,
    }
}

impl TextParser {
    /// An RQ worker's line at `at` (see the module's doc); `None` for any other.
    #[cold]
    pub(super) fn rq_line(&mut self, at: Timestamp, msg: &[u8]) -> Option<Verdict> {
        let kind = match said(msg)? {
            Said::Taken { id, call } => {
                let job = job_call(id);
                let (tool, args) = match call.and_then(python_call) {
                    Some((function, args)) => (small(function), args),
                    // Described by id alone or in its own words: its function is not said.
                    None => (Text::from_static_str("rq job"), None),
                };
                self.begin_call(&job, at);
                EventKind::ToolCall(Box::new(ToolCall {
                    call: job,
                    tool,
                    args_raw: (args.as_deref()).map_or(Text::from_static_str("null"), Text::from),
                    args: serde_json::Value::Null,
                }))
            }
            Said::Raised { id } => {
                // Its traceback below is the failure of the job's latest dispatch.
                let job = job_call(id);
                if self.process.current_call.as_ref() != Some(&job) {
                    self.process.current_call = Some(job);
                }
                return Some(Verdict::Ignored);
            }
            Said::Ok { id } => self.step_end(job_call(id), true, None),
        };
        Some(Verdict::Event(at, kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workers_lines_say_what_became_of_its_jobs() {
        let id = &b"0c3eb77f-5424-4314-9d8e-c41e1873ea4a"[..];
        assert_eq!(
            said(b"Worker e6a73a62e3674923bf30ad6c9b1381ba: default: rq_tasks.issue_refund(amount_p=4500, order='A-1') (0c3eb77f-5424-4314-9d8e-c41e1873ea4a)"),
            Some(Said::Taken {
                id,
                call: Some(&b"rq_tasks.issue_refund(amount_p=4500, order='A-1')"[..])
            })
        );
        assert_eq!(
            said(b"Worker w1: high: refund for A-1 (0c3eb77f-5424-4314-9d8e-c41e1873ea4a)"),
            Some(Said::Taken {
                id,
                call: Some(&b"refund for A-1"[..])
            })
        );
        assert_eq!(
            said(b"Worker w1: high: 0c3eb77f-5424-4314-9d8e-c41e1873ea4a"),
            Some(Said::Taken { id, call: None })
        );
        assert_eq!(
            said(b"Worker w1: job 0c3eb77f-5424-4314-9d8e-c41e1873ea4a: exception raised while executing (rq_tasks.issue_refund)"),
            Some(Said::Raised { id })
        );
        assert_eq!(
            said(b"Worker w1: default: Job OK (0c3eb77f-5424-4314-9d8e-c41e1873ea4a)"),
            Some(Said::Ok { id })
        );
    }

    /// Each client event of a worker's log as `time run what`.
    fn events(log: &str) -> Vec<String> {
        use crate::ingest::ParseOptions;
        use crate::ingest::text::parse;
        let p = parse(&mut log.as_bytes(), 0, &ParseOptions::default()).unwrap();
        assert_eq!(p.stats.skipped, 0, "{:?}", p.stats);
        (p.events.iter())
            .filter_map(|e| {
                let what = match &e.kind {
                    EventKind::ToolCall(t) => format!("{} {}", t.tool, t.args_raw),
                    EventKind::Failure(f) => format!("failed {}", f.error),
                    EventKind::StepEnd(s) => format!("end ok={}", s.ok),
                    _ => return None,
                };
                Some(format!("{} {} {what}", e.at.display(), e.kind.call()?.run))
            })
            .collect()
    }

    const TAKEN: &str = "Worker w1: default: rq_tasks.issue_refund(amount_p=4500, order='A-1')";
    const RAISED: &str = "Worker w1: job J: exception raised while executing (rq_tasks.issue_refund)\nTraceback (most recent call last):\n  File \"rq_tasks.py\", line 9, in issue_refund\nrequests.exceptions.ReadTimeout: HTTPConnectionPool(host='127.0.0.1', port=8716): Read timed out. (read timeout=1.0)";

    #[test]
    fn a_job_run_again_is_its_step_dispatched_again() {
        let log = format!(
            "15:56:43 {TAKEN} (J)\n15:56:44 {RAISED}\n\n15:56:46 {TAKEN} (J)\n15:56:46 Worker w1: default: Job OK (J)\n"
        );
        let args = r#"{"amount_p":4500,"order":"A-1"}"#;
        assert_eq!(
            events(&log),
            [
                format!("15:56:43.000 J rq_tasks.issue_refund {args}"),
                "15:56:44.000 J failed requests.exceptions.ReadTimeout".into(),
                format!("15:56:46.000 J rq_tasks.issue_refund {args}"),
                "15:56:46.000 J end ok=true".into(),
            ]
        );
    }

    #[test]
    fn two_jobs_are_two_calls() {
        let log =
            format!("15:56:43 {TAKEN} (J)\n15:56:44 {TAKEN} (K)\n15:56:45 Worker w1: default: K\n");
        let runs: Vec<String> = events(&log)
            .iter()
            .map(|e| e.split(' ').nth(1).unwrap().to_owned())
            .collect();
        assert_eq!(runs, ["J", "K", "K"]);
        assert!(events(&log)[2].ends_with("rq job null"));
    }

    #[test]
    fn a_workers_other_lines_are_no_jobs() {
        for line in [
            &b"Worker e6a7: started with PID 28776, version 2.12.0"[..],
            b"Worker e6a7: subscribing to channel rq:pubsub:e6a7",
            b"Worker e6a7: cleaning registries for queue: default",
            b"Worker e6a7 [PID 28776]: warm shut down requested",
            b"Worker e6a7: job 0c3e result is kept for 500 seconds",
            b"Worker e6a7: default: waiting for jobs (3 queued)",
            b"Successfully completed rq_tasks.issue_refund(order='A-1') job in 0:00:00.07s on worker e6a7",
            b"Worker pool: default: Job OK",
            b"Workers: 3",
        ] {
            assert_eq!(said(line), None, "{}", String::from_utf8_lossy(line));
        }
    }
}
