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

/// `text` without its lines that contain `needle`.
fn without(text: &str, needle: &str) -> String {
    (text.lines())
        .filter(|l| !l.contains(needle))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The string value of `"name":"..."` in a JSON line.
fn json_str<'a>(line: &'a str, name: &str) -> &'a str {
    (line.split(&format!("\"{name}\":\"")).nth(1))
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("no {name} in {line}"))
}

/// `idem-audit metrics --format json PATHS`: the whole input's keyed requests and replays.
fn metrics_totals(paths: &[&Path]) -> (u64, u64) {
    let out = assert_cmd::Command::cargo_bin("idem-audit")
        .unwrap()
        .args(["metrics", "--format", "json"])
        .args(paths)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["totals"];
    (
        t["keyed_requests"].as_u64().unwrap(),
        t["replays"].as_u64().unwrap(),
    )
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
    let refund = json_str(&service, "refundId");
    assert_eq!(findings_with_service(&service), after_timeout(refund));
}

#[test]
fn without_the_replay_line_the_answer_naming_the_refund_made_it() {
    let service = without(&fixture_service(), "idempotent replay");
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
        metrics_totals(&[&fixture("node-console-fetch-keyed/agent.log"), &payments]).1
    };
    let service = fixture_service();
    let unlogged = without(&service, "idempotent replay");
    assert_eq!((replays(&service), replays(&unlogged)), (1, 0));
}

