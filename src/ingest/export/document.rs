//! An export written as JSON documents (CloudWatch Logs' pages, Google Cloud Logging's
//! array of entries, journald's `json-pretty` objects), read whole: each entry's message is
//! given on the line its message lies on in the export, blank lines around it. The entries
//! of an array are read one by one, so that an export cut short gives those before the cut.

use super::entry::{self, Entry};
use super::{Kind, Skips, Writers, emit};
use serde_json::value::RawValue;

/// The lines of the export `all` of `kind`: as many as it has (more when several entries
/// share a line, each then given on a line of its own after it), each message on its own.
/// The process of each entry's line is told to `writers`.
pub(super) fn unwrap(kind: Kind, all: &[u8], skips: &Skips, writers: &mut Writers) -> Vec<u8> {
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
        writers,
    };
    let mut walk = Walk { all, at: 0 };
    let read = loop {
        if walk.blanks() == 0 {
            break Ok(());
        }
        let read = match kind {
            Kind::CloudWatch => walk.page(&mut placer, skips),
            Kind::GcpEntries => walk.array(&mut placer, skips),
            Kind::JournalPretty | Kind::JournalLines => {
                walk.value().map(|raw| placer.entry(kind, raw, skips))
            }
        };
        if read.is_err() {
            break read;
        }
    };
    if let Err(why) = read {
        let line = placer.line_of(walk.at);
        let at = placer.place(line);
        skips.add(at, format!("{why}: the export is not read past here"));
        placer.out.push(b'\n');
    }
    // The lines after the last entry, blank.
    let lines = memchr::memchr_iter(b'\n', all).count() as u32
        + u32::from(!all.is_empty() && !all.ends_with(b"\n"));
    placer.place(lines + 1);
    placer.out
}

/// Reads an export's JSON a value at a time, from `at`.
struct Walk<'a> {
    all: &'a [u8],
    at: usize,
}

impl<'a> Walk<'a> {
    /// Moves past blanks: the next byte, or 0 at the end.
    fn blanks(&mut self) -> u8 {
        while self.all.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
        self.all.get(self.at).copied().unwrap_or(0)
    }

    /// Moves past `b` (after blanks), or says what was there instead.
    fn expect(&mut self, b: u8) -> Result<(), String> {
        match self.blanks() {
            found if found == b => {
                self.at += 1;
                Ok(())
            }
            0 => Err(format!("the export ends where `{}` was due", b as char)),
            _ => Err(format!("no JSON `{}` where one was due", b as char)),
        }
    }

    /// One JSON value, borrowed from the export.
    fn value(&mut self) -> Result<&'a RawValue, String> {
        self.blanks();
        let mut values = serde_json::Deserializer::from_slice(&self.all[self.at..]).into_iter();
        match values.next() {
            Some(Ok(raw)) => {
                self.at += values.byte_offset();
                Ok(raw)
            }
            Some(Err(e)) => {
                let said = e.to_string();
                let why = said.rsplit_once(" at line ").map_or(&*said, |(why, _)| why);
                Err(format!("not JSON: {why}"))
            }
            None => Err("the export ends where a value was due".into()),
        }
    }

    /// A JSON array's entries, given as they are read.
    fn array(&mut self, placer: &mut Placer, skips: &Skips) -> Result<(), String> {
        if self.blanks() != b'[' {
            let start = self.at;
            self.value()?;
            placer.skip_at(
                start,
                "a JSON document that is no array of Cloud Logging entries",
                skips,
            );
            return Ok(());
        }
        self.at += 1;
        if self.blanks() == b']' {
            self.at += 1;
            return Ok(());
        }
        loop {
            let raw = self.value()?;
            placer.entry(Kind::GcpEntries, raw, skips);
            match self.blanks() {
                b',' => self.at += 1,
                _ => return self.expect(b']'),
            }
        }
    }

    /// A CloudWatch Logs page: `{"events": [...], "nextToken": ...}`, its events given as
    /// they are read.
    fn page(&mut self, placer: &mut Placer, skips: &Skips) -> Result<(), String> {
        let start = self.at;
        if self.blanks() != b'{' {
            self.value()?;
            placer.skip_at(start, NO_PAGE, skips);
            return Ok(());
        }
        self.at += 1;
        let mut events = false;
        if self.blanks() == b'}' {
            self.at += 1;
        } else {
            loop {
                let key: String = serde_json::from_str(self.value()?.get())
                    .map_err(|_| "no JSON key where one was due".to_string())?;
                self.expect(b':')?;
                if key == "events" && self.blanks() == b'[' {
                    events = true;
                    self.at += 1;
                    if self.blanks() == b']' {
                        self.at += 1;
                    } else {
                        loop {
                            let raw = self.value()?;
                            placer.entry(Kind::CloudWatch, raw, skips);
                            match self.blanks() {
                                b',' => self.at += 1,
                                _ => break self.expect(b']')?,
                            }
                        }
                    }
                } else {
                    self.value()?;
                }
                match self.blanks() {
                    b',' => self.at += 1,
                    _ => break self.expect(b'}')?,
                }
            }
        }
        if !events {
            placer.skip_at(start, NO_PAGE, skips);
        }
        Ok(())
    }
}

const NO_PAGE: &str = "a JSON document that is no CloudWatch Logs page (no events array)";

/// Gives lines in order, each entry on its line in the export or, when an entry before it
/// took that line, on the next one free.
struct Placer<'a, 'w> {
    all: &'a [u8],
    /// Newlines are counted up to this byte, which lies on `line`.
    counted_to: usize,
    line: u32,
    out: Vec<u8>,
    /// Lines given so far.
    given: u32,
    writers: &'w mut Writers,
}

impl Placer<'_, '_> {
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

    /// An entry: its message on its line, or nothing, or its line skipped with why.
    fn entry(&mut self, kind: Kind, raw: &RawValue, skips: &Skips) {
        match entry::read(kind, raw, self.all) {
            Ok(Entry::Line {
                time,
                message,
                at,
                writer,
            }) => {
                let line = self.line_of(at);
                let line = self.place(line);
                let traceback = self.writers.of_line(line, writer);
                emit(&mut self.out, traceback, time.as_bytes(), message);
                self.out.push(b'\n');
            }
            Ok(Entry::Nothing) => {}
            Err(bad) => self.skip_at(bad.at, &bad.why, skips),
        }
    }

    /// What lies at byte `at` skipped, with why.
    fn skip_at(&mut self, at: usize, why: &str, skips: &Skips) {
        let line = self.line_of(at);
        let at = self.place(line);
        skips.add(at, why.into());
        self.out.push(b'\n');
    }
}
