//! Each input's format detected from its first non-blank line (SPEC §3) or, when that line
//! is damaged or a program's start-up output comes first, from the lines after it.

use super::SNIFF_BYTES;
use crate::ingest::{self, Format};

/// What a program's standard output may be read as before its console exporter's first
/// span: its log lines in any line-wise layout, or nothing known. A CSV export, an XML
/// document or an OTLP export is something else.
pub(super) fn may_precede_a_span_dump(detected: Option<Format>) -> bool {
    match detected {
        None => true,
        Some(format) => matches!(
            format,
            Format::Text
                | Format::Jsonl
                | Format::Logfmt
                | Format::NodeConsole
                | Format::PinoPretty
        ),
    }
}

fn first_line(head: &[u8]) -> Option<String> {
    let first = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .find(|l| l.iter().any(|b| !b.is_ascii_whitespace()))?;
    let line = String::from_utf8_lossy(first);
    Some(line.trim_start_matches('\u{feff}').trim().to_string())
}

/// The format of an explicitly named file that detection does not recognise: JSON Lines when
/// it opens with `{` (each line then says why it is no event), else text.
pub(super) fn fallback(head: &[u8]) -> Format {
    match first_line(head) {
        Some(l) if l.starts_with('{') => Format::Jsonl,
        _ => Format::Text,
    }
}

/// How many lines detection reads when the first one is no recognised format.
pub const DETECT_LINES: usize = 5;

/// How many lines of no format at the start of a file detection looks past, as a
/// program's start-up output before its log (a framework's banner, a warning).
pub const PREAMBLE_LINES: usize = 40;

/// Detects a format (SPEC §3); `None` when it is no log at all. The first non-blank line
/// decides, as the SPEC says, when it is recognisable. When it is not, the first
/// [`DETECT_LINES`] lines of content decide: a log whose first line is damaged (cut by a
/// rotation, half-written by a crash) is still a log, and passing it over would lose every
/// event in it (§9); its bad line is then skipped and reported by the parser.
pub fn detect(head: &[u8], csv_map: &[(String, String)]) -> Option<Format> {
    // The parsers take a byte-order mark off the first line; so does every test here.
    let head = head.strip_prefix("\u{feff}".as_bytes()).unwrap_or(head);
    // Colour codes (tracing-subscriber's default layout) are read past, as the parsers do.
    let plain;
    let head = if ingest::ansi::has_escape(head) {
        plain = ingest::ansi::stripped(head);
        &plain[..]
    } else {
        head
    };
    // java.util.logging's XMLFormatter: a document, told by its declaration and doctype.
    if ingest::jul_xml::looks_like(head) {
        return Some(Format::JulXml);
    }
    let line = first_line(head)?;
    let line = line.as_str();
    // The JavaScript SDK's console exporter's spans (other output of the program around
    // them), before Node's console, whose objects they are printed as.
    if ingest::otlp::console_js::looks_like(head) {
        return Some(Format::Otlp);
    }
    // The Python SDK's: the same spans as JSON objects, the program's own lines among them.
    if ingest::otlp::console::looks_like(head) {
        return Some(Format::Otlp);
    }
    // Node's console (`2026-... tool call { runId: ... }`), before the text logs it
    // resembles and the JSON an unstamped object's first line may look like: its objects
    // are its events' fields.
    if !line.starts_with("{\"") && ingest::node_console::looks_like(head) {
        return Some(Format::NodeConsole);
    }
    // pino-pretty's `[TIME] LEVEL (name/pid): message`, its members below: before the text
    // logs its bracketed stamps resemble.
    let pretty_start = |c: char| matches!(c, '[' | '#' | '>') || c.is_ascii_uppercase();
    if line.starts_with(pretty_start) && ingest::pino_pretty::looks_like(head) {
        return Some(Format::PinoPretty);
    }
    if ingest::looks_like_otlp_batch(line)
        || (line == "{" && ingest::otlp::pretty_printed_head(head))
    {
        return Some(Format::Otlp);
    }

    if line.starts_with('{') {
        if ingest::looks_like_jsonl(line) {
            // A program's JSON beside another's stamped text lines (a journald export, a
            // container's output): the text reader reads both, the JSON objects through
            // the JSON Lines reader; the JSON Lines reader would skip the text.
            if has_text_line(head) {
                return Some(Format::Text);
            }
            return Some(Format::Jsonl);
        }
    } else {
        if let Some(f) = ingest::detect_csv_header(line, csv_map) {
            return Some(f);
        }
        // winston's `format.simple()`: `info: refund created {...}`; its printf layouts
        // (`STAMP [INFO] tool call {...}`); Monolog's line.
        if ingest::jsonl::winston::simple_object(line).is_some_and(|o| ingest::looks_like_jsonl(&o))
            || ingest::jsonl::winston::looks_like_printf(head)
            || ingest::jsonl::monolog::as_object(line).is_some()
        {
            return Some(Format::Jsonl);
        }
        if ingest::looks_like_text_log(head) {
            return Some(Format::Text);
        }
        if ingest::logfmt::looks_like_logfmt(line.as_bytes()) {
            return Some(Format::Logfmt);
        }
    }
    detect_past_first_line(head)
}

