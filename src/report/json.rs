//! JSON output: the serde form of [`Report`], pretty-printed, so tests can parse it back.
//! A scan's rows are written by hand (`json/row.rs`) as serde would write them, a batch at a time.

use super::{Report, input_paths};
use crate::finding::Finding;
use rayon::prelude::*;
use rayon::{Scope, ThreadPool};
use row::{QuotedPaths, write_row};
use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};
use std::io::Write;

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

/// Writes `report` (made by [`super::summarise`], without rows) with a row for each of
/// `findings`: the same bytes as [`write()`] of the report with its rows, without a
/// month's rows in memory at once. Rows are made a batch at a time on every thread (a
/// month's JSON is tens of megabytes, and making it on one thread left the other idle at
/// the end of a scan), each pretty-printed at the depth it takes in the report.
/// `pool` is the one `--threads` sized, if it was given (else rayon's global one).
pub fn write_with_rows(
    report: &Report,
    findings: &[Finding],
    out: &mut dyn std::io::Write,
    pool: Option<&ThreadPool>,
) -> std::io::Result<()> {
    // The members of `Report`, in its order (the test below fails if one is added here or
    // there only).
    member(out, "{\n  \"schema\": ", &report.schema)?;
    member(out, ",\n  \"inputs\": ", &report.inputs)?;
    member(out, ",\n  \"summary\": ", &report.summary)?;
    out.write_all(b",\n  \"findings\": ")?;
    rows(
        out,
        findings,
        &QuotedPaths::new(&input_paths(&report.inputs)),
        pool,
    )?;
    member(out, ",\n  \"metrics\": ", &report.metrics)?;
    out.write_all(b"\n}\n")
}

/// A member of the report: what comes before its value, then the value one level deep.
fn member(out: &mut dyn Write, before: &str, value: &impl Serialize) -> std::io::Result<()> {
    out.write_all(before.as_bytes())?;
    let mut ser = serde_json::Serializer::with_formatter(&mut *out, pretty_at(1));
    Ok(value.serialize(&mut ser)?)
}

/// The findings as the pretty printer writes a sequence two levels deep. Each batch is made
/// on the pool while this thread writes the one before.
fn rows(
    out: &mut dyn Write,
    findings: &[Finding],
    paths: &QuotedPaths,
    pool: Option<&ThreadPool>,
) -> std::io::Result<()> {
    const ROWS_AT_ONCE: usize = 4096;
    if findings.is_empty() {
        return out.write_all(b"[]");
    }
    let mut batches = findings.chunks(ROWS_AT_ONCE);
    let mut made = None;
    let mut first = true;
    loop {
        let current = made.take();
        let mut written = Ok(());
        in_scope(pool, |s| {
            if let Some(next) = batches.next() {
                let opens = std::mem::take(&mut first);
                let made = &mut made;
                s.spawn(move |_| *made = Some(batch(next, paths, opens)));
            }
            if let Some(current) = &current {
                written = current.iter().try_for_each(|piece| out.write_all(piece));
            }
        });
        written?;
        if made.is_none() {
            break;
        }
    }
    out.write_all(b"\n  ]")
}

/// Runs `op` on this thread, its spawned work going to `pool` (or rayon's global pool).
fn in_scope<'s>(pool: Option<&ThreadPool>, op: impl FnOnce(&Scope<'s>)) {
    match pool {
        Some(pool) => pool.in_place_scope(op),
        None => rayon::in_place_scope(op),
    }
}

/// The rows of `findings`, each after its separator (the sequence's opening for the first
/// of all), in pieces made on every thread.
fn batch(findings: &[Finding], paths: &QuotedPaths, first: bool) -> Vec<Vec<u8>> {
    const ROWS_A_PIECE: usize = 256;
    let pieces = findings.par_chunks(ROWS_A_PIECE).enumerate();
    let pieces = pieces.map(|(i, rows)| {
        let mut piece = Vec::with_capacity(rows.len() * 1024);
        for (j, f) in rows.iter().enumerate() {
            let opens = first && i == 0 && j == 0;
            piece.extend_from_slice(if opens { b"[\n    " } else { b",\n    " });
            write_row(f, paths, &mut piece);
        }
        piece
    });
    pieces.collect()
}

/// serde_json's pretty printer as it stands `depth` levels into a document: each array it
/// opens indents what follows one level more (what it writes here is thrown away).
pub(super) fn pretty_at(depth: usize) -> PrettyFormatter<'static> {
    let mut pretty = PrettyFormatter::new();
    for _ in 0..depth {
        // A sink takes every write.
        let _ = pretty.begin_array(&mut std::io::sink());
    }
    pretty
}

mod row;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Severity;
    use crate::report::{InputReport, build, summarise};

    /// Rows made in batches on several threads, and the members around them, are the bytes
    /// serde_json writes for the whole report: with no rows, a few, and more than a batch.
    #[test]
    fn rows_written_as_made_are_the_report_with_its_rows() {
        let input = InputReport {
            path: "trace.log".into(),
            format: Some("text".into()),
            lines: 3,
            events: 2,
            ignored: 1,
            skipped: 0,
            problems: vec![crate::report::ProblemReport {
                line: 3,
                reason: "no timestamp".into(),
            }],
            warned: 0,
            warnings: Vec::new(),
            note: None,
            blank: false,
        };
        for count in [0, 2, 4096 * 2 + 3] {
            let findings: Vec<Finding> = (0..count)
                .map(|i| {
                    let mut f = Finding::new(
                        "duplicate-effect",
                        Severity::Error,
                        format!("A-{i} \"twice\""),
                    );
                    f.order = Some(format!("A-{i}"));
                    f.evidence.push(crate::event::Loc { input: 0, line: i });
                    f
                })
                .collect();
            let whole = render(&build(
                vec![input.clone()],
                findings.clone(),
                Default::default(),
            ));
            let head = summarise(vec![input.clone()], &findings, Default::default());
            let one = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            for pool in [None, Some(&one)] {
                let mut streamed = Vec::new();
                write_with_rows(&head, &findings, &mut streamed, pool).unwrap();
                assert_eq!(
                    String::from_utf8(streamed).unwrap(),
                    String::from_utf8(whole.clone()).unwrap(),
                    "{count} findings"
                );
            }
        }
    }
}
