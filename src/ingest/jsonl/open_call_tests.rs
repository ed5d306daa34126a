//! A logger's lines that name no call, read as the latest tool call's while its step is open
//! (pino's and structlog's agents log the request, the retry and the answer in their own
//! words, with the run and step only on the tool's lines).

use super::parse;
use crate::event::EventKind;
use crate::ingest::{ParseOptions, Parsed};

fn run(lines: &[&str]) -> Parsed {
    let text = lines.join("\n") + "\n";
    parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap()
}

const TOOL_CALL: &str = r#"{"time":1796542824972,"runId":"r1","step":1,"tool":"issue_refund","args":{"order":"A-1","amount_p":4500},"msg":"tool call"}"#;
const REQUEST: &str =
    r#"{"time":1796542825094,"method":"POST","url":"http://p/v1/refunds","msg":"refund request"}"#;
const RETRY: &str = r#"{"time":1796542826108,"err":"timeout of 1000ms exceeded","code":"ECONNABORTED","msg":"retrying refund request"}"#;
const REQUEST_AGAIN: &str =
    r#"{"time":1796542826308,"method":"POST","url":"http://p/v1/refunds","msg":"refund request"}"#;
const ANSWER: &str =
    r#"{"time":1796542826320,"status":201,"refundId":"re_2","msg":"refund response"}"#;
const TOOL_DONE: &str = r#"{"time":1796542826325,"runId":"r1","step":1,"tool":"issue_refund","status":"ok","msg":"tool done"}"#;

/// (kind, call's step, attempt number) of each event.
fn shape(p: &Parsed) -> Vec<(&'static str, Option<u32>, Option<u32>)> {
    p.events
        .iter()
        .map(|e| match &e.kind {
            EventKind::ToolCall(t) => ("tool_call", Some(t.call.step), None),
            EventKind::Attempt(a) => ("attempt", a.call.as_ref().map(|c| c.step), Some(a.number)),
            EventKind::Failure(f) => ("failure", f.call.as_ref().map(|c| c.step), f.attempt),
            EventKind::Response(r) => ("response", r.call.as_ref().map(|c| c.step), r.attempt),
            EventKind::StepEnd(s) => ("step_end", Some(s.call.step), None),
            _ => ("other", None, None),
        })
        .collect()
}

#[test]
fn a_requests_retry_and_answer_in_the_programs_words_are_the_open_calls() {
    let p = run(&[TOOL_CALL, REQUEST, RETRY, REQUEST_AGAIN, ANSWER, TOOL_DONE]);
    assert_eq!(
        shape(&p),
        [
            ("tool_call", Some(1), None),
            ("attempt", Some(1), Some(1)),
            ("failure", Some(1), Some(1)),
            ("attempt", Some(1), Some(2)),
            ("response", Some(1), Some(2)),
            ("step_end", Some(1), None),
        ]
    );
    let EventKind::Response(r) = &p.events[4].kind else {
        unreachable!()
    };
    assert_eq!(r.effect_id.as_deref(), Some("re_2"));
}

/// Before any tool call, after its step ended, or about something else (a model's call, the
/// program's own failure), such lines are no call's.
#[test]
fn lines_of_no_open_call_or_about_no_request_are_the_programs_own() {
    let model = r#"{"time":1796542825000,"status":200,"msg":"model call finished"}"#;
    let planning = r#"{"time":1796542825001,"err":"no plan","msg":"planning failed"}"#;
    let p = run(&[
        REQUEST,
        TOOL_CALL,
        model,
        planning,
        TOOL_DONE,
        REQUEST_AGAIN,
        ANSWER,
    ]);
    assert_eq!(
        shape(&p),
        [("tool_call", Some(1), None), ("step_end", Some(1), None)]
    );
    assert_eq!(
        (p.stats.events, p.stats.ignored, p.stats.skipped),
        (2, 5, 0)
    );
}

/// structlog's JSON: a retry library's and an HTTP client's messages after the tool call are
/// its (they were an anonymous call beside it, and the duplicate's cause unknown).
#[test]
fn messages_after_a_tool_call_in_fields_are_its() {
    let p = run(&[
        r#"{"run_id": "r1", "step": 1, "tool": "issue_refund", "args": {"order": "A-1", "amount_p": 4500}, "event": "tool call", "timestamp": "2026-12-06T07:41:33.570847Z"}"#,
        r#"{"event": "Retrying __main__.post_refund in 0.3 seconds as it raised ReadTimeout: timed out.", "level": "warning", "timestamp": "2026-12-06T07:41:34.650811Z"}"#,
        r#"{"event": "HTTP Request: POST http://p/v1/refunds \"HTTP/1.1 201 Created\"", "logger": "httpx", "timestamp": "2026-12-06T07:41:34.987123Z"}"#,
    ]);
    let shape = shape(&p);
    assert_eq!(shape[0], ("tool_call", Some(1), None));
    assert_eq!(shape[1].0, "failure");
    assert!(shape[1..].iter().all(|s| s.1 == Some(1)), "{shape:?}");
    assert!(shape[1..].iter().any(|s| s.0 == "attempt"), "{shape:?}");
}

