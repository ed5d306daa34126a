//! A program's line behind a syslog header ([`crate::ingest::syslog`]): its message read as
//! a message after a stamp is, at the header's time; a message with a stamp of its own
//! (`%(asctime)s ...` behind the header) is read as the line it is, at its own time, which
//! is usually the more precise. A gateway's access line behind one is read as
//! [`TextParser::unstamped`] reads it bare, at the header's time.

use super::{NO_STAMP, TextParser, Verdict, level, text};
use crate::ingest::lines::Ahead;
use crate::ingest::syslog::{self, YearFrom};
use crate::time::NANOS_PER_DAY;
use chrono::NaiveDate;
use std::ops::Range;

/// Where the years of an input's BSD stamps came from, for its note.
#[derive(Default)]
pub(super) struct Years {
    /// The first and last years given.
    span: Option<(i32, i32)>,
    from: &'static str,
}

impl Years {
    /// What the input's report says of the years it gave, if it gave any.
    pub(super) fn note(&self) -> Option<String> {
        let (first, last) = self.span?;
        let years = match first == last {
            true => first.to_string(),
            false => format!("{first} to {last}"),
        };
        Some(format!(
            "syslog's stamps carry no year (`Dec  6 08:07:00`): read in {years}, {}",
            self.from
        ))
    }
}

impl TextParser {
    /// The message after a syslog header's host and tag, `rest` being the line after its
    /// stamp (rsyslog's `RSYSLOG_FileFormat`, `journalctl -o short-iso`): not when the
    /// "host" is a level (`STAMP INFO agent: ...` is a logger's line). The line is read in
    /// the state of the process the header names ([`super::processes`]).
    #[inline]
    pub(super) fn behind_header_after_stamp<'a>(
        &mut self,
        stamp: &[u8],
        rest: &'a [u8],
    ) -> Option<&'a [u8]> {
        if !syslog::is_rfc3339(stamp) {
            return None;
        }
        let header = syslog::after_host_and_tag(rest)?;
        let words = &rest[1..];
        if level::without_level(words).len() != words.len() {
            return None;
        }
        if let Some(process) = header.process {
            self.switch_process(process);
        }
        Some(header.msg)
    }

    /// A message behind a header that opens with a stamp of its own, read as the line it
    /// is; `None` when it has none.
    #[cold]
    pub(super) fn own_stamp_behind_header(
        &mut self,
        n: u32,
        span: &Range<u64>,
        msg: &[u8],
        ahead: Ahead,
    ) -> Option<Verdict> {
        // Only a dated stamp: a time of day alone (`08:06:59.265 INFO ...`) would lose the
        // header's date; it is passed over instead ([`without_time_of_day`]).
        let start = super::level_first::stamp_start(msg).unwrap_or(0);
        if !crate::ingest::starts_with_stamped_record(msg) || !opens_with_date(&msg[start..]) {
            return None;
        }
        match self.message_line(n, span, msg, ahead) {
            Verdict::Skipped(why) if why == NO_STAMP => None,
            verdict => Some(verdict),
        }
    }

    /// A stamped line that read as nothing: a gateway's access line behind a syslog
    /// header (`STAMP gw haproxy[PID]: 127.0.0.1:38892 [...] ...`) read as it is bare, at
    /// the header's time.
    #[cold]
    pub(super) fn access_line_behind_header(&mut self, line: &[u8]) -> Verdict {
        let access = syslog::after_stamp_header(line, self.zone)
            .filter(|(_, msg)| crate::ingest::access_log::stamp(msg, self.zone).is_some());
        match access.and_then(|(_, msg)| crate::ingest::gateway::of_access_line(msg)) {
            Some(kind) => Verdict::Event(self.line_at, kind),
            None => Verdict::Ignored,
        }
    }

    /// An unstamped line that opens with RFC 5424's header or a BSD stamp's.
    #[cold]
    pub(super) fn behind_header(
        &mut self,
        n: u32,
        span: &Range<u64>,
        line: &[u8],
        ahead: Ahead,
    ) -> Option<Verdict> {
        if let Some((stamp, header)) = syslog::rfc5424(line) {
            if let Some(process) = header.process {
                self.switch_process(process);
            }
            return Some(self.syslog_message(n, span, stamp, header.msg, ahead));
        }
        let (bsd, header) = syslog::bsd(line)?;
        if let Some(process) = header.process {
            self.switch_process(process);
        }
        let msg = header.msg;
        let (from, said) = self.year_from();
        let Some(year) = syslog::year_of(bsd.month, bsd.day, from) else {
            return Some(Verdict::Skipped(format!(
                "syslog's stamp `{}` is a day no year near has",
                text(&line[..7 + bsd.time.len()])
            )));
        };
        let years = &mut self.years;
        years.span = Some(
            years
                .span
                .map_or((year, year), |(a, b)| (a.min(year), b.max(year))),
        );
        years.from = said;
        let stamp = format!("{year:04}-{:02}-{:02}T", bsd.month, bsd.day);
        let stamp = [stamp.as_bytes(), bsd.time].concat();
        // Read again alone, the line would need the year this reading chose: it is kept.
        self.year_inferred = true;
        let verdict = self.syslog_message(n, span, &stamp, msg, ahead);
        self.year_inferred = false;
        Some(verdict)
    }

    /// A syslog header's message, at the header's `stamp` unless it has its own.
    fn syslog_message(
        &mut self,
        n: u32,
        span: &Range<u64>,
        stamp: &[u8],
        msg: &[u8],
        ahead: Ahead,
    ) -> Verdict {
        let msg = msg.trim_ascii();
        if let Some(verdict) = self.own_stamp_behind_header(n, span, msg, ahead) {
            return verdict;
        }
        let msg = without_time_of_day(msg);
        let line = [stamp, b"  ", msg].concat();
        match self.message_line(n, span, &line, ahead) {
            Verdict::Ignored if crate::ingest::access_log::stamp(msg, self.zone).is_some() => {
                match crate::ingest::gateway::of_access_line(msg) {
                    Some(kind) => Verdict::Event(self.line_at, kind),
                    None => Verdict::Ignored,
                }
            }
            verdict => verdict,
        }
    }

    /// Where a BSD stamp's year comes from: the date given (`--date`, `# date:`), else the
    /// day the file was last written, else today.
    fn year_from(&self) -> (YearFrom, &'static str) {
        if self.dated
            && let Some(date) = date_of(self.date_base)
        {
            return (
                YearFrom::Near(date),
                "the year nearest the date given (`--date` or `# date:`)",
            );
        }
        if let Some(written) = self.file_written {
            return (
                YearFrom::NotAfter(written),
                "the latest year not after the file's modification time (`--date` names another)",
            );
        }
        let today = chrono::Utc::now().date_naive();
        (
            YearFrom::NotAfter(today),
            "the latest year not after today, no file's time being known (`--date` names another)",
        )
    }
}

