//! A service's effect line (`refund rf_1  order A-1  4500p  settled 14:02:22`, or its fields
//! as tokens) and the amounts written on it: pence, minor units, major units with their
//! currency, a whole number of unknown unit.

use super::fields::Fields;
use super::plain::EffectLine;
use super::{Local, small, text};
use crate::event::*;
use crate::money::{Currency, Money};
use crate::time::{DateCache, NANOS_PER_DAY, NANOS_PER_SEC, Stamp, Timestamp, Zone};

/// An effect line read plainly ([`plain_effect_line`](super::plain::plain_effect_line)): the effect [`effect_line`] reads
/// from its fields.
pub(super) fn effect_of(
    e: EffectLine,
    created: Local,
    dates: &mut DateCache,
    zone: Zone,
) -> Effect {
    let state = small(e.state);
    Effect {
        kind: small(e.kind),
        id: small(e.id),
        order: Some(small(e.order)),
        amount: Some(Money::new(e.pence, Currency::GBP)),
        whole: None,
        key: e.key.map(small),
        state_at: reached_at(e.state_time, created, dates, zone),
        happened: !state_means_not_happened(&state),
        state: Some(state),
    }
}

/// When an effect (created at `created`) reached its state, from the time written after it:
/// a time of day is on the creation's (local) date, or the next day if that is earlier.
/// In a fold of the line's zone, it is first the pass after the line's (a refund created
/// at 02:59 summer time and settled at `02:00:06` was settled in winter time, seconds later).
fn reached_at(time: &[u8], created: Local, dates: &mut DateCache, zone: Zone) -> Option<Timestamp> {
    let (stamp, used) = dates.parse_stamp_beside(time, zone, created.at)?;
    (used == time.len()).then_some(())?;
    Some(match stamp {
        Stamp::Instant(t) => t,
        Stamp::TimeOfDay(tod) => {
            let local = created.at.0.saturating_add(created.shift);
            let midnight = local.div_euclid(NANOS_PER_DAY) * NANOS_PER_DAY;
            let t_local = midnight.saturating_add(tod);
            let t = t_local.saturating_sub(created.shift);
            if t >= created.at.0 {
                return Some(Timestamp(t));
            }
            let in_zone = created.shift == zone.offset_at(created.at) * NANOS_PER_SEC;
            let offset = zone.offset_not_before(t_local, created.at);
            let later_pass = t_local.saturating_sub(offset * NANOS_PER_SEC);
            Timestamp(if in_zone && later_pass >= created.at.0 {
                later_pass
            } else {
                t.saturating_add(NANOS_PER_DAY)
            })
        }
    })
}

