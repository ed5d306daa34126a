//! Lines that are no UTF-8 (a service logging in Latin-1 or Windows-1252): read as
//! Windows-1252, byte for byte, so that distinct bytes stay distinct text. Replacing the bad
//! bytes by U+FFFD made `M\xFCller-1` and `M\xF6ller-1` one order refunded twice, without a
//! word (review37 M3). A line is either UTF-8 or read so, whole; the input's note counts them.

/// How many of an input's lines were no UTF-8, and the first of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NotUtf8 {
    pub lines: u64,
    pub first: u32,
}

impl NotUtf8 {
    /// Counts line `line_no`, read as Windows-1252.
    pub fn saw(&mut self, line_no: u32) {
        if self.lines == 0 {
            self.first = line_no;
        }
        self.lines += 1;
    }

    /// The input's note, when any line was no UTF-8.
    pub fn note(&self) -> Option<String> {
        (self.lines > 0).then(|| {
            let (lines, are) = match self.lines {
                1 => ("line is", "it was"),
                _ => ("lines are", "they were"),
            };
            format!(
                "{} {lines} not UTF-8 (the first: line {}): {are} read as Windows-1252 \
                 (Latin-1), byte for byte, so that ids differing there stay distinct",
                self.lines, self.first
            )
        })
    }

    /// Adds the note, if any, to an input's accounts.
    pub fn add_to(&self, stats: &mut super::InputStats) {
        stats.notes.extend(self.note());
    }
}

/// The characters of Windows-1252's bytes 0x80 to 0x9F; its five unassigned bytes are the
/// C1 controls of the same number, as WHATWG's decoder reads them, so that no two bytes
/// read as one character. Bytes 0xA0 to 0xFF are Latin-1's, U+00A0 to U+00FF.
const C1: [char; 32] = [
    '\u{20AC}', '\u{0081}', '\u{201A}', '\u{0192}', '\u{201E}', '\u{2026}', '\u{2020}', '\u{2021}',
    '\u{02C6}', '\u{2030}', '\u{0160}', '\u{2039}', '\u{0152}', '\u{008D}', '\u{017D}', '\u{008F}',
    '\u{0090}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}', '\u{2014}',
    '\u{02DC}', '\u{2122}', '\u{0161}', '\u{203A}', '\u{0153}', '\u{009D}', '\u{017E}', '\u{0178}',
];

/// `bytes` read as Windows-1252, as UTF-8 appended to `out`.
pub fn windows_1252_into(bytes: &[u8], out: &mut Vec<u8>) {
    let mut buf = [0u8; 4];
    for &b in bytes {
        match b {
            0..0x80 => out.push(b),
            0x80..0xA0 => {
                out.extend_from_slice(C1[usize::from(b - 0x80)].encode_utf8(&mut buf).as_bytes())
            }
            _ => out.extend_from_slice(char::from(b).encode_utf8(&mut buf).as_bytes()),
        }
    }
}

/// Whether a row's or line's bytes are no UTF-8.
pub fn is_not_utf8(bytes: &[u8]) -> bool {
    !bytes.is_ascii() && std::str::from_utf8(bytes).is_err()
}

/// A field as text: read as Windows-1252 when its row is no UTF-8 (`not_utf8`), so that a
/// row is read one way throughout; else as the UTF-8 it is.
pub fn field_text(bytes: &[u8], not_utf8: bool) -> std::borrow::Cow<'_, str> {
    if !not_utf8 {
        return String::from_utf8_lossy(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 2);
    windows_1252_into(bytes, &mut out);
    std::borrow::Cow::Owned(String::from_utf8(out).expect("Windows-1252 read as UTF-8"))
}

/// `line` as UTF-8: itself when it is (the check only runs where `check` says a byte above
/// 127 may be in it), else read as Windows-1252 into `recoded`, and counted.
#[inline]
pub(super) fn as_utf8<'a>(
    line: &'a [u8],
    check: bool,
    line_no: u32,
    recoded: &'a mut Vec<u8>,
    not_utf8: &mut NotUtf8,
) -> &'a [u8] {
    if !check || line.is_ascii() || std::str::from_utf8(line).is_ok() {
        return line;
    }
    not_utf8.saw(line_no);
    recoded.clear();
    windows_1252_into(line, recoded);
    recoded
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> String {
        let mut out = Vec::new();
        windows_1252_into(bytes, &mut out);
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn every_byte_reads_as_its_own_character() {
        let all: Vec<u8> = (0..=255).collect();
        let text = read(&all);
        let chars: Vec<char> = text.chars().collect();
        assert_eq!(chars.len(), 256);
        let mut distinct = chars.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 256);
        assert_eq!(read(b"M\xFCller-1 \x80 \x93x\x94"), "Müller-1 € “x”");
        assert_ne!(read(b"M\xFCller-1"), read(b"M\xF6ller-1"));
    }

    #[test]
    fn only_lines_that_are_no_utf8_are_read_so_and_counted() {
        let mut seen = NotUtf8::default();
        let mut scratch = Vec::new();
        for (n, line) in [&b"plain"[..], "Müller".as_bytes(), b"M\xFCller", b"\xF6"]
            .iter()
            .enumerate()
        {
            let got = as_utf8(line, true, n as u32 + 1, &mut scratch, &mut seen).to_vec();
            assert!(std::str::from_utf8(&got).is_ok());
            assert_eq!(got == *line, n < 2);
        }
        assert_eq!(seen, NotUtf8 { lines: 2, first: 3 });
        assert!(
            seen.note()
                .unwrap()
                .starts_with("2 lines are not UTF-8 (the first: line 3)")
        );
        // Not checked: given as it is.
        assert_eq!(as_utf8(b"\xF6", false, 9, &mut scratch, &mut seen), b"\xF6");
        assert_eq!(NotUtf8::default().note(), None);
    }
}
