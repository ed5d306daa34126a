//! java.util.logging's `XMLFormatter`, what a `FileHandler` writes unless told otherwise:
//! a `<record>` a log record, its time in `<date>` (an ISO instant since Java 9) and
//! `<millis>`, its `<level>`, its `<message>` (XML-escaped), and a thrown exception's
//! `<exception><message>CLASS: message</message><frame>...`. Each record is read as the text
//! log's record it stands for: its `<message>` line becomes `TIME LEVEL message`, its
//! exception's message the line below it (a stack trace's header: the record's failure when
//! its message says none), every other line of the document a blank one. So each line keeps
//! its number (`agent.log:14` is the `<message>` line), and the messages mean what they mean
//! in any other Java log.

use super::long_lines::{MAX_LINE, pass_on, read_line_up_to};
use super::{ParseOptions, Parsed};
use std::io::{self, BufReader, Read};

/// Whether the head of a file is such a document: the XML declaration, then JUL's
/// `<!DOCTYPE log ...>` or `<log>` before a `<record>`.
pub fn looks_like(head: &[u8]) -> bool {
    let text = head.trim_ascii_start();
    text.starts_with(b"<?xml")
        && (memchr::memmem::find(text, b"<!DOCTYPE log").is_some()
            || memchr::memmem::find(text, b"<log>").is_some())
        && memchr::memmem::find(text, b"<record>").is_some()
}

/// Reads a JUL XML log through the text parser, a line for a line (see the module's doc).
pub fn parse(reader: &mut dyn Read, input: u32, opts: &ParseOptions) -> io::Result<Parsed> {
    let mut lines = AsText {
        inner: BufReader::with_capacity(1 << 16, reader),
        line: Vec::new(),
        out: Vec::new(),
        at: 0,
        record: Record::default(),
        passing: false,
    };
    super::text::parse_input(&mut lines, input, opts, false)
}

/// What the lines of the record being read said so far.
#[derive(Default)]
struct Record {
    time: Option<String>,
    millis: Option<i64>,
    level: String,
    in_exception: bool,
    /// Inside a `<message>` written over several lines (XMLFormatter escapes no line break).
    in_message: bool,
}

/// The document read as text lines, one for each of its lines.
struct AsText<R> {
    inner: BufReader<R>,
    line: Vec<u8>,
    out: Vec<u8>,
    at: usize,
    record: Record,
    /// A line too long to hold is being passed on as it is.
    passing: bool,
}

