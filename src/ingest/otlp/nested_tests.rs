//! Calls nested inside a tool call: the requests of an LLM call the tool makes (a
//! summariser, an agent used as a tool) are the model's, not attempts of the tool.

use super::tests::{TR, attempts, batch, kv, linked, s, span, tool_calls};
use serde_json::{Value, json};

/// Where a span sits: its trace, id, parent, and interval in milliseconds.
struct At<'a> {
    trace: &'a str,
    id: &'a str,
    parent: Option<&'a str>,
    start: i64,
    end: i64,
}

fn at<'a>(trace: &'a str, id: &'a str, parent: Option<&'a str>, start: i64, end: i64) -> At<'a> {
    At {
        trace,
        id,
        parent,
        start,
        end,
    }
}

/// The `issue_refund` tool, as OpenInference marks it.
fn tool(at: At) -> Value {
    let attrs = kv(&[
        ("openinference.span.kind", s("TOOL")),
        ("tool.name", s("issue_refund")),
    ]);
    span(
        at.trace,
        at.id,
        at.parent,
        "issue_refund",
        1,
        at.start,
        at.end,
        attrs,
    )
}

/// A model call, marked by `key` = `value`.
fn llm(at: At, key: &str, value: &str) -> Value {
    let attrs = kv(&[(key, s(value))]);
    span(
        at.trace, at.id, at.parent, "llm", 1, at.start, at.end, attrs,
    )
}

/// A POST to `url` answered `status`.
fn post(at: At, url: &str, status: &str) -> Value {
    let attrs = kv(&[
        ("http.request.method", s("POST")),
        ("url.full", s(url)),
        ("http.response.status_code", json!({ "intValue": status })),
    ]);
    span(
        at.trace, at.id, at.parent, "POST", 3, at.start, at.end, attrs,
    )
}

const TO_MODEL: &str = "https://api.openai.com/v1/chat/completions";
const REFUND: &str = "https://pay.example/v1/refunds";

/// The only attempt linked from `spans` is the refund's.
fn only_the_refund_is_an_attempt(spans: Vec<Value>, case: &str) {
    let (_, l) = linked(&[&batch("p", spans)]);
    assert_eq!(tool_calls(&l).len(), 1, "{case}");
    let a = attempts(&l);
    assert_eq!(a.len(), 1, "{case}: {a:?}");
    assert_eq!(a[0].url.as_deref(), Some(REFUND), "{case}");
}

/// A refund tool that asks a model first (a GenAI `chat` span or the Vercel AI SDK's
/// `doGenerate` span, each with its HTTP request below it), then posts the refund: one
/// attempt, the refund's.
#[test]
fn requests_of_an_llm_call_inside_a_tool_are_not_its_attempts() {
    let (t, m) = ("5000000000000001", "5000000000000002");
    let in_trace = |id, parent, start, end| at(TR, id, parent, start, end);
    for (key, value) in [
        ("gen_ai.operation.name", "chat"),
        ("ai.operationId", "ai.generateText.doGenerate"),
    ] {
        let spans = vec![
            post(
                in_trace("5000000000000003", Some(m), 20, 390),
                TO_MODEL,
                "200",
            ),
            llm(in_trace(m, Some(t), 10, 400), key, value),
            post(
                in_trace("5000000000000004", Some(t), 500, 900),
                REFUND,
                "201",
            ),
            tool(in_trace(t, None, 0, 1000)),
        ];
        only_the_refund_is_an_attempt(spans, key);
    }
}

/// An agent used as a tool under OpenInference: the inner agent's model client writes its
/// request as a root span of its own trace, inside the LLM span's interval, itself inside the
/// tool's. The request is the model's; the refund posted after it, also a root, is the tool's
/// one attempt.
#[test]
fn a_root_request_inside_an_llm_call_inside_a_tool_is_the_models() {
    let (t, m) = ("6000000000000001", "6000000000000002");
    let spans = vec![
        post(
            at(
                "1111111111111111111111111111111a",
                "6000000000000003",
                None,
                20,
                390,
            ),
            TO_MODEL,
            "200",
        ),
        post(
            at(
                "1111111111111111111111111111111b",
                "6000000000000004",
                None,
                500,
                900,
            ),
            REFUND,
            "201",
        ),
        llm(
            at(TR, m, Some(t), 10, 400),
            "openinference.span.kind",
            "LLM",
        ),
        tool(at(TR, t, None, 0, 1000)),
    ];
    only_the_refund_is_an_attempt(spans, "agent as a tool");
}

/// Another run's model call in the same process, whose interval happens to hold the tool's
/// request, and a model span that is the tool's parent with the very same interval: neither
/// is inside the tool, so the request stays the tool's attempt.
#[test]
fn a_model_call_outside_the_tool_leaves_its_request_alone() {
    let (t, m) = ("7000000000000001", "7000000000000002");
    let refund = || {
        let root = "2222222222222222222222222222222b";
        post(at(root, "7000000000000004", None, 500, 900), REFUND, "201")
    };
    let model = |trace, parent, start, end| {
        llm(
            at(trace, m, parent, start, end),
            "openinference.span.kind",
            "LLM",
        )
    };
    let other_run = vec![
        tool(at(TR, t, None, 0, 1000)),
        model("3333333333333333333333333333333c", None, 400, 950),
        refund(),
    ];
    let tool_inside_model = vec![
        model(TR, None, 0, 1000),
        tool(at(TR, t, Some(m), 0, 1000)),
        refund(),
    ];
    only_the_refund_is_an_attempt(other_run, "another run's model call");
    only_the_refund_is_an_attempt(tool_inside_model, "a model span with the tool's interval");
}

/// AutoGen under OpenInference: the outer tool span ends OK around autogen-core's inner
/// `execute_tool` span of the same name. The call failed when the inner span that ended
/// last failed; an inner failure retried inside the tool, the last inner span ok, did not.
#[test]
fn a_call_fails_when_its_last_inner_tool_span_of_its_name_failed() {
    let failed = |mut v: Value| {
        v["status"] = json!({"code": 2, "message": "ReadTimeout"});
        v
    };
    let step_ok = |inner: Vec<Value>| {
        let mut spans = vec![tool(at(TR, "8000000000000001", None, 0, 3000))];
        spans.extend(inner);
        let (_, l) = linked(&[&batch("a", spans)]);
        assert_eq!(tool_calls(&l).len(), 1);
        (l.events.iter()).find_map(|(_, e)| match &e.kind {
            crate::event::EventKind::StepEnd(s) => Some(s.ok),
            _ => None,
        })
    };
    let inner = |id, start, end| tool(at(TR, id, Some("8000000000000001"), start, end));
    assert_eq!(
        step_ok(vec![failed(inner("8000000000000002", 10, 1000))]),
        Some(false)
    );
    assert_eq!(
        step_ok(vec![
            failed(inner("8000000000000002", 10, 1000)),
            inner("8000000000000003", 1100, 2900)
        ]),
        Some(true)
    );
    assert_eq!(
        step_ok(vec![inner("8000000000000002", 10, 1000)]),
        Some(true)
    );
}
