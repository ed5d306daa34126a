//! `--max-skew` (SPEC §3.6: client and server clocks differ, and the skew widens every time
//! window used for matching) in the matchers beyond correlation's own (which
//! `tests/formats.rs` covers): untraced effects grouped as one delivery (SPEC §4.6), effects
//! on both sides of a resume, and the client span that bounds `unattributed-effect`.

use idem_audit::report::{FindingReport, Report};
use std::path::Path;

mod common;
use common::scan;

fn report(path: &Path, skew: &str) -> Report {
    let (code, stdout, stderr) = scan(&[
        path.to_str().unwrap(),
        "--format",
        "json",
        "--max-skew",
        skew,
    ]);
    assert!(matches!(code, Some(0 | 1)), "exit {code:?}: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn of<'r>(r: &'r Report, rule: &str) -> Vec<&'r FindingReport> {
    r.findings.iter().filter(|f| f.rule == rule).collect()
}

/// Two refunds of one order and amount 6 s apart that no client trace covers: one delivery
/// when 6 s is within `--max-skew` plus 5 s, two decisions when it is not (SPEC §4.6).
#[test]
fn untraced_refunds_six_seconds_apart_are_one_delivery_only_within_the_skew() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("refunds.csv");
    std::fs::write(
        &export,
        "id,order_id,amount,currency,created,status\n\
         rf_1,A-1,45.00,GBP,2026-11-03T14:02:11Z,succeeded\n\
         rf_2,A-1,45.00,GBP,2026-11-03T14:02:17Z,succeeded\n",
    )
    .unwrap();
    for skew in ["2s", "1s"] {
        let r = report(&export, skew);
        let dups = of(&r, "duplicate-effect");
        assert_eq!(dups.len(), 1, "{skew}: {:#?}", r.findings);
        assert_eq!(dups[0].effects, ["rf_1", "rf_2"]);
        assert_eq!(dups[0].cause.as_deref(), Some("unknown"));
        assert_eq!(dups[0].excess_minor, Some(4500));
        assert!(of(&r, "duplicate-decision").is_empty(), "{skew}");
    }
    assert!(
        of(&report(&export, "2s"), "duplicate-effect")[0]
            .message
            .contains("within 7.0 s of each other"),
    );
    let r = report(&export, "0s");
    assert!(of(&r, "duplicate-effect").is_empty(), "{:#?}", r.findings);
    let decisions = of(&r, "duplicate-decision");
    assert_eq!(decisions.len(), 1, "{:#?}", r.findings);
    assert_eq!(decisions[0].effects, ["rf_1", "rf_2"]);
    assert_eq!(r.summary.excess.len(), 0);
}

