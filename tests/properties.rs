//! Properties of every parser and of the canonicaliser, over arbitrary and log-shaped bytes
//! (a bounded number of cases, so `cargo test` stays fast). The checks themselves live in
//! `idem_audit::ingest::selfcheck`, shared with the fuzz targets under `fuzz/`.

use idem_audit::canonical::canonical;
use idem_audit::ingest::selfcheck::{
    check_canonical, check_detect, check_filter_agrees, check_parse,
};
use idem_audit::ingest::{Format, ParseOptions};
use proptest::prelude::*;

const FORMATS: [Format; 5] = [
    Format::Text,
    Format::Jsonl,
    Format::Csv,
    Format::Otlp,
    Format::Records,
];

/// Pieces of real inputs of every format, so that random sequences of them reach deep into
/// the parsers rather than failing at the first byte.
const PIECES: &[&str] = &[
    "14:02:11.402  ",
    "2026-11-03T14:02:11.402Z  ",
    "2026-12-02 14:02:11.402+00",
    "23:59:59.999  ",
    "00:00:00  ",
    "agent run 7f3a  step 4  tool=issue_refund  args=",
    "{\"order\":\"A-88214\",\"amount_p\":4500}",
    "{\"amount_p\":4500.0,\"order\":\"A 1 \\\"q\\\"\"}",
    "agent run 7f3a  step 4  ok",
    "agent run 7f3a  step 5  tool=lookup_order  args={\"order\":\"A-1\"}",
    "agent run 7f3a  step 6  tool=send_email  args={}",
    "GET https://orders.internal/v1/orders  (attempt 1)",
    "POST https://mail.internal/v1/emails  (attempt 1)",
    "200 OK",
    "agent run 7f3a  step 5  ok",
    "agent run 7f3a  step 6  ok",
    "agent run 7f3a  started",
    "agent run 7f3a  crashed",
    "2026-11-03T14:02:11.402Z  agent run 7f3a  step 5  tool=lookup_order  args={}",
    "2026-11-03T14:02:11.412Z  GET https://orders.internal/v1/orders  (attempt 1)",
    "2026-11-03T14:02:11.512Z  200 OK",
    "2026-11-03T14:02:11.612Z  agent run 7f3a  step 5  ok",
    "agent run 7f3a  resumed",
    "POST https://payments.internal/v1/refunds  (attempt 2)  idempotency_key=9f1c",
    "urllib3.exceptions.ReadTimeoutError: read timeout=10",
    "201 Created  refund_id=rf_9KQ2  amount_p=4500",
    "200 OK  refund_id=rf_9KQ2  replayed=true",
    "refund rf_8XM1  order A-88214  4500p  settled 14:02:22.884",
    "refund rf_8XM1  order A-88214  -4500p  rejected x",
    "amount_minor=99999999999999999999  currency=ZZZ",
    "--- payments service, same window ---",
    "# date: 2026-11-03",
    "{\"ts\":\"2026-11-03T14:02:11.402Z\",\"type\":\"tool_call\",\"run\":\"7f3a\",\"step\":4,\"tool\":\"issue_refund\",\"args\":{\"order\":\"A-1\"}}",
    "{\"ts\":\"14:02:11\",\"type\":\"effect\",\"effect_id\":\"rf_1\",\"kind\":\"refund\",\"order\":\"A-1\",\"amount_minor\":4500.5,\"currency\":\"GBP\"}",
    "{\"ts\":1700000000,\"type\":\"response\",\"status\":201,\"effect_id\":\"rf_1\"}",
    "{\"ts\":\"x\",\"type\":\"attempt\",\"attempt\":1e3}",
    "id,order_id,amount,currency,created,status",
    "key,request_hash,status,response,created_at",
    "rf_1,A-1,45.00,gbp,2026-11-03 14:02:11,succeeded",
    "rf_2,\"A \"\"1\"\"\",45.005,XYZ,1700000000,failed",
    "k1,h1,in_progress,\"{\"\"a\"\":1}\",2026-12-02 14:02:11.402+05:30",
    "{\"resourceSpans\":[{\"resource\":{\"attributes\":[]},\"scopeSpans\":[{\"spans\":[",
    "{\"traceId\":\"0af7651916cd43dd8448eb211c80319c\",\"spanId\":\"b7ad6b7169203331\",\"name\":\"execute_tool issue_refund\",\"startTimeUnixNano\":\"1700000000000000000\",\"endTimeUnixNano\":\"1700000001000000000\",\"attributes\":[{\"key\":\"gen_ai.operation.name\",\"value\":{\"stringValue\":\"execute_tool\"}}]}",
    "{\"traceId\":\"AAAA\",\"spanId\":\"AA==\",\"parentSpanId\":\"b7ad6b7169203331\",\"kind\":3,\"attributes\":[{\"key\":\"http.method\",\"value\":{\"stringValue\":\"POST\"}},{\"key\":\"http.status_code\",\"value\":{\"intValue\":\"99999999999999999999\"}}]}",
    "]}]}]}",
    ",",
    "  ",
    "\"",
    "{",
    "}",
    "=",
    "\n",
    "\r\n",
    "\r",
    "\0",
    "\u{feff}",
];

