//! Effects that a service logs through a structured logger rather than as SPEC §3.2's
//! `effect` events: no `type`, a message that is an effect kind and what happened to it
//! (structlog's `"event": "refund created"`, pino's `"msg": "refund.succeeded"`,
//! `"message": "Refund failed"`), and the effect's id in a field (`refund_id`,
//! `effect_id`, `id`). The text traces read `refund created  refund_id=rf_1 ...` alike.
//! Any other message, however close (`refund created successfully`, `user created`), is the
//! application's own line.

use super::Fields;
use crate::event::{EFFECT_KINDS, EVENT_WORDS, Text};
use crate::ingest::replay;

/// Where loggers put their message, first found first.
const MESSAGE_NAMES: [&str; 4] = ["message", "msg", "event", "@m"];

/// What a logger's message says: an effect kind and the word for what happened to it.
pub(super) struct Said {
    pub kind: &'static str,
    pub word: &'static str,
}

/// The effect a line's message names, if the message is just that.
pub(super) fn effect_message(f: &Fields) -> Option<Said> {
    said(&message(f)?)
}

/// The line's message, under the first name loggers put one.
pub(super) fn message<'f>(f: &'f Fields) -> Option<std::borrow::Cow<'f, str>> {
    MESSAGE_NAMES.iter().find_map(|k| f.str(k).ok().flatten())
}

/// Whether the line's message is `quoted` (a JSON string with its quotes and no escape),
/// compared as written: no string is built.
pub(super) fn message_is(f: &Fields, quoted: &str) -> bool {
    MESSAGE_NAMES.iter().any(|k| f.get(k) == Some(quoted))
}

/// `refund created`, `refund.created`, `refund_created`, `Refund: created`.
fn said(message: &str) -> Option<Said> {
    let m = message.trim();
    // Short: a message that is a sentence is none of these.
    if m.len() > 32 {
        return None;
    }
    let (kind, word) = m.split_once([' ', '.', '_', ':'])?;
    let word = word.trim_start_matches([' ', ':']);
    let kind = EFFECT_KINDS.iter().find(|k| k.eq_ignore_ascii_case(kind))?;
    let word = EVENT_WORDS.iter().find(|w| w.eq_ignore_ascii_case(word))?;
    Some(Said { kind, word })
}

/// The effect's id: `<kind>_id` or `<kind>Id`, else `effect_id`, else `id`, a string or a
/// number. `f`
/// must hold the line's every field.
pub(super) fn effect_id(f: &Fields, kind: &str) -> Result<Text, String> {
    let named = format!("{kind}_id");
    let extra = |name: &str| {
        (f.0.extra.iter())
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| scalar(v))
    };
    // JavaScript's spelling too (pino, winston): `refundId`.
    let camel = format!("{kind}Id");
    extra(&named)
        .or_else(|| extra(&camel))
        .or_else(|| f.id("effect_id").ok().flatten())
        .or_else(|| extra("id"))
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
            format!("a logged {kind} without an id: give it `{named}`, `effect_id` or `id`")
        })
}

/// The line with the object logged under the effect's kind (`"refund": {"id": "re_1",
/// "amount": 4500, ...}`, as `logger.info({ refund }, "refund created")` writes it) in
/// place of that member: the object's members beside the line's others (which win), when
/// the object has an `id` (so the line read again finds one). A Stripe object's amount is
/// in minor units ([`super::stripe::name_minor_units`]); its Python SDK's object may be
/// written as its `repr` ([`super::stripe::object_of_repr`]).
pub(super) fn unnested(line: &str, kind: &str) -> Option<String> {
    use serde_json::Value;
    let Ok(Value::Object(mut top)) = serde_json::from_str::<Value>(line) else {
        return None;
    };
    let mut inner = match top.remove(kind) {
        Some(Value::Object(inner)) => inner,
        // Stripe's Python SDK's object, which structlog writes as its `repr`.
        Some(Value::String(repr)) => super::stripe::object_of_repr(&repr)?,
        _ => return None,
    };
    if !inner.contains_key("id") {
        return None;
    }
    if !top.contains_key("amount") {
        super::stripe::name_minor_units(&mut inner, kind);
    }
    for (k, v) in inner {
        top.entry(k).or_insert(v);
    }
    serde_json::to_string(&top).ok()
}

