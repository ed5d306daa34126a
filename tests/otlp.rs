//! The OTLP traces that real agent frameworks wrote (fixtures/otlp-*/trace.jsonl, made by
//! fixtures/otlp/generate/): each must yield the one tool call its generator made, under the
//! run and step the tool itself saw (fixtures/otlp/runs/<case>.json), with exactly the two
//! HTTP requests it sent as attempts, and never an LLM chat span among them (none where
//! the run record says its HTTP client was not instrumented).

use idem_audit::classify::FailureClass;
use idem_audit::event::EventKind;
use idem_audit::ingest::otlp::{self, Span, link};
use idem_audit::ingest::{Format, ParseOptions, source};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("otlp-")
        })
        .collect();
    dirs.sort();
    dirs
}

/// What the test itself calls an LLM call, independently of the linker: any convention's
/// chat or LLM marker.
fn is_chat(s: &Span) -> bool {
    let attr = |k: &str| s.attr_str(k).unwrap_or("");
    ["chat", "generate_content"].contains(&attr("gen_ai.operation.name"))
        || attr("openinference.span.kind") == "LLM"
        || attr("langsmith.span.kind") == "llm"
        || attr("ai.operationId").ends_with(".doGenerate")
}

#[test]
fn each_framework_trace_yields_the_generators_call() {
    let dirs = cases();
    assert_eq!(
        dirs.len(),
        58,
        "twenty-four producer setups × two variants, four through the Python SDK's \
         ConsoleSpanExporter and six through the JavaScript SDK's (one with a tool's own \
         event): {dirs:?}"
    );
    for dir in dirs {
        let case = dir.file_name().unwrap().to_string_lossy().into_owned();
        let record: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("../otlp/runs").join(format!("{case}.json")))
                .unwrap(),
        )
        .unwrap();
        let bytes = std::fs::read(dir.join("trace.jsonl")).unwrap();
        assert_eq!(source::detect(&bytes, &[]), Some(Format::Otlp), "{case}");
        let parsed = otlp::parse(&mut &bytes[..], 0, &ParseOptions::default()).unwrap();
        assert_eq!(
            parsed.stats.skipped, 0,
            "{case}: {:?}",
            parsed.stats.problems
        );
        let spans = parsed.spans;
        let linked = link::link(&spans);

        // The generator's tool, called once (smolagents also traces its `final_answer` tool).
        let calls: Vec<_> = linked
            .events
            .iter()
            .filter_map(|(_, e)| match &e.kind {
                EventKind::ToolCall(t) if t.tool == record["tool"].as_str().unwrap() => Some(t),
                _ => None,
            })
            .collect();
        assert_eq!(calls.len(), 1, "{case}");
        let call = calls[0];
        assert_eq!(
            call.call.run,
            record["run"].as_str().unwrap(),
            "{case}: run"
        );
        assert_eq!(
            call.call.step as u64,
            record["step"].as_u64().unwrap(),
            "{case}: step"
        );
        assert!(call.tool.ends_with("issue_refund"), "{case}: {}", call.tool);
        if record["args_traced"] == false {
            // AutoGen's own tracing records none: the call's order is unknown.
            assert!(call.args.is_null(), "{case}: {}", call.args);
        } else {
            assert_eq!(call.args["order"], "A-88214", "{case}");
            assert_eq!(call.args["amount_p"].as_i64(), Some(4500), "{case}");
        }

        let attempts: Vec<(usize, &idem_audit::event::Attempt)> = linked
            .events
            .iter()
            .filter_map(|(i, e)| match &e.kind {
                EventKind::Attempt(a) => Some((*i, &**a)),
                _ => None,
            })
            .collect();
        assert!(
            spans.iter().any(is_chat),
            "{case}: the trace has LLM chat spans"
        );
        let fails = case.ends_with("-tool-fails");
        let ok = linked.events.iter().find_map(|(_, e)| match &e.kind {
            EventKind::StepEnd(s) => Some(s.ok),
            _ => None,
        });
        assert_eq!(ok, Some(!fails), "{case}: the tool's own outcome");
        assert_eq!(
            record["refunds"].as_array().unwrap().len(),
            2,
            "{case}: the service refunded twice"
        );
        if record["http_spans"] == false {
            assert!(attempts.is_empty(), "{case}: no request was traced");
            continue;
        }
        assert_eq!(attempts.len(), 2, "{case}: the two POSTs the tool sent");
        for (n, (span, a)) in attempts.iter().enumerate() {
            assert!(
                !is_chat(&spans[*span]),
                "{case}: a chat span taken for an attempt"
            );
            assert_eq!(a.number, n as u32 + 1, "{case}");
            assert_eq!(a.method.as_deref(), Some("POST"), "{case}");
            assert!(a.url.as_deref().unwrap().ends_with("/v1/refunds"), "{case}");
            assert_eq!(a.call.as_ref(), Some(&call.call), "{case}");
        }
        let (k1, k2) = (attempts[0].1.key.as_deref(), attempts[1].1.key.as_deref());
        assert!(
            k1.is_some() && k2.is_some() && k1 != k2,
            "{case}: a fresh key per attempt"
        );

        let outcomes: Vec<FailureClass> = linked
            .events
            .iter()
            .filter_map(|(_, e)| match &e.kind {
                EventKind::Failure(f) => Some(f.class),
                EventKind::Response(r) => Some(r.class),
                _ => None,
            })
            .collect();
        let expected = if fails {
            [FailureClass::Ambiguous, FailureClass::Ambiguous]
        } else {
            [FailureClass::Ambiguous, FailureClass::Success]
        };
        assert_eq!(
            outcomes, expected,
            "{case}: read timeout, then 201 or another timeout"
        );
    }
}

