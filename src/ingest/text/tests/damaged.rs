//! Damaged and unknown input: every line accounted for, skipped with a reason or ignored.

use super::*;

#[test]
fn broken_lines_are_skipped_with_a_reason_and_others_ignored() {
    let p = run(
        "14:02:xx  agent run\n10:00:00  healthcheck ok  latency_ms=9\n10:00:01  agent run r  step 1  tool=t  args={nope\n\
         10:00:02  POST https://x/v1/refunds  (attempt x)\n\n# a comment\n10:00:03  agent run r  step x  ok\n",
    );
    assert_eq!(p.stats.lines, 7);
    assert_eq!(p.stats.skipped, 4, "{:?}", p.stats.problems);
    assert_eq!(p.stats.ignored, 3);
    assert_eq!(p.stats.events, 0);
    let lines: Vec<u32> = p.stats.problems.iter().map(|x| x.line).collect();
    assert_eq!(lines, vec![1, 3, 4, 7]);
    assert!(p.stats.problems[0].reason.contains("timestamp"));
    assert!(p.stats.problems[1].reason.contains("not JSON"));
    assert!(p.stats.problems[2].reason.contains("attempt"));
}

/// A web server's access line (werkzeug's, nginx's) has its stamp in brackets after the
/// client's address: understood and ignored, not skipped as a line with no timestamp. A
/// line of the shape whose stamp is no time is still skipped.
#[test]
fn access_lines_are_ignored_and_a_broken_one_skipped() {
    let p = run(concat!(
        "[2026-12-07 07:32:50,932] INFO in service_flask: Refund re_1 created for order A-1: 45.00 GBP\n",
        "127.0.0.1 - - [07/Dec/2026 07:32:51] \"POST /v1/refunds HTTP/1.1\" 201 -\n",
        "203.0.113.5 - - [07/Dec/2026:07:32:52 +0000] \"POST /v1/refunds HTTP/1.1\" 201 127 \"-\" \"curl/8\"\n",
        "127.0.0.1 - - [07/Dec/2026 27:32:51] \"POST /v1/refunds HTTP/1.1\" 201 -\n",
    ));
    assert_counted(&p, (1, 2, 1), 4);
}

/// The parse's (events, ignored, skipped) lines, and the line of its first skipped one.
fn assert_counted(p: &Parsed, counts: (u64, u64, u64), first_skipped: u32) {
    let s = &p.stats;
    assert_eq!((s.events, s.ignored, s.skipped), counts, "{:?}", s.problems);
    assert_eq!(s.problems[0].line, first_skipped);
}

/// A web framework's lines about itself (Flask's banner, uvicorn's start-up, access and
/// shutdown lines) have no timestamp but are known word for word: ignored. Another line
/// with none before the log (a program's own start-up words) is still skipped: it is not
/// known.
#[test]
fn a_frameworks_own_lines_are_ignored_and_unknown_ones_skipped() {
    let p = run(concat!(
        " * Serving Flask app 'payments'\n",
        "WARNING: This is a development server. Do not use it in a production deployment. Use a production WSGI server instead.\n",
        " * Running on http://127.0.0.1:5001\n",
        "Press CTRL+C to quit\n",
        "INFO:     Started server process [14335]\n",
        "Loading settings from ./config.yml\n",
        "2026-12-07 07:36:54,477 INFO payments: refund created refund_id=re_1 order_id=A-1 amount_minor=4500 currency=GBP\n",
        "INFO:     127.0.0.1:55250 - \"POST /v1/refunds HTTP/1.1\" 201 Created\n",
        "INFO:     Shutting down\n",
    ));
    assert_counted(&p, (1, 7, 1), 6);
}