/// `refund rf_8XM1  order A-88214  4500p  settled 14:02:22.884  key=...`
/// Not an effect (`Ok(None)`) unless it has a kind, an id, and an order or an amount; an
/// effect whose amount cannot be read is an error.
/// `dates` is the input's: a settled time is most often on the day of the line's own.
pub(super) fn effect_line(
    f: &Fields,
    created: Local,
    dates: &mut DateCache,
    zone: Zone,
) -> Result<Option<Effect>, String> {
    let Some(first) = f.plain.first() else {
        return Ok(None);
    };
    let (kind, id) = match first.iter().position(|&b| b == b' ') {
        Some(sp) => (&first[..sp], first[sp + 1..].trim_ascii()),
        None => (&first[..], &b""[..]),
    };
    // `refund.created  refund_id=re_1 ...` (an event's name, as Rails' notifications spell
    // them): the kind and the word saying what happened; an id after it (`refund.created
    // re_1  order_id=...`) is the effect's, read below as the one after a word.
    let (kind, id, after_dotted) = match dotted_event(kind) {
        Some((kind, event)) => (kind, event, Some(id).filter(|i| !i.is_empty())),
        None => (kind, id, None),
    };
    if id.is_empty() {
        return Ok(None);
    }
    // `Refund created  ...`, as a message written for people starts: a known kind only.
    let lowered;
    let kind = match kind.split_first() {
        Some((first, rest))
            if first.is_ascii_uppercase() && rest.iter().all(u8::is_ascii_lowercase) =>
        {
            lowered = kind.to_ascii_lowercase();
            if !crate::event::is_effect_kind(&text(&lowered)) {
                return Ok(None);
            }
            &lowered[..]
        }
        _ => kind,
    };
    if kind.is_empty()
        || !kind.iter().all(u8::is_ascii_lowercase)
        || id.is_empty()
        || id.contains(&b' ')
    {
        return Ok(None);
    }
    let mut order = None;
    let mut amount = None;
    let mut written_whole = None;
    let mut state: Option<(&[u8], &[u8])> = None;
    for field in f.plain.iter().skip(1) {
        if let Some(o) = field.strip_prefix(b"order ") {
            order = Some(small(o.trim_ascii()));
        } else if let Some(p) = pence(field) {
            amount = one_amount(amount, Money::new(p, Currency::GBP))?;
        } else if looks_like_pence(field) {
            // `4500.5p`, or pence beyond i64: an amount that is there but cannot be read
            // exactly is an error, never an effect without an amount.
            return Err(format!("`{}` is not a whole number of pence", text(field)));
        } else if let Some(whole) = crate::money::whole_written(&text(field)) {
            written_whole = Some(whole);
        } else if let Some(written) = crate::money::parse_written(&text(field)) {
            // `£45.00`, `45.00 GBP`: an amount a service wrote for people; a `currency=`
            // token on the line settles a shared sign (`$45.00  currency=USD`).
            let written = match named_currency(f) {
                Some(c) => crate::money::in_currency(&text(field), c).map(|m| Money::new(m, c)),
                None => written,
            };
            amount = one_amount(amount, written?)?;
        } else {
            let (word, rest) = match field.iter().position(|&b| b == b' ') {
                Some(sp) => (&field[..sp], field[sp + 1..].trim_ascii()),
                None => (*field, &b""[..]),
            };
            // The first word is the state; one after it is a reason (`rejected
            // amount_exceeds_capture`), unless only it is a state a service writes.
            if word.iter().all(|b| b.is_ascii_alphabetic() || *b == b'_') {
                match state {
                    Some((first, _)) if is_state_word(first) || !is_state_word(word) => {}
                    _ => state = Some((word, rest)),
                }
            }
        }
    }
    // `refund created  refund_id=rf_1 ...`: the word after the kind says what happened and
    // the id is a token. Read as the id, every such line of a month would be one refund.
    let event_word = is_event_word(id).then_some(id);
    // `refund received  order_id=A-1  amount=45.00`: with neither of the SPEC's fields (`order
    // ORDER`, `4500p`), a word after the kind is what the service did, not an id (ids have
    // digits). Read as one, a request's line became a refund beside the real one: a
    // duplicate that never happened.
    let spelt_as_the_spec = order.is_some() || amount.is_some();
    if event_word.is_none() && !spelt_as_the_spec && !id.iter().any(u8::is_ascii_digit) {
        return Ok(None);
    }
    // `notification created  id=ntf_1 ...`: what happened to something else.
    if event_word.is_some() && !crate::event::is_effect_kind(&text(kind)) {
        return Ok(None);
    }
    // The kind's own id token, else `effect_id=`, else `id=`: never another object's
    // (`refund created  id=re_1  charge_id=ch_77` is refund `re_1`).
    let named_id = event_word.and_then(|_| {
        let (own, camel) = ([kind, b"_id"].concat(), [kind, b"Id"].concat());
        [&own[..], &camel[..], b"effect_id", b"id"]
            .into_iter()
            .find_map(|t| f.token(t).filter(|v| !v.is_empty()))
    });
    // An effect names its order as a field or its amount; or says what happened and names
    // its id. A line that only mentions an order (`refund skipped  order_id=A-1`, `webhook
    // received  id=evt_1  order_id=A-1`) is no effect.
    // A line naming only the effect and a state that says it did not happen (`refund rf_1
    // failed 14:02:15`) is an update: merged with the effect's other lines, it settles it.
    // The state may be a token too (`refund rf_1  status=failed`).
    let failed_token = (STATE_TOKENS.iter())
        .find_map(|t| f.token(t))
        .is_some_and(|v| state_means_not_happened(&text(v)));
    let update = (state.is_some_and(|(w, _)| state_means_not_happened(&text(w))) || failed_token)
        && names_an_effect(kind, id);
    if order.is_none() && amount.is_none() && !has_amount_token(f) && named_id.is_none() && !update
    {
        return Ok(None);
    }
    // Key=value services write the order as a token (`order=A-1`, `order_id=A-1`).
    let order = order.or_else(|| ORDER_TOKENS.iter().find_map(|t| f.token(t)).map(small));
    // `refund created re_1 order_id=A-1` (Go's `log.Printf`): the id right after the word.
    let id_after = || {
        (after_dotted.or(f.plain.get(1).copied()))
            .filter(|w| !w.contains(&b' ') && !w.contains(&b'=') && names_an_effect(kind, w))
    };
    let id = match (event_word, named_id) {
        (None, _) => id,
        (Some(_), Some(named)) => named,
        (Some(_), None) if let Some(after) = id_after() => after,
        // `refund rejected  order_id=A-1  status=422`: a refund that did not happen, and
        // none to settle; the service's answer, not a broken line.
        (Some(word), None) if state_means_not_happened(&text(word)) => return Ok(None),
        (Some(word), None) => {
            return Err(format!(
                "an effect line without an id: `{}` is not one (write `{} ID` or an `effect_id=` token)",
                text(word),
                text(kind)
            ));
        }
    };
    // Tokens win over a `4500p` field; a token that cannot be read is an error.
    if let Some(a) = amount_of(f)? {
        amount = Some(a);
    }
    // The state: a `settled TIME` field, else a `status=`/`state=` token of letters
    // (`status=failed`; not `status=402`), else the word after the kind; but a word after
    // the kind saying the effect did not happen (`refund failed  ...  card_declined`) wins.
    let state_token = || {
        STATE_TOKENS.iter().find_map(|t| {
            f.token(t).filter(|v| {
                !v.is_empty() && v.iter().all(|b| b.is_ascii_alphabetic() || *b == b'_')
            })
        })
    };
    let untimed = |w| -> (&[u8], &[u8]) { (w, b"") };
    let state = match event_word {
        Some(w) if state_means_not_happened(&text(w)) => Some(untimed(w)),
        _ => state
            .or_else(|| state_token().map(untimed))
            .or(event_word.map(untimed)),
    };
    let (state, state_at) = match state {
        Some((word, rest)) => (Some(small(word)), reached_at(rest, created, dates, zone)),
        None => (None, None),
    };
    let happened = !state.as_deref().is_some_and(state_means_not_happened);
    Ok(Some(Effect {
        kind: small(kind),
        id: small(id),
        order,
        whole: (amount.is_none())
            .then(|| whole_amount_of(f).or(written_whole))
            .flatten(),
        amount,
        // A service writes the key it was sent as `key=`, or as the client spelt it.
        key: (f.token(b"key").and_then(crate::ingest::key_of))
            .or_else(|| f.idempotency_key())
            .map(small),
        state,
        state_at,
        happened,
    }))
}

