//! Settling a held call: counted and dropped (or deferred for a resume) when it ended idle,
//! replayed through the ordinary path when a line showed it to matter; and deferred calls'
//! lines read again.

use super::*;

impl TextParser {
    /// The call ended idle: counted and dropped, or deferred if a resume could make its
    /// POST matter. Afterwards the parser is where the ordinary path would leave it.
    pub(super) fn retire_idle(&mut self, end: u64) {
        let lines = &self.idle.lines;
        let Some(first) = lines.first() else {
            // Not reached: a call is held from its tool call's line on. Nothing to count.
            self.idle.active = false;
            return;
        };
        let (earliest, latest) = (lines.iter()).fold((first.at.at, first.at.at), |(a, b), h| {
            (a.min(h.at.at), b.max(h.at.at))
        });
        let held = HeldSpan {
            first_line: first.n,
            lines: lines.len() as u64,
            earliest,
            latest,
        };
        self.retire_idle_span(end, held);
    }

    /// [`TextParser::retire_idle`] for a call known by its lines' span: one settled ahead
    /// holds no lines.
    pub(super) fn retire_idle_span(&mut self, end: u64, held: HeldSpan) {
        self.set_current_call();
        let idle = &mut self.idle;
        idle.active = false;
        let mut deferred = None;
        if needs_keeping_for_a_resume(idle.safe, idle.attempts) {
            let (start, first) = (idle.span.start, held.first_line);
            deferred = (self.rereadable && idle.dated)
                .then(|| DeferredLines::new(start, end - start, first, run_hash(&idle.run)))
                .flatten();
            if deferred.is_none() {
                // Not readable again (standard input, gzip, time-only stamps, or beyond
                // where a place reaches): as events.
                return self.replay_idle();
            }
        }
        self.out.stats.events += held.lines;
        let filter = self.out.filter.as_mut().expect("filtering");
        // The earliest and the latest widen the dropped span as all of them would.
        filter.dropped_idle(held.lines, [held.earliest, held.latest].into_iter());
        filter.deferred_lines.extend(deferred);
    }

    /// The ordinary path for every held line, in order.
    pub(in crate::ingest::text) fn replay_idle(&mut self) {
        self.idle.active = false;
        let raw = std::mem::take(&mut self.idle.raw);
        let lines = std::mem::take(&mut self.idle.lines);
        // The line being read, which made the call replay, is counted after these.
        let reading = self.place.take();
        let reading_at = self.line_at;
        for h in &lines {
            self.line_at = h.at.at;
            let fields = Fields::split(&raw[h.msg.clone()]);
            let verdict = match self.classify(&fields, h.at) {
                Ok(Some(kind)) => Verdict::Event(h.at.at, kind),
                Ok(None) => Verdict::Ignored,
                Err(why) => Verdict::Skipped(why),
            };
            self.place = h.place.clone();
            self.count(h.n, verdict);
        }
        self.place = reading;
        self.line_at = reading_at;
        self.idle.raw = raw;
        self.idle.lines = lines;
    }

    /// The ordinary path makes a tool call the current call; so does a held one, settled
    /// when its step ended.
    fn set_current_call(&mut self) {
        self.process.client.end_dispatch();
        self.named_call();
        let idle = &self.idle;
        match &mut self.process.current_call {
            Some(c) => {
                if !same_bytes(c.run.as_bytes(), idle.run.as_bytes()) {
                    c.run = idle.run.as_str().into();
                }
                c.step = idle.step;
            }
            None => {
                self.process.current_call = Some(CallRef {
                    run: idle.run.as_str().into(),
                    step: idle.step,
                    part: 0,
                })
            }
        }
        // The ordinary path forgets the call's last attempt here. An idle call has none to
        // forget: an attempt is counted only for a call whose events reach the filter, and
        // `start_idle` holds only calls the filter does not know of (a step's end, which
        // lets the filter forget a call, forgets its attempt too).
        debug_assert!(
            (self.process.current_call.as_ref()).is_none_or(|c| !self.last_attempt.contains_key(c)),
            "an idle call with an attempt counted"
        );
    }
}

/// Reads again the lines of deferred calls (`bytes`, from `first_line` on) as the text
/// parser does without a filter: every event, located as when first read.
pub fn reread(
    bytes: &[u8],
    input: u32,
    first_line: u32,
    opts: &crate::ingest::ParseOptions,
) -> Vec<Event> {
    let opts = crate::ingest::ParseOptions {
        relevance: None,
        ..opts.clone()
    };
    let mut p = TextParser::new(input, &opts, false);
    let before = first_line.saturating_sub(1);
    for_each_line_in(bytes, |k, span, line| {
        p.line(before.saturating_add(k), span, line, Ahead::NONE);
    });
    p.out.events
}
