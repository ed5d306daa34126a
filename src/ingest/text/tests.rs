use super::*;
use crate::classify::FailureClass;
use crate::ingest::lines::newlines_of;
use crate::money::Currency;
use crate::time::{NANOS_PER_MILLI, NANOS_PER_SEC};

const INCIDENT: &str = include_str!("../../../fixtures/incident-a88214/trace.log");

fn run(text: &str) -> Parsed {
    parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap()
}

fn tod(h: i64, m: i64, s: i64, ms: i64) -> Timestamp {
    Timestamp((h * 3600 + m * 60 + s) * NANOS_PER_SEC + ms * NANOS_PER_MILLI)
}

fn kinds(p: &Parsed) -> Vec<&EventKind> {
    p.events.iter().map(|e| &e.kind).collect()
}

#[test]
fn parses_the_incident_trace() {
    let p = run(INCIDENT);
    assert_eq!(
        (
            p.stats.lines,
            p.stats.events,
            p.stats.ignored,
            p.stats.skipped
        ),
        (9, 8, 1, 0)
    );
    let k = kinds(&p);
    let call = CallRef {
        run: "7f3a".into(),
        step: 4,
        part: 0,
    };
    match k[0] {
        EventKind::ToolCall(t) => {
            assert_eq!(t.call, call);
            assert_eq!(t.tool, "issue_refund");
            assert_eq!(t.parsed_args()["amount_p"], 4500);
            assert_eq!(t.args_raw, r#"{"order":"A-88214","amount_p":4500}"#);
        }
        other => panic!("{other:?}"),
    }
    match k[1] {
        EventKind::Attempt(a) => {
            assert_eq!(
                (a.number, a.key.as_deref(), a.method.as_deref()),
                (1, None, Some("POST"))
            );
            assert_eq!(a.call.as_ref(), Some(&call));
        }
        other => panic!("{other:?}"),
    }
    match k[2] {
        EventKind::Failure(f) => {
            assert_eq!(f.class, FailureClass::Ambiguous);
            assert_eq!(f.error, "urllib3.exceptions.ReadTimeoutError");
            assert_eq!(f.message, "read timeout=10");
            assert_eq!(f.attempt, Some(1));
        }
        other => panic!("{other:?}"),
    }
    match k[4] {
        EventKind::Response(r) => {
            assert_eq!(
                (r.status, r.effect_id.as_deref(), r.replayed, r.attempt),
                (201, Some("rf_9KQ2"), false, Some(2))
            );
            assert_eq!(r.amount, Some(Money::new(4500, Currency::GBP)));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(k[5], EventKind::StepEnd(s) if s.ok));
    match k[6] {
        EventKind::Effect(e) => {
            assert_eq!(
                (e.kind.as_str(), e.id.as_str(), e.order.as_deref()),
                ("refund", "rf_8XM1", Some("A-88214"))
            );
            assert_eq!(e.amount, Some(Money::new(4500, Currency::GBP)));
            assert_eq!(e.state.as_deref(), Some("settled"));
            assert_eq!(e.state_at, Some(tod(14, 2, 22, 884)));
            assert!(e.happened);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(p.events[6].at, tod(14, 2, 11, 501));
    assert_eq!(p.events[6].loc.line, 8);
}

#[test]
fn date_header_and_flag_date_time_only_lines() {
    let p = run("# date: 2026-11-03\n14:02:11.402  agent run r  started\n");
    let day = days_from_civil(2026, 11, 3).unwrap() * NANOS_PER_DAY;
    assert_eq!(p.events[0].at.0, day + tod(14, 2, 11, 402).0);
    let opts = ParseOptions {
        date: chrono::NaiveDate::from_ymd_opt(2026, 11, 4),
        ..ParseOptions::default()
    };
    let p = parse(&mut &b"00:00:01  agent run r  started\n"[..], 0, &opts).unwrap();
    assert_eq!(
        p.events[0].at.0,
        days_from_civil(2026, 11, 4).unwrap() * NANOS_PER_DAY + NANOS_PER_SEC
    );
}

#[test]
fn midnight_rollover_twice_and_sections_restart_the_day() {
    let p = run(
        "23:00:00  agent run r  started\n01:00:00  agent run r  crashed\n13:30:00  agent run r  resumed\n\
         00:30:00  agent run r  crashed\n--- service ---\n23:30:00  refund rf_1  order A  100p\n00:10:00  refund rf_2  order A  100p\n",
    );
    let at: Vec<i64> = p.events.iter().map(|e| e.at.0).collect();
    assert_eq!(at[0], tod(23, 0, 0, 0).0);
    assert_eq!(at[1], NANOS_PER_DAY + tod(1, 0, 0, 0).0);
    assert_eq!(at[2], NANOS_PER_DAY + tod(13, 30, 0, 0).0);
    assert_eq!(at[3], 2 * NANOS_PER_DAY + tod(0, 30, 0, 0).0);
    assert_eq!(
        at[4],
        tod(23, 30, 0, 0).0,
        "a section starts again from the file's first day"
    );
    assert_eq!(at[5], NANOS_PER_DAY + tod(0, 10, 0, 0).0);
}

/// A line written a moment late, after the first line of the next day, stays on its
/// night; two hours behind it is the next evening, as the SPEC reads it.
#[test]
fn a_line_written_late_before_midnight_stays_on_its_night() {
    let p = run(
        "23:59:58  agent run r  started\n00:00:01  agent run r  crashed\n23:59:59  agent run r  resumed\n\
         00:00:02  agent run r  crashed\n22:00:00  agent run r  resumed\n",
    );
    let at: Vec<i64> = p.events.iter().map(|e| e.at.0).collect();
    assert_eq!(at[0], tod(23, 59, 58, 0).0);
    assert_eq!(at[1], NANOS_PER_DAY + tod(0, 0, 1, 0).0);
    assert_eq!(at[2], tod(23, 59, 59, 0).0, "late, not a day on");
    assert_eq!(at[3], NANOS_PER_DAY + tod(0, 0, 2, 0).0);
    assert_eq!(at[4], NANOS_PER_DAY + tod(22, 0, 0, 0).0);
    let p = run("00:00:01  agent run r  started\n23:59:59  agent run r  crashed\n");
    assert_eq!(
        p.events[1].at,
        tod(23, 59, 59, 0),
        "no night before the first"
    );
}

/// Under a `# date:` header, a named zone's offset is the one in force at each line's
/// time: summer time starts at 02:00 in Berlin on 2026-03-29.
#[test]
fn a_named_zone_places_each_time_only_line_at_its_own_offset() {
    let opts = ParseOptions {
        tz: crate::time::Zone::parse("Europe/Berlin").unwrap(),
        ..ParseOptions::default()
    };
    let text =
        "# date: 2026-03-29\n01:30:00  agent run r  started\n03:30:00  agent run r  crashed\n";
    let p = parse(&mut text.as_bytes(), 0, &opts).unwrap();
    let midnight = days_from_civil(2026, 3, 29).unwrap() * NANOS_PER_DAY;
    assert_eq!(p.events[0].at.0, midnight + tod(0, 30, 0, 0).0);
    assert_eq!(p.events[1].at.0, midnight + tod(1, 30, 0, 0).0);
}

/// In the hour Berlin's clocks go back over (2026-10-25 from 02:00), the lines from one
/// whose time goes back are the second pass, time-only ones under a `# date:` header too;
/// a settlement's time of day beside a line in the first pass is the pass not before it.
#[test]
fn lines_that_go_back_in_the_fold_are_its_second_pass() {
    let opts = ParseOptions {
        tz: crate::time::Zone::parse("Europe/Berlin").unwrap(),
        ..ParseOptions::default()
    };
    let text = "2026-10-25 02:59:55.501  refund rf_2  order A-2  4500p  settled 02:00:06.884\n\
                2026-10-25 02:00:07.088  refund rf_3  order A-2  4500p  settled 02:00:07.900\n\
                # date: 2026-10-25\n02:30:00  agent run r  started\n";
    let p = parse(&mut text.as_bytes(), 0, &opts).unwrap();
    let utc =
        |h, m, s, ms| days_from_civil(2026, 10, 25).unwrap() * NANOS_PER_DAY + tod(h, m, s, ms).0;
    let settled = |i: usize| match kinds(&p)[i] {
        EventKind::Effect(e) => e.state_at.map(|t| t.0),
        _ => panic!("an effect"),
    };
    assert_eq!(p.events[0].at.0, utc(0, 59, 55, 501));
    assert_eq!(
        settled(0),
        Some(utc(1, 0, 6, 884)),
        "seconds later, not a day"
    );
    assert_eq!(p.events[1].at.0, utc(1, 0, 7, 88));
    assert_eq!(settled(1), Some(utc(1, 0, 7, 900)));
    // A `# date:` header restarts the days, not the pass.
    assert_eq!(p.events[2].at.0, utc(1, 30, 0, 0));
    assert_eq!(p.stats.notes.len(), 1, "{:?}", p.stats.notes);
}

#[test]
fn run_and_step_tokens_override_the_current_call() {
    let p = run(
        "10:00:00.000  agent run r1  step 1  tool=t  args={}\n10:00:00.100  agent run r2  step 3  tool=t  args={}\n\
         10:00:00.120  POST https://x/v1/refunds  (attempt 1)  run=r1  step=1  Idempotency-Key: abc\n\
         10:00:00.130  POST https://x/v1/refunds  (attempt 1)\n10:00:01.000  201 Created  refund_id=rf_1  run=r1  step=1\n",
    );
    let k = kinds(&p);
    let EventKind::Attempt(a1) = k[2] else {
        panic!()
    };
    assert_eq!(
        a1.call,
        Some(CallRef {
            run: "r1".into(),
            step: 1,
            part: 0,
        })
    );
    assert_eq!(a1.key.as_deref(), Some("abc"));
    let EventKind::Attempt(a2) = k[3] else {
        panic!()
    };
    assert_eq!(
        a2.call,
        Some(CallRef {
            run: "r2".into(),
            step: 3,
            part: 0,
        })
    );
    let EventKind::Response(r) = k[4] else {
        panic!()
    };
    assert_eq!(
        r.call,
        Some(CallRef {
            run: "r1".into(),
            step: 1,
            part: 0,
        })
    );
}

#[test]
fn effects_states_and_amounts() {
    let p = run(
        "10:00:00  refund rf_7  order A-1  1250p  rejected amount_exceeds_capture\n\
         10:00:01  refund rf_1  order A-1  4500p  pending\n\
         10:00:02  charge ch_1  order A-2  amount_minor=1200  currency=eur  captured 2026-11-03T10:00:05Z  key=k1\n\
         23:59:59  payout po_1  order A-3  100p  settled 00:00:03\n",
    );
    let effects: Vec<&Effect> = p
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some(&**x),
            _ => None,
        })
        .collect();
    assert_eq!(effects.len(), 4);
    assert!(!effects[0].happened);
    assert!(
        effects[1].happened
            && effects[1].state.as_deref() == Some("pending")
            && effects[1].state_at.is_none()
    );
    assert_eq!(
        effects[2].amount,
        Some(Money::new(1200, Currency::parse("EUR").unwrap()))
    );
    assert_eq!(effects[2].key.as_deref(), Some("k1"));
    assert!(effects[2].state_at.is_some());
    assert_eq!(
        effects[3].state_at,
        Some(Timestamp(NANOS_PER_DAY + 3 * NANOS_PER_SEC))
    );
}

/// An amount written for people reads as `4500p` does; one written twice must agree, and a
/// sign of several currencies (unless a `currency=` token names one of them) is not
/// guessed at. A minus sign is kept, as `-4500p` keeps it.
#[test]
fn effect_amounts_written_for_people() {
    let p = run(
        "10:00:00  refund rf_1  order A-1  £45.00  settled 10:00:05\n\
         10:00:01  refund rf_2  order A-1  45.00 GBP  4500p  settled 10:00:06\n\
         10:00:02  refund rf_3  order A-1  45.00 GBP  52.61 EUR  settled 10:00:07\n\
         10:00:03  refund rf_4  order A-1  4500p  €52.00\n\
         10:00:04  refund rf_5  order A-1  $45.00\n\
         10:00:05  refund rf_6  order A-1  -£45.00\n\
         10:00:06  refund rf_7  order A-1  $45.00  settled 10:00:08  currency=USD\n\
         10:00:07  refund rf_8  order A-1  £45.00  currency=EUR\n",
    );
    let amounts: Vec<Option<Money>> = p
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some(x.amount),
            _ => None,
        })
        .collect();
    let gbp = |minor| Some(Money::new(minor, Currency::GBP));
    let usd = Some(Money::new(4500, Currency::parse("USD").unwrap()));
    assert_eq!(amounts, [gbp(4500), gbp(4500), gbp(-4500), usd]);
    let lines: Vec<u32> = p.stats.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [3, 4, 5, 8], "{:?}", p.stats.problems);
    assert!(p.stats.problems[0].reason.contains("disagree"));
}