/// Every run (one process each, several frameworks and instrumentations) in one call: spans are
/// linked only within their own resource and trace, so each run still gives exactly its own
/// duplicate, with the refunds its service made.
#[test]
fn all_framework_traces_in_one_call_keep_their_runs_apart() {
    let dirs = cases();
    let out = assert_cmd::Command::cargo_bin("idem-audit")
        .unwrap()
        .arg("scan")
        .args(&dirs)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut got: Vec<(String, u64, Vec<Value>, Value)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "duplicate-effect")
        .map(|f| {
            assert_eq!(f["excess_minor"], 4500);
            let run = f["run"].as_str().unwrap().to_string();
            (
                run,
                f["step"].as_u64().unwrap(),
                f["effects"].as_array().unwrap().clone(),
                f["cause"].clone(),
            )
        })
        .collect();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    let mut want: Vec<(String, u64, Vec<Value>, Value)> = dirs
        .iter()
        .map(|d| {
            let case = d.file_name().unwrap().to_string_lossy().into_owned();
            let path = d.join("../otlp/runs").join(format!("{case}.json"));
            let r: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            let run = r["run"].as_str().unwrap().to_string();
            // Without request spans, which retried is not in the trace.
            let cause = if r["http_spans"] == false {
                "unknown"
            } else {
                "client-retry"
            };
            (
                run,
                r["step"].as_u64().unwrap(),
                r["refunds"].as_array().unwrap().clone(),
                Value::from(cause),
            )
        })
        .collect();
    want.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(got, want);
    for input in report["inputs"].as_array().unwrap() {
        let n = |k: &str| input[k].as_u64().unwrap();
        assert_eq!(
            n("lines"),
            n("events") + n("ignored") + n("skipped"),
            "{input}"
        );
    }
}

/// The agent's tool call and its two requests to the payments service: a read timeout,
/// then 201.
const AGENT: &str = r#"{"resourceSpans":[{"resource":{"attributes":[{"key":"service.instance.id","value":{"stringValue":"agent"}}]},"scopeSpans":[{"spans":[{"traceId":"t1","spanId":"tool","name":"execute_tool issue_refund","startTimeUnixNano":"1796227201000000000","endTimeUnixNano":"1796227204000000000","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.conversation.id","value":{"stringValue":"run1"}},{"key":"gen_ai.tool.call.arguments","value":{"stringValue":"{\"order\":\"A-1\",\"amount_p\":4500}"}}]},{"traceId":"t1","spanId":"h1","parentSpanId":"tool","kind":3,"startTimeUnixNano":"1796227201100000000","endTimeUnixNano":"1796227202100000000","attributes":[{"key":"http.request.method","value":{"stringValue":"POST"}},{"key":"url.full","value":{"stringValue":"https://pay/v1/refunds"}}],"status":{"code":2},"events":[{"name":"exception","attributes":[{"key":"exception.type","value":{"stringValue":"requests.exceptions.ReadTimeout"}}]}]},{"traceId":"t1","spanId":"h2","parentSpanId":"tool","kind":3,"startTimeUnixNano":"1796227203000000000","endTimeUnixNano":"1796227203100000000","attributes":[{"key":"http.request.method","value":{"stringValue":"POST"}},{"key":"url.full","value":{"stringValue":"https://pay/v1/refunds"}},{"key":"http.response.status_code","value":{"intValue":"201"}}]}]}]}]}"#;