/// The service's clock runs 1.6 s behind the agent's: the refund made after the resume is
/// stamped 0.5 s before it. Within the skew, the effects straddle the resume.
#[test]
fn a_resume_within_the_skew_of_an_effect_is_between_the_effects() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.jsonl");
    let call = r#""run":"r","step":4"#;
    let tool = r#""tool":"issue_refund","args":{"order":"A-1","amount_p":4500}"#;
    let attempt = r#""attempt":1,"method":"POST","url":"https://payments.internal/v1/refunds","idempotency_key":"k""#;
    let effect = r#""type":"effect","kind":"refund","order":"A-1","amount_minor":4500,"currency":"GBP","idempotency_key":"k""#;
    std::fs::write(
        &log,
        [
            format!(r#"{{"ts":"2026-11-03T09:00:00Z","type":"tool_call",{call},{tool}}}"#),
            format!(r#"{{"ts":"2026-11-03T09:00:00.010Z","type":"attempt",{call},{attempt}}}"#),
            format!(r#"{{"ts":"2026-11-03T09:00:00.100Z","effect_id":"rf_1",{effect}}}"#),
            r#"{"ts":"2026-11-03T09:00:00.500Z","type":"run","run":"r","event":"crashed"}"#.into(),
            r#"{"ts":"2026-11-03T09:01:00Z","type":"run","run":"r","event":"resumed"}"#.into(),
            format!(r#"{{"ts":"2026-11-03T09:01:00.100Z","type":"tool_call",{call},{tool}}}"#),
            format!(r#"{{"ts":"2026-11-03T09:01:00.110Z","type":"attempt",{call},{attempt}}}"#),
            format!(r#"{{"ts":"2026-11-03T09:00:59.500Z","effect_id":"rf_2",{effect}}}"#),
            format!(r#"{{"ts":"2026-11-03T09:01:02Z","type":"step_end",{call},"status":"ok"}}"#),
        ]
        .join("\n"),
    )
    .unwrap();
    let cause = |skew: &str| {
        let r = report(&log, skew);
        let dups = of(&r, "duplicate-effect");
        assert_eq!(dups.len(), 1, "{skew}: {:#?}", r.findings);
        assert_eq!(dups[0].effects, ["rf_1", "rf_2"]);
        dups[0].cause.clone().unwrap()
    };
    assert_eq!(cause("2s"), "resume");
    assert_eq!(cause("1s"), "resume");
    // Taken at their word, both clocks put both refunds before the resume.
    assert_eq!(cause("0s"), "gateway-retry");
}

/// An untraced refund 1.5 s before the first client event is inside the client span
/// widened by a 2 s skew, and outside it with none.
#[test]
fn the_client_span_of_unattributed_effect_is_widened_by_the_skew() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.jsonl");
    std::fs::write(
        &log,
        [
            r#"{"ts":"2026-11-03T09:00:00Z","type":"effect","effect_id":"rf_X","kind":"refund","order":"B-7","amount_minor":900,"currency":"GBP"}"#,
            r#"{"ts":"2026-11-03T09:00:01.500Z","type":"tool_call","run":"r","step":1,"tool":"issue_refund","args":{"order":"A-1","amount_p":4500}}"#,
            r#"{"ts":"2026-11-03T09:00:01.510Z","type":"attempt","run":"r","step":1,"attempt":1,"method":"POST","url":"https://payments.internal/v1/refunds","idempotency_key":"k"}"#,
            r#"{"ts":"2026-11-03T09:00:01.700Z","type":"response","run":"r","step":1,"attempt":1,"status":201,"effect_id":"rf_A"}"#,
            r#"{"ts":"2026-11-03T09:00:01.600Z","type":"effect","effect_id":"rf_A","kind":"refund","order":"A-1","amount_minor":4500,"currency":"GBP","idempotency_key":"k"}"#,
            r#"{"ts":"2026-11-03T09:00:01.710Z","type":"step_end","run":"r","step":1,"status":"ok"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let unattributed = |skew: &str| -> Vec<Vec<String>> {
        of(&report(&log, skew), "unattributed-effect")
            .iter()
            .map(|f| f.effects.clone())
            .collect()
    };
    assert_eq!(unattributed("2s"), [["rf_X"]]);
    assert_eq!(unattributed("0s"), Vec::<Vec<String>>::new());
}

/// The agent's clock 3 s ahead of the service's: the refund named in attempt 2's answer
/// was created 1.8 s before attempt 2 was sent, which only skew explains. The scan says
/// so and what `--max-skew` would cover it; given that, the incident is a delivery
/// duplicate again. Clocks in step (the incident) give no such warning.
#[test]
fn an_effect_created_before_its_attempt_warns_of_the_clocks() {
    let dir = tempfile::tempdir().unwrap();
    let (agent, service) = (dir.path().join("agent.log"), dir.path().join("service.log"));
    std::fs::write(
        &agent,
        "# date: 2026-11-03\n\
         14:02:14.402  agent run 7f3a  step 4  tool=issue_refund  args={\"order\":\"A-88214\",\"amount_p\":4500}\n\
         14:02:14.418  POST https://payments.internal/v1/refunds  (attempt 1)\n\
         14:02:24.418  urllib3.exceptions.ReadTimeoutError: read timeout=10\n\
         14:02:24.930  POST https://payments.internal/v1/refunds  (attempt 2)\n\
         14:02:26.107  201 Created  refund_id=rf_9KQ2  amount_p=4500\n\
         14:02:26.109  agent run 7f3a  step 4  ok\n",
    )
    .unwrap();
    std::fs::write(
        &service,
        "# date: 2026-11-03\n\
         14:02:11.501  refund rf_8XM1  order A-88214  4500p  settled 14:02:22.884\n\
         14:02:23.088  refund rf_9KQ2  order A-88214  4500p  settled 14:02:34.010\n",
    )
    .unwrap();
    let paths = [agent.to_str().unwrap(), service.to_str().unwrap()];
    let (_, _, stderr) = scan(&paths);
    assert!(
        stderr.contains("refund rf_9KQ2 was created 1.8 s before")
            && stderr.contains("--max-skew 4s"),
        "{stderr}"
    );
    let (_, _, stderr) = scan(&[paths[0], paths[1], "--max-skew", "4s"]);
    assert!(!stderr.contains("clock"), "{stderr}");
    let r = report(dir.path(), "4s");
    assert_eq!(of(&r, "duplicate-effect").len(), 1);
    let incident = common::fixture("incident-a88214");
    let (_, _, stderr) = scan(&[incident.to_str().unwrap()]);
    assert!(!stderr.contains("clock"), "{stderr}");
}

/// Two calls sharing one key (a run's id as the key: another defect) each answered with
/// their own refund: the second call's refund, logged a little before its request by a
/// clock behind, is not the first call's for sharing its key.
#[test]
fn a_key_shared_by_two_calls_moves_no_refund_between_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("agent.log"),
        "2026-11-03T14:00:00.000Z  agent run 7f3a  step 4  tool=issue_refund  args={\"order\":\"A-1\",\"amount_p\":4500}\n\
         2026-11-03T14:00:00.100Z  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=run-7f3a\n\
         2026-11-03T14:00:00.600Z  201 Created  refund_id=rf_A\n\
         2026-11-03T14:00:00.601Z  agent run 7f3a  step 4  ok\n\
         2026-11-03T14:05:00.000Z  agent run 7f3a  step 5  tool=issue_refund  args={\"order\":\"B-2\",\"amount_p\":4500}\n\
         2026-11-03T14:05:00.100Z  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=run-7f3a\n\
         2026-11-03T14:05:00.600Z  201 Created  refund_id=rf_B\n\
         2026-11-03T14:05:00.601Z  agent run 7f3a  step 5  ok\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("service.log"),
        "2026-11-03T14:00:00.050Z  refund rf_A  order A-1  4500p  settled  key=run-7f3a\n\
         2026-11-03T14:05:00.050Z  refund rf_B  order B-2  4500p  settled  key=run-7f3a\n",
    )
    .unwrap();
    let r = report(dir.path(), "2s");
    assert!(of(&r, "duplicate-effect").is_empty(), "{:#?}", r.findings);
}

/// A keyed retry answered 200 from the service's record names a refund made before it was
/// sent: the first attempt under that key made it, and no clock is out of step.
#[test]
fn a_keyed_replay_naming_an_earlier_refund_is_no_clock_skew() {
    let replay = common::fixture("client-log-keyed-replay");
    let (_, _, stderr) = scan(&[replay.to_str().unwrap()]);
    assert!(!stderr.contains("clock"), "{stderr}");
    let r = report(&replay, "1s");
    let after = of(&r, "effect-after-timeout");
    assert_eq!(after.len(), 1, "{:#?}", r.findings);
    assert!(
        after[0].message.contains("attempt 1"),
        "{}",
        after[0].message
    );
}
