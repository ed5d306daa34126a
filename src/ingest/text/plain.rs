//! The usual spellings of the commonest lines, read at their separators: a tool call, a
//! request, an answer, a step's end, a run's start, a service's effect. Splitting a line into fields was most
//! of its cost; each reading here answers only for the exact spelling it names, which the
//! fields would read the same (a test for each holds it to them), and any other spelling is
//! `None`, left to the field splitting.

use super::fields::Fields;
#[cfg(test)]
use super::http_request;
use super::{EFFECT_ID_TOKENS, as_text, parse_u32, status_line};
use crate::event::HTTP_METHODS;
use crate::scan::{contains_byte, first_blank};

/// `agent run R  step N  ok` spelt exactly so: `R` without whitespace, `N` in decimal
/// without leading zeros. The run and step, which the fields would give too (a test holds
/// it to them).
pub(super) fn plain_step_ok(msg: &[u8]) -> Option<(&[u8], u32)> {
    let rest = msg.strip_prefix(b"agent run ")?.strip_suffix(b"  ok")?;
    let end = rest.iter().position(u8::is_ascii_whitespace)?;
    let (run, rest) = rest.split_at(end);
    let digits = rest.strip_prefix(b"  step ")?;
    // Nine digits at most, as the fields' reading of a step number allows.
    let canonical = !run.is_empty()
        && (1..=9).contains(&digits.len())
        && (digits[0] != b'0' || digits.len() == 1)
        && digits.iter().all(u8::is_ascii_digit);
    let step = || digits.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0'));
    canonical.then(|| (run, step()))
}

/// `200 OK`: a status line without a `name=value` token. Its own reading, not
/// [`plain_answer_line`]'s: an idle call's answer is read once per call of a month, and
/// this one costs a third as much.
pub(super) fn plain_answer(msg: &[u8]) -> Option<u16> {
    // The shape first: a request line fails it at its fourth byte, before a search. The
    // line is a few bytes (`200 OK`): searched a word at a time ([`contains_byte`]).
    if (msg.len() > 3 && msg[3] != b' ') || contains_byte(msg, b'=') {
        return None;
    }
    // Three digits of a final answer (`1xx` are interim: the general reading ignores them).
    let [a, b, c] = [msg.first()?, msg.get(1)?, msg.get(2)?].map(|d| d.wrapping_sub(b'0'));
    if !(2..=5).contains(&a) || b > 9 || c > 9 {
        return None;
    }
    let status = u16::from(a) * 100 + u16::from(b) * 10 + u16::from(c);
    // A proxy's `200 Connection established` (perhaps with more after it) is no answer to
    // the general reading: left to it. Checked past `200 OK` only, which most lines are.
    const TUNNEL: &[u8] = b"connection";
    let tunnel = msg.len() > 6
        && msg
            .get(4..4 + TUNNEL.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(TUNNEL));
    (!tunnel).then_some(status)
}

/// `POST https://...  (attempt 1)` ([`plain_request_line`]) without a key: method and URL.
pub(super) fn plain_first_request(msg: &[u8]) -> Option<(&[u8], &str)> {
    let request = plain_request_line(msg)?;
    let first = request.number == 1 && request.key.is_none();
    first.then_some(())?;
    Some((request.method, as_text(request.url)?))
}

/// The parts of a tool call's line.
#[derive(Debug, PartialEq)]
pub(super) struct ToolCallLine<'a> {
    pub run: &'a [u8],
    pub step: u32,
    pub tool: &'a [u8],
    pub args: &'a [u8],
}

/// `agent run R  step N  tool=T  args=A` spelt exactly so: single spaces inside the first
/// two fields, two between fields, no space or tab in `R`, `T` or `A`, and no other ASCII
/// whitespace at either end of `R` or `T` (the fields would trim it). Read at fixed
/// separators, a tool call's line (a quarter of a month of traces) is not split into
/// fields; whenever this answers, the fields say the same (a test holds it to them), and
/// any other spelling is `None`, left to the field splitting.
#[inline]
pub(super) fn plain_tool_call(msg: &[u8]) -> Option<ToolCallLine<'_>> {
    let rest = msg.strip_prefix(b"agent run ")?;
    let end = first_blank(rest)?;
    let (run, rest) = rest.split_at(end);
    let rest = rest.strip_prefix(b"  step ")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let (step, rest) = rest.split_at(digits);
    let step = parse_u32(step)?;
    let rest = rest.strip_prefix(b"  tool=")?;
    let end = first_blank(rest)?;
    let (tool, rest) = rest.split_at(end);
    let args = rest.strip_prefix(b"  args=")?;
    // No blank at either end (as the fields' trim would find), told by those two bytes.
    let trimmed = |b: &[u8]| {
        !(b.first().is_some_and(u8::is_ascii_whitespace)
            || b.last().is_some_and(u8::is_ascii_whitespace))
    };
    if run.is_empty() || first_blank(args).is_some() || !trimmed(run) || !trimmed(tool) {
        return None;
    }
    Some(ToolCallLine {
        run,
        step,
        tool,
        args,
    })
}

