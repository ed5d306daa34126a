//! The guesses of the parallel dealing checked against the service's effects, once every
//! effect is in (the client's side and the service's are built apart).

use super::rests_on;
use crate::correlate::{DealtLine, GuessedCall, Model, OutcomeKind};
use rustc_hash::FxHashMap;

/// Settles what the effects tell of the guesses kept while building, and keeps those whose
/// calls' findings rest on them ([`rests_on`]):
/// - an answer naming an effect (`refund_id=rf_2`) of the other call's order, and not of its
///   own call's, was the other's: it trades places with the other call's outcome of the
///   same request number (the two were dealt in turn); one naming an effect of its own
///   call's order was dealt right;
/// - a request whose key the service logged on an effect of its call's order was dealt
///   right.
pub(in crate::correlate) fn settle_guesses(model: &mut Model) {
    if model.guessed_calls.is_empty() {
        return;
    }
    let guesses = std::mem::take(&mut model.guessed_calls);
    let clues: Vec<Option<(DealtLine, String)>> = guesses.iter().map(|g| clue(model, g)).collect();
    // The orders of the effects the clues name, by effect id (answers) or key (requests).
    let mut orders: FxHashMap<(bool, &str), Vec<&str>> = FxHashMap::default();
    for (line, text) in clues.iter().flatten() {
        orders.insert((*line == DealtLine::Request, text), Vec::new());
    }
    for e in &model.effects {
        let order = e.order.as_deref().unwrap_or_default();
        if let Some(v) = orders.get_mut(&(false, e.id.as_str())) {
            v.push(order);
        }
        if let Some(key) = e.key.as_deref()
            && let Some(v) = orders.get_mut(&(true, key))
        {
            v.push(order);
        }
    }
    let order_of = |d: u32| model.dispatches[d as usize].order.as_deref();
    let mut verdicts = Vec::with_capacity(guesses.len());
    for (g, clue) in guesses.iter().zip(&clues) {
        let named = clue
            .as_ref()
            .and_then(|(line, text)| orders.get(&(*line == DealtLine::Request, text.as_str())));
        let names =
            |d: u32| (named.zip(order_of(d))).is_some_and(|(orders, o)| orders.contains(&o));
        verdicts.push(match (names(g.chosen), names(g.other)) {
            (true, false) => Verdict::Right,
            (false, true) if g.line == DealtLine::Answer => Verdict::Other,
            _ => Verdict::Open,
        });
    }
    drop(orders);
    let mut kept = Vec::new();
    for (g, verdict) in guesses.into_iter().zip(verdicts) {
        match verdict {
            Verdict::Right => {}
            Verdict::Other if trade_answers(model, &g) => {}
            _ if rests_on(model, &g) => kept.push(g),
            _ => {}
        }
    }
    model.guessed_calls = kept;
}

/// What settles a guess.
enum Verdict {
    /// The effects agree with the choice.
    Right,
    /// The answer was the other call's.
    Other,
    Open,
}

/// What the guess's line names that an effect may hold: an answer's effect id, a
/// request's key.
fn clue(model: &Model, g: &GuessedCall) -> Option<(DealtLine, String)> {
    let a = &model.dispatches[g.chosen as usize].attempts[g.attempt as usize];
    let text = match g.line {
        DealtLine::Request => a.key.as_deref(),
        DealtLine::Answer => match a.outcome.as_ref().map(|o| &o.kind) {
            Some(OutcomeKind::Response {
                effect_id: Some(id),
                ..
            }) => Some(id.as_str()),
            _ => None,
        },
        DealtLine::Failure => None,
    };
    text.map(|t| (g.line, t.to_string()))
}

/// The guess's answer and the other call's outcome of the same request number (its latest
/// request so numbered) trade places; `false` when the other call has no such request.
fn trade_answers(model: &mut Model, g: &GuessedCall) -> bool {
    let (chosen, other) = (g.chosen as usize, g.other as usize);
    let number = model.dispatches[chosen].attempts[g.attempt as usize].number;
    let Some(j) = (model.dispatches[other].attempts.iter()).rposition(|a| a.number == number)
    else {
        return false;
    };
    let answer = model.dispatches[chosen].attempts[g.attempt as usize]
        .outcome
        .take();
    let theirs = std::mem::replace(&mut model.dispatches[other].attempts[j].outcome, answer);
    model.dispatches[chosen].attempts[g.attempt as usize].outcome = theirs;
    true
}
