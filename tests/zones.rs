//! `--tz` with a zone name (SPEC §3.6, "Timestamps without an offset are UTC unless `--tz`
//! says otherwise"): a payments service logging Berlin's local time without an offset,
//! beside an agent logging UTC, on both sides of the end of summer time (2026-10-25).

use idem_audit::report::Report;

mod common;
use common::{report, scan};

const AGENT: &str = "\
2026-10-20T12:02:11.402Z  agent run r1  step 4  tool=issue_refund  args={\"order\":\"A-1\",\"amount_p\":4500}
2026-10-20T12:02:11.418Z  POST https://payments.internal/v1/refunds  (attempt 1)
2026-10-20T12:02:21.418Z  urllib3.exceptions.ReadTimeoutError: read timeout=10
2026-10-20T12:02:21.930Z  POST https://payments.internal/v1/refunds  (attempt 2)
2026-10-20T12:02:23.107Z  201 Created  refund_id=rf_2  amount_p=4500
2026-10-20T12:02:23.109Z  agent run r1  step 4  ok
2026-11-03T12:02:11.402Z  agent run r2  step 4  tool=issue_refund  args={\"order\":\"A-2\",\"amount_p\":4500}
2026-11-03T12:02:11.418Z  POST https://payments.internal/v1/refunds  (attempt 1)
2026-11-03T12:02:21.418Z  urllib3.exceptions.ReadTimeoutError: read timeout=10
2026-11-03T12:02:21.930Z  POST https://payments.internal/v1/refunds  (attempt 2)
2026-11-03T12:02:23.107Z  201 Created  refund_id=rf_4  amount_p=4500
2026-11-03T12:02:23.109Z  agent run r2  step 4  ok
";

/// Berlin is two hours ahead of UTC on 20 October and one hour on 3 November.
const SERVICE: &str = "\
2026-10-20 14:02:11.501  refund rf_1  order A-1  4500p  settled 14:02:22.884
2026-10-20 14:02:23.088  refund rf_2  order A-1  4500p  settled 14:02:34.010
2026-11-03 13:02:11.501  refund rf_3  order A-2  4500p  settled 13:02:22.884
2026-11-03 13:02:23.088  refund rf_4  order A-2  4500p  settled 13:02:34.010
";

fn causes(r: &Report) -> Vec<(String, String)> {
    let mut out: Vec<_> = (r.findings.iter())
        .filter(|f| f.rule == "duplicate-effect")
        .map(|f| {
            (
                f.order.clone().unwrap_or_default(),
                f.cause.clone().unwrap_or_default(),
            )
        })
        .collect();
    out.sort();
    out
}

fn scan_with_tz(tz: &str) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let (agent, service) = (
        dir.path().join("agent.log"),
        dir.path().join("payments.log"),
    );
    std::fs::write(&agent, AGENT).unwrap();
    std::fs::write(&service, SERVICE).unwrap();
    report(&[&agent, &service], &["--tz", tz])
}

#[test]
fn a_zone_name_follows_summer_time_where_a_fixed_offset_cannot() {
    let named = scan_with_tz("Europe/Berlin");
    assert_eq!(
        causes(&named),
        [
            ("A-1".into(), "client-retry".into()),
            ("A-2".into(), "client-retry".into())
        ]
    );
    assert_eq!(
        named.findings[0].first_effect_at.as_deref(),
        Some("2026-10-20T12:02:11.501Z")
    );
    // Winter's offset all month: October's first refund is an hour away from its call.
    let fixed = scan_with_tz("+01:00");
    assert_eq!(causes(&fixed), [("A-2".into(), "client-retry".into())]);
    let unattributed = (fixed.findings.iter()).find(|f| f.rule == "unattributed-effect");
    assert_eq!(unattributed.and_then(|f| f.order.as_deref()), Some("A-1"));
}

#[test]
fn an_unknown_zone_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("payments.log");
    std::fs::write(&log, SERVICE).unwrap();
    let (code, _, stderr) = scan(&[log.to_str().unwrap(), "--tz", "Europe/Atlantis"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("a zone name such as Europe/Berlin"),
        "{stderr}"
    );
}

/// An agent logging UTC without an offset beside the same Berlin service: `--tz` would
/// move both logs; `--input-tz` moves the one it names.
#[test]
fn one_inputs_zone_is_given_apart_from_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let (agent, service) = (
        dir.path().join("agent.log"),
        dir.path().join("payments.log"),
    );
    let offset_less = AGENT.replace("Z  ", "  ");
    assert_eq!(offset_less.matches("Z  ").count(), 0);
    std::fs::write(&agent, offset_less).unwrap();
    std::fs::write(&service, SERVICE).unwrap();
    let with = |args: &[&str]| causes(&report(&[&agent, &service], args));
    let both = [
        ("A-1".into(), "client-retry".into()),
        ("A-2".into(), "client-retry".into()),
    ];
    assert_eq!(with(&["--input-tz", "payments.log=Europe/Berlin"]), both);
    let path = service.to_str().unwrap();
    assert_eq!(
        with(&["--input-tz", &format!("{path}=Europe/Berlin")]),
        both
    );
    // The service's times read as UTC, or every log's as Berlin's: no refund meets its call.
    for args in [
        &["--input-tz", "agent.log.1=Europe/Berlin"][..],
        &["--tz", "Europe/Berlin"][..],
    ] {
        let found = with(args);
        assert!(
            found.iter().all(|(_, cause)| cause != "client-retry"),
            "{args:?}: {found:?}"
        );
    }
    let (code, _, stderr) = scan(&[path, "--input-tz", "Europe/Berlin"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("expected INPUT=ZONE"), "{stderr}");
    // Without it, the gap itself is the clue: a warning names the input and the flag.
    let agent_path = agent.to_str().unwrap();
    let (_, _, stderr) = scan(&[agent_path, path]);
    assert!(
        stderr.contains("sit about +1 h from a call of their order")
            && stderr.contains("give --input-tz payments.log=ZONE"),
        "{stderr}"
    );
    let (_, _, stderr) = scan(&[agent_path, path, "--input-tz", "payments.log=Europe/Berlin"]);
    assert!(!stderr.contains("--input-tz payments.log"), "{stderr}");
    assert!(!stderr.contains("no input is"), "{stderr}");
    // A name that names no input is said, not silently unused.
    let (_, _, stderr) = scan(&[agent_path, path, "--input-tz", "payment.log=Europe/Berlin"]);
    assert!(
        stderr.contains("--input-tz payment.log=...: no input is payment.log"),
        "{stderr}"
    );
}

/// A negative offset is the flag's value, not another flag: `--tz -05:00` and `--tz -0500`
/// (the help's own example) are read, alike, and unlike `+05:00`.
#[test]
fn a_negative_offset_after_a_space_is_the_flags_value() {
    // Each finding's rule and message: the evidence's paths are each run's own folder.
    let findings = |tz| -> Vec<(String, String)> {
        (scan_with_tz(tz).findings.into_iter())
            .map(|f| (f.rule, f.message))
            .collect()
    };
    let colon = findings("-05:00");
    assert_eq!(colon, findings("-0500"));
    assert_ne!(colon, findings("+05:00"));
}
