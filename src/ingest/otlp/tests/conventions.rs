//! The GenAI semantic conventions and OpenInference, each as its producers write it.

use super::*;

/// GenAI semconv as the OpenAI Agents contrib instrumentation writes it: HTTP spans are
/// children of the tool span, the run is `gen_ai.conversation.id` on an ancestor, the chat
/// span is CLIENT-kind. Children are exported (and so written) before their parents.
#[test]
fn genai_semconv_children_before_parents_across_lines() {
    let header = |key: &str| json!({"arrayValue": {"values": [{"stringValue": key}]}});
    let mut http1 = span(
        TR,
        "00f067aa0ba902b1",
        Some("00f067aa0ba902b0"),
        "POST",
        3,
        510,
        1510,
        kv(&[
            ("http.request.method", s("POST")),
            ("url.full", s("http://127.0.0.1:8080/v1/refunds")),
            ("http.request.header.idempotency_key", header("k-1")),
            ("error.type", s("ReadTimeout")),
        ]),
    );
    http1["events"] = read_timeout();
    http1["status"] = json!({"code": 2, "message": "ReadTimeout: Read timed out."});
    let http2 = span(
        TR,
        "00f067aa0ba902b2",
        Some("00f067aa0ba902b0"),
        "POST",
        3,
        2010,
        2100,
        kv(&[
            ("http.request.method", s("POST")),
            ("url.full", s("http://127.0.0.1:8080/v1/refunds")),
            ("http.request.header.idempotency_key", header("k-2")),
            ("http.response.status_code", json!({"intValue": "201"})),
        ]),
    );
    // An LLM call: CLIENT-kind, and here even with an HTTP method, a root inside the tool's
    // interval in the same resource. Never an attempt.
    let chat = span(
        TR2,
        "00f067aa0ba902b3",
        None,
        "chat gpt",
        3,
        600,
        700,
        kv(&[
            ("gen_ai.operation.name", s("chat")),
            ("http.request.method", s("POST")),
            ("server.address", s("api.openai.com")),
        ]),
    );
    let tool = span(
        TR,
        "00f067aa0ba902b0",
        Some("00f067aa0ba902aa"),
        "execute_tool issue_refund",
        1,
        500,
        2200,
        kv(&[
            ("gen_ai.operation.name", s("execute_tool")),
            ("gen_ai.tool.name", s("issue_refund")),
            (
                "gen_ai.tool.call.arguments",
                s(r#"{"order":"A-88214","amount_p":4500}"#),
            ),
        ]),
    );
    let root = span(
        TR,
        "00f067aa0ba902aa",
        None,
        "invoke_agent refunds",
        1,
        0,
        3000,
        kv(&[
            ("gen_ai.operation.name", s("invoke_agent")),
            ("gen_ai.conversation.id", s("conv-7f3a")),
        ]),
    );
    let text = [
        batch("i1", vec![http1]),
        batch("i1", vec![http2, chat]),
        batch("i1", vec![tool]),
    ]
    .join("\n");
    let root_file = batch("i1", vec![root]);
    let (spans, l) = linked(&[&text, &root_file]);
    let calls = tool_calls(&l);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].call.run, "conv-7f3a");
    assert_eq!(calls[0].call.step, 1, "the run's first tool span");
    assert_eq!(calls[0].tool, "issue_refund");
    assert_eq!(calls[0].args, json!({"order": "A-88214", "amount_p": 4500}));
    let a = attempts(&l);
    assert_eq!(a.len(), 2);
    assert_eq!((a[0].number, a[0].key.as_deref()), (1, Some("k-1")));
    assert_eq!((a[1].number, a[1].key.as_deref()), (2, Some("k-2")));
    assert_eq!(a[0].method.as_deref(), Some("POST"));
    assert_eq!(
        a[0].url.as_deref(),
        Some("http://127.0.0.1:8080/v1/refunds")
    );
    let outcomes: Vec<_> = events(&l)
        .into_iter()
        .filter_map(|e| match &e.kind {
            EventKind::Failure(f) => Some((f.attempt, f.class, f.error.clone())),
            EventKind::Response(r) => Some((r.attempt, r.class, r.status.to_string().into())),
            _ => None,
        })
        .collect();
    assert_eq!(
        outcomes,
        vec![
            (
                Some(1),
                FailureClass::Ambiguous,
                "requests.exceptions.ReadTimeout".into()
            ),
            (Some(2), FailureClass::Success, "201".into()),
        ]
    );
    // Each event points at the line of its span; the chat span produced none.
    for (i, e) in &l.events {
        assert_eq!(e.loc, spans[*i].loc);
        assert_ne!(spans[*i].name, "chat gpt");
    }
    let line_of = |name: &str| spans.iter().find(|s| s.name == name).unwrap().loc;
    assert_eq!(
        line_of("execute_tool issue_refund"),
        Loc { input: 0, line: 3 }
    );
    assert_eq!(line_of("invoke_agent refunds"), Loc { input: 1, line: 1 });
}