/// The format of at least half of the first [`DETECT_LINES`] lines of content (comments and
/// `---` lines, which a README has too, OTLP documents of other signals than spans, and a
/// web framework's own lines ([`ingest::banner`]) do not count either way), or `None`.
/// Failing that, the lines of no format that open the file, up to [`PREAMBLE_LINES`] of
/// them, are a preamble (a server's start-up output before its log, as Django's or Spring's
/// banner), and the next [`DETECT_LINES`] decide, two of them at least agreeing: a README's
/// one dated line, or its example of two among prose, is still no log. Only line-wise
/// formats can be told this way: a CSV export or a pretty-printed document needs its first line.
/// A README or a stray JSON document has no such majority; a log with one bad line does.
/// A file of a framework's own lines alone is a text log.
fn detect_past_first_line(head: &[u8]) -> Option<Format> {
    let head = head.strip_prefix("\u{feff}".as_bytes()).unwrap_or(head);
    // A head cut at [`SNIFF_BYTES`] may end inside a line, which proves nothing either way.
    let cut = head.len() >= SNIFF_BYTES && !head.ends_with(b"\n");
    let mut segments = head.split(|&b| b == b'\n').peekable();
    let mut votes: Vec<Option<Format>> = Vec::with_capacity(DETECT_LINES);
    let mut lead = 0;
    let mut framework_lines = 0;
    // Where JSON objects voted: with text lines among the votes, they are the text log's.
    let mut objects = Vec::new();
    let mut dated_text = false;
    // Past a preamble, more lines must confirm the log: a source file's comment with an
    // example log in it (a package's `.d.ts`) has a run of stamped lines after 40 of code.
    let window = |lead: usize| {
        if lead > 0 {
            CONFIRM_LINES
        } else {
            DETECT_LINES
        }
    };
    while votes.len() < lead + window(lead) {
        let Some(raw) = segments.next() else { break };
        let last = segments.peek().is_none();
        let line = raw.trim_ascii();
        if line.is_empty() || line.starts_with(b"#") || line.starts_with(b"---") {
            continue;
        }
        // Another signal's document beside the spans (a Collector's file exporter in
        // several pipelines) says nothing of the format: it is the spans that must win.
        if !ingest::looks_like_otlp_batch(&String::from_utf8_lossy(line))
            && ingest::looks_like_otlp_document(line)
        {
            continue;
        }
        if ingest::banner::is_framework_line(line) {
            framework_lines += 1;
            continue;
        }
        let vote = line_format(line);
        if vote == Some(Format::Jsonl) && line.starts_with(b"{") {
            objects.push(votes.len());
        }
        dated_text |= vote == Some(Format::Text) && is_dated_text_line(line);
        if vote.is_some() || !(last && cut) {
            if vote.is_none() && lead == votes.len() && lead < PREAMBLE_LINES {
                lead += 1;
            }
            votes.push(vote);
        }
    }
    // Nothing but a framework's own lines: a server that served no request (a replica
    // behind a gateway that sent it none), its log read as the text log it is.
    if votes.is_empty() && framework_lines > 0 {
        return Some(Format::Text);
    }
    // A text log's reader reads JSON objects among its lines too (its JSON Lines reader
    // does not read text lines): both kinds of line make a text log.
    if dated_text {
        for &i in &objects {
            votes[i] = Some(Format::Text);
        }
    }
    let first = &votes[..votes.len().min(DETECT_LINES)];
    let past = &votes[lead.min(votes.len())..];
    majority(first, 1, HALF).or_else(|| majority(past, 2, TWO_THIRDS))
}

