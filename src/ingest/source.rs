//! Where inputs come from (SPEC §3): paths resolved to files (folders recursively, in a fixed
//! order, skipping dotfiles and `--exclude` globs), standard input, gzip or zstd decompressed
//! and UTF-16 decoded ([`super::utf16`]) on the fly, and each input's format detected from its first non-blank line (or, when that
//! line is damaged, the few after it).

use super::compressed::{compressed_unread, decompressing};
use super::{Format, ParseOptions, Parsed};
use crate::event::Event;
use crate::relevance::DeferredLines;
use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// One input to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// As the user will see it in reports: the path as given (joined for folder entries).
    pub display: String,
    pub origin: Origin,
    /// Named on the command line (always parsed), rather than found in a folder.
    pub explicit: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    File(PathBuf),
    Stdin,
    /// Found in a folder but cannot be read (a subfolder without permission, a symbolic
    /// link to nothing): reported as an unreadable input, with why, while the rest is read.
    Unreadable(String),
}

impl Input {
    /// The input's size in bytes where it is a file (compressed, if it is), for reading the
    /// largest first; 0 when unknown.
    pub fn size_hint(&self) -> u64 {
        match &self.origin {
            Origin::File(p) => std::fs::metadata(p).map_or(0, |m| m.len()),
            Origin::Stdin | Origin::Unreadable(_) => 0,
        }
    }
}

/// A path that could not be used, with the reason, for a one-line error.
#[derive(Debug)]
pub struct InputError {
    pub path: String,
    pub reason: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.reason)
    }
}

/// Expands the command line's paths into inputs, in a deterministic order: sorted by the
/// path shown (so the order of paths on the command line does not change the report), a
/// rotated log's files oldest first ([`super::rotated::order`]), each
/// input once (a file named twice, or named and inside a folder named, is read once).
pub fn resolve(paths: &[String], excludes: &[String]) -> Result<Vec<Input>, InputError> {
    let mut out = resolve_in_order(paths, excludes)?;
    out.sort_by(|a, b| super::rotated::order(&a.display).cmp(&super::rotated::order(&b.display)));
    out.dedup_by(|later, kept| {
        let same = later.display == kept.display;
        if same {
            kept.explicit |= later.explicit;
        }
        same
    });
    Ok(read_each_file_once(out))
}

/// The same file under two names (`dir/a.log` and `./dir/a.log`, an absolute path, a link)
/// is read once, under the first of its names in order: read twice, its every attempt was
/// sent twice.
fn read_each_file_once(inputs: Vec<Input>) -> Vec<Input> {
    let mut seen = std::collections::HashMap::new();
    let mut kept: Vec<Input> = Vec::with_capacity(inputs.len());
    for input in inputs {
        if let Some(id) = file_identity(&input) {
            if let Some(&i) = seen.get(&id) {
                let first: &mut Input = &mut kept[i];
                first.explicit |= input.explicit;
                continue;
            }
            seen.insert(id, kept.len());
        }
        kept.push(input);
    }
    kept
}

/// What tells one file from another: its device and inode.
#[cfg(unix)]
fn file_identity(input: &Input) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let Origin::File(path) = &input.origin else {
        return None;
    };
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.dev(), meta.ino()))
}

/// What tells one file from another: its real path.
#[cfg(not(unix))]
fn file_identity(input: &Input) -> Option<PathBuf> {
    let Origin::File(path) = &input.origin else {
        return None;
    };
    std::fs::canonicalize(path).ok()
}

fn resolve_in_order(paths: &[String], excludes: &[String]) -> Result<Vec<Input>, InputError> {
    let mut out = Vec::new();
    for p in paths {
        if p == "-" {
            out.push(Input {
                display: "-".into(),
                origin: Origin::Stdin,
                explicit: true,
            });
            continue;
        }
        let path = Path::new(p);
        let meta = std::fs::metadata(path).map_err(|e| InputError {
            path: p.clone(),
            reason: io_reason(&e),
        })?;
        if meta.is_dir() {
            let before = out.len();
            walk(path, p, excludes, &mut out, &mut Vec::new())?;
            if out.len() == before {
                return Err(InputError {
                    path: p.clone(),
                    reason: "folder holds no readable files (dotfiles and --exclude matches are skipped)".into(),
                });
            }
        } else {
            out.push(Input {
                display: p.clone(),
                origin: Origin::File(path.to_path_buf()),
                explicit: true,
            });
        }
    }
    Ok(out)
}

