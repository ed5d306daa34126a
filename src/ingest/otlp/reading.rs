//! The lines of an OTLP input gathered into documents: one document a line (the SDK's and
//! the Collector's file exporters), or one pretty-printed over many, whose end is found by
//! tracking JSON nesting. Lines are read in batches and each parsed as a whole document on
//! whichever core is free, then taken in order as a line-at-a-time reading takes them.

use super::{Spans, broken, read_document, read_parsed};
use crate::ingest::lines::{MAX_DOCUMENT_LINE, for_each_line_up_to};
use crate::ingest::{MAX_PROBLEMS_KEPT, Parsed};
use std::io::{self, Read};

/// How many bytes of lines are read ahead and parsed side by side. The SDK's and the
/// Collector's file exporters write one batch per line, so a month of traces is often one
/// file: read a line at a time, it kept one core busy.
pub(super) const BATCH_BYTES: usize = 4 << 20;

/// A span printed among a program's output is kept up to this many bytes (an attribute may
/// hold a prompt with its images): a stray `{` must not gather the rest of the file into
/// one document.
const MAX_PRINTED_SPAN: usize = 64 << 20;

/// How the console exporter's span opens: `{` alone at the margin (`to_json()`), or a
/// span on one line (`to_json(indent=None)`: its `context` with its ids; a
/// container runtime's stamp may stand before its members); an OTLP document too.
fn opens_printed_span(line: &[u8]) -> bool {
    line.trim_ascii_end() == b"{"
        || (line.starts_with(b"{\"")
            && memchr::memmem::find(line, b"\"context\": {").is_some()
            && (memchr::memmem::find(line, b"\"trace_id\"").is_some()
                || memchr::memmem::find(line, b"\"span_id\"").is_some()))
        || crate::ingest::looks_like_otlp_document(line)
}

/// What a line costs a batch beyond its bytes (its place, what it gave): a file of blank
/// or one-byte lines must close batches too, or a batch grows with the lines read.
const LINE_COST: usize = 64;

/// [`parse`](super::parse), lines gathered `batch_bytes` at a time: each line of a batch is parsed as a
/// whole document on whichever core is free, then the lines are taken in order as the
/// sequential reading takes them, which uses a line's document only where it would have
/// parsed it (outside a multi-line document). The result is the same for any batch size.
pub(super) fn parse_in_batches(
    reader: &mut dyn Read,
    input: u32,
    batch_bytes: usize,
    among_output: bool,
) -> io::Result<Parsed> {
    let mut reading = Reading::new(input);
    reading.among_output = among_output;
    let mut batch = Batch::default();
    let mut notes = crate::ingest::lines::LineNotes::default();
    // A batch on one line is one document: lines up to MAX_DOCUMENT_LINE are read.
    for_each_line_up_to(reader, &mut notes, MAX_DOCUMENT_LINE, |n, line| {
        if line.len() >= batch_bytes {
            // A line as large as a batch is read where it lies, not copied into one.
            reading.take(&mut batch);
            return reading.line_alone(n, line);
        }
        batch.push(n, line);
        if batch.full(batch_bytes) {
            reading.take(&mut batch);
        }
    })?;
    reading.take(&mut batch);
    let mut parsed = reading.finish();
    notes.add_to(&mut parsed.stats);
    Ok(parsed)
}

/// Lines read ahead, one buffer for all of them.
#[derive(Default)]
pub(super) struct Batch {
    bytes: Vec<u8>,
    lines: Vec<(u32, std::ops::Range<usize>)>,
}

impl Batch {
    pub(super) fn push(&mut self, n: u32, line: &[u8]) {
        let at = self.bytes.len();
        self.bytes.extend_from_slice(line);
        self.lines.push((n, at..self.bytes.len()));
    }

    /// Its lines' bytes and places reach `batch_bytes`.
    pub(super) fn full(&self, batch_bytes: usize) -> bool {
        self.bytes.len() + LINE_COST * self.lines.len() >= batch_bytes
    }
}

/// What a line of a batch gave, read ahead as a whole document.
enum Ahead {
    /// Not tried: a line that does not open an object (blank, a fragment of a
    /// pretty-printed document) is parsed only if the reading asks for it.
    Untried,
    NotADocument,
    Document(Box<Spans>),
}

/// The sequential reading: where a multi-line document is pending, and what was read.
pub(super) struct Reading {
    input: u32,
    out: Spans,
    pending: Vec<u8>,
    pending_line: u32,
    depth: Depth,
    /// The documents are printed among a program's own output (the Python SDK's console
    /// exporter writes to standard output): a line outside them that opens none is the
    /// program's, ignored rather than a broken document.
    among_output: bool,
}

