//! Lines of one effect that disagree on its amount, order or key (a payments log and a
//! settlement export, say): the model keeps one value by a rule that does not depend on
//! which file was read first ([`crate::correlate::disputes`]); the user is
//! told, with the rule, since one of the lines is wrong and the month's totals may move by
//! it.

use crate::correlate::disputes::ChosenBy;
use crate::correlate::{Disputed, Model};
use crate::ingest::MAX_PROBLEMS_KEPT;
use crate::report::{InputReport, ProblemReport};

/// Each disagreement as a warning on the input of the line that disagreed.
pub fn warn(model: &Model, reports: &mut [InputReport]) {
    if model.disagreements.is_empty() {
        return;
    }
    let place = |loc| place(reports, loc);
    let warnings: Vec<(u32, u32, String)> = (model.disagreements.iter())
        .map(|d| {
            let e = &model.effects[d.effect as usize];
            let used = match d.field {
                Disputed::Order => e.order.as_deref().unwrap_or_default().to_string(),
                Disputed::Amount => e.written.map(|w| w.describe()).unwrap_or_default(),
                Disputed::Key => e.key.as_deref().unwrap_or_default().to_string(),
            };
            let earlier: Vec<String> = d.earlier.iter().map(|&l| place(l)).collect();
            let chosen_by = match d.field {
                Disputed::Amount => model.amount_disputes.get(&d.effect).map(|a| a.chosen_by),
                Disputed::Order => model.order_disputes.get(&d.effect).map(|o| o.chosen_by),
                Disputed::Key => model.key_disputes.get(&d.effect).map(|k| k.chosen_by),
            };
            let reason = format!(
                "{} {}: {} {} here, but {} at {}; {used} is used ({}): check which is right",
                e.kind,
                e.id,
                d.field.as_str(),
                d.other,
                d.kept,
                earlier.join(", "),
                chosen_by.unwrap_or(ChosenBy::Lesser).why(&e.kind, d.field),
            );
            (d.at.input, d.at.line, reason)
        })
        .collect();
    add_warnings(reports, warnings);
}

/// `path:line` of `loc`.
pub(super) fn place(reports: &[InputReport], loc: crate::event::Loc) -> String {
    let path = (reports.get(loc.input as usize)).map_or("?", |r| r.path.as_str());
    format!("{path}:{}", loc.line)
}

/// Each `(input, line, reason)` as a warning of its input, an input's warnings kept in the
/// order of their lines, the first few of them.
pub(super) fn add_warnings(reports: &mut [InputReport], warnings: Vec<(u32, u32, String)>) {
    let mut touched = vec![false; reports.len()];
    for (input, line, reason) in warnings {
        if let Some(r) = reports.get_mut(input as usize) {
            r.warned += 1;
            r.warnings.push(ProblemReport { line, reason });
            touched[input as usize] = true;
        }
    }
    for (r, _) in reports.iter_mut().zip(touched).filter(|(_, t)| *t) {
        r.warnings.sort_by_key(|p| p.line);
        r.warnings.truncate(MAX_PROBLEMS_KEPT);
    }
}
