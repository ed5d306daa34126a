//! JSON Lines (SPEC §3.2): one object per line, `type` says which event it is. Unknown
//! fields are kept as the event's attributes (shown by `timeline`, read by no rule); `null` is the same as absent; an unknown `type` is
//! ignored like an unrecognised text line; a line that is not a JSON object, or an event
//! missing what it needs, is skipped with the reason.

mod logged;
pub(crate) mod monolog;
pub(crate) mod nested;
mod object;
mod open_call;
pub(crate) mod stripe;
mod untyped;

#[cfg(test)]
mod open_call_tests;
pub(crate) mod winston;

use super::lines::{for_each_line_at, for_each_line_in};
use super::stamp::Clock;
use super::text::EmbeddedMessages;
use super::{ParseOptions, Parsed};
use crate::classify::{classify_failure, classify_status};
use crate::event::{
    Attempt, Attrs, CallRef, Effect, Event, EventKind, Failure, Lifecycle, Loc, Replay, Response,
    RunEvent, StepEnd, Text, ToolCall, state_means_not_happened,
};
use crate::money::{Currency, Money};
use crate::scan::same_bytes;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::cell::Cell;
use std::io::{self, Read};

pub fn parse(reader: &mut dyn Read, input: u32, opts: &ParseOptions) -> io::Result<Parsed> {
    parse_input(reader, input, opts, false)
}

/// [`parse`], told whether the input is a plain file that can be read again at an offset:
/// the idle calls the filter sets aside are then kept as their places in it (a month of
/// emails, 16 bytes each instead of their events).
pub fn parse_input(
    reader: &mut dyn Read,
    input: u32,
    opts: &ParseOptions,
    rereadable: bool,
) -> io::Result<Parsed> {
    parse_lines(reader, input, opts, rereadable, |line, _| Ok(line))
}

/// [`parse_input`] for lines that `as_json` makes JSON objects of (into the buffer it is
/// given, or as they are): another line-wise format read as JSON Lines.
pub(super) fn parse_lines(
    reader: &mut dyn Read,
    input: u32,
    opts: &ParseOptions,
    rereadable: bool,
    mut as_json: impl for<'b> FnMut(&'b [u8], &'b mut Vec<u8>) -> Result<&'b [u8], String>,
) -> io::Result<Parsed> {
    let mut out = Parsed::new(opts);
    let mut lines = ObjectLines::new(input, opts);
    let mut json = Vec::new();
    for_each_line_at(reader, |line_no, span, bytes| {
        out.stats.lines += 1;
        if bytes.trim_ascii().is_empty() {
            out.stats.ignored += 1;
            return;
        }
        let place = rereadable.then_some(span);
        lines.read_at(&mut out, line_no, place, as_json(bytes, &mut json));
    })?;
    Ok(out)
}

/// Reads JSON objects, one a line, into a [`Parsed`]: for formats whose lines or records
/// another reader makes JSON of ([`super::node_console`]).
pub(super) struct ObjectLines {
    st: State,
    opts: ParseOptions,
}

impl ObjectLines {
    pub(super) fn new(input: u32, opts: &ParseOptions) -> Self {
        ObjectLines {
            st: State::new(input, opts),
            opts: opts.clone(),
        }
    }

    /// Dates the time-only stamps of the lines after this on `date` (a `# date:` header
    /// of a log converted to these lines), as `--date` would.
    pub(super) fn set_date(&mut self, date: chrono::NaiveDate) {
        self.opts.date = Some(date);
        self.st.clock = Clock::new(&self.opts);
    }

    /// The events of line `line_no`, `json` or why it is no JSON, counted and kept in `out`.
    pub(super) fn read(&mut self, out: &mut Parsed, line_no: u32, json: Result<&[u8], String>) {
        self.read_at(out, line_no, None, json);
    }

