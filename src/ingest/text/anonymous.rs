//! Requests an agent's log shows with no tool call above them: frameworks that log no
//! tool calls (LangGraph, Pydantic AI, the OpenAI Agents SDK by default) still let their
//! HTTP client log (`HTTP Request: POST ... "HTTP/1.1 201 Created"`) and their retry
//! library (`Retrying ... as it raised ReadTimeout`). Dropped, a duplicate refund had no
//! client side: cause unknown, excess unknown, no `unkeyed-retry`. Each run of such lines
//! is a call of its own, `?<input> #<n>` (the client's retry loop: a request, its
//! failures and the requests sent again), ended by a final answer (a success or a
//! permanent refusal) or by five minutes without a line; the next request is another
//! call.

use super::TextParser;
use crate::event::CallRef;
use crate::time::{Duration, Timestamp};

/// How long an anonymous call waits for its retry.
const OPEN_FOR: Duration = Duration(300 * 1_000_000_000);

#[derive(Default)]
pub(super) struct Anonymous {
    /// Calls made so far in this file.
    made: u32,
    /// Whether the current call is an anonymous one, and the time of its latest line.
    open: Option<Timestamp>,
    /// The time of the stamped line before the one being read.
    pub(super) previous_line: Timestamp,
}

impl TextParser {
    /// The call a request, an answer or a client's retry at `at` belongs to when the line
    /// names none: the current call, else an anonymous one (a new one after five minutes).
    pub(super) fn call_or_anonymous(&mut self, at: Timestamp) -> CallRef {
        if let Some(since) = self.anonymous.open
            && at.0.saturating_sub(since.0) > OPEN_FOR.0
        {
            self.end_anonymous();
        }
        if let Some(call) = &self.current_call {
            if self.anonymous.open.is_some() {
                self.anonymous.open = Some(at);
            }
            return call.clone();
        }
        self.anonymous.made += 1;
        self.anonymous.open = Some(at);
        let call = CallRef {
            run: format!("?{}", self.input).as_str().into(),
            step: self.anonymous.made,
        };
        self.current_call = Some(call.clone());
        // Its first request was sent after the file's previous line, at the earliest.
        self.client
            .new_dispatch(self.anonymous.previous_line.min(at));
        call
    }

    /// An answer `status` was read: a final one (a success, or a refusal sending again
    /// cannot change) ends an anonymous call.
    pub(super) fn answered(&mut self, status: u16) {
        let retryable = matches!(status, 408 | 409 | 425 | 429) || status >= 500;
        if self.anonymous.open.is_some() && (200..500).contains(&status) && !retryable {
            self.end_anonymous();
        }
    }

    /// A tool call was read: the calls after it are its own.
    pub(super) fn named_call(&mut self) {
        self.anonymous.open = None;
    }

    fn end_anonymous(&mut self) {
        self.anonymous.open = None;
        self.current_call = None;
    }
}

#[cfg(test)]
mod tests {
    use crate::event::EventKind;
    use crate::ingest::ParseOptions;
    use crate::ingest::text::parse;

    /// Each event's call, as `run #step`.
    fn calls(text: &str) -> Vec<String> {
        let p = parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap();
        (p.events.iter())
            .filter_map(|e| match &e.kind {
                EventKind::Attempt(a) => a.call.clone(),
                EventKind::Response(r) => r.call.clone(),
                EventKind::Failure(f) => f.call.clone(),
                _ => None,
            })
            .map(|c| format!("{} #{}", c.run, c.step))
            .collect()
    }

    #[test]
    fn a_clients_retry_loop_is_one_call_and_a_final_answer_ends_it() {
        let text = concat!(
            "2026-12-06 05:28:00,367 INFO agent: working on order A-1\n",
            "2026-12-06 05:28:00,670 WARNING agent: Retrying post_refund in 1 seconds as it raised ReadTimeout: timed out.\n",
            "2026-12-06 05:28:01,674 INFO httpx: HTTP Request: POST http://x/v1/refunds \"HTTP/1.1 201 Created\"\n",
            "2026-12-06 05:28:02,000 INFO httpx: HTTP Request: POST http://x/v1/refunds \"HTTP/1.1 201 Created\"\n",
            // Five minutes on, a failure opens another call.
            "2026-12-06 05:40:00,000 WARNING agent: Retrying post_refund in 1 seconds as it raised ReadTimeout: timed out.\n",
        );
        assert_eq!(
            calls(text),
            ["?0 #1", "?0 #1", "?0 #1", "?0 #2", "?0 #2", "?0 #3"]
        );
    }

    #[test]
    fn requests_after_a_tool_call_are_its_own() {
        let text = concat!(
            "2026-12-06 05:28:00,000 INFO httpx: HTTP Request: POST http://x/v1/refunds \"HTTP/1.1 503 Service Unavailable\"\n",
            "2026-12-06 05:28:01,000 INFO agent: agent run r1  step 2  tool=issue_refund  args={\"order\":\"A-1\"}\n",
            "2026-12-06 05:28:01,500 INFO httpx: HTTP Request: POST http://x/v1/refunds \"HTTP/1.1 201 Created\"\n",
        );
        // The 503 leaves the anonymous call open; the tool call's requests are still its own.
        assert_eq!(calls(text), ["?0 #1", "?0 #1", "r1 #2", "r1 #2"]);
    }
}
