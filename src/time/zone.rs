//! The zone of timestamps written without an offset (`--tz`, SPEC §3.6): a fixed offset, or
//! a named zone (`Europe/Berlin`), whose offset moves with daylight saving time. A service
//! that logs local time keeps doing so across the change; a fixed offset would misplace a
//! month's lines by an hour on one side of it, and they would no longer meet the agent's.

use super::{NANOS_PER_SEC, Timestamp};
use chrono::{DateTime, LocalResult, NaiveDateTime, Offset, TimeZone};
use chrono_tz::Tz;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// Seconds east of UTC.
    Fixed(i64),
    Named(Tz),
}

impl Default for Zone {
    fn default() -> Self {
        Zone::Fixed(0)
    }
}

impl Zone {
    /// `Z`, `UTC`, `+01:00`, `-0500`, `+01`, or an IANA zone name (`Europe/Berlin`,
    /// `America/New_York`).
    pub fn parse(text: &str) -> Option<Zone> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("z") || t.eq_ignore_ascii_case("utc") {
            return Some(Zone::Fixed(0));
        }
        if let Some(secs) = fixed_offset(t) {
            return Some(Zone::Fixed(secs));
        }
        t.parse::<Tz>().ok().map(Zone::Named)
    }

    /// The offset, in seconds east of UTC, of a local time given as nanoseconds since the
    /// epoch read as if it were UTC. A time the clocks skipped (spring forward) takes the
    /// offset before the change, so `02:30` on that night is `03:30` after it; a time they
    /// passed twice (fall back) is the first pass, the one before the change (a log's order
    /// can tell the second: [`super::Folds`]).
    #[inline]
    pub fn offset_of_local(self, local_nanos: i64) -> i64 {
        match self {
            Zone::Fixed(secs) => secs,
            Zone::Named(tz) => match named_readings(tz, local_nanos) {
                Readings::Once(offset) => offset,
                Readings::Twice { first, .. } => first,
                Readings::Skipped { before } => before,
            },
        }
    }

    /// The offsets a local time may be at: one, or two where the clocks went back.
    #[inline]
    pub fn readings_of_local(self, local_nanos: i64) -> Readings {
        match self {
            Zone::Fixed(secs) => Readings::Once(secs),
            Zone::Named(tz) => named_readings(tz, local_nanos),
        }
    }

    /// The offset of a local time written beside another time (a settlement on its
    /// effect's line, `not_before`): in a fold, the first pass that is not before it (a
    /// refund created at 02:50 in summer time and settled at `02:10` was settled in winter
    /// time), else the first pass, as [`Self::offset_of_local`] reads it.
    pub fn offset_not_before(self, local_nanos: i64, not_before: Timestamp) -> i64 {
        let at = |offset: i64| local_nanos.saturating_sub(offset.saturating_mul(NANOS_PER_SEC));
        match self.readings_of_local(local_nanos) {
            Readings::Twice { first, second }
                if at(first) < not_before.0 && at(second) >= not_before.0 =>
            {
                second
            }
            Readings::Twice { first: offset, .. }
            | Readings::Once(offset)
            | Readings::Skipped { before: offset } => offset,
        }
    }

    /// The offset, in seconds east of UTC, in force at the instant `at`.
    #[inline]
    pub fn offset_at(self, at: Timestamp) -> i64 {
        match self {
            Zone::Fixed(secs) => secs,
            Zone::Named(tz) => {
                naive(at.0).map_or(0, |n| offset_secs(tz.offset_from_utc_datetime(&n)))
            }
        }
    }

    /// The instant of a local time (nanoseconds since the epoch read as UTC).
    pub fn instant_of_local(self, local_nanos: i64) -> Option<Timestamp> {
        let offset = self
            .offset_of_local(local_nanos)
            .checked_mul(NANOS_PER_SEC)?;
        local_nanos.checked_sub(offset).map(Timestamp)
    }
}

/// The offsets, in seconds east of UTC, a local time may be at in a zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readings {
    Once(i64),
    /// The clocks went back over it: it happened twice, first at `first` (summer time),
    /// then at `second`.
    Twice {
        first: i64,
        second: i64,
    },
    /// The clocks skipped it (spring forward): it never happened; `before` is the offset
    /// before the change.
    Skipped {
        before: i64,
    },
}

#[cold]
fn named_readings(tz: Tz, local_nanos: i64) -> Readings {
    let Some(local) = naive(local_nanos) else {
        return Readings::Once(0);
    };
    match tz.offset_from_local_datetime(&local) {
        LocalResult::Single(o) => Readings::Once(offset_secs(o)),
        LocalResult::Ambiguous(first, second) => Readings::Twice {
            first: offset_secs(first),
            second: offset_secs(second),
        },
        // In the gap: the offset a day earlier is the one before the change (zones change
        // at most a few times a year).
        LocalResult::None => {
            let before = local - chrono::Duration::days(1);
            Readings::Skipped {
                before: offset_secs(tz.offset_from_utc_datetime(&before)),
            }
        }
    }
}

