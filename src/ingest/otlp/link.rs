//! Turns the spans of every input into events (SPEC §3.4), once all of them have been read:
//! a tool span becomes a tool call (and a step end), each HTTP client span that belongs to
//! it an attempt with its outcome. The conventions disagree on every attribute, so each
//! question (is this a tool? which run? which step? which key?) asks all of them.

use super::Span;
use super::conventions::{
    METHOD, STATUS, URL, captures_request_headers, describe, failure_of, idempotency_key,
    is_http_client, is_llm, is_server, is_tool, run_attr, step_attr, string_of, tool_args,
    tool_name,
};
use crate::classify::{FailureClass, classify_failure};
use crate::event::{
    Attempt, CallRef, Event, EventKind, Failure, Lifecycle, Response, RunEvent, StepEnd, Text,
    ToolCall,
};
use crate::time::Timestamp;
use rustc_hash::FxHashMap;
use std::cmp::Reverse;

mod resumes;

/// The events linking produced, each with the index of the span it came from, and which
/// spans were used (the others are counted as ignored).
#[derive(Debug, Default)]
pub struct Linked {
    pub events: Vec<(usize, Event)>,
    pub used: Vec<bool>,
    /// Spans that could not be used whole: counted skipped (even where some of their events
    /// were kept), each reported with why and what would mend it.
    pub problems: Vec<(usize, String)>,
    /// Requests given to a tool call by a choice the trace does not settle: still attempts,
    /// each reported as a warning.
    pub ambiguous: Vec<Ambiguous>,
}

impl Linked {
    /// Span `t` could not be used whole, for `why`: one problem a span (it is one record
    /// skipped), its reasons joined.
    fn problem(&mut self, t: usize, why: String) {
        match self.problems.iter_mut().find(|(p, _)| *p == t) {
            Some((_, reasons)) => {
                reasons.push_str("; ");
                reasons.push_str(&why);
            }
            None => self.problems.push((t, why)),
        }
    }
}

/// A request matched by time, in the same process, to two tool calls neither of which is
/// below the other in the trace (tools running side by side, their requests roots of their
/// own traces): it went to `chosen`, `other` could have made it as well.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ambiguous {
    pub request: usize,
    pub chosen: usize,
    pub other: usize,
}

impl Ambiguous {
    /// What to tell the user, the spans named by `place` (`path:line`).
    pub fn describe(&self, spans: &[Span], place: impl Fn(&Span) -> String) -> String {
        let tool = |t: usize| format!("`{}` at {}", tool_name(&spans[t]), place(&spans[t]));
        let (chosen, other) = (&spans[self.chosen], &spans[self.other]);
        // The earlier to start is chosen only when the later one's own request was open
        // when this one was sent ([`Graph::attempts_by_time`]).
        let rule = if chosen.start < other.start {
            "the other's own request was still open"
        } else if chosen.start != other.start {
            "the later to start"
        } else if chosen.end != other.end {
            "the first to end"
        } else {
            "the first read"
        };
        format!(
            "HTTP span lies in the time of two tool calls of one process, neither below the \
             other in the trace: counted as an attempt of {} ({rule}), not of {}; propagate \
             trace context into the tools' HTTP client so that each request is below its tool \
             span",
            tool(self.chosen),
            tool(self.other),
        )
    }
}

/// Ancestor walks stop here, so that a cycle of parent ids cannot hang the audit.
const MAX_DEPTH: usize = 512;

