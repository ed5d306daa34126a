//! `key-payload-mismatch`: one idempotency key sent with two different canonical payloads, or
//! a keyed request the service rejected for its key (422, or a 400 naming the key).

use super::support::{
    RecordIndex, and_list, attempt_evidence, call_finding, has_args, record_strings,
};
use super::{Rule, Settings, Shared};
use crate::correlate::{AttemptId, Model, Outcome, OutcomeKind};
use crate::finding::{Finding, Severity};
use rustc_hash::{FxHashMap, FxHashSet};

pub static RULE: Rule = Rule {
    id: "key-payload-mismatch",
    default_severity: Severity::Error,
    default_enabled: true,
    summary: "one idempotency key was sent with two different canonical payloads (the service should answer 422)",
    explanation: r#"## What it does
Groups keyed attempts by their `Idempotency-Key` and reports a key that was sent for two
different requests: two tools, or two different canonical argument sets (keys sorted,
`4500.0` read as `4500`, so spelling alone never counts). A failed step dispatched again
for the same order and amount with its free text reworded is the same action, not another
payload. Also reports a keyed request the
service refused because of its key: a 422, or a 400 whose message names the idempotency key.
With a dump of the service's idempotency records, also reports a record whose stored response
(the effect id it names) was returned to calls with different payloads, even when the client
logged no keys. One finding per key.

## Why is this bad
A key names one logical action. Reusing it for a different body is a client bug (a key
derived from too little: only the order, only the run) or an attack, and it means two
logically different actions collide: a service that enforces keys returns the first
action's stored response and silently drops the second; one that checks the request hash
answers 422. Either way an intended effect did not happen. This is the conflict rate the
write-up says must be zero.

## How to fix
Derive the key from everything that identifies the action: run, step, tool and the canonical
arguments (`idem-audit key`). Never reuse a key for a retry whose arguments the model
changed: that is a new logical call and needs its own key.

## Example
```
10:00:00.000  agent run r1  step 2  tool=issue_refund  args={"order":"A-1","amount_p":1000}
10:00:00.010  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=ord-A-1
10:05:00.000  agent run r1  step 3  tool=issue_refund  args={"order":"A-1","amount_p":2500}
10:05:00.010  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=ord-A-1
10:05:00.200  422 Unprocessable Entity  idempotency key reused with a different request body
```
The key is derived from the order alone, so the second refund collides with the first.
"#,
    check,
};

