//! pino's log as pino-pretty prints it (Node.js), the usual way a pino log is kept during
//! development: a header `[2026-12-06 19:54:34.621 +0000] INFO (agent/14718): tool call`
//! (the stamp as `translateTime` writes it: time of day alone by default, the epoch's
//! milliseconds without it), then the logged object's members on the lines below, four
//! blanks in, each value as JSON writes it (`    runId: "d44c..."`, `    args: {` and its
//! lines, closed by `    }`); with `singleLine` the members after the message, one JSON
//! object. Each record is read as the pino line it stands for, `{"time", "level", "name",
//! "msg", ...members}`, so it means what the same call logged as JSON means: a tool call's
//! arguments, a request's method and url, a retry's error.

use super::lines::for_each_line_at_telling_cut;
use super::node_console::inspect;
use super::{ParseOptions, Parsed};
use serde_json::{Map, Value};
use std::io::{self, Read};

/// Whether the head of a file is such a log: most lines at the margin are headers, and
/// one shows what only pino-pretty writes, the origin in parentheses or members below.
/// Python's `[%(asctime)s] %(levelname)s: %(message)s` has neither: a text log.
pub fn looks_like(head: &[u8]) -> bool {
    let mut lines = (head.split(|&b| b == b'\n'))
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.trim_ascii().is_empty())
        .peekable();
    let (mut margin, mut headers, mut shown) = (0, 0, false);
    while let Some(line) = lines.next() {
        if continues(line) || line.starts_with(b"#") || super::is_npm_banner(line) {
            continue;
        }
        margin += 1;
        let Some(h) = header(line) else { continue };
        headers += 1;
        let below = lines
            .peek()
            .is_some_and(|next| std::str::from_utf8(next).is_ok_and(|next| member(next).is_some()));
        shown |= h.origin || below;
    }
    shown && headers * 2 > margin
}

/// Reads a pino-pretty log: each record as a JSON Lines line (see the module's doc).
pub fn parse(reader: &mut dyn Read, input: u32, opts: &ParseOptions) -> io::Result<Parsed> {
    let mut out = Parsed::new(opts);
    let mut lines = super::jsonl::ObjectLines::new(input, opts);
    let mut record: Option<Record> = None;
    let mut notes = super::lines::LineNotes::default();
    // The last record may run into a line cut short by the end of the file.
    let cut = for_each_line_at_telling_cut(reader, &mut notes, |line_no, _, bytes| {
        out.stats.lines += 1;
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if let Some(r) = record.as_mut().filter(|_| continues(bytes)) {
            if r.size + bytes.len() > MAX_RECORD {
                out.stats.skip(
                    line_no,
                    "below a record already 1 MiB long: read no further",
                );
                return;
            }
            r.size += bytes.len();
            r.below.push(String::from_utf8_lossy(bytes).into_owned());
            return;
        }
        // A message of several lines (`logger.info("a\nb")`): its later lines at the margin,
        // straight below the header.
        if let Some(r) = record.as_mut().filter(|r| r.below.is_empty())
            && continues_message(bytes)
        {
            if r.size + bytes.len() > MAX_RECORD {
                return out.stats.skip(
                    line_no,
                    "below a record already 1 MiB long: read no further",
                );
            }
            r.size += bytes.len();
            r.message.push('\n');
            r.message.push_str(&String::from_utf8_lossy(bytes));
            r.message_lines += 1;
            return;
        }
        if let Some(done) = record.take() {
            done.flush(&mut out, &mut lines, false);
        }
        if bytes.trim_ascii().is_empty() {
            out.stats.ignored += 1;
            return;
        }
        if super::is_npm_banner(bytes) {
            out.stats.ignored += 1;
            return;
        }
        if let Some(comment) = bytes.strip_prefix(b"#") {
            match date_header(comment) {
                Ok(Some(date)) => lines.set_date(date),
                Ok(None) => {}
                Err(why) => return out.stats.skip(line_no, why),
            }
            out.stats.ignored += 1;
            return;
        }
        match header(bytes) {
            Some(h) => record = Some(Record::new(line_no, &h)),
            None => out.stats.skip(
                line_no,
                "not a pino-pretty record: a record starts `[TIME] LEVEL (name/pid): message`",
            ),
        }
    })?;
    if let Some(done) = record.take() {
        done.flush(&mut out, &mut lines, cut);
    }
    notes.add_to(&mut out.stats);
    out.stats.notes.extend(lines.take_notes());
    Ok(out)
}

/// A record's lines below its header are kept up to this many bytes: a hostile or runaway
/// record must not hold the file in memory.
const MAX_RECORD: usize = 1 << 20;