impl Reading {
    pub(super) fn new(input: u32) -> Self {
        Reading {
            input,
            out: Spans::default(),
            pending: Vec::new(),
            pending_line: 0,
            depth: Depth::default(),
            among_output: false,
        }
    }

    /// Reads a batch's lines in order, each line's document parsed beforehand in parallel.
    fn take(&mut self, batch: &mut Batch) {
        use rayon::prelude::*;
        let input = self.input;
        let ahead: Vec<Ahead> = batch
            .lines
            .par_iter()
            .map(|(n, range)| {
                let line = &batch.bytes[range.clone()];
                if line.trim_ascii_start().first() != Some(&b'{') {
                    return Ahead::Untried;
                }
                match whole_document(line, *n, input) {
                    Some(document) => Ahead::Document(Box::new(document)),
                    None => Ahead::NotADocument,
                }
            })
            .collect();
        for ((n, range), ahead) in batch.lines.iter().zip(ahead) {
            let line = &batch.bytes[range.clone()];
            match ahead {
                Ahead::Untried => self.line_alone(*n, line),
                Ahead::NotADocument => self.line(*n, line, None),
                Ahead::Document(document) => self.line(*n, line, Some(*document)),
            }
        }
        batch.bytes.clear();
        batch.lines.clear();
    }

    /// One line read on its own: parsed as a document only where the reading uses one.
    pub(super) fn line_alone(&mut self, n: u32, line: &[u8]) {
        let document = if self.pending.is_empty() {
            whole_document(line, n, self.input)
        } else {
            None
        };
        self.line(n, line, document);
    }

    /// One line, with what it gave read as a whole document (when it parsed as one).
    fn line(&mut self, n: u32, line: &[u8], document: Option<Spans>) {
        let input = self.input;
        if self.pending.is_empty() {
            if self.among_output && !opens_printed_span(line) {
                self.out.stats.lines += 1;
                self.out.stats.ignored += 1;
                // A span printed straight after output that ended no line (`print(...,
                // end="")`, a progress bar): its `{` ends the program's line. Any other line
                // is the program's own: text, a log line opening with `[`, its JSON logs, a
                // printed dict (`{'order': ...}`).
                if line.trim_ascii_end().ends_with(b"{") {
                    self.start_document(n, b"{");
                }
                return;
            }
            if line.trim_ascii().is_empty() {
                self.out.stats.lines += 1;
                self.out.stats.ignored += 1;
                return;
            }
            // A document on one line, as the SDK's file exporter writes them, was parsed
            // at once; only a line that is not one is read for where its document ends.
            if let Some(document) = document {
                return absorb(&mut self.out, document);
            }
            // A line that opens no JSON value is broken on its own, not the start of a
            // document that would take every line after it (a log's text before its spans).
            if !matches!(line.trim_ascii_start().first(), Some(b'{' | b'[')) {
                let why = match serde_json::from_slice::<serde::de::IgnoredAny>(line) {
                    Ok(_) => "JSON without resourceSpans".to_string(),
                    Err(e) => crate::ingest::unreadable_json(&e),
                };
                return broken(&mut self.out.stats, n, &why);
            }
            self.start_document(n, line);
            return;
        }
        // Inside a multi-line document. A line that opens a whole document of its own (in
        // any spelling, of any signal), or a `{` at the margin below an indented first
        // member (the next of the console exporter's spans), means the pending one was cut
        // off.
        if crate::ingest::looks_like_otlp_document(line)
            || self.opens_next_pretty(line)
            || self.opens_next_printed(line)
        {
            broken(
                &mut self.out.stats,
                self.pending_line,
                "incomplete JSON document",
            );
            self.pending.clear();
            self.start_document(n, line);
            return;
        }
        if self.among_output && self.pending.len() + line.len() > MAX_PRINTED_SPAN {
            broken(
                &mut self.out.stats,
                self.pending_line,
                "a span over 64 MiB: read no further",
            );
            self.pending.clear();
            return;
        }
        self.pending.push(b'\n');
        self.pending.extend_from_slice(line);
        self.depth.feed(line);
        if self.depth.complete() {
            let doc = std::mem::take(&mut self.pending);
            read_document(&doc, self.pending_line, input, &mut self.out);
        }
    }

    /// `{` alone at the margin while the pending document's members are indented: a
    /// pretty-printer writes nothing inside a document there, so it is the next one's start.
    fn opens_next_pretty(&self, line: &[u8]) -> bool {
        if line.trim_ascii_end() != b"{" {
            return false;
        }
        let second = memchr::memchr(b'\n', &self.pending).map(|at| &self.pending[at + 1..]);
        second.is_some_and(|l| l.starts_with(b" "))
    }

    /// Among a program's output, where every document is one span: a span's opening starts
    /// the next span whatever is pending (a span cut off by a killed process, a truncated
    /// JSON body the program printed).
    fn opens_next_printed(&self, line: &[u8]) -> bool {
        self.among_output && opens_printed_span(line)
    }

