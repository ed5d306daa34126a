//! SPEC §3.1 messages inside another format's lines, read by a text log's reader.

use super::idle::Unsplit;
use super::retry_lines::StaminaRetry;
use super::{Local, TextParser, Verdict, level, tail};
use crate::event::{CallRef, EventKind};
use crate::ingest::ParseOptions;
use crate::ingest::lines::Ahead;
use crate::time::Timestamp;

/// Messages of another format's lines read as a text log's (`{"time": T, "msg": "agent run
/// 7f3a  step 4  tool=..."}`, Go's `slog` with SPEC §3.1 messages, is the line `T  agent run
/// 7f3a  step 4  tool=...`): one reader per input, which follows the calls its messages
/// name as a text log's reader does. Without it, such a trace was ignored line by line.
pub struct EmbeddedMessages(Box<TextParser>);

impl EmbeddedMessages {
    pub fn new(input: u32, opts: &ParseOptions) -> Self {
        // Every event kept: the format around the messages does its own filtering.
        let opts = ParseOptions {
            relevance: None,
            ..opts.clone()
        };
        EmbeddedMessages(Box::new(TextParser::new(input, &opts, false)))
    }

    /// Whether `msg` may be a SPEC §3.1 message of the agent's side (a tool call, a request,
    /// an answer, a failure): a word of capitals or digits first (`POST`, `201`, `Post
    /// "..."`, `TimeoutError: ...`), `agent run`, or an exception's dotted class
    /// (`httpx.ReadTimeout: ...`), or backon's retry as its `notify` hook logs it (`retrying
    /// reqwest::Error { ... } after 100ms`: read whole here, so no other `retrying ...`
    /// passes). An application's own words (`request received`) are turned away without
    /// reading them.
    pub fn may_read(msg: &[u8]) -> bool {
        let msg = msg.trim_ascii_start();
        let first_word = msg.split(|&b| b == b' ').next().unwrap_or_default();
        match msg.first() {
            Some(b) if b.is_ascii_uppercase() || b.is_ascii_digit() => true,
            _ => {
                msg.starts_with(b"agent run ")
                    || (first_word.ends_with(b":") && first_word.contains(&b'.'))
                    || super::retry_lines::backon_notified(msg.trim_ascii_end()).is_some()
            }
        }
    }

    /// The format around the messages dispatched `call` at `at` (a JSON line's tool call):
    /// the messages after it that name no call (a retry library's, an HTTP client's) are
    /// its, as a text trace's are its latest tool call's.
    pub fn follow_call(&mut self, call: &CallRef, at: Timestamp) {
        self.0.begin_call(call, at);
    }

    /// The format around the messages logged attempt `number` of `call`: an HTTP client's
    /// lines about it repeat it.
    pub fn attempt_logged(&mut self, call: &CallRef, number: u32) {
        self.0.last_attempt.insert(call.clone(), number);
    }

    /// The format around the messages ended `call`'s step: later messages are not its.
    pub fn call_ended(&mut self, call: &CallRef) {
        let _ = self.0.step_end(call.clone(), true, None);
    }

    /// stamina's retry as a structured logger writes it (structlog's JSON: `"event":
    /// "stamina.retry_scheduled"`), its fields as written (`caused_by`, a string's text;
    /// `callable`; `wait_for`, a number), at `at`: read as its console line is
    /// ([`super::retry_lines`]), the latest call's failure, its request sent again.
    pub fn stamina_retry(
        &mut self,
        at: Timestamp,
        [caused_by, callable, wait_for]: [Option<&[u8]>; 3],
    ) -> Option<(Timestamp, EventKind)> {
        self.begin_line(at);
        let retry = StaminaRetry::of_fields(caused_by, callable, wait_for);
        match self.0.stamina_event(at, retry)? {
            Verdict::Event(at, kind) => Some((at, kind)),
            _ => None,
        }
    }

    /// The reader's state for a line written at `at`, a record of its own.
    fn begin_line(&mut self, at: Timestamp) {
        let p = &mut self.0;
        p.process.tail = tail::Tail::AfterRecord { failed: false };
        p.line_at = at;
    }

    /// The events of line `n`'s message `msg`, written at `at`: none when it reads as no
    /// SPEC message (or a broken one: the line around it is what the input says it is).
    pub fn read(&mut self, n: u32, at: Timestamp, msg: &[u8]) -> Vec<(Timestamp, EventKind)> {
        self.begin_line(at);
        let p = &mut self.0;
        let span = 0..0;
        let unsplit = Unsplit {
            n,
            span: &span,
            at: Local { at, shift: 0 },
            dated: true,
            msg: level::without_level(msg.trim_ascii()),
        };
        match p.read_message(unsplit, Ahead::NONE) {
            Verdict::Event(at, kind) => vec![(at, kind)],
            Verdict::Events(events) => events,
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::EmbeddedMessages;

    #[test]
    fn backons_retry_is_read_and_other_lower_case_words_are_not() {
        let backon = br#"retrying reqwest::Error { kind: Request, url: "http://127.0.0.1:18981/v1/refunds", source: TimedOut } after 100ms"#;
        assert!(EmbeddedMessages::may_read(backon));
        for own in [
            &b"retrying in 5s"[..],
            b"retrying the refund after 100ms",
            b"retrying reqwest::Error { kind: Request } soon",
            b"request received",
            b"refund created refund_id=re_1",
        ] {
            assert!(
                !EmbeddedMessages::may_read(own),
                "{}",
                String::from_utf8_lossy(own)
            );
        }
    }
}