fn log_shaped() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(PIECES).prop_map(|s| s.as_bytes().to_vec()),
            1 => prop::collection::vec(any::<u8>(), 0..8),
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

/// Whole trace lines, near the plain idle shape and off it by one detail.
const LINES: &[&str] = &[
    "agent run r1  started",
    "agent run r1  crashed",
    "agent run r1  resumed",
    "agent run r1  step 1  tool=lookup_order  args={\"order\":\"A-1\"}",
    "agent run r1  step 2  tool=send_email  args={\"to\":\"a@b\"}",
    "agent run r1  step 2  tool=send_email  args={\"amount\":1}",
    "agent run r1  step 3  tool=issue_refund  args={\"order\":\"A-1\",\"amount_p\":4500}",
    "agent run r2  step 1  tool=lookup_order  args={bad json",
    "GET https://orders.internal/v1/orders  (attempt 1)",
    "GET https://orders.internal/v1/orders  (attempt 2)",
    "POST https://mail.internal/v1/emails  (attempt 1)",
    "POST https://mail.internal/v1/emails  Idempotency-Key: k1  (attempt 1)",
    "POST https://payments.internal/v1/refunds  (attempt 1)",
    "GET https://orders.internal/v1/orders  (attempt 1)  run=r2  step=1",
    "200 OK",
    "200   OK",
    "201 Created  refund_id=rf_1",
    "200 OK  replayed=true",
    "404 Not Found",
    "urllib3.exceptions.ReadTimeoutError: read timeout=10",
    "agent run r1  step 1  ok",
    "agent run r1  step 2  ok",
    "agent run r1  step 3  ok",
    "agent run r1  step 1  failed  error=x",
    "agent run r2  step 1  ok",
    "refund rf_1  order A-1  4500p  settled",
    "# a comment",
    "",
];

/// An idle call's four lines (a lookup or an email), as a template.
const IDLE_CALLS: &[[&str; 4]] = &[
    [
        "agent run r1  step 1  tool=lookup_order  args={\"order\":\"A-1\"}",
        "GET https://orders.internal/v1/orders  (attempt 1)",
        "200 OK",
        "agent run r1  step 1  ok",
    ],
    [
        "agent run r1  step 2  tool=send_email  args={\"to\":\"a@b\"}",
        "POST https://mail.internal/v1/emails  (attempt 1)",
        "200 OK",
        "agent run r1  step 2  ok",
    ],
    [
        "agent run r1  step 3  tool=lookup_order  args={\"order\":\"A-2\"}",
        "GET https://orders.internal/v1/orders  (attempt 1)  run=r1  step=3",
        "200 OK  run=r1  step=3",
        "agent run r1  step 3  ok",
    ],
];