    /// [`Self::read`], with the line's place in a file that can be read again there.
    fn read_at(
        &mut self,
        out: &mut Parsed,
        line_no: u32,
        span: Option<std::ops::Range<u64>>,
        json: Result<&[u8], String>,
    ) {
        let (st, opts) = (&mut self.st, &self.opts);
        let undated = st.clock.undated();
        st.line_no = line_no;
        match json.and_then(|line| st.line(line, opts)) {
            Ok(Some((at, kind, attrs))) => {
                out.stats.events += 1;
                let loc = Loc {
                    input: st.input,
                    line: line_no,
                };
                if !attrs.is_empty() {
                    out.attrs.push((loc, attrs));
                }
                // A time-only stamp is dated by the lines before it: not read alone again.
                let place = span.filter(|_| st.clock.undated() == undated);
                out.push_placed(Event { at, loc, kind }, place.clone());
                for (at, kind) in st.more.drain(..) {
                    out.push_placed(Event { at, loc, kind }, place.clone());
                }
            }
            Ok(None) => out.stats.ignored += 1,
            Err(why) => out.stats.skip(line_no, why),
        }
    }
}

/// The events of `bytes`, lines of a file read again (a deferred call's place), numbered
/// from `first_line`, as [`parse`] read them without a filter.
pub fn reread(bytes: &[u8], input: u32, first_line: u32, opts: &ParseOptions) -> Vec<Event> {
    let opts = ParseOptions {
        relevance: None,
        keep_attrs: false,
        ..opts.clone()
    };
    let mut st = State::new(input, &opts);
    let before = first_line.saturating_sub(1);
    let mut events = Vec::new();
    for_each_line_in(bytes, |k, _, line| {
        if line.trim_ascii().is_empty() {
            return;
        }
        let line_no = before.saturating_add(k);
        st.line_no = line_no;
        if let Ok(Some((at, kind, _))) = st.line(line, &opts) {
            let loc = Loc {
                input,
                line: line_no,
            };
            events.push(Event { at, loc, kind });
            for (at, kind) in st.more.drain(..) {
                events.push(Event { at, loc, kind });
            }
        }
    });
    events
}

struct State {
    clock: Clock,
    /// The call of the latest tool-call line: client lines without `run`/`step` belong to it.
    last_call: Option<CallRef>,
    input: u32,
    /// The line being read, for [`Self::embedded`].
    line_no: u32,
    /// Messages that are SPEC §3.1 text lines, read as such ([`EmbeddedMessages`]).
    embedded: Option<EmbeddedMessages>,
    /// Events of the line just read after its first (a message may stand for two).
    more: Vec<(crate::time::Timestamp, EventKind)>,
    /// A line with SPEC §3.2's `type` was read: the file is a typed trace, and a logger's
    /// messages beside its events (debug lines) are not read again as events.
    typed: bool,
    /// The latest tool call's step has not ended: a line naming no call may be its.
    call_open: bool,
    /// The highest attempt number read for the latest tool call (0: none yet).
    last_number: u32,
    /// The latest request logged in the open call was no tool's (a model's, a read): the
    /// answer after it is its own.
    foreign_request: bool,
    /// A line of winston's printf layout was read ([`winston::printf_object`]): indented
    /// lines after it are its error's stack.
    printf: bool,
}

impl State {
    fn new(input: u32, opts: &ParseOptions) -> Self {
        State {
            clock: Clock::new(opts),
            last_call: None,
            input,
            line_no: 0,
            embedded: None,
            more: Vec::new(),
            typed: false,
            call_open: false,
            last_number: 0,
            foreign_request: false,
            printf: false,
        }
    }
}

type Line = Option<(crate::time::Timestamp, EventKind, Attrs)>;

impl State {
    fn line(&mut self, bytes: &[u8], opts: &ParseOptions) -> Result<Line, String> {
        match std::str::from_utf8(bytes) {
            Ok(text) => self.text_line(text, opts),
            // Invalid UTF-8 is replaced, not fatal (SPEC §9).
            Err(_) => self.text_line(&String::from_utf8_lossy(bytes), opts),
        }
    }

