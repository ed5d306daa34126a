//! Logs as container runtimes store them, each line of the application's wrapped in one of
//! the runtime's: the CRI format of containerd and CRI-O (Kubernetes' `/var/log/pods`),
//! `2026-11-03T14:02:11.501234567Z stdout F <line>`, and Docker's `json-file` driver,
//! `{"log":"<line>\n","stream":"stdout","time":"2026-11-03T14:02:11.501234567Z"}`. The
//! wrapper is taken off as the file is read, so the application's lines are detected and
//! parsed in their own format; a line the runtime split (CRI's `P`, Docker's entry without
//! a newline) is joined to the rest of it, and each physical line still gives one line, so
//! that `path:line` points where it did (the parts before the last are left blank). A line
//! of the application without a timestamp takes the runtime's.

use super::long_lines::{MAX_LINE, pass_on, read_line_up_to};
use std::io::{self, BufReader, Read};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrapper {
    Cri,
    DockerJson,
}

/// The wrapper of a file whose first line of content (in `head`) is a container runtime's.
pub fn wrapper_of(head: &[u8]) -> Option<Wrapper> {
    let line = head
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .find(|l| !l.is_empty())?;
    if cri_parts(line).is_some() {
        Some(Wrapper::Cri)
    } else if line.starts_with(b"{\"log\":") && docker_entry(line).is_some() {
        Some(Wrapper::DockerJson)
    } else {
        None
    }
}

/// `TIME STREAM TAG MESSAGE` (the tag `F` for a full line, `P` for a part): time, whether
/// full, message.
fn cri_parts(line: &[u8]) -> Option<(&[u8], bool, &[u8])> {
    let mut parts = line.splitn(4, |&b| b == b' ');
    let (time, stream, tag) = (parts.next()?, parts.next()?, parts.next()?);
    let message = parts.next().unwrap_or_default();
    let dated = time.len() >= 20 && crate::ingest::starts_with_timestamp(time) && time[10] == b'T';
    let stream_ok = stream == b"stdout" || stream == b"stderr";
    let full = match tag {
        b"F" => true,
        b"P" => false,
        _ => return None,
    };
    (dated && stream_ok).then_some((time, full, message))
}

#[derive(serde::Deserialize)]
struct DockerEntry {
    log: String,
    #[serde(default)]
    time: String,
}

fn docker_entry(line: &[u8]) -> Option<DockerEntry> {
    serde_json::from_slice(line).ok()
}

/// The application's lines of a wrapped file, as bytes to read.
pub struct Unwrapped<R> {
    inner: BufReader<R>,
    wrapper: Wrapper,
    line: Vec<u8>,
    /// The parts of a split line read so far.
    partial: Vec<u8>,
    out: Vec<u8>,
    at: usize,
    /// Inside an object the application pretty-printed, from a `{` alone at the margin to a
    /// `}` alone there (an SDK's console exporter's spans): its lines are passed on as they
    /// are, since a stamp before each would break it.
    in_object: bool,
    /// A physical line too long to hold is being passed on as it is ([`Self::refill`]).
    passing: bool,
    /// A split line whose parts grew too long to hold is being passed on as its parts come:
    /// how many of its physical lines have passed, each owing the blank line it stands for.
    joined_long: Option<u32>,
}

impl<R: Read> Unwrapped<R> {
    pub fn new(inner: R, wrapper: Wrapper) -> Self {
        Unwrapped {
            inner: BufReader::with_capacity(256 * 1024, inner),
            wrapper,
            line: Vec::new(),
            partial: Vec::new(),
            out: Vec::new(),
            at: 0,
            in_object: false,
            passing: false,
            joined_long: None,
        }
    }

    /// The application's whole line, with the runtime's `time` ([`emit`]), or as it is
    /// inside a pretty-printed object.
    fn emit(&mut self, time: &[u8]) {
        if self.joined_long.is_some() {
            return self.end_joined_long();
        }
        let line = self.partial.strip_suffix(b"\r").unwrap_or(&self.partial);
        match (self.in_object, line) {
            (false, b"{") => self.in_object = true,
            (true, b"}") => self.in_object = false,
            _ => {}
        }
        if self.in_object || line == b"}" {
            self.out.extend_from_slice(line);
        } else {
            emit(&mut self.out, time, &self.partial);
        }
        self.partial.clear();
    }

