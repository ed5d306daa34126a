use super::*;
use crate::ingest::source::{Input, Origin, Outcome, read_all};
use crate::ingest::{Format, ParseOptions};

/// The lines an export of `kind` gives, and the entries it skipped (line, why).
fn unwrap(kind: Kind, text: &str) -> (Vec<String>, Vec<(u32, String)>) {
    let skips = Skips::default();
    let mut out = String::new();
    Unwrapped::new(
        text.as_bytes(),
        kind,
        skips.clone(),
        LineProcesses::default(),
    )
    .read_to_string(&mut out)
    .unwrap();
    let skipped = skips.0.lock().unwrap().1.clone();
    let lines = out.lines().map(str::to_string).collect();
    (
        lines,
        skipped.into_iter().map(|p| (p.line, p.reason)).collect(),
    )
}

#[test]
fn exports_are_told_by_their_first_entry_and_nothing_else_is() {
    let journal = r#"{"__CURSOR":"s=1","__REALTIME_TIMESTAMP":"1796544419265123","MESSAGE":"hi"}"#;
    assert_eq!(kind_of(journal.as_bytes()), Some(Kind::JournalLines));
    let pretty =
        "{\n\t\"MESSAGE\" : \"hi\",\n\t\"__REALTIME_TIMESTAMP\" : \"1796544419265123\"\n}\n";
    assert_eq!(kind_of(pretty.as_bytes()), Some(Kind::JournalPretty));
    let cw = "{\n    \"events\": [\n        {\n            \"timestamp\": 1796544419265,\n            \"message\": \"hi\"\n        }\n    ]\n}\n";
    assert_eq!(kind_of(cw.as_bytes()), Some(Kind::CloudWatch));
    let compact = r#"{"events": [{"logStreamName": "s", "timestamp": 1, "message": "hi"}], "nextToken": "x"}"#;
    assert_eq!(kind_of(compact.as_bytes()), Some(Kind::CloudWatch));
    assert_eq!(
        kind_of(br#"{"events": [], "searchedLogStreams": []}"#),
        Some(Kind::CloudWatch)
    );
    let gcp = r#"[{"logName": "projects/p/logs/x", "textPayload": "hi", "timestamp": "2026-12-06T08:06:59.265Z"}]"#;
    assert_eq!(kind_of(gcp.as_bytes()), Some(Kind::GcpEntries));
    // A JSON Lines log, a Docker line, a document of other events, an array of other
    // objects, and a text line are none.
    let nots = [
        r#"{"timestamp":"2026-12-06T08:06:59Z","message":"refund created"}"#,
        r#"{"log":"hi\n","stream":"stdout","time":"2026-11-03T14:02:11Z"}"#,
        r#"{"events": [{"type": "refund", "id": "re_1"}]}"#,
        r#"[{"timestamp": "2026-12-06T08:06:59Z", "message": "hi"}]"#,
        r#"{"MESSAGE": "hi", "__REALTIME_TIMESTAMP": 1796544419265123}"#,
        "2026-12-06 08:06:59,265 INFO payments refund created",
    ];
    for not in nots {
        assert_eq!(kind_of(not.as_bytes()), None, "{not}");
    }
}

#[test]
fn a_journal_entry_gives_its_message_with_its_time_to_the_microsecond() {
    let text = concat!(
        r#"{"__REALTIME_TIMESTAMP":"1796544419265123","MESSAGE":"INFO payments refund created refund_id=re_1","_PID":"812"}"#,
        "\n\n",
        // Its own stamp wins; bytes that are no UTF-8 come as they are; a JSON message
        // without a stamp takes the entry's as `ts`.
        r#"{"MESSAGE":"2026-12-06 08:07:00,266 INFO payments refund created","__REALTIME_TIMESTAMP":"1796544420999999"}"#,
        "\n",
        r#"{"MESSAGE":[99,97,102,233],"__REALTIME_TIMESTAMP":"1796544420000000"}"#,
        "\n",
        r#"{"MESSAGE":"{\"event\":\"refund created\"}","__REALTIME_TIMESTAMP":"1796544420000001"}"#,
        "\n",
        r#"{"MESSAGE":"Traceback (most recent call last):\n  File \"x\"\n","__REALTIME_TIMESTAMP":"1796544420000002"}"#,
        "\n",
    );
    let skips = Skips::default();
    let mut out = Vec::new();
    Unwrapped::new(
        text.as_bytes(),
        Kind::JournalLines,
        skips.clone(),
        LineProcesses::default(),
    )
    .read_to_end(&mut out)
    .unwrap();
    let lines: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
    assert_eq!(
        &lines[..6],
        [
            b"2026-12-06T08:06:59.265123Z  INFO payments refund created refund_id=re_1".as_slice(),
            b"",
            b"2026-12-06 08:07:00,266 INFO payments refund created",
            b"2026-12-06T08:07:00.000000Z  caf\xe9",
            br#"{"ts":"2026-12-06T08:07:00.000001Z","event":"refund created"}"#,
            br#"2026-12-06T08:07:00.000002Z  Traceback (most recent call last):   File "x""#,
        ]
    );
    assert_eq!(skips.0.lock().unwrap().0, 0);
}

#[test]
fn a_bad_journal_entry_is_a_blank_line_skipped_with_why() {
    let text = concat!(
        r#"{"__REALTIME_TIMESTAMP":"1796544419265123"}"#,
        "\n",
        r#"{"__REALTIME_TIMESTAMP":"17965444.19","MESSAGE":"hi"}"#,
        "\n",
        r#"{"__REALTIME_TIMESTAMP":1796544419265123,"MESSAGE":"hi"}"#,
        "\n",
        r#"{"__REALTIME_TIMESTAMP":"1796544419265123","MESSAGE":null}"#,
        "\n",
        r#"{"__REALTIME_TIMESTAMP":"1796544419265123","MESSAGE":"cut"#,
        "\n",
        r#"{"__REALTIME_TIMESTAMP":"1796544419265123","MESSAGE":"ok"}"#,
        "\n",
    );
    let (lines, skipped) = unwrap(Kind::JournalLines, text);
    assert_eq!(lines.len(), 6);
    assert!(lines[..5].iter().all(String::is_empty), "{lines:?}");
    assert_eq!(lines[5], "2026-12-06T08:06:59.265123Z  ok");
    let lines_skipped: Vec<u32> = skipped.iter().map(|s| s.0).collect();
    assert_eq!(lines_skipped, [1, 2, 3, 4, 5]);
    assert_eq!(skipped[0].1, "journald entry without MESSAGE");
    assert!(
        skipped[1].1.contains("not a number of microseconds"),
        "{}",
        skipped[1].1
    );
    assert!(
        skipped[2].1.contains("not a number of microseconds"),
        "{}",
        skipped[2].1
    );
    assert!(skipped[3].1.contains("--all"), "{}", skipped[3].1);
    assert!(
        skipped[4].1.starts_with("not a journald entry: not JSON"),
        "{}",
        skipped[4].1
    );
}

#[test]
fn a_cloudwatch_page_gives_each_message_on_its_line() {
    let page = "{\n    \"events\": [\n        {\n            \"timestamp\": 1796544419265,\n            \"message\": \"INFO refund created\",\n            \"ingestionTime\": 1796670790946\n        },\n        {\n            \"message\": \"no time\"\n        },\n        {\n            \"timestamp\": 1796544419265.5,\n            \"message\": \"a float\"\n        },\n        {\n            \"timestamp\": 1796544419266\n        }\n    ]\n}\n";
    let (lines, skipped) = unwrap(Kind::CloudWatch, page);
    assert_eq!(lines.len(), page.lines().count());
    assert_eq!(lines[4], "2026-12-06T08:06:59.265Z  INFO refund created");
    let others = lines
        .iter()
        .enumerate()
        .filter(|(i, l)| *i != 4 && !l.is_empty());
    assert_eq!(others.count(), 0, "{lines:?}");
    let skipped: Vec<(u32, &str)> = skipped.iter().map(|(l, w)| (*l, w.as_str())).collect();
    assert_eq!(
        skipped,
        [
            (8, "CloudWatch Logs event without timestamp"),
            (
                11,
                "CloudWatch Logs event's timestamp 1796544419265.5 is not a number of milliseconds"
            ),
            (15, "CloudWatch Logs event without message"),
        ]
    );
    // Pages one after another, and a page on one line (boto3's json.dumps): its events each
    // on a line of their own from there on.
    let compact = r#"{"events": [{"timestamp": 1796544419265, "message": "a"}, {"timestamp": 1796544419266, "message": "b"}]}"#;
    let (lines, skipped) = unwrap(
        Kind::CloudWatch,
        &format!("{compact}\n{compact}{compact}\n"),
    );
    let at = |ms: u32, m: &str| format!("2026-12-06T08:06:59.{ms}Z  {m}");
    assert_eq!(
        lines,
        [
            at(265, "a"),
            at(266, "b"),
            at(265, "a"),
            at(266, "b"),
            at(265, "a"),
            at(266, "b")
        ]
    );
    assert!(skipped.is_empty());
}

#[test]
fn a_broken_document_is_skipped_from_where_it_breaks() {
    let text = "{\"events\": [\n{\"timestamp\": 1796544419265, \"message\": \"a\"},\n{\"timestamp\": 17965\n";
    let (lines, skipped) = unwrap(Kind::CloudWatch, text);
    assert_eq!(lines[1], "2026-12-06T08:06:59.265Z  a");
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].0, 3);
    assert!(
        skipped[0].1.contains("not read past here"),
        "{}",
        skipped[0].1
    );
    // A document that is another's than the platform's, in an export: skipped, the rest read.
    let text = "{\"events\": []}\n{\"other\": 1}\n{\"events\": [{\"timestamp\": 0, \"message\": \"b\"}]}\n";
    let (lines, skipped) = unwrap(Kind::CloudWatch, text);
    assert_eq!(lines[2], "1970-01-01T00:00:00.000Z  b");
    assert_eq!(
        skipped,
        [(
            2,
            "a JSON document that is no CloudWatch Logs page (no events array)".to_string()
        )]
    );
}

