//! JSON Lines (SPEC §3.2): one object per line, `type` says which event it is. Unknown
//! fields are kept as the event's attributes (shown by `timeline`, read by no rule); `null` is the same as absent; an unknown `type` is
//! ignored like an unrecognised text line; a line that is not a JSON object, or an event
//! missing what it needs, is skipped with the reason.

pub(crate) mod access;
mod fields;
mod logged;
mod logger_line;
pub(crate) mod monolog;
pub(crate) mod nested;
mod object;
mod open_call;
mod stamina;
pub(crate) mod stripe;
mod typed;
mod untyped;

#[cfg(test)]
mod open_call_tests;
pub(crate) mod winston;

use super::cut_values::{self, Cut};
use super::lines::{CUT_SHORT, LineNotes, for_each_line_ahead, for_each_line_in};
use super::stamp::Clock;
use super::text::EmbeddedMessages;
use super::{ParseOptions, Parsed};
use crate::event::{
    Attrs, CallRef, Effect, Event, EventKind, Loc, Replay, Text, state_means_not_happened,
};
pub(crate) use fields::STAMP_NAMES;
use fields::{Fields, read_raw};
use serde::de::IgnoredAny;
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
    let mut notes = LineNotes::default();
    for_each_line_ahead(reader, &mut notes, |line_no, span, bytes, ahead| {
        out.stats.lines += 1;
        if bytes.trim_ascii().is_empty() {
            out.stats.ignored += 1;
            return 0;
        }
        let place = rereadable.then_some(span);
        // A JSON object closed is whole, newline or not; a logfmt line may be cut anywhere.
        let cut = ahead.cut_short() && !bytes.trim_ascii_end().ends_with(b"}");
        let word = cut.then(|| cut_values::word_at_cut(bytes)).flatten();
        lines.read_at(
            &mut out,
            line_no,
            place,
            as_json(bytes, &mut json),
            (cut, word),
        );
        0
    })?;
    notes.add_to(&mut out.stats);
    out.stats.notes.extend(lines.take_notes());
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

    /// What the input's report says of the folds and gaps of its zone its times fell in.
    pub(super) fn take_notes(&mut self) -> Vec<String> {
        self.st.clock.take_notes()
    }

    /// Dates the time-only stamps of the lines after this on `date` (a `# date:` header
    /// of a log converted to these lines), as `--date` would.
    pub(super) fn set_date(&mut self, date: chrono::NaiveDate) {
        self.opts.date = Some(date);
        self.st.clock.redate(&self.opts);
    }

    /// The events of line `line_no`, `json` or why it is no JSON, counted and kept in `out`.
    /// `cut`: the record runs to the end of the input, cut short inside a line
    /// ([`super::lines::Ahead::cut_short`]): read as no event, it is skipped.
    pub(super) fn read(
        &mut self,
        out: &mut Parsed,
        line_no: u32,
        json: Result<&[u8], String>,
        cut: bool,
    ) {
        self.read_at(out, line_no, None, json, (cut, None));
    }

    /// The events of a JSON object that is another layout's message (a text log's line
    /// after its stamp, a program's message behind a syslog header, a line of its own in a
    /// text log), read as a line of JSON Lines is, at `given` when it names no time of its
    /// own; with its attributes, when kept. `None`: no event (an application's own line).
    pub(super) fn message_events(
        &mut self,
        line_no: u32,
        json: &[u8],
        given: Option<crate::time::Timestamp>,
    ) -> Result<Option<(MessageEvents, Attrs)>, String> {
        let (st, opts) = (&mut self.st, &self.opts);
        st.line_no = line_no;
        st.given_at = given;
        let read = st.line(json, opts);
        st.given_at = None;
        let Some((at, kind, attrs)) = read? else {
            st.more.clear();
            return Ok(None);
        };
        let mut events = vec![(at, kind)];
        events.append(&mut st.more);
        Ok(Some((events, attrs)))
    }

    /// [`Self::read`], with the line's place in a file that can be read again there; `cut`
    /// with the word the line was cut inside, if known: a value that is that word is not
    /// read ([`cut_values`]).
    fn read_at(
        &mut self,
        out: &mut Parsed,
        line_no: u32,
        span: Option<std::ops::Range<u64>>,
        json: Result<&[u8], String>,
        (cut, word_at_cut): (bool, Option<&str>),
    ) {
        let (st, opts) = (&mut self.st, &self.opts);
        let in_context = st.clock.read_in_context();
        st.line_no = line_no;
        let mut read = json.and_then(|line| st.line(line, opts));
        if let (Ok(Some((_, kind, _))), Some(word)) = (&mut read, word_at_cut) {
            match cut_values::drop_cut_values(kind, word) {
                Cut::Whole => {}
                Cut::Dropped(dropped) => {
                    out.stats.warn(line_no, cut_values::warning(word, &dropped))
                }
                Cut::Unreadable => {
                    st.more.clear();
                    read = Ok(None);
                }
            }
        }
        match read {
            Ok(Some((at, kind, attrs))) => {
                out.stats.events += 1;
                let loc = Loc {
                    input: st.input,
                    line: line_no,
                };
                if !attrs.is_empty() {
                    out.attrs.push((loc, attrs));
                }
                // A time-only stamp is dated by the lines before it, a local time in a fold
                // read by them as its second pass: not read alone again.
                let place = span.filter(|_| st.clock.read_in_context() == in_context);
                out.push_placed(Event { at, loc, kind }, place.clone());
                for (at, kind) in st.more.drain(..) {
                    out.push_placed(Event { at, loc, kind }, place.clone());
                }
            }
            Ok(None) if cut => out.stats.skip(line_no, CUT_SHORT),
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
    /// The time of the line around an object that is its message
    /// ([`ObjectLines::message_events`]): the object's when it names none.
    given_at: Option<crate::time::Timestamp>,
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
            given_at: None,
        }
    }
}

