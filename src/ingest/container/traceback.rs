//! Where a traceback or stack trace printed a line at a time stands: a runtime (or
//! journald's stdout transport) writes each of its lines as an entry of its own. In the
//! service's own file they are the continuation of the record above them, read with it (an
//! exception chained below another is the same failure); each given the runtime's stamp,
//! they were lines of their own, and each exception's line a failure of its own: a phantom
//! attempt.

/// Where the lines passed on so far stand: inside a traceback or stack trace, or not.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::ingest) enum Traceback {
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
}

impl Traceback {
    /// Whether `line` is a traceback's (to be passed on as it is, as in the service's file).
    /// An exception's line opens a stack trace where the text reader reads it as the
    /// continuation of the record above ([`crate::ingest::text::is_exception_header`]):
    /// alone, it is that record's failure there too.
    #[inline]
    pub(in crate::ingest) fn goes_on(&mut self, line: &[u8]) -> bool {
        const START: &[u8] = b"Traceback (most recent call last):";
        const CHAINED: [&[u8]; 2] = [
            b"The above exception was the direct cause of the following exception:",
            b"During handling of the above exception, another exception occurred:",
        ];
        let line = line.trim_ascii_end();
        let indented = line.first().is_none_or(u8::is_ascii_whitespace);
        let next = match *self {
            _ if line == START => Traceback::Frames,
            Traceback::Frames if indented => Traceback::Frames,
            // The exception's line ends the frames.
            Traceback::Frames => Traceback::Raised,
            Traceback::Raised if line.is_empty() || CHAINED.contains(&line) => Traceback::Raised,
            Traceback::Stack if !line.is_empty() && indented => Traceback::Stack,
            _ if opens_stack(line) => Traceback::Stack,
            _ => Traceback::Outside,
        };
        *self = next;
        next != Traceback::Outside
    }
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
            || crate::ingest::text::is_exception_header(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(lines: &[(&str, bool)]) {
        let mut traceback = Traceback::default();
        for &(line, goes_on) in lines {
            assert_eq!(traceback.goes_on(line.as_bytes()), goes_on, "{line:?}");
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
}