    /// A part of a split line: held until the line's last part, unless the line grows past
    /// [`MAX_LINE`]; it is then passed on as its parts come, for the line splitter to skip
    /// as too long, and the blank lines that stand for its parts follow it.
    fn part(&mut self, message: &[u8]) {
        if self.joined_long.is_some() {
            self.out.extend_from_slice(message);
        } else {
            self.partial.extend_from_slice(message);
            if self.partial.len() > MAX_LINE {
                self.out.append(&mut self.partial);
                self.joined_long = Some(0);
            }
        }
    }

    /// A part that is not the line's last: its physical line stands for a blank line, owed
    /// until the line ends when the line is being passed on.
    fn part_before_last(&mut self, message: &[u8]) {
        self.part(message);
        if let Some(parts) = &mut self.joined_long {
            *parts += 1;
        }
    }

    /// Ends a split line being passed on ([`Self::part`]), with the blank lines its parts
    /// owe (the line's last physical line adds its own newline).
    fn end_joined_long(&mut self) {
        if let Some(parts) = self.joined_long.take() {
            self.out.extend(std::iter::repeat_n(b'\n', parts as usize));
        }
    }

    /// Unwraps lines into `out` until it holds some or the input ends.
    fn refill(&mut self) -> io::Result<()> {
        self.out.clear();
        self.at = 0;
        while self.out.len() < 64 * 1024 {
            if self.passing {
                self.passing = !pass_on(&mut self.inner, &mut self.out, 64 * 1024)?;
                continue;
            }
            self.line.clear();
            let whole = read_line_up_to(&mut self.inner, &mut self.line, MAX_LINE + 1)?;
            if self.line.is_empty() {
                self.end_joined_long();
                if !self.partial.is_empty() {
                    // A split line the file ends inside: what there is of it.
                    self.out.append(&mut self.partial);
                    self.out.push(b'\n');
                }
                return Ok(());
            }
            if !whole {
                // No runtime writes such a line: passed on as it is, for the line splitter
                // to skip as too long.
                self.end_joined_long();
                self.out.extend_from_slice(&self.line);
                self.passing = true;
                continue;
            }
            // Taken out while it is read, so that `emit` may borrow the rest; put back after
            // (its room kept for the next line).
            let read = std::mem::take(&mut self.line);
            // Only the newline: a part's blanks are the line's own.
            let line = read.strip_suffix(b"\n").unwrap_or(&read);
            match self.wrapper {
                Wrapper::Cri => match cri_parts(line) {
                    Some((time, true, message)) => {
                        self.part(message);
                        self.emit(time);
                    }
                    Some((_, false, message)) => self.part_before_last(message),
                    // Not the runtime's: left as it is, for the parser to say why.
                    None => {
                        self.end_joined_long();
                        self.out.extend_from_slice(line)
                    }
                },
                Wrapper::DockerJson => match docker_entry(line) {
                    Some(entry) => match entry.log.strip_suffix('\n') {
                        Some(whole) => {
                            self.part(whole.as_bytes());
                            self.emit(entry.time.as_bytes());
                        }
                        None => self.part_before_last(entry.log.as_bytes()),
                    },
                    None => {
                        self.end_joined_long();
                        self.out.extend_from_slice(line)
                    }
                },
            }
            self.line = read;
            if self.joined_long.is_none() {
                self.out.push(b'\n');
            }
        }
        Ok(())
    }
}

/// The application's `line`, given the runtime's `time` when it carries none of its own.
fn emit(out: &mut Vec<u8>, time: &[u8], line: &[u8]) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.trim_ascii().is_empty() {
        return;
    }
    if line.starts_with(b"{") {
        const STAMPS: [&[u8]; 5] = [
            b"\"ts\"",
            b"\"timestamp\"",
            b"\"@timestamp\"",
            b"\"time\"",
            b"\"@t\"",
        ];
        let stamped = STAMPS
            .iter()
            .any(|s| memchr::memmem::find(line, s).is_some());
        if !stamped && !time.is_empty() {
            out.extend_from_slice(b"{\"ts\":\"");
            out.extend_from_slice(time);
            out.extend_from_slice(b"\",");
            out.extend_from_slice(line[1..].trim_ascii_start());
            return;
        }
    } else if !crate::ingest::starts_with_timestamp(line) && !time.is_empty() {
        let start = out.len();
        // logfmt without a stamp takes it as a pair; anything else as a text line's.
        out.extend_from_slice(b"time=");
        out.extend_from_slice(time);
        out.push(b' ');
        out.extend_from_slice(line);
        if !crate::ingest::logfmt::looks_like_logfmt(&out[start..]) {
            out.truncate(start);
            out.extend_from_slice(time);
            out.extend_from_slice(b"  ");
            out.extend_from_slice(line);
        }
        return;
    }
    out.extend_from_slice(line);
}

