//! SPEC §3.2's agent events written without their `type`, as a program logging through a
//! structured logger writes them (Go's `slog.Info("refund attempt", "run", run, "step", 4,
//! "attempt", 1, "method", "POST", ...)`): the fields say which event each is. Such lines were
//! skipped one by one ("no `type` field"), and the whole trace with them.

use crate::event::{HTTP_METHODS, is_safe_method};
use serde_json::{Map, Value};

/// The line with the `type` its fields give, `err` as `error` (a sentence, Go's
/// `err.Error()`, as the failure's `message`) and the effect's id (`refund_id`) as
/// `effect_id`; `None` when they give no one type. `open`: the number the next attempt of
/// the file's latest tool call would have, while its step is open; a line naming no call
/// may then be that call's ([`type_in_open_call`]).
pub(super) fn typed(line: &str, open: Option<u32>) -> Option<String> {
    let Ok(Value::Object(mut top)) = serde_json::from_str::<Value>(line) else {
        return None;
    };
    for (alias, field) in ALIASES {
        if !top.contains_key(field)
            && let Some(v) = top.remove(alias)
        {
            top.insert(field.into(), v);
        }
    }
    if !top.contains_key("idempotency_key")
        && let Some(key) = key_in_headers(&top)
    {
        top.insert("idempotency_key".into(), key);
    }
    let names_none = !top.contains_key("run") && !top.contains_key("step");
    let ty = match (type_of(&top), open) {
        (Some(ty), _) => ty,
        (None, Some(next)) if names_none => {
            let ty = type_in_open_call(&top)?;
            // An unnumbered request is the call's next; an answer or a failure its latest.
            let number = if ty == "attempt" { next } else { next - 1 };
            if number > 0 && !top.contains_key("attempt") {
                top.insert("attempt".into(), Value::from(number));
            }
            ty
        }
        (None, _) => return None,
    };
    if !top.contains_key("error")
        && let Some(err) = top.remove("err").or_else(|| top.remove("exception"))
    {
        top.insert("error".into(), err);
    }
    if ty == "failure"
        && !top.contains_key("error")
        && let Some(name) = client_error_name(&top)
    {
        let name = Value::String(name.to_string());
        top.insert("error".into(), name);
    }
    if ty == "failure"
        && !top.contains_key("error")
        && let Some(failure) = failure_in_message(&top)
    {
        let failure = Value::String(failure.to_string());
        top.insert("error".into(), failure);
    }
    if ty == "failure" {
        let (class, message) = match top.remove("error") {
            Some(Value::String(e)) => match monolog_exception(&e) {
                Some((class, message)) => (class.to_string(), message.to_string()),
                None if e.contains(' ') => (String::new(), e),
                None => (e, String::new()),
            },
            // Monolog's JSON: `{"class": ..., "message": ..., "code": 0, "file": ...}`;
            // pino's serialised error: `{"type": "AxiosError", "message": ...}`.
            Some(Value::Object(e)) => {
                let text = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default();
                let class = ["class", "type", "name"]
                    .into_iter()
                    .map(text)
                    .find(|c| !c.is_empty());
                (
                    class.unwrap_or_default().to_string(),
                    text("message").to_string(),
                )
            }
            Some(other) => (other.to_string(), String::new()),
            None => (String::new(), String::new()),
        };
        if !class.is_empty() {
            top.insert("error".into(), Value::String(class));
        }
        if !message.is_empty() {
            top.insert("message".into(), Value::String(message));
        }
    }
    if ty == "step_end" && !top.contains_key("status") {
        // `"message": "step ok"`: the words say how; a tool's line with an error failed.
        let ok = step_end_in_message(&top) == Some(true);
        let status = if ok { "ok" } else { "failed" };
        top.insert("status".into(), Value::String(status.into()));
    }
    if ty == "run" {
        let word = lifecycle_word(&top)?;
        if let Some(message) = top.remove("event") {
            top.entry("message").or_insert(message);
        }
        top.insert("event".into(), Value::String(word.into()));
    }
    if ty == "response"
        && let Some(Value::String(written)) = top.get("status")
    {
        // `"201 Created"`: an HTTP status as its `Display` writes it (Rust's `%status`).
        let (code, reason) = (status_code(&top["status"]), written[3..].trim().to_string());
        top.insert("status".into(), Value::from(code));
        if !reason.is_empty() {
            top.entry("message").or_insert(Value::String(reason));
        }
    }
    if ty == "response"
        && !top.contains_key("effect_id")
        && let Some(id) = kinds_id(&top)
    {
        top.insert("effect_id".into(), id.clone());
    }
    if ty == "attempt"
        && !top.contains_key("method")
        && !top.contains_key("url")
        && let Some((method, url)) = request_in_message(&top)
    {
        let (method, url) = (method.to_string(), url.to_string());
        top.insert("method".into(), Value::String(method));
        top.insert("url".into(), Value::String(url));
    }
    top.insert("type".into(), Value::String(ty.into()));
    serde_json::to_string(&top).ok()
}

