//! Resumes read from where a run's spans are (`link/resumes.rs`): a run named by an
//! attribute going on in another process after its spans stopped is resumed there; another
//! trace of the same process, another process while the run is open, or a process that
//! makes none of its tool calls is not.

use super::tests::{T0, batch, kv, linked, s, span};
use crate::event::{EventKind, Lifecycle};
use crate::ingest::otlp::link::Linked;
use serde_json::{Value, json};

const MS: i64 = 1_000_000;

/// An agent's span naming conversation `conv` (GenAI's `invoke_agent`), from `start` to
/// `end` ms.
fn agent(trace: &str, id: &str, parent: Option<&str>, conv: &str, start: i64, end: i64) -> Value {
    let attrs = kv(&[
        ("gen_ai.operation.name", s("invoke_agent")),
        ("gen_ai.conversation.id", s(conv)),
    ]);
    span(trace, id, parent, "invoke_agent", 1, start, end, attrs)
}

/// An `issue_refund` call of order `order` below `parent`.
fn refund(trace: &str, id: &str, parent: Option<&str>, order: &str, start: i64, end: i64) -> Value {
    let args = json!({"order": order, "amount_p": 1000}).to_string();
    let attrs = kv(&[
        ("gen_ai.operation.name", s("execute_tool")),
        ("gen_ai.tool.name", s("issue_refund")),
        ("gen_ai.tool.call.arguments", s(&args)),
    ]);
    span(
        trace,
        id,
        parent,
        "execute_tool issue_refund",
        1,
        start,
        end,
        attrs,
    )
}

/// A span id of trace `trace`: `role` (a hex digit) then the trace's first 15 digits.
fn sid(trace: &str, role: char) -> String {
    format!("{role}{}", &trace[..15])
}

/// A turn of conversation `conv` in trace `trace`: the agent's span from `start` for 100
/// ms (id [`sid`] `a`), one refund inside it (`b`).
fn turn(trace: &str, conv: &str, order: &str, start: i64) -> Vec<Value> {
    below(trace, None, conv, order, start)
}

/// [`turn`], its agent's span below `parent`.
fn below(trace: &str, parent: Option<&str>, conv: &str, order: &str, start: i64) -> Vec<Value> {
    let a = sid(trace, 'a');
    vec![
        agent(trace, &a, parent, conv, start, start + 100),
        refund(
            trace,
            &sid(trace, 'b'),
            Some(&a),
            order,
            start + 10,
            start + 90,
        ),
    ]
}

/// `spans` with the first (a turn's agent span) ended in error: the process stopped in the
/// middle of the run (told to stop before it saved the run's state).
fn failing(mut spans: Vec<Value>) -> Vec<Value> {
    spans[0]["status"] = json!({"code": 2, "message": "SIGTERM"});
    spans
}

/// A batch from a resource of exactly these attributes.
fn from(resource: &[(&str, &str)], spans: Vec<Value>) -> String {
    let attrs: Vec<(&str, Value)> = resource.iter().map(|(k, v)| (*k, s(v))).collect();
    json!({"resourceSpans": [{
        "resource": {"attributes": kv(&attrs)},
        "scopeSpans": [{"scope": {"name": "test"}, "spans": spans}]
    }]})
    .to_string()
}

/// The resumes linking read: (run, ms after T0).
fn resumes(l: &Linked) -> Vec<(String, i64)> {
    (l.events.iter())
        .filter_map(|(_, e)| match &e.kind {
            EventKind::Run(r) => {
                assert_eq!(r.what, Lifecycle::Resumed, "only `resumed` is ever claimed");
                Some((r.run.to_string(), (e.at.0 - T0) / MS))
            }
            _ => None,
        })
        .collect()
}

/// The tool calls' steps, in the order of their start.
fn steps(l: &Linked) -> Vec<u32> {
    let mut calls: Vec<(i64, u32)> = (l.events.iter())
        .filter_map(|(_, e)| match &e.kind {
            EventKind::ToolCall(t) => Some((e.at.0, t.call.step)),
            _ => None,
        })
        .collect();
    calls.sort();
    calls.into_iter().map(|(_, step)| step).collect()
}

const TR1: &str = "11111111111111111111111111111111";
const TR2: &str = "22222222222222222222222222222222";
const TR3: &str = "33333333333333333333333333333333";

#[test]
fn a_run_going_on_in_another_process_after_its_spans_stopped_is_resumed_there() {
    let mut first = failing(turn(TR1, "conv", "K-1", 0));
    first.push(refund(
        TR1,
        &sid(TR1, 'c'),
        Some(&sid(TR1, 'a')),
        "K-2",
        91,
        95,
    ));
    let w1 = batch("w1", first);
    let w2 = batch("w2", turn(TR2, "conv", "K-1", 3000));
    let (_, l) = linked(&[&w1, &w2]);
    // At the new process's first span of the run (its agent's), not at its tool call.
    assert_eq!(resumes(&l), [("conv".to_string(), 3000)]);
    // Positions count from 1 again in the process that took the run over.
    assert_eq!(steps(&l), [1, 2, 1]);
    // The resume is an event of the span it was read at, before that span's call.
    let (span, _) = (l.events.iter())
        .find(|(_, e)| matches!(e.kind, EventKind::Run(_)))
        .unwrap();
    assert!(l.used[*span]);
}

