//! Logs exported from a log platform: the service's lines, each in the platform's JSON
//! envelope with its time. journald's `journalctl -o json` (an entry a line) and
//! `-o json-pretty`, CloudWatch Logs' `filter-log-events`/`get-log-events` pages, and Google
//! Cloud Logging's entries (`gcloud logging read --format=json`). As for a container's log
//! ([`super::container`]), the envelope is taken off as the input is read: each message is
//! given on the line where it lies in the export (blank lines elsewhere), so that `path:line`
//! points at it, and detected and parsed in its own format; one without a stamp of its own
//! takes the envelope's. An entry that cannot be read (no message, a time that is no number)
//! is given as a blank line and said ([`Skips`]), to be counted skipped with why.

mod document;
mod entry;
mod writers;

use super::container::Continuation;
use super::long_lines::{LineSource, Unwrap};
use super::{InputStats, MAX_PROBLEMS_KEPT, Problem};
use serde_json::value::RawValue;
use std::io::{self, Read};
use std::sync::{Arc, Mutex};
pub use writers::LineProcesses;
use writers::Writers;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `journalctl -o json`: an entry a line, read as it streams.
    JournalLines,
    /// `journalctl -o json-pretty`: entries as indented objects, one after another.
    JournalPretty,
    /// `aws logs filter-log-events` / `get-log-events`: `{"events": [...], ...}`, pages
    /// one after another.
    CloudWatch,
    /// `gcloud logging read --format=json`: an array of `LogEntry`.
    GcpEntries,
}

/// The kind of export whose start is `head`, if it is one.
pub fn kind_of(head: &[u8]) -> Option<Kind> {
    let head = head.strip_prefix("\u{feff}".as_bytes()).unwrap_or(head);
    let start = head.iter().position(|b| !b.is_ascii_whitespace())?;
    let doc = &head[start..];
    let first_line = doc.split(|&b| b == b'\n').next().unwrap_or_default();
    let journal = |o: &Members| {
        o.get("__REALTIME_TIMESTAMP")
            .is_some_and(|t| t.get().starts_with('"'))
    };
    match doc[0] {
        b'{' if memchr::memmem::find(first_line, b"\"__REALTIME_TIMESTAMP\"").is_some() => {
            first_object(first_line)
                .filter(journal)
                .map(|_| Kind::JournalLines)
        }
        b'{' => {
            if first_object(doc).is_some_and(|o| journal(&o)) {
                return Some(Kind::JournalPretty);
            }
            // `{"events": [` and an event's members, or none.
            let rest = after_token(&doc[1..], b"\"events\"")?;
            let rest = after_token(after_token(rest, b":")?, b"[")?;
            let event = |o: &Members| o.contains_key("message") && o.contains_key("timestamp");
            match rest.trim_ascii_start().first() {
                Some(b']') => Some(Kind::CloudWatch),
                _ => first_object(rest).filter(event).map(|_| Kind::CloudWatch),
            }
        }
        b'[' => {
            let entry = first_object(&doc[1..])?;
            let payload = ["textPayload", "jsonPayload", "protoPayload"];
            let envelope = ["logName", "receiveTimestamp", "resource"];
            (entry.contains_key("timestamp")
                && payload.iter().any(|k| entry.contains_key(*k))
                && envelope.iter().any(|k| entry.contains_key(*k)))
            .then_some(Kind::GcpEntries)
        }
        _ => None,
    }
}

/// An object's members, their values unread: a payload nested past the JSON reader's depth
/// (which reads a value's text without limit, not its structure) does not hide its entry.
type Members<'a> = std::collections::HashMap<String, &'a RawValue>;

/// The members of the JSON object `bytes` start with (after blanks), if it is whole.
fn first_object(bytes: &[u8]) -> Option<Members<'_>> {
    let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<&RawValue>();
    let raw = values.next()?.ok()?;
    serde_json::from_str(raw.get()).ok()
}

/// What follows `token` when `bytes` start with it, after blanks.
fn after_token<'a>(bytes: &'a [u8], token: &[u8]) -> Option<&'a [u8]> {
    bytes.trim_ascii_start().strip_prefix(token)
}

/// The entries of an export skipped (given as blank lines): counted, and the first
/// [`MAX_PROBLEMS_KEPT`] kept with why, for the input's report once it is parsed.
#[derive(Clone, Default)]
pub struct Skips(Arc<Mutex<(u64, Vec<Problem>)>>);

impl Skips {
    fn add(&self, line: u32, why: String) {
        let mut skips = self.0.lock().unwrap_or_else(|e| e.into_inner());
        skips.0 += 1;
        if skips.1.len() < MAX_PROBLEMS_KEPT {
            skips.1.push(Problem { line, reason: why });
        }
    }

