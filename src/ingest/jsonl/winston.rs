//! winston's `format.simple()`: `info: refund created {"refund_id":"re_1",...}`, the level,
//! the message, then the line's other fields as one JSON object (its `timestamp` too, with
//! `format.timestamp()`). Read as the JSON Lines line it stands for, the object with `level`
//! and `message` added: every line of such a log was otherwise no format at all.

use serde_json::{Map, Value};

/// The JSON object `line` stands for, if it is `LEVEL: MESSAGE {...}` with a level of
/// lower-case letters and an object that parses.
pub(crate) fn as_object(line: &str) -> Option<String> {
    let line = line.trim_end();
    let (level, rest) = line.split_once(": ")?;
    let lower =
        !level.is_empty() && level.len() <= 8 && level.bytes().all(|b| b.is_ascii_lowercase());
    if !lower || !rest.ends_with('}') {
        return None;
    }
    let open = rest.find(" {")?;
    let (message, object) = (rest[..open].trim(), &rest[open + 1..]);
    let Ok(Value::Object(mut fields)) = serde_json::from_str::<Value>(object) else {
        return None;
    };
    let mut line = Map::new();
    line.insert("level".into(), Value::String(level.into()));
    line.insert("message".into(), Value::String(message.into()));
    for (k, v) in std::mem::take(&mut fields) {
        line.entry(k).or_insert(v);
    }
    serde_json::to_string(&line).ok()
}

#[cfg(test)]
mod tests {
    use super::as_object;

    #[test]
    fn winstons_simple_lines_are_objects() {
        let line = r#"info: refund created {"amount":"45.00","refund_id":"re_1","timestamp":"2026-12-06T00:39:05.002Z"}"#;
        let object: serde_json::Value = serde_json::from_str(&as_object(line).unwrap()).unwrap();
        assert_eq!(object["level"], "info");
        assert_eq!(object["message"], "refund created");
        assert_eq!(object["refund_id"], "re_1");
        assert_eq!(object["timestamp"], "2026-12-06T00:39:05.002Z");
        for other in [
            "INFO: refund created {\"a\":1}",
            "info: refund created",
            "info: refund created {not json}",
            "2026-12-06 info: x {\"a\":1}",
            "info: {\"a\":1}",
        ] {
            assert_eq!(as_object(other), None, "{other}");
        }
    }
}