/// What the payments service traced of the first request: the SERVER span that took it,
/// and its own keyed request to its provider, answered 200.
const PAYMENTS: &str = r#"{"resourceSpans":[{"resource":{"attributes":[{"key":"service.instance.id","value":{"stringValue":"payments"}}]},"scopeSpans":[{"spans":[{"traceId":"t1","spanId":"srv","parentSpanId":"h1","kind":2,"startTimeUnixNano":"1796227201110000000","endTimeUnixNano":"1796227201900000000","attributes":[{"key":"http.request.method","value":{"stringValue":"POST"}}]},{"traceId":"t1","spanId":"psp","parentSpanId":"srv","kind":3,"startTimeUnixNano":"1796227201120000000","endTimeUnixNano":"1796227201800000000","attributes":[{"key":"http.request.method","value":{"stringValue":"POST"}},{"key":"url.full","value":{"stringValue":"https://psp/v1/refunds"}},{"key":"http.response.status_code","value":{"intValue":"200"}},{"key":"http.request.header.idempotency-key","value":{"arrayValue":{"values":[{"stringValue":"psp-k1"}]}}}]}]}]}]}"#;

const SETTLEMENT: &str = "id,amount,currency,created_at,order_id\nre_1,45.00,GBP,2026-12-02T16:00:01Z,A-1\nre_2,45.00,GBP,2026-12-02T16:00:03Z,A-1\n";

