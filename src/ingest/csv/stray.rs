//! A stray quote told from a quoted field with line breaks. RFC 4180 lets a quoted field
//! span lines, and PostgreSQL's COPY and spreadsheets write such fields (a note of several
//! lines); but a quote typed at the start of a field by mistake (`rf_1,"oops,...`) opens
//! one too, and the next `"` in the file closes it, joining every row between into one
//! record that the reader returns without complaint. Such a record is no record: its row is
//! skipped with why, and the lines after the stray quote's are read again as rows.

use super::counter::Span;
use crate::ingest::ParseOptions;
use crate::ingest::stamp::{parse_unix_seconds, parse_whole};

/// What a row of the export looks like: the header's number of fields, and the column of
/// its created time.
pub(super) struct RowShape<'a> {
    pub width: usize,
    pub created: Option<usize>,
    pub opts: &'a ParseOptions,
}

/// Which of `spans` (the quoted fields of `row` that ran past a line end, in order) is a
/// stray quote, and why, if one is. Lines are absolute: `before` lines precede the
/// counter's input. A spanning field is a stray quote when:
///
/// - its closing quote is followed by text, not by a delimiter, a line end or the end of
///   the file: no CSV writer closes a field so, while a stray quote is closed by the next
///   quote in the file, most often the opening quote of a later row's field (`,"ok",`);
/// - or a line it holds whole reads as a row of the export: the header's number of
///   fields, and a time in the created column. Lines of text seldom have both; rows do.
pub(super) fn stray(
    spans: &[Span],
    row: &csv::ByteRecord,
    shape: &RowShape,
    before: u32,
) -> Option<(usize, String)> {
    let fields = row
        .iter()
        .filter(|f| f.iter().any(|&b| b == b'\n' || b == b'\r'));
    for (k, (span, field)) in spans.iter().zip(fields).enumerate() {
        let opened = before + span.line;
        let closed = span.close.map_or(opened, |c| before + c.line);
        let tail = format!(
            "the row is skipped and the lines after line {opened} are read as rows of their own"
        );
        if span.close.is_some_and(|c| !c.clean) {
            return Some((
                k,
                format!(
                    "a stray quote: the quoted field opened on line {opened} is closed on line {closed} by a quote with text after it, as no CSV writer closes a field, joining lines {opened}-{closed} into one row; {tail}"
                ),
            ));
        }
        let inner = lines(field).enumerate().skip(1);
        let last = lines(field).count() - 1;
        if let Some((i, _)) = inner
            .take_while(|(i, _)| *i < last)
            .find(|(_, line)| reads_as_row(line, shape))
        {
            let whole = opened + i as u32;
            return Some((
                k,
                format!(
                    "a stray quote: the quoted field opened on line {opened} runs to line {closed}, over line {whole}, which reads as a row of this export ({} fields, a created time); {tail}",
                    shape.width
                ),
            ));
        }
    }
    None
}

/// The lines of a field's text, ended as the reader ends them (`\n`, `\r\n`, a lone `\r`).
fn lines(b: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(b);
    std::iter::from_fn(move || {
        let b = rest?;
        match b.iter().position(|&c| c == b'\n' || c == b'\r') {
            None => {
                rest = None;
                Some(b)
            }
            Some(i) => {
                let end = if b[i..].starts_with(b"\r\n") { 2 } else { 1 };
                rest = Some(&b[i + end..]);
                Some(&b[..i])
            }
        }
    })
}

/// A line inside a quoted field, read on its own as a row: there, every `"` is half of an
/// escaped `""` (a single one would have closed the field), so its fields are between its
/// commas.
fn reads_as_row(line: &[u8], shape: &RowShape) -> bool {
    let Some(created) = shape.created else {
        return false;
    };
    let mut n = 0;
    let mut at = None;
    for (i, f) in line.split(|&b| b == b',').enumerate() {
        n += 1;
        if i == created {
            at = Some(f.trim_ascii());
        }
    }
    n == shape.width && at.is_some_and(|t| is_time(t, shape.opts))
}

/// A written time, or unix time in seconds of nine digits or more (after 1973): a small
/// number in a line of text is no time.
fn is_time(t: &[u8], opts: &ParseOptions) -> bool {
    let digits = t.iter().take_while(|b| b.is_ascii_digit()).count();
    parse_whole(t, opts).is_some() || (digits >= 9 && parse_unix_seconds(t).is_some())
}
