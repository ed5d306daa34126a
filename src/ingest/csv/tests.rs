//! The CSV reader's tests: rows read into effects, the lines they are cited on, and the
//! rows joined by a quote (never closed, or stray) skipped with the rows after them read.

use super::*;

fn run(text: &str, map: &[(&str, &str)]) -> Parsed {
    let opts = ParseOptions {
        csv_map: map
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        ..ParseOptions::default()
    };
    parse(&mut text.as_bytes(), 0, &opts).unwrap()
}

fn effects(p: &Parsed) -> Vec<(&Effect, String)> {
    p.events
        .iter()
        .map(|e| match &e.kind {
            EventKind::Effect(f) => (&**f, e.at.display()),
            _ => panic!("not an effect"),
        })
        .collect()
}

/// A key column that says there was none (`None`, a redaction) gives no key: read as
/// one, every such row would share it.
#[test]
fn keys_that_say_there_is_none() {
    let p = run(
        "id,order_id,amount,currency,created_at,idempotency_key\n\
         rf_1,A-1,45.00,GBP,2026-11-03T10:00:00Z,k-1\n\
         rf_2,A-2,45.00,GBP,2026-11-03T10:00:01Z,None\n\
         rf_3,A-3,45.00,GBP,2026-11-03T10:00:02Z,[REDACTED]\n",
        &[],
    );
    let keys: Vec<Option<&str>> = effects(&p).iter().map(|e| e.0.key.as_deref()).collect();
    assert_eq!(keys, [Some("k-1"), None, None]);
}

#[test]
fn settlement_export_with_decimal_amounts_and_lower_case_currency() {
    let p = run(
        "id,Amount,Currency,Created (UTC),Status,order_id (metadata)\n\
         rf_8XM1,45.00,gbp,2026-11-03 14:02:11,succeeded,A-88214\n\
         rf_1,1200,jpy,2026-11-03 14:05:00,succeeded,A-1\n\
         rf_2,1.250,kwd,2026-11-03 14:06:00,failed,A-2\n",
        &[],
    );
    assert_eq!(p.stats.problems, vec![]);
    let e = effects(&p);
    assert_eq!(e[0].0.amount, Some(Money::new(4500, Currency::GBP)));
    assert_eq!(e[0].0.kind, "refund");
    assert_eq!(e[0].0.order.as_deref(), Some("A-88214"));
    assert_eq!(e[0].1, "2026-11-03T14:02:11.000Z");
    assert_eq!(e[1].0.amount.unwrap().minor, 1200);
    assert_eq!(e[2].0.amount.unwrap().minor, 1250);
    assert!(
        !e[2].0.happened,
        "a failed row is not an effect that happened"
    );
    assert_eq!((p.stats.lines, p.stats.events, p.stats.ignored), (4, 3, 1));
}

#[test]
fn api_style_export_is_in_minor_units_and_unix_seconds() {
    let p = run(
        "id,object,amount,currency,created,metadata[order_id]\nch_1,charge,4500,usd,1762178531,A-9\n",
        &[],
    );
    let e = effects(&p);
    assert_eq!(e[0].0.kind, "charge");
    assert_eq!(e[0].0.amount.unwrap().minor, 4500);
    assert_eq!(e[0].1, "2025-11-03T14:02:11.000Z");
}

#[test]
fn crlf_rows_cite_the_line_they_start_on() {
    // Found by the evidence test: the reader placed each row after a `\r\n` one line
    // early, so findings cited the header.
    let p = run(
        "id,order_id,amount,currency,created\r\n\
         rf_1,A-1,45.00,GBP,2026-11-03 14:02:11\r\n\
         rf_2,\"A\r\n2\",45.00,GBP,2026-11-03 14:02:12\r\n\
         rf_3,A-3,45.00,GBP,2026-11-03 14:02:13\n\
         rf_4,A-4,45.00,GBP,2026-11-03 14:02:14\r\n",
        &[],
    );
    let lines: Vec<u32> = p.events.iter().map(|e| e.loc.line).collect();
    assert_eq!(lines, [2, 3, 5, 6]);
    assert_eq!(p.stats.lines, 6);
}

#[test]
fn mapped_columns_and_quoted_fields_spanning_lines() {
    let p = run(
        "Ref,Order Ref,amount_p,When,Note\n\
         \"rf_1\",\"A-1\",4500,2026-11-03T14:02:11Z,\"first line\nsecond, line\"\n\
         rf_2,A-2,300,2026-11-03T14:03:11Z,plain\n",
        &[("id", "Ref"), ("order", "order ref"), ("created", "When")],
    );
    assert_eq!(p.stats.problems, vec![]);
    let e = effects(&p);
    assert_eq!(e.len(), 2);
    assert_eq!(e[0].0.order.as_deref(), Some("A-1"));
    assert_eq!(e[0].0.amount, Some(Money::new(4500, Currency::GBP)));
    assert_eq!(p.events[1].loc.line, 4, "the row after a two-line field");
    assert_eq!((p.stats.lines, p.stats.events, p.stats.ignored), (4, 2, 2));
}

