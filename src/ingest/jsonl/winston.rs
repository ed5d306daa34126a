//! winston's text layouts, each line read as the JSON Lines line it stands for: every line
//! of such a log was otherwise no format at all, or a text line whose fields went unread.
//! - `format.simple()`: `info: refund created {"refund_id":"re_1",...}`, the level, the
//!   message, then the line's other fields as one JSON object (its `timestamp` too, with
//!   `format.timestamp()`).
//! - The usual `format.printf` after `format.timestamp()`: the stamp first, then the level
//!   (`[INFO]`, `INFO`, `info:`, `[info]:`), the message and `JSON.stringify(meta)`:
//!   `2026-12-06T19:53:56.687Z [INFO] tool call {"runId":"...","step":1,...}`. Told from a
//!   text log whose lines end with a response's body by most of its lines ending with an
//!   object ([`looks_like_printf`]).

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

/// The JSON object a printf layout's line stands for, and whether the line ended with an
/// object: `STAMP LEVEL MESSAGE [{...}]`, the stamp an ISO instant, the level one winston or
/// a logger of its kind writes (any case, in brackets or not, a colon after it or not). A
/// line without the object is a record of its message alone.
pub(crate) fn printf_object(line: &str) -> Option<(String, bool)> {
    let line = line.trim_end();
    let (stamp, after) = line.split_once(' ')?;
    if !is_iso_instant(stamp) {
        return None;
    }
    let (level, rest) = level_first(after)?;
    let (message, fields, object) = match crate::ingest::json_object_at_end(rest) {
        Some((at, fields)) => (&rest[..at], fields, true),
        None => (rest, Map::new(), false),
    };
    Some((record(Some(stamp), level, message.trim(), fields)?, object))
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

/// Whether the head of a file is a printf layout's log: most lines at the margin are
/// `STAMP LEVEL ...`, and two in three of those end with an object (a text log whose
/// responses' bodies end some lines is not one).
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
        objects += usize::from(crate::ingest::json_object_at_end(rest).is_some());
    }
    objects >= 2 && objects * 3 >= stamped * 2 && stamped * 2 > margin
}

/// `2026-12-06T19:53:56.687Z`: `format.timestamp()`'s default, `toISOString()`'s.
fn is_iso_instant(stamp: &str) -> bool {
    let b = stamp.as_bytes();
    b.len() >= 19 && b[10] == b'T' && crate::ingest::starts_with_timestamp(b)
}

/// The level the words start with and the words after it.
fn level_first(words: &str) -> Option<(&str, &str)> {
    let (first, rest) = words.split_once(' ').unwrap_or((words, ""));
    let bare = first.strip_suffix(':').unwrap_or(first);
    let bare = (bare.strip_prefix('[').and_then(|b| b.strip_suffix(']'))).unwrap_or(bare);
    let known = LEVELS.iter().any(|l| bare.eq_ignore_ascii_case(l));
    (known && !rest.trim().is_empty()).then(|| (bare, rest.trim_start()))
}

/// winston's npm and syslog levels, and the names other loggers give theirs.
const LEVELS: [&str; 15] = [
    "error", "warn", "info", "http", "verbose", "debug", "silly", "trace", "fatal", "warning",
    "notice", "crit", "critical", "alert", "emerg",
];

#[cfg(test)]
mod tests;
