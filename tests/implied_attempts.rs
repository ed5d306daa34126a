//! An outcome logged with no request before it (the agent logs the client's exception, and
//! httpx logs nothing of a request that got no answer) implies the attempt; it was sent at
//! the earliest after the dispatch's latest line before it. Placed at its failure's time,
//! the incident's first refund, made during the ten seconds before the timeout, matched no
//! attempt and the incident read as two decisions (a warning, not an error).

mod common;
use common::report;

const AGENT: &str = "\
2026-11-03T14:02:11.402Z  agent run r1  step 4  tool=issue_refund  args={\"order\":\"A-1\",\"amount_p\":4500}
2026-11-03T14:02:21.420Z  httpx.ReadTimeout: The read operation timed out
2026-11-03T14:02:23.418Z  HTTP Request: POST https://payments.internal/v1/refunds \"HTTP/1.1 201 Created\"
2026-11-03T14:02:23.430Z  agent run r1  step 4  ok
";

fn causes(service: &str) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let (agent, payments) = (
        dir.path().join("agent.log"),
        dir.path().join("payments.log"),
    );
    std::fs::write(&agent, AGENT).unwrap();
    std::fs::write(&payments, service).unwrap();
    let r = report(&[&agent, &payments], &[]);
    (r.findings.iter())
        .filter(|f| f.rule.starts_with("duplicate-"))
        .map(|f| (f.rule.clone(), f.cause.clone().unwrap_or_default()))
        .collect()
}

#[test]
fn an_implied_attempt_is_placed_at_the_earliest_it_was_sent() {
    // Made during the first attempt's ten seconds, then by the retry.
    let both = "2026-11-03T14:02:12.000Z  refund rf_1  order A-1  4500p\n\
                2026-11-03T14:02:23.000Z  refund rf_2  order A-1  4500p\n";
    assert_eq!(
        causes(both),
        [("duplicate-effect".to_string(), "client-retry".to_string())]
    );
    // A refund of the order made before the tool call is no attempt's: the implied one
    // is never placed before the dispatch.
    let before = "2026-11-03T14:02:05.000Z  refund rf_0  order A-1  4500p\n\
                  2026-11-03T14:02:23.000Z  refund rf_2  order A-1  4500p\n";
    assert_eq!(
        causes(before),
        [("duplicate-decision".to_string(), String::new())]
    );
}

/// tenacity, retrying the tool's function, logs the exception it caught: the incident again.
#[test]
fn a_tenacity_retry_line_is_the_failure_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let (agent, payments) = (
        dir.path().join("agent.log"),
        dir.path().join("payments.log"),
    );
    let tenacity = AGENT.replace(
        "httpx.ReadTimeout: The read operation timed out",
        "WARNING agent.tools: Retrying agent.tools.issue_refund in 2.0 seconds as it raised \
         ReadTimeout: The read operation timed out.",
    );
    std::fs::write(&agent, tenacity).unwrap();
    std::fs::write(
        &payments,
        "2026-11-03T14:02:12.000Z  refund rf_1  order A-1  4500p\n\
         2026-11-03T14:02:23.000Z  refund rf_2  order A-1  4500p\n",
    )
    .unwrap();
    let r = report(&[&agent, &payments], &[]);
    let rules: Vec<&str> = r.findings.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(
        rules,
        ["duplicate-effect", "unkeyed-retry", "effect-after-timeout"]
    );
    // A tenacity line for a result, not an exception, is no failure.
    let returned = AGENT.replace(
        "httpx.ReadTimeout: The read operation timed out",
        "Retrying agent.tools.issue_refund in 2.0 seconds as it returned None.",
    );
    std::fs::write(&agent, returned).unwrap();
    let r = report(&[&agent, &payments], &[]);
    assert!(
        r.findings.iter().all(|f| f.rule != "unkeyed-retry"),
        "{:?}",
        r.findings
    );
}
