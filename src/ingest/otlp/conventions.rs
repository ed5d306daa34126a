//! What the instrumentations call things (SPEC §3.4's table): GenAI semconv (the OpenAI
//! Agents contrib instrumentation, OpenLLMetry, and the frameworks' own tracing: Pydantic AI,
//! Strands, Google ADK), OpenInference (LangGraph, the Agents SDK, LlamaIndex, smolagents),
//! LangSmith's OTel mode, the Vercel AI SDK's `ai.*` attributes, and both generations of the
//! HTTP conventions. Each question asks every convention in turn.

use super::Span;
use serde_json::Value;

/// The HTTP method, URL and status code, new conventions first.
pub const METHOD: &[&str] = &["http.request.method", "http.method"];
pub const URL: &[&str] = &["url.full", "http.url"];
pub const STATUS: &[&str] = &["http.response.status_code", "http.status_code"];
/// Where a tool's arguments are written (`tool_arguments`: Pydantic AI's older format;
/// `gcp.vertex.agent.tool_call_args`: Google ADK's first span schema; `ai.toolCall.args`: the
/// Vercel AI SDK).
const ARGUMENTS: &[&str] = &[
    "gen_ai.tool.call.arguments",
    "tool_arguments",
    "gcp.vertex.agent.tool_call_args",
    "ai.toolCall.args",
    "traceloop.entity.input",
    "input.value",
    "gen_ai.prompt",
];
/// What marks a span as a tool execution or an LLM call.
const SPAN_KINDS: &[&str] = &[
    "gen_ai.operation.name",
    "openinference.span.kind",
    "traceloop.span.kind",
    "langsmith.span.kind",
    "llm.request.type",
    "ai.operationId",
];
const TOOL_NAME: &[&str] = &[
    "gen_ai.tool.name",
    "tool.name",
    "traceloop.entity.name",
    "ai.toolCall.name",
];
/// The Vercel AI SDK writes the application's telemetry metadata under `ai.telemetry.metadata.`;
/// `sessionId` is how its and Langfuse's examples name a conversation.
const RUN: &[&str] = &[
    "gen_ai.conversation.id",
    "session.id",
    "ai.telemetry.metadata.sessionId",
];
/// A captured request header that carries the idempotency key: the conventions' spelling
/// (`http.request.header.idempotency-key`), the one the `requests` instrumentation writes
/// (`..._key`), and a provider's prefixed name (`http.request.header.x-idempotency-key`).
fn is_key_header(attr: &str) -> bool {
    let Some(name) = attr.strip_prefix("http.request.header.") else {
        return false;
    };
    ["idempotency-key", "idempotency_key"].iter().any(|k| {
        name.len() >= k.len()
            && name.is_char_boundary(name.len() - k.len())
            && name[name.len() - k.len()..].eq_ignore_ascii_case(k)
    })
}
const EXCEPTION: &[&str] = &["exception.type", "exception.message"];
/// Strands' default writes a tool's input only here: the `content` of an event of its span.
const INPUT_EVENT: &str = "gen_ai.tool.message";
const INPUT_EVENT_CONTENT: &str = "content";

/// Whether a question below reads the attribute `key` of a span, on any span. The tool's
/// arguments are read of tool spans only ([`keep_what_is_read`]).
fn is_read_of_any_span(key: &str) -> bool {
    let lists = [SPAN_KINDS, METHOD, URL, STATUS, TOOL_NAME, RUN];
    lists.iter().any(|l| l.contains(&key))
        || is_key_header(key)
        || ["agent.step", "metadata", "error.type", "thread_id"].contains(&key)
        || key.ends_with(".thread_id")
        || key.ends_with("langgraph_step")
}

