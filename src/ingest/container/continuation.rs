//! Where a record that spans lines stands, when a runtime (or journald's stdout transport)
//! writes each of its lines as an entry of its own: a traceback or stack trace printed a
//! line at a time, java.util.logging's two-line record, the header block Java's HttpClient
//! logs below its record. In the service's own file the lines after the first are the
//! record's, read with it (an exception chained below another is the same failure, a key
//! among the headers the request's); each given the runtime's stamp, they were lines of
//! their own: each exception's line a failure of its own (a phantom attempt), JUL's message
//! apart from its header's time, the key no request's.

use crate::ingest::text::{is_exception_header, is_header_line, jul};

/// Where the lines passed on so far stand: inside a record's continuation, or not.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::ingest) enum Continuation {
    #[default]
    Outside,
    /// Python's, from `Traceback (most recent call last):`: its frames (indented).
    Frames,
    /// After the exception's line: blanks, and the words chaining another traceback.
    Raised,
    /// A stack trace that opens with its exception, as the JVM prints one
    /// (`java.net.SocketTimeoutException: Read timed out`, `Exception in thread "main" ...`)
    /// and Node an error: its frames and what else is indented (`\tat ...`, `\t... 12
    /// more`, `\tSuppressed: ...`), and the exceptions chained by `Caused by: `.
    Stack,
    /// After java.util.logging's first line of a record (SimpleFormatter's default, `Dec
    /// 07, 2026 8:07:00 AM com.acme.Agent issueRefund`): its second, the level and the
    /// message (`INFO: ...`), which has no stamp of its own.
    JulHeader,
    /// After Java's HttpClient's `HEADERS: REQUEST HEADERS:` (or `RESPONSE HEADERS:`), which
    /// ends its line: the headers below it, unindented or indented, up to a blank line.
    Headers,
}

impl Continuation {
    /// Whether `line` continues the record above it (to be passed on as it is, as in the
    /// service's file). An exception's line opens a stack trace where the text reader reads
    /// it as the continuation of the record above ([`is_exception_header`]): alone, it is
    /// that record's failure there too. A header line, or a line like JUL's second, with no
    /// record above of the kind it continues, is a line of its own.
    #[inline]
    pub(in crate::ingest) fn goes_on(&mut self, line: &[u8]) -> bool {
        const START: &[u8] = b"Traceback (most recent call last):";
        const CHAINED: [&[u8]; 2] = [
            b"The above exception was the direct cause of the following exception:",
            b"During handling of the above exception, another exception occurred:",
        ];
        use Continuation::*;
        let line = line.trim_ascii_end();
        let indented = line.first().is_none_or(u8::is_ascii_whitespace);
        let next = match *self {
            _ if line == START => Frames,
            Frames if indented => Frames,
            // The exception's line ends the frames.
            Frames => Raised,
            Raised if line.is_empty() || CHAINED.contains(&line) => Raised,
            Stack if !line.is_empty() && indented => Stack,
            Headers if !line.is_empty() && is_header_line(line) => Headers,
            // JUL's message, on the line after its header: a header block may follow it.
            JulHeader if jul::message_line(line).is_some() => {
                *self = after_own_line(line);
                return true;
            }
            _ if opens_stack(line) => Stack,
            _ => {
                // A record's own line (with its own stamp, or none): what may follow it.
                *self = after_own_line(line);
                return false;
            }
        };
        *self = next;
        true
    }
}

/// What may continue a record whose line is `line`: its second line, after JUL's header; its
/// headers, after the HttpClient's line that announces them.
fn after_own_line(line: &[u8]) -> Continuation {
    // Most lines: a digit (a stamp), an object, a bracket, none ending in `HEADERS:`.
    match line.first() {
        Some(b) if b.is_ascii_uppercase() && jul::is_header(line) => Continuation::JulHeader,
        Some(_) if opens_header_block(line) => Continuation::Headers,
        _ => Continuation::Outside,
    }
}

/// Java's HttpClient's line above its headers (`-Djdk.httpclient.HttpClient.log=headers`):
/// the message `HEADERS: REQUEST HEADERS:` or `HEADERS: RESPONSE HEADERS:` at the line's
/// end, after a stamp, a level, the logger's name as a layout writes them.
fn opens_header_block(line: &[u8]) -> bool {
    line.ends_with(b"HEADERS: REQUEST HEADERS:") || line.ends_with(b"HEADERS: RESPONSE HEADERS:")
}

