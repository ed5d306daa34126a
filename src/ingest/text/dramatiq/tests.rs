use super::*;
use crate::ingest::ParseOptions;
use crate::ingest::text::parse;

/// A worker's line at `2026-12-07 15:56:SS,mmm` from `thread` of process 7, by `logger`.
fn line(at: &str, thread: &str, logger: &str, level: &str, msg: &str) -> String {
    format!("[2026-12-07 15:56:{at}] [PID 7] [{thread}] [{logger}] [{level}] {msg}\n")
}

const RETRIES: &str = "dramatiq.middleware.retries.Retries";
const WORKER: &str = "dramatiq.worker.WorkerThread";
const TRACEBACK: &str = "Traceback (most recent call last):\n  File \"tasks.py\", line 9, in issue_refund\nrequests.exceptions.ReadTimeout: HTTPConnectionPool(host='127.0.0.1', port=8716): Read timed out. (read timeout=1.0)\n";

fn failed(at: &str, thread: &str, order: &str) -> String {
    let msg = format!(
        "Failed to process message issue_refund(order='{order}', amount_p=4500) with unhandled exception."
    );
    line(at, thread, WORKER, "ERROR", &msg) + TRACEBACK
}

fn retrying(at: &str, thread: &str, id: &str) -> String {
    let msg = format!("Retrying message '{id}' in 1644 milliseconds.");
    line(at, thread, RETRIES, "INFO", &msg)
}

fn calling(at: &str, thread: &str) -> String {
    line(at, thread, "tasks", "INFO", "calling payments order=A-1")
}

/// Each client event as `time call what`, in time order; no line skipped.
fn events(log: &str) -> Vec<String> {
    let (mut out, skipped) = super::super::job_queues::client_events(log);
    assert_eq!(skipped, 0, "{log}");
    out.sort_by_key(|(at, _)| *at);
    out.into_iter().map(|(_, s)| s).collect()
}

#[test]
fn dramatiqs_header_says_the_thread_and_the_logger() {
    let h =
        header(b" [PID 27452] [Thread-4] [dramatiq.worker.WorkerThread] [ERROR] Failed").unwrap();
    assert_eq!(
        (h.pid, h.thread, h.logger),
        (
            &b"PID 27452"[..],
            &b"Thread-4"[..],
            &b"dramatiq.worker.WorkerThread"[..]
        )
    );
    assert_eq!(h.len, 62);
    for other in [
        &b" [INFO] refund created"[..],
        b" [PID 1] [Thread-4] [tasks] refund created",
        b" [PID x] [Thread-4] [tasks] [INFO] refund created",
        b" [PID 1] [Thread-4] [my tasks] [INFO] refund created",
        b" [PID 1] [Thread-4] [tasks] [info] refund created",
        b" [6073fddd] [PID 1] [Thread-4] [tasks] [INFO] refund created",
    ] {
        assert!(
            header(other).is_none(),
            "{}",
            String::from_utf8_lossy(other)
        );
    }
}

#[test]
fn the_workers_own_lines_say_what_became_of_a_message() {
    assert_eq!(
        said(b"Retrying message '303c73e0-a73b' in 1644 milliseconds."),
        Some(Said::Retrying {
            id: b"303c73e0-a73b",
            after: Duration(1_644_000_000)
        })
    );
    assert_eq!(
        said(b"Failed to process message issue_refund('A-1', 4500) with unhandled exception."),
        Some(Said::Failed {
            repr: b"issue_refund('A-1', 4500)"
        })
    );
    assert_eq!(
        said(b"Received message issue_refund(order='A-1') with id '303c'."),
        Some(Said::Received {
            repr: b"issue_refund(order='A-1')",
            id: b"303c"
        })
    );
    assert!(matches!(
        said(b"Retries exceeded for message '303c'."),
        Some(Said::GaveUp { id: b"303c", .. })
    ));
    for other in [
        &b"Retrying message '303c' in a while."[..],
        b"Retrying message 303c in 1644 milliseconds.",
        b"Failed to process message issue_refund('A-1') with expected exception HTTPError.",
        b"Worker process is ready for action.",
        b"Aborting message 'a b'.",
    ] {
        assert_eq!(said(other), None, "{}", String::from_utf8_lossy(other));
    }
}

#[test]
fn a_message_retried_is_its_step_dispatched_again_after_the_delay() {
    let id = "303c73e0-a73b-4d19-95ab-d728b43cef77";
    let log = [
        calling("28,154", "Thread-4"),
        failed("29,162", "Thread-4", "A-1"),
        retrying("29,196", "Thread-4", id),
        calling("31,920", "Thread-4"),
    ]
    .concat();
    let args = r#"{"amount_p":4500,"order":"A-1"}"#;
    assert_eq!(
        events(&log),
        [
            format!("28.154 {id} issue_refund {args}"),
            format!("29.162 {id} failed requests.exceptions.ReadTimeout"),
            format!("30.840 {id} issue_refund {args}"),
        ]
    );
}

