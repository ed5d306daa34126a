//! An input opened: read from its file or standard input, decompressed, decoded from UTF-16,
//! unwrapped from a container runtime's lines or a log platform's export, and its format detected from the head read.

use super::detect::{detect, fallback, may_precede_a_span_dump};
use super::paths::{Input, Origin, io_reason};
use super::{Counting, Outcome, SNIFF_BYTES};
use crate::ingest::compressed::{compressed_unread, decompressing};
use crate::ingest::{self, Format, ParseOptions};
use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

/// An input opened, decompressed and unwrapped, with its format detected from `head`, the
/// bytes read so far; `rest` reads the others.
pub(in crate::ingest) struct Opened<'a> {
    pub format: Format,
    pub head: Vec<u8>,
    pub rest: Reader<'a>,
    /// A plain file, whose bytes can be read again at an offset.
    pub rereadable: bool,
    /// Set when the input is UTF-16, read as UTF-8: what the decoding found, once read.
    pub decoded: Option<Arc<ingest::utf16::Decoded>>,
    /// Why the input stopped before its end, once it has ([`CutShort`]).
    pub failure: Failure,
    /// A container runtime's log, unwrapped: set once it has ended inside a split line.
    pub container: Option<ingest::container::Unended>,
    /// A log platform's export, unwrapped: the entries it skipped.
    pub export: Option<ingest::export::Skips>,
    /// The process of each of its lines that names one (journald's entries).
    pub processes: Option<ingest::export::LineProcesses>,
}

impl Opened<'_> {
    /// The options to parse the input with: `opts`, told the processes of its lines if
    /// they are known.
    pub(in crate::ingest) fn options<'o>(&self, opts: &'o ParseOptions) -> Cow<'o, ParseOptions> {
        match &self.processes {
            Some(processes) => Cow::Owned(ParseOptions {
                line_processes: Some(processes.clone()),
                ..opts.clone()
            }),
            None => Cow::Borrowed(opts),
        }
    }
}

impl Opened<'_> {
    /// `outcome` with the decoding's note, if it has one.
    pub(in crate::ingest) fn noted(
        decoded: Option<&ingest::utf16::Decoded>,
        mut outcome: Outcome,
    ) -> Outcome {
        if let (Some(note), Outcome::Parsed(_, parsed)) =
            (decoded.and_then(|d| d.note()), &mut outcome)
        {
            parsed.stats.notes.insert(0, note);
        }
        outcome
    }
}

