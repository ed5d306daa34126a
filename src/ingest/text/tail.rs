//! The lines a log record spans after its stamped first line: the traceback Python's
//! `logger.exception` writes (`Traceback (most recent call last):`, indented `File ...`
//! lines, the exception, `The above exception was the direct cause ...`), a Java stack
//! trace (`java.net.SocketTimeoutException: Read timed out`, `\tat ...`, `Caused by: ...`).
//! They carry no timestamp, and were skipped as broken lines, so a log with one
//! `logger.exception` failed `--strict`. Such lines are part of the record above them,
//! counted as ignored; a line without a timestamp that starts no such block (and any before
//! the first stamped line) is still skipped with its reason.

/// Where the lines after the latest stamped line stand.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Tail {
    /// No stamped line yet: nothing to continue.
    #[default]
    NoRecord,
    /// After a stamped line (`failed`: it was itself a failure): a traceback or stack
    /// trace may start.
    AfterRecord { failed: bool },
    /// Inside one: every line up to the next stamped line belongs to it. `told`: the
    /// record's failure is known (its stamped line, or an exception line before).
    InTrace { told: bool },
    /// After a client's `HEADERS:` line: its header lines follow ([`super::client`]).
    Headers,
    /// After a line announcing a list whose items follow as `+ NAME` (Huey's `The
    /// following commands are available:`, [`super::huey`]).
    Listing,
}

/// What a line without a timestamp is to the record above it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Continued {
    /// Not part of it: skipped, with the reason.
    No,
    /// Part of it, nothing to read.
    Yes,
    /// The first exception a traceback names, where the record's stamped line said no
    /// failure (`logger.exception("refund failed")`): the failure the record reports.
    Failure,
}

impl Tail {
    /// The stamped line just read was a failure.
    pub(super) fn record_failed(&mut self) {
        if let Tail::AfterRecord { failed } = self {
            *failed = true;
        }
    }

    /// What `raw` (the line as read; `line`, trimmed), which has no timestamp, is to the
    /// record above it. Cold: asked only of lines without a timestamp.
    #[cold]
    pub(super) fn continues(&mut self, raw: &[u8], line: &[u8]) -> Continued {
        let told = match *self {
            Tail::NoRecord => return Continued::No,
            Tail::Headers if super::client::is_header_line(raw) => return Continued::Yes,
            Tail::Headers if opens_trace(raw, line) => false,
            Tail::Headers => return Continued::No,
            Tail::Listing if line.starts_with(b"+ ") => return Continued::Yes,
            Tail::Listing if opens_trace(raw, line) => false,
            Tail::Listing => return Continued::No,
            Tail::AfterRecord { failed } if opens_trace(raw, line) => failed,
            Tail::AfterRecord { .. } => return Continued::No,
            Tail::InTrace { told } => told,
        };
        let indented = raw.first().is_some_and(|c| matches!(c, b' ' | b'\t'));
        let failure = !told && !indented && is_exception_header(line);
        *self = Tail::InTrace {
            told: told || failure,
        };
        if failure {
            Continued::Failure
        } else {
            Continued::Yes
        }
    }
}

/// The first line of a traceback or stack trace.
fn opens_trace(raw: &[u8], line: &[u8]) -> bool {
    let indented = raw.first().is_some_and(|c| matches!(c, b' ' | b'\t'));
    line.starts_with(b"Traceback (most recent call last):")
        || line.starts_with(b"Caused by: ")
        // The JVM's report of an exception that ended a thread (`main`, when it escaped).
        || line.starts_with(b"Exception in thread \"")
        || node_crash_site(line)
        || super::ruby::is_backtrace_line(line)
        // rich's traceback in a box (structlog's console layout, loguru with rich).
        || line.starts_with("╭─".as_bytes())
        // The second line of httpx's `HTTPStatusError` message, logged with `%s`.
        || line.starts_with(b"For more information check: https://developer.mozilla.org/")
        // The second line of the Stripe SDK's `APIConnectionError` (its text wrapped at 70
        // columns), then the HTTP library's error: `(Network error: ReadTimeout: ...)`.
        || line.starts_with(b"let us know at support@stripe.com.")
        || (indented && (line.starts_with(b"at ") || line.starts_with(b"File \"")))
        // pino-pretty's members of the logged object, four blanks in.
        || super::pino_pretty::member(raw).is_some()
        || is_exception_header(line)
}

/// Where Node says an uncaught error was thrown, the first line of its crash report:
/// `node:internal/process/promises:391`, `/app/src/refund.js:42`, `file:///app/x.mjs:7`.
fn node_crash_site(line: &[u8]) -> bool {
    let Some(colon) = line.iter().rposition(|&b| b == b':') else {
        return false;
    };
    let (file, number) = (&line[..colon], &line[colon + 1..]);
    let script = [&b".js"[..], b".mjs", b".cjs", b".ts"]
        .iter()
        .any(|e| file.ends_with(e));
    !number.is_empty()
        && number.iter().all(u8::is_ascii_digit)
        && !file.contains(&b' ')
        && (file.starts_with(b"node:")
            || ((file.starts_with(b"/") || file.starts_with(b"file://")) && script))
}