/// The program numbered its request itself: the HTTP client's line about it repeats it.
#[test]
fn an_http_clients_line_repeats_the_programs_own_request() {
    let p = run(&[
        r#"{"run_id": "r1", "step": 1, "tool": "issue_refund", "args": {"order": "A-1", "amount_p": 4500}, "event": "tool call", "timestamp": "2026-12-06T07:41:33.570847Z"}"#,
        r#"{"method": "POST", "url": "http://p/v1/refunds", "event": "refund request", "timestamp": "2026-12-06T07:41:33.608993Z"}"#,
        r#"{"event": "HTTP Request: POST http://p/v1/refunds \"HTTP/1.1 201 Created\"", "logger": "httpx", "timestamp": "2026-12-06T07:41:34.987123Z"}"#,
    ]);
    let attempts = shape(&p).iter().filter(|s| s.0 == "attempt").count();
    assert_eq!(attempts, 1, "{:?}", shape(&p));
}

/// pino's `idempotencyKey` is the request's key: a keyed retry is no unkeyed one.
#[test]
fn a_camel_case_key_is_the_requests_key() {
    let keyed = r#"{"time":1796542825094,"method":"POST","url":"http://p/v1/refunds","idempotencyKey":"k-1","msg":"refund request"}"#;
    let p = run(&[TOOL_CALL, keyed]);
    let EventKind::Attempt(a) = &p.events[1].kind else {
        panic!("{:?}", p.events)
    };
    assert_eq!(a.key.as_deref(), Some("k-1"));
}

/// go-retryablehttp's `retrying request` through slog: the answer it names to the latest
/// attempt, and the request sent again; a `request` field that is no request is nothing.
#[test]
fn a_resent_request_answers_the_last_and_sends_the_next() {
    let performing = r#"{"time":1796542825094,"msg":"performing request","method":"POST","url":"http://p/v1/refunds"}"#;
    let retrying = r#"{"time":1796542825100,"msg":"retrying request","request":"POST http://p/v1/refunds (status: 422)","timeout":"500ms","remaining":2}"#;
    let other = r#"{"time":1796542825200,"msg":"retrying request","request":"the same again"}"#;
    let p = run(&[TOOL_CALL, performing, retrying, other]);
    assert_eq!(
        shape(&p),
        [
            ("tool_call", Some(1), None),
            ("attempt", Some(1), Some(1)),
            ("response", Some(1), Some(1)),
            ("attempt", Some(1), Some(2)),
        ]
    );
    assert_eq!((p.stats.events, p.stats.ignored), (3, 1));
}

/// A path alone with no status is a client sending it to its base URL (axios's `baseURL`
/// and `post("/v1/refunds")`): the call's attempt, its failure and its answer.
#[test]
fn a_path_sent_to_a_base_url_is_the_calls() {
    let sent =
        r#"{"time":1796542825000,"method":"POST","url":"/v1/refunds","msg":"refund request"}"#;
    let failed = r#"{"time":1796542826000,"err":"timeout of 1000ms exceeded","method":"POST","url":"/v1/refunds","msg":"retrying refund request"}"#;
    let answer = r#"{"time":1796542826300,"status":201,"refundId":"re_2","msg":"refund response"}"#;
    let p = run(&[TOOL_CALL, sent, failed, sent, answer]);
    let kinds: Vec<&str> = shape(&p).iter().map(|s| s.0).collect();
    assert_eq!(
        kinds,
        ["tool_call", "attempt", "failure", "attempt", "response"]
    );
}

