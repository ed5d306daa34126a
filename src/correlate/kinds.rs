//! What a call's tool, URL and arguments say: the kind of effect it produces, its order and
//! its amount.

use crate::event::Text;
use crate::money::{Currency, Money, WholeUnit};
use serde_json::Value;
use std::borrow::Cow;

use crate::event::EFFECT_KINDS as KNOWN_KINDS;

/// Which kind of effect a call produces: `--tool-kind` first, then a known kind named in
/// the tool (`issue_refund`) or the URL path (`/v1/refunds`).
pub fn effect_kind_of(
    tool: &str,
    url: Option<&str>,
    tool_kinds: &[(String, String)],
) -> Option<Text> {
    if let Some((_, kind)) = tool_kinds.iter().find(|(t, _)| t == tool) {
        return Some(kind.as_str().into());
    }
    let path = url.map(|u| {
        let no_scheme = u.split_once("://").map_or(u, |(_, rest)| rest);
        let path = no_scheme.find('/').map_or("", |i| &no_scheme[i..]);
        path.split(['?', '#']).next().unwrap_or("")
    });
    let by_tool = if names_a_read(tool) {
        0
    } else {
        kinds_named_in(tool)
    };
    let named = by_tool | path.map_or(0, kinds_named_in);
    KNOWN_KINDS
        .iter()
        .enumerate()
        .find(|(i, _)| named & (1 << i) != 0)
        .map(|(_, k)| Text::from_static_str(k))
}

/// Words that make a tool a read when they open its name (`get_refund_status`,
/// `listRefunds`) or close it (`refund_status`, `refunds.retrieve`): it names the kind of
/// effect it reads, not one it makes. Its attempts otherwise took refunds by order and time
/// (a status check's implied request, logged by its answer alone, took a proxy's copy).
const READ_WORDS: &[&str] = &[
    "get", "list", "fetch", "check", "lookup", "find", "search", "read", "query", "describe",
    "show", "view", "retrieve", "status", "details", "info",
];

