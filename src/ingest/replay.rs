//! A service's words for answering a request from its idempotency record rather than
//! acting on it (`idempotent replay`, `refund replayed`, `Replaying stored response`),
//! shared by the readers of structured and text logs: such a line with an effect's id is a
//! [`crate::event::Replay`].

use crate::event::EFFECT_KINDS;

/// The words a service's replay message is made of (`idempotent replay`, `refund replayed`,
/// `Replaying stored response`, `Idempotency key K seen before, replaying stored
/// response`), besides the effect kinds: a message with any other word (`not a replay`,
/// `replay attack rejected`, `Replaying 3 events`, `webhook delivery replayed`, `Replaying
/// request from cassette`, a client's `Replaying request with idempotency key K`) is about
/// something else. Idempotency, an effect kind or a stored response says what is
/// replayed.
const IDEMPOTENCY: [&str; 4] = [
    "idempotent",
    "idempotency",
    "idempotently",
    "idempotency-key",
];
const REPLAY: [&str; 4] = ["replay", "replays", "replayed", "replaying"];
const STORED: [&str; 6] = [
    "response", "stored", "cached", "saved", "original", "previous",
];
const OTHER: [&str; 16] = [
    "key",
    "for",
    "of",
    "the",
    "a",
    "from",
    "record",
    "returning",
    "served",
    "with",
    "seen",
    "before",
    "already",
    "hit",
    "order",
    "on",
];

/// A service's replay message, read: the key and the effect it names in its words (`for
/// key K`, `for refund re_1`), if any.
#[derive(Debug, PartialEq)]
pub struct ReplayMessage<'a> {
    pub key: Option<&'a [u8]>,
    pub effect: Option<(&'static str, &'a [u8])>,
}

/// What the word before a value said the value is.
#[derive(Clone, Copy)]
enum Before {
    Key,
    Order,
    Kind(&'static str),
}

/// `message` read as a service's replay message: a replay word, only such words and effect
/// kinds (and the values after `key`, `order` and a kind: an effect's id has a digit), and
/// a word saying what is replayed (idempotency, a kind, a stored response).
pub fn replay_message(message: &[u8]) -> Option<ReplayMessage<'_>> {
    const LONGEST: usize = 160;
    if message.len() > LONGEST {
        return None;
    }
    let is = |w: &[u8], list: &[&str]| list.iter().any(|l| l.as_bytes().eq_ignore_ascii_case(w));
    let words = (message.split(u8::is_ascii_whitespace))
        .map(|w| w.trim_ascii_start())
        .map(|w| {
            let start = w
                .iter()
                .position(u8::is_ascii_alphanumeric)
                .unwrap_or(w.len());
            let end = w
                .iter()
                .rposition(u8::is_ascii_alphanumeric)
                .map_or(start, |e| e + 1);
            &w[start..end.max(start)]
        })
        .filter(|w| !w.is_empty());
    let (mut replay, mut what, mut key, mut effect) = (false, false, None, None);
    let mut after: Option<Before> = None;
    for w in words {
        let value_of = after.take();
        let kind = EFFECT_KINDS
            .iter()
            .find(|k| k.as_bytes().eq_ignore_ascii_case(w));
        if is(w, &IDEMPOTENCY) || is(w, &REPLAY) || is(w, &STORED) || is(w, &OTHER) {
            replay |= is(w, &REPLAY);
            what |= is(w, &IDEMPOTENCY) || is(w, &STORED);
            after = match () {
                _ if is(w, &["key", "idempotency-key"]) => Some(Before::Key),
                _ if is(w, &["order"]) => Some(Before::Order),
                _ => None,
            };
        } else if let Some(kind) = kind {
            what = true;
            after = Some(Before::Kind(kind));
        } else {
            match value_of {
                Some(Before::Key) => key = Some(crate::ingest::key_of(w)?),
                Some(Before::Order) => {}
                Some(Before::Kind(kind)) if w.iter().any(u8::is_ascii_digit) => {
                    effect = Some((kind, w));
                }
                _ => return None,
            }
        }
    }
    (replay && what).then_some(ReplayMessage { key, effect })
}

/// The effect kind a message names among its words (`refund replayed`), if any.
pub fn kind_in(message: &[u8]) -> Option<&'static str> {
    message
        .split(|b| !b.is_ascii_alphabetic())
        .find_map(|word| {
            EFFECT_KINDS
                .iter()
                .find(|k| k.as_bytes().eq_ignore_ascii_case(word))
        })
        .copied()
}

/// The effect kind an id's field names (`refund_id`, `refundId`), if any.
pub fn kind_of_id_field(name: &str) -> Option<&'static str> {
    let kind = (name.strip_suffix("_id").or_else(|| name.strip_suffix("Id")))?;
    EFFECT_KINDS.iter().find(|k| **k == kind).copied()
}

