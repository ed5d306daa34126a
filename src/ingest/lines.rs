//! Splits a byte stream into lines in large blocks with memchr, without reading the input
//! whole and without allocating per line. `\r\n` endings are trimmed; a last line without
//! a newline is still a line. NUL bytes at either end of a line are trimmed too: a log that
//! was being written when its machine crashed is often padded with NULs up to a block
//! boundary, and the next line the restarted service wrote follows the padding on the same
//! physical line; trimming keeps that line readable. A line that is no UTF-8 is given read
//! as Windows-1252 ([`super::not_utf8`]), and counted, read ahead or not ([`recoded`]): the
//! check runs only on reads that hold a byte above 127, so a log of ASCII pays one look at
//! each read ([`crate::scan::is_ascii`]). A line longer than
//! [`MAX_LINE`] is not held: it is dropped as it streams past, and counted
//! ([`super::long_lines`]).

use super::ansi;
use super::long_lines::TooLong;
pub use super::long_lines::{MAX_DOCUMENT_LINE, MAX_LINE};
use super::not_utf8::{NotUtf8, as_utf8};
use crate::scan::for_each_newline;
pub use ahead::Ahead;
use recoded::{Lines, recode_lines};
use std::io::{self, Read};
use std::ops::Range;

/// How far into a stream colour codes are looked for ([`ansi`]).
const COLOUR_SNIFF: u64 = 1 << 20;

/// A read's worth: 256 KiB, so that what `read` copied is still in the core's cache (2 MiB
/// of L2 here) when the parser reads it. 1 MiB was 1-3 % slower at 1 GB (alternating runs).
const BLOCK: usize = 1 << 18;

/// What reading an input's lines found besides the lines it gave: those that were no UTF-8
/// (given read as Windows-1252), and those too long to read (not given).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineNotes {
    pub not_utf8: NotUtf8,
    pub too_long: TooLong,
    /// The number of the last line, and whether no newline ended it.
    pub last_line: u32,
    pub last_line_cut: bool,
}

impl LineNotes {
    /// Adds them to an input's accounts: the note on lines that were no UTF-8, and the lines
    /// too long to read, counted as lines and skipped with their reasons.
    pub fn add_to(&self, stats: &mut super::InputStats) {
        self.not_utf8.add_to(stats);
        self.too_long.add_to(stats);
        stats.last_line = self.last_line;
        stats.last_line_cut = self.last_line_cut;
    }
}

/// Calls `each(line_number, bytes)` for every line of `reader`, numbering from 1; lines
/// that are no UTF-8, and lines longer than [`MAX_LINE`] (not given), are noted in `notes`.
/// Returns how many lines were given.
pub fn for_each_line<R: Read + ?Sized>(
    reader: &mut R,
    notes: &mut LineNotes,
    each: impl FnMut(u32, &[u8]),
) -> io::Result<u32> {
    for_each_line_up_to(reader, notes, MAX_LINE, each)
}

/// [`for_each_line`], with lines of up to `max_line` bytes read rather than [`MAX_LINE`]:
/// for a format whose events are documents of one line each ([`MAX_DOCUMENT_LINE`]).
pub fn for_each_line_up_to<R: Read + ?Sized>(
    reader: &mut R,
    notes: &mut LineNotes,
    max_line: usize,
    mut each: impl FnMut(u32, &[u8]),
) -> io::Result<u32> {
    read_lines(reader, notes, max_line, |n, _, line, _| {
        each(n, line);
        0
    })
}

/// [`for_each_line`], also giving where each line lies in the stream: from its first byte
/// to the first byte of the next line (its newline included), so that a caller can read
/// a run of lines again later.
pub fn for_each_line_at<R: Read + ?Sized>(
    reader: &mut R,
    notes: &mut LineNotes,
    mut each: impl FnMut(u32, Range<u64>, &[u8]),
) -> io::Result<u32> {
    for_each_line_ahead(reader, notes, |n, span, line, _| {
        each(n, span, line);
        0
    })
}