#[test]
fn malformed_fields_of_recognised_shapes_are_skipped() {
    let p = run("10:00:00  agent run r  step 1  tool=issue_refund\n\
         10:00:01  agent run r  step 1  tool=  args={}\n\
         10:00:02  refund rf_1  order A  amount_minor=100\n\
         10:00:03  refund rf_1  order A  amount_p=lots\n\
         10:00:04  201 Created  amount_minor=5  currency=euro\n\
         10:00:05  201 Created  step=four\n\
         10:00:06  urllib3.exceptions.ReadTimeoutError: read timeout=10  step=x\n\
         10:00:07  agent run\n\
         10:00:08  agent run r  step 1  tool=t  args=[1,2]\n");
    let r = reasons(&p);
    assert_eq!(p.stats.skipped, 8, "{r:?}");
    assert_eq!(p.stats.events, 1);
    assert!(r[0].1.contains("args="), "{r:?}");
    assert!(r[2].1.contains("currency"), "{r:?}");
    assert!(r[3].1.contains("amount_p=lots"), "{r:?}");
    assert!(r[5].1.contains("step="), "{r:?}");
}

#[test]
fn inputs_that_once_panicked_are_accounted_for() {
    for line in [
        "10:00:00  a.: x",
        "9999-12-31T00:00:00Z  agent run r  started",
        "# date: 9999-12-31\n10:00:00  agent run r  started",
        "10:00:00  refund rf_1  order A  settled 9999-12-31T00:00:00Z",
        "2262-04-11T23:47:16.854775807-23:59  agent run r  started",
        "10:00:00  refund rf_1  order A  99999999999999999999p",
        "10:00:00  POST https://x  (attempt 99999999999)",
    ] {
        let p = run(line);
        assert_eq!(
            p.stats.lines,
            p.stats.events + p.stats.ignored + p.stats.skipped,
            "{line}"
        );
    }
}

/// What `cargo fuzz run parse_text` found: a line read ahead of an idle call, ending in
/// thirteen digits, was read as a step number (overflowing a `u32` in a debug build), when
/// idle calls are dropped as they are read.
#[test]
fn a_fuzzed_input_with_a_long_number_is_accounted_for() {
    let bytes = include_bytes!("../testdata/fuzz-step-overflow.log");
    crate::ingest::selfcheck::check_filter_agrees(
        crate::ingest::Format::Text,
        bytes,
        &ParseOptions::default(),
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn any_bytes_are_accounted_for(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let p = parse(&mut &bytes[..], 0, &ParseOptions::default()).unwrap();
            prop_assert_eq!(p.stats.lines, p.stats.events + p.stats.ignored + p.stats.skipped);
        }

        #[test]
        fn trace_like_lines_are_accounted_for(lines in proptest::collection::vec(
            prop_oneof![
                Just("14:02:11.402  agent run 7f3a  step 4  tool=issue_refund  args={\"order\":\"A\"}".to_string()),
                Just("14:02:11.418  POST https://p/v1/refunds  (attempt 1)".to_string()),
                Just("--- payments ---".to_string()),
                "[ -~]{0,40}",
                "[0-9:. a-z=p_]{0,30}",
            ], 0..30)) {
            let text = lines.join("\n");
            let p = parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap();
            prop_assert_eq!(p.stats.lines, p.stats.events + p.stats.ignored + p.stats.skipped);
        }

        /// Lines that start like a timestamp and go on with the characters the shapes are
        /// made of, so that the number, date and field parsers see their edge cases.
        #[test]
        fn shaped_lines_never_panic(lines in proptest::collection::vec(
            (
                prop_oneof![
                    Just(""), Just("10:00:00"), Just("23:59:59.999"), Just("9999-12-31T"),
                    Just("2026-11-03T14:02:23"), Just("2262-04-11 23:47:16"), Just("# date: "),
                    Just("---"),
                ],
                "[0-9:.TZ+ _=a-zA-Z(){}\"p-]{0,50}",
            ),
            0..20,
        )) {
            let text: Vec<String> = lines.iter().map(|(a, b)| format!("{a}{b}")).collect();
            let text = text.join("\n");
            let opts = ParseOptions {
                date: chrono::NaiveDate::from_ymd_opt(2026, 11, 3),
                ..ParseOptions::default()
            };
            let p = parse(&mut text.as_bytes(), 0, &opts).unwrap();
            prop_assert_eq!(p.stats.lines, p.stats.events + p.stats.ignored + p.stats.skipped);
            prop_assert_eq!(p.events.len() as u64, p.stats.events);
        }
    }
}

