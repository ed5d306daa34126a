//! The invariants every parser must keep on any input whatsoever, as functions that panic
//! when one is broken. The property tests (`tests/properties.rs`) and the fuzz targets
//! (`fuzz/`) call the same entry points, so a fuzz finding replays as a unit test and the
//! other way round.
//!
//! - parsing never panics, whatever the bytes;
//! - every line is accounted for: `lines = events + ignored + skipped` (for OTLP, whose unit
//!   is the span, after the spans are linked);
//! - for line formats, `lines` is the number of physical lines, and every event and problem
//!   cites a line that exists.

use super::{Format, InputStats, ParseOptions, otlp};

/// Physical lines: newlines, plus a last line without one. A lone `\r` (old Mac endings)
/// also ends a line, since the CSV reader reads it so; text formats see it inside a line.
fn physical_lines(data: &[u8], lone_cr_ends_line: bool) -> u64 {
    let mut n = memchr::memchr_iter(b'\n', data).count() as u64;
    if lone_cr_ends_line {
        n += data
            .windows(2)
            .filter(|w| w[0] == b'\r' && w[1] != b'\n')
            .count() as u64;
        n += u64::from(data.last() == Some(&b'\r'));
        return n + u64::from(data.last().is_some_and(|&b| b != b'\n' && b != b'\r'));
    }
    n + u64::from(data.last().is_some_and(|&b| b != b'\n'))
}

/// Parses `data` as `format` and checks the accounting; returns the stats.
pub fn check_parse(format: Format, data: &[u8], opts: &ParseOptions) -> InputStats {
    let mut reader = data;
    let parsed = match super::parse(format, &mut reader, 0, opts) {
        Ok(p) => p,
        // Reading a byte slice cannot fail; a parser that reports an error must still not
        // have panicked, which is all there is to check then.
        Err(_) => return InputStats::default(),
    };
    let mut stats = parsed.stats.clone();
    let mut max_line = 0u32;
    for e in parsed.all_events() {
        max_line = max_line.max(e.loc.line);
        assert!(e.loc.line >= 1, "{format:?}: event at line 0");
    }
    if !parsed.spans.is_empty() {
        let linked = otlp::link::link(&parsed.spans);
        assert_eq!(linked.used.len(), parsed.spans.len());
        for used in &linked.used {
            if *used {
                stats.events += 1;
            } else {
                stats.ignored += 1;
            }
        }
    }
    assert_eq!(
        stats.lines,
        stats.events + stats.ignored + stats.skipped,
        "{format:?}: lines != events + ignored + skipped: {stats:?}"
    );
    if format != Format::Otlp {
        let physical = physical_lines(data, matches!(format, Format::Csv | Format::Records));
        assert_eq!(
            stats.lines, physical,
            "{format:?}: counted lines differ from physical lines"
        );
        assert!(
            u64::from(max_line) <= physical,
            "{format:?}: an event cites line {max_line} of {physical}"
        );
        for p in &stats.problems {
            assert!(
                p.line >= 1 && u64::from(p.line) <= physical.max(1),
                "{format:?}: a problem cites line {} of {physical}",
                p.line
            );
        }
    }
    stats
}

/// Dropping idle calls while reading ([`crate::relevance`], and the text parser's shortcut for
/// them) changes which events are kept, never the accounting nor an event: parsed with and
/// without it, the stats and problems are the same, and every event kept, set aside or held
/// is the event read without it at the same line.
pub fn check_filter_agrees(format: Format, data: &[u8], opts: &ParseOptions) {
    if format == Format::Otlp {
        return;
    }
    let plain = ParseOptions {
        relevance: None,
        ..opts.clone()
    };
    let filtering = ParseOptions {
        relevance: Some(crate::relevance::Relevance::default()),
        ..opts.clone()
    };
    let (Ok(all), Ok(kept)) = (
        super::parse(format, &mut &data[..], 0, &plain),
        super::parse(format, &mut &data[..], 0, &filtering),
    ) else {
        return;
    };
    assert_eq!(
        all.stats, kept.stats,
        "{format:?}: filtering changed the accounting"
    );
    let by_line: std::collections::HashMap<u32, Vec<&crate::event::Event>> =
        all.all_events().fold(Default::default(), |mut m, e| {
            m.entry(e.loc.line).or_default().push(e);
            m
        });
    let set_aside = kept.deferred.iter().cloned().flat_map(|d| d.into_events());
    let started = kept.started.iter().cloned().map(|s| s.into_event());
    for e in kept.all_events().cloned().chain(set_aside).chain(started) {
        let read = by_line
            .get(&e.loc.line)
            .map(Vec::as_slice)
            .unwrap_or_default();
        assert!(
            read.contains(&&e),
            "{format:?}: an event differs from the one read without filtering: {e:?}"
        );
    }
    // The same decisions as the filter makes on the events read without it: the text
    // parser's shortcut judges idle calls on their bytes, and must judge them alike.
    let mut filter = crate::relevance::Filter::new(crate::relevance::Relevance::default());
    let mut generic = Vec::new();
    for e in all.all_events().cloned() {
        filter.push(e, &mut generic);
    }
    filter.finish(&mut generic);
    let by_place = |mut v: Vec<crate::event::Event>| {
        v.sort_by_key(|e| e.loc);
        v
    };
    let unpack = |d: Vec<crate::relevance::Deferred>| {
        by_place(d.into_iter().flat_map(|d| d.into_events()).collect())
    };
    assert_eq!(
        by_place(kept.all_events().cloned().collect()),
        by_place(generic),
        "{format:?}: the events kept differ from the filter's"
    );
    assert_eq!(unpack(kept.deferred.clone()), unpack(filter.deferred));
    assert_eq!(kept.started, filter.started);
    assert_eq!(kept.dropped, filter.dropped);
}

/// Detection must not panic either, and a detected format must parse.
pub fn check_detect(data: &[u8], opts: &ParseOptions) {
    if let Some(format) = super::source::detect(data, &opts.csv_map) {
        check_parse(format, data, opts);
    }
}

/// The canonical form is a fixed point (canonicalising its own output changes nothing); neither
/// it nor the Python form panics on any JSON. (`1e999` is written `Infinity`, as Python does,
/// which is no JSON to parse back: there is nothing to compare then.)
pub fn check_canonical(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let canon = crate::canonical::canonical(&value);
    let _ = crate::canonical::python_dumps(&value);
    let Ok(again) = serde_json::from_str::<serde_json::Value>(&canon) else {
        return;
    };
    assert_eq!(
        crate::canonical::canonical(&again),
        canon,
        "the canonical form is not a fixed point"
    );
}
