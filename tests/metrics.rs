//! `idem-audit metrics`: per-window figures, the replay-rate-spike rule, JSON and CSV, and
//! the same rule in `scan`.

use assert_cmd::Command;
use idem_audit::report::Report;
use idem_audit::report::metrics::MetricsReport;

fn run(cmd: &str, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .arg(cmd)
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

fn metrics_json(dir: &str) -> MetricsReport {
    let (code, out) = run("metrics", &[dir, "--format", "json"]);
    assert_eq!(code, Some(0));
    serde_json::from_str(&out).unwrap()
}

/// Counts straight from the fixture text: keyed attempts and replayed responses per minute.
fn counted(dir: &str) -> Vec<(String, u64, u64)> {
    let text = std::fs::read_to_string(format!("{dir}/requests.log")).unwrap();
    let mut out: Vec<(String, u64, u64)> = Vec::new();
    for line in text.lines() {
        let minute = format!("{}:00.000Z", &line[..16]);
        if out.last().is_none_or(|l| l.0 != minute) {
            out.push((minute, 0, 0));
        }
        let last = out.last_mut().unwrap();
        last.1 += line.contains("idempotency_key=") as u64;
        last.2 += line.contains("replayed=true") as u64;
    }
    out
}

#[test]
fn windows_count_what_the_fixture_holds() {
    let m = metrics_json("fixtures/replay-spike");
    assert_eq!(m.schema, "idem-audit.metrics.v1");
    assert_eq!(m.window, "1m");
    let got: Vec<(String, u64, u64)> = m
        .windows
        .iter()
        .map(|w| (w.start_at.display(), w.keyed_requests, w.replays))
        .collect();
    assert_eq!(got, counted("fixtures/replay-spike"));
    let total: u64 = got.iter().map(|w| w.1).sum();
    assert_eq!(m.totals.keyed_requests, total);
    // About 0.4% outside the spike, over 20% inside it.
    for w in &m.windows {
        let rate = w.replay_rate.unwrap();
        assert!(if w.spike { rate > 0.20 } else { rate < 0.005 }, "{w:?}");
    }
}

#[test]
fn one_spike_for_the_one_window_and_none_elsewhere() {
    let m = metrics_json("fixtures/replay-spike");
    let spikes: Vec<String> = m
        .windows
        .iter()
        .filter(|w| w.spike)
        .map(|w| w.start_at.display())
        .collect();
    assert_eq!(spikes, ["2026-11-03T14:05:00.000Z"]);
    assert_eq!(m.findings.len(), 1);
    assert_eq!(m.findings[0].rule, "replay-rate-spike");
    assert_eq!(
        m.findings[0].at.as_deref(),
        Some("2026-11-03T14:05:00.000Z")
    );
    // Its evidence is the replayed responses of that minute.
    assert!(m.findings[0].evidence.len() >= 70);
    // The same rule runs in scan.
    let (code, out) = run("scan", &["fixtures/replay-spike", "--format", "json"]);
    assert_eq!(code, Some(0), "a warning does not fail by default");
    let report: Report = serde_json::from_str(&out).unwrap();
    let spikes: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.rule == "replay-rate-spike")
        .collect();
    assert_eq!(spikes.len(), 1);
    assert_eq!(spikes[0].fingerprint, m.findings[0].fingerprint);
    assert_eq!(
        run("scan", &["fixtures/replay-spike", "--fail-on", "warning"]).0,
        Some(1)
    );
}

#[test]
fn a_steady_rate_under_ten_times_the_median_is_no_spike() {
    let m = metrics_json("fixtures/replay-steady");
    assert!(m.windows.iter().all(|w| !w.spike));
    assert!(m.findings.is_empty());
    assert!(
        m.windows.iter().any(|w| w.replay_rate.unwrap() > 0.10),
        "the fixture has a busy minute"
    );
}

#[test]
fn wider_windows_merge_minutes() {
    let (_, out) = run(
        "metrics",
        &[
            "fixtures/replay-spike",
            "--window",
            "2m",
            "--format",
            "json",
        ],
    );
    let m: MetricsReport = serde_json::from_str(&out).unwrap();
    assert_eq!(m.window, "2m");
    assert_eq!(m.windows.len(), 4);
    assert!(
        m.windows
            .iter()
            .all(|w| w.start_at.display().ends_with(":00.000Z"))
    );
    assert_eq!(m.windows[2].start_at.display(), "2026-11-03T14:04:00.000Z");
}