#[test]
fn bad_rows_are_skipped_with_their_line_and_the_rest_read() {
    let p = run(
        "id,amount,currency,created\n\
         rf_1,45.0x,GBP,2026-11-03T14:02:11Z\n\
         rf_2,45.00,XYZ,2026-11-03T14:02:11Z\n\
         rf_3,45.001,GBP,2026-11-03T14:02:11Z\n\
         rf_4,45.00,GBP,yesterday\n\
         \n\
         rf_5,45.00,GBP,2026-11-03T14:02:11Z\n",
        &[],
    );
    let lines: Vec<u32> = p.stats.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [2, 3, 4, 5]);
    assert!(
        p.stats.problems[0]
            .reason
            .contains("`45.0x` is not a decimal amount")
    );
    assert!(
        p.stats.problems[1]
            .reason
            .contains("no known ISO 4217 exponent")
    );
    assert!(p.stats.problems[2].reason.contains("more decimals"));
    assert!(
        p.stats.problems[3]
            .reason
            .contains("`yesterday` is not a timestamp")
    );
    assert_eq!(effects(&p).len(), 1);
    assert_eq!(p.stats.lines, 7);
    assert_eq!(
        p.stats.lines,
        p.stats.events + p.stats.ignored + p.stats.skipped
    );
}

/// A quote that never closes once swallowed every row after its own, counted ignored
/// (SPEC §9: never a silent drop): its row is skipped with why, the rows after it read.
#[test]
fn a_quote_that_never_closes_skips_its_row_and_the_rows_after_are_read() {
    for end in ["\n", "\r\n"] {
        let text = [
            "id,Description,Amount,Currency,Created (UTC),Status,order_id (metadata)",
            "rf_1,\"12\"\" pizza, cold,45.00,gbp,2026-11-03 14:02:11,succeeded,A-1",
            "rf_2,ok,45.00,gbp,2026-11-03 14:02:12,succeeded,A-1",
            "rf_3,ok,45.00,gbp,2026-11-03 14:02:13,succeeded,A-1",
            "rf_4,ok,45.00,gbp,2026-11-03 14:02:14,succeeded,A-1",
            "",
        ]
        .join(end);
        let p = run(&text, &[]);
        let lines: Vec<u32> = p.stats.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, [2], "{end:?}");
        let why = &p.stats.problems[0].reason;
        assert!(why.starts_with("a quoted field is never closed"), "{why}");
        assert!(why.contains("line 2"), "{why}");
        let read: Vec<(&str, u32)> = (effects(&p).iter().map(|e| &*e.0.id))
            .zip(p.events.iter().map(|e| e.loc.line))
            .collect();
        assert_eq!(read, [("rf_2", 3), ("rf_3", 4), ("rf_4", 5)], "{end:?}");
        let s = &p.stats;
        assert_eq!((s.lines, s.events, s.skipped, s.ignored), (5, 3, 1, 1));
    }
}

/// A quote that never closes on the last line swallows nothing, and its row is skipped
/// all the same: its fields cannot be told apart.
#[test]
fn a_quote_that_never_closes_on_the_last_line_skips_its_row() {
    let p = run(
        "id,note,amount,currency,created\n\
         rf_1,a,45.00,GBP,2026-11-03T14:02:11Z\n\
         rf_2,\"b,45.00,GBP,2026-11-03T14:02:12Z",
        &[],
    );
    let lines: Vec<u32> = p.stats.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [3]);
    let why = &p.stats.problems[0].reason;
    assert!(why.contains("runs to the end of the file"), "{why}");
    assert_eq!(effects(&p).len(), 1);
    assert_eq!((p.stats.lines, p.stats.ignored), (3, 1));
}

/// Quotes that close are no such row: a field's escaped `""`, one spanning lines (up to
/// the last byte), and a `"` inside an unquoted field (`12" pizza`), which is text.
#[test]
fn quotes_that_close_and_quotes_inside_a_field_skip_nothing() {
    let p = run(
        "id,note,amount,currency,created\n\
         rf_1,12\" pizza,45.00,GBP,2026-11-03T14:02:11Z\n\
         rf_2,\"a \"\"b\"\"\",45.00,GBP,2026-11-03T14:02:12Z\n\
         rf_3,45.00,45.00,GBP,2026-11-03T14:02:13Z,\"two\nlines\"",
        &[],
    );
    assert_eq!(p.stats.problems, vec![]);
    assert_eq!(effects(&p).len(), 3);
    assert_eq!((p.stats.lines, p.stats.ignored), (5, 2));
}

