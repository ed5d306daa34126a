//! Logs as container runtimes store them, each line of the application's wrapped in one of
//! the runtime's: the CRI format of containerd and CRI-O (Kubernetes' `/var/log/pods`),
//! `2026-11-03T14:02:11.501234567Z stdout F <line>`, and Docker's `json-file` driver,
//! `{"log":"<line>\n","stream":"stdout","time":"2026-11-03T14:02:11.501234567Z"}`. The
//! wrapper is taken off as the file is read, so the application's lines are detected and
//! parsed in their own format; a line the runtime split (CRI's `P`, Docker's entry without
//! a newline) is joined to the rest of it, and each physical line still gives one line, so
//! that `path:line` points where it did (the parts before the last are left blank). A line
//! of the application without a timestamp takes the runtime's. A file that ends inside a
//! split line (the runtime has written its first parts, not its last) gives what there is of
//! it on the last part's line, with no newline after it: a line cut short ([`Unended`]).

mod continuation;
mod stamp;

use super::long_lines::{LineSource, MAX_LINE, Unwrap};
pub(in crate::ingest) use continuation::Continuation;
pub(in crate::ingest) use stamp::emit;
use std::io::{self, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
    lines: LineSource<R>,
    unwrapping: Unwrapping,
}

/// What the wrapped lines read so far stand for, and what is held of a split line.
struct Unwrapping {
    wrapper: Wrapper,
    /// The parts of a split line read so far.
    partial: Vec<u8>,
    out: Vec<u8>,
    /// Inside an object the application pretty-printed, from a `{` alone at the margin to a
    /// `}` alone there (an SDK's console exporter's spans): its lines are passed on as they
    /// are, since a stamp before each would break it.
    in_object: bool,
    continuation: Continuation,
    /// A split line whose parts grew too long to hold is being passed on as its parts come:
    /// how many of its physical lines have passed, each owing the blank line it stands for.
    joined_long: Option<u32>,
    /// The physical lines of the parts held in `partial`, each owing the blank line it stands
    /// for: given before the line once it ends, or, if the file ends first, all but the last,
    /// which gives the line.
    held_parts: u32,
    /// The runtime's time on the last part held.
    held_time: Vec<u8>,
    unended: Unended,
}

/// Set once a wrapped file has ended inside a split line: its last line, given cut short,
/// was cut by the runtime's split rather than by the end of a line's bytes.
#[derive(Clone, Default)]
pub struct Unended(Arc<AtomicBool>);

/// Why the last line of a wrapped file that ends inside a split line is skipped, when what
/// there is of it reads as no event.
pub const CUT_INSIDE_SPLIT: &str = "cut short (the container runtime wrote the first parts of this line, not its last) and read as no event: it may be the start of one; scan again once the writer has finished";

impl Unended {
    /// Says so of the input's last line, if it is a container's log (`unended`) that ended
    /// inside a split line, and the line was skipped as cut short.
    pub fn retell(unended: Option<&Unended>, stats: &mut super::InputStats) {
        if unended.is_some_and(|u| u.0.load(Ordering::Relaxed)) {
            stats.retell_cut(CUT_INSIDE_SPLIT);
        }
    }
}

impl<R: Read> Unwrapped<R> {
    /// Unwraps `inner`'s lines; `unended` is set if it ends inside a split line.
    pub fn new(inner: R, wrapper: Wrapper, unended: Unended) -> Self {
        Unwrapped {
            lines: LineSource::new(inner),
            unwrapping: Unwrapping {
                wrapper,
                partial: Vec::new(),
                out: Vec::new(),
                in_object: false,
                continuation: Continuation::default(),
                joined_long: None,
                held_parts: 0,
                held_time: Vec::new(),
                unended,
            },
        }
    }
}

impl Unwrapping {
    /// The blank lines owed by the parts held, given.
    fn give_held_blanks(&mut self) {
        let held = std::mem::take(&mut self.held_parts);
        self.out.extend(std::iter::repeat_n(b'\n', held as usize));
    }

