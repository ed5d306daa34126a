//! UTF-16 text read as UTF-8, as it streams: Windows PowerShell 5's `>` and `Out-File` write
//! UTF-16 LE with a byte-order mark, and such a log was passed over as no log (or every line
//! skipped as having no timestamp) while every line had one (review37 M2). A mark decides;
//! without one, a head whose every other byte is NUL is UTF-16 too, and said to be a guess.
//! Unpaired surrogates become U+FFFD, counted with the line of the first.

use std::io::{self, Read};
use std::sync::Mutex;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endian {
    Little,
    Big,
}

/// How an input's head says it is UTF-16.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Utf16 {
    pub endian: Endian,
    /// Told by a byte-order mark (which the reading then takes off), rather than by NULs.
    pub marked: bool,
}

/// How much of the head the NULs are counted in, when there is no mark.
const NUL_SNIFF: usize = 1024;

/// Whether `head` (an input's first bytes, decompressed) is UTF-16, and which.
pub fn sniff(head: &[u8]) -> Option<Utf16> {
    // UTF-32 LE's mark starts as UTF-16 LE's does: not this.
    if head.starts_with(b"\xFF\xFE") && !head.starts_with(b"\xFF\xFE\0\0") {
        return Some(Utf16 {
            endian: Endian::Little,
            marked: true,
        });
    }
    if head.starts_with(b"\xFE\xFF") {
        return Some(Utf16 {
            endian: Endian::Big,
            marked: true,
        });
    }
    // Text of ASCII characters has a NUL as every other byte and few elsewhere. A head of
    // NULs (a crash's padding) has them everywhere, and a binary file no such pattern.
    let head = &head[..head.len().min(NUL_SNIFF) & !1];
    if head.len() < 16 {
        return None;
    }
    let pairs = head.len() / 2;
    let nuls = |parity: usize| {
        head.iter()
            .skip(parity)
            .step_by(2)
            .filter(|&&b| b == 0)
            .count()
    };
    let (even, odd) = (nuls(0), nuls(1));
    let mostly = |n: usize| n * 10 >= pairs * 9;
    let few = |n: usize| n * 10 < pairs;
    let endian = if mostly(odd) && few(even) {
        Endian::Little
    } else if mostly(even) && few(odd) {
        Endian::Big
    } else {
        return None;
    };
    Some(Utf16 {
        endian,
        marked: false,
    })
}

/// What a decoding found, for the input's note.
#[derive(Debug)]
pub struct Decoded {
    pub how: Utf16,
    /// Unpaired surrogates (and a last odd byte) replaced, and the line of the first.
    damage: Mutex<(u64, u32)>,
}

impl Decoded {
    pub fn new(how: Utf16) -> Self {
        Decoded {
            how,
            damage: Mutex::new((0, 0)),
        }
    }

    /// The note for the input's report: when the encoding was guessed, or characters were
    /// replaced; a marked file decoded whole needs none.
    pub fn note(&self) -> Option<String> {
        let (replaced, first) = *self.damage.lock().unwrap_or_else(|e| e.into_inner());
        let endian = match self.how.endian {
            Endian::Little => "LE",
            Endian::Big => "BE",
        };
        let mut note = match self.how.marked {
            true if replaced == 0 => return None,
            true => format!("read as UTF-16 {endian} (its byte-order mark)"),
            false => format!(
                "read as UTF-16 {endian}, told by its NUL bytes: it has no byte-order mark \
                 (if that is wrong, convert it: iconv -f UTF-16{endian} -t UTF-8)"
            ),
        };
        if replaced > 0 {
            note.push_str(&format!(
                "; {replaced} unpaired surrogate{} (damaged characters) replaced by U+FFFD, \
                 the first on line {first}",
                if replaced == 1 { "" } else { "s" }
            ));
        }
        Some(note)
    }
}

/// Reads UTF-16 from `inner` (after the mark, if any) and gives UTF-8.
pub struct Decoder<R> {
    inner: R,
    decoded: std::sync::Arc<Decoded>,
    /// Bytes read but not yet decoded: an odd byte, or a high surrogate's two.
    carry: Vec<u8>,
    raw: Vec<u8>,
    out: Vec<u8>,
    at: usize,
    /// The line being decoded (from 1), for the first replacement's place.
    line: u32,
    mark_checked: bool,
    ended: bool,
}

/// Bytes of UTF-16 read at a time.
const CHUNK: usize = 64 * 1024;

impl<R: Read> Decoder<R> {
    pub fn new(inner: R, decoded: std::sync::Arc<Decoded>) -> Self {
        Decoder {
            inner,
            decoded,
            carry: Vec::new(),
            raw: vec![0; CHUNK],
            out: Vec::with_capacity(CHUNK * 3 / 2),
            at: 0,
            line: 1,
            mark_checked: false,
            ended: false,
        }
    }

