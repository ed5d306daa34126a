//! `--whole-amounts [INPUT=]auto|minor|major` (and the config file's `whole-amounts`): the
//! unit the user declares for amounts written as bare whole numbers, where neither side of
//! a duplicate says which (a webhook endpoint logging Stripe's `amount` as its own field, the
//! tool's arguments `"amount": 4500` too; a table of pence that matched no call).

use idem_audit::report::Report;

mod common;
use common::{fixture, report, scan};

/// Each duplicate's order and excess in minor units (`None`: unknown), and the finance
/// totals: the excess by currency and how many findings have none.
type Excess = (Vec<(String, Option<i128>)>, Vec<(String, i128)>, u64);

fn excess(r: &Report) -> Excess {
    let mut dups: Vec<_> = (r.findings.iter())
        .filter(|f| f.rule == "duplicate-effect")
        .map(|f| (f.order.clone().unwrap_or_default(), f.excess_minor))
        .collect();
    dups.sort();
    let totals = (r.summary.excess.iter())
        .map(|a| (a.currency.clone(), a.amount_minor))
        .collect();
    (dups, totals, r.summary.excess_unknown)
}

fn stripe_fields(flags: &[&str]) -> Excess {
    let case = fixture("python-stripe-webhook-fields");
    let (agent, webhook) = (case.join("agent.log"), case.join("webhook.jsonl"));
    excess(&report(&[&agent, &webhook], flags))
}

#[test]
fn a_declared_unit_reads_both_sides_whole_numbers() {
    let a1 = |excess| vec![("A-1".to_string(), excess)];
    let gbp = |minor| vec![("GBP".to_string(), minor)];
    // Undeclared: neither side tells the unit, and the excess is not guessed.
    assert_eq!(stripe_fields(&[]), (a1(None), vec![], 1));
    assert_eq!(
        stripe_fields(&["--whole-amounts", "auto"]),
        (a1(None), vec![], 1)
    );
    let pence = (a1(Some(4500)), gbp(4500), 0);
    assert_eq!(stripe_fields(&["--whole-amounts", "minor"]), pence);
    let pounds = (a1(Some(450_000)), gbp(450_000), 0);
    assert_eq!(stripe_fields(&["--whole-amounts", "major"]), pounds);
    // One input declared: the service's log itself, or the agent's, whose call then tells
    // the service's log its unit as a call with `amount_p` does.
    for one in ["webhook.jsonl=minor", "agent.log=minor"] {
        assert_eq!(stripe_fields(&["--whole-amounts", one]), pence, "{one}");
    }
    // The input's own entry wins over the one for every input, whichever comes first.
    let both = [
        "--whole-amounts",
        "webhook.jsonl=major",
        "--whole-amounts",
        "minor",
    ];
    assert_eq!(stripe_fields(&both), pounds);
}

/// A format that says its unit is not overruled: Stripe's object is minor units.
#[test]
fn a_declaration_leaves_an_amount_its_format_gives_alone() {
    let case = fixture("python-stripe-webhook-dict");
    let (agent, webhook) = (case.join("agent.log"), case.join("webhook.jsonl"));
    for unit in ["auto", "minor", "major"] {
        let r = report(&[&agent, &webhook], &["--whole-amounts", unit]);
        let a1 = vec![("A-1".to_string(), Some(4500))];
        assert_eq!(excess(&r), (a1, vec![("GBP".into(), 4500)], 0), "{unit}");
    }
}

/// A CSV export of whole numbers that matched no call (`ledger.csv`, Z-9) beside a log whose
/// unit is learnt from its call (`service.log`, A-1: pounds): the export's duplicate is
/// known only as declared, and declaring the export leaves the other log as learnt.
#[test]
fn an_export_of_whole_numbers_reads_as_declared() {
    let dir = fixture("whole-unit-per-log");
    let paths = ["agent.log", "service.log", "ledger.csv"].map(|p| dir.join(p));
    let paths: Vec<&std::path::Path> = paths.iter().map(|p| p.as_path()).collect();
    let run = |flags: &[&str]| excess(&report(&paths, flags));
    let dups = |z9| vec![("A-1".to_string(), Some(4500)), ("Z-9".to_string(), z9)];
    assert_eq!(run(&[]), (dups(None), vec![("GBP".into(), 4500)], 1));
    let minor = run(&["--whole-amounts", "ledger.csv=minor"]);
    assert_eq!(minor, (dups(Some(4500)), vec![("GBP".into(), 9000)], 0));
    let major = run(&["--whole-amounts", "ledger.csv=major"]);
    assert_eq!(
        major,
        (dups(Some(450_000)), vec![("GBP".into(), 454_500)], 0)
    );
}

#[test]
fn the_config_file_declares_as_the_flag_does_and_the_flag_wins() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("idem-audit.toml");
    std::fs::write(&config, "whole-amounts = [\"webhook.jsonl=minor\"]\n").unwrap();
    let config = config.to_str().unwrap();
    let a1 = |excess| vec![("A-1".to_string(), Some(excess))];
    let gbp = |minor| vec![("GBP".to_string(), minor)];
    assert_eq!(
        stripe_fields(&["--config", config]),
        (a1(4500), gbp(4500), 0)
    );
    let flag = ["--config", config, "--whole-amounts", "webhook.jsonl=major"];
    assert_eq!(stripe_fields(&flag), (a1(450_000), gbp(450_000), 0));
}

#[test]
fn a_bad_unit_is_refused_and_a_name_that_names_no_input_is_warned_of() {
    let case = fixture("python-stripe-webhook-fields");
    let case = case.to_str().unwrap();
    let (code, _, stderr) = scan(&[case, "--whole-amounts", "cents"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--whole-amounts cents: expected auto, minor or major"),
        "{stderr}"
    );
    let (code, _, stderr) = scan(&[case, "--whole-amounts", "payments.log=minor"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("--whole-amounts payments.log=...: no input is payments.log"),
        "{stderr}"
    );
}
