//! Shell integration: completions and man pages come from the clap definitions, and the
//! committed pages under `man/` are what the binary generates (regenerate them with
//! `cargo run -- man --dir man` after changing a flag).

use assert_cmd::Command;
use clap::CommandFactory;
use idem_audit::cli::Cli;
use std::path::Path;

fn run(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

/// Every subcommand and every long flag of the clap definition.
fn names() -> (Vec<String>, Vec<String>) {
    let cmd = Cli::command();
    let mut subs = Vec::new();
    let mut flags = Vec::new();
    for sub in cmd.get_subcommands() {
        subs.push(sub.get_name().to_string());
        for arg in sub.get_arguments() {
            if let Some(long) = arg.get_long() {
                flags.push(long.to_string());
            }
        }
    }
    (subs, flags)
}

#[test]
fn completions_cover_every_command_and_flag() {
    let (subs, flags) = names();
    assert!(
        subs.contains(&"timeline".to_string()) && flags.contains(&"write-baseline".to_string())
    );
    for shell in ["bash", "zsh", "fish"] {
        let (code, script) = run(&["completions", shell]);
        assert_eq!(code, Some(0), "{shell}");
        for s in &subs {
            assert!(
                script.contains(s.as_str()),
                "{shell} completion lacks the command {s}"
            );
        }
        for f in &flags {
            let spelled = if shell == "fish" {
                format!("-l {f}")
            } else {
                format!("--{f}")
            };
            assert!(script.contains(&spelled), "{shell} completion lacks --{f}");
        }
    }
    assert_eq!(run(&["completions", "tcsh"]).0, Some(2));
}

#[test]
fn committed_man_pages_match_the_clap_definitions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let pages = idem_audit::cmd::man::pages().unwrap();
    let (subs, _) = names();
    assert_eq!(
        pages.len(),
        subs.len() + 1,
        "one page per command and the main page"
    );
    let mut stale = Vec::new();
    for (name, bytes) in &pages {
        match std::fs::read(dir.join(name)) {
            Ok(committed) if committed == *bytes => {}
            _ => stale.push(name.clone()),
        }
    }
    let mut committed: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    committed.sort();
    let mut generated: Vec<String> = pages.iter().map(|p| p.0.clone()).collect();
    generated.sort();
    assert!(
        stale.is_empty() && committed == generated,
        "man/ is out of date ({stale:?}; committed {committed:?}, generated {generated:?}): \
         run `cargo run -- man --dir man` and commit the result"
    );
    // The main page names every command; `man` prints it.
    let main = String::from_utf8(pages[0].1.clone()).unwrap();
    for s in &subs {
        assert!(
            main.contains(&format!("idem\\-audit\\-{s}")),
            "main page lacks {s}"
        );
    }
    assert_eq!(run(&["man"]).1.as_bytes(), pages[0].1.as_slice());
}
