//! Text traces (SPEC §3.1): one event per line, `TIMESTAMP  MESSAGE`, fields separated by two
//! or more spaces. The parser works on byte slices and allocates only for lines that become
//! events; it resolves which call a line belongs to (the file's latest tool call, unless
//! `run=`/`step=` say otherwise) and which day a time-only timestamp falls on.

use super::lines::{Ahead, CUT_SHORT, LineNotes, for_each_line_ahead};
use super::{ParseOptions, Parsed};
use crate::classify::{classify_failure, classify_status};
use crate::event::*;
use crate::flat_json::is_flat_object;
use crate::money::Money;
use crate::shared_texts::SharedTexts;
use crate::time::{
    DateCache, NANOS_PER_DAY, NANOS_PER_SEC, Stamp, Timestamp, Zone, days_from_civil, parse_date,
};
use chrono::Datelike;
/// Requests an agent sends of its own (to a model, to telemetry): never a tool's attempts.
pub(crate) use client::agents_own;
use effects::{AMOUNT_TOKENS, amount_in_pence, amount_of, dotted_event, effect_of};
use failures::{exception_line, failure_of_cause, words_about_a_failure};
pub(crate) use level::after_debug_namespace;
pub(crate) use own_words::step_end_said;
use plain::{
    plain_answer_line, plain_effect_line, plain_request_line, plain_run_start, plain_step_ok,
    plain_tool_call,
};
use rustc_hash::FxHashMap;
use serde::de::IgnoredAny;
use stamps::out_of_range;
use std::borrow::Cow;
use std::io::{self, Read};
use std::ops::Range;
use words::{
    as_text, http_request, message_of, parse_u32, small, split_celery_header, status_line, text,
    written_offset_after,
};

pub fn parse(reader: &mut dyn Read, input: u32, opts: &ParseOptions) -> io::Result<Parsed> {
    parse_input(reader, input, opts, false)
}

/// [`parse`], told whether the input is a plain file whose bytes can be read again at an
/// offset (then idle calls a resume could make matter are kept as a place in the file).
pub fn parse_input(
    reader: &mut dyn Read,
    input: u32,
    opts: &ParseOptions,
    rereadable: bool,
) -> io::Result<Parsed> {
    let mut p = TextParser::new(input, opts, rereadable);
    let mut notes = LineNotes::default();
    let lines = for_each_line_ahead(reader, &mut notes, |n, span, line, ahead| {
        p.entry_process(n);
        p.line(n, span, line, ahead)
    })?;
    if p.idle.is_active() {
        // Still open at the end: the filter keeps it, as later inputs may go on.
        p.replay_idle();
    }
    p.in_every_process(|p| {
        p.settle_pool();
        p.settle_dramatiq();
    });
    p.out.stats.lines = lines as u64;
    notes.add_to(&mut p.out.stats);
    p.out.stats.notes.extend(p.dates.folds.take_notes());
    p.out.stats.notes.extend(p.years.note());
    Ok(p.out)
}

pub use embedded::EmbeddedMessages;
pub use rotated::Rotated;

pub use idle::reread;

/// What a line turned out to be.
enum Verdict {
    Event(Timestamp, EventKind),
    /// One line that stands for several events: an HTTP client's line for a request and its
    /// answer ([`client`]). Counted as one line that became events.
    Events(Vec<(Timestamp, EventKind)>),
    Ignored,
    Skipped(String),
    /// Part of an idle call, counted when the call is settled ([`idle`]).
    Held,
}

/// Why a line without a timestamp is skipped (unless it continues a record: [`tail`]).
const NO_STAMP: &str = "no parsable timestamp at the start of the line";
const DAMAGED: &str =
    "a NUL byte inside the line (a damaged write?): it reads as no event, and may have been one";

