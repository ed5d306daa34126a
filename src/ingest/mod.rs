//! Input: turns files, folders and standard input into [`Event`]s, one module per format.
//! Parsers know nothing of rules; they report what they could not read as [`Problem`]s so
//! that nothing is dropped silently (SPEC §9).

pub(crate) mod access_log;
pub mod ansi;
pub(crate) mod banner;
mod compressed;
pub mod container;
pub mod csv;
mod cut_values;
pub mod export;
pub(crate) mod gateway;
mod json_errors;
pub mod jsonl;
pub mod jul_xml;
pub mod lines;
pub mod logfmt;
pub mod long_lines;
pub mod node_console;
pub mod not_utf8;
pub mod otlp;
pub mod pino_pretty;
#[cfg(test)]
mod prop_tests;
pub(crate) mod python_repr;
pub(crate) use json_errors::{json_why, unreadable_json};
pub mod records;
pub mod replay;
pub mod rotated;
pub mod selfcheck;
pub mod source;
pub mod stamp;
pub(crate) mod syslog;
pub mod text;
pub mod utf16;

use crate::blocks::Blocks;
use crate::event::{Attrs, Event, Loc};
use crate::relevance::{Deferred, DeferredLines, Dropped, Filter, HeldStart, Relevance};
use crate::time::Zone;
use chrono::NaiveDate;
use serde::Serialize;
use serde_json::Value;

/// Events per block of [`Parsed::sealed`] (about 13 MiB).
pub const EVENT_BLOCK: usize = 1 << 16;

/// How many problems are kept per input for the report; all of them are counted.
pub const MAX_PROBLEMS_KEPT: usize = 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Text,
    Jsonl,
    Logfmt,
    NodeConsole,
    PinoPretty,
    JulXml,
    Csv,
    Otlp,
    Records,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Jsonl => "jsonl",
            Format::Logfmt => "logfmt",
            Format::NodeConsole => "node-console",
            Format::PinoPretty => "pino-pretty",
            Format::JulXml => "jul-xml",
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
    /// The zone of timestamps that carry no offset (`--tz`); UTC by default.
    pub tz: Zone,
    /// `--input-tz NAME=ZONE`: the zone of one input's offset-less timestamps, where it
    /// differs from the others' (a service logging local time beside an agent in UTC).
    pub input_tz: Vec<(String, Zone)>,
    /// `--csv-map field=Column` entries.
    pub csv_map: Vec<(String, String)>,
    /// Drop the events of calls no rule needs as they are read ([`crate::relevance`]);
    /// `None` keeps every event (`timeline`, `--keep-idle-calls`).
    pub relevance: Option<Relevance>,
    /// Keep the fields of JSON Lines events that the audit does not read, as attributes:
    /// only `timeline` shows them, and kept for every line of a month they outgrew the
    /// audit's own memory (two extra fields a line: 500 MB at 100 MB of input).
    pub keep_attrs: bool,
    /// The day (UTC) the input's file was last written, its modification time: the year
    /// of syslog's BSD stamps, which write none, where no date is given ([`syslog`]).
    pub file_written: Option<NaiveDate>,
    /// The process of each line of a journald export, set as it is unwrapped: the text
    /// reader reads each process's lines in a state of its own ([`export::LineProcesses`]).
    pub line_processes: Option<export::LineProcesses>,
}

impl ParseOptions {
    /// Whether an `--input-tz` name names the input shown as `display`, or the rotated log
    /// it is a file of (`agent.log` names `agent.log.1` too: [`rotated`]).
    pub fn names(name: &str, display: &str) -> bool {
        let is = |display: &str| {
            display == name
                || display
                    .strip_suffix(name)
                    .is_some_and(|head| head.ends_with('/') || head.ends_with('\\'))
        };
        is(display) || is(rotated::order(display).0)
    }

