//! Dedup-layer health (SPEC §1, platform team): keyed requests, replays and conflicts.

use crate::correlate::Model;
use crate::report::Metrics;

/// Whole-input figures.
pub fn totals(model: &Model) -> Metrics {
    let mut m = Metrics::default();
    for (_, a) in model.attempts() {
        if a.key.is_some() {
            m.keyed_requests += 1;
            if a.outcome.as_ref().is_some_and(|o| o.is_replay()) {
                m.replays += 1;
            }
            if a.outcome.as_ref().and_then(|o| o.status()) == Some(422) {
                m.conflicts += 1;
            }
        }
    }
    let rate = |n: u64| (m.keyed_requests > 0).then(|| n as f64 / m.keyed_requests as f64);
    m.replay_rate = rate(m.replays);
    m.conflict_rate = rate(m.conflicts);
    m
}