#[test]
fn a_resume_read_at_a_tool_span_comes_before_its_call() {
    // OpenInference on the tool span itself: no agent span above it.
    let tool = |trace: &str, id: &str, start: i64| {
        let attrs = kv(&[
            ("openinference.span.kind", s("TOOL")),
            ("tool.name", s("issue_refund")),
            ("session.id", s("th-1")),
        ]);
        span(trace, id, None, "issue_refund", 1, start, start + 50, attrs)
    };
    let (_, l) = linked(&[
        &batch("w1", failing(vec![tool(TR1, &sid(TR1, 'b'), 0)])),
        &batch("w2", vec![tool(TR2, &sid(TR2, 'b'), 2000)]),
    ]);
    let kinds: Vec<&str> = (l.events.iter())
        .filter(|(_, e)| (e.at.0 - T0) / MS == 2000)
        .map(|(_, e)| e.kind.type_name())
        .collect();
    assert_eq!(kinds.first(), Some(&"run"), "{kinds:?}");
    assert_eq!(resumes(&l), [("th-1".to_string(), 2000)]);
}

#[test]
fn another_trace_of_the_same_process_is_no_resume() {
    // An SDK that makes each model turn a trace of its own: one process, three traces.
    let mut spans = turn(TR1, "conv", "K-1", 0);
    spans.extend(turn(TR2, "conv", "K-2", 3000));
    let (_, l) = linked(&[
        &batch("w1", spans),
        &batch("w1", turn(TR3, "conv", "K-3", 6000)),
    ]);
    assert_eq!(resumes(&l), []);
    assert_eq!(steps(&l), [1, 2, 3]);
}

#[test]
fn another_process_while_the_run_is_open_is_no_resume() {
    // Worker 2 starts on the conversation while worker 1's agent span is still open (a
    // parallel branch, a tool served by another process), and worker 1 goes on after it.
    let w1 = batch("w1", {
        let a = sid(TR1, 'a');
        vec![
            agent(TR1, &a, None, "conv", 0, 200),
            refund(TR1, &sid(TR1, 'b'), Some(&a), "K-1", 10, 50),
            refund(TR1, &sid(TR1, 'c'), Some(&a), "K-2", 150, 190),
        ]
    });
    let w2 = batch("w2", turn(TR2, "conv", "K-3", 100));
    let (_, l) = linked(&[&w1, &w2]);
    assert_eq!(resumes(&l), []);
    // Back to a process of the last stretch of activity: no resume either.
    let w1_later = batch("w1", turn(TR3, "conv", "K-4", 5000));
    let (_, l) = linked(&[&w1, &w2, &w1_later]);
    assert_eq!(resumes(&l), []);
}

#[test]
fn turns_served_by_processes_in_turn_are_no_resumes_unless_one_was_cut_short() {
    // Worker 1, worker 2, worker 1 again, each turn ended well: a service with several
    // workers serving a conversation (review 34), no resume; steps number on.
    let (_, l) = linked(&[
        &batch("w1", {
            let mut w1 = turn(TR1, "conv", "K-1", 0);
            w1.extend(turn(TR3, "conv", "K-3", 6000));
            w1
        }),
        &batch("w2", turn(TR2, "conv", "K-2", 3000)),
    ]);
    assert_eq!(resumes(&l), []);
    assert_eq!(steps(&l), [1, 2, 3]);
    // The first turn ended in error: the next process took the run over; the turn after
    // it, back on worker 1, followed a turn that ended well.
    let (_, l) = linked(&[
        &batch("w1", {
            let mut w1 = failing(turn(TR1, "conv", "K-1", 0));
            w1.extend(turn(TR3, "conv", "K-3", 6000));
            w1
        }),
        &batch("w2", turn(TR2, "conv", "K-2", 3000)),
    ]);
    assert_eq!(resumes(&l), [("conv".to_string(), 3000)]);
}

