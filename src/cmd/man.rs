//! `idem-audit man`: man pages generated from the clap definitions (clap_mangen). The pages
//! are also committed under `man/`; a test regenerates them and fails when they differ, so
//! a new flag cannot ship undocumented. Regenerate with `cargo run -- man --dir man`.

use super::{EXIT_OK, emit};
use crate::cli::{Cli, ManArgs};
use anyhow::Context;
use clap::CommandFactory;

pub fn run(args: &ManArgs) -> anyhow::Result<u8> {
    let pages = pages()?;
    match &args.dir {
        None => emit(None, &pages[0].1)?,
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("{dir}: cannot create"))?;
            for (name, bytes) in &pages {
                let path = std::path::Path::new(dir).join(name);
                std::fs::write(&path, bytes)
                    .with_context(|| format!("{}: cannot write", path.display()))?;
            }
        }
    }
    Ok(EXIT_OK)
}

/// Every page as (file name, roff): `idem-audit.1` first, then one per command
/// (`idem-audit-scan.1`, ...), in the order the commands are declared.
pub fn pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    render(&cmd, &mut out)?;
    Ok(out)
}

fn render(cmd: &clap::Command, out: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
    let man = clap_mangen::Man::new(cmd.clone());
    let mut bytes = Vec::new();
    man.render(&mut bytes)?;
    out.push((man.get_filename(), bytes));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        render(sub, out)?;
    }
    Ok(())
}