/// A line of a stack trace that is not indented: its exception, one chained to it (`Caused
/// by: ...`), or the JVM's words for one that ended a thread. A stamped line never is one (a
/// name starts it).
fn opens_stack(line: &[u8]) -> bool {
    // Most lines: a stamp, an object, a bracket.
    line.first()
        .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'<')
        && (line.starts_with(b"Caused by: ")
            || line.starts_with(b"Exception in thread \"")
            || is_exception_header(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(lines: &[(&str, bool)]) {
        let mut continuation = Continuation::default();
        for &(line, goes_on) in lines {
            assert_eq!(continuation.goes_on(line.as_bytes()), goes_on, "{line:?}");
        }
    }

    /// A traceback's lines, chained ones too, pass as they are; the lines around it do not.
    #[test]
    fn a_tracebacks_lines_are_told_from_the_lines_around_it() {
        read(&[
            ("ERROR agent: tool failed", false),
            ("Traceback (most recent call last):", true),
            ("  File \"x.py\", line 1, in <module>", true),
            ("    raise to_exc(exc) from exc", true),
            ("httpcore.ReadTimeout: The read operation timed out", true),
            ("", true),
            (
                "The above exception was the direct cause of the following exception:",
                true,
            ),
            ("", true),
            ("Traceback (most recent call last):", true),
            ("\tFile \"y.py\", line 2", true),
            ("httpx.ReadTimeout: The read operation timed out", true),
            ("INFO agent: retrying", false),
            ("refund retried for order A-1", false),
            ("  indented, after no trace", false),
        ]);
    }

    /// A Java stack trace (its exception, frames, causes, the frames it leaves out) passes
    /// as it is, and so does the JVM's report of an uncaught one; a stamped line, a line of
    /// prose, a blank end it.
    #[test]
    fn a_stack_traces_lines_are_told_from_the_lines_around_it() {
        read(&[
            (
                "2026-12-06T06:27:49,154 WARN  [main] c.a.a.RefundAgent - attempt 1 failed, retrying",
                false,
            ),
            (
                "com.acme.agent.RefundAgent$RefundApiException: POST /v1/refunds failed",
                true,
            ),
            (
                "\tat com.acme.agent.RefundAgent$RefundsClient.send(RefundAgent.java:165) ~[app/:?]",
                true,
            ),
            (
                "Caused by: java.net.SocketTimeoutException: Read timed out",
                true,
            ),
            (
                "\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:278)",
                true,
            ),
            ("\t... 12 more", true),
            ("\tSuppressed: java.io.IOException: closed", true),
            ("\t\tat x.Y.z(Y.java:1)", true),
            (
                "2026-12-06T06:27:50,161 INFO  [main] c.a.a.RefundAgent - Sending POST",
                false,
            ),
            (
                "Exception in thread \"main\" java.lang.RuntimeException: gave up",
                true,
            ),
            ("\tat com.acme.Agent.main(Agent.java:12)", true),
            ("", false),
            ("\tat com.acme.Agent.main(Agent.java:12)", false),
            ("java.lang.NullPointerException", true),
            ("refund retried for order A-1", false),
            ("Caused by: java.io.IOException: closed", true),
            ("{\"ts\":\"2026-12-06T06:27:50Z\",\"msg\":\"x\"}", false),
            ("[2026-12-06 06:27:50] ERROR x", false),
            ("refund.created: re_1", false),
        ]);
    }

    /// java.util.logging's record: its second line passes below its header, and so do the
    /// HttpClient's headers below the line that announces them (in JUL's layout, or another
    /// with a stamp before the message), up to a blank line.
    #[test]
    fn juls_second_line_and_the_http_clients_headers_stay_below_their_record() {
        read(&[
            (
                "Dec 07, 2026 8:07:00 AM com.acme.agent.RefundAgent info",
                false,
            ),
            ("INFO: agent run 7f3a  step 4  tool=issue_refund", true),
            (
                "Dec 07, 2026 8:07:00 AM jdk.internal.net.http.Http1Request logHeaders",
                false,
            ),
            ("INFO: HEADERS: REQUEST HEADERS:", true),
            ("POST /v1/refunds HTTP/1.1", true),
            ("Content-Length: 49", true),
            (
                "Idempotency-Key: d49d19e4-f3d1-4e83-b8c7-47713e2f33ce",
                true,
            ),
            ("", false),
            (
                "Dec 07, 2026 8:07:01 AM com.acme.agent.RefundAgent warn",
                false,
            ),
            ("WARNING: refund attempt 1 failed", true),
            (
                "java.net.http.HttpTimeoutException: request timed out",
                true,
            ),
            (
                "\tat com.acme.agent.RefundAgent.main(RefundAgent.java:41)",
                true,
            ),
            ("", false),
            (
                "2026-12-07T08:07:01.676Z INFO jdk.httpclient.HttpClient HEADERS: RESPONSE HEADERS:",
                false,
            ),
            ("    content-length: 99", true),
            ("    date: Mon, 07 Dec 2026 08:07:01 GMT", true),
            ("", false),
            (
                "2026-12-07T08:07:01.678Z INFO jdk.httpclient.HttpClient RESPONSE: (POST http://h/v1/refunds) 201",
                false,
            ),
        ]);
    }

    /// A line that looks like a header, or like JUL's second line, with no record above of
    /// the kind it continues, is a line of its own: so is one after the block's blank line,
    /// and a second message line after JUL's header.
    #[test]
    fn header_and_message_lines_without_their_record_above_are_lines_of_their_own() {
        read(&[
            ("2026-12-07T08:07:00.000Z INFO agent: sending refund", false),
            ("Idempotency-Key: k-1", false),
            ("POST /v1/refunds HTTP/1.1", false),
            ("INFO: refund re_1 created", false),
            ("SEVERE: ledger timed out", false),
            (
                "2026-12-07T08:07:00.000Z INFO jdk.httpclient.HttpClient HEADERS: REQUEST HEADERS:",
                false,
            ),
            ("Host: h", true),
            ("", false),
            ("Idempotency-Key: k-2", false),
            ("Dec 07, 2026 8:07:00 AM com.acme.Payments create", false),
            ("INFO: refund re_1 created", true),
            ("INFO: refund re_2 created", false),
            ("refund retried for order A-1", false),
            // A line that names the block in its words, not at its end, announces none.
            (
                "2026-12-07T08:07:00.000Z INFO HEADERS: REQUEST HEADERS: none",
                false,
            ),
            ("Host: h", false),
        ]);
    }
}