#[test]
fn responses_failures_and_step_ends() {
    let p = run(
        "10:00:00  agent run r  step 2  tool=issue_refund  args={\"a\":1}\n10:00:01  POST https://x/v1/refunds  (attempt 1)\n\
         10:00:02  409 Conflict\n10:00:03  agent run r  step 2  failed  error=409 Conflict\n\
         10:00:04  requests.exceptions.ConnectionError: Failed to establish a new connection: [Errno 111] Connection refused\n\
         10:00:05  200 OK  refund_id=rf_9  replayed=true\n",
    );
    let k = kinds(&p);
    let EventKind::Response(r) = k[2] else {
        panic!()
    };
    assert_eq!(
        (r.status, r.class, r.message.as_str()),
        (409, FailureClass::Conflict, "Conflict")
    );
    let EventKind::StepEnd(s) = k[3] else {
        panic!()
    };
    assert!(!s.ok);
    assert_eq!(s.error.as_deref(), Some("409 Conflict"));
    let EventKind::Failure(f) = k[4] else {
        panic!()
    };
    assert_eq!(f.class, FailureClass::Safe);
    let EventKind::Response(r) = k[5] else {
        panic!()
    };
    assert!(r.replayed);
}

/// `console.log(stamp, 'agent run', run, 'step', step, ...)`: SPEC §3.1's lines with one
/// blank between fields, and Node's `<ref *1>` before an error that refers to itself, read
/// as their two-blank spelling is.
#[test]
fn console_logs_one_blank_lines() {
    let p = run(concat!(
        "2026-12-06T00:38:51.296Z agent run r4 step 4 tool=issue_refund args={\"order_id\":\"A-1\",\"amount_minor\":4500,\"currency\":\"GBP\"}\n",
        "2026-12-06T00:38:51.456Z POST http://127.0.0.1:42385/v1/refunds (attempt 1) \n",
        "2026-12-06T00:38:52.482Z <ref *1> AxiosError: timeout of 1000ms exceeded\n",
        "2026-12-06T00:38:52.690Z POST http://127.0.0.1:42385/v1/refunds (attempt 2) \n",
        "2026-12-06T00:38:52.710Z 201 Created refund_id=re_86a1db284821\n",
        "2026-12-06T00:38:52.711Z agent run r4 step 4 ok\n",
    ));
    assert_eq!(
        (p.stats.events, p.stats.skipped),
        (6, 0),
        "{:?}",
        p.stats.problems
    );
    let k = kinds(&p);
    let EventKind::ToolCall(t) = k[0] else {
        panic!("{k:?}")
    };
    assert_eq!((t.call.run.as_str(), t.call.step), ("r4", 4));
    let EventKind::Failure(f) = k[2] else {
        panic!("{k:?}")
    };
    assert_eq!(
        (f.error.as_str(), f.class),
        ("AxiosError", FailureClass::Ambiguous)
    );
    let EventKind::Response(r) = k[4] else {
        panic!("{k:?}")
    };
    assert_eq!(
        (r.status, r.effect_id.as_deref()),
        (201, Some("re_86a1db284821"))
    );
}

/// Node's `fetch` fails every request as `TypeError: fetch failed`; the `[cause]:` in the
/// error's dump says what failed. Without one before the next stamped line, the wrapper
/// (ambiguous) stands.
#[test]
fn fetch_failed_is_classed_by_its_cause() {
    let classes = |text: &str| -> Vec<FailureClass> {
        (kinds(&run(text)).into_iter())
            .filter_map(|k| match k {
                EventKind::Failure(f) => Some(f.class),
                _ => None,
            })
            .collect()
    };
    let refused = "10:00:00  POST https://x/v1/refunds  (attempt 1)\n\
        10:00:01  TypeError: fetch failed\n    at node:internal/deps/undici/undici:14976:13\n  \
        [cause]: Error: connect ECONNREFUSED 127.0.0.1:47433\n      at TCPConnectWrap.afterConnect\n}\n";
    assert_eq!(classes(refused), [FailureClass::Safe]);
    let bare = "10:00:00  POST https://x/v1/refunds  (attempt 1)\n10:00:01  TypeError: fetch failed\n\
        10:00:02  POST https://x/v1/refunds  (attempt 2)\n  [cause]: Error: connect ECONNREFUSED x\n";
    assert_eq!(classes(bare), [FailureClass::Ambiguous]);
}

/// `console.error("refund attempt 1 failed:", err)`: the exception after the program's
/// words about a failure is the request's failure; words that say nothing failed, or a
/// class not named as an error, are no failure.
#[test]
fn an_exception_after_words_about_a_failure() {
    let p = run(
        "10:00:00  agent run r  step 2  tool=issue_refund  args={\"a\":1}\n10:00:01  POST https://x/v1/refunds  (attempt 1)\n\
         10:00:02  refund attempt 1 failed: RequestError: Timeout awaiting 'request' for 1000ms\n\
         10:00:03  POST https://x/v1/refunds  (attempt 2)\n\
         10:00:04  refund request error: ConnectionRefusedError: [Errno 111] Connection refused\n\
         10:00:04  receipt email failed: SMTPException: 421 try later\n\
         10:00:04  Retrying POST https://x/v1/refunds (1 retries left): Faraday::TimeoutError: Net::ReadTimeout with #<Socket:(closed)>\n\
         10:00:05  refund created: RefundRecord: re_1\n\
         10:00:06  refund failed: see the dashboard: it is down\n\
         10:00:07  sync done: IndexError: nothing to do\n",
    );
    let failures: Vec<(&str, FailureClass)> = (kinds(&p).into_iter())
        .filter_map(|k| match k {
            EventKind::Failure(f) => Some((f.error.as_str(), f.class)),
            _ => None,
        })
        .collect();
    assert_eq!(
        failures,
        [
            ("RequestError", FailureClass::Ambiguous),
            ("ConnectionRefusedError", FailureClass::Safe),
            ("Faraday::TimeoutError", FailureClass::Ambiguous)
        ]
    );
}

/// Words that name the current call's tool say whose failure it is (`issue_refund failed`);
/// the same words after another tool's call, or another thing's failure, do not.
#[test]
fn an_exception_after_the_tools_name() {
    let failures = |log: &str| -> Vec<(String, FailureClass)> {
        (kinds(&run(log)).into_iter())
            .filter_map(|k| match k {
                EventKind::Failure(f) => Some((f.error.to_string(), f.class)),
                _ => None,
            })
            .collect()
    };
    let failed = "10:00:11  issue_refund failed: ReadTimeout: The read operation timed out\n";
    let refund = "10:00:00  agent run r  step 2  tool=issue_refund  args={\"a\":1}\n\
                  10:00:01  POST https://x/v1/refunds  (attempt 1)\n";
    assert_eq!(
        failures(&format!("{refund}{failed}")),
        [("ReadTimeout".to_string(), FailureClass::Ambiguous)]
    );
    let lookup = "10:00:00  agent run r  step 2  tool=lookup_order  args={\"a\":1}\n\
                  10:00:01  GET https://x/v1/orders/1  (attempt 1)\n";
    assert_eq!(failures(&format!("{lookup}{failed}")), []);
    let email = "10:00:11  receipt email failed: SMTPException: 421 try later\n";
    assert_eq!(failures(&format!("{refund}{email}")), []);
    // Node's client's message without its class (`${err.message}`).
    let axios = "10:00:11  refund attempt 1 failed: timeout of 1000ms exceeded\n";
    assert_eq!(
        failures(&format!("{refund}{axios}")),
        [(String::new(), FailureClass::Ambiguous)]
    );
    let other = "10:00:11  receipt email failed: timeout of 1000ms exceeded\n";
    assert_eq!(failures(&format!("{refund}{other}")), []);
    // The tool's name must be the failure's subject, whole; a retry callback's words must
    // name a request.
    let short = "10:00:00  agent run r  step 2  tool=refund  args={\"a\":1}\n\
                 10:00:01  POST https://x/v1/refunds  (attempt 1)\n";
    let receipt = "10:00:11  refund receipt email failed: TimeoutError: timed out\n";
    assert_eq!(failures(&format!("{short}{receipt}")), []);
    let retrying = "10:00:11  retrying receipt email: ConnectionResetError: reset\n";
    assert_eq!(failures(&format!("{refund}{retrying}")), []);
}

#[test]
fn broken_lines_are_skipped_with_a_reason_and_others_ignored() {
    let p = run(
        "14:02:xx  agent run\n10:00:00  healthcheck ok  latency_ms=9\n10:00:01  agent run r  step 1  tool=t  args={nope\n\
         10:00:02  POST https://x/v1/refunds  (attempt x)\n\n# a comment\n10:00:03  agent run r  step x  ok\n",
    );
    assert_eq!(p.stats.lines, 7);
    assert_eq!(p.stats.skipped, 4, "{:?}", p.stats.problems);
    assert_eq!(p.stats.ignored, 3);
    assert_eq!(p.stats.events, 0);
    let lines: Vec<u32> = p.stats.problems.iter().map(|x| x.line).collect();
    assert_eq!(lines, vec![1, 3, 4, 7]);
    assert!(p.stats.problems[0].reason.contains("timestamp"));
    assert!(p.stats.problems[1].reason.contains("not JSON"));
    assert!(p.stats.problems[2].reason.contains("attempt"));
}

