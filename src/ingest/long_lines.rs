//! Lines too long to read: a binary blob, a JSON object dumped on one line, a file with no
//! newline at all. A line is held whole while it is parsed, so its length was the scan's
//! memory (a 200 MB line took 408 MB); memory is meant to follow the calls and effects kept,
//! not the lines read. A line longer than [`MAX_LINE`] is therefore not held: its bytes are
//! dropped as they stream past, and the line is skipped with its length ([`TooLong`]); the
//! lines after it are read as ever, numbered and placed as they were.

use super::{InputStats, MAX_PROBLEMS_KEPT, Problem};
use std::io::{self, BufRead, Read};

/// The longest line read, before its newline: 16 MiB. No log line of an event comes near it
/// (a refund's line is a few hundred bytes, a structured logger's with a request body a few
/// KiB, a tool call with a prompt and its context some hundreds of KiB), so a line over it is
/// damage or a dump, and dropping it costs no event. Held, it costs 16 MiB more of memory, at
/// most, however long the line.
pub const MAX_LINE: usize = 16 << 20;

/// The longest line of an OTLP/JSON input: 256 MiB. The SDK's and the Collector's file
/// exporters write a whole export batch on one line, and a batch of spans carrying prompts
/// and responses is tens of MiB (the Collector's receivers take requests of up to 20 MiB by
/// default, and its batch processor joins them); its spans are the events, and are parsed
/// from the line whole. A line past this is no batch a default pipeline writes.
pub const MAX_DOCUMENT_LINE: usize = 256 << 20;

/// The lines of an input skipped for their length: each one's number and length.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TooLong {
    /// How many there were.
    pub lines: u32,
    /// The first [`MAX_PROBLEMS_KEPT`] of them: line number, length in bytes.
    kept: Vec<(u32, u64)>,
    /// The longest line that was read, for the reason.
    max_line: usize,
}

impl TooLong {
    /// Line `line`, of `len` bytes, was longer than `max_line` and not read.
    pub fn saw(&mut self, line: u32, len: u64, max_line: usize) {
        self.lines += 1;
        self.max_line = max_line;
        if self.kept.len() < MAX_PROBLEMS_KEPT {
            self.kept.push((line, len));
        }
    }

    /// Counts the lines in an input's accounts, as lines skipped (they were given to no
    /// parser), their reasons among the parser's in the order of their lines.
    pub fn add_to(&self, stats: &mut InputStats) {
        stats.lines += u64::from(self.lines);
        stats.skipped += u64::from(self.lines);
        for &(line, len) in &self.kept {
            let at = stats.problems.partition_point(|p| p.line <= line);
            if at < MAX_PROBLEMS_KEPT {
                let reason = reason(len, self.max_line);
                stats.problems.insert(at, Problem { line, reason });
                stats.problems.truncate(MAX_PROBLEMS_KEPT);
            }
        }
    }
}

/// Why a line of `len` bytes was skipped.
pub fn reason(len: u64, max_line: usize) -> String {
    let max = match max_line % (1 << 20) {
        0 => format!("{} MiB", max_line >> 20),
        _ => format!("{max_line} bytes"),
    };
    format!(
        "line longer than {max} ({len} bytes): not read (a binary blob, or a document dumped on one line?)"
    )
}

/// Why a CSV row of `len` bytes, longer than [`MAX_LINE`], was skipped: cut there, the rest
/// of its line dropped unread.
pub fn row_reason(len: u64) -> String {
    format!(
        "row longer than {} MiB ({len} bytes, to the end of the line it was cut on): not read (a binary blob, or a quote never closed?)",
        MAX_LINE >> 20
    )
}

/// Reads a line into `line` as `read_until` does (its newline included), but no more than
/// `limit` bytes of it: whether what was read is a whole line (or the input's last bytes),
/// rather than the start of a longer one, whose rest [`pass_on`] gives. (A last line of
/// `limit` bytes exactly, with no newline, reads as the start of a longer one.)
pub fn read_line_up_to<R: BufRead>(
    reader: &mut R,
    line: &mut Vec<u8>,
    limit: usize,
) -> io::Result<bool> {
    let n = reader.take(limit as u64).read_until(b'\n', line)?;
    Ok(n < limit || line.last() == Some(&b'\n'))
}

/// Copies the next bytes of a line too long to hold from `reader` to `out`, as they are, at
/// most `room` of them: a reader that rewrites lines passes such a line on unread, for the
/// line splitter to skip. Says whether the line ended (its newline copied too) or the input.
pub fn pass_on<R: BufRead>(reader: &mut R, out: &mut Vec<u8>, room: usize) -> io::Result<bool> {
    let n = reader.take(room as u64).read_until(b'\n', out)?;
    Ok(n == 0 || out.last() == Some(&b'\n'))
}

