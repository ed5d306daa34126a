//! Which pass of a fold a log's local times are in. Where the clocks go back (Europe/Berlin
//! on 2026-10-25: 03:00 summer time is 02:00 winter time again) an hour of local times
//! happens twice, and a log that writes local time without an offset writes the same times
//! in both passes. Read alone, such a time is the first pass. A log written in order tells
//! the second: once its time goes back within the repeated hour, that line and every later
//! one in the hour are the second pass. Read as the first, they sat an hour early: a
//! refund and its retry's copy an hour apart looked simultaneous, a copy a second after
//! its first an hour before it.
//!
//! A log written in order goes back once in a fold, within its hour, and from its first
//! pass: a time going back further (before the fold, or into it from a time after it) or a
//! second time is no second pass but another log's lines after this one's (`cat a.log
//! b.log`, two processes' logs joined end to end): the reading starts over there, its times
//! in the fold the first pass until they go back in their turn. Read as the second pass,
//! the joined log's refunds sat an hour late, matched to nothing. A log joined after one
//! that ended in the fold's first pass and going back only within the fold is written as
//! the second pass would be: nothing tells them apart, and it is read as the second pass.
//!
//! Only a line's own time is read here, in the order of the input's lines (a rotated log's
//! files as one); a time beside it (a settlement) is read from the line's
//! ([`super::Zone::offset_not_before`]). Only times in a fold or a gap get past the first
//! match, and after a fold one comparison: a zone whose changes the input does not cross
//! pays nothing more.

use super::zone::Readings;
use super::{NANOS_PER_DAY, NANOS_PER_SEC, Zone};

/// How far a log's time may go back within the repeated hour and still be lines written a
/// little out of order, not the second pass: threads and processes sharing one log put
/// lines seconds out of order, block-buffered ones minutes; a log that goes back further
/// was written an hour later.
pub const FOLD_OUT_OF_ORDER: i64 = 10 * 60 * NANOS_PER_SEC;

/// One input's reading of the folds and gaps its local times fall in.
#[derive(Clone, Copy, Debug, Default)]
pub struct Folds {
    fold: Option<Fold>,
    /// Times read as a second pass: how many, and the first (local).
    second_passes: u64,
    first_second_pass: i64,
    /// Times the clocks skipped (spring forward): how many, and the first (local).
    skipped: u64,
    first_skipped: i64,
    /// Times going back further than one log in order does around a fold, where the
    /// reading started over: how many, and the first (local).
    restarts: u64,
    first_restart: i64,
}

/// The fold being read: its day (local); the latest local time read since the reading of
/// the fold began (any line's), or since its second pass began; whether the log has gone
/// back into its second pass, and whether it has gone past the fold (a later time than
/// any in it).
#[derive(Clone, Copy, Debug)]
struct Fold {
    day: i64,
    latest: i64,
    second: bool,
    past: bool,
}

impl Fold {
    fn starting(day: i64, local: i64) -> Self {
        Fold {
            day,
            latest: local,
            second: false,
            past: false,
        }
    }

    /// `local` goes back further than lines out of order do.
    fn goes_back(&self, local: i64) -> bool {
        local < self.latest.saturating_sub(FOLD_OUT_OF_ORDER)
    }
}

impl Folds {
    /// The offset, in seconds east of UTC, of the local time of the input's next line.
    #[inline]
    pub fn offset_of_line(&mut self, zone: Zone, local: i64) -> i64 {
        match zone {
            Zone::Fixed(secs) => secs,
            Zone::Named(_) => self.named_offset(zone.readings_of_local(local), local),
        }
    }

    fn named_offset(&mut self, readings: Readings, local: i64) -> i64 {
        match readings {
            Readings::Once(offset) => {
                if let Some(fold) = &mut self.fold {
                    if fold.goes_back(local) {
                        // Back before the fold (or a day before): another log's lines.
                        self.fold = None;
                        self.restarted(local);
                    } else if local > fold.latest {
                        // Later than any time in the fold: past it.
                        (fold.latest, fold.past) = (local, true);
                    }
                }
                offset
            }
            Readings::Twice { first, second } => {
                if !self.in_second_pass(local) {
                    return first;
                }
                if self.second_passes == 0 {
                    self.first_second_pass = local;
                }
                self.second_passes += 1;
                second
            }
            Readings::Skipped { before } => {
                if self.skipped == 0 {
                    self.first_skipped = local;
                }
                self.skipped += 1;
                before
            }
        }
    }