fn check(model: &Model, _settings: &Settings, _shared: &Shared, out: &mut Vec<Finding>) {
    let numbered: Vec<(u32, AttemptId)> = model
        .attempts_with_keys()
        .filter_map(|(id, _, key)| Some((key?, id)))
        .collect();
    let worth_a_look = keys_worth_a_look(model, &numbered);
    // One flat list sorted by key, not a map of vectors: one allocation for all attempts.
    let mut keyed: Vec<(&str, AttemptId)> = (numbered.iter().zip(worth_a_look))
        .filter(|(_, worth)| *worth)
        .map(|(&(_, id), _)| (model.attempt(id).key.as_deref().unwrap_or_default(), id))
        .collect();
    keyed.sort_unstable();
    for run in keyed.chunk_by(|a, b| a.0 == b.0) {
        let key = run[0].0;
        let attempts: Vec<AttemptId> = run.iter().map(|r| r.1).collect();
        // Distinct requests under this key, in first-sent order. A step dispatched again
        // with its free text reworded (the same order and amount: one duplicate group,
        // `correlate/build/step_retries.rs`) asks for the same action: a key kept for it is
        // right, and the service's replay says it saw the same request.
        let group = |d: usize| model.calls[model.dispatches[d].logical()].group();
        let mut payloads: Vec<(&str, &str, usize)> = Vec::new();
        for id in &attempts {
            let d = &model.dispatches[id.dispatch()];
            let canonical = model.calls[d.logical()].canonical.as_str();
            let tool = model.tool_of(d);
            let seen = |p: &(&str, &str, usize)| {
                p.0 == tool && (p.1 == canonical || group(p.2) == group(id.dispatch()))
            };
            if has_args(d) && !payloads.iter().any(seen) {
                payloads.push((tool, canonical, id.dispatch()));
            }
        }
        let rejected: Vec<AttemptId> = attempts
            .iter()
            .copied()
            .filter(|&id| model.attempt(id).outcome.as_ref().is_some_and(rejects_key))
            .collect();
        if payloads.len() < 2 && rejected.is_empty() {
            continue;
        }
        let mut parts = Vec::new();
        if payloads.len() >= 2 {
            let shown = payloads_shown(model, &payloads);
            parts.push(format!(
                "was sent with {} different payloads ({})",
                payloads.len(),
                and_list(&shown)
            ));
        }
        if let Some(&first) = rejected.first() {
            let o = model.attempt(first).outcome.as_ref();
            let text = o.map(Outcome::describe).unwrap_or_default();
            let names_key = o.is_some_and(|o| match &o.kind {
                OutcomeKind::Response { message, .. } | OutcomeKind::Failure { message, .. } => {
                    names_the_key(message)
                }
            });
            parts.push(if names_key || o.and_then(Outcome::status) == Some(400) {
                format!("was refused by the service ({text})")
            } else {
                format!(
                    "got {text}, the answer of a service refusing a key reused with another body (if it is a validation error, the service should answer 400)"
                )
            });
        }
        let why = if payloads.len() >= 2 {
            "two different actions collide on one key"
        } else {
            "the service rejected the request because of its key"
        };
        let message = format!("idempotency key {key} {}: {why}", parts.join(" and "));
        let head = rejected.first().copied().unwrap_or(attempts[0]);
        let call = &model.calls[model.dispatches[head.dispatch()].logical()];
        let mut f = call_finding(&RULE, model, call, message);
        f.key = Some(key.to_string());
        for &id in &attempts {
            f.evidence.extend(model.dispatches[id.dispatch()].loc);
            attempt_evidence(model.attempt(id), &mut f.evidence);
        }
        out.push(f);
    }
    check_records(model, out);
}

/// Each payload (tool, canonical args, the dispatch that first sent it) as a message says it:
/// `step 2 issue_refund {...}`, with its run (`run k1 step 2 ...`) when they were sent by
/// more than one run.
fn payloads_shown(model: &Model, payloads: &[(&str, &str, usize)]) -> Vec<String> {
    let run = |d: usize| model.dispatches[d].call.run.as_str();
    let one_run = payloads.iter().all(|p| run(p.2) == run(payloads[0].2));
    payloads
        .iter()
        .map(|&(tool, canonical, d)| {
            let step = model.dispatches[d].call.step;
            match one_run {
                true => format!("step {step} {tool} {canonical}"),
                false => format!("run {} step {step} {tool} {canonical}", run(d)),
            }
        })
        .collect()
}

/// The record-based case: requests the client logged without their key, but whose responses
/// name the effect an idempotency record stored. Calls with different canonical payloads
/// answered from one record collided on its key: the later ones got the first's response and
/// their own effect never happened.
fn check_records(model: &Model, out: &mut Vec<Finding>) {
    if model.records.is_empty() {
        return;
    }
    let reported: FxHashSet<&str> = out
        .iter()
        .filter(|f| f.rule == RULE.id)
        .filter_map(|f| f.key.as_deref())
        .collect();
    let index = RecordIndex::new(model);
    // Attempts by the effect id their response names, in attempt order.
    let mut by_effect_id: FxHashMap<&str, Vec<AttemptId>> = FxHashMap::default();
    for (id, a) in model.attempts() {
        if let Some(o) = &a.outcome
            && let OutcomeKind::Response {
                effect_id: Some(e), ..
            } = &o.kind
        {
            by_effect_id.entry(e.as_str()).or_default().push(id);
        }
    }
    let mut found = Vec::new();
    for rec in &model.records {
        if reported.contains(rec.key.as_str()) {
            continue;
        }
        let mut named = record_strings(rec);
        named.extend(
            index
                .record_effects(rec)
                .into_iter()
                .map(|i| model.effects[i].id.to_string()),
        );
        let mut answered: Vec<AttemptId> = named
            .iter()
            .filter_map(|e| by_effect_id.get(e.as_str()))
            .flatten()
            .copied()
            .collect();
        answered.sort_unstable();
        answered.dedup();
        let mut payloads: Vec<(&str, &str, usize)> = Vec::new();
        for id in &answered {
            let d = &model.dispatches[id.dispatch()];
            let canonical = model.calls[d.logical()].canonical.as_str();
            let tool = model.tool_of(d);
            if has_args(d) && !payloads.iter().any(|p| (p.0, p.1) == (tool, canonical)) {
                payloads.push((tool, canonical, id.dispatch()));
            }
        }
        if payloads.len() < 2 {
            continue;
        }
        let shown = payloads_shown(model, &payloads);
        let message = format!(
            "idempotency record {} (created {}) answered {} different payloads ({}): two different actions collide on one key, and the later got the first's stored response instead of its own effect",
            rec.key,
            rec.created,
            payloads.len(),
            and_list(&shown)
        );
        let call = &model.calls[model.dispatches[payloads[0].2].logical()];
        let mut f = call_finding(&RULE, model, call, message);
        f.key = Some(rec.key.to_string());
        f.evidence.push(rec.loc);
        for &id in &answered {
            f.evidence.extend(model.dispatches[id.dispatch()].loc);
            attempt_evidence(model.attempt(id), &mut f.evidence);
        }
        found.push(f);
    }
    out.extend(found);
}

