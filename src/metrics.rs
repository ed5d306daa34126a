//! Dedup-layer health (SPEC §1, platform team): keyed requests, replays and conflicts, for
//! the whole input and per time window, and which windows are replay-rate spikes (SPEC §5).
//!
//! Every keyed attempt is classified once, in time order, by [`classify`]: a *replay* is a
//! response marked replayed (by the client's line, or by correlation when the service logged
//! a replay of its effect), or a `200` for a key that an earlier attempt already completed
//! (2xx); a *conflict* is what `key-payload-mismatch` reports, per request: a key refused by
//! the service (a `422`, or a `400` naming the key), or a key sent again with another tool or
//! canonical payload than the first request that carried it.

use crate::config::Period;
use crate::correlate::{AttemptId, Model};
use crate::event::Loc;
use crate::report::Metrics;
use crate::rules::rejects_key;
use crate::rules::support::has_args;
use crate::time::{Duration, Timestamp};
use serde::{Deserialize, Serialize};

/// The floor of the spike threshold: a window's replay rate must exceed max(5%, 10 × median).
pub const SPIKE_FLOOR: f64 = 0.05;
pub const SPIKE_FACTOR: f64 = 10.0;
/// A window is judged only when a single replay cannot exceed the floor on its own
/// (1 / 20 = 5%): a window with three requests and one replay is noise, not a spike.
pub const SPIKE_MIN_REQUESTS: u64 = 20;

/// Where a keyed request was read: a client's attempt, or, when no client trace has a keyed
/// request, the service's own line (an effect made under a key, or a replay it logged).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    Attempt(AttemptId),
    Service(Loc),
}

/// One keyed request, classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keyed {
    pub seen: Seen,
    pub at: Timestamp,
    pub replay: bool,
    pub conflict: bool,
}

/// Every keyed attempt in time order (then input position), classified; with no keyed
/// attempt in the inputs (the service's logs alone), the service's keyed requests instead
/// ([`service_side`]).
pub fn classify(model: &Model) -> Vec<Keyed> {
    let client = client_side(model);
    match client.is_empty() {
        true => service_side(model),
        false => client,
    }
}

/// The keyed requests a service's log shows: each effect it made under a key, and each
/// replay it logged (a replay, conflicts unknown), in time order (then input position).
/// A service that does not log its replays shows none; one that logs no key with its
/// effects shows nothing (its replays alone would read as every request replayed).
fn service_side(model: &Model) -> Vec<Keyed> {
    if !model.effects.iter().any(|e| e.key.is_some()) {
        return Vec::new();
    }
    let made = (model.effects.iter())
        .filter(|e| e.key.is_some())
        .map(|e| (e.created, e.locs[0], false));
    let replayed = model.replays.iter().map(|r| (r.at, r.loc, true));
    let mut seen: Vec<(Timestamp, Loc, bool)> = made.chain(replayed).collect();
    seen.sort_unstable();
    (seen.into_iter())
        .map(|(at, loc, replay)| Keyed {
            seen: Seen::Service(loc),
            at,
            replay,
            conflict: false,
        })
        .collect()
}

/// Every keyed attempt of the client traces, classified.
fn client_side(model: &Model) -> Vec<Keyed> {
    let mut keyed: Vec<(Timestamp, Loc, AttemptId, u32)> = model
        .attempts_with_keys()
        .filter_map(|(id, a, key)| Some((a.at, a.loc, id, key?)))
        .collect();
    // Attempt ids are unique, so no two entries compare equal: an unstable sort is exact.
    keyed.sort_unstable();
    // By the key's number: a table of the keys' texts cost a cache miss or two an attempt.
    let mut keys = vec![KeyState::default(); model.key_count()];
    let mut out = Vec::with_capacity(keyed.len());
    for (at, _, id, key) in keyed {
        let a = model.attempt(id);
        let d = &model.dispatches[id.dispatch()];
        let state = &mut keys[key as usize];
        let status = a.outcome.as_ref().and_then(|o| o.status());
        let replay = a.outcome.as_ref().is_some_and(|o| o.is_replay())
            || (status == Some(200) && state.completed);
        let rejected = a.outcome.as_ref().is_some_and(rejects_key);
        // Only a dispatch whose arguments were logged has a payload to compare.
        let mismatch = has_args(d)
            && match state.payload {
                Some(first) => payload(model, first as usize) != payload(model, id.dispatch()),
                None => {
                    state.payload = Some(id.dispatch() as u32);
                    false
                }
            };
        if status.is_some_and(|s| (200..300).contains(&s)) {
            state.completed = true;
        }
        out.push(Keyed {
            seen: Seen::Attempt(id),
            at,
            replay,
            conflict: rejected || mismatch,
        });
    }
    out
}

/// What a dispatch's request carried: its tool and canonical arguments.
fn payload(model: &Model, d: usize) -> (&str, &str) {
    let d = &model.dispatches[d];
    (model.tool_of(d), &model.calls[d.logical()].canonical)
}

/// What [`classify`] knows of each key so far.
#[derive(Clone, Copy, Default)]
struct KeyState {
    /// The dispatch of the first request with arguments that carried the key.
    payload: Option<u32>,
    /// An attempt with the key got a 2xx.
    completed: bool,
}

/// Whole-input figures.
pub fn totals(model: &Model) -> Metrics {
    totals_within(&classify(model), &Period::default())
}