/// Requests that are no tool's attempt: the model's, a read, a path a service served (its
/// access log); the answer logged after them is theirs. A typed trace's debug lines say
/// again what its events say.
#[test]
fn requests_of_no_tool_and_their_answers_are_not_the_calls() {
    let model = r#"{"time":1796542825000,"method":"POST","url":"https://api.openai.com/v1/chat/completions","msg":"llm request"}"#;
    let model_timeout = r#"{"time":1796542826000,"err":"timeout of 1000ms exceeded","url":"https://api.openai.com/v1/chat/completions","msg":"llm request failed"}"#;
    let lookup = r#"{"time":1796542826100,"method":"GET","url":"http://p/v1/refunds?order=A-1","msg":"lookup"}"#;
    let lookup_answer =
        r#"{"time":1796542826200,"status":200,"refundId":"re_1","msg":"lookup response"}"#;
    let access = r#"{"time":1796542826300,"method":"POST","url":"/v1/refunds","status":201,"msg":"request completed"}"#;
    let p = run(&[
        TOOL_CALL,
        model,
        model_timeout,
        lookup,
        lookup_answer,
        access,
    ]);
    assert_eq!(shape(&p), [("tool_call", Some(1), None)]);
    let typed = [
        r#"{"ts":"2026-11-03T14:02:11.402Z","type":"tool_call","run":"r","step":1,"tool":"issue_refund","args":{"order":"A-1"}}"#,
        r#"{"ts":"2026-11-03T14:02:11.410Z","type":"attempt","run":"r","step":1,"attempt":1,"method":"POST","url":"http://p/v1/refunds","idempotency_key":"k"}"#,
        r#"{"ts":"2026-11-03T14:02:11.411Z","msg":"sending request","method":"POST","url":"http://p/v1/refunds"}"#,
    ];
    let p = run(&typed);
    assert_eq!(shape(&p).len(), 2, "{:?}", shape(&p));
}

/// `log.error({ err }, "refund failed")` inside a tool call's step, the error naming the
/// request it ended (axios's `config`), is the agent's word on that request's failure, though `refund failed` alone is how a service logs a refusal
/// (nothing to settle); without its error, or with no step open, it stays that.
#[test]
fn an_effect_failed_message_with_its_error_is_the_open_calls_failure() {
    const FAILED: &str = r#"{"time":1796542826108,"err":{"type":"AxiosError","message":"socket hang up","code":"ECONNRESET","config":{"method":"post","url":"http://p/v1/refunds"}},"msg":"refund failed"}"#;
    let p = run(&[TOOL_CALL, REQUEST, FAILED]);
    assert_eq!(
        shape(&p),
        [
            ("tool_call", Some(1), None),
            ("attempt", Some(1), Some(1)),
            ("failure", Some(1), Some(1)),
        ]
    );
    let refusal = r#"{"time":1796542826108,"msg":"refund failed"}"#;
    let p = run(&[TOOL_CALL, REQUEST, refusal]);
    assert_eq!(p.events.len(), 2);
    assert_eq!((p.stats.ignored, p.stats.skipped), (1, 0));
    let p = run(&[FAILED]);
    assert_eq!(
        (p.events.len(), p.stats.ignored, p.stats.skipped),
        (0, 1, 0)
    );
}

