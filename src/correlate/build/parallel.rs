//! Parallel tool calls of one step (SPEC §3.1): a framework dispatches several calls of a
//! step at once (two refunds of two items of an order), and their requests and answers
//! follow naming only the run and step. A first request goes to the earliest of the step's
//! open calls that has sent none, and an answer to the earliest with a request awaiting
//! one: in the order they were dispatched, as a client sends them. Before, the latest call
//! took every request as a retry of itself: two parallel refunds read as a step retry that
//! refunded twice, and two keys as a key minted per attempt.

use super::Builder;
use crate::time::Duration;

/// How close the tool-call lines of one step's parallel calls are: one model turn asks for
/// them at once.
const TOGETHER: Duration = Duration::from_secs(1);

impl Builder<'_> {
    /// The step's dispatches before `d`, latest first, that are other calls dispatched
    /// with it: their tool-call lines within [`TOGETHER`] of its, in its segment, with
    /// other arguments or another tool (a dispatch of the same call is a retry of it, not
    /// a sibling), and no end yet. A call the model made again with new arguments after a
    /// failure comes seconds later, after the failure and the model's answer.
    fn open_siblings(&self, d: usize) -> impl Iterator<Item = usize> + '_ {
        let latest = &self.model.dispatches[d];
        std::iter::successors(self.earlier_of(d), |&s| self.earlier_of(s))
            .take(super::dispatches::WALKED as usize)
            .take_while(move |&s| {
                let s = &self.model.dispatches[s];
                let together = (s.at.zip(latest.at)).is_some_and(|(a, b)| b.since(a) <= TOGETHER);
                together
                    && s.end.is_none()
                    && s.segment == latest.segment
                    && s.logical() != latest.logical()
            })
    }

    /// Where a first attempt for `d`, the step's latest dispatch, goes instead: the
    /// earliest open sibling that has sent none.
    pub(super) fn sibling_for_attempt(&self, d: usize) -> Option<usize> {
        let sent_none = |&s: &usize| self.model.dispatches[s].attempts.is_empty();
        self.open_siblings(d).filter(sent_none).last()
    }

    /// Where an answer for `d`, the step's latest dispatch, goes instead: the earliest open
    /// sibling with an attempt (numbered `number`, when the line says) that awaits one.
    pub(super) fn sibling_for_outcome(&self, d: usize, number: Option<u32>) -> Option<usize> {
        let awaits = |&s: &usize| awaits_answer(&self.model.dispatches[s].attempts, number);
        self.open_siblings(d).filter(awaits).last()
    }
}

/// Whether one of `attempts` (numbered `number`, if given: the latest so numbered) has no
/// answer yet.
pub(super) fn awaits_answer(
    attempts: &[crate::correlate::AttemptRec],
    number: Option<u32>,
) -> bool {
    match number {
        Some(n) => (attempts.iter().rev())
            .find(|a| a.number == n)
            .is_some_and(|a| a.outcome.is_none()),
        None => attempts.iter().any(|a| a.outcome.is_none()),
    }
}
