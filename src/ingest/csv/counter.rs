//! The physical lines of a CSV input, counted as the `csv` crate reads it, so that every row
//! is cited on the line it starts on and `lines = events + ignored + skipped` holds per
//! physical line even when a quoted field spans several. It also follows the reader's
//! quoting, to see the quoted fields that run past a line end and how they close: the CSV
//! reader says neither, and a stray quote is told by them (see `super::stray`).

use crate::ingest::long_lines::MAX_LINE;
use std::collections::VecDeque;
use std::io::{self, Read};

/// Counts the lines read through it. Like the CSV reader, it ends a line at `\n`, `\r\n` or
/// a lone `\r` (old Mac exports).
pub(crate) struct LineCounter<R> {
    pub inner: R,
    ends: u64,
    last: Option<u8>,
    /// Bytes read so far.
    offset: u64,
    /// The line-end bytes the CSV reader's position misplaces a record by, with their
    /// offsets and what they are ([`SKIPPED`], [`LF`], [`LONE_CR`]), until
    /// [`LineCounter::line_of`] passes them. Bounded by the reader's read-ahead; one a line
    /// for `\r\n` lines, none for `\n` lines without blank ones.
    marks: VecDeque<(u64, u8)>,
    /// Lone `\r`s passed by [`LineCounter::line_of`].
    lone_crs: u64,
    /// Where RFC 4180 quoting is after the bytes read so far, as the reader sees it.
    quote: Quoting,
    /// The quoted fields that ran past a line end, in records not placed yet, oldest first
    /// (followed only by a counter that keeps them).
    spans: VecDeque<Span>,
    /// The bytes read from the end of the line the oldest of `spans` ran past on, when kept:
    /// the lines to read again as rows if its record is no record. Empty while no quoted
    /// field spans lines (the common case).
    kept: Option<Vec<u8>>,
    /// The offset of `kept`'s first byte.
    kept_from: u64,
    /// The input has been read to its end.
    eof: bool,
    /// Bytes given to the reader since the record being read started (the last line end
    /// outside quotes), up to [`MAX_LINE`].
    record_len: usize,
    /// The records longer than that, cut there ([`LineCounter::cut_long`]), oldest first:
    /// where each was cut (as the reader counts bytes) and its whole length.
    long: VecDeque<(u64, u64)>,
    /// The rest of such a record is being dropped, up to its line's end.
    dropping: bool,
}

/// A line-end byte right after another (or first in the input): the `\n` of a `\r\n`, a
/// blank line. The reader places the next record before such bytes, which it skips as part
/// of that record.
const SKIPPED: u8 = 1;
/// A `\n`: the reader counts it when it reads it.
const LF: u8 = 2;
/// A lone `\r`: a line end the reader never counts (known once the byte after it is read).
const LONE_CR: u8 = 4;

/// A quoted field that ran past the end of the line it opened on.
#[derive(Clone, Copy, Debug)]
pub(super) struct Span {
    /// That line (1-based, of the counter's input).
    pub line: u32,
    /// The offset of that line's end, where the lines it may swallow start.
    pub end: u64,
    /// How it closed, once it has.
    pub close: Option<Close>,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Close {
    /// The line of the closing quote.
    pub line: u32,
    /// Followed by a delimiter, a line end or the end of the input, as every CSV writer
    /// closes a field; else by text (`"ok"`: the opening quote of a later field).
    pub clean: bool,
}

/// The reader's quoting state (csv-core's, with its defaults: `"` quotes, `""` escapes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Quoting {
    FieldStart,
    Unquoted,
    Quoted,
    /// A `"` inside a quoted field: an escaped `""`, or the field's closing quote.
    QuoteInQuoted,
}

impl Quoting {
    fn after(self, b: u8) -> Quoting {
        let ends_field = matches!(b, b',' | b'\n' | b'\r');
        match self {
            Quoting::FieldStart if b == b'"' => Quoting::Quoted,
            Quoting::Quoted if b == b'"' => Quoting::QuoteInQuoted,
            Quoting::Quoted => Quoting::Quoted,
            Quoting::QuoteInQuoted if b == b'"' => Quoting::Quoted,
            _ if ends_field => Quoting::FieldStart,
            // A `"` inside an unquoted field, or after a closing quote, is kept as text.
            _ => Quoting::Unquoted,
        }
    }
}

