//! Rust agents that retry a refund's request: backon's `notify` hook logging its README's
//! words (`retrying {err:?} after {dur:?}`) around a request the program logs once, before
//! the closure backon calls again. The retry line is a retry library's: the failure of the
//! request logged, which is sent again after the wait, the answer then the resend's. A
//! keyed resend the service replays names the refund the first try made: that try made it,
//! the service logged it with that try's key, though no line shows the resend's key.

mod common;
use common::report;
use idem_audit::report::Report;

/// tracing-subscriber's default layout (no colour codes), at `t` past 16:36, in the tool's
/// span when `target` is the tool's.
fn traced(t: &str, level: &str, target: &str, msg: &str) -> String {
    let span = match target {
        "agent" => "",
        _ => r#"issue_refund{run="7f3a" step=4 keyed=true}: "#,
    };
    format!("2026-12-07T16:{t}Z {level} {span}{target}: {msg}\n")
}

const URL: &str = "http://127.0.0.1:18982/v1/refunds";

fn agent(key: Option<&str>, answer: &str) -> String {
    let request = match key {
        Some(k) => format!("POST url={URL} idempotency_key={k}"),
        None => format!("POST url={URL}"),
    };
    let retry = format!(
        r#"retrying reqwest::Error {{ kind: Request, url: "{URL}", source: TimedOut }} after 100ms"#
    );
    [
        traced("36:37.074", " INFO", "agent", r#"tool call run_id=7f3a step=4 tool="issue_refund" args={"amount_minor":4500,"currency":"GBP","order":"A-88214"}"#),
        traced("36:37.074724", " INFO", "agent::tools", &request),
        traced("36:37.376749", " WARN", "agent::tools", &retry),
        traced("36:37.480128", " INFO", "agent::tools", answer),
    ]
    .concat()
}

fn service_line(t: &str, msg: &str) -> String {
    format!("2026-12-07T16:{t}Z  INFO payments: {msg}\n")
}

fn scan(agent_log: &str, service: &str) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let (a, s) = (
        dir.path().join("agent.log"),
        dir.path().join("payments.log"),
    );
    std::fs::write(&a, agent_log).unwrap();
    std::fs::write(&s, service).unwrap();
    report(&[&a, &s], &["--strict"])
}

fn rules(r: &Report) -> Vec<String> {
    r.findings.iter().map(|f| f.rule.clone()).collect()
}

#[test]
fn backons_retry_line_is_the_logged_requests_failure_and_resend() {
    let service = [
        service_line("36:37.076", "refund created refund_id=re_1 order_id=A-88214 amount_minor=4500 currency=GBP idempotency_key=None"),
        service_line("36:37.479", "refund created refund_id=re_2 order_id=A-88214 amount_minor=4500 currency=GBP idempotency_key=None"),
    ]
    .concat();
    let r = scan(
        &agent(None, "refund response status=201 Created refund_id=re_2"),
        &service,
    );
    assert_eq!(
        rules(&r),
        ["duplicate-effect", "unkeyed-retry", "effect-after-timeout"]
    );
    let dup = &r.findings[0];
    assert_eq!(dup.cause.as_deref(), Some("client-retry"));
    assert!(
        dup.message.contains("attempt 2 refunded again"),
        "{}",
        dup.message
    );
}

#[test]
fn a_replay_names_the_refund_the_try_sent_with_its_key_made() {
    let service = |key: &str| {
        [
            service_line("36:37.076", &format!("refund created refund_id=re_1 order_id=A-88214 amount_minor=4500 currency=GBP idempotency_key={key}")),
            service_line("36:37.479", &format!("idempotent replay refund_id=re_1 idempotency_key={key}")),
        ]
        .concat()
    };
    let agent_log = agent(Some("k-1"), "refund response status=200 OK refund_id=re_1");
    // The first try's key: it made the refund, which landed after its timeout.
    let r = scan(&agent_log, &service("k-1"));
    assert_eq!(rules(&r), ["effect-after-timeout"]);
    // Another key (the resend minted one, and another request made the refund before):
    // the first try made nothing the lines show.
    let r = scan(&agent_log, &service("k-2"));
    assert!(
        !rules(&r).contains(&"effect-after-timeout".to_string()),
        "{:?}",
        rules(&r)
    );
    assert!(!rules(&r).contains(&"duplicate-effect".to_string()));
}
