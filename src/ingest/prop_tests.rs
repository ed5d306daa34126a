//! Properties of the structured parsers (JSON Lines, CSV exports, record dumps, Node's
//! console and pino-pretty): whatever
//! the bytes, no panic, and every physical line is an event, ignored or skipped.

use super::{Format, ParseOptions, parse};
use proptest::prelude::*;

fn accounted(format: Format, bytes: &[u8]) -> Result<(), TestCaseError> {
    match parse(format, &mut &bytes[..], 0, &ParseOptions::default()) {
        Ok(p) => {
            let s = &p.stats;
            prop_assert_eq!(s.lines, s.events + s.ignored + s.skipped);
            prop_assert_eq!(p.events.len() as u64, s.events);
            // JSON Lines ends lines at `\n` only; the CSV reader also at a lone `\r`.
            let ends = |i: usize, b: u8| {
                b == b'\n'
                    || (matches!(format, Format::Csv | Format::Records)
                        && b == b'\r'
                        && bytes.get(i + 1) != Some(&b'\n'))
            };
            let terminators = bytes
                .iter()
                .enumerate()
                .filter(|(i, b)| ends(*i, **b))
                .count();
            let open_end = bytes.last().is_some_and(|&b| !ends(bytes.len() - 1, b));
            prop_assert_eq!(s.lines, terminators as u64 + u64::from(open_end));
        }
        // A CSV header without the columns it needs is an error for the file, not a panic.
        Err(e) => prop_assert!(matches!(format, Format::Csv | Format::Records), "{}", e),
    }
    Ok(())
}

/// Lines shaped like the formats, with fields broken in the ways real exports break.
fn csv_like() -> impl Strategy<Value = Vec<u8>> {
    let cell = prop_oneof![
        Just("45.00".to_string()),
        Just("gbp".to_string()),
        Just("2026-11-03 14:02:11".to_string()),
        Just("1762178531".to_string()),
        Just("\"a, \"\"b\"\"\nc\"".to_string()),
        Just("\"unterminated".to_string()),
        Just("a\rb".to_string()),
        Just(String::new()),
        "[ -~]{0,12}",
    ];
    let row = proptest::collection::vec(cell, 0..8).prop_map(|c| c.join(","));
    (
        prop_oneof![
            Just("id,amount,currency,created,order_id,status"),
            Just("key,request_hash,status,response,created_at"),
        ],
        proptest::collection::vec(row, 0..12),
    )
        .prop_map(|(h, rows)| format!("{h}\n{}", rows.join("\n")).into_bytes())
}

fn jsonl_like() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        Just(
            r#"{"ts":"2026-11-03T14:02:11Z","type":"attempt","run":"r","step":1,"attempt":1}"#
                .to_string()
        ),
        Just(
            r#"{"ts":"14:02:11","type":"effect","effect_id":"x","kind":"refund","amount_p":1}"#
                .to_string()
        ),
        Just(r#"{"ts":1e400,"type":"response","status":99999999999}"#.to_string()),
        Just(r#"{"type":"tool_call","args":"{"}"#.to_string()),
        Just("[1,2]".to_string()),
        Just("{\"ts\":\"\\ud800\",\"type\":\"run\"}".to_string()),
        "[ -~]{0,40}",
    ];
    proptest::collection::vec(line, 0..12).prop_map(|l| l.join("\n").into_bytes())
}

/// Records of pino-pretty and of Node's console, whole and broken: headers, members,
/// values over several lines left open, stacks, errors without a stamp.
fn node_log_like() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        Just("[2026-12-06 19:54:34.621 +0000] INFO (agent/1): tool call".to_string()),
        Just("[19:54:34.621] WARN: retrying {\"code\":\"ECONNABORTED\"}".to_string()),
        Just("[1796586906886] ERROR (agent/1 on vm):".to_string()),
        Just("2026-12-06T10:00:00.000Z tool call { runId: 'r1', step: 1 }".to_string()),
        Just("2026-12-06T10:00:00.000Z refund request {".to_string()),
        Just("<ref *1> AxiosError: timeout of 1000ms exceeded".to_string()),
        Just("Caused by: Error: socket hang up".to_string()),
        Just("    runId: \"r1\"".to_string()),
        Just("    args: {".to_string()),
        Just("      \"order\": \"A-1\",".to_string()),
        Just("      \"stack\":".to_string()),
        Just("          Error: boom".to_string()),
        Just("    }".to_string()),
        Just("    at x (y.js:1:1) {".to_string()),
        Just("  code: 'ECONNRESET',".to_string()),
        Just("}".to_string()),
        "[ -~]{0,40}",
    ];
    proptest::collection::vec(line, 0..16).prop_map(|l| l.join("\n").into_bytes())
}

