use super::*;

fn unwrap(text: &str) -> String {
    let wrapper = wrapper_of(text.as_bytes()).expect("a wrapper");
    let mut out = String::new();
    Unwrapped::new(text.as_bytes(), wrapper, Unended::default())
        .read_to_string(&mut out)
        .unwrap();
    out
}

#[test]
fn cri_lines_are_unwrapped_and_split_lines_joined_in_place() {
    let text = "2026-11-03T14:02:11.501234567Z stdout F 2026-11-03T14:02:11.501Z  refund rf_1  order A-1  4500p\n\
                2026-11-03T14:02:12.000000000Z stdout P refund rf_2  \n\
                2026-11-03T14:02:12.000000001Z stdout F order A-2  4500p\n\
                2026-11-03T14:02:13.000000000Z stderr F {\"type\":\"effect\",\"effect_id\":\"rf_3\"}\n\
                garbage\n";
    assert_eq!(
        unwrap(text),
        "2026-11-03T14:02:11.501Z  refund rf_1  order A-1  4500p\n\
         \n\
         2026-11-03T14:02:12.000000001Z  refund rf_2  order A-2  4500p\n\
         {\"ts\":\"2026-11-03T14:02:13.000000000Z\",\"type\":\"effect\",\"effect_id\":\"rf_3\"}\n\
         garbage\n"
    );
}

#[test]
fn a_pretty_printed_object_passes_through_unstamped() {
    // An SDK's console exporter's span, printed over lines, between the program's lines:
    // a stamp before each of its lines would break it; the lines around it keep theirs.
    let text = "2026-11-03T14:02:11.000000000Z stdout F starting\n\
                2026-11-03T14:02:11.100000000Z stdout F {\n\
                2026-11-03T14:02:11.100000001Z stdout F     \"name\": \"POST\",\n\
                2026-11-03T14:02:11.100000002Z stdout F     \"kind\": \"SpanKind.CLIENT\"\n\
                2026-11-03T14:02:11.100000003Z stdout F }\n\
                2026-11-03T14:02:12.000000000Z stdout F done\n";
    assert_eq!(
        unwrap(text),
        "2026-11-03T14:02:11.000000000Z  starting\n\
         {\n    \"name\": \"POST\",\n    \"kind\": \"SpanKind.CLIENT\"\n}\n\
         2026-11-03T14:02:12.000000000Z  done\n"
    );
}

#[test]
fn docker_entries_are_unwrapped() {
    let text = concat!(
        r#"{"log":"2026-11-03T14:02:11.501Z  refund rf_1  order A-1  4500p\n","stream":"stdout","time":"2026-11-03T14:02:11.501234Z"}"#,
        "\n",
        r#"{"log":"{\"event\":\"refund created\",","stream":"stdout","time":"2026-11-03T14:02:12Z"}"#,
        "\n",
        r#"{"log":"\"refund_id\":\"rf_2\"}\n","stream":"stdout","time":"2026-11-03T14:02:12Z"}"#,
        "\n",
    );
    assert_eq!(
        unwrap(text),
        "2026-11-03T14:02:11.501Z  refund rf_1  order A-1  4500p\n\
         \n\
         {\"ts\":\"2026-11-03T14:02:12Z\",\"event\":\"refund created\",\"refund_id\":\"rf_2\"}\n"
    );
}

#[test]
fn other_logs_are_not_wrapped() {
    for head in [
        "2026-11-03T14:02:11.501Z  refund rf_1  order A-1  4500p\n",
        "2026-11-03T14:02:11.501Z stdout X message\n",
        "{\"ts\":\"2026-11-03T14:02:11Z\",\"type\":\"effect\"}\n",
        "{\"log\":42}\n",
    ] {
        assert_eq!(wrapper_of(head.as_bytes()), None, "{head}");
    }
}

/// The lines the splitter gives of a wrapped text, by number and length, and the lines
/// it skipped as too long.
fn split(text: &[u8]) -> (Vec<(u32, usize)>, crate::ingest::long_lines::TooLong) {
    let wrapper = wrapper_of(text).expect("a wrapper");
    let mut notes = crate::ingest::lines::LineNotes::default();
    let mut given = Vec::new();
    let mut reader = Unwrapped::new(text, wrapper, Unended::default());
    crate::ingest::lines::for_each_line(&mut reader, &mut notes, |n, line| {
        given.push((n, line.len()))
    })
    .unwrap();
    (given, notes.too_long)
}