/// A web server's access line (werkzeug's, nginx's) has its stamp in brackets after the
/// client's address: understood and ignored, not skipped as a line with no timestamp. A
/// line of the shape whose stamp is no time is still skipped.
#[test]
fn access_lines_are_ignored_and_a_broken_one_skipped() {
    let p = run(concat!(
        "[2026-12-07 07:32:50,932] INFO in service_flask: Refund re_1 created for order A-1: 45.00 GBP\n",
        "127.0.0.1 - - [07/Dec/2026 07:32:51] \"POST /v1/refunds HTTP/1.1\" 201 -\n",
        "203.0.113.5 - - [07/Dec/2026:07:32:52 +0000] \"POST /v1/refunds HTTP/1.1\" 201 127 \"-\" \"curl/8\"\n",
        "127.0.0.1 - - [07/Dec/2026 27:32:51] \"POST /v1/refunds HTTP/1.1\" 201 -\n",
    ));
    assert_counted(&p, (1, 2, 1), 4);
}

/// The parse's (events, ignored, skipped) lines, and the line of its first skipped one.
fn assert_counted(p: &Parsed, counts: (u64, u64, u64), first_skipped: u32) {
    let s = &p.stats;
    assert_eq!((s.events, s.ignored, s.skipped), counts, "{:?}", s.problems);
    assert_eq!(s.problems[0].line, first_skipped);
}

/// A web framework's lines about itself (Flask's banner, uvicorn's start-up, access and
/// shutdown lines) have no timestamp but are known word for word: ignored. Another line
/// with none before the log (a program's own start-up words) is still skipped: it is not
/// known.
#[test]
fn a_frameworks_own_lines_are_ignored_and_unknown_ones_skipped() {
    let p = run(concat!(
        " * Serving Flask app 'payments'\n",
        "WARNING: This is a development server. Do not use it in a production deployment. Use a production WSGI server instead.\n",
        " * Running on http://127.0.0.1:5001\n",
        "Press CTRL+C to quit\n",
        "INFO:     Started server process [14335]\n",
        "Loading settings from ./config.yml\n",
        "2026-12-07 07:36:54,477 INFO payments: refund created refund_id=re_1 order_id=A-1 amount_minor=4500 currency=GBP\n",
        "INFO:     127.0.0.1:55250 - \"POST /v1/refunds HTTP/1.1\" 201 Created\n",
        "INFO:     Shutting down\n",
    ));
    assert_counted(&p, (1, 7, 1), 6);
}

/// A bare request line followed by the agent's own numbered line for it is one attempt.
#[test]
fn a_numbered_line_after_a_bare_one_repeats_it() {
    let p = run(
        "10:00:00  agent run r  step 1  tool=issue_refund  args={\"order\":\"A-1\"}\n\
         10:00:00.100  POST https://x/v1/refunds\n\
         10:00:00.101  POST https://x/v1/refunds  (attempt 1)\n\
         10:00:10.000  urllib3.exceptions.ReadTimeoutError: read timeout=10\n\
         10:00:10.100  POST https://x/v1/refunds\n\
         10:00:10.101  POST https://x/v1/refunds  (attempt 2)\n",
    );
    let numbers: Vec<u32> = (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Attempt(a) => Some(a.number),
            _ => None,
        })
        .collect();
    assert_eq!(numbers, [1, 2]);
    assert_eq!((p.stats.events, p.stats.ignored), (4, 2));
}

/// Celery: a task received while another runs waits for the pool; the client lines that
/// follow are the running task's.
#[test]
fn a_celery_task_received_while_another_runs_takes_no_client_lines() {
    let p = run(
        "[2026-12-06 08:42:57,604: INFO/MainProcess] Task tasks.issue_refund[a1] received\n\
         [2026-12-06 08:42:57,700: INFO/MainProcess] Task tasks.send_receipt[b2] received\n\
         [2026-12-06 08:42:58,700: DEBUG/ForkPoolWorker-1] http://x:80 \"POST /v1/refunds HTTP/1.1\" 201 61\n\
         [2026-12-06 08:42:58,701: INFO/ForkPoolWorker-1] Task tasks.issue_refund[a1] succeeded in 1.1s: None\n",
    );
    let runs: Vec<(&str, &str)> = (p.events.iter())
        .map(|e| match &e.kind {
            EventKind::ToolCall(t) => ("tool_call", t.call.run.as_str()),
            EventKind::Attempt(a) => ("attempt", a.call.as_ref().map_or("", |c| c.run.as_str())),
            EventKind::Response(r) => ("response", r.call.as_ref().map_or("", |c| c.run.as_str())),
            EventKind::StepEnd(s) => ("step_end", s.call.run.as_str()),
            _ => ("other", ""),
        })
        .collect();
    assert_eq!(
        runs,
        [
            ("tool_call", "a1"),
            ("tool_call", "b2"),
            ("attempt", "a1"),
            ("response", "a1"),
            ("step_end", "a1")
        ]
    );
}

/// A request written without its number (go-retryablehttp's `[DEBUG] POST http://...`) is
/// the open call's next attempt; sent again after a wait, the next after that, at the
/// wait's end.
#[test]
fn a_request_without_its_number_is_the_calls_next() {
    let p = run(
        "10:00:00  agent run r  step 1  tool=issue_refund  args={\"order\":\"A-1\"}\n         10:00:00.100  [DEBUG] POST https://x/v1/refunds\n         10:00:01.100  [ERR] POST https://x/v1/refunds request failed: Post \"https://x/v1/refunds\": context deadline exceeded\n         10:00:01.100  [DEBUG] POST https://x/v1/refunds: retrying in 500ms (2 left)\n         10:00:01.700  201 Created  refund_id=re_1\n",
    );
    assert_eq!(p.stats.skipped, 0, "{:?}", p.stats.problems);
    let shape: Vec<(String, i64)> = (p.events.iter().skip(1))
        .map(|e| {
            let ms = (e.at.0 % (60 * NANOS_PER_SEC)) / 1_000_000;
            let what = match &e.kind {
                EventKind::Attempt(a) => format!("attempt {}", a.number),
                EventKind::Failure(f) => format!("failure {:?} {:?}", f.attempt, f.class),
                EventKind::Response(r) => format!("response {:?} {}", r.attempt, r.status),
                other => format!("{other:?}"),
            };
            (what, ms)
        })
        .collect();
    let at = |what: &str, ms: i64| (what.to_string(), ms);
    assert_eq!(
        shape,
        [
            at("attempt 1", 100),
            at("failure Some(1) Ambiguous", 1100),
            at("attempt 2", 1600),
            at("response Some(2) 201", 1700),
        ]
    );
}

#[test]
fn full_timestamps_and_invalid_utf8() {
    let mut bytes = b"2026-11-03T14:02:11.402Z  agent run r\xff  started\n".to_vec();
    bytes.extend_from_slice(b"2026-11-03 14:02:12+01:00  agent run s  started\r\n");
    let p = parse(&mut &bytes[..], 0, &ParseOptions::default()).unwrap();
    assert_eq!(p.stats.events, 2);
    let EventKind::Run(r) = &p.events[0].kind else {
        panic!()
    };
    // A line that is no UTF-8 reads as Windows-1252: `\xff` is `ÿ`, not U+FFFD, and noted.
    assert_eq!(r.run, "rÿ");
    assert!(p.stats.notes[0].starts_with("1 line is not UTF-8 (the first: line 1)"));
    assert_eq!(
        p.events[1].at.0 - p.events[0].at.0,
        -3600 * NANOS_PER_SEC + 598 * NANOS_PER_MILLI
    );
}

fn ts(date: &str, h: i64, m: i64, s: i64, ms: i64) -> Timestamp {
    let days = crate::time::parse_date(date.as_bytes()).unwrap();
    Timestamp(days * NANOS_PER_DAY + tod(h, m, s, ms).0)
}

fn effects(p: &Parsed) -> Vec<&Effect> {
    p.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some(&**x),
            _ => None,
        })
        .collect()
}

fn reasons(p: &Parsed) -> Vec<(u32, String)> {
    p.stats
        .problems
        .iter()
        .map(|x| (x.line, x.reason.clone()))
        .collect()
}

#[test]
fn the_incident_in_full() {
    let p = run(INCIDENT);
    assert_eq!(p.events.len(), 8, "6 client events and 2 effects");
    let call = Some(CallRef {
        run: "7f3a".into(),
        step: 4,
        part: 0,
    });
    let k = kinds(&p);
    let EventKind::Attempt(a2) = k[3] else {
        panic!("{:?}", k[3])
    };
    assert_eq!((a2.number, a2.key.as_deref()), (2, None));
    assert_eq!(
        a2.url.as_deref(),
        Some("https://payments.internal/v1/refunds")
    );
    for e in &p.events[..6] {
        assert_eq!(e.kind.call(), call.as_ref(), "{:?}", e.kind);
    }
    let at: Vec<Timestamp> = p.events.iter().map(|e| e.at).collect();
    assert_eq!(
        at,
        vec![
            tod(14, 2, 11, 402),
            tod(14, 2, 11, 418),
            tod(14, 2, 21, 418),
            tod(14, 2, 21, 930),
            tod(14, 2, 23, 107),
            tod(14, 2, 23, 109),
            tod(14, 2, 11, 501),
            tod(14, 2, 23, 88),
        ]
    );
    let lines: Vec<u32> = p.events.iter().map(|e| e.loc.line).collect();
    assert_eq!(lines, vec![1, 2, 3, 4, 5, 6, 8, 9]);
    assert!(at.iter().all(|t| t.is_dateless()));
    let e = effects(&p);
    assert_eq!(
        (e[1].id.as_str(), e[1].state_at, e[1].key.as_deref()),
        ("rf_9KQ2", Some(tod(14, 2, 34, 10)), None)
    );
    assert!(e.iter().all(|e| e.happened));
}

#[test]
fn the_midnight_fixture_with_a_date() {
    let text = include_str!("../../../fixtures/midnight-rollover/trace.log");
    let opts = ParseOptions {
        date: chrono::NaiveDate::from_ymd_opt(2026, 11, 5),
        ..ParseOptions::default()
    };
    let p = parse(&mut text.as_bytes(), 0, &opts).unwrap();
    assert_eq!((p.stats.events, p.stats.skipped), (8, 0));
    assert_eq!(p.events[0].at, ts("2026-11-05", 23, 59, 58, 0));
    assert_eq!(p.events[2].at, ts("2026-11-06", 0, 0, 8, 100));
    let e = effects(&p);
    assert_eq!(p.events[6].at, ts("2026-11-05", 23, 59, 58, 300));
    assert_eq!(e[0].state_at, Some(ts("2026-11-06", 0, 0, 4, 0)));
    assert_eq!(p.events[7].at, ts("2026-11-06", 0, 0, 8, 900));
    assert_eq!(e[1].state_at, Some(ts("2026-11-06", 0, 0, 15, 0)));
}

#[test]
fn a_date_header_wins_over_the_flag_and_resets_the_day() {
    let opts = ParseOptions {
        date: chrono::NaiveDate::from_ymd_opt(2026, 1, 1),
        ..ParseOptions::default()
    };
    let p = parse(
        &mut &b"23:00:00  agent run r  started\n01:00:00  agent run r  crashed\n# Date: 2026-11-03\n01:00:00  agent run r  resumed\n"[..],
        0,
        &opts,
    )
    .unwrap();
    let at: Vec<Timestamp> = p.events.iter().map(|e| e.at).collect();
    assert_eq!(
        at,
        vec![
            ts("2026-01-01", 23, 0, 0, 0),
            ts("2026-01-02", 1, 0, 0, 0),
            ts("2026-11-03", 1, 0, 0, 0)
        ]
    );
}

