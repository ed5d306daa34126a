//! CSV effect exports (SPEC §3.3): a header row, then one effect per row, RFC 4180 quoting
//! (a quoted field may span lines). Columns are found by name, case-insensitively, under the
//! common spellings of settlement exports or as `--csv-map field=Column` says. Amounts become
//! minor units exactly; a row that cannot be read is skipped with its reason, never guessed.

mod counter;
mod stray;

pub(super) use counter::LineCounter;

use super::not_utf8::{NotUtf8, field_text, is_not_utf8};
use super::stamp::Clock;
use super::{ParseOptions, Parsed};
use crate::event::{Effect, Event, EventKind, Loc, Text, state_means_not_happened};
use crate::money::{Currency, Money, in_currency};
use std::collections::VecDeque;
use std::io::{self, Read};
use stray::RowShape;

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
    (
        "amount_minor",
        &[
            "amount_minor",
            "amount_p",
            "amount_cents",
            "amount_in_cents",
        ],
    ),
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
    /// The created column's header names UTC (`Created (UTC)`, `created_at_utc`): its
    /// times are UTC whatever `--tz` says.
    times_in_utc: bool,
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
        c.times_in_utc = c.get("created").is_some_and(|i| names_utc(&norm[i]));
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

/// A header that says its times are UTC: `created (utc)`, `created_at_utc`, `created utc`.
fn names_utc(header: &str) -> bool {
    header
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| word == "utc")
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
    let again = Again {
        kept: VecDeque::new(),
        rest: reader,
    };
    let mut rdr = self::reader(LineCounter::keeping(again));
    let header: Vec<String> = rdr
        .byte_headers()
        .map_err(csv_error)?
        .iter()
        .map(|h| String::from_utf8_lossy(h).into_owned())
        .collect();
    if rdr.get_ref().ended_in_quotes() {
        return Err(io::Error::other(
            "the CSV header has a quoted field that is never closed: it runs to the end of the file",
        ));
    }
    // A quoted header name spanning lines is the header's own.
    let end = rdr.position().byte();
    if let Some(len) = rdr.get_mut().cut_long_before(end) {
        return Err(header_too_long(len));
    }
    rdr.get_mut().take_spans(end);
    rdr.get_mut().release();
    let cols = Columns::resolve(&header, &opts.csv_map);
    // An export that says its times are UTC is read so, whatever zone the logs beside it
    // were given: `--tz +01:00` for an agent logging Berlin time must not move it.
    let in_utc;
    let opts = if cols.times_in_utc {
        in_utc = ParseOptions {
            tz: crate::time::Zone::default(),
            ..opts.clone()
        };
        &in_utc
    } else {
        opts
    };
    if cols.get("id").is_none() && !header.iter().all(|h| h.is_empty()) {
        return Err(io::Error::other(
            "the CSV header has no effect id column (id, effect_id, refund_id); name one with --csv-map id=COLUMN",
        ));
    }
    let mut rows = Rows {
        out: Parsed::default(),
        shape: RowShape {
            width: header.len(),
            created: cols.get("created"),
            opts,
        },
        cols,
        clock: Clock::new(opts),
        input,
        opts,
        not_utf8: NotUtf8::default(),
    };
    // A row whose quote swallowed the lines after its own (a quote never closed, a stray
    // quote) is skipped, and the lines after it are read again as rows of their own (SPEC
    // §9: never a silent drop): from the bytes kept since, then the rest of the input.
    let mut before = 0;
    while let Some((line, kept)) = rows.read(&mut rdr, before)? {
        let mut again = rdr.into_inner().inner;
        again.kept.push_front((kept, 0));
        rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(LineCounter::keeping(again));
        before = line;
    }
    let mut out = rows.out;
    rows.not_utf8.add_to(&mut out.stats);
    out.stats.notes.extend(rows.clock.take_notes());
    let s = &mut out.stats;
    s.lines = u64::from(before) + rdr.get_ref().lines();
    s.last_line = s.lines as u32;
    s.last_line_cut = rdr.get_ref().ends_inside_line();
    // The header, blank lines and the continuation lines of multi-line rows.
    s.ignored = s.lines.saturating_sub(s.events + s.skipped);
    Ok(out)
}

/// The input read again: the bytes kept by the readings given up, the latest first, each
/// with how much of it has been read, then the rest of the input. Flat, however many times
/// a reading is given up: a chain of readers would nest once for each.
struct Again<'a> {
    kept: VecDeque<(Vec<u8>, usize)>,
    rest: &'a mut dyn Read,
}

impl Read for Again<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while let Some((kept, at)) = self.kept.front_mut() {
            let n = buf.len().min(kept.len() - *at);
            if n > 0 {
                buf[..n].copy_from_slice(&kept[*at..*at + n]);
                *at += n;
                return Ok(n);
            }
            if *at == kept.len() {
                self.kept.pop_front();
            } else {
                return Ok(0);
            }
        }
        self.rest.read(buf)
    }
}

