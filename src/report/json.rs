//! JSON output: the serde form of [`Report`], pretty-printed, so tests can parse it back.

use super::Report;

pub fn render(report: &Report) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(report).unwrap_or_default();
    out.push(b'\n');
    out
}