#[test]
fn a_bad_date_header_is_skipped_not_guessed() {
    let p = run("# date: 2026-13-01\n# date: 9999-12-31\n# date: tomorrow\n# dated comment\n");
    assert_eq!(
        (p.stats.skipped, p.stats.ignored),
        (3, 1),
        "{:?}",
        reasons(&p)
    );
    assert!(p.stats.problems[0].reason.contains("# date:"));
}

#[test]
fn tz_applies_to_dated_lines_and_settlements() {
    let opts = ParseOptions {
        date: chrono::NaiveDate::from_ymd_opt(2026, 11, 3),
        tz: crate::time::Zone::Fixed(3600),
        ..ParseOptions::default()
    };
    let p = parse(
        &mut &b"00:30:00  refund rf_1  order A  100p  settled 00:20:00\n00:40:00  refund rf_2  order A  100p  settled 2026-11-03T00:50:00\n"[..],
        0,
        &opts,
    )
    .unwrap();
    let e = effects(&p);
    // 00:30 at +01:00 is 23:30 UTC the day before; the settlement, earlier in the day, is
    // the next local day.
    assert_eq!(p.events[0].at, ts("2026-11-02", 23, 30, 0, 0));
    assert_eq!(e[0].state_at, Some(ts("2026-11-03", 23, 20, 0, 0)));
    // A full settlement without an offset is read at --tz too.
    assert_eq!(e[1].state_at, Some(ts("2026-11-02", 23, 50, 0, 0)));
    // Undated time-only lines stay on 1970-01-01, unshifted.
    let undated = ParseOptions {
        tz: crate::time::Zone::Fixed(3600),
        ..ParseOptions::default()
    };
    let p = parse(&mut &b"00:30:00  agent run r  started\n"[..], 0, &undated).unwrap();
    assert_eq!(p.events[0].at, tod(0, 30, 0, 0));
}

#[test]
fn malformed_fields_of_recognised_shapes_are_skipped() {
    let p = run("10:00:00  agent run r  step 1  tool=issue_refund\n\
         10:00:01  agent run r  step 1  tool=  args={}\n\
         10:00:02  refund rf_1  order A  amount_minor=100\n\
         10:00:03  refund rf_1  order A  amount_p=lots\n\
         10:00:04  201 Created  amount_minor=5  currency=euro\n\
         10:00:05  201 Created  step=four\n\
         10:00:06  urllib3.exceptions.ReadTimeoutError: read timeout=10  step=x\n\
         10:00:07  agent run\n\
         10:00:08  agent run r  step 1  tool=t  args=[1,2]\n");
    let r = reasons(&p);
    assert_eq!(p.stats.skipped, 8, "{r:?}");
    assert_eq!(p.stats.events, 1);
    assert!(r[0].1.contains("args="), "{r:?}");
    assert!(r[2].1.contains("currency"), "{r:?}");
    assert!(r[3].1.contains("amount_p=lots"), "{r:?}");
    assert!(r[5].1.contains("step="), "{r:?}");
}

#[test]
fn general_amounts_and_keys() {
    let p = run("10:00:00  agent run r  step 1  tool=t  args={\"a\":1}\n\
         10:00:01  POST https://x/v1/charges  (attempt 1)  idempotency_key=k-1\n\
         10:00:02  201 Created  charge_id=ch_1  amount_minor=1200  currency=EUR\n\
         10:00:03  charge ch_1  amount_minor=1200  currency=jpy  captured 2026-11-03T10:00:05+09:00  idempotency_key=k-1\n");
    let k = kinds(&p);
    let EventKind::Attempt(a) = k[1] else {
        panic!()
    };
    assert_eq!(a.key.as_deref(), Some("k-1"));
    let EventKind::Response(r) = k[2] else {
        panic!()
    };
    let eur = Currency::parse("EUR").unwrap();
    assert_eq!(
        (r.effect_id.as_deref(), r.amount, r.attempt),
        (Some("ch_1"), Some(Money::new(1200, eur)), Some(1))
    );
    let e = effects(&p);
    assert_eq!(
        e[0].amount,
        Some(Money::new(1200, Currency::parse("JPY").unwrap()))
    );
    assert_eq!(e[0].order, None, "an amount alone makes an effect");
    assert_eq!(e[0].key.as_deref(), Some("k-1"));
    assert_eq!(e[0].state_at, Some(ts("2026-11-03", 1, 0, 5, 0)));
}

#[test]
fn failures_keep_their_whole_message() {
    let p = run("10:00:00  agent run r  step 1  tool=t  args={}\n\
         10:00:01  POST https://x/v1/refunds  (attempt 3)\n\
         10:00:02  requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='x', port=443): Read timed out.  (read timeout=10)\n\
         10:00:03  TimeoutError\n\
         10:00:04  a.: x\n\
         10:00:05  .B: x\n\
         10:00:06  requests.exceptions.ConnectionError: ('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))\n");
    let k = kinds(&p);
    let EventKind::Failure(f) = k[2] else {
        panic!("{:?}", k[2])
    };
    assert_eq!(f.attempt, Some(3));
    assert!(
        f.message.ends_with("Read timed out.  (read timeout=10)"),
        "{}",
        f.message
    );
    assert_eq!(f.class, FailureClass::Ambiguous);
    let EventKind::Failure(f) = k[3] else {
        panic!("{:?}", k[3])
    };
    assert_eq!((f.error.as_str(), f.message.as_str()), ("TimeoutError", ""));
    assert_eq!(
        p.stats.ignored, 2,
        "`a.: x` and `.B: x` are no exception lines"
    );
    let EventKind::Failure(f) = k[4] else {
        panic!("{:?}", k[4])
    };
    assert_eq!(f.class, FailureClass::Ambiguous);
}

#[test]
fn lifecycle_step_ends_and_dispatch_restarts_attempts() {
    let p = run("10:00:00  agent run r  started\n\
         10:00:01  agent run r  step 1  tool=t  args={}\n\
         10:00:02  POST https://x/v1/refunds  (attempt 2)\n\
         10:00:03  agent run r  crashed\n\
         10:00:04  agent run r  resumed\n\
         10:00:05  agent run r  step 1  tool=t  args={}\n\
         10:00:06  503 Service Unavailable\n\
         10:00:07  agent run r  step 1  failed\n\
         10:00:08  agent run r  step 1  thinking\n");
    let k = kinds(&p);
    let lifecycle: Vec<Lifecycle> = k
        .iter()
        .filter_map(|e| match e {
            EventKind::Run(r) => Some(r.what),
            _ => None,
        })
        .collect();
    assert_eq!(
        lifecycle,
        vec![Lifecycle::Started, Lifecycle::Crashed, Lifecycle::Resumed]
    );
    let EventKind::Response(r) = k[6] else {
        panic!("{:?}", k[6])
    };
    assert_eq!(
        (r.attempt, r.class),
        (None, FailureClass::Ambiguous),
        "a new dispatch"
    );
    let EventKind::StepEnd(s) = k[7] else {
        panic!("{:?}", k[7])
    };
    assert_eq!((s.ok, s.error.as_deref()), (false, None));
    assert_eq!((p.stats.events, p.stats.ignored), (8, 1));
}

#[test]
fn endless_rollovers_saturate_instead_of_overflowing() {
    // Every second line is a new day: ~110,000 days overflow i64 nanoseconds.
    let text = "23:00:00  agent run r  started\n01:00:00  agent run r  started\n".repeat(120_000);
    let p = run(&text);
    assert_eq!(p.stats.events, 240_000);
    assert_eq!(p.events.last().unwrap().at, Timestamp(i64::MAX));
}

#[test]
fn inputs_that_once_panicked_are_accounted_for() {
    for line in [
        "10:00:00  a.: x",
        "9999-12-31T00:00:00Z  agent run r  started",
        "# date: 9999-12-31\n10:00:00  agent run r  started",
        "10:00:00  refund rf_1  order A  settled 9999-12-31T00:00:00Z",
        "2262-04-11T23:47:16.854775807-23:59  agent run r  started",
        "10:00:00  refund rf_1  order A  99999999999999999999p",
        "10:00:00  POST https://x  (attempt 99999999999)",
    ] {
        let p = run(line);
        assert_eq!(
            p.stats.lines,
            p.stats.events + p.stats.ignored + p.stats.skipped,
            "{line}"
        );
    }
}

/// What `cargo fuzz run parse_text` found: a line read ahead of an idle call, ending in
/// thirteen digits, was read as a step number (overflowing a `u32` in a debug build), when
/// idle calls are dropped as they are read.
#[test]
fn a_fuzzed_input_with_a_long_number_is_accounted_for() {
    let bytes = include_bytes!("testdata/fuzz-step-overflow.log");
    crate::ingest::selfcheck::check_filter_agrees(
        crate::ingest::Format::Text,
        bytes,
        &ParseOptions::default(),
    );
}

/// What `cargo fuzz run parse_text` found next: an idle call's tool line held, then a
/// Celery pool process's header line (which moves the lines that follow to its task),
/// then a request. The held call was replayed after the pool's line had moved on, so its
/// tool call took the request back: the request was the idle call's with idle calls
/// dropped and the pool task's without.
#[test]
fn a_pool_line_after_a_held_call_reads_alike_with_and_without_dropping_idle_calls() {
    let bytes = include_bytes!("testdata/fuzz-celery-pool-after-idle-call.log");
    crate::ingest::selfcheck::check_filter_agrees(
        crate::ingest::Format::Text,
        bytes,
        &ParseOptions::default(),
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn any_bytes_are_accounted_for(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let p = parse(&mut &bytes[..], 0, &ParseOptions::default()).unwrap();
            prop_assert_eq!(p.stats.lines, p.stats.events + p.stats.ignored + p.stats.skipped);
        }

        #[test]
        fn trace_like_lines_are_accounted_for(lines in proptest::collection::vec(
            prop_oneof![
                Just("14:02:11.402  agent run 7f3a  step 4  tool=issue_refund  args={\"order\":\"A\"}".to_string()),
                Just("14:02:11.418  POST https://p/v1/refunds  (attempt 1)".to_string()),
                Just("--- payments ---".to_string()),
                "[ -~]{0,40}",
                "[0-9:. a-z=p_]{0,30}",
            ], 0..30)) {
            let text = lines.join("\n");
            let p = parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap();
            prop_assert_eq!(p.stats.lines, p.stats.events + p.stats.ignored + p.stats.skipped);
        }

        /// Lines that start like a timestamp and go on with the characters the shapes are
        /// made of, so that the number, date and field parsers see their edge cases.
        #[test]
        fn shaped_lines_never_panic(lines in proptest::collection::vec(
            (
                prop_oneof![
                    Just(""), Just("10:00:00"), Just("23:59:59.999"), Just("9999-12-31T"),
                    Just("2026-11-03T14:02:23"), Just("2262-04-11 23:47:16"), Just("# date: "),
                    Just("---"),
                ],
                "[0-9:.TZ+ _=a-zA-Z(){}\"p-]{0,50}",
            ),
            0..20,
        )) {
            let text: Vec<String> = lines.iter().map(|(a, b)| format!("{a}{b}")).collect();
            let text = text.join("\n");
            let opts = ParseOptions {
                date: chrono::NaiveDate::from_ymd_opt(2026, 11, 3),
                ..ParseOptions::default()
            };
            let p = parse(&mut text.as_bytes(), 0, &opts).unwrap();
            prop_assert_eq!(p.stats.lines, p.stats.events + p.stats.ignored + p.stats.skipped);
            prop_assert_eq!(p.events.len() as u64, p.stats.events);
        }
    }
}

