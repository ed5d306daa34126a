//! Calls nested inside a tool call: the requests of an LLM call the tool makes (a
//! summariser, an agent used as a tool) are the model's, not attempts of the tool.

use super::tests::{TR, attempts, batch, kv, linked, s, span, tool_calls};
use serde_json::json;

/// A refund tool that asks a model first (a GenAI `chat` span or the Vercel AI SDK's
/// `doGenerate` span, each with its HTTP request below it), then posts the refund: one
/// attempt, the refund's.
#[test]
fn requests_of_an_llm_call_inside_a_tool_are_not_its_attempts() {
    let llm_markers = [
        ("gen_ai.operation.name", "chat"),
        ("ai.operationId", "ai.generateText.doGenerate"),
    ];
    for (key, value) in llm_markers {
        let tool = span(
            TR,
            "5000000000000001",
            None,
            "execute_tool issue_refund",
            1,
            0,
            1000,
            kv(&[
                ("gen_ai.operation.name", s("execute_tool")),
                ("gen_ai.tool.name", s("issue_refund")),
            ]),
        );
        let llm = span(
            TR,
            "5000000000000002",
            Some("5000000000000001"),
            "llm",
            1,
            10,
            400,
            kv(&[(key, s(value))]),
        );
        let to_model = span(
            TR,
            "5000000000000003",
            Some("5000000000000002"),
            "POST",
            3,
            20,
            390,
            kv(&[
                ("http.request.method", s("POST")),
                ("url.full", s("https://api.openai.com/v1/chat/completions")),
                ("http.response.status_code", json!({"intValue": "200"})),
            ]),
        );
        let refund = span(
            TR,
            "5000000000000004",
            Some("5000000000000001"),
            "POST",
            3,
            500,
            900,
            kv(&[
                ("http.request.method", s("POST")),
                ("url.full", s("https://pay.example/v1/refunds")),
                ("http.response.status_code", json!({"intValue": "201"})),
            ]),
        );
        let (_, l) = linked(&[&batch("p", vec![to_model, llm, refund, tool])]);
        assert_eq!(tool_calls(&l).len(), 1, "{key}");
        let a = attempts(&l);
        assert_eq!(a.len(), 1, "{key}: {a:?}");
        assert_eq!(
            a[0].url.as_deref(),
            Some("https://pay.example/v1/refunds"),
            "{key}"
        );
    }
}

/// An agent used as a tool under OpenInference: the inner agent's model client writes its
/// request as a root span of its own trace, inside the LLM span's interval, itself inside the
/// tool's. The request is the model's; the refund posted after it, also a root, is the tool's
/// one attempt.
#[test]
fn a_root_request_inside_an_llm_call_inside_a_tool_is_the_models() {
    let tool = span(
        TR,
        "6000000000000001",
        None,
        "refund_agent",
        1,
        0,
        1000,
        kv(&[
            ("openinference.span.kind", s("TOOL")),
            ("tool.name", s("refund_agent")),
        ]),
    );
    let llm = span(
        TR,
        "6000000000000002",
        Some("6000000000000001"),
        "response",
        1,
        10,
        400,
        kv(&[("openinference.span.kind", s("LLM"))]),
    );
    let to_model = span(
        "1111111111111111111111111111111a",
        "6000000000000003",
        None,
        "POST",
        3,
        20,
        390,
        kv(&[
            ("http.method", s("POST")),
            ("http.url", s("https://api.openai.com/v1/responses")),
            ("http.status_code", json!({"intValue": "200"})),
        ]),
    );
    let refund = span(
        "1111111111111111111111111111111b",
        "6000000000000004",
        None,
        "POST",
        3,
        500,
        900,
        kv(&[
            ("http.method", s("POST")),
            ("http.url", s("https://pay.example/v1/refunds")),
            ("http.status_code", json!({"intValue": "201"})),
        ]),
    );
    let (_, l) = linked(&[&batch("p", vec![to_model, refund, llm, tool])]);
    let a = attempts(&l);
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(a[0].url.as_deref(), Some("https://pay.example/v1/refunds"));
}

/// Another run's model call in the same process, whose interval happens to hold the tool's
/// request, and a model span that is the tool's parent with the very same interval: neither
/// is inside the tool, so the request stays the tool's attempt.
#[test]
fn a_model_call_outside_the_tool_leaves_its_request_alone() {
    let refund = || {
        span(
            "2222222222222222222222222222222b",
            "7000000000000004",
            None,
            "POST",
            3,
            500,
            900,
            kv(&[
                ("http.method", s("POST")),
                ("http.url", s("https://pay.example/v1/refunds")),
                ("http.status_code", json!({"intValue": "201"})),
            ]),
        )
    };
    let tool = |parent: Option<&str>, start, end| {
        span(
            TR,
            "7000000000000001",
            parent,
            "issue_refund",
            1,
            start,
            end,
            kv(&[
                ("openinference.span.kind", s("TOOL")),
                ("tool.name", s("issue_refund")),
            ]),
        )
    };
    let llm = |trace: &str, id, start, end| {
        span(
            trace,
            id,
            None,
            "response",
            1,
            start,
            end,
            kv(&[("openinference.span.kind", s("LLM"))]),
        )
    };
    let other_run = vec![
        tool(None, 0, 1000),
        llm(
            "3333333333333333333333333333333c",
            "7000000000000002",
            400,
            950,
        ),
        refund(),
    ];
    let tool_inside_model = vec![
        llm(TR, "7000000000000002", 0, 1000),
        tool(Some("7000000000000002"), 0, 1000),
        refund(),
    ];
    for (case, spans) in [
        ("other run", other_run),
        ("same interval", tool_inside_model),
    ] {
        let (_, l) = linked(&[&batch("p", spans)]);
        assert_eq!(attempts(&l).len(), 1, "{case}");
    }
}
