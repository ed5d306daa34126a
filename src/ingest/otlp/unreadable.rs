//! JSON written as text in an attribute, nested deeper than the JSON reader reads
//! ([`MAX_JSON_DEPTH`]): a tool's arguments, OpenInference's `metadata`. Such text cannot be
//! read; kept as it is, the span is reported (`path:line`, counted skipped) rather than
//! used as though it said nothing: its arguments read as a string, with no order or
//! amount, its metadata as no run id or step. The call stays in the trace where it was, so
//! the requests below it are not given to another.

use super::Span;
use super::conventions::{args_written, is_tool, tool_name};
use crate::event::{MAX_JSON_DEPTH, args_nest_too_deep};
use serde_json::Value;

/// Why span `s` cannot be used whole, if JSON it carries as text nests too deep to read.
pub fn nested_too_deep(s: &Span) -> Option<String> {
    if is_tool(s) && args_written(s).is_some_and(unreadable) {
        return Some(format!(
            "tool span `{}`: its arguments are JSON nested deeper than {MAX_JSON_DEPTH} \
             levels, more than the JSON reader reads; the call is kept with them as text, so \
             no order, amount or key is read from them",
            tool_name(s)
        ));
    }
    if s.attr("metadata").is_some_and(unreadable) {
        return Some(format!(
            "span `{}`: its `metadata` is JSON nested deeper than {MAX_JSON_DEPTH} levels, more \
             than the JSON reader reads; no run id or step is read from it",
            s.name
        ));
    }
    None
}

/// Text that nests deeper than JSON is read, and so is not read. The count of brackets,
/// cheap, decides first: the reader is asked only of the rare text it finds too deep.
fn unreadable(v: &Value) -> bool {
    v.as_str().is_some_and(|text| {
        args_nest_too_deep(text.as_bytes()) && serde_json::from_str::<Value>(text).is_err()
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{batch, kv, s, span};
    use super::*;

    fn nested(levels: usize) -> String {
        let meta = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        format!(r#"{{"order":"A-1","amount_p":4500,"meta":{meta}}}"#)
    }

    fn read(v: serde_json::Value) -> Span {
        let mut parsed = super::super::tests::read(&batch("i", vec![v]), 0);
        parsed.spans.remove(0)
    }

    /// Arguments of 127 levels in all are read; of 128 they are not, and are said so; as
    /// is `metadata` that deep on any span. Brackets inside a string do not count.
    #[test]
    fn json_text_too_deep_to_read_is_said_and_text_that_is_not_is_not() {
        let tool = |args: &str| {
            let attrs = kv(&[
                ("gen_ai.operation.name", s("execute_tool")),
                ("gen_ai.tool.name", s("issue_refund")),
                ("gen_ai.tool.call.arguments", s(args)),
            ]);
            read(span(
                "t1",
                "a1",
                None,
                "execute_tool issue_refund",
                1,
                0,
                5,
                attrs,
            ))
        };
        // The object is one level, `meta`'s arrays the rest.
        assert_eq!(nested_too_deep(&tool(&nested(126))), None);
        let why = nested_too_deep(&tool(&nested(127))).expect("said");
        assert!(
            why.starts_with(
                "tool span `issue_refund`: its arguments are JSON nested deeper than 127 levels"
            ),
            "{why}"
        );
        let in_a_string = format!(r#"{{"note":"{}"}}"#, "[".repeat(300));
        assert_eq!(nested_too_deep(&tool(&in_a_string)), None);
        // Not JSON at all: kept as text, as ever, without a word.
        assert_eq!(nested_too_deep(&tool("{'order': 'A-1'}")), None);
        let chain = |metadata: &str| {
            let attrs = kv(&[
                ("openinference.span.kind", s("CHAIN")),
                ("metadata", s(metadata)),
            ]);
            read(span("t1", "c1", None, "LangGraph", 1, 0, 5, attrs))
        };
        assert_eq!(nested_too_deep(&chain(&nested(126))), None);
        let why = nested_too_deep(&chain(&nested(127))).expect("said");
        assert!(
            why.starts_with("span `LangGraph`: its `metadata` is JSON nested deeper"),
            "{why}"
        );
    }

    /// A span with two problems is one record skipped: its reasons are joined, once.
    #[test]
    fn a_span_with_two_problems_is_one_problem() {
        let attrs = kv(&[
            ("openinference.span.kind", s("TOOL")),
            ("tool.name", s("issue_refund")),
            ("input.value", s(&nested(127))),
        ]);
        let mut tool = span("t1", "a1", None, "issue_refund", 1, 0, 5, attrs);
        tool.as_object_mut().unwrap().remove("endTimeUnixNano");
        let (_, linked) = super::super::tests::linked(&[&batch("i", vec![tool])]);
        assert_eq!(linked.problems.len(), 1, "{:?}", linked.problems);
        let why = &linked.problems[0].1;
        assert!(
            why.contains("nested deeper") && why.contains("has no endTimeUnixNano"),
            "{why}"
        );
    }

    /// An export batch nested deeper than the JSON reader reads (an attribute's value of
    /// nested `kvlistValue`s) is skipped as that, not as `not JSON: recursion limit
    /// exceeded`; a batch that is no JSON still says `not JSON`.
    #[test]
    fn a_batch_nested_too_deep_is_said_to_be() {
        let good = batch("i", vec![span("t1", "a1", None, "x", 1, 0, 5, kv(&[]))]);
        let open = good.trim_end().strip_suffix('}').expect("an object");
        let deep = format!("{open}, \"deep\": {}{}}}", "[".repeat(200), "]".repeat(200));
        let text = format!("{good}\n{deep}\n{{\"resourceSpans\": tru}}\n");
        let parsed = super::super::tests::read(&text, 0);
        assert_eq!((parsed.spans.len(), parsed.stats.skipped), (1, 2));
        let why: Vec<&str> = (parsed.stats.problems.iter())
            .map(|p| p.reason.as_str())
            .collect();
        assert!(why[0].starts_with("nested too deep at column "), "{why:?}");
        assert!(
            why[0].ends_with(
                "more than 127 levels of arrays and objects, the most the JSON reader reads"
            ),
            "{why:?}"
        );
        assert!(why[1].starts_with("not JSON: "), "{why:?}");
    }
}
