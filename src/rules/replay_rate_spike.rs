//! `replay-rate-spike`: in some window the replay rate jumped far above its usual level.

use super::support::attempt_evidence;
use super::{Rule, Settings, Shared};
use crate::correlate::Model;
use crate::finding::{Finding, Severity};
use crate::metrics::{self, SPIKE_MIN_REQUESTS, Seen};

pub static RULE: Rule = Rule {
    id: "replay-rate-spike",
    default_severity: Severity::Warning,
    default_enabled: true,
    summary: "in some window the replay rate exceeds max(5%, 10 x the median of all windows)",
    explanation: r#"## What it does
Splits keyed requests into windows (`--window`, default 1m, starting at multiples of the
width since the epoch: a whole-minute width is aligned to the minute) and
computes each window's replay rate: replays (a response marked replayed, one the service
logged as a replay, or a `200` for a key an earlier attempt already completed) over keyed
requests. With the service's logs alone, its effects made under a key and the replays it
logged are the keyed requests. A window whose rate exceeds
max(5%, 10 x the median of all windows' rates) is a spike. Windows with fewer than 20 keyed
requests are not judged, since one replay there is already 5%.

## Why is this bad
Nobody was paid twice: the dedup layer did its job. But a replay means a client gave up on a
request whose effect completed anyway, so a sudden rise says the service got slower than the
clients' deadline (a migration, a lock, a slow dependency). It often shows before the latency
dashboard does. Without keys, every one of those replays would have been a duplicate.

## How to fix
Look at the service's latency in that window (p99 against the client timeout) and at what
changed then. Keep keys on every retried request; raise the client deadline above the
service's real p99, or read back the effect before retrying.

## Example
```
window             keyed  replays  rate
2026-11-03T14:04     250        1   0.4%
2026-11-03T14:05     250       56  22.4%   <- spike
2026-11-03T14:06     250        1   0.4%
```
The 14:05 window's 22.4% is over max(5%, 10 x 0.4%).
"#,
    check,
};

fn check(model: &Model, settings: &Settings, shared: &Shared, out: &mut Vec<Finding>) {
    let windows = metrics::windows(shared.keyed(), settings.window);
    let threshold = metrics::spike_threshold(&windows);
    let median = metrics::median_rate(&windows);
    for w in windows.iter().filter(|w| w.spike) {
        let mut f = Finding::new(
            RULE.id,
            RULE.default_severity,
            format!(
                "replay rate {} ({} of {} keyed requests) from {} to {}, over the threshold {} \
                 (max of 5% and 10 x the median {}): clients are giving up on requests that complete",
                percent(w.replay_rate.unwrap_or(0.0)),
                w.replays,
                w.keyed_requests,
                w.start_at.display(),
                w.end_at.display(),
                percent(threshold),
                percent(median),
            ),
        );
        f.at = Some(w.start_at);
        for &seen in &w.replayed {
            match seen {
                Seen::Attempt(id) => attempt_evidence(model.attempt(id), &mut f.evidence),
                Seen::Service(loc) => f.evidence.push(loc),
            }
        }
        debug_assert!(w.keyed_requests >= SPIKE_MIN_REQUESTS);
        out.push(f);
    }
}

/// `22.4%`, `0.4%`: one decimal, for messages and tables.
pub fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}