/// `ancestors` holds the real paths of the folders being walked, so that a symbolic link
/// back up the tree is followed once, not forever.
fn walk(
    dir: &Path,
    shown: &str,
    excludes: &[String],
    out: &mut Vec<Input>,
    ancestors: &mut Vec<PathBuf>,
) -> Result<(), InputError> {
    let err = |e: io::Error| InputError {
        path: shown.to_string(),
        reason: io_reason(&e),
    };
    let real = std::fs::canonicalize(dir).map_err(err)?;
    if ancestors.contains(&real) {
        return Ok(());
    }
    ancestors.push(real);
    let mut entries: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .map_err(err)?
        .filter_map(|e| e.ok())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(name, _)| !name.starts_with('.'))
        .collect();
    entries.sort();
    for (name, path) in entries {
        let shown_child = if shown.ends_with('/') {
            format!("{shown}{name}")
        } else {
            format!("{shown}/{name}")
        };
        if excludes
            .iter()
            .any(|g| glob_match(g, &name) || glob_match(g, &shown_child))
        {
            continue;
        }
        if path.is_dir() {
            // A subfolder that cannot be read is named, as an unreadable file there is, and
            // the rest of the folder is still audited.
            if let Err(e) = walk(&path, &shown_child, excludes, out, ancestors) {
                out.push(Input {
                    display: shown_child,
                    origin: Origin::Unreadable(format!(
                        "{}: a folder that cannot be read (--exclude '{name}' skips it)",
                        e.reason
                    )),
                    explicit: false,
                });
            }
        } else if let Some(why) = dangling(&path, &name) {
            out.push(Input {
                display: shown_child,
                origin: Origin::Unreadable(why),
                explicit: false,
            });
        } else {
            out.push(Input {
                display: shown_child,
                origin: Origin::File(path),
                explicit: false,
            });
        }
    }
    ancestors.pop();
    Ok(())
}

/// Why a folder's entry `name` at `path` is a symbolic link that leads to no file, when it
/// is one: a link to nothing (a stale `current.log`), or links that lead back to each other.
fn dangling(path: &Path, name: &str) -> Option<String> {
    let err = std::fs::metadata(path).err()?;
    if !path.is_symlink() {
        return None;
    }
    let target = std::fs::read_link(path).ok()?;
    let what = if err.kind() == io::ErrorKind::NotFound {
        "which does not exist"
    } else if is_link_loop(&err) {
        "which leads back to it: a symbolic link loop, never reaching a file"
    } else {
        return None;
    };
    Some(format!(
        "a symbolic link to `{}`, {what} (--exclude '{name}' skips it)",
        target.display()
    ))
}

/// Why a path cannot be used, in words: the system's own message for anything not named
/// here, without its `(os error N)`.
fn io_reason(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or folder".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ if is_link_loop(e) => {
            "a symbolic link loop: its links lead back to each other, never to a file".into()
        }
        _ => {
            let said = e.to_string();
            let said = match e.raw_os_error() {
                Some(code) => said
                    .strip_suffix(&format!(" (os error {code})"))
                    .unwrap_or(&said)
                    .to_string(),
                None => said,
            };
            let mut chars = said.chars();
            match chars.next() {
                Some(first) => first.to_lowercase().chain(chars).collect(),
                None => said,
            }
        }
    }
}

/// Too many symbolic links followed (`ELOOP`): links that lead back to each other.
fn is_link_loop(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// Shell-style glob: `*` (within a path segment), `**` (any depth), `?`.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    fn go(p: &[u8], t: &[u8]) -> bool {
        match p.first() {
            None => t.is_empty(),
            Some(b'*') if p.get(1) == Some(&b'*') => {
                let rest = p[2..].strip_prefix(b"/").unwrap_or(&p[2..]);
                (0..=t.len()).any(|i| go(rest, &t[i..]))
            }
            Some(b'*') => (0..=t.len())
                .take_while(|&i| i == 0 || t[i - 1] != b'/')
                .any(|i| go(&p[1..], &t[i..])),
            Some(b'?') => !t.is_empty() && t[0] != b'/' && go(&p[1..], &t[1..]),
            Some(c) => t.first() == Some(c) && go(&p[1..], &t[1..]),
        }
    }
    go(pattern.as_bytes(), text.as_bytes())
}

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
    let opts = &*opts.for_input(&input.display);
    let opened = match open(input, forced, opts, read) {
        Ok(opened) => opened,
        Err(outcome) => return outcome,
    };
    let (format, rereadable) = (opened.format, opened.rereadable);
    let (parsed, content) = telling_content(&opened.head, opened.rest, |all| {
        super::parse_input(format, all, index, opts, rereadable)
    });
    let outcome = match parsed {
        Ok(mut parsed) => {
            parsed.stats.blank = !content;
            parsed.stats.failed(opened.failure.take());
            super::container::Unended::retell(opened.container.as_ref(), &mut parsed.stats);
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

/// An input opened, decompressed and unwrapped, with its format detected from `head`, the
/// bytes read so far; `rest` reads the others.
pub(super) struct Opened<'a> {
    pub format: Format,
    pub head: Vec<u8>,
    pub rest: Reader<'a>,
    /// A plain file, whose bytes can be read again at an offset.
    pub rereadable: bool,
    /// Set when the input is UTF-16, read as UTF-8: what the decoding found, once read.
    pub decoded: Option<Arc<super::utf16::Decoded>>,
    /// Why the input stopped before its end, once it has ([`CutShort`]).
    pub failure: Failure,
    /// A container runtime's log, unwrapped: set once it has ended inside a split line.
    pub container: Option<super::container::Unended>,
}

impl Opened<'_> {
    /// `outcome` with the decoding's note, if it has one.
    pub(super) fn noted(decoded: Option<&super::utf16::Decoded>, mut outcome: Outcome) -> Outcome {
        if let (Some(note), Outcome::Parsed(_, parsed)) =
            (decoded.and_then(|d| d.note()), &mut outcome)
        {
            parsed.stats.notes.insert(0, note);
        }
        outcome
    }
}

