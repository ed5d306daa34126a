use super::*;

fn emitted(time: &str, line: &str) -> String {
    let mut out = Vec::new();
    emit(&mut out, time.as_bytes(), line.as_bytes());
    String::from_utf8(out).unwrap()
}

/// A stamp's name counts only as the object's own key: one inside a member (`"db":
/// {"time":"12ms"}`), in a string, or after an escaped quote is none.
#[test]
fn only_a_top_level_key_is_a_stamp() {
    let names: [&[u8]; 2] = [b"\"time\"", b"\"ts\""];
    for own in [
        &br#"{"time":"2026-12-06T08:07:00Z","msg":"x"}"#[..],
        br#"{"msg":"x", "ts":1}"#,
        br#"{"a":{"time":1},"time":2}"#,
        br#"{"a":"say \"time\"","ts":1}"#,
    ] {
        assert!(
            each_top_level_key(own, &names, |_| false),
            "{}",
            String::from_utf8_lossy(own)
        );
    }
    for inner in [
        &br#"{"msg":"refund created","db":{"time":"12ms"}}"#[..],
        br#"{"msg":"the \"time\" is"}"#,
        br#"{"list":[{"ts":1}],"msg":"time"}"#,
        br#"{"msg":"x","time"#,
    ] {
        assert!(
            !each_top_level_key(inner, &names, |_| true),
            "{}",
            String::from_utf8_lossy(inner)
        );
    }
    // Given the runtime's time when its own is only inside.
    let mut out = Vec::new();
    emit(
        &mut out,
        b"2026-12-06T08:07:00Z",
        br#"{"msg":"x","db":{"time":"12ms"}}"#,
    );
    assert_eq!(
        String::from_utf8(out).unwrap(),
        r#"{"ts":"2026-12-06T08:07:00Z","msg":"x","db":{"time":"12ms"}}"#
    );
    let mut out = Vec::new();
    emit(
        &mut out,
        b"2026-12-06T08:07:00Z",
        br#"{"time":"t","msg":"x"}"#,
    );
    assert_eq!(String::from_utf8(out).unwrap(), r#"{"time":"t","msg":"x"}"#);
}

/// A line whose own stamp is a time of day alone takes the runtime's date, the day
/// nearest the runtime's time; a dated stamp of its own is kept whole.
#[test]
fn a_time_of_day_alone_is_dated_by_the_runtime() {
    let t = "2026-12-06T08:06:59.265123Z";
    assert_eq!(
        emitted(t, "08:06:59.265 INFO payments refund created"),
        "2026-12-06 08:06:59.265 INFO payments refund created"
    );
    assert_eq!(
        emitted(t, "[08:06:59] INFO refund created"),
        "[2026-12-06 08:06:59] INFO refund created"
    );
    // Written in a zone an hour ahead: the same day.
    assert_eq!(emitted(t, "09:06:59 INFO x"), "2026-12-06 09:06:59 INFO x");
    // Across midnight, either way, and across a month's and a year's end.
    let after = "2026-12-07T00:00:00.002Z";
    assert_eq!(
        emitted(after, "23:59:59.990 x"),
        "2026-12-06 23:59:59.990 x"
    );
    let before = "2026-12-31T23:59:59.990Z";
    assert_eq!(
        emitted(before, "00:00:00.002 x"),
        "2027-01-01 00:00:00.002 x"
    );
    let new_year = "2027-01-01T00:30:00+00:00";
    assert_eq!(emitted(new_year, "23:45:00 x"), "2026-12-31 23:45:00 x");
    // Dated stamps of its own are kept as they are.
    for own in [
        "2026-12-06 08:06:59,265 INFO payments refund created",
        "2026-12-05T23:59:59Z INFO x",
        "[2026-12-06 08:06:59] INFO x",
        "I, [2026-12-06T08:06:59.265123 #812]  INFO -- : refund created",
    ] {
        assert_eq!(emitted(t, own), own);
    }
    // No time of day (a number, a time cut or followed by letters) takes the whole stamp;
    // a runtime's time that is no date leaves the line as it is.
    assert_eq!(emitted(t, "08:06 x"), format!("{t}  08:06 x"));
    assert_eq!(emitted("", "08:06:59 x"), "08:06:59 x");
    assert_eq!(emitted("soon", "08:06:59 x"), "08:06:59 x");
    assert_eq!(emitted(t, "08:06:59x INFO"), "08:06:59x INFO");
}

/// A logfmt line's own stamp wins, with no second one added; one without a stamp takes the
/// runtime's as `time=`; a line that names a stamp with no time in it (`time=now`) or is no
/// logfmt takes it as a text line's.
#[test]
fn a_logfmt_lines_own_stamp_wins_and_none_takes_the_runtimes() {
    let t = "2026-12-06T08:07:00.500Z";
    for own in [
        "time=2026-12-06T08:06:59.265Z level=INFO msg=\"refund created\" refund_id=re_1",
        "ts=1796544419.265 level=info msg=x",
        "timestamp='2026-12-06T08:06:59.265Z' level='info' event='refund created'",
        "level=info @t=2026-12-06T08:06:59.2650000+00:00 msg=x",
        "asctime=\"2026-12-06 08:06:59,265\" levelname=INFO message=x",
        "time=2026-12-06T08:06:59Z",
    ] {
        assert_eq!(emitted(t, own), own);
    }
    assert_eq!(
        emitted(t, "level=INFO msg=\"refund created\" refund_id=re_1"),
        format!("time={t} level=INFO msg=\"refund created\" refund_id=re_1")
    );
    for other in [
        "time=now level=info msg=x",
        "refund created for A-1",
        "a=b word",
    ] {
        assert_eq!(emitted(t, other), format!("{t}  {other}"));
    }
}

/// A logfmt line's or a JSON object's own stamp that is a time of day alone keeps its time
/// and takes the runtime's date (the nearest, as a text line's); a dated one, a number, a
/// time followed by more than its zone are kept as they are.
#[test]
fn a_stamps_time_of_day_alone_is_dated_by_the_runtime() {
    let t = "2026-12-06T08:07:00.500Z";
    let dated = [
        (
            "time=08:07:00 level=INFO msg=x",
            "time=2026-12-06T08:07:00 level=INFO msg=x",
        ),
        (
            "level=INFO ts=\"08:07:00.265Z\" msg=x",
            "level=INFO ts=\"2026-12-06T08:07:00.265Z\" msg=x",
        ),
        (
            "time='09:07:00+01:00' msg=x",
            "time='2026-12-06T09:07:00+01:00' msg=x",
        ),
        (
            r#"{"time":"08:07:00","msg":"x"}"#,
            r#"{"time":"2026-12-06T08:07:00","msg":"x"}"#,
        ),
        (
            r#"{"msg":"x", "asctime" : "08:07:00"}"#,
            r#"{"msg":"x", "asctime" : "2026-12-06T08:07:00"}"#,
        ),
        (
            r#"{"ts":"08:07:00,265","time":"08:07:01"}"#,
            r#"{"ts":"2026-12-06T08:07:00,265","time":"2026-12-06T08:07:01"}"#,
        ),
    ];
    for (line, want) in dated {
        assert_eq!(emitted(t, line), want);
    }
    // Across midnight: the day before.
    assert_eq!(
        emitted(
            "2026-12-07T00:00:00.004Z",
            r#"{"time":"23:59:59.999","msg":"x"}"#
        ),
        r#"{"time":"2026-12-06T23:59:59.999","msg":"x"}"#
    );
    for kept in [
        r#"{"time":"2026-12-06T08:07:00Z","msg":"x"}"#,
        r#"{"time":1796544420,"msg":"x"}"#,
        r#"{"time":"08:07:00 PM","msg":"x"}"#,
        r#"{"msg":"08:07:00","db":{"time":"08:07:00"},"ts":"2026-12-06T08:07:00Z"}"#,
        "time=2026-12-06T08:07:00Z level=info msg=08:07:00",
        "time=08:07:00.x level=info msg=x",
        "time=08:07:00+ msg=x",
        "time=\"08:07:00 x\" msg=y",
    ] {
        assert_eq!(emitted(t, kept), kept);
    }
    // A runtime's time that is no date leaves the stamp as it is.
    assert_eq!(
        emitted("soon", "time=08:07:00 msg=x"),
        "time=08:07:00 msg=x"
    );
    // A JSON object's stamps are all of its own the runtime's names: `asctime` too.
    let names: Vec<&[u8]> = crate::ingest::jsonl::STAMP_NAMES
        .iter()
        .map(|n| n.as_bytes())
        .collect();
    let quoted: Vec<&[u8]> = QUOTED_STAMPS.iter().map(|q| &q[1..q.len() - 1]).collect();
    assert_eq!(quoted, names);
}
