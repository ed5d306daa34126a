//! `scan` for finance (issue 5): the CSV report, `--since` / `--until`, and the summary's
//! excess per currency, checked against sums computed here from the fixture's own truth
//! (written by scripts/gen_fixtures.py, never by idem-audit).

use assert_cmd::Command;
use idem_audit::report::Report;
use serde_json::Value;
use std::collections::BTreeMap;

const MONTH: &str = "fixtures/finance-month";
const NOVEMBER: [&str; 4] = ["--since", "2026-11-01", "--until", "2026-12-01"];

fn scan(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::cargo_bin("idem-audit")
        .unwrap()
        .arg("scan")
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

struct Dup {
    order: String,
    effects: Vec<String>,
    currency: String,
    excess_minor: i64,
    duplicated_at: String,
}

/// The truth file's delivery duplicates whose second effect was created in [since, until).
fn truth_in(since: &str, until: &str) -> Vec<Dup> {
    truth_of("duplicates", since, until)
}

/// `list` is `duplicates` (delivery) or `decisions` (duplicate decisions).
fn truth_of(list: &str, since: &str, until: &str) -> Vec<Dup> {
    let t: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{MONTH}/truth.json")).unwrap())
            .unwrap();
    t[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| Dup {
            order: d["order"].as_str().unwrap().into(),
            effects: d["effects"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_str().unwrap().into())
                .collect(),
            currency: d["currency"].as_str().unwrap().into(),
            excess_minor: d["excess_minor"].as_i64().unwrap(),
            duplicated_at: d["duplicated_at"].as_str().unwrap().into(),
        })
        // ISO timestamps of one shape compare as strings.
        .filter(|d| d.duplicated_at.as_str() >= since && d.duplicated_at.as_str() < until)
        .collect()
}

/// Minor units as major units with two decimals (both currencies here have exponent 2),
/// computed without the tool's money code.
fn major(minor: i64) -> String {
    format!("{}.{:02}", minor / 100, minor % 100)
}

fn grouped(minor: i128) -> String {
    let whole = (minor / 100).to_string();
    let mut out = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    format!("{out}.{:02}", minor % 100)
}

fn sums(dups: &[Dup]) -> BTreeMap<String, i128> {
    let mut s = BTreeMap::new();
    for d in dups {
        *s.entry(d.currency.clone()).or_insert(0) += i128::from(d.excess_minor);
    }
    s
}

#[test]
fn csv_rows_are_the_months_duplicates_in_major_units() {
    let expected = truth_in("2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z");
    assert!(
        expected.len() >= 10,
        "the fixture has a month of duplicates"
    );
    let currencies: Vec<String> = sums(&expected).into_keys().collect();
    assert_eq!(currencies, ["EUR", "GBP"]);

    let mut args = vec![MONTH, "--format", "csv"];
    args.extend(NOVEMBER);
    let (code, out) = scan(&args);
    assert_eq!(code, Some(1));
    let mut reader = csv::Reader::from_reader(out.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header,
        [
            "rule",
            "severity",
            "cause",
            "order",
            "run",
            "step",
            "tool",
            "effects",
            "currency",
            "excess",
            "first_effect_at",
            "last_effect_at",
            "message"
        ]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    let dup_rows: BTreeMap<String, (String, String, String)> = rows
        .iter()
        .filter(|r| &r[0] == "duplicate-effect")
        .map(|r| {
            (
                r[3].to_string(),
                (r[7].to_string(), r[8].to_string(), r[9].to_string()),
            )
        })
        .collect();
    assert_eq!(
        dup_rows.len(),
        rows.iter().filter(|r| &r[0] == "duplicate-effect").count(),
        "one row per order"
    );
    let want: BTreeMap<String, (String, String, String)> = expected
        .iter()
        .map(|d| {
            (
                d.order.clone(),
                (
                    d.effects.join(";"),
                    d.currency.clone(),
                    major(d.excess_minor),
                ),
            )
        })
        .collect();
    assert_eq!(dup_rows, want);
    // First and last effect times are the effects' creation, first before last.
    for r in rows.iter().filter(|r| &r[0] == "duplicate-effect") {
        assert!(r[10] < r[11], "{r:?}");
    }
}

#[test]
fn summary_excess_per_currency_equals_the_independent_sums() {
    let expected = truth_in("2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z");
    let want = sums(&expected);
    let mut args = vec![MONTH, "--format", "json"];
    args.extend(NOVEMBER);
    let report: Report = serde_json::from_str(&scan(&args).1).unwrap();
    let got: BTreeMap<String, i128> = report
        .summary
        .excess
        .iter()
        .map(|c| (c.currency.clone(), c.amount_minor))
        .collect();
    assert_eq!(got, want);
    let extra: usize = expected.iter().map(|d| d.effects.len() - 1).sum();
    assert_eq!(report.summary.duplicate_effects, extra as u64);
    assert_eq!(
        report.summary.period.since.as_deref(),
        Some("2026-11-01T00:00:00.000Z")
    );

    // The table prints the same sums, `EUR 1,234.56` style.
    let mut args = vec![MONTH];
    args.extend(NOVEMBER);
    let table = scan(&args).1;
    let line = table
        .lines()
        .find(|l| l.starts_with("delivery duplicates"))
        .unwrap();
    let amounts: Vec<String> = want
        .iter()
        .map(|(c, v)| format!("{c} {}", grouped(*v)))
        .collect();
    assert_eq!(
        line,
        format!(
            "delivery duplicates (duplicate-effect): {extra} effects, excess {}",
            amounts.join(", ")
        )
    );
    assert!(
        table.starts_with(
            "period: 2026-11-01T00:00:00.000Z to 2026-12-01T00:00:00.000Z (exclusive)"
        ),
        "{table}"
    );
    assert!(table.contains("inputs read: 2 ("), "{table}");
    let decisions = truth_of(
        "decisions",
        "2026-11-01T00:00:00.000Z",
        "2026-12-01T00:00:00.000Z",
    );
    assert!(!decisions.is_empty());
    let want_dec = sums(&decisions);
    let got_dec: BTreeMap<String, i128> = report
        .summary
        .decision_excess
        .iter()
        .map(|c| (c.currency.clone(), c.amount_minor))
        .collect();
    assert_eq!(got_dec, want_dec);
    let dec_extra: usize = decisions.iter().map(|d| d.effects.len() - 1).sum();
    assert_eq!(report.summary.decision_duplicates, dec_extra as u64);
    assert_eq!(
        report.summary.orders_affected,
        (expected.len() + decisions.len()) as u64
    );
    let amounts: Vec<String> = want_dec
        .iter()
        .map(|(c, v)| format!("{c} {}", grouped(*v)))
        .collect();
    let line = table
        .lines()
        .find(|l| l.starts_with("decision duplicates"))
        .unwrap();
    assert_eq!(
        line,
        format!(
            "decision duplicates (duplicate-decision): {dec_extra} effects, excess {}",
            amounts.join(", ")
        )
    );
}

#[test]
fn the_period_edges_exclude_just_outside_and_keep_just_inside() {
    let orders = |args: &[&str]| -> Vec<String> {
        let report: Report = serde_json::from_str(&scan(args).1).unwrap();
        report
            .findings
            .iter()
            .filter(|f| f.rule == "duplicate-effect")
            .filter_map(|f| f.order.clone())
            .filter(|o| o.starts_with("EDGE"))
            .collect()
    };
    let mut args = vec![MONTH, "--format", "json"];
    args.extend(NOVEMBER);
    let mut got = orders(&args);
    got.sort();
    assert_eq!(got, ["EDGE-IN-END", "EDGE-IN-START"]);
    // The generator put EDGE-IN-START's first refund in October: only its duplicate is in November.
    let edge = truth_in("2026-10-31T00:00:00.000Z", "2026-12-02T00:00:00.000Z");
    let in_start = edge.iter().find(|d| d.order == "EDGE-IN-START").unwrap();
    assert!(in_start.duplicated_at.starts_with("2026-11-01T00:00:00"));
    // Without a period everything is reported; with timestamps the edge moves with them.
    assert_eq!(orders(&[MONTH, "--format", "json"]).len(), 4);
    let mut got = orders(&[MONTH, "--format", "json", "--until", "2026-11-30T23:59:51Z"]);
    got.sort();
    assert_eq!(got, ["EDGE-IN-START", "EDGE-OUT-START"]);
}

#[test]
fn a_bad_period_is_a_usage_error() {
    let (code, _) = scan(&[MONTH, "--since", "November"]);
    assert_eq!(code, Some(2));
    let (code, _) = scan(&[MONTH, "--since", "2026-12-01", "--until", "2026-11-01"]);
    assert_eq!(code, Some(2));
}

#[test]
fn consecutive_periods_add_up_to_their_union() {
    let summary = |args: &[&str]| -> idem_audit::report::Summary {
        let mut all = vec![MONTH, "--format", "json"];
        all.extend(args);
        serde_json::from_str::<Report>(&scan(&all).1)
            .unwrap()
            .summary
    };
    let whole = summary(&NOVEMBER);
    let first = summary(&["--since", "2026-11-01", "--until", "2026-11-15T12:00:00Z"]);
    let second = summary(&["--since", "2026-11-15T12:00:00Z", "--until", "2026-12-01"]);
    assert!(first.duplicate_effects > 0 && second.duplicate_effects > 0);
    assert_eq!(
        first.duplicate_effects + second.duplicate_effects,
        whole.duplicate_effects
    );
    assert_eq!(first.errors + second.errors, whole.errors);
    let total = |s: &idem_audit::report::Summary| -> BTreeMap<String, i128> {
        let mut m = BTreeMap::new();
        for c in s.excess.iter().chain(&s.decision_excess) {
            *m.entry(c.currency.clone()).or_insert(0) += c.amount_minor;
        }
        m
    };
    let mut halves = total(&first);
    for (c, v) in total(&second) {
        *halves.entry(c).or_insert(0) += v;
    }
    assert_eq!(halves, total(&whole));
}

/// A refund made on 1 December is December's, even when its order was refunded twice on 30
/// November: November's row holds the second refund's excess, December's the third's.
/// An excess whose amounts are unknown is left empty, never `0.00`.
#[test]
fn a_duplicate_across_a_month_end_splits_its_excess_and_unknown_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("pay.log");
    std::fs::write(
        &log,
        "2026-11-30T23:59:57.000Z  refund rf_1  order A-1  4500p\n\
         2026-11-30T23:59:59.000Z  refund rf_2  order A-1  4500p\n\
         2026-12-01T00:00:01.000Z  refund rf_3  order A-1  4500p\n\
         2026-11-10T10:00:00.000Z  refund rf_4  order B-1  amount_minor=1200  currency=GBP  key=k-1\n\
         2026-11-10T10:00:01.000Z  refund rf_5  order B-1  amount_minor=1200  currency=EUR  key=k-1\n",
    )
    .unwrap();
    let log = log.to_str().unwrap();
    let excess_of = |args: &[&str]| -> Vec<(String, String)> {
        let (_, csv) = scan(&[&[log, "--format", "csv"], args].concat());
        let mut rows = csv::Reader::from_reader(csv.as_bytes());
        let rows: Vec<csv::StringRecord> = rows.records().map(|r| r.unwrap()).collect();
        (rows.iter())
            .filter(|r| &r[0] == "duplicate-effect")
            .map(|r| (r[3].to_string(), r[9].to_string()))
            .collect()
    };
    let pair = |order: &str, excess: &str| (order.to_string(), excess.to_string());
    assert_eq!(
        excess_of(&NOVEMBER),
        [pair("A-1", "45.00"), pair("B-1", "")]
    );
    assert_eq!(
        excess_of(&["--since", "2026-12-01", "--until", "2027-01-01"]),
        [pair("A-1", "45.00")]
    );
    assert_eq!(excess_of(&[]), [pair("A-1", "90.00"), pair("B-1", "")]);
}

/// A duplicate whose amounts are bare whole numbers of unknown unit has no excess: the JSON
/// summary counts it apart, as the table says "and unknown in 1 finding", so that a script
/// summing `excess` knows the sum is not the whole. A month with none says 0.
#[test]
fn the_json_summary_counts_the_duplicates_of_unknown_excess() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("pay.jsonl");
    let effect = |id: &str, order: &str, amount: &str, second: u32| {
        format!(
            r#"{{"ts":"2026-11-10T10:00:{second:02}.000Z","type":"effect","effect_id":"{id}","kind":"refund","order":"{order}","amount":{amount},"currency":"GBP"}}"#
        )
    };
    let lines = [
        effect("rf_1", "U-1", "4500", 0),
        effect("rf_2", "U-1", "4500", 1),
        effect("rf_3", "U-2", "\"45.00\"", 2),
        effect("rf_4", "U-2", "\"45.00\"", 3),
    ];
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let path = log.to_str().unwrap();
    let (_, json) = scan(&[path, "--format", "json"]);
    let summary: Value = serde_json::from_str::<Value>(&json).unwrap()["summary"].clone();
    assert_eq!(summary["excess_unknown"], 1, "{summary}");
    assert_eq!(summary["decision_excess_unknown"], 0, "{summary}");
    assert_eq!(summary["excess"][0]["amount_minor"], 4500, "{summary}");
    let (_, table) = scan(&[path]);
    assert!(
        table.contains("excess at least GBP 45.00, and unknown in 1 finding"),
        "{table}"
    );
    let (_, month) = scan(&[MONTH, "--format", "json"]);
    let month: Value = serde_json::from_str(&month).unwrap();
    assert_eq!(month["summary"]["excess_unknown"], 0);
}