    fn text_line(&mut self, text: &str, opts: &ParseOptions) -> Result<Line, String> {
        // A struct deserializes from an array too: only an object is an event.
        if !text.trim_start().starts_with('{') {
            if let Some(object) = winston::simple_object(text).or_else(|| monolog::as_object(text))
            {
                return self.text_line(&object, opts);
            }
            // A printf layout's line, with its object or without (a line with no meta).
            if let Some(object) = winston::printf_object(text) {
                self.printf = true;
                return self.text_line(&object, opts);
            }
            // An error's stack below a printf line (`${stack}`): part of its record.
            if self.printf && text.starts_with([' ', '\t']) {
                return Ok(None);
            }
            if monolog::continues_record(text) {
                return Ok(None);
            }
            return Err(match serde_json::from_str::<IgnoredAny>(text) {
                Ok(_) => "not a JSON object".into(),
                Err(e) => format!("not JSON: {e}"),
            });
        }
        let raw = read_raw(text, opts.keep_attrs)?;
        let f = Fields(&raw, Cell::new(0));
        let Some(ty) = f.str("type")? else {
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
            if let Some(said) = logged::effect_message(&f) {
                let raw = read_raw(text, true)?;
                let f = Fields(&raw, Cell::new(0));
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
                        None if state_means_not_happened(said.word)
                            && has_error
                            && self.call_open =>
                        {
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
                // `"msg": "refund request"`, `"POST ..."` after a tool call: the call's.
                if let Some(line) = self.of_open_call(text, &f, opts) {
                    return line;
                }
                if !logged::may_name_an_effect(&f) {
                    return self.embedded(&f, opts);
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
                return self.embedded(&f, opts);
            }
            // Stripe's refund (charge, payout...) object: the effect it is.
            if let Some(effect) = stripe::effect_line(text)? {
                return self.text_line(&effect, opts);
            }
            return Err("no `type` field".into());
        };
        self.typed = true;
        // An effect's own time, read before its settlement's, which is dated from it.
        let mut effect_at = None;
        let kind = match ty.as_ref() {
            "tool_call" => {
                let call = f.call()?.ok_or("a tool_call needs `run` and `step`")?;
                let tool = f.str("tool")?.ok_or("a tool_call needs `tool`")?;
                // Checked here without building them: correlation parses the calls it keeps.
                let args_raw = match f.get("args") {
                    None => "{}".to_string(),
                    // Arguments logged as a JSON string (as model APIs return them).
                    Some(r) if r.starts_with('"') => {
                        let s: String = serde_json::from_str(r)
                            .map_err(|e| format!("`args` is not JSON: {e}"))?;
                        serde_json::from_str::<IgnoredAny>(&s)
                            .map_err(|e| format!("`args` is a string but not JSON: {e}"))?;
                        s
                    }
                    // As written, so rules can see its spelling (`4500.0`, key order).
                    Some(r) => r.to_string(),
                };
                self.last_call = Some(call.clone());
                EventKind::ToolCall(Box::new(ToolCall {
                    call,
                    tool: Text::from(&*tool),
                    args_raw: args_raw.into(),
                    args: Value::Null,
                }))
            }
            "attempt" => EventKind::Attempt(Box::new(Attempt {
                call: self.client_call(&f)?,
                number: f
                    .uint("attempt")?
                    .filter(|&n| n >= 1)
                    .ok_or("an attempt needs `attempt` (1, 2, ...)")?,
                method: f.string("method")?,
                url: f.string("url")?,
                key: f.string("idempotency_key")?.and_then(logged_key),
                key_unseen: false,
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
                    call: self.client_call(&f)?,
                    attempt: f.uint("attempt")?,
                    class: classify_failure(&error, &message),
                    error,
                    message,
                }))
            }
            "response" => {
                let status = f
                    .uint("status")?
                    .filter(|s| (100..600).contains(s))
                    .ok_or("a response needs `status` (an HTTP status code)")?
                    as u16;
                EventKind::Response(Box::new(Response {
                    call: self.client_call(&f)?,
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
                    .client_call(&f)?
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
                let (at, effect) = self.effect(&f, opts, id, &kind, None)?;
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
            None => self.stamp(&f, opts)?,
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

    /// A logger's line whose message is a SPEC §3.1 message of the agent's side (Go's
    /// `slog.Info("agent run 7f3a  step 4  tool=...")`): the events a text trace's line with
    /// that message and the line's time is. No event otherwise, as before.
    fn embedded(&mut self, f: &Fields, opts: &ParseOptions) -> Result<Line, String> {
        if self.typed {
            return Ok(None);
        }
        let Some(message) = logged::message(f).filter(|m| EmbeddedMessages::may_read(m.as_bytes()))
        else {
            return Ok(None);
        };
        let Ok(at) = self.stamp(f, opts) else {
            return Ok(None);
        };
        let (input, n) = (self.input, self.line_no);
        let reader = (self.embedded).get_or_insert_with(|| EmbeddedMessages::new(input, opts));
        let mut events = reader.read(n, at, message.as_bytes()).into_iter();
        let Some((at, kind)) = events.next() else {
            return Ok(None);
        };
        self.more.extend(events);
        let attrs = if opts.keep_attrs {
            f.attrs()
        } else {
            Attrs::new()
        };
        Ok(Some((at, kind, attrs)))
    }

    /// A service's line saying it replayed an effect ([`logged::replayed_effect`]).
    fn replay_line(&mut self, text: &str, opts: &ParseOptions) -> Option<Result<Line, String>> {
        let raw = read_raw(text, true).ok()?;
        let f = Fields(&raw, Cell::new(0));
        let replayed = logged::replayed_effect(&f)?;
        let key = match f.string("idempotency_key") {
            Ok(Some(key)) => logged_key(key),
            _ => logged::key(&f).and_then(logged_key),
        };
        let key = key.or(replayed.key_in_message);
        // A replay that names neither an effect nor a key says nothing of which answer.
        if replayed.effect_id.is_none() && key.is_none() {
            return None;
        }
        let replay = Replay {
            kind: replayed.kind.map(Text::from),
            effect_id: replayed.effect_id,
            key,
        };
        // Without its time a replay says nothing of which request it answered: the line
        // is the application's own, as before replays were read.
        let at = self.stamp(&f, opts).ok()?;
        let attrs = if opts.keep_attrs {
            f.attrs()
        } else {
            Attrs::new()
        };
        Some(Ok(Some((at, EventKind::Replay(Box::new(replay)), attrs))))
    }

    /// An effect (SPEC §3.2) with its time: a typed `effect` event, or a logger's line
    /// whose message `said` what happened (`refund failed`), which is its state unless a
    /// field gives one, and always when it says the effect did not happen.
    fn effect(
        &mut self,
        f: &Fields,
        opts: &ParseOptions,
        id: Text,
        kind: &str,
        said: Option<&str>,
    ) -> Result<(crate::time::Timestamp, EventKind), String> {
        let at = self.stamp(f, opts)?;
        let settled_at = match f.str("settled_at")? {
            Some(s) => Some(self.clock.parse_on_line(s.as_bytes(), opts, false, at)?),
            None => None,
        };
        let written = match said {
            None => f.string("state")?.or(f.string("status")?),
            // A logger's `status` may be anything (`200`): only a word is a state.
            Some(_) => logged::state_field(f),
        };
        let state = match said {
            Some(word) if state_means_not_happened(word) => Some(Text::from(word)),
            _ => written
                .or_else(|| settled_at.map(|_| Text::from_static_str("settled")))
                .or_else(|| said.map(Text::from)),
        };
        let state_at = match f.str("state_at")? {
            Some(s) => Some(self.clock.parse_on_line(s.as_bytes(), opts, false, at)?),
            None => settled_at,
        };
        let effect = EventKind::Effect(Box::new(Effect {
            kind: kind.to_ascii_lowercase().into(),
            happened: !state.as_deref().is_some_and(state_means_not_happened),
            id,
            order: match f.id("order")?.or(f.id("order_id")?) {
                Some(order) => Some(order),
                // A logger's line holds its every field: `orderId`, a logged object's
                // `metadata.order_id`.
                None if said.is_some() => logged::order(f),
                None => None,
            },
            amount: f.money()?,
            whole: f.whole_money(),
            key: match f.string("idempotency_key")? {
                Some(key) => logged_key(key),
                None if said.is_some() => logged::key(f).and_then(logged_key),
                None => None,
            },
            state,
            state_at,
        }));
        Ok((at, effect))
    }

    fn stamp(&mut self, f: &Fields, opts: &ParseOptions) -> Result<crate::time::Timestamp, String> {
        let found = STAMP_NAMES.iter().find_map(|&k| Some((k, f.get(k)?)));
        match found {
            None => Err(
                "no `ts` field (nor `timestamp`, `@timestamp`, `time`, `@t` or `asctime`)".into(),
            ),
            Some((k, t)) if t.starts_with('"') => {
                let s = f.str(k)?.unwrap_or_default();
                self.clock.parse(s.as_bytes(), opts, false)
            }
            // A number is unix time, the other common structured-log spelling.
            Some((_, t)) if t.starts_with(|c: char| c.is_ascii_digit()) => {
                self.clock.parse(t.as_bytes(), opts, true)
            }
            Some((k, _)) => Err(format!("`{k}` is not a timestamp string")),
        }
    }

    /// `run`/`step` on the line, else the latest tool call's (as in text traces).
    fn client_call(&self, f: &Fields) -> Result<Option<CallRef>, String> {
        Ok(f.call()?.or_else(|| self.last_call.clone()))
    }
}

/// The line's object: its known fields, and the others when `extra`.
fn read_raw(text: &str, extra: bool) -> Result<Raw<'_>, String> {
    let mut raw = Raw::default();
    raw.plain = object::plain_members(text, |k, v| raw.member(Cow::Borrowed(k), v, extra));
    if !raw.plain {
        raw = Raw::default();
        let mut de = serde_json::Deserializer::from_str(text);
        let fill = Fill {
            raw: &mut raw,
            extra,
        };
        serde::de::DeserializeSeed::deserialize(fill, &mut de)
            .and_then(|()| de.end())
            .map_err(|e| format!("not JSON: {e}"))?;
    }
    Ok(raw)
}

/// The fields the audit reads, borrowed from the line as raw JSON and read only when the
/// event type needs them: a line that is no event builds nothing. `null` deserializes as
/// `None`, the same as absent.
struct Raw<'a> {
    /// Each value as written (a string with its quotes).
    known: [Option<&'a str>; KNOWN.len()],
    /// A bit per [`KNOWN`] entry that `known` holds.
    present: u64,
    /// Read by [`object::plain_members`]: no string holds an escape.
    plain: bool,
    /// Fields the audit does not read, in line order: kept as attributes (SPEC §3.2).
    extra: Vec<(Cow<'a, str>, &'a str)>,
}

// By hand: `Default` is derived for arrays of at most 32 entries.
impl Default for Raw<'_> {
    fn default() -> Self {
        Raw {
            known: [None; KNOWN.len()],
            present: 0,
            plain: false,
            extra: Vec::new(),
        }
    }
}

impl<'a> Raw<'a> {
    /// A member of the line's object; `extra`: whether fields the audit does not read are
    /// kept.
    fn member(&mut self, name: Cow<'a, str>, value: &'a str, extra: bool) {
        match slot(&name) {
            // `null` is absent, as for a known field.
            Some(i) => {
                let given = value != "null";
                self.known[i] = given.then_some(value);
                self.present = self.present & !(1 << i) | u64::from(given) << i;
            }
            None if !extra || value == "null" => {}
            None => self.extra.push((name, value)),
        }
    }
}

/// Fields that only the events of SPEC §3.2 have: a line without `type` that holds one is
/// an event that lost its type, not a logger's own line.
/// Not `error`, `idempotency_key` or `amount_minor`: an application's own lines carry
/// them too (structlog's `error` beside its `event`).
const EVENT_ONLY: [&str; 8] = [
    "run",
    "step",
    "tool",
    "attempt",
    "effect_id",
    "replayed",
    "settled_at",
    "state_at",
];

/// A key field's value as the key it is ([`super::key_of`]).
fn logged_key<T: AsRef<str> + for<'s> From<&'s str>>(k: T) -> Option<T> {
    let key = super::key_of(k.as_ref().as_bytes())?;
    Some(T::from(std::str::from_utf8(key).ok()?))
}

/// Where a line's time is, first found first: SPEC §3.2's `ts`, then the spellings other
/// structured loggers use (Serilog's compact format, CLEF, writes `@t`).
pub(crate) const STAMP_NAMES: [&str; 6] =
    ["ts", "timestamp", "@timestamp", "time", "@t", "asctime"];

/// Every field name the audit reads; `Raw::known` holds them in this order.
const KNOWN: [&str; 35] = [
    "ts",
    "type",
    "run",
    "step",
    "tool",
    "args",
    "attempt",
    "method",
    "url",
    "idempotency_key",
    "error",
    "message",
    "status",
    "effect_id",
    "replayed",
    "amount_minor",
    "amount_p",
    "currency",
    "event",
    "kind",
    "order",
    "order_id",
    "settled_at",
    "state",
    "state_at",
    // The stamp's other spellings in structured logs (`ts` first): winston and structlog,
    // Elastic's ECS, pino and bunyan.
    "timestamp",
    "@timestamp",
    "time",
    // An amount in major units, as the CSV exports write it (with `currency`).
    "amount",
    // A structured logger's message (pino, zap, logrus; Serilog's CLEF), which marks a
    // line without `type` as the application's own log line.
    "msg",
    "@m",
    "@mt",
    // Serilog's CLEF stamp (ISO 8601 with seven decimals and an offset).
    "@t",
    // python-json-logger's stamp with the usual format (`%(asctime)s %(levelname)s ...`):
    // Python's `2026-12-05 22:46:09,340`, local time (`--tz`). Last of the spellings.
    "asctime",
    // Minor units as Rails' money-rails names them.
    "amount_cents",
];

/// Where `name` is in [`KNOWN`]. Asked for every field of every line: its length and first
/// byte (and the second, for `type`/`tool` and `error`/`event`) pick the one name it can
/// be, compared whole; a search of the list compared it with every name of its length.
#[inline(always)]
fn slot(name: &str) -> Option<usize> {
    let b = name.as_bytes();
    let i = match (b.len(), *b.first()?) {
        (2, b't') => 0,
        (4, b't') if b[1] == b'y' => 1,
        (4, b't') if b[1] == b'i' => 27,
        (3, b'r') => 2,
        (4, b's') => 3,
        (4, b't') => 4,
        (4, b'a') => 5,
        (7, b'a') if b[1] == b's' => 33,
        (7, b'a') => 6,
        (6, b'a') => 28,
        (6, b'm') => 7,
        (3, b'u') => 8,
        (15, b'i') => 9,
        (5, b'e') if b[1] == b'r' => 10,
        (7, b'm') => 11,
        (6, b's') => 12,
        (9, b'e') => 13,
        (8, b'r') => 14,
        (12, b'a') if b[7] == b'c' => 34,
        (12, b'a') => 15,
        (8, b'a') => 16,
        (8, b'c') => 17,
        (5, b'e') => 18,
        (4, b'k') => 19,
        (5, b'o') => 20,
        (8, b'o') => 21,
        (10, b's') => 22,
        (5, b's') => 23,
        (8, b's') => 24,
        (9, b't') => 25,
        (10, b'@') => 26,
        (3, b'm') => 29,
        (2, b'@') if b[1] == b'm' => 30,
        (2, b'@') => 32,
        (3, b'@') => 31,
        _ => return None,
    };
    same_bytes(b, KNOWN[i].as_bytes()).then_some(i)
}

/// A key borrowed from the line unless it holds escapes.
#[derive(Deserialize)]
struct Key<'a>(#[serde(borrow)] Cow<'a, str>);

/// serde_json's reading of a line that is not a plain object ([`object::plain_members`]),
/// filling a [`Raw`] where it lies (returned by value, its slots were copied about three
/// times a line). Fields the audit does not read are collected only when `extra` says
/// attributes are kept.
struct Fill<'r, 'de> {
    raw: &'r mut Raw<'de>,
    extra: bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for Fill<'_, 'de> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Fill<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<M: serde::de::MapAccess<'de>>(self, mut m: M) -> Result<(), M::Error> {
        while let Some(Key(k)) = m.next_key::<Key>()? {
            let v: &RawValue = m.next_value()?;
            self.raw.member(k, v.get(), self.extra);
        }
        Ok(())
    }
}

/// Typed access to a line's fields, with reasons that name the field; remembers which
/// known fields were read (a bit per [`KNOWN`] entry).
struct Fields<'r, 'a>(&'r Raw<'a>, Cell<u64>);

impl<'a> Fields<'_, 'a> {
    // Always inlined: `k` is a literal at every call, and its slot is then known.
    #[inline(always)]
    fn get(&self, k: &str) -> Option<&'a str> {
        let i = slot(k)?;
        self.1.set(self.1.get() | 1 << i);
        self.0.known[i]
    }

    /// The fields the audit did not read, as `name`, value (a string unquoted, anything
    /// else as its JSON text): the unknown ones in line order, then the known names this
    /// event type has no use for (an `order` on a response). Called once the event is built.
    fn attrs(&self) -> Attrs {
        let read = self.1.get();
        // The usual line: every field known and read.
        if self.0.extra.is_empty() && self.0.present & !read == 0 {
            return Attrs::new();
        }
        let unread_known = KNOWN
            .iter()
            .zip(&self.0.known)
            .enumerate()
            .filter(|(i, _)| read & (1 << i) == 0)
            .filter_map(|(_, (k, v))| Some((Cow::Borrowed(*k), (*v)?)));
        let text = |v: &str| serde_json::from_str::<String>(v).unwrap_or_else(|_| v.to_string());
        self.0
            .extra
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .chain(unread_known)
            .map(|(k, v)| (k.to_string(), text(v)))
            .collect()
    }

    /// A JSON string, borrowed unless it holds escapes.
    fn str(&self, k: &str) -> Result<Option<Cow<'a, str>>, String> {
        match self.get(k) {
            None => Ok(None),
            // The line was read as JSON already: a string without escapes is its inside.
            Some(t) if t.starts_with('"') && (self.0.plain || !t.contains('\\')) => {
                Ok(Some(Cow::Borrowed(
                    t.get(1..t.len() - 1)
                        .ok_or_else(|| format!("`{k}` is not a string"))?,
                )))
            }
            Some(t) if t.starts_with('"') => serde_json::from_str::<&str>(t)
                .map(Cow::Borrowed)
                .or_else(|_| serde_json::from_str::<String>(t).map(Cow::Owned))
                .map(Some)
                .map_err(|_| format!("`{k}` is not a string")),
            Some(_) => Err(format!("`{k}` is not a string")),
        }
    }

