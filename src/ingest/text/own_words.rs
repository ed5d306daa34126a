//! Requests, answers, failures and tool calls in a program's own words, SPEC's fields as
//! `name=value` tokens among them ([`super::call_tokens`] finds the tokens): what a
//! developer writes with an f-string or a structured logger's text layout, and what JSON
//! lines without a `type` are read as ([`crate::ingest::jsonl`]'s untyped lines).

use super::fields::Fields;
use super::*;

impl TextParser {
    /// A request, answer or failure in a program's own words, SPEC's fields as tokens after
    /// them (`POST attempt=1 url=...`, `refund response status=201 Created refund_id=re_1`,
    /// `refund request failed error=...`, with `run` and `step` or a span's): what JSON
    /// lines without a `type` make ([`crate::ingest::jsonl`]'s untyped lines). An answer or a
    /// failure needs a call to belong to (its run and step, or an attempt of the open call),
    /// so that a service's own deliveries (`webhook failed attempt=2 status=500`) are none.
    pub(super) fn client_event_of_tokens(
        &mut self,
        f: &Fields,
    ) -> Result<Option<EventKind>, String> {
        let run = f.run();
        let attempt = f.token(b"attempt");
        // A call's own run and step, or a tool call whose step is still open: never an
        // anonymous call made of such lines (a service's own deliveries have attempts too).
        let named = run.is_some() && f.token(b"step").is_some();
        let open_step = self.process.current_call.is_some() && !self.process.client.over;
        if !named && !open_step {
            return Ok(None);
        }
        let of_a_call = named || attempt.is_some();
        if of_a_call && let Some((status, reason)) = f.token(b"status").and_then(status_line) {
            return self.response_line(status, reason, f).map(Some);
        }
        if of_a_call && let Some(error) = f.token(b"error").or_else(|| f.token(b"err")) {
            let (class, message) = exception_line(error).unwrap_or((b"", error));
            return self.failure_line(class, message, f).map(Some);
        }
        // The method alone (`POST attempt=1 url=...`), or the request in the words
        // (`Sending POST http://... attempt=1`).
        let head = f.plain[0];
        let named = (head.split(|&b| b == b' ').collect::<Vec<_>>())
            .windows(2)
            .find_map(|w| {
                http_request(&[w[0], b" ", w[1]].concat())
                    .is_some()
                    .then_some((w[0], w[1]))
            });
        let method = (one_blank::is_method(head).then_some(head))
            .or(named.map(|n| n.0))
            .or_else(|| f.token(b"method"));
        let url = (f.token(b"url").or_else(|| f.token(b"uri"))).or(named.map(|n| n.1));
        if let (Some(method), Some(url), Some(_)) = (method, url, attempt) {
            return self.attempt_line(method, url, f);
        }
        Ok(None)
    }

    /// A step's end in a program's own words, its run and step as tokens: `step ok
    /// run_id=7f3a step=4` (tracing's text layout of `info!(run_id, step, "step ok")`),
    /// `step failed run=r1 step=2 error=...`: SPEC's `agent run R  step N  ok` with the run
    /// and the step as fields ([`step_end_said`]). Only with both named: a step's words
    /// alone may be any program's.
    pub(super) fn step_end_of_tokens(&mut self, f: &Fields) -> Option<EventKind> {
        let first = f.plain.first()?;
        if !first.get(..5)?.eq_ignore_ascii_case(b"step ") {
            return None;
        }
        let split = f.words_then_tokens();
        let f = split.as_ref().unwrap_or(f);
        let ok = step_end_said(std::str::from_utf8(f.plain.first()?).ok()?)?;
        let (run, step) = (f.run()?, parse_u32(f.token(b"step")?)?);
        let call = CallRef {
            run: small(run),
            step,
            part: 0,
        };
        Some(self.step_end(call, ok, f.token(b"error").map(small)))
    }