/// tracing-subscriber's JSON of `info!(%url, "POST")` in the tool's span (its run and step),
/// then reqwest-retry's line: the program's request is the call's attempt 1 (its key the
/// line's `idempotency_key`), the retry its unlogged failure and attempt 2 with the same
/// key, the answer attempt 2's. A read so logged is no attempt, and its retry nothing.
#[test]
fn tracings_json_request_and_reqwest_retrys_line_are_the_open_calls() {
    let span = r#""span":{"run":"7f3a","step":4,"name":"issue_refund"},"spans":[{"run":"7f3a","step":4,"name":"issue_refund"}]"#;
    let line = |t: &str, level: &str, fields: &str, target: &str| {
        format!(
            r#"{{"timestamp":"2026-12-07T15:53:{t}Z","level":"{level}","fields":{{{fields}}},"target":"{target}",{span}}}"#
        )
    };
    let tool = r#"{"timestamp":"2026-12-07T15:53:39.606031Z","level":"INFO","fields":{"message":"tool call","run_id":"7f3a","step":4,"tool":"issue_refund","args":"{\"amount_minor\":4500,\"currency\":\"GBP\",\"order\":\"A-88214\"}"},"target":"agent"}"#;
    let request = |method: &str, key: &str| {
        let key = match key {
            "" => String::new(),
            k => format!(r#","idempotency_key":"{k}""#),
        };
        let fields =
            format!(r#""message":"{method}","url":"http://127.0.0.1:18983/v1/refunds"{key}"#);
        line("39.606247", "INFO", &fields, "agent::tools")
    };
    let retry = line(
        "39.908313",
        "WARN",
        r#""message":"Retry attempt #0. Sleeping 59.826985ms before the next attempt""#,
        "reqwest_retry::middleware",
    );
    let answer = line(
        "39.972286",
        "INFO",
        r#""message":"refund response","status":"201 Created","refund_id":"re_3822beb2e1764b""#,
        "agent::tools",
    );
    let keyed = request("POST", "k-1");
    let p = run(&[tool, &keyed, &retry, &answer]);
    assert_eq!(
        shape(&p),
        [
            ("tool_call", Some(4), None),
            ("attempt", Some(4), Some(1)),
            ("failure", Some(4), Some(1)),
            ("attempt", Some(4), Some(2)),
            ("response", Some(4), None),
        ]
    );
    let keys: Vec<_> = (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Attempt(a) => Some(a.key.as_deref()),
            _ => None,
        })
        .collect();
    assert_eq!(keys, [Some("k-1"), Some("k-1")]);
    let read = request("GET", "");
    let p = run(&[tool, &read, &retry]);
    assert_eq!(shape(&p), [("tool_call", Some(4), None)]);
}

/// stamina's retry through structlog's JSON renderer (its own hook when structlog is
/// installed; fixture `python-structlog-json-stamina`) and through its standard-library
/// hook and python-json-logger 4.2's `JsonFormatter("%(asctime)s %(levelname)s %(name)s
/// %(message)s")` (the record's extras `stamina.*`): the open call's failure, named, its
/// function and wait read; without its details (a formatter that drops the extras), an
/// ambiguous one, sent again all the same.
#[test]
fn staminas_retry_in_a_loggers_fields_is_the_open_calls_failure() {
    use crate::classify::FailureClass;
    use crate::time::Duration;
    let tool_call = r#"{"run_id": "r1", "step": 1, "tool": "issue_refund", "args": {"order": "A-1", "amount_p": 4500}, "event": "tool call", "timestamp": "2026-12-07T15:48:07.707936Z"}"#;
    let structlog = r#"{"callable": "__main__.post_refund", "args": [], "kwargs": {}, "retry_num": 1, "caused_by": "ReadTimeout('timed out')", "wait_for": 0.3, "waited_so_far": 0.0, "event": "stamina.retry_scheduled", "level": "warning", "logger": "stamina", "timestamp": "2026-12-07T15:48:08.793067Z"}"#;
    let json_logger = r#"{"asctime": "2026-12-07 15:58:33,502", "levelname": "WARNING", "name": "stamina", "message": "stamina.retry_scheduled", "stamina.callable": "__main__.post_refund", "stamina.args": [], "stamina.kwargs": {}, "stamina.retry_num": 1, "stamina.caused_by": "ReadTimeout('timed out')", "stamina.wait_for": 0.1, "stamina.waited_so_far": 0.0}"#;
    let bare = r#"{"asctime": "2026-12-07 15:58:34,502", "levelname": "WARNING", "name": "stamina", "message": "stamina.retry_scheduled"}"#;
    let p = run(&[tool_call, structlog, json_logger, bare]);
    let failures: Vec<_> = (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Failure(f) => Some(f),
            _ => None,
        })
        .collect();
    assert_eq!(failures.len(), 3, "{:?}", p.events);
    for (f, wait_ms) in failures[..2].iter().zip([300, 100]) {
        assert_eq!(f.call.as_ref().map(|c| c.step), Some(1));
        assert_eq!((&*f.error, &*f.message), ("ReadTimeout", "timed out"));
        assert_eq!(f.class, FailureClass::Ambiguous);
        assert_eq!(f.raised_in.as_deref(), Some("__main__.post_refund"));
        assert_eq!(f.resent_after, Some(Duration(wait_ms * 1_000_000)));
    }
    assert_eq!(failures[2].class, FailureClass::Ambiguous);
    assert_eq!(failures[2].resent_after, Some(Duration(0)));
}

/// Other messages about stamina (a metric's name, a sentence) and stamina's event in a
/// typed trace (whose logger lines say again what its events say) are no retry.
#[test]
fn other_words_about_stamina_are_no_retry() {
    let mut lines = vec![TOOL_CALL];
    let others = [
        r#"{"time":1796542825000,"msg":"stamina.retry_scheduled_total","value":3}"#,
        r#"{"time":1796542825001,"msg":"stamina.retry_scheduled hook installed"}"#,
        r#"{"time":1796542825002,"event":"stamina retry scheduled","caused_by":"ReadTimeout('x')"}"#,
    ];
    lines.extend(others);
    assert_eq!(shape(&run(&lines)), [("tool_call", Some(1), None)]);
    let typed = [
        r#"{"ts":"2026-12-07T15:48:07Z","type":"tool_call","run":"r1","step":1,"tool":"issue_refund","args":{"order":"A-1"}}"#,
        r#"{"timestamp":"2026-12-07T15:48:08Z","event":"stamina.retry_scheduled","caused_by":"ReadTimeout('timed out')","wait_for":0.3}"#,
    ];
    assert_eq!(shape(&run(&typed)), [("tool_call", Some(1), None)]);
}