#[test]
fn a_header_whose_quote_never_closes_is_an_error() {
    let opts = ParseOptions::default();
    let text = b"id,\"amount,currency,created\nrf_1,1,GBP,2026-11-03T14:02:11Z\n";
    let err = parse(&mut &text[..], 0, &opts).unwrap_err();
    assert!(err.to_string().contains("never closed"), "{err}");
}

#[test]
fn a_header_without_an_id_column_is_an_error() {
    let opts = ParseOptions::default();
    let err = parse(&mut &b"amount,currency\n1,GBP\n"[..], 0, &opts).unwrap_err();
    assert!(err.to_string().contains("--csv-map id=COLUMN"));
}

/// The lines of the events, then of the problems.
fn lines(p: &Parsed) -> (Vec<u32>, Vec<u32>) {
    (
        p.events.iter().map(|e| e.loc.line).collect(),
        p.stats.problems.iter().map(|p| p.line).collect(),
    )
}

fn ids(p: &Parsed) -> Vec<(String, u32)> {
    (effects(p).iter().map(|e| e.0.id.to_string()))
        .zip(p.events.iter().map(|e| e.loc.line))
        .collect()
}

/// The reader places a row after blank lines where the row before it ended, and counts
/// lines by `\n` alone: a row after a blank line was cited a line early, and one after
/// lines ended by a lone `\r` on line 1.
#[test]
fn rows_after_blank_lines_cite_the_line_they_are_on() {
    let p = run(
        "id,note,amount,currency,created\n\
         rf_1,a,45.0x,GBP,2026-11-03T14:02:11Z\n\
         \n\
         rf_2,a,45.0x,GBP,2026-11-03T14:02:11Z\n\
         \n\
         \n\
         rf_3,a,45.00,GBP,2026-11-03T14:02:11Z\r\n\
         \r\n\
         rf_4,a,45.0x,GBP,2026-11-03T14:02:11Z\r\
         \r\
         rf_5,\"two\n\
         \n\
         lines\",45.00,GBP,2026-11-03T14:02:12Z\n\
         \x20 \n\
         \n\
         rf_6,a,45.0x,GBP,2026-11-03T14:02:11Z",
        &[],
    );
    assert_eq!(lines(&p), (vec![7, 11], vec![2, 4, 9, 16]));
    let s = &p.stats;
    assert_eq!((s.lines, s.events, s.skipped, s.ignored), (16, 2, 4, 10));
}

/// What the reader counts right stays so: rows before blank lines, rows after a field with
/// a blank line inside it (a line of the field, not one the reader skips), rows after
/// `\r\n` and trailing blank lines.
#[test]
fn blank_lines_inside_a_field_or_after_the_rows_move_no_row() {
    let p = run(
        "id,note,amount,currency,created\r\n\
         rf_1,\"a\r\n\r\n\r\nb\",45.0x,GBP,2026-11-03T14:02:11Z\r\n\
         rf_2,\"a\n\nb\",45.0x,GBP,2026-11-03T14:02:11Z\n\
         rf_3,a,45.00,GBP,2026-11-03T14:02:11Z\n\
         rf_4,a,45.0x,GBP,2026-11-03T14:02:11Z\n\
         \n\
         \r\n",
        &[],
    );
    assert_eq!(lines(&p), (vec![9], vec![2, 6, 10]));
    assert_eq!((p.stats.lines, p.stats.ignored), (12, 8));
}

