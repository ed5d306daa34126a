//! JSON output: the serde form of [`Report`], pretty-printed, so tests can parse it back.

use super::Report;

pub fn render(report: &Report) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing to memory fails only if serialising does, and a report always serialises.
    write(report, &mut out).unwrap_or_default();
    out
}

/// Writes the report to `out` as it serialises, with a final newline.
pub fn write(report: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    out.write_all(b"\n")
}
