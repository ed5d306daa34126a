//! `timeline` (SPEC §7, on-call): every event that concerns one order, run or key, client and
//! service merged in time order, each with the findings that cite its line. Built from the
//! correlated model, so it shows what the rules saw; renderers live in `report::timeline`.

use crate::config::Period;
use crate::correlate::{Dispatch, MatchedBy, Model, OutcomeKind};
use crate::event::{Attrs, Lifecycle, Loc};
use crate::finding::Finding;
use crate::rules::support::amount_text;
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// What a timeline is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    Order(String),
    Run(String),
    Key(String),
}

impl Subject {
    pub fn describe(&self) -> String {
        match self {
            Subject::Order(o) => format!("order {o}"),
            Subject::Run(r) => format!("run {r}"),
            Subject::Key(k) => format!("key {k}"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Client,
    Service,
    /// A gateway's (a reverse proxy's) line about a request between the two.
    Gateway,
}

/// One line of the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub at: Timestamp,
    pub loc: Loc,
    pub side: Side,
    /// `tool_call`, `attempt`, `failure`, `response`, `step_end`, `run`, `effect`,
    /// `settlement`, `record`, `replay`, `gateway`.
    pub what: &'static str,
    pub text: String,
    /// The input's own attributes of the event (JSON Lines' unknown fields).
    pub attrs: Attrs,
    /// Indexes into [`Timeline::findings`] of the findings that cite this line.
    pub findings: Vec<usize>,
}

#[derive(Clone, Debug)]
pub struct Timeline {
    pub subject: Subject,
    pub entries: Vec<Entry>,
    /// The findings that cite at least one entry, in report order.
    pub findings: Vec<Finding>,
}

/// Builds the timeline of `subject` from the model; `findings` in report order.
pub fn build(model: &Model, findings: &[Finding], subject: &Subject, period: &Period) -> Timeline {
    let dispatches: Vec<usize> = (0..model.dispatches.len())
        .filter(|&d| dispatch_concerns(&model.dispatches[d], subject))
        .collect();
    let chosen: BTreeSet<usize> = dispatches.iter().copied().collect();
    let effects: Vec<usize> = (0..model.effects.len())
        .filter(|&i| {
            let e = &model.effects[i];
            let matched_here = e.matched.is_some_and(|m| chosen.contains(&m.dispatch()));
            matched_here
                || match subject {
                    Subject::Order(o) => e.order.as_deref() == Some(o.as_str()),
                    Subject::Key(k) => e.key.as_deref() == Some(k.as_str()),
                    Subject::Run(_) => false,
                }
        })
        .collect();
    let runs: BTreeSet<&str> = dispatches
        .iter()
        .map(|&d| model.dispatches[d].call.run.as_str())
        .chain(match subject {
            Subject::Run(r) => Some(r.as_str()),
            _ => None,
        })
        .collect();
    let keys: BTreeSet<&str> = dispatches
        .iter()
        .flat_map(|&d| &model.dispatches[d].attempts)
        .filter_map(|a| a.key.as_deref())
        .chain(
            effects
                .iter()
                .filter_map(|&i| model.effects[i].key.as_deref()),
        )
        .collect();

    let mut entries = Vec::new();
    for &d in &dispatches {
        dispatch_entries(model, &model.dispatches[d], &mut entries);
    }
    for run in &runs {
        for r in model.runs.get(*run).into_iter().flatten() {
            let what = match r.what {
                Lifecycle::Started => "started",
                Lifecycle::Crashed => "crashed",
                Lifecycle::Resumed => "resumed",
            };
            entries.push(entry(
                r.at,
                r.loc,
                Side::Client,
                "run",
                format!("run {run} {what}"),
            ));
        }
    }
    for &i in &effects {
        effect_entries(model, i, &mut entries);
    }
    for r in model
        .records
        .iter()
        .filter(|r| keys.contains(r.key.as_str()))
    {
        entries.push(entry(
            r.created,
            r.loc,
            Side::Service,
            "record",
            format!("idempotency record {}  status {}", r.key, r.status),
        ));
    }
    // The service's replays of this subject's effects, or under its keys: which request
    // a confirmed effect was the answer to.
    let effect_ids: BTreeSet<&str> = effects.iter().map(|&i| &*model.effects[i].id).collect();
    for r in model.replays.iter().filter(|r| {
        r.effect_id
            .as_deref()
            .is_some_and(|e| effect_ids.contains(e))
            || r.key.as_deref().is_some_and(|k| keys.contains(k))
    }) {
        let key = r
            .key
            .as_deref()
            .map(|k| format!("  key {k}"))
            .unwrap_or_default();
        let what = match (r.kind.as_deref(), r.effect_id.as_deref()) {
            (kind, Some(id)) => format!("{} {id} replayed", kind.unwrap_or("effect")),
            (_, None) => "answer replayed".to_string(),
        };
        entries.push(entry(
            r.at,
            r.loc,
            Side::Service,
            "replay",
            format!("{what}{key}"),
        ));
    }
    // A finding about another order or run is not this one's, though it cites a line of
    // it: an OTLP export batch holds many calls' spans on one line.
    let about_another = |f: &Finding| match subject {
        Subject::Order(o) => f.order.as_deref().is_some_and(|x| x != o.as_str()),
        Subject::Run(r) => f.run.as_deref().is_some_and(|x| x != r.as_str()),
        Subject::Key(_) => false,
    };
    gateway_entries(model, findings, &about_another, &mut entries);
    entries.retain(|e| period.contains(e.at));
    // A line's attributes go with the first thing it says, not again with its settlement.
    for e in &mut entries {
        if e.what != "settlement"
            && let Some(a) = model.attrs.get(&e.loc)
        {
            e.attrs = a.clone();
        }
    }
    // Time order; at equal times, input order, then the order built (creation before settlement).
    entries.sort_by_key(|e| (e.at, e.loc));

    let cited: BTreeSet<Loc> = entries.iter().map(|e| e.loc).collect();
    let marked: Vec<Finding> = findings
        .iter()
        .filter(|f| !about_another(f) && f.evidence.iter().any(|l| cited.contains(l)))
        .cloned()
        .collect();
    for e in &mut entries {
        e.findings = (0..marked.len())
            .filter(|&n| marked[n].evidence.contains(&e.loc))
            .collect();
    }
    Timeline {
        subject: subject.clone(),
        entries,
        findings: marked,
    }
}

/// A gateway's lines about the subject's requests: those the findings citing its entries
/// cite (a `gateway-retry` finding's evidence, matched by the rule to the request it sent,
/// by method, target and time: [`crate::rules`]' `duplicate_effect::gateway`). A gateway's
/// line names no order, run or key of its own; one no finding of the subject cites is
/// another request's, or one the rule could not tell apart, and is not shown.
fn gateway_entries(
    model: &Model,
    findings: &[Finding],
    about_another: &dyn Fn(&Finding) -> bool,
    entries: &mut Vec<Entry>,
) {
    if model.gateway_tries.is_empty() {
        return;
    }
    let here: BTreeSet<Loc> = entries.iter().map(|e| e.loc).collect();
    let cited: BTreeSet<Loc> = findings
        .iter()
        .filter(|f| !about_another(f) && f.evidence.iter().any(|l| here.contains(l)))
        .flat_map(|f| f.evidence.iter().copied())
        .filter(|l| !here.contains(l))
        .collect();
    for g in model
        .gateway_tries
        .iter()
        .filter(|g| cited.contains(&g.loc))
    {
        let text = format!("{} {}  {}", g.shows.method, g.shows.target, g.shows.shows);
        entries.push(entry(g.at, g.loc, Side::Gateway, "gateway", text));
    }
}

fn dispatch_concerns(d: &Dispatch, subject: &Subject) -> bool {
    match subject {
        Subject::Order(o) => d.order.as_deref() == Some(o.as_str()),
        Subject::Run(r) => d.call.run == *r,
        Subject::Key(k) => d.attempts.iter().any(|a| a.key.as_deref() == Some(k)),
    }
}

fn entry(at: Timestamp, loc: Loc, side: Side, what: &'static str, text: String) -> Entry {
    Entry {
        at,
        loc,
        side,
        what,
        text,
        attrs: Attrs::new(),
        findings: Vec::new(),
    }
}

fn dispatch_entries(model: &Model, d: &Dispatch, out: &mut Vec<Entry>) {
    let (run, step) = (&d.call.run, d.call.step);
    if let (Some(at), Some(loc)) = (d.at, d.loc) {
        let text = format!(
            "run {run} step {step}  tool call {}  {}",
            model.tool_of(d),
            d.args_raw
        );
        out.push(entry(at, loc, Side::Client, "tool_call", text));
    }
    // An unlogged request is the tool call's line again: nothing more to show.
    for a in d.attempts.iter().filter(|a| !a.unlogged) {
        // An answer logged alone implies its attempt; an OTLP span holds both its request
        // (its URL) and its outcome, and the request is worth a line of its own.
        let implied = a.outcome.as_ref().is_some_and(|o| o.loc == a.loc) && a.url.is_none();
        if !implied {
            let request = [a.method.as_deref(), a.url.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
            // A client's own line or a span without headers cannot show a key: not `no key`.
            let key = match &a.key {
                Some(k) => format!("key {k}"),
                None if a.key_unseen => "key unknown".to_string(),
                None => "no key".to_string(),
            };
            let text = format!("attempt {}  {request}  {key}", a.number).replace("    ", "  ");
            out.push(entry(a.at, a.loc, Side::Client, "attempt", text));
        }
        let Some(o) = &a.outcome else { continue };
        let (what, text) = match &o.kind {
            OutcomeKind::Failure { .. } => (
                "failure",
                format!(
                    "attempt {} failed ({}): {}",
                    a.number,
                    o.class().as_str(),
                    o.describe()
                ),
            ),
            OutcomeKind::Response {
                effect_id,
                replayed,
                ..
            } => {
                let mut t = format!("attempt {} response {}", a.number, o.describe());
                if let Some(id) = effect_id {
                    t.push_str(&format!("  effect {id}"));
                }
                if *replayed {
                    t.push_str("  replayed");
                }
                ("response", t)
            }
        };
        out.push(entry(o.at, o.loc, Side::Client, what, text));
    }
    if let Some(end) = &d.end {
        let text = match (&end.ok, &end.error) {
            (true, _) => format!("run {run} step {step} ok"),
            (false, Some(e)) => format!("run {run} step {step} failed: {e}"),
            (false, None) => format!("run {run} step {step} failed"),
        };
        out.push(entry(end.at, end.loc, Side::Client, "step_end", text));
    }
}

/// The effect that effect `i`, a delivery copy, copies: the nearest in time of those of its
/// kind, order and amount matched to its attempt otherwise than as a copy.
fn copied(model: &Model, i: usize) -> Option<&str> {
    let e = &model.effects[i];
    model
        .effects
        .iter()
        .filter(|o| {
            o.matched == e.matched
                && o.matched_by != Some(MatchedBy::DeliveryCopy)
                && (&o.kind, &o.order, o.amount()) == (&e.kind, &e.order, e.amount())
        })
        .min_by_key(|o| (o.created.0.abs_diff(e.created.0), o.created))
        .map(|o| o.id.as_str())
}

fn effect_entries(model: &Model, i: usize, out: &mut Vec<Entry>) {
    let e = &model.effects[i];
    let Some(&loc) = e.locs.first() else { return };
    let mut text = format!("{} {} created", e.kind, e.id);
    if let Some(o) = &e.order {
        text.push_str(&format!("  order {o}"));
    }
    text.push_str(&format!("  {}", amount_text(e.amount())));
    if let Some(k) = &e.key {
        text.push_str(&format!("  key {k}"));
    }
    if let (Some(m), Some(by)) = (e.matched, e.matched_by) {
        let d = &model.dispatches[m.dispatch()];
        let by = match by {
            MatchedBy::EffectId => "by effect id".to_string(),
            MatchedBy::Key => "by key".to_string(),
            MatchedBy::OrderAndTime => "by order and time".to_string(),
            MatchedBy::DeliveryCopy => match copied(model, i) {
                Some(o) => format!("a delivery copy of {o}"),
                None => "a delivery copy".to_string(),
            },
        };
        let attempt = model.attempt(m);
        let which = if attempt.unlogged {
            ", request not logged".to_string()
        } else {
            format!(" attempt {}", attempt.number)
        };
        text.push_str(&format!(
            "  (run {} step {}{which}, {by})",
            d.call.run, d.call.step
        ));
    } else {
        text.push_str("  (no client attempt)");
    }
    match (&e.state, e.state_at) {
        (Some(state), Some(at)) => {
            out.push(entry(e.created, loc, Side::Service, "effect", text));
            let mut t = format!("{} {} {state}", e.kind, e.id);
            if !e.happened {
                t.push_str(" (did not happen)");
            }
            out.push(entry(at, loc, Side::Service, "settlement", t));
        }
        (Some(state), None) => {
            text.push_str(&format!("  {state}"));
            if !e.happened {
                text.push_str(" (did not happen)");
            }
            out.push(entry(e.created, loc, Side::Service, "effect", text));
        }
        (None, _) => out.push(entry(e.created, loc, Side::Service, "effect", text)),
    }
}
