//! Timestamps other than the bare one at a line's start: in brackets (with a level and
//! target inside them), Ruby's `Logger` layout, a `# date:` comment that dates time-only
//! lines, and a stamp's shape with no such time.

use super::*;

impl TextParser {
    /// `[2026-11-03T14:02:11.402Z]`, `[14:02:11]`: a timestamp in brackets, as many loggers
    /// write one (SPEC §3.1 has it bare), and how many bytes it took with its brackets; with
    /// the level and target inside them too (`[2026-12-06T05:25:20Z INFO  agent::tools]`,
    /// Rust's `env_logger`).
    #[cold]
    pub(super) fn bracketed_stamp(&mut self, line: &[u8]) -> Option<(Stamp, usize)> {
        let inner = line.strip_prefix(b"[")?;
        let (stamp, used) = self.dates.parse_stamp(inner, self.zone)?;
        match inner.get(used) {
            // With a job queue worker's header after it ([`job_queues`]).
            Some(b']') => Some((stamp, used + 2 + self.worker_header(&inner[used + 1..]))),
            // Celery's `[2026-12-06 07:39:46,898: INFO/MainProcess]`: a level and a process.
            Some(b':') => {
                let close = used + inner[used..].iter().position(|&b| b == b']')?;
                let (level, process) = split_celery_header(&inner[used + 1..close])?;
                let celery = level.iter().all(u8::is_ascii_uppercase) && !process.is_empty();
                // Only a pool process makes the lines' processes worth reading: a worker
                // whose every line is MainProcess's (a solo or threads pool) keeps the
                // older rule ([`celery`]).
                self.process.pool.seen |= celery && process != b"MainProcess";
                celery.then_some((stamp, close + 2))
            }
            Some(b' ') => match written_offset_after(&inner[used..]) {
                // pino-pretty's `translateTime`: `[2026-12-06 07:42:10.902 +0000]`.
                Some(offset) => {
                    let joined = [&inner[..used], offset].concat();
                    let (stamp, whole) = self.dates.parse_stamp(&joined, self.zone)?;
                    (whole == joined.len()).then_some((stamp, used + offset.len() + 3))
                }
                None => {
                    let header = (level::level_and_target(&inner[used..]))
                        .or_else(|| level::dashed_name_and_level(&inner[used..]))?;
                    Some((stamp, used + header + 2))
                }
            },
            _ => None,
        }
    }

    /// Ruby's `Logger` layout (`I, [2026-12-06T03:05:31.860855 #5365]  INFO -- : msg`,
    /// [`ruby`]): its timestamp, and how many bytes it took up to the message's blank.
    #[cold]
    pub(super) fn ruby_stamp(&mut self, line: &[u8]) -> Option<(Stamp, usize)> {
        let start = ruby::stamp_start(line)?;
        let (stamp, used) = self.dates.parse_stamp(&line[start..], self.zone)?;
        let end = start + used;
        let message = end + ruby::message_start(&line[end..])?;
        // Faraday's logger middleware names its lines `request` and `response`.
        let program = &line[end..message];
        if program.ends_with(b"-- request:") || program.ends_with(b"-- response:") {
            self.process.client.logs_every_try = true;
        }
        Some((stamp, message))
    }

    /// `# date: YYYY-MM-DD` dates the time-only timestamps that follow (over `--date`);
    /// any other comment is ignored. A date header that cannot be read is skipped with its
    /// reason, since every time after it would be on the wrong day.
    pub(super) fn comment(&mut self, line: &[u8]) -> Verdict {
        let body = line[1..].trim_ascii();
        let Some(rest) = body
            .get(..5)
            .filter(|p| p.eq_ignore_ascii_case(b"date:"))
            .map(|_| body[5..].trim_ascii())
        else {
            return Verdict::Ignored;
        };
        let nanos = parse_date(rest)
            .filter(|_| rest.len() == 10)
            .and_then(|days| days.checked_mul(NANOS_PER_DAY));
        let Some(nanos) = nanos else {
            return Verdict::Skipped(format!(
                "`# date:` header `{}` is not a date YYYY-MM-DD",
                text(rest)
            ));
        };
        self.date_base = nanos;
        self.dated = true;
        self.day_offset = 0;
        self.prev_tod = None;
        self.first_tod = None;
        Verdict::Ignored
    }
}

/// Why a line that opens with a timestamp's shape but no such time (`2026-13-01T...`,
/// `[25:00:00]`) is skipped: said, rather than that it has no parsable timestamp.
#[cold]
pub(super) fn out_of_range(line: &[u8]) -> Option<String> {
    crate::time::why_out_of_range(line.strip_prefix(b"[").unwrap_or(line))
}