    /// Decodes the next chunk into `out`; false at the end.
    fn refill(&mut self) -> io::Result<bool> {
        self.out.clear();
        self.at = 0;
        while self.out.is_empty() && !self.ended {
            let n = loop {
                match self.inner.read(&mut self.raw) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            };
            self.ended = n == 0;
            let mut bytes = std::mem::take(&mut self.carry);
            bytes.extend_from_slice(&self.raw[..n]);
            if !self.mark_checked && (bytes.len() >= 2 || self.ended) {
                self.mark_checked = true;
                if self.decoded.how.marked && bytes.len() >= 2 {
                    bytes.drain(..2);
                }
            } else if !self.mark_checked {
                self.carry = bytes;
                continue;
            }
            self.decode(bytes);
        }
        Ok(!self.out.is_empty())
    }

    fn decode(&mut self, mut bytes: Vec<u8>) {
        let unit = |p: &[u8]| match self.decoded.how.endian {
            Endian::Little => u16::from_le_bytes([p[0], p[1]]),
            Endian::Big => u16::from_be_bytes([p[0], p[1]]),
        };
        // An odd byte, or a high surrogate whose pair is in the next read, waits for it.
        let whole = bytes.len() & !1;
        let mut end = whole;
        if !self.ended && end >= 2 && (0xD800..0xDC00).contains(&unit(&bytes[end - 2..end])) {
            end -= 2;
        }
        let units = bytes[..end].chunks_exact(2).map(unit);
        let mut replaced = 0u64;
        let mut first = None;
        let mut buf = [0u8; 4];
        for c in char::decode_utf16(units) {
            let c = c.unwrap_or_else(|_| {
                replaced += 1;
                first.get_or_insert(self.line);
                char::REPLACEMENT_CHARACTER
            });
            if c == '\n' {
                self.line = self.line.saturating_add(1);
            }
            self.out
                .extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        if self.ended && whole < bytes.len() {
            // A last odd byte: half a character, cut off.
            replaced += 1;
            first.get_or_insert(self.line);
            self.out
                .extend_from_slice(char::REPLACEMENT_CHARACTER.encode_utf8(&mut buf).as_bytes());
            end = bytes.len();
        }
        if replaced > 0 {
            let mut damage = self
                .decoded
                .damage
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if damage.0 == 0 {
                damage.1 = first.unwrap_or(self.line);
            }
            damage.0 += replaced;
        }
        bytes.drain(..end);
        self.carry = bytes;
    }
}

impl<R: Read> Read for Decoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.out.len() && !self.refill()? {
            return Ok(0);
        }
        Ok(super::long_lines::serve(&self.out, &mut self.at, buf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn le(text: &str, mark: bool) -> Vec<u8> {
        let mut bytes = if mark { vec![0xFF, 0xFE] } else { vec![] };
        bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        bytes
    }

    /// Decoded through a reader that gives `step` bytes a read, so pairs and characters are
    /// cut between reads.
    fn decode(bytes: &[u8], step: usize) -> (String, Option<String>) {
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let how = sniff(bytes).expect("UTF-16");
        let decoded = Arc::new(Decoded::new(how));
        let mut out = String::new();
        Decoder::new(Trickle(bytes, step), decoded.clone())
            .read_to_string(&mut out)
            .unwrap();
        (out, decoded.note())
    }

    #[test]
    fn marked_text_reads_as_its_utf8_whatever_the_reads() {
        let text = "14:02:11.402  agent run 7f3a  tool=issue_refund  args={\"order\":\"Müller-€1 😀\"}\r\nb\n";
        for step in [1, 2, 3, 5, 4096] {
            assert_eq!(decode(&le(text, true), step), (text.to_string(), None));
            let mut be = vec![0xFE, 0xFF];
            be.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
            assert_eq!(decode(&be, step), (text.to_string(), None));
        }
    }

    #[test]
    fn unpaired_surrogates_are_replaced_and_counted_from_their_line() {
        let mut bytes = le("a\nb", true);
        bytes.extend_from_slice(&0xD800u16.to_le_bytes());
        bytes.extend(le("c\n", false));
        bytes.extend_from_slice(&0xDC00u16.to_le_bytes());
        bytes.push(b'x');
        for step in [1, 3, 4096] {
            let (text, note) = decode(&bytes, step);
            assert_eq!(text, "a\nb\u{FFFD}c\n\u{FFFD}\u{FFFD}");
            let note = note.expect("a note");
            assert!(note.contains("3 unpaired surrogates"), "{note}");
            assert!(note.contains("the first on line 2"), "{note}");
        }
    }

    #[test]
    fn nul_bytes_every_other_say_utf16_without_a_mark_and_nothing_else_does() {
        let text = "14:02:11.402  agent run 7f3a  step 4  ok\n";
        let unmarked = le(text, false);
        assert_eq!(
            sniff(&unmarked),
            Some(Utf16 {
                endian: Endian::Little,
                marked: false
            })
        );
        let (read, note) = decode(&unmarked, 7);
        assert_eq!(read, text);
        assert!(note.unwrap().contains("iconv -f UTF-16LE -t UTF-8"));
        for other in [
            text.as_bytes().to_vec(),
            vec![0; 4096],
            b"\xFF\xFE\0\0a\0\0\0".to_vec(),
            b"\xEF\xBB\xBFa".to_vec(),
            [&[0u8; 512][..], text.as_bytes()].concat(),
        ] {
            assert_eq!(sniff(&other), None, "{other:?}");
        }
    }
}
