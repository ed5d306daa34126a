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