/// What a reader that rewrites an input's lines (a container runtime's wrapper taken off, an
/// export's envelope) does with each: [`LineSource`] reads the lines and passes on those too
/// long to hold; the unwrapper gives what each line stands for into its output.
pub trait Unwrap {
    /// The bytes given so far, to be read.
    fn out(&mut self) -> &mut Vec<u8>;
    /// A whole physical line, with its newline (none on an input's last line without one).
    fn line(&mut self, line: &[u8]);
    /// A physical line too long to hold starts: what is owed before it (it is then passed
    /// on as it is, for the line splitter to skip as too long).
    fn too_long(&mut self);
    /// The input has ended.
    fn end(&mut self);
}

/// The physical lines of an input, read for an [`Unwrap`], a line too long to hold passed
/// on as it comes: the reading that container logs and log exports share.
pub struct LineSource<R> {
    reader: std::io::BufReader<R>,
    line: Vec<u8>,
    /// A physical line too long to hold is being passed on as it is.
    passing: bool,
    /// How much of the unwrapper's output has been read.
    at: usize,
}

impl<R: Read> LineSource<R> {
    pub fn new(inner: R) -> Self {
        LineSource {
            reader: std::io::BufReader::with_capacity(256 * 1024, inner),
            line: Vec::new(),
            passing: false,
            at: 0,
        }
    }

    /// The reader, for an input read whole rather than by lines.
    pub fn reader(&mut self) -> &mut impl BufRead {
        &mut self.reader
    }

    /// Reads as [`Read::read`] does what `unwrap` gives, unwrapping more lines once all it
    /// gave has been read.
    pub fn read(&mut self, buf: &mut [u8], unwrap: &mut impl Unwrap) -> io::Result<usize> {
        if self.at == unwrap.out().len() {
            unwrap.out().clear();
            self.at = 0;
            self.refill(unwrap)?;
        }
        Ok(serve(unwrap.out(), &mut self.at, buf))
    }

    /// Unwraps lines until 64 KiB are given or the input ends.
    fn refill(&mut self, unwrap: &mut impl Unwrap) -> io::Result<()> {
        const ROOM: usize = 64 * 1024;
        while unwrap.out().len() < ROOM {
            if self.passing {
                self.passing = !pass_on(&mut self.reader, unwrap.out(), ROOM)?;
                continue;
            }
            self.line.clear();
            let whole = read_line_up_to(&mut self.reader, &mut self.line, MAX_LINE + 1)?;
            if self.line.is_empty() {
                unwrap.end();
                return Ok(());
            }
            if whole {
                unwrap.line(&self.line);
            } else {
                unwrap.too_long();
                unwrap.out().extend_from_slice(&self.line);
                self.passing = true;
            }
        }
        Ok(())
    }
}

/// Copies what a decoding reader has ready (`out` from `at`) into `buf`, as much as fits,
/// and moves `at` past it: how many bytes were copied.
pub fn serve(out: &[u8], at: &mut usize, buf: &mut [u8]) -> usize {
    let n = buf.len().min(out.len() - *at);
    buf[..n].copy_from_slice(&out[*at..*at + n]);
    *at += n;
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_sit_among_the_parsers_in_line_order() {
        let mut stats = InputStats {
            lines: 4,
            ..InputStats::default()
        };
        stats.skip(2, "two");
        stats.skip(9, "nine");
        let mut long = TooLong::default();
        long.saw(5, 20 << 20, MAX_LINE);
        long.saw(11, 30 << 20, MAX_LINE);
        long.add_to(&mut stats);
        assert_eq!((stats.lines, stats.skipped), (6, 4));
        let lines: Vec<u32> = stats.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, [2, 5, 9, 11]);
        assert!(
            stats.problems[1]
                .reason
                .starts_with("line longer than 16 MiB (20971520 bytes): not read")
        );
        let mut small = TooLong::default();
        small.saw(1, 300, 256);
        let mut stats = InputStats::default();
        small.add_to(&mut stats);
        assert!(
            stats.problems[0]
                .reason
                .starts_with("line longer than 256 bytes (300 bytes)")
        );
    }

    #[test]
    fn a_line_is_read_up_to_a_limit_and_its_rest_passed_on() {
        let mut input = &b"short\nlonger line\nend"[..];
        let mut line = Vec::new();
        assert!(read_line_up_to(&mut input, &mut line, 8).unwrap());
        assert_eq!(line, b"short\n");
        line.clear();
        assert!(!read_line_up_to(&mut input, &mut line, 8).unwrap());
        assert_eq!(line, b"longer l");
        let mut out = Vec::new();
        assert!(!pass_on(&mut input, &mut out, 2).unwrap());
        assert!(pass_on(&mut input, &mut out, 100).unwrap());
        assert_eq!(out, b"ine\n");
        line.clear();
        assert!(read_line_up_to(&mut input, &mut line, 4).unwrap());
        assert_eq!(line, b"end");
        // A line of exactly the limit, its newline after it.
        let mut input = &b"abc\n"[..];
        line.clear();
        assert!(!read_line_up_to(&mut input, &mut line, 3).unwrap());
        assert!(pass_on(&mut input, &mut Vec::new(), 10).unwrap());
    }
}
