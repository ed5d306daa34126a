use super::*;

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

#[test]
fn host_and_tag_after_a_stamp_give_the_message() {
    let msg = |rest: &str| {
        after_host_and_tag(rest.as_bytes()).map(|h| String::from_utf8_lossy(h.msg).into_owned())
    };
    assert_eq!(
        msg(" api-1 payments[811]: refund created refund_id=re_0002").as_deref(),
        Some("refund created refund_id=re_0002")
    );
    assert_eq!(
        msg(" gw haproxy[16851]: 127.0.0.1:41234 [07/Dec/2026:16:11:35.001] fe").as_deref(),
        Some("127.0.0.1:41234 [07/Dec/2026:16:11:35.001] fe")
    );
    assert_eq!(msg(" api-1 kernel: oom").as_deref(), Some("oom"));
    assert_eq!(msg(" api-1 payments:").as_deref(), Some(""));
    // Messages that only look like one: a level and a logger, a message's own colon,
    // two blanks (the text traces' layout), a pid that is no number, quotes.
    for rest in [
        " INFO payments refund created: re_0001",
        "  api-1 payments[811]: refund created",
        " api-1 payments[8a1]: x",
        " api-1 \"payments\": x",
        " api-1 payments[811]:x",
        " refund created refund_id=re_0002",
    ] {
        assert_eq!(msg(rest), None, "{rest}");
    }
}

#[test]
fn bsd_stamps_as_rsyslog_and_journalctl_write_them() {
    let (stamp, msg) = bsd(b"Dec  6 08:07:00 api-1 payments[811]: refund created").unwrap();
    assert_eq!(
        (stamp.month, stamp.day, stamp.time),
        (12, 6, &b"08:07:00"[..])
    );
    assert_eq!(msg.msg, b"refund created");
    assert_eq!(msg.process, Some(&b"api-1 payments[811]"[..]));
    // journalctl -o short pads the day with a zero; -o short-precise adds microseconds.
    let (stamp, _) = bsd(b"Dec 06 08:07:00 api-1 payments[811]: x").unwrap();
    assert_eq!((stamp.month, stamp.day), (12, 6));
    let (stamp, msg) = bsd(b"Jan 16 23:59:59.266001 api-1 python3[9]: y").unwrap();
    assert_eq!(
        (stamp.month, stamp.day, stamp.time),
        (1, 16, &b"23:59:59.266001"[..])
    );
    assert_eq!(msg.msg, b"y");
}

#[test]
fn words_that_only_look_like_a_bsd_stamp_are_none() {
    for line in [
        "Dec 6 is the date of the refund",
        "Dec  6 08:07:00 the refunds were created",
        "Dec  6 08:07 api-1 payments[811]: x",
        "Dec 32 08:07:00 api-1 payments[811]: x",
        "Dez  6 08:07:00 api-1 payments[811]: x",
        "December  6 08:07:00 api-1 payments[811]: x",
        "Dec  6 08:07:00. api-1 payments[811]: x",
        "Dec  6 8:07:00 api-1 payments[811]: x",
    ] {
        assert_eq!(bsd(line.as_bytes()), None, "{line}");
    }
}