/// Whether the tool's name says it reads ([`READ_WORDS`]), as a whole first or last word
/// (split at `_`, `-`, `.`, blanks and lower-to-upper case changes), and joins no second
/// action to it (`check_and_refund`). `--tool-kind` still maps such a tool.
fn names_a_read(tool: &str) -> bool {
    let mut words: Vec<String> = Vec::new();
    let mut prev_lower = false;
    for c in tool.chars() {
        if !c.is_ascii_alphanumeric() {
            prev_lower = false;
            words.push(String::new());
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower || words.is_empty() {
            words.push(String::new());
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        words
            .last_mut()
            .expect("pushed")
            .push(c.to_ascii_lowercase());
    }
    words.retain(|w| !w.is_empty());
    let is_read = |w: Option<&String>| w.is_some_and(|w| READ_WORDS.contains(&w.as_str()));
    let joins = words.iter().any(|w| w == "and" || w == "then");
    !joins && (is_read(words.first()) || is_read(words.last()))
}

/// Which of [`KNOWN_KINDS`] `text` names, any case, as a bit per kind. Without allocating:
/// this runs for every tool call and request read.
fn kinds_named_in(text: &str) -> u32 {
    let b = text.as_bytes();
    let mut named = 0;
    for i in 0..b.len() {
        if !matches!(b[i].to_ascii_lowercase(), b'r' | b'c' | b'p' | b't') {
            continue;
        }
        for (k, kind) in KNOWN_KINDS.iter().enumerate() {
            if b[i..].len() >= kind.len()
                && b[i..i + kind.len()].eq_ignore_ascii_case(kind.as_bytes())
            {
                named |= 1 << k;
            }
        }
    }
    named
}

/// The order and amount a call's arguments name, for matching by order and time. Tools that
/// mirror a payments API put the order in its `metadata` (`{"charge":"ch_1","amount":4500,
/// "metadata":{"order_id":"A-1"}}`, as Stripe's refunds take it): read there when the top
/// level names none. (A flat object has no `metadata` to look in.) `whole` is the unit the
/// call's input writes a bare whole `amount` in ([`WholeUnit`]).
pub fn order_and_amount(args: &Value, whole: WholeUnit) -> (Option<Text>, Option<Money>) {
    let Value::Object(map) = args else {
        return (None, None);
    };
    let (order, amount) =
        order_and_amount_by(|k| map.get(k).map(|v| Arg::Parsed(Cow::Borrowed(v))), whole);
    let in_metadata = || {
        let Some(Value::Object(meta)) = map.get("metadata") else {
            return None;
        };
        ORDER_NAMES.iter().find_map(|k| order_of(meta.get(*k)?))
    };
    (order.or_else(in_metadata), amount)
}

/// An order id written as a string or a number.
fn order_of(v: &Value) -> Option<Text> {
    match v {
        Value::String(s) => Some(s.as_str().into()),
        Value::Number(n) => Some(n.to_string().into()),
        _ => None,
    }
}

/// [`order_and_amount`] of a flat object's members as written
/// ([`crate::flat_json::flat_members`]), without building their values.
pub fn order_and_amount_flat(
    members: &[(&str, &str)],
    whole: WholeUnit,
) -> (Option<Text>, Option<Money>) {
    // The members it reads, found in one pass; the last of a repeated key, as in the
    // parsed object.
    let mut found = [None; ARG_NAMES.len()];
    for &(key, value) in members {
        if let Some(i) = ARG_NAMES.iter().position(|n| *n == key) {
            found[i] = Some(value);
        }
    }
    let get = |k: &str| {
        let v: &str = found[ARG_NAMES.iter().position(|n| *n == k)?]?;
        Some(match v.as_bytes().first()? {
            // No escapes in a flat object: the string is its text.
            b'"' => Arg::Text(&v[1..v.len() - 1]),
            _ if is_plain_integer(v) => Arg::Integer(v.parse().ok()?, v),
            _ => Arg::Parsed(Cow::Owned(serde_json::from_str(v).ok()?)),
        })
    };
    order_and_amount_by(get, whole)
}

/// The arguments [`order_and_amount_by`] reads.
const ORDER_NAMES: [&str; 4] = ["order", "order_id", "orderId", "order_ref"];
const ARG_NAMES: [&str; 9] = [
    ORDER_NAMES[0],
    ORDER_NAMES[1],
    ORDER_NAMES[2],
    ORDER_NAMES[3],
    "currency",
    "amount_p",
    "amount_minor",
    "amount_cents",
    "amount",
];

/// An argument's value, as [`order_and_amount_by`] reads it.
enum Arg<'v> {
    Text(&'v str),
    /// A plain integer and how it is written (as it displays).
    Integer(i64, &'v str),
    Parsed(Cow<'v, Value>),
}

/// `-?[1-9][0-9]{0,17}` or `0`: an i64 written as it displays.
fn is_plain_integer(v: &str) -> bool {
    let digits = v.strip_prefix('-').unwrap_or(v);
    v == "0"
        || (matches!(digits.as_bytes().first(), Some(b'1'..=b'9'))
            && digits.len() <= 18
            && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// The order and amount, given the arguments' value under a key.
fn order_and_amount_by<'v>(
    get: impl Fn(&str) -> Option<Arg<'v>>,
    whole: WholeUnit,
) -> (Option<Text>, Option<Money>) {
    let order = ORDER_NAMES.iter().find_map(|k| match get(k)? {
        Arg::Text(s) | Arg::Integer(_, s) => Some(s.into()),
        Arg::Parsed(v) => order_of(&v),
    });
    let currency = get("currency").and_then(|a| match a {
        Arg::Text(s) => Currency::parse(s),
        Arg::Integer(..) => None,
        Arg::Parsed(v) => v.as_str().and_then(Currency::parse),
    });
    let int_of = |k: &str| match get(k)? {
        Arg::Text(s) => s.trim().parse().ok(),
        Arg::Integer(i, _) => Some(i),
        Arg::Parsed(v) => integral_amount(&v),
    };
    let amount = if let Some(p) = int_of("amount_p") {
        Some(Money::new(p, Currency::GBP))
    } else {
        // `amount_cents`: minor units as Rails' money-rails names them.
        (int_of("amount_minor").or_else(|| int_of("amount_cents")))
            .map(|m| Money::new(m, currency.unwrap_or(Currency::GBP)))
            .or_else(|| {
                let written = match get("amount")? {
                    Arg::Text(s) | Arg::Integer(_, s) => Cow::Borrowed(s),
                    Arg::Parsed(v) => match &*v {
                        Value::String(s) => Cow::Owned(s.clone()),
                        Value::Number(n) => Cow::Owned(n.to_string()),
                        _ => return None,
                    },
                };
                major_amount(&written, currency, whole)
            })
    }
    .map(Money::size);
    (order, amount)
}

/// `amount` as an effect's `amount` is read: in major units with `currency` (`45.00`, a
/// string too, with the currency's sign or code where it agrees), or naming its currency
/// (`"45.00 GBP"`); a bare whole number in a currency with decimals (`4500` GBP, 45.00 or
/// 4,500.00) only in the unit declared for the input (unknown otherwise, as an effect's is).
fn major_amount(written: &str, currency: Option<Currency>, whole: WholeUnit) -> Option<Money> {
    let Some(currency) = currency else {
        return match crate::money::whole_written(written) {
            Some(number) => whole.read(number),
            None => crate::money::parse_written(written)?.ok(),
        };
    };
    match crate::money::whole_amount(written, currency) {
        Some(number) => whole.read(number),
        None => crate::money::in_currency(written, currency)
            .ok()
            .map(|minor| Money::new(minor, currency)),
    }
}

/// An integer amount, accepting `4500.0` and `"4500"` (which other rules flag).
fn integral_amount(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9e15)
                .map(|f| f as i64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}
