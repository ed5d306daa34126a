//! Output is the same bytes whatever the thread count (SPEC §6, issue 6): every fixture
//! folder at once (many inputs of every format, parsed in parallel, rules run in parallel),
//! scanned with `--threads 1`, `--threads 2` and the default, in JSON and as a table.

use assert_cmd::Command;

fn scan(extra: &[&str]) -> Vec<u8> {
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .args(["scan", "fixtures", "--fail-on", "never"])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(2),
        "scan failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn output_does_not_depend_on_the_thread_count() {
    for format in ["json", "table"] {
        let default = scan(&["--format", format]);
        assert!(default.len() > 1000, "a real report, not an empty one");
        for threads in ["1", "2", "3"] {
            let other = scan(&["--format", format, "--threads", threads]);
            assert!(
                other == default,
                "--format {format} --threads {threads} differs from the default"
            );
        }
    }
}
