//! logfmt: `time=2026-11-03T14:02:11.501Z level=INFO msg="refund created" refund_id=rf_1`,
//! as Go's `log/slog` text handler, logrus and Heroku's router write it. A line is read as the
//! JSON Lines object with the same members (a value that is a JSON number, `true`, `false`
//! or `null` as that, anything else as a string), so it means what its JSON Lines twin
//! means: `type=effect ...` is an event, a logger's `msg="refund created" refund_id=...` an
//! effect, any other line the application's own.

use super::{ParseOptions, Parsed};
use std::io::{self, Read};

pub fn parse(reader: &mut dyn Read, input: u32, opts: &ParseOptions) -> io::Result<Parsed> {
    // Not read again at an offset: deferred calls are kept as events.
    super::jsonl::parse_lines(reader, input, opts, false, |line, json| {
        to_json(line, json)?;
        Ok(&json[..])
    })
}

/// Whether a line is logfmt: only `key=value` pairs, two or more, one of them a timestamp
/// under a name JSON Lines reads (`time`, `ts`, `timestamp`, `@timestamp`).
pub fn looks_like_logfmt(line: &[u8]) -> bool {
    matches!(shape(line, |_| {}), Shape::Stamped { pairs } if pairs >= 2)
}

/// What a line is as logfmt, for a container's or an export's line to be given the
/// envelope's time ([`super::container::emit`]).
#[derive(Debug, PartialEq, Eq)]
pub enum Shape {
    /// `key=value` pairs, one a stamp: logfmt with a stamp of its own when two or more
    /// ([`looks_like_logfmt`]).
    Stamped { pairs: usize },
    /// `key=value` pairs, none named as a stamp: logfmt once given one.
    Unstamped,
    /// Not logfmt, or a stamp's name without a time (`time=now`).
    Other,
}

/// The line's [`Shape`]; `stamp(at)` is called with where the value of each pair named as
/// a stamp starts in the line, at its first digit (after the quote, if quoted).
pub fn shape(line: &[u8], mut stamp: impl FnMut(usize)) -> Shape {
    let mut pairs = 0;
    let (mut named, mut stamped) = (false, false);
    let ok = each_pair(line, |key, value, at| {
        // Go's and Ruby's loggers write no bare words, and keys are names: prose is not.
        let name = |b: &u8| b.is_ascii_alphanumeric() || b"_.-@/".contains(b);
        if std::ptr::eq(value, BARE) || !key.iter().all(name) {
            return Err(String::new());
        }
        pairs += 1;
        let is_stamp = super::jsonl::STAMP_NAMES
            .iter()
            .any(|k| k.as_bytes() == key);
        let timed = is_stamp && value.first().is_some_and(u8::is_ascii_digit);
        named |= is_stamp;
        stamped |= timed;
        if timed {
            stamp(at + usize::from(matches!(line[at], b'"' | b'\'')));
        }
        Ok(())
    });
    match ok {
        Ok(()) if stamped => Shape::Stamped { pairs },
        Ok(()) if !named && pairs >= 1 => Shape::Unstamped,
        _ => Shape::Other,
    }
}

/// The line as a JSON object, written into `out`.
fn to_json(line: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    out.clear();
    out.push(b'{');
    each_pair(line, |key, value, _| {
        if out.len() > 1 {
            out.push(b',');
        }
        json_string(key, out);
        out.push(b':');
        if is_json_scalar(value) {
            out.extend_from_slice(value);
        } else {
            json_string(value, out);
        }
        Ok(())
    })?;
    out.push(b'}');
    Ok(())
}

/// The value [`each_pair`] gives a bare word: `true`, by this very slice.
const BARE: &[u8] = b"true";

