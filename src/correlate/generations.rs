//! Which deliberate sending of its request each attempt is. A call's attempts are usually
//! one request sent until it gets through, but a tool that refunds two charges of one order,
//! or two line items, sends the same request (method and URL) again after the first
//! succeeded: on purpose, not as a retry. The second's effect is then no delivery copy of the
//! first's. Rules read [`AttemptRec::generation`]; it is worked out once, here.

use super::{AttemptRec, Model};
use crate::event::same_url;

/// How far back an attempt looks for the one it repeats: a retry follows its request
/// closely, and a runaway loop of a hundred thousand attempts stays linear.
const LOOKBACK: usize = 64;

/// Do two attempts send the same request: the same method and URL ([`same_url`]) where
/// both are known? A tool that looks the order up (`GET /v1/orders/A-1`) and then refunds it
/// sends two requests, and the second is no retry of the first. An unknown method or URL
/// (an attempt implied by its outcome, urllib3's unlogged request) is taken as the same.
pub fn same_request(a: &AttemptRec, b: &AttemptRec) -> bool {
    let method = match (a.method.as_deref(), b.method.as_deref()) {
        (Some(x), Some(y)) => x.eq_ignore_ascii_case(y),
        _ => true,
    };
    let url = match (a.url.as_deref(), b.url.as_deref()) {
        (Some(x), Some(y)) => same_url(x, y),
        _ => true,
    };
    method && url
}

/// Numbers each dispatch's attempts: an attempt repeats the latest earlier one of the same
/// request, and is a sending of its own (one more than that one) when that one was answered
/// 2xx and the two do not carry one key; under the same key it is the same request sent
/// again, whatever its answer.
pub(super) fn number_generations(model: &mut Model) {
    for d in &mut model.dispatches {
        number_attempts(&mut d.attempts);
    }
}

/// [`number_generations`] for one dispatch's attempts, in order.
fn number_attempts(attempts: &mut [AttemptRec]) {
    for i in 1..attempts.len() {
        let (before, rest) = attempts.split_at_mut(i);
        let attempt = &mut rest[0];
        let lookback = &before[i.saturating_sub(LOOKBACK)..];
        let Some(repeated) = lookback.iter().rev().find(|a| same_request(a, attempt)) else {
            continue;
        };
        let succeeded = (repeated.outcome.as_ref())
            .and_then(|o| o.status())
            .is_some_and(|s| (200..300).contains(&s));
        let same_key = attempt.key.is_some() && attempt.key == repeated.key;
        attempt.generation = repeated
            .generation
            .saturating_add(u16::from(succeeded && !same_key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(key: Option<&str>, status: Option<u16>) -> AttemptRec {
        use crate::classify::FailureClass;
        use crate::correlate::{Outcome, OutcomeKind};
        use crate::event::Loc;
        use crate::time::Timestamp;
        AttemptRec {
            number: 1,
            at: Timestamp(0),
            loc: Loc { input: 0, line: 1 },
            method: Some("POST".into()),
            url: Some("https://payments.internal/v1/refunds".into()),
            key: key.map(Into::into),
            outcome: status.map(|status| Outcome {
                at: Timestamp(1),
                loc: Loc { input: 0, line: 2 },
                kind: OutcomeKind::Response {
                    class: FailureClass::Ambiguous,
                    status,
                    effect_id: None,
                    replayed: false,
                    message: "".into(),
                },
            }),
            unlogged: false,
            generation: 0,
            key_unseen: false,
        }
    }

    fn generations(mut attempts: Vec<AttemptRec>) -> Vec<u16> {
        number_attempts(&mut attempts);
        attempts.iter().map(|a| a.generation).collect()
    }

    #[test]
    fn a_request_sent_again_after_it_succeeded_is_another_sending() {
        // Two charges refunded one after the other: each 201, each its own key.
        let split = vec![
            attempt(Some("k1"), Some(201)),
            attempt(Some("k2"), Some(201)),
        ];
        assert_eq!(generations(split), [0, 1]);
        // Retries after a 503 and a timeout are the same sending.
        let retried = vec![
            attempt(None, Some(503)),
            attempt(None, None),
            attempt(None, Some(201)),
        ];
        assert_eq!(generations(retried), [0, 0, 0]);
        // Under the same key it is the same request, whatever the first answer.
        let same_key = vec![
            attempt(Some("k1"), Some(201)),
            attempt(Some("k1"), Some(201)),
        ];
        assert_eq!(generations(same_key), [0, 0]);
    }

    /// The number sits in the record's padding: a month holds 300 k attempts.
    #[test]
    fn an_attempt_stays_128_bytes() {
        assert_eq!(std::mem::size_of::<AttemptRec>(), 128);
    }
}