/// [`for_each_line_at`], also saying whether the last line was cut short
/// ([`Ahead::cut_short`]): for readers of records of several lines, whose last record
/// is read once the input has ended.
pub fn for_each_line_at_telling_cut<R: Read + ?Sized>(
    reader: &mut R,
    notes: &mut LineNotes,
    mut each: impl FnMut(u32, Range<u64>, &[u8]),
) -> io::Result<bool> {
    let mut cut = false;
    for_each_line_ahead(reader, notes, |n, span, line, ahead| {
        cut = ahead.cut_short();
        each(n, span, line);
        0
    })?;
    Ok(cut)
}

/// Why a last line with no newline after it that reads as no event is skipped
/// ([`Ahead::cut_short`]).
pub const CUT_SHORT: &str = "cut short (no newline at the end of the file) and read as no event: it may be the start of one; scan again once the writer has finished";

/// Why the last line of an input whose stream failed inside it (a `.gz` cut short) that
/// reads as no event is skipped ([`super::InputStats::failed`]).
pub const CUT_BY_FAILURE: &str = "cut short by the failure that ended the input's stream, and read as no event: it may be the start of one";

/// The places of the newlines in `bytes`, for [`Ahead::new`].
pub fn newlines_of(bytes: &[u8]) -> Vec<usize> {
    let mut places = Vec::new();
    push_newlines(bytes, 0, &mut places);
    places
}

/// Adds the places of `bytes`' newlines, counted from `from`, to `places`.
fn push_newlines(bytes: &[u8], from: usize, places: &mut Vec<usize>) {
    for_each_newline(bytes, |p| places.push(from + p));
}

/// [`for_each_line_at`], also giving the lines already read after each line ([`Ahead`]).
/// `each` returns how many of those lines it has read itself (whole lines only): they are
/// counted but not given to it. A parser that recognises a run of lines at once reads them
/// there rather than one call at a time. A whole line ahead that is no UTF-8 is read as
/// Windows-1252, as it is when given ([`Ahead::bytes`]); the others are as read.
pub fn for_each_line_ahead<R: Read + ?Sized>(
    reader: &mut R,
    notes: &mut LineNotes,
    each: impl FnMut(u32, Range<u64>, &[u8], Ahead) -> usize,
) -> io::Result<u32> {
    read_lines(reader, notes, MAX_LINE, each)
}