#[test]
fn cloud_logging_entries_give_text_and_json_payloads() {
    let text = concat!(
        "[\n",
        r#"{"timestamp": "2026-12-06T08:06:59.265123Z", "textPayload": "INFO refund created\n", "logName": "l"},"#,
        "\n",
        r#"{"timestamp": "2026-12-06T08:06:59.3Z", "jsonPayload": {"event": "refund created", "amount_minor": 4500}},"#,
        "\n",
        r#"{"timestamp": "2026-12-06T08:06:59.4Z", "protoPayload": {"@type": "type.googleapis.com/google.cloud.audit.AuditLog"}},"#,
        "\n",
        r#"{"timestamp": "2026-12-06T08:06:59.4Z", "labels": {}},"#,
        "\n",
        r#"{"timestamp": 1796544419265, "textPayload": "x"},"#,
        "\n",
        r#"{"textPayload": "x"}"#,
        "\n]\n",
    );
    let (lines, skipped) = unwrap(Kind::GcpEntries, text);
    assert_eq!(lines[1], "2026-12-06T08:06:59.265123Z  INFO refund created");
    assert_eq!(
        lines[2],
        r#"{"ts":"2026-12-06T08:06:59.3Z","amount_minor":4500,"event":"refund created"}"#
    );
    assert_eq!(lines[3], "");
    let skipped: Vec<(u32, &str)> = skipped.iter().map(|(l, w)| (*l, w.as_str())).collect();
    assert_eq!(
        skipped,
        [
            (5, "Cloud Logging entry without textPayload or jsonPayload"),
            (
                6,
                "Cloud Logging entry's timestamp 1796544419265 is not an RFC 3339 time"
            ),
            (7, "Cloud Logging entry without timestamp"),
        ]
    );
}

