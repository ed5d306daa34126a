//! Parallel tool calls of one step (SPEC §3.1): a framework dispatches several calls of a
//! step at once (two refunds of two orders, `asyncio.gather`), and their requests and
//! answers follow naming only the run and step, or nothing (an HTTP client's own lines).
//!
//! A line goes to the call it names ([`evidence`]): a request whose key is the call's (an
//! earlier request's, or one in its arguments), else whose URL names one of the call's
//! arguments (`/v1/orders/A-2/refunds`) and no other call's, else a kind of effect only that
//! call makes; a failure whose retry library names the call's tool. A line that names none
//! goes by the order the calls were dispatched, as a client sends them: a first request to
//! the earliest call that has sent none; a later one to the latest call, unless that one is
//! done (its last write answered 2xx: no client retries that), then to the earliest that is
//! not. An answer or failure goes to the earliest call with a request awaiting one; with
//! none (httpx logs no request that got no answer: the request it ends is in no line), to
//! the latest call unless it is done, then to the earliest that is not. Before, the latest
//! call took every request as a retry of itself (two parallel refunds read as a step
//! retry), and then every retry: a timed-out call's retry was the other call's.
//!
//! Where another call could as well have been the line's, the choice is kept
//! ([`GuessedCall`]); [`settle_guesses`] checks it against the service's effects once they
//! are all in, and the rest are told to the user where the calls' stories rest on them.

use super::Builder;
use crate::correlate::{AttemptRec, DealtLine, GuessedCall, Model, OutcomeKind};
use crate::event::Loc;
use crate::time::Duration;

mod evidence;
mod settle;

pub(in crate::correlate) use settle::settle_guesses;

/// How close the tool-call lines of one step's parallel calls are: one model turn asks for
/// them at once.
const TOGETHER: Duration = Duration::from_secs(1);

/// Where a line of a step goes: `to` a dispatch other than the step's latest (`None`: the
/// latest, as for any step), and the first other call that could as well have been its,
/// with how many more, when the line named none. `parallel`: the step had parallel calls
/// open.
#[derive(Default)]
pub(super) struct Dealt {
    pub(super) to: Option<usize>,
    rival: Option<(usize, u32)>,
    pub(super) parallel: bool,
}

impl Dealt {
    /// To call `c`, which the line named, `d` being the step's latest dispatch.
    fn named(c: usize, d: usize) -> Self {
        Dealt {
            to: (c != d).then_some(c),
            rival: None,
            parallel: true,
        }
    }
}

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

    /// The step's open parallel calls, earliest first, ending with `d`, its latest
    /// dispatch; empty when it has none open beside `d` (nearly every step: one look at its
    /// link to an earlier dispatch).
    fn parallel_calls(&self, d: usize) -> Vec<usize> {
        if self.earlier_of(d).is_none() {
            return Vec::new();
        }
        let mut calls: Vec<usize> = self.open_siblings(d).collect();
        if !calls.is_empty() {
            calls.reverse();
            calls.push(d);
        }
        calls
    }

    /// The call that sent a request of `d`'s step (`number`, with `key` and to `url`).
    pub(super) fn deal_request(
        &self,
        d: usize,
        number: u32,
        key: Option<&str>,
        url: Option<&str>,
    ) -> Dealt {
        let calls = self.parallel_calls(d);
        if calls.is_empty() {
            return Dealt::default();
        }
        if let Some(c) = self.named_by_request(&calls, key, url) {
            return Dealt::named(c, d);
        }
        let dispatches = &self.model.dispatches;
        if number == 1 {
            let sent_none = |&c: &usize| dispatches[c].attempts.is_empty();
            return by_order(&calls, d, sent_none, None);
        }
        self.latest_unless_done(&calls, d)
    }

    /// The call an outcome of `d`'s step (of its request `number`, when the line says; a
    /// failure a retry library says function `raised_in` raised) ends a request of.
    pub(super) fn deal_outcome(
        &self,
        d: usize,
        number: Option<u32>,
        raised_in: Option<&str>,
    ) -> Dealt {
        let calls = self.parallel_calls(d);
        if calls.is_empty() {
            return Dealt::default();
        }
        if let Some(c) = raised_in.and_then(|f| self.named_by_function(&calls, f)) {
            return Dealt::named(c, d);
        }
        let dispatches = &self.model.dispatches;
        let awaits = |&c: &usize| awaits_answer(&dispatches[c].attempts, number);
        if calls.iter().any(awaits) {
            return by_order(&calls, d, awaits, None);
        }
        // None awaits: it ends a request no line gave.
        self.latest_unless_done(&calls, d)
    }

    /// The latest of `calls`, `d`, as for any step, unless it is done; then the earliest
    /// that is not: a call that sends a request (or had one that no line gave).
    fn latest_unless_done(&self, calls: &[usize], d: usize) -> Dealt {
        let dispatches = &self.model.dispatches;
        let not_done = |&c: &usize| !is_done(&dispatches[c].attempts);
        by_order(calls, d, not_done, not_done(&d).then_some(d))
    }

    /// Notes where `dealt` sent the line at `at`: to attempt `attempt` (its index) of
    /// dispatch `chosen`. Its choice is kept if another call could as well have been the
    /// line's.
    pub(super) fn note_dealt(
        &mut self,
        dealt: &Dealt,
        line: DealtLine,
        at: Loc,
        (chosen, attempt): (usize, usize),
    ) {
        if dealt.parallel {
            self.dealt_in_parallel.push(chosen as u32);
        }
        if let Some((other, more)) = dealt.rival {
            self.model.guessed_calls.push(GuessedCall {
                at,
                line,
                chosen: chosen as u32,
                attempt: attempt as u32,
                other: other as u32,
                more,
            });
        }
    }
}