    /// Counts an export's skipped entries in its input's accounts: their blank lines were
    /// counted ignored, and are skipped, with why, among the parser's problems by line.
    pub fn settle(skips: Option<&Skips>, stats: &mut InputStats) {
        let Some(skips) = skips else { return };
        let skips = skips.0.lock().unwrap_or_else(|e| e.into_inner());
        stats.skipped += skips.0;
        stats.ignored = stats.ignored.saturating_sub(skips.0);
        for problem in &skips.1 {
            let at = stats.problems.partition_point(|p| p.line <= problem.line);
            stats.problems.insert(at, problem.clone());
        }
        stats.problems.truncate(MAX_PROBLEMS_KEPT);
    }
}

/// The service's lines of an export, as bytes to read.
pub struct Unwrapped<R> {
    lines: LineSource<R>,
    entries: Entries,
    /// A document export has been read whole and unwrapped.
    read_whole: bool,
}

/// The entries of an export read so far, unwrapped: `-o json`'s an entry a line, or a
/// document's all at once.
struct Entries {
    kind: Kind,
    skips: Skips,
    out: Vec<u8>,
    /// Physical lines read so far (an entry a line).
    line_no: u32,
    writers: Writers,
}

impl<R: Read> Unwrapped<R> {
    /// The export `inner` of `kind` unwrapped; its skipped entries told to `skips`, the
    /// process of each line that names one to `processes`.
    pub fn new(inner: R, kind: Kind, skips: Skips, processes: LineProcesses) -> Self {
        Unwrapped {
            lines: LineSource::new(inner),
            entries: Entries {
                kind,
                skips,
                out: Vec::new(),
                line_no: 0,
                writers: Writers::new(processes),
            },
            read_whole: false,
        }
    }
}

impl Unwrap for Entries {
    fn out(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    fn line(&mut self, line: &[u8]) {
        self.line_no += 1;
        let line = line.trim_ascii();
        if !line.is_empty() {
            match serde_json::from_slice::<&RawValue>(line) {
                Ok(raw) => give(self, raw, line),
                Err(e) => self.skips.add(
                    self.line_no,
                    format!("not a journald entry: {}", super::unreadable_json(&e)),
                ),
            }
        }
        self.out.push(b'\n');
    }

    fn too_long(&mut self) {
        self.line_no += 1;
    }

    fn end(&mut self) {}
}

/// Gives the entry `raw` (of `base`) into `entries`' output, without its newline: its
/// message, with the envelope's time unless it has its own ([`emit`]); or nothing, said in
/// `skips`.
fn give(entries: &mut Entries, raw: &RawValue, base: &[u8]) {
    match entry::read(entries.kind, raw, base) {
        Ok(entry::Entry::Line {
            time,
            message,
            writer,
            ..
        }) => {
            let traceback = entries.writers.of_line(entries.line_no, writer);
            emit(&mut entries.out, traceback, time.as_bytes(), message);
        }
        Ok(entry::Entry::Nothing) => {}
        Err(bad) => entries.skips.add(entries.line_no, bad.why),
    }
}

/// The message of an entry, as one line ([`one_line`]), with the envelope's `time` unless
/// it has its own; as it is when it continues a record printed a line an entry (a
/// traceback's line, [`Continuation`]).
fn emit(out: &mut Vec<u8>, continuation: &mut Continuation, time: &[u8], message: Vec<u8>) {
    let message = one_line(message);
    if continuation.goes_on(&message) {
        out.extend_from_slice(&message);
    } else {
        super::container::emit(out, time, &message);
    }
}

/// A message as one line: without the newline it ended with (what a service wrote to its
/// standard output), its inner line breaks (a traceback's) made blanks, to keep every other
/// entry on its own line.
fn one_line(mut message: Vec<u8>) -> Vec<u8> {
    while message.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
        message.pop();
    }
    for b in &mut message {
        if *b == b'\n' || *b == b'\r' {
            *b = b' ';
        }
    }
    message
}

impl<R: Read> Read for Unwrapped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let entries = &mut self.entries;
        if entries.kind != Kind::JournalLines && !std::mem::replace(&mut self.read_whole, true) {
            // A document is read whole (its pages are what the platform's client held),
            // and given as the lines' source finds its input at its end.
            let mut all = Vec::new();
            self.lines.reader().read_to_end(&mut all)?;
            entries.out =
                document::unwrap(entries.kind, &all, &entries.skips, &mut entries.writers);
        }
        self.lines.read(buf, entries)
    }
}

#[cfg(test)]
mod tests;
