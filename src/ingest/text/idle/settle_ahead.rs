//! An idle call settled from the reader's buffer: when the three lines after its tool call
//! are there in their usual shape, the call is settled at once, without holding copies.

use super::*;

impl TextParser {
    /// Reads ahead, in the reader's buffer, the three lines that usually follow the tool
    /// call `tool` that started the idle call (not yet held): its plain first request, a
    /// 2xx answer and the step's plain end, each with a full timestamp. When they are just
    /// that, the call is settled at once, as holding the four lines one by one would
    /// settle it but without copying them aside, and the number of lines read (3) is
    /// returned. Anything else returns 0 having changed nothing, and the lines are read
    /// one by one.
    pub(super) fn settle_ahead(&mut self, tool: Unsplit, ahead: Ahead) -> usize {
        // The lines' times move the pass of a fold (`Folds`) as read in order: lines read
        // ahead and then read again one by one must find it as it was.
        let folds = self.dates.folds;
        let read = self.settle_ahead_reading(tool, ahead);
        if read == 0 {
            self.dates.folds = folds;
        }
        read
    }

    fn settle_ahead_reading(&mut self, tool: Unsplit, ahead: Ahead) -> usize {
        const LINES: usize = 3;
        // The lines' bytes are where they lie in the file, for the call's place, unless
        // they were recoded (a line of Windows-1252 among them): read one by one then.
        if ahead.recoded() {
            return 0;
        }
        let second_passes = self.dates.folds.second_passes();
        let Some(Plain { read, times, safe }) = self.plain_lines_ahead(&ahead) else {
            return 0;
        };
        // The call's earliest and latest time: all that is kept of its lines.
        let (earliest, latest) = times.iter().fold((tool.at.at, tool.at.at), |(e, l), t| {
            (Timestamp(e.0.min(t.0)), Timestamp(l.0.max(t.0)))
        });
        let idle = &mut self.idle;
        let end = tool.span.end + read as u64;
        // Settling may set the call aside as its place in the file; one that cannot be is
        // replayed from its held copies, which these lines do not have. A line read as a
        // fold's second pass would read otherwise alone.
        let second_pass = self.dates.folds.second_passes() != second_passes;
        let dated = idle.dated && tool.dated && !second_pass;
        let placed =
            self.rereadable && dated && DeferredLines::fits(idle.span.start, end - idle.span.start);
        // Held so far: nothing, not even the tool call's line.
        let settles = (safe && idle.safe) || placed;
        if !settles || !idle.lines.is_empty() {
            return 0;
        }
        idle.attempts = 1;
        idle.safe &= safe;
        idle.answered = true;
        idle.dated = dated;
        // Settling never replays these lines (it is safe or set aside as its place), so
        // they are not held, only counted and timed.
        let held = HeldSpan {
            first_line: tool.n,
            lines: 1 + LINES as u64,
            earliest,
            latest,
        };
        self.retire_idle_span(end, held);
        LINES
    }

    /// The three lines after an idle call's tool call, each in its usual spelling: a plain
    /// first request, a 2xx answer and the step's plain end ([`Plain`]), in the order
    /// `continue_idle_plainly` takes them (none of the three shapes can be taken for
    /// another). Written out line by line rather than as a loop over the three: it runs
    /// for every idle call of a month.
    #[inline(always)]
    fn plain_lines_ahead(&mut self, ahead: &Ahead) -> Option<Plain> {
        let (request_at, request, read) = self.line_ahead(ahead, 0, 0)?;
        let idle = &mut self.idle;
        let request = idle.without_own_names(request);
        let safe = (idle.requests).get(request, || plain_request(request, &mut idle.url_kind))?;
        let (answer_at, answer, read) = self.line_ahead(ahead, 1, read)?;
        let status = plain_answer(self.idle.without_own_names(answer))?;
        if !(200..300).contains(&status) {
            return None;
        }
        let (end_at, end, read) = self.line_ahead(ahead, 2, read)?;
        if !self.idle.is_end_line(end) {
            return None;
        }
        let times = [request_at, answer_at, end_at];
        Some(Plain { read, times, safe })
    }

    /// The `i`th line ahead, starting at `from` in the bytes ahead, in the usual spelling:
    /// its time, its message, and where the line after it starts. A timestamp at the very
    /// start and a space after it; a line the reader would trim at its start (blanks,
    /// NULs) is read one by one. Its end is trimmed with the message (a carriage return
    /// is a blank); NULs the reader would trim there fit none of the shapes read ahead but
    /// an answer's, which reads the same with them. A timestamp's bytes are never a
    /// newline, and its reading stops at one: the line's end, the next newline, is after it.
    #[inline(always)]
    fn line_ahead<'a>(
        &mut self,
        ahead: &Ahead<'a>,
        i: usize,
        from: usize,
    ) -> Option<(Timestamp, &'a [u8], usize)> {
        let bytes = &ahead.bytes()[from..];
        let (Stamp::Instant(at), used) = self.dates.parse_stamp(bytes, self.zone)? else {
            return None;
        };
        if bytes.get(used) != Some(&b' ') {
            return None;
        }
        let len = ahead.line_end(i)? - from;
        if len <= used {
            return None;
        }
        Some((at, message_of(&bytes[used..len]), from + len + 1))
    }
}

/// What the three lines read ahead come to: the bytes they take (newlines included), their
/// times, and whether the request's method is safe.
struct Plain {
    read: usize,
    times: [Timestamp; 3],
    safe: bool,
}
