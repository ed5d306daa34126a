//! `idem-audit timeline PATHS... --order ID | --run ID | --key KEY`: everything that concerns
//! one order, run or key, in time order, with the findings that cite each line.

use super::{EXIT_ERROR, EXIT_OK, emit, print_problems};
use crate::audit;
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
    let audit = audit::run(&cfg).map_err(|e| anyhow::anyhow!("{e}"))?;
    if !cfg.quiet {
        print_problems(&audit);
    }
    for e in &audit.unreadable {
        eprintln!("idem-audit: error: {e}");
    }
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
    Ok(if audit.unreadable.is_empty() {
        EXIT_OK
    } else {
        EXIT_ERROR
    })
}
