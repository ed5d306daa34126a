//! What is wrong with a timestamp that has a timestamp's shape but no such time: month 13,
//! 30 February, second 61, a year past what an instant holds. Asked only of text that failed
//! to read as a time (a skipped line, a field refused), so that the reason says what is wrong
//! rather than that no timestamp was there.

use super::{NANOS_PER_DAY, NANOS_PER_SEC, days_from_civil};

/// The instants a 64-bit count of nanoseconds holds, which every time is kept as.
const READ_FROM_TO: &str = "times are read from 1677-09-21 to 2262-04-11";

/// Why the timestamp at the start of `b` (a date and a time, `YYYY-MM-DD[T ]HH:MM:SS`, the
/// date's year of any length, or a time alone, `HH:MM:SS`) is no time, in words with the
/// stamp quoted: `None` when `b` opens with no such shape, or the shape holds a real time.
pub fn why_out_of_range(b: &[u8]) -> Option<String> {
    let (shown, what) = date_time(b).or_else(|| time_only(b))?;
    let shown = String::from_utf8_lossy(shown);
    Some(format!("timestamp out of range: `{shown}` {what}"))
}

/// `digits` ASCII digits at the start of `b`, as a number.
fn number(b: &[u8], digits: usize) -> Option<i64> {
    let d = b.get(..digits)?;
    d.iter().all(u8::is_ascii_digit).then(|| {
        d.iter().fold(0i64, |n, &c| {
            n.saturating_mul(10).saturating_add(i64::from(c - b'0'))
        })
    })
}

/// A date and a time: the stamp's bytes, and what is wrong with it.
fn date_time(b: &[u8]) -> Option<(&[u8], String)> {
    let year_len = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if year_len < 4 {
        return None;
    }
    let year = number(b, year_len)?;
    let sep = *b.get(year_len)?;
    let rest = &b[year_len..];
    if !matches!(sep, b'-' | b'/') || rest.get(3) != Some(&sep) {
        return None;
    }
    let month = number(&rest[1..], 2)?;
    let day = number(rest.get(4..)?, 2)?;
    if !matches!(rest.get(6)?, b'T' | b't' | b' ') {
        return None;
    }
    let time_at = year_len + 7;
    let (hour, minute, second, time_len) = clock(&b[time_at..])?;
    let mut end = time_at + time_len;
    let offset = offset(&b[end..]);
    if let Some((_, _, len)) = offset {
        end += len;
    }
    let shown = &b[..end];
    let what = if year_len > 4 {
        format!("has year {year} ({READ_FROM_TO})")
    } else if !(1..=12).contains(&month) {
        format!("has month {month:02} (months run 01 to 12)")
    } else if days_from_civil(year, month, day).is_none() {
        let days = (28..=31)
            .rev()
            .find(|&d| days_from_civil(year, month, d).is_some())?;
        format!(
            "has day {day:02} of {} {year} (it has {days} days)",
            MONTHS[month as usize - 1]
        )
    } else if let Some(what) = clock_out_of_range(hour, minute, second) {
        what
    } else if let Some((hours, minutes, _)) = offset.filter(|&(h, m, _)| h > 23 || m > 59) {
        format!("has offset {hours:02}:{minutes:02} from UTC (offsets run to 23:59)")
    } else {
        let days = days_from_civil(year, month, day)?;
        let fits = days
            .checked_mul(NANOS_PER_DAY)
            .and_then(|d| d.checked_add((hour * 3600 + minute * 60 + second) * NANOS_PER_SEC))
            .is_some();
        if fits {
            return None;
        }
        format!("is in year {year} ({READ_FROM_TO})")
    };
    Some((shown, what))
}

/// A time alone.
fn time_only(b: &[u8]) -> Option<(&[u8], String)> {
    let (hour, minute, second, len) = clock(b)?;
    Some((&b[..len], clock_out_of_range(hour, minute, second)?))
}

/// `HH:MM:SS[.fff]`: hour, minute, second, and its length; a time must end where a word
/// does, as the reading requires.
fn clock(b: &[u8]) -> Option<(i64, i64, i64, usize)> {
    let hour = number(b, 2)?;
    let minute = number(b.get(3..)?, 2)?;
    let second = number(b.get(6..)?, 2)?;
    if b[2] != b':' || b[5] != b':' {
        return None;
    }
    let mut len = 8;
    if matches!(b.get(8), Some(b'.' | b',')) {
        len = 9 + b[9..].iter().take_while(|c| c.is_ascii_digit()).count();
    }
    match b.get(len) {
        Some(c) if c.is_ascii_alphanumeric() && !matches!(c, b'Z' | b'z') => None,
        _ => Some((hour, minute, second, len)),
    }
}

