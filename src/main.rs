//! The binary: parse the command line, run the command, map the result to an exit status.

use clap::Parser;
use idem_audit::cli::{Cli, Command};
use idem_audit::cmd;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Scan(args) => cmd::scan::run(args),
        Command::Key(args) => cmd::key::run(args),
        Command::Rules => cmd::rules::run(),
        Command::Explain(args) => cmd::explain::run(args),
        Command::Timeline(args) => cmd::timeline::run(args),
        Command::Metrics(args) => cmd::metrics::run(args),
        Command::Completions(args) => cmd::completions::run(args),
        Command::Man(args) => cmd::man::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("idem-audit: error: {e:#}");
            ExitCode::from(cmd::EXIT_ERROR)
        }
    }
}