struct TextParser {
    input: u32,
    zone: Zone,
    /// Midnight of the date for time-only timestamps, in nanoseconds.
    date_base: i64,
    /// Whether that date was given (`--date` or `# date:`). Only then does `--tz` apply to
    /// time-only timestamps; undated ones stay on 1970-01-01 and print without a date.
    dated: bool,
    /// Days added by midnight rollovers, and the last time of day seen.
    day_offset: i64,
    prev_tod: Option<i64>,
    /// Where a new section restarts the rollover reckoning: the file's first time of day.
    first_tod: Option<i64>,
    /// The reading state of the process whose line is being read: a syslog file's or a
    /// journal's lines of several processes are each read in their own ([`processes`]).
    process: processes::ProcessState,
    /// The other processes' states, and which process `process` is.
    processes: processes::Processes,
    last_attempt: FxHashMap<CallRef, u32>,
    /// The time of the line being read.
    line_at: Timestamp,
    /// Attempts' URLs: a service's few endpoints, one copy each.
    urls: SharedTexts,
    idle: idle::IdleCall,
    /// Lines after the current line that were read with it ([`TextParser::line`]).
    read_ahead: usize,
    /// Where the line being counted lies, when it can be read again alone: a plain file
    /// and a dated stamp ([`crate::relevance::Filter::push_placed`]).
    place: Option<Range<u64>>,
    rereadable: bool,
    dates: DateCache,
    /// The AWS Lambda invocation the lines above were written in ([`lambda`]).
    invocation: lambda::Invocation,
    /// The line being read has a BSD syslog stamp, its year chosen ([`syslog_lines`]).
    year_inferred: bool,
    years: syslog_lines::Years,
    /// When the file was last written: the year of BSD syslog stamps, undated.
    file_written: Option<chrono::NaiveDate>,
    opts: ParseOptions,
    out: Parsed,
}

impl TextParser {
    fn new(input: u32, opts: &ParseOptions, rereadable: bool) -> Self {
        let date_base = opts
            .date
            .and_then(|d| days_from_civil(d.year() as i64, d.month() as i64, d.day() as i64))
            .and_then(|days| days.checked_mul(NANOS_PER_DAY));
        TextParser {
            input,
            zone: opts.tz,
            date_base: date_base.unwrap_or(0),
            dated: date_base.is_some(),
            day_offset: 0,
            prev_tod: None,
            first_tod: None,
            process: processes::ProcessState::default(),
            processes: processes::Processes::new(opts.line_processes.clone()),
            last_attempt: FxHashMap::default(),
            line_at: Timestamp::default(),
            urls: SharedTexts::default(),
            idle: idle::IdleCall::default(),
            read_ahead: 0,
            place: None,
            rereadable,
            dates: DateCache::default(),
            invocation: lambda::Invocation::default(),
            year_inferred: false,
            years: syslog_lines::Years::default(),
            file_written: opts.file_written,
            opts: opts.clone(),
            out: Parsed::new(opts),
        }
    }

    /// Reads line `n`; `ahead`, the lines after it, may be read too (see [`idle`]): the
    /// number of those lines read is returned.
    fn line(&mut self, n: u32, span: Range<u64>, raw: &[u8], ahead: Ahead) -> usize {
        let line = raw.trim_ascii();
        let verdict = if line.is_empty() {
            Verdict::Ignored
        } else if self.idle.is_active() && (line.starts_with(b"#") || line.starts_with(b"---")) {
            // Comments and sections change how later lines read: settle the held call first.
            self.replay_idle();
            return self.line(n, span, raw, ahead);
        } else if line.starts_with(b"#") {
            self.comment(line)
        } else if line.starts_with(b"---") {
            // A new section (another source) starts its clock again from the file's start.
            self.prev_tod = self.first_tod;
            self.day_offset = 0;
            Verdict::Ignored
        } else if line.starts_with(b"-- ") && line.ends_with(b" --") {
            // journalctl's own marks between entries (`-- Boot 0123... --`, `-- No entries
            // --`, `-- Logs begin at ... --`): no line of a program's.
            Verdict::Ignored
        } else {
            // A line cut by the end of the file (a crash, a writer still writing) that
            // reads as none of ours may be a tool call's or an effect's first bytes.
            let cut = |verdict| match verdict {
                Verdict::Ignored if ahead.cut_short() => Verdict::Skipped(CUT_SHORT.into()),
                verdict => verdict,
            };
            match self.message_line(n, &span, line, ahead) {
                Verdict::Skipped(why) if why == NO_STAMP => {
                    cut(self.unstamped(n, &span, raw, line, why, ahead))
                }
                // So may a line with a NUL inside (a damaged write).
                Verdict::Ignored if memchr::memchr(0, line).is_some() => {
                    Verdict::Skipped(DAMAGED.into())
                }
                // nginx's line about a request it gave up on ([`gateway`]), or a program's
                // line behind a syslog header ([`syslog_lines`]).
                Verdict::Ignored if !ahead.cut_short() => {
                    match super::gateway::of_error_line(line) {
                        Some(kind) => Verdict::Event(self.line_at, kind),
                        None => self.access_line_behind_header(line),
                    }
                }
                verdict => cut(verdict),
            }
        };
        // A value the end of a line cut short ran into is not read whole ([`cut_short`]).
        let verdict = match ahead.cut_short() {
            true => self.read_to_cut(n, raw, verdict),
            false => verdict,
        };
        match verdict {
            // Counted with its call (most lines of a month are held, or read ahead with
            // one that is): nothing to count, nor to drop, now.
            Verdict::Held => {}
            verdict => self.count(n, verdict),
        }
        self.place = None;
        std::mem::take(&mut self.read_ahead)
    }

