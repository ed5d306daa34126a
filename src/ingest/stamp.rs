//! Timestamps in whole fields of the structured formats (SPEC §3.6), on top of the text
//! traces' parser in `crate::time`: ISO 8601 and its SQL cousin (`2026-11-03T14:02:11.402Z`,
//! `2026-11-03 14:02:11`, PostgreSQL's `2026-12-02 14:02:11.402+00`), time-only `14:02:11.402`
//! dated by `--date` (with midnight rollover), and unix seconds in API-style exports.
//! Offset-less stamps take `--tz`.

use super::ParseOptions;
use crate::time::{DateCache, NANOS_PER_DAY, NANOS_PER_SEC, Stamp, Timestamp, Zone, parse_stamp};

/// A whole field that is one timestamp of the text traces' spellings (`crate::time`).
pub fn parse_whole(b: &[u8], opts: &ParseOptions) -> Option<Stamp> {
    parse_stamp(b, opts.tz).and_then(|(stamp, used)| (used == b.len()).then_some(stamp))
}

/// Unix seconds, optionally with a fraction (`1762178531`, `1762178531.402`), or whole
/// milliseconds, microseconds or nanoseconds, told by their number of digits
/// (`1762178531402`: pino's and many JavaScript loggers' `time`). Seconds of 13 digits and
/// more would be past the year 5000, so the reading is not ambiguous.
pub fn parse_unix_seconds(b: &[u8]) -> Option<Timestamp> {
    let (whole, frac) = match b.iter().position(|&c| c == b'.') {
        Some(i) => (&b[..i], &b[i + 1..]),
        None => (b, &b[..0]),
    };
    if frac.is_empty() && (13..=19).contains(&whole.len()) && whole.iter().all(u8::is_ascii_digit) {
        let n: i64 = std::str::from_utf8(whole).ok()?.parse().ok()?;
        let per_unit = match whole.len() {
            13 | 14 => 1_000_000,
            15 | 16 => 1_000,
            _ => 1,
        };
        return n.checked_mul(per_unit).map(Timestamp);
    }
    if whole.is_empty() || whole.len() > 12 || frac.len() > 9 {
        return None;
    }
    if !whole.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let secs = whole
        .iter()
        .fold(0i64, |acc, &c| acc * 10 + (c - b'0') as i64);
    let mut nanos = 0;
    let mut scale = NANOS_PER_SEC / 10;
    for &c in frac {
        if !c.is_ascii_digit() {
            return None;
        }
        nanos += (c - b'0') as i64 * scale;
        scale /= 10;
    }
    // Twelve digits of seconds reach past 2262, the last instant nanoseconds in an i64 hold:
    // such a field is not a time this tool can place.
    let at = secs.checked_mul(NANOS_PER_SEC)?.checked_add(nanos)?;
    Some(Timestamp(at))
}

/// Dates time-only timestamps (SPEC §3.6): on `--date`, else on 1970-01-01 (printed without
/// a date); one more than 12 hours earlier than the previous moves to the next day.
#[derive(Debug)]
pub struct Clock {
    /// `--date`'s midnight, local: nanoseconds since the epoch read as UTC.
    base: i64,
    /// The previous time-only stamp, local as `base` is.
    prev: Option<i64>,
    /// The last date and minute read: a structured log's stamps are milliseconds apart.
    dates: DateCache,
    /// How many time-only stamps it has dated: each read by the ones before it.
    undated: u64,
}