/// A stray quote at the start of a field opens a quoted field that the next `"` closes,
/// here the opening quote of a later row's field: the reader joined the rows between into
/// one record, silently. A closing quote with text after it is how no CSV writer closes a
/// field: the row is skipped with why, and the lines after it read as rows, so the rows it
/// swallowed and the quoted field that closed it are read as written. Twice in one file,
/// and with a real multi-line field after, read as one.
#[test]
fn a_stray_quote_closed_by_a_later_field_skips_its_row_and_the_rows_after_are_read() {
    for end in ["\n", "\r\n"] {
        let text = [
            "id,note,amount,currency,created",
            "rf_1,\"oops,45.00,GBP,2026-11-03T14:02:11Z",
            "rf_2,ok,45.00,GBP,2026-11-03T14:02:12Z",
            "rf_3,\"quoted, with a comma\",45.00,GBP,2026-11-03T14:02:13Z",
            "rf_4,ok,45.00,GBP,2026-11-03T14:02:14Z",
            "rf_5,\"again,45.00,GBP,2026-11-03T14:02:15Z",
            "rf_6,\"ok\",45.00,GBP,2026-11-03T14:02:16Z",
            "rf_7,\"a note",
            "of two lines\",45.00,GBP,2026-11-03T14:02:17Z",
            "rf_8,ok,45.00,GBP,2026-11-03T14:02:18Z",
            "",
        ]
        .join(end);
        let p = run(&text, &[]);
        let (_, problems) = lines(&p);
        assert_eq!(problems, [2, 6], "{end:?} {:?}", p.stats.problems);
        let why = &p.stats.problems[0].reason;
        assert!(why.starts_with("a stray quote"), "{why}");
        assert!(
            why.contains("opened on line 2 is closed on line 4"),
            "{why}"
        );
        assert!(why.contains("lines after line 2 are read as rows"), "{why}");
        let read: Vec<(String, u32)> = [("rf_2", 3), ("rf_3", 4), ("rf_4", 5)]
            .into_iter()
            .chain([("rf_6", 7), ("rf_7", 8), ("rf_8", 10)])
            .map(|(id, line)| (id.to_string(), line))
            .collect();
        assert_eq!(ids(&p), read, "{end:?}");
        assert_eq!(
            effects(&p)[3].0.amount,
            Some(Money::new(4500, Currency::GBP))
        );
        let s = &p.stats;
        assert_eq!((s.lines, s.events, s.skipped, s.ignored), (10, 6, 2, 2));
    }
}

/// A stray quote that a quote closes cleanly (`12",`: followed by a delimiter, as a writer
/// closes a field) is told by the rows it swallows whole: lines that read as rows of this
/// export, with the header's number of fields and a time in the created column.
#[test]
fn a_stray_quote_closed_cleanly_is_told_by_the_rows_it_swallows() {
    let p = run(
        "id,note,amount,currency,created\n\
         rf_1,\"oops,45.00,GBP,2026-11-03T14:02:11Z\n\
         rf_2,ok,45.00,GBP,1762178532\n\
         rf_3,ok,45.00,GBP,2026-11-03T14:02:13Z\n\
         rf_4,12\",45.00,GBP,2026-11-03T14:02:14Z\n\
         rf_5,ok,45.00,GBP,2026-11-03T14:02:15Z\n",
        &[],
    );
    assert_eq!(lines(&p).1, [2]);
    let why = &p.stats.problems[0].reason;
    assert!(why.contains("over line 3, which reads as a row"), "{why}");
    let read: Vec<&str> = effects(&p).iter().map(|e| &*e.0.id).collect();
    assert_eq!(read, ["rf_2", "rf_3", "rf_4", "rf_5"]);
    assert_eq!(lines(&p).0, [3, 4, 5, 6]);
    assert_eq!(effects(&p)[2].0.amount.unwrap().minor, 4500);
}

/// Quoted fields with line breaks as PostgreSQL's COPY and spreadsheets write them stay one
/// record: a note in the middle of the row and at its end, lines with commas (`Regards,
/// Bob`), a blank line, `""` escapes, `\r\n` inside; a line inside with the header's number
/// of fields but no time where the created time is; a note that quotes a whole row on its
/// first or last line; every field quoted.
#[test]
fn quoted_fields_with_line_breaks_are_one_record() {
    let p = run(
        "id,note,amount,currency,created\n\
         rf_1,\"Customer called.\n\
         \n\
         Refund approved by \"\"Sam\"\", see ticket.\n\
         Regards, Bob\",45.00,GBP,2026-11-03T14:02:11Z\n\
         rf_2,\"one,two,three,four,five\n\
         a,b,c,d,no time\r\n\
         end\",45.00,GBP,2026-11-03T14:02:12Z\n\
         rf_3,\"rf_9,x,45.00,GBP,2026-11-03T14:02:13Z\n\
         was the row before\",45.00,GBP,2026-11-03T14:02:13Z\n\
         \"rf_4\",\"a,\n\
         b\",\"45.00\",\"GBP\",\"2026-11-03T14:02:14Z\"\n\
         rf_5,last,45.00,GBP,2026-11-03T14:02:15Z\n",
        &[],
    );
    assert_eq!(p.stats.problems, vec![]);
    assert_eq!(
        ids(&p),
        [
            ("rf_1", 2),
            ("rf_2", 6),
            ("rf_3", 9),
            ("rf_4", 11),
            ("rf_5", 13)
        ]
        .map(|(id, line)| (id.to_string(), line))
    );
    let s = &p.stats;
    assert_eq!((s.lines, s.events, s.ignored), (13, 5, 8));
}

