//! java.util.logging's `XMLFormatter`, what a `FileHandler` writes unless told otherwise:
//! a `<record>` a log record, its time in `<date>` (an ISO instant since Java 9) and
//! `<millis>`, its `<level>`, its `<message>` (XML-escaped), and a thrown exception's
//! `<exception><message>CLASS: message</message><frame>...`. Each record is read as the text
//! log's record it stands for: its `<message>` line becomes `TIME LEVEL message`, its
//! exception's message the line below it (a stack trace's header: the record's failure when
//! its message says none), every other line of the document a blank one. So each line keeps
//! its number (`agent.log:14` is the `<message>` line), and the messages mean what they mean
//! in any other Java log.

use super::{ParseOptions, Parsed};
use std::io::{self, BufRead, BufReader, Read};

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
}

/// The document read as text lines, one for each of its lines.
struct AsText<R> {
    inner: BufReader<R>,
    line: Vec<u8>,
    out: Vec<u8>,
    at: usize,
    record: Record,
}

impl<R: Read> Read for AsText<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.out.len() {
            self.line.clear();
            if self.inner.read_until(b'\n', &mut self.line)? == 0 {
                return Ok(0);
            }
            self.out.clear();
            self.at = 0;
            let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            text_line(&mut self.record, line, &mut self.out);
            self.out.push(b'\n');
        }
        let n = buf.len().min(self.out.len() - self.at);
        buf[..n].copy_from_slice(&self.out[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The text line (into `out`) that the document's `line` stands for.
fn text_line(record: &mut Record, line: &[u8], out: &mut Vec<u8>) {
    let tag = line.trim_ascii();
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
        b"message" if record.in_exception => out.extend_from_slice(&value),
        b"message" => {
            out.extend_from_slice(record.instant().as_bytes());
            out.push(b' ');
            out.extend_from_slice(record.level.as_bytes());
            out.push(b' ');
            out.extend_from_slice(&value);
        }
        _ => {}
    }
}

impl Record {
    /// The record's time: `<date>` when it names its zone (Java 9 on), else `<millis>` (Java
    /// 8 writes a local time without one).
    fn instant(&self) -> String {
        let zoned = |t: &&String| t.ends_with('Z') || t.len() > 19 && t[19..].contains(['+', '-']);
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
}