/// [`for_each_line_ahead`], reading lines of up to `max_line` bytes (before the newline).
/// The buffer never grows past `max_line + 1` bytes, so a whole line in it is never longer:
/// a line is known to be too long only when it fills the buffer, and ordinary lines pay
/// nothing for the check. A line that does is dropped as it streams past, counted in
/// `notes`, and not given; the count returned leaves it out.
fn read_lines<R: Read + ?Sized>(
    reader: &mut R,
    notes: &mut LineNotes,
    max_line: usize,
    mut each: impl FnMut(u32, Range<u64>, &[u8], Ahead) -> usize,
) -> io::Result<u32> {
    let mut buf: Vec<u8> = vec![0; BLOCK.min(max_line + 1)];
    // The places of the newlines of what the last read filled, all found at once.
    let mut newlines: Vec<usize> = Vec::new();
    let mut start = 0; // first byte of the pending (unterminated) line
    let mut end = 0; // bytes filled
    let mut base: u64 = 0; // stream offset of buf[0]
    let mut line_no: u32 = 0;
    // Colour codes seen: from then on each line is looked at for them ([`ansi`]).
    let mut coloured = false;
    let mut plain: Vec<u8> = Vec::new();
    // Whether the lines ending in this read may hold a byte above 127: one of its own, or
    // one of the line it continues (`check` of the read before, while a line is pending).
    let mut check = false;
    let mut recoded: Vec<u8> = Vec::new();
    // A read's whole lines as UTF-8, when some are not ([`recode_lines`]), and the places
    // of their newlines.
    let mut text: Vec<u8> = Vec::new();
    let mut text_newlines: Vec<usize> = Vec::new();
    // The bytes so far of the line too long to read being dropped, while one is.
    let mut dropping: Option<u64> = None;
    let too_long_before = notes.too_long.lines;
    loop {
        if end == buf.len() {
            if start > 0 {
                buf.copy_within(start..end, 0);
                end -= start;
                base += start as u64;
                start = 0;
            } else if buf.len() <= max_line {
                // One line longer than the buffer: grow rather than cut it.
                buf.resize((buf.len() * 2).min(max_line + 1), 0);
            } else {
                // Longer than `max_line`: what there is of it is dropped, the rest as it
                // comes, so that the buffer stays as it is.
                line_no = line_no.saturating_add(1);
                dropping = Some(end as u64);
                base += end as u64;
                end = 0;
            }
        }
        let n = match reader.read(&mut buf[end..]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let scan_from = end;
        end += n;
        check = (check && start < scan_from) || !crate::scan::is_ascii(&buf[scan_from..end]);
        // A coloured log is coloured from its first lines (a logger writes every line alike):
        // only the first MiB is looked at, so a month of plain logs pays nothing.
        if !coloured && base + (scan_from as u64) < COLOUR_SNIFF {
            coloured = ansi::has_escape(&buf[scan_from..end]);
        }
        newlines.clear();
        push_newlines(&buf[scan_from..end], scan_from, &mut newlines);
        let mut i = 0;
        if let Some(so_far) = dropping {
            // Dropping reads start at the buffer's start: the line ends at the first newline.
            match newlines.first() {
                Some(&nl) => {
                    notes.too_long.saw(line_no, so_far + nl as u64, max_line);
                    dropping = None;
                    start = nl + 1;
                    i = 1;
                }
                None => {
                    dropping = Some(so_far + end as u64);
                    base += end as u64;
                    end = 0;
                    continue;
                }
            }
        }
        // The lines as given: the read's own bytes, or, when some of its lines are no
        // UTF-8, all of them recoded at once into `text` (its newlines' places in
        // `text_newlines`, from the first line's, `newlines[first]`), so that lines read
        // ahead are given as they would be one by one.
        let first = i;
        let recode = check && {
            let lines = Lines {
                bytes: &buf[..end],
                start,
                newlines: &newlines[first..],
                line_no,
                coloured,
            };
            recode_lines(lines, &mut text, &mut text_newlines, &mut notes.not_utf8)
        };
        let mut text_start = 0;
        while let Some(&nl) = newlines.get(i) {
            line_no = line_no.saturating_add(1);
            let span = base + start as u64..base + nl as u64 + 1;
            let (raw, ahead) = match recode {
                false => (
                    &buf[start..nl],
                    Ahead {
                        bytes: &buf[nl + 1..end],
                        newlines: &newlines[i + 1..],
                        from: nl + 1,
                        cut: false,
                        recoded: false,
                    },
                ),
                true => {
                    let text_nl = text_newlines[i - first];
                    let ahead = Ahead {
                        bytes: &text[text_nl + 1..],
                        newlines: &text_newlines[i - first + 1..],
                        from: text_nl + 1,
                        cut: false,
                        recoded: true,
                    };
                    (&text[text_start..text_nl], ahead)
                }
            };
            let line = as_given(raw, line_no, coloured, &mut plain);
            // Only colour codes taken off can leave a line of a read of UTF-8 no UTF-8 (an
            // escape's last byte the first of a character); recoded lines are given as
            // they were decided.
            let check_line = check && coloured && !recode;
            let line = as_utf8(line, check_line, line_no, &mut recoded, &mut notes.not_utf8);
            // Lines read ahead are within this read: `each` reads only whole lines.
            let read = each(line_no, span, line, ahead);
            let read = read.min(newlines.len() - i - 1);
            line_no = line_no.saturating_add(read as u32);
            i += read;
            start = newlines[i] + 1;
            if recode {
                text_start = text_newlines[i - first] + 1;
            }
            i += 1;
        }
    }
    if let Some(so_far) = dropping {
        // The input ended inside it.
        notes.too_long.saw(line_no, so_far + end as u64, max_line);
    } else if start < end {
        line_no = line_no.saturating_add(1);
        let span = base + start as u64..base + end as u64;
        let line = as_given(&buf[start..end], line_no, coloured, &mut plain);
        let line = as_utf8(line, check, line_no, &mut recoded, &mut notes.not_utf8);
        // Blank bytes (NUL padding, a space) at the end are no line cut short.
        let cut = if line.trim_ascii().is_empty() {
            Ahead::NONE
        } else {
            Ahead::CUT
        };
        each(line_no, span, line, cut);
    }
    notes.last_line = line_no;
    notes.last_line_cut = dropping.is_some() || start < end;
    Ok(line_no - (notes.too_long.lines - too_long_before))
}

/// [`for_each_line_at`] over bytes already in memory, without a read buffer: the start of a
/// stream, or lines of one read again from where one of them starts (lines that are no
/// UTF-8 read as they were the first time, and counted then).
pub fn for_each_line_in(bytes: &[u8], mut each: impl FnMut(u32, Range<u64>, &[u8])) -> u32 {
    let mut line_no: u32 = 0;
    let mut start = 0;
    let coloured = ansi::has_escape(bytes);
    let mut plain: Vec<u8> = Vec::new();
    let check = !bytes.is_ascii();
    let mut recoded: Vec<u8> = Vec::new();
    let mut uncounted = NotUtf8::default();
    while start < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |p| start + p + 1);
        line_no = line_no.saturating_add(1);
        let line = bytes[start..end]
            .strip_suffix(b"\n")
            .unwrap_or(&bytes[start..end]);
        let line = as_given(line, line_no, coloured, &mut plain);
        let line = as_utf8(line, check, line_no, &mut recoded, &mut uncounted);
        each(line_no, start as u64..end as u64, line);
        start = end;
    }
    line_no
}

