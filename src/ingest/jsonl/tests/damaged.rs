//! Broken lines, access lines among JSON ones, and arguments nested too deep: skipped or ignored, and said.

use super::*;

#[test]
fn an_access_line_beside_json_lines_is_ignored() {
    let p = run(concat!(
        r#"{"ts":"2026-11-03T14:02:11Z","msg":"listening on 3000"}"#,
        "\n",
        r#"::1 - - [03/Nov/2026:14:02:11 +0000] "POST /v1/refunds HTTP/1.1" 201 127 "-" "curl/8""#,
        "\n",
    ));
    assert_eq!(
        (p.stats.ignored, p.stats.skipped),
        (2, 0),
        "{:?}",
        p.stats.problems
    );
}

#[test]
fn broken_lines_are_skipped_with_a_reason() {
    let p = run(concat!(
        "not json at all\n",
        "[1,2]\n",
        r#"{"ts":"2026-11-03T14:02:11Z"}"#,
        "\n",
        r#"{"type":"attempt","attempt":1}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:11Z","type":"attempt","run":"r","step":"four","attempt":1}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:11Z","type":"effect","effect_id":"x","kind":"refund","amount_minor":4500}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:11Z","type":"response","status":"abc"}"#,
        "\n",
    ));
    let reasons: Vec<&str> = p.stats.problems.iter().map(|p| p.reason.as_str()).collect();
    assert_eq!(p.stats.skipped, 7, "{reasons:?}");
    assert!(reasons[0].starts_with("not JSON"));
    assert_eq!(reasons[1], "not a JSON object");
    assert_eq!(reasons[2], "no `type` field");
    assert_eq!(
        reasons[3],
        "no `ts` field (nor `timestamp`, `@timestamp`, `time`, `@t` or `asctime`)"
    );
    assert_eq!(reasons[4], "`step` is not a non-negative integer");
    assert_eq!(reasons[5], "`amount_minor` without `currency`");
    assert!(reasons[6].contains("`status`"));
    assert_eq!(
        p.stats.lines,
        p.stats.events + p.stats.ignored + p.stats.skipped
    );
}

/// A tool call whose arguments nest deeper than correlation can read them is skipped and
/// said so, not kept with arguments read as null (review37 H2); one level less is read.
/// Arguments logged as a JSON string are held to the same.
#[test]
fn arguments_nested_too_deep_are_skipped_and_said() {
    let args = |levels: usize| {
        let meta = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        format!(r#"{{"order":"A-1","meta":{meta}}}"#)
    };
    let line = |args: String| {
        format!(
            r#"{{"ts":"2026-11-03T14:02:11Z","type":"tool_call","run":"7f3a","step":4,"tool":"issue_refund","args":{args}}}"#
        )
    };
    let as_string = |args: String| serde_json::to_string(&args).unwrap();
    for deep in [line(args(127)), line(as_string(args(127)))] {
        let read = run(&deep);
        assert_eq!((read.stats.skipped, read.events.len()), (1, 0));
        assert!(
            read.stats.problems[0]
                .reason
                .contains("deeper than 127 levels")
        );
    }
    for fine in [line(args(126)), line(as_string(args(126)))] {
        let read = run(&fine);
        assert_eq!((read.stats.skipped, read.events.len()), (0, 1));
    }
}
