//! The model finished once every event is in: what only the whole of it shows, then
//! effects matched to attempts.

use super::Builder;
use crate::correlate::copies::attach_delivery_copies;
use crate::correlate::disputes::{resolve_amounts, resolve_orders_and_keys};
use crate::correlate::generations::number_generations;
use crate::correlate::key_numbers::number_keys;
use crate::correlate::matching::{join_renumbered, match_effects};
use crate::correlate::replays::{ReplayIndex, mark_replayed_answers};
use crate::correlate::whole_amounts::learn_whole_amounts;
use crate::correlate::{AttemptRec, Dispatch, Model};
use crate::event::Text;
use rustc_hash::FxHashSet;

impl<'o> Builder<'o> {
    pub(in crate::correlate) fn finish(mut self) -> Model {
        use rayon::prelude::*;
        let dispatches = &self.model.dispatches;
        (self.model.calls.par_iter_mut())
            .for_each(|call| call.dispatches.sort_by_key(|&d| dispatches[d].first_at()));
        (self.model.effects.par_iter_mut()).for_each(|e| e.locs.sort());
        // Orders first: an amount is chosen by the other effects of its order.
        resolve_orders_and_keys(&mut self.model, &self.opts.exports);
        resolve_amounts(&mut self.model, &self.opts.exports);
        super::parallel::settle_guesses(&mut self.model);
        let dealt = std::mem::take(&mut self.dealt_in_parallel);
        super::parallel::number_per_call(&mut self.model, dealt);
        super::resends::imply_resends(&mut self.model, std::mem::take(&mut self.resends));
        imply_unlogged_requests(&mut self.model);
        number_generations(&mut self.model);
        let (keys, key_texts) = number_keys(&self.model);
        self.model.keys = keys;
        let replays = ReplayIndex::new(&self.model);
        match_effects(&mut self.model, &replays, key_texts);
        mark_replayed_answers(&mut self.model, &replays);
        learn_whole_amounts(&mut self.model);
        attach_delivery_copies(&mut self.model);
        let mut step_retries = self.step_retries();
        step_retries.extend(self.model_recalls());
        join_renumbered(&mut self.model);
        self.model.inputs_showing_keys = (self.model.dispatches.iter())
            .flat_map(|d| &d.attempts)
            .filter(|a| a.key.is_some())
            .map(|a| a.loc.input)
            .collect();
        super::step_retries::merge_groups(&mut self.model, &step_retries);
        self.model
    }
}

/// Gives each tool call that names an effect kind and logged no attempt the request it must
/// have sent to have an effect (see [`AttemptRec::unlogged`]), unless its run logged the
/// requests of such calls elsewhere: then it is taken at its word, and a dispatch without
/// one sent nothing (it failed before sending). Without it, the effects of a trace that logs
/// tool calls only matched nothing, and a refund paid twice for one call read as two
/// decisions by untraced callers. Only calls naming an effect kind are asked, since only
/// they are always kept whole: a run's lookups, dropped as idle while reading a month, must
/// not decide (`--keep-idle-calls` gives the same report).
fn imply_unlogged_requests(model: &mut Model) {
    // A dispatch without attempts was made by its tool-call line, so it has a time and place.
    let wants = |d: &Dispatch| d.attempts.is_empty() && d.effect_kind.is_some();
    let candidates: FxHashSet<Text> = model
        .dispatches
        .iter()
        .filter(|d| wants(d))
        .map(|d| d.call.run.clone())
        .collect();
    if candidates.is_empty() {
        return;
    }
    let logging: FxHashSet<Text> = model
        .dispatches
        .iter()
        .filter(|d| {
            // A request logged as one: an attempt implied by a failure or an answer read
            // with none before it (a Celery task's `retry:`) is no request logged.
            let logged = |a: &AttemptRec| a.method.is_some() || a.url.is_some();
            d.effect_kind.is_some()
                && !d.attempts.is_empty()
                && candidates.contains(&d.call.run)
                && d.attempts.iter().any(logged)
        })
        .map(|d| d.call.run.clone())
        .collect();
    for d in &mut model.dispatches {
        if !wants(d) || logging.contains(&d.call.run) {
            continue;
        }
        if let (Some(at), Some(loc)) = (d.at, d.loc) {
            d.attempts.push(AttemptRec {
                number: 1,
                at,
                loc,
                method: None,
                url: None,
                key: None,
                outcome: None,
                unlogged: true,
                generation: 0,
                key_unseen: true,
            });
        }
    }
}
