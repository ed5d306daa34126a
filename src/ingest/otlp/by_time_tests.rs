//! What linking by time cannot settle is said, never guessed at in silence: a tool span
//! whose times are unusable holds no request by time and is reported; a request two tool
//! calls running side by side could have made goes to one, by a stated rule, and is reported.

use super::Span;
use super::link::Linked;
use super::tests::{TR, batch, kv, linked, s, span};
use serde_json::{Value, json};

/// A tool span named `name`, as OpenInference marks it, from `start` to `end` ms.
fn tool(id: &str, parent: Option<&str>, name: &str, start: i64, end: i64) -> Value {
    let attrs = kv(&[
        ("openinference.span.kind", s("TOOL")),
        ("tool.name", s(name)),
    ]);
    span(TR, id, parent, name, 1, start, end, attrs)
}

/// A POST answered 201, of trace `trace`.
fn post(trace: &str, id: &str, parent: Option<&str>, start: i64, end: i64) -> Value {
    let attrs = kv(&[
        ("http.request.method", s("POST")),
        ("http.response.status_code", json!({"intValue": "201"})),
    ]);
    span(trace, id, parent, "POST", 3, start, end, attrs)
}

/// A request left as the root of a trace of its own (OpenInference's HTTP spans).
fn root_post(trace: &str, id: &str, start: i64, end: i64) -> Value {
    post(trace, id, None, start, end)
}

/// The tool call each attempt went to, by span ids: `(attempt, tool)`, in the order made.
fn owners(spans: &[Span], l: &Linked) -> Vec<(String, String)> {
    let mut tool_of_call = Vec::new();
    let mut got = Vec::new();
    for (i, e) in &l.events {
        match &e.kind {
            crate::event::EventKind::ToolCall(t) => {
                tool_of_call.push((t.call.clone(), spans[*i].span_id.clone()))
            }
            crate::event::EventKind::Attempt(a) => {
                let call = a.call.as_ref().unwrap();
                let (_, t) = tool_of_call.iter().find(|(c, _)| c == call).unwrap();
                got.push((spans[*i].span_id.clone(), t.clone()));
            }
            _ => {}
        }
    }
    got
}

fn without(mut v: Value, key: &str) -> Value {
    v.as_object_mut().unwrap().remove(key);
    v
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_string(), b.to_string())
}

/// A tool span without its end (or its start, or ending before it starts, or with a time of
/// 0, protobuf's unset value) is still a call and keeps the requests below it by parent id,
/// but holds no request by time: it is reported, with what to fix. The same tool with both
/// times holds the root request and nothing is reported.
#[test]
fn a_tool_span_with_unusable_times_is_reported_and_keeps_its_children() {
    const T: &str = "a100000000000001";
    let child = post(TR, "a100000000000002", Some(T), 100, 200);
    let root = root_post(
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "a100000000000003",
        300,
        400,
    );
    // An instant at the tool's start: an instant tool there would hold it, were it let.
    let instant = without(
        root_post(
            "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
            "a100000000000004",
            0,
            50,
        ),
        "endTimeUnixNano",
    );
    let good = tool(T, None, "issue_refund", 0, 1000);
    let requests = [child, root, instant];
    let (spans, l) = linked(&[&batch(
        "p",
        [vec![good.clone()], requests.to_vec()].concat(),
    )]);
    assert!(l.problems.is_empty(), "{:?}", l.problems);
    assert_eq!(
        owners(&spans, &l),
        [
            pair("a100000000000004", T),
            pair("a100000000000002", T),
            pair("a100000000000003", T)
        ]
    );
    let backwards = tool(T, None, "issue_refund", 1000, 0);
    let mut zero_end = good.clone();
    zero_end["endTimeUnixNano"] = json!("0");
    let mut zero_start = good.clone();
    zero_start["startTimeUnixNano"] = json!("0");
    for (broken, why) in [
        (
            without(good.clone(), "endTimeUnixNano"),
            "has no endTimeUnixNano",
        ),
        (
            without(good.clone(), "startTimeUnixNano"),
            "has no startTimeUnixNano",
        ),
        (backwards, "ends before it starts"),
        (zero_end, "has no endTimeUnixNano"),
        (zero_start, "has no startTimeUnixNano"),
    ] {
        let (spans, l) = linked(&[&batch("p", [vec![broken], requests.to_vec()].concat())]);
        assert_eq!(l.problems.len(), 1, "{why}: {:?}", l.problems);
        let (span, reason) = &l.problems[0];
        assert_eq!(spans[*span].span_id, T);
        assert!(
            reason.starts_with(&format!("tool span `issue_refund` {why}, ")),
            "{reason}"
        );
        assert!(reason.contains("propagate trace context"), "{reason}");
        assert_eq!(
            owners(&spans, &l),
            [pair("a100000000000002", T)],
            "{why}: the child by its parent id, the root by time not at all"
        );
    }
}

