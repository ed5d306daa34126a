//! A second outcome logged for an attempt that has one: often the same outcome told twice.
//! An agent whose HTTP client logs its own requests (httpx's `HTTP Request: POST ...
//! "HTTP/1.1 503 Service Unavailable"`) usually logs the answer again in its own words: a
//! `201 Created  refund_id=...` line, or the exception `raise_for_status` made of it
//! (`httpx.HTTPStatusError: Server error '503 Service Unavailable' for url ...`). Read as a
//! second outcome, each implied a request nobody sent, and the exception turned a plain 503
//! into a failure that the next request's effect was pinned on.

use super::{Outcome, OutcomeKind};
use crate::time::Duration;

/// How soon after the first an outcome must be logged to be read as the same one told
/// again: a program restating an answer does so at once, while a request sent again after
/// a failure waits for its client's back-off.
const RESTATED_WITHIN: Duration = Duration(1_000_000_000);

/// Whether `new` tells `kept` again; if so, what it adds (an effect id the first did not
/// name) is merged into `kept`.
pub(super) fn absorb(kept: &mut Outcome, new: &Outcome) -> bool {
    let gap = new.at.0.saturating_sub(kept.at.0);
    if !(0..=RESTATED_WITHIN.0).contains(&gap) {
        return false;
    }
    match (&mut kept.kind, &new.kind) {
        (
            OutcomeKind::Response {
                status,
                effect_id,
                replayed,
                ..
            },
            OutcomeKind::Response {
                status: again,
                effect_id: named,
                replayed: replayed_again,
                ..
            },
        ) if status == again => {
            if effect_id.is_none() {
                effect_id.clone_from(named);
            }
            *replayed |= *replayed_again;
            true
        }
        (OutcomeKind::Response { status, .. }, OutcomeKind::Failure { error, message, .. }) => {
            names_status(error, *status)
                || names_status(message, *status)
                || (*status >= 400 && is_sdk_refusal(error) && !names_transport(message))
        }
        (OutcomeKind::Failure { class, .. }, OutcomeKind::Failure { class: again, .. }) => {
            class == again
        }
        _ => false,
    }
}

/// An API SDK's exception for a refusal, which names its kind and not its status (Stripe's
/// `InvalidRequestError: Request req_1: Charge ... has already been refunded.` after
/// `response_code=400`; OpenAI's and Anthropic's `BadRequestError`): logged at once after a
/// refusal, that refusal told again. Any other class (`TypeError: fetch failed`,
/// `HTTPError: 502`, `IOException: unexpected end of stream`) may be a second request's.
fn is_sdk_refusal(error: &str) -> bool {
    const CLASSES: [&str; 10] = [
        "InvalidRequestError",
        "CardError",
        "AuthenticationError",
        "PermissionError",
        "RateLimitError",
        "IdempotencyError",
        "BadRequestError",
        "UnprocessableEntityError",
        "ConflictError",
        "NotFoundError",
    ];
    let name = error.rsplit(['.', ':']).next().unwrap_or(error);
    CLASSES.contains(&name)
}

/// Whether `text` speaks of the connection rather than an answer (`Read timed out`,
/// `Connection reset`, Stripe's `Network error`).
fn names_transport(text: &str) -> bool {
    const WORDS: [&str; 14] = [
        "timeout",
        "timed out",
        "connect",
        "reset",
        "refused",
        "broken pipe",
        "eof",
        "unreachable",
        "name resolution",
        "network",
        "socket",
        "ssl",
        "tls",
        "abort",
    ];
    let text = text.to_ascii_lowercase();
    WORDS.iter().any(|w| text.contains(w))
}

