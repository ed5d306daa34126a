//! A program's lines behind syslog headers ([`super::syslog_lines`]), both sides.
use super::tests::refunds;
use super::*;
use crate::time::NANOS_PER_MILLI;

const REFUND: &str =
    "refund created refund_id=re_0002 order_id=A-1 amount=45.00 currency=GBP idempotency_key=None";

fn read(text: &str, opts: &ParseOptions) -> Parsed {
    parse(&mut text.as_bytes(), 0, opts).unwrap()
}

fn on(date: (i32, u32, u32)) -> ParseOptions {
    ParseOptions {
        date: chrono::NaiveDate::from_ymd_opt(date.0, date.1, date.2),
        ..ParseOptions::default()
    }
}

fn at(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64, ms: i64) -> Timestamp {
    let day = days_from_civil(y, mo, d).unwrap() * NANOS_PER_DAY;
    Timestamp(day + (h * 3600 + mi * 60 + s) * NANOS_PER_SEC + ms * NANOS_PER_MILLI)
}

#[test]
fn a_message_behind_each_header_shape_is_read_at_the_headers_time() {
    let when = at(2026, 12, 6, 8, 7, 0, 266);
    for header in [
        // rsyslog's RSYSLOG_FileFormat; journalctl -o short-iso-precise.
        "2026-12-06T08:07:00.266000+00:00 api-1 payments[811]:",
        "2026-12-06T08:07:00.266000+0000 api-1 payments[811]:",
        "2026-12-06T09:07:00.266+01:00 api-1 payments:",
        // RFC 5424, with and without `<PRI>` and structured data.
        "<14>1 2026-12-06T08:07:00.266Z api-1 payments 811 - -",
        r#"<165>1 2026-12-06T08:07:00.266Z api-1 payments 811 ID47 [exampleSDID@32473 iut="3"]"#,
        "1 2026-12-06T08:07:00.266000+00:00 api-1 payments 811 - -",
        // journalctl -o short-precise.
        "Dec 06 08:07:00.266000 api-1 payments[811]:",
    ] {
        let p = read(&format!("{header} {REFUND}\n"), &on((2026, 12, 6)));
        assert_eq!(refunds(&p), vec![("re_0002".into(), when)], "{header}");
    }
    // A level and a logger's name after the header, as Python's logging writes them.
    let p = read(
        &format!("Dec  6 08:07:00 api-1 payments[811]: INFO payments {REFUND}\n"),
        &on((2026, 12, 6)),
    );
    assert_eq!(
        refunds(&p),
        vec![("re_0002".into(), at(2026, 12, 6, 8, 7, 0, 0))]
    );
}

#[test]
fn a_message_with_its_own_stamp_is_read_at_that_stamp() {
    let p = read(
        &format!(
            "2026-12-06T08:07:01+00:00 api-1 payments[811]: 2026-12-06 08:07:00,266 INFO payments {REFUND}\n"
        ),
        &ParseOptions::default(),
    );
    assert_eq!(
        refunds(&p),
        vec![("re_0002".into(), at(2026, 12, 6, 8, 7, 0, 266))]
    );
}

/// A time of day alone behind a header (`%(asctime)s` written without its date) does not
/// take the line off the header's date: it is passed over, and the header places the line.
#[test]
fn a_time_of_day_behind_a_header_keeps_the_headers_date() {
    for header in [
        "2026-12-06T08:07:01+00:00 api-1 payments[811]:",
        "<134>1 2026-12-06T08:07:01Z api-1 payments 811 - -",
        "Dec  6 08:07:01 api-1 payments[811]:",
    ] {
        for own in ["08:07:00.266", "[08:07:00.266]"] {
            let p = read(
                &format!("{header} {own} INFO payments {REFUND}\n"),
                &on((2026, 12, 6)),
            );
            assert_eq!(
                refunds(&p),
                vec![("re_0002".into(), at(2026, 12, 6, 8, 7, 1, 0))],
                "{header} {own}"
            );
        }
    }
}

#[test]
fn bsd_stamps_take_the_year_nearest_the_date_given_and_say_so() {
    let text = format!(
        "Dec 31 23:59:59 api-1 payments[811]: {REFUND}\nJan  1 00:00:01 api-1 payments[811]: {}\n",
        REFUND.replace("re_0002", "re_0003")
    );
    let p = read(&text, &on((2026, 12, 31)));
    assert_eq!(
        refunds(&p),
        vec![
            ("re_0002".into(), at(2026, 12, 31, 23, 59, 59, 0)),
            ("re_0003".into(), at(2027, 1, 1, 0, 0, 1, 0)),
        ]
    );
    assert!(
        p.stats
            .notes
            .iter()
            .any(|n| n.contains("read in 2026 to 2027, the year nearest")),
        "{:?}",
        p.stats.notes
    );
    // Undated, the file's modification time: none later than the day after it.
    let opts = ParseOptions {
        file_written: chrono::NaiveDate::from_ymd_opt(2027, 3, 1),
        ..ParseOptions::default()
    };
    let p = read(&text, &opts);
    assert_eq!(refunds(&p)[0].1, at(2026, 12, 31, 23, 59, 59, 0));
    assert!(
        p.stats
            .notes
            .iter()
            .any(|n| n.contains("modification time"))
    );
    // The same stamp on a line of no syslog header: no note, no year.
    let p = read("2026-12-06T08:07:00Z  refund noted\n", &on((2026, 12, 6)));
    assert!(p.stats.notes.is_empty(), "{:?}", p.stats.notes);
}