/// Drops what no question below reads: the attributes of other names, the tool-argument
/// attributes and input events of spans that are no tool (an LLM span's `input.value` is
/// its prompt), the span's other events and their other attributes. Spans are held until
/// every input is read (a child may come before its parent, in another file), and prompts
/// and model outputs, kilobytes a span, made that memory grow with the text the model read.
pub fn keep_what_is_read(s: &mut Span) {
    let tool = is_tool(s);
    s.headers_captured |= (s.attrs.iter()).any(|(k, _)| k.starts_with("http.request.header."));
    s.attrs
        .retain(|(k, _)| is_read_of_any_span(k) || (tool && ARGUMENTS.contains(&k.as_str())));
    s.attrs.shrink_to_fit();
    s.events
        .retain(|e| e.name == "exception" || (tool && e.name == INPUT_EVENT));
    for e in &mut s.events {
        let read: &[&str] = match e.name.as_str() {
            INPUT_EVENT => &[INPUT_EVENT_CONTENT],
            _ => EXCEPTION,
        };
        e.attrs.retain(|(k, _)| read.contains(&k.as_str()));
    }
}

/// Marked as a tool execution by any of the conventions.
pub fn is_tool(s: &Span) -> bool {
    s.attr_str("gen_ai.operation.name") == Some("execute_tool")
        || s.attr_str("openinference.span.kind")
            .is_some_and(|k| k.eq_ignore_ascii_case("tool"))
        || s.attr_str("traceloop.span.kind") == Some("tool")
        || s.attr_str("langsmith.span.kind") == Some("tool")
        || s.attr_str("ai.operationId") == Some("ai.toolCall")
}

/// An LLM call. It is CLIENT-kind and may even carry HTTP attributes, but neither it nor a
/// request made under it is an attempt of a tool call.
pub fn is_llm(s: &Span) -> bool {
    const OPERATIONS: &[&str] = &[
        "chat",
        "text_completion",
        "generate_content",
        "embeddings",
        "create_agent",
    ];
    s.attr_str("gen_ai.operation.name")
        .is_some_and(|o| OPERATIONS.contains(&o))
        || s.attr_str("openinference.span.kind").is_some_and(|k| {
            ["llm", "embedding"]
                .iter()
                .any(|x| k.eq_ignore_ascii_case(x))
        })
        || s.attr_str("langsmith.span.kind")
            .is_some_and(|k| k == "llm" || k == "chat")
        || s.attr("llm.request.type").is_some()
        || s.attr_str("ai.operationId").is_some_and(|o| {
            [".doGenerate", ".doStream", ".doEmbed"]
                .iter()
                .any(|end| o.ends_with(end))
        })
}

/// An HTTP request made by this process: a span with an HTTP method attribute, old or new
/// conventions, that is neither a server span nor an LLM or tool span.
pub fn is_http_client(s: &Span) -> bool {
    !matches!(s.kind, super::SpanKind::Server | super::SpanKind::Consumer)
        && METHOD
            .iter()
            .any(|k| s.attr_str(k).is_some_and(|m| !m.is_empty()))
        && !is_llm(s)
        && !is_tool(s)
}

/// Where another service took a request (SERVER kind): the spans under it are that service's
/// work, not its caller's.
pub fn is_server(s: &Span) -> bool {
    s.kind == super::SpanKind::Server
}

/// `gen_ai.tool.name`, `tool.name`, else the span's name without the conventions' decoration
/// (`execute_tool issue_refund`, OpenLLMetry's `issue_refund.tool`, OpenInference DSPy's
/// `issue_refund.__call__` and `issue_refund.acall`).
pub fn tool_name(s: &Span) -> &str {
    TOOL_NAME
        .iter()
        .find_map(|k| s.attr_str(k).filter(|n| !n.is_empty()))
        .unwrap_or_else(|| {
            let n = s.name.strip_prefix("execute_tool ").unwrap_or(&s.name);
            [".tool", ".__call__", ".acall"]
                .iter()
                .find_map(|suffix| n.strip_suffix(suffix).filter(|n| !n.is_empty()))
                .unwrap_or(n)
        })
}

