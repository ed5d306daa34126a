//! Timestamps: date headers, `--date`, midnight rollovers, zones and folds, out-of-range times.

use super::*;

#[test]
fn date_header_and_flag_date_time_only_lines() {
    let p = run("# date: 2026-11-03\n14:02:11.402  agent run r  started\n");
    let day = days_from_civil(2026, 11, 3).unwrap() * NANOS_PER_DAY;
    assert_eq!(p.events[0].at.0, day + tod(14, 2, 11, 402).0);
    let opts = ParseOptions {
        date: chrono::NaiveDate::from_ymd_opt(2026, 11, 4),
        ..ParseOptions::default()
    };
    let p = parse(&mut &b"00:00:01  agent run r  started\n"[..], 0, &opts).unwrap();
    assert_eq!(
        p.events[0].at.0,
        days_from_civil(2026, 11, 4).unwrap() * NANOS_PER_DAY + NANOS_PER_SEC
    );
}

#[test]
fn midnight_rollover_twice_and_sections_restart_the_day() {
    let p = run(
        "23:00:00  agent run r  started\n01:00:00  agent run r  crashed\n13:30:00  agent run r  resumed\n\
         00:30:00  agent run r  crashed\n--- service ---\n23:30:00  refund rf_1  order A  100p\n00:10:00  refund rf_2  order A  100p\n",
    );
    let at: Vec<i64> = p.events.iter().map(|e| e.at.0).collect();
    assert_eq!(at[0], tod(23, 0, 0, 0).0);
    assert_eq!(at[1], NANOS_PER_DAY + tod(1, 0, 0, 0).0);
    assert_eq!(at[2], NANOS_PER_DAY + tod(13, 30, 0, 0).0);
    assert_eq!(at[3], 2 * NANOS_PER_DAY + tod(0, 30, 0, 0).0);
    assert_eq!(
        at[4],
        tod(23, 30, 0, 0).0,
        "a section starts again from the file's first day"
    );
    assert_eq!(at[5], NANOS_PER_DAY + tod(0, 10, 0, 0).0);
}

/// A line written a moment late, after the first line of the next day, stays on its
/// night; two hours behind it is the next evening, as the SPEC reads it.
#[test]
fn a_line_written_late_before_midnight_stays_on_its_night() {
    let p = run(
        "23:59:58  agent run r  started\n00:00:01  agent run r  crashed\n23:59:59  agent run r  resumed\n\
         00:00:02  agent run r  crashed\n22:00:00  agent run r  resumed\n",
    );
    let at: Vec<i64> = p.events.iter().map(|e| e.at.0).collect();
    assert_eq!(at[0], tod(23, 59, 58, 0).0);
    assert_eq!(at[1], NANOS_PER_DAY + tod(0, 0, 1, 0).0);
    assert_eq!(at[2], tod(23, 59, 59, 0).0, "late, not a day on");
    assert_eq!(at[3], NANOS_PER_DAY + tod(0, 0, 2, 0).0);
    assert_eq!(at[4], NANOS_PER_DAY + tod(22, 0, 0, 0).0);
    let p = run("00:00:01  agent run r  started\n23:59:59  agent run r  crashed\n");
    assert_eq!(
        p.events[1].at,
        tod(23, 59, 59, 0),
        "no night before the first"
    );
}

/// Under a `# date:` header, a named zone's offset is the one in force at each line's
/// time: summer time starts at 02:00 in Berlin on 2026-03-29.
#[test]
fn a_named_zone_places_each_time_only_line_at_its_own_offset() {
    let opts = ParseOptions {
        tz: crate::time::Zone::parse("Europe/Berlin").unwrap(),
        ..ParseOptions::default()
    };
    let text =
        "# date: 2026-03-29\n01:30:00  agent run r  started\n03:30:00  agent run r  crashed\n";
    let p = parse(&mut text.as_bytes(), 0, &opts).unwrap();
    let midnight = days_from_civil(2026, 3, 29).unwrap() * NANOS_PER_DAY;
    assert_eq!(p.events[0].at.0, midnight + tod(0, 30, 0, 0).0);
    assert_eq!(p.events[1].at.0, midnight + tod(1, 30, 0, 0).0);
}

