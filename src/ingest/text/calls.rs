//! The agent's side of a text trace: a tool call and its step's end, the attempts its HTTP
//! client logs, their answers and failures; each tied to the call it belongs to.

use super::fields::Fields;
use super::*;

impl TextParser {
    /// `agent run ID  step N  tool=...  args=...`, `... step N  ok|failed`, `... started`.
    pub(super) fn agent_line(
        &mut self,
        run: &[u8],
        f: &Fields,
        at: Timestamp,
    ) -> Result<Option<EventKind>, String> {
        if run.is_empty() || run.contains(&b' ') {
            return Err("`agent run` without a run id".into());
        }
        let run = small(run);
        let Some(second) = f.plain.get(1).copied() else {
            return Ok(None);
        };
        let lifecycle = match second {
            b"started" => Some(Lifecycle::Started),
            b"crashed" => Some(Lifecycle::Crashed),
            b"resumed" => Some(Lifecycle::Resumed),
            _ => None,
        };
        if let Some(what) = lifecycle {
            return Ok(Some(EventKind::Run(Box::new(RunEvent { run, what }))));
        }
        let Some(step) = second.strip_prefix(b"step ") else {
            return Ok(None);
        };
        let step = parse_u32(step.trim_ascii()).ok_or("step is not a number")?;
        let call = CallRef { run, step, part: 0 };
        if let Some(tool) = f.token(b"tool") {
            return self.tool_call(call, tool, f.token(b"args"), at).map(Some);
        }
        let ok = match f.plain.get(2).copied() {
            Some(b"ok") => true,
            Some(b"failed") => false,
            _ => return Ok(None),
        };
        Ok(Some(self.step_end(call, ok, f.token(b"error").map(small))))
    }

    pub(super) fn step_end(&mut self, call: CallRef, ok: bool, error: Option<Text>) -> EventKind {
        // The step is over: a month of calls must not pile up here.
        self.last_attempt.remove(&call);
        if self.process.current_call.as_ref() == Some(&call) {
            // Its HTTP client's later lines are not its requests.
            self.process.client.end_dispatch();
        }
        EventKind::StepEnd(Box::new(StepEnd { call, ok, error }))
    }

    /// A tool call of `call` at `at`, with its tool and its arguments as written.
    pub(super) fn tool_call(
        &mut self,
        call: CallRef,
        tool: &[u8],
        raw: Option<&[u8]>,
        at: Timestamp,
    ) -> Result<EventKind, String> {
        if tool.is_empty() {
            return Err("tool call with an empty `tool=`".into());
        }
        // No default: the arguments are part of the logical call and of its key.
        let raw = raw.ok_or("tool call without `args=`")?;
        // Checked here without building them: correlation parses the calls it keeps.
        if !is_flat_object(raw) {
            serde_json::from_slice::<IgnoredAny>(raw)
                .or_else(|_| serde_json::from_str::<IgnoredAny>(&String::from_utf8_lossy(raw)))
                .map_err(|e| {
                    format!(
                        "tool call args are not JSON: {}",
                        crate::ingest::json_why(&e)
                    )
                })?;
            if args_nest_too_deep(raw) {
                return Err(ARGS_TOO_DEEP.into());
            }
        }
        self.begin_call(&call, at);
        let tool = small(tool);
        self.process.call_tool = Some((call.clone(), tool.clone()));
        Ok(EventKind::ToolCall(Box::new(ToolCall {
            call,
            tool,
            args_raw: small(raw),
            args: serde_json::Value::Null,
        })))
    }

    /// Whether the program's `words` say the current call's tool failed (`issue_refund
    /// failed`, `issue_refund call failed`): a failure so told is the call's, though no word
    /// says a request. The tool must be the words' subject, whole.
    pub(super) fn names_current_tool(&self, words: &[u8]) -> bool {
        let (Some((call, tool)), Some(current)) =
            (&self.process.call_tool, &self.process.current_call)
        else {
            return false;
        };
        let Some(rest) = words.trim_ascii().strip_prefix(tool.as_bytes()) else {
            return false;
        };
        let rest = rest.strip_prefix(b" call").unwrap_or(rest);
        let said = [&b" failed"[..], b" error", b" errored", b" raised"];
        call == current && said.iter().any(|w| rest.starts_with(w))
    }

    /// The input's end: the events of each call that stood in for one not yet named (a
    /// Celery pool process's task, a Dramatiq thread's message) given the call it was.
    pub(super) fn rename_calls(&mut self, renamed: &rustc_hash::FxHashMap<CallRef, CallRef>) {
        let out = &mut self.out;
        for e in out.events.iter_mut().chain(out.sealed.iter_mut().flatten()) {
            if let Some(call) = e.kind.call_mut()
                && let Some(named) = renamed.get(call)
            {
                *call = named.clone();
            }
        }
    }

    /// `call` was dispatched at `at`: the client lines after it that name no call are its.
    pub(super) fn begin_call(&mut self, call: &CallRef, at: Timestamp) {
        self.process.current_call = Some(call.clone());
        self.named_call();
        self.last_attempt.remove(call);
        self.process.client.new_dispatch(at);
    }

