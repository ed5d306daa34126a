//! Parallel tool calls of one step (SPEC §3.4): LangGraph's ToolNode runs the tool calls a
//! model asked for in one turn side by side in one super-step, so their tool spans carry
//! the same run and step. Events name a call by its run and step only, and correlation,
//! which cannot tell such calls apart in a text log (`correlate::build::parallel` guesses
//! there), gave every request, answer and end to one of them: a timeout of one order's
//! refund was read as the other's, its retry as a second attempt of the other call. The
//! trace tells them apart (each its own span), so each such call gets its own
//! [`CallRef::part`] and correlation sends its events to it.
//!
//! Only tool spans of one run and step whose intervals meet (touching counts: at equal
//! times, the events of one and of the other could be read in either order) get a part; a
//! span that meets no other keeps part 0, as every call of a text log has. A step the
//! framework ran again after it ended (a retry policy) is still one step, its dispatches one
//! after another: parts only say which dispatch an event is of.

use super::Span;
use crate::event::CallRef;
use rustc_hash::FxHashMap;

/// Sets the part of each call in `refs` (one per tool span of `calls`, which are in order
/// of start) that meets another call of its run and step in time: 1, 2, ... in order of
/// start among the step's calls, so that no two of a step's calls share one.
pub(super) fn set_parts(spans: &[Span], calls: &[usize], refs: &mut [CallRef]) {
    let mut by_step: FxHashMap<(&str, u32), Vec<usize>> = FxHashMap::default();
    for (c, r) in refs.iter().enumerate() {
        by_step.entry((r.run.as_str(), r.step)).or_default().push(c);
    }
    let mut parts = vec![0; refs.len()];
    for members in by_step.values().filter(|m| m.len() > 1) {
        // In order of start (as `calls` is): a call meets an earlier one when it starts by
        // the latest end so far, and then meets the one that ends latest too. Any earlier
        // call that it meets holds its start, as that one does, so the two meet each other
        // and were marked when the later of them was reached.
        let mut concurrent = vec![false; members.len()];
        let mut latest_end: Option<(usize, crate::time::Timestamp)> = None;
        for (i, &c) in members.iter().enumerate() {
            let s = &spans[calls[c]];
            if let Some((j, end)) = latest_end
                && s.start <= end
            {
                concurrent[i] = true;
                concurrent[j] = true;
            }
            if latest_end.is_none_or(|(_, end)| s.end > end) {
                latest_end = Some((i, s.end));
            }
        }
        for (i, &c) in members.iter().enumerate() {
            if concurrent[i] {
                parts[c] = i as u32 + 1;
            }
        }
    }
    for (r, part) in refs.iter_mut().zip(parts) {
        r.part = part;
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{TR, attempts, batch, kv, linked, s, span, tool_calls};
    use serde_json::{Value, json};

    /// A LangGraph tool span (OpenLLMetry's attributes) of run `th` and `step`, from
    /// `start` to `end` ms, refunding `order`.
    fn tool(id: &str, step: u32, start: i64, end: i64, order: &str) -> Value {
        let args = format!(r#"{{"order": "{order}", "amount_p": 2500}}"#);
        span(
            TR,
            id,
            Some("a000000000000001"),
            "execute_tool issue_refund",
            1,
            start,
            end,
            kv(&[
                ("gen_ai.operation.name", s("execute_tool")),
                ("gen_ai.tool.name", s("issue_refund")),
                ("gen_ai.tool.call.arguments", s(&args)),
                ("traceloop.association.properties.thread_id", s("th")),
                (
                    "traceloop.association.properties.langgraph_step",
                    s(&step.to_string()),
                ),
            ]),
        )
    }

    /// A POST below `parent`, answered `status` or (with none) timed out.
    fn post(id: &str, parent: &str, start: i64, end: i64, status: Option<i64>) -> Value {
        let mut attrs = vec![
            ("http.method", s("POST")),
            ("http.url", s("http://pay/v1/refunds")),
        ];
        if let Some(code) = status {
            attrs.push(("http.status_code", json!({"intValue": code.to_string()})));
        }
        let mut v = span(TR, id, Some(parent), "POST", 3, start, end, kv(&attrs));
        if status.is_none() {
            v["status"] = json!({"code": 2, "message": "ReadTimeout"});
        }
        v
    }

    fn agent() -> Value {
        span(
            TR,
            "a000000000000001",
            None,
            "invoke_agent",
            1,
            0,
            5000,
            kv(&[("gen_ai.conversation.id", s("th"))]),
        )
    }

    /// (order, step, part) of each tool call, in order of start.
    fn calls_of(spans: Vec<Value>) -> Vec<(String, u32, u32)> {
        let (_, l) = linked(&[&batch("i-1", spans)]);
        tool_calls(&l)
            .iter()
            .map(|t| {
                let order = t.parsed_args()["order"].as_str().unwrap().to_string();
                (order, t.call.step, t.call.part)
            })
            .collect()
    }

    /// LangGraph's ToolNode: two calls of one super-step side by side, the first timed out
    /// and sent again. Each call, each request and its outcome names its own part.
    #[test]
    fn overlapping_tool_spans_of_one_step_each_get_a_part() {
        let spans = vec![
            agent(),
            tool("b000000000000001", 2, 8, 1273, "J-1"),
            post("c000000000000001", "b000000000000001", 9, 1017, None),
            tool("b000000000000002", 2, 60, 364, "J-2"),
            post("c000000000000002", "b000000000000002", 61, 364, Some(201)),
            post(
                "c000000000000003",
                "b000000000000001",
                1218,
                1273,
                Some(201),
            ),
        ];
        let (_, l) = linked(&[&batch("i-1", spans)]);
        let calls: Vec<(u32, u32)> = (tool_calls(&l).iter())
            .map(|t| (t.call.step, t.call.part))
            .collect();
        assert_eq!(calls, [(2, 1), (2, 2)]);
        let tries: Vec<(u32, u32)> = (attempts(&l).iter())
            .map(|a| (a.call.as_ref().unwrap().part, a.number))
            .collect();
        assert_eq!(tries, [(1, 1), (1, 2), (2, 1)]);
        // Every event of a call names its part: the failure, the answers, the ends.
        for (_, e) in &l.events {
            let call = e.kind.call().expect("every event is a call's");
            assert_ne!(call.part, 0, "{e:?}");
        }
    }

    /// A step retry (the framework running the step again once it ended), spans of other
    /// steps side by side, and a span alone: no part, as in a text log.
    #[test]
    fn spans_that_meet_no_other_of_their_step_get_none() {
        let one_after_another = vec![
            agent(),
            tool("b000000000000001", 2, 0, 1000, "D-1"),
            tool("b000000000000002", 2, 1500, 1600, "D-1"),
        ];
        assert_eq!(
            calls_of(one_after_another),
            [("D-1".into(), 2, 0), ("D-1".into(), 2, 0)]
        );
        let other_steps = vec![
            agent(),
            tool("b000000000000001", 2, 0, 1000, "E-1"),
            tool("b000000000000002", 3, 10, 900, "E-2"),
        ];
        assert_eq!(
            calls_of(other_steps),
            [("E-1".into(), 2, 0), ("E-2".into(), 3, 0)]
        );
    }

    /// Parts are numbered in order of start among the step's calls, unique in the step: a
    /// span inside a long one meets it, one that starts when another ends meets it too (their
    /// events could be read in either order), and one later alone gets none.
    #[test]
    fn parts_are_numbered_by_start_and_touching_spans_meet() {
        let spans = vec![
            agent(),
            tool("b000000000000001", 2, 0, 100, "F-1"),
            tool("b000000000000002", 2, 10, 20, "F-2"),
            tool("b000000000000003", 2, 50, 60, "F-3"),
            tool("b000000000000004", 2, 100, 150, "F-4"),
            tool("b000000000000005", 2, 200, 210, "F-5"),
        ];
        let parts: Vec<u32> = calls_of(spans).into_iter().map(|c| c.2).collect();
        assert_eq!(parts, [1, 2, 3, 4, 0]);
    }
}
