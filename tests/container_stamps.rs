//! Whose time a container's line is read at (`src/ingest/container/stamp.rs`): real
//! producers' logs (Go's slog, Log4j 2) wrapped in Docker's `json-file` entries give the
//! findings of the same logs read as plain files, when the lines carry their own stamps,
//! when they carry none (the runtime's taken), when their own is a time of day alone (the
//! runtime's date taken), and when a Java stack trace is written a line an entry.

use idem_audit::report::Report;

mod common;
use common::{fixture, report};

/// Each line of the application's in a Docker `json-file` entry with the runtime's time.
fn docker(lines: &[(String, String)]) -> String {
    lines
        .iter()
        .map(|(log, time)| {
            let entry =
                serde_json::json!({"log": format!("{log}\n"), "stream": "stdout", "time": time});
            format!("{entry}\n")
        })
        .collect()
}

/// The report's findings, as what each says and when: its effects' times, its message
/// (which tells how an attempt failed).
fn findings(r: &Report) -> Vec<String> {
    (r.findings.iter())
        .map(|f| {
            let lines: Vec<u32> = f.evidence.iter().map(|e| e.line).collect();
            format!(
                "{} {:?} {:?} {:?} {:?} at {:?} {:?} {:?} lines {lines:?}: {}",
                f.rule,
                f.order,
                f.cause,
                f.effects,
                f.excess_minor,
                f.at,
                f.first_effect_at,
                f.last_effect_at,
                f.message
            )
        })
        .collect()
}

/// The findings of `files` (name, text) written into a folder, read with `--strict`'s
/// inputs' counts checked: nothing skipped.
fn scan(files: &[(&str, String)]) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<_> = (files.iter())
        .map(|(name, text)| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
    let paths: Vec<&std::path::Path> = paths.iter().map(|p| p.as_path()).collect();
    let r = report(&paths, &[]);
    for input in &r.inputs {
        assert_eq!(input.skipped, 0, "{}: {:?}", input.path, input.problems);
    }
    r
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(fixture(rel)).unwrap()
}

/// A line's own stamp: slog's `time=...` (text) or `"time":"..."` (JSON), the whole value.
fn own_stamp(line: &str) -> &str {
    let start = line
        .find("time=")
        .map(|i| i + 5)
        .or_else(|| line.find("\"time\":\"").map(|i| i + 8));
    let start = start.expect("a stamp");
    let end = line[start..]
        .find([' ', '"'])
        .map_or(line.len(), |e| start + e);
    &line[start..end]
}

/// go-slog-messages: a Go agent's slog JSON lines, a Go service's slog text (logfmt) lines.
fn go_slog(service: String, agent: String) -> Vec<String> {
    findings(&scan(&[("agent.log", agent), ("payments.log", service)]))
}

/// The service's logfmt lines keep their own stamps under the runtime's (a minute later
/// for every line, as a collector's would be), with no second one added, whatever its name
/// (before, the runtime's `time=` was added in front, and read over `@t=` and `asctime=`);
/// without stamps of their own, they take the runtime's.
#[test]
fn a_logfmt_lines_own_stamp_wins_and_none_takes_the_runtimes() {
    let (agent, service) = (
        read("go-slog-messages/agent.log"),
        read("go-slog-messages/payments.log"),
    );
    let plain = go_slog(service.clone(), agent.clone());
    assert!(
        plain.iter().any(|f| f.starts_with("duplicate-effect")),
        "{plain:?}"
    );
    let late: Vec<(String, String)> = (service.lines())
        .map(|l| (l.to_string(), "2026-12-06T03:42:50.000Z".to_string()))
        .collect();
    assert_eq!(go_slog(docker(&late), agent.clone()), plain);
    let renamed: Vec<(String, String)> = (late.iter())
        .map(|(l, t)| (l.replacen("time=", "@t=", 1), t.clone()))
        .collect();
    assert_eq!(go_slog(docker(&renamed), agent.clone()), plain);
    // No stamps of their own: the runtime's, when it wrote the line.
    let unstamped: Vec<(String, String)> = (service.lines())
        .map(|l| {
            let stamp = own_stamp(l);
            (l.replace(&format!("time={stamp} "), ""), stamp.to_string())
        })
        .collect();
    assert!(!unstamped[0].0.contains("time="));
    assert_eq!(go_slog(docker(&unstamped), agent), plain);
}

/// Each side in turn with its stamps cut to the time of day (`time=03:41:41.145Z`,
/// `"time":"03:41:41.156302692Z"`) under the runtime's full time: read on the runtime's
/// date, the findings of the plain logs; before, those lines had no date, and the service's
/// refunds or the agent's calls matched nothing on the other side.
#[test]
fn a_stamp_with_a_time_of_day_alone_takes_the_runtimes_date() {
    let (agent, service) = (
        read("go-slog-messages/agent.log"),
        read("go-slog-messages/payments.log"),
    );
    let plain = go_slog(service.clone(), agent.clone());
    let time_of_day = |log: &str| -> String {
        let wrapped: Vec<(String, String)> = (log.lines())
            .map(|l| {
                let stamp = own_stamp(l);
                (l.replace(stamp, &stamp[11..]), stamp.to_string())
            })
            .collect();
        assert!(wrapped[0].0.contains("=03:41:41") || wrapped[0].0.contains("\"03:41:41"));
        docker(&wrapped)
    };
    assert_eq!(go_slog(time_of_day(&service), agent.clone()), plain);
    assert_eq!(go_slog(service, time_of_day(&agent)), plain);
}

/// Log4j 2's agent log (`java-log4j2-pattern`), its stack traces (`...RefundApiException:
/// POST /v1/refunds failed`, `\tat ...`, `Caused by: java.net.http.HttpTimeoutException:
/// request timed out`, `\t... 2 more`) written by the runtime a line an entry: read as the
/// plain file is, each trace below its record; before, each of its lines took the runtime's
/// stamp and was a line of its own.
#[test]
fn a_java_stack_trace_written_a_line_an_entry_stays_below_its_record() {
    let (agent, service) = (
        read("java-log4j2-pattern/agent.log"),
        read("java-log4j2-pattern/payments.log"),
    );
    let plain = scan(&[
        ("agent.log", agent.clone()),
        ("payments.log", service.clone()),
    ]);
    // The runtime's time: the record's own (`2026-12-06T06:27:48,731`), for its trace too.
    let mut at = String::new();
    let entries: Vec<(String, String)> = (agent.lines())
        .map(|l| {
            if l.starts_with("2026-") {
                at = format!("{}.{}Z", &l[..19], &l[20..23]);
            }
            (l.to_string(), at.clone())
        })
        .collect();
    assert!(entries.iter().any(|(l, _)| l.starts_with("Caused by: ")));
    let wrapped = scan(&[("agent.log", docker(&entries)), ("payments.log", service)]);
    assert_eq!(findings(&wrapped), findings(&plain));
    let events = |r: &Report| (r.inputs.iter()).map(|i| i.events).collect::<Vec<_>>();
    assert_eq!(events(&wrapped), events(&plain));
}