/// Calls `pair(key, value, at)` for each `key=value` of the line, a quoted value unquoted
/// (`\"`, `\\`, `\n`, `\t` undone), `at` where it starts in the line (its quote, if
/// quoted); a bare word is a key whose value is `true`.
fn each_pair(
    line: &[u8],
    mut pair: impl FnMut(&[u8], &[u8], usize) -> Result<(), String>,
) -> Result<(), String> {
    let mut at = 0;
    let mut unquoted = Vec::new();
    loop {
        while line.get(at).is_some_and(|b| b.is_ascii_whitespace()) {
            at += 1;
        }
        if at >= line.len() {
            return Ok(());
        }
        let start = at;
        while line
            .get(at)
            .is_some_and(|&b| b != b'=' && b != b'"' && !b.is_ascii_whitespace())
        {
            at += 1;
        }
        let key = &line[start..at];
        if key.is_empty() {
            return Err(format!("logfmt: no key at byte {}", start + 1));
        }
        if line.get(at) != Some(&b'=') {
            pair(key, BARE, at)?;
            continue;
        }
        at += 1;
        let value_at = at;
        // `'...'`: a string as Python's `repr` writes it (structlog's KeyValueRenderer);
        // a word that only starts with an apostrophe (`note='tis`) is a plain value.
        let quoted = match line.get(at) {
            Some(b'"') => Some(b'"'),
            Some(b'\'') if closes_python_string(&line[at + 1..]) => Some(b'\''),
            _ => None,
        };
        if let Some(quote) = quoted {
            unquoted.clear();
            at += 1;
            loop {
                match line.get(at) {
                    None => {
                        return Err(format!(
                            "logfmt: the quoted value of `{}` is never closed",
                            text(key)
                        ));
                    }
                    Some(&b) if b == quote => break,
                    Some(b'\\') => {
                        let escaped = *line.get(at + 1).unwrap_or(&b'\\');
                        unquoted.push(match escaped {
                            b'n' => b'\n',
                            b't' => b'\t',
                            b'r' => b'\r',
                            other => other,
                        });
                        at += 2;
                    }
                    Some(&b) => {
                        unquoted.push(b);
                        at += 1;
                    }
                }
            }
            at += 1;
            pair(key, &unquoted, value_at)?;
        } else if let Some(end) = python_container_end(line, at) {
            // `{'order': 'A-1', 'amount_p': 4500}`: a dict as Python prints it, as JSON.
            let written = &line[at..end];
            at = end;
            match crate::ingest::python_repr::python_as_json(written) {
                Some(json) => pair(key, json.as_bytes(), value_at)?,
                None => pair(key, written, value_at)?,
            }
        } else {
            let start = at;
            while line.get(at).is_some_and(|b| !b.is_ascii_whitespace()) {
                at += 1;
            }
            // Python's spellings of JSON's `null`, `true` and `false`.
            let value: &[u8] = match &line[start..at] {
                b"None" => b"null",
                b"True" => b"true",
                b"False" => b"false",
                written => written,
            };
            pair(key, value, value_at)?;
        }
    }
}

/// Whether a string Python's `repr` opened with `'` closes in `rest` (a `'` not escaped,
/// followed by a blank or the line's end).
fn closes_python_string(rest: &[u8]) -> bool {
    let mut i = 0;
    while i < rest.len() {
        match rest[i] {
            b'\\' => i += 2,
            b'\'' => return rest.get(i + 1).is_none_or(u8::is_ascii_whitespace),
            _ => i += 1,
        }
    }
    false
}

/// Where a `{...}` or `[...]` value that starts at `at` and has a blank inside ends (its
/// closing bracket, quotes respected); `None` for any other value.
fn python_container_end(line: &[u8], at: usize) -> Option<usize> {
    matches!(line.get(at), Some(b'{' | b'[')).then_some(())?;
    let (mut depth, mut quote, mut escaped) = (0usize, None, false);
    for (i, &b) in line.iter().enumerate().skip(at) {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if b == b'\\' => escaped = true,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'\'' | b'"' => quote = Some(b),
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        let inner = &line[at..=i];
                        return inner.contains(&b' ').then_some(i + 1);
                    }
                }
                _ => {}
            },
        }
    }
    None
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `4500`, `-12.5`, `1e3`, `true`, `false`, `null`: JSON's own spellings (no leading zeros,
/// so `000123` stays a string).
fn is_json_scalar(v: &[u8]) -> bool {
    matches!(v, b"true" | b"false" | b"null")
        || std::str::from_utf8(v).is_ok_and(|s| {
            serde_json::from_str::<serde_json::Number>(s).is_ok() && !s.starts_with('+')
        })
}