/// Only a tool span's times are reported: a request or any other span with one time
/// missing is an instant at the other, used as it is.
#[test]
fn other_spans_with_one_time_missing_are_not_reported() {
    const T: &str = "a200000000000001";
    let chain = without(
        span(TR, "a200000000000009", None, "agent", 1, 0, 2000, kv(&[])),
        "endTimeUnixNano",
    );
    let child = without(
        post(TR, "a200000000000002", Some(T), 100, 200),
        "endTimeUnixNano",
    );
    let root = without(
        root_post(
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "a200000000000003",
            300,
            400,
        ),
        "startTimeUnixNano",
    );
    let t = tool(T, Some("a200000000000009"), "issue_refund", 0, 1000);
    let (spans, l) = linked(&[&batch("p", vec![chain, t, child, root])]);
    assert!(l.problems.is_empty(), "{:?}", l.problems);
    assert_eq!(
        owners(&spans, &l),
        [pair("a200000000000002", T), pair("a200000000000003", T)]
    );
}

/// What linking reported as ambiguous, by span ids: `(request, chosen, other)`.
fn ambiguous(spans: &[Span], l: &Linked) -> Vec<(String, String, String)> {
    let id = |i: usize| spans[i].span_id.clone();
    l.ambiguous
        .iter()
        .map(|a| (id(a.request), id(a.chosen), id(a.other)))
        .collect()
}

fn triple(a: &str, b: &str, c: &str) -> (String, String, String) {
    (a.to_string(), b.to_string(), c.to_string())
}

const A: &str = "b100000000000001";
const B: &str = "b100000000000002";
const IN_BOTH: &str = "b1000000000000a1";

/// Two tool calls of one process running side by side, each the root of its trace, and
/// three requests left as roots: one in the first's time only, one in the second's only,
/// one in both.
fn side_by_side(a: (i64, i64), b: (i64, i64), both: (i64, i64)) -> Vec<Value> {
    let mut b_tool = tool(B, None, "lookup", b.0, b.1);
    b_tool["traceId"] = json!("cccccccccccccccccccccccccccccccc");
    vec![
        tool(A, None, "issue_refund", a.0, a.1),
        b_tool,
        root_post(
            "dddddddddddddddddddddddddddddd01",
            "b1000000000000a0",
            a.0 + 1,
            a.0 + 2,
        ),
        root_post("dddddddddddddddddddddddddddddd02", IN_BOTH, both.0, both.1),
        root_post(
            "dddddddddddddddddddddddddddddd03",
            "b1000000000000a2",
            b.1 - 2,
            b.1 - 1,
        ),
    ]
}

/// A request in the time of two tool calls that overlap, neither inside the other in the
/// trace, goes to the later to start, and is reported naming both; requests in one call's
/// time only are not. Whether the intervals merely overlap or one lies within the other in
/// time, the trace does not say which tool made the request (within, every request in the
/// inner one's time is in both).
#[test]
fn a_request_two_side_by_side_tools_could_have_made_is_reported() {
    let overlapping = ((0, 1000), (500, 1500), (600, 700), vec![IN_BOTH]);
    let within = (
        (0, 1000),
        (200, 800),
        (300, 400),
        vec![IN_BOTH, "b1000000000000a2"],
    );
    for (a, b, both, reported) in [overlapping, within] {
        let (spans, l) = linked(&[&batch("p", side_by_side(a, b, both))]);
        assert_eq!(
            owners(&spans, &l),
            [
                pair("b1000000000000a0", A),
                pair(IN_BOTH, B),
                pair("b1000000000000a2", B)
            ],
            "{b:?}: not dropped, the later to start's"
        );
        let want: Vec<_> = reported.iter().map(|h| triple(h, B, A)).collect();
        assert_eq!(ambiguous(&spans, &l), want, "{b:?}");
        let place = |s: &Span| format!("trace.jsonl:{}", s.loc.line + 10);
        let why = l.ambiguous[0].describe(&spans, place);
        assert!(
            why.contains("of `lookup` at trace.jsonl:11 (the later to start), not of `issue_refund` at trace.jsonl:11;"),
            "{why}"
        );
        assert!(why.contains("propagate trace context"), "{why}");
    }
}

