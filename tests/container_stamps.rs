//! Whose time a container's line is read at (`src/ingest/container/stamp.rs`): real
//! producers' logs (Go's slog, Log4j 2) wrapped in Docker's `json-file` entries give the
//! findings of the same logs read as plain files, when the lines carry their own stamps,
//! when they carry none (the runtime's taken), when their own is a time of day alone (the
//! runtime's date taken), when a Java stack trace is written a line an entry, and when
//! java.util.logging's two-line records and Java's HttpClient's header blocks are.

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

/// `idem-audit timeline --order ORDER` of `dir`'s `files`, `dir` left out of its paths: each
/// event with its key, and whether its answer was replayed.
fn timeline(dir: &std::path::Path, files: &[&str], order: &str) -> String {
    let out = assert_cmd::Command::cargo_bin("idem-audit")
        .unwrap()
        .args(["timeline", "--order", order])
        .args(files.iter().map(|f| dir.join(f)))
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .replace(&format!("{}/", dir.display()), "")
}

/// A JUL log's lines in Docker `json-file` entries, each at the time the runtime read it:
/// within the second its record's header names (the header's time has no fraction), a
/// millisecond a line after 0.4 s.
fn jul_in_docker(log: &str) -> String {
    let mut header = None;
    let entries: Vec<(String, String)> = (log.lines().enumerate())
        .map(|(n, l)| {
            if let Ok(at) = chrono::NaiveDateTime::parse_and_remainder(l, "%b %d, %Y %I:%M:%S %p") {
                header = Some((at.0, n));
            }
            let (at, first) = header.expect("a header first");
            let at = at + chrono::Duration::milliseconds(400 + (n - first) as i64);
            (
                l.to_string(),
                at.format("%Y-%m-%dT%H:%M:%S%.9fZ").to_string(),
            )
        })
        .collect();
    docker(&entries)
}

/// The JDK's own logs in JUL's default layout, a line an entry (jul-default: a refunds
/// service and an agent; java-httpclient-log-keyed: the HttpClient's request headers with
/// the key below `INFO: HEADERS: REQUEST HEADERS:`): read as the plain files are, each
/// record's second line at its header's time, the headers below their request (attempt 1's
/// key, and the service's replay of it). Before, the message lines took the runtime's time
/// and the header lines were lines of their own: both attempts sent `no key`.
#[test]
fn juls_records_and_the_http_clients_headers_written_a_line_an_entry_stay_whole() {
    for (case, order) in [
        ("jul-default", "A-9"),
        ("java-httpclient-log-keyed", "A-1"),
        ("java-httpclient-log", "A-1"),
    ] {
        let files = ["agent.log", "payments.log"];
        let (plain, wrapped) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for file in files {
            let log = read(&format!("{case}/{file}"));
            std::fs::write(plain.path().join(file), &log).unwrap();
            let in_docker = match log.starts_with("20") {
                // An ISO time first: the runtime's a millisecond after it.
                true => docker(
                    &(log.lines())
                        .scan(String::new(), |at, l| {
                            if l.starts_with("20") {
                                *at = format!("{}999Z", &l[..23]);
                            }
                            Some((l.to_string(), at.clone()))
                        })
                        .collect::<Vec<_>>(),
                ),
                false => jul_in_docker(&log),
            };
            std::fs::write(wrapped.path().join(file), in_docker).unwrap();
        }
        let read_in = |dir: &tempfile::TempDir| {
            let paths: Vec<_> = files.iter().map(|f| dir.path().join(f)).collect();
            let texts: Vec<(&str, String)> = (files.iter().zip(&paths))
                .map(|(f, p)| (*f, std::fs::read_to_string(p).unwrap()))
                .collect();
            let r = scan(&texts);
            let events: Vec<_> = r.inputs.iter().map(|i| (i.events, i.ignored)).collect();
            (findings(&r), events, timeline(dir.path(), &files, order))
        };
        let (plain, wrapped) = (read_in(&plain), read_in(&wrapped));
        assert!(!plain.0.is_empty(), "{case}");
        if case == "java-httpclient-log-keyed" {
            // The key the header block gives attempt 1.
            assert!(plain.2.contains("attempt 1  POST http://127.0.0.1:35975/v1/refunds  key d49d19e4-f3d1-4e83-b8c7-47713e2f33ce"), "{}", plain.2);
        }
        assert_eq!(wrapped, plain, "{case}");
    }
}
