//! The work on each client event that needs nothing of the model: its texts copied out of
//! the parser's memory or shared with an earlier equal one, a tool call's arguments read.
//! [`super::merge`] does it a batch of events ahead of the builder, on the other core when
//! there is one: it was close to half of the client side's build, which is the one part of
//! correlation that runs on a single thread.

use super::CorrelateOptions;
use super::build::{hash_call, hash_effect};
use super::call_args::CallArgs;
use super::kinds::effect_kind_of;
use crate::event::{Event, EventKind, Text};
use crate::shared_texts::SharedTexts;
use std::mem::take;

/// An event whose texts are the model's own, with a tool call's arguments read.
pub(super) struct Ready {
    pub(super) event: Event,
    /// For a tool call: what its dispatch starts with (boxed: batches of events are moved
    /// twice, and most events are not tool calls).
    pub(super) call: Option<Box<ReadyCall>>,
    /// For a tool call, the hash of its run and step ([`hash_call`]); for an effect, of its
    /// kind and id ([`hash_effect`]): the builder asks memory for the slot of its table a
    /// few events ahead.
    pub(super) slot_hash: Option<u64>,
}

pub(super) struct ReadyCall {
    /// What the dispatch keeps of its arguments.
    pub(super) args: CallArgs,
    /// The kind of effect its tool names ([`effect_kind_of`]).
    pub(super) kind: Option<Text>,
}

/// Makes events [`Ready`], one after another.
pub(super) struct Preparer<'o> {
    kinds: ToolKinds<'o>,
    opts: &'o CorrelateOptions,
    repeated: Repeated,
    /// Where a tool call's canonical arguments are written before they are kept.
    scratch: String,
}

impl<'o> Preparer<'o> {
    pub(super) fn new(opts: &'o CorrelateOptions) -> Self {
        Preparer {
            kinds: ToolKinds {
                given: &opts.tool_kinds,
                last: None,
            },
            opts,
            repeated: Repeated::default(),
            scratch: String::new(),
        }
    }

    pub(super) fn ready(&mut self, mut event: Event) -> Ready {
        let (mut call, mut slot_hash) = (None, None);
        let repeated = &mut self.repeated;
        match &mut event.kind {
            EventKind::ToolCall(t) => {
                let whole = self.opts.whole_unit(event.loc.input);
                let args = CallArgs::read(&t.args_raw, take(&mut t.args), &mut self.scratch, whole);
                let kind = self.kinds.of(&t.tool);
                call = Some(Box::new(ReadyCall { args, kind }));
                slot_hash = Some(hash_call(&t.call));
                t.args_raw = fresh(take(&mut t.args_raw));
                t.tool = repeated.get(take(&mut t.tool));
            }
            EventKind::Attempt(a) => {
                a.method = a.method.take().map(fresh);
                a.url = a.url.take().map(|u| repeated.get(u));
                a.key = a.key.take().map(fresh);
            }
            EventKind::Failure(f) => {
                f.error = repeated.get(take(&mut f.error));
                f.message = repeated.get(take(&mut f.message));
            }
            EventKind::Response(r) => {
                r.effect_id = r.effect_id.take().map(fresh);
                r.message = repeated.get(take(&mut r.message));
            }
            EventKind::StepEnd(s) => s.error = s.error.take().map(fresh),
            EventKind::Effect(e) => slot_hash = Some(hash_effect(&e.kind, &e.id)),
            EventKind::Run(_)
            | EventKind::Record(_)
            | EventKind::Replay(_)
            | EventKind::GatewayTry(_) => {}
        }
        Ready {
            event,
            call,
            slot_hash,
        }
    }
}

/// The kind of effect a tool names ([`effect_kind_of`] of the tool alone), the last
/// tool's kept: the kept calls of a month name a handful of tools, and finding a kind's
/// name in a tool's was ~300 instructions a call.
struct ToolKinds<'o> {
    /// `--tool-kind`.
    given: &'o [(String, String)],
    last: Option<(Text, Option<Text>)>,
}

impl ToolKinds<'_> {
    fn of(&mut self, tool: &Text) -> Option<Text> {
        if let Some((last, kind)) = &self.last
            && last == tool
        {
            return kind.clone();
        }
        let kind = effect_kind_of(tool, None, self.given);
        self.last = Some((tool.clone(), kind.clone()));
        kind
    }
}

/// Heap-held texts seen before, each shared by every later copy: the model's own copies
/// ([`fresh`]), one per distinct text.
#[derive(Default)]
struct Repeated(SharedTexts);

impl Repeated {
    /// `t`, or the earlier text equal to it; a fresh copy when there is none.
    fn get(&mut self, t: Text) -> Text {
        if !t.is_heap_allocated() {
            return t;
        }
        self.0.get(t.as_str())
    }
}

/// The model's own copy of a string read by a parser. A string longer than a `Text` holds
/// inline was allocated among the parser's events, and kept by the model it pinned their
/// pages after they were freed: copied here, those pages are freed whole (at 1 GB, about
/// 10 MB less resident after correlation for a few milliseconds of copying).
pub(super) fn fresh(t: Text) -> Text {
    if t.is_heap_allocated() {
        Text::from(t.as_str())
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_calls_kind_is_its_own_tools() {
        let opts = CorrelateOptions {
            tool_kinds: vec![("reimburse".into(), "payout".into())],
            ..CorrelateOptions::default()
        };
        let mut preparer = Preparer::new(&opts);
        let tools = [
            "issue_refund",
            "issue_refund",
            "lookup_order",
            "reimburse",
            "issue_refund",
        ];
        let kinds: Vec<Option<Text>> = tools
            .iter()
            .map(|t| preparer.kinds.of(&Text::from(*t)))
            .collect();
        let expected = [
            Some("refund"),
            Some("refund"),
            None,
            Some("payout"),
            Some("refund"),
        ];
        assert_eq!(kinds, expected.map(|k| k.map(Text::from)));
    }

    #[test]
    fn a_repeated_text_is_held_once() {
        let url = "https://payments.internal/v1/refunds";
        let mut repeated = Repeated::default();
        let read = Text::from(url);
        let first = repeated.get(read.clone());
        let again = repeated.get(Text::from(url));
        assert_eq!((first.as_str(), again.as_str()), (url, url));
        assert_eq!(
            first.as_str().as_ptr(),
            again.as_str().as_ptr(),
            "one buffer"
        );
        assert_ne!(first.as_ptr(), read.as_ptr(), "the model's own copy");
        // Short texts are inline.
        assert_eq!(repeated.get(Text::from("POST")), "POST");
    }
}