/// The date a `# date: YYYY-MM-DD` comment gives the time-only stamps after it (pino-pretty's
/// default `[21:36:12.076]`), as in a text trace; `None` for another comment.
fn date_header(comment: &[u8]) -> Result<Option<chrono::NaiveDate>, String> {
    let body = String::from_utf8_lossy(comment.trim_ascii()).into_owned();
    if !(body.get(..5)).is_some_and(|p| p.eq_ignore_ascii_case("date:")) {
        return Ok(None);
    }
    let rest = body[5..].trim();
    chrono::NaiveDate::parse_from_str(rest, "%Y-%m-%d")
        .map(Some)
        .map_err(|_| format!("`# date:` header `{rest}` is not a date YYYY-MM-DD"))
}

/// A header's parts, borrowed from its line.
struct Header<'a> {
    stamp: &'a [u8],
    level: &'a [u8],
    /// The logger's name, from `(name/pid)`.
    name: Option<&'a [u8]>,
    /// Whether the origin in parentheses was written.
    origin: bool,
    message: &'a [u8],
}

/// `[STAMP] LEVEL (origin): message`, or `[STAMP] LEVEL: message` when pino-pretty was told
/// to leave the name and process out.
fn header(line: &[u8]) -> Option<Header<'_>> {
    // `levelFirst`: `INFO [STAMP] (origin): message`.
    let (first_level, line) = match line.first() {
        Some(b'[') => (None, line),
        _ => {
            let (level, rest) = level_word(line)?;
            (Some(level), rest.strip_prefix(b" ")?)
        }
    };
    let inner = line.strip_prefix(b"[")?;
    let close = memchr::memchr(b']', inner)?;
    let stamp = &inner[..close];
    let epoch = stamp.len() >= 12 && stamp.iter().all(u8::is_ascii_digit);
    if !(epoch || super::starts_with_timestamp(stamp)) {
        return None;
    }
    let (level, rest) = match first_level {
        Some(level) => (level, &inner[close + 1..]),
        None => level_word(inner[close + 1..].strip_prefix(b" ")?)?,
    };
    let (name, origin, rest) = match rest.strip_prefix(b" (") {
        Some(origin) => {
            let end = memchr::memmem::find(origin, b"):")?;
            (name_in(&origin[..end]), true, &origin[end + 2..])
        }
        None => (None, false, rest.strip_prefix(b":")?),
    };
    let message = rest.strip_prefix(b" ").unwrap_or(rest);
    Some(Header {
        stamp,
        level,
        name,
        origin,
        message,
    })
}

/// The level label the text starts with (`INFO`, `USERLVL`: pino-pretty writes them in
/// capitals), and the rest.
fn level_word(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = text.iter().position(|&b| !b.is_ascii_uppercase())?;
    (3..=7).contains(&end).then(|| text.split_at(end))
}

/// The logger's name in an origin: `agent/14718`, `agent/14718 on vm`, `agent` (`ignore:
/// "pid"`); `14718` is the process alone.
fn name_in(origin: &[u8]) -> Option<&[u8]> {
    let origin = match memchr::memmem::find(origin, b" on ") {
        Some(at) => &origin[..at],
        None => origin,
    };
    let name = origin.split(|&b| b == b'/').next()?;
    (!name.is_empty() && !name.iter().all(u8::is_ascii_digit)).then_some(name)
}

/// A line below a header that is part of its record: indented.
fn continues(line: &[u8]) -> bool {
    line.starts_with(b"    ") || line.starts_with(b"\t")
}

/// A line at the margin that goes on with the message above it: no header, comment, blank
/// or npm banner of its own.
fn continues_message(line: &[u8]) -> bool {
    !line.trim_ascii().is_empty()
        && !line.starts_with(b"#")
        && !super::is_npm_banner(line)
        && header(line).is_none()
}

/// A header and the lines below it, read when the next record starts.
struct Record {
    first_line: u32,
    object: Map<String, Value>,
    message: String,
    below: Vec<String>,
    /// The bytes of `below` and of the message's later lines.
    size: usize,
    /// The message's lines after the header's.
    message_lines: u64,
}

impl Record {
    fn new(first_line: u32, h: &Header) -> Self {
        let mut object = Map::new();
        object.insert("time".into(), stamp_value(h.stamp));
        let level = String::from_utf8_lossy(h.level).to_ascii_lowercase();
        object.insert("level".into(), Value::String(level));
        if let Some(name) = h.name {
            let name = String::from_utf8_lossy(name).into_owned();
            object.insert("name".into(), Value::String(name));
        }
        Record {
            first_line,
            object,
            message: String::from_utf8_lossy(h.message).into_owned(),
            below: Vec::new(),
            size: 0,
            message_lines: 0,
        }
    }