/// `java.net.SocketTimeoutException: Read timed out`, `httpx.ReadTimeout: timed out`,
/// `KeyError`: a dotted name ending in a word exceptions end in, alone or before `: `;
/// after Node's `<ref *1>`, which marks an error object that refers to itself.
pub(in crate::ingest) fn is_exception_header(line: &[u8]) -> bool {
    let line = crate::ingest::without_ref_mark(line);
    let name_end = line.iter().position(|&c| c == b':').unwrap_or(line.len());
    let name = &line[..name_end];
    let after = &line[name_end..];
    let plain = !name.is_empty()
        && name[0].is_ascii_alphabetic()
        && name
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'$'));
    let endings: [&[u8]; 7] = [
        b"Error",
        b"Exception",
        b"Timeout",
        b"Throwable",
        b"Interrupt",
        b"Exit",
        b"Warning",
    ];
    plain
        && endings.iter().any(|e| name.ends_with(e))
        && (after.is_empty() || after.starts_with(b": ") || after == b":")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(lines: &[&str]) -> Vec<bool> {
        read_after(Tail::AfterRecord { failed: false }, lines)
            .iter()
            .map(|c| *c != Continued::No)
            .collect()
    }

    fn read_after(mut tail: Tail, lines: &[&str]) -> Vec<Continued> {
        lines
            .iter()
            .map(|raw| tail.continues(raw.as_bytes(), raw.trim().as_bytes()))
            .collect()
    }

    /// The first exception of a traceback is the record's failure, unless its stamped
    /// line was one; the chained ones after it tell the same failure.
    #[test]
    fn the_first_exception_of_a_traceback_is_the_records_failure() {
        let lines = [
            "Traceback (most recent call last):",
            "  File \"/app/tool.py\", line 12, in issue_refund",
            "httpcore.ReadTimeout: timed out",
            "The above exception was the direct cause of the following exception:",
            "httpx.ReadTimeout: timed out",
        ];
        use Continued::{Failure, Yes};
        let after = |failed| read_after(Tail::AfterRecord { failed }, &lines);
        assert_eq!(after(false), [Yes, Yes, Failure, Yes, Yes]);
        assert_eq!(after(true), [Yes, Yes, Yes, Yes, Yes]);
    }

    #[test]
    fn a_python_traceback_belongs_to_its_record() {
        let lines = [
            "Traceback (most recent call last):",
            "  File \"/app/tool.py\", line 12, in issue_refund",
            "    r = client.post(url, json=body)",
            "        ^^^^^^^^^^^^^^^^^^^^^^^^^^^",
            "httpcore.ReadTimeout: timed out",
            "",
            "The above exception was the direct cause of the following exception:",
            "httpx.ReadTimeout: timed out",
        ];
        assert!(reads(&lines).iter().all(|&c| c));
    }

    #[test]
    fn the_second_line_of_an_httpx_status_error_belongs_to_its_record() {
        let more = "For more information check: https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/422";
        assert_eq!(reads(&[more]), [true]);
        assert_eq!(
            reads(&["For more information check: https://example.com/x"]),
            [false]
        );
    }

    /// `log.warning("refund failed: %s", e)` of Stripe's `APIConnectionError`: its text
    /// spans four lines.
    #[test]
    fn the_rest_of_a_stripe_connection_error_belongs_to_its_record() {
        let lines = [
            "let us know at support@stripe.com.",
            "",
            "(Network error: ReadTimeout: HTTPSConnectionPool(host='api.stripe.com', port=443): Read timed out. (read timeout=10))",
        ];
        assert!(reads(&lines).iter().all(|&c| c));
        assert_eq!(reads(&["let us know at example.com."]), [false]);
    }

    #[test]
    fn a_java_stack_trace_belongs_to_its_record() {
        let lines = [
            "java.net.SocketTimeoutException: Read timed out",
            "\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:278)",
            "Caused by: java.io.IOException: closed",
            "\t... 12 more",
        ];
        assert!(reads(&lines).iter().all(|&c| c));
        assert_eq!(
            reads(&["\tat com.acme.Refunds.issue(Refunds.java:40)"]),
            [true]
        );
        // The JVM's report of an exception that ended a thread: part of the record, no
        // request's failure of its own.
        let ended = [
            "Exception in thread \"main\" java.lang.RuntimeException: gave up",
            "\tat com.acme.Agent.main(Agent.java:12)",
            "Caused by: java.net.http.HttpTimeoutException: request timed out",
        ];
        let read = read_after(Tail::AfterRecord { failed: true }, &ended);
        assert_eq!(read, [Continued::Yes, Continued::Yes, Continued::Yes]);
    }

    /// Node's report of an uncaught error: where it was thrown, the source line and its
    /// caret, then the error (after `<ref *1>` when it refers to itself) and its dump.
    #[test]
    fn a_node_crash_report_belongs_to_its_record() {
        let lines = [
            "node:internal/process/promises:391",
            "    triggerUncaughtException(err, true /* fromPromise */);",
            "    ^",
            "<ref *1> AxiosError: timeout of 1000ms exceeded",
            "    at RedirectableRequest.handleRequestTimeout (/app/node_modules/axios/lib/adapters/http.js:1:1)",
            "  code: 'ECONNABORTED',",
            "}",
            "Node.js v20.20.2",
        ];
        let read = read_after(Tail::AfterRecord { failed: false }, &lines);
        assert_eq!(read[3], Continued::Failure, "{read:?}");
        assert!(read.iter().all(|c| *c != Continued::No), "{read:?}");
        assert_eq!(reads(&["/app/src/refund.js:42"]), [true]);
        for other in ["/etc/hosts:12", "node: 12", "refunds.js:12 failed"] {
            assert_eq!(reads(&[other]), [false], "{other}");
        }
    }

    #[test]
    fn other_lines_without_a_stamp_are_not_part_of_a_record() {
        // A broken line after a record, and anything before the first record.
        assert_eq!(reads(&["refund rf_1 order A-1 4500p"]), [false]);
        assert_eq!(reads(&["  indented but no trace"]), [false]);
        assert_eq!(reads(&["Note: x", "Error code 5: x"]), [false, false]);
        let line = "Traceback (most recent call last):";
        assert_eq!(read_after(Tail::NoRecord, &[line]), [Continued::No]);
    }
}
