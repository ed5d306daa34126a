//! A service's own line saying it replayed an effect (`"msg": "idempotent replay"`,
//! `refund replayed  refund_id=rf_1`) settles which attempt made it when the client's log
//! names the effect in a retry's answer but not that the answer was a replay: the service
//! reserved the id, answered the retry from its record and logged the creation after both.
//! The fixture node-console-fetch-keyed was written by Node's fetch against an express
//! service (fixtures/node-pino-requests/make/make.sh).

mod common;
use common::{fixture, report};
use std::path::Path;

/// The rules that fired, with the effects each names, over the fixture's agent log and
/// `service` as its service log.
fn findings_with_service(service: &str) -> Vec<(String, Vec<String>)> {
    let dir = tempfile::tempdir().unwrap();
    let payments = dir.path().join("service.log");
    std::fs::write(&payments, service).unwrap();
    let agent = fixture("node-console-fetch-keyed/agent.log");
    findings(&[&agent, &payments])
}

fn findings(paths: &[&Path]) -> Vec<(String, Vec<String>)> {
    let r = report(paths, &["--strict"]);
    assert_eq!(r.summary.lines_skipped, 0);
    (r.findings.iter())
        .map(|f| (f.rule.clone(), f.effects.clone()))
        .collect()
}

fn fixture_service() -> String {
    std::fs::read_to_string(fixture("node-console-fetch-keyed/service.log")).unwrap()
}

fn after_timeout(refund: &str) -> Vec<(String, Vec<String>)> {
    vec![("effect-after-timeout".into(), vec![refund.into()])]
}

#[test]
fn a_logged_replay_gives_the_refund_to_the_attempt_that_timed_out() {
    let service = fixture_service();
    let refund = service
        .split("\"refundId\":\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap()
        .to_string();
    assert_eq!(findings_with_service(&service), after_timeout(&refund));
}

#[test]
fn without_the_replay_line_the_answer_naming_the_refund_made_it() {
    let service: String = (fixture_service().lines())
        .filter(|l| !l.contains("idempotent replay"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(findings_with_service(&service), []);
}

#[test]
fn a_replay_of_another_refund_or_under_another_key_changes_nothing() {
    let service = fixture_service();
    let replay = service
        .lines()
        .find(|l| l.contains("idempotent replay"))
        .unwrap();
    let other_refund = replay.replacen("\"refundId\":\"re_", "\"refundId\":\"re_other", 1);
    let other_key = replay.replacen("\"idempotencyKey\":\"", "\"idempotencyKey\":\"other-", 1);
    for changed in [other_refund, other_key] {
        assert_ne!(changed, replay);
        let service = service.replacen(replay, &changed, 1);
        assert_eq!(findings_with_service(&service), [], "{changed}");
    }
}

/// The same story in SPEC's text trace, the service's replay line in its token spellings.
#[test]
fn text_logs_replay_lines_are_read_in_either_spacing() {
    let agent = "\
2026-11-03T14:02:11.402Z  agent run r1  step 4  tool=issue_refund  args={\"order\":\"A-1\",\"amount_p\":4500}
2026-11-03T14:02:11.410Z  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=k1
2026-11-03T14:02:21.420Z  urllib3.exceptions.ReadTimeoutError: read timeout=10
2026-11-03T14:02:22.000Z  POST https://payments.internal/v1/refunds  (attempt 2)  idempotency_key=k1
2026-11-03T14:02:22.100Z  200 OK  refund_id=rf_1
2026-11-03T14:02:22.110Z  agent run r1  step 4  ok
";
    let created = "2026-11-03T14:02:23.000Z  refund rf_1  order A-1  4500p  key=k1\n";
    let dir = tempfile::tempdir().unwrap();
    let (agent_path, payments) = (
        dir.path().join("agent.log"),
        dir.path().join("payments.log"),
    );
    std::fs::write(&agent_path, agent).unwrap();
    let run = |service: &str| {
        std::fs::write(&payments, service).unwrap();
        findings(&[&agent_path, &payments])
    };
    for replay in [
        "2026-11-03T14:02:22.050Z  idempotent replay  refund_id=rf_1  key=k1\n",
        "2026-11-03T14:02:22.050Z  INFO payments: refund replayed refund_id=rf_1 idempotency_key=k1\n",
    ] {
        assert_eq!(
            run(&format!("{replay}{created}")),
            after_timeout("rf_1"),
            "{replay}"
        );
    }
    // Without the replay line, the answer naming the refund made it.
    assert_eq!(run(created), []);
}

/// The order's timeline shows the service's replay between the retry and its answer.
#[test]
fn the_timeline_shows_the_services_replay() {
    let out = assert_cmd::Command::cargo_bin("idem-audit")
        .unwrap()
        .args(["timeline", "--order", "A-1"])
        .arg(fixture("node-console-fetch-keyed"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |needle: &str| {
        (text.lines())
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no `{needle}` in\n{text}"))
    };
    let (retry, replay, answer) = (
        line("attempt 2  POST"),
        line(" replayed  key "),
        line("attempt 2 response 200"),
    );
    assert!(retry < replay && replay < answer, "{text}");
}

/// The replay rate counts an answer the service logged as a replay, though the client's
/// line does not say so.
#[test]
fn the_replay_rate_counts_the_services_replays() {
    let replays = |service: &str| -> u64 {
        let dir = tempfile::tempdir().unwrap();
        let payments = dir.path().join("service.log");
        std::fs::write(&payments, service).unwrap();
        let out = assert_cmd::Command::cargo_bin("idem-audit")
            .unwrap()
            .args(["metrics", "--format", "json"])
            .arg(fixture("node-console-fetch-keyed/agent.log"))
            .arg(&payments)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["totals"]["replays"].as_u64().unwrap()
    };
    let service = fixture_service();
    let without: String = (service.lines())
        .filter(|l| !l.contains("idempotent replay"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!((replays(&service), replays(&without)), (1, 0));
}