    /// `cut`: the record's last line is the input's, cut short.
    fn flush(mut self, out: &mut Parsed, lines: &mut super::jsonl::ObjectLines, cut: bool) {
        // `singleLine`: the members after the message, as one object.
        let (message, on_line) = match super::json_object_at_end(&self.message) {
            Some((at, members)) => (self.message[..at].trim_end().to_string(), members),
            None => (std::mem::take(&mut self.message), Map::new()),
        };
        self.object.insert("msg".into(), Value::String(message));
        for (k, v) in on_line.into_iter().chain(members_below(&self.below)) {
            self.object.entry(k).or_insert(v);
        }
        let json = Value::Object(self.object).to_string();
        lines.read(out, self.first_line, Ok(json.as_bytes()), cut);
        out.stats.ignored += self.below.len() as u64 + self.message_lines;
    }
}

/// The stamp as pino's `time` would have held it: the epoch's milliseconds as a number;
/// `SYS:standard`'s `2026-12-06 19:54:34.621 +0000` as ISO 8601; a time of day as written.
fn stamp_value(stamp: &[u8]) -> Value {
    let text = String::from_utf8_lossy(stamp);
    if let Ok(ms) = text.parse::<u64>() {
        return Value::Number(ms.into());
    }
    let iso = match text.split_once(' ') {
        Some((date, rest)) if date.len() == 10 => match rest.split_once(' ') {
            Some((time, offset))
                if offset.len() == 5
                    && offset.starts_with(['+', '-'])
                    && offset[1..].bytes().all(|b| b.is_ascii_digit()) =>
            {
                format!("{date}T{time}{}:{}", &offset[..3], &offset[3..])
            }
            _ => format!("{date}T{rest}"),
        },
        _ => text.into_owned(),
    };
    Value::String(iso)
}

/// The members on the lines below a header: `    name: value`, a value of several lines
/// running to its closing `    }` or `    ]`. An error's stack printed as its lines
/// (`<ref *1> AxiosError: ...` over its frames) is the record's `err`, its first line; a
/// value that is no JSON (an error object with its stack printed as lines inside it) is
/// read leniently, else as text.
fn members_below(below: &[String]) -> Map<String, Value> {
    let mut members = Map::new();
    let mut k = 0;
    while let Some(line) = below.get(k) {
        k += 1;
        // `    AxiosError: timeout...` over its frames is a stack, not a member.
        let stack = below
            .get(k)
            .is_some_and(|next| next.trim_start().starts_with("at "));
        let Some((name, first)) = member(line).filter(|_| !stack) else {
            let text = line.trim();
            // The mark is ASCII: what follows it starts on a character's boundary.
            let error = &text[text.len() - super::without_ref_mark(text.as_bytes()).len()..];
            if !members.contains_key("err") && inspect::is_error_header(error.as_bytes()) {
                members.insert("err".into(), Value::String(error.into()));
            }
            continue;
        };
        let mut value = first.to_string();
        if matches!(first, "{" | "[") {
            let closer = if first == "{" { "    }" } else { "    ]" };
            while let Some(next) = below.get(k) {
                k += 1;
                value.push('\n');
                value.push_str(next.trim_end());
                if next.trim_end() == closer {
                    break;
                }
            }
        }
        members.insert(name.into(), read_value(&value));
    }
    members
}

/// `    name: value`: four blanks, a name, `: `, the value's first line (`:` at the end when
/// the value starts on the lines below).
fn member(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("    ")?;
    let (name, value) = rest.split_once(": ").or_else(|| {
        // `    args: {` has its value's first line; an empty name is no member.
        rest.strip_suffix(':').map(|n| (n, ""))
    })?;
    // pino-pretty writes a key as it is (`@context`, `user id`): any but a blank first.
    let is_name = !name.is_empty() && !name.starts_with([' ', '\t']);
    is_name.then_some((name, value.trim_end()))
}

fn read_value(text: &str) -> Value {
    if let Ok(v) = serde_json::from_str(text) {
        return v;
    }
    // An error object: pino-pretty prints its `"stack":` as lines, not as a string.
    let without_stack = without_stack_lines(text);
    // With the stack last, its member's comma is left before the `}`: util.inspect's
    // reader takes trailing commas (and JSON), serde_json does not.
    (serde_json::from_str(&without_stack).ok())
        .or_else(|| inspect::as_value(&without_stack))
        .unwrap_or_else(|| Value::String(text.lines().next().unwrap_or_default().into()))
}

/// `text` without a `"stack":` member's lines (those indented deeper than its name).
fn without_stack_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut stack_indent = None;
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        if let Some(at) = stack_indent {
            if indent > at {
                continue;
            }
            stack_indent = None;
        }
        if line.trim() == "\"stack\":" {
            stack_indent = Some(indent);
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests;
