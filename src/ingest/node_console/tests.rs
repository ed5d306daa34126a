use super::*;
use crate::event::EventKind;

fn parsed(text: &str) -> Parsed {
    parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap()
}

/// LangChain.js agent logging with `console.log(stamp, words, object)` (got's retry).
const GOT_CONSOLE: &str = "2026-12-06T07:41:20.706Z agent run started { runId: 'b1e8' }
2026-12-06T07:41:20.711Z tool call {
  runId: 'b1e8',
  step: 1,
  tool: 'issue_refund',
  args: { order: 'A-1', amount_p: 4500 }
}
2026-12-06T07:41:20.799Z refund request {
  method: 'POST',
  url: 'http://127.0.0.1:8401/v1/refunds',
  idempotencyKey: undefined
}
2026-12-06T07:41:22.007Z retrying refund request {
  retryCount: 1,
  err: \"Timeout awaiting 'request' for 1000ms\",
  code: 'ETIMEDOUT'
}
2026-12-06T07:41:22.008Z refund request { method: 'POST', url: 'http://127.0.0.1:8401/v1/refunds' }
2026-12-06T07:41:22.020Z refund response { status: 201, refundId: 're_2', replayed: false }
2026-12-06T07:41:22.026Z tool done { runId: 'b1e8', step: 1, tool: 'issue_refund', status: 'ok' }
The refund has been issued.
";

