//! A service's words for answering a request from its idempotency record rather than
//! acting on it (`idempotent replay`, `refund replayed`, `Replaying stored response`),
//! shared by the readers of structured and text logs: such a line with an effect's id is a
//! [`crate::event::Replay`].

use crate::event::EFFECT_KINDS;

/// A short message with the word `replay`, `replays`, `replayed` or `replaying` in any
/// case: a sentence about something else is longer, and `replay-rate` is a metric's
/// name, not a replay.
pub fn says_replay(message: &[u8]) -> bool {
    const LONGEST: usize = 64;
    message.len() <= LONGEST
        && message
            .split(|b| !b.is_ascii_alphanumeric() && *b != b'-')
            .any(|word| {
                word.len() >= 6
                    && word[..6].eq_ignore_ascii_case(b"replay")
                    && [&b""[..], b"s", b"ed", b"ing"]
                        .iter()
                        .any(|end| word[6..].eq_ignore_ascii_case(end))
            })
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
        ] {
            assert!(says_replay(yes), "{}", String::from_utf8_lossy(yes));
        }
        for no in [
            &b"refund created"[..],
            b"replay-rate spike",
            b"replayable request",
            b"a long sentence that mentions a replay of something but goes on for far too long to be one",
        ] {
            assert!(!says_replay(no), "{}", String::from_utf8_lossy(no));
        }
        assert_eq!(kind_in(b"refund replayed"), Some("refund"));
        assert_eq!(kind_in(b"idempotent replay"), None);
        assert_eq!(kind_of_id_field("refundId"), Some("refund"));
        assert_eq!(kind_of_id_field("refund_id"), Some("refund"));
        assert_eq!(kind_of_id_field("order_id"), None);
    }
}
