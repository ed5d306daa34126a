//! A JSON line without SPEC §3.2's `type`: an application's own log line (a message,
//! its context), which may still say that an effect happened or stand for an event.

use super::{
    EVENT_ONLY, Fields, Line, STAMP_NAMES, State, logged, nested, read_raw, stripe, untyped,
};
use crate::event::{Attrs, state_means_not_happened};
use crate::ingest::ParseOptions;

impl State {
    /// The line's events, if its message or fields name one; no event for a logger's
    /// own line.
    pub(super) fn logger_line(
        &mut self,
        text: &str,
        f: &Fields,
        opts: &ParseOptions,
    ) -> Result<Line, String> {
        // A logger that nests the record's fields (Monolog's JSON, loguru's): the flat
        // line it stands for. Only a line with no stamp where one is looked for.
        if STAMP_NAMES.iter().all(|k| f.get(k).is_none())
            && let Some(flat) = nested::flattened(text)
        {
            return self.text_line(&flat, opts);
        }
        if nested::may_be_stamped_nesting(text)
            && let Some(flat) = nested::flattened_stamped(text)
        {
            return self.text_line(&flat, opts);
        }
        // A logger's line saying an effect happened (`"event": "refund created"` and a
        // `refund_id`) is that effect.
        if let Some(said) = logged::effect_message(f) {
            let raw = read_raw(text, true)?;
            let f = Fields::new(&raw);
            let has_error = ["err", "error", "exception"]
                .iter()
                .any(|k| f.get(k).is_some() || f.0.extra.iter().any(|(name, _)| name == k));
            let id = match logged::effect_id(&f, said.kind) {
                Ok(id) => Some(id),
                // pino's `logger.info({ refund }, "refund created")`: the effect is the
                // logged object, read as if its members were the line's.
                Err(why) => match logged::unnested(text, said.kind) {
                    Some(flat) => return self.text_line(&flat, opts),
                    // `"msg": "refund failed"` with its error, in a tool call's step:
                    // the agent's words on its call's failure, read below as one.
                    None if state_means_not_happened(said.word) && has_error && self.call_open => {
                        None
                    }
                    // `"msg": "refund rejected"` and no id: a service's refusal,
                    // nothing to settle; no broken line.
                    None if state_means_not_happened(said.word) => return Ok(None),
                    None => return Err(why),
                },
            };
            if let Some(id) = id {
                let (at, kind) = self.effect(&f, opts, id, said.kind, Some(said.word))?;
                let attrs = if opts.keep_attrs {
                    f.attrs()
                } else {
                    Attrs::new()
                };
                return Ok(Some((at, kind, attrs)));
            }
        }
        // A service's replay of an effect under its key: which request made it.
        if let Some(line) = self.replay_line(text, opts) {
            return line;
        }
        // The application's own log line (a message and no `type`: winston's `message`,
        // pino's `msg`, structlog's `event`, Serilog's `@mt`) is no event, as an
        // unrecognised text line is none. With a field only events have (a failure's
        // `error` beside its `message`), or no message, an event lost its type.
        let has = |names: &[&str]| names.iter().any(|k| f.get(k).is_some());
        if has(&["message", "msg", "event", "@m", "@mt"]) && !has(&EVENT_ONLY) {
            // Unless the message is a sentence about an effect, as a text log's can be,
            // or a text trace's message.
            // stamina's retry, its details in the line's fields.
            if let Some(line) = self.stamina_retry(text, f, opts) {
                return line;
            }
            // `"msg": "refund request"`, `"POST ..."` after a tool call: the call's.
            if let Some(line) = self.of_open_call(text, f, opts) {
                return line;
            }
            if !logged::may_name_an_effect(f) {
                return self.embedded(f, opts);
            }
            return match logged::effect_of_sentence(text) {
                Some(fields) => self.text_line(&fields, opts),
                None => Ok(None),
            };
        }
        // SPEC §3.2's fields without their `type`: the fields say which event.
        if let Some(typed) = untyped::typed(text, self.next_number()) {
            return self.untyped_line(&typed, opts);
        }
        // A message with fields of no one event beside it (a logger's context: the MDC's
        // `step`, a span's `run`) is still the application's own line.
        if has(&["message", "msg", "event", "@m", "@mt"]) {
            return self.embedded(f, opts);
        }
        // Stripe's refund (charge, payout...) object: the effect it is.
        if let Some(effect) = stripe::effect_line(text)? {
            return self.text_line(&effect, opts);
        }
        // A web server's or gateway's access line (nginx's `escape=json`).
        if let Some(line) = self.access_line(text, f, opts) {
            return line;
        }
        Err("no `type` field".into())
    }
}
