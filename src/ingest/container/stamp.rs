//! The application's line given the time its runtime (or a log platform's envelope) wrote
//! beside it, when the line carries no stamp of its own: a text line's in front, a JSON
//! object's as `ts`, a logfmt line's as `time=`. A stamp of the line's own that is a time of
//! day alone (a text line's first, a JSON object's or a logfmt line's stamp) is given the
//! date only ([`date_for_time_of_day`]).

use crate::ingest::logfmt::{self, Shape};
use crate::time::{NANOS_PER_DAY, parse_time_of_day};
use std::io::Write;

/// The names of a JSON object's stamp ([`crate::ingest::jsonl::STAMP_NAMES`]), quoted.
const QUOTED_STAMPS: [&[u8]; 6] = [
    b"\"ts\"",
    b"\"timestamp\"",
    b"\"@timestamp\"",
    b"\"time\"",
    b"\"@t\"",
    b"\"asctime\"",
];

/// The application's `line`, given the runtime's `time` when it carries no stamp of its
/// own, or the runtime's date when its own is a time of day alone.
pub(in crate::ingest) fn emit(out: &mut Vec<u8>, time: &[u8], line: &[u8]) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.trim_ascii().is_empty() {
        return;
    }
    if time.is_empty() {
        return out.extend_from_slice(line);
    }
    if line.starts_with(b"{") {
        return emit_object(out, time, line);
    }
    if !crate::ingest::starts_with_timestamp(line) {
        return emit_unstamped(out, time, line);
    }
    let bracket = usize::from(line[0] == b'[');
    if let Some(date) = date_for_time_of_day(&line[bracket..], time) {
        // `08:06:59.265 INFO ...` -> `2026-12-06 08:06:59.265 INFO ...`, inside a bracket
        // if the time is in one: the line's own time kept, as its own stamp would be.
        out.extend_from_slice(&line[..bracket]);
        write_date(out, date, b' ');
        out.extend_from_slice(&line[bracket..]);
        return;
    }
    out.extend_from_slice(line);
}

/// A JSON object: its own stamps kept (one that is a time of day alone dated), or the
/// runtime's given as `ts` when it has none.
fn emit_object(out: &mut Vec<u8>, time: &[u8], line: &[u8]) {
    // Named anywhere is not enough: `"db":{"time":"12ms"}` inside is no stamp.
    let named = QUOTED_STAMPS
        .iter()
        .any(|s| memchr::memmem::find(line, s).is_some());
    let mut copied = 0;
    // Up to the first stamp that is no time of day alone: the usual line's only one.
    let stamped = named
        && each_top_level_key(line, &QUOTED_STAMPS, |after_name| {
            let value = line[after_name..]
                .iter()
                .position(|b| !b.is_ascii_whitespace() && *b != b':');
            match value.map(|v| after_name + v) {
                Some(v) if line[v] == b'"' => {
                    let dated = date_value(out, line, copied, v + 1, time);
                    std::mem::replace(&mut copied, dated) != dated
                }
                _ => false,
            }
        });
    if stamped {
        out.extend_from_slice(&line[copied..]);
        return;
    }
    out.extend_from_slice(b"{\"ts\":\"");
    out.extend_from_slice(time);
    out.extend_from_slice(b"\",");
    out.extend_from_slice(line[1..].trim_ascii_start());
}

/// A line that opens with no stamp: logfmt with a stamp of its own keeps it (one that is a
/// time of day alone dated); logfmt without one takes the runtime's as a pair (`time=`),
/// where a second would leave two; anything else takes it as a text line's.
fn emit_unstamped(out: &mut Vec<u8>, time: &[u8], line: &[u8]) {
    let mut stamps = [0; QUOTED_STAMPS.len()];
    let mut found = 0;
    let shape = logfmt::shape(line, |at| {
        if let Some(slot) = stamps.get_mut(found) {
            *slot = at;
            found += 1;
        }
    });
    match shape {
        Shape::Stamped { .. } => {
            let mut copied = 0;
            for &at in &stamps[..found] {
                copied = date_value(out, line, copied, at, time);
            }
            out.extend_from_slice(&line[copied..]);
        }
        Shape::Unstamped => {
            out.extend_from_slice(b"time=");
            out.extend_from_slice(time);
            out.push(b' ');
            out.extend_from_slice(line);
        }
        Shape::Other => {
            out.extend_from_slice(time);
            out.extend_from_slice(b"  ");
            out.extend_from_slice(line);
        }
    }
}