/// A line the runtime split into parts of 16 KiB, `len` bytes in all, the last one
/// tagged `F` when `last_part`.
fn cri_split(len: usize, last_part: bool) -> Vec<u8> {
    let mut text = Vec::new();
    let mut left = len;
    while left > 0 {
        let part = left.min(16 * 1024);
        left -= part;
        let tag = if left == 0 && last_part { "F" } else { "P" };
        text.extend_from_slice(format!("2026-11-03T14:02:12.000000000Z stdout {tag} ").as_bytes());
        text.resize(text.len() + part, b'x');
        text.push(b'\n');
    }
    text
}

const FIRST: &[u8] = b"2026-11-03T14:02:11.000000000Z stdout F 2026-11-03T14:02:11.000Z  first\n";
const LAST: &[u8] = b"2026-11-03T14:02:13.000000000Z stdout F 2026-11-03T14:02:13.000Z  last\n";

/// A split line whose parts join past the cap is passed on as its parts come, for the
/// splitter to skip, numbered at the part that took it past the cap, the lines after it
/// where they were; one that joins to the cap (its stamp put before it) is read whole,
/// at its last part.
#[test]
fn a_split_line_too_long_to_hold_is_skipped_in_place() {
    // Under the cap, the runtime's stamp (32 bytes) is put before the line.
    let cases = [
        (MAX_LINE + 1, true, "F"),
        (MAX_LINE + 1, true, "end of the input"),
        (MAX_LINE + 40_000, true, "F"),
        (MAX_LINE + 40_000, true, "end of the input"),
        (MAX_LINE - 32, false, "F"),
    ];
    for (len, skipped, end) in cases {
        let mut text = FIRST.to_vec();
        text.extend(cri_split(len, end == "F"));
        if end == "F" {
            text.extend_from_slice(LAST);
        }
        let (given, long) = split(&text);
        let n = len.div_ceil(16 * 1024) as u32;
        // The parts other than the line read as blank lines.
        let read: Vec<(u32, usize)> = given.into_iter().filter(|l| l.1 > 0).collect();
        let mut expected = vec![(1, FIRST.len() - 41)];
        if !skipped {
            expected.push((n + 1, len + 32));
        }
        if end == "F" {
            expected.push((n + 2, LAST.len() - 41));
        }
        assert!(read == expected, "{len} {end}: {read:?}");
        let mut too_long = crate::ingest::long_lines::TooLong::default();
        if skipped {
            // 1,024 parts of 16 KiB are the cap: the next part, on line 1,026, is past it
            // (the last part, or one of three).
            too_long.saw(1026, len as u64, MAX_LINE);
        }
        assert_eq!(long, too_long, "{len} {end}");
    }
}

/// A physical line too long to be the runtime's is passed on as it is, and skipped.
#[test]
fn a_physical_line_too_long_to_hold_is_skipped() {
    let mut text = FIRST.to_vec();
    text.resize(text.len() + MAX_LINE + 10, b'y');
    text.push(b'\n');
    text.extend_from_slice(LAST);
    let (given, long) = split(&text);
    assert_eq!(given, [(1, FIRST.len() - 41), (3, LAST.len() - 41)]);
    let mut expected = crate::ingest::long_lines::TooLong::default();
    expected.saw(2, MAX_LINE as u64 + 10, MAX_LINE);
    assert_eq!(long, expected);
}

/// The lines the splitter gives of a wrapped text, by number, as text; whether the last was
/// cut short; and whether the file ended inside a split line.
fn lines_of(text: &str) -> (Vec<(u32, String)>, bool, bool) {
    let wrapper = wrapper_of(text.as_bytes()).expect("a wrapper");
    let unended = Unended::default();
    let mut reader = Unwrapped::new(text.as_bytes(), wrapper, unended.clone());
    let mut notes = crate::ingest::lines::LineNotes::default();
    let mut given = Vec::new();
    crate::ingest::lines::for_each_line(&mut reader, &mut notes, |n, line| {
        given.push((n, String::from_utf8_lossy(line).into_owned()))
    })
    .unwrap();
    assert_eq!(notes.last_line as usize, given.len());
    let ended_inside = unended.0.load(Ordering::Relaxed);
    (given, notes.last_line_cut, ended_inside)
}

