//! Timestamps as the structured formats spell them (SPEC §3.6): ISO 8601 and its SQL cousin
//! (`2026-11-03T14:02:11.402Z`, `2026-11-03 14:02:11`, PostgreSQL's `2026-12-02 14:02:11.402+00`),
//! time-only `14:02:11.402` dated by `--date`, and unix seconds in API-style exports. Parsed
//! from bytes with no allocation; offset-less stamps take `--tz`.

use super::ParseOptions;
use crate::time::{NANOS_PER_DAY, NANOS_PER_SEC, Timestamp};
use chrono::NaiveDate;

/// Reads `n` ASCII digits at `b[at..]` as a number.
fn digits(b: &[u8], at: usize, n: usize) -> Option<i64> {
    let s = b.get(at..at + n)?;
    s.iter().try_fold(0i64, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + (c - b'0') as i64)
    })
}

/// `HH:MM:SS[.f{1,9}]` at the start of `b`: nanoseconds since midnight and bytes used.
fn time_of_day(b: &[u8]) -> Option<(i64, usize)> {
    let (h, m, s) = (digits(b, 0, 2)?, digits(b, 3, 2)?, digits(b, 6, 2)?);
    if b[2] != b':' || b[5] != b':' || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let mut nanos = (h * 3600 + m * 60 + s) * NANOS_PER_SEC;
    let mut used = 8;
    if matches!(b.get(8), Some(b'.' | b',')) {
        let mut scale = NANOS_PER_SEC / 10;
        let mut i = 9;
        while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            nanos += (c - b'0') as i64 * scale;
            scale /= 10;
            i += 1;
        }
        if i == 9 {
            return None;
        }
        used = i;
    }
    Some((nanos, used))
}

/// `Z`, `+00`, `+05:30`, `-0500`, or nothing: the offset in seconds, `None` when absent.
fn offset(b: &[u8]) -> Result<Option<i64>, ()> {
    match b.first() {
        None => Ok(None),
        Some(b'Z' | b'z') if b.len() == 1 => Ok(Some(0)),
        Some(&sign @ (b'+' | b'-')) => {
            let h = digits(b, 1, 2).ok_or(())?;
            let m = match b.len() {
                3 => 0,
                5 => digits(b, 3, 2).ok_or(())?,
                6 if b[3] == b':' => digits(b, 4, 2).ok_or(())?,
                _ => return Err(()),
            };
            if h > 23 || m > 59 {
                return Err(());
            }
            let secs = h * 3600 + m * 60;
            Ok(Some(if sign == b'-' { -secs } else { secs }))
        }
        _ => Err(()),
    }
}

fn days_from_civil(date: NaiveDate) -> i64 {
    date.signed_duration_since(NaiveDate::from_ymd_opt(1970, 1, 1).expect("epoch"))
        .num_days()
}

/// `YYYY-MM-DD[T ]HH:MM:SS[.fff][Z|±HH[:MM]]`, offset-less ones at `opts.tz`.
pub fn parse_datetime(b: &[u8], opts: &ParseOptions) -> Option<Timestamp> {
    let (y, mo, d) = (digits(b, 0, 4)?, digits(b, 5, 2)?, digits(b, 8, 2)?);
    if b[4] != b'-' || b[7] != b'-' || !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(y as i32, mo as u32, d as u32)?;
    let (tod, used) = time_of_day(&b[11..])?;
    let rest = b[11 + used..].trim_ascii_start();
    let off = match offset(rest).ok()? {
        Some(secs) => secs,
        None => opts.tz.local_minus_utc() as i64,
    };
    Some(Timestamp(
        days_from_civil(date) * NANOS_PER_DAY + tod - off * NANOS_PER_SEC,
    ))
}

/// Unix seconds, optionally with a fraction (`1762178531`, `1762178531.402`).
pub fn parse_unix_seconds(b: &[u8]) -> Option<Timestamp> {
    let (whole, frac) = match b.iter().position(|&c| c == b'.') {
        Some(i) => (&b[..i], &b[i + 1..]),
        None => (b, &b[..0]),
    };
    if whole.is_empty() || whole.len() > 12 || frac.len() > 9 {
        return None;
    }
    let secs = digits(whole, 0, whole.len())?;
    let mut nanos = 0;
    let mut scale = NANOS_PER_SEC / 10;
    for &c in frac {
        if !c.is_ascii_digit() {
            return None;
        }
        nanos += (c - b'0') as i64 * scale;
        scale /= 10;
    }
    Some(Timestamp(secs * NANOS_PER_SEC + nanos))
}

/// Dates time-only timestamps (SPEC §3.6): on `--date`, else on 1970-01-01 (printed without
/// a date); one more than 12 hours earlier than the previous moves to the next day.
#[derive(Debug)]
pub struct Clock {
    base: i64,
    prev: Option<i64>,
}

impl Clock {
    pub fn new(opts: &ParseOptions) -> Self {
        // `--date` is a local date: its midnight is at `--tz`.
        let base = opts.date.map_or(0, |d| {
            days_from_civil(d) * NANOS_PER_DAY - opts.tz.local_minus_utc() as i64 * NANOS_PER_SEC
        });
        Clock { base, prev: None }
    }

    /// Any timestamp spelling the formats allow, or why not.
    pub fn parse(
        &mut self,
        text: &[u8],
        opts: &ParseOptions,
        unix: bool,
    ) -> Result<Timestamp, String> {
        let t = text.trim_ascii();
        if let Some(ts) = parse_datetime(t, opts) {
            return Ok(ts);
        }
        if unix && let Some(ts) = parse_unix_seconds(t) {
            return Ok(ts);
        }
        if let Some((tod, used)) = time_of_day(t)
            && used == t.len()
        {
            return Ok(self.time_only(tod));
        }
        let shown = String::from_utf8_lossy(t);
        Err(if unix {
            format!(
                "`{shown}` is not a timestamp (ISO 8601, YYYY-MM-DD HH:MM:SS, HH:MM:SS or unix seconds)"
            )
        } else {
            format!("`{shown}` is not a timestamp (ISO 8601, YYYY-MM-DD HH:MM:SS or HH:MM:SS)")
        })
    }

    fn time_only(&mut self, tod: i64) -> Timestamp {
        let mut at = self.base + tod;
        if let Some(prev) = self.prev {
            while at < prev - NANOS_PER_DAY / 2 {
                at += NANOS_PER_DAY;
            }
        }
        self.prev = Some(at);
        Timestamp(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_offset;

    fn opts(tz: &str, date: Option<&str>) -> ParseOptions {
        ParseOptions {
            tz: parse_offset(tz).unwrap(),
            date: date.map(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").unwrap()),
            ..ParseOptions::default()
        }
    }

    fn iso(ts: Timestamp) -> String {
        ts.display()
    }

    #[test]
    fn iso_sql_and_postgres_spellings() {
        let utc = opts("Z", None);
        let p = |s: &str| parse_datetime(s.as_bytes(), &utc).map(iso);
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

    #[test]
    fn tz_applies_only_without_an_offset() {
        let plus1 = opts("+01:00", None);
        let p = |s: &str| parse_datetime(s.as_bytes(), &plus1).map(iso);
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
}