/// A stretch whose turn's span was never exported (its process killed with it open: the
/// tool span's parent is missing) was cut short too; a run id met again more than a day
/// after its spans stopped is another conversation (a thread id `"1"` after a deploy); and
/// an orchestrator's span open in another process meanwhile means the run never paused.
#[test]
fn a_lost_parent_is_cut_short_a_day_later_is_no_resume_and_an_open_orchestrator_no_pause() {
    let lost = || {
        let mut t = turn(TR1, "conv", "K-1", 0);
        t.remove(0);
        t
    };
    let (_, l) = linked(&[
        &batch("w1", lost()),
        &batch("w2", turn(TR2, "conv", "K-2", 3000)),
    ]);
    // The refund's conversation is named on its lost agent span: what is left of worker 1
    // names none, so no run of worker 1's is seen going on. With the name on the tool span
    // (OpenInference's session.id), it is.
    assert_eq!(resumes(&l), []);
    let day = 24 * 3600 * 1000;
    let (_, l) = linked(&[
        &batch("w1", failing(turn(TR1, "conv", "K-1", 0))),
        &batch("w2", turn(TR2, "conv", "K-2", day + 1000)),
    ]);
    assert_eq!(resumes(&l), []);
    let orchestrator = |start: i64, end: i64| {
        let attrs = kv(&[("gen_ai.conversation.id", s("conv"))]);
        span(TR3, &sid(TR3, 'o'), None, "run", 1, start, end, attrs)
    };
    let (_, l) = linked(&[
        &batch("orchestrator", vec![orchestrator(0, 9000)]),
        &batch("w1", failing(turn(TR1, "conv", "K-1", 0))),
        &batch("w2", turn(TR2, "conv", "K-2", 3000)),
    ]);
    assert_eq!(resumes(&l), []);
}

#[test]
fn a_run_named_by_its_trace_alone_is_never_resumed() {
    let tool = |trace: &str, id: &str, start: i64| {
        let attrs = kv(&[
            ("openinference.span.kind", s("TOOL")),
            ("tool.name", s("issue_refund")),
        ]);
        span(trace, id, None, "issue_refund", 1, start, start + 50, attrs)
    };
    // Even one trace in two processes, one after the other (a queue handing it on).
    let (_, l) = linked(&[
        &batch("w1", vec![tool(TR1, &sid(TR1, 'b'), 0)]),
        &batch("w2", vec![tool(TR1, &sid(TR1, 'c'), 2000)]),
    ]);
    assert_eq!(resumes(&l), []);
}

#[test]
fn a_process_is_told_by_its_resource_only_where_it_says_so() {
    let service = ("service.name", "agent");
    let case = |r1: &[(&str, &str)], r2: &[(&str, &str)]| {
        let (_, l) = linked(&[
            &from(r1, failing(turn(TR1, "conv", "K-1", 0))),
            &from(r2, turn(TR2, "conv", "K-2", 3000)),
        ]);
        resumes(&l).len()
    };
    // The Python SDK's default resource is the same in every process: no restart shows.
    assert_eq!(case(&[service], &[service]), 0);
    // Two tracer providers of one process (Mastra's exporter beside the application's SDK).
    assert_eq!(
        case(
            &[service],
            &[service, ("telemetry.sdk.name", "@mastra/otel-exporter")]
        ),
        0
    );
    // One instance id beside a resource without one: two providers may write both.
    assert_eq!(
        case(&[service, ("service.instance.id", "i-1")], &[service]),
        0
    );
    // Another pid, host or build is another process.
    assert_eq!(
        case(
            &[service, ("process.pid", "100")],
            &[service, ("process.pid", "200")]
        ),
        1
    );
    assert_eq!(
        case(
            &[service, ("host.name", "h1")],
            &[service, ("host.name", "h2")]
        ),
        1
    );
    assert_eq!(
        case(
            &[service, ("service.version", "1.4")],
            &[service, ("service.version", "1.5")]
        ),
        1
    );
    assert_eq!(
        case(
            &[service, ("service.instance.id", "i-1")],
            &[service, ("service.instance.id", "i-2")]
        ),
        1
    );
}

#[test]
fn a_process_that_makes_none_of_the_runs_tool_calls_is_not_looked_at() {
    // A web front end names the session on the SERVER span of each request; the agent
    // runs in a process of its own below it, in the same trace.
    let web = |trace: &str, start: i64| {
        let attrs = kv(&[
            ("http.request.method", s("POST")),
            ("session.id", s("conv")),
        ]);
        span(
            trace,
            &sid(trace, 'f'),
            None,
            "POST /chat",
            2,
            start,
            start + 200,
            attrs,
        )
    };
    let agent_below =
        |trace: &str, start: i64| below(trace, Some(&sid(trace, 'f')), "conv", "K-1", start);
    let front = from(
        &[("service.name", "web")],
        vec![web(TR1, 0), web(TR2, 3000)],
    );
    let mut one = agent_below(TR1, 50);
    one.extend(agent_below(TR2, 3050));
    let (_, l) = linked(&[&front, &batch("agent-1", one)]);
    assert_eq!(resumes(&l), []);
    // The second turn's agent in another process, the first's cut short: resumed at its
    // agent's span, not at the front end's.
    let (_, l) = linked(&[
        &front,
        &batch("agent-1", failing(agent_below(TR1, 50))),
        &batch("agent-2", agent_below(TR2, 3050)),
    ]);
    assert_eq!(resumes(&l), [("conv".to_string(), 3050)]);
}
