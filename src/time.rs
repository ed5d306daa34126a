//! Instants and durations: UTC nanoseconds since the epoch, so that sorting and window
//! arithmetic are plain integer operations on the hot path. Parsing lives here too, since
//! every input format shares the same timestamp spellings (SPEC §3.6).

use chrono::{DateTime, Utc};

pub const NANOS_PER_MILLI: i64 = 1_000_000;
pub const NANOS_PER_SEC: i64 = 1_000_000_000;
pub const NANOS_PER_DAY: i64 = 86_400 * NANOS_PER_SEC;

/// Instants earlier than this are time-only timestamps placed on 1970-01-01 (SPEC §3.6);
/// they are printed without a date.
const DATELESS_LIMIT: i64 = 30 * NANOS_PER_DAY;

/// A UTC instant in nanoseconds since the Unix epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub i64);

impl Timestamp {
    pub fn from_millis(ms: i64) -> Self {
        Timestamp(ms.saturating_mul(NANOS_PER_MILLI))
    }

    pub fn nanos(self) -> i64 {
        self.0
    }

    /// True for time-only timestamps that had no date to go with them.
    pub fn is_dateless(self) -> bool {
        (0..DATELESS_LIMIT).contains(&self.0)
    }

    pub fn plus(self, d: Duration) -> Self {
        Timestamp(self.0.saturating_add(d.0))
    }

    pub fn minus(self, d: Duration) -> Self {
        Timestamp(self.0.saturating_sub(d.0))
    }

    pub fn since(self, earlier: Timestamp) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }

    /// `14:02:21.418` for dateless instants (with `+Nd` after a midnight rollover),
    /// `2026-11-03T14:02:21.418Z` otherwise. Milliseconds are always printed, so output
    /// widths are stable.
    pub fn display(self) -> String {
        if self.is_dateless() {
            let day = self.0.div_euclid(NANOS_PER_DAY);
            let in_day = self.0.rem_euclid(NANOS_PER_DAY);
            let ms = in_day / NANOS_PER_MILLI;
            let (h, m, s, f) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
            let mut out = format!("{h:02}:{m:02}:{s:02}.{f:03}");
            if day > 0 {
                out.push_str(&format!(" +{day}d"));
            }
            return out;
        }
        DateTime::<Utc>::from_timestamp_nanos(self.0)
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string()
    }
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display())
    }
}

/// A signed span of time in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(pub i64);

impl Duration {
    pub fn from_secs(s: i64) -> Self {
        Duration(s.saturating_mul(NANOS_PER_SEC))
    }

    pub fn from_millis(ms: i64) -> Self {
        Duration(ms.saturating_mul(NANOS_PER_MILLI))
    }

    /// Seconds with one decimal, for messages: `10.0 s`.
    pub fn display_secs(self) -> String {
        let tenths = (self.0 + NANOS_PER_SEC / 20) / (NANOS_PER_SEC / 10);
        format!("{}.{} s", tenths / 10, (tenths % 10).abs())
    }

    /// Parses `2s`, `500ms`, `5m`, `24h`, `1d` (a bare number is seconds).
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let n: i64 = num
            .parse()
            .map_err(|_| format!("`{text}` is not a duration: expected a number and a unit such as 2s, 500ms, 5m, 24h"))?;
        let unit_nanos = match unit {
            "" | "s" => NANOS_PER_SEC,
            "ms" => NANOS_PER_MILLI,
            "m" | "min" => 60 * NANOS_PER_SEC,
            "h" => 3600 * NANOS_PER_SEC,
            "d" => NANOS_PER_DAY,
            _ => {
                return Err(format!(
                    "`{text}` has an unknown unit `{unit}`: expected ms, s, m, h or d"
                ));
            }
        };
        Ok(Duration(n.saturating_mul(unit_nanos)))
    }
}
