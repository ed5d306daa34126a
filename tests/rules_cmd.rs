//! `idem-audit rules` and `explain`: both print from the registry the scanner runs. The list
//! of rule ids is snapshotted (as cargo-deny does its codes) so that an id can never change or
//! disappear silently: baselines and `--severity` flags refer to them.

use assert_cmd::Command;
use idem_audit::rules::registry;

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn rule_ids_and_default_levels_never_change_silently() {
    let list: Vec<String> = registry()
        .iter()
        .map(|r| {
            let on = if r.default_enabled {
                ""
            } else {
                " (off by default)"
            };
            format!("{} {}{on}", r.id, r.default_severity.as_str())
        })
        .collect();
    insta::assert_snapshot!("rule_ids", list.join("\n"));
}

#[test]
fn rules_lists_every_registered_rule_with_its_severity() {
    let (code, out, _) = run(&["rules"]);
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), registry().len());
    for (line, rule) in lines.iter().zip(registry()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[0], rule.id);
        assert_eq!(words[1], rule.default_severity.as_str());
        assert!(line.contains(rule.summary), "{line}");
    }
    assert!(out.contains("key-not-derived") && out.contains("(off by default)"));
}

#[test]
fn explain_prints_the_whole_explanation() {
    for rule in registry() {
        let (code, out, _) = run(&["explain", rule.id]);
        assert_eq!(code, Some(0), "{}", rule.id);
        assert!(out.starts_with(&format!("# {} (", rule.id)), "{out}");
        assert!(out.contains(rule.explanation.trim()), "{}", rule.id);
    }
    let (_, out, _) = run(&["explain", "duplicate-effect"]);
    for section in [
        "What it does",
        "Why is this bad",
        "How to fix",
        "Example",
        "client-retry",
    ] {
        assert!(out.contains(section), "{section}");
    }
}

#[test]
fn explain_an_unknown_rule_exits_2_listing_the_known_ids() {
    let (code, out, err) = run(&["explain", "nope"]);
    assert_eq!(code, Some(2));
    assert!(out.is_empty());
    assert!(err.contains("unknown rule `nope`"), "{err}");
    for rule in registry() {
        assert!(err.contains(rule.id), "{} not listed: {err}", rule.id);
    }
}

#[test]
fn severity_overrides_on_the_command_line() {
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/key-per-attempt/trace.log"
    );
    let scan = |extra: &[&str]| {
        let mut args = vec!["scan", trace, "--format", "json"];
        args.extend_from_slice(extra);
        let (code, out, err) = run(&args);
        let report: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
        let rules: Vec<(String, String)> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["rule"].as_str().unwrap().into(),
                    f["severity"].as_str().unwrap().into(),
                )
            })
            .collect();
        (code, rules)
    };
    let (code, rules) = scan(&[]);
    assert_eq!(code, Some(1));
    assert!(rules.contains(&("key-per-attempt".into(), "error".into())));
    let (code, rules) = scan(&[
        "--severity",
        "key-per-attempt=off",
        "--severity",
        "duplicate-effect=warning",
    ]);
    assert!(
        !rules.iter().any(|(r, _)| r == "key-per-attempt"),
        "{rules:?}"
    );
    assert!(rules.contains(&("duplicate-effect".into(), "warning".into())));
    // No error left, so the default --fail-on error passes.
    assert_eq!(code, Some(0));
    let (code, _, err) = run(&["scan", trace, "--severity", "key-per-attempt=loud"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("unknown level `loud`"), "{err}");
}