/// In the hour Berlin's clocks go back over (2026-10-25 from 02:00), the lines from one
/// whose time goes back are the second pass, time-only ones under a `# date:` header too;
/// a settlement's time of day beside a line in the first pass is the pass not before it.
#[test]
fn lines_that_go_back_in_the_fold_are_its_second_pass() {
    let opts = ParseOptions {
        tz: crate::time::Zone::parse("Europe/Berlin").unwrap(),
        ..ParseOptions::default()
    };
    let text = "2026-10-25 02:59:55.501  refund rf_2  order A-2  4500p  settled 02:00:06.884\n\
                2026-10-25 02:00:07.088  refund rf_3  order A-2  4500p  settled 02:00:07.900\n\
                # date: 2026-10-25\n02:30:00  agent run r  started\n";
    let p = parse(&mut text.as_bytes(), 0, &opts).unwrap();
    let utc =
        |h, m, s, ms| days_from_civil(2026, 10, 25).unwrap() * NANOS_PER_DAY + tod(h, m, s, ms).0;
    let settled = |i: usize| match kinds(&p)[i] {
        EventKind::Effect(e) => e.state_at.map(|t| t.0),
        _ => panic!("an effect"),
    };
    assert_eq!(p.events[0].at.0, utc(0, 59, 55, 501));
    assert_eq!(
        settled(0),
        Some(utc(1, 0, 6, 884)),
        "seconds later, not a day"
    );
    assert_eq!(p.events[1].at.0, utc(1, 0, 7, 88));
    assert_eq!(settled(1), Some(utc(1, 0, 7, 900)));
    // A `# date:` header restarts the days, not the pass.
    assert_eq!(p.events[2].at.0, utc(1, 30, 0, 0));
    assert_eq!(p.stats.notes.len(), 1, "{:?}", p.stats.notes);
}

#[test]
fn full_timestamps_and_invalid_utf8() {
    let mut bytes = b"2026-11-03T14:02:11.402Z  agent run r\xff  started\n".to_vec();
    bytes.extend_from_slice(b"2026-11-03 14:02:12+01:00  agent run s  started\r\n");
    let p = parse(&mut &bytes[..], 0, &ParseOptions::default()).unwrap();
    assert_eq!(p.stats.events, 2);
    let EventKind::Run(r) = &p.events[0].kind else {
        panic!()
    };
    // A line that is no UTF-8 reads as Windows-1252: `\xff` is `ÿ`, not U+FFFD, and noted.
    assert_eq!(r.run, "rÿ");
    assert!(p.stats.notes[0].starts_with("1 line is not UTF-8 (the first: line 1)"));
    assert_eq!(
        p.events[1].at.0 - p.events[0].at.0,
        -3600 * NANOS_PER_SEC + 598 * NANOS_PER_MILLI
    );
}

#[test]
fn a_date_header_wins_over_the_flag_and_resets_the_day() {
    let opts = ParseOptions {
        date: chrono::NaiveDate::from_ymd_opt(2026, 1, 1),
        ..ParseOptions::default()
    };
    let p = parse(
        &mut &b"23:00:00  agent run r  started\n01:00:00  agent run r  crashed\n# Date: 2026-11-03\n01:00:00  agent run r  resumed\n"[..],
        0,
        &opts,
    )
    .unwrap();
    let at: Vec<Timestamp> = p.events.iter().map(|e| e.at).collect();
    assert_eq!(
        at,
        vec![
            ts("2026-01-01", 23, 0, 0, 0),
            ts("2026-01-02", 1, 0, 0, 0),
            ts("2026-11-03", 1, 0, 0, 0)
        ]
    );
}

#[test]
fn a_bad_date_header_is_skipped_not_guessed() {
    let p = run("# date: 2026-13-01\n# date: 9999-12-31\n# date: tomorrow\n# dated comment\n");
    assert_eq!(
        (p.stats.skipped, p.stats.ignored),
        (3, 1),
        "{:?}",
        reasons(&p)
    );
    assert!(p.stats.problems[0].reason.contains("# date:"));
}

