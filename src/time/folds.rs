//! Which pass of a fold a log's local times are in. Where the clocks go back (Europe/Berlin
//! on 2026-10-25: 03:00 summer time is 02:00 winter time again) an hour of local times
//! happens twice, and a log that writes local time without an offset writes the same times
//! in both passes. Read alone, such a time is the first pass. A log written in order tells
//! the second: once its time goes back within the repeated hour, that line and every later
//! one in the hour are the second pass. Read as the first, they sat an hour early: a
//! refund and its retry's copy an hour apart looked simultaneous, a copy a second after
//! its first an hour before it.
//!
//! Only a line's own time is read here, in the order of the input's lines (a rotated log's
//! files as one); a time beside it (a settlement) is read from the line's
//! ([`super::Zone::offset_not_before`]). Only times in a fold or a gap get past the first
//! match: a zone whose changes the input does not cross pays nothing more.

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
}

/// The fold being read: its day (local), the latest local time read in its first pass,
/// and whether the log has gone back into its second.
#[derive(Clone, Copy, Debug)]
struct Fold {
    day: i64,
    latest: i64,
    second: bool,
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
            Readings::Once(offset) => offset,
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
    /// the fold by more than [`FOLD_OUT_OF_ORDER`] at this line or before it. A fold of
    /// another day starts over (a zone goes back once a day at most).
    fn in_second_pass(&mut self, local: i64) -> bool {
        let day = local.div_euclid(NANOS_PER_DAY);
        match &mut self.fold {
            Some(fold) if fold.day == day => {
                if local < fold.latest.saturating_sub(FOLD_OUT_OF_ORDER) {
                    fold.second = true;
                }
                fold.latest = fold.latest.max(local);
                fold.second
            }
            _ => {
                self.fold = Some(Fold {
                    day,
                    latest: local,
                    second: false,
                });
                false
            }
        }
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
        (self.second_passes, self.skipped) = (0, 0);
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
