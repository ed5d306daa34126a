//! Where inputs come from (SPEC §3) and how they are read: paths resolved to inputs
//! ([`paths`]), each opened, decompressed, decoded and its format detected ([`open`],
//! [`detect`]), then every input parsed, in parallel, results in input order.

mod detect;
mod open;
mod paths;

pub use detect::detect;
pub(super) use open::{Failure, Opened, Reader, open};
pub use paths::{Input, InputError, Origin, glob_match, resolve};

use super::{Format, ParseOptions, Parsed};
use crate::event::Event;
use crate::relevance::DeferredLines;
use std::fs::File;
use std::io::{self, Cursor, Read};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What reading one input gave: its format and events, or why it was passed over.
#[derive(Debug)]
pub enum Outcome {
    Parsed(Format, Box<Parsed>),
    /// A file found in a folder whose content is no recognised format.
    NotALog(String),
    Unreadable(String),
}

/// The lines of deferred calls ([`DeferredLines`]) read again from their files, as events.
/// A file that can no longer be read (or changed under the scan) gives what it still can,
/// with a problem for its report.
pub fn reread_deferred(
    inputs: &[Input],
    formats: &[Option<Format>],
    mut wanted: Vec<(u32, DeferredLines)>,
    opts: &ParseOptions,
) -> (Vec<Event>, Vec<(u32, String)>) {
    use std::io::{Seek, SeekFrom};
    wanted.sort_by_key(|(input, d)| (*input, d.offset()));
    let mut events = Vec::new();
    let mut problems = Vec::new();
    for group in wanted.chunk_by(|a, b| a.0 == b.0) {
        let input = group[0].0;
        let Some(Input {
            origin: Origin::File(path),
            ..
        }) = inputs.get(input as usize)
        else {
            continue;
        };
        let read = |file: &mut File, d: &DeferredLines, buf: &mut Vec<u8>| {
            buf.resize(d.byte_len(), 0);
            file.seek(SeekFrom::Start(d.offset()))?;
            file.read_exact(buf)
        };
        let read_again = match formats.get(input as usize).copied().flatten() {
            Some(Format::Jsonl) => super::jsonl::reread,
            _ => super::text::reread,
        };
        let mut buf = Vec::new();
        let result = File::open(path).and_then(|mut file| {
            for (_, d) in group {
                read(&mut file, d, &mut buf)?;
                let opts = opts.for_input(&inputs[input as usize].display);
                let read = read_again(&buf, input, d.first_line, &opts);
                events.extend(of_first_call(read));
            }
            Ok(())
        });
        if let Err(e) = result {
            problems.push((
                input,
                format!("could not read the file again for a resumed run: {e}"),
            ));
        }
    }
    (events, problems)
}

/// The events of the call whose tool call starts a deferred place: the place spans that
/// call's lines, and lines of other calls logged among them (runs that share a log) are
/// read again with them but were read the first time.
fn of_first_call(events: Vec<Event>) -> Vec<Event> {
    let Some(call) = events.first().and_then(|e| e.kind.call()).cloned() else {
        return Vec::new();
    };
    let mut events = events;
    events.retain(|e| e.kind.call() == Some(&call));
    events
}

/// Reads every input, in parallel, returning results in input order.
pub fn read_all(inputs: &[Input], forced: Option<Format>, opts: &ParseOptions) -> Vec<Outcome> {
    read_all_counting(inputs, forced, opts, &AtomicU64::new(0))
}

/// [`read_all`], adding the bytes read from the inputs (before decompression) to `read`, for
/// a progress bar.
pub fn read_all_counting(
    inputs: &[Input],
    forced: Option<Format>,
    opts: &ParseOptions,
    read: &AtomicU64,
) -> Vec<Outcome> {
    // Largest first, each thread taking the next input when it is free: rayon's split of a
    // slice gave one of two threads three of a month's four agent logs (2.9 s against 1.2).
    // A rotated log's files are one job, read in order ([`super::rotated`]).
    let mut jobs = super::rotated::groups(inputs);
    jobs.sort_by_cached_key(|job| {
        std::cmp::Reverse(job.iter().map(|&i| inputs[i].size_hint()).sum::<u64>())
    });
    let next = AtomicUsize::new(0);
    let done: Vec<Mutex<Option<Outcome>>> = inputs.iter().map(|_| Mutex::new(None)).collect();
    let keep =
        |i: usize, outcome| *done[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
    rayon::scope(|s| {
        for _ in 0..rayon::current_num_threads().min(jobs.len()) {
            s.spawn(|_| {
                while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let [i] = job[..] {
                        keep(i, read_one(&inputs[i], i as u32, forced, opts, read));
                    } else {
                        let outcomes = super::rotated::read_group(inputs, job, forced, opts, read);
                        outcomes
                            .into_iter()
                            .for_each(|(i, outcome)| keep(i, outcome));
                    }
                }
            });
        }
    });
    done.into_iter()
        .map(|slot| {
            let outcome = slot.into_inner().unwrap_or_else(|e| e.into_inner());
            outcome.expect("every input is read once")
        })
        .collect()
}