/// Each finding of `idem-audit scan` over `files` (name, contents): its rule, cause, run
/// and step.
fn findings_of(files: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = files
        .iter()
        .map(|(name, text)| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
    let out = assert_cmd::Command::cargo_bin("idem-audit")
        .unwrap()
        .arg("scan")
        .args(&paths)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let mut got: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{} {} {} {}", f["rule"], f["cause"], f["run"], f["step"]))
        .collect();
    got.sort();
    got
}

/// A Collector that gathers the payments service's spans beside the agent's puts them in
/// the agent's trace: the service's own request to its provider (keyed, 200) must not stand
/// in for the agent's timed-out attempt. The findings are those of the agent alone.
#[test]
fn the_services_own_spans_in_the_trace_change_no_finding() {
    let alone = findings_of(&[("agent.jsonl", AGENT), ("settlement.csv", SETTLEMENT)]);
    let rules: Vec<&str> = alone.iter().map(|f| f.split(' ').next().unwrap()).collect();
    for rule in ["duplicate-effect", "unkeyed-retry", "effect-after-timeout"] {
        assert!(
            rules.contains(&format!("\"{rule}\"").as_str()),
            "{alone:#?}"
        );
    }
    assert!(
        alone
            .iter()
            .any(|f| f.contains("duplicate-effect") && f.contains("client-retry")),
        "{alone:#?}"
    );
    let with_service = findings_of(&[
        ("agent.jsonl", AGENT),
        ("payments.jsonl", PAYMENTS),
        ("settlement.csv", SETTLEMENT),
    ]);
    assert_eq!(with_service, alone);
}

/// `idem-audit scan` over `files` (name, contents) with `args`: the JSON report, what was
/// written on standard error, the exit status, and the path each file was written at.
fn scan(files: &[(&str, &str)], args: &[&str]) -> (Value, String, Option<i32>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<String> = files
        .iter()
        .map(|(name, text)| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path.to_string_lossy().into_owned()
        })
        .collect();
    let out = assert_cmd::Command::cargo_bin("idem-audit")
        .unwrap()
        .arg("scan")
        .args(&paths)
        .args(["--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    (report, stderr, out.status.code(), paths)
}

/// A tool span exported without its end is reported where it is, `path:line: skipped: why`,
/// and counted skipped (so `--strict` fails), while its call and the requests below it by
/// parent id are still audited. With its end, nothing is skipped.
#[test]
fn a_tool_span_without_its_end_is_reported_skipped_and_its_requests_kept() {
    let end = r#","endTimeUnixNano":"1796227204000000000""#;
    assert_eq!(AGENT.matches(end).count(), 1, "the tool's end, and only it");
    let no_end = format!("\n{}", AGENT.replacen(end, "", 1));
    let files = |agent| [("agent.jsonl", agent), ("settlement.csv", SETTLEMENT)];
    let (report, stderr, code, paths) = scan(&files(&no_end), &["--strict"]);
    let input = &report["inputs"][0];
    assert_eq!(
        (
            &input["lines"],
            &input["events"],
            &input["ignored"],
            &input["skipped"]
        ),
        (&json!(4), &json!(2), &json!(1), &json!(1)),
        "{input}"
    );
    let reason = "tool span `issue_refund` has no endTimeUnixNano, so it is taken as an instant";
    assert_eq!(input["problems"][0]["line"], 2, "{input}");
    assert!(
        input["problems"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with(reason),
        "{input}"
    );
    let shown = format!("{}:2: skipped: {reason}", paths[0]);
    assert!(stderr.contains(&shown), "{stderr}");
    assert_eq!(code, Some(2), "--strict: a span was skipped");
    let attempts = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["rule"] == "duplicate-effect" && f["cause"] == "client-retry");
    assert!(
        attempts,
        "the requests below it are still its attempts: {report:#}"
    );

    let whole = format!("\n{AGENT}");
    let (report, stderr, _, _) = scan(&files(&whole), &["--strict"]);
    let input = &report["inputs"][0];
    assert_eq!(
        (&input["skipped"], &input["events"]),
        (&json!(0), &json!(3)),
        "{input}"
    );
    assert!(!stderr.contains("skipped"), "{stderr}");
}

/// One export batch of the agent's process holding `span`, on a line of its own.
fn agent_line(span: Value) -> String {
    json!({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.instance.id", "value": {"stringValue": "agent"}}]},
        "scopeSpans": [{"spans": [span]}]
    }]})
    .to_string()
}

/// A span of `trace` from `start` to `end` seconds after 2026-12-02T16:00:00Z.
fn timed(trace: &str, id: &str, parent: Option<&str>, start: u64, end: u64, attrs: Value) -> Value {
    let at = |s: u64| ((1_796_227_200 + s) * 1_000_000_000).to_string();
    let mut span = json!({"traceId": trace, "spanId": id, "name": id, "kind": 1,
        "startTimeUnixNano": at(start), "endTimeUnixNano": at(end), "attributes": attrs});
    if let Some(p) = parent {
        span["parentSpanId"] = json!(p);
    }
    span
}

/// Two tool calls of one process from 1 s to 10 s and from `lookup` s on (the second below
/// the first in the trace when `nested`), and a request left as the root of its own trace
/// from 6 s to 7 s, in the time of both.
fn two_tools_and_a_request(lookup: (u64, u64), nested: bool) -> String {
    let tool = |name: &str| {
        json!([{"key": "openinference.span.kind", "value": {"stringValue": "TOOL"}},
               {"key": "tool.name", "value": {"stringValue": name}}])
    };
    let (parent, trace) = if nested {
        (Some("a"), "t1")
    } else {
        (None, "t2")
    };
    let post = json!([{"key": "http.method", "value": {"stringValue": "POST"}},
                      {"key": "http.status_code", "value": {"intValue": "201"}}]);
    [
        timed("t1", "a", None, 1, 10, tool("issue_refund")),
        timed(trace, "b", parent, lookup.0, lookup.1, tool("lookup")),
        timed("t3", "h", None, 6, 7, post),
    ]
    .map(agent_line)
    .join("\n")
}

