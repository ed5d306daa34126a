//! Processes read apart ([`super`]), both sides: two agent workers in one syslog file or
//! journal, and the files that read as one state as before.
use super::super::*;
use crate::ingest::export::{self, LineProcesses};

/// Two agent workers' lines as urllib3 and the agent log them, interleaved as in
/// fixtures/syslog-processes: worker 1's request times out and urllib3 retries it after
/// worker 2's call; `{1}` and `{2}` stand for each worker's header.
const TWO_WORKERS: &str = r#"{1} INFO agent tool call run_id=worker1 step=1 tool=issue_refund args={"order": "A-1", "amount_p": 4500}
{1} DEBUG urllib3.connectionpool Starting new HTTP connection (1): 127.0.0.1:8736
{2} INFO agent tool call run_id=worker2 step=1 tool=issue_refund args={"order": "B-2", "amount_p": 4500}
{2} DEBUG urllib3.connectionpool Starting new HTTP connection (1): 127.0.0.1:8736
{2} DEBUG urllib3.connectionpool http://127.0.0.1:8736 "POST /v1/refunds HTTP/1.1" 201 68
{2} INFO agent tool result run_id=worker2 step=1 tool=issue_refund status=ok
{1} DEBUG urllib3.util.retry Incremented Retry for (url='/v1/refunds'): Retry(total=2, connect=None, read=None, redirect=None, status=None)
{1} WARNING urllib3.connectionpool Retrying (Retry(total=2, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ReadTimeoutError("HTTPConnectionPool(host='127.0.0.1', port=8736): Read timed out. (read timeout=1.0)")': /v1/refunds
{1} DEBUG urllib3.connectionpool Starting new HTTP connection (2): 127.0.0.1:8736
{1} DEBUG urllib3.connectionpool http://127.0.0.1:8736 "POST /v1/refunds HTTP/1.1" 201 68
{1} INFO agent tool result run_id=worker1 step=1 tool=issue_refund status=ok
"#;

/// A worker's header (1 or 2) for line `i` (0-based), a second after the line before.
type Header = fn(u32, usize) -> String;

/// The lines with worker 1's and worker 2's headers put in, a second apart.
fn two_workers(header: impl Fn(u32, usize) -> String) -> String {
    (TWO_WORKERS.lines().enumerate())
        .map(|(i, line)| match line.strip_prefix("{1} ") {
            Some(msg) => format!("{} {msg}\n", header(1, i)),
            None => format!("{} {}\n", header(2, i), &line[4..]),
        })
        .collect()
}

/// The run of each attempt and failure, by line.
fn client_calls(p: &Parsed) -> Vec<(u32, &'static str, String)> {
    let run = |call: &Option<crate::event::CallRef>| {
        call.as_ref().map_or("-".into(), |c| c.run.to_string())
    };
    (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Attempt(a) => Some((e.loc.line, "attempt", run(&a.call))),
            EventKind::Failure(f) => Some((e.loc.line, "failure", run(&f.call))),
            _ => None,
        })
        .collect()
}

fn read(text: &str) -> Parsed {
    let opts = ParseOptions {
        relevance: None,
        ..ParseOptions::default()
    };
    parse(&mut text.as_bytes(), 0, &opts).unwrap()
}

/// Worker 1's retry (lines 7-10) is its own call's, whoever logged a tool call between.
fn retried_by_worker1(p: &Parsed) -> bool {
    let calls = client_calls(p);
    let late: Vec<_> = calls.iter().filter(|(line, ..)| *line >= 7).collect();
    !late.is_empty() && late.iter().all(|(_, _, run)| run == "worker1")
}

/// Each header shape that names a process: worker 1's retry is its own.
#[test]
fn two_processes_in_one_syslog_file_are_read_apart() {
    let shapes: [(&str, Header); 4] = [
        ("RSYSLOG_FileFormat", |w, i| {
            format!(
                "2026-12-07T19:14:{:02}.000000+00:00 vm agent[{}]:",
                i,
                17800 + w
            )
        }),
        ("RFC 3164", |w, i| {
            format!("Dec  7 19:14:{:02} vm agent[{}]:", i, 17800 + w)
        }),
        ("RFC 5424", |w, i| {
            format!(
                "<14>1 2026-12-07T19:14:{:02}.000Z vm agent {} - -",
                i,
                17800 + w
            )
        }),
        // The same pid on two hosts is two processes.
        ("hosts", |w, i| {
            format!("2026-12-07T19:14:{:02}Z vm-{w} agent[17801]:", i)
        }),
    ];
    for (shape, header) in shapes {
        let p = read(&two_workers(header));
        assert!(retried_by_worker1(&p), "{shape}: {:?}", client_calls(&p));
    }
}

/// One process, or headers that name none (a tag without a pid, RFC 5424's `-`), read
/// as one state, as before: the retry lines are read with the latest tool call, worker
/// 2's (whose step has ended: they are no attempts of any call).
#[test]
fn lines_of_one_process_or_of_none_share_one_state() {
    let shapes: [(&str, Header); 3] = [
        ("one pid", |_, i| {
            format!("2026-12-07T19:14:{:02}.000000+00:00 vm agent[17801]:", i)
        }),
        ("no pid", |_, i| format!("Dec  7 19:14:{:02} vm agent:", i)),
        ("RFC 5424 without PROCID", |w, i| {
            format!("<14>1 2026-12-07T19:14:{:02}.000Z vm agent{w} - - -", i)
        }),
    ];
    for (shape, header) in shapes {
        let p = read(&two_workers(header));
        let calls = client_calls(&p);
        let worker1s = calls
            .iter()
            .any(|(line, _, run)| *line >= 7 && run == "worker1");
        assert!(!worker1s, "{shape}: {calls:?}");
    }
}

/// A line that names no process (here, one with no header) is read in the state of the
/// process named last.
#[test]
fn a_line_naming_no_process_goes_on_in_the_latest_ones_state() {
    let header = |w: u32, i: usize| match (w, i) {
        (1, 8) => "2026-12-07T19:14:08.000000+00:00".to_string(),
        _ => format!(
            "2026-12-07T19:14:{:02}.000000+00:00 vm agent[{}]:",
            i,
            17800 + w
        ),
    };
    let text = two_workers(header).replacen("+00:00 WARNING", "+00:00  WARNING", 1);
    let p = read(&text);
    assert!(retried_by_worker1(&p), "{:?}", client_calls(&p));
}

/// journald's entries, as `journalctl -o json` prints them: each line read in the state
/// of the `_PID` (with its identifier) that wrote it; entries of one process as one.
#[test]
fn a_journals_processes_are_read_apart_by_pid() {
    let export = |pid: fn(u32) -> u32| -> String {
        (TWO_WORKERS.lines().enumerate())
            .map(|(i, line)| {
                let (w, msg) = match line.strip_prefix("{1} ") {
                    Some(msg) => (1, msg),
                    None => (2, &line[4..]),
                };
                let entry = serde_json::json!({
                    "__REALTIME_TIMESTAMP": format!("{}", 1_796_670_840_000_000u64 + i as u64 * 1_000_000),
                    "_PID": pid(w).to_string(),
                    "SYSLOG_IDENTIFIER": "agent",
                    "_HOSTNAME": "vm",
                    "MESSAGE": msg,
                });
                format!("{entry}\n")
            })
            .collect()
    };
    let read_export = |text: String| {
        let processes = LineProcesses::default();
        let kind = export::Kind::JournalLines;
        let mut unwrapped =
            export::Unwrapped::new(text.as_bytes(), kind, Default::default(), processes.clone());
        let opts = ParseOptions {
            relevance: None,
            line_processes: Some(processes),
            ..ParseOptions::default()
        };
        parse(&mut unwrapped, 0, &opts).unwrap()
    };
    let p = read_export(export(|w| 17800 + w));
    assert!(retried_by_worker1(&p), "{:?}", client_calls(&p));
    let p = read_export(export(|_| 17801));
    assert!(!retried_by_worker1(&p), "{:?}", client_calls(&p));
}