const REFUND_AT: &str = "2026-11-03T14:02:12.000000000Z stdout";

/// A file that ends inside a split line gives what there is of it on its last part's line,
/// cut short, as many lines as the file has; one whose split line has its last part gives
/// the whole line there, not cut. In CRI's format and Docker's, with a newline after the
/// last part or none.
#[test]
fn a_file_ending_inside_a_split_line_gives_it_cut_short_on_its_last_part() {
    let first = "2026-11-03T14:02:11.000000000Z stdout F 2026-11-03T14:02:11.000Z  refund rf_1  order A-1  4500p\n";
    let parts = format!(
        "{REFUND_AT} P 2026-11-03T14:02:12.000Z  refund rf_2  \n{REFUND_AT} P order A-1  45"
    );
    let blank = |n: u32| (n, String::new());
    let joined = |n: u32, end: &str| {
        (
            n,
            format!("2026-11-03T14:02:12.000Z  refund rf_2  order A-1  45{end}"),
        )
    };
    let first_line = || {
        (
            1,
            "2026-11-03T14:02:11.000Z  refund rf_1  order A-1  4500p".into(),
        )
    };
    for newline in ["\n", ""] {
        let unended = format!("{first}{parts}{newline}");
        assert_eq!(
            lines_of(&unended),
            (vec![first_line(), blank(2), joined(3, "")], true, true),
            "{newline:?}"
        );
        let ended = format!("{first}{parts}\n{REFUND_AT} F 00p{newline}");
        let cut = newline.is_empty();
        assert_eq!(
            lines_of(&ended),
            (
                vec![first_line(), blank(2), blank(3), joined(4, "00p")],
                cut,
                false
            ),
            "{newline:?}"
        );
    }
    let entry = |log: &str| {
        let entry =
            serde_json::json!({"log": log, "stream": "stdout", "time": "2026-11-03T14:02:12Z"});
        format!("{entry}\n")
    };
    let docker = entry("2026-11-03T14:02:12.000Z  refund rf_2  ") + &entry("order A-1  45");
    assert_eq!(
        lines_of(&docker),
        (vec![blank(1), joined(2, "")], true, true)
    );
    let docker = docker + &entry("00p\n");
    assert_eq!(
        lines_of(&docker),
        (vec![blank(1), blank(2), joined(3, "00p")], false, false)
    );
}

/// A split line of blanks that the file ends inside stays blank lines, not a line cut
/// short; a part without a stamp of its own takes the runtime's, as a whole line does.
#[test]
fn an_unended_split_line_of_blanks_is_blank_and_an_unstamped_one_takes_the_runtimes() {
    let blanks = format!("{REFUND_AT} P   \n{REFUND_AT} P \n");
    let (given, cut, unended) = lines_of(&blanks);
    assert_eq!(given, [(1, String::new()), (2, String::new())]);
    assert!(!cut && !unended);
    let unstamped = format!("{REFUND_AT} F first\n{REFUND_AT} P refund rf_2\n");
    let (given, cut, unended) = lines_of(&unstamped);
    assert_eq!(
        given[1],
        (2, "2026-11-03T14:02:12.000000000Z  refund rf_2".into())
    );
    assert!(cut && unended);
}