/// Opens an input and detects its format; what to report instead when it cannot be read
/// or is no log.
pub(super) fn open<'a>(
    input: &Input,
    forced: Option<Format>,
    opts: &ParseOptions,
    read: &'a AtomicU64,
) -> Result<Opened<'a>, Outcome> {
    let raw: Reader<'a> = match &input.origin {
        Origin::Stdin => Box::new(io::stdin()),
        Origin::Unreadable(why) => return Err(Outcome::Unreadable(why.clone())),
        // A FIFO, socket or device found in a folder: opening a FIFO no one writes to
        // blocks for ever. Named on the command line, it is read, as `cat` would.
        Origin::File(p) if !input.explicit && !is_plain_file(p) => {
            return Err(Outcome::NotALog(
                "not a regular file (a FIFO, socket or device); passed over".into(),
            ));
        }
        Origin::File(p) => match File::open(p) {
            Ok(f) => Box::new(Counting { inner: f, read }),
            Err(e) => return Err(Outcome::Unreadable(io_reason(&e))),
        },
    };
    let (reader, compressed) =
        decompressing(raw).map_err(|e| Outcome::Unreadable(e.to_string()))?;
    // A stream that fails mid-way (a `.gz` cut short) ends there for the parser: what was
    // read before stays read, and the failure is reported beside it.
    let failure = Failure::default();
    let mut reader: Reader<'a> = Box::new(CutShort {
        inner: reader,
        failure: failure.clone(),
    });
    let mut rereadable = !compressed && matches!(input.origin, Origin::File(_));
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut reader)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| Outcome::Unreadable(e.to_string()))?;
    // bzip2 and xz are not unpacked: said so, rather than read as lines of binary.
    if let Some((how, unpack)) = compressed_unread(&head) {
        let why = format!("compressed with {how}: not unpacked; decompress it first ({unpack})");
        return Err(match input.explicit {
            true => Outcome::Unreadable(why),
            false => Outcome::NotALog(format!("{why}; passed over")),
        });
    }
    // UTF-16 (Windows PowerShell 5's `>`): read as the UTF-8 it stands for, from its start.
    let mut decoded = None;
    if let Some(how) = super::utf16::sniff(&head) {
        let decoding = Arc::new(super::utf16::Decoded::new(how));
        let all = Cursor::new(std::mem::take(&mut head)).chain(reader);
        reader = Box::new(super::utf16::Decoder::new(all, decoding.clone()));
        rereadable = false;
        (&mut reader)
            .take(SNIFF_BYTES as u64)
            .read_to_end(&mut head)
            .map_err(|e| Outcome::Unreadable(e.to_string()))?;
        decoded = Some(decoding);
    }
    // A container runtime's wrapper around each line: taken off, and the lines inside are
    // what is detected and parsed (no longer read again at an offset).
    let mut container = None;
    if let Some(wrapper) = super::container::wrapper_of(&head) {
        let wrapped = Cursor::new(std::mem::take(&mut head)).chain(reader);
        let unended = super::container::Unended::default();
        let unwrapped = super::container::Unwrapped::new(wrapped, wrapper, unended.clone());
        container = Some(unended);
        reader = Box::new(unwrapped);
        rereadable = false;
        (&mut reader)
            .take(SNIFF_BYTES as u64)
            .read_to_end(&mut head)
            .map_err(|e| Outcome::Unreadable(e.to_string()))?;
    }
    let mut detected = forced.or_else(|| detect(&head, &opts.csv_map));
    // A console exporter's spans after a long start-up log: the head was the program's
    // own output (or nothing known), so the input is looked through further for a span.
    if forced.is_none() && head.len() >= SNIFF_BYTES && may_precede_a_span_dump(detected) {
        let limit = super::otlp::preamble::LOOK_AHEAD;
        let found = super::otlp::preamble::read_past(&mut head, &mut reader, limit)
            .map_err(|e| Outcome::Unreadable(e.to_string()))?;
        if found.is_some() {
            detected = Some(Format::Otlp);
        }
    }
    let format = match detected {
        Some(f) => f,
        // Named on the command line: parsed anyway, so every line says why it is no event.
        None if input.explicit => fallback(&head),
        None => {
            return Err(Outcome::NotALog(
                "not a recognised log format; passed over".into(),
            ));
        }
    };
    Ok(Opened {
        format,
        head,
        rest: reader,
        rereadable,
        decoded,
        failure,
        container,
    })
}

