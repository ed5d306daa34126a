//! JSON objects among a text log's lines ([`super::json_messages`]) and AWS Lambda's
//! runtime lines ([`super::lambda`]), their reports of unhandled errors too, both sides.
use super::tests::refunds;
use super::*;
use crate::time::NANOS_PER_MILLI;

fn read(text: &str) -> Parsed {
    let opts = ParseOptions {
        date: chrono::NaiveDate::from_ymd_opt(2026, 12, 6),
        ..ParseOptions::default()
    };
    parse(&mut text.as_bytes(), 0, &opts).unwrap()
}

fn at(h: i64, mi: i64, s: i64, ms: i64) -> Timestamp {
    let day = days_from_civil(2026, 12, 6).unwrap() * NANOS_PER_DAY;
    Timestamp(day + (h * 3600 + mi * 60 + s) * NANOS_PER_SEC + ms * NANOS_PER_MILLI)
}

const OBJECT: &str = r#"{"event": "refund created", "refund_id": "re_1", "order_id": "A-1", "amount_minor": 4500, "currency": "GBP"}"#;

#[test]
fn an_object_after_a_stamp_or_a_header_is_read_at_the_lines_time() {
    let when = at(8, 7, 0, 266);
    for prefix in [
        // Python's `%(asctime)s %(message)s`, with a level, with a level and a logger.
        "2026-12-06 08:07:00,266 ",
        "2026-12-06 08:07:00,266 INFO ",
        "2026-12-06 08:07:00,266 INFO payments ",
        "2026-12-06T08:07:00.266Z  ",
        // Behind syslog's headers: RFC 3339, RFC 5424, BSD.
        "2026-12-06T08:07:00.266000+00:00 api-1 payments[812]: ",
        "<14>1 2026-12-06T08:07:00.266Z api-1 payments 812 - - ",
        "Dec  6 08:07:00.266000 api-1 payments[812]: ",
        // AWS Lambda's runtimes: Node's and Python's.
        "2026-12-06T08:07:00.266Z\t3f1c0b52-6a0e-4c59-9d1e-2b7f4a8c9e01\tINFO\t",
        "[INFO]\t2026-12-06T08:07:00.266Z\t3f1c0b52-6a0e-4c59-9d1e-2b7f4a8c9e01\t",
    ] {
        let p = read(&format!("{prefix}{OBJECT}\n"));
        assert_eq!(refunds(&p), vec![("re_1".into(), when)], "{prefix}");
        assert_eq!(p.stats.skipped, 0, "{prefix}");
    }
}

#[test]
fn an_objects_own_stamp_wins_and_a_bare_object_needs_one() {
    let own = r#"{"ts": "2026-12-06T08:07:00.500Z", "event": "refund created", "refund_id": "re_2", "order_id": "A-1", "amount_minor": 4500, "currency": "GBP"}"#;
    let p = read(&format!(
        "Dec  6 08:07:00 api-1 payments[812]: {own}\n{own}\n{OBJECT}\n"
    ));
    let when = at(8, 7, 0, 500);
    assert_eq!(
        refunds(&p),
        vec![("re_2".into(), when), ("re_2".into(), when)]
    );
    // A bare object with no time of its own: skipped with the JSON Lines reader's reason.
    assert_eq!(p.stats.skipped, 1);
    assert!(p.stats.problems[0].reason.starts_with("no `ts` field"));
}

#[test]
fn a_broken_object_is_skipped_and_other_braces_are_text() {
    let cut = r#"2026-12-06 08:07:00,266 {"event": "refund created", "refund_id": "re_1""#;
    let p = read(&format!("{cut}\n"));
    assert!(refunds(&p).is_empty());
    assert_eq!(p.stats.skipped, 1);
    assert!(p.stats.problems[0].reason.starts_with("not JSON"));
    // A dict's repr, an empty object, an application's object of no event: no event, no skip.
    let p = read(concat!(
        "2026-12-06 08:07:00,266 {'refund_id': 're_1'}\n",
        "2026-12-06 08:07:00,266 {}\n",
        "2026-12-06 08:07:00,266 {\"event\": \"service started\", \"port\": 8716}\n",
    ));
    assert_eq!(
        (p.stats.events, p.stats.skipped, p.stats.ignored),
        (0, 0, 3)
    );
}