    /// Whether `local`, a time in a fold, is in its second pass: the log went back within
    /// the fold by more than [`FOLD_OUT_OF_ORDER`] at this line or before it, from its
    /// first pass. Going back again, or from past the fold, it starts over: another log's
    /// lines, from the first pass. A fold of another day starts over (a zone goes back once
    /// a day at most).
    fn in_second_pass(&mut self, local: i64) -> bool {
        let day = local.div_euclid(NANOS_PER_DAY);
        match &mut self.fold {
            Some(fold) if fold.day == day => {
                if !fold.goes_back(local) {
                    fold.latest = fold.latest.max(local);
                } else if !fold.second && !fold.past {
                    // The second pass, whose times are compared from here.
                    (fold.second, fold.latest) = (true, local);
                } else {
                    *fold = Fold::starting(day, local);
                    self.restarted(local);
                }
                self.fold.is_some_and(|f| f.second)
            }
            _ => {
                self.fold = Some(Fold::starting(day, local));
                false
            }
        }
    }

    fn restarted(&mut self, local: i64) {
        if self.restarts == 0 {
            self.first_restart = local;
        }
        self.restarts += 1;
    }

    /// How many times have been read as a second pass (since the notes were last taken):
    /// a line that adds one reads otherwise out of context, so it is never read again
    /// alone from its place in the file.
    pub fn second_passes(&self) -> u64 {
        self.second_passes
    }

    /// What the input's report says of the folds and gaps its times fell in since it was
    /// last asked (a rotated log's file by file); the pass being read is kept.
    pub fn take_notes(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.second_passes > 0 {
            notes.push(format!(
                "{} {} in an hour the clocks went back over read as its second pass, \
                 the log's time having gone back (the first: {})",
                self.second_passes,
                times(self.second_passes),
                show_local(self.first_second_pass)
            ));
        }
        if self.skipped > 0 {
            notes.push(format!(
                "{} {} the clocks skipped (the first: {}) read at the offset before the \
                 change: a log that writes them does not keep the zone's summer time; \
                 check --tz / --input-tz",
                self.skipped,
                times(self.skipped),
                show_local(self.first_skipped)
            ));
        }
        if self.restarts > 0 {
            notes.push(format!(
                "the log's time went back {} {} further than one log in order goes back \
                 around a change of the clocks (the first: to {}): read as logs joined end \
                 to end, the reading of the repeated hour starting over there",
                self.restarts,
                if self.restarts == 1 { "time" } else { "times" },
                show_local(self.first_restart)
            ));
        }
        (self.second_passes, self.skipped, self.restarts) = (0, 0, 0);
        notes
    }
}

fn times(n: u64) -> &'static str {
    if n == 1 { "local time" } else { "local times" }
}

