//! Node.js programs that log with the console, the way many agents do:
//! `console.log(new Date().toISOString(), 'tool call', { runId, step, tool, args })` prints
//! `2026-12-06T07:41:20.711Z tool call { runId: '...', step: 1, ... }`, the object in
//! `util.inspect`'s rendering ([`inspect`]): on the same line when short, else `{` there and
//! a member a line below, two blanks in, closed by `}` at the margin. An error is its stack,
//! four blanks in, then its own members the same way. Each record (a stamped line and the
//! indented lines below it) is read as the JSON Lines line it stands for, `{"time": stamp,
//! "msg": words, ...members}`, so it means what the same call logged through pino means.
//! A `debug` module's namespace before the words (`openai-agents:core Invoking tool ...`)
//! is its logger's `name`.

mod depth_cuts;
pub(crate) mod inspect;

use super::lines::for_each_line_at_telling_cut;
use super::{ParseOptions, Parsed};
use serde_json::{Map, Value};
use std::io::{self, Read};

/// Whether the head of a file is such a log: most lines at the margin are an ISO instant,
/// one blank and words, and a record in the head ends with an object that says something.
pub fn looks_like(head: &[u8]) -> bool {
    let mut lines = (head.split(|&b| b == b'\n'))
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.trim_ascii().is_empty())
        .peekable();
    // Lines at the margin: most are stamped (a program may print a word or two first).
    // Objects: util.inspect's members below a line decide alone; objects on the line
    // (which another log's message may end with) must be two or more.
    let (mut margin, mut stamped, mut below, mut on_line) = (0, 0, false, 0);
    while let Some(line) = lines.next() {
        if continues(line) {
            continue;
        }
        margin += 1;
        let Some((_, words)) = stamp_and_words(line) else {
            continue;
        };
        stamped += 1;
        // `tool call {` and its first member below; or `tool call { runId: 'x' }`.
        let opens_below = words.ends_with(b" {") || words == b"{";
        below |= opens_below && lines.peek().is_some_and(|next| member_line(next));
        on_line += usize::from(words.ends_with(b"}") && ends_with_object(words));
    }
    (below || on_line >= 2) && stamped * 2 > margin
}

/// A record's words end with an object that says something: util.inspect's (`{ runId: 'x'
/// }`), or JSON after words that start with no level (`tool call {"runId":"x"}`; `INFO refund
/// created {"refund_id":...}` is a text log's). An empty `{}` (SLF4J's placeholder) says
/// nothing.
fn ends_with_object(words: &[u8]) -> bool {
    let Some((at, members)) = object_at_end(words) else {
        return false;
    };
    let first = words.split(|&b| b == b' ').next().unwrap_or_default();
    let first = first.strip_suffix(b":").unwrap_or(first);
    // A level in lower case (winston's printf `info: ...`, log4j's `lowerCase=true`) starts
    // a text log's line: its JSON is a message's.
    let level = [
        &b"trace"[..],
        b"debug",
        b"info",
        b"notice",
        b"warn",
        b"warning",
        b"error",
    ]
    .iter()
    .chain(&[
        &b"err"[..],
        b"fatal",
        b"critical",
        b"crit",
        b"severe",
        b"fine",
    ])
    .any(|l| first.eq_ignore_ascii_case(l));
    let plain_first_word = first.first().is_some_and(u8::is_ascii_lowercase) && !level;
    !members.is_empty() && (inspect::opens_object(&words[at..]) || plain_first_word)
}

