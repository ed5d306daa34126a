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
mod tests;