    /// A line that opens a document it may not close.
    fn start_document(&mut self, n: u32, line: &[u8]) {
        self.depth = Depth::default();
        self.depth.feed(line);
        if self.depth.complete() {
            read_document(line, n, self.input, &mut self.out);
        } else {
            self.pending.extend_from_slice(line);
            self.pending_line = n;
        }
    }

    pub(super) fn finish(mut self) -> Parsed {
        if !self.pending.is_empty() {
            broken(
                &mut self.out.stats,
                self.pending_line,
                "incomplete JSON document at end of input",
            );
        }
        Parsed {
            spans: self.out.spans,
            stats: self.out.stats,
            ..Parsed::default()
        }
    }
}

/// What a line gives read as a whole document, if it parses as one.
fn whole_document(line: &[u8], n: u32, input: u32) -> Option<Spans> {
    let doc = super::parse_document(line).ok()?;
    let mut part = Spans::default();
    read_parsed(doc, line, n, input, &mut part);
    Some(part)
}

/// Adds what one document gave to the input's reading, as if read into it directly.
fn absorb(out: &mut Spans, part: Spans) {
    out.spans.extend(part.spans);
    let (stats, more) = (&mut out.stats, part.stats);
    stats.lines += more.lines;
    stats.events += more.events;
    stats.ignored += more.ignored;
    stats.skipped += more.skipped;
    let room = MAX_PROBLEMS_KEPT.saturating_sub(stats.problems.len());
    stats.problems.extend(more.problems.into_iter().take(room));
}

/// Tracks JSON nesting across lines (strings and escapes respected), so that a document is
/// parsed once it is complete rather than re-tried line after line.
#[derive(Default)]
pub(super) struct Depth {
    depth: i64,
    in_string: bool,
    escaped: bool,
    seen: bool,
}

impl Depth {
    pub(super) fn feed(&mut self, bytes: &[u8]) {
        let mut at = 0;
        while at < bytes.len() {
            if self.in_string {
                // Most of a document's bytes are in strings (ids, names, values): jump to
                // the next quote or backslash rather than looking at each byte.
                if self.escaped {
                    self.escaped = false;
                    at += 1;
                    continue;
                }
                let Some(off) = memchr::memchr2(b'"', b'\\', &bytes[at..]) else {
                    break;
                };
                at += off;
                match bytes[at] {
                    b'"' => self.in_string = false,
                    _ => self.escaped = true,
                }
                at += 1;
                continue;
            }
            match bytes[at] {
                b'"' => self.in_string = true,
                b'{' | b'[' => {
                    self.depth += 1;
                    self.seen = true;
                }
                b'}' | b']' => self.depth -= 1,
                b => self.seen |= !b.is_ascii_whitespace(),
            }
            at += 1;
        }
        // A JSON string cannot hold a raw newline: a line that ends inside one is broken,
        // and the JSON parser will say so; the next line starts outside any string.
        self.in_string = false;
        self.escaped = false;
    }

    /// A whole value has been read (or the text can never become one: the JSON parser will
    /// say why).
    pub(super) fn complete(&self) -> bool {
        self.seen && self.depth <= 0
    }
}

#[cfg(test)]
mod tests {
    use super::Depth;

    /// [`Depth::feed`] a byte at a time: the reference its string-skipping must agree with.
    fn depth_bytewise(d: &mut Depth, bytes: &[u8]) {
        for &b in bytes {
            if d.in_string {
                match (d.escaped, b) {
                    (true, _) => d.escaped = false,
                    (false, b'\\') => d.escaped = true,
                    (false, b'"') => d.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => d.in_string = true,
                b'{' | b'[' => {
                    d.depth += 1;
                    d.seen = true;
                }
                b'}' | b']' => d.depth -= 1,
                _ => d.seen |= !b.is_ascii_whitespace(),
            }
        }
        d.in_string = false;
        d.escaped = false;
    }

    proptest::proptest! {
        /// Lines of JSON's structural bytes, quotes, escapes and letters, fed one after another:
        /// the nesting and whether anything was seen agree with the byte-at-a-time reading.
        #[test]
        fn depth_skips_strings_as_the_bytewise_reading_does(
            lines in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(b"{}[]\"\\ a:,\t".to_vec()), 0..40),
                1..6,
            )
        ) {
            let (mut fast, mut slow) = (Depth::default(), Depth::default());
            for line in &lines {
                fast.feed(line);
                depth_bytewise(&mut slow, line);
                proptest::prop_assert_eq!(
                    (fast.depth, fast.seen, fast.complete()),
                    (slow.depth, slow.seen, slow.complete())
                );
            }
        }
    }
}
