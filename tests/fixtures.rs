//! Runs `idem-audit scan` over every `fixtures/<case>/` that has a `fixtures/<case>.expect.json`
//! beside it, and checks the findings it must and must not produce, and the exit status.
//!
//! An expectation file holds: `args` (extra flags), `inputs` (paths inside the case folder;
//! default: the folder itself), `exit`, `findings` (each a set of fields a finding must have;
//! with `exhaustive`, these are all the findings), `absent` (field sets no finding may match),
//! `skipped` (how many lines the report says were skipped) and `warned` (how many warnings
//! its inputs got: lines used by a choice the input does not settle).
//! Every case must also give the same bytes with `--keep-idle-calls`.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

fn matches(finding: &Value, pattern: &Value) -> bool {
    pattern
        .as_object()
        .expect("pattern is an object")
        .iter()
        .all(|(k, v)| finding.get(k) == Some(v))
}

fn check_case(expect_path: &Path) -> Result<(), String> {
    let expect: Value = serde_json::from_str(&std::fs::read_to_string(expect_path).unwrap())
        .map_err(|e| format!("{}: {e}", expect_path.display()))?;
    let name = expect_path
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .trim_end_matches(".expect.json");
    let dir = expect_path.parent().unwrap().join(name);
    let mut cmd = Command::cargo_bin("idem-audit").unwrap();
    cmd.arg("scan");
    match expect.get("inputs").and_then(Value::as_array) {
        Some(inputs) => {
            for i in inputs {
                cmd.arg(dir.join(i.as_str().unwrap()));
            }
        }
        None => {
            cmd.arg(&dir);
        }
    }
    cmd.args(["--format", "json"]);
    for a in expect
        .get("args")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        cmd.arg(a.as_str().unwrap());
    }
    let mut keep_all = Command::new(cmd.get_program());
    keep_all.args(cmd.get_args()).arg("--keep-idle-calls");
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Dropping idle calls while reading is an optimisation: it must never change a report.
    let unpruned = keep_all.output().unwrap();
    if unpruned.stdout != out.stdout {
        return Err(format!(
            "{name}: the report differs with --keep-idle-calls:\n{}\n---\n{stdout}",
            String::from_utf8_lossy(&unpruned.stdout)
        ));
    }
    let report: Value = serde_json::from_str(&stdout).map_err(|e| {
        format!(
            "{name}: output is not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    let findings = report["findings"].as_array().unwrap();
    let shown = || serde_json::to_string_pretty(findings).unwrap();
    if let Some(exit) = expect.get("exit").and_then(Value::as_i64)
        && out.status.code() != Some(exit as i32)
    {
        return Err(format!(
            "{name}: exit {:?}, expected {exit}",
            out.status.code()
        ));
    }
    if let Some(skipped) = expect.get("skipped")
        && report["summary"]["lines_skipped"] != *skipped
    {
        return Err(format!(
            "{name}: {} lines skipped, expected {skipped}",
            report["summary"]["lines_skipped"]
        ));
    }
    if let Some(warned) = expect.get("warned").and_then(Value::as_u64) {
        let inputs = report["inputs"].as_array().into_iter().flatten();
        let got: u64 = inputs.filter_map(|i| i["warned"].as_u64()).sum();
        if got != warned {
            return Err(format!(
                "{name}: {got} warnings, expected {warned}: {}",
                serde_json::to_string_pretty(&report["inputs"]).unwrap()
            ));
        }
    }
    let wanted = expect
        .get("findings")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for w in &wanted {
        let n = findings.iter().filter(|f| matches(f, w)).count();
        if n != 1 {
            return Err(format!(
                "{name}: {n} findings match {w}, expected 1; findings: {}",
                shown()
            ));
        }
    }
    if expect
        .get("exhaustive")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        && findings.len() != wanted.len()
    {
        return Err(format!(
            "{name}: {} findings, expected exactly {}: {}",
            findings.len(),
            wanted.len(),
            shown()
        ));
    }
    for a in expect
        .get("absent")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(f) = findings.iter().find(|f| matches(f, a)) {
            return Err(format!(
                "{name}: a finding matches {a}, which must be absent: {f}"
            ));
        }
    }
    Ok(())
}

#[test]
fn every_fixture_meets_its_expectations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".expect.json"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 5, "fixtures missing");
    let failures: Vec<String> = cases.iter().filter_map(|c| check_case(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
