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
const OPEN_FOR: Duration = Duration(60 * 1_000_000_000);

/// How long before a request's line the line before it may be, to be taken as the
/// earliest the request was sent (else it was sent at its own line, as far as is known).
const SENT_AFTER_WITHIN: Duration = Duration(60 * 1_000_000_000);

#[derive(Default)]
pub(super) struct Anonymous {
    /// Whether the current call is an anonymous one, and the time of its latest line.
    open: Option<Timestamp>,
    /// The time of the stamped line before the one being read, if any, and of that one.
    pub(super) previous_line: Option<Timestamp>,
    pub(super) this_line: Option<Timestamp>,
    /// The file logged an effect: a service's log, whose own requests (to its acquirer,
    /// its webhooks) are no agent's.
    pub(super) effects_seen: bool,
}

impl TextParser {
    /// The call a request, an answer or a client's retry at `at` belongs to when the line
    /// names none: the current call, else a new anonymous one, named by its first line's
    /// time (`?2026-12-06T05:28:00.367Z`: stable when the log rotates, and never the same
    /// on another day). `None` in a file that logged an effect.
    pub(super) fn call_or_anonymous(&mut self, at: Timestamp) -> Option<CallRef> {
        if self.anonymous_expired(at) {
            self.end_anonymous();
        }
        if let Some(call) = &self.process.current_call {
            if self.process.anonymous.open.is_some() {
                self.process.anonymous.open = Some(at);
            }
            return Some(call.clone());
        }
        if self.process.anonymous.effects_seen {
            return None;
        }
        let call = self.new_anonymous(at);
        self.process.current_call = Some(call.clone());
        // Its first request was sent after the file's previous line, at the earliest.
        let since = (self.process.anonymous.previous_line)
            .filter(|p| *p <= at && at.0.saturating_sub(p.0) <= SENT_AFTER_WITHIN.0)
            .unwrap_or(at);
        self.process.client.new_dispatch(since);
        Some(call)
    }

    /// The current call is an anonymous one that has waited past its time at `at`: a line
    /// then is none of its.
    pub(super) fn anonymous_expired(&self, at: Timestamp) -> bool {
        self.process
            .anonymous
            .open
            .is_some_and(|since| at.0.saturating_sub(since.0) > OPEN_FOR.0)
    }

    fn new_anonymous(&mut self, at: Timestamp) -> CallRef {
        self.process.anonymous.open = Some(at);
        CallRef {
            run: format!("?{at}").as_str().into(),
            step: 1,
            part: 0,
        }
    }

    /// A tool call a framework logged without a run or step (the OpenAI Agents SDK's
    /// `Invoking tool issue_refund with input {...}`, with its tool data logged): a call of
    /// its own, named as the anonymous ones, its arguments known.
    pub(super) fn framework_tool_call(&mut self, at: Timestamp, first: &[u8]) -> Option<CallRef> {
        let Some((_, args)) = invoked_tool(first) else {
            // Its tool data hidden: a new call began, whose requests are no earlier one's.
            if (self.process.current_call.as_ref()).is_some_and(|c| c.run.starts_with('?')) {
                self.end_anonymous();
            }
            return None;
        };
        args.starts_with(b"{").then_some(())?;
        Some(self.new_anonymous(at))
    }

    /// An answer `status` was read: a final one (a success, or a refusal sending again
    /// cannot change) ends an anonymous call.
    pub(super) fn answered(&mut self, status: u16) {
        let retryable = matches!(status, 408 | 409 | 425 | 429) || status >= 500;
        let last = (200..500).contains(&status) && !retryable;
        if self.process.anonymous.open.is_some() && last {
            self.end_anonymous();
        }
        if self.process.dramatiq.seen && last {
            self.dramatiq_answered();
        }
    }

    /// A tool call was read: the calls after it are its own.
    pub(super) fn named_call(&mut self) {
        self.process.anonymous.open = None;
    }

    fn end_anonymous(&mut self) {
        self.process.anonymous.open = None;
        self.process.current_call = None;
    }
}

