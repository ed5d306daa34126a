//! Metrics output (SPEC §7, platform team): per window the keyed requests, replays, conflicts
//! and their rates, spikes marked; the whole-input figures; the spike findings. The table
//! draws each window's replay rate as a bar, scaled to the highest rate, so a jump from 0.4%
//! to 22% shows at a glance.

use super::{FindingReport, Metrics};
use crate::metrics::Window;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

pub const SCHEMA: &str = "idem-audit.metrics.v1";
/// The widest bar, in terminal cells.
const BAR_WIDTH: usize = 40;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricsReport {
    pub schema: String,
    /// The window width as given (`1m`).
    pub window: String,
    /// max(5%, 10 x median): a window's replay rate above it is a spike.
    pub spike_threshold: f64,
    pub windows: Vec<Window>,
    pub totals: Metrics,
    /// The `replay-rate-spike` findings.
    pub findings: Vec<FindingReport>,
}

pub fn render_json(r: &MetricsReport) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(r).unwrap_or_default();
    out.push(b'\n');
    out
}

/// One row per window; rates as fractions with six decimals, empty when undefined.
pub fn render_csv(r: &MetricsReport) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "window_start",
        "window_end",
        "keyed_requests",
        "replays",
        "replay_rate",
        "conflicts",
        "conflict_rate",
        "spike",
    ]);
    let rate = |r: Option<f64>| r.map(|r| format!("{r:.6}")).unwrap_or_default();
    for win in &r.windows {
        let _ = w.write_record([
            win.start_at.display().as_str(),
            &win.end_at.display(),
            &win.keyed_requests.to_string(),
            &win.replays.to_string(),
            &rate(win.replay_rate),
            &win.conflicts.to_string(),
            &rate(win.conflict_rate),
            if win.spike { "true" } else { "false" },
        ]);
    }
    w.into_inner().unwrap_or_default()
}

pub fn render_text(r: &MetricsReport) -> Vec<u8> {
    let mut out = String::new();
    let t = &r.totals;
    let pct = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |x| format!("{:.1}%", x * 100.0));
    let _ = writeln!(
        out,
        "whole input: {} keyed requests, {} replays ({}), {} conflicts ({})",
        t.keyed_requests,
        t.replays,
        pct(t.replay_rate),
        t.conflicts,
        pct(t.conflict_rate)
    );
    let spikes = r.windows.iter().filter(|w| w.spike).count();
    let _ = writeln!(
        out,
        "windows: {} windows of {} with keyed requests; spike threshold {:.1}%; {spikes} {}",
        r.windows.len(),
        r.window,
        r.spike_threshold * 100.0,
        if spikes == 1 { "spike" } else { "spikes" }
    );
    if r.windows.is_empty() {
        out.push_str("\nNo keyed requests.\n");
        return out.into_bytes();
    }
    out.push('\n');
    let max = r
        .windows
        .iter()
        .filter_map(|w| w.replay_rate)
        .fold(0.0f64, f64::max);
    let starts: Vec<String> = r.windows.iter().map(|w| w.start_at.display()).collect();
    let start_w = starts.iter().map(String::len).max().unwrap_or(5);
    let _ = writeln!(
        out,
        "{:start_w$}  {:>7}  {:>7}  {:>6}  {:>9}  {:>6}  replay rate",
        "window", "keyed", "replays", "rate", "conflicts", "rate"
    );
    for (w, start) in r.windows.iter().zip(&starts) {
        let _ = writeln!(
            out,
            "{:start_w$}  {:>7}  {:>7}  {:>6}  {:>9}  {:>6}  {}",
            start,
            w.keyed_requests,
            w.replays,
            pct(w.replay_rate),
            w.conflicts,
            pct(w.conflict_rate),
            if w.spike {
                format!(
                    "{:<BAR_WIDTH$}  <- spike",
                    bar(w.replay_rate.unwrap_or(0.0), max)
                )
            } else {
                bar(w.replay_rate.unwrap_or(0.0), max)
            },
        );
    }
    if !r.findings.is_empty() {
        out.push_str("\nfindings:\n");
        for f in &r.findings {
            let _ = writeln!(out, "{} {}: {}", f.severity.as_str(), f.rule, f.message);
        }
    }
    out.into_bytes()
}

/// A bar of `rate / max` of `BAR_WIDTH` cells, in eighths; any non-zero rate shows at
/// least a sliver, so 0.4% next to 22% is still visibly not zero.
pub fn bar(rate: f64, max: f64) -> String {
    const EIGHTHS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let mut s = String::new();
    if max > 0.0 && rate > 0.0 {
        let eighths = ((rate / max) * (BAR_WIDTH * 8) as f64).round().max(1.0) as usize;
        s.extend(std::iter::repeat_n('█', eighths / 8));
        if !eighths.is_multiple_of(8) {
            s.push(EIGHTHS[eighths % 8]);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::bar;

    #[test]
    fn bars_scale_to_the_highest_rate() {
        assert_eq!(bar(0.22, 0.22), "█".repeat(40));
        assert_eq!(bar(0.11, 0.22), "█".repeat(20));
        assert_eq!(bar(0.004, 0.22).chars().count(), 1);
        assert_eq!(bar(0.0001, 0.22), "▏");
        assert_eq!(bar(0.0, 0.22), "");
    }
}
