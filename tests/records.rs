//! Idempotency-record dumps end to end (SPEC §3.5): `--stuck-after` decides which
//! `in_progress` records are stuck, and the record rules give the same findings over
//! thousands of records as they did when they scanned every effect and attempt per record.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

mod common;
use common::{fixture, report};

/// The keys of the `record-stuck` findings on fixture record-stuck, with `extra` flags.
fn stuck_keys(extra: &[&str]) -> Vec<String> {
    let r = report(
        &[
            &fixture("records/stuck.csv"),
            &fixture("record-stuck/effects.jsonl"),
        ],
        extra,
    );
    let mut keys: Vec<String> = r
        .findings
        .iter()
        .filter(|f| f.rule == "record-stuck")
        .map(|f| f.key.clone().unwrap())
        .collect();
    keys.sort();
    keys
}

/// The dump's two `in_progress` records were created 29 min 28.9 s (`9f1c...`) and
/// 2 min 40.3 s (`4a8d...`) before the newest event (14:31:40.300).
#[test]
fn stuck_after_decides_which_in_progress_records_are_stuck() {
    const OLD: &str = "9f1c2a7e4b0d8c3f6a5e1d2c3b4a5f60";
    const RECENT: &str = "4a8d2e6c1b9f3a7e5d0c8b6a4f2e1d3c";
    // The default, 5 min: only the old one.
    assert_eq!(stuck_keys(&[]), [OLD]);
    // Shorter than the recent one's age: it is stuck too.
    assert_eq!(stuck_keys(&["--stuck-after", "2m"]), [RECENT, OLD]);
    assert_eq!(stuck_keys(&["--stuck-after", "160s"]), [RECENT, OLD]);
    // Just longer than its age: not stuck.
    assert_eq!(stuck_keys(&["--stuck-after", "161s"]), [OLD]);
    // Longer than the old one's age: nothing is stuck.
    assert_eq!(stuck_keys(&["--stuck-after", "30m"]), Vec::<String>::new());
    assert_eq!(stuck_keys(&["--stuck-after", "1h"]), Vec::<String>::new());
}

/// `n` refunds, each a keyed call answered with an effect id (every fifth shares one with
/// another call, every third call's amount differs from its effect's), its effect (every
/// fourth without its key) and its idempotency record, created after the effect (every
/// eleventh left `in_progress`; every third names another call's effect).
fn many_records(dir: &Path, n: usize) {
    let ts = |sec: usize| {
        format!(
            "2026-12-02T{:02}:{:02}:{:02}.500Z",
            sec / 3600,
            sec / 60 % 60,
            sec % 60
        )
    };
    let mut events = String::new();
    let mut dump = String::from("key,request_hash,status,response,created_at\n");
    for i in 0..n {
        let sec = 3600 + i * 2;
        let (run, key, order, amount) = (
            format!("r{i}"),
            format!("k{i:06}"),
            format!("A-{}", i % 997),
            1000 + i % 7,
        );
        let call = format!(r#""run":"{run}","step":1"#);
        let effect_id = if i % 5 == 0 {
            format!("rf_{:06}", i / 2)
        } else {
            format!("rf_{i:06}")
        };
        let asked = amount + usize::from(i % 3 == 0);
        let logged = if i % 4 == 0 {
            "null".to_string()
        } else {
            format!("\"{key}\"")
        };
        writeln!(
            events,
            r#"{{"ts":"{t}","type":"tool_call",{call},"tool":"issue_refund","args":{{"order":"{order}","amount_p":{asked}}}}}
{{"ts":"{t}","type":"attempt",{call},"attempt":1,"method":"POST","url":"https://payments.internal/v1/refunds","idempotency_key":"{key}"}}
{{"ts":"{t1}","type":"response",{call},"attempt":1,"status":201,"effect_id":"{effect_id}"}}
{{"ts":"{t1}","type":"step_end",{call},"status":"ok"}}
{{"ts":"{t}","type":"effect","effect_id":"rf_{i:06}","kind":"refund","order":"{order}","amount_minor":{amount},"currency":"GBP","idempotency_key":{logged}}}"#,
            t = ts(sec),
            t1 = ts(sec + 1),
        )
        .unwrap();
        let named = if i % 3 == 0 {
            format!("rf_{:06}", (i * 7) % n)
        } else {
            effect_id
        };
        let (status, response) = if i % 11 == 0 {
            ("in_progress", String::new())
        } else {
            ("completed", format!(r#""{{""refund_id"": ""{named}""}}""#))
        };
        writeln!(
            dump,
            "{key},h{i},{status},{response},2026-12-02 {:02}:{:02}:{:02}.9+00",
            sec / 3600,
            sec / 60 % 60,
            sec % 60
        )
        .unwrap();
    }
    std::fs::write(dir.join("events.jsonl"), events).unwrap();
    std::fs::write(dir.join("records.csv"), dump).unwrap();
}

/// The counts and a few findings below are what the record rules gave when they scanned
/// every effect and attempt per record (minutes at a month's scale); indexed, they must be
/// the same.
#[test]
fn thousands_of_records_give_the_findings_the_scans_gave() {
    let dir = tempfile::tempdir().unwrap();
    many_records(dir.path(), 3000);
    let r = report(&[dir.path()], &[]);
    assert_eq!(
        r.inputs.iter().map(|i| i.skipped).sum::<u64>(),
        0,
        "{:?}",
        r.inputs
    );
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &r.findings {
        *counts.entry(f.rule.as_str()).or_default() += 1;
    }
    let expected: BTreeMap<&str, usize> = [
        ("record-after-effect", 3000),
        ("key-payload-mismatch", 1249),
        ("record-stuck", 260),
        // The 125 calls the scans found with two effects have the effect their answer
        // names (another call's, for another order) and their own. Effects of one call
        // with different amounts (108) or orders (all 125) are no copies of each other: a
        // split payment refunded in one call, two requests' refunds matched to one call.
        // The scans gave 17 duplicates, those of one amount, before orders were compared.
        ("key-not-enforced", 25),
        ("unattributed-effect", 25),
    ]
    .into_iter()
    .collect();
    assert_eq!(counts, expected);
    let find = |rule: &str, key: &str| {
        r.findings
            .iter()
            .find(|f| f.rule == rule && f.key.as_deref() == Some(key))
            .unwrap_or_else(|| panic!("no {rule} for {key}"))
    };
    // Its record names an earlier call's effect (rf_000024), whose key it does not carry.
    let f = find("record-after-effect", "k000432");
    assert_eq!(f.effects, ["rf_000024", "rf_000432"]);
    assert_eq!((f.run.as_deref(), f.step), (Some("r432"), Some(1)));
    let f = find("record-stuck", "k000011");
    assert_eq!(f.effects, ["rf_000011"]);
    // Three calls were answered with the effects that record stands for.
    let f = find("key-payload-mismatch", "k000432");
    assert!(
        f.message
            .starts_with("idempotency record k000432 (created 2026-12-02T01:14:24.900Z) answered 3 different payloads"),
        "{}",
        f.message
    );
    assert_eq!(f.run.as_deref(), Some("r24"));
}
