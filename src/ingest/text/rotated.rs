//! The text parser's side of rotated logs ([`crate::ingest::rotated`]): one parser goes on
//! from one file to the next.

use super::TextParser;
use crate::ingest::lines::for_each_line_ahead;
use crate::ingest::{InputStats, ParseOptions, Parsed};
use crate::time::{DateCache, Folds, NANOS_PER_SEC, Stamp, Timestamp, Zone};
use std::io::{self, Read};

/// The files of one rotated log ([`crate::ingest::rotated`]), oldest first, read as the one log
/// they were: the parser goes on from one file to the next, so the requests that
/// `agent.log` starts with stay with the tool call `agent.log.1` ends with. No place in a
/// file is kept for reading again (the events of a place would name the last file).
pub struct Rotated {
    p: TextParser,
    /// A file has been read: the next one continues it, if it starts where it ended.
    read_one: bool,
    /// The next file's first line was read as the end of the last file's last line
    /// (`copytruncate` cut a line in two): it is counted, not read again.
    pub first_line_read: bool,
}

impl Rotated {
    pub fn new(opts: &ParseOptions) -> Self {
        Rotated {
            p: TextParser::new(0, opts, false),
            read_one: false,
            first_line_read: false,
        }
    }

    /// Reads the next file, `input`, whose first bytes are `head`, returning its own
    /// accounts. A file that starts more than [`ROTATED_OVERLAP`] before the last one ended
    /// is no continuation (another process's log under a rotated name): the calls open
    /// then are not carried into it.
    pub fn read(
        &mut self,
        head: &[u8],
        reader: &mut dyn Read,
        input: u32,
        opts: &ParseOptions,
    ) -> io::Result<InputStats> {
        let p = &mut self.p;
        if self.read_one && !starts_after(head, p.line_at, opts.tz, p.dates.folds) {
            p.process.forget_calls();
            p.processes.forget_calls();
            p.last_attempt.clear();
        }
        self.read_one = true;
        p.input = input;
        p.zone = opts.tz;
        p.processes.by_line = opts.line_processes.clone();
        let mut notes = crate::ingest::lines::LineNotes::default();
        let first_line_read = std::mem::take(&mut self.first_line_read);
        let lines = for_each_line_ahead(reader, &mut notes, |n, span, line, ahead| {
            if n == 1 && first_line_read {
                p.out.stats.ignored += 1;
                return 0;
            }
            p.entry_process(n);
            p.line(n, span, line, ahead)
        });
        // A held call is settled here, so that its lines count for this file; the filter
        // still holds its events for the next file's lines of the call.
        if p.idle.is_active() {
            p.replay_idle();
        }
        let mut stats = std::mem::take(&mut p.out.stats);
        stats.lines = lines? as u64;
        notes.add_to(&mut stats);
        stats.notes.extend(p.dates.folds.take_notes());
        Ok(stats)
    }

    /// Every event read, with no file's accounts (the caller has them from [`Self::read`]).
    pub fn finish(mut self) -> Parsed {
        self.p.in_every_process(TextParser::settle_pool);
        self.p.out.finish()
    }
}

/// How far before the last file's last line the next file of a rotated log may start.
/// Threads writing one log can put lines a little out of order; a file that starts
/// earlier than this overlaps the last one and is another log.
pub const ROTATED_OVERLAP: i64 = 5 * NANOS_PER_SEC;

/// Whether the first full timestamp in `head` is no earlier than `ended` less
/// [`ROTATED_OVERLAP`]. A head with none (time-only stamps, no lines) is taken as going on.
/// A local time in a fold is read in the pass the last file left (`folds`): a file that
/// starts in the second pass goes on from one that ended in the first.
fn starts_after(head: &[u8], ended: Timestamp, zone: Zone, folds: Folds) -> bool {
    let mut dates = DateCache::default();
    dates.folds = folds;
    let first = head.split(|&b| b == b'\n').find_map(|line| {
        let line = line.trim_ascii();
        let line = line.strip_prefix(b"[").unwrap_or(line);
        match dates.parse_stamp(line, zone) {
            Some((Stamp::Instant(at), _)) => Some(Some(at)),
            Some((Stamp::TimeOfDay(_), _)) => Some(None),
            None => None,
        }
    });
    match first.flatten() {
        Some(at) => at.0 >= ended.0.saturating_sub(ROTATED_OVERLAP),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rotated log's next file continues the last unless it starts more than
    /// `ROTATED_OVERLAP` before the last one's last line; a head with no full timestamp goes on.
    #[test]
    fn a_next_file_continues_unless_it_starts_well_before_the_last_ended() {
        let Some((Stamp::Instant(ended), _)) =
            crate::time::parse_stamp(b"2026-11-03T14:02:21.418Z", Zone::default())
        else {
            panic!("a stamp")
        };
        let head =
            |stamp: &str| format!("\n  traceback line\n{stamp}  POST https://p/v1/refunds\n");
        let utc = Zone::default();
        let after =
            |stamp: &str| starts_after(head(stamp).as_bytes(), ended, utc, Folds::default());
        assert!(after("2026-11-03T14:02:21.930Z"));
        assert!(after("2026-11-03T14:02:17.000Z"));
        assert!(!after("2026-11-03T14:02:16.000Z"));
        assert!(!after("[2026-11-03T13:52:21.930Z]"));
        assert!(after("14:02:01.000"));
        assert!(starts_after(b"", ended, utc, Folds::default()));
    }
}