/// The tool's arguments as written and as JSON: an argument attribute, else the content of
/// the span's input event (Strands' default; on a tool span, that event is its input).
pub fn tool_args(s: &Span) -> (String, Value) {
    let Some(v) = args_written(s) else {
        return (String::new(), Value::Null);
    };
    let (raw, parsed) = match v {
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(p) => (text.clone(), p),
            // Not JSON (a Python repr, a bare string), or nested too deep to read (said so,
            // [`super::unreadable`]): kept as text, never guessed at.
            Err(_) => return (text.clone(), Value::String(text.clone())),
        },
        other => (other.to_string(), other.clone()),
    };
    match unwrap_inputs(&parsed) {
        Some(inner) => (inner.to_string(), inner.clone()),
        None => (raw, parsed),
    }
}

/// The value a tool's arguments are read from: an argument attribute, else the content of
/// the span's input event.
pub(super) fn args_written(s: &Span) -> Option<&Value> {
    let from_event = || {
        let e = s.events.iter().find(|e| e.name == INPUT_EVENT)?;
        e.attr(INPUT_EVENT_CONTENT)
    };
    (ARGUMENTS.iter())
        .find_map(|k| s.attr(k).filter(|v| !v.is_null()))
        .or_else(|| from_event().filter(|v| !v.is_null()))
}

/// Wrappers around a tool's arguments, opened only when they have the wrapper's shape:
/// - OpenLLMetry (and LangChain callbacks generally): an object whose `inputs` holds them,
///   beside `input_str` (a Python repr, never JSON), `tags`, `metadata` and `kwargs`; a tool's
///   own argument named `inputs` is not opened.
/// - OpenInference's LlamaIndex and smolagents instrumentations: the bound arguments of the
///   framework's `(*args, **kwargs)` call, `{"kwargs": {...}}`, with beside it at most
///   `"args": []` and the call's own flag (smolagents' `sanitize_inputs_outputs`). A tool
///   whose one argument is an object named `kwargs` cannot be told from it, and is opened too.
fn unwrap_inputs(v: &Value) -> Option<&Value> {
    let obj = v.as_object()?;
    if let Some(inputs) = obj.get("inputs").filter(|i| i.is_object()) {
        let wrapped = ["input_str", "tags", "metadata", "kwargs"]
            .iter()
            .any(|k| obj.contains_key(*k));
        return wrapped.then_some(inputs);
    }
    let kwargs = obj.get("kwargs").filter(|k| k.is_object())?;
    let wrapper_only = obj.iter().all(|(k, v)| match k.as_str() {
        "kwargs" => true,
        "args" => v.as_array().is_some_and(Vec::is_empty),
        "sanitize_inputs_outputs" => v.is_boolean(),
        _ => false,
    });
    wrapper_only.then_some(kwargs)
}

/// A run id this span names: `gen_ai.conversation.id`, `session.id`, a `*.thread_id`
/// attribute, or `thread_id` inside OpenInference's JSON `metadata`.
pub fn run_attr(s: &Span) -> Option<String> {
    let named = RUN.iter().find_map(|k| s.attr(k).and_then(string_of));
    named
        .or_else(|| {
            s.attrs
                .iter()
                .filter(|(k, _)| k == "thread_id" || k.ends_with(".thread_id"))
                .find_map(|(_, v)| string_of(v))
        })
        .or_else(|| metadata(s)?.get("thread_id").and_then(string_of))
        .filter(|r| !r.is_empty())
}

/// An explicit step: `agent.step`, a `*langgraph_step` attribute, or `langgraph_step` inside
/// OpenInference's JSON `metadata`.
pub fn step_attr(s: &Span) -> Option<u32> {
    let as_step = |v: &Value| super::int_of(v).and_then(|n| u32::try_from(n).ok());
    s.attr("agent.step")
        .and_then(as_step)
        .or_else(|| {
            s.attrs
                .iter()
                .filter(|(k, _)| k.ends_with("langgraph_step"))
                .find_map(|(_, v)| as_step(v))
        })
        .or_else(|| metadata(s)?.get("langgraph_step").and_then(as_step))
}

/// OpenInference's `metadata`: a JSON object, written as a string (one nested too deep to
/// read is said so, [`super::unreadable`]).
fn metadata(s: &Span) -> Option<serde_json::Map<String, Value>> {
    match s.attr("metadata")? {
        Value::String(text) => match serde_json::from_str(text) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        },
        Value::Object(m) => Some(m.clone()),
        _ => None,
    }
}