/// `b` as a JSON string, quoted and escaped (invalid UTF-8 replaced).
fn json_string(b: &[u8], out: &mut Vec<u8>) {
    let s = String::from_utf8_lossy(b);
    // Writing a string into a Vec cannot fail.
    serde_json::to_writer(&mut *out, &*s).expect("a string serialises");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(line: &str) -> serde_json::Value {
        let mut out = Vec::new();
        to_json(line.as_bytes(), &mut out).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn a_line_reads_as_its_json_twin() {
        assert_eq!(
            json(r#"time=2026-11-03T14:02:11.501Z level=INFO msg="refund \"A\" created" refund_id=rf_1 amount=45.00 order_id=000123 ok replayed=false"#),
            // As written: `amount` keeps its two decimals (serde_json's arbitrary precision).
            serde_json::from_str::<serde_json::Value>(
                r#"{"time": "2026-11-03T14:02:11.501Z", "level": "INFO", "msg": "refund \"A\" created",
                "refund_id": "rf_1", "amount": 45.00, "order_id": "000123", "ok": true,
                "replayed": false}"#
            )
            .unwrap()
        );
        let mut out = Vec::new();
        let why = to_json(br#"time=1 msg="never closed"#, &mut out).unwrap_err();
        assert!(why.contains("never closed"), "{why}");
    }

    /// structlog's KeyValueRenderer writes Python's `repr` of each value.
    #[test]
    fn pythons_spellings_are_read_as_json() {
        let line = "timestamp='2026-12-06T07:41:14.581642Z' level='info' event='tool call' run_id='r1' step=1 tool='issue_refund' args={'order': 'A-1', 'amount_p': 4500} idempotency_key=None replayed=False note=\"it's\"";
        assert!(looks_like_logfmt(line.as_bytes()));
        let v = json(line);
        assert_eq!(v["timestamp"], "2026-12-06T07:41:14.581642Z");
        assert_eq!((&v["event"], &v["step"]), (&"tool call".into(), &1.into()));
        assert_eq!(v["args"], r#"{"order": "A-1", "amount_p": 4500}"#);
        assert_eq!(
            (&v["idempotency_key"], &v["replayed"]),
            (&serde_json::Value::Null, &false.into())
        );
        assert_eq!(v["note"], "it's");
        // A bracket without a blank inside is a plain word, as before; so is a word that
        // only starts with an apostrophe.
        assert_eq!(json("time=1 ids=[1,2] x={a}")["ids"], "[1,2]");
        assert_eq!(json("time=1 note='tis refund_id=re_1")["note"], "'tis");
        assert_eq!(json(r"time=1 note='it\'s' b=2")["note"], "it's");
    }

    #[test]
    fn only_key_value_lines_with_a_timestamp_are_logfmt() {
        assert!(looks_like_logfmt(
            b"time=2026-11-03T14:02:11Z level=INFO msg=hi"
        ));
        assert!(looks_like_logfmt(
            b"level=info ts=1762178531.402 msg=\"refund created\""
        ));
        for line in [
            "level=INFO msg=hi",
            "time=now msg=hi",
            "time=2026-11-03T14:02:11Z",
            "2026-11-03T14:02:11Z  refund rf_1  order A-1  4500p",
            "time=2026-11-03T14:02:11Z msg=\"open",
            "Notes: time=2026 is not a log",
        ] {
            assert!(!looks_like_logfmt(line.as_bytes()), "{line}");
        }
    }

    /// A last line with no newline that reads as no event may be one cut short: skipped.
    /// A JSON Lines object closed is whole, newline or not.
    #[test]
    fn a_last_line_cut_short_is_skipped_unless_it_is_a_closed_object() {
        let read = |text: &str| {
            let p = parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap();
            (p.stats.ignored, p.stats.skipped)
        };
        let line = "time=2026-11-03T14:02:23.088Z level=INFO msg=started worker=3";
        assert_eq!(read(&format!("{line}\n")), (1, 0));
        assert_eq!(read(line), (0, 1));
        let jsonl = |text: &str| {
            let p = super::super::jsonl::parse(&mut text.as_bytes(), 0, &ParseOptions::default())
                .unwrap();
            (p.stats.ignored, p.stats.skipped)
        };
        let object = r#"{"ts":"2026-11-03T14:02:23.088Z","type":"heartbeat"}"#;
        assert_eq!(jsonl(object), (1, 0));
    }
}
