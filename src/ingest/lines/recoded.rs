//! A read's lines recoded at once when some of them are no UTF-8, so that lines a parser
//! reads ahead of the current one ([`super::Ahead`]) read as they are given one by one:
//! before, only the current line was read as Windows-1252, and a line read ahead was given
//! as its bytes (a pino-pretty member `orderId: "M\xFCller-1"` was no JSON string, and its
//! order was lost), nor counted in the input's note.

use super::as_given;
use crate::ingest::not_utf8::{NotUtf8, is_not_utf8, windows_1252_into};

/// A read's whole lines: `bytes` from `start`, each ended by one of `newlines` (places in
/// `bytes`), the first numbered `line_no + 1`, of a stream `coloured` or not.
pub(super) struct Lines<'a> {
    pub bytes: &'a [u8],
    pub start: usize,
    pub newlines: &'a [usize],
    pub line_no: u32,
    pub coloured: bool,
}

/// The lines into `out`, when any is no UTF-8 as given ([`as_given`]), each ended by its
/// newline, whose places go to `out_newlines`: such a line as given, read as Windows-1252,
/// and counted in `not_utf8`; any other as it is; then the bytes after the last newline, as
/// they are. `false`, with nothing written, when every line is UTF-8: one check of them all
/// (a line's bytes that are UTF-8 stay so as given, but for colour codes taken off, which the
/// caller checks line by line).
pub(super) fn recode_lines(
    lines: Lines,
    out: &mut Vec<u8>,
    out_newlines: &mut Vec<usize>,
    not_utf8: &mut NotUtf8,
) -> bool {
    let Some(&last) = lines.newlines.last() else {
        return false;
    };
    if std::str::from_utf8(&lines.bytes[lines.start..last]).is_ok() {
        return false;
    }
    out.clear();
    out_newlines.clear();
    let mut plain = Vec::new();
    let mut from = lines.start;
    for (k, &nl) in lines.newlines.iter().enumerate() {
        let n = lines.line_no.saturating_add(k as u32 + 1);
        let raw = &lines.bytes[from..nl];
        let given = as_given(raw, n, lines.coloured, &mut plain);
        if is_not_utf8(given) {
            not_utf8.saw(n);
            windows_1252_into(given, out);
        } else {
            out.extend_from_slice(raw);
        }
        out_newlines.push(out.len());
        out.push(b'\n');
        from = nl + 1;
    }
    out.extend_from_slice(&lines.bytes[from..]);
    true
}