/// Reads a console log: each record as a JSON Lines line (see the module's doc).
pub fn parse(reader: &mut dyn Read, input: u32, opts: &ParseOptions) -> io::Result<Parsed> {
    let mut out = Parsed::new(opts);
    let mut lines = super::jsonl::ObjectLines::new(input, opts);
    let mut record = Record::default();
    let mut json = String::new();
    // The line of the latest unstamped line at the margin: the indented ones below it are
    // its, skipped with it.
    let mut unstamped = None;
    // The latest record's stamp. An error printed bare (`console.error(err)`) has none: it
    // is placed at the next record's when that is near (printed before it, and an error is
    // printed when it happens, after the request it ends), else at the latest one's.
    let mut last_stamp: Option<String> = None;
    let mut notes = super::lines::LineNotes::default();
    // The last record may run into a line cut short by the end of the file.
    let cut = for_each_line_at_telling_cut(reader, &mut notes, |line_no, _, bytes| {
        out.stats.lines += 1;
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if record.first_line != 0 && continues(bytes) && record.text.len() < MAX_RECORD {
            record.text.push('\n');
            record.text.push_str(&String::from_utf8_lossy(bytes));
            record.below += 1;
            return;
        }
        let stamped = stamp_and_words(bytes);
        let unplaced = record.first_line != 0 && record.stamp.is_empty();
        if unplaced && bytes.trim_ascii().is_empty() {
            // The next stamp, not a blank line, ends a bare error's wait for its time.
            out.stats.ignored += 1;
            return;
        }
        if unplaced {
            let next = stamped.map(|(stamp, _)| String::from_utf8_lossy(stamp).into_owned());
            record.stamp = bare_error_time(last_stamp.as_deref(), next.as_deref());
        }
        record.flush(&mut out, &mut lines, &mut json, false);
        if bytes.trim_ascii().is_empty() {
            out.stats.ignored += 1;
            return;
        }
        match (stamped, unstamped) {
            (Some((stamp, words)), _) => {
                unstamped = None;
                record.first_line = line_no;
                record.stamp = String::from_utf8_lossy(stamp).into_owned();
                record.text = String::from_utf8_lossy(words).into_owned();
                last_stamp = Some(record.stamp.clone());
            }
            // A web server's access line (morgan's), stamped its own way: no event.
            (None, _) if super::access_log::stamp(bytes.trim_ascii(), opts.tz).is_some() => {
                unstamped = None;
                out.stats.ignored += 1;
            }
            (None, _) if last_stamp.is_some() && is_bare_error(bytes) => {
                unstamped = None;
                record.first_line = line_no;
                record.text = String::from_utf8_lossy(bytes).into_owned();
            }
            (None, _) if super::is_npm_banner(bytes) => {
                out.stats.ignored += 1;
            }
            (None, Some(head)) if continues(bytes) => {
                out.stats.skip(
                    line_no,
                    format!("below line {head}, which has no timestamp"),
                );
            }
            (None, _) => {
                unstamped = Some(line_no);
                out.stats.skip(
                    line_no,
                    "no timestamp: a console line is `ISO-TIME words [object]` (`console.log(new Date().toISOString(), ...)`)",
                );
            }
        }
    })?;
    if record.first_line != 0 && record.stamp.is_empty() {
        record.stamp = bare_error_time(last_stamp.as_deref(), None);
    }
    record.flush(&mut out, &mut lines, &mut json, cut);
    notes.add_to(&mut out.stats);
    out.stats.notes.extend(lines.take_notes());
    Ok(out)
}

/// How far after the latest stamp the next may be for a bare error between them to take
/// it: a client's timeout is seconds, not the hours to a restarted process's next line.
const BARE_ERROR_WITHIN: chrono::TimeDelta = chrono::TimeDelta::seconds(60);

/// The time of an error printed between the records stamped `last` and `next`: `next`
/// when it is near, else `last` (a process that printed its error and stopped).
fn bare_error_time(last: Option<&str>, next: Option<&str>) -> String {
    let at = |s: &str| chrono::DateTime::parse_from_rfc3339(s).ok();
    let near = match (last.and_then(at), next.and_then(at)) {
        (Some(l), Some(n)) => n >= l && n - l <= BARE_ERROR_WITHIN,
        _ => false,
    };
    let chosen = if near { next } else { last };
    chosen.unwrap_or_default().to_string()
}

/// `<ref *1> AxiosError: timeout of 1000ms exceeded`: an error's first line as
/// `console.error(err)` prints it, with no stamp of its own.
fn is_bare_error(line: &[u8]) -> bool {
    inspect::is_error_header(super::without_ref_mark(line))
}

/// A record longer than this is read no further: its other lines are counted as skipped.
const MAX_RECORD: usize = 1 << 20;

/// A stamped line and the lines below it, read when the next record starts.
#[derive(Default)]
struct Record {
    first_line: u32,
    stamp: String,
    text: String,
    /// The lines below the stamped one.
    below: u32,
}

impl Record {
    /// `cut`: the record's last line is the input's, cut short.
    fn flush(
        &mut self,
        out: &mut Parsed,
        lines: &mut super::jsonl::ObjectLines,
        json: &mut String,
        cut: bool,
    ) {
        if self.first_line == 0 {
            return;
        }
        json.clear();
        json.push_str(&as_json(&self.stamp, &self.text).to_string());
        lines.read(out, self.first_line, Ok(json.as_bytes()), cut);
        out.stats.ignored += self.below as u64;
        *self = Record::default();
    }
}

/// The JSON object a record stands for.
fn as_json(stamp: &str, text: &str) -> Value {
    let mut line = Map::new();
    line.insert("time".into(), Value::String(stamp.into()));
    let (name, text) = namespace(text);
    if let Some(name) = name {
        line.insert("name".into(), Value::String(name.into()));
    }
    // The words are the first line's: an error's stack below them is not.
    let (words, members, below_stack) = match object_at_end(text.as_bytes()) {
        // JSON after a sentence (`Invoking tool issue_refund with input {"order":...}`, the
        // OpenAI Agents SDK's) is part of it: read as a text log's message.
        Some((start, _))
            if text[start..].starts_with("{\"") && text.starts_with(char::is_uppercase) =>
        {
            (text, None, false)
        }
        Some((start, members)) => (&text[..start], Some(members), text[..start].contains('\n')),
        None => (text, None, false),
    };
    let words = words.split('\n').next().unwrap_or_default().trim_end();
    // `refund failed TypeError: fetch failed`: an error logged as itself, its first line.
    let (words, error) = match error_at(words.as_bytes()) {
        Some(at) => (words[..at].trim_end(), Some(without_frames(&words[at..]))),
        None => (words, None),
    };
    line.insert("msg".into(), Value::String(words.into()));
    if let Some(error) = error {
        line.insert("err".into(), Value::String(error.into()));
        // The members after an error's stack are its own (`isAxiosError`, `code`,
        // `config`), and its class is their `name`, which util.inspect leaves out: the
        // error as winston spreads it on a line.
        let class = error.split(':').next().unwrap_or_default();
        // A `debug` namespace stays the name.
        if below_stack && class.ends_with("Error") && !class.contains(' ') {
            line.entry("name").or_insert(Value::String(class.into()));
        }
    }
    for (k, v) in members.into_iter().flatten() {
        line.entry(k).or_insert(v);
    }
    Value::Object(line)
}