/// Whether `text` names `status` as a number of its own (`'503 Service Unavailable'`,
/// `503 Server Error`), not as part of a longer one (`15030`, a port).
fn names_status(text: &str, status: u16) -> bool {
    let digits = status.to_string();
    let bytes = text.as_bytes();
    text.match_indices(&digits).any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + digits.len()).copied();
        !before.is_some_and(|b| b.is_ascii_digit() || b == b':')
            && !after.is_some_and(|b| b.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::FailureClass;
    use crate::event::Loc;
    use crate::time::Timestamp;

    fn response(ms: i64, status: u16, effect_id: Option<&str>) -> Outcome {
        Outcome {
            at: Timestamp(ms * 1_000_000),
            loc: Loc { input: 0, line: 1 },
            kind: OutcomeKind::Response {
                class: FailureClass::Ambiguous,
                status,
                effect_id: effect_id.map(Into::into),
                replayed: false,
                message: "".into(),
            },
        }
    }

    fn failure(ms: i64, class: FailureClass, message: &str) -> Outcome {
        Outcome {
            at: Timestamp(ms * 1_000_000),
            loc: Loc { input: 0, line: 1 },
            kind: OutcomeKind::Failure {
                class,
                error: "httpx.HTTPStatusError".into(),
                message: message.into(),
            },
        }
    }

    #[test]
    fn the_same_answer_told_again_at_once_is_one_answer_with_its_effect_id() {
        let mut kept = response(0, 201, None);
        assert!(absorb(&mut kept, &response(2, 201, Some("rf_1"))));
        assert!(matches!(
            &kept.kind,
            OutcomeKind::Response { effect_id: Some(id), .. } if id.as_str() == "rf_1"
        ));
    }

    #[test]
    fn the_exception_made_of_an_answer_is_that_answer() {
        let mut kept = response(0, 503, None);
        let raised =
            "Server error '503 Service Unavailable' for url 'https://p.internal/v1/refunds'";
        assert!(absorb(
            &mut kept,
            &failure(1, FailureClass::Ambiguous, raised)
        ));
        assert!(kept.status() == Some(503));
        let mut kept = response(0, 503, None);
        let timeout = "HTTPSConnectionPool(host='p.internal', port=15030): Read timed out.";
        assert!(!absorb(
            &mut kept,
            &failure(1, FailureClass::Ambiguous, timeout)
        ));
    }

    /// The real httpx log (fixture `client-log-agent-restates`) and the same with the
    /// agent's answer naming the refund: two attempts, the first answered 503 and nothing
    /// more, the refund made by the second.
    #[test]
    fn an_agent_restating_its_clients_lines_adds_no_attempt() {
        let agent = include_str!("../../fixtures/client-log-agent-restates/agent.log");
        let service = include_str!("../../fixtures/client-log-agent-restates/service.log");
        let named = agent.replace(
            "INFO agent: 201 Created\n",
            "INFO agent: 201 Created  refund_id=rf_0001\n",
        );
        assert_ne!(named, agent);
        for agent in [agent.to_string(), named] {
            let opts = crate::ingest::ParseOptions::default();
            let events = |text: &str, input| {
                crate::ingest::text::parse(&mut text.as_bytes(), input, &opts)
                    .unwrap()
                    .events
            };
            let model = super::super::correlate_parts(
                vec![events(&agent, 0), events(service, 1)],
                &super::super::CorrelateOptions::default(),
            );
            let attempts = &model.dispatches[0].attempts;
            assert_eq!(attempts.len(), 2, "{attempts:#?}");
            assert_eq!(
                attempts[0].outcome.as_ref().and_then(Outcome::status),
                Some(503)
            );
            assert_eq!(
                attempts[1].outcome.as_ref().and_then(Outcome::status),
                Some(201)
            );
            let refund = &model.effects[0];
            assert_eq!(refund.matched.map(|m| m.index()), Some(1), "{refund:#?}");
        }
    }

    fn raised(ms: i64, error: &str, message: &str) -> Outcome {
        Outcome {
            at: Timestamp(ms * 1_000_000),
            loc: Loc { input: 0, line: 1 },
            kind: OutcomeKind::Failure {
                class: FailureClass::Ambiguous,
                error: error.into(),
                message: message.into(),
            },
        }
    }

    #[test]
    fn an_sdks_exception_for_a_refusal_is_that_refusal() {
        let refused = "Request req_1: Charge ch_1 has already been refunded.";
        let mut kept = response(0, 400, None);
        assert!(absorb(
            &mut kept,
            &raised(2, "InvalidRequestError", refused)
        ));
        assert_eq!(kept.status(), Some(400));
        let mut kept = response(0, 400, None);
        let openai = raised(2, "openai.BadRequestError", "Error code: invalid_request");
        assert!(absorb(&mut kept, &openai));
        // Another class may be a second request's failure (Node's fetch, another status,
        // a stream cut short); an answer that refused nothing is not restated.
        for (error, message) in [
            ("TypeError", "fetch failed"),
            ("HTTPError", "Bad Gateway"),
            ("IOException", "unexpected end of stream"),
        ] {
            let mut kept = response(0, 503, None);
            assert!(!absorb(&mut kept, &raised(500, error, message)), "{error}");
        }
        let mut kept = response(0, 400, None);
        let timeout = "(Network error: ReadTimeout: Read timed out. (read timeout=1))";
        assert!(!absorb(
            &mut kept,
            &raised(2, "InvalidRequestError", timeout)
        ));
        let mut kept = response(0, 201, None);
        assert!(!absorb(
            &mut kept,
            &raised(2, "InvalidRequestError", refused)
        ));
    }

    #[test]
    fn another_answer_or_a_late_one_is_an_outcome_of_its_own() {
        let mut kept = response(0, 503, None);
        assert!(!absorb(&mut kept, &response(5, 201, Some("rf_1"))));
        assert!(!absorb(&mut kept, &response(1_500, 503, None)));
        let mut kept = failure(0, FailureClass::Ambiguous, "read timeout=10");
        assert!(!absorb(&mut kept, &response(5, 201, None)));
        assert!(!absorb(
            &mut kept,
            &failure(5, FailureClass::Safe, "Connection refused")
        ));
        assert!(absorb(
            &mut kept,
            &failure(5, FailureClass::Ambiguous, "Read timed out.")
        ));
    }
}
