//! Input: turns files, folders and standard input into [`Event`]s, one module per format.
//! Parsers know nothing of rules; they report what they could not read as [`Problem`]s so
//! that nothing is dropped silently (SPEC §9).

pub mod lines;
pub mod source;
pub mod text;

use crate::event::Event;
use chrono::{FixedOffset, NaiveDate};
use serde::Serialize;

/// How many problems are kept per input for the report; all of them are counted.
pub const MAX_PROBLEMS_KEPT: usize = 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Text,
    Jsonl,
    Csv,
    Otlp,
    Records,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Jsonl => "jsonl",
            Format::Csv => "csv",
            Format::Otlp => "otlp",
            Format::Records => "records",
        }
    }
}

/// Settings every parser may need, validated by the command line before parsing starts.
#[derive(Clone, Debug)]
pub struct ParseOptions {
    /// The date for time-only timestamps (`--date`), unless the file has a `# date:` header.
    pub date: Option<NaiveDate>,
    /// The offset of timestamps that carry none (`--tz`); UTC by default.
    pub tz: FixedOffset,
    /// `--csv-map field=Column` entries.
    pub csv_map: Vec<(String, String)>,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            date: None,
            tz: FixedOffset::east_opt(0).expect("zero offset"),
            csv_map: Vec::new(),
        }
    }
}

/// A line that could not be read, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub line: u32,
    pub reason: String,
}

/// Per-input accounting: `lines = events + ignored + skipped` (SPEC §6).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputStats {
    pub lines: u64,
    pub events: u64,
    pub ignored: u64,
    pub skipped: u64,
    /// The first [`MAX_PROBLEMS_KEPT`] skipped lines with their reason.
    pub problems: Vec<Problem>,
}

impl InputStats {
    pub fn skip(&mut self, line: u32, reason: impl Into<String>) {
        self.skipped += 1;
        if self.problems.len() < MAX_PROBLEMS_KEPT {
            self.problems.push(Problem {
                line,
                reason: reason.into(),
            });
        }
    }
}

/// What one parser produced from one input.
#[derive(Debug, Default)]
pub struct Parsed {
    pub events: Vec<Event>,
    pub stats: InputStats,
}