/// Whether one of the first [`CONFIRM_LINES`] lines of content opens a text log's record
/// with a date (a dated stamp first, or a syslog header) that the JSON Lines reader does
/// not read as an object of its own (winston's and Monolog's layouts).
fn has_text_line(head: &[u8]) -> bool {
    let lines = head.split(|&b| b == b'\n').map(<[u8]>::trim_ascii);
    let content = lines.filter(|l| !l.is_empty() && !l.starts_with(b"#"));
    content.take(CONFIRM_LINES).any(|line| {
        line.first() != Some(&b'{')
            && is_dated_text_line(line)
            && !is_json_lines_own(&String::from_utf8_lossy(line))
    })
}

/// A line that opens a text log's record with a date: not a time of day alone
/// (`14:02:21.930  POST ...`), which a file of dated JSON objects could not place among
/// them. A stray line so in a JSON Lines trace is a damaged line, skipped, not another
/// program's text.
fn is_dated_text_line(line: &[u8]) -> bool {
    let time_only = {
        let l = line.strip_prefix(b"[").unwrap_or(line);
        l.len() >= 8 && l[2] == b':' && l[5] == b':' && l[..2].iter().all(u8::is_ascii_digit)
    };
    !time_only && ingest::opens_text_record(line)
}

/// A line of winston's or Monolog's layouts, which the JSON Lines reader reads as an object.
fn is_json_lines_own(line: &str) -> bool {
    ingest::jsonl::winston::printf_object(line).is_some()
        || ingest::jsonl::winston::simple_object(line).is_some()
        || ingest::jsonl::monolog::as_object(line).is_some()
}

/// How many lines after a preamble decide, two thirds of them agreeing.
const CONFIRM_LINES: usize = 20;

const HALF: (usize, usize) = (1, 2);
const TWO_THIRDS: (usize, usize) = (2, 3);

/// The format of at least `share` of `votes` (a fraction), if it has `least` of them.
fn majority(votes: &[Option<Format>], least: usize, share: (usize, usize)) -> Option<Format> {
    let mut best: Option<(Format, usize)> = None;
    for f in votes.iter().flatten() {
        let n = votes.iter().filter(|v| **v == Some(*f)).count();
        if best.is_none_or(|(_, m)| n > m) {
            best = Some((*f, n));
        }
    }
    let (num, den) = share;
    best.filter(|&(_, n)| n * den >= num * votes.len() && n >= least)
        .map(|(f, _)| f)
}

