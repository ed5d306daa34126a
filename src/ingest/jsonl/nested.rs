//! Structured loggers that nest a record's fields rather than write them beside its
//! message: PHP Monolog's `JsonFormatter` (`{"message": ..., "context": {...}, "level_name":
//! ..., "channel": ..., "datetime": ..., "extra": {...}}`) and Python loguru's
//! `serialize=True` (`{"text": ..., "record": {"message": ..., "extra": {...}, "time":
//! {"repr": ...}, "level": {"name": ...}}}`). Read as the flat line each stands for, the
//! message as `msg`, the time as `time`, the nested fields beside them (the line's own
//! names win). Before, such files were passed over, or every line skipped ("no `type`").

use serde_json::{Map, Value};

/// The flat JSON Lines object `line` stands for, if it is one of the nested layouts.
pub(crate) fn flattened(line: &str) -> Option<String> {
    let Ok(Value::Object(mut top)) = serde_json::from_str::<Value>(line) else {
        return None;
    };
    let flat = if top.contains_key("datetime") && top.get("message").is_some_and(Value::is_string) {
        monolog(&mut top)
    } else if let Some(Value::Object(record)) = top.remove("record") {
        loguru(record)?
    } else {
        return None;
    };
    serde_json::to_string(&flat).ok()
}

fn monolog(top: &mut Map<String, Value>) -> Map<String, Value> {
    let mut flat = Map::new();
    let mut take = |from: &str, to: &str, top: &mut Map<String, Value>| {
        if let Some(v) = top.remove(from) {
            flat.insert(to.into(), v);
        }
    };
    take("datetime", "time", top);
    take("message", "msg", top);
    take("level_name", "level", top);
    take("channel", "channel", top);
    let nested: Vec<Map<String, Value>> = ["context", "extra"]
        .iter()
        .filter_map(|part| match top.remove(*part) {
            Some(Value::Object(members)) => Some(members),
            _ => None,
        })
        .collect();
    // The line's own names first, then the nested ones beside them.
    for (k, v) in std::mem::take(top) {
        flat.entry(k).or_insert(v);
    }
    for members in nested {
        for (k, v) in members {
            flat.entry(k).or_insert(v);
        }
    }
    flat
}

fn loguru(mut record: Map<String, Value>) -> Option<Map<String, Value>> {
    let time = record.get("time")?.get("repr")?.as_str()?.to_string();
    let mut flat = Map::new();
    flat.insert("time".into(), Value::String(time));
    flat.insert("msg".into(), record.remove("message")?);
    if let Some(level) = record.get("level").and_then(|l| l.get("name")).cloned() {
        flat.insert("level".into(), level);
    }
    if let Some(Value::Object(extra)) = record.remove("extra") {
        for (k, v) in extra {
            flat.entry(k).or_insert(v);
        }
    }
    Some(flat)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(line: &str) -> Value {
        serde_json::from_str(&flattened(line).unwrap()).unwrap()
    }

    #[test]
    fn nested_records_are_flat_lines() {
        let o = flat(
            r#"{"message":"refund created","context":{"refund_id":"re_1","amount":4500},"level":200,"level_name":"INFO","channel":"payments","datetime":"2026-12-06T03:50:54.918229+00:00","extra":{}}"#,
        );
        assert_eq!(
            (o["msg"].as_str(), o["refund_id"].as_str()),
            (Some("refund created"), Some("re_1"))
        );
        assert_eq!(o["time"], "2026-12-06T03:50:54.918229+00:00");
        let o = flat(
            r#"{"text":"x\n","record":{"extra":{"refund_id":"re_2"},"level":{"name":"INFO"},"message":"refund created","time":{"repr":"2026-12-06 03:49:59.858779+00:00","timestamp":1796528999.858779}}}"#,
        );
        assert_eq!(
            (o["msg"].as_str(), o["refund_id"].as_str()),
            (Some("refund created"), Some("re_2"))
        );
        assert_eq!(o["time"], "2026-12-06 03:49:59.858779+00:00");
    }

    /// A line with Monolog's names and fields of its own keeps them (they win).
    #[test]
    fn a_lines_own_fields_stay_beside_the_nested_ones() {
        let o = flat(
            r#"{"datetime":"2026-11-03T14:02:11.501Z","message":"refund created","refund_id":"rf_8XM1","context":{"refund_id":"x","order_id":"A-1"}}"#,
        );
        assert_eq!(
            (o["refund_id"].as_str(), o["order_id"].as_str()),
            (Some("rf_8XM1"), Some("A-1"))
        );
    }

    #[test]
    fn flat_lines_are_left_alone() {
        for line in [
            r#"{"ts":"2026-12-06T03:50:54Z","type":"effect","effect_id":"re_1"}"#,
            r#"{"message":"refund created","context":{"refund_id":"re_1"}}"#,
            r#"{"record":"re_1","time":"2026-12-06T03:50:54Z"}"#,
        ] {
            assert_eq!(flattened(line), None, "{line}");
        }
    }
}