/// The effect a replay line names, from its message and its `(name, value)` fields: the id
/// of the kind the message names (`<kind>_id`, `<kind>Id`, else `id`), else the one kind
/// whose id the fields give, else `effect_id` (its kind unknown). Ids of two kinds and no
/// kind named: none, rather than a guess.
pub fn effect_named<V: Clone>(
    message: &[u8],
    fields: &[(&str, V)],
) -> Option<(Option<&'static str>, V)> {
    let field = |name: &str| {
        fields
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    };
    if let Some(kind) = kind_in(message) {
        let of_kind = (fields.iter()).find(|(n, _)| kind_of_id_field(n) == Some(kind));
        if let Some((_, id)) = of_kind {
            return Some((Some(kind), id.clone()));
        }
        return field("id")
            .or_else(|| field("effect_id"))
            .map(|id| (Some(kind), id));
    }
    let mut kinds = fields
        .iter()
        .filter_map(|(n, v)| Some((kind_of_id_field(n)?, v)));
    match (kinds.next(), kinds.next()) {
        (Some((kind, id)), None) => Some((Some(kind), id.clone())),
        (Some(_), Some(_)) => None,
        (None, _) => field("effect_id").map(|id| (None, id)),
    }
}

/// The replays among `events`, for tests.
#[cfg(test)]
pub(crate) fn replays_of(events: Vec<crate::event::Event>) -> Vec<crate::event::Replay> {
    (events.into_iter())
        .filter_map(|e| match e.kind {
            crate::event::EventKind::Replay(r) => Some(*r),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_words_are_told_from_others() {
        for yes in [
            &b"idempotent replay"[..],
            b"refund replayed",
            b"Replaying stored response",
            b"idempotency: replayed",
            b"idempotent replay served from the record",
        ] {
            assert!(
                replay_message(yes).is_some(),
                "{}",
                String::from_utf8_lossy(yes)
            );
        }
        for no in [
            &b"refund created"[..],
            b"replay-rate spike",
            b"replayable request",
            b"key not seen, no replay",
            b"webhook replay rejected",
            b"replaying outbox events",
            b"Replaying 3 events",
            b"not a replay",
            b"replay check",
            b"replay failed",
            b"webhook delivery replayed",
            b"Replaying request from cassette",
            b"possible replay attack",
            b"replay",
            b"replay-rate spike for key k1",
            b"Replaying request with idempotency key k1",
        ] {
            assert!(
                replay_message(no).is_none(),
                "{}",
                String::from_utf8_lossy(no)
            );
        }
        assert_eq!(kind_in(b"refund replayed"), Some("refund"));
        assert_eq!(kind_in(b"idempotent replay"), None);
        assert_eq!(kind_of_id_field("refundId"), Some("refund"));
        assert_eq!(kind_of_id_field("refund_id"), Some("refund"));
        assert_eq!(kind_of_id_field("order_id"), None);
    }

    #[test]
    fn a_key_or_order_named_in_the_message_is_read_past() {
        fn key(m: &[u8]) -> Option<Option<&[u8]>> {
            replay_message(m).map(|r| r.key)
        }
        assert_eq!(
            key(b"idempotent replay for key d49d19e4-f3d1 order A-1"),
            Some(Some(&b"d49d19e4-f3d1"[..]))
        );
        assert_eq!(
            key(b"Idempotency key ebcdf11dd2616e1c seen before, replaying stored response"),
            Some(Some(&b"ebcdf11dd2616e1c"[..]))
        );
        assert_eq!(key(b"Idempotency-Key hit: replaying response"), Some(None));
        let read = replay_message(b"Replaying stored response for refund re_1a2b (key k9)");
        assert_eq!(
            read,
            Some(ReplayMessage {
                key: Some(b"k9"),
                effect: Some(("refund", b"re_1a2b"))
            })
        );
        // A kind's word followed by a word without a digit is no id.
        assert_eq!(replay_message(b"refund replayed for customer"), None);
        // A word after anything else is no key.
        assert_eq!(key(b"idempotent replay for k1"), None);
        // `key None` names no key: not a replay of any.
        assert_eq!(key(b"idempotent replay for key None"), None);
    }

    #[test]
    fn the_effect_is_the_named_kinds_else_the_only_kinds() {
        let named = |m: &[u8], f: &[(&str, u8)]| effect_named(m, f);
        let both = [("payment_id", 1), ("refund_id", 2)];
        assert_eq!(named(b"refund replayed", &both), Some((Some("refund"), 2)));
        assert_eq!(named(b"idempotent replay", &both), None);
        assert_eq!(
            named(b"idempotent replay", &both[1..]),
            Some((Some("refund"), 2))
        );
        assert_eq!(
            named(b"refund replayed", &[("id", 3)]),
            Some((Some("refund"), 3))
        );
        assert_eq!(named(b"idempotent replay", &[("id", 3)]), None);
        assert_eq!(
            named(b"idempotent replay", &[("effect_id", 4)]),
            Some((None, 4))
        );
    }
}