/// At equal starts the first to end holds the request, whichever was written first; at
/// equal intervals the first read.
#[test]
fn at_equal_starts_the_first_to_end_then_the_first_read_holds_the_request() {
    let in_both = |spans: &[Span], l: &Linked| {
        let all = ambiguous(spans, l);
        all.into_iter().find(|(h, _, _)| h == IN_BOTH)
    };
    for (b, first, other) in [((0, 800), B, A), ((0, 1000), A, B)] {
        let mut written = side_by_side((0, 1000), b, (300, 400));
        let (spans, l) = linked(&[&batch("p", written.clone())]);
        assert_eq!(
            in_both(&spans, &l),
            Some(triple(IN_BOTH, first, other)),
            "{b:?}"
        );
        let a = l
            .ambiguous
            .iter()
            .find(|a| spans[a.request].span_id == IN_BOTH);
        let why = a.unwrap().describe(&spans, |_| String::new());
        let rule = if b == (0, 800) {
            "(the first to end)"
        } else {
            "(the first read)"
        };
        assert!(why.contains(rule), "{why}");
        if b == (0, 800) {
            written.swap(0, 1);
            let (spans, l) = linked(&[&batch("p", written)]);
            assert_eq!(
                in_both(&spans, &l),
                Some(triple(IN_BOTH, first, other)),
                "{b:?}"
            );
        }
    }
}

/// A tool call inside another in the trace (an agent used as a tool, its own tool below it)
/// holds the requests made in its time: the innermost, as written, and nothing is reported.
#[test]
fn a_request_in_a_tool_nested_in_the_trace_is_not_reported() {
    for b in [(200, 800), (500, 1500)] {
        let mut spans = side_by_side((0, 1000), b, (600, 700));
        spans[1] = tool(B, Some(A), "lookup", b.0, b.1);
        let (spans, l) = linked(&[&batch("p", spans)]);
        assert!(l.ambiguous.is_empty(), "{b:?}: {:?}", l.ambiguous);
        assert_eq!(
            owners(&spans, &l),
            [
                pair("b1000000000000a0", A),
                pair(IN_BOTH, B),
                pair("b1000000000000a2", B)
            ],
            "{b:?}"
        );
    }
}

/// The SERVER span of the web request an agent answers (`POST /v1/chat`), or an
/// application's own span (kind INTERNAL), as the root of the agent's trace.
fn handler(id: &str, kind: i64) -> Value {
    let attrs = match kind {
        2 => kv(&[("http.request.method", s("POST"))]),
        _ => kv(&[]),
    };
    span(TR, id, None, "POST /v1/chat", kind, 0, 3000, attrs)
}

/// An agent answering a web request, traced by OpenInference (as
/// fixtures/otlp-langgraph-openinference-served, from the real SDK): the tool's span is
/// never current, so its two requests are children of the span that was, the request's
/// SERVER span (or the application's own span), like the graph's spans. They are the
/// tool's attempts, as they are when they are roots of their own traces.
#[test]
fn requests_under_the_web_request_the_agent_answers_are_its_tools_attempts() {
    const H: &str = "c100000000000001";
    const T: &str = "c100000000000003";
    for kind in [2, 1] {
        let graph = span(
            TR,
            "c100000000000002",
            Some(H),
            "LangGraph",
            1,
            5,
            2990,
            kv(&[("openinference.span.kind", s("CHAIN"))]),
        );
        let spans = vec![
            handler(H, kind),
            graph,
            tool(T, Some("c100000000000002"), "issue_refund", 100, 2500),
            post(TR, "c1000000000000a1", Some(H), 200, 1200),
            post(TR, "c1000000000000a2", Some(H), 1500, 1600),
            // After the tool: the agent's, not the tool's.
            post(TR, "c1000000000000a3", Some(H), 2600, 2700),
        ];
        let (spans, l) = linked(&[&batch("p", spans)]);
        assert_eq!(
            owners(&spans, &l),
            [pair("c1000000000000a1", T), pair("c1000000000000a2", T)],
            "kind {kind}"
        );
        assert!(l.ambiguous.is_empty() && l.problems.is_empty());
    }
}