impl Clock {
    pub fn new(opts: &ParseOptions) -> Self {
        // `--date` is a local date: its times are at `--tz` (see `time_only`).
        let base = opts.date.map_or(0, |d| {
            let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).expect("epoch");
            d.signed_duration_since(epoch).num_days() * NANOS_PER_DAY
        });
        Clock {
            base,
            prev: None,
            dates: DateCache::default(),
            undated: 0,
        }
    }

    /// Dates the time-only stamps after this on `opts`' date, as a new clock would; the
    /// reading of folds goes on.
    pub fn redate(&mut self, opts: &ParseOptions) {
        *self = Clock {
            dates: self.dates,
            ..Clock::new(opts)
        };
    }

    /// Any timestamp spelling the formats allow, or why not: a line's own time, which
    /// moves the midnight rollover when time-only.
    pub fn parse(
        &mut self,
        text: &[u8],
        opts: &ParseOptions,
        unix: bool,
    ) -> Result<Timestamp, String> {
        match self.read(text, opts, unix, None)? {
            Stamp::Instant(ts) => Ok(ts),
            Stamp::TimeOfDay(tod) => Ok(self.time_only(tod, opts)),
        }
    }

    /// Another time on a line whose own time is `line_at` (a settlement's): time-only, it
    /// is on that day, or the next when earlier than the line's time (as text traces date
    /// theirs). It leaves the rollover alone: only a line's own time moves it, so a
    /// settlement late in the evening does not push the next line to the next day.
    pub fn parse_on_line(
        &mut self,
        text: &[u8],
        opts: &ParseOptions,
        unix: bool,
        line_at: Timestamp,
    ) -> Result<Timestamp, String> {
        match self.read(text, opts, unix, Some(line_at))? {
            Stamp::Instant(ts) => Ok(ts),
            Stamp::TimeOfDay(tod) => Ok(on_or_after(tod, line_at, opts)),
        }
    }

    /// A line's own time, or one `beside` it (a settlement: it moves no pass of a fold).
    #[inline]
    fn read(
        &mut self,
        text: &[u8],
        opts: &ParseOptions,
        unix: bool,
        beside: Option<Timestamp>,
    ) -> Result<Stamp, String> {
        let t = text.trim_ascii();
        // `parse_whole`, through the cache.
        let stamp = match beside {
            None => self.dates.parse_stamp(t, opts.tz),
            Some(line_at) => self.dates.parse_stamp_beside(t, opts.tz, line_at),
        };
        let whole = stamp.and_then(|(s, used)| (used == t.len()).then_some(s));
        if let Some(stamp) = whole {
            return Ok(stamp);
        }
        if unix && let Some(ts) = parse_unix_seconds(t) {
            return Ok(Stamp::Instant(ts));
        }
        if let Some(why) = crate::time::why_out_of_range(t) {
            return Err(why);
        }
        let shown = String::from_utf8_lossy(t);
        Err(if unix {
            format!(
                "`{shown}` is not a timestamp (ISO 8601, YYYY-MM-DD HH:MM:SS, HH:MM:SS or unix time)"
            )
        } else {
            format!("`{shown}` is not a timestamp (ISO 8601, YYYY-MM-DD HH:MM:SS or HH:MM:SS)")
        })
    }

    /// How many stamps have been read by the lines before them (time-only ones dated,
    /// local times read as a fold's second pass): a line that adds none reads the same
    /// out of context.
    pub fn read_in_context(&self) -> u64 {
        self.undated + self.dates.folds.second_passes()
    }

    fn time_only(&mut self, tod: i64, opts: &ParseOptions) -> Timestamp {
        self.undated += 1;
        // The day of the previous stamp, moved as text traces move theirs; never before
        // the first.
        let day = self.prev.map_or(0, |prev| {
            let since = prev.saturating_sub(self.base);
            let (day, prev_tod) = (
                since.div_euclid(NANOS_PER_DAY),
                since.rem_euclid(NANOS_PER_DAY),
            );
            day.saturating_add(crate::time::day_step(prev_tod, tod))
                .max(0)
        });
        let local = (self.base)
            .saturating_add(day.saturating_mul(NANOS_PER_DAY))
            .saturating_add(tod);
        self.prev = Some(local);
        // Without `--date` the stamps stay dateless, on 1970-01-01 as written.
        if opts.date.is_none() {
            return Timestamp(local);
        }
        let offset = self.dates.folds.offset_of_line(opts.tz, local) * NANOS_PER_SEC;
        Timestamp(local.saturating_sub(offset))
    }

    /// What the input's report says of the folds and gaps of its zone its times fell in
    /// ([`crate::time::Folds`]).
    pub fn take_notes(&mut self) -> Vec<String> {
        self.dates.folds.take_notes()
    }
}

