//! Helpers the integration tests share: where fixtures live, and running `idem-audit scan`.
#![allow(dead_code)] // each test binary uses its own subset

use assert_cmd::Command;
use std::path::PathBuf;

pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

/// Runs `idem-audit scan ARGS`: exit code, standard output, standard error.
pub fn scan(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .arg("scan")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