/// Why an input's stream failed before its end, when it has: set by [`CutShort`].
#[derive(Clone, Default)]
pub(super) struct Failure(std::sync::Arc<Mutex<Option<String>>>);

impl Failure {
    /// The failure, once the input has been read.
    pub fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Whether the input has failed.
    pub fn failed(&self) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }
}

/// A reader whose first error (other than an interruption) ends its stream, noted in a
/// [`Failure`]: a gzip or zstd stream cut short gives the lines before the cut, as `zcat`
/// does, rather than none.
struct CutShort<R> {
    inner: R,
    failure: Failure,
}

impl<R: Read> Read for CutShort<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut failure = self.failure.0.lock().unwrap_or_else(|e| e.into_inner());
        if failure.is_some() {
            return Ok(0);
        }
        match self.inner.read(buf) {
            Err(e) if e.kind() != io::ErrorKind::Interrupted => {
                *failure = Some(e.to_string());
                Ok(0)
            }
            other => other,
        }
    }
}

pub(super) type Reader<'a> = Box<dyn Read + Send + 'a>;

/// What a program's standard output may be read as before its console exporter's first
/// span: its log lines in any line-wise layout, or nothing known. A CSV export, an XML
/// document or an OTLP export is something else.
fn may_precede_a_span_dump(detected: Option<Format>) -> bool {
    match detected {
        None => true,
        Some(format) => matches!(
            format,
            Format::Text
                | Format::Jsonl
                | Format::Logfmt
                | Format::NodeConsole
                | Format::PinoPretty
        ),
    }
}

/// A regular file, through any symbolic link (one that leads nowhere is left to `open` to
/// report).
fn is_plain_file(path: &Path) -> bool {
    std::fs::metadata(path).map_or(true, |m| m.is_file())
}

fn first_line(head: &[u8]) -> Option<String> {
    let first = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .find(|l| l.iter().any(|b| !b.is_ascii_whitespace()))?;
    let line = String::from_utf8_lossy(first);
    Some(line.trim_start_matches('\u{feff}').trim().to_string())
}

/// The format of an explicitly named file that detection does not recognise: JSON Lines when
/// it opens with `{` (each line then says why it is no event), else text.
fn fallback(head: &[u8]) -> Format {
    match first_line(head) {
        Some(l) if l.starts_with('{') => Format::Jsonl,
        _ => Format::Text,
    }
}

/// How many lines detection reads when the first one is no recognised format.
pub const DETECT_LINES: usize = 5;

/// How many lines of no format at the start of a file detection looks past, as a
/// program's start-up output before its log (a framework's banner, a warning).
pub const PREAMBLE_LINES: usize = 40;