/// `rest` (the line after its stamp) from the blank before `msg`, its last bytes: the
/// message read as the message after a stamp.
pub(super) fn from_blank_before<'a>(rest: &'a [u8], msg: &[u8]) -> &'a [u8] {
    match msg.len() {
        0 => &rest[rest.len()..],
        len => &rest[rest.len() - len - 1..],
    }
}

/// The date of a midnight in nanoseconds since the epoch.
fn date_of(midnight: i64) -> Option<NaiveDate> {
    let days = i32::try_from(midnight.div_euclid(NANOS_PER_DAY)).ok()?;
    NaiveDate::from_num_days_from_ce_opt(days.checked_add(719_163)?)
}

/// Whether a stamp opens with its date (`2026-12-06...`, `[2026-12-06 ...`).
fn opens_with_date(stamp: &[u8]) -> bool {
    let stamp = stamp.strip_prefix(b"[").unwrap_or(stamp);
    stamp.len() >= 10 && stamp[4] == b'-' && stamp[..4].iter().all(u8::is_ascii_digit)
}

/// A message behind a syslog header without the time of day it opens with (`08:06:59.265
/// INFO payments ...`, a logger's `%(asctime)s` without its date): the header's stamp,
/// which has the date, places the line.
pub(super) fn without_time_of_day(msg: &[u8]) -> &[u8] {
    let bracketed = msg.first() == Some(&b'[');
    let Some((_, used)) = crate::time::parse_time_of_day(&msg[usize::from(bracketed)..]) else {
        return msg;
    };
    let mut end = usize::from(bracketed) + used;
    if bracketed {
        if msg.get(end) != Some(&b']') {
            return msg;
        }
        end += 1;
    }
    match msg.get(end) {
        Some(b) if b.is_ascii_whitespace() => msg[end..].trim_ascii_start(),
        _ => msg,
    }
}