/// A request made under a span no tool runs below is no tool's attempt, even in a tool's
/// time in the same process: a guardrail's beside the tool, or a service's own request under
/// the SERVER span that took a request (its trace context lost, so that span is a root).
#[test]
fn a_request_under_a_span_no_tool_runs_below_is_no_attempt() {
    const H: &str = "c200000000000001";
    const T: &str = "c200000000000003";
    let guardrail = span(
        TR,
        "c200000000000004",
        Some(H),
        "guardrail",
        1,
        150,
        1300,
        kv(&[]),
    );
    let service = span(
        "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee",
        "c200000000000005",
        None,
        "POST /v1/refunds",
        2,
        300,
        900,
        kv(&[("http.request.method", s("POST"))]),
    );
    let spans = vec![
        handler(H, 2),
        tool(T, Some(H), "issue_refund", 100, 2500),
        guardrail,
        post(TR, "c2000000000000a1", Some("c200000000000004"), 200, 1200),
        service,
        post(
            "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee",
            "c2000000000000a2",
            Some("c200000000000005"),
            400,
            800,
        ),
        post(TR, "c2000000000000a3", Some(H), 1500, 1600),
    ];
    let (spans, l) = linked(&[&batch("p", spans)]);
    assert_eq!(owners(&spans, &l), [pair("c2000000000000a3", T)]);
}

/// Three tools side by side, their requests roots of their own traces: a retry sent while
/// the latest tool's own request is still open goes to another tool holding it, the one
/// whose last request failed, and the report says why (review 34: it went to the tool in
/// flight, and a client retry read as a gateway's).
#[test]
fn a_request_sent_while_the_latest_tools_own_is_open_goes_to_a_free_one() {
    const T1: &str = "11111111111111111111111111111111";
    const T2: &str = "22222222222222222222222222222222";
    const T3: &str = "33333333333333333333333333333333";
    const T4: &str = "44444444444444444444444444444444";
    let timed_out = |trace: &str, id: &str, start: i64, end: i64| {
        let mut v = root_post(trace, id, start, end);
        v["attributes"] = kv(&[("http.request.method", s("POST"))]);
        v["status"] = json!({"code": 2, "message": "ReadTimeout"});
        v
    };
    let spans = vec![
        tool("a000000000000001", None, "issue_refund", 0, 3000),
        tool("a000000000000002", None, "issue_refund", 50, 3000),
        tool("a000000000000003", None, "issue_refund", 1050, 3000),
        timed_out(T1, "b000000000000001", 10, 1010),
        root_post(T2, "b000000000000002", 60, 400),
        root_post(T3, "b000000000000003", 1100, 2500),
        root_post(T4, "b000000000000004", 1200, 1500),
    ];
    let (spans, l) = linked(&[&batch("p", spans)]);
    let mut got = owners(&spans, &l);
    got.sort();
    assert_eq!(
        got,
        [
            pair("b000000000000001", "a000000000000001"),
            pair("b000000000000002", "a000000000000002"),
            pair("b000000000000003", "a000000000000003"),
            pair("b000000000000004", "a000000000000001"),
        ]
    );
    let place = |s: &Span| format!("trace.jsonl:{}", s.loc.line + 1);
    let why: Vec<String> = (l.ambiguous.iter())
        .filter(|a| spans[a.request].span_id == "b000000000000004")
        .map(|a| a.describe(&spans, place))
        .collect();
    assert!(
        why[0].contains("(the other's own request was still open)"),
        "{why:?}"
    );
}
