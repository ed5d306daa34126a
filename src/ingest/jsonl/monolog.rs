//! PHP's Monolog, as its default `LineFormatter` writes a record (Laravel's and Symfony's
//! logs too): `[2026-12-06T03:50:12.048997+00:00] payments.INFO: refund created
//! {"refund_id":"re_0001",...} []`, the time in brackets, the channel and the level, the
//! message, then the record's context and extra as JSON (`[]` when empty). Read as the JSON
//! Lines line it stands for, `{"time": ..., "level": ..., "channel": ..., "msg": ..., ...the
//! context's members}`: the message and context then mean what a structured logger's line
//! means (a logged refund, SPEC's fields without `type`, a text trace's message). Before,
//! `payments.INFO:` read as an exception's class, and every line was a made-up failure.

use serde_json::{Map, Value};

/// Monolog's levels (RFC 5424's names), as the line writes them.
const LEVELS: [&str; 8] = [
    "DEBUG",
    "INFO",
    "NOTICE",
    "WARNING",
    "ERROR",
    "CRITICAL",
    "ALERT",
    "EMERGENCY",
];

/// The JSON object `line` stands for, if it is `[TIME] CHANNEL.LEVEL: MESSAGE CONTEXT EXTRA`.
pub(crate) fn as_object(line: &str) -> Option<String> {
    let (time, rest) = line.strip_prefix('[')?.split_once("] ")?;
    let (head, rest) = rest.split_once(": ")?;
    let (channel, level) = head.rsplit_once('.')?;
    let named = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if channel.is_empty() || !channel.chars().all(named) || !LEVELS.contains(&level) {
        return None;
    }
    if !time.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    // The context, then the extra; an empty one may be left out (Laravel's
    // `ignoreEmptyContextAndExtra`), and then the one part is read first, as the context.
    let (rest, last) = trailing_json(rest.trim_end());
    let (message, before_last) = match last {
        Some(_) => trailing_json(rest),
        None => (rest, None),
    };
    let mut object = Map::new();
    object.insert("time".into(), Value::String(time.into()));
    object.insert("level".into(), Value::String(level.into()));
    object.insert("channel".into(), Value::String(channel.into()));
    object.insert("msg".into(), Value::String(message.trim().into()));
    for part in [before_last, last].into_iter().flatten() {
        if let Value::Object(fields) = part {
            for (k, v) in fields {
                object.entry(k).or_insert(v);
            }
        }
    }
    serde_json::to_string(&object).ok()
}

/// A line under a Laravel record: its `[stacktrace]` heading, a frame (`#0 /app/...`), the
/// closing `"}` of the exception's context. Part of the record, nothing to read.
pub(crate) fn continues_record(line: &str) -> bool {
    let line = line.trim();
    line == "[stacktrace]"
        || line == "\"}"
        || line.strip_prefix('#').is_some_and(|r| {
            let digits = r.bytes().take_while(u8::is_ascii_digit).count();
            digits > 0 && r[digits..].starts_with(' ')
        })
}

/// `text` without the JSON part at its end (`[]`, or an object that parses), and that part.
fn trailing_json(text: &str) -> (&str, Option<Value>) {
    if let Some(rest) = text.strip_suffix("[]") {
        return (rest.trim_end(), Some(Value::Object(Map::new())));
    }
    if !text.ends_with('}') {
        return match cut_context(text) {
            Some((at, value)) => (text[..at].trim_end(), Some(value)),
            None => (text, None),
        };
    }
    // The first ` {` from which the rest parses: an object inside the message (rare) is
    // part of a longer parse that fails. A few tries: each parse reads to the line's end.
    let mut from = 0;
    let mut tries = 0;
    while let Some(at) = text[from..].find(" {").map(|i| from + i) {
        tries += 1;
        if tries > 8 {
            break;
        }
        if let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(&text[at + 1..]) {
            return (text[..at].trim_end(), Some(value));
        }
        from = at + 1;
    }
    (text, None)
}

/// A context that runs onto the next lines: Laravel writes an exception's stack trace
/// inside its string (`{"run":"7f3a","exception":"[object] (X(code: 0): ... at /x.php:210)`,
/// then `[stacktrace]`, the frames, `"}`). What the first line holds, the string closed.
fn cut_context(text: &str) -> Option<(usize, Value)> {
    let at = text.find(" {\"")?;
    let closed = format!("{}\"}}", &text[at + 1..]);
    match serde_json::from_str::<Value>(&closed) {
        Ok(value @ Value::Object(_)) => Some((at, value)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(line: &str) -> Value {
        serde_json::from_str(&as_object(line).unwrap()).unwrap()
    }

    #[test]
    fn monologs_line_is_its_record() {
        let o = object(
            r#"[2026-12-06T03:50:12.048997+00:00] payments.INFO: refund created {"refund_id":"re_0001","amount":4500} []"#,
        );
        assert_eq!(o["time"], "2026-12-06T03:50:12.048997+00:00");
        assert_eq!(
            (o["channel"].as_str(), o["level"].as_str()),
            (Some("payments"), Some("INFO"))
        );
        assert_eq!(
            (o["msg"].as_str(), o["refund_id"].as_str()),
            (Some("refund created"), Some("re_0001"))
        );
        // Laravel's layout: no extra, a space after the context.
        let o = object(r#"[2026-12-06 03:50:26] production.INFO: agent run 7f3a  started [] "#);
        assert_eq!(o["msg"], "agent run 7f3a  started");
        let o = object(
            r#"[2026-12-06 03:50:26] local.ERROR: refund failed {"exception":"[object] (X(code: 0): boom)"} {"uid":"a1"}"#,
        );
        assert_eq!(
            (o["exception"].is_string(), o["msg"].as_str()),
            (true, Some("refund failed"))
        );
    }

    /// Laravel's exception runs onto the next lines: the first holds its message.
    #[test]
    fn a_context_cut_by_a_stack_trace_is_read_to_its_cut() {
        let o = object(
            r#"[2026-12-06 03:50:27] production.WARNING: refund attempt failed {"run":"7f3a","exception":"[object] (E(code: 0): timed out at /x.php:210)"#,
        );
        assert_eq!(
            o["exception"],
            "[object] (E(code: 0): timed out at /x.php:210)"
        );
        assert_eq!(o["msg"], "refund attempt failed");
    }

    #[test]
    fn other_bracketed_lines_are_not_monologs() {
        for line in [
            "[2026-12-06T03:50:12Z] INFO: refund created",
            "[2026-12-06T03:50:12Z] requests.exceptions.ReadTimeout: timed out",
            "[2026-12-06T03:50:12Z] payments.Info: refund created []",
            "[26793] [Sun Dec  6 03:50:12 2026] 127.0.0.1:51506 Accepted",
        ] {
            assert_eq!(as_object(line), None, "{line}");
        }
        assert!(continues_record("#12 /app/vendor/x.php(42): y()"));
        assert!(continues_record("[stacktrace]"));
        assert!(!continues_record("#ops refund"));
    }
}