/// go-retryablehttp's `retrying request` through a leveled logger, naming no call:
/// `request="POST http://... (status: 422)" timeout=500ms remaining=2`. The method, the URL
/// and the status it got, if it names one.
pub(super) fn resent_request(line: &str) -> Option<(String, String, Option<u16>)> {
    let Ok(Value::Object(top)) = serde_json::from_str::<Value>(line) else {
        return None;
    };
    let names_a_call = ["run", "run_id", "runId", "step"]
        .iter()
        .any(|k| top.contains_key(*k));
    if names_a_call || !about_a_request(&top) {
        return None;
    }
    let (method, rest) = top.get("request")?.as_str()?.split_once(' ')?;
    let (url, status) = match rest.split_once(" (status: ") {
        Some((url, status)) => (url, Some(status.strip_suffix(')')?.parse().ok()?)),
        None => (rest, None),
    };
    let known = HTTP_METHODS.contains(&method.as_bytes());
    let is_url = url.starts_with("http://") || url.starts_with("https://");
    (known && is_url && !url.contains(' ')).then(|| (method.to_string(), url.to_string(), status))
}

/// An effect's id under `<kind>_id` or `<kind>Id`, for every kind the audit knows
/// (`refund_id`, `refundId`, `capture_id`...).
fn kinds_id(top: &Map<String, Value>) -> Option<&Value> {
    (crate::event::EFFECT_KINDS.iter()).find_map(|kind| {
        [format!("{kind}_id"), format!("{kind}Id")]
            .iter()
            .find_map(|k| top.get(k).filter(|v| v.is_string()))
    })
}

/// A line naming no call, logged while the file's latest tool call is open: its request
/// (a `method` and a `url`, or a request in its message: `{"method":"POST","url":...,
/// "msg":"refund request"}`), the answer to it (a status code beside the effect's id or
/// the request), or a failure of it (an error beside the request, or a message about a
/// request or a retry: `{"err":"timeout of 1000ms exceeded","msg":"retrying refund
/// request"}`). Anything else (a model's call, the program's own words) is none of these.
fn type_in_open_call(top: &Map<String, Value>) -> Option<&'static str> {
    let has = |k: &str| top.get(k).is_some_and(|v| !v.is_null());
    let request = match request_of(top) {
        Some((method, url)) if is_foreign(method, url, served(top)) => return None,
        Some(_) => true,
        None if names_agents_own(top) => return None,
        None => false,
    };
    let answered = top.get("status").and_then(status_code).is_some();
    let error = has("error")
        || has("err")
        || has("exception")
        || failure_in_message(top).is_some()
        || client_error_name(top).is_some();
    if answered && (request || kinds_id(top).is_some()) {
        return Some("response");
    }
    if error && (request || about_a_request(top)) {
        return Some("failure");
    }
    (request && !error && !answered).then_some("attempt")
}

/// The request a line names: its `method` and `url`, a request in its message, or the
/// request an HTTP client's error logged whole carries ([`request_in_error`]).
fn request_of(top: &Map<String, Value>) -> Option<(&str, &str)> {
    let field = |k: &str| top.get(k).and_then(Value::as_str);
    match (field("method"), field("url")) {
        (Some(method), Some(url)) => Some((method, url)),
        _ => request_in_message(top).or_else(|| request_in_error(top)),
    }
}

