//! `idem-audit completions bash|zsh|fish`: a completion script generated from the same clap
//! definitions the binary parses with, so it cannot drift from the flags.

use super::{EXIT_OK, emit};
use crate::cli::{Cli, CompletionsArgs, Shell};
use clap::CommandFactory;

pub fn run(args: &CompletionsArgs) -> anyhow::Result<u8> {
    emit(None, &script(args.shell))?;
    Ok(EXIT_OK)
}

pub fn script(shell: Shell) -> Vec<u8> {
    use clap_complete::Shell as S;
    let shell = match shell {
        Shell::Bash => S::Bash,
        Shell::Zsh => S::Zsh,
        Shell::Fish => S::Fish,
    };
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "idem-audit", &mut out);
    out
}