/// Whether the line's message has an effect's kind among its first two words (`Refund
/// re_1 created ...`, `Created refund re_1 ...`): only then is it read as a sentence,
/// which takes the whole line apart again.
pub(super) fn may_name_an_effect(f: &Fields) -> bool {
    let Some(message) = MESSAGE_NAMES.iter().find_map(|k| f.str(k).ok().flatten()) else {
        return false;
    };
    (message.split_ascii_whitespace().take(2))
        .any(|w| crate::event::is_effect_kind(&w.to_ascii_lowercase()))
}

/// The line with a message that is a sentence about an effect (`"msg": "Refund re_1 created
/// for order P-77: 45.00 GBP"`, read as a text log's sentence is:
/// [`crate::ingest::text::prose`]) written as the fields a logged effect has: `msg` the
/// kind and what happened, `<kind>_id`, `order_id`, `amount` as written (with its
/// currency), and the sentence's `key=value` words; the line's other members kept.
pub(super) fn effect_of_sentence(line: &str) -> Option<String> {
    use serde_json::Value;
    let Ok(Value::Object(mut top)) = serde_json::from_str::<Value>(line) else {
        return None;
    };
    let name = *MESSAGE_NAMES
        .iter()
        .find(|k| top.get(**k).is_some_and(Value::is_string))?;
    let message = top.get(name)?.as_str()?.to_string();
    let said = crate::ingest::text::prose::read_sentence(message.as_bytes())?;
    let text = |b: &[u8]| Value::String(String::from_utf8_lossy(b).into_owned());
    let kind = String::from_utf8_lossy(&said.kind).into_owned();
    top.remove(name);
    let event = String::from_utf8_lossy(&said.event);
    top.insert("msg".into(), Value::String(format!("{kind} {event}")));
    top.insert(format!("{kind}_id"), text(said.id));
    if let Some(order) = said.order {
        top.insert("order_id".into(), text(order));
    }
    if let Some(amount) = &said.amount {
        top.insert("amount".into(), text(amount));
    }
    if let Some(key) = said.key {
        top.insert("idempotency_key".into(), text(key));
    }
    for t in said.tokens {
        if let Some((k, v)) = String::from_utf8_lossy(t).split_once('=') {
            top.entry(k.to_string())
                .or_insert(Value::String(v.to_string()));
        }
    }
    serde_json::to_string(&top).ok()
}

/// The order a logger's line names other than as `order`/`order_id`: `orderId`,
/// `order_ref`, `orderRef`, or `order_id` in a logged object's `metadata` (Stripe's).
pub(super) fn order(f: &Fields) -> Option<Text> {
    let extra = |name: &str| (f.0.extra.iter()).find(|(k, _)| k == name).map(|(_, v)| *v);
    if let Some(order) = ["orderId", "order_ref", "orderRef"]
        .iter()
        .find_map(|k| scalar(extra(k)?))
    {
        return Some(order);
    }
    let metadata: serde_json::Value = serde_json::from_str(extra("metadata")?).ok()?;
    match metadata.get("order_id")? {
        serde_json::Value::String(s) => Some(Text::from(s.as_str())),
        serde_json::Value::Number(n) => Some(Text::from(n.to_string().as_str())),
        _ => None,
    }
}

/// The idempotency key a logger's line names other than as `idempotency_key`: pino's and
/// winston's camelCase `idempotencyKey`, or the header's own name.
pub(super) fn key(f: &Fields) -> Option<Text> {
    let extra = |name: &str| (f.0.extra.iter()).find(|(k, _)| k == name).map(|(_, v)| *v);
    ["idempotencyKey", "Idempotency-Key", "idempotency-key"]
        .iter()
        .find_map(|k| serde_json::from_str::<String>(extra(k)?).ok())
        .map(|k| Text::from(k.as_str()))
}

/// What a service's replay line names ([`replayed_effect`]).
pub(super) struct Replayed {
    pub kind: Option<&'static str>,
    pub effect_id: Option<Text>,
    /// The key its message names (`Idempotency key K seen before, ...`).
    pub key_in_message: Option<Text>,
}