#[test]
fn rfc_5424_with_and_without_pri_and_structured_data() {
    let read = |l: &str| rfc5424(l.as_bytes()).map(|(s, h)| (s.to_vec(), h.msg.to_vec()));
    let (stamp, msg) =
        read("<165>1 2026-12-06T08:07:00.266Z api-1 payments 811 ID47 - refund created").unwrap();
    assert_eq!(
        (&stamp[..], &msg[..]),
        (&b"2026-12-06T08:07:00.266Z"[..], &b"refund created"[..])
    );
    let (_, msg) = read(r#"<165>1 2026-12-06T08:07:00.266+00:00 api-1 payments 811 ID47 [exampleSDID@32473 iut="3" eventSource="Ap\]p"][b@1 x="y"] refund created"#).unwrap();
    assert_eq!(msg, b"refund created");
    // rsyslog's RSYSLOG_SyslogProtocol23Format in a file: no `<PRI>`.
    let (_, msg) =
        read("1 2026-12-06T08:07:00.266000+00:00 api-1 payments 811 - - refund created").unwrap();
    assert_eq!(msg, b"refund created");
    let (_, msg) = read("<14>1 2026-12-06T08:07:00Z api-1 payments - - -").unwrap();
    assert_eq!(msg, b"");
    for line in [
        "1 refund created for order A-1",
        "1 2026-12-06T08:07:00Z api-1 payments",
        "<165>1 - api-1 payments 811 ID47 - no time",
        "<165>2 2026-12-06T08:07:00Z api-1 payments 811 ID47 - x",
        "<1a5>1 2026-12-06T08:07:00Z api-1 payments 811 ID47 - x",
        "1 2026-12-06T08:07:00Z api-1 payments 811 ID47 [unclosed x=\"]\" y",
        "1 2026-12-06T08:07:00Z api-1 payments 811 ID47 x refund",
    ] {
        assert_eq!(read(line), None, "{line}");
    }
}

#[test]
fn only_a_month_or_rfc_5424_start_may_open_a_header() {
    for line in ["Dec  6 08", "<165>1", "1 2026", "Jan 16"] {
        assert!(may_open_header(line.as_bytes()), "{line}");
    }
    for line in [
        "Traceback (most recent call last):",
        "  File",
        "DEC  6",
        "1 x",
        "<a>",
        "refund",
    ] {
        assert!(!may_open_header(line.as_bytes()), "{line}");
    }
}

#[test]
fn the_year_is_the_nearest_to_a_given_date_or_the_latest_not_after_a_file_time() {
    let near = YearFrom::Near(date(2026, 12, 6));
    assert_eq!(year_of(12, 6, near), Some(2026));
    // Past New Year in a December log; a January date reading December's lines.
    assert_eq!(year_of(1, 2, near), Some(2027));
    assert_eq!(
        year_of(12, 30, YearFrom::Near(date(2027, 1, 2))),
        Some(2026)
    );
    // Whichever is nearer: July before, June after.
    assert_eq!(year_of(7, 1, near), Some(2026));
    assert_eq!(year_of(6, 1, near), Some(2027));
    let written = YearFrom::NotAfter(date(2027, 1, 2));
    assert_eq!(year_of(12, 31, written), Some(2026));
    assert_eq!(year_of(1, 3, written), Some(2027));
    assert_eq!(year_of(1, 4, written), Some(2026));
    // 29 February: the latest leap year.
    assert_eq!(year_of(2, 29, written), Some(2024));
    assert_eq!(year_of(2, 30, near), None);
}

#[test]
fn only_rfc_3339_stamps_are_a_daemons() {
    for stamp in [
        "2026-12-06T08:07:00.266000+00:00",
        "2026-12-06T08:07:00+0000",
        "2026-12-06T08:07:00.266Z",
        "2026-12-06T08:07:00-05:00",
    ] {
        assert!(is_rfc3339(stamp.as_bytes()), "{stamp}");
    }
    // A logger's own: no `T`, no offset, time only (RQ's `16:05:38 Worker ID: ...`).
    for stamp in [
        "2026-12-06 08:07:00,266",
        "2026-12-06T08:07:00.266",
        "16:05:38",
        "2026-12-06 08:07:00+00:00",
    ] {
        assert!(!is_rfc3339(stamp.as_bytes()), "{stamp}");
    }
}

/// The process a header names: `HOST TAG[PID]`, RFC 5424's `HOST APP-NAME PROCID`; none
/// without a pid.
#[test]
fn a_header_names_its_process_when_it_has_a_pid() {
    fn after_stamp(rest: &str) -> Option<&[u8]> {
        after_host_and_tag(rest.as_bytes()).unwrap().process
    }
    assert_eq!(
        after_stamp(" api-1 payments[811]: refund created"),
        Some(&b"api-1 payments[811]"[..])
    );
    assert_eq!(
        after_stamp(" api-1 payments[811]:"),
        Some(&b"api-1 payments[811]"[..])
    );
    assert_eq!(after_stamp(" api-1 kernel: oom"), None);
    fn of_5424(line: &str) -> Option<&[u8]> {
        rfc5424(line.as_bytes()).unwrap().1.process
    }
    assert_eq!(
        of_5424("<14>1 2026-12-06T08:07:00Z api-1 payments 811 ID47 - refund created"),
        Some(&b"api-1 payments 811"[..])
    );
    assert_eq!(
        of_5424(r#"1 2026-12-06T08:07:00.266000+00:00 h p 9 - [a b="]"] x"#),
        Some(&b"h p 9"[..])
    );
    assert_eq!(
        of_5424("<14>1 2026-12-06T08:07:00Z api-1 payments - - - x"),
        None
    );
    let (_, header) = bsd(b"Dec  6 08:07:00 api-1 kernel: oom").unwrap();
    assert_eq!(header.process, None);
}

/// A header behind a stamp is found after its single blank whatever the stamp's spelling;
/// two blanks there (a text trace's fields), a stamp with a blank inside, or no blank at
/// all are none, told before the stamp is read.
#[test]
fn a_header_follows_its_stamp_after_one_blank() {
    for (line, msg) in [
        (
            "2026-12-07T16:11:35.001Z gw haproxy[16851]: 127.0.0.1:41234",
            "127.0.0.1:41234",
        ),
        (
            "2026-12-07T16:11:35+01:00 api-1 payments: refund created",
            "refund created",
        ),
        ("2026-12-07T16:11:35.123456-0500 api-1 kernel: oom", "oom"),
    ] {
        let read = after_stamp_header(line.as_bytes(), Zone::Fixed(0));
        assert_eq!(read.map(|(_, m)| m), Some(msg.as_bytes()), "{line}");
    }
    for line in [
        "2026-12-07T16:11:35.001Z  gw haproxy[16851]: 127.0.0.1:41234",
        "2026-12-07T16:11:35.001Z  healthcheck ok  latency_ms=7",
        "2026-12-07 16:11:35.001Z gw haproxy[16851]: x",
        "2026-12-07T16:11:35.001Z",
        "2026-12-07T16:11:35.001Zgw haproxy[1]: x",
    ] {
        assert_eq!(
            after_stamp_header(line.as_bytes(), Zone::Fixed(0)),
            None,
            "{line}"
        );
    }
}