/// The request of an axios error logged as an object (pino's `log.warn(err)`, `{ err }`;
/// winston's `logger.warn(err)` spreads its members on the line): `config`'s `method` and
/// `url`.
fn request_in_error(top: &Map<String, Value>) -> Option<(&str, &str)> {
    let error = match client_error_name(top) {
        Some(_) => top,
        None => ["err", "error"]
            .iter()
            .find_map(|k| top.get(*k)?.as_object())?,
    };
    let config = error.get("config")?.as_object()?;
    let field = |k: &str| config.get(k).and_then(Value::as_str);
    Some((field("method")?, field("url")?))
}

/// A request that is no tool's attempt: a read (`GET`), one to the agent's model or
/// telemetry, or a path without a host in a line that also gives its status (`served`: a
/// service's access log names the path it served, once served). A path alone in a line
/// with no status is a client's sending it (axios's `baseURL` and `post("/v1/refunds")`).
fn is_foreign(method: &str, url: &str, served: bool) -> bool {
    let read = is_safe_method(method);
    let absolute = url.starts_with("http://") || url.starts_with("https://");
    read || (!absolute && served) || crate::ingest::text::agents_own(url.as_bytes())
}

/// The line gives an answer's status: a request and its answer in one, as an access log
/// writes them.
fn served(top: &Map<String, Value>) -> bool {
    top.get("status").and_then(status_code).is_some()
}

/// The line names a request that is no tool's attempt ([`is_foreign`]): the answer logged
/// after it is that request's, not the tool's.
pub(super) fn names_a_foreign_request(line: &str) -> bool {
    let Ok(Value::Object(top)) = serde_json::from_str::<Value>(line) else {
        return false;
    };
    let foreign = |(method, url)| is_foreign(method, url, served(&top));
    request_of(&top).is_some_and(foreign) || names_agents_own(&top)
}

/// A `url` of the agent's own requests (its model's, its telemetry's), with or without a
/// method: a failure naming it is that request's (`{"err":"timeout","url":"https://api.
/// openai.com/...","msg":"llm request failed"}`).
fn names_agents_own(top: &Map<String, Value>) -> bool {
    (top.get("url").and_then(Value::as_str))
        .is_some_and(|url| crate::ingest::text::agents_own(url.as_bytes()))
}

/// The line's message speaks of a request or its retry (`retrying refund request`,
/// `request failed`, `attempt 2 failed`).
fn about_a_request(top: &Map<String, Value>) -> bool {
    let Some(message) = ["msg", "message", "event"]
        .iter()
        .find_map(|k| top.get(*k)?.as_str())
    else {
        return false;
    };
    let lower = message.to_ascii_lowercase();
    lower
        .split(|c: char| !c.is_ascii_alphabetic())
        .any(|w| w.starts_with("retr") || w == "request" || w == "attempt")
}

/// Whether a line may end its message with a Node client's failure ([`failure_in_message`]):
/// a look at the bytes before the line is parsed.
pub(super) fn may_say_a_client_failure(line: &str) -> bool {
    const WORDS: [&str; 7] = [
        "ms exceeded",
        "status code ",
        "ECONN",
        "hang up",
        "Network Error",
        "ENOTFOUND",
        "EPIPE",
    ];
    WORDS.iter().any(|w| line.contains(w))
}

/// The failure a message ends with, in the words Node's HTTP clients give it (`retrying
/// POST https://..., attempt 2: timeout of 1000ms exceeded`, axios's `err.message`).
fn failure_in_message(top: &Map<String, Value>) -> Option<&str> {
    let message = ["msg", "message"]
        .iter()
        .find_map(|k| top.get(*k)?.as_str())?;
    crate::classify::node_client_failure(message)
}

/// The class of an HTTP client's error whose members are the line's own (winston's
/// `logger.warn(err)`: `{"name":"AxiosError","code":"ECONNABORTED","config":{...},
/// "message":"timeout of 1000ms exceeded"}`).
fn client_error_name(top: &Map<String, Value>) -> Option<&str> {
    let name = top.get("name")?.as_str()?;
    (name.ends_with("Error") && top.get("config").is_some_and(Value::is_object)).then_some(name)
}

/// The request a message names first thing (`POST https://payments/v1/refunds`), as a
/// logger's message often carries it instead of fields of its own.
fn request_in_message(top: &Map<String, Value>) -> Option<(&str, &str)> {
    let message = ["msg", "message"]
        .iter()
        .find_map(|k| top.get(*k)?.as_str())?;
    let mut words = message.split_ascii_whitespace();
    let method = words.next()?;
    let url = words.next()?;
    let is_method = HTTP_METHODS.contains(&method.as_bytes());
    let is_url = url.starts_with("http://") || url.starts_with("https://") || url.starts_with('/');
    (is_method && is_url).then_some((method, url))
}