    /// The options for the input shown as `display`: its own zone where `--input-tz` names
    /// it (the path as given, or its last components: `service.log`, `logs/service.log`).
    pub fn for_input(&self, display: &str) -> std::borrow::Cow<'_, ParseOptions> {
        match (self.input_tz.iter().rev()).find(|(name, _)| Self::names(name, display)) {
            Some(&(_, tz)) => std::borrow::Cow::Owned(ParseOptions { tz, ..self.clone() }),
            None => std::borrow::Cow::Borrowed(self),
        }
    }

    /// [`Self::for_input`], with the day the input's file was last written.
    pub fn for_file(&self, input: &source::Input) -> std::borrow::Cow<'_, ParseOptions> {
        let opts = self.for_input(&input.display);
        let source::Origin::File(path) = &input.origin else {
            return opts;
        };
        let written = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        match written {
            Some(t) => std::borrow::Cow::Owned(ParseOptions {
                file_written: Some(chrono::DateTime::<chrono::Utc>::from(t).date_naive()),
                ..opts.into_owned()
            }),
            None => opts,
        }
    }
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            date: None,
            tz: Zone::default(),
            input_tz: Vec::new(),
            csv_map: Vec::new(),
            relevance: None,
            keep_attrs: true,
            file_written: None,
            line_processes: None,
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
    /// Records read, but not all of them (a value the program did not print): how many, and
    /// the first [`MAX_PROBLEMS_KEPT`] with why.
    pub warned: u64,
    pub warnings: Vec<Problem>,
    /// How the input's bytes were read where that was not plain UTF-8 (UTF-16, bytes that
    /// are no UTF-8), for its report's note.
    pub notes: Vec<String>,
    /// The input held nothing but blanks and NUL bytes, if anything: nothing to audit.
    pub blank: bool,
    /// Why the input's stream failed after these lines (a `.gz` cut short): the lines
    /// before were read, the rest is missing.
    pub failed: Option<String>,
    /// The number of the input's last physical line (for OTLP too, whose `lines` counts
    /// spans), and whether no newline ended it: where a stream that `failed` stopped.
    pub last_line: u32,
    pub last_line_cut: bool,
}

impl InputStats {
    /// The input's stream failed (`why`), if it did: its last line, if the failure cut it
    /// and it was skipped as cut short, is said to be cut by the failure, not by the end of
    /// a file still being written.
    pub fn failed(&mut self, why: Option<String>) {
        if why.is_some() {
            self.retell_cut(lines::CUT_BY_FAILURE);
        }
        self.failed = why;
    }

    /// The input's last line, if it was cut short and skipped as [`lines::CUT_SHORT`], is
    /// said to be cut for `why` instead: what cut it is known.
    pub fn retell_cut(&mut self, why: &str) {
        if self.last_line_cut {
            let last = self.last_line;
            let cut =
                (self.problems.iter_mut()).find(|p| p.line == last && p.reason == lines::CUT_SHORT);
            if let Some(problem) = cut {
                problem.reason = why.into();
            }
        }
    }

    /// A record at `line` read, but not all of it (see [`Self::warnings`]).
    pub fn warn(&mut self, line: u32, reason: impl Into<String>) {
        self.warned += 1;
        if self.warnings.len() < MAX_PROBLEMS_KEPT {
            self.warnings.push(Problem {
                line,
                reason: reason.into(),
            });
        }
    }

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
    /// The events, in the order read: those of `sealed` first, then these.
    pub events: Vec<Event>,
    /// Full blocks of [`EVENT_BLOCK`] events, when idle calls are dropped (a scan): a
    /// month's events in blocks of fixed size are never copied to grow, and correlation
    /// frees each block once it has been read.
    pub sealed: Vec<Vec<Event>>,
    pub stats: InputStats,
    /// OTLP spans, turned into events only once every input is read ([`otlp::link`]).
    pub spans: Vec<otlp::Span>,
    /// Attributes of the events that have any, by where they were read.
    pub attrs: Vec<(Loc, Attrs)>,
    /// Set when idle calls are dropped as they are read; its findings move to `dropped`
    /// and `deferred` when the input ends.
    filter: Option<Box<Filter>>,
    pub dropped: Dropped,
    /// Events of idle calls that matter only if their run (the `String`) was resumed.
    pub deferred: Vec<Deferred>,
    /// The same, as places in the input to read again.
    pub deferred_lines: Blocks<DeferredLines>,
    /// Runs' `started` events, which matter only for runs that crashed.
    pub started: Blocks<HeldStart>,
}