/// The rows of an export, read into events.
struct Rows<'a> {
    out: Parsed,
    cols: Columns,
    shape: RowShape<'a>,
    clock: Clock,
    input: u32,
    opts: &'a ParseOptions,
    not_utf8: NotUtf8,
}

impl Rows<'_> {
    /// Reads the records of `rdr`, whose first line is the one after line `before`. A
    /// record that is rows joined by a quote (one never closed, which runs to the end of the
    /// input, or a stray one) is skipped with why, and the line the quote opened on
    /// (absolute) and the bytes after it are returned, for the caller to read them again.
    fn read<R: Read>(
        &mut self,
        rdr: &mut csv::Reader<LineCounter<R>>,
        before: u32,
    ) -> io::Result<Option<(u32, Vec<u8>)>> {
        let mut row = csv::ByteRecord::new();
        while rdr.read_byte_record(&mut row).map_err(csv_error)? {
            let end = rdr.position().byte();
            let counter = rdr.get_mut();
            let line = before + row.position().map_or(0, |p| counter.line_of(p));
            if let Some(len) = counter.cut_long_before(end) {
                // Cut where it passed the cap, the rest of its line dropped: not read.
                counter.take_spans(end);
                counter.release();
                self.out
                    .stats
                    .skip(line, super::long_lines::row_reason(len));
                continue;
            }
            if counter.spans_before(end) {
                if let Some(again) = self.spanning(&row, counter, line, before, end) {
                    return Ok(Some(again));
                }
            } else if counter.ended_in_quotes() {
                // Opened on the last line: it swallowed nothing, but its fields cannot be
                // told apart.
                self.out.stats.skip(line, never_closed(None));
                return Ok(None);
            }
            if row.iter().all(|f| f.trim_ascii().is_empty()) {
                continue; // counted as ignored
            }
            // Fewer fields than the header, at the very end with no newline: the export was
            // cut inside this row, and its last field is cut too (a status `succee`).
            if row.len() < self.shape.width && rdr.get_ref().cut_at(end) {
                let why = cut_row(row.len(), self.shape.width);
                self.out.stats.skip(line, why);
                continue;
            }
            let latin = is_not_utf8(row.as_slice());
            if latin {
                self.not_utf8.saw(line);
            }
            match effect(&row, latin, &self.cols, &mut self.clock, self.opts) {
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

    /// A record on line `line` that a quoted field spans lines of, ending at `end`: none
    /// (`None`) when it is a record with a multi-line field; else skipped with why, and the
    /// line its quote opened on and the bytes after it, to read again.
    #[cold]
    fn spanning<R>(
        &mut self,
        row: &csv::ByteRecord,
        counter: &mut LineCounter<R>,
        line: u32,
        before: u32,
        end: u64,
    ) -> Option<(u32, Vec<u8>)> {
        let spans = counter.take_spans(end);
        let (span, why) = match spans.iter().position(|s| s.close.is_none()) {
            Some(k) => (k, never_closed(Some(before + spans[k].line))),
            None => match stray::stray(&spans, row, &self.shape, before) {
                Some(found) => found,
                None => {
                    counter.release();
                    return None;
                }
            },
        };
        self.out.stats.skip(line, why);
        let span = spans[span];
        Some((before + span.line, counter.kept_after(span.end)))
    }
}

/// Why an export whose header is longer than a row is read cannot be read.
pub(super) fn header_too_long(len: u64) -> io::Error {
    io::Error::other(format!(
        "the CSV header is longer than {} MiB ({len} bytes): no header, no columns to read",
        super::long_lines::MAX_LINE >> 20
    ))
}

/// Why the last row of an export cut short inside it, `fields` of the header's `width`, is
/// skipped.
pub(super) fn cut_row(fields: usize, width: usize) -> String {
    format!(
        "a row cut short: {fields} of the header's {width} fields, and no newline at the end of the file: not read; export again, or scan once the writer has finished"
    )
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
    not_utf8: bool,
    cols: &Columns,
    clock: &mut Clock,
    opts: &ParseOptions,
) -> Result<(crate::time::Timestamp, Effect), String> {
    let field = |name: &str| -> Option<String> {
        let v = row.get(cols.get(name)?)?;
        let v = field_text(v, not_utf8).trim().to_string();
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
            whole: (amount.is_none() && field("amount_minor").is_none())
                .then(|| crate::money::whole_amount(&field("amount")?, currency?))
                .flatten(),
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
        crate::money::parse_minor(t).map_err(|why| format!("amount `{t}` {why}"))
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
    if crate::money::ambiguous_whole_amount(t, cur) {
        return Ok(None);
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