/// One call retried twice after timeouts made three refunds, and the service's line for the
/// second names no amount (review36 H2): the excess known, GBP 45.00, is a lower bound. The
/// row says so (`excess_partial`, "at least" in the message and the table), and the summary
/// counts it in `excess_unknown`, so a script summing `excess` knows the month costs more.
#[test]
fn a_duplicate_without_an_amount_makes_the_excess_a_lower_bound() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("trace.log");
    std::fs::write(
        &log,
        "2026-11-03T14:02:11.402Z  agent run r1  step 4  tool=issue_refund  args={\"order\":\"A-1\",\"amount_p\":4500}\n\
         2026-11-03T14:02:11.418Z  POST https://payments.internal/v1/refunds  (attempt 1)\n\
         2026-11-03T14:02:21.418Z  urllib3.exceptions.ReadTimeoutError: read timeout=10\n\
         2026-11-03T14:02:21.930Z  POST https://payments.internal/v1/refunds  (attempt 2)\n\
         2026-11-03T14:02:31.930Z  urllib3.exceptions.ReadTimeoutError: read timeout=10\n\
         2026-11-03T14:02:32.930Z  POST https://payments.internal/v1/refunds  (attempt 3)\n\
         2026-11-03T14:02:33.107Z  201 Created  refund_id=rf_3  amount_p=4500\n\
         2026-11-03T14:02:33.109Z  agent run r1  step 4  ok\n\
         2026-11-03T14:02:11.501Z  refund rf_1  order A-1  4500p  settled 2026-11-03T14:02:22Z\n\
         2026-11-03T14:02:22.001Z  refund rf_2  order A-1  pending\n\
         2026-11-03T14:02:33.088Z  refund rf_3  order A-1  4500p  settled 2026-11-03T14:02:44Z\n",
    )
    .unwrap();
    let path = log.to_str().unwrap();
    let (_, json) = scan(&[path, "--format", "json"]);
    let report: Value = serde_json::from_str(&json).unwrap();
    let summary = &report["summary"];
    assert_eq!(summary["excess"][0]["amount_minor"], 4500, "{summary}");
    assert_eq!(summary["excess_unknown"], 1, "{summary}");
    assert_eq!(summary["duplicate_effects"], 2, "{summary}");
    let dup = &report["findings"][0];
    assert_eq!(dup["rule"], "duplicate-effect");
    assert_eq!(dup["excess_minor"], 4500);
    assert_eq!(dup["excess_partial"], true);
    let message = dup["message"].as_str().unwrap();
    assert!(
        message.ends_with("excess at least GBP 45.00, 1 refund's amount unknown"),
        "{message}"
    );
    let (_, table) = scan(&[path]);
    assert!(
        table.contains("at least GBP 45.00, and unknown in 1 finding"),
        "{table}"
    );
    let (_, csv) = scan(&[path, "--format", "csv"]);
    assert!(csv.contains(",GBP,45.00,"), "{csv}");
    // Every duplicate with an amount: exact, and the field is not written.
    let (_, month) = scan(&[MONTH, "--format", "json"]);
    assert!(!month.contains("excess_partial"));
}

