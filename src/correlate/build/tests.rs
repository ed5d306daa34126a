//! The model built event by event: merged effects, a step's logical calls, the recent
//! dispatches.

use super::dispatches::WALKED;
use super::effects::merged_created;
use super::*;

#[test]
fn a_whole_second_gives_way_to_a_finer_time_within_it() {
    let ms = Timestamp::from_millis;
    assert_eq!(merged_created(ms(11_000), ms(11_501)), ms(11_501));
    assert_eq!(merged_created(ms(11_501), ms(11_000)), ms(11_501));
    // Not within the second: the earlier stands.
    assert_eq!(merged_created(ms(11_000), ms(12_000)), ms(11_000));
    assert_eq!(merged_created(ms(10_999), ms(11_000)), ms(10_999));
    assert_eq!(merged_created(ms(11_200), ms(11_501)), ms(11_200));
}

/// A step dispatched far more often than its dispatches are walked, with three sets of
/// arguments in turn: each set is one logical call, before the step is indexed, as it
/// is, and after.
#[test]
fn a_step_dispatched_many_times_has_a_logical_call_per_set_of_arguments() {
    let times = 3 * WALKED as usize + 5;
    let mut trace = String::new();
    for i in 0..times {
        let s = i % 60;
        trace.push_str(&format!(
            "2026-11-01T00:{:02}:{s:02}.000Z  agent run r1  step 4  tool=issue_refund  \
             args={{\"order\":\"A-{}\",\"amount_p\":100}}\n",
            i / 60,
            i % 3
        ));
    }
    let opts = crate::ingest::ParseOptions::default();
    let events = crate::ingest::text::parse(&mut trace.as_bytes(), 0, &opts).unwrap();
    let model = crate::correlate::correlate(events.events, &CorrelateOptions::default());
    assert_eq!(model.dispatches.len(), times);
    assert_eq!(model.calls.len(), 3, "{:?}", model.calls);
    for (i, d) in model.dispatches.iter().enumerate() {
        let call = &model.calls[d.logical()];
        assert_eq!(
            call.canonical,
            format!(r#"{{"amount_p":100,"order":"A-{}"}}"#, i % 3)
        );
    }
    let counts: Vec<usize> = model.calls.iter().map(|c| c.dispatches.len()).collect();
    assert_eq!(counts, [times.div_ceil(3), (times + 1) / 3, times / 3]);
}

#[test]
fn a_dispatch_without_its_tool_call_line_keeps_the_earlier_ones_arguments() {
    let trace = "\
2026-11-01T00:00:01.000Z  agent run r1  step 1  tool=issue_refund  args={\"order\":\"A-1\",\"amount_p\":100}
2026-11-01T00:00:02.000Z  POST https://pay/v1/refunds  (attempt 1)
2026-11-01T00:00:03.000Z  503 Service Unavailable
2026-11-01T00:00:09.000Z  POST https://pay/v1/refunds  (attempt 1)
";
    let opts = crate::ingest::ParseOptions::default();
    let events = crate::ingest::text::parse(&mut trace.as_bytes(), 0, &opts).unwrap();
    let model = crate::correlate::correlate(events.events, &CorrelateOptions::default());
    let [first, again] = &model.dispatches[..] else {
        panic!("{:?}", model.dispatches);
    };
    assert_eq!(first.logical(), again.logical(), "one logical call");
    assert!(again.at.is_none(), "implied by its attempt");
    assert_eq!(again.args_raw, first.args_raw);
    assert_eq!(
        (again.order.as_deref(), again.amount),
        (Some("A-1"), first.amount)
    );
    assert_eq!(again.amount.map(|m| m.minor), Some(100));
    assert_eq!(
        model.calls[again.logical()].canonical,
        r#"{"amount_p":100,"order":"A-1"}"#
    );
}

/// A slot answers only for the hash it holds, and a newer dispatch or another call
/// landing in it replaces what it held.
#[test]
fn recent_dispatches_answer_for_the_last_hash_of_each_slot() {
    let mut recent = RecentDispatches::default();
    let (a, b) = (3u64 << 58 | 1, 3u64 << 58 | 2); // one slot, two hashes
    let c = 4u64 << 58;
    assert_eq!(recent.get(a), None, "empty");
    assert_eq!(
        recent.get(0),
        None,
        "an empty slot holds hash 0 but no dispatch"
    );
    recent.remember(a, 5);
    recent.remember(c, 6);
    assert_eq!(
        (recent.get(a), recent.get(b), recent.get(c)),
        (Some(5), None, Some(6))
    );
    recent.remember(a, 7);
    assert_eq!(recent.get(a), Some(7), "the newer dispatch of the call");
    recent.remember(b, 8);
    assert_eq!(
        (recent.get(a), recent.get(b), recent.get(c)),
        (None, Some(8), Some(6))
    );
}
