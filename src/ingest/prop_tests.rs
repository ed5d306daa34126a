//! Properties of the structured parsers (JSON Lines, CSV exports, record dumps): whatever
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
                    || (format != Format::Jsonl && b == b'\r' && bytes.get(i + 1) != Some(&b'\n'))
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
        Err(e) => prop_assert!(format != Format::Jsonl, "{}", e),
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

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
    fn json_lines_like_input_is_accounted_for(bytes in jsonl_like()) {
        accounted(Format::Jsonl, &bytes)?;
    }
}