/// A habit belongs to when it was acted on: a request first sent on 30 November and retried
/// without a key on 1 December is December's `unkeyed-retry`, beside the December duplicate
/// it made; November's report has neither (it listed the habit without its duplicate).
#[test]
fn a_retry_across_a_month_end_belongs_to_the_month_of_the_retry() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("trace.log");
    std::fs::write(
        &log,
        "2026-11-30T23:59:50.000Z  agent run r1  step 2  tool=issue_refund  args={\"order\":\"X-1\",\"amount_p\":2000}\n\
         2026-11-30T23:59:55.000Z  POST https://payments.internal/v1/refunds  (attempt 1)\n\
         2026-12-01T00:00:05.000Z  urllib3.exceptions.ReadTimeoutError: read timeout=10\n\
         2026-12-01T00:00:06.000Z  POST https://payments.internal/v1/refunds  (attempt 2)\n\
         2026-12-01T00:00:07.000Z  201 Created  refund_id=rf_X2  amount_p=2000\n\
         2026-12-01T00:00:07.100Z  agent run r1  step 2  ok\n\
         2026-12-01T00:00:02.000Z  refund rf_X1  order X-1  2000p\n\
         2026-12-01T00:00:06.500Z  refund rf_X2  order X-1  2000p\n",
    )
    .unwrap();
    let log = log.to_str().unwrap();
    let rules_of = |args: &[&str]| -> Vec<String> {
        let (_, json) = scan(&[&[log, "--format", "json"], args].concat());
        let report: Value = serde_json::from_str(&json).unwrap();
        let mut rules: Vec<String> = (report["findings"].as_array().unwrap().iter())
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect();
        rules.sort();
        rules.dedup();
        rules
    };
    let december = rules_of(&["--since", "2026-12-01", "--until", "2027-01-01"]);
    assert!(
        december.contains(&"unkeyed-retry".to_string()),
        "{december:?}"
    );
    assert!(
        december.contains(&"duplicate-effect".to_string()),
        "{december:?}"
    );
    assert_eq!(rules_of(&NOVEMBER), Vec::<String>::new());
}