#[test]
fn step_and_attempt_numbers_read_as_the_standard_library_reads_them() {
    for s in [
        "0",
        "7",
        "07",
        "123456789",
        "1234567890",
        "",
        "1a",
        "-1",
        "+1",
        " 1",
        "٣",
        "999999999",
    ] {
        let std = (s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten();
        assert_eq!(parse_u32(s.as_bytes()), std, "{s:?}");
    }
}

/// A reader that gives one line per read: nothing is ever ahead of the line being read.
struct LineAtATime<'a>(&'a [u8]);

impl Read for LineAtATime<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let line = memchr::memchr(b'\n', self.0).map_or(self.0.len(), |p| p + 1);
        let n = line.min(buf.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// Calls of every shape near the usual one: plain lookups and emails (settled ahead),
/// refunds, retries, failures, keys, comments, blank lines, sections, time-only stamps
/// in the middle of a call or on its tool call, a step's end for another step, and lines
/// the reader trims (a carriage return, a NUL, a leading blank, a tab after the time) or
/// skips (no blank after the time, a time alone, a line cut inside its time).
fn varied_trace() -> String {
    use std::fmt::Write;
    let mut t = String::from("# date: 2026-11-01\n");
    for i in 0..240u32 {
        let (run, step) = (format!("r{}", i / 4), i % 4 + 1);
        let at = |k: u32| format!("2026-11-01T10:{:02}:{:02}.{:03}Z", i / 60 % 60, i % 60, k);
        let (get, post) = (
            "GET https://orders.internal/v1/orders",
            "POST https://mail.internal/v1/emails",
        );
        let (tool, request) = match i % 3 {
            0 => ("lookup_order", get),
            1 => ("send_email", post),
            _ => ("issue_refund", "POST https://pay.internal/v1/refunds"),
        };
        let call = format!("agent run {run}  step {step}");
        let mut lines = vec![
            format!(
                "{}  {call}  tool={tool}  args={{\"order\":\"A-{i}\"}}",
                at(0)
            ),
            format!("{}  {request}  (attempt 1)", at(1)),
            format!("{}  200 OK", at(2)),
            format!("{}  {call}  ok", at(3)),
        ];
        match i % 23 {
            1 => lines.insert(2, format!("{}  {request}  (attempt 2)", at(1))),
            2 => lines[2] = format!("{}  500 Internal Server Error", at(2)),
            3 => lines.insert(2, "# a note".into()),
            4 => lines.insert(1, String::new()),
            5 => lines[1] = format!("10:00:{:02}.001  {request}  (attempt 1)", i % 60),
            6 => lines[1] = format!("{}  {request}  (attempt 1)  idempotency_key=k{i}", at(1)),
            7 => lines[3] = format!("{}  agent run {run}  step {}  ok", at(3), step + 1),
            8 => lines.insert(0, format!("{}  agent run {run}  started", at(0))),
            9 => lines.insert(3, "--- payments".into()),
            10 => lines.truncate(3),
            11 => lines[2] = format!("{}  201 Created  refund_id=rf_{i}", at(2)),
            12 => lines[0] = lines[0].replacen("2026-11-01T", "", 1).replacen('Z', "", 1),
            13 => lines[1].push('\r'),
            14 => lines[2].push('\0'),
            15 => lines[1].insert(0, ' '),
            16 => lines[3] = lines[3].replacen("Z  ", "Z\t", 1),
            17 => lines[2] = lines[2].replacen("Z  ", "Z", 1),
            18 => lines[2] = at(2),
            19 => lines[1].truncate(15),
            // Lines naming their call, as logs of concurrent runs write them: this call,
            // another step, the step alone.
            20 => {
                lines[1].push_str(&format!("  run={run}  step={step}"));
                lines[2].push_str(&format!("  run={run}  step={step}"));
            }
            21 => lines[2].push_str(&format!("  run={run}  step={}", step + 1)),
            22 => lines[1].push_str(&format!("  step={step}")),
            _ => {}
        }
        for l in lines {
            let _ = writeln!(t, "{l}");
        }
    }
    t
}

/// A Windows-1252 log (a French service's `200 R\xE9ussi`) read whole, with lines ahead,
/// reads as it does a line at a time: the lines ahead are recoded as the line being read
/// is, and counted in the input's note. (They were given as their bytes: an idle call was
/// settled from them, and its answer was missing from the note.)
#[test]
fn windows_1252_lines_settled_ahead_read_as_line_by_line() {
    let trace = varied_trace().into_bytes();
    let mut latin = Vec::new();
    let mut rest = &trace[..];
    while let Some(at) = memchr::memmem::find(rest, b"200 OK") {
        latin.extend_from_slice(&rest[..at]);
        latin.extend_from_slice(b"200 R\xE9ussi");
        rest = &rest[at + 6..];
    }
    latin.extend_from_slice(rest);
    let opts = filtering();
    let whole = parse_input(&mut &latin[..], 0, &opts, true)
        .unwrap()
        .finish();
    let by_line = parse_input(&mut LineAtATime(&latin), 0, &opts, true);
    let by_line = by_line.unwrap().finish();
    assert!(whole.dropped.calls > 20, "{:?}", whole.dropped);
    assert!(whole.stats.notes.iter().any(|n| n.contains("not UTF-8")));
    assert_eq!(format!("{whole:?}"), format!("{by_line:?}"));
}

#[test]
fn idle_calls_settled_ahead_are_settled_as_read_line_by_line() {
    let trace = varied_trace();
    let opts = ParseOptions {
        relevance: Some(crate::relevance::Relevance::default()),
        ..ParseOptions::default()
    };
    for rereadable in [false, true] {
        let whole = parse_input(&mut trace.as_bytes(), 0, &opts, rereadable).unwrap();
        let by_line = parse_input(&mut LineAtATime(trace.as_bytes()), 0, &opts, rereadable);
        let (whole, by_line) = (whole.finish(), by_line.unwrap().finish());
        assert!(whole.dropped.calls > 20, "{:?}", whole.dropped);
        assert_eq!(format!("{whole:?}"), format!("{by_line:?}"), "{rereadable}");
    }
}

/// Gives `p` the tool call of an email of `run`'s step 1 with the three usual lines after
/// it and one more; returns how many lines ahead `p` read.
fn settle_email(p: &mut TextParser, run: &str, eol: &str) -> usize {
    let tool = format!(
        "2026-11-01T00:00:02.546Z  agent run {run}  step 1  tool=send_email  \
         args={{\"order\":\"A-272203\"}}"
    );
    let settled = [
        "2026-11-01T00:00:02.556Z  POST https://mail.internal/v1/emails  (attempt 1)".to_string(),
        "2026-11-01T00:00:02.701Z  200 OK".to_string(),
        format!("2026-11-01T00:00:02.703Z  agent run {run}  step 1  ok"),
    ]
    .map(|l| format!("{l}{eol}"))
    .concat();
    let ahead = format!("{settled}2026-11-01T00:00:04.085Z  agent run {run}  step 2  ok{eol}");
    let end = (tool.len() + eol.len()) as u64;
    let newlines = newlines_of(ahead.as_bytes());
    p.line(
        1,
        0..end,
        tool.as_bytes(),
        Ahead::new(ahead.as_bytes(), &newlines),
    )
}

fn filtering() -> ParseOptions {
    ParseOptions {
        relevance: Some(crate::relevance::Relevance::default()),
        ..ParseOptions::default()
    }
}

/// The usual idle call is settled from the lines ahead of its tool call, with LF or CRLF
/// endings: the reader skips the three lines it read. (The other tests hold the shortcut
/// to reading line by line; this one, that it is taken at all.)
#[test]
fn a_usual_idle_call_is_settled_from_the_lines_ahead() {
    for eol in ["\n", "\r\n"] {
        let mut p = TextParser::new(0, &filtering(), true);
        assert_eq!(settle_email(&mut p, "w0r1", eol), 3, "{eol:?}");
        let out = p.out.finish();
        assert_eq!((out.dropped.calls, out.dropped.events), (1, 4), "{eol:?}");
    }
}

/// An idle call whose request and answer name it (`run=R  step=N`, as logs of concurrent
/// runs write them) is settled ahead as the unnamed one is; one whose answer names another
/// step, or names its own with a leading zero, is left to the lines' reading.
#[test]
fn an_idle_call_whose_lines_name_it_is_settled_ahead() {
    let lines = |names: [&str; 2]| {
        [
            format!(
                "2026-11-01T00:00:02.556Z  POST https://mail.internal/v1/emails  (attempt 1){}",
                names[0]
            ),
            format!("2026-11-01T00:00:02.701Z  200 OK{}", names[1]),
            "2026-11-01T00:00:02.703Z  agent run w0r1  step 1  ok".to_string(),
        ]
        .map(|l| l + "\n")
        .concat()
    };
    let own = "  run=w0r1  step=1";
    let cases = [
        ([own, own], 3),
        (["", own], 3),
        ([own, ""], 3),
        ([own, "  run=w0r1  step=2"], 0),
        ([own, "  run=w0r2  step=1"], 0),
        (["  run=w0r1  step=01", ""], 0),
        (["  step=1  run=w0r1", ""], 0),
    ];
    for (names, read) in cases {
        let tool = "2026-11-01T00:00:02.546Z  agent run w0r1  step 1  tool=send_email  args={}";
        let ahead = lines(names);
        let newlines = newlines_of(ahead.as_bytes());
        let mut p = TextParser::new(0, &filtering(), true);
        let end = tool.len() as u64 + 1;
        let got = p.line(
            1,
            0..end,
            tool.as_bytes(),
            Ahead::new(ahead.as_bytes(), &newlines),
        );
        assert_eq!(got, read, "{names:?}");
    }
}

/// Calls of one run, of another, and of the first again, one after another: each is
/// settled ahead, whichever run the call before it was of.
#[test]
fn calls_of_runs_in_turn_are_each_settled_ahead() {
    let mut p = TextParser::new(0, &filtering(), true);
    let runs = ["w0r1", "w0r1", "w0r2", "w0r10", "w0r1", "x"];
    for run in runs {
        assert_eq!(settle_email(&mut p, run, "\n"), 3, "{run}");
    }
    assert_eq!(p.out.finish().dropped.calls, runs.len() as u64);
}

#[test]
fn text_is_read_as_utf8_whether_ascii_or_not() {
    assert_eq!(as_text(b"agent run w0r1"), Some("agent run w0r1"));
    assert_eq!(as_text(b""), Some(""));
    assert_eq!(
        as_text("caf\u{e9} \u{1f600}".as_bytes()),
        Some("caf\u{e9} \u{1f600}")
    );
    assert_eq!(as_text(b"caf\xe9"), None);
    assert_eq!(as_text(b"\xc3"), None);
    assert_eq!(small(b"caf\xe9").as_str(), "caf\u{fffd}");
}

#[test]
fn attempts_to_one_endpoint_share_its_url() {
    let p = run("\
10:00:00.000  agent run r1  step 1  tool=issue_refund  args={\"order\":\"A-1\",\"amount_p\":100}
10:00:00.010  POST https://payments.internal/v1/refunds  (attempt 1)
10:00:10.010  POST https://payments.internal/v1/refunds  (attempt 2)
10:00:20.010  POST https://payments.internal/v1/refunds/other  (attempt 3)
");
    let urls: Vec<&Text> = kinds(&p)
        .into_iter()
        .filter_map(|k| match k {
            EventKind::Attempt(a) => a.url.as_ref(),
            _ => None,
        })
        .collect();
    assert_eq!(urls.len(), 3);
    assert_eq!(urls[0], "https://payments.internal/v1/refunds");
    assert_eq!(urls[0].as_ptr(), urls[1].as_ptr());
    assert_eq!(urls[2], "https://payments.internal/v1/refunds/other");
}

proptest::proptest! {
    /// The message's quick trim answers as the standard one: blanks of every kind (and
    /// vertical tab, which is not one) before and after, any bytes between.
    #[test]
    fn a_message_is_trimmed_as_trim_ascii_trims(
        before in proptest::collection::vec(blank(), 0..4),
        middle in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..4),
        after in proptest::collection::vec(blank(), 0..3),
    ) {
        let bytes = [before, middle, after].concat();
        proptest::prop_assert_eq!(message_of(&bytes), bytes.trim_ascii());
    }
}

fn blank() -> impl proptest::strategy::Strategy<Value = u8> {
    proptest::sample::select(vec![b' ', b'\t', b'\r', b'\n', 0x0c, 0x0b])
}

/// `amount=` in major units with `currency=`, as services log amounts: converted exactly by
/// the currency's exponent; an amount with more decimals than the currency has, or without a
/// currency, is skipped with the reason.
#[test]
fn amounts_in_major_units() {
    let p = run(
        "10:00:00  refund rf_1  order A-1  amount=45.00  currency=GBP  settled 10:00:05\n\
         10:00:01  charge ch_1  order A-2  amount=1200  currency=jpy  captured 10:00:06\n\
         10:00:02  201 Created  refund_id=rf_1  amount=45.5  currency=EUR\n\
         10:00:03  refund rf_2  order A-3  amount=45.001  currency=GBP  settled 10:00:07\n\
         10:00:04  refund rf_3  order A-4  amount=45.00  settled 10:00:08\n",
    );
    let amounts: Vec<Option<Money>> = p
        .events
        .iter()
        .map(|e| match &e.kind {
            EventKind::Effect(x) => x.amount,
            EventKind::Response(r) => r.amount,
            _ => None,
        })
        .collect();
    let money = |minor, code| Some(Money::new(minor, Currency::parse(code).unwrap()));
    assert_eq!(
        amounts,
        [money(4500, "GBP"), money(1200, "JPY"), money(4550, "EUR")]
    );
    let r = reasons(&p);
    assert_eq!(p.stats.skipped, 2, "{r:?}");
    assert!(r[0].1.contains("more decimals"), "{r:?}");
    assert!(r[1].1.contains("`amount=` without `currency=`"), "{r:?}");
}

/// A request's number as an `attempt=N` token, as key=value logs write it, reads as
/// `(attempt N)` does; a request with neither is its open step's next attempt, and outside
/// a step skipped naming both.
#[test]
fn an_attempt_number_as_a_token() {
    let p = run(
        "09:59:59  POST https://pay/v1/refunds  idempotency_key=k-1\n\
         10:00:00  agent run r  step 1  tool=issue_refund  args={\"order\":\"A-1\"}\n\
         10:00:01  POST https://pay/v1/refunds  attempt=2  idempotency_key=k-2\n\
         10:00:02  POST https://pay/v1/refunds  idempotency_key=k-3\n",
    );
    let k = kinds(&p);
    let numbered: Vec<_> = (k.iter())
        .filter_map(|e| match e {
            EventKind::Attempt(a) => Some((a.number, a.key.as_deref())),
            _ => None,
        })
        .collect();
    assert_eq!(numbered, [(2, Some("k-2")), (3, Some("k-3"))]);
    let r = reasons(&p);
    assert_eq!(p.stats.skipped, 1, "{r:?}");
    assert!(r[0].1.contains("`attempt=N`") && r[0].0 == 1, "{r:?}");
}

#[test]
fn a_status_line_may_name_its_protocol() {
    let answers = [
        (
            "HTTP/1.1 201 Created  refund_id=rf_1",
            Some((201, "Created")),
        ),
        ("HTTP/2 409 Conflict", Some((409, "Conflict"))),
        ("http/1.0 503", Some((503, ""))),
        ("HTTP 200 OK", Some((200, "OK"))),
        // Not a status line: no version after the slash, no space, a word not a protocol.
        ("HTTP/ 201 Created", None),
        ("HTTP/1.1201 Created", None),
        ("HTTPS 201 Created", None),
        // Interim answers and a proxy's open tunnel end no attempt.
        ("HTTP/1.1 100 Continue", None),
        ("103 Early Hints", None),
        ("HTTP/1.1 200 Connection established", None),
    ];
    for (line, want) in answers {
        let p = run(&format!(
            "10:00:00  agent run r1  step 1  tool=lookup  args={{}}\n\
             10:00:01  POST https://x/v1/refunds  (attempt 1)\n10:00:02  {line}\n"
        ));
        let got = p.events.iter().find_map(|e| match &e.kind {
            EventKind::Response(r) => Some((r.status, r.message.to_string())),
            _ => None,
        });
        let want = want.map(|(s, m): (u16, &str)| (s, m.to_string()));
        assert_eq!(got, want, "{line}");
        if want.is_none() {
            assert_eq!(p.stats.ignored, 1, "{line}");
        }
    }
}

/// Failures as HTTP clients beyond Python's write them: Ruby's `::` paths, Node's `Error`,
/// Java's exceptions and Go's `url.Error` (`Post "URL": cause`) end the attempt, classified
/// by what they say; a line merely shaped like them is no failure.
#[test]
fn failures_of_clients_in_other_languages() {
    let lines = [
        (
            "Net::ReadTimeout: Net::ReadTimeout with #<TCPSocket:(closed)>",
            Some(("Net::ReadTimeout", FailureClass::Ambiguous)),
        ),
        (
            "Errno::ECONNREFUSED: Failed to open TCP connection to p:443 (Connection refused)",
            Some(("Errno::ECONNREFUSED", FailureClass::Safe)),
        ),
        (
            "Error: read ECONNRESET",
            Some(("Error", FailureClass::Ambiguous)),
        ),
        (
            "java.net.SocketTimeoutException: Connect timed out",
            Some(("java.net.SocketTimeoutException", FailureClass::Safe)),
        ),
        (
            "Post \"https://payments.internal/v1/refunds\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            Some(("url.Error", FailureClass::Ambiguous)),
        ),
        (
            "Post \"https://p/v1/refunds\": dial tcp 10.0.0.1:443: connect: connection refused",
            Some(("url.Error", FailureClass::Safe)),
        ),
        // Not failures: a path with a stray colon, a `::` left open, Go's shape without a
        // cause or with a method it does not write so, a status field.
        ("Net:ReadTimeout: x", None),
        ("Net::: x", None),
        ("Post \"https://p/v1/refunds\":", None),
        ("POST \"https://p/v1/refunds\": EOF", None),
        ("Send \"https://p/v1/refunds\": EOF", None),
        // Go's shape around no URL; a logger named by a Ruby path.
        ("Delete \"cache entry A-1\": not found", None),
        ("Get \"x\": y", None),
        ("Payments::RefundClient: refund issued rf_1", None),
        // Ruby's clients: a path with an error's name in it.
        (
            "Faraday::ConnectionFailed: end of file reached",
            Some(("Faraday::ConnectionFailed", FailureClass::Ambiguous)),
        ),
        (
            "Excon::Error::Socket: Connection reset by peer (Errno::ECONNRESET)",
            Some(("Excon::Error::Socket", FailureClass::Ambiguous)),
        ),
    ];
    for (line, want) in lines {
        let p = run(&format!(
            "10:00:00  agent run r1  step 1  tool=issue_refund  args={{}}\n\
             10:00:01  POST https://p/v1/refunds  (attempt 1)\n10:00:02  {line}\n"
        ));
        let got = p.events.iter().find_map(|e| match &e.kind {
            EventKind::Failure(f) => Some((f.error.to_string(), f.class)),
            _ => None,
        });
        assert_eq!(got, want.map(|(e, c)| (e.to_string(), c)), "{line}");
    }
}

/// Services that log key=value: the order as a token, the id as a token after a word that
/// says what happened (`refund created  refund_id=rf_2`), the state as a `status=` token. A
/// line whose id is such a word and names no other is skipped: read as the id, every
/// `refund created` of a month would be one refund.
#[test]
fn effect_lines_with_tokens_and_event_words() {
    let p = run(
        "10:00:00  refund rf_1  order=A-1  amount_p=4500  settled 10:00:05\n\
         10:00:01  refund created  refund_id=rf_2  order_id=A-2  amount_p=100\n\
         10:00:02  refund failed  effect_id=rf_3  order=A-3  amount_p=100\n\
         10:00:03  refund rf_4  order A-4  4500p  status=failed\n\
         10:00:04  refund created  order=A-5  amount_p=100\n\
         10:00:05  refund issued  order A-6  4500p  settled 10:00:09\n\
         10:00:06  refund abc  order A-7  4500p\n\
         10:00:07  refund rf_8  order A-8  4500p  settled 10:00:09  status=failed\n\
         10:00:08  healthcheck ok  latency_ms=9\n\
         10:00:09  refund duplicate  order_id=A-9  idempotency_key=k1\n\
         10:00:10  webhook received  id=evt_1  order_id=A-9\n\
         10:00:11  refund created  refund_id=rf_10  order_id=A-10\n\
         10:00:12  refund failed  refund_id=rf_11  order_id=A-11  amount_p=1999  status=402  error=card_declined\n\
         10:00:13  refund failed  refund_id=rf_12  order_id=A-12  amount_p=4500  card_declined\n\
         10:00:14  refund created  refund_id=  id=rf_13  order=A-13  amount_p=1\n\
         10:00:15  refund created  refund_id=rf_14  order=A-14  amount_p=1  status=402\n",
    );
    let effects: Vec<(String, Option<String>, Option<String>, bool)> = p
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some((
                x.id.to_string(),
                x.order.as_ref().map(|o| o.to_string()),
                x.state.as_ref().map(|s| s.to_string()),
                x.happened,
            )),
            _ => None,
        })
        .collect();
    let e = |id: &str, order: &str, state: Option<&str>, happened| {
        (
            id.to_string(),
            Some(order.to_string()),
            state.map(String::from),
            happened,
        )
    };
    assert_eq!(
        effects,
        [
            e("rf_1", "A-1", Some("settled"), true),
            e("rf_2", "A-2", Some("created"), true),
            e("rf_3", "A-3", Some("failed"), false),
            e("rf_4", "A-4", Some("failed"), false),
            e("abc", "A-7", None, true),
            // The final state written with its time wins over a status token.
            e("rf_8", "A-8", Some("settled"), true),
            // An id token and a word saying what happened make an effect, amount or not.
            e("rf_10", "A-10", Some("created"), true),
            // A word saying it did not happen wins over a code or a reason.
            e("rf_11", "A-11", Some("failed"), false),
            e("rf_12", "A-12", Some("failed"), false),
            // An empty id token is passed over for the next.
            e("rf_13", "A-13", Some("created"), true),
            // A status that is a code is no state.
            e("rf_14", "A-14", Some("created"), true),
        ]
    );
    let lines: Vec<u32> = p.stats.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [5, 6], "{:?}", p.stats.problems);
    assert!(p.stats.problems[0].reason.contains("without an id"));
    // The health check, and lines that only mention an order: no effects.
    assert_eq!(p.stats.ignored, 3);
}

