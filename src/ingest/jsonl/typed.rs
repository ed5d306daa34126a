//! A line of SPEC §3.2's events: its `type` says which, and what it needs.

use super::{Fields, Line, State, logged_key, stripe};
use crate::classify::{classify_failure, classify_status};
use crate::event::{
    ARGS_TOO_DEEP, Attempt, Attrs, EventKind, Failure, Lifecycle, Response, RunEvent, StepEnd,
    Text, ToolCall, args_nest_too_deep,
};
use crate::ingest::{ParseOptions, json_why};
use serde::de::IgnoredAny;
use serde_json::Value;

impl State {
    /// The event of type `ty` that the line's fields `f` describe.
    pub(super) fn typed_event(
        &mut self,
        ty: &str,
        f: &Fields,
        text: &str,
        opts: &ParseOptions,
    ) -> Result<Line, String> {
        self.typed = true;
        // An effect's own time, read before its settlement's, which is dated from it.
        let mut effect_at = None;
        let kind = match ty {
            "tool_call" => {
                let call = f.call()?.ok_or("a tool_call needs `run` and `step`")?;
                let tool = f.str("tool")?.ok_or("a tool_call needs `tool`")?;
                // Checked here without building them: correlation parses the calls it keeps.
                let args_raw = match f.get("args") {
                    None => "{}".to_string(),
                    // Arguments logged as a JSON string (as model APIs return them).
                    Some(r) if r.starts_with('"') => {
                        let s: String = serde_json::from_str(r)
                            .map_err(|e| format!("`args` is not JSON: {}", json_why(&e)))?;
                        serde_json::from_str::<IgnoredAny>(&s).map_err(|e| {
                            format!("`args` is a string but not JSON: {}", json_why(&e))
                        })?;
                        s
                    }
                    // As written, so rules can see its spelling (`4500.0`, key order).
                    Some(r) => r.to_string(),
                };
                if args_nest_too_deep(args_raw.as_bytes()) {
                    return Err(ARGS_TOO_DEEP.into());
                }
                self.last_call = Some(call.clone());
                EventKind::ToolCall(Box::new(ToolCall {
                    call,
                    tool: Text::from(&*tool),
                    args_raw: args_raw.into(),
                    args: Value::Null,
                }))
            }
            "attempt" => EventKind::Attempt(Box::new(Attempt {
                call: self.client_call(f)?,
                number: f
                    .uint("attempt")?
                    .filter(|&n| n >= 1)
                    .ok_or("an attempt needs `attempt` (1, 2, ...)")?,
                method: f.string("method")?,
                url: f.string("url")?,
                key: f.string("idempotency_key")?.and_then(logged_key),
                key_unseen: false,
                placed: false,
            })),
            "failure" => {
                // A code may be a number (a DOMException's `code`, 23 for a timeout): the
                // message then says what happened.
                let error = f.id("error")?.unwrap_or_default();
                let message = f.string("message")?.unwrap_or_default();
                if error.is_empty() && message.is_empty() {
                    return Err("a failure needs `error` or `message`".into());
                }
                EventKind::Failure(Box::new(Failure {
                    call: self.client_call(f)?,
                    attempt: f.uint("attempt")?,
                    class: classify_failure(&error, &message),
                    error,
                    message,
                    raised_in: None,
                    resent_after: None,
                }))
            }
            "response" => {
                let status = f
                    .uint("status")?
                    .filter(|s| (100..600).contains(s))
                    .ok_or("a response needs `status` (an HTTP status code)")?
                    as u16;
                EventKind::Response(Box::new(Response {
                    call: self.client_call(f)?,
                    attempt: f.uint("attempt")?,
                    status,
                    class: classify_status(status),
                    effect_id: f.string("effect_id")?,
                    replayed: f.bool("replayed")?.unwrap_or(false),
                    amount: f.money()?,
                    message: f.string("message")?.unwrap_or_default(),
                }))
            }
            "step_end" => {
                let call = self
                    .client_call(f)?
                    .ok_or("a step_end needs `run` and `step`")?;
                let status = f.str("status")?.ok_or("a step_end needs `status`")?;
                EventKind::StepEnd(Box::new(StepEnd {
                    call,
                    ok: matches!(
                        status.as_ref(),
                        "ok" | "success" | "succeeded" | "completed"
                    ),
                    error: f.string("error")?,
                }))
            }
            "run" => {
                let run = f.id("run")?.ok_or("a run event needs `run`")?;
                let what = match f.str("event")?.ok_or("a run event needs `event`")?.as_ref() {
                    "started" => Lifecycle::Started,
                    "crashed" => Lifecycle::Crashed,
                    "resumed" => Lifecycle::Resumed,
                    // `completed`, `paused`...: real but nothing correlation needs.
                    _ => return Ok(None),
                };
                EventKind::Run(Box::new(RunEvent { run, what }))
            }
            "effect" => {
                let id = f.id("effect_id")?.ok_or("an effect needs `effect_id`")?;
                let kind = f
                    .str("kind")?
                    .ok_or("an effect needs `kind` (refund, charge...)")?;
                let (at, effect) = self.effect(f, opts, id, &kind, None)?;
                effect_at = Some(at);
                effect
            }
            // Stripe's event of a refund (charge...) or the object itself (a payout's `type`
            // is its destination's): the effect. Any other type, `healthcheck`, `log`...: a
            // line of the log, not an event of the audit.
            _ => {
                return match stripe::effect_line(text)? {
                    Some(effect) => self.text_line(&effect, opts),
                    None => Ok(None),
                };
            }
        };
        let at = match effect_at {
            Some(at) => at,
            None => self.stamp(f, opts)?,
        };
        self.follow(&kind);
        // Once every field the event reads has been read: the rest are its attributes.
        let attrs = if opts.keep_attrs {
            f.attrs()
        } else {
            Attrs::new()
        };
        Ok(Some((at, kind, attrs)))
    }
}
