//! Stripe's API objects as a service's effects, one JSON object a line: a refund, charge,
//! payout or transfer object (`{"id":"re_1","object":"refund","amount":4500,"currency":
//! "gbp","created":1765040172,"metadata":{"order_id":"A-1"},"status":"succeeded"}`, as a
//! listing or a webhook handler that logs `event.data.object` writes it), and the events that
//! carry one (`{"object":"event","type":"refund.created","created":...,"request":{"id":
//! "req_1","idempotency_key":"K"},"data":{"object":{...}}}`, as `stripe events list` or a
//! webhook endpoint writes them). Each is the SPEC's effect line it stands for: the object's
//! id, kind, amount (minor units, as Stripe's API writes them), currency, `created` (unix
//! seconds) and status, the order in its `metadata` (`order_id`, `order`, `order_ref`,
//! `orderId`), and the key of the request that made it, which only an event names. A later
//! event of the object (`refund.updated` to `failed`) is its state at the event's time.

use serde_json::{Map, Value, json};

/// The objects read as effects, by Stripe's `object` name: each is its own kind.
const KINDS: [&str; 4] = ["refund", "charge", "payout", "transfer"];

/// Whether a line's object is one of Stripe's objects read here, dated: a file of them is
/// JSON Lines.
pub(crate) fn is_object(top: &Map<String, Value>) -> bool {
    let object = top.get("object").and_then(Value::as_str);
    object.is_some_and(|o| KINDS.contains(&o)) && top.contains_key("created")
}

/// A Stripe object of `kind` logged under its kind's name in a logger's line (`logger.info({
/// refund }, "refund created")` in a webhook handler): its whole `amount` is in minor units by
/// Stripe's API, so it is written as `amount_minor` (in ISO 4217's, as [`minor_units`]
/// brings them). Before, it read as any logger's bare whole number, its unit unknown.
pub(super) fn name_minor_units(object: &mut Map<String, Value>, kind: &str) {
    let stripes = is_object(object) && object.get("object").and_then(Value::as_str) == Some(kind);
    let currency = object.get("currency").and_then(Value::as_str);
    let amount = object.get("amount").and_then(Value::as_i64);
    let (true, Some(currency), Some(amount)) = (stripes, currency, amount) else {
        return;
    };
    if let Some(minor) = minor_units(amount, currency) {
        object.remove("amount");
        object.insert("amount_minor".into(), json!(minor));
    }
}

/// The object in the text Stripe's Python SDK gives for one of its objects (`repr`, which
/// structlog's JSON renderer writes for a value JSON cannot hold): `<Refund refund id=re_1 at
/// 0x7f...> JSON: {...}`, the object's JSON after the address.
pub(crate) fn object_of_repr(text: &str) -> Option<Map<String, Value>> {
    let (head, json) = text.strip_prefix('<')?.split_once("> JSON: ")?;
    head.contains(" at 0x").then_some(())?;
    match serde_json::from_str(json).ok()? {
        Value::Object(object) => Some(object),
        _ => None,
    }
}

/// The SPEC effect line `line` stands for, when it is one of Stripe's objects above or an
/// event of one; an error saying what it lacks when it is one but cannot be read (no id,
/// an amount that is not a whole number...).
pub(crate) fn effect_line(line: &str) -> Result<Option<String>, String> {
    let Some(object) = recognised(line) else {
        return Ok(None);
    };
    // An authorisation not captured moved no money yet.
    if object.object.get("captured") == Some(&Value::Bool(false)) {
        return Ok(None);
    }
    let what = object.kind;
    read(object).map(Some).ok_or_else(|| {
        format!(
            "a Stripe {what} needs `id`, a whole `amount`, `currency` and `created` (unix seconds)"
        )
    })
}

/// One of Stripe's objects read here, with what its event adds.
struct Recognised {
    object: Map<String, Value>,
    kind: &'static str,
    key: Option<String>,
    state_at: Option<i64>,
}

