//! CSV effect exports (SPEC §3.3): a header row, then one effect per row, RFC 4180 quoting
//! (a quoted field may span lines). Columns are found by name, case-insensitively, under the
//! common spellings of settlement exports or as `--csv-map field=Column` says. Amounts become
//! minor units exactly; a row that cannot be read is skipped with its reason, never guessed.

use super::stamp::Clock;
use super::{ParseOptions, Parsed};
use crate::event::{Effect, Event, EventKind, Loc, Text, state_means_not_happened};
use crate::money::{Currency, Money, in_currency};
use std::io::{self, Read};

/// The fields a column can be mapped to with `--csv-map`, and their default spellings.
pub const FIELDS: &[(&str, &[&str])] = &[
    ("id", &["id", "effect_id", "refund_id"]),
    ("kind", &["kind", "effect_kind", "object"]),
    (
        "order",
        &[
            "order",
            "order_id",
            "metadata.order_id",
            "order_id (metadata)",
            "metadata[order_id]",
        ],
    ),
    ("amount", &["amount"]),
    ("amount_minor", &["amount_minor", "amount_p"]),
    ("currency", &["currency"]),
    // `Created date (UTC)`: Stripe's payments export.
    (
        "created",
        &[
            "created",
            "created_at",
            "created (utc)",
            "created date (utc)",
        ],
    ),
    ("settled_at", &["settled_at", "settled", "settled (utc)"]),
    ("idempotency_key", &["idempotency_key", "idempotency-key"]),
    ("status", &["status", "state"]),
];

/// Which column holds each field, by index into the row.
#[derive(Debug, Default)]
pub struct Columns {
    cols: [Option<usize>; FIELDS.len()],
    /// The id column's header is `refund_id`: the export says the kind.
    id_names_kind: Option<String>,
    /// The minor-units column is `amount_p`: pence, GBP unless a currency column says.
    pence: bool,
}

impl Columns {
    /// Resolves a header: a mapped column first, else the first default spelling present.
    pub fn resolve(header: &[String], map: &[(String, String)]) -> Columns {
        let norm: Vec<String> = header
            .iter()
            .map(|h| h.trim().trim_start_matches('\u{feff}').to_ascii_lowercase())
            .collect();
        let find = |name: &str| norm.iter().position(|h| h == &name.to_ascii_lowercase());
        let mut c = Columns::default();
        for (i, (field, defaults)) in FIELDS.iter().enumerate() {
            let mapped = map
                .iter()
                .filter(|(f, _)| f.eq_ignore_ascii_case(field))
                .find_map(|(_, col)| find(col));
            c.cols[i] = mapped.or_else(|| defaults.iter().find_map(|d| find(d)));
        }
        if let Some(i) = c.get("id") {
            c.id_names_kind = norm[i]
                .strip_suffix("_id")
                .filter(|k| *k != "effect")
                .map(str::to_string);
        }
        c.pence = c.get("amount_minor").is_some_and(|i| norm[i] == "amount_p");
        c
    }

    fn get(&self, field: &str) -> Option<usize> {
        FIELDS
            .iter()
            .position(|(f, _)| *f == field)
            .and_then(|i| self.cols[i])
    }

    /// An effect export: an id column and something that makes it a money movement.
    pub fn is_effect_export(&self) -> bool {
        self.get("id").is_some()
            && ["order", "amount", "amount_minor", "currency", "created"]
                .iter()
                .any(|f| self.get(f).is_some())
    }
}

/// Counts physical lines as the CSV reader consumes them, so that `lines = events + ignored +
/// skipped` holds per physical line even when a quoted field spans several. Like the reader,
/// it ends a line at `\n`, `\r\n` or a lone `\r` (old Mac exports). It also follows the
/// reader's quoting, to tell a quoted field that never closes: see [`LineCounter::unclosed`].
pub(super) struct LineCounter<R> {
    pub inner: R,
    pub ends: u64,
    pub last: Option<u8>,
    /// Bytes read so far.
    offset: u64,
    /// Offsets of the `\n` of `\r\n` endings not yet passed by the CSV reader (bounded by
    /// its read-ahead): see [`LineCounter::line_of`].
    crlf: std::collections::VecDeque<u64>,
    /// Where RFC 4180 quoting is after the bytes read so far, as the reader sees it.
    quote: Quoting,
    /// A quoted field still open past the end of a line: that line (1-based) and the
    /// offset of its end, where the lines it may swallow start.
    open_past: Option<(u32, u64)>,
    /// The bytes from `open_past`'s offset on, when kept: the lines to read again if the
    /// field never closes. Empty in the common case (no quoted field spans lines).
    kept: Option<Vec<u8>>,
    /// The input has been read to its end.
    eof: bool,
}