/// Services whose loggers use Java's default layouts, or write the message for people
/// (`Refund created`, one blank apart), log effects too; a line about a request (`refund
/// received  order_id=...  amount=...`) is none: the word after the kind is no id.
#[test]
fn effects_in_java_layouts_and_sentences() {
    let p = run(
        "2026-11-03 14:02:11.501 [main] INFO  c.e.payments.RefundService - Refund created refund_id=rf_1 order_id=A-1 amount=45.00 currency=GBP\n\
         2026-11-03T14:02:12.501Z  INFO 12345 --- [           main] c.e.p.RefundService   : refund rf_2  order A-2  4500p\n\
         2026-11-03T14:02:13.501Z  refund received  order_id=A-3  amount=45.00  currency=GBP\n\
         2026-11-03T14:02:14.501Z  refund queued  order_id=A-3  amount_p=4500\n\
         2026-11-03T14:02:15.501Z  Order created order_id=A-4 amount=45.00 currency=GBP id=ord_1\n\
         2026-11-03T14:02:16.501Z  refund abc  order A-7  4500p\n",
    );
    let effects: Vec<(String, String, Option<String>)> = (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some((
                x.kind.to_string(),
                x.id.to_string(),
                x.order.as_ref().map(|o| o.to_string()),
            )),
            _ => None,
        })
        .collect();
    let e = |id: &str, order: &str| {
        (
            "refund".to_string(),
            id.to_string(),
            Some(order.to_string()),
        )
    };
    assert_eq!(
        effects,
        [e("rf_1", "A-1"), e("rf_2", "A-2"), e("abc", "A-7")]
    );
    assert_eq!((p.stats.ignored, p.stats.skipped), (3, 0));
}

