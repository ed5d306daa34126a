use super::*;
use chrono::{DateTime, Datelike, Utc};

/// The written-out spelling is chrono's `%Y-%m-%dT%H:%M:%S%.3fZ`, over every year an i64
/// of nanoseconds reaches, before and after the epoch, with sub-millisecond parts.
#[test]
fn displays_dated_times_as_chrono_formats_them() {
    let mut t: i64 = i64::MIN;
    let step = 7_919_000_000_123_457; // about 92 days, and an odd fraction
    while t < i64::MAX - step {
        let stamp = Timestamp(t);
        if !stamp.is_dateless() {
            let chrono = DateTime::<Utc>::from_timestamp_nanos(t)
                .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                .to_string();
            assert_eq!(stamp.display(), chrono, "{t}");
        }
        t += step;
    }
}

#[test]
fn the_cached_day_reads_every_stamp_as_the_general_reading_does() {
    let base = *b"2026-11-01T13:45:59.123Z  agent run r1";
    let mut cache = DateCache::default();
    assert!(cache.parse_stamp(&base, Zone::Fixed(0)).is_some());
    let bytes = [
        b'0', b'2', b'5', b'9', b'/', b':', b'.', b'Z', b'a', b' ', b'\xff', b'+',
    ];
    let mut checked = 0;
    for at in 10..26 {
        for &b in &bytes {
            let mut line = base;
            line[at] = b;
            assert_eq!(
                cache.parse_stamp(&line, Zone::Fixed(0)),
                parse_stamp(&line, Zone::Fixed(0)),
                "{at} {b}"
            );
            checked += 1;
        }
    }
    // Every time of day of a coarse grid, on the cached day.
    for secs in (0..86_400).step_by(37) {
        let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
        let line = format!("2026-11-01T{h:02}:{m:02}:{s:02}.{:03}Z", secs % 1000);
        let got = cache.parse_stamp(line.as_bytes(), Zone::Fixed(0));
        assert_eq!(got, parse_stamp(line.as_bytes(), Zone::Fixed(0)), "{line}");
        // Read by the shortcuts, not only by the general reading behind them: the
        // day's, which caches the minute, then the minute's.
        assert!(
            cache.same_day_millis_utc(line.as_bytes()).is_some(),
            "{line}"
        );
        let later = format!("2026-11-01T{h:02}:{m:02}:{:02}.999Z", (s + 1) % 60);
        assert_eq!(
            cache.same_minute_millis_utc(later.as_bytes()),
            parse_stamp(later.as_bytes(), Zone::Fixed(0)).map(|(stamp, _)| match stamp {
                Stamp::Instant(t) => t,
                Stamp::TimeOfDay(_) => unreachable!("a dated stamp"),
            }),
            "{later}"
        );
    }
    assert!(checked > 100);
    // Every second of the cached minute, with milliseconds of every digit in each place.
    let minute = b"2026-11-01T23:59:00.000Z";
    assert!(
        cache.same_day_millis_utc(minute).is_some(),
        "the minute cached"
    );
    for sec in 0..=61 {
        for ms in [0, 1, 9, 10, 99, 100, 101, 470, 909, 990, 999] {
            let line = format!("2026-11-01T23:59:{sec:02}.{ms:03}Z");
            let general = parse_stamp(line.as_bytes(), Zone::Fixed(0)).map(|(stamp, _)| stamp);
            let general = general.map(|stamp| match stamp {
                Stamp::Instant(t) => t,
                Stamp::TimeOfDay(_) => unreachable!("a dated stamp"),
            });
            assert_eq!(
                cache.same_minute_millis_utc(line.as_bytes()),
                general,
                "{line}"
            );
            assert_eq!(general.is_some(), sec <= 60, "{line}");
        }
    }
}

#[test]
fn parses_both_spellings() {
    assert_eq!(
        parse_stamp(b"14:02:11.402  x", Zone::Fixed(0)),
        Some((
            Stamp::TimeOfDay((14 * 3600 + 2 * 60 + 11) * NANOS_PER_SEC + 402 * NANOS_PER_MILLI),
            12
        ))
    );
    let (s, n) = parse_stamp(b"2026-11-03T14:02:11.402Z", Zone::Fixed(0)).unwrap();
    assert_eq!(n, 24);
    assert_eq!(
        s,
        Stamp::Instant(Timestamp(1_793_714_531_402 * NANOS_PER_MILLI))
    );
    let (s2, _) = parse_stamp(b"2026-11-03 15:02:11.402+01:00", Zone::Fixed(0)).unwrap();
    assert_eq!(s, s2);
    let (s3, _) = parse_stamp(b"2026-11-03 15:02:11.402", Zone::Fixed(3600)).unwrap();
    assert_eq!(s, s3);
    assert_eq!(parse_stamp(b"14:02:xx  agent", Zone::Fixed(0)), None);
    assert_eq!(parse_stamp(b"25:00:00", Zone::Fixed(0)), None);
    assert_eq!(parse_stamp(b"2026-02-30T00:00:00Z", Zone::Fixed(0)), None);
}