/// A created column whose header names UTC is read as UTC whatever `--tz` says (the zone of
/// the logs beside it); one whose header names no zone is read at `--tz`.
#[test]
fn a_header_that_names_utc_keeps_its_times_in_utc() {
    let opts = ParseOptions {
        tz: crate::time::Zone::parse("+01:00").unwrap(),
        ..ParseOptions::default()
    };
    let created = |header: &str| {
        let text = format!("id,amount,currency,{header}\nrf_1,45.00,GBP,2026-11-03 14:02:11\n");
        let p = parse(&mut text.as_bytes(), 0, &opts).unwrap();
        effects(&p)[0].1.clone()
    };
    for header in ["Created (UTC)", "Created date (UTC)"] {
        assert_eq!(created(header), "2026-11-03T14:02:11.000Z", "{header}");
    }
    assert_eq!(created("created_at"), "2026-11-03T13:02:11.000Z");
    assert!(names_utc("created_at_utc") && names_utc("created (utc)"));
    assert!(!names_utc("created_at") && !names_utc("outcome"));
}

/// An export cut inside its last row (fewer fields than the header, no newline after it)
/// is skipped with that reason, not read as an effect with a cut status and no order; a
/// short row with its newline is read as before.
#[test]
fn a_last_row_cut_short_is_skipped() {
    let head = "id,Amount,Currency,Created (UTC),Status,order_id (metadata)\nrf_1,45.00,gbp,2026-11-03 14:02:11,succeeded,A-1\n";
    let cut = "rf_2,45.00,gbp,2026-11-03 14:02:12,succee";
    let p = run(&format!("{head}{cut}"), &[]);
    assert_eq!((p.stats.events, p.stats.skipped), (1, 1));
    assert_eq!(p.stats.problems[0].line, 3);
    assert!(
        p.stats.problems[0]
            .reason
            .contains("cut short: 5 of the header's 6")
    );
    let p = run(&format!("{head}{cut}\n"), &[]);
    assert_eq!((p.stats.events, p.stats.skipped), (2, 0));
    // A whole last row without a newline is whole.
    let p = run(&format!("{head}{cut}eded,A-2"), &[]);
    assert_eq!((p.stats.events, p.stats.skipped), (2, 0));
}

/// A row longer than a line is read (16 MiB) is cut there and skipped with its length, the
/// rest of its line dropped, not held; the rows after it are read, on their lines. One
/// inside a quoted field is closed where it is cut, so that the line's end ends it; one of
/// the cap is read.
#[test]
fn a_row_longer_than_the_cap_is_skipped_and_the_rows_after_it_read() {
    use crate::ingest::long_lines::MAX_LINE;
    let head = "id,order,amount,currency,created,notes\n\
                re_1,A-1,45.00,GBP,2026-11-03T14:02:11Z,ok\n";
    let row = |id: &str, quoted: bool, len: usize| {
        let mut row = format!("{id},A-1,45.00,GBP,2026-11-03T14:02:12Z,");
        if quoted {
            row.push('"');
        }
        row.extend(std::iter::repeat_n(
            'x',
            len - row.len() - usize::from(quoted),
        ));
        if quoted {
            row.push('"');
        }
        row + "\n"
    };
    for quoted in [false, true] {
        let text = [
            head,
            &row("re_2", quoted, MAX_LINE + 100),
            "re_3,A-1,45.00,GBP,2026-11-03T14:02:13Z,ok\n",
            &row("re_4", quoted, MAX_LINE),
            "re_5,A-1,45.00,GBP,2026-11-03T14:02:14Z,ok\n",
        ]
        .concat();
        let p = run(&text, &[]);
        let read: Vec<(u32, &str)> = (p.events.iter())
            .map(|e| match &e.kind {
                EventKind::Effect(f) => (e.loc.line, &*f.id),
                _ => panic!("not an effect"),
            })
            .collect();
        assert_eq!(
            read,
            [(2, "re_1"), (4, "re_3"), (5, "re_4"), (6, "re_5")],
            "quoted: {quoted}"
        );
        let s = &p.stats;
        assert_eq!((s.lines, s.skipped), (6, 1), "quoted: {quoted}");
        assert_eq!(s.problems[0].line, 3);
        let said = format!("row longer than 16 MiB ({} bytes", MAX_LINE + 100);
        assert!(
            s.problems[0].reason.starts_with(&said),
            "{}",
            s.problems[0].reason
        );
    }
}