#[test]
fn an_entry_skipped_is_counted_skipped_with_its_line() {
    let mut stats = InputStats {
        lines: 5,
        events: 1,
        ignored: 4,
        ..InputStats::default()
    };
    stats.skip(4, "parser's");
    stats.ignored -= 1;
    let skips = Skips::default();
    skips.add(2, "entry's".into());
    skips.add(5, "entry's".into());
    Skips::settle(Some(&skips), &mut stats);
    assert_eq!((stats.events, stats.ignored, stats.skipped), (1, 1, 3));
    let lines: Vec<u32> = stats.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [2, 4, 5]);
}

/// Read as an input is: detected, unwrapped, parsed, with the entries skipped in its report.
#[test]
fn an_export_read_as_an_input_counts_its_bad_entries() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("service.json");
    let text = concat!(
        r#"{"__REALTIME_TIMESTAMP":"1796544419265123","MESSAGE":"INFO payments refund created refund_id=re_1 order_id=A-1 amount=45.00 currency=GBP"}"#,
        "\n",
        r#"{"__REALTIME_TIMESTAMP":"soon","MESSAGE":"INFO payments refund created refund_id=re_2 order_id=A-1 amount=45.00 currency=GBP"}"#,
        "\n",
        r#"{"__REALTIME_TIMESTAMP":"1796544419265999","MESSAGE":"Started payments.service"}"#,
        "\n",
    );
    std::fs::write(&path, text).unwrap();
    let input = Input {
        display: "service.json".into(),
        origin: Origin::File(path),
        explicit: true,
    };
    let outcome = read_all(&[input], None, &ParseOptions::default()).remove(0);
    let Outcome::Parsed(format, parsed) = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(format, Format::Text);
    let s = &parsed.stats;
    assert_eq!((s.lines, s.events, s.ignored, s.skipped), (3, 1, 1, 1));
    assert_eq!(s.problems[0].line, 2);
    assert!(
        s.problems[0].reason.contains("\"soon\" is not a number"),
        "{:?}",
        s.problems
    );
    let ev = parsed.all_events().next().unwrap();
    assert_eq!(ev.loc.line, 1);
}

