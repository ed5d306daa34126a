use super::{looks_like_printf, printf_object, simple_object};
use serde_json::Value;

fn parsed(object: &str) -> Value {
    serde_json::from_str(object).unwrap()
}

#[test]
fn winstons_simple_lines_are_objects() {
    let line = r#"info: refund created {"amount":"45.00","refund_id":"re_1","timestamp":"2026-12-06T00:39:05.002Z"}"#;
    let object = parsed(&simple_object(line).unwrap());
    assert_eq!(object["level"], "info");
    assert_eq!(object["message"], "refund created");
    assert_eq!(object["refund_id"], "re_1");
    assert_eq!(object["timestamp"], "2026-12-06T00:39:05.002Z");
    for other in [
        "INFO: refund created {\"a\":1}",
        "info: refund created",
        "info: refund created {not json}",
        "2026-12-06 info: x {\"a\":1}",
        "info: {\"a\":1}",
    ] {
        assert_eq!(simple_object(other), None, "{other}");
    }
}

/// Every level spelling printf layouts write gives the same record.
#[test]
fn printf_lines_are_objects_whatever_the_level_looks_like() {
    for level in [
        "[INFO]", "INFO", "info:", "[info]:", "info", "[Info]", "[INFO ]",
    ] {
        let line = format!(
            r#"2026-12-06T19:53:56.687Z {level} tool call {{"runId":"r1","step":1,"tool":"issue_refund","args":{{"order":"A-1"}}}}"#
        );
        let object = parsed(&printf_object(&line).unwrap());
        assert_eq!(object["timestamp"], "2026-12-06T19:53:56.687Z", "{line}");
        assert_eq!(object["level"], "info");
        assert_eq!(object["message"], "tool call");
        assert_eq!(object["args"]["order"], "A-1");
    }
    let object = printf_object("2026-12-06T19:53:56.687Z warn: retrying {not json}").unwrap();
    assert_eq!(parsed(&object)["message"], "retrying {not json}");
    let object = printf_object("2026-12-06T19:53:56.687Z [INFO] done {}").unwrap();
    assert_eq!(parsed(&object)["message"], "done");
    for other in [
        // No level, a time without a date, no message, a stamp that is no ISO instant.
        r#"2026-12-06T19:53:56.687Z tool call {"a":1}"#,
        r#"19:53:56.687 INFO tool call {"a":1}"#,
        r#"2026-12-06T19:53:56.687Z INFO {"a":1}"#,
        r#"2026-12-06 19:53:56,687 INFO tool call {"a":1}"#,
        "2026-12-06T19:53:56.687Z INFO",
    ] {
        assert_eq!(printf_object(other), None, "{other}");
    }
}

#[test]
fn a_printf_log_is_told_from_a_text_log_with_bodies() {
    let printf = "2026-12-06T19:53:56.686Z [INFO] agent run started {\"runId\":\"r1\"}\n\
        2026-12-06T19:53:56.687Z [INFO] tool call {\"runId\":\"r1\",\"step\":1}\n\
        2026-12-06T19:53:57.910Z [INFO] agent run finished {}\n";
    assert!(looks_like_printf(printf.as_bytes()));
    // A text log with a body at the end of one line in three is not one.
    let text = "2026-12-06T03:28:43.659Z INFO agent: agent run 7f3a  started\n\
        2026-12-06T03:28:43.660Z INFO agent: POST http://p/v1/refunds attempt=1\n\
        2026-12-06T03:28:45.165Z INFO agent: 201 Created {\"id\":\"re_2\"}\n\
        2026-12-06T03:28:45.166Z INFO agent: 201 Created {\"id\":\"re_3\"}\n\
        2026-12-06T03:28:45.167Z INFO agent: agent run 7f3a  step 4  ok\n";
    assert!(!looks_like_printf(text.as_bytes()));
    // Text logs whose lines mostly end with bodies: told by their fields (two blanks
    // between them, `name=value` tokens, log4j's padded level) or an exception at the margin.
    for text in [
        "2026-12-06T02:37:04.207Z INFO agent run 7f3a  step 4  args {\"order\":\"A-1\"}\n\
         2026-12-06T02:37:04.247Z INFO attempt 1: POST http://p/v1/refunds body {\"a\":1}\n\
         2026-12-06T02:37:05.589Z INFO attempt 2 -> 201 {\"id\":\"re_2\"}\n",
        "2026-12-06T06:27:48,734 INFO  [main] c.a.RefundAgent - tool call args {\"a\":1}\n\
         2026-12-06T06:27:48,851 INFO  [main] c.a.RefundAgent - body {\"a\":1}\n",
        "2026-12-06T06:27:48.734Z INFO tool call tool=issue_refund args {\"a\":1}\n\
         2026-12-06T06:27:48.851Z INFO sending body {\"a\":1}\n",
        "2026-12-06T06:27:48.734Z INFO tool call {\"a\":1}\n\
         2026-12-06T06:27:48.851Z WARN attempt 1 failed {\"a\":1}\n\
         java.net.http.HttpTimeoutException: request timed out\n\
         2026-12-06T06:27:48.851Z INFO sending {\"a\":1}\n\
         com.acme.RefundApiException: POST /v1/refunds failed\n",
    ] {
        assert!(!looks_like_printf(text.as_bytes()), "{text}");
    }
    // One object is no layout; nor are lines without a level.
    assert!(!looks_like_printf(
        b"2026-12-06T19:53:56.686Z INFO started {\"a\":1}\n"
    ));
    assert!(!looks_like_printf(
        b"2026-12-06T19:53:56.686Z tool call {\"a\":1}\n2026-12-06T19:53:56.686Z tool call {\"a\":1}\n"
    ));
}

/// In a printf layout's log, a line without its object (a call with no meta) is its message
/// alone, and an error's stack below a line (`${stack}`) is part of that line's record:
/// nothing is skipped.
#[test]
fn a_printf_log_is_read_line_by_line_stacks_and_all() {
    let log = "2026-12-06T19:53:56.686Z info: agent run started {\"runId\":\"r1\"}\n\
        2026-12-06T19:53:56.687Z info: tool call {\"runId\":\"r1\",\"step\":1,\"tool\":\"issue_refund\",\"args\":{\"order\":\"A-1\"}}\n\
        2026-12-06T19:53:56.688Z info: no meta here\n\
        2026-12-06T19:53:57.700Z error: AxiosError: timeout of 1000ms exceeded\n    \
        at RedirectableRequest.handleRequestTimeout (x.js:1:1)\n";
    let opts = crate::ingest::ParseOptions::default();
    let p = crate::ingest::jsonl::parse_input(&mut log.as_bytes(), 0, &opts, false).unwrap();
    let s = &p.stats;
    assert_eq!((s.lines, s.skipped), (5, 0), "{:?}", s.problems);
    assert!(s.events >= 1, "the tool call: {s:?}");
}
