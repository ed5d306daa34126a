//! A step the framework re-invoked after it failed (or a resume ran again), whose model
//! wrote the call's arguments anew (a fresh `idempotency_key`, a reworded `reason`): the
//! same action, so the same call for duplicate counting (SPEC §4.3), though its canonical
//! arguments made it another logical call. Before, the refund each dispatch made read as
//! two decisions of one step (a `duplicate-decision` warning) rather than a step retry that
//! refunded twice.

use super::Builder;
use crate::canonical::{canonical, is_key_field};
use crate::correlate::{Dispatch, Model};
use crate::time::Timestamp;
use serde_json::Value;

impl Builder<'_> {
    /// Each logical call first dispatched in a step after the step failed (or after a
    /// resume), with the same tool and the same action ([`same_action`]) as a call the
    /// step dispatched before: (the later call, the earlier). The candidates are the
    /// dispatches that made a new logical call in a step dispatched before (a few: most
    /// steps are dispatched once).
    pub(super) fn step_retries(&self) -> Vec<(usize, usize)> {
        (self.redispatched.iter())
            .filter_map(|&d| {
                let d = d as usize;
                let e = self.retried_by(d)?;
                Some((
                    self.model.dispatches[d].logical(),
                    self.model.dispatches[e].logical(),
                ))
            })
            .collect()
    }

    /// The latest earlier dispatch of `d`'s step that `d` retries: another logical call of
    /// the same tool and action, made before the step ended failed (a step's end is logged
    /// once, after its latest dispatch, so it tells of the dispatches before that one
    /// too) or before a resume that `d` came after. A call's own failed answer is not
    /// enough: the model may go on in the same step to another call (the next item).
    fn retried_by(&self, d: usize) -> Option<usize> {
        let later = &self.model.dispatches[d];
        let sent_at = later.first_at();
        let tool = &self.model.calls[later.logical()].tool;
        let mut step_failed = false;
        let earlier = std::iter::successors(self.earlier_of(d), |&e| self.earlier_of(e));
        for e in earlier.take(super::dispatches::WALKED as usize) {
            let disp = &self.model.dispatches[e];
            step_failed |= (disp.end.as_ref()).is_some_and(|end| !end.ok && end.at <= sent_at);
            // A resume re-runs the step whatever became of it before: its checkpoint was lost.
            let rerun = step_failed || disp.segment < later.segment;
            if rerun
                && disp.logical != later.logical
                && self.model.calls[disp.logical()].tool == *tool
                && same_action(disp, later)
            {
                return Some(e);
            }
        }
        None
    }
}

/// How many steps after a failed call the model's re-call of it is looked for: a ReAct loop
/// calls again at once (the next step), after a look at the order's status (two on), or,
/// where the framework counts its model and tool nodes as steps (LangGraph), two and four
/// on.
const RECALLED_WITHIN_STEPS: u32 = 6;

impl Builder<'_> {
    /// Each call the model made again in a later step of the same run after the call failed
    /// (its step ended failed, or its last request got no answer or an error): the same
    /// tool and action ([`same_action`]), the first call of that action after the failure,
    /// within [`RECALLED_WITHIN_STEPS`] steps and a day, with no resume between (a resume's
    /// re-issue is `join_renumbered`'s). The tool handed the model an error and the model
    /// asked again: a retry of an ambiguous failure, not a second decision. (the later
    /// call, the earlier).
    pub(super) fn model_recalls(&self) -> Vec<(usize, usize)> {
        let dispatches = &self.model.dispatches;
        let mut found = Vec::new();
        for failed in dispatches {
            let Some(failed_at) = seen_failing(failed) else {
                continue;
            };
            if failed.effect_kind.is_none() || failed.order.is_none() || failed.args_are_null() {
                continue;
            }
            let tool = &self.model.calls[failed.logical()].tool;
            let later_steps = (1..=RECALLED_WITHIN_STEPS).filter_map(|n| {
                let step = failed.call.step.checked_add(n)?;
                self.dispatches_of(&failed.call.run, step)
            });
            let next = later_steps.flatten().find(|&d| {
                let later = &dispatches[d];
                self.model.calls[later.logical()].tool == *tool && same_action(failed, later)
            });
            let Some(d) = next else { continue };
            let later = &dispatches[d];
            let sent = later.first_at();
            if later.segment == failed.segment
                && failed_at <= sent
                && sent <= failed_at.plus(super::dispatches::STEP_RETRIED_WITHIN)
            {
                found.push((later.logical(), failed.logical()));
            }
        }
        found
    }
}