    fn count(&mut self, n: u32, verdict: Verdict) {
        match verdict {
            Verdict::Event(at, kind) => {
                self.out.stats.events += 1;
                self.process.anonymous.effects_seen |= matches!(kind, EventKind::Effect(_));
                told_effect::LastAnswer::after(&mut self.process.last_answer, at, &kind);
                let event = Event {
                    at,
                    loc: Loc {
                        input: self.input,
                        line: n,
                    },
                    kind,
                };
                self.out.push_placed(event, self.place.clone());
            }
            Verdict::Events(events) => {
                self.out.stats.events += 1;
                let loc = Loc {
                    input: self.input,
                    line: n,
                };
                for (at, kind) in events {
                    told_effect::LastAnswer::after(&mut self.process.last_answer, at, &kind);
                    let event = Event { at, loc, kind };
                    self.out.push_placed(event, self.place.clone());
                }
            }
            Verdict::Ignored => self.out.stats.ignored += 1,
            Verdict::Skipped(why) => self.out.stats.skip(n, why),
            Verdict::Held => {}
        }
    }

    fn message_line(&mut self, n: u32, span: &Range<u64>, line: &[u8], ahead: Ahead) -> Verdict {
        let second_passes = self.dates.folds.second_passes();
        let stamped = self
            .dates
            .parse_stamp(line, self.zone)
            .or_else(|| self.bracketed_stamp(line))
            .or_else(|| self.ruby_stamp(line));
        let (stamped, level_first) = match stamped {
            Some(stamped) => (Some(stamped), false),
            None => (self.level_first_stamp(line), true),
        };
        let Some((stamp, used)) = stamped else {
            return Verdict::Skipped(NO_STAMP.into());
        };
        let mut rest = &line[used..];
        // AWS Lambda's runtimes: a tab, the request id (and Node's level) after the stamp.
        if rest.first() == Some(&b'\t')
            && let Some((id, after)) = lambda::after_request_id(rest)
        {
            self.invocation.line(id);
            rest = after;
        }
        // A syslog header's host and tag after the stamp (`STAMP HOST TAG[PID]: msg`): one
        // blank where the text traces put two, so theirs never pay for it.
        if let [b' ', second, ..] = rest
            && *second != b' '
            && let Some(msg) = self.behind_header_after_stamp(&line[..used], rest)
        {
            match self.own_stamp_behind_header(n, span, msg, ahead) {
                Some(verdict) => return verdict,
                None => {
                    let msg = syslog_lines::without_time_of_day(msg);
                    rest = syslog_lines::from_blank_before(rest, msg);
                }
            }
        }
        let message_follows = rest.first().is_none_or(u8::is_ascii_whitespace)
            // Huey's header ends in a colon, its message right after it.
            || (self.process.huey_seen && line[used - 1] == b':');
        if !message_follows {
            return Verdict::Skipped(NO_STAMP.into());
        }
        self.process.tail = tail::Tail::AfterRecord { failed: false };
        let at = self.place(stamp);
        self.process.anonymous.previous_line = self.process.anonymous.this_line.replace(at);
        self.line_at = at;
        // The offset of the line's local time from UTC, for dating a time-only settlement.
        let shift = match stamp {
            Stamp::TimeOfDay(_) if !self.dated => 0,
            Stamp::TimeOfDay(_) => self.zone.offset_at(at) * NANOS_PER_SEC,
            // The offset the stamp was written in (`+05:30`): a settlement's time of day
            // beside it is in the same. `Z` first: nearly every line of a month has it.
            Stamp::Instant(_) if line[used - 1] == b'Z' => 0,
            Stamp::Instant(_) => {
                (crate::time::written_offset(&line[..used]))
                    .unwrap_or_else(|| self.zone.offset_at(at))
                    * NANOS_PER_SEC
            }
        };
        let msg = level::without_level(message_of(rest));
        if self.process.pool.seen && line[0] == b'[' {
            // A held call is settled before the pool's line moves on whose lines follow:
            // replayed after it, its tool call would take back the lines the pool's
            // process now owns (found by `cargo fuzz run parse_text`).
            if self.idle.is_active() {
                self.replay_idle();
            }
            self.pool_line(line, msg, at);
        }
        if self.process.dramatiq.seen && line[0] == b'[' {
            self.dramatiq_line(line, used, at);
        }
        // A JSON object as the message (`%(asctime)s %(message)s` of `json.dumps(...)`, a
        // program's behind a syslog header): read as JSON Lines reads it, at its own time
        // or the line's ([`json_messages`]).
        if msg.first() == Some(&b'{') && json_messages::may_be_object(msg) {
            return self.json_object(n, msg, Some(at));
        }
        let local = Local { at, shift };
        // Read alone again from its place, a local time in a fold that the lines before it
        // made the second pass would be the first.
        let dated = matches!(stamp, Stamp::Instant(_))
            && self.dates.folds.second_passes() == second_passes
            && !self.year_inferred;
        self.place = (self.rereadable && dated).then(|| span.clone());
        let unsplit = idle::Unsplit {
            n,
            span,
            at: local,
            dated,
            msg,
        };
        // Python's logging of one of Stripe's objects: its JSON below ([`stripe_logged`]),
        // read before its repr's head (`<Refund refund id=re_1 at 0x...>`) is read alone.
        if msg.last() == Some(&b'{')
            && let Some(verdict) = self.stripe_object_below(&unsplit, &ahead)
        {
            return verdict;
        }
        match self.read_message(unsplit, ahead) {
            // structlog's console layout pads its event as a logger's name is padded:
            // stamina's `[warning  ] stamina.retry_scheduled        args=...` is its event.
            Verdict::Ignored
                if msg.len() < message_of(rest).len()
                    && let Some(verdict) =
                        (self.stamina_line(at, level::without_level_field(message_of(rest)))) =>
            {
                verdict
            }
            // `INFO payments refund created ...`: the word after the level was a logger's.
            Verdict::Ignored if msg.len() < message_of(rest).len() => {
                // Not when all that is left is a bare request (`INFO skipping POST http://...`).
                match level::after_one_word_logger(message_of(rest)) {
                    Some(msg) if http_request(msg).is_none() => {
                        self.read_after_logger(unsplit, msg, ahead)
                    }
                    _ => self.with_members_below(unsplit, ahead),
                }
            }
            // `INFO 2026-... views 17272 139677115872960 Refund ...`: the level came before
            // the stamp, the logger's name after it.
            Verdict::Ignored if level_first => match level_first::after_name(message_of(rest)) {
                Some(msg) => self.read_after_logger(unsplit, msg, ahead),
                None => self.with_members_below(unsplit, ahead),
            },
            // `openai-agents:core Invoking tool ...`: a `debug` module's namespace first.
            Verdict::Ignored => match level::after_debug_namespace(msg) {
                Some((_, msg)) => {
                    match self.read_message(idle::Unsplit { msg, ..unsplit }, ahead) {
                        Verdict::Ignored => self.with_members_below(unsplit, ahead),
                        verdict => verdict,
                    }
                }
                None => self.with_members_below(unsplit, ahead),
            },
            verdict => verdict,
        }
    }