/// The reader's quoting state (csv-core's, with its defaults: `"` quotes, `""` escapes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Quoting {
    FieldStart,
    Unquoted,
    Quoted,
    /// A `"` inside a quoted field: an escaped `""`, or the field's closing quote.
    QuoteInQuoted,
}

impl Quoting {
    fn after(self, b: u8) -> Quoting {
        let ends_field = matches!(b, b',' | b'\n' | b'\r');
        match self {
            Quoting::FieldStart if b == b'"' => Quoting::Quoted,
            Quoting::Quoted if b == b'"' => Quoting::QuoteInQuoted,
            Quoting::Quoted => Quoting::Quoted,
            Quoting::QuoteInQuoted if b == b'"' => Quoting::Quoted,
            _ if ends_field => Quoting::FieldStart,
            // A `"` inside an unquoted field, or after a closing quote, is kept as text.
            _ => Quoting::Unquoted,
        }
    }
}

impl<R: Read> Read for LineCounter<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.eof |= n == 0 && !buf.is_empty();
        for (i, &b) in buf[..n].iter().enumerate() {
            // A `\r` ends a line unless a `\n` follows it; the `\n` then ends it.
            if self.last == Some(b'\r') && b != b'\n' {
                self.ends += 1;
            }
            self.follow_quoting(b, self.offset + i as u64);
            if b == b'\n' {
                self.ends += 1;
                if self.last == Some(b'\r') {
                    self.crlf.push_back(self.offset + i as u64);
                }
            }
            self.last = Some(b);
        }
        self.offset += n as u64;
        Ok(n)
    }
}

impl<R> LineCounter<R> {
    pub fn new(inner: R) -> Self {
        LineCounter {
            inner,
            ends: 0,
            last: None,
            offset: 0,
            crlf: std::collections::VecDeque::new(),
            quote: Quoting::FieldStart,
            open_past: None,
            kept: None,
            eof: false,
        }
    }

    /// A counter that keeps the lines a quoted field spans while it is open, to read them
    /// again if it never closes (an input read once, as a stream).
    pub fn keeping(inner: R) -> Self {
        LineCounter {
            kept: Some(Vec::new()),
            ..LineCounter::new(inner)
        }
    }

    /// `b`, at `offset`, read after the bytes before it. Called with the lines ended before
    /// `b` counted, and `b`'s own `\n` not yet.
    fn follow_quoting(&mut self, b: u8, offset: u64) {
        let next = self.quote.after(b);
        if next == Quoting::Quoted && matches!(b, b'\n' | b'\r') && self.open_past.is_none() {
            self.open_past = Some((self.ends as u32 + 1, offset));
        }
        if self.open_past.is_some() {
            if matches!(next, Quoting::FieldStart | Quoting::Unquoted) {
                self.open_past = None;
                if let Some(kept) = &mut self.kept {
                    kept.clear();
                }
            } else if let Some(kept) = &mut self.kept {
                kept.push(b);
            }
        }
        self.quote = next;
    }

    /// Whether the input ended inside a quoted field: the record the reader returned last
    /// then runs from that field to the end of the input. With the line the field ran past
    /// first and that line's end, where it did: the lines after are none of the field's.
    pub fn unclosed(&self) -> Option<Option<(u32, u64)>> {
        (self.eof && self.quote == Quoting::Quoted).then_some(self.open_past)
    }

    /// The 1-based line a record starts on. The CSV reader notes a record's position before
    /// it consumes the `\n` of the previous record's `\r\n`, so such a record's line is
    /// one more than the reader says.
    pub fn line_of(&mut self, pos: &csv::Position) -> u32 {
        while self.crlf.front().is_some_and(|&o| o < pos.byte()) {
            self.crlf.pop_front();
        }
        let on_newline = self.crlf.front() == Some(&pos.byte());
        (pos.line() + u64::from(on_newline)) as u32
    }

    pub fn lines(&self) -> u64 {
        // A trailing `\r` ends the last line; any other last byte leaves one unterminated.
        self.ends + u64::from(self.last.is_some_and(|b| b != b'\n'))
    }
}