    /// The application's whole line, with the runtime's `time` ([`emit`]), or as it is
    /// inside a pretty-printed object.
    fn emit(&mut self, time: &[u8]) {
        self.give_held_blanks();
        if self.joined_long.is_some() {
            return self.end_joined_long();
        }
        let line = self.partial.strip_suffix(b"\r").unwrap_or(&self.partial);
        match (self.in_object, line) {
            (false, b"{") => self.in_object = true,
            (true, b"}") => self.in_object = false,
            _ => {}
        }
        if self.in_object || line == b"}" || self.continuation.goes_on(line) {
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
                self.give_held_blanks();
                self.out.append(&mut self.partial);
                self.joined_long = Some(0);
            }
        }
    }

    /// A part that is not the line's last, with the runtime's `time`: its physical line
    /// stands for a blank line, owed until the line ends.
    fn part_before_last(&mut self, time: &[u8], message: &[u8]) {
        self.part(message);
        match &mut self.joined_long {
            Some(parts) => *parts += 1,
            None => {
                self.held_parts += 1;
                self.held_time.clear();
                self.held_time.extend_from_slice(time);
            }
        }
    }

    /// The file has ended inside a split line: what there is of it is given on its last
    /// part's line, with no newline, as a line cut short; parts of nothing stay blank lines.
    fn end_inside_split(&mut self) {
        self.end_joined_long();
        if self.partial.is_empty() {
            return self.give_held_blanks();
        }
        self.held_parts = self.held_parts.saturating_sub(1);
        self.give_held_blanks();
        let time = std::mem::take(&mut self.held_time);
        let before = self.out.len();
        self.emit(&time);
        if self.out.len() == before {
            // Nothing to read in it (blanks): a blank line, not one cut short.
            self.out.push(b'\n');
        } else {
            self.unended.0.store(true, Ordering::Relaxed);
        }
    }

    /// Ends a split line being passed on ([`Self::part`]), with the blank lines its parts
    /// owe (the line's last physical line adds its own newline).
    fn end_joined_long(&mut self) {
        if let Some(parts) = self.joined_long.take() {
            self.out.extend(std::iter::repeat_n(b'\n', parts as usize));
        }
    }

    /// A physical line that is not the runtime's: left as it is, for the parser to say why
    /// (after the blank lines a split line's parts before it owe).
    fn not_the_runtimes(&mut self, line: &[u8]) -> bool {
        self.end_joined_long();
        self.give_held_blanks();
        self.out.extend_from_slice(line);
        true
    }
}

impl Unwrap for Unwrapping {
    #[inline]
    fn out(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    // Inlined into the source's loop, as it was written in it: called for every line.
    #[inline]
    fn line(&mut self, read: &[u8]) {
        // Only the newline: a part's blanks are the line's own.
        let line = read.strip_suffix(b"\n").unwrap_or(read);
        // Whether the physical line ends a line here (a part before the last owes its
        // newline until the line ends).
        let ends = match self.wrapper {
            Wrapper::Cri => match cri_parts(line) {
                Some((time, true, message)) => {
                    self.part(message);
                    self.emit(time);
                    true
                }
                Some((time, false, message)) => {
                    self.part_before_last(time, message);
                    false
                }
                None => self.not_the_runtimes(line),
            },
            Wrapper::DockerJson => match docker_entry(line) {
                Some(entry) => match entry.log.strip_suffix('\n') {
                    Some(whole) => {
                        self.part(whole.as_bytes());
                        self.emit(entry.time.as_bytes());
                        true
                    }
                    None => {
                        self.part_before_last(entry.time.as_bytes(), entry.log.as_bytes());
                        false
                    }
                },
                None => self.not_the_runtimes(line),
            },
        };
        // A last physical line with no newline (the file cut inside it) gives its line
        // with none either, as cut short; one that gave nothing is still a line.
        let gave_nothing = self.out.last().is_none_or(|&b| b == b'\n');
        if ends && (read.last() == Some(&b'\n') || gave_nothing) {
            self.out.push(b'\n');
        }
    }

    /// No runtime writes such a line: passed on as it is, after what is owed before it.
    fn too_long(&mut self) {
        self.end_joined_long();
        self.give_held_blanks();
    }

    fn end(&mut self) {
        self.end_inside_split();
    }
}

impl<R: Read> Read for Unwrapped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.lines.read(buf, &mut self.unwrapping)
    }
}

#[cfg(test)]
mod tests;