/// A service's line saying it replayed an effect (`idempotent replay  refund_id=re_1
/// idempotency_key=K`, see [`crate::ingest::replay`]): the effect by a token naming its
/// kind's id, else `effect_id=` ([`crate::ingest::replay::effect_named`]), and the key
/// (a token, or named in the message: `idempotent replay for key K`). Not a client's
/// answer (one with a status). Tokens
/// written with one blank between them (`idempotent replay refund_id=re_1 key=K`) count.
pub(super) fn replay_line(f: &Fields) -> Option<Replay> {
    use crate::ingest::replay;
    // The words before a field's first token (`idempotent replay refund_id=re_1`).
    fn head(p: &[u8]) -> &[u8] {
        let Some(eq) = memchr::memchr(b'=', p) else {
            return p;
        };
        &p[..memchr::memrchr(b' ', &p[..eq]).unwrap_or(0)]
    }
    let (message, read) = (f.plain.iter().take(4))
        .map(|p| head(p))
        .find_map(|m| Some((m, replay::replay_message(m)?)))?;
    let one_blank = (f.plain.iter())
        .flat_map(|p| p.split(|&b| b == b' '))
        .filter_map(super::fields::token);
    let tokens: Vec<(&[u8], &[u8])> = f.tokens.iter().copied().chain(one_blank).collect();
    let token = |name: &[u8]| {
        (tokens.iter())
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    };
    // A client's answer, not the service's line.
    if token(b"status").is_some() || token(b"status_code").is_some() {
        return None;
    }
    let ids: Vec<(&str, &[u8])> = (tokens.iter())
        .filter_map(|(name, value)| Some((std::str::from_utf8(name).ok()?, *value)))
        .filter(|(name, _)| {
            matches!(*name, "id" | "effect_id") || replay::kind_of_id_field(name).is_some()
        })
        .collect();
    let in_words = read.effect.map(|(kind, id)| (Some(kind), id));
    let named = (replay::effect_named(message, &ids))
        .or(in_words)
        .filter(|(_, id)| !id.is_empty());
    let key = (token(b"key").and_then(crate::ingest::key_of))
        .or_else(|| token(b"idempotency_key").and_then(crate::ingest::key_of))
        .or_else(|| f.idempotency_key())
        .or(read.key);
    // A replay that names neither an effect nor a key says nothing of which answer.
    if named.is_none() && key.is_none() {
        return None;
    }
    Some(Replay {
        kind: (named.and_then(|(k, _)| k).or(replay::kind_in(message))).map(Text::from),
        effect_id: named.map(|(_, id)| small(id)),
        key: key.map(small),
    })
}

