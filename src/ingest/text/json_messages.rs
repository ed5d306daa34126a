//! JSON objects among a text log's lines: a message after a stamp (Python's `%(asctime)s
//! %(message)s` logging `json.dumps(...)`), a program's message behind a syslog header
//! (`Dec  6 08:07:00 host payments[812]: {"msg": ...}`), or a line of its own (a journald
//! export whose service logs JSON beside other programs' text). Each is read by the JSON
//! Lines reader, as the line of JSON Lines it is, at its own stamp if it names one, else at
//! the time of the line around it; one reader per input, which follows the calls its
//! objects name as a JSON Lines file's reader does. An object it cannot read is skipped
//! with its reason.
//!
//! Asked only of a message whose first byte is `{`: an ordinary line never pays for it.

use super::{TextParser, Verdict, tail};
use crate::ingest::jsonl::ObjectLines;
use crate::ingest::lines::Ahead;
use crate::time::Timestamp;

/// Whether a message may be a JSON object: `{"` (or `{ "`) at its start. A Python dict's
/// repr (`{'order': 'A-1'}`), an empty `{}` or a Rust struct's `{ id: 1 }` is left to the
/// text reader, as before.
#[inline]
pub(super) fn may_be_object(msg: &[u8]) -> bool {
    match msg {
        [b'{', b'"', ..] => true,
        [b'{', rest @ ..] => rest.trim_ascii_start().first() == Some(&b'"'),
        _ => false,
    }
}

impl TextParser {
    /// The events of line `n`'s JSON object `json`, at `given` unless it names its own time.
    #[cold]
    pub(super) fn json_object(&mut self, n: u32, json: &[u8], given: Option<Timestamp>) -> Verdict {
        // Its events are not read again from the line's place: the reader of objects
        // follows calls of its own that a reading of the line alone would not know.
        self.place = None;
        let (input, opts) = (self.input, &self.opts);
        let objects =
            (self.process.objects).get_or_insert_with(|| Box::new(ObjectLines::new(input, opts)));
        let verdict = match objects.message_events(n, json.trim_ascii(), given) {
            Ok(Some((mut events, attrs))) => {
                if !attrs.is_empty() {
                    let loc = crate::event::Loc {
                        input: self.input,
                        line: n,
                    };
                    self.out.attrs.push((loc, attrs));
                }
                match events.len() {
                    1 => {
                        let (at, kind) = events.remove(0);
                        Verdict::Event(at, kind)
                    }
                    _ => Verdict::Events(events),
                }
            }
            Ok(None) => Verdict::Ignored,
            Err(why) => return Verdict::Skipped(why),
        };
        // A record of its own: the unstamped lines below it are not the text record's.
        self.process.tail = tail::Tail::AfterRecord { failed: false };
        verdict
    }

    /// A line that is a JSON object with no stamp before it, at its own time. One the JSON
    /// reader cannot read is part of the record above it when it continues one (a payload
    /// printed below its line, as before), else skipped with the JSON reader's reason.
    #[cold]
    pub(super) fn object_line(
        &mut self,
        n: u32,
        raw: &[u8],
        line: &[u8],
        no_stamp: String,
        ahead: Ahead,
    ) -> Verdict {
        match self.json_object(n, line, None) {
            Verdict::Skipped(why) => match self.record_tail(raw, line, no_stamp, ahead) {
                Verdict::Skipped(_) => Verdict::Skipped(why),
                verdict => verdict,
            },
            verdict => verdict,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::may_be_object;

    #[test]
    fn only_an_object_with_a_quoted_key_is_taken_for_json() {
        for json in [&br#"{"msg":"x"}"#[..], br#"{ "msg": "x" }"#, b"{\"msg"] {
            assert!(may_be_object(json), "{}", String::from_utf8_lossy(json));
        }
        for text in [
            &b"{'order': 'A-1'}"[..],
            b"{}",
            b"{ id: 1 }",
            b"refund {\"a\":1}",
            b"{",
        ] {
            assert!(!may_be_object(text), "{}", String::from_utf8_lossy(text));
        }
    }
}
