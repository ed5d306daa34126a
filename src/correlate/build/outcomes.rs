//! An outcome (an answer or a failure) attached to the request it ends, or to one it
//! implies when no line gave that request.

use super::Builder;
use super::parallel::Dealt;
use crate::correlate::restated::absorb;
use crate::correlate::{AttemptRec, DealtLine, Outcome, OutcomeKind};
use crate::event::{CallRef, Loc};
use crate::time::{Duration, Timestamp};

impl Builder<'_> {
    /// Attaches `outcome` (of the request numbered `attempt`, when the line says; a failure
    /// that function `raised_in` raised, when a retry library says) to the request it ends.
    /// `resent`: the failure's time and the wait after which a retry library sends that
    /// request again ([`super::resends`]).
    pub(super) fn attach_outcome(
        &mut self,
        call: Option<CallRef>,
        attempt: Option<u32>,
        outcome: Outcome,
        loc: Loc,
        raised_in: Option<&str>,
        resent: Option<(Timestamp, Duration)>,
    ) {
        let call = call.unwrap_or_else(|| super::dispatches::orphan_call(loc));
        let mut d = self.dispatch_for(&call, outcome.at);
        // The step's parallel call awaiting it, or else one that may have sent a request no
        // line gave ([`super::parallel`]), unless the input said whose it is.
        let dealt = match call.part {
            0 => self.deal_outcome(d, attempt, raised_in),
            _ => Dealt::default(),
        };
        if let Some(sibling) = dealt.to {
            d = sibling;
        }
        let line = match outcome.kind {
            OutcomeKind::Failure { .. } => DealtLine::Failure,
            OutcomeKind::Response { .. } => DealtLine::Answer,
        };
        let index = self.place_outcome(d, attempt, outcome);
        self.note_dealt(&dealt, line, loc, (d, index));
        if let Some((at, after)) = resent {
            self.note_resend(d, loc, at, after);
        }
    }

    /// Puts `outcome` (of the request numbered `attempt`, when the line says) on the
    /// request of dispatch `d` it ends, or one it implies; returns that request's index.
    fn place_outcome(&mut self, d: usize, attempt: Option<u32>, outcome: Outcome) -> usize {
        let latest_line = self.model.dispatches[d].latest_line_at();
        let attempts = &mut self.model.dispatches[d].attempts;
        let slot = match attempt {
            Some(n) => attempts.iter().rposition(|a| a.number == n),
            None => attempts.iter().rposition(|a| a.outcome.is_none()),
        }
        .or(attempts.len().checked_sub(1));
        let last = attempts.len().checked_sub(1);
        match slot {
            Some(i) if attempts[i].outcome.is_none() => {
                attempts[i].outcome = Some(outcome);
                i
            }
            // The answer of the latest attempt, which the line named (or named none: a
            // tool's own error saying the 422 its request got), told again.
            Some(i)
                if Some(i) == last
                    && (attempt.is_some() || restates_an_answer(&attempts[i], &outcome))
                    && attempts[i]
                        .outcome
                        .as_mut()
                        .is_some_and(|kept| absorb(kept, &outcome)) =>
            {
                i
            }
            _ => {
                // An outcome with no attempt logged: imply the attempt, so the outcome is
                // still evidence. It was sent at the earliest after the dispatch's latest
                // line before it (its tool call, the previous attempt's outcome): placed
                // there, as a request a client logs with its answer is, the effect it made
                // before its failure was logged (a timeout's, ten seconds on) is still its.
                let number = attempt.unwrap_or(attempts.len() as u32 + 1);
                let earliest = latest_line.filter(|&t| t <= outcome.at);
                attempts.push(AttemptRec {
                    number,
                    at: earliest.unwrap_or(outcome.at),
                    loc: outcome.loc,
                    method: None,
                    url: None,
                    key: None,
                    outcome: Some(outcome),
                    unlogged: false,
                    generation: 0,
                    key_unseen: true,
                });
                attempts.len() - 1
            }
        }
    }
}

/// An unnumbered failure after an answer: the program's own error saying the answer (a
/// tool raising on the 422 its request got). An unnumbered failure after a failure is a
/// retry's, never the same told again.
fn restates_an_answer(kept: &AttemptRec, outcome: &Outcome) -> bool {
    matches!(
        (kept.outcome.as_ref().map(|o| &o.kind), &outcome.kind),
        (
            Some(OutcomeKind::Response { .. }),
            OutcomeKind::Failure { .. }
        )
    )
}
