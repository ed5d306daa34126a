//! Effects matched by time alone that requests of two logs could each have made, nothing on
//! their lines telling which ([`crate::correlate::UnsettledEffect`]): matched to none, and a
//! warning on the effect's line says so, naming the requests, rather than leaving it an
//! effect no client made.

use super::disagreements::{add_warnings, place};
use crate::correlate::{AttemptId, Model, UnsettledEffect};
use crate::report::InputReport;

/// Each effect left unmatched so, as a warning on its first line, while it stayed so (a
/// delivery copy of a matched effect is matched after).
pub fn warn(model: &Model, reports: &mut [InputReport]) {
    let warnings = (model.unsettled_effects.iter())
        .filter_map(|u| {
            let e = &model.effects[u.effect as usize];
            let at = *e.locs.first()?;
            e.matched
                .is_none()
                .then(|| (at.input, at.line, describe(model, u, reports)))
        })
        .collect::<Vec<_>>();
    if !warnings.is_empty() {
        add_warnings(reports, warnings);
    }
}

fn describe(model: &Model, u: &UnsettledEffect, reports: &[InputReport]) -> String {
    let e = &model.effects[u.effect as usize];
    let request = |id: AttemptId| {
        let a = model.attempt(id);
        let at = place(reports, a.loc);
        match (&a.method, &a.url) {
            (Some(method), Some(url)) => format!("`{method} {url}` ({at})"),
            (None, Some(url)) => format!("`{url}` ({at})"),
            _ => format!("a request no line shows (its outcome at {at})"),
        }
    };
    let more = match u.rivals.more {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!(
        "{} {} is matched to no request: {} and {}{more}, of two logs, could each have made \
         it (sent by its creation and not answered before it, within --max-skew), and no \
         answer names it; log the effect's id with each answer (`{} {} created`) to tell \
         whose it is",
        e.kind,
        e.id,
        request(u.rivals.chosen),
        request(u.rivals.other),
        e.kind,
        e.id,
    )
}
