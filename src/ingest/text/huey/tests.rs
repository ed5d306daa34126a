use super::*;

/// Each client event of a consumer's log as `time run what`, and the lines skipped.
fn events(log: &str) -> (Vec<String>, u64) {
    let (events, skipped) = super::super::job_queues::client_events(log);
    (events.into_iter().map(|(_, s)| s).collect(), skipped)
}

fn line(at: &str, level: &str, worker: &str, msg: &str) -> String {
    format!("[2026-12-07 16:25:{at}] {level}:huey:{worker}:{msg}\n")
}

#[test]
fn hueys_header_is_its_level_logger_and_worker() {
    assert_eq!(header_len(b" INFO:huey:Worker-1:Executing x"), Some(20));
    assert_eq!(
        header_len(b" INFO:huey.consumer:MainThread:Huey consumer started"),
        Some(31)
    );
    for other in [
        &b" INFO:payments:refund created"[..],
        b" INFO:payments:x:refund created",
        b" info:huey:Worker-1:Executing x",
        b" INFO:huey:Worker 1:Executing x",
        b" refund created",
    ] {
        assert_eq!(
            header_len(other),
            None,
            "{}",
            String::from_utf8_lossy(other)
        );
    }
}

#[test]
fn a_task_run_again_is_its_step_dispatched_again() {
    let id = "1d238921-3fd1-4920-9901-45e13cfe091a";
    let log = [
        line("22,362", "INFO", "MainThread", "The following commands are available:"),
        "+ huey_tasks.issue_refund\n".into(),
        line("25,289", "INFO", "Worker-1", &format!("Executing huey_tasks.issue_refund: {id} 3 retries")),
        line("26,309", "ERROR", "Worker-1", &format!("Unhandled exception in task {id}.")),
        "Traceback (most recent call last):\n  File \"huey/api.py\", line 9, in _execute\nrequests.exceptions.ReadTimeout: HTTPConnectionPool(host='127.0.0.1', port=8716): Read timed out. (read timeout=1.0)\n".into(),
        line("26,317", "INFO", "Worker-1", &format!("Requeueing {id}, 2 retries")),
        line("26,317", "INFO", "Worker-1", &format!("Added task {id} to schedule, eta 2026-12-07 16:25:28.317579")),
        line("28,363", "INFO", "Worker-1", &format!("Executing huey_tasks.issue_refund: {id} @2026-12-07 16:25:28.317579 2 retries")),
        line("28,369", "INFO", "Worker-1", &format!("huey_tasks.issue_refund: {id} @2026-12-07 16:25:28.317579 2 retries executed in 0.006s")),
    ]
    .concat();
    let (got, skipped) = events(&log);
    assert_eq!(skipped, 0);
    assert_eq!(
        got,
        [
            format!("25.289 {id} huey_tasks.issue_refund null"),
            format!("26.309 {id} failed requests.exceptions.ReadTimeout"),
            format!("28.363 {id} huey_tasks.issue_refund null"),
            format!("28.369 {id} end ok=true"),
        ]
    );
}

#[test]
fn other_lines_are_no_tasks() {
    for msg in [
        &b"Executing the plan"[..],
        b"Huey consumer started with 1 thread, PID 23478 at 2026-12-07 16:25:22.362950",
        b"Unhandled exception in task a b.",
        b"huey_tasks.issue_refund: 1d23 executed in a while",
        b"refund: re_1 executed in 0.2s",
    ] {
        assert_eq!(said(msg), None, "{}", String::from_utf8_lossy(msg));
    }
    // A `+ ` line after any other record is no part of it.
    let log = line(
        "22,362",
        "INFO",
        "MainThread",
        "Periodic tasks are enabled.",
    ) + "+ huey_tasks.issue_refund\n";
    assert_eq!(events(&log).1, 1);
}
