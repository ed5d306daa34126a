//! `idem-audit timeline PATHS... --order ID | --run ID | --key KEY`: everything that concerns
//! one order, run or key, in time order, with the findings that cite each line.

use super::{EXIT_ERROR, EXIT_OK, emit, run_audit};
use crate::cli::{OutputFormat, TimelineArgs};
use crate::config::AuditConfig;
use crate::report::timeline as render;
use crate::timeline::{self, Subject};

pub fn run(args: &TimelineArgs) -> anyhow::Result<u8> {
    let mut cfg = AuditConfig::from_args(&args.input).map_err(anyhow::Error::msg)?;
    // A timeline shows every line of its subject, idle or not.
    cfg.parse.relevance = None;
    cfg.parse.keep_attrs = true;
    let subject = match (&args.order, &args.run, &args.key) {
        (Some(o), _, _) => Subject::Order(o.clone()),
        (_, Some(r), _) => Subject::Run(r.clone()),
        (_, _, Some(k)) => Subject::Key(k.clone()),
        // clap's argument group requires one of them.
        _ => anyhow::bail!("give --order, --run or --key"),
    };
    let audit = run_audit(&cfg, &[args.output.as_deref()])?;
    let t = timeline::build(&audit.model, &audit.findings, &subject, &cfg.period);
    let paths: Vec<&str> = audit.inputs.iter().map(|i| i.path.as_str()).collect();
    let report = render::build(&t, &paths);
    let bytes = match args.format {
        OutputFormat::Table => render::render_text(&report),
        OutputFormat::Json => render::render_json(&report),
        OutputFormat::Csv => render::render_csv(&report),
    };
    if !(cfg.quiet && args.output.is_none()) {
        emit(args.output.as_deref(), &bytes)?;
    }
    if !audit.unreadable.is_empty() {
        return Ok(EXIT_ERROR);
    }
    if t.entries.is_empty() {
        // As grep does: a script can tell "not there" from a timeline.
        eprintln!(
            "idem-audit: note: nothing in the inputs concerns {}{}",
            subject.describe(),
            spelled_otherwise(&audit.model, &subject)
                .map(|s| format!(" (did you mean {s}?)"))
                .unwrap_or_default()
        );
        return Ok(EXIT_NOTHING);
    }
    Ok(EXIT_OK)
}

/// The exit status of a timeline whose subject no event concerns.
const EXIT_NOTHING: u8 = 1;

/// An order, run or key of the inputs that is the subject but for letter case: ids are
/// compared exactly, and `a-88214` for `A-88214` is an easy slip.
fn spelled_otherwise(model: &crate::correlate::Model, subject: &Subject) -> Option<String> {
    let (wanted, candidates): (&str, Box<dyn Iterator<Item = &str>>) = match subject {
        Subject::Order(o) => (
            o,
            Box::new(
                (model.dispatches.iter().filter_map(|d| d.order.as_deref()))
                    .chain(model.effects.iter().filter_map(|e| e.order.as_deref())),
            ),
        ),
        Subject::Run(r) => (r, Box::new(model.calls.iter().map(|c| c.run.as_str()))),
        Subject::Key(k) => (
            k,
            Box::new(
                (model.dispatches.iter())
                    .flat_map(|d| d.attempts.iter().filter_map(|a| a.key.as_deref()))
                    .chain(model.effects.iter().filter_map(|e| e.key.as_deref())),
            ),
        ),
    };
    let found = candidates
        .filter(|c| c.eq_ignore_ascii_case(wanted))
        .min()?;
    Some(found.to_string())
}
