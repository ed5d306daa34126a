//! An export written as JSON documents (CloudWatch Logs' pages, Google Cloud Logging's
//! array of entries, journald's `json-pretty` objects), read whole: each entry's message is
//! given on the line its message lies on in the export, blank lines around it.

use super::entry::{self, Entry};
use super::{Kind, Skips, one_line};
use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize)]
struct Page<'a> {
    #[serde(borrow)]
    events: Option<Vec<&'a RawValue>>,
}

/// The lines of the export `all` of `kind`: as many as it has (more when several entries
/// share a line, each then given on a line of its own after it), each message on its own.
pub(super) fn unwrap(kind: Kind, all: &[u8], skips: &Skips) -> Vec<u8> {
    let lossy;
    let all = match std::str::from_utf8(all) {
        Ok(_) => all,
        Err(_) => {
            // Bytes that are no UTF-8 cost only the strings they are in.
            lossy = String::from_utf8_lossy(all).into_owned();
            lossy.as_bytes()
        }
    };
    let mut placer = Placer {
        all,
        counted_to: 0,
        line: 1,
        out: Vec::with_capacity(all.len() / 4),
        given: 0,
    };
    for doc in serde_json::Deserializer::from_slice(all).into_iter::<&RawValue>() {
        let doc = match doc {
            Ok(doc) => doc,
            Err(e) => {
                let at = placer.place(e.line() as u32);
                let why = crate::ingest::unreadable_json(&e);
                skips.add(at, format!("{why}: the export is not read past here"));
                placer.out.push(b'\n');
                break;
            }
        };
        let entries = match kind {
            Kind::CloudWatch => match serde_json::from_str::<Page>(doc.get()) {
                Ok(Page {
                    events: Some(events),
                }) => events,
                _ => {
                    placer.skip(
                        doc,
                        "a JSON document that is no CloudWatch Logs page (no events array)",
                        skips,
                    );
                    continue;
                }
            },
            Kind::GcpEntries => match serde_json::from_str::<Vec<&RawValue>>(doc.get()) {
                Ok(entries) => entries,
                Err(_) => {
                    placer.skip(
                        doc,
                        "a JSON document that is no array of Cloud Logging entries",
                        skips,
                    );
                    continue;
                }
            },
            Kind::JournalPretty | Kind::JournalLines => vec![doc],
        };
        for raw in entries {
            match entry::read(kind, raw, all) {
                Ok(Entry::Line { time, message, at }) => {
                    let line = placer.line_of(at);
                    placer.place(line);
                    crate::ingest::container::emit(
                        &mut placer.out,
                        time.as_bytes(),
                        &one_line(message),
                    );
                    placer.out.push(b'\n');
                }
                Ok(Entry::Nothing) => {}
                Err(bad) => {
                    let line = placer.line_of(bad.at);
                    let at = placer.place(line);
                    skips.add(at, bad.why);
                    placer.out.push(b'\n');
                }
            }
        }
    }
    // The lines after the last entry, blank.
    let lines = memchr::memchr_iter(b'\n', all).count() as u32
        + u32::from(!all.is_empty() && !all.ends_with(b"\n"));
    placer.place(lines + 1);
    placer.out
}

/// Gives lines in order, each entry on its line in the export or, when an entry before it
/// took that line, on the next one free.
struct Placer<'a> {
    all: &'a [u8],
    /// Newlines are counted up to this byte, which lies on `line`.
    counted_to: usize,
    line: u32,
    out: Vec<u8>,
    /// Lines given so far.
    given: u32,
}

impl Placer<'_> {
    /// The line of the byte at `at` (at or after the last asked).
    fn line_of(&mut self, at: usize) -> u32 {
        let at = at.clamp(self.counted_to, self.all.len());
        let newlines = memchr::memchr_iter(b'\n', &self.all[self.counted_to..at]).count();
        self.line += newlines as u32;
        self.counted_to = at;
        self.line
    }

    /// Blank lines up to `line`, or the next line free: the line to give next, returned.
    fn place(&mut self, line: u32) -> u32 {
        let line = line.max(self.given + 1);
        self.out
            .extend(std::iter::repeat_n(b'\n', (line - self.given - 1) as usize));
        self.given = line;
        line
    }

    /// A document that is not the export's, skipped at its first line.
    fn skip(&mut self, doc: &RawValue, why: &str, skips: &Skips) {
        let at = (doc.get().as_ptr() as usize).saturating_sub(self.all.as_ptr() as usize);
        let line = self.line_of(at);
        let at = self.place(line);
        skips.add(at, why.into());
        self.out.push(b'\n');
    }
}