pub(super) fn csv_error(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("CSV: {other:?}")),
    }
}

pub(super) fn reader<R: Read>(r: R) -> csv::Reader<R> {
    csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(r)
}

pub fn parse(reader: &mut dyn Read, input: u32, opts: &ParseOptions) -> io::Result<Parsed> {
    let mut rdr = self::reader(LineCounter::keeping(reader));
    let header: Vec<String> = rdr
        .byte_headers()
        .map_err(csv_error)?
        .iter()
        .map(|h| String::from_utf8_lossy(h).into_owned())
        .collect();
    if rdr.get_ref().unclosed().is_some() {
        return Err(io::Error::other(
            "the CSV header has a quoted field that is never closed: it runs to the end of the file",
        ));
    }
    let cols = Columns::resolve(&header, &opts.csv_map);
    if cols.get("id").is_none() && !header.iter().all(|h| h.is_empty()) {
        return Err(io::Error::other(
            "the CSV header has no effect id column (id, effect_id, refund_id); name one with --csv-map id=COLUMN",
        ));
    }
    let mut rows = Rows {
        out: Parsed::default(),
        cols,
        clock: Clock::new(opts),
        input,
        opts,
    };
    // The kept bytes start at the end of the line the swallowing field ran past first.
    let mut swallowed = rows.read(&mut rdr, 0)?.map(|(line, _)| (line, 0));
    let mut counter = rdr.into_inner();
    // The lines after a quote that never closes, read again as rows of their own (SPEC §9:
    // never a silent drop), for as long as one of them opens another such quote.
    let kept = counter.kept.take().unwrap_or_default();
    let mut from = 0;
    while let Some((line, end)) = swallowed {
        let rest = after_line_end(&kept[from + end as usize..]);
        from = kept.len() - rest.len();
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(LineCounter::new(rest));
        swallowed = rows.read(&mut rdr, line)?;
    }
    let mut out = rows.out;
    let s = &mut out.stats;
    s.lines = counter.lines();
    // The header, blank lines and the continuation lines of multi-line rows.
    s.ignored = s.lines.saturating_sub(s.events + s.skipped);
    Ok(out)
}

/// `b` after the line end it starts with (`\n`, `\r\n` or a lone `\r`).
fn after_line_end(b: &[u8]) -> &[u8] {
    let b = b.strip_prefix(b"\r").unwrap_or(b);
    b.strip_prefix(b"\n").unwrap_or(b)
}

/// The rows of an export, read into events.
struct Rows<'a> {
    out: Parsed,
    cols: Columns,
    clock: Clock,
    input: u32,
    opts: &'a ParseOptions,
}

impl Rows<'_> {
    /// Reads the records of `rdr`, whose first line is the one after line `before`. A
    /// quoted field that never closes swallows every line after its own, up to the end of
    /// the input: its row is skipped, and the line it ran past first (absolute) and that
    /// line's end (an offset into `rdr`'s input) are returned, for the caller to read the
    /// lines after it again as rows of their own.
    fn read<R: Read>(
        &mut self,
        rdr: &mut csv::Reader<LineCounter<R>>,
        before: u32,
    ) -> io::Result<Option<(u32, u64)>> {
        let mut row = csv::ByteRecord::new();
        while rdr.read_byte_record(&mut row).map_err(csv_error)? {
            let counter = rdr.get_mut();
            let line = before + row.position().map_or(0, |p| counter.line_of(p));
            if let Some(open_past) = counter.unclosed() {
                self.out
                    .stats
                    .skip(line, never_closed(open_past.map(|(l, _)| before + l)));
                return Ok(open_past.map(|(l, end)| (before + l, end)));
            }
            if row.iter().all(|f| f.trim_ascii().is_empty()) {
                continue; // counted as ignored
            }
            match effect(&row, &self.cols, &mut self.clock, self.opts) {
                Ok((at, e)) => {
                    self.out.stats.events += 1;
                    self.out.events.push(Event {
                        at,
                        loc: Loc {
                            input: self.input,
                            line,
                        },
                        kind: EventKind::Effect(Box::new(e)),
                    });
                }
                Err(why) => self.out.stats.skip(line, why),
            }
        }
        Ok(None)
    }
}