/// The earliest of `calls` that `fits` (or `first`, when given and it fits), the one
/// after it that also fits as its rival; `to` is `None` when that is `latest`.
fn by_order(
    calls: &[usize],
    latest: usize,
    fits: impl Fn(&usize) -> bool,
    first: Option<usize>,
) -> Dealt {
    let mut fitting = calls.iter().copied().filter(|c| fits(c));
    let Some(earliest) = first.or_else(|| fitting.next()) else {
        return Dealt {
            parallel: true,
            ..Dealt::default()
        };
    };
    let mut rivals = fitting.filter(|&c| c != earliest);
    let rival = rivals.next().map(|r| (r, rivals.count() as u32));
    Dealt {
        to: (earliest != latest).then_some(earliest),
        rival,
        parallel: true,
    }
}

/// Whether a call whose requests are `attempts` is done: its latest request may have an
/// effect and was answered 2xx. A client sends no such request again.
fn is_done(attempts: &[AttemptRec]) -> bool {
    attempts
        .last()
        .is_some_and(|a| a.may_cause_effects() && answered_2xx(a))
}

fn answered_2xx(a: &AttemptRec) -> bool {
    let answer = a.outcome.as_ref().map(|o| &o.kind);
    matches!(
        answer,
        Some(OutcomeKind::Response {
            status: 200..=299,
            ..
        })
    )
}

/// Whether one of `attempts` (numbered `number`, if given: the latest so numbered) has no
/// answer yet.
pub(super) fn awaits_answer(attempts: &[AttemptRec], number: Option<u32>) -> bool {
    match number {
        Some(n) => (attempts.iter().rev())
            .find(|a| a.number == n)
            .is_some_and(|a| a.outcome.is_none()),
        None => attempts.iter().any(|a| a.outcome.is_none()),
    }
}

/// Numbers the requests of each dispatch that parallel calls' lines were dealt to from 1,
/// in the order they were sent: an HTTP client's lines are numbered on through the step
/// (its lines name no call, and a number 1 would read as the step dispatched again), so
/// the second call's first request was `attempt 2` in its findings. An agent's own
/// numbering of each call (`(attempt N)`), which runs 1, 2, ... already, is left as it was.
pub(in crate::correlate) fn number_per_call(model: &mut Model, mut dealt: Vec<u32>) {
    dealt.sort_unstable();
    dealt.dedup();
    for d in dealt {
        for (a, n) in model.dispatches[d as usize].attempts.iter_mut().zip(1..) {
            a.number = n;
        }
    }
}

/// Whether the findings of a guess's calls may rest on it: either call sent other than one
/// request answered 2xx (a retry, a failure, no answer). Two calls that each sent one
/// request and got one 2xx answer tell the same story whichever was whose.
fn rests_on(model: &Model, g: &GuessedCall) -> bool {
    let unsettled = |d: u32| match &model.dispatches[d as usize].attempts[..] {
        [only] => !answered_2xx(only),
        _ => true,
    };
    unsettled(g.chosen) || unsettled(g.other)
}

#[cfg(test)]
mod tests;