/// `agent run R  started` spelt exactly so, `R` without whitespace: the run, which the
/// fields would give too (a test holds it to them).
pub(super) fn plain_run_start(msg: &[u8]) -> Option<&[u8]> {
    let run = msg
        .strip_prefix(b"agent run ")?
        .strip_suffix(b"  started")?;
    (!run.is_empty() && !run.iter().any(u8::is_ascii_whitespace)).then_some(run)
}

/// The parts of a request's line.
#[derive(Debug, PartialEq)]
pub(super) struct RequestLine<'a> {
    pub method: &'a [u8],
    pub url: &'a [u8],
    pub number: u32,
    pub key: Option<&'a [u8]>,
}

/// `METHOD URL  (attempt N)`, or that and `  idempotency_key=K`, spelt exactly so, with
/// no whitespace in `URL` or `K`: the request a refund call's line usually is, which the
/// fields would read the same (a test holds it to them).
pub(super) fn plain_request_line(msg: &[u8]) -> Option<RequestLine<'_>> {
    // Every method is upper case: an effect's or an agent's line fails at its first byte.
    if !msg.first()?.is_ascii_uppercase() {
        return None;
    }
    let space = msg.iter().position(|&b| b == b' ')?;
    let (method, rest) = (&msg[..space], &msg[space + 1..]);
    if !HTTP_METHODS.contains(&method) {
        return None;
    }
    let end = rest.iter().position(u8::is_ascii_whitespace)?;
    let (url, rest) = rest.split_at(end);
    let rest = rest.strip_prefix(b"  (attempt ")?;
    let close = rest.iter().position(|&b| b == b')')?;
    let number = parse_u32(&rest[..close])?;
    let key = match &rest[close + 1..] {
        [] => None,
        tail => {
            let key = tail.strip_prefix(b"  idempotency_key=")?;
            if !crate::ingest::is_key_value(key) || key.starts_with(b"Some(") {
                // No key (`None`, empty) or another spelling: the fields decide.
                return None;
            }
            Some(key)
        }
    };
    (!url.is_empty()).then_some(RequestLine {
        method,
        url,
        number,
        key,
    })
}

/// The parts of an answer's line.
#[derive(Debug, PartialEq)]
pub(super) struct AnswerLine<'a> {
    pub status: u16,
    pub text: &'a [u8],
    pub effect_id: Option<&'a [u8]>,
    pub amount_p: Option<&'a [u8]>,
}

/// `NNN Text`, then perhaps `  refund_id=X` (or another effect id's token) and
/// `  amount_p=N`, each once, spelt exactly so: the text of letters, digits and single
/// spaces, values without whitespace. The answer a refund's call usually gets, which the
/// fields would read the same (a test holds it to them).
pub(super) fn plain_answer_line(msg: &[u8]) -> Option<AnswerLine<'_>> {
    // The shape first: a request or an agent's line fails it at its first bytes.
    if !msg.get(..3)?.iter().all(u8::is_ascii_digit) || msg.get(3).is_some_and(|&b| b != b' ') {
        return None;
    }
    let head_len = msg.windows(2).position(|w| w == b"  ").unwrap_or(msg.len());
    let (head, mut rest) = msg.split_at(head_len);
    let (status, text) = status_line(head)?;
    if !head[3..]
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || b == b' ')
    {
        return None;
    }
    let (mut effect_id, mut amount_p) = (None, None);
    while !rest.is_empty() {
        let token = rest.strip_prefix(b"  ")?;
        let end = token
            .iter()
            .position(u8::is_ascii_whitespace)
            .unwrap_or(token.len());
        let (name, value) = token[..end].split_at(token[..end].iter().position(|&b| b == b'=')?);
        let value = &value[1..];
        let slot = match name {
            b"amount_p" => &mut amount_p,
            name if EFFECT_ID_TOKENS.iter().any(|t| t.as_bytes() == name) => &mut effect_id,
            _ => return None,
        };
        if slot.is_some() || value.is_empty() {
            return None;
        }
        *slot = Some(value);
        rest = &token[end..];
    }
    Some(AnswerLine {
        status,
        text,
        effect_id,
        amount_p,
    })
}

