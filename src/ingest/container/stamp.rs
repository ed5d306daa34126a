//! The application's line given the time its runtime (or a log platform's envelope) wrote
//! beside it, when the line carries no date of its own: a text line's in front, a JSON
//! object's as `ts`, a logfmt line's as `time=`. A text line that opens with a time of day
//! alone is given the date only ([`date_for_time_of_day`]).

use crate::time::{NANOS_PER_DAY, parse_time_of_day};
use std::io::Write;

/// The application's `line`, given the runtime's `time` when it carries no date of its own.
pub(in crate::ingest) fn emit(out: &mut Vec<u8>, time: &[u8], line: &[u8]) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.trim_ascii().is_empty() {
        return;
    }
    if time.is_empty() {
        return out.extend_from_slice(line);
    }
    if line.starts_with(b"{") {
        const STAMPS: [&[u8]; 5] = [
            b"\"ts\"",
            b"\"timestamp\"",
            b"\"@timestamp\"",
            b"\"time\"",
            b"\"@t\"",
        ];
        // Named anywhere is not enough: `"db":{"time":"12ms"}` inside is no stamp.
        let stamped = STAMPS
            .iter()
            .any(|s| memchr::memmem::find(line, s).is_some())
            && names_a_top_level_key(line, &STAMPS);
        if !stamped {
            out.extend_from_slice(b"{\"ts\":\"");
            out.extend_from_slice(time);
            out.extend_from_slice(b"\",");
            out.extend_from_slice(line[1..].trim_ascii_start());
            return;
        }
    } else if !crate::ingest::starts_with_timestamp(line) {
        let start = out.len();
        // logfmt without a stamp takes it as a pair; anything else as a text line's.
        out.extend_from_slice(b"time=");
        out.extend_from_slice(time);
        out.push(b' ');
        out.extend_from_slice(line);
        if !crate::ingest::logfmt::looks_like_logfmt(&out[start..]) {
            out.truncate(start);
            out.extend_from_slice(time);
            out.extend_from_slice(b"  ");
            out.extend_from_slice(line);
        }
        return;
    } else if let Some(date) = date_for_time_of_day(line, time) {
        // `08:06:59.265 INFO ...` -> `2026-12-06 08:06:59.265 INFO ...`, inside a bracket
        // if the time is in one: the line's own time kept, as its own stamp would be.
        let bracket = usize::from(line[0] == b'[');
        out.extend_from_slice(&line[..bracket]);
        use chrono::Datelike;
        let (y, m, d) = (date.year(), date.month(), date.day());
        // Into a Vec: cannot fail.
        let _ = write!(out, "{y:04}-{m:02}-{d:02} ");
        out.extend_from_slice(&line[bracket..]);
        return;
    }
    out.extend_from_slice(line);
}

/// Where a Python traceback printed a line at a time stands: a runtime (or journald's
/// stdout transport) writes each of its lines as an entry of its own. In the service's own
/// file they are the continuation of the record above them, read with it (an exception
/// chained below another is the same failure); each given the runtime's stamp, they were
/// lines of their own, and the exception's line a failure of its own: a phantom attempt.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::ingest) enum Traceback {
    #[default]
    Outside,
    /// From `Traceback (most recent call last):`, its frames (indented).
    Frames,
    /// After the exception's line: blanks, and the words chaining another traceback.
    Raised,
}

impl Traceback {
    /// Whether `line` is a traceback's (to be passed on as it is, as in the service's file).
    #[inline]
    pub(in crate::ingest) fn goes_on(&mut self, line: &[u8]) -> bool {
        const START: &[u8] = b"Traceback (most recent call last):";
        const CHAINED: [&[u8]; 2] = [
            b"The above exception was the direct cause of the following exception:",
            b"During handling of the above exception, another exception occurred:",
        ];
        let line = line.trim_ascii_end();
        let next = match *self {
            _ if line == START => Traceback::Frames,
            Traceback::Outside => return false,
            Traceback::Frames if line.first().is_none_or(u8::is_ascii_whitespace) => {
                Traceback::Frames
            }
            // The exception's line ends the frames.
            Traceback::Frames => Traceback::Raised,
            Traceback::Raised if line.is_empty() || CHAINED.contains(&line) => Traceback::Raised,
            Traceback::Raised => Traceback::Outside,
        };
        *self = next;
        next != Traceback::Outside
    }
}