impl Parsed {
    pub fn new(opts: &ParseOptions) -> Self {
        Parsed {
            filter: opts.relevance.clone().map(|r| Box::new(Filter::new(r))),
            ..Parsed::default()
        }
    }

    /// Adds an event, unless the filter holds or drops it.
    pub fn push(&mut self, ev: Event) {
        self.push_placed(ev, None);
    }

    /// [`Parsed::push`], with where the event's line lies in a file that can be read again,
    /// when it reads the same there out of context ([`Filter::push_placed`]).
    pub fn push_placed(&mut self, ev: Event, place: Option<std::ops::Range<u64>>) {
        match &mut self.filter {
            Some(f) => {
                f.push_placed(ev, place, &mut self.events);
                // A few events short of full: a held call's release adds several at once.
                if self.events.len() + 64 >= EVENT_BLOCK {
                    let full = std::mem::replace(&mut self.events, Vec::with_capacity(EVENT_BLOCK));
                    self.sealed.push(full);
                }
            }
            None => self.events.push(ev),
        }
    }

    /// Every event, in the order read.
    pub fn all_events(&self) -> impl Iterator<Item = &Event> {
        self.sealed.iter().flatten().chain(&self.events)
    }

    /// The input has ended: open calls are released, the filter's accounts taken.
    fn finish(mut self) -> Self {
        if let Some(mut f) = self.filter.take() {
            f.finish(&mut self.events);
            self.dropped = f.dropped;
            self.deferred = f.deferred;
            self.deferred_lines = f.deferred_lines;
            self.started = f.started;
        }
        self
    }
}

/// Parses one input of a known format.
pub fn parse(
    format: Format,
    reader: &mut dyn std::io::Read,
    input: u32,
    opts: &ParseOptions,
) -> std::io::Result<Parsed> {
    parse_input(format, reader, input, opts, false)
}

/// [`parse`], told whether the input is a plain file that can be read again at an offset
/// (the text parser then keeps a place in the file instead of some events).
pub fn parse_input(
    format: Format,
    reader: &mut dyn std::io::Read,
    input: u32,
    opts: &ParseOptions,
    rereadable: bool,
) -> std::io::Result<Parsed> {
    let parsed = match format {
        Format::Text => text::parse_input(reader, input, opts, rereadable),
        Format::Jsonl => jsonl::parse_input(reader, input, opts, rereadable),
        Format::Logfmt => logfmt::parse(reader, input, opts),
        Format::NodeConsole => node_console::parse(reader, input, opts),
        Format::PinoPretty => pino_pretty::parse(reader, input, opts),
        Format::JulXml => jul_xml::parse(reader, input, opts),
        Format::Csv => csv::parse(reader, input, opts),
        Format::Records => records::parse(reader, input, opts),
        Format::Otlp => otlp::parse(reader, input, opts),
    };
    parsed.map(Parsed::finish)
}

/// The text after Node's `<ref *1> ` (util.inspect's mark on an object that refers to
/// itself, an axios error's first line), or `line` as it is when it has none.
pub(crate) fn without_ref_mark(line: &[u8]) -> &[u8] {
    let Some(marked) = line.strip_prefix(b"<ref *") else {
        return line;
    };
    match memchr::memmem::find(marked, b"> ") {
        Some(end) if marked[..end].iter().all(u8::is_ascii_digit) => &marked[end + 2..],
        _ => line,
    }
}

/// `> agent@1.0.0 start`, `> node agent.mjs | pino-pretty`: the lines `npm run` prints
/// before the script's output, when the log is that output.
pub(crate) fn is_npm_banner(line: &[u8]) -> bool {
    line.starts_with(b"> ") && !line[2..].starts_with(b" ")
}