/// The classes of bytes the fields of [`plain_effect_line`] are made of, one bit each in
/// [`EFFECT_CHARS`]. Looked up rather than tested byte by byte: a month of payments logs
/// has millions of these bytes.
/// A kind: lower-case letters.
const KIND: u8 = 1;
/// An id, an order or a key: letters, digits and `_-.:`.
const ID: u8 = 2;
/// An amount: digits.
const DIGIT: u8 = 4;
/// A state: letters and `_`.
const STATE: u8 = 8;
/// The time an effect reached its state: letters, digits and `:.+-`.
const TIME: u8 = 16;
static EFFECT_CHARS: [u8; 256] = effect_chars();

const fn effect_chars() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        let mut classes = 0;
        if b.is_ascii_lowercase() {
            classes |= KIND;
        }
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':') {
            classes |= ID;
        }
        if b.is_ascii_digit() {
            classes |= DIGIT;
        }
        if b.is_ascii_alphabetic() || b == b'_' {
            classes |= STATE;
        }
        if b.is_ascii_alphanumeric() || matches!(b, b':' | b'.' | b'+' | b'-') {
            classes |= TIME;
        }
        table[c] = classes;
        c += 1;
    }
    table
}

/// The longest run at the start of `b` of bytes in `class` (at least one), and what
/// follows. Four bytes a step while they all are: the fields are a dozen bytes or two.
fn take(b: &[u8], class: u8) -> Option<(&[u8], &[u8])> {
    let of = |c: u8| EFFECT_CHARS[usize::from(c)];
    let mut n = 0;
    while let Some(&[a, b1, c, d]) = b.get(n..n + 4) {
        if of(a) & of(b1) & of(c) & of(d) & class == 0 {
            break;
        }
        n += 4;
    }
    while n < b.len() && of(b[n]) & class != 0 {
        n += 1;
    }
    (n > 0).then(|| b.split_at(n))
}

/// The parts of a service's effect line.
#[derive(Debug, PartialEq)]
pub(super) struct EffectLine<'a> {
    pub kind: &'a [u8],
    pub id: &'a [u8],
    pub order: &'a [u8],
    pub pence: i64,
    pub state: &'a [u8],
    /// When it reached the state, as written (read by the caller).
    pub state_time: &'a [u8],
    pub key: Option<&'a [u8]>,
}

/// `KIND ID  order ORDER  NNNp  STATE TIME`, or that and `  key=K`, spelt exactly so: one
/// space inside a field and two between fields; `KIND` in lower case; `ID`, `ORDER` and `K`
/// of letters, digits and `_-.:`; `NNN` of at most 18 digits; `STATE` of letters and `_`;
/// `TIME` of letters, digits and `:.+-`. The line a payments service writes for each
/// effect, which the fields would read the same (a test holds it to them).
#[inline]
pub(super) fn plain_effect_line(msg: &[u8]) -> Option<EffectLine<'_>> {
    let (kind, rest) = take(msg, KIND)?;
    let (id, rest) = take(rest.strip_prefix(b" ")?, ID)?;
    if (kind, id) == (&b"agent"[..], &b"run"[..]) || crate::event::is_event_word(id) {
        // `agent run` without a run id: an agent's line in error, not an effect. `refund
        // created`: the id is elsewhere on the line, or missing.
        return None;
    }
    let (order, rest) = take(rest.strip_prefix(b"  order ")?, ID)?;
    let (digits, rest) = take(rest.strip_prefix(b"  ")?, DIGIT)?;
    let rest = rest.strip_prefix(b"p  ")?;
    let (state, rest) = take(rest, STATE)?;
    let (state_time, rest) = take(rest.strip_prefix(b" ")?, TIME)?;
    let key = match rest {
        [] => None,
        tail => match take(tail.strip_prefix(b"  key=")?, ID)? {
            (key, []) if crate::ingest::is_key_value(key) => Some(key),
            _ => return None,
        },
    };
    let pence = (digits.len() <= 18)
        .then(|| (digits.iter()).fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))?;
    Some(EffectLine {
        kind,
        id,
        order,
        pence,
        state,
        state_time,
        key,
    })
}

/// `agent run ID  step N  ...`: the run and step, when the line has that shape.
pub(super) fn agent_step<'a>(f: &Fields<'a>) -> Option<(&'a [u8], u32)> {
    run_and_step(f.plain.first()?, f.plain.get(1)?)
}

/// The run and step from the first two fields, `agent run ID` and `step N`.
fn run_and_step<'a>(first: &'a [u8], second: &[u8]) -> Option<(&'a [u8], u32)> {
    let run = first.strip_prefix(b"agent run ")?.trim_ascii();
    if run.is_empty() || run.contains(&b' ') {
        return None;
    }
    let step = second.strip_prefix(b"step ")?;
    Some((run, parse_u32(step.trim_ascii())?))
}

#[cfg(test)]
mod tests;
