//! The general reading of a message: every shape a line of any layout may have, tried in
//! turn, for the few lines in a thousand that the plain shapes ([`super::plain`]) do not
//! settle.

use super::effects::{self, effect_line};
use super::failures::{go_request_error, is_ruby_exception_class, prefixed_exception};
use super::retry_lines::{
    backoff_raised, backon_notified, resent_after, retried_function, tenacity_raised,
};
use super::*;

impl TextParser {
    // The general reading: a few lines in a thousand of a month come here. Kept out of
    // `message_line`, whose inlining of the plain shapes it otherwise crowds out.
    #[cold]
    pub(super) fn classify(&mut self, f: &Fields, at: Local) -> Result<Option<EventKind>, String> {
        let Some(first) = f.plain.first().copied() else {
            // Tokens alone (Go's `log.Printf("run=%s step=%d tool=%s args=%s", ...)`): a
            // tool call when they name one, else nothing.
            return self.tool_call_of_tokens(f, at.at);
        };
        // Four words or more in the first field (or three and a token), and nothing after
        // it: perhaps a line written with one blank between its fields ([`one_blank`]).
        let blanks = || first.iter().filter(|&&b| b == b' ').count();
        if f.plain.len() == 1
            && (blanks() >= 3 || (blanks() == 2 && memchr::memchr(b'=', first).is_some()))
            && let Some(spaced) = one_blank::respaced(first)
        {
            return self.classify(&Fields::split(&spaced), at);
        }
        // Node's `util.inspect` marks an error object that refers to itself: `<ref *1>
        // AxiosError: timeout of 1000ms exceeded`.
        let rest = crate::ingest::without_ref_mark(first);
        if rest.len() < first.len() {
            let mut fields = Fields::empty();
            fields.fill(rest);
            return self.classify(&fields, at);
        }
        if let Some(run) = first.strip_prefix(b"agent run ") {
            return self.agent_line(run.trim_ascii(), f, at.at);
        }
        if first == b"agent run" {
            return Err("`agent run` without a run id".into());
        }
        if let Some((method, url)) = http_request(first) {
            return self.attempt_line(method, url, f);
        }
        if let Some((status, text)) = status_line(first) {
            return self.response_line(status, text, f).map(Some);
        }
        // Java's `HttpRequest` and `HttpResponse` as they print (`URL METHOD`, `(METHOD URL)
        // STATUS`), inside a program's own words ([`java_http`]).
        if memchr::memmem::find(first, b"://").is_some()
            && let Some(spaced) = java_http::respaced(first)
        {
            return self.classify(&Fields::split(&spaced), at);
        }
        if let Some((class, message)) = exception_line(first) {
            return self.failure_line(class, message, f).map(Some);
        }
        if let Some(message) = go_request_error(first) {
            return self.failure_line(b"url.Error", message, f).map(Some);
        }
        if let Some((class, message)) = rust_error::request_error(first) {
            return self.failure_line(class, message, f).map(Some);
        }
        if let Some((class, message)) =
            (tenacity_raised(first).or_else(|| backoff_raised(first))).and_then(exception_line)
        {
            let (function, after) = (retried_function(first), resent_after(first));
            return self.retry_library_failure(class, message, f, function, after);
        }
        if let Some((class, message, after)) = backon_notified(first) {
            return self.retry_library_failure(class, message, f, None, Some(after));
        }
        if let Some((class, message)) = prefixed_exception(first, |w| self.names_current_tool(w)) {
            return self.failure_line(class, message, f).map(Some);
        }
        // `receipt email failed: execution expired (Net::OpenTimeout)`: another failure.
        if first.ends_with(b")")
            && let Some((class, message)) = ruby::trailing_exception(first, is_ruby_exception_class)
            && memchr::memmem::find(first, b": ")
                .is_none_or(|cut| words_about_a_failure(&first[..cut]) != Some(false))
        {
            return self.failure_line(class, message, f).map(Some);
        }
        if let Some(call) = self.tool_call_of_tokens(f, at.at)? {
            return Ok(Some(call));
        }
        if let Some(end) = self.step_end_of_tokens(f) {
            return Ok(Some(end));
        }
        if first.starts_with(b"Invoking tool ")
            && let Some(call) = self.framework_tool_call(at.at, first)
        {
            let (tool, args) = anonymous::invoked_tool(first).expect("read just now");
            return self.tool_call(call, tool, Some(args), at.at).map(Some);
        }
        let mut effect = effect_line(f, at, &mut self.dates, self.zone)?;
        if effect.is_none() {
            // One blank between tokens: read again with each word a field.
            if let Some(respaced) = f.respaced() {
                effect = effect_line(&respaced, at, &mut self.dates, self.zone)?;
            }
        }
        // One of Stripe's objects after the message ([`stripe_logged`]), read whole.
        if effect.is_none()
            && let Some(stripes) = self.stripe_object_on_line(f, at)
        {
            effect = stripes?;
        }
        if effect.is_none() {
            // An object after the message: its members are the tokens.
            if let Some(with_payload) = f.with_payload() {
                effect = effect_line(&with_payload, at, &mut self.dates, self.zone)?;
            }
        }
        if effect.is_none()
            && let Some(line) = prose::effect_of_sentence(first)
        {
            // A sentence (`Refund re_1 created for order A-1: 45.00 GBP`): its effect line.
            let mut rewritten = Fields::empty();
            rewritten.fill(&line);
            effect = effect_line(&rewritten, at, &mut self.dates, self.zone)?;
        }
        // The client's own words for the effect its answer just named.
        if let Some(told) = self.effect_told(effect.as_ref(), first) {
            return Ok(Some(told));
        }
        if effect.is_none()
            && let Some(replay) = effects::replay_line(f)
        {
            return Ok(Some(EventKind::Replay(Box::new(replay))));
        }
        if effect.is_none()
            && let Some(split) = f.words_then_tokens()
        {
            return self.client_event_of_tokens(&split);
        }
        Ok(effect.map(|e| EventKind::Effect(Box::new(e))))
    }
}