/// An object logged after the message (`json.dumps`, a Python dict's `%s`) gives the
/// effect's tokens; without an id the line is skipped, and an object after another message
/// (another kind's, a refund's request) is no effect.
#[test]
fn effects_with_an_object_after_the_message() {
    let p = run(
        "2026-11-03T14:02:11.501Z INFO refund created: {\"refund_id\": \"rf_1\", \"order_id\": \"A-1\", \"amount\": 45.00, \"currency\": \"GBP\"}\n\
         2026-11-03T14:02:12.501Z  Refund failed {'id': 'rf_2', 'order': 'A-2', 'amount_p': 4500, 'meta': {'try': 2}}\n\
         2026-11-03T14:02:13.501Z  refund created: {\"order_id\": \"A-3\", \"amount_p\": 4500}\n\
         2026-11-03T14:02:14.501Z  user created: {\"id\": \"u_1\", \"order_id\": \"A-4\", \"amount_p\": 4500}\n\
         2026-11-03T14:02:15.501Z  refund requested: {\"id\": \"req_1\", \"order_id\": \"A-5\", \"amount_p\": 4500}\n",
    );
    let effects: Vec<(String, Option<String>, Option<i64>, bool)> = (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some((
                x.id.to_string(),
                x.order.as_ref().map(|o| o.to_string()),
                x.amount.map(|m| m.minor),
                x.happened,
            )),
            _ => None,
        })
        .collect();
    let e = |id: &str, order: &str, happened| (id.into(), Some(order.into()), Some(4500), happened);
    assert_eq!(effects, [e("rf_1", "A-1", true), e("rf_2", "A-2", false)]);
    let lines: Vec<u32> = p.stats.problems.iter().map(|p| p.line).collect();
    assert_eq!((lines, p.stats.ignored), (vec![3], 2));
}

/// A ledger's sign on one of two spellings of an effect's amount is no disagreement: the
/// amounts are compared as the sizes correlation reads.
#[test]
fn two_spellings_of_an_amount_agree_whatever_the_sign() {
    let p = run(
        "10:00:00  refund rf_1  order A-1  -1200p  £12.00  settled 10:00:05\n\
         10:00:01  refund rf_2  order A-1  -1200p  £12.01  settled 10:00:05\n",
    );
    let amounts: Vec<Option<i64>> = p
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some(x.amount.map(|m| m.size().minor)),
            _ => None,
        })
        .collect();
    assert_eq!(amounts, [Some(1200)]);
    let lines: Vec<u32> = p.stats.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [2], "{:?}", p.stats.problems);
}

/// Tokens one blank apart in one field (`amount=45.00 currency=GBP`, as structlog's console
/// layout joins them) are each a token; an amount with no currency at all is still refused.
#[test]
fn tokens_one_blank_apart_are_each_a_token() {
    let p = run(
        "10:00:00  refund rf_1  order A-1  amount=45.00 currency=GBP\n\
         10:00:01  refund rf_2  order A-1  amount=45.00\n",
    );
    let reasons: Vec<&str> = p.stats.problems.iter().map(|p| p.reason.as_str()).collect();
    assert_eq!(reasons, ["`amount=` without `currency=`"]);
    match &p.events[0].kind {
        EventKind::Effect(e) => assert_eq!(e.amount, Some(Money::new(4500, Currency::GBP))),
        other => panic!("{other:?}"),
    }
}

/// A proxy's `200 Connection established` in an idle call: the shortcut that settles idle
/// calls on their bytes refuses it as the general reading does (it took it for the call's
/// answer, so dropping idle calls changed the accounting).
#[test]
fn a_tunnel_reply_reads_alike_with_and_without_dropping_idle_calls() {
    for tunnel in [
        "200 Connection established",
        "200 Connection established  via proxy",
    ] {
        let log = format!(
            "2026-11-03T10:00:00Z  agent run r1  step 1  tool=lookup_order  args={{\"order\":\"A-1\"}}\n\
             2026-11-03T10:00:01Z  GET https://orders.internal/v1/orders/A-1  (attempt 1)\n\
             2026-11-03T10:00:02Z  {tunnel}\n\
             2026-11-03T10:00:03Z  agent run r1  step 1  ok\n"
        );
        let p = run(&log);
        assert_eq!((p.stats.events, p.stats.ignored), (3, 1), "{tunnel}");
        crate::ingest::selfcheck::check_filter_agrees(
            crate::ingest::Format::Text,
            log.as_bytes(),
            &ParseOptions::default(),
        );
    }
}