fn offset_secs(o: impl Offset) -> i64 {
    o.fix().local_minus_utc() as i64
}

fn naive(nanos: i64) -> Option<NaiveDateTime> {
    let secs = nanos.div_euclid(NANOS_PER_SEC);
    let sub = nanos.rem_euclid(NANOS_PER_SEC) as u32;
    DateTime::from_timestamp(secs, sub).map(|d| d.naive_utc())
}

/// `+01:00`, `-0500`, `+01`: seconds east of UTC.
fn fixed_offset(t: &str) -> Option<i64> {
    let sign = match t.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits: String = t[1..].chars().filter(|c| *c != ':').collect();
    if !digits.bytes().all(|b| b.is_ascii_digit()) || !(digits.len() == 2 || digits.len() == 4) {
        return None;
    }
    let h: i64 = digits[..2].parse().ok()?;
    let m: i64 = if digits.len() == 4 {
        digits[2..].parse().ok()?
    } else {
        0
    };
    (h <= 23 && m <= 59).then_some(sign * (h * 3600 + m * 60))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{NANOS_PER_DAY, days_from_civil};

    fn local(y: i64, mo: i64, d: i64, h: i64, mi: i64) -> i64 {
        days_from_civil(y, mo, d).unwrap() * NANOS_PER_DAY + (h * 3600 + mi * 60) * NANOS_PER_SEC
    }

    #[test]
    fn reads_offsets_and_zone_names() {
        assert_eq!(Zone::parse("Z"), Some(Zone::Fixed(0)));
        assert_eq!(Zone::parse("utc"), Some(Zone::Fixed(0)));
        assert_eq!(Zone::parse("+05:30"), Some(Zone::Fixed(19_800)));
        assert_eq!(Zone::parse("-0500"), Some(Zone::Fixed(-18_000)));
        assert_eq!(Zone::parse("+01"), Some(Zone::Fixed(3600)));
        assert_eq!(
            Zone::parse("Europe/Berlin"),
            Some(Zone::Named(Tz::Europe__Berlin))
        );
        for bad in [
            "",
            "+1",
            "+24:00",
            "+01:60",
            "Europe/Nowhere",
            "CEST+1",
            "0100",
        ] {
            assert_eq!(Zone::parse(bad), None, "{bad}");
        }
    }

    /// Berlin is at +01:00 in winter and +02:00 from the last Sunday of March (2026-03-29,
    /// 02:00 local) to the last Sunday of October (2026-10-25, 03:00 local).
    #[test]
    fn a_named_zone_follows_daylight_saving_time() {
        let berlin = Zone::Named(Tz::Europe__Berlin);
        assert_eq!(berlin.offset_of_local(local(2026, 1, 15, 12, 0)), 3600);
        assert_eq!(berlin.offset_of_local(local(2026, 7, 15, 12, 0)), 7200);
        // Skipped: 02:30 on the spring night reads as 01:30 UTC (03:30 summer time).
        assert_eq!(berlin.offset_of_local(local(2026, 3, 29, 2, 30)), 3600);
        assert_eq!(berlin.offset_of_local(local(2026, 3, 29, 3, 30)), 7200);
        // Passed twice: 02:30 on the autumn night is the first pass, in summer time.
        assert_eq!(berlin.offset_of_local(local(2026, 10, 25, 2, 30)), 7200);
        assert_eq!(berlin.offset_of_local(local(2026, 10, 25, 3, 30)), 3600);
        let at = |nanos| Timestamp(nanos);
        assert_eq!(berlin.offset_at(at(local(2026, 10, 25, 0, 59))), 7200);
        assert_eq!(berlin.offset_at(at(local(2026, 10, 25, 1, 0))), 3600);
        // Beside a line's time, a time in the fold is the first pass not before it.
        let utc = |h, m| Timestamp(local(2026, 10, 25, h, m));
        let fold = local(2026, 10, 25, 2, 10);
        assert_eq!(berlin.offset_not_before(fold, utc(0, 5)), 7200);
        assert_eq!(berlin.offset_not_before(fold, utc(0, 50)), 3600);
        assert_eq!(berlin.offset_not_before(fold, utc(1, 30)), 7200);
        assert_eq!(
            berlin.offset_not_before(local(2026, 7, 1, 2, 0), utc(1, 30)),
            7200
        );
        // A fixed offset does not move.
        let fixed = Zone::Fixed(3600);
        assert_eq!(fixed.offset_of_local(local(2026, 7, 15, 12, 0)), 3600);
        assert_eq!(fixed.offset_at(at(local(2026, 7, 15, 12, 0))), 3600);
    }
}