#[test]
fn a_message_that_logged_nothing_is_dispatched_at_its_failure() {
    let log = [
        failed("29,162", "Thread-4", "A-1"),
        retrying("29,196", "Thread-4", "M"),
    ]
    .concat();
    let got = events(&log);
    assert!(got[0].starts_with("29.162 M issue_refund"), "{got:?}");
}

#[test]
fn a_message_given_up_on_ends_failed_and_is_not_dispatched_again() {
    let exceeded = line(
        "29,196",
        "Thread-4",
        RETRIES,
        "WARNING",
        "Retries exceeded for message 'M'.",
    );
    let log = [
        calling("28,154", "Thread-4"),
        failed("29,162", "Thread-4", "A-1"),
        exceeded,
    ]
    .concat();
    let got = events(&log);
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got[0].starts_with("28.154 M issue_refund"), "{got:?}");
    assert_eq!(got[2], "29.196 M end ok=false");
}

#[test]
fn each_thread_retries_its_own_failed_message() {
    // Two threads fail at once; their Retries lines come in the other order.
    let log = [
        calling("28,100", "Thread-4"),
        calling("28,200", "Thread-5"),
        failed("29,100", "Thread-4", "A-1"),
        failed("29,200", "Thread-5", "A-2"),
        retrying("29,300", "Thread-5", "B"),
        retrying("29,400", "Thread-4", "A"),
    ]
    .concat();
    let got = events(&log);
    assert!(
        got[0].starts_with("28.100 A issue_refund") && got[0].contains("A-1"),
        "{got:?}"
    );
    assert!(
        got[1].starts_with("28.200 B issue_refund") && got[1].contains("A-2"),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|e| e.starts_with("30.944 B") && e.contains("A-2")),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|e| e.starts_with("31.044 A") && e.contains("A-1")),
        "{got:?}"
    );
}

#[test]
fn a_received_line_names_the_message_from_its_start() {
    // At DEBUG (`dramatiq -v`): the message's id and start, its client lines its own.
    let received = line(
        "28,100",
        "Thread-4",
        WORKER,
        "DEBUG",
        "Received message issue_refund(order='A-1', amount_p=4500) with id 'M'.",
    );
    let log = [
        received,
        calling("28,154", "Thread-4"),
        failed("29,162", "Thread-4", "A-1"),
        retrying("29,196", "Thread-4", "M"),
    ]
    .concat();
    let got = events(&log);
    assert!(got[0].starts_with("28.100 M issue_refund"), "{got:?}");
    assert_eq!(got[1], "29.162 M failed requests.exceptions.ReadTimeout");
    assert!(got[2].starts_with("30.840 M issue_refund"), "{got:?}");
    assert_eq!(got.len(), 3, "{got:?}");
}

#[test]
fn a_retry_line_with_no_failure_before_it_dispatches_nothing() {
    let log = [
        calling("28,154", "Thread-4"),
        retrying("29,196", "Thread-4", "M"),
    ]
    .concat();
    assert!(events(&log).is_empty());
}

/// httpx's line for a request answered `status`, from `thread`.
fn posted(at: &str, thread: &str, status: &str) -> String {
    let msg = format!("HTTP Request: POST http://x/v1/refunds \"HTTP/1.1 {status}\"");
    line(at, thread, "httpx", "INFO", &msg)
}

/// The run of each attempt read, in order.
fn attempt_runs(log: &str) -> Vec<String> {
    let p = parse(&mut log.as_bytes(), 0, &ParseOptions::default()).unwrap();
    (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Attempt(a) => Some(a.call.as_ref()?.run.to_string()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_thread_that_runs_no_known_message_takes_the_one_due_again() {
    // M is due at 30.840: Thread-5's request after that is M's second run.
    let log = [
        failed("29,162", "Thread-4", "A-1"),
        retrying("29,196", "Thread-4", "M"),
        posted("31,189", "Thread-5", "201 Created"),
    ]
    .concat();
    assert_eq!(attempt_runs(&log), ["M"]);
}

#[test]
fn a_message_not_yet_due_is_taken_by_no_thread() {
    let log = [
        failed("29,162", "Thread-4", "A-1"),
        retrying("29,196", "Thread-4", "M"),
        posted("30,000", "Thread-5", "201 Created"),
    ]
    .concat();
    let runs = attempt_runs(&log);
    assert!(runs.len() == 1 && runs[0].starts_with('?') && !runs[0].starts_with("?dramatiq"));
}

#[test]
fn a_message_taken_by_turn_ends_at_its_final_answer() {
    // After M's refund was answered, the thread's next request is another message's.
    let log = [
        failed("29,162", "Thread-4", "A-1"),
        retrying("29,196", "Thread-4", "M"),
        posted("31,189", "Thread-4", "201 Created"),
        posted("35,000", "Thread-4", "201 Created"),
    ]
    .concat();
    let runs = attempt_runs(&log);
    assert_eq!(runs[0], "M");
    assert_ne!(runs[1], "M");
}