/// Links every span into events.
pub fn link(spans: &[Span]) -> Linked {
    let mut index: FxHashMap<(&str, &str), usize> = FxHashMap::default();
    let mut first = vec![true; spans.len()];
    for (i, s) in spans.iter().enumerate() {
        // The same span exported twice is one span.
        if index.insert((&s.trace_id, &s.span_id), i).is_some() {
            first[i] = false;
        }
    }
    // Keep the first copy: re-insert so the index points at it.
    for (i, s) in spans.iter().enumerate().rev() {
        if first[i] {
            index.insert((&s.trace_id, &s.span_id), i);
        }
    }
    let parent: Vec<Option<usize>> = spans
        .iter()
        .map(|s| {
            let p = s.parent_id.as_deref()?;
            index.get(&(s.trace_id.as_str(), p)).copied()
        })
        .collect();
    let g = Graph {
        spans,
        parent,
        live: first,
    };
    let mut out = Linked {
        events: Vec::new(),
        used: vec![false; spans.len()],
        problems: Vec::new(),
        ambiguous: Vec::new(),
    };
    let calls = g.tool_calls();
    let failed_inside = g.failed_inside();
    let attempts = g.attempts(&calls, &mut out.ambiguous);
    // Before the calls: a resume read at a tool span is at that call's time and place.
    let resumes = g.resumes(&calls);
    for r in &resumes {
        let run = EventKind::Run(Box::new(RunEvent {
            run: r.run.as_str().into(),
            what: Lifecycle::Resumed,
        }));
        out.push(spans, r.span, r.at, run);
    }
    let steps = g.steps(&calls, &resumes);
    let mut refs: Vec<CallRef> = (calls.iter().zip(&steps))
        .map(|(&t, &step)| CallRef {
            run: g.run_of(t).into(),
            step,
            part: 0,
        })
        .collect();
    super::parts::set_parts(spans, &calls, &mut refs);
    for (t, s) in spans.iter().enumerate().filter(|&(t, _)| g.live[t]) {
        if let Some(why) = super::unreadable::nested_too_deep(s) {
            out.problem(t, why);
        }
    }
    for (c, (&t, call)) in calls.iter().zip(refs).enumerate() {
        if let Some(why) = spans[t].bad_time {
            out.problem(t, without_interval(&spans[t], why));
        }
        g.emit_tool(t, failed_inside.get(&t).copied(), &call, &mut out);
        let mut mine: Vec<usize> = attempts
            .iter()
            .filter(|(_, owner)| *owner == c)
            .map(|(h, _)| *h)
            .collect();
        mine.sort_by_key(|&h| (spans[h].start, spans[h].loc, h));
        for (n, h) in mine.into_iter().enumerate() {
            g.emit_attempt(h, t, &call, n as u32 + 1, &mut out);
        }
    }
    out
}

/// Why a tool span whose times are unusable is counted skipped though it is still a call:
/// requests that are not below it by parent id cannot be matched to it by time.
fn without_interval(s: &Span, why: &str) -> String {
    format!(
        "tool span `{}` {why}, so it is taken as an instant and no request can be matched to \
         it by time: HTTP spans that are not its children may be missing from its call or \
         counted in another; export it with both times, or propagate trace context into the \
         tool's HTTP client",
        tool_name(s)
    )
}

/// Spans of each resource (`service.instance.id`, else its attributes).
struct Resourced<'a> {
    calls: FxHashMap<&'a str, Vec<usize>>,
    llms: FxHashMap<&'a str, Vec<usize>>,
    /// A resource of requests and no tool calls, read as the one of the same process that
    /// has them ([`super::processes`]).
    alias: FxHashMap<&'a str, &'a str>,
}

impl Resourced<'_> {
    fn process_of<'r>(&'r self, resource: &'r str) -> &'r str {
        self.alias.get(resource).copied().unwrap_or(resource)
    }
}

struct Graph<'a> {
    spans: &'a [Span],
    parent: Vec<Option<usize>>,
    /// False for a second copy of a span already seen.
    live: Vec<bool>,
}

