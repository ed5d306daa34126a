//! Terminal colour codes in a log file. Rust's `tracing-subscriber` writes them by default
//! even into a file (only `NO_COLOR` or `.with_ansi(false)` stops it), and so do many
//! loggers whose output was redirected: `\x1b[2m2026-12-06T05:25:09Z\x1b[0m \x1b[33m WARN\x1b[0m
//! ...`. Left in, no line had a timestamp, and the whole log was passed over. Lines are
//! read without them; a file without an escape byte costs one `memchr` per read.

const ESC: u8 = 0x1b;

/// Whether `bytes` hold an escape byte at all.
#[inline]
pub fn has_escape(bytes: &[u8]) -> bool {
    memchr::memchr(ESC, bytes).is_some()
}

/// `line` without its escape sequences, in `out` (cleared first): CSI sequences (`ESC [`
/// parameters, then one final byte: colours, cursor moves), OSC sequences (`ESC ]` up to
/// BEL or `ESC \`: hyperlinks) and two-byte escapes. An escape cut off at the line's end
/// is dropped with what follows it.
pub fn strip_into(line: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while let Some(n) = memchr::memchr(ESC, &line[i..]) {
        out.extend_from_slice(&line[i..i + n]);
        i += n + 1;
        i = match line.get(i) {
            Some(b'[') => {
                // Parameters and intermediates (0x20-0x3F), then the final byte (0x40-0x7E).
                let body = line[i + 1..]
                    .iter()
                    .position(|b| !(0x20..=0x3f).contains(b));
                body.map_or(line.len(), |p| i + 1 + p + 1)
            }
            Some(b']') => {
                let rest = &line[i + 1..];
                let bel = memchr::memchr(0x07, rest).map(|p| p + 1);
                let st = memchr::memmem::find(rest, b"\x1b\\").map(|p| p + 2);
                let end = match (bel, st) {
                    (Some(a), Some(b)) => a.min(b),
                    (a, b) => a.or(b).unwrap_or(rest.len()),
                };
                i + 1 + end
            }
            Some(_) => i + 1,
            None => line.len(),
        };
        i = i.min(line.len());
    }
    out.extend_from_slice(&line[i..]);
}

/// `bytes` without escape sequences, line by line (for a file's head, read to detect its
/// format).
pub fn stripped(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut line = Vec::new();
    for (k, part) in bytes.split(|&b| b == b'\n').enumerate() {
        if k > 0 {
            out.push(b'\n');
        }
        strip_into(part, &mut line);
        out.extend_from_slice(&line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(line: &[u8]) -> String {
        let mut out = Vec::new();
        strip_into(line, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn colour_codes_are_taken_out_and_the_text_kept() {
        // As tracing-subscriber's default layout writes a line.
        let line = b"\x1b[2m2026-12-06T05:25:09.467794Z\x1b[0m \x1b[33m WARN\x1b[0m \x1b[1missue_refund\x1b[0m\x1b[1m{\x1b[0m\x1b[3mrun\x1b[0m\x1b[2m=\x1b[0m\"7f3a\"\x1b[1m}\x1b[0m\x1b[2m:\x1b[0m \x1b[2magent::tools\x1b[0m\x1b[2m:\x1b[0m refund request timed out";
        assert_eq!(
            strip(line),
            "2026-12-06T05:25:09.467794Z  WARN issue_refund{run=\"7f3a\"}: agent::tools: refund request timed out"
        );
        // A hyperlink, ended by BEL or by ESC \.
        assert_eq!(
            strip(b"a\x1b]8;;http://x\x07link\x1b]8;;\x1b\\ b"),
            "alink b"
        );
        // Cut off at the end; a two-byte escape; nothing to take out.
        assert_eq!(strip(b"x\x1b[3"), "x");
        assert_eq!(strip(b"x\x1b"), "x");
        assert_eq!(strip(b"x\x1b7y"), "xy");
        assert_eq!(strip(b"plain = [1;2m]"), "plain = [1;2m]");
        assert_eq!(
            String::from_utf8(stripped(b"\x1b[2ma\x1b[0m\n\x1b[1mb\n")).unwrap(),
            "a\nb\n"
        );
    }
}