    /// The call a client line belongs to: `run=`/`step=` tokens, else the latest tool call.
    fn call_of(&self, f: &Fields) -> Result<Option<CallRef>, String> {
        let run = f.run().map(small);
        let step = match f.token(b"step") {
            Some(s) => Some(parse_u32(s).ok_or("step= is not a number")?),
            None => None,
        };
        let current =
            (self.process.current_call.as_ref()).filter(|_| !self.anonymous_expired(self.line_at));
        Ok(match (run, step) {
            (Some(run), Some(step)) => Some(CallRef { run, step, part: 0 }),
            (Some(run), None) => current.filter(|c| c.run == run).cloned(),
            (None, Some(step)) => current.map(|c| CallRef {
                run: c.run.clone(),
                step,
                part: 0,
            }),
            (None, None) => current.cloned(),
        })
    }

    /// A request: its number is `(attempt N)` (SPEC §3.1), or an `attempt=N` token as
    /// key=value logs write it. Without one, in a tool call's open dispatch, the program's
    /// words for the request it sends ([`Self::unnumbered_request`]).
    pub(super) fn attempt_line(
        &mut self,
        method: &[u8],
        url: &[u8],
        f: &Fields,
    ) -> Result<Option<EventKind>, String> {
        let number = f
            .plain
            .iter()
            .find_map(|p| {
                p.strip_prefix(b"(attempt ")
                    .and_then(|r| r.strip_suffix(b")"))
            })
            .or_else(|| f.token(b"attempt"));
        let Some(number) = number else {
            let open = (self.process.current_call.clone()).filter(|_| !self.process.client.over);
            let call = self.call_of(f)?;
            return match open.filter(|c| call.as_ref().is_none_or(|named| named == c)) {
                Some(c) => Ok(self.unnumbered_request(&c, method, url, f.idempotency_key())),
                None => Err("request line has no `(attempt N)` nor `attempt=N`".into()),
            };
        };
        let number = parse_u32(number.trim_ascii()).ok_or("attempt number is not a number")?;
        let call = match self.call_of(f)? {
            Some(call) => Some(call),
            None => self.call_or_anonymous(self.line_at),
        };
        if self.repeats_client_line(&call, number, url) {
            return Ok(None);
        }
        Ok(Some(self.attempt(
            call,
            number,
            method,
            url,
            f.idempotency_key(),
        )))
    }

    /// Attempt `number` of `call` (the last one it made, for the lines that follow).
    pub(super) fn attempt(
        &mut self,
        call: Option<CallRef>,
        number: u32,
        method: &[u8],
        url: &[u8],
        key: Option<&[u8]>,
    ) -> EventKind {
        if let Some(c) = &call {
            // One lookup: a call's first attempt (most calls make one) is a new entry.
            self.last_attempt.insert(c.clone(), number);
        }
        EventKind::Attempt(Box::new(Attempt {
            call,
            number,
            method: Some(small(method)),
            url: Some(match as_text(url) {
                Some(url) => self.urls.get(url),
                None => small(url),
            }),
            key: key.map(small),
            key_unseen: false,
            placed: false,
        }))
    }

    fn current_attempt(&self, call: &Option<CallRef>) -> Option<u32> {
        call.as_ref()
            .and_then(|c| self.last_attempt.get(c).copied())
    }

    pub(super) fn response_line(
        &mut self,
        status: u16,
        status_text: &[u8],
        f: &Fields,
    ) -> Result<EventKind, String> {
        let call = match self.call_of(f)? {
            Some(call) => Some(call),
            None => self.call_or_anonymous(self.line_at),
        };
        let effect_id = EFFECT_ID_TOKENS
            .iter()
            .find_map(|name| f.token(name.as_bytes()));
        let mut message = small(status_text);
        if let Some(err) = f.token(b"error") {
            message = format!("{message} {}", text(err)).trim().into();
        }
        for extra in f.plain.iter().skip(1) {
            message = format!("{message} {}", text(extra)).trim().into();
        }
        let replayed = f
            .token(b"replayed")
            .is_some_and(|v| v.eq_ignore_ascii_case(b"true"));
        let answer = self.response(call, status, effect_id, replayed, amount_of(f)?, message);
        self.answered(status);
        Ok(answer)
    }

    /// The answer `status` to `call`'s latest attempt.
    pub(super) fn response(
        &mut self,
        call: Option<CallRef>,
        status: u16,
        effect_id: Option<&[u8]>,
        replayed: bool,
        amount: Option<Money>,
        message: Text,
    ) -> EventKind {
        let attempt = self.current_attempt(&call);
        self.note_outcome(&call, attempt, Some(status));
        EventKind::Response(Box::new(Response {
            attempt,
            call,
            status,
            class: classify_status(status),
            effect_id: effect_id.map(small),
            replayed,
            amount,
            message,
        }))
    }

    pub(super) fn failure_line(
        &mut self,
        class: &[u8],
        message: &[u8],
        f: &Fields,
    ) -> Result<EventKind, String> {
        let call = self.call_of(f)?;
        let error = small(class);
        // Free text after the first field is still the exception's message
        // (`...: Read timed out.  (read timeout=10)`).
        let mut message = small(message);
        if f.plain.len() > 1 {
            let mut joined = String::from(message.as_str());
            for extra in f.plain.iter().skip(1) {
                if !joined.is_empty() {
                    joined.push_str("  ");
                }
                joined.push_str(&text(extra));
            }
            message = joined.into();
        }
        let attempt = self.current_attempt(&call);
        self.note_outcome(&call, attempt, None);
        self.process.tail.record_failed();
        Ok(EventKind::Failure(Box::new(Failure {
            attempt,
            call,
            class: classify_failure(&error, &message),
            error,
            message,
            raised_in: None,
            resent_after: None,
        })))
    }
}