/// A replay is given to one answer only, never to the answer that made the effect (the
/// first request with its key), nor to an answer that arrived well before it was logged
/// (another run's request, whose log is not among the inputs).
#[test]
fn a_replay_is_no_answer_that_made_the_effect_or_came_before_it() {
    let agent = "\
2026-12-06T02:11:31.794Z  agent run 3c9d  step 2  tool=issue_refund  args={\"order\":\"A-5120\",\"amount_p\":4500}
2026-12-06T02:11:31.794Z  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=k1
2026-12-06T02:11:32.806Z  httpx.ReadTimeout: The read operation timed out
2026-12-06T02:11:32.807Z  POST https://payments.internal/v1/refunds  (attempt 2)  idempotency_key=k1
2026-12-06T02:11:32.861Z  201 Created  refund_id=rf_1
2026-12-06T02:11:32.861Z  agent run 3c9d  step 2  ok
2026-12-06T02:11:40.500Z  agent run 3c9d  step 3  tool=issue_refund  args={\"order\":\"A-5120\",\"amount_p\":4500}
2026-12-06T02:11:40.500Z  POST https://payments.internal/v1/refunds  (attempt 1)  idempotency_key=k1
2026-12-06T02:11:40.530Z  200 OK  refund_id=rf_1
2026-12-06T02:11:40.530Z  agent run 3c9d  step 3  ok
";
    let created = "{\"time\":\"2026-12-06T02:11:32.812Z\",\"refundId\":\"rf_1\",\"orderId\":\"A-5120\",\"amount\":4500,\"currency\":\"GBP\",\"idempotencyKey\":\"k1\",\"msg\":\"refund created\"}\n";
    let replay = |at: &str| {
        format!(
            "{{\"time\":\"{at}\",\"refundId\":\"rf_1\",\"idempotencyKey\":\"k1\",\"msg\":\"idempotent replay\"}}\n"
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let (agent_path, payments) = (
        dir.path().join("agent.log"),
        dir.path().join("payments.log"),
    );
    std::fs::write(&agent_path, agent).unwrap();
    let replays = |service: &str| -> (Vec<(String, Vec<String>)>, u64) {
        std::fs::write(&payments, service).unwrap();
        let replays = metrics_totals(&[&agent_path, &payments]).1;
        (findings(&[&agent_path, &payments]), replays)
    };
    // Step 3's request, 8 s later, answered from the record: its answer is the replay; the
    // refund stays step 2's second attempt's, which was answered 201 (no effect-after-timeout).
    let step_3 = replay("2026-12-06T02:11:40.510Z");
    assert_eq!(replays(&format!("{created}{step_3}")), (vec![], 1));
    // Another run's replay 0.66 s after step 2's 201, that run's log missing: not step 2's.
    let other = replay("2026-12-06T02:11:33.520Z");
    assert_eq!(replays(&format!("{created}{other}")).0, []);
    // Logged while step 2's second attempt was in flight: that answer was a replay (and step
    // 3's 200 for a completed key is one too), the refund the first attempt's, made after
    // the client gave up on it.
    let in_flight = replay("2026-12-06T02:11:32.850Z");
    assert_eq!(
        replays(&format!("{created}{in_flight}")),
        (after_timeout("rf_1"), 2)
    );
}

/// With the service's log alone (no client trace with a keyed request), the replay rate is
/// the service's: each effect made under a key and each replay logged is a keyed request,
/// each replay a replay.
#[test]
fn a_service_log_alone_gives_the_services_replay_rate() {
    let totals = |service: &str| -> (u64, u64) {
        let dir = tempfile::tempdir().unwrap();
        let payments = dir.path().join("service.log");
        std::fs::write(&payments, service).unwrap();
        metrics_totals(&[&payments])
    };
    let service = fixture_service();
    let unlogged = without(&service, "idempotent replay");
    assert_eq!((totals(&service), totals(&unlogged)), ((2, 1), (1, 0)));
    // A service that logs keys with its replays only: its replays would be every keyed
    // request it shows, so it shows none.
    let unkeyed = service.replace(",\"idempotencyKey\"", ",\"requestKey\"");
    let replay_by_key = "{\"time\":1796561185709,\"msg\":\"idempotent replay for key k1\"}\n";
    assert_eq!(
        totals(&format!("{}{replay_by_key}", without(&unkeyed, "replay"))),
        (0, 0)
    );
}

/// The service's replays alone can make a replay-rate spike, cited by their lines.
#[test]
fn a_service_logs_replays_alone_can_make_a_spike() {
    let mut log = String::new();
    let mut line = 0;
    let mut refund = |log: &mut String, minute: u32, second: u32| {
        line += 1;
        log.push_str(&format!(
            "{{\"time\":\"2026-11-03T14:{minute:02}:{second:02}.000Z\",\"refundId\":\"re_{line}\",\"orderId\":\"A-{line}\",\"amount\":4500,\"currency\":\"GBP\",\"idempotencyKey\":\"k{line}\",\"msg\":\"refund created\"}}\n"
        ));
        line
    };
    let mut replayed = Vec::new();
    for minute in 0..6 {
        for second in 0..30 {
            let n = refund(&mut log, minute, second);
            if minute == 4 && second < 10 {
                replayed.push(n);
                log.push_str(&format!(
                    "{{\"time\":\"2026-11-03T14:{minute:02}:{second:02}.500Z\",\"refundId\":\"re_{n}\",\"idempotencyKey\":\"k{n}\",\"msg\":\"idempotent replay\"}}\n"
                ));
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let payments = dir.path().join("payments.log");
    std::fs::write(&payments, &log).unwrap();
    let r = report(&[&payments], &[]);
    let spikes: Vec<_> = (r.findings.iter())
        .filter(|f| f.rule == "replay-rate-spike")
        .collect();
    assert_eq!(spikes.len(), 1, "{:?}", r.findings);
    assert!(
        spikes[0].message.contains("10 of 40 keyed requests"),
        "{}",
        spikes[0].message
    );
    assert_eq!(spikes[0].evidence.len(), 10);
    // Without the replays, no spike.
    let quiet = without(&log, "idempotent replay");
    std::fs::write(&payments, quiet).unwrap();
    let r = report(&[&payments], &[]);
    assert!(r.findings.iter().all(|f| f.rule != "replay-rate-spike"));
}

/// A replay that names the key alone (a Java service's `Idempotency key K seen before,
/// replaying stored response`) is given to the answer sent with that key, the same way.
#[test]
fn a_replay_naming_only_its_key_is_given_to_the_answer_of_that_key() {
    let service = fixture_service();
    let replay = service
        .lines()
        .find(|l| l.contains("idempotent replay"))
        .unwrap();
    let key = json_str(replay, "idempotencyKey");
    let time = replay
        .split("\"time\":")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .unwrap();
    let by_key = format!(
        "{{\"time\":{time},\"msg\":\"Idempotency key {key} seen before, replaying stored response\"}}"
    );
    let refund = json_str(&service, "refundId");
    let service = service.replacen(replay, &by_key, 1);
    assert_eq!(findings_with_service(&service), after_timeout(refund));
    // Another key's replay: the refund stays the answer's.
    let other = service.replacen(key, "0000", 1);
    assert!(other.contains("Idempotency key 0000 seen"));
    assert_eq!(findings_with_service(&other), []);
}