fn recognised(line: &str) -> Option<Recognised> {
    // Asked of every line of an unknown type (a health check's): parsed only when it may be.
    memchr::memmem::find(line.as_bytes(), b"\"object\"")?;
    let Ok(Value::Object(top)) = serde_json::from_str::<Value>(line) else {
        return None;
    };
    let (object, key, state_at) = match top.get("object")?.as_str()? {
        "event" => {
            let object = top.get("data")?.get("object")?.as_object()?;
            let kind = object.get("object")?.as_str()?;
            // `refund.created`, `charge.succeeded`, `charge.refund.updated`: events of the
            // object itself (`charge.refunded` carries the charge, not its refunds).
            let ty = top.get("type")?.as_str()?;
            let of = |t: &str| t.strip_prefix(kind).is_some_and(|r| r.starts_with('.'));
            (of(ty) || ty.strip_prefix("charge.").is_some_and(of)).then_some(())?;
            let request = top.get("request");
            let key = request.and_then(|r| r.get("idempotency_key"));
            let at = top.get("created").and_then(Value::as_i64);
            // Its state when the event happened: a creation's is the object's own.
            let later = !ty.ends_with(".created");
            let key = key.and_then(Value::as_str).map(String::from);
            (object.clone(), key, at.filter(|_| later))
        }
        _ => (top, None, None),
    };
    let name = object.get("object")?.as_str()?;
    let kind = KINDS.iter().copied().find(|k| *k == name)?;
    Some(Recognised {
        object,
        kind,
        key,
        state_at,
    })
}

/// The SPEC effect line of a recognised object; `None` when it lacks what one needs.
fn read(r: Recognised) -> Option<String> {
    let Recognised {
        object,
        kind,
        key,
        state_at,
    } = r;
    let id = object.get("id")?.as_str()?;
    let currency = object.get("currency")?.as_str()?;
    let amount = minor_units(object.get("amount")?.as_i64()?, currency)?;
    let created = iso(object.get("created")?.as_i64()?)?;
    let mut effect = Map::new();
    effect.insert("ts".into(), json!(created));
    effect.insert("type".into(), json!("effect"));
    effect.insert("effect_id".into(), json!(id));
    effect.insert("kind".into(), json!(kind));
    effect.insert("amount_minor".into(), json!(amount));
    effect.insert("currency".into(), json!(currency.to_ascii_uppercase()));
    if let Some(order) = order(&object) {
        effect.insert("order".into(), order);
    }
    if let Some(key) = key {
        effect.insert("idempotency_key".into(), json!(key));
    }
    if let Some(status) = object.get("status").and_then(Value::as_str) {
        effect.insert("status".into(), json!(status));
    }
    if let Some(at) = state_at.and_then(iso) {
        effect.insert("state_at".into(), json!(at));
    }
    serde_json::to_string(&effect).ok()
}

/// Stripe's amount in the currency's ISO 4217 minor units: Stripe writes ISK with two
/// decimals (100 is one króna) and MGA with none, unlike ISO 4217.
fn minor_units(amount: i64, currency: &str) -> Option<i64> {
    match currency.to_ascii_uppercase().as_str() {
        "ISK" => (amount % 100 == 0).then_some(amount / 100),
        "MGA" => amount.checked_mul(100),
        _ => Some(amount),
    }
}

/// The order in the object's `metadata`, a string or a number.
fn order(object: &Map<String, Value>) -> Option<Value> {
    let metadata = object.get("metadata")?.as_object()?;
    ["order_id", "order", "order_ref", "orderId", "orderRef"]
        .iter()
        .find_map(|k| match metadata.get(*k)? {
            Value::String(s) if !s.is_empty() => Some(json!(s)),
            Value::Number(n) => Some(json!(n.to_string())),
            _ => None,
        })
}

