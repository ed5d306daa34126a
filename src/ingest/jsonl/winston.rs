//! winston's text layouts, each line read as the JSON Lines line it stands for: every line
//! of such a log was otherwise no format at all, or a text line whose fields went unread.
//! - `format.simple()`: `info: refund created {"refund_id":"re_1",...}`, the level, the
//!   message, then the line's other fields as one JSON object (its `timestamp` too, with
//!   `format.timestamp()`).
//! - The usual `format.printf` after `format.timestamp()`: the stamp first, then the level
//!   (`[INFO]`, `INFO`, `info:`, `[info]:`), the message and `JSON.stringify(meta)`:
//!   `2026-12-06T19:53:56.687Z [INFO] tool call {"runId":"...","step":1,...}`. Told from a
//!   text log whose lines end with a response's body by nearly all of its lines ending
//!   with an object ([`looks_like_printf`]).

use serde_json::{Map, Value};

/// The JSON object `line` stands for, if it is `LEVEL: MESSAGE {...}` with a level of
/// lower-case letters and an object that parses.
pub(crate) fn simple_object(line: &str) -> Option<String> {
    let line = line.trim_end();
    let (level, rest) = line.split_once(": ")?;
    let lower =
        !level.is_empty() && level.len() <= 8 && level.bytes().all(|b| b.is_ascii_lowercase());
    if !lower || !rest.ends_with('}') {
        return None;
    }
    let open = rest.find(" {")?;
    let (message, object) = (rest[..open].trim(), &rest[open + 1..]);
    let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(object) else {
        return None;
    };
    record(None, level, message, fields)
}

/// The JSON object a printf layout's line stands for: `STAMP LEVEL MESSAGE [{...}]`, the stamp an ISO instant, the level one winston or
/// a logger of its kind writes (any case, in brackets or not, a colon after it or not). A
/// line without the object is a record of its message alone.
pub(crate) fn printf_object(line: &str) -> Option<String> {
    let line = line.trim_end();
    let (stamp, after) = line.split_once(' ')?;
    if !is_iso_instant(stamp) {
        return None;
    }
    let (level, rest) = level_first(after)?;
    let (message, fields) = match crate::ingest::json_object_at_end(rest) {
        Some((at, fields)) => (&rest[..at], fields),
        None => (rest, Map::new()),
    };
    record(Some(stamp), level, message.trim(), fields)
}

fn record(
    stamp: Option<&str>,
    level: &str,
    message: &str,
    mut fields: Map<String, Value>,
) -> Option<String> {
    if message.is_empty() {
        return None;
    }
    let mut line = Map::new();
    if let Some(stamp) = stamp {
        line.insert("timestamp".into(), Value::String(stamp.into()));
    }
    line.insert("level".into(), Value::String(level.to_ascii_lowercase()));
    line.insert("message".into(), Value::String(message.into()));
    for (k, v) in std::mem::take(&mut fields) {
        line.entry(k).or_insert(v);
    }
    serde_json::to_string(&line).ok()
}

/// Whether the head of a file is a printf layout's log: the lines at the margin are
/// `STAMP LEVEL ...` (one other at most: a program's banner), two or more and two in three
/// of them end with an object, and no message has a text log's fields: two blanks between
/// them (`agent run 7f3a  step 4`, log4j's padded `INFO  [main]`) or `name=value` tokens.
/// A text log whose lines end with requests' and answers' bodies has those, and its
/// exceptions at the margin (Java's).
pub(crate) fn looks_like_printf(head: &[u8]) -> bool {
    let Ok(head) = std::str::from_utf8(head) else {
        // The head may end inside a character: its valid part.
        let valid = std::str::from_utf8(head).map_err(|e| e.valid_up_to());
        return valid.is_err_and(|n| n > 0 && looks_like_printf(&head[..n]));
    };
    let (mut margin, mut stamped, mut objects) = (0usize, 0usize, 0usize);
    for line in head.lines().filter(|l| !l.trim().is_empty()) {
        if line.starts_with([' ', '\t']) {
            continue;
        }
        margin += 1;
        let Some((stamp, after)) = line.trim_end().split_once(' ') else {
            continue;
        };
        let Some((_, rest)) = level_first(after).filter(|_| is_iso_instant(stamp)) else {
            continue;
        };
        stamped += 1;
        let message = match crate::ingest::json_object_at_end(rest) {
            Some((at, _)) => {
                objects += 1;
                &rest[..at]
            }
            None => rest,
        };
        // A level padded to a width (`INFO  [main]`) is a text log's too.
        if message.starts_with(' ') || has_text_fields(message.trim_end()) {
            return false;
        }
    }
    objects >= 2 && objects * 3 >= stamped * 2 && margin - stamped <= 1
}

/// Two blanks between words, or a `name=value` word: fields as text logs write them.
fn has_text_fields(message: &str) -> bool {
    let token = |w: &str| {
        w.split_once('=').is_some_and(|(name, value)| {
            !value.is_empty()
                && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && (name.bytes())
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        })
    };
    message.contains("  ") || message.split(' ').any(token)
}

/// `2026-12-06T19:53:56.687Z`: `format.timestamp()`'s default, `toISOString()`'s; an
/// offset for a zone. Not log4j's zoneless `2026-12-06T06:27:48,734`.
fn is_iso_instant(stamp: &str) -> bool {
    let b = stamp.as_bytes();
    let zone = stamp.ends_with('Z') || {
        let tail = &b[b.len().saturating_sub(6)..];
        tail.len() == 6 && matches!(tail[0], b'+' | b'-') && tail[3] == b':'
    };
    b.len() >= 20 && b[10] == b'T' && zone && crate::ingest::starts_with_timestamp(b)
}

/// The level the words start with and the words after it.
fn level_first(words: &str) -> Option<(&str, &str)> {
    let (bare, rest) = match words.strip_prefix('[') {
        // `[INFO]`, `[info]:`, `[INFO ]` (padded to a width inside its brackets).
        Some(inner) => {
            let close = inner.find(']').filter(|&c| c <= 10)?;
            let after = &inner[close + 1..];
            let after = after.strip_prefix(':').unwrap_or(after);
            (inner[..close].trim(), after.strip_prefix(' ')?)
        }
        None => {
            let (first, rest) = words.split_once(' ').unwrap_or((words, ""));
            (first.strip_suffix(':').unwrap_or(first), rest)
        }
    };
    let known = LEVELS.iter().any(|l| bare.eq_ignore_ascii_case(l));
    (known && !rest.trim().is_empty()).then_some((bare, rest))
}

/// winston's npm and syslog levels, and the names other loggers give theirs.
const LEVELS: [&str; 15] = [
    "error", "warn", "info", "http", "verbose", "debug", "silly", "trace", "fatal", "warning",
    "notice", "crit", "critical", "alert", "emerg",
];

#[cfg(test)]
mod tests;