/// Opens an input and detects its format; what to report instead when it cannot be read
/// or is no log.
pub(in crate::ingest) fn open<'a>(
    input: &Input,
    forced: Option<Format>,
    opts: &ParseOptions,
    read: &'a AtomicU64,
) -> Result<Opened<'a>, Outcome> {
    let raw: Reader<'a> = match &input.origin {
        Origin::Stdin => Box::new(io::stdin()),
        Origin::Unreadable(why) => return Err(Outcome::Unreadable(why.clone())),
        // A FIFO, socket or device found in a folder: opening a FIFO no one writes to
        // blocks for ever. Named on the command line, it is read, as `cat` would.
        Origin::File(p) if !input.explicit && !is_plain_file(p) => {
            return Err(Outcome::NotALog(
                "not a regular file (a FIFO, socket or device); passed over".into(),
            ));
        }
        Origin::File(p) => match File::open(p) {
            Ok(f) => Box::new(Counting { inner: f, read }),
            Err(e) => return Err(Outcome::Unreadable(io_reason(&e))),
        },
    };
    let (reader, compressed) =
        decompressing(raw).map_err(|e| Outcome::Unreadable(e.to_string()))?;
    // A stream that fails mid-way (a `.gz` cut short) ends there for the parser: what was
    // read before stays read, and the failure is reported beside it.
    let failure = Failure::default();
    let mut reader: Reader<'a> = Box::new(CutShort {
        inner: reader,
        failure: failure.clone(),
    });
    let mut rereadable = !compressed && matches!(input.origin, Origin::File(_));
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut reader)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| Outcome::Unreadable(e.to_string()))?;
    // bzip2 and xz are not unpacked: said so, rather than read as lines of binary.
    if let Some((how, unpack)) = compressed_unread(&head) {
        let why = format!("compressed with {how}: not unpacked; decompress it first ({unpack})");
        return Err(match input.explicit {
            true => Outcome::Unreadable(why),
            false => Outcome::NotALog(format!("{why}; passed over")),
        });
    }
    // UTF-16 (Windows PowerShell 5's `>`): read as the UTF-8 it stands for, from its start.
    let mut decoded = None;
    if let Some(how) = ingest::utf16::sniff(&head) {
        let decoding = Arc::new(ingest::utf16::Decoded::new(how));
        let all = Cursor::new(std::mem::take(&mut head)).chain(reader);
        reader = Box::new(ingest::utf16::Decoder::new(all, decoding.clone()));
        rereadable = false;
        (&mut reader)
            .take(SNIFF_BYTES as u64)
            .read_to_end(&mut head)
            .map_err(|e| Outcome::Unreadable(e.to_string()))?;
        decoded = Some(decoding);
    }
    // A container runtime's wrapper around each line: taken off, and the lines inside are
    // what is detected and parsed (no longer read again at an offset).
    let mut container = None;
    if let Some(wrapper) = ingest::container::wrapper_of(&head) {
        let wrapped = Cursor::new(std::mem::take(&mut head)).chain(reader);
        let unended = ingest::container::Unended::default();
        let unwrapped = ingest::container::Unwrapped::new(wrapped, wrapper, unended.clone());
        container = Some(unended);
        reader = Box::new(unwrapped);
        rereadable = false;
        (&mut reader)
            .take(SNIFF_BYTES as u64)
            .read_to_end(&mut head)
            .map_err(|e| Outcome::Unreadable(e.to_string()))?;
    }
    // A log platform's export (journald's JSON, CloudWatch Logs' pages, Cloud Logging's
    // entries): the same, each entry's message what is detected and parsed.
    let mut export = None;
    let mut processes = None;
    if let Some(kind) = container
        .is_none()
        .then(|| ingest::export::kind_of(&head))
        .flatten()
    {
        let wrapped = Cursor::new(std::mem::take(&mut head)).chain(reader);
        let skips = ingest::export::Skips::default();
        let by_line = ingest::export::LineProcesses::default();
        reader = Box::new(ingest::export::Unwrapped::new(
            wrapped,
            kind,
            skips.clone(),
            by_line.clone(),
        ));
        export = Some(skips);
        processes = Some(by_line);
        rereadable = false;
        (&mut reader)
            .take(SNIFF_BYTES as u64)
            .read_to_end(&mut head)
            .map_err(|e| Outcome::Unreadable(e.to_string()))?;
    }
    let mut detected = forced.or_else(|| detect(&head, &opts.csv_map));
    // A console exporter's spans after a long start-up log: the head was the program's
    // own output (or nothing known), so the input is looked through further for a span.
    if forced.is_none() && head.len() >= SNIFF_BYTES && may_precede_a_span_dump(detected) {
        let limit = ingest::otlp::preamble::LOOK_AHEAD;
        let found = ingest::otlp::preamble::read_past(&mut head, &mut reader, limit)
            .map_err(|e| Outcome::Unreadable(e.to_string()))?;
        if found.is_some() {
            detected = Some(Format::Otlp);
        }
    }
    let format = match detected {
        Some(f) => f,
        // Named on the command line: parsed anyway, so every line says why it is no event.
        None if input.explicit => fallback(&head),
        None => {
            return Err(Outcome::NotALog(
                "not a recognised log format; passed over".into(),
            ));
        }
    };
    Ok(Opened {
        format,
        head,
        rest: reader,
        rereadable,
        decoded,
        failure,
        container,
        export,
        processes,
    })
}

/// Why an input's stream failed before its end, when it has: set by [`CutShort`].
#[derive(Clone, Default)]
pub(in crate::ingest) struct Failure(std::sync::Arc<Mutex<Option<String>>>);

impl Failure {
    /// The failure, once the input has been read.
    pub fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Whether the input has failed.
    pub fn failed(&self) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }
}

/// A reader whose first error (other than an interruption) ends its stream, noted in a
/// [`Failure`]: a gzip or zstd stream cut short gives the lines before the cut, as `zcat`
/// does, rather than none.
struct CutShort<R> {
    inner: R,
    failure: Failure,
}

impl<R: Read> Read for CutShort<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut failure = self.failure.0.lock().unwrap_or_else(|e| e.into_inner());
        if failure.is_some() {
            return Ok(0);
        }
        match self.inner.read(buf) {
            Err(e) if e.kind() != io::ErrorKind::Interrupted => {
                *failure = Some(e.to_string());
                Ok(0)
            }
            other => other,
        }
    }
}

pub(in crate::ingest) type Reader<'a> = Box<dyn Read + Send + 'a>;

/// A regular file, through any symbolic link (one that leads nowhere is left to `open` to
/// report).
fn is_plain_file(path: &Path) -> bool {
    std::fs::metadata(path).map_or(true, |m| m.is_file())
}