/// Unix seconds as an RFC 3339 time.
fn iso(secs: i64) -> Option<String> {
    let at = chrono::DateTime::from_timestamp(secs, 0)?;
    Some(at.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const REFUND: &str = r#"{"id":"re_1","object":"refund","amount":4500,"charge":"ch_1","created":1765040172,"currency":"gbp","metadata":{"order_id":"A-1"},"status":"succeeded"}"#;

    fn read(line: &str) -> Value {
        serde_json::from_str(&effect_line(line).unwrap().expect("an effect")).unwrap()
    }

    #[test]
    fn a_refund_object_is_its_effect() {
        assert_eq!(
            read(REFUND),
            json!({"ts":"2025-12-06T16:56:12Z","type":"effect","effect_id":"re_1","kind":"refund",
                   "amount_minor":4500,"currency":"GBP","order":"A-1","status":"succeeded"})
        );
    }

    #[test]
    fn an_event_gives_the_requests_key_and_a_later_state_its_time() {
        let event = |ty: &str, status: &str| {
            let object = REFUND.replace("succeeded", status);
            format!(
                r#"{{"id":"evt_1","object":"event","created":1765040200,"type":"{ty}","request":{{"id":"req_1","idempotency_key":"K-1"}},"data":{{"object":{object}}}}}"#
            )
        };
        let created = read(&event("refund.created", "pending"));
        assert_eq!(created["idempotency_key"], "K-1");
        assert_eq!(created["status"], "pending");
        assert_eq!(created.get("state_at"), None);
        let failed = read(&event("charge.refund.updated", "failed"));
        assert_eq!(failed["status"], "failed");
        assert_eq!(failed["state_at"], "2025-12-06T16:56:40Z");
    }

    #[test]
    fn a_charge_event_is_the_charge_and_stripes_own_exponents_are_minded() {
        let charge = r#"{"id":"ch_1","object":"charge","amount":4500,"captured":true,"created":1765040172,"currency":"isk","metadata":{"orderRef":"A-1"},"status":"succeeded"}"#;
        let event = format!(
            r#"{{"object":"event","type":"charge.succeeded","created":1765040172,"data":{{"object":{charge}}}}}"#
        );
        let read_event = read(&event);
        assert_eq!(
            (
                &read_event["kind"],
                &read_event["amount_minor"],
                &read_event["order"]
            ),
            (&json!("charge"), &json!(45), &json!("A-1"))
        );
        let mga = REFUND.replace("gbp", "mga");
        assert_eq!(read(&mga)["amount_minor"], 450_000);
        // Held, not captured: no money moved.
        let held = charge.replace(r#""captured":true"#, r#""captured":false"#);
        assert_eq!(effect_line(&held), Ok(None));
    }

    #[test]
    fn the_python_sdks_repr_of_an_object_gives_the_object() {
        let repr = "<Refund refund id=re_1 at 0x7fa821733a10> JSON: {\n  \"amount\": 4500,\n  \"id\": \"re_1\"\n}";
        let object = object_of_repr(repr).expect("an object");
        assert_eq!(Value::Object(object), json!({"amount": 4500, "id": "re_1"}));
        for other in [
            "<Refund refund id=re_1> JSON: {}",
            "re_1",
            "<x at 0x1> JSON: [1]",
        ] {
            assert_eq!(object_of_repr(other), None, "{other}");
        }
    }

    #[test]
    fn other_objects_and_events_are_none() {
        for line in [
            r#"{"id":"cus_1","object":"customer","created":1765040172}"#,
            r#"{"object":"event","type":"customer.created","data":{"object":{"id":"cus_1","object":"customer"}}}"#,
            // An event of another object than the one it carries.
            r#"{"object":"event","type":"charge.succeeded","data":{"object":{"id":"re_1","object":"refund","amount":1,"currency":"gbp","created":1}}}"#,
            r#"{"type":"effect","effect_id":"re_1"}"#,
            "[1, 2]",
        ] {
            assert_eq!(effect_line(line), Ok(None), "{line}");
        }
    }

    /// A refund that cannot be read is skipped with what it lacks, not passed over.
    #[test]
    fn a_stripe_object_without_what_an_effect_needs_says_so() {
        for line in [
            r#"{"id":"re_1","object":"refund","currency":"gbp","created":1765040172}"#,
            r#"{"id":"re_1","object":"refund","amount":"45.00","currency":"gbp","created":1765040172}"#,
            r#"{"id":"re_1","object":"refund","amount":4500,"currency":"gbp","created":"2026-12-06"}"#,
            r#"{"object":"event","type":"refund.created","data":{"object":{"id":"re_1","object":"refund","amount":4500,"currency":"gbp"}}}"#,
        ] {
            let why = effect_line(line).unwrap_err();
            assert!(why.starts_with("a Stripe refund needs"), "{line}: {why}");
        }
    }
}