/// Each line of the template, off the plain shape by one detail (or still plain).
const NEAR: [&[&str]; 4] = [
    &[
        "agent run r1  step 1  tool=lookup_order  args={\"amount\":1}",
        "agent run r1  step 1  tool=issue_refund  args={}",
        "agent run r1  step 1  TOOL=lookup_order  args={}",
        "agent run r1  step 1  tool=lookup_order  args={bad",
        "agent run r1  step x  tool=lookup_order  args={}",
    ],
    &[
        "GET https://orders.internal/v1/orders  (attempt 2)",
        "GET https://orders.internal/v1/refunds  (attempt 1)",
        "POST https://mail.internal/v1/emails  idempotency_key=k  (attempt 1)",
        "POST https://mail.internal/v1/emails  Idempotency-Key: k  (attempt 1)",
        "GET https://orders.internal/v1/orders\t(attempt 1)",
        "GET https://orders.internal/v1/orders  (attempt 1)  run=r2",
        "GET https://orders.internal/v1/orders  (attempt 1)  run=r1  step=1",
        "POST https://mail.internal/v1/emails  (attempt 1)  run=r1  step=2",
        "GET https://orders.internal/v1/orders  (attempt 1)  run=r1",
        "GET https://orders.internal/v1/orders  (attempt 1)  step=01",
        "GET https://orders.internal/v1/orders  (attempt 1)  step=1  run=r1",
        "GET https://orders.internal/v1/orders  (attempt 1)   run=r1  step=1",
        "GET https://orders.internal/v1/orders  (attempt 1)  run=r1  step=1x",
        "GET https://orders.internal/v1/orders  (attempt 1)  run=r1  step=",
    ],
    &[
        "404 Not Found",
        "201 Created  refund_id=rf_1",
        "200 OK  replayed=true",
        "200 OK  amount_p=1",
        "200   OK",
        "200OK",
        "urllib3.exceptions.ReadTimeoutError: read timeout=10",
        "200 OK  run=r1  step=1",
        "200 OK  run=r1  step=2",
        "200 OK  step=2",
        "200 OK  run=r1 step=1",
        "200 OK  run=r2  step=1",
        "200 OK  run=r1  step=1  refund_id=rf_1",
        "run=r1  step=1",
    ],
    &[
        "agent run r1  step 1  failed",
        "agent run r1  step 2  ok  error=x",
        "agent run r1  step 01  ok",
        "agent run r2  step 1  ok",
        "agent run r1  resumed",
    ],
];

/// Lines of a trace: idle calls (some with one line off the plain shape) among other lines,
/// each with a dated or a time-only stamp, a few cut short.
fn line_shaped() -> impl Strategy<Value = Vec<u8>> {
    let line = (
        prop::sample::select(LINES),
        0..3u8,
        0..100u32,
        any::<bool>(),
    );
    let call = (
        prop::sample::select(IDLE_CALLS),
        0..6usize,
        0..16usize,
        0..3u8,
    );
    prop::collection::vec(
        prop_oneof![
            1 => line.prop_map(|l| vec![l]),
            1 => call.prop_map(|(call, swap, pick, stamp)| {
                (0..4)
                    .map(|i| {
                        let line = match NEAR.get(i).filter(|_| i == swap) {
                            Some(near) => near[pick % near.len()],
                            None => call[i],
                        };
                        (line, stamp, 100, false)
                    })
                    .collect()
            }),
        ],
        0..12,
    )
    .prop_map(|blocks| {
        let mut out = String::new();
        for (i, (line, stamp, cut, crlf)) in blocks.into_iter().flatten().enumerate() {
            let at = match stamp {
                0 => format!("2026-11-03T14:02:{:02}.{:03}Z  ", i % 60, i),
                1 => format!("14:02:{:02}.{:03}  ", i % 60, i),
                _ => format!("2026-11-03 14:02:{:02}  ", i % 60),
            };
            let full = format!("{at}{line}");
            // One line in ten is cut short (a rotation, a crash mid-write).
            let keep = if cut < 10 {
                full.len() * cut as usize / 10
            } else {
                full.len()
            };
            out.push_str(full.get(..keep).unwrap_or(&full));
            out.push_str(if crlf { "\r\n" } else { "\n" });
        }
        out.into_bytes()
    })
}

fn any_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..512)
}

fn opts_with_date(dated: bool) -> ParseOptions {
    ParseOptions {
        date: dated.then(|| chrono::NaiveDate::from_ymd_opt(2026, 11, 3).unwrap()),
        ..ParseOptions::default()
    }
}