    fn string(&self, k: &str) -> Result<Option<Text>, String> {
        Ok(self.str(k)?.map(|s| Text::from(&*s)))
    }

    /// An identifier written as a string or a number.
    fn id(&self, k: &str) -> Result<Option<Text>, String> {
        match self.get(k) {
            Some(t) if t.starts_with(|c: char| c == '-' || c.is_ascii_digit()) => {
                Ok(Some(t.into()))
            }
            Some(t) if t.starts_with('"') => self.string(k),
            None => Ok(None),
            Some(_) => Err(format!("`{k}` is not a string or number")),
        }
    }

    fn uint(&self, k: &str) -> Result<Option<u32>, String> {
        let bad = || format!("`{k}` is not a non-negative integer");
        match self.get(k) {
            None => Ok(None),
            Some(t) if t.starts_with('"') => {
                let s = self.str(k)?.unwrap_or_default();
                s.trim().parse().map(Some).map_err(|_| bad())
            }
            Some(t) => t.parse().map(Some).map_err(|_| bad()),
        }
    }

    fn bool(&self, k: &str) -> Result<Option<bool>, String> {
        match self.get(k) {
            None => Ok(None),
            Some("true" | "\"true\"") => Ok(Some(true)),
            Some("false" | "\"false\"") => Ok(Some(false)),
            Some(_) => Err(format!("`{k}` is not true or false")),
        }
    }

