//! A logger's JSON or logfmt lines that name no call, read as the latest tool call's while
//! its step is open (pino's and structlog's agents put the run and step on the tool's
//! lines only): its requests, their failures and answers, go-retryablehttp's resend; and
//! what the reader of the lines' messages learns of that call.

use super::untyped;
use super::{Fields, Line, State};
use crate::event::{Attempt, Attrs, EventKind, Response, Text};
use crate::ingest::ParseOptions;
use crate::ingest::text::EmbeddedMessages;

impl State {
    /// The number the latest tool call's next attempt would have, while its step is open.
    pub(super) fn next_number(&self) -> Option<u32> {
        (self.call_open && self.last_call.is_some()).then_some(self.last_number + 1)
    }

    /// Keeps up with the latest tool call: whether its step is open, its last attempt.
    pub(super) fn follow(&mut self, kind: &EventKind) {
        match kind {
            EventKind::ToolCall(_) => (self.call_open, self.last_number) = (true, 0),
            EventKind::Attempt(a) if a.call.is_some() && a.call == self.last_call => {
                self.last_number = self.last_number.max(a.number);
            }
            EventKind::StepEnd(s) if Some(&s.call) == self.last_call.as_ref() => {
                self.call_open = false;
            }
            _ => {}
        }
    }

    /// A logger's line with a message and no SPEC field, logged while the latest tool
    /// call's step is open, that is its request, answer or failure ([`untyped::typed`]):
    /// pino's `{"method":"POST","url":...,"msg":"refund request"}`. Only a line with a
    /// field such events have is parsed again.
    pub(super) fn of_open_call(
        &mut self,
        text: &str,
        f: &Fields,
        opts: &ParseOptions,
    ) -> Option<Result<Line, String>> {
        // A typed trace's debug lines say again what its events say.
        if self.typed {
            return None;
        }
        let next = self.next_number()?;
        if text.contains("\"request\"")
            && let Some(resent) = untyped::resent_request(text)
        {
            return Some(self.resent(f, opts, resent, next));
        }
        let fields = ["method", "url", "status", "error"];
        let named = fields.iter().any(|k| f.get(k).is_some()) || text.contains("\"err\"");
        if !named && !untyped::may_say_a_client_failure(text) {
            return None;
        }
        if untyped::names_a_foreign_request(text) {
            self.foreign_request = true;
            return Some(Ok(None));
        }
        let typed = untyped::typed(text, Some(next))?;
        let line = self.untyped_line(&typed, opts);
        match &line {
            Ok(Some((_, EventKind::Response(_), _))) if self.foreign_request => {
                self.foreign_request = false;
                return Some(Ok(None));
            }
            Ok(Some((_, EventKind::Attempt(_), _))) => self.foreign_request = false,
            _ => {}
        }
        Some(line)
    }

    /// A line given the `type` its fields make ([`untyped::typed`]), read as a typed one
    /// without making the file a typed trace, and told to the reader of the messages.
    pub(super) fn untyped_line(
        &mut self,
        typed: &str,
        opts: &ParseOptions,
    ) -> Result<Line, String> {
        let was_typed = self.typed;
        let line = self.text_line(typed, opts);
        self.typed = was_typed;
        if let Ok(Some((at, kind, _))) = &line {
            self.tell_messages(kind, *at, opts);
        }
        line
    }

    /// The latest tool call's request sent again (go-retryablehttp's `retrying request`):
    /// the answer the line names, if any, to its latest attempt, and its next attempt.
    fn resent(
        &mut self,
        f: &Fields,
        opts: &ParseOptions,
        (method, url, status): (String, String, Option<u16>),
        next: u32,
    ) -> Result<Line, String> {
        let at = self.stamp(f, opts)?;
        let call = self.last_call.clone().ok_or("no tool call")?;
        let attempt = EventKind::Attempt(Box::new(Attempt {
            call: Some(call.clone()),
            number: next,
            method: Some(method.as_str().into()),
            url: Some(url.as_str().into()),
            key: None,
            // A retry library's line shows no header.
            key_unseen: true,
            placed: false,
        }));
        self.follow(&attempt);
        self.tell_messages(&attempt, at, opts);
        let answer = status.filter(|_| next > 1).map(|status| {
            let answer = Response::status_only(call, next - 1, status, Text::default());
            EventKind::Response(Box::new(answer))
        });
        Ok(Some(match answer {
            Some(answer) => {
                self.more.push((at, attempt));
                (at, answer, Attrs::new())
            }
            None => (at, attempt, Attrs::new()),
        }))
    }

    /// A tool call or a step's end read from a logger's fields (SPEC's without `type`),
    /// told to the reader of the messages: a retry library's or an HTTP client's message
    /// after a tool call names no call (structlog's `Retrying ... as it raised
    /// ReadTimeout`), and is that call's. (A typed trace's messages are not read.)
    pub(super) fn tell_messages(
        &mut self,
        kind: &EventKind,
        at: crate::time::Timestamp,
        opts: &ParseOptions,
    ) {
        let input = self.input;
        let reader = (self.embedded).get_or_insert_with(|| EmbeddedMessages::new(input, opts));
        match kind {
            EventKind::ToolCall(t) => reader.follow_call(&t.call, at),
            EventKind::StepEnd(s) => reader.call_ended(&s.call),
            // The program numbers its requests: an HTTP client's lines repeat them.
            EventKind::Attempt(a) => {
                if let Some(call) = &a.call {
                    reader.attempt_logged(call, a.number);
                }
            }
            _ => {}
        }
    }
}

/// A message that is an HTTP method alone, the URL a field of the line (tracing's JSON of
/// `info!(%url, "POST")`): the request as the text reader reads it, `POST url=...`, with
/// the line's `idempotency_key` when it has one. A request the program logs so names no
/// number: the reader takes it for its call's next ([`EmbeddedMessages`]).
pub(super) fn method_with_url(message: &str, f: &Fields) -> Option<String> {
    crate::event::HTTP_METHODS
        .contains(&message.as_bytes())
        .then_some(())?;
    let url = f.str("url").ok()??;
    if url.contains(char::is_whitespace) {
        return None;
    }
    let key = f.str("idempotency_key").ok().flatten();
    let key = key.filter(|k| !k.is_empty() && !k.contains(char::is_whitespace));
    Some(match key {
        Some(key) => format!("{message} url={url}  idempotency_key={key}"),
        None => format!("{message} url={url}"),
    })
}