#[test]
fn chatter_behind_a_header_is_ignored_not_skipped() {
    let text = "Dec  6 08:06:58 api-1 payments[811]: INFO uvicorn Started server process\n\
        2026-12-06T08:06:58.000000+00:00 api-1 systemd[1]: Started payments.service.\n\
        <30>1 2026-12-06T08:06:58Z api-1 systemd 1 - - Started payments.service.\n\
        Dec  6 08:06:58 api-1 kernel:\n";
    let p = read(text, &on((2026, 12, 6)));
    assert_eq!(
        (p.stats.events, p.stats.ignored, p.stats.skipped),
        (0, 4, 0)
    );
}

#[test]
fn lines_that_only_look_like_a_header_read_as_before() {
    // A line below a record that opens with a month and a day: skipped with no stamp, as
    // before (no time, no host and tag).
    let text = format!("2026-12-06T08:07:00Z  {REFUND}\nDec 6 is the date of the refund\n");
    let p = read(&text, &ParseOptions::default());
    assert_eq!(
        refunds(&p),
        vec![("re_0002".into(), at(2026, 12, 6, 8, 7, 0, 0))]
    );
    assert_eq!(
        (p.stats.events, p.stats.ignored, p.stats.skipped),
        (1, 0, 1)
    );
    assert_eq!(p.stats.problems[0].reason, NO_STAMP);
    // A message (two blanks after the stamp) that opens as a header would: no header is
    // taken off it, so the refund behind it is not read.
    let text = format!("2026-12-06T08:07:00Z  Dec  6 08:07:00 api-1 payments[811]: {REFUND}\n");
    let p = read(&text, &on((2026, 12, 6)));
    assert_eq!((p.stats.events, p.stats.ignored), (0, 1));
    // Alone, such a line has no stamp, as before.
    let p = read(
        "Dec 6 is the date of the refund\n",
        &ParseOptions::default(),
    );
    assert_eq!(p.stats.skipped, 1);
    assert_eq!(p.stats.problems[0].reason, NO_STAMP);
    // A message whose first words are a word and a colon is no header's host and tag: the
    // line reads as the text traces read it.
    let p = read(
        &format!("2026-12-06T08:07:00Z  {REFUND}\n"),
        &ParseOptions::default(),
    );
    assert_eq!(refunds(&p).len(), 1);
}

#[test]
fn a_gateways_access_line_behind_a_header_shows_its_retry() {
    // rsyslog's file on Debian 12 (fixture gateway-haproxy-retry's haproxy-syslog.log).
    let p = read(
        r#"2026-12-07T16:11:36+00:00 localhost haproxy[16851]: 127.0.0.1:38892 [07/Dec/2026:16:11:35.890] payments replicas/pay-b 0/1001/0/8/1010 201 244 - - ---- 1/1/0/0/+1 0/0 "POST /v1/refunds HTTP/1.1"
2026-12-07T16:08:44+00:00 localhost haproxy[16851]: 127.0.0.1:33832 [07/Dec/2026:16:08:44.140] payments replicas/pay-a 0/0/0/-1/1000 504 198 - - sH-- 1/1/0/0/0 0/0 "POST /v1/refunds HTTP/1.1"
2026-12-07T16:08:44+00:00 localhost haproxy[16851]: Proxy payments started.
"#,
        &ParseOptions::default(),
    );
    assert_eq!((p.stats.events, p.stats.ignored), (1, 2));
    match &p.events[0].kind {
        EventKind::GatewayTry(g) => assert!(g.shows.starts_with("sent the request again 1 time")),
        other => panic!("{other:?}"),
    }
    assert_eq!(p.events[0].at, at(2026, 12, 7, 16, 11, 36, 0));
}

/// journalctl's marks between its entries are ignored, not skipped: `--strict` passes on its
/// output; a line that only starts like one is still skipped with its reason.
#[test]
fn journalctl_marks_are_ignored() {
    let marks = "-- Boot 0123456789abcdef0123456789abcdef --\n-- No entries --\n\
                 -- Logs begin at Sun 2026-12-06 08:00:00 UTC, end at Sun 2026-12-06 09:00:00 UTC. --\n";
    let p = read(
        &format!("{marks}Dec 06 08:07:00 api-1 payments[811]: INFO payments {REFUND}\n"),
        &on((2026, 12, 6)),
    );
    assert_eq!(
        (p.stats.events, p.stats.ignored, p.stats.skipped),
        (1, 3, 0)
    );
    let p = read("-- Boot 0123 and then some\n", &on((2026, 12, 6)));
    assert_eq!(p.stats.skipped, 1);
}