/// `Invoking tool NAME with input ARGS`: the tool's name and its arguments as written.
pub(super) fn invoked_tool(first: &[u8]) -> Option<(&[u8], &[u8])> {
    let rest = first.strip_prefix(b"Invoking tool ")?;
    let cut = memchr::memmem::find(rest, b" with input ")?;
    let (tool, args) = (&rest[..cut], rest[cut + 12..].trim_ascii());
    let is_name = !tool.is_empty()
        && tool
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    is_name.then_some((tool, args))
}

#[cfg(test)]
mod tests {
    use crate::event::EventKind;
    use crate::ingest::ParseOptions;
    use crate::ingest::text::parse;

    /// Each attempt's, answer's and failure's call, as `run #step`.
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

    const FIRST: &str = "?2026-12-06T05:28:00.670Z #1";

    #[test]
    fn a_clients_retry_loop_is_one_call_and_a_final_answer_ends_it() {
        let text = concat!(
            "2026-12-06 05:28:00,367 INFO agent: working on order A-1\n",
            "2026-12-06 05:28:00,670 WARNING agent: Retrying post_refund in 1 seconds as it raised ReadTimeout: timed out.\n",
            "2026-12-06 05:28:01,674 INFO httpx: HTTP Request: POST http://x/v1/refunds \"HTTP/1.1 201 Created\"\n",
            "2026-12-06 05:28:02,000 INFO httpx: HTTP Request: POST http://x/v1/refunds \"HTTP/1.1 201 Created\"\n",
            // A GET changes nothing: no call of its own.
            "2026-12-06 05:28:03,000 INFO httpx: HTTP Request: GET http://x/v1/orders/A-1 \"HTTP/1.1 200 OK\"\n",
            // A minute on, a failure opens another call.
            "2026-12-06 05:40:00,000 WARNING agent: Retrying post_refund in 1 seconds as it raised ReadTimeout: timed out.\n",
        );
        let second = "?2026-12-06T05:28:02.000Z #1";
        let third = "?2026-12-06T05:40:00.000Z #1";
        assert_eq!(calls(text), [FIRST, FIRST, FIRST, second, second, third]);
    }

