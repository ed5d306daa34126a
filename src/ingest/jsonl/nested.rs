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

/// Whether a line with its own stamp may still be a nested layout: words only those write
/// (tracing's `"fields":{`, Log4j 2's `"instant":{`, `"contextMap":{`, `"thrown":{`,
/// logstash's `"stack_trace":"`). One search each, on lines without a `type` only.
pub(crate) fn may_be_stamped_nesting(line: &str) -> bool {
    [
        "\"fields\":{",
        "\"instant\":{",
        "\"timeMillis\":",
        "\"contextMap\":{",
        "\"thrown\":{",
        "\"stack_trace\":\"",
    ]
    .iter()
    .any(|w| line.contains(w))
}

/// The flat line of a layout that keeps its own stamp but nests the rest: Rust's
/// `tracing-subscriber` JSON (`{"timestamp": ..., "fields": {"message": ..., ...}, "span":
/// {...}, "spans": [...]}`: the fields, then the spans' fields, innermost first), Log4j 2's
/// `JsonLayout` (`{"instant": {"epochSecond": ..., "nanoOfSecond": ...}, "message": ...,
/// "contextMap": {...}, "thrown": {...}}`) and logstash-logback-encoder's exception text
/// (`"stack_trace": "...\nCaused by: ..."`). An exception becomes `exception` (its class and
/// message), the root of its causes: what happened to the request.
pub(crate) fn flattened_stamped(line: &str) -> Option<String> {
    let Ok(Value::Object(mut top)) = serde_json::from_str::<Value>(line) else {
        return None;
    };
    let mut nested: Vec<Map<String, Value>> = Vec::new();
    if top.get("fields").is_some_and(Value::is_object)
        && let Some(Value::Object(fields)) = top.remove("fields")
    {
        nested.push(fields);
    }
    if top.get("span").is_some_and(Value::is_object)
        && let Some(Value::Object(span)) = top.remove("span")
    {
        nested.push(span);
    }
    if let Some(Value::Array(spans)) = top.remove("spans") {
        nested.extend(spans.into_iter().rev().filter_map(|s| match s {
            Value::Object(o) => Some(o),
            _ => None,
        }));
    }
    if top.get("contextMap").is_some_and(Value::is_object)
        && let Some(Value::Object(context)) = top.remove("contextMap")
    {
        nested.push(context);
    }
    let mut changed = false;
    if let Some(Value::Object(instant)) = top.remove("instant") {
        changed = true;
        let seconds = instant.get("epochSecond")?.as_i64()?;
        let nanos = instant
            .get("nanoOfSecond")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let at = chrono::DateTime::from_timestamp(seconds, u32::try_from(nanos).ok()?)?;
        top.insert(
            "timestamp".into(),
            at.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)
                .into(),
        );
    } else if let Some(millis) = top.remove("timeMillis").and_then(|m| m.as_i64()) {
        changed = true;
        let at = chrono::DateTime::from_timestamp_millis(millis)?;
        top.insert(
            "timestamp".into(),
            at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
                .into(),
        );
    }
    if let Some(thrown) = top.remove("thrown") {
        changed = true;
        let mut root = &thrown;
        while let Some(cause) = root.get("cause").filter(|c| c.is_object()) {
            root = cause;
        }
        let text = |k: &str| {
            root.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        top.insert("exception".into(), exception(text("name"), text("message")));
    }
    if let Some(Value::String(trace)) = top.remove("stack_trace") {
        changed = true;
        let root = (trace.lines())
            .filter_map(|l| l.strip_prefix("Caused by: "))
            .next_back()
            .or_else(|| trace.lines().next())?;
        let (class, message) = root.split_once(": ").unwrap_or((root, ""));
        top.insert(
            "exception".into(),
            exception(class.to_string(), message.to_string()),
        );
    }
    // Nothing of these layouts in it: the line as it is (read again, it would come back).
    if nested.is_empty() && !changed {
        return None;
    }
    for members in nested {
        for (k, v) in members {
            if k != "name" {
                top.entry(k).or_insert(v);
            }
        }
    }
    serde_json::to_string(&top).ok()
}

fn exception(class: String, message: String) -> Value {
    let mut e = Map::new();
    e.insert("class".into(), class.into());
    e.insert("message".into(), message.into());
    Value::Object(e)
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
    fn stamped_nestings_are_flat_lines() {
        let flat = |line: &str| -> Value {
            serde_json::from_str(&flattened_stamped(line).expect(line)).unwrap()
        };
        // tracing-subscriber's JSON: the fields, then the spans' (the innermost first).
        let o = flat(
            r#"{"timestamp":"2026-12-06T05:25:17.818546Z","level":"INFO","fields":{"message":"refund created","refund_id":"re_1"},"target":"payments","span":{"order_id":"A-1","name":"create_refund"},"spans":[{"order_id":"A-0","method":"POST","name":"request"},{"order_id":"A-1","name":"create_refund"}]}"#,
        );
        assert_eq!(
            (o["message"].as_str(), o["refund_id"].as_str()),
            (Some("refund created"), Some("re_1"))
        );
        assert_eq!(
            (o["order_id"].as_str(), o["method"].as_str()),
            (Some("A-1"), Some("POST"))
        );
        assert!(o.get("name").is_none() && o.get("fields").is_none());
        // Log4j 2's JsonLayout: the instant, the MDC, the root of the thrown causes.
        let o = flat(
            r#"{"instant":{"epochSecond":1796535595,"nanoOfSecond":653940113},"level":"WARN","message":"attempt 1 failed","thrown":{"name":"a.ApiException","message":"POST failed","cause":{"name":"java.net.http.HttpTimeoutException","message":"request timed out"}},"contextMap":{"runId":"7f3a","step":"2"}}"#,
        );
        assert_eq!(o["timestamp"], "2026-12-06T05:39:55.653940113Z");
        assert_eq!(
            (o["runId"].as_str(), o["step"].as_str()),
            (Some("7f3a"), Some("2"))
        );
        assert_eq!(
            o["exception"]["class"],
            "java.net.http.HttpTimeoutException"
        );
        // logstash-logback-encoder's stack trace: the last `Caused by:`.
        let o = flat(
            r#"{"@timestamp":"2026-12-06T05:40:07.834Z","message":"attempt 1 failed","stack_trace":"a.ApiException: POST failed\n\tat a.B.c(B.java:1)\nCaused by: java.net.ConnectException: Connection refused\n\tat x"}"#,
        );
        assert_eq!(
            (
                o["exception"]["class"].as_str(),
                o["exception"]["message"].as_str()
            ),
            (
                Some("java.net.ConnectException"),
                Some("Connection refused")
            )
        );
    }

    /// winston's JSON with an object named `fields` inside another: not tracing's, and a
    /// line with nothing to flatten comes back as none (read again, it looped for ever).
    #[test]
    fn a_line_with_nothing_of_these_layouts_is_none() {
        let line = r#"{"level":"info","message":"tool result","result":{"key":"SUP-1","fields":{"summary":"x"}},"timestamp":"2026-12-06T10:00:00.000Z"}"#;
        assert!(may_be_stamped_nesting(line));
        assert_eq!(flattened_stamped(line), None);
        assert_eq!(
            flattened_stamped(r#"{"exception":"x","timestamp":"2026-12-06T10:00:00Z"}"#),
            None
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