/// The time of day `tod` (at `--tz`) on `line_at`'s local day, or the next day when that
/// is earlier than `line_at`. In a fold, the first pass not before `line_at`.
fn on_or_after(tod: i64, line_at: Timestamp, opts: &ParseOptions) -> Timestamp {
    let dateless = line_at.is_dateless() && opts.date.is_none();
    let zone = if dateless { Zone::default() } else { opts.tz };
    let local = line_at
        .0
        .saturating_add(zone.offset_at(line_at) * NANOS_PER_SEC);
    let midnight = local.div_euclid(NANOS_PER_DAY) * NANOS_PER_DAY;
    let at_local = midnight.saturating_add(tod);
    let offset = zone.offset_not_before(at_local, line_at);
    let at = at_local.saturating_sub(offset * NANOS_PER_SEC);
    Timestamp(if at < line_at.0 {
        at.saturating_add(NANOS_PER_DAY)
    } else {
        at
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn opts(tz: &str, date: Option<&str>) -> ParseOptions {
        ParseOptions {
            tz: Zone::parse(tz).unwrap(),
            date: date.map(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").unwrap()),
            ..ParseOptions::default()
        }
    }

    fn iso(ts: Timestamp) -> String {
        ts.display()
    }

    /// Whole milliseconds, microseconds and nanoseconds are told from seconds by their
    /// number of digits; a fraction is only ever of seconds.
    #[test]
    fn unix_time_in_any_unit() {
        let t = |s: &str| parse_unix_seconds(s.as_bytes()).map(iso);
        let want = Some("2026-11-03T14:02:11.402Z".to_string());
        assert_eq!(t("1793714531.402"), want);
        assert_eq!(t("1793714531402"), want);
        assert_eq!(t("1793714531402000"), want);
        assert_eq!(t("1793714531402000000"), want);
        assert_eq!(
            t("1793714531"),
            Some("2026-11-03T14:02:11.000Z".to_string())
        );
        assert_eq!(t("1793714531402.5"), None, "a fraction of milliseconds");
        assert_eq!(t("17937145314020000000"), None, "twenty digits");
    }

    #[test]
    fn iso_sql_and_postgres_spellings() {
        let utc = opts("Z", None);
        let p = |s: &str| match parse_whole(s.as_bytes(), &utc) {
            Some(Stamp::Instant(t)) => Some(iso(t)),
            _ => None,
        };
        assert_eq!(
            p("2026-11-03T14:02:11.402Z").as_deref(),
            Some("2026-11-03T14:02:11.402Z")
        );
        assert_eq!(
            p("2026-11-03 14:02:11").as_deref(),
            Some("2026-11-03T14:02:11.000Z")
        );
        assert_eq!(
            p("2026-12-02 14:02:11.402+00").as_deref(),
            Some("2026-12-02T14:02:11.402Z")
        );
        assert_eq!(
            p("2026-12-02 14:02:11.4+05:30").as_deref(),
            Some("2026-12-02T08:32:11.400Z")
        );
        assert_eq!(
            p("2026-12-02T14:02:11-0500").as_deref(),
            Some("2026-12-02T19:02:11.000Z")
        );
        assert_eq!(p("2026-12-02T14:02:11.123456789Z").map(|_| ()), Some(()));
        for bad in [
            "2026-13-02 14:02:11",
            "2026-12-02 25:02:11",
            "2026-12-02 14:02",
            "2026-12-02 14:02:11+5",
            "2026-12-02 14:02:11 junk",
            "2026-12-02T14:02:11.",
        ] {
            assert_eq!(p(bad), None, "{bad}");
        }
    }

    /// The clock reads a field as `parse_whole` does, whatever it read before (its cache
    /// of the last date and minute): same minute, same day, another day, another offset,
    /// a stamp with more after it, in every order.
    #[test]
    fn a_clock_reads_each_stamp_as_parse_whole_does() {
        let stamps = [
            "2026-11-03T14:02:11.402Z",
            "2026-11-03T14:02:12.999Z",
            "2026-11-03T14:03:00.000Z",
            "2026-11-03T14:02:11.402Z junk",
            "2026-11-03T14:02:11.402",
            "2026-11-03T14:02:11.402+01:00",
            "2026-11-04T14:02:11.402Z",
            "2026-11-03 14:02:11",
            "2026-11-03T14:02:61.000Z",
            "2026-11-03T14:02:11.4Z",
        ];
        for tz in ["Z", "+05:30"] {
            let o = opts(tz, None);
            for first in stamps {
                for then in stamps {
                    let mut clock = Clock::new(&o);
                    let _ = clock.parse(first.as_bytes(), &o, false);
                    let by_clock = clock.parse(then.as_bytes(), &o, false).ok();
                    let whole = match parse_whole(then.as_bytes(), &o) {
                        Some(Stamp::Instant(t)) => Some(t),
                        _ => None,
                    };
                    assert_eq!(by_clock, whole, "{tz}: {first} then {then}");
                }
            }
        }
    }

    #[test]
    fn tz_applies_only_without_an_offset() {
        let plus1 = opts("+01:00", None);
        let p = |s: &str| match parse_whole(s.as_bytes(), &plus1) {
            Some(Stamp::Instant(t)) => Some(iso(t)),
            _ => None,
        };
        assert_eq!(
            p("2026-11-03 14:02:11").as_deref(),
            Some("2026-11-03T13:02:11.000Z")
        );
        assert_eq!(
            p("2026-11-03 14:02:11Z").as_deref(),
            Some("2026-11-03T14:02:11.000Z")
        );
    }

    #[test]
    fn unix_seconds_only_when_allowed() {
        let o = opts("Z", None);
        let mut c = Clock::new(&o);
        assert_eq!(
            c.parse(b"1762178531", &o, true).map(iso).as_deref(),
            Ok("2025-11-03T14:02:11.000Z")
        );
        assert_eq!(
            c.parse(b"1762178531.5", &o, true).map(iso).as_deref(),
            Ok("2025-11-03T14:02:11.500Z")
        );
        assert!(c.parse(b"1762178531", &o, false).is_err());
        assert!(c.parse(b"17x", &o, true).is_err());
    }

    /// Seconds past the last instant an i64 of nanoseconds holds (2262-04-11T23:47:16.854775807Z)
    /// are not a time, and never overflow (a fuzzed CSV export of 999999999999 did).
    #[test]
    fn unix_seconds_past_2262_are_not_a_time() {
        let last = Timestamp(i64::MAX);
        assert_eq!(parse_unix_seconds(b"9223372036.854775807"), Some(last));
        assert_eq!(parse_unix_seconds(b"9223372036.854775808"), None);
        assert_eq!(parse_unix_seconds(b"9223372037"), None);
        assert_eq!(parse_unix_seconds(b"999999999999.999999999"), None);
        let o = opts("Z", None);
        let why = Clock::new(&o).parse(b"999999999999", &o, true).unwrap_err();
        assert!(why.contains("is not a timestamp"), "{why}");
    }

    /// A field with a timestamp's shape but no such time says what is wrong with it; one of
    /// no timestamp's shape says it is none.
    #[test]
    fn an_impossible_field_is_said_out_of_range() {
        let o = opts("Z", None);
        let mut c = Clock::new(&o);
        let why = c.parse(b"2026-11-03 24:00:00+00", &o, false).unwrap_err();
        assert_eq!(
            why,
            "timestamp out of range: `2026-11-03 24:00:00+00` has hour 24 (hours run 00 to 23)"
        );
        let why = c.parse(b"2026-11-03 soon", &o, false).unwrap_err();
        assert!(
            why.starts_with("`2026-11-03 soon` is not a timestamp"),
            "{why}"
        );
        assert!(c.parse(b"2026-11-03 23:00:00+00", &o, false).is_ok());
    }

    #[test]
    fn time_only_takes_the_date_and_rolls_over_midnight() {
        let o = opts("Z", Some("2026-11-03"));
        let mut c = Clock::new(&o);
        let mut p = |s: &str| c.parse(s.as_bytes(), &o, false).map(iso).unwrap();
        assert_eq!(p("23:59:59.900"), "2026-11-03T23:59:59.900Z");
        assert_eq!(p("00:00:00.100"), "2026-11-04T00:00:00.100Z");
        let o = opts("Z", None);
        let mut c = Clock::new(&o);
        assert!(c.parse(b"14:02:11.402", &o, false).unwrap().is_dateless());
    }

    /// After a rollover, a line up to an hour behind across midnight was written late the
    /// night before; further behind, or on the first day, it is where the SPEC puts it.
    #[test]
    fn a_line_written_late_before_midnight_stays_on_its_night() {
        let o = opts("+01:00", Some("2026-11-03"));
        let mut c = Clock::new(&o);
        let mut p = |s: &str| c.parse(s.as_bytes(), &o, false).map(iso).unwrap();
        assert_eq!(p("23:59:58"), "2026-11-03T22:59:58.000Z");
        assert_eq!(p("00:00:01"), "2026-11-03T23:00:01.000Z");
        assert_eq!(
            p("23:59:59"),
            "2026-11-03T22:59:59.000Z",
            "late, not a day on"
        );
        assert_eq!(p("00:00:02"), "2026-11-03T23:00:02.000Z");
        assert_eq!(p("13:30:00"), "2026-11-04T12:30:00.000Z", "a quiet morning");
        assert_eq!(p("01:00:00"), "2026-11-05T00:00:00.000Z");
        assert_eq!(
            p("23:00:00"),
            "2026-11-05T22:00:00.000Z",
            "two hours: a day on"
        );
        let o = opts("Z", Some("2026-11-03"));
        let mut c = Clock::new(&o);
        let mut p = |s: &str| c.parse(s.as_bytes(), &o, false).map(iso).unwrap();
        assert_eq!(p("00:00:01"), "2026-11-03T00:00:01.000Z");
        assert_eq!(p("23:59:59"), "2026-11-03T23:59:59.000Z", "no night before");
    }

    /// A named zone dates each time-only stamp at the offset of its own time: the night
    /// summer time ends in Berlin (03:00 local becomes 02:00), and a whole period's start.
    #[test]
    fn a_named_zone_dates_time_only_stamps_at_their_own_offset() {
        let o = opts("Europe/Berlin", Some("2026-10-24"));
        let mut c = Clock::new(&o);
        let mut p = |s: &str| c.parse(s.as_bytes(), &o, false).map(iso).unwrap();
        assert_eq!(p("23:00:00"), "2026-10-24T21:00:00.000Z");
        assert_eq!(p("01:00:00"), "2026-10-24T23:00:00.000Z");
        assert_eq!(p("04:00:00"), "2026-10-25T03:00:00.000Z");
        assert_eq!(
            p("2026-07-01 12:00:00"),
            "2026-07-01T10:00:00.000Z",
            "offset-less, dated"
        );
        let since = crate::config::parse_instant("2026-07-01", o.tz).map(iso);
        assert_eq!(since.as_deref(), Some("2026-06-30T22:00:00.000Z"));
    }

    /// A settlement's time of day is dated from its line's time and leaves the rollover to
    /// the lines' own times: a late settlement does not move the next line to the next day.
    #[test]
    fn a_time_on_a_line_is_dated_from_it_and_moves_no_rollover() {
        let o = opts("Z", Some("2026-11-03"));
        let mut c = Clock::new(&o);
        let line = c.parse(b"10:00:00.500", &o, false).unwrap();
        let mut on_line = |s: &str| iso(c.parse_on_line(s.as_bytes(), &o, true, line).unwrap());
        assert_eq!(on_line("23:30:00"), "2026-11-03T23:30:00.000Z");
        assert_eq!(
            on_line("09:59:59"),
            "2026-11-04T09:59:59.000Z",
            "before its line"
        );
        assert_eq!(on_line("2026-11-05T01:00:00Z"), "2026-11-05T01:00:00.000Z");
        let next = c.parse(b"10:00:01.900", &o, false).unwrap();
        assert_eq!(iso(next), "2026-11-03T10:00:01.900Z");
        // A line's own time still rolls over midnight.
        c.parse(b"23:59:59.900", &o, false).unwrap();
        let after = c.parse(b"00:00:00.100", &o, false).unwrap();
        assert_eq!(iso(after), "2026-11-04T00:00:00.100Z");
        // The line's day is its local day, at `--tz`.
        let o = opts("+05:30", Some("2026-11-03"));
        let mut c = Clock::new(&o);
        let line = c.parse(b"01:00:00", &o, false).unwrap();
        assert_eq!(iso(line), "2026-11-02T19:30:00.000Z");
        let settled = c.parse_on_line(b"02:00:00", &o, false, line).unwrap();
        assert_eq!(iso(settled), "2026-11-02T20:30:00.000Z");
    }

    /// In the hour Berlin's clocks go back over (2026-10-25 from 02:00), a line whose time
    /// goes back is the second pass, and the lines after it in the hour; times beside a line
    /// (a settlement) are the first pass not before it, and move no pass. Time-only lines
    /// dated by `--date` are read so too.
    #[test]
    fn a_line_that_goes_back_in_the_fold_is_its_second_pass() {
        let o = opts("Europe/Berlin", Some("2026-10-25"));
        let mut c = Clock::new(&o);
        let mut line = |s: &str| c.parse(s.as_bytes(), &o, false).unwrap();
        let summer = line("2026-10-25 02:59:58");
        assert_eq!(iso(summer), "2026-10-25T00:59:58.000Z");
        let mut beside = |s: &str| iso(c.parse_on_line(s.as_bytes(), &o, false, summer).unwrap());
        assert_eq!(beside("02:00:02"), "2026-10-25T01:00:02.000Z");
        assert_eq!(beside("2026-10-25 02:00:02"), "2026-10-25T01:00:02.000Z");
        assert_eq!(beside("02:59:59"), "2026-10-25T00:59:59.000Z");
        // Settlements moved no pass: a line of the hour is still its first pass.
        let mut line = |s: &str| iso(c.parse(s.as_bytes(), &o, false).unwrap());
        assert_eq!(line("2026-10-25 02:59:59"), "2026-10-25T00:59:59.000Z");
        assert_eq!(line("2026-10-25 02:00:01"), "2026-10-25T01:00:01.000Z");
        assert_eq!(line("02:30:00"), "2026-10-25T01:30:00.000Z");
        assert_eq!(line("03:00:00"), "2026-10-25T02:00:00.000Z");
        assert_eq!(c.take_notes().len(), 1);
    }
}