/// Why a row whose quoted field never closes is skipped; `open_past`: the line the field
/// ran past first, if it did.
fn never_closed(open_past: Option<u32>) -> String {
    match open_past {
        Some(line) => format!(
            "a quoted field is never closed (its quote, open at the end of line {line}, runs to the end of the file): the row is skipped and the lines after line {line} are read as rows of their own"
        ),
        None => "a quoted field is never closed (its quote runs to the end of the file)".into(),
    }
}

fn effect(
    row: &csv::ByteRecord,
    cols: &Columns,
    clock: &mut Clock,
    opts: &ParseOptions,
) -> Result<(crate::time::Timestamp, Effect), String> {
    let field = |name: &str| -> Option<String> {
        let v = row.get(cols.get(name)?)?;
        let v = String::from_utf8_lossy(v).trim().to_string();
        (!v.is_empty()).then_some(v)
    };
    let id = field("id").ok_or("no effect id")?;
    let created_text = field("created").ok_or("no created time")?;
    let created = clock.parse(created_text.as_bytes(), opts, true)?;
    // An API-style export (`created` in unix seconds) writes amounts in minor units.
    let api_style = created_text
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'.');
    let currency = match field("currency") {
        Some(c) => {
            Some(Currency::parse(&c).ok_or_else(|| format!("`{c}` is not a currency code"))?)
        }
        None => None,
    };
    let amount = amount(
        &field("amount_minor"),
        &field("amount"),
        currency,
        cols.pence,
        api_style,
    )?;
    let settled_at = match field("settled_at") {
        Some(s) => Some(clock.parse_on_line(s.as_bytes(), opts, true, created)?),
        None => None,
    };
    let state = field("status").map(|s| s.to_ascii_lowercase());
    let kind = field("kind")
        .map(|k| k.to_ascii_lowercase())
        .or_else(|| cols.id_names_kind.clone())
        .unwrap_or_else(|| kind_from_id(&id).to_string());
    Ok((
        created,
        Effect {
            kind: kind.into(),
            happened: !state.as_deref().is_some_and(state_means_not_happened),
            id: id.into(),
            order: field("order").map(Text::from),
            amount,
            key: (field("idempotency_key"))
                .filter(|k| super::is_key_value(k.as_bytes()))
                .map(Text::from),
            state: state
                .map(Text::from)
                .or_else(|| settled_at.map(|_| Text::from_static_str("settled"))),
            state_at: settled_at,
        },
    ))
}

fn amount(
    minor: &Option<String>,
    major: &Option<String>,
    currency: Option<Currency>,
    pence: bool,
    api_style: bool,
) -> Result<Option<Money>, String> {
    let integer = |t: &str| -> Result<i64, String> {
        t.parse::<i64>()
            .map_err(|_| format!("amount `{t}` is not an integer number of minor units"))
    };
    if let Some(t) = minor {
        let cur = currency
            .or(pence.then_some(Currency::GBP))
            .ok_or("an amount in minor units without a currency")?;
        return Ok(Some(Money::new(integer(t)?, cur)));
    }
    let Some(t) = major else {
        return Ok(None);
    };
    let Some(cur) = currency else {
        // `45.00 GBP`, `£45.00`: the amount names its own currency.
        return match crate::money::parse_written(t) {
            Some(written) => written.map(Some),
            None => Err(format!("amount `{t}` without a currency")),
        };
    };
    if api_style && !t.contains('.') {
        return Ok(Some(Money::new(integer(t)?, cur)));
    }
    if cur.exponent().is_none() {
        return Err(format!(
            "currency `{cur}` has no known ISO 4217 exponent, so the decimal amount `{t}` cannot be converted"
        ));
    }
    in_currency(t, cur)
        .map(|m| Some(Money::new(m, cur)))
        .map_err(|e| format!("amount {e}"))
}

/// An export that does not say what it holds: the id's prefix, where it is a well-known one
/// (`re_`/`rf_` refunds, `ch_` charges, `po_` payouts, `tr_` transfers), else a refund,
/// the export this tool is mostly fed.
fn kind_from_id(id: &str) -> &'static str {
    let prefix = id.split_once('_').map_or("", |(p, _)| p);
    match prefix.to_ascii_lowercase().as_str() {
        "ch" | "py" => "charge",
        "po" => "payout",
        "tr" => "transfer",
        "pi" => "payment",
        _ => "refund",
    }
}

#[cfg(test)]
mod tests {
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
}