/// An error's first line without the stack `debug`'s `%o` joins onto it (`... for 1000ms
/// at ClientRequest.<anonymous> (file:///...:868:61) at ...`).
fn without_frames(error: &str) -> &str {
    let frame = |rest: &str| {
        let first = rest.split(' ').next().unwrap_or_default();
        // Its place in parentheses a little after it: looked for nearby only.
        let near = &rest.as_bytes()[..rest.len().min(300)];
        ["async", "new", "node:", "file:"]
            .iter()
            .any(|p| first.starts_with(p))
            || (first.contains('.') && near.contains(&b'(') && near.contains(&b')'))
    };
    let cut = (error.match_indices(" at ")).find(|&(i, _)| frame(&error[i + 4..]));
    cut.map_or(error, |(i, _)| &error[..i])
}

/// Where an error's first line starts among a record's words ([`inspect::is_error_header`]),
/// at a word's start.
fn error_at(words: &[u8]) -> Option<usize> {
    (0..words.len())
        .filter(|&i| i == 0 || words[i - 1] == b' ')
        .find(|&i| words[i].is_ascii_uppercase() && inspect::is_error_header(&words[i..]))
}

/// The `debug` module's namespace first (`openai-agents:core`, `app:http`), then a blank.
fn namespace(text: &str) -> (Option<&str>, &str) {
    match super::text::after_debug_namespace(text.as_bytes()) {
        // Both parts of `text` split at ASCII bytes: still text.
        Some((name, rest)) => (Some(&text[..name.len()]), &text[text.len() - rest.len()..]),
        None => (None, text),
    }
}

/// The members of the inspected object the record's text ends with, and where it starts:
/// the first `{` (after a blank, or at the start) from which the rest is one object.
fn object_at_end(text: &[u8]) -> Option<(usize, Map<String, Value>)> {
    if !text.trim_ascii_end().ends_with(b"}") {
        return None;
    }
    let whole = std::str::from_utf8(text).ok()?;
    let mut from = 0;
    // A few tries: a record has few objects before its last, and a hostile line many.
    let mut tries = 0;
    while let Some(k) = memchr::memchr(b'{', &text[from..])
        && tries < 16
    {
        let at = from + k;
        from = at + 1;
        let after_blank = at == 0 || text[at - 1].is_ascii_whitespace();
        // util.inspect's, or JSON's (`JSON.stringify` after the words).
        let opens = inspect::opens_object(&text[at..]) || text[at..].starts_with(b"{\"");
        if !after_blank || !opens {
            continue;
        }
        tries += 1;
        if let Some(Value::Object(members)) = inspect::as_value(&whole[at..]) {
            return Some((at, members));
        }
    }
    None
}

/// `STAMP words`: an ISO instant (`2026-12-06T07:41:20.706Z`), one blank, the rest.
fn stamp_and_words(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let blank = memchr::memchr(b' ', line)?;
    let (stamp, words) = (&line[..blank], &line[blank + 1..]);
    let iso = stamp.len() >= 20 && stamp[10] == b'T' && super::starts_with_timestamp(stamp);
    // A syslog header's host and tag (`STAMP HOST TAG[PID]: {...}`, rsyslog's file format,
    // `journalctl -o short-iso`): a text log whose programs may log JSON, not a console.
    let syslog = || super::syslog::after_host_and_tag(&line[blank..]).is_some();
    (iso && !words.is_empty() && !words[0].is_ascii_whitespace() && !syslog())
        .then_some((stamp, words))
}

/// A line below a stamped one that is part of its record: indented (an object's member,
/// an error's stack), closing an object at the margin, or the cause axios (1.1x and later)
/// appends to an error's stack (`Caused by: Error: socket hang up`, at the margin).
fn continues(line: &[u8]) -> bool {
    matches!(line.first(), Some(b' ' | b'\t' | b'}' | b']')) || line.starts_with(b"Caused by: ")
}

/// `  runId: 'x',`: an object's member, two blanks in.
fn member_line(line: &[u8]) -> bool {
    let Some(rest) = line.strip_prefix(b"  ") else {
        return false;
    };
    let name_end = rest
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'\'' | b'-')))
        .unwrap_or(rest.len());
    name_end > 0 && rest[name_end..].starts_with(b": ")
}

#[cfg(test)]
mod inspect_tests;
#[cfg(test)]
mod tests;