/// The JSON object the words end with (`JSON.stringify`'s after a message: `{"...` or
/// `{}`), at their start or after a blank, and where it starts: winston's printf layouts,
/// pino-pretty's `singleLine`.
pub(crate) fn json_object_at_end(words: &str) -> Option<(usize, serde_json::Map<String, Value>)> {
    if !words.ends_with('}') {
        return None;
    }
    // A few tries: a message has few objects before its last, and a hostile line many.
    let after_blanks = words.match_indices(" {").map(|(i, _)| i + 1);
    for at in std::iter::once(0).chain(after_blanks).take(8) {
        let object = &words[at..];
        if !(object.starts_with("{\"") || object == "{}") {
            continue;
        }
        if let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(object) {
            return Some((at, fields));
        }
    }
    None
}

/// A line that is a JSON object with a `type` or a timestamp (under any name the JSON Lines
/// reader takes: structured loggers' lines are logs too) is a JSON Lines event; a stray JSON
/// document (a `truth.json`) is not.
pub fn looks_like_jsonl(line: &str) -> bool {
    match serde_json::from_str::<serde_json::Value>(line) {
        Ok(serde_json::Value::Object(m)) => {
            m.contains_key("type")
                || jsonl::STAMP_NAMES.iter().any(|k| m.contains_key(*k))
                || jsonl::stripe::is_object(&m)
                || jsonl::access::request_of(&m).is_some()
                || jsonl::nested::flattened(line).is_some()
                // Log4j 2's JsonLayout: its time in `instant` (or `timeMillis`), beside its
                // logger's name (a document with an `instant` or a duration in
                // `timeMillis` is no log).
                || (m.contains_key("loggerName")
                    && jsonl::nested::may_be_stamped_nesting(line)
                    && jsonl::nested::flattened_stamped(line).is_some_and(|flat| {
                        let flat = serde_json::from_str::<serde_json::Value>(&flat);
                        flat.is_ok_and(|f| jsonl::STAMP_NAMES.iter().any(|k| f.get(*k).is_some()))
                    }))
        }
        _ => false,
    }
}

/// The opening of an OTLP/JSON export batch of spans: `{"resourceSpans"...`.
pub fn looks_like_otlp_batch(line: &str) -> bool {
    opens_with_key(line.as_bytes(), &OTLP_SPANS)
}

/// The opening of an OTLP/JSON export document of any signal (spans, metrics, logs,
/// profiles): a line that is a whole document of its own, as file exporters write them.
pub fn looks_like_otlp_document(line: &[u8]) -> bool {
    opens_with_key(line, &OTLP_SPANS) || opens_with_key(line, &OTLP_OTHER_SIGNALS)
}

/// The first key of a spans document, camelCase (OTLP/JSON) or snake_case (protobuf's names).
const OTLP_SPANS: [&str; 2] = ["resourceSpans", "resource_spans"];

/// The first key of the other signals' documents, which a Collector's file exporter in
/// several pipelines writes beside the spans: valid, and without spans.
pub(crate) const OTLP_OTHER_SIGNALS: [&str; 6] = [
    "resourceMetrics",
    "resource_metrics",
    "resourceLogs",
    "resource_logs",
    "resourceProfiles",
    "resource_profiles",
];

/// `{` then, after any spaces, one of `keys` in quotes.
fn opens_with_key(line: &[u8], keys: &[&str]) -> bool {
    let Some(rest) = line.strip_prefix(b"{") else {
        return false;
    };
    let Some(rest) = rest.trim_ascii_start().strip_prefix(b"\"") else {
        return false;
    };
    keys.iter().any(|k| {
        rest.strip_prefix(k.as_bytes())
            .is_some_and(|r| r.starts_with(b"\""))
    })
}

/// A CSV header naming an effect id and a money column (by default spelling or
/// `--csv-map`), or the idempotency-records dump's header. Parsed as CSV, so quoted column
/// names may hold commas.
pub fn detect_csv_header(first_line: &str, csv_map: &[(String, String)]) -> Option<Format> {
    if !first_line.contains(',') {
        return None;
    }
    let mut rdr = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(first_line.as_bytes());
    let header = rdr.records().next()?.ok()?;
    let cols: Vec<String> = header.iter().map(str::to_string).collect();
    if records::is_records_header(&cols) {
        return Some(Format::Records);
    }
    csv::Columns::resolve(&cols, csv_map)
        .is_effect_export()
        .then_some(Format::Csv)
}