/// Whether the span records any request header (`http.request.header.*`): the
/// instrumentations capture none unless told which (`OTEL_INSTRUMENTATION_HTTP_CAPTURE_
/// HEADERS_CLIENT_REQUEST`): a span that records none says nothing of the key.
pub fn captures_request_headers(s: &Span) -> bool {
    s.headers_captured || (s.attrs.iter()).any(|(k, _)| k.starts_with("http.request.header."))
}

/// The captured `Idempotency-Key` request header: a string array under the conventions'
/// spelling or the one the `requests` instrumentation writes.
pub fn idempotency_key(s: &Span) -> Option<String> {
    (s.attrs.iter())
        .filter(|(k, _)| is_key_header(k))
        .find_map(|(_, v)| match v {
            Value::Array(values) => values.iter().find_map(string_of),
            other => string_of(other),
        })
        .filter(|k| crate::ingest::is_key_value(k.as_bytes()))
}

/// Why the span failed, as (error class, message): an `exception` event, else `error.type`
/// with the status message, else the status message of an ERROR span.
pub fn failure_of(s: &Span) -> Option<(String, String)> {
    if let Some(e) = s.events.iter().rev().find(|e| e.name == "exception") {
        let error = e
            .attr_str("exception.type")
            .or_else(|| s.attr_str("error.type"))
            .unwrap_or("");
        let message = e.attr_str("exception.message").unwrap_or(&s.status_message);
        return Some((error.to_string(), message.to_string()));
    }
    if let Some(t) = s.attr("error.type").and_then(string_of) {
        return Some((t, s.status_message.clone()));
    }
    s.error.then(|| (String::new(), s.status_message.clone()))
}

/// `ReadTimeout: Read timed out.`, for a step end's error.
pub fn describe(error: &str, message: &str) -> String {
    match (error.is_empty(), message.is_empty()) {
        (false, false) => format!("{error}: {message}"),
        (false, true) => error.to_string(),
        (true, false) => message.to_string(),
        (true, true) => "error".to_string(),
    }
}

/// A string, or a number written as one.
pub fn string_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{is_key_header, is_read_of_any_span, unwrap_inputs};
    use serde_json::json;

    /// The key header under the conventions' name, the `requests` instrumentation's, and a
    /// provider's prefixed one, in any case; kept through the trimming of attributes.
    #[test]
    fn key_headers_by_any_prefix() {
        for name in [
            "http.request.header.idempotency-key",
            "http.request.header.idempotency_key",
            "http.request.header.x-idempotency-key",
            "http.request.header.Cko-Idempotency-Key",
        ] {
            assert!(is_key_header(name) && is_read_of_any_span(name), "{name}");
        }
        for name in [
            "http.request.header.idempotency-key-hint",
            "http.response.header.idempotency-key",
            "idempotency-key",
            "http.request.header.é",
        ] {
            assert!(!is_key_header(name), "{name}");
        }
    }

    #[test]
    fn only_wrappers_are_opened() {
        let args = json!({"order": "A-1", "amount_p": 4500});
        let opened = [
            json!({"inputs": args, "input_str": "{'order': 'A-1'}", "tags": []}),
            json!({"kwargs": args}),
            json!({"args": [], "kwargs": args}),
            json!({"args": [], "sanitize_inputs_outputs": true, "kwargs": args}),
        ];
        for v in opened {
            assert_eq!(unwrap_inputs(&v), Some(&args), "{v}");
        }
        let kept = [
            json!({"inputs": args}),
            json!({"args": ["A-1"], "kwargs": args}),
            json!({"kwargs": args, "order": "A-2"}),
            json!({"kwargs": "A-1"}),
            json!({"sanitize_inputs_outputs": "yes", "kwargs": args}),
            args.clone(),
        ];
        for v in kept {
            assert_eq!(unwrap_inputs(&v), None, "{v}");
        }
    }
}
