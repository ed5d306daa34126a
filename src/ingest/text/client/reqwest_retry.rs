//! The line Rust's reqwest-retry logs (through `tracing`, WARN by default, target
//! `reqwest_retry::middleware`) when its `RetryTransientMiddleware` sends a request again:
//! `Retry attempt #0. Sleeping 9.234692ms before the next attempt` (the number counts the
//! retries before this one, from 0; the wait is Rust's `Debug` of a `Duration`). It names
//! neither the request nor why: the middleware retries a timeout, a connection error and
//! the statuses 408, 429 and 5xx, and reqwest logs no request of its own. The request sent
//! again is a clone of the one that failed, headers and all: a key set on it before the
//! middleware (`.header("Idempotency-Key", ...)` on the `RequestBuilder`) is sent again.
//! tracing's text layout writes the span the program was in before the message and the
//! text reader puts that span's fields after it (`  run="7f3a" step=4`): they may follow.

use super::shapes::{ClientLine, split_once};
use super::{InDispatch, Sent, TextParser, Verdict};
use crate::classify::FailureClass;
use crate::event::{EventKind, Failure, Text};
use crate::time::Duration;

/// The line above, or `None`.
pub(super) fn read(msg: &[u8]) -> Option<ClientLine<'_>> {
    let rest = msg.strip_prefix(b"Retry attempt #")?;
    let (number, rest) = split_once(rest, b". Sleeping ")?;
    let counted = !number.is_empty() && number.iter().all(u8::is_ascii_digit);
    let (wait, tail) = split_once(rest, b" before the next attempt")?;
    // Nothing after it but the fields of the spans the text reader put there.
    let alone = tail.is_empty() || tail.starts_with(b"  ");
    (counted && alone && !wait.is_empty()).then_some(())?;
    Some(ClientLine::MiddlewareRetry {
        after: super::retryablehttp::go_duration(wait)?,
    })
}

impl TextParser {
    /// [`ClientLine::MiddlewareRetry`]: the dispatch's request sent last failed and is sent
    /// again, the same headers, `after` the wait. When a line gave that request (the
    /// program's own `POST url=...` before `send()`), it is read as a Stainless SDK's
    /// unnamed retry: its unlogged failure, and the resend with its method, URL and key.
    /// Else the request is in no line (reqwest logs none): the failure of a request
    /// correlation implies, sent again after the wait, as a retry library's line is read
    /// (its key unknown, as no line showed it).
    pub(super) fn middleware_retry(
        &mut self,
        InDispatch { call, since, at }: InDispatch,
        after: Duration,
    ) -> Option<Verdict> {
        if std::mem::take(&mut self.process.client.read_in_flight) {
            // A read was sent last: its retry changes nothing.
            return Some(Verdict::Ignored);
        }
        if self.process.client.last_retryable().is_some() {
            let events = self.sdk_retry(&call, None, after, at, since)?;
            return self.read_as_latest(at, Verdict::Events(events));
        }
        self.note_outcome(&Some(call.clone()), None, None);
        let failure = Failure {
            call: Some(call),
            attempt: None,
            class: FailureClass::Ambiguous,
            error: Text::from_static_str("unlogged failure"),
            message: Text::from_static_str(
                "reqwest-retry sent the request again without naming the error",
            ),
            raised_in: None,
            resent_after: Some(after),
        };
        self.read_as_latest(
            at,
            Verdict::Event(at, EventKind::Failure(Box::new(failure))),
        )
    }
}