proptest! {
    // Cheap cases, and each near miss is one draw in a few hundred: many of them.
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn dropping_idle_calls_changes_no_event_and_no_count(data in line_shaped(), dated: bool) {
        let opts = opts_with_date(dated);
        check_parse(Format::Text, &data, &opts);
        check_filter_agrees(Format::Text, &data, &opts);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn arbitrary_bytes_never_panic_and_every_line_is_accounted(data in any_bytes(), dated: bool) {
        let opts = opts_with_date(dated);
        for f in FORMATS {
            check_parse(f, &data, &opts);
        }
        check_detect(&data, &opts);
    }

    #[test]
    fn log_shaped_bytes_never_panic_and_every_line_is_accounted(data in log_shaped(), dated: bool) {
        let opts = opts_with_date(dated);
        for f in FORMATS {
            check_parse(f, &data, &opts);
            check_filter_agrees(f, &data, &opts);
        }
        check_detect(&data, &opts);
        check_canonical(&data);
    }

    #[test]
    fn canonical_form_is_a_fixed_point_of_any_json(data in any_bytes()) {
        check_canonical(&data);
    }

    #[test]
    fn canonical_args_ignore_key_order_and_integral_float_spelling(tree in json_tree(), seed: u64) {
        let plain = render(&tree, Spelling::Plain, seed);
        let respelled = render(&tree, Spelling::Respelled, seed);
        let a: serde_json::Value = serde_json::from_str(&plain).unwrap();
        let b: serde_json::Value = serde_json::from_str(&respelled).unwrap();
        prop_assert_eq!(canonical(&a), canonical(&b), "{} vs {}", plain, respelled);
        check_canonical(plain.as_bytes());
    }
}

/// A JSON tree kept as an ordered list of members, so that it can be written in more than
/// one key order.
#[derive(Clone, Debug)]
enum Tree {
    Int(i64),
    Frac(i32, u8),
    Str(String),
    Bool(bool),
    Null,
    List(Vec<Tree>),
    Object(Vec<(String, Tree)>),
}

fn json_tree() -> impl Strategy<Value = Tree> {
    let leaf = prop_oneof![
        // Integers whose float spelling is exact (below 2^53).
        (-(1i64 << 53) + 1..(1i64 << 53)).prop_map(Tree::Int),
        (-1_000_000i32..1_000_000, 1u8..10).prop_map(|(i, f)| Tree::Frac(i, f)),
        "[a-zA-Z0-9 \"\\\\é€_-]{0,8}".prop_map(Tree::Str),
        any::<bool>().prop_map(Tree::Bool),
        Just(Tree::Null),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Tree::List),
            // Distinct keys: JSON objects with repeated keys have no order-free meaning.
            prop::collection::btree_map("[a-z_é]{1,6}", inner, 0..5)
                .prop_map(|m| Tree::Object(m.into_iter().collect())),
        ]
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Spelling {
    /// Keys in sorted order, integers as integers.
    Plain,
    /// Keys in a shuffled order, integers written as floats in one of several ways.
    Respelled,
}

fn render(tree: &Tree, spelling: Spelling, seed: u64) -> String {
    let mut out = String::new();
    write_tree(tree, spelling, seed, &mut out);
    out
}

fn write_tree(tree: &Tree, spelling: Spelling, seed: u64, out: &mut String) {
    match tree {
        Tree::Int(i) => match (spelling, seed % 4) {
            (Spelling::Plain, _) => out.push_str(&i.to_string()),
            (_, 0) => out.push_str(&format!("{i}.0")),
            (_, 1) => out.push_str(&format!("{i}.000")),
            (_, 2) => out.push_str(&format!("{i}e0")),
            _ => out.push_str(&format!("{i}.0E+0")),
        },
        Tree::Frac(i, f) => out.push_str(&format!("{i}.{f}")),
        Tree::Str(s) => out.push_str(&serde_json::to_string(s).unwrap()),
        Tree::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Tree::Null => out.push_str("null"),
        Tree::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_tree(item, spelling, seed.rotate_left(7) ^ i as u64, out);
            }
            out.push(']');
        }
        Tree::Object(members) => {
            let mut order: Vec<usize> = (0..members.len()).collect();
            if spelling == Spelling::Respelled {
                // A deterministic shuffle from the seed; always at least reversed.
                order.reverse();
                let n = order.len().max(1);
                order.rotate_left((seed as usize) % n);
            }
            out.push_str(if spelling == Spelling::Respelled {
                "{ "
            } else {
                "{"
            });
            for (pos, &i) in order.iter().enumerate() {
                if pos > 0 {
                    out.push_str(if spelling == Spelling::Respelled {
                        " , "
                    } else {
                        ","
                    });
                }
                let (k, v) = &members[i];
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push(':');
                write_tree(v, spelling, seed.rotate_left(13) ^ i as u64, out);
            }
            out.push('}');
        }
    }
}

/// Every fixture file, whole and cut at a few places (a log rotated mid-line), keeps the
/// invariants in its own format and every other.
#[test]
fn fixtures_whole_and_cut_keep_the_invariants() {
    let opts = ParseOptions::default();
    let mut files = Vec::new();
    collect(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &mut files,
    );
    assert!(files.len() > 20);
    for path in files {
        let data = std::fs::read(&path).unwrap();
        if data.starts_with(&[0x1f, 0x8b]) || data.len() > 4 << 20 {
            continue;
        }
        let mut cuts = vec![data.len()];
        cuts.extend((1..5).map(|i| data.len() * i / 5));
        for cut in cuts {
            for f in FORMATS {
                check_parse(f, &data[..cut], &opts);
                check_filter_agrees(f, &data[..cut], &opts);
            }
            check_detect(&data[..cut], &opts);
        }
    }
}

fn collect(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}
