//! The processes that wrote an export's entries (journald's `_PID` with its identifier, unit,
//! host and boot: [`super::entry`]). Several processes logging into one journal (two agent
//! workers, an agent and its service) are read each in a state of its own by the text
//! reader ([`crate::ingest::text`]'s `processes`), told here which process each line is
//! of; and a traceback one of them prints a line an entry goes on below its own record,
//! whatever the others write in between.

use crate::ingest::container::Continuation;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// The process of each line of an unwrapped export that names one, numbered in the order
/// the processes were met: given as the export is unwrapped, taken as the text reader
/// reads the lines (after they were given: the reader reads what the unwrapping gave).
#[derive(Clone, Default)]
pub struct LineProcesses(Arc<Mutex<VecDeque<(u32, u32)>>>);

impl std::fmt::Debug for LineProcesses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LineProcesses")
    }
}

impl LineProcesses {
    fn give(&self, line: u32, process: u32) {
        let mut lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        lines.push_back((line, process));
    }

    /// The process of line `n`, if it names one. Lines are asked in order: those before
    /// `n` are forgotten.
    pub fn of_line(&self, n: u32) -> Option<u32> {
        let mut lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(&(line, process)) = lines.front() {
            if line > n {
                return None;
            }
            lines.pop_front();
            if line == n {
                return Some(process);
            }
        }
        None
    }
}

/// The processes met so far in an export, and where each one's traceback stands.
pub(super) struct Writers {
    numbers: FxHashMap<Vec<u8>, u32>,
    /// By process number.
    continuations: Vec<Continuation>,
    /// Of the entries that name no process.
    unnamed: Continuation,
    lines: LineProcesses,
}

impl Writers {
    pub(super) fn new(lines: LineProcesses) -> Self {
        Writers {
            numbers: FxHashMap::default(),
            continuations: Vec::new(),
            unnamed: Continuation::default(),
            lines,
        }
    }

    /// The entry given on `line` was written by `writer` (`None`: it names none): its
    /// process is told for the line, and where its traceback stands returned.
    pub(super) fn of_line(&mut self, line: u32, writer: Option<Vec<u8>>) -> &mut Continuation {
        let Some(writer) = writer else {
            return &mut self.unnamed;
        };
        let next = self.continuations.len() as u32;
        let number = *self.numbers.entry(writer).or_insert(next);
        if number == next {
            self.continuations.push(Continuation::default());
        }
        self.lines.give(line, number);
        &mut self.continuations[number as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines are told their process as they are asked, in order; a line that names none,
    /// or one asked past, has none.
    #[test]
    fn each_line_is_told_its_process_in_order() {
        let lines = LineProcesses::default();
        let mut writers = Writers::new(lines.clone());
        writers.of_line(1, Some(b"812".to_vec()));
        writers.of_line(2, None);
        writers.of_line(3, Some(b"813".to_vec()));
        writers.of_line(5, Some(b"812".to_vec()));
        assert_eq!(lines.of_line(1), Some(0));
        assert_eq!(lines.of_line(2), None);
        assert_eq!(lines.of_line(4), None, "line 3 was passed by");
        assert_eq!(lines.of_line(5), Some(0));
        assert_eq!(lines.of_line(6), None);
    }

    /// One process's traceback, a line an entry, is not ended by another's line between.
    #[test]
    fn a_processes_traceback_goes_on_past_anothers_line() {
        let mut writers = Writers::new(LineProcesses::default());
        let a = || Some(b"812".to_vec());
        let b = || Some(b"813".to_vec());
        assert!(
            writers
                .of_line(1, a())
                .goes_on(b"Traceback (most recent call last):")
        );
        assert!(
            !writers
                .of_line(2, b())
                .goes_on(b"INFO payments refund created")
        );
        assert!(
            writers
                .of_line(3, a())
                .goes_on(b"  File \"agent.py\", line 3, in <module>")
        );
    }
}