/// When the model was told the call failed: its step's failed end, else its last
/// request's error or non-2xx answer.
fn seen_failing(d: &Dispatch) -> Option<Timestamp> {
    if let Some(end) = &d.end {
        return (!end.ok).then_some(end.at);
    }
    let outcome = d.attempts.last()?.outcome.as_ref()?;
    let failed = match outcome.status() {
        Some(status) => !(200..300).contains(&status),
        None => true,
    };
    failed.then_some(outcome.at)
}

/// Puts the calls of each step retry ([`Builder::step_retries`]) and each renumbering (set
/// by `join_renumbered`) in one duplicate group, whichever order they chain in (a call
/// renumbered on resume, then retried with its reason reworded, is one call with the
/// original): each group is named by its earliest call.
pub(super) fn merge_groups(model: &mut Model, retries: &[(usize, usize)]) {
    if retries.is_empty() {
        return;
    }
    let mut root: Vec<u32> = (0..model.calls.len() as u32).collect();
    fn find(root: &mut [u32], mut c: usize) -> usize {
        while root[c] as usize != c {
            root[c] = root[root[c] as usize];
            c = root[c] as usize;
        }
        c
    }
    let join = |root: &mut Vec<u32>, a: usize, b: usize| {
        let (a, b) = (find(root, a), find(root, b));
        root[a.max(b)] = a.min(b) as u32;
    };
    for c in 0..model.calls.len() {
        let group = model.calls[c].group();
        join(&mut root, c, group);
    }
    for &(later, earlier) in retries {
        join(&mut root, later, earlier);
    }
    for c in 0..model.calls.len() {
        model.calls[c].group = find(&mut root, c) as u32;
    }
}

/// Two dispatches ask for the same action: the same arguments apart from key-like members
/// (which a model writes anew each time it is asked) and prose (a `reason` it rewords).
/// Identifiers, amounts and anything else must agree: a refund of another line item of the
/// same price is another action.
fn same_action(a: &Dispatch, b: &Dispatch) -> bool {
    if a.order != b.order || a.amount != b.amount || a.args_are_null() || b.args_are_null() {
        return false;
    }
    let (mut x, mut y) = (a.args().into_owned(), b.args().into_owned());
    drop_key_fields(&mut x);
    drop_key_fields(&mut y);
    drop_reworded_prose(&mut x, &mut y);
    canonical(&x) == canonical(&y)
}

fn drop_key_fields(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|name, _| !is_key_field(name));
            map.values_mut().for_each(drop_key_fields);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_key_fields),
        _ => {}
    }
}

/// Takes out of both objects the members whose values are prose in both (text with a
/// blank in it: `"damaged item"`, not `"sku-1"`), at any depth.
fn drop_reworded_prose(a: &mut Value, b: &mut Value) {
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        return;
    };
    let prose = |v: &Value| {
        v.as_str()
            .is_some_and(|s| s.trim().contains(char::is_whitespace))
    };
    let reworded: Vec<String> = (a.iter())
        .filter(|(name, v)| prose(v) && b.get(*name).is_some_and(prose))
        .map(|(name, _)| name.clone())
        .collect();
    for name in reworded {
        a.remove(&name);
        b.remove(&name);
    }
    for (name, v) in a.iter_mut() {
        if let Some(w) = b.get_mut(name) {
            drop_reworded_prose(v, w);
        }
    }
}
