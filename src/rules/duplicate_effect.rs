//! `duplicate-effect`: one logical call (or one key) produced two or more effects.

use super::support::{
    DELIVERY_SLACK, amount_text, did, dispatch_evidence, effect_amount_text, ended_ambiguous,
    groups_by_key, how_it_ended, retries, set_effects, state_predicate,
};
use super::{Rule, Settings, Shared};
use crate::classify::FailureClass;
use crate::correlate::{AttemptRec, Dispatch, EffectRec, Model};
use crate::finding::{Cause, Finding, Severity};
use crate::time::Duration;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet};

pub static RULE: Rule = Rule {
    id: "duplicate-effect",
    default_severity: Severity::Error,
    default_enabled: true,
    summary: "one logical call (or one key) produced two or more effects",
    explanation: r#"## What it does
Finds logical calls (run, step, tool, canonical arguments) that the service performed more
than once: two or more effects of the same kind and amount matched to the attempts of one
call, or carrying one idempotency key. A request the call sent again after it was answered
2xx (under another key or none) is sent on purpose, not retried: its effects are not
copies of the first's (a tool refunding two charges of an order, or two line items; two of
one amount are `duplicate-decision`'s). A call that a resume re-issued under another step number
(`renumbered-step`) and a step the framework re-invoked count as the same call. An effect
that no attempt accounts for, created within `--max-skew` plus a few seconds of one of the
call's effects of the same kind, order and amount, is a copy of it (a gateway's retry, a
queue's redelivery) and counts as the call's. Effects that no client trace covers are also
reported when two of the same kind, order and amount were created within `--max-skew` plus a
few seconds.

Each finding carries a cause, a property of the call:
- `resume`: effects on both sides of a resume of the run (the call was re-issued after it);
- `step-retry`: the framework dispatched the same step twice in one segment of the run and
  both dispatches reached the service (often with a fresh reasoning trace);
- `client-retry`: the call was retried after an ambiguous failure (timeout, reset, 502...):
  one request (method and URL) reached the service twice, whether the tool's code or its
  HTTP client (urllib3's `Retry`) sent it again;
- `gateway-retry`: the call sent one attempt only as far as its trace shows (one that
  reached the service), so something below the traced request replayed it: a gateway or a
  queue, or the HTTP library's own retry where the trace records one span per call of the
  library (OpenTelemetry's `requests` instrumentation does not see urllib3's `Retry`);
- `unknown`: no client trace covers the effects, or the call that made them logged no
  request (a trace of tool calls without the HTTP client's lines or spans).

## Why is this bad
Every effect beyond the first is money paid out twice. Its excess (the sum of the effects
beyond the first) is what finance has to recover.

## How to fix
Derive an idempotency key from what stays constant across attempts (run, step, tool and
canonical arguments), compute it once outside the retry loop, send it as `Idempotency-Key`,
and make the service enforce it (a unique record inserted before the effect).

## Example
```
14:02:11.418  POST https://payments.internal/v1/refunds  (attempt 1)
14:02:21.418  urllib3.exceptions.ReadTimeoutError: read timeout=10
14:02:21.930  POST https://payments.internal/v1/refunds  (attempt 2)
--- payments service, same window ---
14:02:11.501  refund rf_8XM1  order A-88214  4500p  settled 14:02:22.884
14:02:23.088  refund rf_9KQ2  order A-88214  4500p  settled 14:02:34.010
```
Two refunds for one call: cause `client-retry`, excess GBP 45.00.
"#,
    check,
};

fn check(model: &Model, settings: &Settings, shared: &Shared, out: &mut Vec<Finding>) {
    check_calls(model, out);
    check_service_only(model, settings, shared, out);
}

/// Effects matched to the calls of one duplicate group, per effect kind.
fn check_calls(model: &Model, out: &mut Vec<Finding>) {
    let matched: Vec<usize> = (0..model.effects.len())
        .filter(|&i| model.effects[i].happened && model.effects[i].matched.is_some())
        .collect();
    // One call's one request (sent again after it succeeded, it is another request).
    let group_and_kind = |i: usize| {
        let e = &model.effects[i];
        let m = e.matched.expect("filtered on matched");
        let group = model.calls[model.dispatches[m.dispatch()].logical()].group();
        (group, model.attempt(m).generation, e.kind.as_str())
    };
    // Most calls made one effect: the groups of two or more, in key order.
    let by_group: Vec<(usize, &str, Vec<usize>)> = groups_by_key(&matched, group_and_kind)
        .into_iter()
        .flat_map(|effects| by_order_and_amount(model, effects))
        .map(|effects| {
            let (group, _, kind) = group_and_kind(effects[0]);
            (group, kind, effects)
        })
        .collect();
    // One pass over the calls for the groups that duplicated, not one per group.
    let mut members: FxHashMap<usize, Vec<usize>> = FxHashMap::default();
    for (group, _, _) in &by_group {
        members.entry(*group).or_default();
    }
    for c in &model.calls {
        if let Some(m) = members.get_mut(&c.group()) {
            m.extend(c.dispatches.iter().copied());
        }
    }
    for (group, kind, effects) in by_group {
        let dispatches = members.get(&group).cloned().unwrap_or_default();
        out.push(call_finding(model, group, kind, effects, dispatches));
    }
}

/// A call's effects, apart where their orders differ: one request sent again is made for
/// the same order, so effects of two orders matched to one call by time alone (two Celery
/// tasks in flight at once, neither naming its order) are no copies of each other: each
/// order's apart, and those of no order known, which cannot be told apart, alone. Effects of
/// one order (or none known) are split by [`by_amount`].
fn by_order_and_amount(model: &Model, effects: Vec<usize>) -> Vec<Vec<usize>> {
    let order = |i: usize| model.effects[i].order.as_deref();
    let first = effects.iter().find_map(|&i| order(i));
    if effects
        .iter()
        .all(|&i| order(i).is_none_or(|o| Some(o) == first))
    {
        return by_amount(model, effects);
    }
    let mut split: BTreeMap<Option<&str>, Vec<usize>> = BTreeMap::new();
    for i in effects {
        split.entry(order(i)).or_default().push(i);
    }
    // Those of no order known cannot be told apart: they stay alone.
    split.remove(&None);
    (split.into_values())
        .filter(|g| g.len() > 1)
        .flat_map(|g| by_amount(model, g))
        .collect()
}

/// A call's effects, apart where their amounts differ: one request sent again is made for
/// the same amount, so effects of other amounts (the two charges of a split payment,
/// refunded in one call) are no copies of each other. Effects whose amount is not known go
/// with the others when these agree on one, else apart. Groups of one are dropped.
fn by_amount(model: &Model, effects: Vec<usize>) -> Vec<Vec<usize>> {
    let amount = |i: usize| model.effects[i].amount();
    let mut known: Vec<_> = effects.iter().filter_map(|&i| amount(i)).collect();
    known.sort_unstable_by_key(|m| (m.currency, m.minor));
    known.dedup();
    if known.len() < 2 {
        return vec![effects];
    }
    let mut split: BTreeMap<Option<(crate::money::Currency, i64)>, Vec<usize>> = BTreeMap::new();
    for i in effects {
        let key = amount(i).map(|m| (m.currency, m.minor));
        split.entry(key).or_default().push(i);
    }
    split.into_values().filter(|g| g.len() > 1).collect()
}

fn call_finding(
    model: &Model,
    group: usize,
    kind: &str,
    effects: Vec<usize>,
    mut dispatches: Vec<usize>,
) -> Finding {
    dispatches.sort_by_key(|&d| (model.dispatches[d].first_at(), d));
    let evidence = Evidence::of(model, &dispatches, &effects);
    let cause = evidence.cause();
    let head = &model.calls[group];
    let mut f = Finding::new(RULE.id, RULE.default_severity, String::new());
    f.cause = Some(cause);
    f.run = Some(head.run.to_string());
    f.step = Some(head.step);
    f.tool = Some(head.tool.to_string()).filter(|t| !t.is_empty());
    f.order = dispatches
        .iter()
        .find_map(|&d| model.dispatches[d].order.as_deref().map(String::from));
    f.key = dispatches
        .iter()
        .find_map(|&d| model.dispatches[d].key().map(String::from));
    for &d in &dispatches {
        dispatch_evidence(&model.dispatches[d], &mut f.evidence);
    }
    set_effects(&mut f, model, effects);
    let lead = evidence.story(kind, cause, &f);
    f.message = format!(
        "{lead}: {} {kind}s for one call, excess {}",
        f.effects.len(),
        amount_text(f.excess())
    );
    f
}

/// What the client side shows about one duplicate group, from which the cause is read.
struct Evidence<'m> {
    model: &'m Model,
    run: &'m str,
    /// The group's dispatches in time order.
    dispatches: Vec<usize>,
    /// The dispatches effects were matched to.
    producing: BTreeSet<usize>,
    /// The group's effects in creation order.
    effects: Vec<&'m EffectRec>,
}

/// Could this attempt have caused an effect? It reached the service (no `safe` failure) and
/// was not answered by a replay, a 409 or a permanent refusal.
fn reached(a: &AttemptRec) -> bool {
    a.is_non_idempotent()
        && match &a.outcome {
            None => true,
            Some(o) => {
                !o.is_replay()
                    && !matches!(
                        o.class(),
                        FailureClass::Safe | FailureClass::Conflict | FailureClass::Permanent
                    )
            }
        }
}

fn reaching(d: &Dispatch) -> usize {
    d.attempts.iter().filter(|a| reached(a)).count()
}

impl<'m> Evidence<'m> {
    fn of(model: &'m Model, dispatches: &[usize], effects: &[usize]) -> Self {
        let producing = effects
            .iter()
            .filter_map(|&e| model.effects[e].matched.map(|m| m.dispatch()))
            .collect();
        let mut effects: Vec<&EffectRec> = effects.iter().map(|&e| &model.effects[e]).collect();
        effects.sort_by(|a, b| (a.created, &a.id).cmp(&(b.created, &b.id)));
        let run = dispatches
            .first()
            .map_or("", |&d| model.dispatches[d].call.run.as_str());
        Evidence {
            model,
            run,
            dispatches: dispatches.to_vec(),
            producing,
            effects,
        }
    }

    fn segment(&self, d: usize) -> u32 {
        self.model.dispatches[d].segment
    }

    /// The strongest explanation the evidence supports, in the issue's order.
    fn cause(&self) -> Cause {
        if self.resume_between().is_some() {
            return Cause::Resume;
        }
        if self.step_retry_pair().is_some() {
            return Cause::StepRetry;
        }
        if self.client_retried().is_some() {
            return Cause::ClientRetry;
        }
        // Where no producing dispatch logged a request, who replayed it is not in the trace.
        let logged = |&d: &usize| self.model.dispatches[d].requests_logged();
        if !self.producing.iter().any(logged) {
            Cause::Unknown
        } else {
            Cause::GatewayRetry
        }
    }

    /// The segment after a resume with effects on both sides of it: effects produced by
    /// dispatches of two segments, or created before and after the resume (a key the
    /// service did not enforce pins both effects on the first attempt). Creation times are
    /// the service's clock and the resume the client's, so the resume may lie up to
    /// `--max-skew` outside the effects' span (SPEC §3.6), provided the call reached the
    /// service on both sides of it: else the effects all came from one side.
    fn resume_between(&self) -> Option<u32> {
        let segments: BTreeSet<u32> = self.dispatches.iter().map(|&d| self.segment(d)).collect();
        if segments.len() < 2 {
            return None;
        }
        let producing: BTreeSet<u32> = self.producing.iter().map(|&d| self.segment(d)).collect();
        if producing.len() > 1 {
            return producing.iter().nth(1).copied();
        }
        let (first, last) = (self.effects.first()?.created, self.effects.last()?.created);
        let skew = self.model.max_skew;
        let reached_on = |after: bool, s: u32| {
            self.dispatches.iter().any(|&d| {
                (self.segment(d) >= s) == after && reaching(&self.model.dispatches[d]) > 0
            })
        };
        segments.iter().copied().filter(|&s| s > 0).find(|&s| {
            self.model.resume_at(self.run, s).is_some_and(|r| {
                (first < r && r <= last)
                    || (first < r.plus(skew)
                        && r.minus(skew) <= last
                        && reached_on(false, s)
                        && reached_on(true, s))
            })
        })
    }

    /// Two dispatches of one segment that both reached the service, the first of them
    /// producing an effect: the framework re-invoked the step.
    fn step_retry_pair(&self) -> Option<(usize, usize)> {
        let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
        for &d in &self.dispatches {
            if reaching(&self.model.dispatches[d]) == 0 {
                continue;
            }
            match seen.get(&self.segment(d)) {
                Some(&first) if self.producing.contains(&first) || self.producing.contains(&d) => {
                    return Some((first, d));
                }
                Some(_) => {}
                None => {
                    seen.insert(self.segment(d), d);
                }
            }
        }
        None
    }

    /// A producing dispatch that sent one request two or more times, each reaching the
    /// service (two different requests of one call, a refund and an email, are no retry).
    fn client_retried(&self) -> Option<usize> {
        self.producing.iter().copied().find(|&d| {
            let reached: Vec<&AttemptRec> = (self.model.dispatches[d].attempts.iter())
                .filter(|a| reached(a))
                .collect();
            retries(&reached).next().is_some()
        })
    }

    /// One sentence on what happened, e.g. "attempt 1 timed out after 10.0 s but its refund
    /// rf_8XM1 settled 1.5 s later; attempt 2 refunded again (rf_9KQ2)".
    fn story(&self, kind: &str, cause: Cause, f: &Finding) -> String {
        let Some(first) = self.effects.first().copied() else {
            return String::new();
        };
        let others: Vec<&str> = f.effects.iter().skip(1).map(|e| e.id.as_str()).collect();
        let others = others.join(", ");
        let did = did(kind);
        match cause {
            Cause::Resume => self.resume_story(kind, first, &others),
            Cause::StepRetry => self.step_retry_story(kind, first, &others),
            Cause::ClientRetry => self.client_retry_story(kind, first, &others),
            Cause::GatewayRetry => format!(
                "the client sent one attempt as far as its trace shows but the service {did} {} times ({}, {others}): something below the traced request replayed it (the HTTP library's own retry, such as urllib3's Retry under a requests span, or a gateway or queue)",
                f.effects.len(),
                first.id
            ),
            Cause::Unknown if self.producing.is_empty() => format!("{} and {others}", first.id),
            Cause::Unknown => format!(
                "the service {did} {} times ({}, {others}) for one tool call whose requests were not logged (a retry by the client or by a gateway: log each request to tell which)",
                f.effects.len(),
                first.id
            ),
        }
    }

    fn resume_story(&self, kind: &str, first: &EffectRec, others: &str) -> String {
        let seg = self.resume_between().unwrap_or(1);
        let resumed = self.model.resume_at(self.run, seg);
        let before = self
            .dispatches
            .iter()
            .map(|&d| &self.model.dispatches[d])
            .rfind(|d| d.segment < seg);
        let after = self
            .dispatches
            .iter()
            .map(|&d| &self.model.dispatches[d])
            .find(|d| d.segment >= seg);
        let mut out = format!("{kind} {} was created before run {}", first.id, self.run);
        if let Some(r) = resumed {
            if let Some(c) = self.model.crash_before(self.run, r) {
                out.push_str(&format!(" crashed at {c} and"));
            }
            out.push_str(&format!(" was resumed at {r}"));
        } else {
            out.push_str(" was resumed");
        }
        let reissued = match (before, after) {
            (Some(b), Some(a)) => {
                let what = if a.call.step != b.call.step {
                    format!(
                        "the call was re-issued as step {} (it was step {})",
                        a.call.step, b.call.step
                    )
                } else {
                    format!("step {} was re-issued", a.call.step)
                };
                let key = match (b.key(), a.key()) {
                    (Some(kb), Some(ka)) if ka == kb => {
                        format!(" with the same key {ka}, which the service did not enforce,")
                    }
                    (Some(kb), Some(ka)) => format!(" with key {ka} instead of {kb}"),
                    (None, Some(ka)) => format!(" with key {ka}"),
                    // Whether a key was sent is not in the trace.
                    (_, None) if !a.requests_logged() => String::new(),
                    (_, None) => " without a key".to_string(),
                };
                format!("{what}{key}")
            }
            _ => "the call was re-issued".to_string(),
        };
        format!(
            "{out}; after the resume {reissued} and {} again ({others})",
            did(kind)
        )
    }

    fn step_retry_story(&self, kind: &str, first: &EffectRec, others: &str) -> String {
        let Some((a, b)) = self.step_retry_pair() else {
            return format!(
                "the step was dispatched again and {} again ({others})",
                did(kind)
            );
        };
        let (a, b) = (&self.model.dispatches[a], &self.model.dispatches[b]);
        let step = a.call.step;
        let why = match (&a.end, a.attempts.last()) {
            (Some(end), _) if !end.ok => format!(
                "step {step} ended failed{}",
                end.error
                    .as_deref()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            ),
            (_, Some(last)) if ended_ambiguous(last) => {
                format!(
                    "step {step}'s attempt {} {}",
                    last.number,
                    how_it_ended(last)
                )
            }
            _ => format!("step {step} was dispatched"),
        };
        let key = match (a.key(), b.key()) {
            // Whether a key was sent is not in the trace.
            (None, None) if !a.requests_logged() && !b.requests_logged() => "",
            (None, None) => " without a key",
            (Some(x), Some(y)) if x == y => {
                " with the same key, which the service did not enforce,"
            }
            (_, Some(_)) => " with a new key",
            (Some(_), None) => " without its key",
        };
        format!(
            "{why} though its {kind} {} {}; the framework dispatched step {step} again{key} and it {} again ({others})",
            first.id,
            state_predicate(first),
            did(kind)
        )
    }

    fn client_retry_story(&self, kind: &str, first: &EffectRec, others: &str) -> String {
        let did = did(kind);
        let attempt = first.matched.map(|m| self.model.attempt(m));
        let told = |a: &&AttemptRec| !a.unlogged && (ended_ambiguous(a) || a.outcome.is_none());
        let Some(a) = attempt.filter(told) else {
            return format!("the call was retried and {did} again ({others})");
        };
        let mut retries: Vec<u32> = (self.effects.iter().skip(1))
            .filter_map(|e| e.matched.map(|m| self.model.attempt(m).number))
            .filter(|&n| n != a.number)
            .collect();
        retries.sort_unstable();
        retries.dedup();
        let again = match retries.as_slice() {
            [n] => format!("attempt {n} {did} again"),
            // Each retry that made one: `attempts 2 and 3 refunded again`.
            [earlier @ .., last] => {
                let earlier: Vec<String> = earlier.iter().map(u32::to_string).collect();
                format!("attempts {} and {last} {did} again", earlier.join(", "))
            }
            // The other effects were matched to this attempt too (the service's clock or
            // its missing ids cannot tell the attempts apart): say no more than is known.
            [] if a.key.is_some() => format!("a retry with the same key {did} again"),
            [] => format!("a retry {did} again"),
        };
        format!(
            "attempt {} {} but its {kind} {} {}; {again} ({others})",
            a.number,
            how_it_ended(a),
            first.id,
            after_failure(first, a)
        )
    }
}

/// When the effect settled relative to the attempt's failure: `settled 1.5 s later`.
fn after_failure(e: &EffectRec, a: &AttemptRec) -> String {
    let failed_at = a.outcome.as_ref().map_or(a.at, |o| o.at);
    match (&e.state, e.state_at) {
        (Some(state), Some(at)) if at >= failed_at => {
            format!("{state} {} later", at.since(failed_at).display_secs())
        }
        (Some(state), Some(at)) => format!("had {state} at {at}"),
        _ if e.created >= failed_at => format!(
            "was created {} later",
            e.created.since(failed_at).display_secs()
        ),
        _ => format!("was created at {}", e.created),
    }
}

/// Effects no client trace accounts for: one key, or one kind/order/amount close in time.
fn check_service_only(model: &Model, settings: &Settings, shared: &Shared, out: &mut Vec<Finding>) {
    let gap = Duration(settings.max_skew.0.saturating_add(DELIVERY_SLACK.0));
    for group in shared.service_only_groups() {
        let kind = model.effects[group.effects[0]].kind.clone();
        let mut f = Finding::new(RULE.id, RULE.default_severity, String::new());
        f.cause = Some(Cause::Unknown);
        f.key = group.key.clone();
        set_effects(&mut f, model, group.effects.clone());
        f.message = match &group.key {
            Some(key) => format!(
                "{} {kind}s carry the same key {key} and no client trace covers them, excess {}",
                f.effects.len(),
                amount_text(f.excess())
            ),
            None => format!(
                "{} {kind}s of {} on one order within {} of each other and no client trace covers them, excess {}",
                f.effects.len(),
                effect_amount_text(&model.effects[group.effects[0]]),
                gap.display_secs(),
                amount_text(f.excess())
            ),
        };
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::event::Lifecycle;
    use crate::finding::Cause;
    use crate::rules::testkit::scenarios::ARGS;
    use crate::rules::testkit::{Trace, ids, t};

    fn dup(tr: &Trace) -> crate::finding::Finding {
        let found = tr.of("duplicate-effect");
        assert_eq!(found.len(), 1, "{found:#?}");
        found.into_iter().next().unwrap()
    }

    /// The write-up's incident.
    fn incident() -> Trace {
        let mut tr = Trace::default();
        tr.tool_call(t(0, "14:02:11.402"), "7f3a", 4, "issue_refund", ARGS)
            .attempt(t(0, "14:02:11.418"), "7f3a", 4, 1, None)
            .timeout(t(0, "14:02:21.418"), "7f3a", 4)
            .attempt(t(0, "14:02:21.930"), "7f3a", 4, 2, None)
            .created(t(0, "14:02:23.107"), "7f3a", 4, "rf_9KQ2", false)
            .step_end(t(0, "14:02:23.109"), "7f3a", 4, None);
        tr.refund_settled(
            t(0, "14:02:11.501"),
            "rf_8XM1",
            "A-88214",
            4500,
            t(0, "14:02:22.884"),
        );
        tr.refund_settled(
            t(0, "14:02:23.088"),
            "rf_9KQ2",
            "A-88214",
            4500,
            t(0, "14:02:34.010"),
        );
        tr
    }

    /// A call that names no order, answered once, and two refunds of the same amount made
    /// while it was in flight: one per order, or both for `second_order`.
    fn untraced_order(second_order: &str) -> Trace {
        let mut tr = Trace::default();
        tr.tool_call(16_213, "B", 1, "issue_refund", "null")
            .request(
                16_276,
                "B",
                1,
                1,
                "POST",
                "https://payments.internal/v1/refunds",
            )
            .response(16_276, "B", 1, 201, "Created")
            .refund(16_265, "rf_1", "A-1", 4500, None)
            .refund(16_275, "rf_2", second_order, 4500, None);
        tr
    }

    #[test]
    fn refunds_of_two_orders_matched_to_one_call_by_time_are_no_copies() {
        assert!(untraced_order("A-2").of("duplicate-effect").is_empty());
        // The same order twice is one request's two refunds.
        assert_eq!(ids(&dup(&untraced_order("A-1"))), ["rf_1", "rf_2"]);
    }

    #[test]
    fn client_retry_says_what_happened_in_one_sentence() {
        let f = dup(&incident());
        assert_eq!(f.cause, Some(Cause::ClientRetry));
        assert_eq!(
            f.message,
            "attempt 1 timed out after 10.0 s but its refund rf_8XM1 settled 1.5 s later; \
             attempt 2 refunded again (rf_9KQ2): 2 refunds for one call, excess GBP 45.00"
        );
    }

    /// Two retries, each making a refund: both are named, not the first alone.
    #[test]
    fn each_retry_that_refunded_again_is_named() {
        let mut tr = Trace::default();
        tr.tool_call(t(0, "14:02:11.402"), "7f3a", 4, "issue_refund", ARGS)
            .attempt(t(0, "14:02:11.418"), "7f3a", 4, 1, None)
            .timeout(t(0, "14:02:21.418"), "7f3a", 4)
            .attempt(t(0, "14:02:21.930"), "7f3a", 4, 2, None)
            .timeout(t(0, "14:02:31.930"), "7f3a", 4)
            .attempt(t(0, "14:02:32.100"), "7f3a", 4, 3, None)
            .created(t(0, "14:02:33.107"), "7f3a", 4, "rf_3", false)
            .step_end(t(0, "14:02:33.109"), "7f3a", 4, None);
        for (created, id) in [
            ("14:02:11.501", "rf_1"),
            ("14:02:22.001", "rf_2"),
            ("14:02:33.088", "rf_3"),
        ] {
            tr.refund_settled(t(0, created), id, "A-88214", 4500, t(0, "14:02:40.000"));
        }
        let f = dup(&tr);
        assert!(
            f.message
                .contains("; attempts 2 and 3 refunded again (rf_2, rf_3)"),
            "{}",
            f.message
        );
    }

    /// The service's clock 1.5 s behind and no refund id in the answer: both refunds fall
    /// to attempt 1. The story claims no key the attempts did not send.
    #[test]
    fn effects_of_one_keyless_attempt_claim_no_key() {
        let mut tr = Trace::default();
        tr.tool_call(t(0, "14:02:11.402"), "7f3a", 4, "issue_refund", ARGS)
            .attempt(t(0, "14:02:11.418"), "7f3a", 4, 1, None)
            .timeout(t(0, "14:02:21.418"), "7f3a", 4)
            .attempt(t(0, "14:02:21.930"), "7f3a", 4, 2, None)
            .step_end(t(0, "14:02:23.109"), "7f3a", 4, None);
        let settled = [
            ("14:02:10.001", "14:02:21.384"),
            ("14:02:21.588", "14:02:32.510"),
        ];
        for ((created, at), id) in settled.into_iter().zip(["rf_8XM1", "rf_9KQ2"]) {
            tr.refund_settled(t(0, created), id, "A-88214", 4500, t(0, at));
        }
        let f = dup(&tr);
        assert!(
            f.message.contains("; a retry refunded again (rf_9KQ2)"),
            "{}",
            f.message
        );
    }

    /// Step 4 ran once, timed out, ended failed; the framework dispatched it again
    /// (`same_key`: with the key it had, which the service ignores; `replayed`: and the
    /// service answered from its records).
    fn step_retry(key: Option<&str>, replayed: bool) -> Trace {
        let mut tr = Trace::default();
        tr.tool_call(t(0, "09:00:00"), "s1", 4, "issue_refund", ARGS)
            .attempt(t(0, "09:00:00.010"), "s1", 4, 1, key)
            .refund(t(0, "09:00:00.200"), "rf_S1", "A-88214", 4500, key)
            .timeout(t(0, "09:00:10.010"), "s1", 4)
            .step_end(t(0, "09:00:10.020"), "s1", 4, Some("ReadTimeout"))
            .tool_call(
                t(0, "09:00:12"),
                "s1",
                4,
                "issue_refund",
                r#"{"amount_p":4500,"order":"A-88214"}"#,
            )
            .attempt(t(0, "09:00:12.010"), "s1", 4, 1, key);
        if replayed {
            tr.created(t(0, "09:00:12.300"), "s1", 4, "rf_S1", true);
        } else {
            tr.refund(t(0, "09:00:12.100"), "rf_S2", "A-88214", 4500, key)
                .created(t(0, "09:00:12.300"), "s1", 4, "rf_S2", false);
        }
        tr.step_end(t(0, "09:00:12.310"), "s1", 4, None);
        tr
    }

    #[test]
    fn a_step_the_framework_dispatched_twice_is_a_step_retry() {
        let f = dup(&step_retry(None, false));
        assert_eq!(f.cause, Some(Cause::StepRetry));
        assert_eq!(ids(&f), ["rf_S1", "rf_S2"]);
        assert_eq!(f.excess_minor, Some(4500));
        assert!(
            f.message.starts_with(
                "step 4 ended failed (ReadTimeout) though its refund rf_S1 was settled;"
            ),
            "{}",
            f.message
        );
        assert!(
            f.message.contains("dispatched step 4 again without a key"),
            "{}",
            f.message
        );
        // The same key, ignored by the service: both effects match the first attempt by key,
        // and the cause is still the step retry.
        let f = dup(&step_retry(Some("k"), false));
        assert_eq!(f.cause, Some(Cause::StepRetry));
        assert!(f.message.contains("with the same key"), "{}", f.message);
        // The service replays the second dispatch: nothing was duplicated.
        assert!(
            step_retry(Some("k"), true)
                .of("duplicate-effect")
                .is_empty()
        );
    }

    #[test]
    fn one_attempt_that_reached_the_service_is_a_gateway_retry() {
        let mut tr = Trace::default();
        tr.tool_call(t(0, "09:00:00"), "g", 2, "issue_refund", ARGS)
            .attempt(t(0, "09:00:00.010"), "g", 2, 1, None)
            .failure(
                t(0, "09:00:00.020"),
                "g",
                2,
                "requests.exceptions.ConnectionError",
                "Connection refused",
            )
            .attempt(t(0, "09:00:00.600"), "g", 2, 2, None)
            .refund(t(0, "09:00:00.700"), "rf_1", "A-88214", 4500, None)
            .refund(t(0, "09:00:01.000"), "rf_2", "A-88214", 4500, None)
            .created(t(0, "09:00:01.100"), "g", 2, "rf_2", false);
        let f = dup(&tr);
        assert_eq!(
            f.cause,
            Some(Cause::GatewayRetry),
            "a refused connection reached nothing"
        );
    }

    /// A refund and the email telling the customer, both POSTs of one call, are two
    /// requests: two refunds with one refund request sent are a gateway's replay, not the
    /// client's retry. The refund sent twice is.
    #[test]
    fn two_different_requests_of_a_call_are_no_client_retry() {
        let refunds = "https://payments.internal/v1/refunds";
        let with_second = |url: &str| {
            let mut tr = Trace::default();
            tr.tool_call(t(0, "09:00:00"), "e", 3, "issue_refund", ARGS)
                .request(t(0, "09:00:00.010"), "e", 3, 1, "POST", refunds)
                .refund(t(0, "09:00:00.100"), "rf_1", "A-88214", 4500, None)
                .refund(t(0, "09:00:00.300"), "rf_2", "A-88214", 4500, None)
                .response(t(0, "09:00:00.400"), "e", 3, 201, "Created")
                .request(t(0, "09:00:00.500"), "e", 3, 2, "POST", url)
                .response(t(0, "09:00:00.600"), "e", 3, 200, "OK");
            dup(&tr).cause
        };
        assert_eq!(
            with_second("https://mail.internal/v1/emails"),
            Some(Cause::GatewayRetry)
        );
        assert_eq!(with_second(refunds), Some(Cause::ClientRetry));
    }

    /// A keyed refund of step 4, a crash and a resume at 09:01:00, then step 4 dispatched,
    /// sent and refunded again at the `redo` times (tool call, attempt, refund).
    fn keyed_refund_across_resume(redo: [&str; 3]) -> Trace {
        let mut tr = Trace::default();
        tr.tool_call(t(0, "09:00:00"), "r", 4, "issue_refund", ARGS)
            .attempt(t(0, "09:00:00.010"), "r", 4, 1, Some("k"))
            .refund(t(0, "09:00:00.100"), "rf_1", "A-88214", 4500, Some("k"))
            .run_event(t(0, "09:00:00.500"), "r", Lifecycle::Crashed)
            .run_event(t(0, "09:01:00"), "r", Lifecycle::Resumed)
            .tool_call(t(0, redo[0]), "r", 4, "issue_refund", ARGS)
            .attempt(t(0, redo[1]), "r", 4, 1, Some("k"))
            .refund(t(0, redo[2]), "rf_2", "A-88214", 4500, Some("k"))
            .step_end(t(0, "09:01:02"), "r", 4, None);
        tr
    }

    #[test]
    fn a_resume_that_reuses_an_unenforced_key_is_a_resume() {
        // Both effects carry the key, so both match the first attempt; they straddle the
        // resume, and the call was dispatched on both sides of it.
        let tr = keyed_refund_across_resume(["09:01:01", "09:01:01.010", "09:01:01.100"]);
        let f = dup(&tr);
        assert_eq!(f.cause, Some(Cause::Resume));
        assert!(
            f.message.starts_with(
                "refund rf_1 was created before run r crashed at 2026-11-03T09:00:00.500Z and \
                 was resumed at 2026-11-03T09:01:00.000Z; after the resume step 4 was re-issued \
                 with the same key k, which the service did not enforce, and refunded again (rf_2)"
            ),
            "{}",
            f.message
        );
    }
    /// The service's clock runs 1.6 s behind the agent's: the second refund, made by the
    /// dispatch after the resume, is stamped 0.5 s before the resume. Within `--max-skew`
    /// (2 s by default) of it, it is on the far side of the resume all the same.
    #[test]
    fn effects_straddling_a_resume_within_the_skew_are_a_resume() {
        let tr = keyed_refund_across_resume(["09:01:00.100", "09:01:00.110", "09:00:59.500"]);
        let f = dup(&tr);
        assert_eq!(ids(&f), ["rf_1", "rf_2"]);
        assert_eq!(f.cause, Some(Cause::Resume), "{}", f.message);
        assert!(
            f.message.contains("after the resume step 4 was re-issued"),
            "{}",
            f.message
        );
    }
    /// A client retry just before a crash, the run resumed a second later, its re-issue
    /// answered 409: the effects are within the skew of the resume, but only the dispatch
    /// before it reached the service, so the resume is not between them.
    #[test]
    fn a_client_retry_just_before_a_resume_is_still_a_client_retry() {
        let mut tr = Trace::default();
        tr.tool_call(t(0, "09:00:00"), "r", 4, "issue_refund", ARGS)
            .attempt(t(0, "09:00:00.010"), "r", 4, 1, None)
            .refund(t(0, "09:00:00.100"), "rf_1", "A-88214", 4500, None)
            .timeout(t(0, "09:00:10.010"), "r", 4)
            .attempt(t(0, "09:00:10.500"), "r", 4, 2, None)
            .refund(t(0, "09:00:10.600"), "rf_2", "A-88214", 4500, None)
            .run_event(t(0, "09:00:10.800"), "r", Lifecycle::Crashed)
            .run_event(t(0, "09:00:11.500"), "r", Lifecycle::Resumed)
            .tool_call(t(0, "09:00:11.600"), "r", 4, "issue_refund", ARGS)
            .attempt(t(0, "09:00:11.610"), "r", 4, 1, None)
            .response(t(0, "09:00:11.700"), "r", 4, 409, "Conflict")
            .step_end(t(0, "09:00:11.710"), "r", 4, Some("409 Conflict"));
        let f = dup(&tr);
        assert_eq!(ids(&f), ["rf_1", "rf_2"]);
        assert_eq!(f.cause, Some(Cause::ClientRetry), "{}", f.message);
    }

    /// One attempt, answered 201 naming rf_8XM1; a second refund of the order and amount
    /// lands 3.1 s after the answer (a gateway's retry or a queue's redelivery the client
    /// never saw). Closed by its answer, the attempt no longer matched it by time, and
    /// every rule passed it over; it is the call's delivery duplicate.
    fn copy_after_answer(copy_at: &str) -> Trace {
        let mut tr = Trace::default();
        tr.tool_call(t(0, "14:02:11.402"), "7f3a", 4, "issue_refund", ARGS)
            .attempt(t(0, "14:02:11.418"), "7f3a", 4, 1, Some("9f1c0a"))
            .refund(t(0, "14:02:11.501"), "rf_8XM1", "A-88214", 4500, None)
            .created(t(0, "14:02:12.107"), "7f3a", 4, "rf_8XM1", false)
            .step_end(t(0, "14:02:12.109"), "7f3a", 4, None)
            .refund(t(0, copy_at), "rf_9KQ2", "A-88214", 4500, None);
        tr
    }

    #[test]
    fn a_copy_just_after_the_answer_is_the_calls_gateway_retry() {
        let tr = copy_after_answer("14:02:14.600");
        let f = dup(&tr);
        assert_eq!(ids(&f), ["rf_8XM1", "rf_9KQ2"]);
        assert_eq!(f.cause, Some(Cause::GatewayRetry), "{}", f.message);
        assert_eq!((f.run.as_deref(), f.step), (Some("7f3a"), Some(4)));
        assert_eq!(f.excess_minor, Some(4500));
        assert!(tr.of("duplicate-decision").is_empty());
        assert!(tr.of("unattributed-effect").is_empty());
        // Half a minute later it may as well be another decision: SPEC §4.6's window.
        let tr = copy_after_answer("14:02:41.600");
        assert!(tr.of("duplicate-effect").is_empty());
        assert_eq!(tr.of("duplicate-decision").len(), 1);
    }
}