impl<R: Read> Read for LineCounter<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let n = self.inner.read(buf)?;
            self.eof |= n == 0 && !buf.is_empty();
            // Bytes given to the reader, moved down over any dropped.
            let mut given = 0;
            for i in 0..n {
                let b = buf[i];
                let line_end = matches!(b, b'\n' | b'\r');
                if self.dropping && !line_end {
                    if let Some((_, len)) = self.long.back_mut() {
                        *len += 1;
                    }
                    continue;
                }
                self.dropping = false;
                let b = if self.record_len >= MAX_LINE && !(line_end && self.quote_closed()) {
                    match self.cut_long(self.offset + given as u64) {
                        Some(quote) => quote,
                        None => continue,
                    }
                } else {
                    b
                };
                buf[given] = b;
                self.count(b, self.offset + given as u64);
                given += 1;
            }
            self.offset += given as u64;
            if given > 0 || n == 0 {
                return Ok(given);
            }
        }
    }
}

impl<R> LineCounter<R> {
    /// Counts byte `b`, given to the reader at `at`.
    #[inline]
    fn count(&mut self, b: u8, at: u64) {
        // A `\r` ends a line unless a `\n` follows it; the `\n` then ends it.
        if self.last == Some(b'\r') && b != b'\n' {
            self.ends += 1;
            match self.marks.back_mut() {
                Some((offset, flags)) if *offset == at - 1 => *flags |= LONE_CR,
                _ => self.marks.push_back((at - 1, LONE_CR)),
            }
        }
        self.follow_quoting(b, at);
        if matches!(b, b'\n' | b'\r') {
            if matches!(self.last, None | Some(b'\r' | b'\n')) {
                let lf = if b == b'\n' { LF } else { 0 };
                self.marks.push_back((at, SKIPPED | lf));
            }
            self.ends += u64::from(b == b'\n');
        }
        self.record_len = match matches!(b, b'\n' | b'\r') && self.quote_closed() {
            true => 0,
            false => self.record_len + 1,
        };
        self.last = Some(b);
    }

    /// Whether the quoting is outside any quoted field (or just past a closing quote).
    fn quote_closed(&self) -> bool {
        !matches!(self.quote, Quoting::Quoted)
    }

    /// The record being read has reached [`MAX_LINE`] bytes and goes on: it is cut here (at
    /// `at`, as the reader counts),
    /// noted, and the rest of its line dropped, so that the reader holds no more of it.
    /// The reader is given a closing quote when the cut falls inside a quoted field, so that
    /// the line's end ends the record; the lines after it are read as rows.
    #[cold]
    fn cut_long(&mut self, at: u64) -> Option<u8> {
        self.long.push_back((at, self.record_len as u64 + 1));
        self.dropping = true;
        (self.quote == Quoting::Quoted).then_some(b'"')
    }

    /// The length of a record cut as too long ([`LineCounter::cut_long`]) among the
    /// records the reader has returned up to `end`: the last of them, when it is the one.
    pub fn cut_long_before(&mut self, end: u64) -> Option<u64> {
        let mut len = None;
        while self.long.front().is_some_and(|&(at, _)| at < end) {
            len = self.long.pop_front().map(|(_, whole)| whole);
        }
        len
    }
}

impl<R> LineCounter<R> {
    pub fn new(inner: R) -> Self {
        LineCounter {
            inner,
            ends: 0,
            last: None,
            offset: 0,
            marks: VecDeque::new(),
            lone_crs: 0,
            quote: Quoting::FieldStart,
            spans: VecDeque::new(),
            kept: None,
            kept_from: 0,
            eof: false,
            record_len: 0,
            long: VecDeque::new(),
            dropping: false,
        }
    }

    /// A counter that follows the quoted fields spanning lines and keeps the lines after
    /// them until their records are judged, to read them again as rows if a record is no
    /// record (an input read once, as a stream).
    pub fn keeping(inner: R) -> Self {
        LineCounter {
            kept: Some(Vec::new()),
            ..LineCounter::new(inner)
        }
    }