/// Gives `line` from `copied` up to the stamp's value at `at`, and the runtime's date
/// before it (`2026-12-06T08:07:00`) when the value is a time of day alone (`08:07:00`,
/// `08:07:00.265Z`, `08:07:00+01:00`): where `line` is given from next. Otherwise gives
/// nothing: `copied`.
fn date_value(out: &mut Vec<u8>, line: &[u8], copied: usize, at: usize, time: &[u8]) -> usize {
    let value = &line[at..];
    // A quoted value ends at its quote, a bare one (logfmt's) at a blank.
    let quote = line[..at].last().filter(|b| matches!(b, b'"' | b'\''));
    let Some(date) = time_of_day_alone(value, quote.copied())
        .then(|| date_for_time_of_day(value, time))
        .flatten()
    else {
        return copied;
    };
    out.extend_from_slice(&line[copied..at]);
    write_date(out, date, b'T');
    at
}

/// Whether a stamp's value (up to its `quote`, else a blank or the line's end) is a time of
/// day with nothing before it and nothing after it but, maybe, its zone.
fn time_of_day_alone(value: &[u8], quote: Option<u8>) -> bool {
    let Some((_, used)) = parse_time_of_day(value) else {
        return false;
    };
    let rest = &value[used..];
    let zone = match rest.first() {
        Some(b'Z' | b'z') => 1,
        Some(b'+' | b'-') => match rest[1..]
            .iter()
            .take_while(|b| b.is_ascii_digit() || **b == b':')
            .count()
        {
            0 => return false,
            n => 1 + n,
        },
        _ => 0,
    };
    match quote {
        Some(quote) => rest.get(zone) == Some(&quote),
        None => rest.get(zone).is_none_or(u8::is_ascii_whitespace),
    }
}

/// `date` as `YYYY-MM-DD`, then `separator`.
fn write_date(out: &mut Vec<u8>, date: chrono::NaiveDate, separator: u8) {
    use chrono::Datelike;
    let (y, m, d) = (date.year(), date.month(), date.day());
    // Into a Vec: cannot fail.
    let _ = write!(out, "{y:04}-{m:02}-{d:02}");
    out.push(separator);
}

/// The date of a stamp that opens with a time of day alone (a text line's `08:06:59.265
/// INFO ...`, `[08:06:59]`, Python's `%(asctime)s` given a `datefmt` of `%H:%M:%S`; a JSON
/// object's or a logfmt line's `08:06:59`), from the runtime's
/// `time` (RFC 3339): its date, or the day before or after when the line's time of day is
/// more than 12 hours from `time`'s, so that the line lies nearest the runtime's time (a line
/// written at `23:59:59.990` and stamped at `00:00:00.002` was written the day before; one
/// written in a zone hours from the runtime's crosses midnight the same way). `None` when
/// the line opens with no time of day, or `time` is no date and time.
fn date_for_time_of_day(own: &[u8], time: &[u8]) -> Option<chrono::NaiveDate> {
    let (own, _) = parse_time_of_day(own)?;
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
/// its own, not of an object or array inside it; `found(after)` is called for each, with
/// where its name ends, until it says to look no further. A byte scan: strings are skipped
/// whole, escapes and all, so a bracket or a name inside a value is not counted.
fn each_top_level_key(
    object: &[u8],
    names: &[&[u8]],
    mut found: impl FnMut(usize) -> bool,
) -> bool {
    let (mut depth, mut at, mut expect_key, mut any) = (0usize, 0, false, false);
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
                    any = true;
                    if !found(at + 1) {
                        return true;
                    }
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
    any
}

#[cfg(test)]
mod tests;