/// `2026-10-25 02:00:03`: a local time as the log wrote it (nanoseconds read as UTC).
fn show_local(local: i64) -> String {
    let utc = super::Timestamp(local).display();
    utc.get(..19).unwrap_or(&utc).replacen('T', " ", 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::days_from_civil;

    /// Local nanoseconds of a date and time.
    fn local(date: (i64, i64, i64), h: i64, m: i64, s: i64) -> i64 {
        let day = days_from_civil(date.0, date.1, date.2).unwrap();
        day * NANOS_PER_DAY + (h * 3600 + m * 60 + s) * NANOS_PER_SEC
    }

    /// Local nanoseconds of 2026-10-25 (Berlin's autumn change) at `h:m:s`.
    fn oct25(h: i64, m: i64, s: i64) -> i64 {
        local((2026, 10, 25), h, m, s)
    }

    fn offsets(zone: &str, locals: &[i64]) -> (Vec<i64>, Folds) {
        let zone = Zone::parse(zone).unwrap();
        let mut folds = Folds::default();
        let got = locals
            .iter()
            .map(|&l| folds.offset_of_line(zone, l) / 3600)
            .collect();
        (got, folds)
    }

    #[test]
    fn a_log_that_goes_back_in_the_fold_is_in_its_second_pass_from_there() {
        let lines = [
            oct25(1, 59, 0),
            oct25(2, 30, 0),
            oct25(2, 58, 0),
            oct25(2, 59, 59),
            oct25(2, 0, 1),
            oct25(2, 45, 0),
            oct25(3, 0, 0),
        ];
        let (got, mut folds) = offsets("Europe/Berlin", &lines);
        assert_eq!(got, [2, 2, 2, 2, 1, 1, 1]);
        assert_eq!(
            folds.take_notes(),
            [
                "2 local times in an hour the clocks went back over read as its second pass, \
              the log's time having gone back (the first: 2026-10-25 02:00:01)"
            ]
        );
    }

    /// Lines a few minutes out of order are no second pass; times in the fold that come
    /// once are the first; a fixed offset has no fold.
    #[test]
    fn times_in_the_fold_once_or_a_little_out_of_order_are_the_first_pass() {
        let lines = [
            oct25(2, 10, 0),
            oct25(2, 20, 0),
            oct25(2, 11, 0),
            oct25(2, 40, 0),
        ];
        let (got, mut folds) = offsets("Europe/Berlin", &lines);
        assert_eq!(got, [2, 2, 2, 2]);
        assert!(folds.take_notes().is_empty());
        let (got, _) = offsets("+02:00", &[oct25(2, 50, 0), oct25(2, 0, 0)]);
        assert_eq!(got, [2, 2]);
    }

    /// Two logs joined end to end (`cat a.log b.log`), each through the fold in order: the
    /// second goes back before the fold, or a second time within it, or into it from past
    /// it; each is read again from the fold's first pass, and said.
    #[test]
    fn a_log_joined_after_one_that_went_through_the_fold_starts_over() {
        let through = [oct25(2, 50, 0), oct25(2, 5, 0), oct25(2, 40, 0)];
        // b from before the fold: its times in the fold are the first pass again.
        let before = [
            oct25(1, 45, 0),
            oct25(2, 10, 0),
            oct25(2, 55, 0),
            oct25(2, 15, 0),
        ];
        let (got, mut folds) = offsets("Europe/Berlin", &[&through[..], &before].concat());
        assert_eq!(got, [2, 1, 1, 2, 2, 2, 1]);
        let notes = folds.take_notes();
        assert!(
            notes[1].contains("(the first: to 2026-10-25 01:45:00)"),
            "{notes:?}"
        );
        // b going back a second time within the fold: its first pass.
        let again = [oct25(2, 20, 0), oct25(2, 30, 0)];
        let (got, _) = offsets("Europe/Berlin", &[&through[..], &again].concat());
        assert_eq!(got, [2, 1, 1, 2, 2]);
        // a went past the fold; b goes back into it: its first pass.
        let past = [oct25(2, 50, 0), oct25(3, 30, 0), oct25(2, 20, 0)];
        let (got, _) = offsets("Europe/Berlin", &past);
        assert_eq!(got, [2, 1, 2]);
    }

    /// What one log in order writes stays read as before: its second pass after going back
    /// once, lines a few minutes out of order about the fold's end, times before the fold
    /// a little out of order. And the limit: a log joined after one that ended in the
    /// fold's first pass, going back only within the fold, is written as the second pass
    /// would be, and read so.
    #[test]
    fn one_log_in_order_never_starts_over() {
        let lines = [
            oct25(1, 58, 0),
            oct25(2, 0, 30),
            oct25(1, 59, 0),
            oct25(2, 59, 0),
            oct25(2, 1, 0),
            oct25(2, 59, 50),
            oct25(3, 0, 10),
            oct25(2, 59, 55),
            oct25(3, 5, 0),
        ];
        let (got, mut folds) = offsets("Europe/Berlin", &lines);
        assert_eq!(got, [2, 2, 2, 2, 1, 1, 1, 1, 1]);
        assert_eq!(folds.take_notes().len(), 1, "the second passes' note only");
        let (got, _) = offsets("Europe/Berlin", &[oct25(2, 40, 0), oct25(2, 5, 0)]);
        assert_eq!(got, [2, 1]);
    }

    /// Each fold is read on its own: going back in 2026's says nothing of 2027's.
    #[test]
    fn the_next_years_fold_starts_in_its_first_pass() {
        let next = |h, m| local((2027, 10, 31), h, m, 0);
        let lines = [oct25(2, 50, 0), oct25(2, 5, 0), next(2, 5), next(2, 6)];
        let (got, _) = offsets("Europe/Berlin", &lines);
        assert_eq!(got, [2, 1, 2, 2]);
    }

    /// A time the clocks skipped is read at the offset before the change, and counted.
    #[test]
    fn times_the_clocks_skipped_are_read_before_the_change_and_noted() {
        let spring = |h, m| local((2026, 3, 29), h, m, 0);
        let (got, mut folds) = offsets(
            "Europe/Berlin",
            &[spring(1, 59), spring(2, 30), spring(3, 1)],
        );
        assert_eq!(got, [1, 1, 2]);
        let notes = folds.take_notes();
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0]
                .starts_with("1 local time the clocks skipped (the first: 2026-03-29 02:30:00)"),
            "{notes:?}"
        );
    }
}