/// Tokens that give an effect line's order when no `order ORDER` field does.
/// `orderId`, `order_ref`: as services in other languages name it (compared in any case).
const ORDER_TOKENS: [&[u8]; 4] = [b"order", b"order_id", b"orderId", b"order_ref"];

/// Tokens that give an effect line's state when no `STATE TIME` field does.
const STATE_TOKENS: [&[u8]; 2] = [b"status", b"state"];

/// `refund.created`: a known kind, a dot, and a word saying what happened to it.
pub(super) fn dotted_event(word: &[u8]) -> Option<(&[u8], &[u8])> {
    let dot = word.iter().position(|&b| b == b'.')?;
    let (kind, event) = (&word[..dot], &word[dot + 1..]);
    let said = is_event_word(event) || state_means_not_happened(&text(event));
    (said && crate::event::is_effect_kind(&text(kind))).then_some((kind, event))
}

/// Words that say what happened to an effect, written where its id goes (`refund created
/// refund_id=rf_1`, `refund failed  ...`): an id of lower-case letters only is one of these
/// far more often than an id.
/// `refund rf_1`: a kind of effect the audit knows and an id with a digit in it, as ids are
/// (`retry 2`, `healthcheck db`, `refund worker` are no effect's names).
fn names_an_effect(kind: &[u8], id: &[u8]) -> bool {
    crate::event::is_effect_kind(&text(kind))
        && id.iter().any(u8::is_ascii_digit)
        && id.iter().any(u8::is_ascii_alphabetic)
}

/// A word a service writes as an effect's state: one of [`is_event_word`]'s or one saying
/// it did not happen.
fn is_state_word(word: &[u8]) -> bool {
    is_event_word(word) || state_means_not_happened(&text(word))
}

/// The currency a `currency=` token names, when it names one.
fn named_currency(f: &Fields) -> Option<Currency> {
    Currency::parse(&text(f.token(b"currency")?))
}

/// An effect line's amount, written once or written again the same: two that disagree
/// (`45.00 GBP  52.61 EUR`, a conversion beside the original) leave which one the effect
/// was unknown, so the line is an error, not the last one read.
fn one_amount(before: Option<Money>, now: Money) -> Result<Option<Money>, String> {
    // Compared as sizes, as correlation reads them: `-1200p  £12.00` agree.
    match before {
        Some(b) if b.size() != now.size() => Err(format!(
            "two amounts that disagree ({} and {})",
            b.display(),
            now.display()
        )),
        _ => Ok(Some(now)),
    }
}

/// `4500p`: pence.
fn pence(field: &[u8]) -> Option<i64> {
    let digits = field.strip_suffix(b"p")?;
    let (neg, digits) = match digits.strip_prefix(b"-") {
        Some(d) => (true, d),
        None => (false, digits),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v: i64 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    Some(if neg { -v } else { v })
}

/// A field shaped like `4500p` that [`pence`] could not read.
fn looks_like_pence(field: &[u8]) -> bool {
    field.strip_suffix(b"p").is_some_and(|d| {
        d.iter().any(u8::is_ascii_digit)
            && d.iter()
                .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b','))
    })
}

