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
        let mut read = 0;
        // The call's earliest and latest time: all that is kept of its lines.
        let (mut earliest, mut latest) = (tool.at.at, tool.at.at);
        let mut safe = true;
        let second_passes = self.dates.folds.second_passes();
        for i in 0..LINES {
            // The usual spelling only: a timestamp at the very start and a space after it;
            // a line the reader would trim at its start (blanks, NULs) is read one by one.
            // Its end is trimmed with the message (a carriage return is a blank); NULs the
            // reader would trim there fit none of the shapes below but an answer's, which
            // reads the same with them. A timestamp's bytes are never a newline, and its
            // reading stops at one: the line's end, the next newline, is after it.
            let from = &ahead.bytes()[read..];
            let Some((Stamp::Instant(at), used)) = self.dates.parse_stamp(from, self.zone) else {
                return 0;
            };
            if from.get(used) != Some(&b' ') {
                return 0;
            }
            let Some(len) = ahead
                .line_end(i)
                .map(|nl| nl - read)
                .filter(|&len| len > used)
            else {
                return 0;
            };
            let msg = message_of(&from[used..len]);
            let idle = &mut self.idle;
            // The order `continue_idle_plainly` takes them in; none of the three shapes
            // can be taken for another.
            let plain = match i {
                0 => {
                    let msg = idle.without_own_names(msg);
                    (idle.requests)
                        .get(msg, || plain_request(msg, &mut idle.url_kind))
                        .map(|request_safe| safe = request_safe)
                        .is_some()
                }
                1 => plain_answer(idle.without_own_names(msg))
                    .is_some_and(|status| (200..300).contains(&status)),
                _ => idle.is_end_line(msg),
            };
            if !plain {
                return 0;
            }
            (earliest, latest) = (earliest.min(at), latest.max(at));
            read += len + 1;
        }
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
}