/// The format one line of content belongs to, if it is an event line of a line-wise format.
fn line_format(line: &[u8]) -> Option<Format> {
    if line.starts_with(b"{") {
        let text = String::from_utf8_lossy(line);
        if ingest::looks_like_otlp_batch(&text) {
            Some(Format::Otlp)
        } else {
            ingest::looks_like_jsonl(&text).then_some(Format::Jsonl)
        }
    } else if ingest::jsonl::monolog::as_object(&String::from_utf8_lossy(line)).is_some() {
        Some(Format::Jsonl)
    } else if ingest::opens_text_record(line) {
        Some(Format::Text)
    } else if ingest::access_log::stamp(line, crate::time::Zone::default()).is_some() {
        // A web server's access line: a stamped line the text reader reads.
        Some(Format::Text)
    } else {
        ingest::logfmt::looks_like_logfmt(line).then_some(Format::Logfmt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_first_line_is_looked_past_by_the_majority_of_the_next() {
        let jsonl = r#"{"ts":"2026-11-03T14:02:11Z","type":"effect"}"#;
        let otlp = r#"{"resourceSpans":[]}"#;
        let det = |text: &str| detect(text.as_bytes(), &[]);
        assert_eq!(
            det(&format!("{{\"ts\":\"20\n{jsonl}\n{jsonl}\n")),
            Some(Format::Jsonl)
        );
        assert_eq!(det(&format!("garbage\n{jsonl}\n")), Some(Format::Jsonl));
        assert_eq!(det(&format!("\0\0\0{otlp}\n{otlp}\n")), Some(Format::Otlp));
        assert_eq!(
            det("# exported by hand\n2.418  ok\n14:02:11.402  a\n14:02:12  b\n"),
            Some(Format::Text)
        );
        // Two bad lines of five still leave a majority; three among them do not.
        let ts = "14:02:11.402  healthcheck ok";
        assert_eq!(
            det(&format!("a\nb\n{ts}\n{ts}\n{ts}\n")),
            Some(Format::Text)
        );
        assert_eq!(det(&format!("a\n{ts}\nb\nc\n{ts}\nd\n")), None);
        // Prose with a dated line, a setext heading and a JSON document are no logs.
        assert_eq!(
            det("Notes\n---\nSee below.\n2026-11-03: refunded twice\n"),
            None
        );
        assert_eq!(det("{\n  \"expected\": [\"rf_1\"]\n}\n"), None);
        assert_eq!(det("{\"expected\":[\"rf_1\"]}\n"), None);
        // Only the first line can be a CSV header.
        assert_eq!(det("rows:\nid,amount,currency\nrf_1,1.00,GBP\n"), None);
    }

    /// A service's log that opens with its server's start-up output (review 35 H1: Flask's
    /// banner, uvicorn's lines) is a log: a framework's own lines count for nothing, and
    /// other lines of no format before the log are a preamble looked past, when two lines
    /// after it agree. Prose is still no log.
    #[test]
    fn a_preamble_before_a_log_is_looked_past() {
        let det = |text: &str| detect(text.as_bytes(), &[]);
        let flask = concat!(
            " * Serving Flask app 'payments'\n * Debug mode: off\n",
            "\x1b[31m\x1b[1mWARNING: This is a development server. Do not use it in a production deployment. Use a production WSGI server instead.\x1b[0m\n",
            " * Running on http://127.0.0.1:5001\n\x1b[33mPress CTRL+C to quit\x1b[0m\n",
            "[2026-12-07 07:32:50,932] INFO in service_flask: Refund re_1 created for order A-1: 45.00 GBP\n",
            "127.0.0.1 - - [07/Dec/2026 07:32:51] \"POST /v1/refunds HTTP/1.1\" 201 -\n",
        );
        assert_eq!(det(flask), Some(Format::Text));
        // uvicorn's lines, before and after one refund: that line alone decides.
        let uvicorn = concat!(
            "INFO:     Started server process [14335]\nINFO:     Waiting for application startup.\n",
            "INFO:     Application startup complete.\n",
            "INFO:     Uvicorn running on http://127.0.0.1:5004 (Press CTRL+C to quit)\n",
            "WARNING:  Invalid HTTP request received.\n",
            "2026-12-07 07:36:54,477 INFO payments: refund created refund_id=re_1 order_id=A-1 amount_minor=4500 currency=GBP\n",
            "INFO:     127.0.0.1:55250 - \"POST /v1/refunds HTTP/1.1\" 201 Created\n",
            "INFO:     Shutting down\nINFO:     Finished server process [14335]\n",
        );
        assert_eq!(det(uvicorn), Some(Format::Text));
        // A server that served nothing (a replica behind a gateway): its banner alone is a
        // text log of ignored lines; with one line that is no framework's, no log.
        let flask = " * Serving Flask app 'payments'\n * Debug mode: off\n * Running on http://127.0.0.3:5201\nPress CTRL+C to quit\n";
        assert_eq!(det(flask), Some(Format::Text));
        assert_eq!(det(&format!("{flask}Some other words\n")), None);
        // Another program's start-up output (Django's runserver), then its log.
        let ts = "2026-12-07 08:00:01,000 INFO refund created refund_id=re_1";
        let django = "Watching for file changes with StatReloader\nPerforming system checks...\n\n\
                      System check identified no issues (0 silenced).\nDjango version 5.0, using settings 'x'\n\
                      Starting development server at http://127.0.0.1:8000/\nQuit the server with CONTROL-C.\n";
        assert_eq!(det(&format!("{django}{ts}\n{ts}\n")), Some(Format::Text));
        // Django's banner is its own lines, passed over as Flask's are: one stamped line
        // after it is a log. Another preamble with one stamped line after it, or an example
        // of two among prose: no log.
        assert_eq!(det(&format!("{django}{ts}\n")), Some(Format::Text));
        let preamble = "Loading settings from ./config.yml\nConnecting to the database...\n\n\
                        Migrations applied: 0\nCache warmed\nReady.\n";
        assert_eq!(det(&format!("{preamble}{ts}\n{ts}\n")), Some(Format::Text));
        assert_eq!(det(&format!("{preamble}{ts}\n")), None);
        assert_eq!(
            det(&format!(
                "Logs\n\nThis folder holds the exports.\n```\n{ts}\n{ts}\n```\nAsk ops.\nThanks.\n"
            )),
            None
        );
        // A source file whose comment shows a log (a package's `.d.ts`): past its code, the
        // run of stamped lines is followed by code again, short of two thirds.
        let code = "import type {Options} from './options.js';\n".repeat(30);
        let example = "[00:57:44.581] [0] $ npm run build\n".repeat(9);
        let more = "\t(file: string, options?: Options): void;\n".repeat(12);
        assert_eq!(det(&format!("{code}{example}{more}")), None);
        assert_eq!(det(&format!("{code}{example}")), Some(Format::Text));
        // Past the preamble's bound and the lines after it, nothing is looked for.
        let long = "start-up chatter\n".repeat(PREAMBLE_LINES + DETECT_LINES);
        assert_eq!(det(&format!("{long}{ts}\n{ts}\n{ts}\n")), None);
        assert_eq!(
            det(&format!(
                "{}{ts}\n{ts}\n",
                "start-up chatter\n".repeat(PREAMBLE_LINES)
            )),
            Some(Format::Text)
        );
    }

    /// A Collector's file exporter in several pipelines writes metrics and logs documents
    /// beside the spans: the file is OTLP when one of its lines holds spans, and no log
    /// when none does.
    #[test]
    fn other_signals_beside_spans_leave_a_file_otlp() {
        let spans = r#"{"resourceSpans":[]}"#;
        let metrics = r#"{"resourceMetrics":[]}"#;
        let logs = r#"{ "resource_logs":[]}"#;
        let det = |text: &str| detect(text.as_bytes(), &[]);
        assert_eq!(
            det(&format!("{metrics}\n{logs}\n{spans}\n{metrics}\n")),
            Some(Format::Otlp)
        );
        assert_eq!(det(&format!("{logs}\n{spans}\n")), Some(Format::Otlp));
        assert_eq!(det(&format!("{metrics}\n{logs}\n")), None);
        assert_eq!(
            det(&format!(
                "{metrics}\n{{\"resourceMetricsX\":[]}}\n{{\"x\":1}}\n"
            )),
            None
        );
    }

    /// A program's JSON beside another's text (a journald export, a container's output):
    /// a text log, whose reader reads the JSON objects too; JSON alone, or beside the
    /// layouts the JSON Lines reader reads itself, stays JSON Lines.
    #[test]
    fn json_objects_beside_stamped_text_lines_are_a_text_log() {
        let det = |text: &str| detect(text.as_bytes(), &[]);
        let object = r#"{"ts":"2026-12-06T08:07:00Z","event":"refund created","refund_id":"re_1"}"#;
        let text = "2026-12-06T08:07:01.000Z  refund request received from 127.0.0.1";
        assert_eq!(
            det(&format!("{object}\n{text}\n{object}\n")),
            Some(Format::Text)
        );
        assert_eq!(
            det(&format!("{text}\n{object}\n{object}\n")),
            Some(Format::Text)
        );
        // A first line of no format: the majority of the next, both kinds counted as text.
        assert_eq!(
            det(&format!("garbage\n{object}\n{object}\n{text}\n")),
            Some(Format::Text)
        );
        assert_eq!(det(&format!("{object}\n{object}\n")), Some(Format::Jsonl));
        assert_eq!(
            det(&format!("garbage\n{object}\n{object}\n")),
            Some(Format::Jsonl)
        );
        // winston's printf layout and a web server's access line: the JSON Lines reader's.
        let printf = r#"2026-12-06T08:07:01.000Z [info] refund created {"refund_id":"re_2"}"#;
        let access =
            r#"127.0.0.1 - - [06/Dec/2026:08:07:01 +0000] "POST /v1/refunds HTTP/1.1" 201 -"#;
        assert_eq!(det(&format!("{object}\n{printf}\n")), Some(Format::Jsonl));
        assert_eq!(det(&format!("{object}\n{access}\n")), Some(Format::Jsonl));
        // A time of day alone could not be placed among dated objects: a damaged line.
        let time_only = "14:02:21.930  POST https://payments.internal/v1/refunds";
        assert_eq!(
            det(&format!("{object}\n{time_only}\n")),
            Some(Format::Jsonl)
        );
        assert_eq!(
            det(&format!("garbage\n{object}\n{object}\n{time_only}\n")),
            Some(Format::Jsonl)
        );
    }

    #[test]
    fn a_line_cut_by_the_end_of_the_head_does_not_count_against_a_log() {
        let event = r#"{"ts":"2026-11-03T14:02:11Z","type":"effect","pad":"x"}"#;
        let mut head = format!("oops\n{event}\n").into_bytes();
        while head.len() < SNIFF_BYTES {
            head.extend_from_slice(event.as_bytes());
        }
        head.truncate(SNIFF_BYTES);
        // "oops", then one event and one cut line: one vote each, unless the cut is discounted.
        assert_eq!(detect(&head, &[]), Some(Format::Jsonl));
    }
}