    /// `b`, at `offset`, read after the bytes before it. Called with the lines ended before
    /// `b` counted, and `b`'s own `\n` not yet.
    #[inline]
    fn follow_quoting(&mut self, b: u8, offset: u64) {
        self.quote = self.quote.after(b);
        let Some(kept) = &mut self.kept else {
            return;
        };
        let open = self.spans.back_mut().filter(|s| s.close.is_none());
        match open {
            Some(span) if self.quote != Quoting::Quoted && self.quote != Quoting::QuoteInQuoted => {
                span.close = Some(Close {
                    line: self.ends as u32 + 1,
                    clean: self.quote == Quoting::FieldStart,
                });
            }
            None if self.quote == Quoting::Quoted && matches!(b, b'\n' | b'\r') => {
                if self.spans.is_empty() {
                    kept.clear();
                    self.kept_from = offset;
                }
                self.spans.push_back(Span {
                    line: self.ends as u32 + 1,
                    end: offset,
                    close: None,
                });
            }
            _ => {}
        }
        if !self.spans.is_empty() {
            kept.push(b);
        }
    }

    /// The 1-based line a record starts on. The CSV reader places a record where the one
    /// before it ended, before the line ends it skips (blank lines; the `\n` of a `\r\n`),
    /// and counts lines by `\n` alone: the record's first byte is past those line ends, and
    /// a lone `\r` ends a line too.
    pub fn line_of(&mut self, pos: &csv::Position) -> u32 {
        let mut at = pos.byte();
        let mut line = pos.line();
        while let Some(&(offset, flags)) = self.marks.front() {
            if offset > at {
                break;
            }
            self.marks.pop_front();
            // The record has been read: every lone `\r` before its first byte is known.
            self.lone_crs += u64::from(flags & LONE_CR != 0);
            if offset == at && flags & SKIPPED != 0 {
                // A line end the record starts after; a `\n` there is not in the reader's
                // count yet.
                at += 1;
                line += u64::from(flags & LF != 0);
            }
        }
        (line + self.lone_crs) as u32
    }

    pub fn lines(&self) -> u64 {
        // A trailing `\r` ends the last line; any other last byte leaves one unterminated.
        self.ends + u64::from(self.last.is_some_and(|b| b != b'\n'))
    }

    /// Whether the input read so far ends inside a line: its last byte is no line end.
    pub fn ends_inside_line(&self) -> bool {
        self.last.is_some_and(|b| b != b'\n' && b != b'\r')
    }

    /// Whether the record the reader returned last, ending at `end` (its position then), is
    /// the input's last and no line end follows it: a row cut short by the end of the file.
    pub fn cut_at(&self, end: u64) -> bool {
        self.eof && end == self.offset && !matches!(self.last, None | Some(b'\n' | b'\r'))
    }

    /// Whether the input ended inside a quoted field: the record the reader returned last
    /// then runs from that field to the end of the input.
    pub fn ended_in_quotes(&self) -> bool {
        self.eof && self.quote == Quoting::Quoted
    }

    /// Whether a quoted field of the record that ends at `end` (the reader's position once
    /// it returned the record) ran past a line end.
    #[inline]
    pub(super) fn spans_before(&self, end: u64) -> bool {
        self.spans.front().is_some_and(|s| s.end < end)
    }

    /// The spans of the record that ends at `end`, no longer followed.
    pub(super) fn take_spans(&mut self, end: u64) -> Vec<Span> {
        // A field whose closing quote is the input's last byte closed as cleanly as one
        // a line end follows.
        if self.eof && self.quote == Quoting::QuoteInQuoted {
            let line = self.lines() as u32;
            if let Some(open) = self.spans.back_mut().filter(|s| s.close.is_none()) {
                open.close = Some(Close { line, clean: true });
            }
        }
        let n = self.spans.iter().take_while(|s| s.end < end).count();
        self.spans.drain(..n).collect()
    }

    /// The record of the spans taken last is a record: the lines after them need not be
    /// kept.
    pub(super) fn release(&mut self) {
        let Some(kept) = &mut self.kept else {
            return;
        };
        match self.spans.front() {
            None => kept.clear(),
            Some(next) => {
                kept.drain(..(next.end - self.kept_from) as usize);
                self.kept_from = next.end;
            }
        }
    }

    /// The bytes read after the line end at `end` (a span's), to be read again: the
    /// counter keeps no more.
    pub(super) fn kept_after(&mut self, end: u64) -> Vec<u8> {
        let mut kept = self.kept.take().unwrap_or_default();
        let from = (end.saturating_sub(self.kept_from) as usize).min(kept.len());
        let rest = &kept[from..];
        let rest = rest.strip_prefix(b"\r").unwrap_or(rest);
        let rest = rest.strip_prefix(b"\n").unwrap_or(rest);
        let skip = kept.len() - rest.len();
        kept.drain(..skip);
        kept
    }
}