/// Line `line_no` of a stream as given, but for its reading as Windows-1252: without its
/// `\r`, NULs at either end, a first line's byte-order mark, and colour codes when its
/// stream has any (copied into `plain`).
#[inline]
fn as_given<'a>(raw: &'a [u8], line_no: u32, coloured: bool, plain: &'a mut Vec<u8>) -> &'a [u8] {
    let line = trim_line(raw);
    let line = if line_no == 1 {
        without_bom(line)
    } else {
        line
    };
    without_colour(line, coloured, plain)
}

/// `line` without terminal colour codes, when its stream has any (copied into `plain`).
#[inline]
fn without_colour<'a>(line: &'a [u8], coloured: bool, plain: &'a mut Vec<u8>) -> &'a [u8] {
    if !coloured || !ansi::has_escape(line) {
        return line;
    }
    ansi::strip_into(line, plain);
    plain
}

/// The UTF-8 byte-order mark that Windows tools write before a file's first line.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A stream's first line without a byte-order mark: left on, it made that line no JSON and
/// no timestamp, and an OTLP file that is one document lost every span. Only the first
/// line: a mark anywhere else is the line's own bytes.
fn without_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(BOM).unwrap_or(line)
}

/// A line as given to callers: without its `\r`, nor NULs at either end.
pub(crate) fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.first() != Some(&0) && line.last() != Some(&0) {
        return line;
    }
    let start = line.iter().position(|&b| b != 0).unwrap_or(line.len());
    let end = line.iter().rposition(|&b| b != 0).map_or(start, |i| i + 1);
    &line[start..end]
}

mod ahead;
mod recoded;
#[cfg(test)]
mod tests;
