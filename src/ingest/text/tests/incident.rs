//! The incident trace (fixtures/incident-a88214) read whole: every event, located.

use super::*;

const INCIDENT: &str = include_str!("../../../../fixtures/incident-a88214/trace.log");

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
    let text = include_str!("../../../../fixtures/midnight-rollover/trace.log");
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
