//! SPEC §3.2's agent events written without their `type`, as a program logging through a
//! structured logger writes them (Go's `slog.Info("refund attempt", "run", run, "step", 4,
//! "attempt", 1, "method", "POST", ...)`): the fields say which event each is. Such lines were
//! skipped one by one ("no `type` field"), and the whole trace with them.

use serde_json::{Map, Value};

/// The line with the `type` its fields give, `err` as `error` (a sentence, Go's
/// `err.Error()`, as the failure's `message`) and the effect's id (`refund_id`) as
/// `effect_id`; `None` when they give no one type.
pub(super) fn typed(line: &str) -> Option<String> {
    let Ok(Value::Object(mut top)) = serde_json::from_str::<Value>(line) else {
        return None;
    };
    let ty = type_of(&top)?;
    if !top.contains_key("error")
        && let Some(err) = top.remove("err")
    {
        top.insert("error".into(), err);
    }
    if ty == "failure"
        && let Some(Value::String(error)) = top.get("error")
        && error.contains(' ')
    {
        let said = top.remove("error").unwrap_or_default();
        top.insert("message".into(), said);
    }
    if ty == "run" {
        let word = lifecycle_word(&top)?;
        if let Some(message) = top.remove("event") {
            top.entry("message").or_insert(message);
        }
        top.insert("event".into(), Value::String(word.into()));
    }
    if ty == "response" && !top.contains_key("effect_id") {
        let id = [
            "refund_id",
            "charge_id",
            "payout_id",
            "transfer_id",
            "payment_id",
        ]
        .iter()
        .find_map(|k| top.get(*k).filter(|v| v.is_string()).cloned());
        if let Some(id) = id {
            top.insert("effect_id".into(), id);
        }
    }
    top.insert("type".into(), Value::String(ty.into()));
    serde_json::to_string(&top).ok()
}

/// The one event type the fields make the line: a tool call names its tool, run and step;
/// a failure its error; an answer its status code; an attempt its number and request; a
/// step's end its run, step and a word for its status.
fn type_of(top: &Map<String, Value>) -> Option<&'static str> {
    let has = |k: &str| top.get(k).is_some_and(|v| !v.is_null());
    let call = has("run") && has("step");
    let of_a_call = call || has("attempt");
    let error = has("error") || has("err");
    let status = top.get("status");
    if call && has("tool") {
        return Some("tool_call");
    }
    if of_a_call && error {
        return Some("failure");
    }
    if of_a_call && status.is_some_and(Value::is_u64) {
        return Some("response");
    }
    if has("attempt") && (has("method") || has("url")) {
        return Some("attempt");
    }
    if call && status.is_some_and(Value::is_string) {
        return Some("step_end");
    }
    if has("run") && !has("step") && lifecycle_word(top).is_some() {
        return Some("run");
    }
    None
}

/// What a run's line says happened to it (`agent run started`), from its message.
fn lifecycle_word(top: &Map<String, Value>) -> Option<&'static str> {
    let message = ["msg", "message", "event"]
        .iter()
        .find_map(|k| top.get(*k)?.as_str())?;
    let words = message.split(|c: char| !c.is_ascii_alphabetic());
    words
        .filter_map(|w| {
            ["started", "crashed", "resumed"]
                .into_iter()
                .find(|l| w == *l)
        })
        .next()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn type_in(line: &str) -> Option<String> {
        let v: Value = serde_json::from_str(&typed(line)?).unwrap();
        Some(v["type"].as_str()?.to_string())
    }

    #[test]
    fn each_event_is_known_by_its_fields() {
        let lines = [
            (
                r#"{"msg":"tool call","run":"r","step":4,"tool":"issue_refund","args":"{}"}"#,
                "tool_call",
            ),
            (
                r#"{"msg":"refund attempt","run":"r","step":4,"attempt":1,"method":"POST","url":"http://x"}"#,
                "attempt",
            ),
            (
                r#"{"msg":"refund attempt failed","run":"r","step":4,"attempt":1,"err":"Post \"x\": EOF"}"#,
                "failure",
            ),
            (
                r#"{"msg":"refund response","run":"r","step":4,"attempt":2,"status":201,"refund_id":"re_1"}"#,
                "response",
            ),
            (
                r#"{"msg":"step done","run":"r","step":4,"status":"ok"}"#,
                "step_end",
            ),
            (r#"{"msg":"agent run started","run":"r"}"#, "run"),
        ];
        for (line, ty) in lines {
            assert_eq!(type_in(line).as_deref(), Some(ty), "{line}");
        }
        let v: Value = serde_json::from_str(&typed(lines[3].0).unwrap()).unwrap();
        assert_eq!(v["effect_id"], "re_1");
        let v: Value = serde_json::from_str(&typed(lines[2].0).unwrap()).unwrap();
        assert_eq!(v["message"], "Post \"x\": EOF");
    }

    #[test]
    fn fields_of_no_one_event_give_none() {
        for line in [
            r#"{"msg":"agent run finished","run":"r"}"#,
            r#"{"msg":"retrying","attempt":2}"#,
            r#"{"msg":"request","status":"received","order_id":"A-1"}"#,
        ] {
            assert_eq!(typed(line), None, "{line}");
        }
    }
}