#[test]
fn tz_applies_to_dated_lines_and_settlements() {
    let opts = ParseOptions {
        date: chrono::NaiveDate::from_ymd_opt(2026, 11, 3),
        tz: crate::time::Zone::Fixed(3600),
        ..ParseOptions::default()
    };
    let p = parse(
        &mut &b"00:30:00  refund rf_1  order A  100p  settled 00:20:00\n00:40:00  refund rf_2  order A  100p  settled 2026-11-03T00:50:00\n"[..],
        0,
        &opts,
    )
    .unwrap();
    let e = effects(&p);
    // 00:30 at +01:00 is 23:30 UTC the day before; the settlement, earlier in the day, is
    // the next local day.
    assert_eq!(p.events[0].at, ts("2026-11-02", 23, 30, 0, 0));
    assert_eq!(e[0].state_at, Some(ts("2026-11-03", 23, 20, 0, 0)));
    // A full settlement without an offset is read at --tz too.
    assert_eq!(e[1].state_at, Some(ts("2026-11-02", 23, 50, 0, 0)));
    // Undated time-only lines stay on 1970-01-01, unshifted.
    let undated = ParseOptions {
        tz: crate::time::Zone::Fixed(3600),
        ..ParseOptions::default()
    };
    let p = parse(&mut &b"00:30:00  agent run r  started\n"[..], 0, &undated).unwrap();
    assert_eq!(p.events[0].at, tod(0, 30, 0, 0));
}

#[test]
fn endless_rollovers_saturate_instead_of_overflowing() {
    // Every second line is a new day: ~110,000 days overflow i64 nanoseconds.
    let text = "23:00:00  agent run r  started\n01:00:00  agent run r  started\n".repeat(120_000);
    let p = run(&text);
    assert_eq!(p.stats.events, 240_000);
    assert_eq!(p.events.last().unwrap().at, Timestamp(i64::MAX));
}

/// A settlement's time of day is in the offset its line's stamp was written in.
#[test]
fn a_settled_time_of_day_is_read_in_the_stamps_offset() {
    let p = run(
        "2026-11-03T19:32:11.501+05:30  refund rf_1  order A-1  4500p  settled 19:32:22.884\n\
         2026-11-03T23:59:58-05:00  refund rf_2  order A-2  4500p  settled 00:00:04\n\
         [2026-11-03T19:32:11+05:30]  refund rf_3  order A-3  4500p  settled 19:32:12\n",
    );
    let settled: Vec<Option<Timestamp>> = effects(&p).iter().map(|e| e.state_at).collect();
    let day = |d: &str, h, m, s, ms| {
        let days = crate::time::parse_date(d.as_bytes()).unwrap();
        Some(Timestamp(days * NANOS_PER_DAY + tod(h, m, s, ms).0))
    };
    assert_eq!(
        settled,
        [
            day("2026-11-03", 14, 2, 22, 884),
            day("2026-11-04", 5, 0, 4, 0),
            day("2026-11-03", 14, 2, 12, 0),
        ]
    );
}

/// A line that opens with a timestamp's shape but no such time says what is wrong with it;
/// a line with no timestamp at all, or one whose time is real, reads as before.
#[test]
fn an_impossible_timestamp_is_said_out_of_range() {
    let p = run("2026-11-03T14:02:11.402Z  refund rf_1  order A-1  4500p\n\
         2026-13-01T10:00:00Z  refund rf_2  order A-1  4500p\n\
         [2026-02-30 10:00:00,123] INFO refund rf_3\n\
         hello world\n\
         2026-11-03T14:02:60.000Z  refund rf_4  order A-2  4500p\n");
    assert_eq!((p.stats.events, p.stats.skipped), (2, 3));
    let said: Vec<(u32, &str)> = (p.stats.problems.iter())
        .map(|p| (p.line, p.reason.as_str()))
        .collect();
    assert_eq!(
        said,
        [
            (
                2,
                "timestamp out of range: `2026-13-01T10:00:00Z` has month 13 (months run 01 to 12)"
            ),
            (
                3,
                "timestamp out of range: `2026-02-30 10:00:00,123` has day 30 of February 2026 (it has 28 days)"
            ),
            (4, NO_STAMP),
        ]
    );
}