/// OpenInference (LangGraph): base64 ids, named enums, no `parentSpanId` on roots, the step
/// inside the JSON `metadata`, and HTTP spans as roots of their own traces, tied to the tool
/// only by time within the same resource. A pretty-printed document, to check span lines.
#[test]
fn openinference_roots_linked_by_time_in_one_resource() {
    let b64 = |hex: &str| {
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        base64(&bytes)
    };
    let mut tool = span(
        &b64(TR),
        &b64("1111111111111111"),
        Some(&b64("2222222222222222")),
        "issue_refund",
        1,
        100,
        3000,
        kv(&[
            ("openinference.span.kind", s("TOOL")),
            ("tool.name", s("issue_refund")),
            (
                "input.value",
                s(r#"{"order": "A-88214", "amount_p": 4500}"#),
            ),
            ("input.mime_type", s("application/json")),
            (
                "metadata",
                s(r#"{"thread_id": "t-1", "langgraph_step": 2, "langgraph_node": "tools"}"#),
            ),
        ]),
    );
    tool["kind"] = json!("SPAN_KIND_INTERNAL");
    let mut node = span(
        &b64(TR),
        &b64("2222222222222222"),
        None,
        "tools",
        1,
        90,
        3100,
        kv(&[
            ("openinference.span.kind", s("CHAIN")),
            ("session.id", s("t-1")),
        ]),
    );
    node.as_object_mut().unwrap().remove("parentSpanId");
    let http = |trace: &str, id: &str, start: i64, end: i64, status: Option<i64>| {
        let mut v = span(
            &b64(trace),
            &b64(id),
            None,
            "POST",
            3,
            start,
            end,
            kv(&[
                ("http.method", s("POST")),
                ("http.url", s("http://127.0.0.1:8080/v1/refunds")),
            ]),
        );
        v["kind"] = json!("SPAN_KIND_CLIENT");
        match status {
            Some(code) => v["attributes"]
                .as_array_mut()
                .unwrap()
                .push(json!({"key": "http.status_code", "value": {"intValue": code}})),
            None => {
                v["status"] = json!({"code": "STATUS_CODE_ERROR", "message": "ReadTimeout: Read timed out. (read timeout=1.0)"});
            }
        }
        v
    };
    let inside_1 = http(TR2, "3333333333333333", 200, 1200, None);
    let inside_2 = http(TR3, "4444444444444444", 1700, 1800, Some(201));
    let outside = http(
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "5555555555555555",
        2900,
        3200,
        Some(201),
    );
    let doc = json!({"resourceSpans": [
        {"resource": {"attributes": kv(&[("service.instance.id", s("proc-a"))])},
         "scopeSpans": [{"spans": [inside_1, inside_2, outside, tool, node]}]},
        // Another process's request in the same interval: not this tool's attempt.
        {"resource": {"attributes": kv(&[("service.instance.id", s("proc-b"))])},
         "scopeSpans": [{"spans": [http("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "6666666666666666", 300, 400, Some(201))]}]},
    ]});
    let text = serde_json::to_string_pretty(&doc).unwrap();
    assert_eq!(
        crate::ingest::source::detect(text.as_bytes(), &[]),
        Some(crate::ingest::Format::Otlp)
    );
    let (spans, l) = linked(&[&text]);
    let calls = tool_calls(&l);
    assert_eq!(calls.len(), 1);
    assert_eq!((calls[0].call.run.as_str(), calls[0].call.step), ("t-1", 2));
    assert_eq!(calls[0].args, json!({"order": "A-88214", "amount_p": 4500}));
    let a = attempts(&l);
    assert_eq!(
        a.len(),
        2,
        "two roots inside the tool's interval, same resource"
    );
    let attempt_spans: Vec<&str> = l
        .events
        .iter()
        .filter(|(_, e)| matches!(e.kind, EventKind::Attempt(_)))
        .map(|(i, _)| spans[*i].span_id.as_str())
        .collect();
    assert_eq!(attempt_spans, ["3333333333333333", "4444444444444444"]);
    let failure = events(&l).into_iter().find_map(|e| match &e.kind {
        EventKind::Failure(f) => Some(f.clone()),
        _ => None,
    });
    assert_eq!(
        failure.unwrap().class,
        FailureClass::Ambiguous,
        "from the ERROR status message"
    );
    // Ids were base64 and are hex now; spans sit on their own lines of the document.
    assert!(
        spans
            .iter()
            .all(|s| s.trace_id.len() == 32 && s.span_id.len() == 16)
    );
    let lines: Vec<u32> = spans.iter().map(|s| s.loc.line).collect();
    assert!(lines.windows(2).all(|w| w[0] < w[1]), "{lines:?}");
    let tool_line = text
        .lines()
        .position(|l| l.contains(&b64("1111111111111111")) && l.contains("\"spanId\""))
        .unwrap()
        + 1;
    assert_eq!(spans[3].loc.line as usize, tool_line);
}
