//! Server idempotency records (SPEC §3.5): a dump of the service's `idempotency_records`
//! table as PostgreSQL's `COPY ... TO STDOUT WITH (FORMAT csv, HEADER)` writes it: columns
//! `key, request_hash, status, response, created_at` (found by name, in any order),
//! `timestamptz` as `2026-12-02 14:02:11.402+00`, NULL as an empty unquoted field and `jsonb`
//! as a quoted field with doubled quotes. Empty and NULL are not told apart: no column of
//! the table can hold an empty string that means anything.

use super::csv::{LineCounter, csv_error, reader};
use super::not_utf8::{NotUtf8, field_text, is_not_utf8};
use super::stamp::Clock;
use super::{ParseOptions, Parsed};
use crate::event::{Event, EventKind, Loc, Record, Text};
use std::io::{self, Read};

const COLUMNS: [&str; 5] = ["key", "request_hash", "status", "response", "created_at"];

/// The records dump's header: the table's key, request hash and status columns.
pub fn is_records_header(cols: &[String]) -> bool {
    let has = |n: &str| cols.iter().any(|c| c.trim().eq_ignore_ascii_case(n));
    has("key") && has("request_hash") && has("status")
}

pub fn parse(reader: &mut dyn Read, input: u32, opts: &ParseOptions) -> io::Result<Parsed> {
    let mut out = Parsed::default();
    let mut rdr = self::reader(LineCounter::new(reader));
    let header = rdr.byte_headers().map_err(csv_error)?.clone();
    let end = rdr.position().byte();
    if let Some(len) = rdr.get_mut().cut_long_before(end) {
        return Err(super::csv::header_too_long(len));
    }
    let index: Vec<Option<usize>> = COLUMNS
        .iter()
        .map(|c| {
            header.iter().position(|h| {
                String::from_utf8_lossy(h)
                    .trim()
                    .trim_start_matches('\u{feff}')
                    .eq_ignore_ascii_case(c)
            })
        })
        .collect();
    if let Some(missing) = [0, 2, 4].iter().find(|&&i| index[i].is_none()) {
        return Err(io::Error::other(format!(
            "the idempotency-records header has no `{}` column (expected key, request_hash, status, response, created_at)",
            COLUMNS[*missing]
        )));
    }
    let mut clock = Clock::new(opts);
    let mut row = csv::ByteRecord::new();
    let mut not_utf8 = NotUtf8::default();
    while rdr.read_byte_record(&mut row).map_err(csv_error)? {
        let line = row.position().map_or(0, |p| rdr.get_mut().line_of(p));
        let end = rdr.position().byte();
        if let Some(len) = rdr.get_mut().cut_long_before(end) {
            out.stats.skip(line, super::long_lines::row_reason(len));
            continue;
        }
        // Cut inside its last row by the end of the file, as an effect export can be.
        if row.len() < header.len() && rdr.get_ref().cut_at(rdr.position().byte()) {
            out.stats
                .skip(line, super::csv::cut_row(row.len(), header.len()));
            continue;
        }
        let latin = is_not_utf8(row.as_slice());
        if latin {
            not_utf8.saw(line);
        }
        let field = |i: usize| -> Option<String> {
            let v = row.get(index[i]?)?;
            (!v.is_empty()).then(|| field_text(v, latin).into_owned())
        };
        let Some(key) = field(0) else {
            out.stats.skip(line, "a record with no key");
            continue;
        };
        let Some(status) = field(2) else {
            out.stats.skip(line, "a record with no status");
            continue;
        };
        let at = match field(4).map(|t| clock.parse(t.as_bytes(), opts, false)) {
            Some(Ok(at)) => at,
            Some(Err(why)) => {
                out.stats.skip(line, format!("created_at: {why}"));
                continue;
            }
            None => {
                out.stats.skip(line, "a record with no created_at");
                continue;
            }
        };
        out.stats.events += 1;
        out.events.push(Event {
            at,
            loc: Loc { input, line },
            kind: EventKind::Record(Box::new(Record {
                key: key.into(),
                request_hash: field(1).map(Text::from),
                status: status.trim().to_ascii_lowercase().into(),
                response: field(3).map(Text::from),
            })),
        });
    }
    let counter = rdr.into_inner();
    not_utf8.add_to(&mut out.stats);
    out.stats.notes.extend(clock.take_notes());
    let s = &mut out.stats;
    s.lines = counter.lines();
    s.last_line = s.lines as u32;
    s.last_line_cut = counter.ends_inside_line();
    s.ignored = s.lines.saturating_sub(s.events + s.skipped);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_copy_writes() {
        let dump = "key,request_hash,status,response,created_at\n\
            9f1c,ab12,completed,\"{\"\"status\"\": 201, \"\"refund_id\"\": \"\"rf_9KQ2\"\"}\",2026-12-02 14:02:11.402+00\n\
            7a2b,cd34,in_progress,,2026-12-02 14:03:00+05:30\n\
            ,x,completed,,2026-12-02 14:03:00+00\n\
            8c3d,ef56,completed,,not a time\n";
        let p = parse(&mut dump.as_bytes(), 0, &ParseOptions::default()).unwrap();
        assert_eq!(p.stats.events, 2);
        assert_eq!(p.stats.skipped, 2);
        assert_eq!(p.stats.problems[0].line, 4);
        assert!(p.stats.problems[1].reason.starts_with("created_at:"));
        let EventKind::Record(r) = &p.events[0].kind else {
            panic!()
        };
        assert_eq!(
            r.response.as_deref(),
            Some(r#"{"status": 201, "refund_id": "rf_9KQ2"}"#)
        );
        assert_eq!(p.events[0].at.display(), "2026-12-02T14:02:11.402Z");
        let EventKind::Record(r) = &p.events[1].kind else {
            panic!()
        };
        assert_eq!(
            (r.status.as_str(), r.response.as_deref()),
            ("in_progress", None)
        );
        assert_eq!(p.events[1].at.display(), "2026-12-02T08:33:00.000Z");
        assert_eq!(p.stats.lines, 5);
        assert_eq!(
            p.stats.lines,
            p.stats.events + p.stats.ignored + p.stats.skipped
        );
    }

    /// A record whose response is longer than a line is read (16 MiB) is skipped with its
    /// length, the records after it read; a header that long makes the dump unreadable.
    #[test]
    fn a_record_longer_than_the_cap_is_skipped() {
        use crate::ingest::long_lines::MAX_LINE;
        let head = "key,request_hash,status,response,created_at\n";
        let mut dump = head.to_string();
        dump.push_str("9f1c,ab12,completed,\"{\"\"note\"\": \"\"");
        dump.extend(std::iter::repeat_n('n', MAX_LINE));
        dump.push_str("\"\"}\",2026-12-02 14:02:11.402+00\n");
        dump.push_str("7a2b,cd34,completed,,2026-12-02 14:03:00+00\n");
        let p = parse(&mut dump.as_bytes(), 0, &ParseOptions::default()).unwrap();
        assert_eq!((p.stats.lines, p.stats.events, p.stats.skipped), (3, 1, 1));
        assert_eq!(p.stats.problems[0].line, 2);
        assert!(
            p.stats.problems[0]
                .reason
                .starts_with("row longer than 16 MiB")
        );
        assert_eq!(p.events[0].loc.line, 3);
        let mut long_head = "key,request_hash,status,".to_string();
        long_head.extend(std::iter::repeat_n('h', MAX_LINE));
        long_head.push_str("\n7a2b,cd34,completed\n");
        let err = parse(&mut long_head.as_bytes(), 0, &ParseOptions::default()).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("the CSV header is longer than 16 MiB"),
            "{err}"
        );
    }
}