    fn call(&self) -> Result<Option<CallRef>, String> {
        match (self.id("run")?, self.uint("step")?) {
            (Some(run), Some(step)) => Ok(Some(CallRef { run, step })),
            _ => Ok(None),
        }
    }

    /// An `amount` written as a bare whole number with a `currency` of decimals, which
    /// [`Self::money`] reads as unknown ([`crate::money::whole_amount`]).
    fn whole_money(&self) -> Option<Money> {
        if ["amount_minor", "amount_cents", "amount_p"]
            .iter()
            .any(|k| self.get(k).is_some())
        {
            return None;
        }
        let written = match self.get("amount")? {
            t if t.starts_with('"') => self.str("amount").ok()??.into_owned(),
            t => t.to_string(),
        };
        let Some(code) = self.str("currency").ok()? else {
            // `"amount": "4500 GBP"`: the number and its code together.
            return crate::money::whole_written(&written);
        };
        crate::money::whole_amount(&written, Currency::parse(&code)?)
    }

    /// `amount_minor` with `currency`, `amount_p` (GBP pence, as in text traces), or
    /// `amount` in major units with `currency` (a number or a string, `45.00`), converted
    /// exactly by the currency's exponent. Minor units may be a string of an integer
    /// (`"4500"`), as protobuf's JSON mapping writes every 64-bit integer.
    fn money(&self) -> Result<Option<Money>, String> {
        let int = |k: &str| -> Result<Option<i64>, String> {
            let bad = || format!("`{k}` is not an integer number of minor units");
            match self.get(k) {
                None => Ok(None),
                Some(t) if t.starts_with('"') => {
                    let s = self.str(k)?.unwrap_or_default();
                    s.trim().parse().map(Some).map_err(|_| bad())
                }
                Some(t) => t.parse().map(Some).map_err(|_| bad()),
            }
        };
        if let Some(p) = int("amount_p")? {
            return Ok(Some(Money::new(p, Currency::GBP)));
        }
        // `amount_cents`: minor units as Rails' money-rails names them.
        let (minor, minor_name) = match int("amount_minor")? {
            Some(m) => (Some(m), "amount_minor"),
            None => (int("amount_cents")?, "amount_cents"),
        };
        let name = match (minor, self.get("amount")) {
            (Some(_), _) => minor_name,
            (None, Some(_)) => "amount",
            (None, None) => return Ok(None),
        };
        let major = || -> Result<String, String> {
            Ok(match self.get("amount") {
                Some(t) if t.starts_with('"') => {
                    self.str("amount")?.unwrap_or_default().into_owned()
                }
                t => t.unwrap_or_default().into(),
            })
        };
        let Some(code) = self.str("currency")? else {
            // `"amount":"45.00 GBP"`: an amount that names its own currency.
            if crate::money::whole_written(&major()?).is_some() {
                return Ok(None);
            }
            return match (name, crate::money::parse_written(&major()?)) {
                ("amount", Some(written)) => written.map(Some),
                _ => Err(format!("`{name}` without `currency`")),
            };
        };
        let currency =
            Currency::parse(&code).ok_or_else(|| format!("`{code}` is not a currency code"))?;
        let minor = match minor {
            Some(m) => m,
            None if crate::money::ambiguous_whole_amount(&major()?, currency) => return Ok(None),
            None => crate::money::in_currency(&major()?, currency)?,
        };
        Ok(Some(Money::new(minor, currency)))
    }
}

#[cfg(test)]
mod tests;
