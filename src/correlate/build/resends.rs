//! The request a retry library's line says is sent again (tenacity's `Retrying ... in 2.0
//! seconds`, backoff's `Backing off ... for 0.2s`, stamina's `stamina.retry_scheduled`:
//! [`crate::event::Failure::resent_after`]). Where a client logs its requests (httpx), the
//! request sent again is in a line of its own after the failure, and nothing is implied;
//! where it logs none (aiohttp), the failed request was the call's last, and without the
//! one sent again a second refund read as a gateway's replay of one attempt.

use super::Builder;
use crate::correlate::{AttemptRec, Model};
use crate::event::Loc;
use crate::time::{Duration, Timestamp};

/// A failure whose request is sent again: the dispatch it was placed on, the line that
/// said so, and when the request goes out again (the failure's time and the wait).
pub(super) struct Resend {
    dispatch: usize,
    line: Loc,
    at: Timestamp,
}

impl Builder<'_> {
    /// Notes that the failure read at `line`, placed on dispatch `d` at `at`, is sent again
    /// `after` a wait.
    pub(super) fn note_resend(&mut self, d: usize, line: Loc, at: Timestamp, after: Duration) {
        self.resends.push(Resend {
            dispatch: d,
            line,
            at: at.plus(after),
        });
    }
}

/// Gives each failure whose request is sent again, and is its dispatch's last request, the
/// request sent again: the same method and URL, its key unknown (a function retried may
/// mint a new one), no outcome.
pub(super) fn imply_resends(model: &mut Model, resends: Vec<Resend>) {
    for r in resends {
        let d = &mut model.dispatches[r.dispatch];
        let failed = d
            .attempts
            .iter()
            .position(|a| (a.outcome.as_ref()).is_some_and(|o| o.loc == r.line));
        // Another line gave the request sent again (or a later one): nothing to imply.
        let Some(i) = failed.filter(|&i| i + 1 == d.attempts.len()) else {
            continue;
        };
        let failed = &d.attempts[i];
        let again = AttemptRec {
            number: failed.number.saturating_add(1),
            at: r.at,
            loc: r.line,
            method: failed.method.clone(),
            url: failed.url.clone(),
            key: None,
            outcome: None,
            unlogged: false,
            generation: 0,
            key_unseen: true,
        };
        d.attempts.push(again);
    }
}
