//! A retry library's line (backoff's `Backing off ... for 0.2s`, tenacity's `Retrying ...
//! in 2.0 seconds`, stamina's `stamina.retry_scheduled`) says the function it wraps is
//! called again. Where the HTTP client logs no request (aiohttp's), that request sent
//! again is in no line of its own: it is implied, after the wait, so that a second refund
//! is the client's retry rather than a gateway's replay of one attempt. Where the client
//! logs it (httpx's line for the answered retry), nothing more is implied; nor after
//! backoff's `Giving up`, after which nothing is sent.

mod common;
use common::report;
use idem_audit::report::Report;

const CALL: &str = "2026-12-07 14:22:58,372 INFO agent: tool call run_id=r1 step=1 tool=issue_refund args={\"order_id\": \"A-1\", \"amount_p\": 4500}\n";
const TWO_REFUNDS: &str = "\
2026-12-07 14:22:58,379 INFO payments: refund created refund_id=re_1 order_id=A-1 amount_minor=4500 currency=GBP\n\
2026-12-07 14:22:59,581 INFO payments: refund created refund_id=re_2 order_id=A-1 amount_minor=4500 currency=GBP\n";

fn scan(agent_lines: &str, service: &str) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let (agent, payments) = (dir.path().join("agent.log"), dir.path().join("service.log"));
    std::fs::write(&agent, format!("{CALL}{agent_lines}")).unwrap();
    std::fs::write(&payments, service).unwrap();
    report(&[&agent, &payments], &[])
}

fn rules_and_causes(r: &Report) -> Vec<(String, String)> {
    (r.findings.iter())
        .map(|f| (f.rule.clone(), f.cause.clone().unwrap_or_default()))
        .collect()
}

fn owned(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn a_request_sent_again_in_no_line_is_implied() {
    let backoff = "\
2026-12-07 14:22:59,375 INFO backoff: Backing off post_refund(...) for 0.2s (TimeoutError)\n\
2026-12-07 14:22:59,583 INFO agent: tool result run_id=r1 step=1 tool=issue_refund status=ok refund_id=re_2\n";
    let r = scan(backoff, TWO_REFUNDS);
    assert_eq!(
        rules_and_causes(&r),
        owned(&[
            ("duplicate-effect", "client-retry"),
            ("unkeyed-retry", ""),
            ("effect-after-timeout", "")
        ])
    );
    assert!(r.findings[0].message.contains("attempt 2 refunded again"));
    // The same with stamina, whose line names neither the exception nor the wait.
    let stamina = backoff.replace(
        "INFO backoff: Backing off post_refund(...) for 0.2s (TimeoutError)",
        "WARNING stamina: stamina.retry_scheduled",
    );
    let r = scan(&stamina, TWO_REFUNDS);
    assert_eq!(
        rules_and_causes(&r)[0],
        owned(&[("duplicate-effect", "client-retry")])[0]
    );
}

#[test]
fn after_giving_up_nothing_is_sent_again() {
    let given_up = "\
2026-12-07 14:22:59,375 ERROR backoff: Giving up post_refund(...) after 1 tries (TimeoutError)\n\
2026-12-07 14:22:59,583 ERROR agent: tool issue_refund failed (run_id=r1 step=1)\n";
    let r = scan(given_up, TWO_REFUNDS);
    // One request as far as any line says: the second refund is no retry of the client's.
    let causes = rules_and_causes(&r);
    assert!(
        !causes.contains(&("duplicate-effect".into(), "client-retry".into())),
        "{causes:?}"
    );
    assert!(
        !causes.iter().any(|(rule, _)| rule == "unkeyed-retry"),
        "{causes:?}"
    );
}

#[test]
fn a_request_the_client_logs_is_not_implied_again() {
    let httpx = "\
2026-12-07 14:22:59,375 INFO backoff: Backing off post_refund(...) for 0.2s (httpx.ReadTimeout: timed out)\n\
2026-12-07 14:22:59,583 INFO httpx: HTTP Request: POST http://pay/v1/refunds \"HTTP/1.1 201 Created\"\n\
2026-12-07 14:22:59,583 INFO agent: tool result run_id=r1 step=1 tool=issue_refund status=ok refund_id=re_2\n";
    let r = scan(httpx, TWO_REFUNDS);
    let dup = common::duplicate(&r);
    assert!(
        dup.message.contains("attempt 2 refunded again"),
        "{}",
        dup.message
    );
    assert!(!dup.message.contains("attempt 3"), "{}", dup.message);
}

#[test]
fn a_request_sent_again_and_replayed_makes_no_duplicate() {
    let backoff = "\
2026-12-07 14:22:59,375 INFO backoff: Backing off post_refund(...) for 0.2s (TimeoutError)\n\
2026-12-07 14:22:59,583 INFO agent: tool result run_id=r1 step=1 tool=issue_refund status=ok refund_id=re_1\n";
    let replayed = "\
2026-12-07 14:22:58,379 INFO payments: refund created refund_id=re_1 order_id=A-1 amount_minor=4500 currency=GBP idempotency_key=k1\n\
2026-12-07 14:22:59,581 INFO payments: idempotent replay refund_id=re_1 idempotency_key=k1\n";
    let r = scan(backoff, replayed);
    assert_eq!(rules_and_causes(&r), owned(&[("effect-after-timeout", "")]));
}