impl<R: Read> Read for Unwrapped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.out.len() {
            self.refill()?;
        }
        Ok(serve(&self.out, &mut self.at, buf))
    }
}

/// Copies what a decoding reader has ready (`out` from `at`) into `buf`, as much as fits,
/// and moves `at` past it: how many bytes were copied.
pub(super) fn serve(out: &[u8], at: &mut usize, buf: &mut [u8]) -> usize {
    let n = buf.len().min(out.len() - *at);
    buf[..n].copy_from_slice(&out[*at..*at + n]);
    *at += n;
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unwrap(text: &str) -> String {
        let wrapper = wrapper_of(text.as_bytes()).expect("a wrapper");
        let mut out = String::new();
        Unwrapped::new(text.as_bytes(), wrapper)
            .read_to_string(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn cri_lines_are_unwrapped_and_split_lines_joined_in_place() {
        let text = "2026-11-03T14:02:11.501234567Z stdout F 2026-11-03T14:02:11.501Z  refund rf_1  order A-1  4500p\n\
                    2026-11-03T14:02:12.000000000Z stdout P refund rf_2  \n\
                    2026-11-03T14:02:12.000000001Z stdout F order A-2  4500p\n\
                    2026-11-03T14:02:13.000000000Z stderr F {\"type\":\"effect\",\"effect_id\":\"rf_3\"}\n\
                    garbage\n";
        assert_eq!(
            unwrap(text),
            "2026-11-03T14:02:11.501Z  refund rf_1  order A-1  4500p\n\
             \n\
             2026-11-03T14:02:12.000000001Z  refund rf_2  order A-2  4500p\n\
             {\"ts\":\"2026-11-03T14:02:13.000000000Z\",\"type\":\"effect\",\"effect_id\":\"rf_3\"}\n\
             garbage\n"
        );
    }

    #[test]
    fn a_pretty_printed_object_passes_through_unstamped() {
        // An SDK's console exporter's span, printed over lines, between the program's lines:
        // a stamp before each of its lines would break it; the lines around it keep theirs.
        let text = "2026-11-03T14:02:11.000000000Z stdout F starting\n\
                    2026-11-03T14:02:11.100000000Z stdout F {\n\
                    2026-11-03T14:02:11.100000001Z stdout F     \"name\": \"POST\",\n\
                    2026-11-03T14:02:11.100000002Z stdout F     \"kind\": \"SpanKind.CLIENT\"\n\
                    2026-11-03T14:02:11.100000003Z stdout F }\n\
                    2026-11-03T14:02:12.000000000Z stdout F done\n";
        assert_eq!(
            unwrap(text),
            "2026-11-03T14:02:11.000000000Z  starting\n\
             {\n    \"name\": \"POST\",\n    \"kind\": \"SpanKind.CLIENT\"\n}\n\
             2026-11-03T14:02:12.000000000Z  done\n"
        );
    }

    #[test]
    fn docker_entries_are_unwrapped() {
        let text = concat!(
            r#"{"log":"2026-11-03T14:02:11.501Z  refund rf_1  order A-1  4500p\n","stream":"stdout","time":"2026-11-03T14:02:11.501234Z"}"#,
            "\n",
            r#"{"log":"{\"event\":\"refund created\",","stream":"stdout","time":"2026-11-03T14:02:12Z"}"#,
            "\n",
            r#"{"log":"\"refund_id\":\"rf_2\"}\n","stream":"stdout","time":"2026-11-03T14:02:12Z"}"#,
            "\n",
        );
        assert_eq!(
            unwrap(text),
            "2026-11-03T14:02:11.501Z  refund rf_1  order A-1  4500p\n\
             \n\
             {\"ts\":\"2026-11-03T14:02:12Z\",\"event\":\"refund created\",\"refund_id\":\"rf_2\"}\n"
        );
    }

    #[test]
    fn other_logs_are_not_wrapped() {
        for head in [
            "2026-11-03T14:02:11.501Z  refund rf_1  order A-1  4500p\n",
            "2026-11-03T14:02:11.501Z stdout X message\n",
            "{\"ts\":\"2026-11-03T14:02:11Z\",\"type\":\"effect\"}\n",
            "{\"log\":42}\n",
        ] {
            assert_eq!(wrapper_of(head.as_bytes()), None, "{head}");
        }
    }

    /// The lines the splitter gives of a wrapped text, by number and length, and the lines
    /// it skipped as too long.
    fn split(text: &[u8]) -> (Vec<(u32, usize)>, crate::ingest::long_lines::TooLong) {
        let wrapper = wrapper_of(text).expect("a wrapper");
        let mut notes = crate::ingest::lines::LineNotes::default();
        let mut given = Vec::new();
        let mut reader = Unwrapped::new(text, wrapper);
        crate::ingest::lines::for_each_line(&mut reader, &mut notes, |n, line| {
            given.push((n, line.len()))
        })
        .unwrap();
        (given, notes.too_long)
    }

    /// A line the runtime split into parts of 16 KiB, `len` bytes in all, the last one
    /// tagged `F` when `last_part`.
    fn cri_split(len: usize, last_part: bool) -> Vec<u8> {
        let mut text = Vec::new();
        let mut left = len;
        while left > 0 {
            let part = left.min(16 * 1024);
            left -= part;
            let tag = if left == 0 && last_part { "F" } else { "P" };
            text.extend_from_slice(
                format!("2026-11-03T14:02:12.000000000Z stdout {tag} ").as_bytes(),
            );
            text.resize(text.len() + part, b'x');
            text.push(b'\n');
        }
        text
    }

    const FIRST: &[u8] =
        b"2026-11-03T14:02:11.000000000Z stdout F 2026-11-03T14:02:11.000Z  first\n";
    const LAST: &[u8] = b"2026-11-03T14:02:13.000000000Z stdout F 2026-11-03T14:02:13.000Z  last\n";

    /// A split line whose parts join past the cap is passed on as its parts come, for the
    /// splitter to skip, numbered at the part that took it past the cap, the lines after it
    /// where they were; one that joins to the cap (its stamp put before it) is read whole,
    /// at its last part.
    #[test]
    fn a_split_line_too_long_to_hold_is_skipped_in_place() {
        // Under the cap, the runtime's stamp (32 bytes) is put before the line.
        let cases = [
            (MAX_LINE + 1, true, "F"),
            (MAX_LINE + 1, true, "end of the input"),
            (MAX_LINE + 40_000, true, "F"),
            (MAX_LINE + 40_000, true, "end of the input"),
            (MAX_LINE - 32, false, "F"),
        ];
        for (len, skipped, end) in cases {
            let mut text = FIRST.to_vec();
            text.extend(cri_split(len, end == "F"));
            if end == "F" {
                text.extend_from_slice(LAST);
            }
            let (given, long) = split(&text);
            let n = len.div_ceil(16 * 1024) as u32;
            // The parts other than the line read as blank lines.
            let read: Vec<(u32, usize)> = given.into_iter().filter(|l| l.1 > 0).collect();
            let mut expected = vec![(1, FIRST.len() - 41)];
            if !skipped {
                expected.push((n + 1, len + 32));
            }
            if end == "F" {
                expected.push((n + 2, LAST.len() - 41));
            }
            assert!(read == expected, "{len} {end}: {read:?}");
            let mut too_long = crate::ingest::long_lines::TooLong::default();
            if skipped {
                // 1,024 parts of 16 KiB are the cap: the next part, on line 1,026, is past it
                // (the last part, or one of three).
                too_long.saw(1026, len as u64, MAX_LINE);
            }
            assert_eq!(long, too_long, "{len} {end}");
        }
    }

    /// A physical line too long to be the runtime's is passed on as it is, and skipped.
    #[test]
    fn a_physical_line_too_long_to_hold_is_skipped() {
        let mut text = FIRST.to_vec();
        text.resize(text.len() + MAX_LINE + 10, b'y');
        text.push(b'\n');
        text.extend_from_slice(LAST);
        let (given, long) = split(&text);
        assert_eq!(given, [(1, FIRST.len() - 41), (3, LAST.len() - 41)]);
        let mut expected = crate::ingest::long_lines::TooLong::default();
        expected.saw(2, MAX_LINE as u64 + 10, MAX_LINE);
        assert_eq!(long, expected);
    }
}
