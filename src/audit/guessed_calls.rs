//! Lines of a step's parallel calls that named none of them and were given to one by the
//! order the calls were dispatched, where the calls' findings rest on that choice
//! ([`crate::correlate::GuessedCall`]): a warning on each, as for an OTLP request that two
//! tool calls could have sent.

use super::disagreements::{add_warnings, place};
use crate::correlate::{DealtLine, Dispatch, GuessedCall, Model};
use crate::report::InputReport;

/// Each guess as a warning on the input of its line.
pub fn warn(model: &Model, reports: &mut [InputReport]) {
    if model.guessed_calls.is_empty() {
        return;
    }
    let warnings = (model.guessed_calls.iter())
        .map(|g| (g.at.input, g.at.line, describe(model, g, reports)))
        .collect();
    add_warnings(reports, warnings);
}

fn describe(model: &Model, g: &GuessedCall, reports: &[InputReport]) -> String {
    let call = |d: u32| {
        let d: &Dispatch = &model.dispatches[d as usize];
        let what = match &d.order {
            Some(order) => format!("for order {order}"),
            None => shortened(&model.calls[d.logical()].canonical),
        };
        let at = d.loc.map(|l| format!(" ({})", place(reports, l)));
        format!("`{}` {what}{}", model.tool_of(d), at.unwrap_or_default())
    };
    let chosen = &model.dispatches[g.chosen as usize];
    let more = match g.more {
        0 => String::new(),
        n => format!(" nor to {n} more"),
    };
    let tell = match g.line {
        DealtLine::Request => "the call's key, or its order in the URL, with each request",
        DealtLine::Answer => "the effect's id with each answer, and the service's effects,",
        DealtLine::Failure => "the failed request's URL, naming the call's order,",
    };
    format!(
        "{} names none of the parallel calls of run {} step {}: given to {}, not to {}{more}, \
         by the order they were dispatched, so these calls' findings may be each other's; \
         log {tell} to tell them apart",
        g.line.as_str(),
        chosen.call.run,
        chosen.call.step,
        call(g.chosen),
        call(g.other),
    )
}

/// Arguments as far as a message needs them.
fn shortened(args: &str) -> String {
    const SHOWN: usize = 60;
    match args.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}...", &args[..cut]),
        None => args.to_string(),
    }
}