#[test]
fn fractions_offsets_and_limits() {
    let t = |s: &str| parse_time_of_day(s.as_bytes());
    assert_eq!(t("00:00:00.5"), Some((NANOS_PER_SEC / 2, 10)));
    assert_eq!(t("00:00:00,250  x"), Some((250 * NANOS_PER_MILLI, 12)));
    assert_eq!(
        t("00:00:01.123456789999"),
        Some((NANOS_PER_SEC + 123_456_789, 21))
    );
    assert_eq!(t("00:00:00."), None);
    assert_eq!(t("14:02:11.402x"), None);
    assert_eq!(t("24:00:00"), None);
    assert_eq!(t("14:60:00"), None);
    assert_eq!(t("1:02:03"), None);
    assert_eq!(t("14:02"), None);
    assert_eq!(t(""), None);
    let i = |s: &str| match parse_stamp(s.as_bytes(), Zone::Fixed(0)) {
        Some((Stamp::Instant(t), n)) => Some((t, n)),
        _ => None,
    };
    let (utc, _) = i("2026-11-03T14:02:23Z").unwrap();
    assert_eq!(i("2026-11-03T16:32:23+0230"), Some((utc, 24)));
    assert_eq!(i("2026-11-03T09:02:23-05"), Some((utc, 22)));
    assert_eq!(i("2026-11-03t14:02:23z"), Some((utc, 20)));
    // Not an offset: left for the caller, which then sees a stray `+`.
    assert_eq!(i("2026-11-03T14:02:23+25:00").map(|(_, n)| n), Some(19));
    assert_eq!(i("2026-11-03T14:02:23+01:75").map(|(_, n)| n), Some(19));
    // Out of the range of i64 nanoseconds: no instant, and no panic or wrap-around.
    assert_eq!(parse_stamp(b"9999-12-31T23:59:59Z", Zone::Fixed(0)), None);
    assert_eq!(parse_stamp(b"0001-01-01T00:00:00Z", Zone::Fixed(0)), None);
    assert_eq!(
        parse_stamp(b"2262-04-11T23:47:16.854775807-23:59", Zone::Fixed(0)),
        None
    );
    assert_eq!(days_from_civil(1970, 1, 2), Some(1));
    assert_eq!(days_from_civil(1969, 12, 31), Some(-1));
    assert_eq!(days_from_civil(2023, 2, 29), None);
    assert_eq!(days_from_civil(2026, 13, 1), None);
    assert_eq!(days_from_civil(2026, 4, 31), None);
}

#[test]
fn the_date_cache_reads_as_parse_stamp_does() {
    let mut cache = DateCache::default();
    for line in [
        "\0\0\0\0\0\0\0\0\0\0T00:00:02.546Z",
        "2026-11-01T00:00:02.546Z  a",
        "2026-11-01T00:00:02.546Z",
        "2026-11-01T00:00:02.546Z5",
        "2026-11-01T24:00:02.546Z",
        "2026-11-01T00:00:02.5467Z",
        "2026-11-01T00:00:02.546+01:00",
        "2026-11-01T23:59:59Z",
        "2026-11-02 00:00:01+01:00",
        "0000000000",
        "2026-11-31T00:00:00Z",
        "2026-11-02T00:00:01",
        "14:02:11.402  x",
    ] {
        assert_eq!(
            cache.parse_stamp(line.as_bytes(), Zone::Fixed(3600)),
            parse_stamp(line.as_bytes(), Zone::Fixed(3600)),
            "{line}"
        );
    }
}

#[test]
fn civil_from_days_inverts_days_from_civil_every_day_an_instant_reaches() {
    let (first, last) = (
        i64::MIN.div_euclid(NANOS_PER_DAY),
        i64::MAX.div_euclid(NANOS_PER_DAY),
    );
    let (mut y, mut m, mut d) = civil_from_days(first);
    assert_eq!((y, m, d), (1677, 9, 21));
    for days in first..=last {
        assert_eq!(civil_from_days(days), (y, m, d), "{days}");
        assert_eq!(days_from_civil(y, m, d), Some(days));
        // The next day, by the calendar.
        d += 1;
        if d > days_in_month(y, m) {
            (d, m) = (1, m + 1);
            if m > 12 {
                (m, y) = (1, y + 1);
            }
        }
    }
}

#[test]
fn days_from_civil_agrees_with_chrono_day_by_day() {
    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
    let mut date = chrono::NaiveDate::from_ymd_opt(1599, 12, 1).unwrap();
    while date.year() < 2401 {
        let ours = days_from_civil(date.year() as i64, date.month() as i64, date.day() as i64);
        assert_eq!(ours, Some((date - epoch).num_days()), "{date}");
        date = date.succ_opt().unwrap();
    }
    assert_eq!(parse_date(b"2026-13-01"), None);
}