/// The date of a text line that opens with a time of day alone (`08:06:59.265 INFO ...`,
/// `[08:06:59]`, Python's `%(asctime)s` given a `datefmt` of `%H:%M:%S`), from the runtime's
/// `time` (RFC 3339): its date, or the day before or after when the line's time of day is
/// more than 12 hours from `time`'s, so that the line lies nearest the runtime's time (a line
/// written at `23:59:59.990` and stamped at `00:00:00.002` was written the day before; one
/// written in a zone hours from the runtime's crosses midnight the same way). `None` when
/// the line opens with no time of day, or `time` is no date and time.
fn date_for_time_of_day(line: &[u8], time: &[u8]) -> Option<chrono::NaiveDate> {
    let (own, _) = parse_time_of_day(line.strip_prefix(b"[").unwrap_or(line))?;
    let (theirs, _) = parse_time_of_day(time.get(11..)?)?;
    let date = std::str::from_utf8(time.get(..10)?).ok()?;
    let date = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").ok()?;
    Some(match own - theirs {
        ahead if ahead > NANOS_PER_DAY / 2 => date.pred_opt()?,
        behind if behind < -NANOS_PER_DAY / 2 => date.succ_opt()?,
        _ => date,
    })
}

/// Whether the JSON object `object` has one of `names` (each with its quotes) as a key of
/// its own, not of an object or array inside it. A byte scan: strings are skipped whole,
/// escapes and all, so a bracket or a name inside a value is not counted.
fn names_a_top_level_key(object: &[u8], names: &[&[u8]]) -> bool {
    let (mut depth, mut at, mut expect_key) = (0usize, 0, false);
    while at < object.len() {
        match object[at] {
            b'"' => {
                let start = at;
                at += 1;
                while at < object.len() && object[at] != b'"' {
                    at += if object[at] == b'\\' { 2 } else { 1 };
                }
                let string = &object[start..(at + 1).min(object.len())];
                if depth == 1 && expect_key && names.contains(&string) {
                    return true;
                }
                expect_key = false;
            }
            b'{' | b'[' => {
                depth += 1;
                expect_key = depth == 1 && object[at] == b'{';
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' => expect_key = depth == 1,
            _ => {}
        }
        at += 1;
    }
    false
}

#[cfg(test)]
mod tests {
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
                names_a_top_level_key(own, &names),
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
                !names_a_top_level_key(inner, &names),
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

    /// A traceback's lines, chained ones too, pass as they are; the lines around it do not.
    #[test]
    fn a_tracebacks_lines_are_told_from_the_lines_around_it() {
        let lines = [
            ("ERROR agent: tool failed", false),
            ("Traceback (most recent call last):", true),
            ("  File \"x.py\", line 1, in <module>", true),
            ("    raise to_exc(exc) from exc", true),
            ("httpcore.ReadTimeout: The read operation timed out", true),
            ("", true),
            (
                "The above exception was the direct cause of the following exception:",
                true,
            ),
            ("", true),
            ("Traceback (most recent call last):", true),
            ("\tFile \"y.py\", line 2", true),
            ("httpx.ReadTimeout: The read operation timed out", true),
            ("INFO agent: retrying", false),
            ("httpx.ReadTimeout: The read operation timed out", false),
        ];
        let mut traceback = Traceback::default();
        for (line, goes_on) in lines {
            assert_eq!(traceback.goes_on(line.as_bytes()), goes_on, "{line}");
        }
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
}