    /// A message read as nothing, with pino-pretty's members of its object on the lines
    /// below it ([`pino_pretty`]): read again with them as its tokens.
    #[cold]
    fn with_members_below(&mut self, unsplit: idle::Unsplit, ahead: Ahead) -> Verdict {
        if !ahead.bytes().starts_with(b"    ") {
            return Verdict::Ignored;
        }
        let Some(tokens) = pino_pretty::members_below(ahead.bytes(), |k| ahead.line_end(k)) else {
            return Verdict::Ignored;
        };
        let mut msg = level::without_logger_prefixes(unsplit.msg).to_vec();
        msg.extend_from_slice(&tokens);
        match self.read_message(
            idle::Unsplit {
                msg: &msg,
                ..unsplit
            },
            ahead,
        ) {
            Verdict::Event(at, kind) => Verdict::Event(at, kind),
            Verdict::Events(events) => Verdict::Events(events),
            _ => Verdict::Ignored,
        }
    }

    /// A stamped line's message, read after its stamp and level.
    fn read_message(&mut self, unsplit: idle::Unsplit, ahead: Ahead) -> Verdict {
        let (msg, at, local) = (unsplit.msg, unsplit.at.at, unsplit.at);
        // A tool call first, the commonest line to get here: none of the plain shapes can
        // be taken for another (a plain tool call's arguments have no blank, so it ends in
        // neither `  started` nor `  ok`, and no request or answer starts `agent run`).
        if let Some(call) = plain_tool_call(msg) {
            return self.tool_call_plainly(unsplit, call, ahead);
        }
        if let Some(run) = plain_run_start(msg) {
            return self.run_start_plainly(unsplit.n, at, run);
        }
        if let Some(verdict) = self.continue_idle_plainly(unsplit) {
            return verdict;
        }
        if let Some((run, step)) = plain_step_ok(msg) {
            return self.step_ok_plainly(at, run, step);
        }
        // A held call reads its requests and answers in `hold_if_idle`.
        if !self.idle.is_active() {
            if let Some(r) = plain_request_line(msg) {
                let call = self.call_or_anonymous(at);
                if self.repeats_client_line(&call, r.number, r.url) {
                    return Verdict::Ignored;
                }
                return Verdict::Event(at, self.attempt(call, r.number, r.method, r.url, r.key));
            }
            if let Some(e) = plain_effect_line(msg) {
                let effect = effect_of(e, local, &mut self.dates, self.zone);
                return Verdict::Event(at, EventKind::Effect(Box::new(effect)));
            }
            if let Some(a) = plain_answer_line(msg) {
                let call = self.call_or_anonymous(at);
                let (effect_id, message) = (a.effect_id, small(a.text));
                return match a.amount_p.map(amount_in_pence).transpose() {
                    Ok(amount) => {
                        let kind = self.response(call, a.status, effect_id, false, amount, message);
                        self.answered(a.status);
                        Verdict::Event(at, kind)
                    }
                    Err(why) => Verdict::Skipped(why),
                };
            }
        }
        // A Huey consumer's line (`Executing huey_tasks.issue_refund: ID`), before its task's
        // name (`huey_tasks.issue_refund: ID ... executed in 0.006s`) is read as a prefix.
        if self.process.huey_seen
            && let Some(verdict) = self.huey_line(at, msg)
        {
            return verdict;
        }
        // tracing's span context (`create_refund{order_id=A-1}: payments: ...`): read past,
        // its fields kept at the message's end, where a token of the message's own wins.
        if let Some((rest, fields)) = tracing_spans::context(msg) {
            let mut owned;
            let msg = match fields.is_empty() {
                true => rest,
                false => {
                    owned = rest.to_vec();
                    for f in fields {
                        owned.extend_from_slice(b"  ");
                        owned.extend_from_slice(f);
                    }
                    &owned[..]
                }
            };
            return self.read_message(idle::Unsplit { msg, ..unsplit }, ahead);
        }
        // `agent: POST ...`, `[6073fddd-...] refund.created ...`: a program's name or a
        // request's tags before the message (Ruby's `progname`, Rails' `log_tags`).
        // Every such prefix at once: the message read again has none left.
        let inner = level::without_logger_prefixes(msg);
        if inner.len() < msg.len() {
            return self.read_message(
                idle::Unsplit {
                    msg: inner,
                    ..unsplit
                },
                ahead,
            );
        }
        let mut fields = Fields::empty();
        fields.fill(msg);
        let held = self.hold_if_idle(unsplit, &fields);
        if let Some(verdict) = held {
            return verdict;
        }
        // A Celery worker's task line (`Task tasks.issue_refund[ID] received`).
        if msg.first() == Some(&b'T')
            && let Some(verdict) = self.celery_task(at, msg)
        {
            return verdict;
        }
        // A Dramatiq or RQ worker's line about a task ([`job_queues`]).
        if let Some(verdict) = self.job_queue_line(at, msg) {
            return verdict;
        }
        // stamina's `stamina.retry_scheduled` ([`retry_lines`]).
        if msg.first() == Some(&b's')
            && let Some(verdict) = self.stamina_line(at, msg)
        {
            return verdict;
        }
        // An HTTP client library's own line (`HTTP Request: POST ...`): one byte turns
        // away nearly every other line that gets here.
        if client::may_be_client_line(msg)
            && let Some(verdict) = self.client_line(at, msg, &ahead)
        {
            return verdict;
        }
        match self.classify(&fields, local) {
            Ok(Some(EventKind::Failure(mut failure))) => {
                failure_of_cause(&mut failure, &ahead);
                Verdict::Event(at, EventKind::Failure(failure))
            }
            Ok(Some(kind)) => Verdict::Event(at, kind),
            Ok(None) => Verdict::Ignored,
            Err(why) => Verdict::Skipped(why),
        }
    }