/// A request's key as clients and providers write it: the SPEC's token, a header field of
/// any prefix (`X-Idempotency-Key`, Checkout.com's `Cko-Idempotency-Key`), or inside a dump
/// of the headers, JSON or a Python dict. An empty one is no key.
#[test]
fn request_keys_in_the_spellings_clients_log() {
    let lines = [
        ("idempotency_key=k1", Some("k1")),
        ("Idempotency-Key: k2", Some("k2")),
        ("X-Idempotency-Key: k3", Some("k3")),
        ("x-idempotency-key=k4", Some("k4")),
        ("Cko-Idempotency-Key: k5", Some("k5")),
        (
            r#"headers={"Content-Type": "application/json", "Idempotency-Key": "k6"}"#,
            Some("k6"),
        ),
        (
            "headers={'X-Idempotency-Key': 'k7', 'Accept': '*/*'}",
            Some("k7"),
        ),
        ("idempotency_key=", None),
        ("Idempotency-Key:", None),
        (r#"headers={"Idempotency-Key": ""}"#, None),
        (r#"headers={"Idempotency-Key-Hint": "x"}"#, None),
        ("X-Request-Id: r1", None),
        ("key=k8", None),
        // A name that merely ends so, values that say there is none, a redaction.
        ("has_idempotency_key=false", None),
        ("idempotency_key=None", None),
        ("Idempotency-Key: null", None),
        ("headers={'Idempotency-Key': '[REDACTED]'}", None),
        ("Idempotency-Key: ***", None),
        ("idempotency_key=<filtered>", None),
        // A key of any other characters is a key.
        (
            "idempotency_key=7f3a|4|issue_refund",
            Some("7f3a|4|issue_refund"),
        ),
        // A dump inside a quoted value, and one with the Python keyword's spelling.
        (r#"headers="{\"Idempotency-Key\": \"k9\"}""#, Some("k9")),
        (r#"headers={"idempotency_key": "k10"}"#, Some("k10")),
    ];
    for (field, want) in lines {
        let p = run(&format!(
            "10:00:00  agent run r1  step 1  tool=issue_refund  args={{}}\n\
             10:00:01  POST https://p/v1/refunds  (attempt 1)  {field}\n"
        ));
        let key = p.events.iter().find_map(|e| match &e.kind {
            EventKind::Attempt(a) => Some(a.key.as_ref().map(|k| k.to_string())),
            _ => None,
        });
        assert_eq!(key, Some(want.map(String::from)), "{field}");
    }
}

/// A service's effect line names the key it was sent as `key=`, or as the client spelt it;
/// a value that says there was none is none (on the payments fast path too).
#[test]
fn effect_keys_and_their_absence() {
    let p = run(
        "10:00:00  refund rf_1  order A-1  4500p  settled 10:00:05  key=None\n\
         10:00:01  refund rf_2  order A-1  4500p  settled 10:00:05  key=k2\n\
         10:00:02  refund rf_3  order A-1  4500p  settled 10:00:05  X-Idempotency-Key: k3\n\
         10:00:03  refund rf_4  order A-1  4500p  settled 10:00:05  idempotency_key=k4\n",
    );
    let keys: Vec<Option<String>> = p
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some(x.key.as_ref().map(|k| k.to_string())),
            _ => None,
        })
        .collect();
    let k = |s: &str| Some(s.to_string());
    assert_eq!(keys, [None, k("k2"), k("k3"), k("k4")]);
}

/// The first state word is the state; a word after it is its reason. A line naming only
/// the effect and a state that says it did not happen is an update; one saying it happened,
/// or naming only a job, is no effect.
#[test]
fn effect_states_with_reasons_and_updates_by_id() {
    let p = run(
        "10:00:00  refund rf_1  order A-1  1250p  rejected  amount_exceeds_capture\n\
         10:00:01  refund rf_2  order A-2  1250p  failed  card_declined\n\
         10:00:02  refund rf_3  order A-3  1250p  partial  failed\n\
         10:00:03  refund rf_4  failed 10:00:03.500\n\
         10:00:04  refund rf_5  succeeded\n\
         10:00:05  worker job_1  done\n\
         10:00:06  healthcheck db  failed\n\
         10:00:07  retry 2  failed\n\
         10:00:08  refund worker  failed\n",
    );
    let got: Vec<(&str, Option<&str>, Option<&str>, bool)> = effects(&p)
        .iter()
        .map(|e| (&*e.id, e.order.as_deref(), e.state.as_deref(), e.happened))
        .collect();
    assert_eq!(
        got,
        [
            ("rf_1", Some("A-1"), Some("rejected"), false),
            ("rf_2", Some("A-2"), Some("failed"), false),
            // Not a state a service writes, then one that is: the second.
            ("rf_3", Some("A-3"), Some("failed"), false),
            ("rf_4", None, Some("failed"), false),
        ]
    );
    assert_eq!(effects(&p)[3].state_at, Some(tod(10, 0, 3, 500)));
    assert_eq!(p.stats.ignored, 5);
}

/// A settlement's time of day is in the offset its line's stamp was written in.
#[test]
fn a_settled_time_of_day_is_read_in_the_stamps_offset() {
    let p = run(
        "2026-11-03T19:32:11.501+05:30  refund rf_1  order A-1  4500p  settled 19:32:22.884\n\
         2026-11-03T23:59:58-05:00  refund rf_2  order A-2  4500p  settled 00:00:04\n\
         [2026-11-03T19:32:11+05:30]  refund rf_3  order A-3  4500p  settled 19:32:12\n",
    );
    let settled: Vec<Option<Timestamp>> = effects(&p).iter().map(|e| e.state_at).collect();
    let day = |d: &str, h, m, s, ms| {
        let days = crate::time::parse_date(d.as_bytes()).unwrap();
        Some(Timestamp(days * NANOS_PER_DAY + tod(h, m, s, ms).0))
    };
    assert_eq!(
        settled,
        [
            day("2026-11-03", 14, 2, 22, 884),
            day("2026-11-04", 5, 0, 4, 0),
            day("2026-11-03", 14, 2, 12, 0),
        ]
    );
}

/// Loggers that join with one blank: Python logging's level and name before the message, and
/// effect lines whose tokens are one blank apart, read as the two-blank spelling is.
#[test]
fn one_blank_loggers_and_tokens() {
    let p = run(
        "2026-11-03 14:02:11,501 INFO payments.refunds: refund created  refund_id=rf_1  order_id=A-1  amount_p=4500\n\
         2026-11-03 14:02:12,088  refund created refund_id=rf_2 order_id=A-2 amount_p=4500 status=succeeded\n\
         2026-11-03 14:02:13,000  refund rf_3 order_id=A-3 amount_p=100 status=failed\n\
         2026-11-03 14:02:14,000  tool lookup args=x\n\
         2026-11-03 14:02:15,000  refund created reason=none\n\
         2026-11-03 14:02:16,000  refund request received order_id=A-1 amount_p=4500\n",
    );
    let got: Vec<(&str, Option<&str>, Option<i64>, bool)> = effects(&p)
        .iter()
        .map(|e| {
            (
                &*e.id,
                e.order.as_deref(),
                e.amount.map(|m| m.minor),
                e.happened,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("rf_1", Some("A-1"), Some(4500), true),
            ("rf_2", Some("A-2"), Some(4500), true),
            ("rf_3", Some("A-3"), Some(100), false),
        ]
    );
    assert_eq!(p.stats.ignored, 3, "{:?}", p.stats.problems);
}

/// A byte-order mark before the first line (a log saved by a Windows editor) is no part of
/// it: the first event is read; the same mark before a later line leaves that line unread.
#[test]
fn a_byte_order_mark_before_the_first_line_is_not_part_of_it() {
    let line = "14:02:11.402  agent run r  started";
    let p = run(&format!("\u{feff}{line}\n{line}\n"));
    assert_eq!(
        (p.stats.events, p.stats.skipped),
        (2, 0),
        "{:?}",
        p.stats.problems
    );
    assert_eq!(p.events[0].loc.line, 1);
    let p = run(&format!("{line}\n\u{feff}{line}\n"));
    assert_eq!(p.stats.events, 1);
    assert_eq!(
        crate::ingest::source::detect(format!("\u{feff}{line}\n").as_bytes(), &[]),
        Some(crate::ingest::Format::Text)
    );
}

/// The JDK client's `HEADERS:` line: the header lines below it are its record's, the key
/// among them the request's; the same lines below any other line are still skipped.
#[test]
fn a_logged_header_block_is_its_records_and_names_the_requests_key() {
    let p = run(
        "2026-12-06T09:59:15.438Z INFO agent agent run 7f3a  step 4  tool=issue_refund  args={\"order\":\"A-1\"}\n\
         2026-12-06T09:59:15.523Z INFO jdk.httpclient.HttpClient REQUEST: http://h/v1/refunds POST\n\
         2026-12-06T09:59:15.526Z INFO jdk.httpclient.HttpClient HEADERS: REQUEST HEADERS:\n\
         POST /v1/refunds HTTP/1.1\n\
         Idempotency-Key: k-1\n\
         \n\
         2026-12-06T09:59:16.469Z INFO jdk.httpclient.HttpClient ERROR: Http1Exchange.cancel: count=1\n\
         2026-12-06T09:59:16.470Z INFO agent waiting\n\
         Idempotency-Key: k-2\n",
    );
    let keys: Vec<Option<&str>> = (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Attempt(a) => Some(a.key.as_deref()),
            _ => None,
        })
        .collect();
    assert_eq!(keys, [Some("k-1")]);
    let skipped: Vec<u32> = p.stats.problems.iter().map(|x| x.line).collect();
    assert_eq!(skipped, [9]);
    // A header block without a key: none was sent. No block (headers not logged): unknown.
    let unseen = |text: &str| -> Vec<bool> {
        (run(text).events.iter())
            .filter_map(|e| match &e.kind {
                EventKind::Attempt(a) => Some(a.key_unseen),
                _ => None,
            })
            .collect()
    };
    let call = "2026-12-06T09:59:15.438Z INFO agent agent run 7f3a  step 4  tool=issue_refund  args={\"order\":\"A-1\"}\n\
                2026-12-06T09:59:15.523Z INFO jdk.httpclient.HttpClient REQUEST: http://h/v1/refunds POST\n";
    let block = "2026-12-06T09:59:15.526Z INFO jdk.httpclient.HttpClient HEADERS: REQUEST HEADERS:\n\
                 POST /v1/refunds HTTP/1.1\nHost: h\n\n";
    assert_eq!(unseen(&format!("{call}{block}")), [false]);
    assert_eq!(unseen(call), [true]);
}

/// The `debug` module's namespace before a message (`DEBUG=openai-agents:*`) is read past
/// when the line is otherwise nothing; a word with a colon that is no namespace is not.
#[test]
fn a_debug_namespace_before_a_message_is_read_past() {
    let p = run(
        "2026-12-06T07:43:20.120Z openai-agents:core Invoking tool issue_refund with input {\"order\":\"A-1\",\"amount_p\":4500}\n\
         2026-12-06T07:43:20.130Z Note:Invoking tool issue_refund with input {\"order\":\"A-2\"}\n",
    );
    let tools: Vec<String> = (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall(t) => Some(t.args_raw.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(tools, [r#"{"order":"A-1","amount_p":4500}"#]);
    assert_eq!(
        super::level::after_debug_namespace(b"app:http POST x"),
        Some((&b"app:http"[..], &b"POST x"[..]))
    );
    assert_eq!(super::level::after_debug_namespace(b"12:30 lunch"), None);
    assert_eq!(
        super::level::after_debug_namespace(b"refund: created"),
        None
    );
}

/// A service's replay line, tokens two blanks or one apart, is a replay of the effect its
/// kind's id token names, or of the key its message names; a client's answer with a status
/// is not one.
#[test]
fn a_services_replay_line_names_the_effect_it_replayed() {
    let replays = |text: &str| crate::ingest::replay::replays_of(run(text).events);
    let replay = |id: &str, key: &str| Replay {
        kind: Some("refund".into()),
        effect_id: Some(id.into()),
        key: Some(key.into()),
    };
    assert_eq!(
        replays("2026-12-06T06:27:11.030Z  idempotent replay  refund_id=re_1  key=k1\n"),
        [replay("re_1", "k1")]
    );
    assert_eq!(
        replays(
            "2026-12-06T06:27:11.030Z  INFO payments: idempotent replay refund_id=re_b9b41bae087f46 idempotency_key=7f855f4a115c18a8195bd55fea5a9928\n"
        ),
        [replay(
            "re_b9b41bae087f46",
            "7f855f4a115c18a8195bd55fea5a9928"
        )]
    );
    // Python's logging, a sentence naming the refund and its key.
    assert_eq!(
        replays(
            "2026-12-06 02:11:32,850 INFO payments: Replaying stored response for refund re_1 (key k1)\n"
        ),
        [replay("re_1", "k1")]
    );
    // JUL's SimpleFormatter of a Java service: the key in the message only.
    assert_eq!(
        replays(
            "2026-12-06T06:27:11.030Z  INFO: idempotent replay for key d49d19e4-f3d1 order A-1\n"
        ),
        [Replay {
            kind: None,
            effect_id: None,
            key: Some("d49d19e4-f3d1".into()),
        }]
    );
    for other in [
        "2026-12-06T06:27:11.030Z  replayed  status=200  refund_id=re_1\n",
        "2026-12-06T06:27:11.030Z  idempotent replay for order A-1\n",
        "2026-12-06T06:27:11.030Z  refund created  refund_id=re_1\n",
    ] {
        assert_eq!(replays(other), [], "{other}");
    }
}

/// A last line with no newline that reads as none of ours (a refund cut before its order,
/// a tool call cut before its tool) may be an event's first bytes: skipped, not ignored.
/// The same line ended by a newline is chatter, and a cut line that still reads as an
/// event is kept.
#[test]
fn a_last_line_cut_short_that_reads_as_no_event_is_skipped() {
    let head = "# date: 2026-11-03\n14:02:11.501  refund rf_8XM1  order A-88214  4500p  settled 14:02:22.884\n";
    for cut in [
        "14:02:23.088  refund rf_9KQ2  ",
        "14:02:11.402  agent run 7f3a  step 4  to",
    ] {
        let p = run(&format!("{head}{cut}"));
        assert_eq!((p.stats.lines, p.stats.skipped), (3, 1), "{cut}");
        assert_eq!(p.stats.problems[0].line, 3);
        assert!(p.stats.problems[0].reason.contains("cut short"));
        let whole = run(&format!("{head}{cut}\n"));
        assert_eq!((whole.stats.skipped, whole.stats.ignored), (0, 2), "{cut}");
    }
    let p = run(&format!(
        "{head}14:02:23.088  refund rf_9KQ2  order A-88214"
    ));
    assert_eq!((p.stats.events, p.stats.skipped), (2, 0));
    // Blank bytes (NUL padding) after the last newline are no line cut short.
    let p = run(&format!("{head}\0\0\0"));
    assert_eq!(p.stats.skipped, 0);
}

/// A line that opens with a timestamp's shape but no such time says what is wrong with it;
/// a line with no timestamp at all, or one whose time is real, reads as before.
#[test]
fn an_impossible_timestamp_is_said_out_of_range() {
    let p = run("2026-11-03T14:02:11.402Z  refund rf_1  order A-1  4500p\n\
         2026-13-01T10:00:00Z  refund rf_2  order A-1  4500p\n\
         [2026-02-30 10:00:00,123] INFO refund rf_3\n\
         hello world\n\
         2026-11-03T14:02:60.000Z  refund rf_4  order A-2  4500p\n");
    assert_eq!((p.stats.events, p.stats.skipped), (2, 3));
    let said: Vec<(u32, &str)> = (p.stats.problems.iter())
        .map(|p| (p.line, p.reason.as_str()))
        .collect();
    assert_eq!(
        said,
        [
            (
                2,
                "timestamp out of range: `2026-13-01T10:00:00Z` has month 13 (months run 01 to 12)"
            ),
            (
                3,
                "timestamp out of range: `2026-02-30 10:00:00,123` has day 30 of February 2026 (it has 28 days)"
            ),
            (4, NO_STAMP),
        ]
    );
}
