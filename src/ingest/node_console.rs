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

mod inspect;

use super::lines::for_each_line_at;
use super::{ParseOptions, Parsed};
use serde_json::{Map, Value};
use std::io::{self, Read};

/// Whether the head of a file is such a log: its first line of content is an ISO instant,
/// one blank and words, and a record in the head ends with an inspected object.
pub fn looks_like(head: &[u8]) -> bool {
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let Some(first) = lines.by_ref().find(|l| !l.trim_ascii().is_empty()) else {
        return false;
    };
    if stamp_and_words(first).is_none() {
        return false;
    }
    let mut lines = std::iter::once(first).chain(lines).peekable();
    while let Some(line) = lines.next() {
        let Some((_, words)) = stamp_and_words(line) else {
            continue;
        };
        // `tool call {` and its first member below; or `tool call { runId: 'x' }`.
        let opens_below = words.ends_with(b" {") || words == b"{";
        if opens_below && lines.peek().is_some_and(|next| member_line(next)) {
            return true;
        }
        if words.ends_with(b"}") && object_at_end(words).is_some() {
            return true;
        }
    }
    false
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
    for_each_line_at(reader, |line_no, _, bytes| {
        out.stats.lines += 1;
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if record.first_line != 0 && continues(bytes) && record.text.len() < MAX_RECORD {
            record.text.push('\n');
            record.text.push_str(&String::from_utf8_lossy(bytes));
            record.below += 1;
            return;
        }
        record.flush(&mut out, &mut lines, &mut json);
        if bytes.trim_ascii().is_empty() {
            out.stats.ignored += 1;
            return;
        }
        match (stamp_and_words(bytes), unstamped) {
            (Some((stamp, words)), _) => {
                unstamped = None;
                record.first_line = line_no;
                record.stamp = String::from_utf8_lossy(stamp).into_owned();
                record.text = String::from_utf8_lossy(words).into_owned();
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
    record.flush(&mut out, &mut lines, &mut json);
    Ok(out)
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
    fn flush(
        &mut self,
        out: &mut Parsed,
        lines: &mut super::jsonl::ObjectLines,
        json: &mut String,
    ) {
        if self.first_line == 0 {
            return;
        }
        json.clear();
        json.push_str(&as_json(&self.stamp, &self.text).to_string());
        lines.read(out, self.first_line, Ok(json.as_bytes()));
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
    let (words, members) = match object_at_end(text.as_bytes()) {
        // An error's stack between its message and its members is not the line's words.
        Some((start, members)) => {
            let words = text[..start].split('\n').next().unwrap_or_default();
            (words.trim_end(), Some(members))
        }
        None => (text, None),
    };
    line.insert("msg".into(), Value::String(words.into()));
    for (k, v) in members.into_iter().flatten() {
        line.entry(k).or_insert(v);
    }
    Value::Object(line)
}

/// The `debug` module's namespace first (`openai-agents:core`, `app:http`): lower-case
/// words joined by `:`, then a blank.
fn namespace(text: &str) -> (Option<&str>, &str) {
    let Some((first, rest)) = text.split_once(' ') else {
        return (None, text);
    };
    let word = |w: &str| {
        w.starts_with(|c: char| c.is_ascii_lowercase())
            && (w.bytes())
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.*".contains(&b))
    };
    let parts = first.split(':').collect::<Vec<_>>();
    let is_namespace = parts.len() >= 2 && parts.iter().all(|p| word(p));
    match is_namespace && !rest.trim_start().is_empty() {
        true => (Some(first), rest.trim_start()),
        false => (None, text),
    }
}

/// The members of the inspected object the record's text ends with, and where it starts:
/// the first `{` (after a blank, or at the start) from which the rest is one object.
fn object_at_end(text: &[u8]) -> Option<(usize, Map<String, Value>)> {
    if !text.trim_ascii_end().ends_with(b"}") {
        return None;
    }
    let mut from = 0;
    while let Some(k) = memchr::memchr(b'{', &text[from..]) {
        let at = from + k;
        from = at + 1;
        let after_blank = at == 0 || text[at - 1].is_ascii_whitespace();
        if !after_blank || !inspect::opens_object(&text[at..]) {
            continue;
        }
        let rest = std::str::from_utf8(&text[at..]).ok()?;
        if let Some(Value::Object(members)) = inspect::as_value(rest) {
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
    (iso && !words.is_empty() && !words[0].is_ascii_whitespace()).then_some((stamp, words))
}

/// A line below a stamped one that is part of its record: indented (an object's member,
/// an error's stack) or closing an object at the margin.
fn continues(line: &[u8]) -> bool {
    matches!(line.first(), Some(b' ' | b'\t' | b'}' | b']'))
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
mod tests;