#[test]
fn the_table_draws_a_bar_per_window_and_csv_has_a_row_each() {
    let (_, out) = run("metrics", &["fixtures/replay-spike"]);
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("2026-11-03T14:"))
        .collect();
    assert_eq!(rows.len(), 8);
    let bar = |l: &str| {
        l.chars()
            .filter(|c| ('\u{2588}'..='\u{258f}').contains(c))
            .count()
    };
    let spike = rows.iter().find(|l| l.contains("<- spike")).unwrap();
    assert!(spike.starts_with("2026-11-03T14:05"));
    assert_eq!(bar(spike), 40);
    assert!(
        rows.iter()
            .filter(|l| !l.contains("spike"))
            .all(|l| bar(l) == 1),
        "{out}"
    );
    insta::assert_snapshot!("replay_spike_table", out);
    let (_, csv) = run("metrics", &["fixtures/replay-spike", "--format", "csv"]);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "window_start,window_end,keyed_requests,replays,replay_rate,conflicts,conflict_rate,spike"
    );
    assert_eq!(lines.clone().count(), 8);
    assert_eq!(lines.filter(|l| l.ends_with(",true")).count(), 1);
}

#[test]
fn conflicts_are_key_payload_mismatches_and_replays_include_a_200_for_a_completed_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("conflicts.log");
    std::fs::write(
        &path,
        "\
2026-11-03T09:00:00.000Z  agent run c1  step 1  tool=issue_refund  args={\"order\":\"X-1\",\"amount_p\":100}
2026-11-03T09:00:00.010Z  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=shared
2026-11-03T09:00:00.200Z  201 Created  refund_id=rf_X1
2026-11-03T09:00:01.000Z  agent run c2  step 1  tool=issue_refund  args={\"order\":\"X-2\",\"amount_p\":100}
2026-11-03T09:00:01.010Z  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=shared
2026-11-03T09:00:01.200Z  422 Unprocessable Entity
2026-11-03T09:00:02.000Z  agent run c3  step 1  tool=issue_refund  args={\"order\":\"X-1\",\"amount_p\":100}
2026-11-03T09:00:02.010Z  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=shared
2026-11-03T09:00:02.200Z  200 OK  refund_id=rf_X1
",
    )
    .unwrap();
    let (code, out) = run("metrics", &[path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, Some(0));
    let m: MetricsReport = serde_json::from_str(&out).unwrap();
    // c2 reused the key with another payload and was refused: one conflict. c3 got a 200 for
    // the key c1 completed: a replay, though not marked as one.
    assert_eq!(
        (
            m.totals.keyed_requests,
            m.totals.conflicts,
            m.totals.replays
        ),
        (3, 1, 1)
    );
    assert_eq!(m.windows.len(), 1);
    assert_eq!(m.windows[0].conflicts, 1);
}

#[test]
fn a_period_keeps_its_windows_judged_against_the_whole_input() {
    let (_, out) = run(
        "metrics",
        &[
            "fixtures/replay-spike",
            "--since",
            "2026-11-03T14:05:00Z",
            "--until",
            "2026-11-03T14:06:00Z",
            "--format",
            "json",
        ],
    );
    let m: MetricsReport = serde_json::from_str(&out).unwrap();
    assert_eq!(m.windows.len(), 1);
    assert!(
        m.windows[0].spike,
        "the median is that of every window, not of the period's one"
    );
    assert_eq!(m.findings.len(), 1);
    assert_eq!(m.totals.keyed_requests, m.windows[0].keyed_requests);
    let (_, out) = run(
        "metrics",
        &[
            "fixtures/replay-spike",
            "--until",
            "2026-11-03T14:05:00Z",
            "--format",
            "json",
        ],
    );
    let m: MetricsReport = serde_json::from_str(&out).unwrap();
    assert_eq!(m.windows.len(), 5);
    assert!(m.findings.is_empty());
}
