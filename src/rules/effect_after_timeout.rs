//! `effect-after-timeout`: the client gave up on an attempt whose effect happened anyway.

use super::support::{attempt_evidence, did, how_it_ended, state_predicate};
use super::{Rule, Settings, Shared};
use crate::classify::{FailureClass, says_answer_lost};
use crate::correlate::{AttemptId, MatchedBy, Model};
use crate::finding::{Finding, Severity};
use crate::time::Timestamp;
use rustc_hash::FxHashMap;

pub static RULE: Rule = Rule {
    id: "effect-after-timeout",
    default_severity: Severity::Info,
    default_enabled: true,
    summary: "the client gave up on an attempt whose effect was created anyway",
    explanation: r#"## What it does
Finds effects matched to an attempt that ended in an ambiguous failure (a read timeout, a
reset, a 502/503/504): the client gave up, and the service performed the effect anyway. Where
the trace logs tool calls and not their requests, a tool call whose step failed with such an
error (`ReadTimeout`) counts as the attempt that gave up.

## Why is this bad
It shows the client's deadline is shorter than the service's latency. Each such attempt is a
duplicate waiting to happen: the client will retry something that already succeeded. With a
key the retry is answered from the service's records; without one it is paid twice.

## How to fix
Make retries safe first (a key derived outside the retry loop, enforced by the service).
Then align the client's timeout with the service's real latency (its p99, not its median), or
read back the effect (list the order's refunds) before retrying.

## Example
```
14:02:11.418  POST https://payments.internal/v1/refunds  (attempt 1)
14:02:21.418  urllib3.exceptions.ReadTimeoutError: read timeout=10
--- payments service ---
14:02:11.501  refund rf_8XM1  order A-88214  4500p  settled 14:02:22.884
```
The client gave up at 14:02:21.418 after 10.0 s; the refund settled at 14:02:22.884.
"#,
    check,
};

fn check(model: &Model, _settings: &Settings, _shared: &Shared, out: &mut Vec<Finding>) {
    let first_by_key = std::cell::OnceCell::new();
    for (i, e) in model.effects.iter().enumerate() {
        let (true, Some(id)) = (e.happened, e.matched) else {
            continue;
        };
        let attempt = model.attempt(id);
        let disp = &model.dispatches[id.dispatch()];
        let (who, gave_up, why) = match (&attempt.outcome, &disp.end) {
            // A timeout is the client giving up; a reset or a dropped connection (Go's
            // `EOF`) is the connection's end, not the client's choice.
            (Some(o), _) if o.class() == FailureClass::Ambiguous => (
                match how_it_ended(attempt).starts_with("timed out") {
                    true => format!("the client gave up on attempt {}", attempt.number),
                    false => format!("attempt {} failed", attempt.number),
                },
                o.at,
                o.describe(),
            ),
            // A request nobody logged: the tool's own error says its answer was lost.
            (None, Some(end)) if attempt.unlogged && !end.ok => {
                let Some(error) = end.error.as_deref().filter(|e| says_answer_lost(e)) else {
                    continue;
                };
                (
                    "the tool call gave up".to_string(),
                    end.at,
                    error.to_string(),
                )
            }
            _ => continue,
        };
        let first_by_key = first_by_key.get_or_init(|| first_effects_by_key(model));
        if made_by_a_later_try(model, i, id, first_by_key) {
            continue;
        }
        // A request no line logged was sent at a time nobody knows.
        let after = match attempt.method.is_none() && gave_up == attempt.at {
            true => String::new(),
            false => format!(" after {}", gave_up.since(attempt.at).display_secs()),
        };
        let mut f = Finding::new(
            RULE.id,
            RULE.default_severity,
            format!(
                "{who} at {gave_up}{after} ({why}), but {} {} {}: the service {} anyway",
                e.kind,
                e.id,
                state_predicate(e),
                did(&e.kind),
            ),
        );
        f.run = Some(disp.call.run.to_string());
        f.step = Some(disp.call.step);
        f.tool = Some(model.tool_of(disp).to_string()).filter(|t| !t.is_empty());
        // A line that shows no key: the one the service logged on the effect.
        f.key = attempt
            .key
            .as_deref()
            .or(e
                .key
                .as_deref()
                .filter(|_| !model.key_known_absent(attempt)))
            .map(String::from);
        attempt_evidence(attempt, &mut f.evidence);
        if attempt.unlogged {
            f.evidence.extend(disp.end.as_ref().map(|end| end.loc));
        }
        super::support::set_effects(&mut f, model, vec![i]);
        f.excess_minor = None;
        out.push(f);
    }
}

/// Whether effect `i`, matched by its key to attempt `id` (the earliest that sent the key),
/// was made by a later try with the same key: a service that does not enforce keys makes
/// one effect per try, so a second effect under the key, created after the key was sent
/// again, is the resend's, not the failed try's.
fn made_by_a_later_try(
    model: &Model,
    i: usize,
    id: AttemptId,
    first_by_key: &FxHashMap<AttemptId, Timestamp>,
) -> bool {
    let e = &model.effects[i];
    let earlier_of_key = first_by_key
        .get(&id)
        .is_some_and(|&first| first < e.created);
    if e.matched_by != Some(MatchedBy::Key) || !earlier_of_key {
        return false;
    }
    let tried = model.attempt(id);
    (model.dispatches[id.dispatch()].attempts.iter()).any(|a| {
        a.number > tried.number && a.key.is_some() && a.key == tried.key && a.at <= e.created
    })
}

/// When the first effect each attempt was matched to by key was created.
fn first_effects_by_key(model: &Model) -> FxHashMap<AttemptId, Timestamp> {
    let mut first = FxHashMap::default();
    for e in &model.effects {
        if let (Some(id), Some(MatchedBy::Key)) = (e.matched, e.matched_by) {
            let at = first.entry(id).or_insert(e.created);
            *at = (*at).min(e.created);
        }
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testkit::Trace;

    const ARGS: &str = r#"{"order":"A-1","amount_p":4500}"#;
    const REFUNDS: &str = "https://payments.internal/v1/refunds";

    /// A service that does not enforce keys makes one refund per try: the second, made
    /// after the key was sent again, is the resend's, though the key matches it to the
    /// first try. Made before the resend, it would be the first try's too.
    #[test]
    fn a_second_effect_of_a_key_made_after_the_resend_is_the_resends() {
        let trace = |second_ms: i64| {
            let mut t = Trace::new();
            t.tool_call(0, "r", 1, "issue_refund", ARGS)
                .attempt(10, "r", 1, 1, Some("k"))
                .refund(500, "rf_1", "A-1", 4500, Some("k"))
                .timeout(1010, "r", 1)
                .attempt(1500, "r", 1, 2, Some("k"))
                .refund(second_ms, "rf_2", "A-1", 4500, Some("k"));
            let found = t.check(&RULE);
            (found.iter().flat_map(|f| f.effects.clone()))
                .map(|e| e.id)
                .collect::<Vec<_>>()
        };
        assert_eq!(trace(1600), ["rf_1"]);
        assert_eq!(trace(900), ["rf_1", "rf_2"]);
    }

    /// A client that never logged its key (axios-retry resending the key of the request's
    /// config) is taken at its answer's word: answered `replayed`, the retry confirmed the
    /// refund the timed-out try made, though the service logged it after the answer. Not
    /// said replayed, the answer's refund is the retry's own, and the timeout made none.
    #[test]
    fn a_replayed_answer_gives_its_effect_to_the_try_it_replayed_keys_unknown() {
        let trace = |replayed: bool| {
            let mut t = Trace::new();
            t.tool_call(0, "r", 1, "issue_refund", ARGS)
                .attempt(10, "r", 1, 1, None)
                .timeout(1010, "r", 1)
                .attempt(1200, "r", 1, 2, None)
                .created(1220, "r", 1, "rf_1", replayed)
                .refund(1500, "rf_1", "A-1", 4500, Some("k"));
            let found = t.check(&RULE);
            (found.iter().flat_map(|f| f.effects.clone()))
                .map(|e| e.id)
                .collect::<Vec<_>>()
        };
        assert_eq!(trace(true), ["rf_1"]);
        assert!(trace(false).is_empty());
    }

    /// The finding's key is the attempt's; where its line shows none, the one the service
    /// logged on the effect; else none.
    #[test]
    fn the_key_is_the_attempts_or_the_one_its_effect_was_logged_with() {
        let key = |sent: Option<&str>, logged: Option<&str>| {
            let mut t = Trace::new();
            t.tool_call(0, "r", 1, "issue_refund", ARGS)
                .attempt(10, "r", 1, 1, sent)
                .refund(500, "rf_1", "A-1", 4500, logged)
                .timeout(1010, "r", 1);
            let found = t.check(&RULE);
            assert_eq!(found.len(), 1, "{found:?}");
            found[0].key.clone()
        };
        assert_eq!(key(Some("k"), Some("k")).as_deref(), Some("k"));
        assert_eq!(key(None, Some("k")).as_deref(), Some("k"));
        assert_eq!(key(None, None), None);
    }

    /// A replayed answer whose only earlier try was refused (it sent nothing) names no
    /// maker: the refund is not pinned on the refused try.
    #[test]
    fn a_refused_try_made_nothing_a_replay_could_confirm() {
        let mut t = Trace::new();
        t.tool_call(0, "r", 1, "issue_refund", ARGS)
            .request(10, "r", 1, 1, "POST", REFUNDS)
            .failure(20, "r", 1, "ConnectError", "connection refused")
            .request(1200, "r", 1, 2, "POST", REFUNDS)
            .created(1220, "r", 1, "rf_1", true)
            .refund(1500, "rf_1", "A-1", 4500, Some("k"));
        assert!(t.check(&RULE).is_empty());
        let model = t.model();
        let matched = model.effects[0].matched.map(|id| model.attempt(id).number);
        assert_ne!(matched, Some(1));
    }

    /// A timeout is the client giving up; a dropped connection is the attempt failing, said
    /// so; a refused connection sent nothing and is no finding.
    #[test]
    fn the_message_says_how_the_attempt_ended() {
        let first = |error: &str, message: &str| {
            let mut t = Trace::new();
            t.tool_call(0, "r", 1, "issue_refund", ARGS)
                .request(10, "r", 1, 1, "POST", REFUNDS)
                .refund(500, "rf_1", "A-1", 4500, None)
                .failure(1010, "r", 1, error, message);
            t.check(&RULE).into_iter().map(|f| f.message).next()
        };
        let timed_out = first("httpx.ReadTimeout", "timed out").unwrap();
        assert!(
            timed_out.starts_with("the client gave up on attempt 1 at"),
            "{timed_out}"
        );
        let dropped = first("url.Error", "EOF").unwrap();
        assert!(dropped.starts_with("attempt 1 failed at"), "{dropped}");
        assert_eq!(first("ConnectError", "connection refused"), None);
    }
}