impl Graph<'_> {
    /// The span and its ancestors, nearest first.
    fn lineage(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(Some(i), move |&j| self.parent[j].filter(|&p| p != i)).take(MAX_DEPTH)
    }

    /// Tool spans that are calls: a tool span inside a tool span of the same name (two
    /// instrumentations wrapping one call) is the outer one's.
    fn tool_calls(&self) -> Vec<usize> {
        let mut calls: Vec<usize> = (0..self.spans.len())
            .filter(|&i| self.live[i] && is_tool(&self.spans[i]))
            .filter(|&i| {
                let name = tool_name(&self.spans[i]);
                !self
                    .lineage(i)
                    .skip(1)
                    .any(|a| is_tool(&self.spans[a]) && tool_name(&self.spans[a]) == name)
            })
            .collect();
        calls.sort_by_key(|&i| (self.spans[i].start, self.spans[i].loc, i));
        calls
    }

    /// The failed tool span inside a call's span of the same name that ended last there, by
    /// the call's span: AutoGen catches its tool's exception, so OpenInference's outer span
    /// ends OK around autogen-core's inner `execute_tool` span, which records the error. An
    /// inner span that ended later without one (a retry inside the tool) leaves it ok.
    fn failed_inside(&self) -> FxHashMap<usize, usize> {
        let mut last: FxHashMap<usize, usize> = FxHashMap::default();
        for i in (0..self.spans.len()).filter(|&i| self.live[i] && is_tool(&self.spans[i])) {
            let name = tool_name(&self.spans[i]);
            let outermost = (self.lineage(i).skip(1))
                .filter(|&a| is_tool(&self.spans[a]) && tool_name(&self.spans[a]) == name)
                .last();
            if let Some(call) = outermost {
                let later = |j: usize| (self.spans[i].end, i) > (self.spans[j].end, j);
                if last.get(&call).is_none_or(|&j| later(j)) {
                    last.insert(call, i);
                }
            }
        }
        last.retain(|_, &mut i| failure_of(&self.spans[i]).is_some());
        last
    }

    /// The call (index into `calls`) each attempt span belongs to.
    fn attempts(&self, calls: &[usize], ambiguous: &mut Vec<Ambiguous>) -> Vec<(usize, usize)> {
        let call_of: FxHashMap<usize, usize> =
            calls.iter().enumerate().map(|(c, &t)| (t, c)).collect();
        let http: Vec<usize> = (0..self.spans.len())
            .filter(|&i| self.live[i] && is_http_client(&self.spans[i]))
            .collect();
        // A wrapper HTTP span (the `requests` span around a lower library's) is not an
        // attempt of its own; the innermost spans are, inheriting what the wrapper recorded.
        // A request under a server span wraps nothing of its caller's: the request the
        // server took is the caller's attempt, the server's own requests are not.
        let mut wrapper = vec![false; self.spans.len()];
        for &h in &http {
            if let Some(a) = self
                .lineage(h)
                .skip(1)
                .take_while(|&a| !is_server(&self.spans[a]))
                .find(|&a| is_http_client(&self.spans[a]))
            {
                wrapper[a] = true;
            }
        }
        // Tool calls, and LLM calls, per resource, for HTTP spans below no tool span.
        let per_resource = |spans: &mut dyn Iterator<Item = usize>| {
            let mut by: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
            for t in spans {
                by.entry(&self.spans[t].resource).or_default().push(t);
            }
            by
        };
        let calls_by_resource = per_resource(&mut calls.iter().copied());
        let with_calls: Vec<&str> = calls_by_resource.keys().copied().collect();
        let by_resource = Resourced {
            alias: super::processes::same_process(
                http.iter().map(|&h| &*self.spans[h].resource),
                &with_calls,
            ),
            calls: calls_by_resource,
            llms: per_resource(
                &mut (0..self.spans.len()).filter(|&i| self.live[i] && is_llm(&self.spans[i])),
            ),
        };
        let mut out = Vec::new();
        // Requests matched to a tool by time, decided in the order they were sent (below).
        let mut by_time_requests: Vec<(usize, Option<usize>)> = Vec::new();
        for &h in http.iter().filter(|&&h| !wrapper[h]) {
            let mut owner = None;
            let mut by_time = true;
            // The span the request was made under, past its HTTP wrappers; none for a
            // request that is the root of a trace of its own.
            let mut under = None;
            for a in self.lineage(h).skip(1) {
                let s = &self.spans[a];
                if under.is_none() && !is_http_client(s) {
                    under = Some(a);
                }
                // A request made while serving one (a payments service calling its
                // provider) is that service's, not an attempt of the tool that called it:
                // only a tool running below the server span (an agent answering a web
                // request) can have made it.
                if is_server(s) {
                    break;
                }
                if is_tool(s) {
                    owner = self.lineage(a).find_map(|x| call_of.get(&x).copied());
                    by_time = false;
                    break;
                }
                // A request an LLM call inside the tool made (a summariser, an agent used as
                // a tool) is the model's, not an attempt of the tool's.
                if is_llm(s) {
                    by_time = false;
                    break;
                }
            }
            if owner.is_none() && by_time {
                by_time_requests.push((h, under));
            }
            if let Some(c) = owner {
                out.push((h, c));
            }
        }
        self.attempts_by_time(
            by_time_requests,
            &by_resource,
            &call_of,
            ambiguous,
            &mut out,
        );
        out
    }

    /// Gives each request below no tool span to the tool whose time holds it
    /// ([`Self::enclosing_call`]), in the order they were sent: a tool whose own request is
    /// still open when another is sent (a client sends one at a time) gives way to another
    /// tool holding it, one whose last request failed first (a retry follows a failure).
    /// Three refunds side by side, one retried while another's request was in flight, gave
    /// the retry to the one in flight (review 34).
    fn attempts_by_time(
        &self,
        mut requests: Vec<(usize, Option<usize>)>,
        by_resource: &Resourced,
        call_of: &FxHashMap<usize, usize>,
        ambiguous: &mut Vec<Ambiguous>,
        out: &mut Vec<(usize, usize)>,
    ) {
        if requests.is_empty() {
            return;
        }
        requests.sort_by_key(|&(h, _)| (self.spans[h].start, self.spans[h].loc, h));
        // Each tool's latest request so far: when it ends, and whether it failed.
        let mut latest: FxHashMap<usize, (Timestamp, bool)> = FxHashMap::default();
        let note = |latest: &mut FxHashMap<usize, (Timestamp, bool)>, h: usize, c: usize| {
            let (end, failed) = (self.spans[h].end, self.spans[h].error);
            let kept = latest.entry(c).or_insert((end, failed));
            if end > kept.0 {
                *kept = (end, failed);
            }
        };
        for &(h, c) in out.iter() {
            note(&mut latest, h, c);
        }
        for (h, under) in requests {
            let Some((tool, beside)) = self.enclosing_call(h, under, by_resource) else {
                continue;
            };
            let sent = self.spans[h].start;
            let last = |t: usize| call_of.get(&t).and_then(|c| latest.get(c)).copied();
            let busy = |t: usize| last(t).is_some_and(|(end, _)| end > sent);
            let failed_last = |t: usize| last(t).is_some_and(|(_, failed)| failed);
            let free: Vec<usize> = beside.iter().copied().filter(|&t| !busy(t)).collect();
            let chosen = match busy(tool) {
                false => tool,
                true => (free.iter().copied().find(|&t| failed_last(t)))
                    .or(free.first().copied())
                    .unwrap_or(tool),
            };
            if let Some(&other) = std::iter::once(&tool)
                .chain(&beside)
                .find(|&&t| t != chosen)
            {
                ambiguous.push(Ambiguous {
                    request: h,
                    chosen,
                    other,
                });
            }
            let Some(&c) = call_of.get(&chosen) else {
                continue;
            };
            note(&mut latest, h, c);
            out.push((h, c));
        }
    }

    /// The innermost tool call of the same resource whose interval holds the span's, and
    /// which runs below `under`, the span the request was made under, if any, unless
    /// an LLM call inside that tool's span holds it too: a request made while a model was
    /// asked inside the tool (an agent used as a tool, whose model client's spans are roots
    /// too) is the model's. Only LLM spans below the tool count: another run's model call in
    /// the same process says nothing of this tool's requests.
    ///
    /// A request below no tool span was made by a tool whose span was never made current
    /// (OpenInference's, LangSmith's): it is a root of its own trace, or, where the
    /// application had a span current (the SERVER span of the web request an agent
    /// answers), a child of that span, below which the tool's span was made too. A tool
    /// elsewhere in the trace did not make it: not the caller's tool for a service's own
    /// request under its server span, nor a tool running beside a guardrail's request.
    ///
    /// Innermost is the latest to start, at equal starts the first to end, at equal
    /// intervals the first read: a tool call nested in another in the trace starts within
    /// it. Beside the tool, another that holds the span and is not its ancestor in the trace
    /// (two tools running side by side), which could have made the request as well.
    fn enclosing_call(
        &self,
        h: usize,
        under: Option<usize>,
        by_resource: &Resourced,
    ) -> Option<(usize, Vec<usize>)> {
        let s = &self.spans[h];
        let holds = |t: usize| {
            let t = &self.spans[t];
            t.start <= s.start && s.end <= t.end
        };
        let inner = |t: &usize| {
            let span = &self.spans[*t];
            (
                span.start,
                Reverse(span.end),
                Reverse(span.loc),
                Reverse(*t),
            )
        };
        let process = by_resource.process_of(&s.resource);
        let mut holders: Vec<usize> = by_resource
            .calls
            .get(process)?
            .iter()
            .copied()
            .filter(|&t| self.spans[t].bad_time.is_none() && holds(t))
            .filter(|&t| under.is_none_or(|u| self.lineage(t).skip(1).any(|a| a == u)))
            .collect();
        holders.sort_by_key(|t| Reverse(inner(t)));
        let (&tool, others) = holders.split_first()?;
        let asked_a_model = by_resource.llms.get(process).is_some_and(|llms| {
            llms.iter()
                .any(|&l| holds(l) && self.lineage(l).skip(1).any(|a| a == tool))
        });
        if asked_a_model {
            return None;
        }
        let beside = (others.iter().copied())
            .filter(|&o| !self.lineage(tool).skip(1).any(|a| a == o))
            .collect();
        Some((tool, beside))
    }

    /// The first run attribute on the span or its ancestors, else the trace id.
    fn run_of(&self, t: usize) -> String {
        self.lineage(t)
            .find_map(|a| run_attr(&self.spans[a]))
            .unwrap_or_else(|| self.spans[t].trace_id.clone())
    }

    /// An explicit step where an attribute gives one, else the position among the run's
    /// tool calls by start time, counted again from 1 after each resume (the process that
    /// took the run over counts its own calls).
    fn steps(&self, calls: &[usize], resumes: &[resumes::Resume]) -> Vec<u32> {
        let mut resumed: FxHashMap<&str, Vec<Timestamp>> = FxHashMap::default();
        for r in resumes {
            resumed.entry(&r.run).or_default().push(r.at);
        }
        let mut position: FxHashMap<(String, usize), u32> = FxHashMap::default();
        calls
            .iter()
            .map(|&t| {
                let run = self.run_of(t);
                let start = self.spans[t].start;
                let segment =
                    (resumed.get(run.as_str())).map_or(0, |at| at.partition_point(|&a| a <= start));
                let n = position.entry((run, segment)).or_default();
                *n += 1;
                self.lineage(t)
                    .find_map(|a| step_attr(&self.spans[a]))
                    .unwrap_or(*n)
            })
            .collect()
    }

    /// The call of tool span `t`, and its step's end: failed when it or a tool span of the
    /// same name inside it (`failed_inside`) failed.
    fn emit_tool(&self, t: usize, failed_inside: Option<usize>, call: &CallRef, out: &mut Linked) {
        let s = &self.spans[t];
        let (args_raw, args) = tool_args(s);
        out.push(
            self.spans,
            t,
            s.start,
            EventKind::ToolCall(Box::new(ToolCall {
                call: call.clone(),
                tool: tool_name(s).into(),
                args_raw: args_raw.into(),
                args,
            })),
        );
        let error = (failure_of(s).or_else(|| failure_of(&self.spans[failed_inside?])))
            .map(|(e, m)| describe(&e, &m));
        out.push(
            self.spans,
            t,
            s.end,
            EventKind::StepEnd(Box::new(StepEnd {
                call: call.clone(),
                ok: error.is_none(),
                error: error.map(Text::from),
            })),
        );
    }

    fn emit_attempt(&self, h: usize, t: usize, call: &CallRef, number: u32, out: &mut Linked) {
        let s = &self.spans[h];
        // What a wrapper HTTP span recorded counts for the attempt inside it.
        let chain: Vec<&Span> = self
            .lineage(h)
            .map(|a| &self.spans[a])
            .take_while(|a| is_http_client(a))
            .collect();
        let first_str = |keys: &[&str]| {
            chain
                .iter()
                .find_map(|a| keys.iter().find_map(|k| a.attr(k).and_then(string_of)))
        };
        let key = chain.iter().find_map(|a| idempotency_key(a));
        // Sent after the tool call started, even when clocks tie, so the attempt never
        // precedes its call in correlation's time order.
        let sent = s
            .start
            .max(Timestamp(self.spans[t].start.0.saturating_add(1)));
        out.push(
            self.spans,
            h,
            sent,
            EventKind::Attempt(Box::new(Attempt {
                call: Some(call.clone()),
                number,
                method: first_str(METHOD).map(Text::from),
                url: first_str(URL).map(Text::from),
                key_unseen: key.is_none() && !chain.iter().any(|a| captures_request_headers(a)),
                placed: false,
                key: key.map(Text::from),
            })),
        );
        // The attempt's own outcome; a wrapper's only where the attempt recorded none (the
        // wrapper's final answer may be that of a later attempt inside it).
        match chain.iter().find_map(|a| outcome_of(a)) {
            Some(Outcome::Answered(status)) => out.push(
                self.spans,
                h,
                s.end,
                EventKind::Response(Box::new(Response::status_only(
                    call.clone(),
                    number,
                    status,
                    Text::default(),
                ))),
            ),
            Some(Outcome::Failed(error, message)) => {
                let class: FailureClass = classify_failure(&error, &message);
                out.push(
                    self.spans,
                    h,
                    s.end,
                    EventKind::Failure(Box::new(Failure {
                        call: Some(call.clone()),
                        attempt: Some(number),
                        class,
                        error: error.into(),
                        message: message.into(),
                        raised_in: None,
                        resent_after: None,
                    })),
                );
            }
            None => {}
        }
    }
}

/// How one HTTP span says its request ended.
enum Outcome {
    /// An HTTP status came back.
    Answered(u16),
    /// No answer: the error class and message.
    Failed(String, String),
}

/// The span's own outcome: its HTTP status, else its failure.
fn outcome_of(s: &Span) -> Option<Outcome> {
    let status = STATUS
        .iter()
        .find_map(|k| s.attr(k).and_then(super::int_of))
        .and_then(|n| u16::try_from(n).ok());
    match status {
        Some(status) => Some(Outcome::Answered(status)),
        None => failure_of(s).map(|(error, message)| Outcome::Failed(error, message)),
    }
}

impl Linked {
    fn push(&mut self, spans: &[Span], span: usize, at: Timestamp, kind: EventKind) {
        self.used[span] = true;
        let loc = spans[span].loc;
        self.events.push((span, Event { at, loc, kind }));
    }
}