    #[test]
    fn a_failure_long_after_an_anonymous_call_is_none_of_its() {
        let text = concat!(
            "2026-12-06 05:28:00,000 INFO httpx: HTTP Request: POST http://x/v1/refunds \"HTTP/1.1 503 Service Unavailable\"\n",
            "2026-12-06 07:00:00,000 ERROR agent: refund request failed: ReadTimeoutError: read timed out\n",
        );
        let p = parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap();
        match &p.events.last().unwrap().kind {
            EventKind::Failure(f) => assert_eq!(f.call, None),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_service_logs_requests_of_its_own_and_none_is_an_agents_call() {
        let text = concat!(
            "2026-12-06 05:28:00,000 INFO payments: refund created refund_id=re_1 order_id=A-1 amount_minor=4500 currency=GBP\n",
            "2026-12-06 05:28:00,100 INFO httpx: HTTP Request: POST https://acquirer.example/v1/refunds \"HTTP/1.1 201 Created\"\n",
            "2026-12-06 05:28:01,000 WARNING payments: Retrying notify in 1 seconds as it raised ReadTimeout: timed out.\n",
            "2026-12-06 05:28:02,000 INFO payments: Sending webhook POST https://merchant.example/hooks attempt=1\n",
        );
        assert!(
            calls(text).iter().all(|c| !c.starts_with("?2026")),
            "{:?}",
            calls(text)
        );
    }

    #[test]
    fn the_agents_sdks_tool_call_is_a_call_with_its_arguments() {
        let text = concat!(
            "2026-12-06 05:28:00,367 DEBUG openai.agents: Invoking tool issue_refund with input {\"order_id\":\"A-88214\",\"amount_minor\":4500}\n",
            "2026-12-06 05:28:00,670 WARNING agent: Retrying post_refund in 1 seconds as it raised ReadTimeout: timed out.\n",
            "2026-12-06 05:28:01,674 INFO httpx: HTTP Request: POST http://x/v1/refunds \"HTTP/1.1 201 Created\"\n",
            // Its tool data hidden (the SDK's default): no call, the requests an anonymous one's.
            "2026-12-06 05:29:00,000 DEBUG openai.agents: Invoking tool issue_refund\n",
            "2026-12-06 05:29:00,100 INFO httpx: HTTP Request: POST http://x/v1/refunds \"HTTP/1.1 201 Created\"\n",
        );
        let p = parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap();
        let called = "?2026-12-06T05:28:00.367Z";
        match &p.events[0].kind {
            EventKind::ToolCall(c) => {
                assert_eq!(
                    (c.call.run.as_str(), c.tool.as_str()),
                    (called, "issue_refund")
                );
                assert!(c.args_raw.contains("A-88214"));
            }
            other => panic!("{other:?}"),
        }
        let called = format!("{called} #1");
        let later = "?2026-12-06T05:29:00.100Z #1".to_string();
        assert_eq!(
            calls(text),
            [called.clone(), called.clone(), called, later.clone(), later]
        );
    }

    /// An agent that logs no tool call but each tool's result (`tool result run_id=r15
    /// step=1 ... status=ok`): the step's end, of a step never dispatched, takes none of the
    /// anonymous call's lines, whether it comes after its final answer or inside its retry
    /// loop (review 35 M3 said it did; the two agent logs scanned together were why).
    #[test]
    fn a_result_line_of_no_dispatched_step_leaves_the_anonymous_call_whole() {
        let text = concat!(
            "2026-12-07 07:36:30,804 INFO httpx: HTTP Request: POST http://x/v1/refunds \"HTTP/1.1 503 SERVICE UNAVAILABLE\"\n",
            "2026-12-07 07:36:30,805 INFO agent: tool result run_id=r15 step=1 tool=issue_refund status=error\n",
            "2026-12-07 07:36:30,806 WARNING agent: Retrying post_refund in 0.3 seconds as it raised HTTPStatusError: Server error '503 SERVICE UNAVAILABLE'\n",
            "2026-12-07 07:36:31,108 INFO httpx: HTTP Request: POST http://x/v1/refunds \"HTTP/1.1 201 CREATED\"\n",
            "2026-12-07 07:36:31,109 INFO agent: tool result run_id=r15 step=1 tool=issue_refund status=ok refund_id=re_2\n",
            "2026-12-07 07:36:31,111 INFO httpx: HTTP Request: POST http://x/v1/refunds \"HTTP/1.1 201 CREATED\"\n",
        );
        let first = "?2026-12-07T07:36:30.804Z #1";
        let next = "?2026-12-07T07:36:31.111Z #1";
        // Each request line is an attempt and its answer; the failure is tenacity's line.
        assert_eq!(calls(text), [first, first, first, first, first, next, next]);
        let p = parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap();
        let ends = (p.events.iter()).filter(|e| matches!(e.kind, EventKind::StepEnd(_)));
        assert_eq!(ends.count(), 2);
    }

    #[test]
    fn requests_after_a_tool_call_are_its_own() {
        let text = concat!(
            "2026-12-06 05:28:00,000 INFO httpx: HTTP Request: POST http://x/v1/refunds \"HTTP/1.1 503 Service Unavailable\"\n",
            "2026-12-06 05:28:01,000 INFO agent: agent run r1  step 2  tool=issue_refund  args={\"order\":\"A-1\"}\n",
            "2026-12-06 05:28:01,500 INFO httpx: HTTP Request: POST http://x/v1/refunds \"HTTP/1.1 201 Created\"\n",
        );
        // The 503 leaves the anonymous call open; the tool call's requests are still its own.
        let anonymous = "?2026-12-06T05:28:00.000Z #1";
        assert_eq!(calls(text), [anonymous, anonymous, "r1 #2", "r1 #2"]);
    }
}