#[test]
fn text_is_read_as_utf8_whether_ascii_or_not() {
    assert_eq!(as_text(b"agent run w0r1"), Some("agent run w0r1"));
    assert_eq!(as_text(b""), Some(""));
    assert_eq!(
        as_text("caf\u{e9} \u{1f600}".as_bytes()),
        Some("caf\u{e9} \u{1f600}")
    );
    assert_eq!(as_text(b"caf\xe9"), None);
    assert_eq!(as_text(b"\xc3"), None);
    assert_eq!(small(b"caf\xe9").as_str(), "caf\u{fffd}");
}

proptest::proptest! {
    /// The message's quick trim answers as the standard one: blanks of every kind (and
    /// vertical tab, which is not one) before and after, any bytes between.
    #[test]
    fn a_message_is_trimmed_as_trim_ascii_trims(
        before in proptest::collection::vec(blank(), 0..4),
        middle in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..4),
        after in proptest::collection::vec(blank(), 0..3),
    ) {
        let bytes = [before, middle, after].concat();
        proptest::prop_assert_eq!(message_of(&bytes), bytes.trim_ascii());
    }
}

fn blank() -> impl proptest::strategy::Strategy<Value = u8> {
    proptest::sample::select(vec![b' ', b'\t', b'\r', b'\n', 0x0c, 0x0b])
}

/// A byte-order mark before the first line (a log saved by a Windows editor) is no part of
/// it: the first event is read; the same mark before a later line leaves that line unread.
#[test]
fn a_byte_order_mark_before_the_first_line_is_not_part_of_it() {
    let line = "14:02:11.402  agent run r  started";
    let p = run(&format!("\u{feff}{line}\n{line}\n"));
    assert_eq!(
        (p.stats.events, p.stats.skipped),
        (2, 0),
        "{:?}",
        p.stats.problems
    );
    assert_eq!(p.events[0].loc.line, 1);
    let p = run(&format!("{line}\n\u{feff}{line}\n"));
    assert_eq!(p.stats.events, 1);
    assert_eq!(
        crate::ingest::source::detect(format!("\u{feff}{line}\n").as_bytes(), &[]),
        Some(crate::ingest::Format::Text)
    );
}

/// A last line with no newline that reads as none of ours (a refund cut before its order,
/// a tool call cut before its tool) may be an event's first bytes: skipped, not ignored.
/// The same line ended by a newline is chatter, and a cut line that still reads as an
/// event is kept.
#[test]
fn a_last_line_cut_short_that_reads_as_no_event_is_skipped() {
    let head = "# date: 2026-11-03\n14:02:11.501  refund rf_8XM1  order A-88214  4500p  settled 14:02:22.884\n";
    for cut in [
        "14:02:23.088  refund rf_9KQ2  ",
        "14:02:11.402  agent run 7f3a  step 4  to",
    ] {
        let p = run(&format!("{head}{cut}"));
        assert_eq!((p.stats.lines, p.stats.skipped), (3, 1), "{cut}");
        assert_eq!(p.stats.problems[0].line, 3);
        assert!(p.stats.problems[0].reason.contains("cut short"));
        let whole = run(&format!("{head}{cut}\n"));
        assert_eq!((whole.stats.skipped, whole.stats.ignored), (0, 2), "{cut}");
    }
    let p = run(&format!(
        "{head}14:02:23.088  refund rf_9KQ2  order A-88214"
    ));
    assert_eq!((p.stats.events, p.stats.skipped), (2, 0));
    // Blank bytes (NUL padding) after the last newline are no line cut short.
    let p = run(&format!("{head}\0\0\0"));
    assert_eq!(p.stats.skipped, 0);
}