/// A request two tools running side by side could have made is still an attempt (counted
/// in `events`), of the later to start, and is reported as a warning naming the file and
/// line of the request and of both tools; a warning alone fails no `--strict`. A tool nested
/// in the other in the trace holds it with no warning.
#[test]
fn a_request_two_tools_could_have_made_is_kept_and_reported_as_a_warning() {
    let side_by_side = two_tools_and_a_request((5, 12), false);
    let (report, stderr, code, paths) = scan(&[("trace.jsonl", &side_by_side)], &["--strict"]);
    let input = &report["inputs"][0];
    assert_eq!(
        (
            &input["lines"],
            &input["events"],
            &input["ignored"],
            &input["skipped"]
        ),
        (&json!(3), &json!(3), &json!(0), &json!(0)),
        "{input}"
    );
    let p = &paths[0];
    let why = format!(
        "HTTP span lies in the time of two tool calls of one process, neither below the other \
         in the trace: counted as an attempt of `lookup` at {p}:2 (the later to start), not of \
         `issue_refund` at {p}:1; propagate trace context"
    );
    assert_eq!(input["warned"], 1, "{input}");
    assert_eq!(input["warnings"][0]["line"], 3, "{input}");
    let reason = input["warnings"][0]["reason"].as_str().unwrap();
    assert!(reason.starts_with(&why), "{reason}");
    assert!(
        stderr.contains(&format!("{p}:3: warning: {why}")),
        "{stderr}"
    );
    assert_eq!(code, Some(0), "{stderr}");

    let nested = two_tools_and_a_request((5, 9), true);
    let (report, stderr, code, _) = scan(&[("trace.jsonl", &nested)], &["--strict"]);
    let input = &report["inputs"][0];
    assert_eq!(input["events"], 3, "{input}");
    assert!(
        input.get("warned").is_none() && input.get("warnings").is_none(),
        "{input}"
    );
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(code, Some(0), "{stderr}");
}

/// The agent's trace with its first request answered `status` instead of timing out, and
/// the one refund its second request made; its HTTP spans record a request header.
fn first_answered(status: &str) -> [(&'static str, String); 2] {
    let timed_out = r#"https://pay/v1/refunds"}}],"status":{"code":2},"events":[{"name":"exception","attributes":[{"key":"exception.type","value":{"stringValue":"requests.exceptions.ReadTimeout"}}]}]}"#;
    let answered = format!(
        r#"https://pay/v1/refunds"}}}},{{"key":"http.response.status_code","value":{{"intValue":"{status}"}}}}]}}"#
    );
    assert!(AGENT.contains(timed_out));
    let settlement =
        "id,amount,currency,created_at,order_id\nre_2,45.00,GBP,2026-12-02T16:00:03Z,A-1\n";
    // The instrumentation captured the request's headers (the content type, no key): a
    // missing key is known to be missing.
    let url = r#""key":"url.full","value":{"stringValue":"https://pay/v1/refunds"}}"#;
    let captured = format!(
        r#"{url},{{"key":"http.request.header.content-type","value":{{"arrayValue":{{"values":[{{"stringValue":"application/json"}}]}}}}}}"#
    );
    let agent = AGENT
        .replacen(timed_out, &answered, 1)
        .replace(url, &captured);
    assert_eq!(agent.matches("http.request.header.content-type").count(), 2);
    [
        ("agent.jsonl", agent),
        ("settlement.csv", settlement.to_string()),
    ]
}

/// A 307 redirect answers without performing the request: the client's resend is no
/// unkeyed retry. A 503 may have been performed, and resending it unkeyed is.
#[test]
fn a_resend_after_a_redirect_is_no_unkeyed_retry() {
    let findings = |status: &str| {
        let files = first_answered(status);
        let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
        findings_of(&files)
    };
    let redirected = findings("307");
    assert!(
        !redirected.iter().any(|f| f.contains("unkeyed-retry")),
        "{redirected:#?}"
    );
    let unavailable = findings("503");
    assert!(
        unavailable.iter().any(|f| f.contains("unkeyed-retry")),
        "{unavailable:#?}"
    );
}

/// One export batch with one span, as the Collector's file exporter writes it.
fn batch(span_id: &str) -> String {
    format!(
        r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"t1","spanId":"{span_id}","startTimeUnixNano":"1796227201000000000","endTimeUnixNano":"1796227202000000000"}}]}}]}}]}}"#
    )
}