#[test]
fn lambdas_text_messages_and_platform_lines() {
    let id = "3f1c0b52-6a0e-4c59-9d1e-2b7f4a8c9e01";
    let refund = "refund created refund_id=re_1 order_id=A-1 amount_minor=4500 currency=GBP";
    let p = read(&format!(
        "START RequestId: {id} Version: $LATEST\n\
         2026-12-06T08:07:00.266Z\t{id}\tINFO\t{refund}\n\
         [INFO]\t2026-12-06T08:07:00.266Z\t{id}\t{refund}\n\
         END RequestId: {id}\n\
         REPORT RequestId: {id}\tDuration: 2.45 ms\tBilled Duration: 3 ms\n"
    ));
    let when = at(8, 7, 0, 266);
    assert_eq!(
        refunds(&p),
        vec![("re_1".into(), when), ("re_1".into(), when)]
    );
    assert_eq!((p.stats.skipped, p.stats.ignored), (0, 3));
    // Another program's tab after the stamp, a word that is no request id: read as before.
    let p = read(&format!("2026-12-06T08:07:00.266Z\tworker-1\t{refund}\n"));
    assert!(refunds(&p).is_empty());
}

/// The failures read, as error, message and time.
fn failures(p: &Parsed) -> Vec<(String, String, Timestamp)> {
    (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Failure(f) => Some((f.error.to_string(), f.message.to_string(), e.at)),
            _ => None,
        })
        .collect()
}

/// Python's runtime's report of the error a handler raised (no stamp, no request id, its
/// traceback after `\r`s) is its invocation's failure at its latest line's time; outside an
/// invocation (another's START since its lines, or no runtime's line above), or of no
/// exception, it is skipped as before.
#[test]
fn lambdas_unhandled_error_is_its_invocations_failure() {
    let (id, other) = (
        "3f1c0b52-6a0e-4c59-9d1e-2b7f4a8c9e01",
        "774437d7-1794-4413-8f36-bf770a1d2317",
    );
    let error = "[ERROR] LedgerTimeout: ledger did not answer within 3 s\rTraceback (most recent call last):\r\u{a0} File \"/var/task/handler.py\", line 33, in handler\r\u{a0} \u{a0} raise LedgerTimeout(\"ledger did not answer within 3 s\")";
    let invocation = |id: &str| {
        format!(
            "START RequestId: {id} Version: $LATEST\n\
             [INFO]\t2026-12-06T08:07:00.266Z\t{id}\trefund requested order_id=A-1\n"
        )
    };
    let p = read(&format!("{}{error}\nEND RequestId: {id}\n", invocation(id)));
    assert_eq!(
        failures(&p),
        [(
            "LedgerTimeout".into(),
            "ledger did not answer within 3 s".into(),
            at(8, 7, 0, 266)
        )]
    );
    assert_eq!(p.stats.skipped, 0);
    // Another invocation started and logged nothing before its error: not the one above's.
    let p = read(&format!(
        "{}END RequestId: {id}\nSTART RequestId: {other} Version: $LATEST\n{error}\n",
        invocation(id)
    ));
    assert_eq!((failures(&p).len(), p.stats.skipped), (0, 1));
    // No runtime's line above; an `[ERROR]` line of no exception.
    let p = read(&format!(
        "2026-12-06T08:07:00.266Z INFO refund requested\n{error}\n"
    ));
    assert_eq!((failures(&p).len(), p.stats.skipped), (0, 1));
    let p = read(&format!(
        "{}[ERROR] refund failed: ledger down\n",
        invocation(id)
    ));
    assert_eq!((failures(&p).len(), p.stats.skipped), (0, 1));
}