/// Detects a format (SPEC §3); `None` when it is no log at all. The first non-blank line
/// decides, as the SPEC says, when it is recognisable. When it is not, the first
/// [`DETECT_LINES`] lines of content decide: a log whose first line is damaged (cut by a
/// rotation, half-written by a crash) is still a log, and passing it over would lose every
/// event in it (§9); its bad line is then skipped and reported by the parser.
pub fn detect(head: &[u8], csv_map: &[(String, String)]) -> Option<Format> {
    // The parsers take a byte-order mark off the first line; so does every test here.
    let head = head.strip_prefix("\u{feff}".as_bytes()).unwrap_or(head);
    // Colour codes (tracing-subscriber's default layout) are read past, as the parsers do.
    let plain;
    let head = if super::ansi::has_escape(head) {
        plain = super::ansi::stripped(head);
        &plain[..]
    } else {
        head
    };
    // java.util.logging's XMLFormatter: a document, told by its declaration and doctype.
    if super::jul_xml::looks_like(head) {
        return Some(Format::JulXml);
    }
    let line = first_line(head)?;
    let line = line.as_str();
    // The JavaScript SDK's console exporter's spans (other output of the program around
    // them), before Node's console, whose objects they are printed as.
    if super::otlp::console_js::looks_like(head) {
        return Some(Format::Otlp);
    }
    // The Python SDK's: the same spans as JSON objects, the program's own lines among them.
    if super::otlp::console::looks_like(head) {
        return Some(Format::Otlp);
    }
    // Node's console (`2026-... tool call { runId: ... }`), before the text logs it
    // resembles and the JSON an unstamped object's first line may look like: its objects
    // are its events' fields.
    if !line.starts_with("{\"") && super::node_console::looks_like(head) {
        return Some(Format::NodeConsole);
    }
    // pino-pretty's `[TIME] LEVEL (name/pid): message`, its members below: before the text
    // logs its bracketed stamps resemble.
    let pretty_start = |c: char| matches!(c, '[' | '#' | '>') || c.is_ascii_uppercase();
    if line.starts_with(pretty_start) && super::pino_pretty::looks_like(head) {
        return Some(Format::PinoPretty);
    }
    if super::looks_like_otlp_batch(line) || (line == "{" && super::otlp::pretty_printed_head(head))
    {
        return Some(Format::Otlp);
    }

    if line.starts_with('{') {
        if super::looks_like_jsonl(line) {
            return Some(Format::Jsonl);
        }
    } else {
        if let Some(f) = super::detect_csv_header(line, csv_map) {
            return Some(f);
        }
        // winston's `format.simple()`: `info: refund created {...}`; its printf layouts
        // (`STAMP [INFO] tool call {...}`); Monolog's line.
        if super::jsonl::winston::simple_object(line).is_some_and(|o| super::looks_like_jsonl(&o))
            || super::jsonl::winston::looks_like_printf(head)
            || super::jsonl::monolog::as_object(line).is_some()
        {
            return Some(Format::Jsonl);
        }
        if super::looks_like_text_log(head) {
            return Some(Format::Text);
        }
        if super::logfmt::looks_like_logfmt(line.as_bytes()) {
            return Some(Format::Logfmt);
        }
    }
    detect_past_first_line(head)
}

/// The format of at least half of the first [`DETECT_LINES`] lines of content (comments and
/// `---` lines, which a README has too, OTLP documents of other signals than spans, and a
/// web framework's own lines ([`super::banner`]) do not count either way), or `None`.
/// Failing that, the lines of no format that open the file, up to [`PREAMBLE_LINES`] of
/// them, are a preamble (a server's start-up output before its log, as Django's or Spring's
/// banner), and the next [`DETECT_LINES`] decide, two of them at least agreeing: a README's
/// one dated line, or its example of two among prose, is still no log. Only line-wise
/// formats can be told this way: a CSV export or a pretty-printed document needs its first line.
/// A README or a stray JSON document has no such majority; a log with one bad line does.
fn detect_past_first_line(head: &[u8]) -> Option<Format> {
    let head = head.strip_prefix("\u{feff}".as_bytes()).unwrap_or(head);
    // A head cut at [`SNIFF_BYTES`] may end inside a line, which proves nothing either way.
    let cut = head.len() >= SNIFF_BYTES && !head.ends_with(b"\n");
    let mut segments = head.split(|&b| b == b'\n').peekable();
    let mut votes: Vec<Option<Format>> = Vec::with_capacity(DETECT_LINES);
    let mut lead = 0;
    // Past a preamble, more lines must confirm the log: a source file's comment with an
    // example log in it (a package's `.d.ts`) has a run of stamped lines after 40 of code.
    let window = |lead: usize| {
        if lead > 0 {
            CONFIRM_LINES
        } else {
            DETECT_LINES
        }
    };
    while votes.len() < lead + window(lead) {
        let Some(raw) = segments.next() else { break };
        let last = segments.peek().is_none();
        let line = raw.trim_ascii();
        if line.is_empty() || line.starts_with(b"#") || line.starts_with(b"---") {
            continue;
        }
        // Another signal's document beside the spans (a Collector's file exporter in
        // several pipelines) says nothing of the format: it is the spans that must win.
        if !super::looks_like_otlp_batch(&String::from_utf8_lossy(line))
            && super::looks_like_otlp_document(line)
        {
            continue;
        }
        if super::banner::is_framework_line(line) {
            continue;
        }
        let vote = line_format(line);
        if vote.is_some() || !(last && cut) {
            if vote.is_none() && lead == votes.len() && lead < PREAMBLE_LINES {
                lead += 1;
            }
            votes.push(vote);
        }
    }
    let first = &votes[..votes.len().min(DETECT_LINES)];
    let past = &votes[lead.min(votes.len())..];
    majority(first, 1, HALF).or_else(|| majority(past, 2, TWO_THIRDS))
}