/// A reader that adds what it reads to a shared count.
struct Counting<'a, R> {
    inner: R,
    read: &'a AtomicU64,
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// How much of an input detection reads first.
pub(super) const SNIFF_BYTES: usize = 64 * 1024;

fn read_one(
    input: &Input,
    index: u32,
    forced: Option<Format>,
    opts: &ParseOptions,
    read: &AtomicU64,
) -> Outcome {
    let opts = &*opts.for_file(input);
    let opened = match open(input, forced, opts, read) {
        Ok(opened) => opened,
        Err(outcome) => return outcome,
    };
    let (format, rereadable) = (opened.format, opened.rereadable);
    let opts = &*opened.options(opts);
    let (parsed, content) = telling_content(&opened.head, opened.rest, |all| {
        super::parse_input(format, all, index, opts, rereadable)
    });
    let outcome = match parsed {
        Ok(mut parsed) => {
            parsed.stats.blank = !content;
            parsed.stats.failed(opened.failure.take());
            super::container::Unended::retell(opened.container.as_ref(), &mut parsed.stats);
            super::export::Skips::settle(opened.export.as_ref(), &mut parsed.stats);
            Outcome::Parsed(format, Box::new(parsed))
        }
        Err(e) => Outcome::Unreadable(e.to_string()),
    };
    Opened::noted(opened.decoded.as_deref(), outcome)
}

/// Reads `head` then `rest` through `read`, and says whether the input had content: a byte
/// other than blanks and NULs. An input of nothing else (a file a crash left zeroed, blank
/// lines, `echo "" |`) has nothing to audit, as an empty one. Only an input whose head is
/// blank is watched further: a log pays nothing.
pub(super) fn telling_content<T>(
    head: &[u8],
    rest: Reader<'_>,
    read: impl FnOnce(&mut dyn Read) -> T,
) -> (T, bool) {
    let mut all = Cursor::new(head).chain(rest);
    if has_content(head) {
        return (read(&mut all), true);
    }
    let mut watched = ContentWatch {
        inner: all,
        content: false,
    };
    let out = read(&mut watched);
    (out, watched.content)
}

fn has_content(bytes: &[u8]) -> bool {
    bytes.iter().any(|&b| b != 0 && !b.is_ascii_whitespace())
}

/// A reader that notes when a byte of content passes through it ([`telling_content`]).
struct ContentWatch<R> {
    inner: R,
    content: bool,
}

impl<R: Read> Read for ContentWatch<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.content = self.content || has_content(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(text: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(text).unwrap();
        enc.finish().unwrap()
    }

    /// A stream cut short gives what was decompressed before the cut, and says why it
    /// ended; a whole stream says nothing.
    #[test]
    fn a_stream_cut_short_ends_there_and_notes_why() {
        let mut text = Vec::new();
        for i in 0..20_000 {
            text.extend_from_slice(format!("14:02:24.000  line {i} {}\n", i * 7919).as_bytes());
        }
        let whole = gzip(&text);
        let dir = tempfile::tempdir().unwrap();
        let read = |bytes: &[u8]| {
            let path = dir.path().join("agent.log.gz");
            std::fs::write(&path, bytes).unwrap();
            let input = Input {
                display: "agent.log.gz".into(),
                origin: Origin::File(path),
                explicit: true,
            };
            let opts = ParseOptions::default();
            match read_one(&input, 0, None, &opts, &AtomicU64::new(0)) {
                Outcome::Parsed(_, parsed) => parsed.stats,
                other => panic!("{other:?}"),
            }
        };
        let stats = read(&whole);
        assert_eq!((stats.lines, stats.failed), (20_000, None));
        let stats = read(&whole[..whole.len() / 2]);
        assert!(
            stats.lines > 1_000 && stats.lines < 20_000,
            "{}",
            stats.lines
        );
        assert!(stats.failed.is_some());
    }
}
