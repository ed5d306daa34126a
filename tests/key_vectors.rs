//! The reference key against Python: `tests/data/key_vectors.json` is the output of
//! `scripts/key_vectors.py`, which runs the write-up's `idempotency_key()` unchanged. Every
//! vector is checked through the library and through `idem-audit key`.

use assert_cmd::Command;
use idem_audit::canonical::{canonical, python_dumps, reference_key};
use serde_json::Value;

fn vectors() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/key_vectors.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    doc["vectors"].as_array().unwrap().clone()
}

fn field<'a>(v: &'a Value, name: &str) -> &'a str {
    v[name]
        .as_str()
        .unwrap_or_else(|| panic!("vector lacks {name}: {v}"))
}

#[test]
fn the_vectors_cover_what_the_issue_lists() {
    let all: String = vectors()
        .iter()
        .map(|v| field(v, "args").to_string())
        .collect();
    for needle in [
        "1e20", "1.5e-7", "-0.0", "4500.0", "true", "null", "[", "😀", "ä", "{\"z\"",
    ] {
        assert!(all.contains(needle), "no vector has {needle}");
    }
    assert!(vectors().len() >= 15);
}

#[test]
fn library_matches_python_on_every_vector() {
    for v in vectors() {
        let args: Value = serde_json::from_str(field(&v, "args")).unwrap();
        let (run, tool) = (field(&v, "run"), field(&v, "tool"));
        let step = v["step"].as_u64().unwrap() as u32;
        let about = field(&v, "about");
        assert_eq!(python_dumps(&args), field(&v, "canonical"), "{about}");
        assert_eq!(
            reference_key(run, step, tool, &args, false),
            field(&v, "key"),
            "{about}"
        );
        assert_eq!(
            canonical(&args),
            field(&v, "normalized_canonical"),
            "{about}"
        );
        assert_eq!(
            reference_key(run, step, tool, &args, true),
            field(&v, "normalized_key"),
            "{about}"
        );
    }
}

fn key_cmd(v: &Value, extra: &[&str]) -> (String, String) {
    let step = v["step"].as_u64().unwrap().to_string();
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .args([
            "key",
            "--run",
            field(v, "run"),
            "--step",
            &step,
            "--tool",
            field(v, "tool"),
        ])
        .args(["--args", field(v, "args")])
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn the_key_command_matches_python_on_every_vector() {
    for v in vectors() {
        let about = field(&v, "about");
        let (out, err) = key_cmd(&v, &[]);
        assert_eq!(out, format!("{}\n", field(&v, "key")), "{about}");
        assert!(err.is_empty(), "{about}: {err}");
        let (out, _) = key_cmd(&v, &["--canonical"]);
        assert_eq!(out, format!("{}\n", field(&v, "canonical")), "{about}");
        let (out, err) = key_cmd(&v, &["--normalize"]);
        assert_eq!(out, format!("{}\n", field(&v, "normalized_key")), "{about}");
        // --normalize says so exactly when it changed the key.
        let changed = field(&v, "key") != field(&v, "normalized_key");
        assert_eq!(
            err.contains("normalizing changed the key"),
            changed,
            "{about}: {err}"
        );
        let (out, _) = key_cmd(&v, &["--canonical", "--normalize"]);
        assert_eq!(
            out,
            format!("{}\n", field(&v, "normalized_canonical")),
            "{about}"
        );
    }
}

#[test]
fn the_incident_call_in_either_key_order() {
    let run = |args: &str| {
        let out = Command::cargo_bin("idem-audit")
            .unwrap()
            .args([
                "key",
                "--run",
                "7f3a",
                "--step",
                "4",
                "--tool",
                "issue_refund",
                "--args",
                args,
            ])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let a = run(r#"{"order":"A-88214","amount_p":4500}"#);
    let b = run(r#"{"amount_p":4500,"order":"A-88214"}"#);
    assert_eq!(a.trim().len(), 32);
    assert!(a.trim().bytes().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(a, b);
}

#[test]
fn args_that_are_not_json_exit_2() {
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .args([
            "key",
            "--run",
            "r",
            "--step",
            "1",
            "--tool",
            "t",
            "--args",
            "{order:1}",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--args"));
}