/// How many lines after a preamble decide, two thirds of them agreeing.
const CONFIRM_LINES: usize = 20;

const HALF: (usize, usize) = (1, 2);
const TWO_THIRDS: (usize, usize) = (2, 3);

/// The format of at least `share` of `votes` (a fraction), if it has `least` of them.
fn majority(votes: &[Option<Format>], least: usize, share: (usize, usize)) -> Option<Format> {
    let mut best: Option<(Format, usize)> = None;
    for f in votes.iter().flatten() {
        let n = votes.iter().filter(|v| **v == Some(*f)).count();
        if best.is_none_or(|(_, m)| n > m) {
            best = Some((*f, n));
        }
    }
    let (num, den) = share;
    best.filter(|&(_, n)| n * den >= num * votes.len() && n >= least)
        .map(|(f, _)| f)
}

/// The format one line of content belongs to, if it is an event line of a line-wise format.
fn line_format(line: &[u8]) -> Option<Format> {
    if line.starts_with(b"{") {
        let text = String::from_utf8_lossy(line);
        if super::looks_like_otlp_batch(&text) {
            Some(Format::Otlp)
        } else {
            super::looks_like_jsonl(&text).then_some(Format::Jsonl)
        }
    } else if super::jsonl::monolog::as_object(&String::from_utf8_lossy(line)).is_some() {
        Some(Format::Jsonl)
    } else if super::starts_with_stamped_record(line) {
        Some(Format::Text)
    } else if super::access_log::stamp(line, crate::time::Zone::default()).is_some() {
        // A web server's access line: a stamped line the text reader reads.
        Some(Format::Text)
    } else {
        super::logfmt::looks_like_logfmt(line).then_some(Format::Logfmt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("*.json", "truth.json"));
        assert!(!glob_match("*.json", "a/truth.json"));
        assert!(glob_match("**/*.json", "a/b/truth.json"));
        assert!(glob_match("logs/**", "logs/x/y.log"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "abbc"));
    }

    #[test]
    fn a_damaged_first_line_is_looked_past_by_the_majority_of_the_next() {
        let jsonl = r#"{"ts":"2026-11-03T14:02:11Z","type":"effect"}"#;
        let otlp = r#"{"resourceSpans":[]}"#;
        let det = |text: &str| detect(text.as_bytes(), &[]);
        assert_eq!(
            det(&format!("{{\"ts\":\"20\n{jsonl}\n{jsonl}\n")),
            Some(Format::Jsonl)
        );
        assert_eq!(det(&format!("garbage\n{jsonl}\n")), Some(Format::Jsonl));
        assert_eq!(det(&format!("\0\0\0{otlp}\n{otlp}\n")), Some(Format::Otlp));
        assert_eq!(
            det("# exported by hand\n2.418  ok\n14:02:11.402  a\n14:02:12  b\n"),
            Some(Format::Text)
        );
        // Two bad lines of five still leave a majority; three among them do not.
        let ts = "14:02:11.402  healthcheck ok";
        assert_eq!(
            det(&format!("a\nb\n{ts}\n{ts}\n{ts}\n")),
            Some(Format::Text)
        );
        assert_eq!(det(&format!("a\n{ts}\nb\nc\n{ts}\nd\n")), None);
        // Prose with a dated line, a setext heading and a JSON document are no logs.
        assert_eq!(
            det("Notes\n---\nSee below.\n2026-11-03: refunded twice\n"),
            None
        );
        assert_eq!(det("{\n  \"expected\": [\"rf_1\"]\n}\n"), None);
        assert_eq!(det("{\"expected\":[\"rf_1\"]}\n"), None);
        // Only the first line can be a CSV header.
        assert_eq!(det("rows:\nid,amount,currency\nrf_1,1.00,GBP\n"), None);
    }

    /// A service's log that opens with its server's start-up output (review 35 H1: Flask's
    /// banner, uvicorn's lines) is a log: a framework's own lines count for nothing, and
    /// other lines of no format before the log are a preamble looked past, when two lines
    /// after it agree. Prose is still no log.
    #[test]
    fn a_preamble_before_a_log_is_looked_past() {
        let det = |text: &str| detect(text.as_bytes(), &[]);
        let flask = concat!(
            " * Serving Flask app 'payments'\n * Debug mode: off\n",
            "\x1b[31m\x1b[1mWARNING: This is a development server. Do not use it in a production deployment. Use a production WSGI server instead.\x1b[0m\n",
            " * Running on http://127.0.0.1:5001\n\x1b[33mPress CTRL+C to quit\x1b[0m\n",
            "[2026-12-07 07:32:50,932] INFO in service_flask: Refund re_1 created for order A-1: 45.00 GBP\n",
            "127.0.0.1 - - [07/Dec/2026 07:32:51] \"POST /v1/refunds HTTP/1.1\" 201 -\n",
        );
        assert_eq!(det(flask), Some(Format::Text));
        // uvicorn's lines, before and after one refund: that line alone decides.
        let uvicorn = concat!(
            "INFO:     Started server process [14335]\nINFO:     Waiting for application startup.\n",
            "INFO:     Application startup complete.\n",
            "INFO:     Uvicorn running on http://127.0.0.1:5004 (Press CTRL+C to quit)\n",
            "WARNING:  Invalid HTTP request received.\n",
            "2026-12-07 07:36:54,477 INFO payments: refund created refund_id=re_1 order_id=A-1 amount_minor=4500 currency=GBP\n",
            "INFO:     127.0.0.1:55250 - \"POST /v1/refunds HTTP/1.1\" 201 Created\n",
            "INFO:     Shutting down\nINFO:     Finished server process [14335]\n",
        );
        assert_eq!(det(uvicorn), Some(Format::Text));
        // Another program's start-up output (Django's runserver), then its log.
        let ts = "2026-12-07 08:00:01,000 INFO refund created refund_id=re_1";
        let django = "Watching for file changes with StatReloader\nPerforming system checks...\n\n\
                      System check identified no issues (0 silenced).\nDjango version 5.0, using settings 'x'\n\
                      Starting development server at http://127.0.0.1:8000/\nQuit the server with CONTROL-C.\n";
        assert_eq!(det(&format!("{django}{ts}\n{ts}\n")), Some(Format::Text));
        // Django's banner is its own lines, passed over as Flask's are: one stamped line
        // after it is a log. Another preamble with one stamped line after it, or an example
        // of two among prose: no log.
        assert_eq!(det(&format!("{django}{ts}\n")), Some(Format::Text));
        let preamble = "Loading settings from ./config.yml\nConnecting to the database...\n\n\
                        Migrations applied: 0\nCache warmed\nReady.\n";
        assert_eq!(det(&format!("{preamble}{ts}\n{ts}\n")), Some(Format::Text));
        assert_eq!(det(&format!("{preamble}{ts}\n")), None);
        assert_eq!(
            det(&format!(
                "Logs\n\nThis folder holds the exports.\n```\n{ts}\n{ts}\n```\nAsk ops.\nThanks.\n"
            )),
            None
        );
        // A source file whose comment shows a log (a package's `.d.ts`): past its code, the
        // run of stamped lines is followed by code again, short of two thirds.
        let code = "import type {Options} from './options.js';\n".repeat(30);
        let example = "[00:57:44.581] [0] $ npm run build\n".repeat(9);
        let more = "\t(file: string, options?: Options): void;\n".repeat(12);
        assert_eq!(det(&format!("{code}{example}{more}")), None);
        assert_eq!(det(&format!("{code}{example}")), Some(Format::Text));
        // Past the preamble's bound and the lines after it, nothing is looked for.
        let long = "start-up chatter\n".repeat(PREAMBLE_LINES + DETECT_LINES);
        assert_eq!(det(&format!("{long}{ts}\n{ts}\n{ts}\n")), None);
        assert_eq!(
            det(&format!(
                "{}{ts}\n{ts}\n",
                "start-up chatter\n".repeat(PREAMBLE_LINES)
            )),
            Some(Format::Text)
        );
    }

    /// A Collector's file exporter in several pipelines writes metrics and logs documents
    /// beside the spans: the file is OTLP when one of its lines holds spans, and no log
    /// when none does.
    #[test]
    fn other_signals_beside_spans_leave_a_file_otlp() {
        let spans = r#"{"resourceSpans":[]}"#;
        let metrics = r#"{"resourceMetrics":[]}"#;
        let logs = r#"{ "resource_logs":[]}"#;
        let det = |text: &str| detect(text.as_bytes(), &[]);
        assert_eq!(
            det(&format!("{metrics}\n{logs}\n{spans}\n{metrics}\n")),
            Some(Format::Otlp)
        );
        assert_eq!(det(&format!("{logs}\n{spans}\n")), Some(Format::Otlp));
        assert_eq!(det(&format!("{metrics}\n{logs}\n")), None);
        assert_eq!(
            det(&format!(
                "{metrics}\n{{\"resourceMetricsX\":[]}}\n{{\"x\":1}}\n"
            )),
            None
        );
    }

    #[test]
    fn a_line_cut_by_the_end_of_the_head_does_not_count_against_a_log() {
        let event = r#"{"ts":"2026-11-03T14:02:11Z","type":"effect","pad":"x"}"#;
        let mut head = format!("oops\n{event}\n").into_bytes();
        while head.len() < SNIFF_BYTES {
            head.extend_from_slice(event.as_bytes());
        }
        head.truncate(SNIFF_BYTES);
        // "oops", then one event and one cut line: one vote each, unless the cut is discounted.
        assert_eq!(detect(&head, &[]), Some(Format::Jsonl));
    }

    /// serde_json's `at line 1` is dropped beside the real `path:line`; its column stays.
    #[test]
    fn json_errors_say_their_column_not_line_one() {
        let one = serde_json::from_str::<serde_json::Value>("{\"a\":1} x").unwrap_err();
        assert_eq!(
            super::super::json_why(&one),
            "trailing characters at column 9"
        );
        let two = serde_json::from_str::<serde_json::Value>("{\n\"a\" 1}").unwrap_err();
        assert!(super::super::json_why(&two).ends_with("at line 2 column 5"));
    }

    #[cfg(unix)]
    #[test]
    fn a_file_under_two_names_is_read_once() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("agent.log");
        std::fs::write(&log, "x\n").unwrap();
        std::fs::write(dir.path().join("other.log"), "x\n").unwrap();
        let folder = dir.path().to_str().unwrap().to_string();
        let dotted = format!("{folder}/./agent.log");
        let got = resolve(&[folder.clone(), dotted], &[]).unwrap();
        let shown: Vec<&str> = got.iter().map(|i| i.display.as_str()).collect();
        assert_eq!(
            shown,
            [
                format!("{folder}/./agent.log"),
                format!("{folder}/other.log")
            ]
        );
        assert!(got[0].explicit);
    }

    #[test]
    fn a_symlink_loop_is_walked_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("logs")).unwrap();
        std::fs::write(dir.path().join("logs/a.log"), "x\n").unwrap();
        std::os::unix::fs::symlink("..", dir.path().join("logs/up")).unwrap();
        let root = dir.path().to_str().unwrap().to_string();
        let found = resolve(&[root], &[]).unwrap();
        let names: Vec<_> = found
            .iter()
            .map(|i| i.display.rsplit('/').next().unwrap())
            .collect();
        assert_eq!(names, ["a.log"]);
    }

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

    /// A subfolder that cannot be read and a symbolic link to nothing, found in a folder,
    /// are inputs of their own that say why they cannot be read (and how to skip them);
    /// the rest of the folder is still found.
    #[cfg(unix)]
    #[test]
    fn an_unreadable_subfolder_and_a_dangling_link_are_named_not_fatal() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("trace.log"), "x\n").unwrap();
        std::os::unix::fs::symlink("gone.log", dir.path().join("current.log")).unwrap();
        std::os::unix::fs::symlink("loop-b.log", dir.path().join("loop-a.log")).unwrap();
        std::os::unix::fs::symlink("loop-a.log", dir.path().join("loop-b.log")).unwrap();
        let private = dir.path().join("private");
        std::fs::create_dir(&private).unwrap();
        std::fs::write(private.join("other.log"), "x\n").unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o000)).unwrap();
        // Root reads any folder: then only the link is unreadable.
        let locked = std::fs::read_dir(&private).is_err();
        let root = dir.path().to_str().unwrap().to_string();
        let found = resolve(std::slice::from_ref(&root), &[]);
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o755)).unwrap();
        let found = found.unwrap();
        let why = |name: &str| {
            let input = found.iter().find(|i| i.display.ends_with(name)).unwrap();
            match &input.origin {
                Origin::Unreadable(why) => Some(why.clone()),
                _ => None,
            }
        };
        assert!(
            why("current.log")
                .unwrap()
                .contains("--exclude 'current.log'")
        );
        assert!(why("current.log").unwrap().contains("which does not exist"));
        assert_eq!(
            why("loop-a.log").unwrap(),
            "a symbolic link to `loop-b.log`, which leads back to it: a symbolic link loop, \
             never reaching a file (--exclude 'loop-a.log' skips it)"
        );
        assert_eq!(why("trace.log"), None);
        if locked {
            assert!(why("private").unwrap().contains("--exclude 'private'"));
        } else {
            assert_eq!(why("other.log"), None);
        }
        // Excluded, they are not inputs at all.
        let skip = ["private", "current.log", "loop-*.log"].map(String::from);
        let excluded = resolve(&[root], &skip).unwrap();
        assert_eq!(excluded.len(), 1);
    }
}