    /// A tool call in a program's own words, its fields as tokens: `tool call run_id=r1
    /// step=4 tool=issue_refund args={...}` (SPEC's names, or `run_id`, `tool_name`,
    /// `arguments`). Only with a run, a step, a tool and arguments: a line naming a tool
    /// without them (its result, its end) is no call.
    pub(super) fn tool_call_of_tokens(
        &mut self,
        f: &Fields,
        at: Timestamp,
    ) -> Result<Option<EventKind>, String> {
        // A token of its own field, else one among the words of the message.
        let find = |name: &[u8]| {
            let own = f.token(name).map(|v| call_tokens::object_and_after(v).0);
            own.or_else(|| (f.plain.iter()).find_map(|field| call_tokens::token_in(field, name)))
                .or_else(|| {
                    // After an object that took the rest of its field as its value.
                    (f.tokens.iter()).find_map(|(_, v)| {
                        call_tokens::token_in(call_tokens::object_and_after(v).1, name)
                    })
                })
        };
        let either = |a: &[u8], b: &[u8]| find(a).or_else(|| find(b));
        let run = || super::fields::RUN_NAMES.iter().find_map(|name| find(name));
        // Most lines name no tool: one search of each field says so. A field of a few dozen
        // bytes is looked at four bytes a place: a searcher's set-up costs more there.
        static TOOL: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"tool"));
        let names_tool = |field: &&[u8]| match field.len() {
            0..64 => field.windows(4).any(|w| w == b"tool"),
            _ => TOOL.find(field).is_some(),
        };
        if !f.plain.iter().any(names_tool) && !f.tokens.iter().any(|(n, _)| names_tool(n)) {
            return Ok(None);
        }
        let Some(tool) = either(b"tool", b"tool_name") else {
            return Ok(None);
        };
        let (Some(run), Some(step)) = (run(), find(b"step")) else {
            return Ok(None);
        };
        let step = parse_u32(step).ok_or("step= is not a number")?;
        let call = CallRef {
            run: small(run),
            step,
            part: 0,
        };
        let Some(args) = either(b"args", b"arguments") else {
            // `tool call finished tool=... run_id=... step=2 status=ok`: the step's end.
            let ok = match find(b"status").map(<[u8]>::to_ascii_lowercase).as_deref() {
                Some(b"ok" | b"success" | b"succeeded" | b"done") => true,
                Some(b"failed" | b"failure" | b"error") => false,
                _ => return Ok(None),
            };
            return Ok(Some(self.step_end(call, ok, find(b"error").map(small))));
        };
        let python = (!args.starts_with(b"{\"")).then(|| call_tokens::python_as_json(args));
        match python.flatten() {
            Some(json) => self.tool_call(call, tool, Some(json.as_bytes()), at),
            None => self.tool_call(call, tool, Some(args), at),
        }
        .map(Some)
    }
}

/// How a message says its step ended, when it is only that: `step ok`, `step failed`,
/// `step 4 done` (SPEC §3.1's `step N  ok|failed` and the words programs use for them, any
/// case). `Some(true)` for success, `Some(false)` for failure; `None` for any other message
/// (`step 4 started`, `step ok but refund pending`). For text and JSON logs alike, whose
/// lines name the run and the step as fields.
pub(crate) fn step_end_said(message: &str) -> Option<bool> {
    let mut words = message.split_ascii_whitespace();
    if !words.next()?.eq_ignore_ascii_case("step") {
        return None;
    }
    let mut word = words.next()?;
    if word.bytes().all(|b| b.is_ascii_digit()) {
        word = words.next()?;
    }
    if words.next().is_some() {
        return None;
    }
    let word = word.trim_end_matches(['.', '!']).to_ascii_lowercase();
    match word.as_str() {
        "ok" | "succeeded" | "success" | "done" | "completed" | "finished" => Some(true),
        "failed" | "failure" | "errored" | "error" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::step_end_said;

    #[test]
    fn a_steps_end_is_known_by_its_words_alone() {
        for (message, ok) in [
            ("step ok", true),
            ("Step OK", true),
            ("step 4 done", true),
            ("step completed.", true),
            ("step failed", false),
            ("step 2 errored", false),
        ] {
            assert_eq!(step_end_said(message), Some(ok), "{message}");
        }
        for message in [
            "step",
            "step 4",
            "step started",
            "step ok but refund pending",
            "stepped ok",
            "next step ok",
            "step 4 of 5 done",
        ] {
            assert_eq!(step_end_said(message), None, "{message}");
        }
    }
}
