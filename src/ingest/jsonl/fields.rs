//! A JSON line's fields, borrowed from the line as raw JSON: found by name in one pass
//! ([`read_raw`]), and read as the types an event needs only when its type needs them.

use crate::event::{Attrs, CallRef, Text};
use crate::money::{Currency, Money};
use crate::scan::same_bytes;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::cell::Cell;

use super::object;

/// The line's object: its known fields, and the others when `extra`.
pub(super) fn read_raw(text: &str, extra: bool) -> Result<Raw<'_>, String> {
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
            .map_err(|e| crate::ingest::unreadable_json(&e))?;
    }
    Ok(raw)
}

/// The fields the audit reads, borrowed from the line as raw JSON and read only when the
/// event type needs them: a line that is no event builds nothing. `null` deserializes as
/// `None`, the same as absent.
pub(super) struct Raw<'a> {
    /// Each value as written (a string with its quotes).
    known: [Option<&'a str>; KNOWN.len()],
    /// A bit per [`KNOWN`] entry that `known` holds.
    present: u64,
    /// Read by [`object::plain_members`]: no string holds an escape.
    plain: bool,
    /// Fields the audit does not read, in line order: kept as attributes (SPEC §3.2).
    pub(super) extra: Vec<(Cow<'a, str>, &'a str)>,
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

/// Where a line's time is, first found first: SPEC §3.2's `ts`, then the spellings other
/// structured loggers use (Serilog's compact format, CLEF, writes `@t`).
pub(crate) const STAMP_NAMES: [&str; 6] =
    ["ts", "timestamp", "@timestamp", "time", "@t", "asctime"];

/// Every field name the audit reads; `Raw::known` holds them in this order.
pub(super) const KNOWN: [&str; 35] = [
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
pub(super) fn slot(name: &str) -> Option<usize> {
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
pub(super) struct Fields<'r, 'a>(pub(super) &'r Raw<'a>, Cell<u64>);

impl<'r, 'a> Fields<'r, 'a> {
    /// The fields of `raw`, none read yet.
    pub(super) fn new(raw: &'r Raw<'a>) -> Self {
        Fields(raw, Cell::new(0))
    }

    // Always inlined: `k` is a literal at every call, and its slot is then known.
    #[inline(always)]
    pub(super) fn get(&self, k: &str) -> Option<&'a str> {
        let i = slot(k)?;
        self.1.set(self.1.get() | 1 << i);
        self.0.known[i]
    }

    /// The fields the audit did not read, as `name`, value (a string unquoted, anything
    /// else as its JSON text): the unknown ones in line order, then the known names this
    /// event type has no use for (an `order` on a response). Called once the event is built.
    pub(super) fn attrs(&self) -> Attrs {
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
    pub(super) fn str(&self, k: &str) -> Result<Option<Cow<'a, str>>, String> {
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

    pub(super) fn string(&self, k: &str) -> Result<Option<Text>, String> {
        Ok(self.str(k)?.map(|s| Text::from(&*s)))
    }

    /// An identifier written as a string or a number.
    pub(super) fn id(&self, k: &str) -> Result<Option<Text>, String> {
        match self.get(k) {
            Some(t) if t.starts_with(|c: char| c == '-' || c.is_ascii_digit()) => {
                Ok(Some(t.into()))
            }
            Some(t) if t.starts_with('"') => self.string(k),
            None => Ok(None),
            Some(_) => Err(format!("`{k}` is not a string or number")),
        }
    }

    pub(super) fn uint(&self, k: &str) -> Result<Option<u32>, String> {
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

    pub(super) fn bool(&self, k: &str) -> Result<Option<bool>, String> {
        match self.get(k) {
            None => Ok(None),
            Some("true" | "\"true\"") => Ok(Some(true)),
            Some("false" | "\"false\"") => Ok(Some(false)),
            Some(_) => Err(format!("`{k}` is not true or false")),
        }
    }

    pub(super) fn call(&self) -> Result<Option<CallRef>, String> {
        match (self.id("run")?, self.uint("step")?) {
            (Some(run), Some(step)) => Ok(Some(CallRef { run, step, part: 0 })),
            _ => Ok(None),
        }
    }

    /// An `amount` written as a bare whole number with a `currency` of decimals, which
    /// [`Self::money`] reads as unknown ([`crate::money::whole_amount`]).
    pub(super) fn whole_money(&self) -> Option<Money> {
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
    pub(super) fn money(&self) -> Result<Option<Money>, String> {
        let int = |k: &str| -> Result<Option<i64>, String> {
            let bad = |why| format!("`{k}` {why}");
            let minor = |t: &str| crate::money::parse_minor(t).map(Some).map_err(bad);
            match self.get(k) {
                None => Ok(None),
                Some(t) if t.starts_with('"') => minor(self.str(k)?.unwrap_or_default().trim()),
                Some(t) => minor(t),
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