impl<R: Read> Read for AsText<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.out.len() {
            self.out.clear();
            self.at = 0;
            // Many lines at a time: the text parser reads the lines ahead of one (a
            // request's headers below it) in what it was given.
            while self.out.len() < buf.len() {
                if self.passing {
                    self.passing = !pass_on(&mut self.inner, &mut self.out, 64 << 10)?;
                    continue;
                }
                self.line.clear();
                let whole = read_line_up_to(&mut self.inner, &mut self.line, MAX_LINE + 1)?;
                if self.line.is_empty() {
                    break;
                }
                if !whole {
                    // Too long to hold: passed on as it is, for the line splitter to skip.
                    self.out.extend_from_slice(&self.line);
                    self.passing = true;
                    continue;
                }
                let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                text_line(&mut self.record, line, &mut self.out);
                self.out.push(b'\n');
            }
        }
        let n = buf.len().min(self.out.len() - self.at);
        buf[..n].copy_from_slice(&self.out[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The text line (into `out`) that the document's `line` stands for.
fn text_line(record: &mut Record, line: &[u8], out: &mut Vec<u8>) {
    // A message's lines after its first are its record's, as in a text log.
    if record.in_message {
        let (text, ends) = match line.strip_suffix(b"</message>") {
            Some(text) => (text, true),
            None => (line, false),
        };
        record.in_message = !ends;
        out.extend_from_slice(&unescaped(text));
        return;
    }
    let tag = line.trim_ascii();
    // `<message>first line` without its end: the record's line, the rest below it.
    if let Some(first) = tag.strip_prefix(b"<message>")
        && memchr::memmem::find(first, b"</message>").is_none()
    {
        record.in_message = true;
        message(record, &unescaped(first), out);
        return;
    }
    if tag == b"<record>" {
        *record = Record::default();
        return;
    }
    if tag == b"<exception>" || tag == b"</exception>" {
        record.in_exception = tag == b"<exception>";
        return;
    }
    let Some((name, value)) = element(tag) else {
        // The document's own lines (`<?xml ...>`, `<log>`, `</record>`, `<frame>`) stand
        // for nothing; any other line is left for the text parser to skip with its reason.
        if !(tag.is_empty() || structural(tag)) {
            out.extend_from_slice(line);
        }
        return;
    };
    let value = unescaped(value);
    match name {
        b"date" => record.time = Some(String::from_utf8_lossy(&value).into_owned()),
        b"millis" => {
            record.millis = std::str::from_utf8(&value)
                .ok()
                .and_then(|m| m.parse().ok())
        }
        b"level" => record.level = String::from_utf8_lossy(&value).into_owned(),
        b"message" => message(record, &value, out),
        _ => {}
    }
}

/// A `<message>`'s (first) line: the record's stamped line, or its exception's first line.
fn message(record: &Record, value: &[u8], out: &mut Vec<u8>) {
    if !record.in_exception {
        out.extend_from_slice(record.instant().as_bytes());
        out.push(b' ');
        out.extend_from_slice(record.level.as_bytes());
        out.push(b' ');
    }
    out.extend_from_slice(value);
}

impl Record {
    /// The record's time: `<date>` when it names its zone (Java 9 on), else `<millis>` (Java
    /// 8 writes a local time without one).
    fn instant(&self) -> String {
        let zoned = |t: &&String| {
            let after_seconds = t.as_bytes().get(19..).unwrap_or_default();
            t.ends_with('Z') || after_seconds.iter().any(|b| matches!(b, b'+' | b'-'))
        };
        match (self.time.as_ref().filter(zoned), self.millis) {
            (Some(t), _) => t.clone(),
            (None, Some(ms)) => chrono::DateTime::from_timestamp_millis(ms)
                .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
                .unwrap_or_default(),
            (None, None) => self.time.clone().unwrap_or_default(),
        }
    }
}

/// `<name>value</name>` on one line.
fn element(tag: &[u8]) -> Option<(&[u8], &[u8])> {
    let rest = tag.strip_prefix(b"<")?;
    let close = rest.iter().position(|&b| b == b'>')?;
    let name = &rest[..close];
    let inner = &rest[close + 1..];
    let end = [b"</", name, b">"].concat();
    let value = inner.strip_suffix(&end[..])?;
    name.iter()
        .all(u8::is_ascii_alphabetic)
        .then_some((name, value))
}

/// A line of the document's frame that says nothing of a record.
fn structural(tag: &[u8]) -> bool {
    tag.starts_with(b"<?xml")
        || tag.starts_with(b"<!DOCTYPE")
        || matches!(
            tag,
            b"<log>" | b"</log>" | b"</record>" | b"<frame>" | b"</frame>"
        )
}

/// XML's escapes undone: the five named ones and numeric characters.
fn unescaped(value: &[u8]) -> Vec<u8> {
    if !value.contains(&b'&') {
        return value.to_vec();
    }
    let mut out = Vec::with_capacity(value.len());
    let mut rest = value;
    while let Some(amp) = rest.iter().position(|&b| b == b'&') {
        out.extend_from_slice(&rest[..amp]);
        rest = &rest[amp..];
        let Some(semi) = rest.iter().take(12).position(|&b| b == b';') else {
            out.push(b'&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..semi];
        let c = match entity {
            b"amp" => Some('&'),
            b"lt" => Some('<'),
            b"gt" => Some('>'),
            b"quot" => Some('"'),
            b"apos" => Some('\''),
            [b'#', b'x', hex @ ..] => std::str::from_utf8(hex)
                .ok()
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .and_then(char::from_u32),
            [b'#', dec @ ..] => std::str::from_utf8(dec)
                .ok()
                .and_then(|d| d.parse().ok())
                .and_then(char::from_u32),
            _ => None,
        };
        // A line break written as `&#10;` stays on the record's line: a line for a line.
        let c = c.map(|c| if c == '\n' || c == '\r' { ' ' } else { c });
        match c {
            Some(c) => {
                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                rest = &rest[semi + 1..];
            }
            None => {
                out.push(b'&');
                rest = &rest[1..];
            }
        }
    }
    out.extend_from_slice(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE log SYSTEM "logger.dtd">
<log>
<record>
  <date>2026-12-06T09:59:25.765245776Z</date>
  <millis>1796551165765</millis>
  <level>INFO</level>
  <message>agent run 7f3a  step 4  tool=issue_refund  args={&quot;order&quot;:&quot;A-1&quot;}</message>
</record>
<recrod>
<record>
  <date>2026-12-06T09:59:25.796106806Z</date>
  <millis>1796551165796</millis>
  <level>INFO</level>
  <message>POST http://127.0.0.1:38465/v1/refunds  (attempt 1)</message>
</record>
<record>
  <date>2026-12-06T09:59:26</date>
  <millis>1796551166822</millis>
  <level>WARNING</level>
  <message>refund attempt 1 failed</message>
  <exception>
    <message>java.net.http.HttpTimeoutException: request timed out</message>
    <frame>
      <class>jdk.internal.net.http.HttpClientImpl</class>
      <method>send</method>
      <line>572</line>
    </frame>
  </exception>
</record>
"#;

    #[test]
    fn each_record_is_its_text_line_on_its_message_line() {
        let p = parse(&mut LOG.as_bytes(), 0, &ParseOptions::default()).unwrap();
        let kinds: Vec<(u32, &str)> = (p.events.iter())
            .map(|e| (e.loc.line, e.kind.type_name()))
            .collect();
        assert_eq!(kinds, [(8, "tool_call"), (15, "attempt"), (23, "failure")]);
        // Java 8's zoneless `<date>` gives way to `<millis>`.
        assert_eq!(
            p.events[2].at,
            crate::time::Timestamp::from_millis(1796551166822)
        );
        let s = &p.stats;
        assert_eq!(s.events + s.ignored + s.skipped, s.lines);
        let skipped: Vec<u32> = s.problems.iter().map(|x| x.line).collect();
        assert_eq!(
            skipped,
            [10],
            "a line that is no part of the document is not dropped"
        );
    }

    #[test]
    fn a_jul_document_is_told_from_other_xml() {
        assert!(looks_like(LOG.as_bytes()));
        assert!(!looks_like(
            b"<?xml version=\"1.0\"?>\n<project><record>x</record></project>\n"
        ));
        assert!(!looks_like(b"2026-12-06T09:59:25Z <log> <record>\n"));
        assert_eq!(
            unescaped(b"a &lt;b&gt; &amp;&#39;&#x41;&bogus; &"),
            b"a <b> &'A&bogus; &"
        );
    }

    /// A line of the document too long to hold is skipped with its length, and the records
    /// after it read on their lines.
    #[test]
    fn a_line_too_long_to_hold_is_skipped_in_place() {
        let at = LOG.find("<recrod>").unwrap();
        let mut log = LOG.as_bytes()[..at].to_vec();
        log.resize(log.len() + 3 * super::MAX_LINE, b'z');
        log.push(b'\n');
        log.extend_from_slice(&LOG.as_bytes()[at..]);
        // Not gathered on the way: no more than the cap is held of it.
        let mut lines = AsText {
            inner: BufReader::new(&log[..]),
            line: Vec::new(),
            out: Vec::new(),
            at: 0,
            record: Record::default(),
            passing: false,
        };
        io::copy(&mut lines, &mut io::sink()).unwrap();
        assert!(lines.line.capacity() <= 2 * super::MAX_LINE + 2);
        let p = parse(&mut &log[..], 0, &ParseOptions::default()).unwrap();
        let kinds: Vec<(u32, &str)> = (p.events.iter())
            .map(|e| (e.loc.line, e.kind.type_name()))
            .collect();
        assert_eq!(kinds, [(8, "tool_call"), (16, "attempt"), (24, "failure")]);
        let s = &p.stats;
        assert_eq!(s.events + s.ignored + s.skipped, s.lines);
        let skipped: Vec<u32> = s.problems.iter().map(|x| x.line).collect();
        assert_eq!(skipped, [10, 11]);
        let why = &s.problems[0].reason;
        assert!(
            why.starts_with("line longer than 16 MiB (50331648 bytes)"),
            "{why}"
        );
    }
}
