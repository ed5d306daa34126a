//! A client's own line naming the effect its last answer made: `refund re_0003 created`
//! logged by the agent right after httpx's `HTTP Request: POST ... "HTTP/1.1 200 OK"`, or
//! `refund created refund_id=re_0003`. It names no order and no amount, so it is no
//! service's record of the effect (a service's names its order: [`super::prose`]); it tells
//! which refund the answer made. Before, the sentence was ignored and the token form read
//! as an effect of the agent's log (which then counted as a service's), so two agents
//! logging only their HTTP client's lines beside a payments log had nothing to tell whose
//! refund was whose, and each was matched to none.
//!
//! Read as the answer told again ([`crate::correlate`] merges an answer of the same status
//! logged within a second of the first): only within that second of a 2xx answer of a call
//! of this file, and only in a file that has logged no effect of its own.

use super::prose::read_words;
use super::*;

/// How soon after an answer a line naming its effect is read as telling it: as for any
/// answer told again, at once.
const TOLD_WITHIN: i64 = NANOS_PER_SEC;

/// The latest 2xx answer read in the file, while no request followed it.
#[derive(Clone)]
pub(super) struct LastAnswer {
    call: CallRef,
    attempt: Option<u32>,
    status: u16,
    at: Timestamp,
}

impl LastAnswer {
    /// What `kind` leaves of the latest answer: a 2xx answer is the latest, a request or a
    /// tool call ends it (a line after them tells of another request, if of any).
    pub(super) fn after(last: &mut Option<LastAnswer>, at: Timestamp, kind: &EventKind) {
        match kind {
            EventKind::Response(r) => {
                *last = (r.call.clone())
                    .filter(|_| (200..300).contains(&r.status))
                    .map(|call| LastAnswer {
                        call,
                        attempt: r.attempt,
                        status: r.status,
                        at,
                    });
            }
            EventKind::Attempt(_) | EventKind::ToolCall(_) => *last = None,
            _ => {}
        }
    }
}

impl TextParser {
    /// The answer told again by a line naming its effect (`refund re_1 created`, or an
    /// `effect` read from it that names no order, amount or key), if the line comes within
    /// [`TOLD_WITHIN`] of the file's latest 2xx answer.
    pub(super) fn effect_told(&self, effect: Option<&Effect>, first: &[u8]) -> Option<EventKind> {
        let last = self.process.last_answer.as_ref()?;
        let soon = (0..=TOLD_WITHIN).contains(&self.line_at.0.saturating_sub(last.at.0));
        if !soon || self.process.anonymous.effects_seen {
            return None;
        }
        let id = match effect {
            Some(e) if e.order.is_none() && e.amount.is_none() && e.whole.is_none() => {
                e.key.is_none().then(|| e.id.clone())?
            }
            Some(_) => return None,
            None => {
                let told = read_words(first)?;
                let bare = told.order.is_none() && told.amount.is_none() && told.key.is_none();
                (bare && told.tokens.is_empty()).then(|| small(told.id))?
            }
        };
        Some(EventKind::Response(Box::new(Response {
            call: Some(last.call.clone()),
            attempt: last.attempt,
            status: last.status,
            class: classify_status(last.status),
            effect_id: Some(id),
            replayed: false,
            amount: None,
            message: Text::default(),
        })))
    }
}

#[cfg(test)]
mod tests {
    use crate::event::EventKind;
    use crate::ingest::ParseOptions;
    use crate::ingest::text::parse;

    const ANSWERED: &str = "2026-12-07 13:15:43,331 INFO httpx: HTTP Request: POST \
                            http://127.0.0.1:8751/v1/refunds \"HTTP/1.1 200 OK\"\n";

    /// The effect ids the answers read from `text` name, and how many effects it gave.
    fn read(text: &str) -> (Vec<Option<String>>, usize) {
        let p = parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap();
        let named = (p.events.iter())
            .filter_map(|e| match &e.kind {
                EventKind::Response(r) => Some(r.effect_id.as_ref().map(|id| id.to_string())),
                _ => None,
            })
            .collect();
        let effects = (p.events.iter())
            .filter(|e| matches!(e.kind, EventKind::Effect(_)))
            .count();
        (named, effects)
    }

    #[test]
    fn a_line_naming_the_effect_at_once_after_an_answer_tells_that_answer() {
        for told in [
            "2026-12-07 13:15:43,331 INFO agent: refund re_0002 created\n",
            "2026-12-07 13:15:43,900 INFO agent: Refund created: re_0002\n",
            "2026-12-07 13:15:43,331 INFO agent: refund created refund_id=re_0002\n",
        ] {
            let text = format!("{ANSWERED}{told}");
            assert_eq!(
                read(&text),
                (vec![None, Some("re_0002".into())], 0),
                "{told}"
            );
        }
    }

    #[test]
    fn lines_that_only_look_alike_tell_no_answer() {
        for (before, told, effects) in [
            // Two seconds later: another matter.
            (
                "",
                "2026-12-07 13:15:45,400 INFO agent: refund re_0002 created\n",
                0,
            ),
            // A request since: the line may tell of it.
            (
                "",
                "2026-12-07 13:15:43,340 INFO agent: POST http://127.0.0.1:8751/v1/refunds  \
                 (attempt 2)\n2026-12-07 13:15:43,341 INFO agent: refund re_0002 created\n",
                0,
            ),
            // A service's sentence names its order: the effect itself.
            (
                "",
                "2026-12-07 13:15:43,331 INFO payments: Refund re_0002 created for order A-1: \
                 45.00 GBP\n",
                1,
            ),
            // A log that records effects is a service's.
            (
                "2026-12-07 13:15:43,000 INFO payments: Refund re_0001 created for order A-1: \
                 45.00 GBP\n",
                "2026-12-07 13:15:43,331 INFO payments: refund re_0002 created\n",
                1,
            ),
        ] {
            let text = format!("{before}{ANSWERED}{told}");
            let (named, found) = read(&text);
            assert!(named.iter().all(Option::is_none), "{told}: {named:?}");
            assert_eq!(found, effects, "{told}");
        }
    }
}
