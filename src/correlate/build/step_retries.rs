//! A step the framework re-invoked after it failed (or a resume ran again), whose model
//! wrote the call's arguments anew (a fresh `idempotency_key`, a reworded `reason`): the same action, so the same call
//! for duplicate counting (SPEC §4.3), though its canonical arguments made it another
//! logical call. Before, the refund each dispatch made read as two decisions of one step
//! (a `duplicate-decision` warning) rather than a step retry that refunded twice.

use super::Builder;
use crate::canonical::{canonical, is_key_field};
use crate::classify::FailureClass;
use crate::correlate::Dispatch;
use crate::time::Timestamp;
use serde_json::Value;

impl Builder<'_> {
    /// Puts each logical call first dispatched in a step after another call of the step
    /// failed, with the same tool and the same action ([`same_action`]), in that call's
    /// duplicate group. The candidates are the dispatches that made a new logical call in
    /// a step dispatched before (a few: most steps are dispatched once), in time order, so
    /// a call re-invoked twice joins the group of the first.
    pub(super) fn join_step_retries(&mut self) {
        for i in 0..self.redispatched.len() {
            let d = self.redispatched[i] as usize;
            if let Some(e) = self.retried_by(d) {
                let group = self.model.calls[self.model.dispatches[e].logical()].group;
                let logical = self.model.dispatches[d].logical();
                self.model.calls[logical].group = group;
            }
        }
    }

    /// The latest earlier dispatch of `d`'s step that `d` retries: another logical call of
    /// the same tool and action that had failed by the time `d` was sent, or was made
    /// before a resume that `d` came after. A step's end is
    /// logged once, after its latest dispatch, so a failed end also tells of the step's
    /// dispatches before that one.
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
            let failed = step_failed
                || disp.segment < later.segment
                || failed_at(disp).is_some_and(|t| t <= sent_at);
            if failed
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

/// When the dispatch is known to have failed: its step ended in failure, or its latest
/// attempt was answered with anything but a success. A dispatch with no outcome yet (a
/// parallel sibling, a call still in flight) has not.
fn failed_at(d: &Dispatch) -> Option<Timestamp> {
    if let Some(end) = &d.end {
        return (!end.ok).then_some(end.at);
    }
    let outcome = d.attempts.last()?.outcome.as_ref()?;
    (outcome.class() != FailureClass::Success).then_some(outcome.at)
}

/// Two dispatches ask for the same action: the same order and amount, or, where those are
/// not both known, the same arguments apart from key-like members (which a model writes
/// anew each time it is asked).
fn same_action(a: &Dispatch, b: &Dispatch) -> bool {
    if a.order != b.order {
        return false;
    }
    if a.order.is_some() && a.amount.is_some() && a.amount == b.amount {
        return true;
    }
    let without_keys = |d: &Dispatch| {
        let mut args = d.args().into_owned();
        drop_key_fields(&mut args);
        canonical(&args)
    };
    !a.args_are_null() && without_keys(a) == without_keys(b)
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