/// Figures over the keyed requests ([`classify`]'d) sent within `period`.
pub fn totals_within(keyed: &[Keyed], period: &Period) -> Metrics {
    let within = || keyed.iter().filter(|k| period.contains(k.at));
    let mut m = Metrics {
        keyed_requests: within().count() as u64,
        replays: within().filter(|k| k.replay).count() as u64,
        conflicts: within().filter(|k| k.conflict).count() as u64,
        ..Metrics::default()
    };
    m.replay_rate = rate(m.replays, m.keyed_requests);
    m.conflict_rate = rate(m.conflicts, m.keyed_requests);
    m
}

fn rate(n: u64, of: u64) -> Option<f64> {
    (of > 0).then(|| n as f64 / of as f64)
}

/// One window's figures. Windows start at multiples of the width since the epoch, so a
/// width of whole minutes gives windows aligned to the minute.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// Written as a report writes times; formatted only when written (a month has ~40 k
    /// windows, and `scan` reads only its spikes').
    #[serde(rename = "start", with = "as_displayed")]
    pub start_at: Timestamp,
    #[serde(rename = "end", with = "as_displayed")]
    pub end_at: Timestamp,
    pub keyed_requests: u64,
    pub replays: u64,
    pub replay_rate: Option<f64>,
    pub conflicts: u64,
    pub conflict_rate: Option<f64>,
    /// This window is a replay-rate spike (SPEC §5).
    pub spike: bool,
    /// Where its replays were read, for evidence.
    #[serde(skip)]
    pub replayed: Vec<Seen>,
}

/// A window's bound as a report writes times (`2026-11-03T14:05:00.000Z`), and read back.
mod as_displayed {
    use crate::time::{Stamp, Timestamp, parse_stamp};
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(at: &Timestamp, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&at.display())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        let text = String::deserialize(d)?;
        match parse_stamp(text.as_bytes(), crate::time::Zone::default()) {
            Some((Stamp::Instant(at), len)) if len == text.len() => Ok(at),
            _ => Err(D::Error::custom(format!("`{text}` is not a time"))),
        }
    }
}

/// The windows that hold at least one keyed request ([`classify`]'d), in time order,
/// spikes marked.
pub fn windows(keyed: &[Keyed], width: Duration) -> Vec<Window> {
    let w = width.0.max(1);
    let mut out: Vec<Window> = Vec::new();
    for k in keyed {
        let start = k.at.0.div_euclid(w) * w;
        if out.last().is_none_or(|l| l.start_at.0 != start) {
            let (s, e) = (Timestamp(start), Timestamp(start.saturating_add(w)));
            out.push(Window {
                start_at: s,
                end_at: e,
                keyed_requests: 0,
                replays: 0,
                replay_rate: None,
                conflicts: 0,
                conflict_rate: None,
                spike: false,
                replayed: Vec::new(),
            });
        }
        let win = out.last_mut().expect("pushed above");
        win.keyed_requests += 1;
        win.replays += k.replay as u64;
        win.conflicts += k.conflict as u64;
        if k.replay {
            win.replayed.push(k.seen);
        }
    }
    for win in &mut out {
        win.replay_rate = rate(win.replays, win.keyed_requests);
        win.conflict_rate = rate(win.conflicts, win.keyed_requests);
    }
    let threshold = spike_threshold(&out);
    for win in &mut out {
        win.spike = win.keyed_requests >= SPIKE_MIN_REQUESTS
            && win.replay_rate.is_some_and(|r| r > threshold);
    }
    out
}

/// max(5%, 10 × the median of all windows' replay rates).
pub fn spike_threshold(windows: &[Window]) -> f64 {
    SPIKE_FLOOR.max(SPIKE_FACTOR * median_rate(windows))
}

/// The median of the windows' replay rates (0 when there are none).
pub fn median_rate(windows: &[Window]) -> f64 {
    median(windows.iter().filter_map(|w| w.replay_rate))
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(keyed: u64, replays: u64) -> Window {
        Window {
            start_at: Timestamp(0),
            end_at: Timestamp(0),
            keyed_requests: keyed,
            replays,
            replay_rate: rate(replays, keyed),
            conflicts: 0,
            conflict_rate: None,
            spike: false,
            replayed: Vec::new(),
        }
    }

    #[test]
    fn a_window_is_written_with_its_times_displayed_and_read_back() {
        let mut w = win(40, 2);
        w.start_at = Timestamp(1_793_000_000_000_000_000);
        w.end_at = Timestamp(1_793_000_060_000_000_000);
        let json = serde_json::to_value(&w).unwrap();
        assert_eq!(json["start"], w.start_at.display());
        assert_eq!(json["end"], w.end_at.display());
        assert!(json.get("start_at").is_none());
        let back: Window = serde_json::from_value(json.clone()).unwrap();
        assert_eq!((back.start_at, back.end_at), (w.start_at, w.end_at));
        let mut bad = json;
        bad["start"] = "14:05".into();
        let err = serde_json::from_value::<Window>(bad).unwrap_err();
        assert!(err.to_string().contains("`14:05` is not a time"), "{err}");
    }

    #[test]
    fn threshold_is_ten_times_the_median_with_a_five_percent_floor() {
        let quiet: Vec<Window> = (0..9).map(|_| win(250, 1)).collect();
        assert_eq!(spike_threshold(&quiet), 0.05);
        let busy: Vec<Window> = (0..9).map(|_| win(100, 1)).chain([win(100, 3)]).collect();
        assert!((spike_threshold(&busy) - 0.10).abs() < 1e-12);
        assert_eq!(median([1.0, 3.0].into_iter()), 2.0);
        assert_eq!(median(std::iter::empty()), 0.0);
    }
}