/// A service's line saying it replayed an effect (`"msg": "idempotent replay",
/// "refundId": "re_1"`, see [`crate::ingest::replay`]): the effect's kind (where the line
/// says it) and id, where it names one, and the key its message names. Not a client's line
/// (one with an HTTP status or a call's fields); a service's request context (`method`,
/// `url`) is no client's. `f` must hold the line's every field.
pub(super) fn replayed_effect(f: &Fields) -> Option<Replayed> {
    const CLIENT_FIELDS: [&str; 7] = [
        "status",
        "statusCode",
        "status_code",
        "attempt",
        "run",
        "step",
        "tool",
    ];
    let message = message(f)?;
    let read = replay::replay_message(message.as_bytes())?;
    if CLIENT_FIELDS.iter().any(|k| f.get(k).is_some()) {
        return None;
    }
    let ids: Vec<(&str, Text)> = (f.0.extra.iter())
        .filter(|(name, _)| *name == "id" || replay::kind_of_id_field(name).is_some())
        .filter_map(|(name, v)| Some((name.as_ref(), scalar(v)?)))
        .chain(f.id("effect_id").ok().flatten().map(|id| ("effect_id", id)))
        .collect();
    let in_words = (read.effect).and_then(|(kind, id)| {
        let id = std::str::from_utf8(id).ok()?;
        Some((Some(kind), Text::from(id)))
    });
    let named = (replay::effect_named(message.as_bytes(), &ids))
        .or_else(|| logged_whole(f))
        .or(in_words)
        .filter(|(_, id)| !id.is_empty());
    let kind = named
        .as_ref()
        .and_then(|(k, _)| *k)
        .or(replay::kind_in(message.as_bytes()));
    Some(Replayed {
        kind,
        effect_id: named.map(|(_, id)| id),
        key_in_message: read
            .key
            .and_then(|k| std::str::from_utf8(k).ok())
            .map(Text::from),
    })
}

/// The effect logged whole under its kind (`logger.info({ refund }, "idempotent replay")`):
/// its kind and its object's `id`.
fn logged_whole(f: &Fields) -> Option<(Option<&'static str>, Text)> {
    EFFECT_KINDS.iter().find_map(|kind| {
        let raw = (f.0.extra.iter())
            .find(|(k, _)| k == kind)
            .map(|(_, v)| *v)?;
        let object: serde_json::Map<String, serde_json::Value> = serde_json::from_str(raw).ok()?;
        let id = match object.get("id")? {
            serde_json::Value::String(s) => Text::from(s.as_str()),
            serde_json::Value::Number(n) => Text::from(n.to_string().as_str()),
            _ => return None,
        };
        Some((Some(*kind), id))
    })
}

/// A string's text, or a number as written.
pub(super) fn scalar(v: &str) -> Option<Text> {
    if v.starts_with('"') {
        return serde_json::from_str::<String>(v)
            .ok()
            .map(|s| Text::from(&*s));
    }
    (v.starts_with(|c: char| c == '-' || c.is_ascii_digit())).then(|| Text::from(v))
}

/// A `state` or `status` field that is a word (`failed`; a logger's `"status": 200` is
/// none).
pub(super) fn state_field(f: &Fields) -> Option<Text> {
    ["state", "status"].iter().find_map(|k| {
        let v = f.str(k).ok().flatten()?;
        let word = !v.is_empty() && v.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_');
        word.then(|| Text::from(&*v))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_that_name_an_effect_and_what_happened() {
        for (m, kind, word) in [
            ("refund created", "refund", "created"),
            ("refund.succeeded", "refund", "succeeded"),
            ("refund_failed", "refund", "failed"),
            ("Refund: Created", "refund", "created"),
            (" payout paid ", "payout", "paid"),
        ] {
            let s = said(m).unwrap_or_else(|| panic!("{m}"));
            assert_eq!((s.kind, s.word), (kind, word), "{m}");
        }
        for m in [
            "refund created successfully",
            "user created",
            "refund",
            "created refund",
            "refund requested by the customer for order A-1",
            "refunds created",
            "refund rf_1",
        ] {
            assert!(said(m).is_none(), "{m}");
        }
    }
}
