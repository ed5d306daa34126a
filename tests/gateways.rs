//! A real gateway in the path (fixtures written by `fixtures/gateways-make/make.sh`: nginx
//! and HAProxy before two replicas). A gateway's own logs given beside the agent's and the
//! service's change no finding's money, cause or effects: its access lines are no client
//! attempt and no effect; the lines showing the request sent again (nginx's upstream list,
//! HAProxy's retry count) or given up on (nginx's `upstream timed out`) are cited as a
//! `gateway-retry`'s evidence, where they name the duplicate's one request.

mod common;
use common::{duplicate, fixture, report};
use idem_audit::report::{FindingReport, Report};
use std::path::{Path, PathBuf};

fn scan_files(dir: &str, files: &[&str]) -> Report {
    let paths: Vec<PathBuf> = files.iter().map(|f| fixture(dir).join(f)).collect();
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    report(&refs, &["--strict"])
}

/// What a finding says of the money and the call: all but its message and evidence.
fn money(f: &FindingReport) -> String {
    format!(
        "{} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
        f.rule, f.cause, f.order, f.run, f.step, f.effects, f.currency, f.excess_minor, f.key
    )
}

/// The evidence's `file:line`s, the file's name alone.
fn cited(f: &FindingReport) -> Vec<String> {
    (f.evidence.iter())
        .map(|e| {
            let name = Path::new(&e.path).file_name().unwrap().to_string_lossy();
            format!("{name}:{}", e.line)
        })
        .collect()
}

const SERVICE_SIDE: [&str; 3] = ["agent.log", "payments-a.log", "payments-b.log"];

#[test]
fn nginx_logs_beside_the_trace_cite_the_retry_and_change_no_money() {
    let alone = scan_files("gateway-nginx-retry-logs", &SERVICE_SIDE);
    let all = report(&[&fixture("gateway-nginx-retry-logs")], &["--strict"]);
    let (a, b) = (duplicate(&alone), duplicate(&all));
    assert_eq!(money(a), money(b));
    assert_eq!(alone.findings.len(), all.findings.len());
    assert_eq!(b.cause.as_deref(), Some("gateway-retry"));
    // The upstream lists (text and JSON) and the error line are cited; the `combined` line
    // shows nothing.
    let cited = cited(b);
    for line in ["upstream.log:1", "access-json.log:1", "error.log:1"] {
        assert!(cited.contains(&line.to_string()), "{cited:?}");
    }
    assert!(
        !cited.iter().any(|c| c.starts_with("access.log")),
        "{cited:?}"
    );
    assert!(
        b.message.contains("a gateway sent it again")
            && b.message
                .contains("127.0.0.2:5201 (504), then to 127.0.0.3:5201 (201)")
            && b.message.contains("upstream timed out")
            && b.message.matches("then to").count() == 1,
        "{}",
        b.message
    );
    // The agent's one attempt is still one: the gateway's lines are no attempts.
    assert!(
        b.message.contains("the client sent one attempt"),
        "{}",
        b.message
    );
    assert!(
        !a.message.contains("a gateway sent it again"),
        "{}",
        a.message
    );
}

#[test]
fn haproxy_logs_beside_the_trace_cite_the_retry_and_change_no_money() {
    let dir = "gateway-haproxy-retry";
    let alone = scan_files(dir, &SERVICE_SIDE);
    let all = report(&[&fixture(dir)], &["--strict"]);
    let (a, b) = (duplicate(&alone), duplicate(&all));
    assert_eq!(money(a), money(b));
    let cited = cited(b);
    for line in ["haproxy.log:1", "haproxy-syslog.log:1"] {
        assert!(cited.contains(&line.to_string()), "{cited:?}");
    }
    // Both files say the same: said once.
    assert_eq!(
        b.message.matches("HAProxy's retries").count(),
        1,
        "{}",
        b.message
    );
    // Each HAProxy log alone is read as a log (before, the stdout one was passed over).
    for log in ["haproxy.log", "haproxy-syslog.log"] {
        let one = scan_files(
            dir,
            &[SERVICE_SIDE[0], SERVICE_SIDE[1], SERVICE_SIDE[2], log],
        );
        let input = one.inputs.iter().find(|i| i.path.ends_with(log)).unwrap();
        assert_eq!((input.events, input.skipped), (1, 0), "{log}");
        assert_eq!(money(duplicate(&one)), money(a));
    }
}

/// Copies the fixture's files into a folder, `upstream.log` replaced by `upstream`.
fn with_upstream_log(upstream: &str) -> (tempfile::TempDir, Report) {
    let dir = tempfile::tempdir().unwrap();
    for f in SERVICE_SIDE {
        let from = fixture("gateway-nginx-retry-logs").join(f);
        std::fs::copy(from, dir.path().join(f)).unwrap();
    }
    std::fs::write(dir.path().join("upstream.log"), upstream).unwrap();
    let r = report(&[dir.path()], &["--strict"]);
    (dir, r)
}

#[test]
fn a_gateway_line_about_another_request_or_an_ambiguous_one_is_not_cited() {
    let real = std::fs::read_to_string(fixture("gateway-nginx-retry-logs/upstream.log")).unwrap();
    let alone = scan_files("gateway-nginx-retry-logs", &SERVICE_SIDE);
    let plain = duplicate(&alone);
    // The fixture's line is cited: the tests below can fail.
    let (_dir, r) = with_upstream_log(&real);
    assert!(cited(duplicate(&r)).contains(&"upstream.log:1".to_string()));
    for (why, log) in [
        (
            "another path",
            real.replace("POST /v1/refunds", "POST /v1/payouts"),
        ),
        (
            "another method",
            real.replace("POST /v1/refunds", "PUT /v1/refunds"),
        ),
        ("a year before", real.replace("/2026:", "/2025:")),
        // Two requests to the path at once, each sent again: which is the call's is not known.
        ("two alike", format!("{real}{real}")),
    ] {
        let (_dir, r) = with_upstream_log(&log);
        let f = duplicate(&r);
        assert_eq!(money(f), money(plain), "{why}");
        assert!(
            !cited(f).iter().any(|c| c.starts_with("upstream.log")),
            "{why}"
        );
        assert_eq!(f.message, plain.message, "{why}");
    }
}

#[test]
fn a_gateway_retry_where_the_key_was_replayed_or_never_sent_again_is_no_duplicate() {
    // The key went through nginx and replica b replayed replica a's refund: the gateway's
    // lines still show the retry, and make no finding of their own.
    let keyed = report(&[&fixture("gateway-nginx-retry-keyed")], &["--strict"]);
    assert!(keyed.findings.is_empty(), "{:#?}", keyed.findings);
    let upstream = keyed
        .inputs
        .iter()
        .find(|i| i.path.ends_with("upstream.log"))
        .unwrap();
    assert_eq!(upstream.events, 1);
    // nginx's default sends no POST again: one refund, its error line alone.
    let once = report(&[&fixture("gateway-nginx-post-not-retried")], &["--strict"]);
    assert!(
        once.findings
            .iter()
            .all(|f| f.rule == "effect-after-timeout")
    );
    assert_eq!(once.summary.duplicate_effects, 0);
    // Replica b served nothing: its log, Flask's banner alone, is still read as a log.
    let idle = once
        .inputs
        .iter()
        .find(|i| i.path.ends_with("payments-b.log"))
        .unwrap();
    assert_eq!((idle.format.as_deref(), idle.ignored), (Some("text"), 5));
}