/// A CSV export of good rows, each with its id and the physical line it starts on: rows
/// with notes of one line or several (blank ones too), ended by `\n`, `\r\n` or a lone
/// `\r`, with blank lines between.
fn export_with_lines() -> impl Strategy<Value = (Vec<u8>, Vec<(String, u32)>)> {
    let end = prop_oneof![Just("\n"), Just("\r\n"), Just("\r")];
    let note = prop_oneof![
        Just("plain"),
        Just("\"quoted, one line\""),
        Just("\"two\nlines\""),
        Just("\"a blank\r\n\r\nline, \"\"inside\"\"\""),
        Just(""),
    ];
    let row = (note, end.clone(), proptest::collection::vec(end, 0..3));
    proptest::collection::vec(row, 0..10).prop_map(|rows| {
        let mut text = String::from("id,note,amount,currency,created\n");
        let mut starts = Vec::new();
        for (k, (note, end, blanks)) in rows.into_iter().enumerate() {
            starts.push((format!("rf_{k}"), text.len()));
            text += &format!("rf_{k},{note},45.00,GBP,2026-11-03T14:02:11Z{end}");
            text.extend(blanks);
        }
        // The line a row starts on: one more than the line ends before it (a `\r` then a
        // `\n` is one; a blank `\r` then a blank `\n` make one too).
        let b = text.as_bytes();
        let line = |at: usize| {
            let ends = (0..at)
                .filter(|&i| b[i] == b'\n' || (b[i] == b'\r' && b.get(i + 1) != Some(&b'\n')))
                .count();
            ends as u32 + 1
        };
        let want = starts.into_iter().map(|(id, at)| (id, line(at))).collect();
        (text.into_bytes(), want)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every row is cited on the physical line it starts on, whatever blank lines, line
    /// ends and multi-line fields come before it.
    #[test]
    fn export_rows_cite_the_line_they_start_on((bytes, want) in export_with_lines()) {
        let p = parse(Format::Csv, &mut &bytes[..], 0, &ParseOptions::default()).unwrap();
        prop_assert_eq!(&p.stats.problems, &vec![]);
        let got: Vec<(String, u32)> = (p.events.iter())
            .map(|e| match &e.kind {
                crate::event::EventKind::Effect(x) => (x.id.to_string(), e.loc.line),
                _ => (String::new(), 0),
            })
            .collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn any_bytes_are_accounted_for(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        for f in [Format::Jsonl, Format::Csv, Format::Records] {
            accounted(f, &bytes)?;
        }
    }

    #[test]
    fn export_like_input_is_accounted_for(bytes in csv_like()) {
        accounted(Format::Csv, &bytes)?;
        accounted(Format::Records, &bytes)?;
    }

    #[test]
    fn node_log_like_input_is_accounted_for(bytes in node_log_like()) {
        accounted(Format::PinoPretty, &bytes)?;
        accounted(Format::NodeConsole, &bytes)?;
    }

    #[test]
    fn any_bytes_are_accounted_for_by_the_node_readers(
        bytes in proptest::collection::vec(any::<u8>(), 0..400)
    ) {
        accounted(Format::PinoPretty, &bytes)?;
        accounted(Format::NodeConsole, &bytes)?;
    }

    #[test]
    fn json_lines_like_input_is_accounted_for(bytes in jsonl_like()) {
        accounted(Format::Jsonl, &bytes)?;
    }
}
