//! util.inspect's renderings read as JSON ([`super::inspect`]).

use super::inspect::*;
use serde_json::{Value, json};

#[test]
fn an_inspected_object_is_the_json_it_stands_for() {
    let text = "{\n  runId: 'b1e8',\n  step: 1,\n  tool: 'issue_refund',\n  args: { order: 'A-1', amount_p: 4500 },\n  idempotencyKey: undefined\n}";
    assert_eq!(
        as_value(text),
        Some(json!({"runId": "b1e8", "step": 1, "tool": "issue_refund",
            "args": {"order": "A-1", "amount_p": 4500}, "idempotencyKey": null}))
    );
    assert_eq!(
        as_value("{ err: \"Timeout awaiting 'request' for 1000ms\", code: 'ETIMEDOUT' }"),
        Some(json!({"err": "Timeout awaiting 'request' for 1000ms", "code": "ETIMEDOUT"}))
    );
    assert_eq!(as_value("{}"), Some(json!({})));
}

#[test]
fn what_json_cannot_hold_is_null_and_the_rest_is_kept() {
    let text = "<ref *1> { 'content-type': 'application/json', at: 2026-12-06T07:41:20.706Z, f: [Function: post], deep: [Object], self: [Circular *1], headers: [Object [AxiosHeaders]], list: [ 1, 2, ... 98 more items ], big: 12n, 'it\\'s': 'a' +\n  'b', h: AxiosHeaders { Accept: '*/*' } }";
    assert_eq!(
        as_value(text),
        Some(
            json!({"content-type": "application/json", "at": "2026-12-06T07:41:20.706Z",
            "f": null, "deep": null, "self": null, "headers": null, "list": [1, 2], "big": 12,
            "it's": "ab", "h": {"Accept": "*/*"}})
        )
    );
}

#[test]
fn a_string_cut_at_util_inspects_length_is_what_was_printed() {
    // `maxStringLength` (10,000 by default) cuts a string and says how much is left.
    let text = "{ result: 'rrrr'... 2000 more characters, one: 'ab'... 1 more character, n: 1 }";
    assert_eq!(
        as_value(text),
        Some(json!({"result": "rrrr", "one": "ab", "n": 1}))
    );
    // Words that only look like it are no value.
    assert_eq!(as_value("{ result: 'rrrr'... more characters }"), None);
}

#[test]
fn text_that_is_no_inspected_value_is_none() {
    for text in [
        "{ runId: 'open",
        "{ a: 1 } trailing",
        "{ a 1 }",
        "{ a: 1 b: 2 }",
        "the refund has been issued",
    ] {
        assert!(
            as_value(text).is_none() || !matches!(as_value(text), Some(Value::Object(_))),
            "{text}"
        );
    }
    for (text, want) in [
        (
            "{ items: [ 'sku_1', [length]: 1 ] }",
            json!({"items": ["sku_1"]}),
        ),
        (
            "Map(2) { 'tenant' => 'acme', 'x' => 1 }",
            json!({"tenant": "acme", "x": 1}),
        ),
        (
            "{ s: Set(2) { 'a', 'b' }, w: WeakMap { <items unknown> } }",
            json!({"s": {}, "w": {}}),
        ),
        (
            "{ h: Object [AxiosHeaders] { Accept: '*/*' }, b: <Buffer 7b 22>, d: Invalid Date }",
            json!({"h": {"Accept": "*/*"}, "b": null, "d": null}),
        ),
        (
            "{ u: URL { href: 'http://h/v1/refunds', origin: 'http://h' }, n: 12345678901234567890n, m: 123456789012345678901234n }",
            json!({"u": "http://h/v1/refunds", "n": 12345678901234567890u64, "m": "123456789012345678901234n"}),
        ),
        (
            "{ a: Uint8Array(2) [ 1, 2 ], e: [ 1, <1 empty item>, 3, extra: 'x' ], s: 'it' +\n  \"'s\" }",
            json!({"a": [1, 2], "e": [1, null, 3], "s": "it's"}),
        ),
        (
            "{ err: TypeError: fetch failed\n      at node:internal/deps/undici/undici:13510:13\n      at async post (file:///a.mjs:1:2) {\n    [cause]: SocketError: other side closed\n        at Socket.onclose (node:internal:1:1) {\n      code: 'UND_ERR_SOCKET'\n    }\n  }, step: 1 }",
            json!({"err": "TypeError: fetch failed", "step": 1}),
        ),
    ] {
        assert_eq!(as_value(text), Some(want), "{text}");
    }
    let deep = "{ a: ".repeat(100) + &"}".repeat(100);
    assert_eq!(as_value(&deep), None);
    assert!(opens_object(b"{ runId: 'x' }") && opens_object(b"{") && opens_object(b"{}"));
    assert!(!opens_object(b"{\"runId\":\"x\"}"));
}

#[test]
fn errors_nested_in_errors_are_turned_away_at_the_depth_not_the_stack() {
    // An error's members were read at depth 1 whatever its own depth, so a chain of errors
    // each holding the next (`e: TypeError: x {` on each line, within a span's 4 MiB)
    // overflowed the stack and aborted the process.
    let deep = "{ e: ".to_string() + &"TypeError: x {\n  e: ".repeat(100_000) + "1";
    assert_eq!(as_value(&deep), None);
    let closed = deep + &"\n}".repeat(100_001);
    assert_eq!(as_value(&closed), None);
    // A few levels, as Node prints an error's cause, are still read.
    let few = "{ e: ".to_string() + &"TypeError: x {\n  e: ".repeat(3) + "1" + &"\n}".repeat(4);
    assert_eq!(as_value(&few), Some(json!({"e": "TypeError: x"})));
}

#[test]
fn an_array_of_unclosed_marks_is_read_in_linear_time() {
    // Each `[A[` looked for its mark's closing bracket to the end of the line: 200,000 such
    // items on one line (1.8 MB) took five minutes. The look now stops three brackets in.
    let small = "[ [A[, x], [A[, x],\n]";
    assert_eq!(as_value(small), Some(json!([["A[", "x"], ["A[", "x"]])));
    let text = "[ ".to_string() + &"[A[, x], ".repeat(100_000) + "\n]";
    let started = std::time::Instant::now();
    let value = as_value(&text);
    assert_eq!(
        value.and_then(|v| v.as_array().map(Vec::len)),
        Some(100_000)
    );
    // Linear: milliseconds; the quadratic look took over a minute at this size.
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // Marks one inside another are still read past, and a third level is none.
    assert_eq!(
        as_value("{ h: [Object [AxiosHeaders]], f: [Function: f] }"),
        Some(json!({"h": null, "f": null}))
    );
    assert_eq!(as_value("{ h: [Object [A [B]]] }"), None);
}