fn has_amount_token(f: &Fields) -> bool {
    AMOUNT_TOKENS.iter().any(|t| f.token(t).is_some())
}

/// The tokens that give an amount, read in this order by [`amount_of`].
pub(super) const AMOUNT_TOKENS: [&[u8]; 4] =
    [b"amount_p", b"amount_minor", b"amount_cents", b"amount"];

/// `amount_p=4500` (GBP pence), `amount_minor=4500  currency=EUR`, or `amount=45.00
/// currency=EUR` (major units, as services log them and as the CSV exports write them,
/// converted exactly by the currency's exponent). An amount that is written but cannot be
/// read (not a number, more decimals than the currency has, no or a bad currency) is an
/// error, never a guess: a wrong currency would be summed into the wrong total.
pub(super) fn amount_of(f: &Fields) -> Result<Option<Money>, String> {
    if let Some(p) = f.token(b"amount_p") {
        return amount_in_pence(p).map(Some);
    }
    // `amount_cents`: minor units as Rails' money-rails names them.
    let minor = (f.token(b"amount_minor").map(|m| ("amount_minor", m)))
        .or_else(|| f.token(b"amount_cents").map(|m| ("amount_cents", m)));
    let (name, written) = match (minor, f.token(b"amount")) {
        (Some(minor), _) => minor,
        (None, Some(major)) => ("amount", major),
        (None, None) => return Ok(None),
    };
    // `amount=4500 GBP`: the currency's code inside the amount's value.
    let (written, inside) = with_code(written);
    let code = f.token(b"currency").or(inside);
    // `amount=£45.00`, `amount=GBP45.00`: a value that names its currency as an effect
    // line's field does (`£45.00`) is read as that field is, and refused for the same reason.
    if let (None, "amount") = (code, name)
        && let Some(read) = crate::money::parse_written(&text(written))
    {
        return read.map(Some);
    }
    let code = code.ok_or_else(|| {
        // `amount=45.00 currency=GBP`: one space keeps the currency inside the amount's
        // field (SPEC §3.1 separates fields by two or more).
        match text(written).split_once(" currency=") {
            Some((amount, code)) => format!(
                "`{name}={amount} currency={code}` is one field: separate fields by two or more spaces (`{name}={amount}  currency={code}`)"
            ),
            None => format!("`{name}=` without `currency=`"),
        }
    })?;
    let currency = Currency::parse(&text(code))
        .ok_or_else(|| format!("`currency={}` is not a currency code", text(code)))?;
    let minor = match name {
        "amount_minor" | "amount_cents" => integer_amount(name, written)?,
        _ if crate::money::ambiguous_whole_amount(&text(written), currency) => return Ok(None),
        _ => crate::money::in_currency(&text(written), currency)?,
    };
    Ok(Some(Money::new(minor, currency)))
}

/// An `amount=` written as a bare whole number beside a `currency=` of decimals, which
/// [`amount_of`] reads as unknown ([`crate::money::whole_amount`]).
fn whole_amount_of(f: &Fields) -> Option<Money> {
    if (AMOUNT_TOKENS[..3].iter()).any(|t| f.token(t).is_some()) {
        return None;
    }
    let (written, inside) = with_code(f.token(b"amount")?);
    let currency = Currency::parse(&text(f.token(b"currency").or(inside)?))?;
    crate::money::whole_amount(&text(written), currency)
}

/// An amount's value and the currency code written after it in the same value (`4500
/// GBP`), if any.
fn with_code(written: &[u8]) -> (&[u8], Option<&[u8]>) {
    match written.split_last_chunk::<4>() {
        Some((number, [b' ', code @ ..])) if code.iter().all(u8::is_ascii_uppercase) => {
            (number.trim_ascii_end(), Some(&written[written.len() - 3..]))
        }
        _ => (written, None),
    }
}

/// `amount_p=`: pence.
pub(super) fn amount_in_pence(v: &[u8]) -> Result<Money, String> {
    Ok(Money::new(integer_amount("amount_p", v)?, Currency::GBP))
}

fn integer_amount(name: &str, v: &[u8]) -> Result<i64, String> {
    std::str::from_utf8(v)
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .ok_or_else(|| format!("`{name}={}` is not an integer amount", text(v)))
}