    /// Puts a timestamp on the time line, rolling time-only ones past midnight.
    fn place(&mut self, stamp: Stamp) -> Timestamp {
        match stamp {
            Stamp::Instant(t) => t,
            Stamp::TimeOfDay(tod) => {
                if let Some(prev) = self.prev_tod {
                    // Never before the first day: there is no night before it to be late from.
                    let step = crate::time::day_step(prev, tod);
                    self.day_offset = (self.day_offset.saturating_add(step)).max(0);
                }
                self.prev_tod = Some(tod);
                self.first_tod.get_or_insert(tod);
                let local = (self.date_base)
                    .saturating_add(self.day_offset.saturating_mul(NANOS_PER_DAY))
                    .saturating_add(tod);
                // Undated, a time stays as written, on 1970-01-01.
                let offset = if self.dated {
                    self.dates.folds.offset_of_line(self.zone, local)
                } else {
                    0
                };
                Timestamp(local.saturating_sub(offset * NANOS_PER_SEC))
            }
        }
    }
}

/// A line's instant, and the offset of its local time from UTC in nanoseconds (`--tz` for
/// dated lines; none for undated time-only ones).
#[derive(Clone, Copy)]
struct Local {
    at: Timestamp,
    shift: i64,
}

/// Tokens that name the effect a response reports.
const EFFECT_ID_TOKENS: &[&str] = &[
    "effect_id",
    "refund_id",
    "charge_id",
    "payout_id",
    "payment_id",
    "transfer_id",
    "capture_id",
    "credit_id",
];

mod anonymous;
mod call_tokens;
mod calls;
mod celery;
mod client;
mod cut_short;
mod dramatiq;
mod effects;
mod embedded;
mod failures;
mod fields;
mod general;
mod huey;
mod idle;
mod java_http;
mod job_queues;
mod json_messages;
#[cfg(test)]
mod json_messages_tests;
pub(crate) mod jul;
mod lambda;
#[cfg(test)]
mod layout_tests;
mod level;
pub(crate) mod level_first;
mod one_blank;
mod own_words;
mod payload;
mod pino_pretty;
mod plain;
mod processes;
pub(crate) mod prose;
#[cfg(test)]
mod python_stack_tests;
mod retry_lines;
mod rotated;
mod rq;
pub(crate) mod ruby;
mod rust_error;
mod stamps;
mod stripe_logged;
mod syslog_lines;
#[cfg(test)]
mod syslog_tests;
mod tail;
pub(in crate::ingest) use client::is_header_line;
pub(in crate::ingest) use tail::is_exception_header;
#[cfg(test)]
mod tests;
mod told_effect;
mod tracing_spans;
mod unstamped;
mod words;

use fields::Fields;