/// The events one line stands for, in order.
pub(super) type MessageEvents = Vec<(crate::time::Timestamp, EventKind)>;

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
            return self.not_an_object(text, opts);
        }
        let raw = read_raw(text, opts.keep_attrs)?;
        let f = Fields::new(&raw);
        match f.str("type")? {
            Some(ty) => self.typed_event(&ty, &f, text, opts),
            None => self.logger_line(text, &f, opts),
        }
    }

    /// A line that is no JSON object: another logger's layout that stands for one
    /// (winston's, Monolog's), a line that belongs to the record above it, or bad.
    fn not_an_object(&mut self, text: &str, opts: &ParseOptions) -> Result<Line, String> {
        if let Some(object) = winston::simple_object(text).or_else(|| monolog::as_object(text)) {
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
        // A web server's access line (morgan's beside a JSON logger's): no event.
        if super::access_log::stamp(text.trim().as_bytes(), opts.tz).is_some() {
            return Ok(None);
        }
        // A text log's line after the head that detection read (a program's text beside
        // another's JSON, met only past the first lines): said so, not read.
        if super::opens_text_record(text.trim().as_bytes()) {
            return Err(TEXT_AMONG_JSON.into());
        }
        Err(match serde_json::from_str::<IgnoredAny>(text) {
            Ok(_) => "not a JSON object".into(),
            Err(e) => super::unreadable_json(&e),
        })
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
        let message = match open_call::method_with_url(&message, f) {
            Some(request) => std::borrow::Cow::Owned(request),
            None => message,
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
        let f = Fields::new(&raw);
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
            // An object that is another line's message: at that line's time.
            None => self.given_at.ok_or_else(|| {
                "no `ts` field (nor `timestamp`, `@timestamp`, `time`, `@t` or `asctime`)".into()
            }),
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

/// Why a text log's line in an input read as JSON Lines is skipped.
const TEXT_AMONG_JSON: &str = "a text line among JSON lines: the input was read as JSON Lines (its first lines had no text line), whose reader reads no text line";

/// A key field's value as the key it is ([`super::key_of`]).
fn logged_key<T: AsRef<str> + for<'s> From<&'s str>>(k: T) -> Option<T> {
    let key = super::key_of(k.as_ref().as_bytes())?;
    Some(T::from(std::str::from_utf8(key).ok()?))
}

#[cfg(test)]
mod tests;
