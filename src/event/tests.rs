use super::*;

/// The depth count says no exactly where serde_json's reading into a value does, and
/// brackets inside strings (escaped quotes among them) do not count.
#[test]
fn arguments_too_deep_are_those_serde_json_cannot_read() {
    let nested =
        |levels: usize, inner: &str| format!("{}{inner}{}", "[".repeat(levels), "]".repeat(levels));
    for levels in [1, 126, 127, 128, 200] {
        for inner in ["", r#""[{\"[""#, "{}"] {
            let raw = format!(r#"{{"order":"A-1","meta":{}}}"#, nested(levels, inner));
            let read = serde_json::from_str::<serde_json::Value>(&raw).is_ok();
            assert_eq!(
                args_nest_too_deep(raw.as_bytes()),
                !read,
                "{levels} {inner}"
            );
        }
    }
    let brackets_in_a_string = format!(r#"{{"note":"{}"}}"#, "[".repeat(300));
    assert!(!args_nest_too_deep(brackets_in_a_string.as_bytes()));
}

#[test]
fn urls_name_one_target_by_path_query_host_and_port() {
    for (a, b) in [
        (
            "https://pay.internal/v1/refunds",
            "https://pay.internal/v1/refunds",
        ),
        (
            "https://Pay.Internal:443/v1/refunds",
            "https://pay.internal/v1/refunds",
        ),
        (
            "http://pay.internal:80/v1/refunds",
            "HTTP://pay.internal/v1/refunds",
        ),
        ("/v1/refunds", "https://pay.internal/v1/refunds"),
        ("https://pay.internal/v1/refunds#top", "/v1/refunds"),
        ("https://pay.internal/v1/refunds?x=1", "/v1/refunds?x=1"),
        ("https://pay.internal", "https://pay.internal"),
    ] {
        assert!(same_url(a, b), "{a} {b}");
        assert!(same_url(b, a), "{b} {a}");
    }
    for (a, b) in [
        (
            "https://pay.internal/v1/refunds",
            "https://pay.internal/v1/orders/A-1",
        ),
        (
            "https://pay.internal/v1/refunds",
            "https://other.internal/v1/refunds",
        ),
        (
            "https://pay.internal:8443/v1/refunds",
            "https://pay.internal/v1/refunds",
        ),
        (
            "https://pay.internal/v1/refunds?x=1",
            "https://pay.internal/v1/refunds?x=2",
        ),
        ("/v1/refunds", "/v1/refunds/"),
        ("/v1/Refunds", "/v1/refunds"),
    ] {
        assert!(!same_url(a, b), "{a} {b}");
        assert!(!same_url(b, a), "{b} {a}");
    }
}

/// The payload is the boxed fields themselves, not the box's place in the event.
#[test]
fn an_events_payload_is_where_its_fields_lie() {
    let run = EventKind::Run(Box::new(RunEvent {
        run: "r1".into(),
        what: Lifecycle::Started,
    }));
    let EventKind::Run(boxed) = &run else {
        unreachable!()
    };
    assert_eq!(run.payload(), (&**boxed as *const RunEvent).cast());
    let end = EventKind::StepEnd(Box::new(StepEnd {
        call: CallRef {
            run: "r1".into(),
            step: 2,
            part: 0,
        },
        ok: true,
        error: None,
    }));
    let EventKind::StepEnd(boxed) = &end else {
        unreachable!()
    };
    assert_eq!(end.payload(), std::ptr::from_ref::<StepEnd>(boxed).cast());
    assert_ne!(end.payload(), std::ptr::from_ref(&end).cast());
}

/// `part` lies in what was padding: client events and dispatches stay their size.
#[test]
fn a_call_ref_is_no_larger_for_its_part() {
    assert_eq!(std::mem::size_of::<CallRef>(), 24);
    assert_eq!(std::mem::size_of::<Option<CallRef>>(), 24);
}

#[test]
fn states_that_say_the_effect_did_not_happen() {
    for state in [
        "failed",
        "Declined",
        "refused",
        "error",
        "expired",
        "processor_declined",
        "gateway_rejected",
        "REFUND_FAILED",
        "reversed_before_settlement",
    ] {
        assert!(state_means_not_happened(state), "{state}");
    }
    for state in [
        "succeeded",
        "settled",
        "pending",
        "failed2",
        "_failed",
        "rejected_later",
    ] {
        assert!(!state_means_not_happened(state), "{state}");
    }
    assert!(is_state_on_the_way("Pending") && is_state_on_the_way("updated"));
    assert!(!is_state_on_the_way("settled") && !is_state_on_the_way("failed"));
}