/// A payload nested `levels` deep, a refund's line at its top.
fn nested_payload(levels: usize) -> String {
    let inner = format!("{}1{}", r#"{"a":"#.repeat(levels), "}".repeat(levels));
    format!(r#"{{"event": "refund created", "refund_id": "re_1", "detail": {inner}}}"#)
}

/// A jsonPayload nested past the JSON reader's depth is skipped as that, on its line (the
/// export still told by it when it comes first); one nested less deep is read.
#[test]
fn a_json_payload_nested_too_deep_is_skipped_as_that() {
    let entry = |payload: String| {
        format!(
            r#"{{"logName": "l", "timestamp": "2026-12-06T08:06:59.3Z", "jsonPayload": {payload}}}"#
        )
    };
    let deep = entry(nested_payload(140));
    let text = format!("[\n{deep},\n{}\n]\n", entry(nested_payload(3)));
    assert_eq!(kind_of(text.as_bytes()), Some(Kind::GcpEntries));
    let (lines, skipped) = unwrap(Kind::GcpEntries, &text);
    assert_eq!(lines[1], "");
    assert!(
        lines[2].starts_with(r#"{"ts":"2026-12-06T08:06:59.3Z","detail":{"a":{"a":{"a":1}}}"#),
        "{}",
        lines[2]
    );
    assert_eq!(
        skipped,
        [(
            2,
            "Cloud Logging entry's jsonPayload is nested too deep to read: more than 127 levels \
             of arrays and objects, the most the JSON reader reads"
                .to_string()
        )]
    );
}

/// A message stamped with a time of day alone (Python's `%(asctime)s` given a `datefmt` of
/// `%H:%M:%S`) is dated by its entry, read as an event on that day; one with a dated stamp
/// of its own keeps it (`a_journal_entry_gives_its_message_with_its_time_to_the_microsecond`).
#[test]
fn a_time_of_day_alone_is_dated_by_the_entry() {
    let text = concat!(
        r#"{"__REALTIME_TIMESTAMP":"1796544419265123","MESSAGE":"08:06:59 INFO payments refund created refund_id=re_1 order_id=A-1 amount=45.00 currency=GBP"}"#,
        "\n",
    );
    let (lines, skipped) = unwrap(Kind::JournalLines, text);
    assert_eq!(
        lines,
        [
            "2026-12-06 08:06:59 INFO payments refund created refund_id=re_1 order_id=A-1 amount=45.00 currency=GBP"
        ]
    );
    assert!(skipped.is_empty());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("service.json");
    std::fs::write(&path, text).unwrap();
    let input = Input {
        display: "service.json".into(),
        origin: Origin::File(path),
        explicit: true,
    };
    let Outcome::Parsed(_, parsed) = read_all(&[input], None, &ParseOptions::default()).remove(0)
    else {
        panic!("not parsed");
    };
    let ev = parsed.all_events().next().expect("an event");
    assert_eq!(ev.at.to_string(), "2026-12-06T08:06:59.000Z");
}

/// A traceback journald took from standard output a line an entry stays below its record,
/// unstamped, as in the service's own file; the entry after it takes its stamp again.
#[test]
fn a_traceback_logged_a_line_an_entry_stays_below_its_record() {
    let text = journal_entries(&[
        "ERROR agent tool failed",
        "Traceback (most recent call last):",
        "  File \\\"agent.py\\\", line 9, in call",
        "httpx.ReadTimeout: The read operation timed out",
        "INFO agent retrying",
    ]);
    let (lines, _) = unwrap(Kind::JournalLines, &text);
    assert_eq!(
        lines,
        [
            "2026-12-06T08:06:59.265123Z  ERROR agent tool failed",
            "Traceback (most recent call last):",
            "  File \"agent.py\", line 9, in call",
            "httpx.ReadTimeout: The read operation timed out",
            "2026-12-06T08:06:59.265123Z  INFO agent retrying",
        ]
    );
}

/// A Java stack trace journald took from standard output a line an entry stays below its
/// record, unstamped; the entry after it takes its stamp again.
#[test]
fn a_java_stack_trace_logged_a_line_an_entry_stays_below_its_record() {
    let text = journal_entries(&[
        "WARN agent attempt 1 failed, retrying",
        "java.net.SocketTimeoutException: Read timed out",
        "\\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:278)",
        "Caused by: java.io.IOException: closed",
        "\\t... 12 more",
        "INFO agent retrying",
    ]);
    let (lines, _) = unwrap(Kind::JournalLines, &text);
    assert_eq!(
        lines,
        [
            "2026-12-06T08:06:59.265123Z  WARN agent attempt 1 failed, retrying",
            "java.net.SocketTimeoutException: Read timed out",
            "\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:278)",
            "Caused by: java.io.IOException: closed",
            "\t... 12 more",
            "2026-12-06T08:06:59.265123Z  INFO agent retrying",
        ]
    );
}

/// java.util.logging's two-line records journald took a line an entry: the message line
/// stays below its header, and the HttpClient's headers below theirs, unstamped; a message
/// line with no header above takes the entry's stamp.
#[test]
fn juls_records_logged_a_line_an_entry_stay_whole() {
    let text = journal_entries(&[
        "Dec 06, 2026 8:06:59 AM jdk.internal.net.http.Http1Request logHeaders",
        "INFO: HEADERS: REQUEST HEADERS:",
        "POST /v1/refunds HTTP/1.1",
        "Idempotency-Key: k-1",
        "",
        "INFO: refund retried",
    ]);
    let (lines, _) = unwrap(Kind::JournalLines, &text);
    assert_eq!(
        lines,
        [
            "Dec 06, 2026 8:06:59 AM jdk.internal.net.http.Http1Request logHeaders",
            "INFO: HEADERS: REQUEST HEADERS:",
            "POST /v1/refunds HTTP/1.1",
            "Idempotency-Key: k-1",
            "",
            "2026-12-06T08:06:59.265123Z  INFO: refund retried",
        ]
    );
}

/// `journalctl -o json`'s lines of `messages` (JSON-escaped already), each at one time.
fn journal_entries(messages: &[&str]) -> String {
    (messages.iter())
        .map(|m| format!("{{\"__REALTIME_TIMESTAMP\":\"1796544419265123\",\"MESSAGE\":\"{m}\"}}\n"))
        .collect()
}

/// Each entry's line is told the process that wrote it (`_PID`, with its command or
/// identifier, unit, container, host and boot), in `-o json` and in `-o json-pretty`, where
/// the line is its MESSAGE's; an entry without a pid names none.
#[test]
fn each_entrys_line_is_told_its_process() {
    let entry = |pid: Option<&str>, ident: &str, msg: &str| {
        let mut e = serde_json::json!({
            "__REALTIME_TIMESTAMP": "1796544420000000",
            "SYSLOG_IDENTIFIER": ident,
            "_HOSTNAME": "vm",
            "MESSAGE": msg,
        });
        if let Some(pid) = pid {
            e["_PID"] = pid.into();
        }
        e
    };
    let with = |mut e: serde_json::Value, field: &str, value: &str| {
        e[field] = value.into();
        e
    };
    let python = |ident: &str, msg: &str| with(entry(Some("900"), ident, msg), "_COMM", "python3");
    let docker = |id: &str, msg: &str| {
        with(
            with(entry(Some("700"), id, msg), "_COMM", "dockerd"),
            "CONTAINER_ID",
            id,
        )
    };
    let entries = [
        entry(Some("811"), "agent", "a"),
        entry(None, "kernel", "k"),
        entry(Some("812"), "agent", "b"),
        entry(Some("811"), "agent", "c"),
        entry(Some("811"), "payments", "d"),
        // One process's standard error and its syslog ident: one process.
        python("python3", "e"),
        python("agent", "f"),
        // Docker's journald driver: dockerd's pid, a container each.
        docker("4f1c2d9e8b7a", "g"),
        docker("0a1b2c3d4e5f", "h"),
    ];
    let told_as = [
        Some(0),
        None,
        Some(1),
        Some(0),
        Some(2),
        Some(3),
        Some(3),
        Some(4),
        Some(5),
    ];
    let processes_of = |kind: Kind, text: String, lines: &[u32]| {
        let processes = LineProcesses::default();
        let mut out = Vec::new();
        Unwrapped::new(text.as_bytes(), kind, Skips::default(), processes.clone())
            .read_to_end(&mut out)
            .unwrap();
        lines
            .iter()
            .map(|&n| processes.of_line(n))
            .collect::<Vec<_>>()
    };
    let text: String = entries.iter().map(|e| format!("{e}\n")).collect();
    let told = processes_of(Kind::JournalLines, text, &[1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert_eq!(told, told_as);
    let pretty: String = entries
        .iter()
        .map(|e| serde_json::to_string_pretty(e).unwrap() + "\n")
        .collect();
    let message_lines: Vec<u32> = (pretty.lines().enumerate())
        .filter(|(_, l)| l.contains("\"MESSAGE\""))
        .map(|(i, _)| i as u32 + 1)
        .collect();
    let told = processes_of(Kind::JournalPretty, pretty, &message_lines);
    assert_eq!(told, told_as);
}
