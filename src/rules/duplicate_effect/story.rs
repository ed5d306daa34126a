//! A finding's message: one sentence on what happened, worded for its cause.

use super::cause::Evidence;
use super::gateway::said;
use crate::correlate::{AttemptRec, EffectRec, GatewayTryRec};
use crate::finding::{Cause, Finding};
use crate::rules::support::{did, ended_ambiguous, how_it_ended, state_predicate};

impl<'m> Evidence<'m> {
    /// One sentence on what happened, e.g. "attempt 1 timed out after 10.0 s but its refund
    /// rf_8XM1 settled 1.5 s later; attempt 2 refunded again (rf_9KQ2)". `gateway`: a
    /// gateway's lines about a `gateway-retry`'s request ([`Evidence::gateway_lines`]).
    pub(super) fn story(
        &self,
        kind: &str,
        cause: Cause,
        f: &Finding,
        gateway: &[&GatewayTryRec],
    ) -> String {
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
            // A gateway's log shows it sent the request again: no need to guess.
            Cause::GatewayRetry if gateway.iter().any(|g| g.shows.resent) => format!(
                "the client sent one attempt as far as its trace shows but the service {did} {} times ({}, {others}): a gateway sent it again; its log says it {}",
                f.effects.len(),
                first.id,
                said(gateway)
            ),
            Cause::GatewayRetry => {
                let gave_up = match gateway.is_empty() {
                    true => String::new(),
                    false => format!("; a gateway's log says it {}", said(gateway)),
                };
                format!(
                    "the client sent one attempt as far as its trace shows but the service {did} {} times ({}, {others}): something below the traced request replayed it (the HTTP library's own retry, such as urllib3's Retry under a requests span, or a gateway or queue){gave_up}",
                    f.effects.len(),
                    first.id
                )
            }
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
        let segment = |d: &usize| self.model.dispatches[*d].segment;
        let before = self.dispatches.iter().copied().rfind(|d| segment(d) < seg);
        let after = self.dispatches.iter().copied().find(|d| segment(d) >= seg);
        let crashed = resumed.and_then(|r| self.model.crash_before(self.run, r));
        // A slow effect of the call sent before the crash can be created after it, even
        // after the resume: said as the trace has it.
        let mut out = match crashed.or(resumed) {
            Some(cut) if first.created >= cut => format!(
                "{kind} {} (created at {}) came from the call sent before run {}",
                first.id, first.created, self.run
            ),
            _ => format!("{kind} {} was created before run {}", first.id, self.run),
        };
        if let Some(r) = resumed {
            if let Some(c) = crashed {
                out.push_str(&format!(" crashed at {c} and"));
            }
            out.push_str(&format!(" was resumed at {r}"));
        } else {
            out.push_str(" was resumed");
        }
        let reissued = match (before, after) {
            (Some(b), Some(a)) => {
                let (kb, ka) = (self.dispatch_key(b), self.dispatch_key(a));
                let (b, a) = (&self.model.dispatches[b], &self.model.dispatches[a]);
                let what = if a.call.step != b.call.step {
                    format!(
                        "the call was re-issued as step {} (it was step {})",
                        a.call.step, b.call.step
                    )
                } else {
                    format!("step {} was re-issued", a.call.step)
                };
                let key = match (kb, ka) {
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
        let keys = (self.dispatch_key(a), self.dispatch_key(b));
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
        // Dispatched again before the first was over: one model turn asking for the same
        // call twice at once (parallel calls with the same arguments), not a retry.
        let a_over = (a.end.as_ref().map(|e| e.at))
            .or_else(|| a.attempts.last()?.outcome.as_ref().map(|o| o.at));
        if a_over.is_some_and(|t| b.first_at() < t) {
            return format!(
                "step {step} dispatched the same call twice at once (parallel calls with the same arguments) and it {} twice ({}, {others}): one turn asked for it twice, a planning defect",
                did(kind),
                first.id
            );
        }
        let key = match keys {
            // Whether a key was sent is not in the trace.
            (None, None) if !a.requests_logged() && !b.requests_logged() => "",
            (None, None) => " without a key",
            (Some(x), Some(y)) if x == y => {
                " with the same key, which the service did not enforce,"
            }
            (_, Some(_)) => " with a new key",
            (Some(_), None) => " without its key",
        };
        // The model asked again under a later step (a ReAct loop handed the tool's error).
        let again = if b.call.step == step {
            format!("the framework dispatched step {step} again{key}")
        } else {
            let tool = &self.model.calls[b.logical()].tool;
            format!(
                "the model was handed the error and called {tool} again in step {}{key}",
                b.call.step
            )
        };
        format!(
            "{why} though its {kind} {} {}; {again} and it {} again ({others})",
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
            [] if a.key.is_some() || (!self.model.key_known_absent(a) && self.one_key_logged()) => {
                format!("a retry with the same key {did} again")
            }
            [] => format!("a retry {did} again"),
        };
        // Effects matched to the first attempt too, beside a retry's: copies made below the
        // client (a gateway's retry), not the retry's.
        let (copies, by_retries): (Vec<&EffectRec>, Vec<&EffectRec>) =
            (self.effects.iter().skip(1)).partition(|e| e.matched == first.matched);
        let ids = |effects: &[&EffectRec]| {
            let ids: Vec<&str> = effects.iter().map(|e| e.id.as_str()).collect();
            ids.join(", ")
        };
        let (below, others) = if copies.is_empty() || by_retries.is_empty() {
            (String::new(), others.to_string())
        } else {
            let below = format!(
                ", and made again below the client ({}: a gateway's or the service's own retry)",
                ids(&copies)
            );
            (below, ids(&by_retries))
        };
        format!(
            "attempt {} {} but its {kind} {} {}{below}; {again} ({others})",
            a.number,
            how_it_ended(a),
            first.id,
            after_failure(first, a)
        )
    }
}

impl Evidence<'_> {
    /// Did the service log one and the same key on every effect of the group?
    fn one_key_logged(&self) -> bool {
        let mut keys = self.effects.iter().map(|e| e.key.as_deref());
        keys.next()
            .flatten()
            .is_some_and(|k| keys.all(|o| o == Some(k)))
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