/// A text log's first line that is not blank or a comment starts with a timestamp or is a
/// section line.
pub fn looks_like_text_log(head: &[u8]) -> bool {
    let Some(line) = head
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .find(|l| !l.is_empty() && !l.starts_with(b"#"))
    else {
        // Only blank lines and comments: an empty log, still a log.
        return true;
    };
    line.starts_with(b"---") || opens_text_record(line)
}

/// A line that opens a text log's record ([`starts_with_stamped_record`]) or a program's
/// line behind a BSD or RFC 5424 syslog header ([`syslog`]).
pub fn opens_text_record(line: &[u8]) -> bool {
    starts_with_stamped_record(line) || syslog::opens_with_header(line)
}

/// A line that opens a text log's record: a timestamp at its start
/// ([`starts_with_timestamp`]), or after a level (`INFO 2026-12-07 14:19:34,919 views ...`,
/// [`text::level_first`]).
pub fn starts_with_stamped_record(line: &[u8]) -> bool {
    starts_with_timestamp(line)
        || text::level_first::stamp_start(line).is_some_and(|at| starts_with_timestamp(&line[at..]))
}

/// `HH:MM:SS...` or `YYYY-MM-DD...`: how every event line of a text log starts (SPEC §3.1),
/// bare or in brackets (`[14:02:11.402]`).
pub fn starts_with_timestamp(line: &[u8]) -> bool {
    let line = line.strip_prefix(b"[").unwrap_or(line);
    let digits = |pattern: &[u8]| {
        line.len() >= pattern.len()
            && pattern.iter().zip(line).all(|(p, c)| match p {
                b'9' => c.is_ascii_digit(),
                _ => p == c,
            })
    };
    digits(b"99:99:99")
        || digits(b"9999-99-99")
        || digits(b"9999/99/99")
        || text::jul::is_header(line)
        || text::ruby::stamp_start(line).is_some()
}

/// A logged key's value as the key it is, `None` when it is none ([`is_key_value`]): Rust's
/// `Some("k")` (an `Option` logged with `?`, as tracing's `key = ?key` writes it) is `k`.
pub(crate) fn key_of(v: &[u8]) -> Option<&[u8]> {
    let inner = (v.strip_prefix(b"Some(").and_then(|r| r.strip_suffix(b")")))
        .map(|i| match i {
            [b'"', key @ .., b'"'] => key,
            key => key,
        })
        .unwrap_or(v);
    is_key_value(inner).then_some(inner)
}

/// Whether a logged key's value is a key: not what loggers write for none (`None`, `null`,
/// `nil`, `undefined`) or for a redaction (`[REDACTED]`, `<filtered>`, `***`), and no
/// control character. Read as keys, every such request would share one. Every format asks
/// this of the keys it reads.
pub(crate) fn is_key_value(v: &[u8]) -> bool {
    // `-`: what many layouts print for an empty field (structlog, Apache's `%{...}i`).
    const NONE: [&[u8]; 9] = [
        b"-",
        b"none",
        b"null",
        b"nil",
        b"undefined",
        b"redacted",
        b"filtered",
        b"hidden",
        b"masked",
    ];
    let wrapper = |b: &u8| {
        matches!(
            b,
            b'[' | b']' | b'<' | b'>' | b'(' | b')' | b'{' | b'}' | b'*'
        )
    };
    let start = v.iter().position(|b| !wrapper(b)).unwrap_or(v.len());
    let end = v.iter().rposition(|b| !wrapper(b)).map_or(start, |e| e + 1);
    let bare = &v[start..end];
    // A control byte or a space anywhere: every byte looked at, without a branch each (a
    // key is read for every keyed request and effect).
    let blank = |b: u8| b <= b' ' || b == 0x7f;
    !bare.is_empty()
        && !NONE.iter().any(|n| bare.eq_ignore_ascii_case(n))
        && !v.iter().fold(false, |seen, &b| seen | blank(b))
}
