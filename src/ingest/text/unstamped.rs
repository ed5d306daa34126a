//! Lines without a timestamp at their start: a record's second line, an access line, a
//! framework's banner, or the tail of the record above.

use super::*;

impl TextParser {
    /// A line without a timestamp at its start: a java.util.logging record's two lines
    /// ([`jul`]), a web server's access line ([`super::access_log`]) or a framework's line
    /// about itself ([`super::banner`]): ignored; else part of the record above it
    /// ([`Self::record_tail`]).
    #[cold]
    pub(super) fn unstamped(
        &mut self,
        n: u32,
        span: &Range<u64>,
        raw: &[u8],
        line: &[u8],
        why: String,
        ahead: Ahead,
    ) -> Verdict {
        // A JSON object of its own, as a journald export gives a service's JSON beside
        // other programs' text ([`json_messages`]).
        if json_messages::may_be_object(line) {
            return self.object_line(n, raw, line, why, ahead);
        }
        // A program's line behind a BSD or RFC 5424 syslog header ([`syslog_lines`]).
        if crate::ingest::syslog::may_open_header(line)
            && let Some(verdict) = self.behind_header(n, span, line, ahead)
        {
            return verdict;
        }
        if let Some(time) = jul::header_time(line) {
            self.process.jul_time = Some(time);
            return Verdict::Ignored;
        }
        // A web server's access line: its stamp in brackets after the client's address;
        // a gateway's may show a request it sent again ([`super::gateway`]).
        if let Some(at) = crate::ingest::access_log::stamp(line, self.zone) {
            self.process.tail = tail::Tail::AfterRecord { failed: false };
            return match crate::ingest::gateway::of_access_line(line) {
                Some(kind) => Verdict::Event(at, kind),
                None => Verdict::Ignored,
            };
        }
        // A web framework's line about itself (Flask's banner, uvicorn's): no event. A
        // traceback below it is its record's (Django's `Internal Server Error: /path`),
        // no failure of the line before.
        if crate::ingest::banner::is_framework_line(line) {
            self.invocation.platform_line(line);
            self.process.tail = tail::Tail::AfterRecord { failed: true };
            return Verdict::Ignored;
        }
        if let Some(time) = self.process.jul_time.take() {
            if let Some((_, message)) = jul::message_line(line) {
                let stamped = [time.as_bytes(), b"  ", message].concat();
                return self.message_line(n, span, &stamped, ahead);
            }
            self.process.jul_time = Some(time);
        }
        // AWS Lambda's Python runtime's report of the error the handler raised: the
        // invocation's failure ([`lambda`]), its traceback after it part of it.
        if let Some(error) = lambda::unhandled_error(line)
            && self.invocation.is_open()
        {
            self.process.tail = tail::Tail::InTrace { told: true };
            return self.failure_of_record(error, &ahead);
        }
        self.record_tail(raw, line, why, ahead)
    }

    /// A line without a timestamp ([`tail`]): part of the record above it (ignored, or the
    /// failure its traceback names, at the record's time), else skipped for `why`.
    #[cold]
    pub(super) fn record_tail(
        &mut self,
        raw: &[u8],
        line: &[u8],
        why: String,
        ahead: Ahead,
    ) -> Verdict {
        match self.process.tail.continues(raw, line) {
            tail::Continued::No if level::python_default_layout(line) => Verdict::Skipped(
                "no timestamp: Python logging's default format (`LEVEL:name:message`) writes none; add `%(asctime)s` to the handler's format".into(),
            ),
            tail::Continued::No => Verdict::Skipped(out_of_range(line).unwrap_or(why)),
            tail::Continued::Yes => Verdict::Ignored,
            tail::Continued::Failure => self.failure_of_record(line, &ahead),
        }
    }

    /// The failure `line` (an exception's: `httpx.ReadTimeout: timed out`) names, as the
    /// record's above it, at its time; nothing if it names none.
    #[cold]
    fn failure_of_record(&mut self, line: &[u8], ahead: &Ahead) -> Verdict {
        // A held idle call's lines are read in order when it is settled: not here.
        if self.idle.is_active() {
            return Verdict::Ignored;
        }
        let mut fields = Fields::empty();
        fields.fill(line);
        let local = Local {
            at: self.line_at,
            shift: 0,
        };
        match self.classify(&fields, local) {
            Ok(Some(EventKind::Failure(mut failure))) => {
                failure_of_cause(&mut failure, ahead);
                Verdict::Event(self.line_at, EventKind::Failure(failure))
            }
            _ => Verdict::Ignored,
        }
    }
}