#[test]
fn each_record_is_read_as_the_json_line_it_stands_for() {
    let p = parsed(GOT_CONSOLE);
    let kinds: Vec<(u32, &str)> = (p.events.iter())
        .map(|e| (e.loc.line, e.kind.type_name()))
        .collect();
    assert_eq!(
        kinds,
        [
            (2, "tool_call"),
            (8, "attempt"),
            (13, "failure"),
            (18, "attempt"),
            (19, "response"),
            (20, "step_end")
        ]
    );
    let s = &p.stats;
    assert_eq!((s.lines, s.events, s.skipped), (21, 6, 1));
    assert_eq!(s.events + s.ignored + s.skipped, s.lines);
    assert_eq!(s.problems[0].line, 21);
    match &p.events[0].kind {
        EventKind::ToolCall(t) => {
            assert_eq!(t.call.run.as_str(), "b1e8");
            assert_eq!(t.args_raw.as_str(), r#"{"amount_p":4500,"order":"A-1"}"#);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_errors_stack_is_its_records_and_its_members_are_read() {
    let json = as_json(
        "2026-12-06T07:41:22.007Z",
        "refund failed RequestError: Timeout awaiting 'request' for 1000ms\n    at Request._onTimeout (file:///a.mjs:1:2) {\n  code: 'ETIMEDOUT',\n  timings: [Object]\n}",
    );
    assert_eq!(
        json,
        serde_json::json!({"time": "2026-12-06T07:41:22.007Z",
            "msg": "refund failed",
            "err": "RequestError: Timeout awaiting 'request' for 1000ms",
            "name": "RequestError",
            "code": "ETIMEDOUT", "timings": null})
    );
    // A `debug` namespace stays the logger's name.
    let named = as_json(
        "t",
        "app:http refund failed AxiosError: x\n    at a (b.js:1:1) {\n  code: 'E'\n}",
    );
    assert_eq!(named["name"], "app:http");
}

/// axios 1.1x's error as `console.warn(stamp, err)` prints it: the cause's `Caused by:` at
/// the margin inside the stack, then the error's own members, its `config` naming the
/// request. The record is a failure of that request, not lines without a stamp.
const AXIOS_ERROR_ALONE: &str = "2026-12-06T10:00:00.000Z tool call { runId: 'r1', step: 1, tool: 'issue_refund', args: { order: 'A-1' } }
2026-12-06T10:00:00.010Z refund request { method: 'POST', url: 'http://p/v1/refunds' }
2026-12-06T10:00:01.020Z AxiosError: socket hang up
    at AxiosError.from (file:///app/node_modules/axios/lib/core/AxiosError.js:163:24)
Caused by: Error: socket hang up
    at Socket.socketOnEnd (node:_http_client:528:25) {
  isAxiosError: true,
  code: 'ECONNRESET',
  config: [Object: null prototype] {
    headers: [Object [AxiosHeaders]],
    method: 'post',
    url: 'http://p/v1/refunds'
  }
}
";

#[test]
fn an_axios_error_alone_with_its_cause_is_a_failure_of_its_request() {
    let p = parsed(AXIOS_ERROR_ALONE);
    let kinds: Vec<(u32, &str)> = (p.events.iter())
        .map(|e| (e.loc.line, e.kind.type_name()))
        .collect();
    assert_eq!(kinds, [(1, "tool_call"), (2, "attempt"), (3, "failure")]);
    assert_eq!(p.stats.skipped, 0, "{:?}", p.stats.problems);
    // Without its members the error says no request: not a failure of one.
    let bare = AXIOS_ERROR_ALONE
        .split(" {\n  isAxiosError")
        .next()
        .unwrap();
    let p = parsed(&format!("{bare}\n"));
    assert_eq!(p.events.len(), 2, "{:?}", p.events);
}

/// `console.error(err)` prints no stamp: the error is the record of the next stamped line's
/// time (or the latest one's at the end), its lines read with it, not skipped.
#[test]
fn an_error_printed_without_a_stamp_is_placed_at_the_next_record() {
    let unstamped =
        AXIOS_ERROR_ALONE.replace("2026-12-06T10:00:01.020Z AxiosError", "<ref *1> AxiosError");
    let log =
        format!("{unstamped}2026-12-06T10:00:01.500Z tool failed {{ runId: 'r1', step: 1 }}\n");
    let p = parsed(&log);
    let failure = (p.events.iter()).find(|e| e.kind.type_name() == "failure");
    let at = failure.map(|e| e.at.to_string());
    assert_eq!(at.as_deref(), Some("2026-12-06T10:00:01.500Z"));
    assert_eq!(p.stats.skipped, 0, "{:?}", p.stats.problems);
    let p = parsed(&unstamped);
    let failure = (p.events.iter()).find(|e| e.kind.type_name() == "failure");
    assert_eq!(
        failure.map(|e| e.at.to_string()).as_deref(),
        Some("2026-12-06T10:00:00.010Z")
    );
    // A blank line before the next stamp changes nothing; a next stamp hours later (a
    // process that printed its error, stopped, and started again) is not its time.
    let blank = log.replace("\n2026-12-06T10:00:01.500Z", "\n\n2026-12-06T10:00:01.500Z");
    let p = parsed(&blank);
    let failure = (p.events.iter()).find(|e| e.kind.type_name() == "failure");
    assert_eq!(
        failure.map(|e| e.at.to_string()).as_deref(),
        Some("2026-12-06T10:00:01.500Z")
    );
    let restarted = log.replace(
        "2026-12-06T10:00:01.500Z tool failed",
        "2026-12-06T13:00:01.500Z tool failed",
    );
    let p = parsed(&restarted);
    let failure = (p.events.iter()).find(|e| e.kind.type_name() == "failure");
    assert_eq!(
        failure.map(|e| e.at.to_string()).as_deref(),
        Some("2026-12-06T10:00:00.010Z")
    );
    // npm's banner before the output is no record, nor anything wrong.
    let banner = parsed("> agent@1.0.0 start\n> node agent.mjs\n");
    assert_eq!((banner.stats.ignored, banner.stats.skipped), (2, 0));
    // morgan's access line, its stamp in brackets: no record, nor anything wrong.
    let access = parsed(concat!(
        "2026-12-07T07:33:10.401Z payments listening on 5002\n",
        "::ffff:127.0.0.1 - - [07/Dec/2026:07:33:10 +0000] \"POST /v1/refunds HTTP/1.1\" 201 127 \"-\" \"python-httpx/0.29.0\"\n",
        "undefined - - [07/Dec/2026:07:33:11 +0000] \"POST /v1/refunds HTTP/1.1\" 201 127 \"-\" \"python-requests/2.34.2\"\n",
    ));
    assert_eq!((access.stats.ignored, access.stats.skipped), (3, 0));
    // Before any stamp, nothing places it: skipped, with why.
    let first = parsed("<ref *1> AxiosError: timeout of 1000ms exceeded\n");
    assert_eq!((first.stats.skipped, first.events.len()), (1, 0));
}

#[test]
fn a_debug_namespace_is_the_loggers_name_and_json_words_stay_words() {
    let json = as_json(
        "2026-12-06T07:43:20.120Z",
        "openai-agents:core Invoking tool issue_refund with input {\"order\":\"A-1\"}",
    );
    assert_eq!(json["name"], "openai-agents:core");
    assert_eq!(
        json["msg"],
        "Invoking tool issue_refund with input {\"order\":\"A-1\"}"
    );
    assert_eq!(as_json("t", "refund: created")["msg"], "refund: created");
    assert_eq!(as_json("t", "12:30 lunch")["msg"], "12:30 lunch");
}

#[test]
fn indented_lines_under_an_unstamped_line_are_skipped_with_it() {
    let p = parsed(
        "2026-12-06T07:41:20.706Z agent run started { runId: 'b1e8' }\n[chain/start] Entering Chain run with input: {\n  \"input\": \"refund\"\n}\n",
    );
    let lines: Vec<u32> = p.stats.problems.iter().map(|x| x.line).collect();
    assert_eq!(lines, [2, 3, 4]);
    assert!(p.stats.problems[1].reason.contains("below line 2"));
}

#[test]
fn a_console_log_is_told_from_the_logs_it_resembles() {
    assert!(looks_like(GOT_CONSOLE.as_bytes()));
    assert!(looks_like(
        b"2026-12-06T07:41:20.706Z server listening\n2026-12-06T07:41:20.711Z tool call {\n  runId: 'b1e8',\n}\n"
    ));
    for other in [
        // SPEC's text log: JSON arguments, two blanks between fields.
        &b"2026-11-03T14:02:11.402Z  agent run r1  step 4  tool=issue_refund  args={\"order\":\"A-1\"}\n"[..],
        b"2026-12-06T07:41:20.706Z INFO refund created {\"refund_id\":\"re_1\"}\n",
        // pino-pretty: its members four blanks in, quoted.
        b"[2026-12-06 07:42:10.902 +0000] INFO (payments/15027): refund created\n    refundId: \"re_1\"\n",
        b"2026-12-06T07:41:20.706Z tool call {\n\"runId\": 1}\n",
        // rsyslog's file format: a program logging JSON behind the host and tag.
        b"2026-12-06T08:06:59.000000+00:00 web-1 caddy[612]: {\"level\":\"info\",\"msg\":\"x\"}\n\
          2026-12-06T08:07:00.000000+00:00 web-1 caddy[612]: {\"level\":\"info\",\"msg\":\"y\"}\n",
        b"",
    ] {
        assert!(!looks_like(other), "{}", String::from_utf8_lossy(other));
    }
}

/// An error logged as itself (`console.error(stamp, 'refund attempt failed', err)`): its
/// first line is the record's `err`, its stack no part of the words, `debug`'s `%o` stack
/// joined onto the line cut off; JSON after plain words is the record's members.
#[test]
fn an_error_logged_as_itself_is_the_records_err() {
    let json = as_json(
        "t",
        "refund attempt failed DOMException [TimeoutError]: The operation was aborted due to timeout\n    at node:internal/deps/undici/undici:14976:13",
    );
    assert_eq!(json["msg"], "refund attempt failed");
    assert_eq!(
        json["err"],
        "DOMException [TimeoutError]: The operation was aborted due to timeout"
    );
    let joined = as_json(
        "t",
        "retrying refund request RequestError: Timeout awaiting 'request' for 1000ms at ClientRequest.<anonymous> (file:///x/index.js:868:61) at Object.onceWrapper (node:events:632:28)",
    );
    assert_eq!(
        joined["err"],
        "RequestError: Timeout awaiting 'request' for 1000ms"
    );
    let words = as_json("t", "refund for order A-1 at noon");
    assert_eq!(words["msg"], "refund for order A-1 at noon");
    assert!(words.get("err").is_none());
    let stringified = as_json("t", r#"tool call {"runId":"r1","step":1}"#);
    assert_eq!(
        (stringified["msg"].as_str(), stringified["runId"].as_str()),
        (Some("tool call"), Some("r1"))
    );
}

#[test]
fn a_console_log_may_start_with_words_or_an_unstamped_object_but_not_with_an_empty_one() {
    let records = "2026-12-06T10:35:21.667Z agent run started { runId: '4c16' }\n2026-12-06T10:35:21.673Z tool call {\n  runId: '4c16',\n  step: 1\n}\n";
    for preamble in [
        "agent starting, node v20.20.2\n",
        "{ config: { timeout: 1000 } }\n",
    ] {
        let head = format!("{preamble}{records}");
        assert!(looks_like(head.as_bytes()), "{head}");
        assert_eq!(
            crate::ingest::source::detect(head.as_bytes(), &[]),
            Some(crate::ingest::Format::NodeConsole)
        );
    }
    let slf4j = b"2026-12-06T02:37:04.210Z INFO refund context {}\n2026-12-06T02:37:05.210Z INFO issue_refund attempt 1: http://h/v1/refunds POST\n";
    assert!(!looks_like(slf4j));
    // Objects on their line: two or more decide, one does not (another log's message may
    // end with one); a level in lower case is a text log's.
    let one = "2026-12-06T10:34:26.684Z tool call {\"runId\":\"cee5\",\"step\":1}\n";
    let two = format!("{one}2026-12-06T10:34:26.942Z refund request {{\"method\":\"POST\"}}\n");
    assert!(!looks_like(one.as_bytes()) && looks_like(two.as_bytes()));
    assert!(!looks_like(
        two.replace("Z tool call", "Z info: tool call")
            .replace("Z refund", "Z info: refund")
            .as_bytes()
    ));
}