/// Whether the key of each of `keyed` (every keyed attempt with its key's number, in
/// attempt order) is worth a look: it has attempts from two dispatches, or an answer
/// refusing it; the others cannot collide. Found in one pass by the keys' numbers, so that
/// only their attempts are sorted by key (sorting every keyed attempt by its string was
/// most of this rule's time).
fn keys_worth_a_look(model: &Model, keyed: &[(u32, AttemptId)]) -> Vec<bool> {
    // Per key number: its first attempt's position in `keyed`.
    let mut firsts = vec![u32::MAX; model.key_count()];
    let mut worth = vec![false; keyed.len()];
    let mut first_of = Vec::with_capacity(keyed.len());
    for (n, &(key, id)) in keyed.iter().enumerate() {
        let refused = model.attempt(id).outcome.as_ref().is_some_and(rejects_key);
        let held = &mut firsts[key as usize];
        if *held == u32::MAX {
            *held = n as u32;
        }
        let first = *held as usize;
        worth[first] |= refused || keyed[first].1.dispatch() != id.dispatch();
        first_of.push(first);
    }
    first_of.into_iter().map(|first| worth[first]).collect()
}

/// A 422, or a 400 whose text names the idempotency key: the service's request-hash check.
/// Every 422 to a keyed request counts, whatever its body says (the issue's rule): a 422 is
/// the status a service answers when a key comes back with another body, and a service that
/// also uses it for validation makes key conflicts invisible in its own metrics.
pub(crate) fn rejects_key(o: &Outcome) -> bool {
    let (status, text) = match &o.kind {
        OutcomeKind::Response {
            status, message, ..
        } => (Some(*status), message.as_str()),
        OutcomeKind::Failure { message, .. } => (leading_status(message), message.as_str()),
    };
    match status {
        Some(422) => true,
        Some(400) => names_the_key(text),
        _ => false,
    }
}

fn names_the_key(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("idempotency") || lower.contains("idempotent")
}