/// The Collector's file exporter with `compression: zstd` and its default framing: each
/// batch a 4-byte big-endian length, then one zstd frame of that length.
fn length_framed(batches: &[String]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for b in batches {
        let frame = zstd::encode_all(b.as_bytes(), 3).unwrap();
        bytes.extend((frame.len() as u32).to_be_bytes());
        bytes.extend(frame);
    }
    bytes
}

/// Reads `bytes` as a file found in a folder (so detection decides), as a scan does.
fn read_as_found(bytes: &[u8], forced: Option<Format>) -> source::Outcome {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("traces.bin");
    std::fs::write(&path, bytes).unwrap();
    let input = source::Input {
        display: "traces.bin".into(),
        origin: source::Origin::File(path),
        explicit: false,
    };
    let mut outcomes = source::read_all(&[input], forced, &ParseOptions::default());
    outcomes.pop().unwrap()
}

#[test]
fn length_framed_zstd_batches_read_as_one_line_each() {
    let bytes = length_framed(&[batch("s1"), batch("s2")]);
    for forced in [None, Some(Format::Otlp)] {
        let source::Outcome::Parsed(format, parsed) = read_as_found(&bytes, forced) else {
            panic!("not read, forced {forced:?}");
        };
        assert_eq!(format, Format::Otlp);
        assert_eq!(parsed.stats.skipped, 0, "{:?}", parsed.stats.problems);
        let spans: Vec<(&str, u32)> = parsed
            .spans
            .iter()
            .map(|s| (s.span_id.as_str(), s.loc.line))
            .collect();
        assert_eq!(spans, [("s1", 1), ("s2", 2)]);
    }
}

/// An empty frame between two is an empty batch, and a batch that ends its own line gets no
/// blank line after it: the lines are the batches.
#[test]
fn an_empty_frame_and_a_batch_ending_its_line_add_no_lines() {
    let mut bytes = length_framed(&[batch("s1") + "\n"]);
    bytes.extend(0u32.to_be_bytes());
    bytes.extend(length_framed(&[batch("s2")]));
    let source::Outcome::Parsed(_, parsed) = read_as_found(&bytes, None) else {
        panic!("not read");
    };
    assert_eq!(parsed.stats.skipped, 0, "{:?}", parsed.stats.problems);
    let lines: Vec<u32> = parsed.spans.iter().map(|s| s.loc.line).collect();
    assert_eq!(lines, [1, 3]);
    assert_eq!(parsed.stats.lines, 3);
}

/// Four bytes followed by anything but zstd's magic are not a frame's length: such a file
/// is read as what it is (here no log at all), not decoded.
#[test]
fn four_bytes_without_the_zstd_magic_after_them_are_no_framing() {
    let mut bytes = length_framed(&[batch("s1")]);
    bytes[4] ^= 0xff;
    assert!(matches!(
        read_as_found(&bytes, None),
        source::Outcome::NotALog(_)
    ));
    let text = format!("{}\n", batch("s1"));
    let source::Outcome::Parsed(_, parsed) = read_as_found(text.as_bytes(), None) else {
        panic!("a plain batch line is read");
    };
    assert_eq!(parsed.spans.len(), 1);
}

/// A file whose last frame was cut off (the Collector stopped mid-write) is named and
/// exits 2, like a cut gzip stream; a whole one beside it is still audited.
#[test]
fn a_cut_off_length_framed_zstd_file_is_named_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let whole = length_framed(&[batch("s1"), batch("s2")]);
    let good = dir.path().join("whole.zst");
    std::fs::write(&good, &whole).unwrap();
    for (name, cut) in [("cut-frame.zst", 5), ("cut-length.zst", 2)] {
        let bad = dir.path().join(name);
        std::fs::write(&bad, &whole[..whole.len() - cut]).unwrap();
        let out = assert_cmd::Command::cargo_bin("idem-audit")
            .unwrap()
            .arg("scan")
            .args([&bad, &good])
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(name) && err.contains("cut short"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let whole = report["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["path"].as_str().is_some_and(|p| p.ends_with("whole.zst")));
        assert_eq!(
            whole.unwrap()["lines"],
            2,
            "the whole file is read: {report}"
        );
    }
}
