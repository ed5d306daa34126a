//! The cause of one group's duplicates, read from what the client side shows: a resume,
//! a step retry, a client retry, else a retry below the traced request.

use crate::classify::FailureClass;
use crate::correlate::{AttemptRec, Dispatch, EffectRec, Model};
use crate::finding::Cause;
use crate::rules::support::retries;
use std::collections::{BTreeMap, BTreeSet};

/// What the client side shows about one duplicate group, from which the cause is read.
pub(super) struct Evidence<'m> {
    pub(super) model: &'m Model,
    pub(super) run: &'m str,
    /// The group's dispatches in time order.
    pub(super) dispatches: Vec<usize>,
    /// The dispatches effects were matched to.
    pub(super) producing: BTreeSet<usize>,
    /// The group's effects in creation order.
    pub(super) effects: Vec<&'m EffectRec>,
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
    pub(super) fn of(model: &'m Model, dispatches: &[usize], effects: &[usize]) -> Self {
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

    /// The key dispatch `d` was sent with: its first keyed attempt's, else the key the
    /// service logged on the first of the group's effects made by it (a client log that
    /// prints no headers still sent the key its effects carry).
    pub(super) fn dispatch_key(&self, d: usize) -> Option<&'m str> {
        // Not where the client's log shows the request went without one (the service's
        // own id in its key column).
        let made_by = |e: &&&EffectRec| {
            e.matched.is_some_and(|m| {
                m.dispatch() == d && !self.model.key_known_absent(self.model.attempt(m))
            })
        };
        self.model.dispatches[d].key().or_else(|| {
            (self.effects.iter())
                .filter(made_by)
                .find_map(|e| e.key.as_deref())
        })
    }

    fn segment(&self, d: usize) -> u32 {
        self.model.dispatches[d].segment
    }

    /// The strongest explanation the evidence supports, in the order.
    pub(super) fn cause(&self) -> Cause {
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
    pub(super) fn resume_between(&self) -> Option<u32> {
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
    pub(super) fn step_retry_pair(&self) -> Option<(usize, usize)> {
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
}