/// `422 Client Error: ...` (how `requests` words an HTTPError) → 422.
fn leading_status(text: &str) -> Option<u16> {
    let t = text.trim_start();
    let digits = t.get(..3)?;
    let after = t[3..].chars().next();
    (digits.bytes().all(|b| b.is_ascii_digit()) && after.is_none_or(|c| !c.is_ascii_alphanumeric()))
        .then(|| digits.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testkit::Trace;

    /// Two refunds of one order under `key`: run `a`'s step `steps.0` for 10.00, then run
    /// `b`'s step `steps.1` for `second_p`, answered with the first's refund, replayed.
    fn one_key_two_calls(
        (a, b): (&str, &str),
        steps: (u32, u32),
        key: &str,
        order: &str,
        second_p: u32,
    ) -> Trace {
        let args = |p: u32| format!(r#"{{"order":"{order}","amount_p":{p}}}"#);
        let mut t = Trace::new();
        t.tool_call(0, a, steps.0, "issue_refund", &args(1000))
            .attempt(10, a, steps.0, 1, Some(key))
            .created(200, a, steps.0, "rf_1", false)
            .tool_call(1000, b, steps.1, "issue_refund", &args(second_p))
            .attempt(1010, b, steps.1, 1, Some(key))
            .created(1200, b, steps.1, "rf_1", true);
        t
    }

    #[test]
    fn one_key_two_payloads() {
        let t = one_key_two_calls(("r", "r"), (2, 3), "ord-A-1", "A-1", 2500);
        let found = t.check(&RULE);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].message.contains("2 different payloads"),
            "{}",
            found[0].message
        );
        assert_eq!(found[0].key.as_deref(), Some("ord-A-1"));
        // One run: its steps are enough.
        assert!(
            found[0].message.contains("(step 2 issue_refund"),
            "{}",
            found[0].message
        );
    }

    /// Two runs sending one key: each payload is said with its run, whose steps alone
    /// ("step 2 ... and step 2 ...") read as one call.
    #[test]
    fn payloads_of_two_runs_are_named_with_their_runs() {
        let t = one_key_two_calls(("k1", "k2"), (2, 2), "refund-K-1", "K-1", 1500);
        let found = t.check(&RULE);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].message.contains(
                r#"(run k1 step 2 issue_refund {"amount_p":1000,"order":"K-1"} and run k2 step 2 issue_refund {"amount_p":1500,"order":"K-1"})"#
            ),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn a_422_or_a_400_naming_the_key_answered_to_a_keyed_request() {
        for (status, text) in [
            (422, "Unprocessable Entity"),
            (400, "Bad Request  Idempotency key already used"),
        ] {
            let mut t = Trace::new();
            t.tool_call(
                0,
                "r",
                2,
                "issue_refund",
                r#"{"order":"A-1","amount_p":1000}"#,
            )
            .attempt(10, "r", 2, 1, Some("k"))
            .response(200, "r", 2, status, text);
            let found = t.check(&RULE);
            assert_eq!(found.len(), 1, "{status}");
            let m = &found[0].message;
            assert!(
                m.contains(&format!("{status} ")) && m.contains("refus"),
                "{m}"
            );
        }
    }

    #[test]
    fn any_422_to_a_keyed_request_counts_and_says_what_a_422_means() {
        let mut t = Trace::new();
        t.tool_call(
            0,
            "r",
            2,
            "issue_refund",
            r#"{"order":"A-1","amount_p":99999}"#,
        )
        .attempt(10, "r", 2, 1, Some("k"))
        .response(
            200,
            "r",
            2,
            422,
            "Unprocessable Entity amount exceeds captured total",
        );
        let found = t.check(&RULE);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].message.contains("should answer 400"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn same_payload_respelled_a_plain_400_or_an_unkeyed_422_are_not_mismatches() {
        let mut t = Trace::new();
        t.tool_call(
            0,
            "r",
            2,
            "issue_refund",
            r#"{"order":"A-1","amount_p":1000}"#,
        )
        .attempt(10, "r", 2, 1, Some("k"))
        .timeout(10_010, "r", 2)
        .tool_call(
            11_000,
            "r",
            2,
            "issue_refund",
            r#"{"amount_p":1000.0,"order":"A-1"}"#,
        )
        .attempt(11_010, "r", 2, 1, Some("k"))
        .response(11_200, "r", 2, 400, "Bad Request  amount must be positive")
        .tool_call(
            20_000,
            "r",
            3,
            "issue_refund",
            r#"{"order":"A-2","amount_p":1}"#,
        )
        .attempt(20_010, "r", 3, 1, None)
        .response(20_200, "r", 3, 422, "Unprocessable Entity");
        assert!(t.check(&RULE).is_empty());
    }

    #[test]
    fn http_error_failures_carry_their_status_in_the_message() {
        assert_eq!(
            leading_status("422 Client Error: Unprocessable Entity"),
            Some(422)
        );
        assert_eq!(leading_status("4220 things"), None);
        assert_eq!(leading_status("ok"), None);
    }
}
