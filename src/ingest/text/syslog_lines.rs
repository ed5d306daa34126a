//! A program's line behind a syslog header ([`crate::ingest::syslog`]): its message read as
//! a message after a stamp is, at the header's time; a message with a stamp of its own
//! (`%(asctime)s ...` behind the header) is read as the line it is, at its own time, which
//! is usually the more precise. A gateway's access line behind one is read as
//! [`TextParser::unstamped`] reads it bare, at the header's time.

use super::{NO_STAMP, TextParser, Verdict, text};
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
    /// A line with a stamp that read as nothing: rsyslog's `STAMP HOST TAG[PID]: MSG`
    /// (`RSYSLOG_FileFormat`, `journalctl -o short-iso`), its message read again.
    #[cold]
    pub(super) fn behind_stamped_header(
        &mut self,
        n: u32,
        span: &Range<u64>,
        line: &[u8],
        ahead: Ahead,
    ) -> Option<Verdict> {
        let (stamp, msg) = syslog::after_stamp_header(line, self.zone)?;
        // The line was read once with its header on: it is this line's time again, not
        // the next line's (see [`super::anonymous`]).
        self.anonymous.this_line = self.anonymous.previous_line;
        Some(self.syslog_message(n, span, stamp, msg, ahead))
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
        if let Some((stamp, msg)) = syslog::rfc5424(line) {
            return Some(self.syslog_message(n, span, stamp, msg, ahead));
        }
        let (bsd, msg) = syslog::bsd(line)?;
        let (from, said) = self.year_from();
        let Some(year) = syslog::year_of(bsd.month, bsd.day, from) else {
            return Some(Verdict::Skipped(format!(
                "syslog's stamp `{}` is a day no year near has",
                text(&line[..7 + bsd.time.len()])
            )));
        };
        let years = &mut self.years;
        years.span = Some(years.span.map_or((year, year), |(a, b)| (a.min(year), b.max(year))));
        years.from = said;
        let stamp = format!("{year:04}-{:02}-{:02}T", bsd.month, bsd.day);
        let stamp = [stamp.as_bytes(), bsd.time].concat();
        // Read again alone, the line would need the year this reading chose: it is kept.
        self.year_inferred = true;
        let verdict = self.syslog_message(n, span, &stamp, msg, ahead);
        self.year_inferred = false;
        Some(verdict)
    }

    /// A syslog header's message, at the header's `stamp`.
    fn syslog_message(
        &mut self,
        n: u32,
        span: &Range<u64>,
        stamp: &[u8],
        msg: &[u8],
        ahead: Ahead,
    ) -> Verdict {
        let msg = msg.trim_ascii();
        if crate::ingest::starts_with_stamped_record(msg) {
            match self.message_line(n, span, msg, ahead) {
                Verdict::Skipped(why) if why == NO_STAMP => {}
                verdict => return verdict,
            }
        }
        let line = [stamp, b"  ", msg].concat();
        let verdict = self.message_line(n, span, &line, ahead);
        match verdict {
            Verdict::Skipped(why) if why == NO_STAMP => Verdict::Ignored,
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

/// The date of a midnight in nanoseconds since the epoch.
fn date_of(midnight: i64) -> Option<NaiveDate> {
    let days = i32::try_from(midnight.div_euclid(NANOS_PER_DAY)).ok()?;
    NaiveDate::from_num_days_from_ce_opt(days.checked_add(719_163)?)
}