/// A line stamped with a time of day alone takes the runtime's date in both wrappers; one
/// with a dated stamp of its own keeps it.
#[test]
fn a_time_of_day_alone_takes_the_runtimes_date() {
    let cri = "2026-12-06T23:59:59.990000000Z stdout F 23:59:59.985 INFO refund created\n\
               2026-12-07T00:00:00.004000000Z stdout F 23:59:59.999 INFO refund created\n\
               2026-12-07T00:00:00.005000000Z stdout F 2026-12-07 00:00:00,001 INFO own\n";
    assert_eq!(
        unwrap(cri),
        "2026-12-06 23:59:59.985 INFO refund created\n\
         2026-12-06 23:59:59.999 INFO refund created\n\
         2026-12-07 00:00:00,001 INFO own\n"
    );
    let docker = "{\"log\":\"08:06:59 INFO refund created\\n\",\"stream\":\"stderr\",\"time\":\"2026-12-06T08:06:59.265Z\"}\n";
    assert_eq!(unwrap(docker), "2026-12-06 08:06:59 INFO refund created\n");
}

/// A traceback the runtime wrote a line an entry is given as the service's own file has it,
/// below its record, not a stamp on each line (its exception's line a failure of its own);
/// a line without a stamp after it takes the runtime's again.
#[test]
fn a_traceback_written_a_line_an_entry_stays_below_its_record() {
    let plain = [
        "2026-12-05 23:26:36,342 ERROR agent: tool failed",
        "Traceback (most recent call last):",
        "  File \"agent.py\", line 9, in call",
        "httpx.ReadTimeout: The read operation timed out",
        "refund retried",
    ];
    let docker: String = plain
        .iter()
        .map(|l| {
            let log = serde_json::to_string(&format!("{l}\n")).unwrap();
            format!("{{\"log\":{log},\"stream\":\"stderr\",\"time\":\"2026-12-05T23:26:36.5Z\"}}\n")
        })
        .collect();
    let mut want = plain[..4].join("\n");
    want.push_str("\n2026-12-05T23:26:36.5Z  refund retried\n");
    assert_eq!(unwrap(&docker), want);
}

/// A Java stack trace the runtime wrote a line an entry is given as the service's own file
/// has it, below its record; the unstamped line after it takes the runtime's stamp again.
#[test]
fn a_java_stack_trace_written_a_line_an_entry_stays_below_its_record() {
    let plain = [
        "2026-12-06 06:27:49,154 WARN  [main] c.a.a.RefundsClient - attempt 1 failed, retrying",
        "com.acme.agent.RefundApiException: POST /v1/refunds failed for order A-88214",
        "\tat com.acme.agent.RefundsClient.send(RefundAgent.java:165) ~[app/:?]",
        "Caused by: java.net.SocketTimeoutException: Read timed out",
        "\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:278)",
        "\t... 12 more",
        "refund retried",
    ];
    let cri: String = plain
        .iter()
        .map(|l| format!("2026-12-06T06:27:49.155Z stderr F {l}\n"))
        .collect();
    let mut want = plain[..6].join("\n");
    want.push_str("\n2026-12-06T06:27:49.155Z  refund retried\n");
    assert_eq!(unwrap(&cri), want);
}

/// java.util.logging's two-line record and the HttpClient's header block below it, written
/// a line an entry, pass below their header as in the service's file; a line that looks like
/// a header or like JUL's second line, with no such record above, takes the runtime's time.
#[test]
fn juls_second_line_and_the_http_clients_headers_stay_below_their_record() {
    let plain = [
        "Dec 06, 2026 10:24:34 AM jdk.internal.net.http.Http1Request logHeaders",
        "INFO: HEADERS: REQUEST HEADERS:",
        "POST /v1/refunds HTTP/1.1",
        "Idempotency-Key: d49d19e4",
        "",
        "Dec 06, 2026 10:24:35 AM com.acme.agent.RefundAgent warn",
        "WARNING: refund attempt 1 failed",
        "Idempotency-Key: d49d19e4",
        "INFO: refund retried",
    ];
    let docker: String = (plain.iter())
        .map(|l| {
            let log = format!("{l}\n");
            let entry = serde_json::json!({"log": log, "stream": "stderr", "time": "2026-12-06T10:24:35.002Z"});
            format!("{entry}\n")
        })
        .collect();
    let mut want = plain[..7].join("\n");
    want.push_str("\n2026-12-06T10:24:35.002Z  Idempotency-Key: d49d19e4");
    want.push_str("\n2026-12-06T10:24:35.002Z  INFO: refund retried\n");
    assert_eq!(unwrap(&docker), want);
}
