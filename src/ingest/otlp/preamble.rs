//! A console exporter's spans after a long preamble. The exporters print to standard
//! output, and a program's standard output often holds a long start-up log (pip's warnings,
//! a framework's banner, thousands of its own log lines) before the first span, so the
//! first 64 KiB that detection reads may hold none. Such a file is looked through further,
//! up to [`LOOK_AHEAD`] bytes ([`OTLP_LOOK_AHEAD`] when forced to be spans), for a span's
//! unmistakable opening: a `{` alone at the margin with the Python exporter's `"name"` and
//! `"trace_id": "0x…"` below it or the JavaScript exporter's first-level `traceId`, `id`,
//! `kind`, `timestamp` and `duration`, or the Python exporter's span on one line. Any other
//! JSON document or printed object (a program's pretty-printed config, a row it printed) is
//! not one.
//!
//! Looking further costs one read of those bytes, which the reader then takes from memory
//! instead of from the file, and a scan that stops only at lines that open with `{`.

use super::{console, console_js};
use std::io::{self, Read};

/// How far into an input detection looks for a console exporter's first span: about
/// 10,000 lines of start-up output. Every log over 64 KiB is looked through this far, so
/// it is kept small: its bytes are held while the input is read, and further would cost
/// ordinary logs measurably (4 MiB added 2 to 3 ms a file).
pub const LOOK_AHEAD: u64 = 1 << 20;

/// How far the OTLP reader looks, which reads only inputs detected as spans or forced to
/// be (`--input-format otlp`): a start-up log longer than detection's look is read then.
pub const OTLP_LOOK_AHEAD: u64 = 16 << 20;

/// A printed object at the margin is looked at up to this many bytes for a span's members
/// (they come before its attributes).
const OBJECT_HEAD: usize = 64 << 10;

/// Whose console exporter printed the spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exporter {
    /// The Python SDK's: JSON documents.
    Python,
    /// The JavaScript SDK's: objects as Node's `util.inspect` prints them.
    JavaScript,
}

/// Whose spans the head of an input shows, anywhere in it (the JavaScript exporter's first:
/// its objects are no JSON, so nothing of them is taken for Python's).
pub fn in_head(head: &[u8]) -> Option<Exporter> {
    if console_js::looks_like(head) {
        Some(Exporter::JavaScript)
    } else if console::looks_like(head) {
        Some(Exporter::Python)
    } else {
        None
    }
}

/// Reads on from `reader` into `head` (the input's first bytes) until it holds `limit`
/// bytes or the input ends, and says whose span opens first in it.
pub fn read_past(
    head: &mut Vec<u8>,
    reader: &mut dyn Read,
    limit: u64,
) -> io::Result<Option<Exporter>> {
    let room = limit.saturating_sub(head.len() as u64);
    // Exactly: the bytes are held while the input is read, and a doubling would hold twice.
    head.reserve_exact(room as usize);
    reader.take(room).read_to_end(head)?;
    Ok(first_span(head))
}

/// Whose span opens first in `bytes`. Only lines that open with `{` are looked at, and each
/// object at the margin up to its end (the next `{` or `}` alone at the margin), so the
/// scan is linear however the lines are made.
pub fn first_span(bytes: &[u8]) -> Option<Exporter> {
    let at_start = (bytes.first() == Some(&b'{')).then_some(0);
    let starts = at_start
        .into_iter()
        .chain(memchr::memmem::find_iter(bytes, b"\n{").map(|at| at + 1));
    for start in starts {
        let line = line_at(bytes, start);
        if line == b"{" {
            let object = object_at(bytes, start);
            if let Some(exporter) = in_head(object) {
                return Some(exporter);
            }
        } else if is_one_line_span(line) {
            return Some(Exporter::Python);
        }
    }
    None
}

/// The line that starts at `start`, without its line ending.
fn line_at(bytes: &[u8], start: usize) -> &[u8] {
    let rest = &bytes[start..];
    let line = memchr::memchr(b'\n', rest).map_or(rest, |end| &rest[..end]);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The object opened by the `{` alone at `start`: through the next `}` alone at the margin,
/// up to the next `{` alone there (the one open was cut off), or [`OBJECT_HEAD`] bytes.
fn object_at(bytes: &[u8], start: usize) -> &[u8] {
    let limit = bytes.len().min(start + OBJECT_HEAD);
    let mut at = start;
    // Past the opening line, each line's start.
    while let Some(newline) = memchr::memchr(b'\n', &bytes[at..limit]) {
        at += newline + 1;
        match line_at(bytes, at) {
            b"}" => return &bytes[start..(at + 1).min(limit)],
            b"{" => return &bytes[start..at],
            _ => {}
        }
    }
    &bytes[start..limit]
}

/// The Python exporter's span on one line (`to_json(indent=None)`), with its `0x` trace id
/// and `SpanKind.` kind, found before the line is parsed; a container runtime's stamp may
/// stand before its members.
fn is_one_line_span(line: &[u8]) -> bool {
    let has = |needle: &[u8]| memchr::memmem::find(line, needle).is_some();
    line.starts_with(b"{\"")
        && has(b"\"trace_id\": \"0x")
        && has(b"\"SpanKind.")
        && serde_json::from_slice::<serde_json::Value>(line).is_ok_and(|doc| console::is_span(&doc))
}

#[cfg(test)]
mod tests;