fn clock_out_of_range(hour: i64, minute: i64, second: i64) -> Option<String> {
    Some(if hour > 23 {
        format!("has hour {hour:02} (hours run 00 to 23)")
    } else if minute > 59 {
        format!("has minute {minute:02} (minutes run 00 to 59)")
    } else if second > 60 {
        format!("has second {second:02} (seconds run 00 to 59, 60 for a leap second)")
    } else {
        return None;
    })
}

/// `Z`, `±HH:MM`, `±HHMM` or `±HH`: its hours, minutes and length, whatever their values.
fn offset(b: &[u8]) -> Option<(i64, i64, usize)> {
    match b.first()? {
        b'Z' | b'z' => return Some((0, 0, 1)),
        b'+' | b'-' => {}
        _ => return None,
    }
    let hours = number(&b[1..], 2)?;
    if b.get(3) == Some(&b':') {
        return Some((hours, number(b.get(4..)?, 2)?, 6));
    }
    match b.get(3..).and_then(|r| number(r, 2)) {
        Some(minutes) => Some((hours, minutes, 5)),
        None => Some((hours, 0, 3)),
    }
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn why(text: &str) -> Option<String> {
        why_out_of_range(text.as_bytes())
    }

    #[test]
    fn impossible_times_say_what_is_wrong() {
        let cases = [
            (
                "99999-01-01T00:00:00Z  refund",
                "`99999-01-01T00:00:00Z` has year 99999 (times are read from 1677-09-21 to 2262-04-11)",
            ),
            (
                "2026-13-01T10:00:00Z",
                "`2026-13-01T10:00:00Z` has month 13 (months run 01 to 12)",
            ),
            (
                "2026-02-30 10:00:00,123 INFO x",
                "`2026-02-30 10:00:00,123` has day 30 of February 2026 (it has 28 days)",
            ),
            (
                "2024-02-30T00:00:00Z",
                "`2024-02-30T00:00:00Z` has day 30 of February 2024 (it has 29 days)",
            ),
            (
                "2026-11-03T14:02:61.402Z ok",
                "`2026-11-03T14:02:61.402Z` has second 61 (seconds run 00 to 59, 60 for a leap second)",
            ),
            (
                "2026/11/03 24:00:00 x",
                "`2026/11/03 24:00:00` has hour 24 (hours run 00 to 23)",
            ),
            (
                "2026-11-03T14:60:00+01:00",
                "`2026-11-03T14:60:00+01:00` has minute 60 (minutes run 00 to 59)",
            ),
            (
                "2026-11-03T14:00:00+25:00 x",
                "`2026-11-03T14:00:00+25:00` has offset 25:00 from UTC (offsets run to 23:59)",
            ),
            (
                "2300-01-01T00:00:00Z",
                "`2300-01-01T00:00:00Z` is in year 2300 (times are read from 1677-09-21 to 2262-04-11)",
            ),
            (
                "25:61:00.5  x",
                "`25:61:00.5` has hour 25 (hours run 00 to 23)",
            ),
        ];
        for (text, said) in cases {
            assert_eq!(
                why(text).as_deref(),
                Some(format!("timestamp out of range: {said}").as_str()),
                "{text}"
            );
        }
    }

    /// Real times, and text that has no timestamp's shape, are none of its business.
    #[test]
    fn real_times_and_other_text_are_not_out_of_range() {
        for text in [
            "2026-11-03T14:02:11.402Z  refund",
            "2026-11-03 14:02:60 leap",
            "2024-02-29T00:00:00+05:30",
            "2262-04-11T00:00:00Z",
            "1900-01-01T00:00:00Z",
            "23:59:59.999",
            "2026-11-03T14:02:11.402Zx",
            "2026-13-01 is no timestamp",
            "2026-11-03Tnoon",
            "123-01-01T00:00:00Z",
            "14:02 ok",
            "25:00:00abc",
            "Traceback (most recent call last):",
            "",
        ] {
            assert_eq!(why(text), None, "{text}");
        }
    }
}