impl super::ClientLog {
    /// The request sent last, when a client that sends one at a time retries it next: no
    /// answer yet, or one a client retries (408, 409, 429, 5xx); none while calls overlap
    /// or retries that named no request wait for theirs ([`super::stainless::Unnamed`]).
    pub(super) fn last_retryable(&mut self) -> Option<&mut Sent> {
        if self.overlapping || !self.unnamed.is_empty() {
            return None;
        }
        self.sent.last_mut().filter(|s| s.may_be_retried())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{run, shown};
    use super::*;

    /// A line of tracing-subscriber's default layout (no colour codes) at `t` seconds past
    /// 15:53:37, in the tool's span when `in_span`.
    fn traced(t: &str, level: &str, in_span: bool, target: &str, msg: &str) -> String {
        let span = match in_span {
            true => r#"issue_refund{run="7f3a" step=4 keyed=false}: "#,
            false => "",
        };
        format!("2026-12-07T15:53:{t}Z {level} {span}{target}: {msg}")
    }

    const TOOL: &str = r#"tool call run_id=7f3a step=4 tool="issue_refund" args={"amount_minor":4500,"currency":"GBP","order":"A-88214"}"#;
    const URL: &str = "http://127.0.0.1:18981/v1/refunds";
    const RETRY: &str = "Retry attempt #0. Sleeping 9.234692ms before the next attempt";
    const ANSWER: &str = "refund response status=201 Created refund_id=re_5d370275217144";
    /// The step's end as SPEC §3.1 writes it (the fixtures' agent writes `step ok run_id=...
    /// step=4`, its own words, which end no step).
    const END: &str = "agent run 7f3a  step 4  ok";

    /// The tool's call, `lines` (time, level, target, message; in the tool's span) and its
    /// step's end, read.
    fn call(lines: &[(&str, &str, &str, &str)]) -> crate::ingest::Parsed {
        let mut all = vec![traced("37.102168", " INFO", false, "agent", TOOL)];
        for (t, level, target, msg) in lines {
            all.push(traced(t, level, true, target, msg));
        }
        all.push(traced("37.416645", " INFO", false, "agent", END));
        run(&all.join("\n"))
    }

    /// The program logs its request once before `send()`: the retry line is that request's
    /// unlogged failure and its resend after the wait, the same key (none logged: unknown;
    /// logged: the same, as the middleware clones the request's headers).
    #[test]
    fn a_retry_after_the_programs_request_is_its_failure_and_resend() {
        let post = format!("POST url={URL}");
        let p = call(&[
            ("37.102363", " INFO", "agent::tools", &post),
            ("37.403701", " WARN", "reqwest_retry::middleware", RETRY),
            ("37.416565", " INFO", "agent::tools", ANSWER),
        ]);
        assert_eq!(
            shown(&p),
            [
                "1 tool 4".to_string(),
                format!("2 attempt 1 POST {URL} key=-"),
                "3 failure 1 unlogged failure Ambiguous".into(),
                format!("3 attempt 2 POST {URL} key=-"),
                "4 response 2 201".into(),
                "5 end 4".into(),
            ]
        );
        assert!(matches!(&p.events[1].kind, EventKind::Attempt(a) if a.key_unseen));
        assert_eq!(
            p.events[3].at.0 - p.events[2].at.0,
            9_234_692,
            "sent after the wait"
        );
        let keyed = format!("POST url={URL} idempotency_key=f7259779-5ae1");
        let p = call(&[
            ("37.102363", " INFO", "agent::tools", &keyed),
            ("37.403701", " WARN", "reqwest_retry::middleware", RETRY),
        ]);
        let keys: Vec<_> = (p.events.iter())
            .filter_map(|e| match &e.kind {
                EventKind::Attempt(a) => Some(a.key.as_deref()),
                _ => None,
            })
            .collect();
        assert_eq!(keys, [Some("f7259779-5ae1"), Some("f7259779-5ae1")]);
    }

    /// No line gave the request (reqwest logs none, nor did the program): the retry line is
    /// the failure of a request correlation implies, sent again after the wait, as a retry
    /// library's line is read; the client's connection lines at DEBUG are no requests.
    #[test]
    fn a_retry_with_no_request_logged_is_a_failure_sent_again() {
        let p = call(&[
            (
                "36.898833",
                "DEBUG",
                "reqwest::connect",
                r#"starting new connection 'Some("127.0.0.1")'"#,
            ),
            (
                "36.898885",
                "DEBUG",
                "hyper_util::client::legacy::connect::http",
                "connecting to 127.0.0.1:18984",
            ),
            ("37.403701", " WARN", "reqwest_retry::middleware", RETRY),
            (
                "37.404000",
                "DEBUG",
                "hyper_util::client::legacy::pool",
                r#"pooling idle connection for ("http", 127.0.0.1:18984)"#,
            ),
            ("37.416565", " INFO", "agent::tools", ANSWER),
        ]);
        assert_eq!(
            shown(&p),
            [
                "1 tool 4",
                "4 failure 0 unlogged failure Ambiguous",
                "6 response 0 201",
                "7 end 4"
            ]
        );
        let EventKind::Failure(failure) = &p.events[1].kind else {
            unreachable!()
        };
        assert_eq!(failure.resent_after, Some(Duration(9_234_692)));
        assert_eq!(p.stats.skipped, 0);
    }

    /// Not the tool's: a retry after its step ended, or of a read sent last; a request
    /// logged with no tool call open is still a line without its number.
    #[test]
    fn a_retry_of_no_request_of_the_tools_is_nothing() {
        let after_end = [
            traced("37.102168", " INFO", false, "agent", TOOL),
            traced("37.416645", " INFO", false, "agent", END),
            traced(
                "37.503701",
                " WARN",
                true,
                "reqwest_retry::middleware",
                RETRY,
            ),
        ];
        assert_eq!(shown(&run(&after_end.join("\n"))), ["1 tool 4", "2 end 4"]);
        let read = format!("GET url={URL}?order=A-88214");
        let p = call(&[
            ("37.102363", " INFO", "agent::tools", &read),
            ("37.403701", " WARN", "reqwest_retry::middleware", RETRY),
        ]);
        assert_eq!(shown(&p), ["1 tool 4", "4 end 4"]);
        let alone = traced(
            "37.102363",
            " INFO",
            false,
            "agent",
            &format!("POST url={URL}"),
        );
        let p = run(&alone);
        assert_eq!((p.events.len(), p.stats.skipped), (0, 1));
    }

    #[test]
    fn the_middlewares_line_and_its_wait_are_read() {
        let after = |msg: &str| match read(msg.as_bytes()) {
            Some(ClientLine::MiddlewareRetry { after }) => Some(after),
            _ => None,
        };
        assert_eq!(
            after("Retry attempt #0. Sleeping 9.234692ms before the next attempt"),
            Some(Duration(9_234_692))
        );
        assert_eq!(
            after("Retry attempt #2. Sleeping 1.5s before the next attempt"),
            Some(Duration(1_500_000_000))
        );
        assert_eq!(
            after("Retry attempt #1. Sleeping 250µs before the next attempt"),
            Some(Duration(250_000))
        );
        // The fields of the span it was logged in, put after the message.
        assert_eq!(
            after(r#"Retry attempt #0. Sleeping 0ns before the next attempt  run="7f3a" step=4"#),
            Some(Duration(0))
        );
    }

    #[test]
    fn other_words_are_no_such_line() {
        for other in [
            "Retry attempt #0. Sleeping before the next attempt",
            "Retry attempt #x. Sleeping 1s before the next attempt",
            "Retry attempt #1. Sleeping 1 second before the next attempt",
            "Retry attempt #1. Sleeping 1s before the next attempt, said the agent",
            "Retry attempt 1. Sleeping 1s before the next attempt",
            "Retry attempt #1 failed",
        ] {
            assert!(read(other.as_bytes()).is_none(), "{other}");
        }
    }
}