/// The key among a logged request's `headers` (`{"headers": {"Idempotency-Key": "k"}}`,
/// any case, `-` or `_`): a program that logs the request it sends logs its headers so.
fn key_in_headers(top: &Map<String, Value>) -> Option<Value> {
    let Some(Value::Object(headers)) = top.get("headers") else {
        return None;
    };
    let is_key = |k: &str| k.replace('_', "-").eq_ignore_ascii_case("idempotency-key");
    headers
        .iter()
        .find(|(k, v)| is_key(k) && v.is_string())
        .map(|(_, v)| v.clone())
}

/// Names a program's own logging gives SPEC's fields (`logger.info("tool call", run_id=...)`),
/// read as those fields when the line has none of its own by that name.
const ALIASES: [(&str, &str); 6] = [
    ("run_id", "run"),
    ("runId", "run"),
    ("tool_name", "tool"),
    ("arguments", "args"),
    ("attempt_number", "attempt"),
    ("idempotencyKey", "idempotency_key"),
];

/// The one event type the fields make the line, always of an agent's call (its `run` and
/// `step`: a service's own retries, a webhook's `attempt`, are none): a tool call names its
/// tool (and no status); an answer its status code; a step's end a word for its status; a
/// failure its error; an attempt its number and request.
fn type_of(top: &Map<String, Value>) -> Option<&'static str> {
    let has = |k: &str| top.get(k).is_some_and(|v| !v.is_null());
    let call = has("run") && has("step");
    let error = has("error") || has("err") || has("exception");
    let status = top.get("status").filter(|v| !v.is_null());
    // A tool's line with an error and no arguments is how it ended (`tool failed`), not
    // another call of it.
    if call && has("tool") && !has("args") && error && status.is_none() {
        return Some("step_end");
    }
    if call && has("tool") && (has("args") || status.is_none()) {
        return Some("tool_call");
    }
    // `"message": "step ok"` beside the run and the step (tracing's JSON of `info!(run_id,
    // step, "step ok")`): SPEC's `agent run R  step N  ok` as fields.
    if call && status.is_none() && !has("tool") && step_end_in_message(top).is_some() {
        return Some("step_end");
    }
    if call && status.and_then(status_code).is_some() {
        return Some("response");
    }
    if call && status.is_some_and(Value::is_string) && !has("attempt") {
        return Some("step_end");
    }
    if call && error {
        return Some("failure");
    }
    if call && has("attempt") && (has("method") || has("url") || request_in_message(top).is_some())
    {
        return Some("attempt");
    }
    if has("run") && !has("step") && lifecycle_word(top).is_some() {
        return Some("run");
    }
    None
}

/// An answer's status code: a number, or a string that starts with one (`"201 Created"`).
fn status_code(status: &Value) -> Option<u64> {
    match status {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => {
            let digits = s
                .get(..3)
                .filter(|d| d.bytes().all(|b| b.is_ascii_digit()))?;
            (s.len() == 3 || s.as_bytes()[3] == b' ').then(|| digits.parse().ok())?
        }
        _ => None,
    }
}

/// Monolog's text for an exception in a record's context: `[object]
/// (GuzzleHttp\\Exception\\ConnectException(code: 0): cURL error 28: ... at /path/x.php:210)`;
/// the class and the message.
fn monolog_exception(text: &str) -> Option<(&str, &str)> {
    let inner = text.strip_prefix("[object] (")?.strip_suffix(')')?;
    let (class, rest) = inner.split_once("(code: ")?;
    let (_, message) = rest.split_once("): ")?;
    let message = message.rsplit_once(" at ").map_or(message, |(m, _)| m);
    Some((class, message))
}

/// How the line's message says its step ended (`step ok`, `step failed`), if it says only
/// that ([`crate::ingest::text::step_end_said`]).
fn step_end_in_message(top: &Map<String, Value>) -> Option<bool> {
    let message = ["msg", "message", "event"]
        .iter()
        .find_map(|k| top.get(*k)?.as_str())?;
    crate::ingest::text::step_end_said(message)
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
mod tests;
