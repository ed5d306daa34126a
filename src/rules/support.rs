//! Small helpers the rules share: evidence of a dispatch, effect lists and their excess,
//! and the phrases messages are built from. No rule-specific logic here.

use crate::classify::FailureClass;
use crate::correlate::{
    AttemptId, AttemptRec, Dispatch, EffectRec, LogicalCall, Model, OutcomeKind, RecordRec,
};
use crate::event::{Lifecycle, Loc};
use crate::finding::{EffectRef, Finding};
use crate::money::Total;
use crate::time::{Duration, Timestamp};
use rustc_hash::{FxBuildHasher, FxHashMap};
use std::hash::{BuildHasher, Hash};

/// Every line of a dispatch: its tool call, attempts, outcomes and step end.
pub fn dispatch_evidence(d: &Dispatch, out: &mut Vec<Loc>) {
    out.extend(d.loc);
    for a in &d.attempts {
        attempt_evidence(a, out);
    }
    out.extend(d.end.as_ref().map(|e| e.loc));
}

pub fn attempt_evidence(a: &AttemptRec, out: &mut Vec<Loc>) {
    out.push(a.loc);
    out.extend(a.outcome.as_ref().map(|o| o.loc));
}

/// Fills a finding's effects, currency and excess from effects in any order: the first
/// created is the legitimate one, the rest (in its currency) are the excess.
pub fn set_effects(f: &mut Finding, model: &Model, mut effects: Vec<usize>) {
    effects.sort_by(|&a, &b| {
        let (a, b) = (&model.effects[a], &model.effects[b]);
        (a.created, &a.id).cmp(&(b.created, &b.id))
    });
    effects.dedup();
    // A whole number written without its unit still names its currency.
    let first_currency = (effects.iter())
        .find_map(|&i| model.effects[i].amount().map(|m| m.currency))
        .or_else(|| (effects.iter()).find_map(|&i| model.effects[i].whole().map(|m| m.currency)));
    f.currency = first_currency;
    if let Some(cur) = first_currency {
        // Exact: i128 holds any sum of i64 amounts, so nothing saturates or wraps. When no
        // duplicate has an amount in the currency, the excess is unknown, never zero.
        f.excess_minor = effects
            .iter()
            .skip(1)
            .filter_map(|&i| model.effects[i].amount())
            .filter(|m| m.currency == cur)
            .map(|m| i128::from(m.minor))
            .reduce(|a, b| a + b);
    }
    for &i in &effects {
        let e = &model.effects[i];
        f.evidence.extend(e.locs.iter().copied());
        f.effects.push(EffectRef {
            id: e.id.to_string(),
            created: e.created,
            amount: e.amount(),
        });
    }
    if f.order.is_none() {
        f.order = effects
            .iter()
            .find_map(|&i| model.effects[i].order.as_deref().map(String::from));
    }
}

/// A finding's excess for its message: `GBP 45.00`, `an unknown amount`, or a lower bound
/// when a duplicate's amount is unknown (`at least GBP 45.00, 1 refund's amount unknown`).
pub fn excess_text(f: &Finding, kind: &str) -> String {
    let known = amount_text(f.excess());
    if !f.excess_partial() {
        return known;
    }
    let cur = f.currency;
    let unknown = (f.effects.iter().skip(1))
        .filter(|e| e.amount.is_none_or(|m| Some(m.currency) != cur))
        .count();
    let whose = if unknown == 1 {
        format!("1 {kind}'s amount")
    } else {
        format!("{unknown} {kind}s' amounts")
    };
    format!("at least {known}, {whose} unknown")
}

/// `; rf_2's lines disagree on its amount (GBP 45.00 used; also EUR 45.00)` for each of
/// `effects` whose lines disagree on its amount ([`crate::correlate::disputes`]): an excess
/// counted in the amount used does not move currency unsaid.
pub fn disputed_amounts(model: &Model, effects: &[usize]) -> String {
    if model.amount_disputes.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    for &i in effects {
        let Some(d) = model.amount_disputes.get(&(i as u32)) else {
            continue;
        };
        let e = &model.effects[i];
        let others: Vec<String> = (d.others(e.written).iter()).map(|w| w.describe()).collect();
        let used = e
            .written
            .map_or_else(|| "none".to_string(), |w| w.describe());
        out.push_str(&format!(
            "; {}'s lines disagree on its amount ({used} used; also {})",
            e.id,
            others.join(", ")
        ));
    }
    out
}

/// `GBP 45.00`, or `an unknown amount`.
pub fn amount_text(amount: Option<impl Into<Total>>) -> String {
    amount.map_or_else(|| "an unknown amount".to_string(), |m| m.into().display())
}

/// An effect's amount for a message: `GBP 45.00`; for a bare whole number whose unit is
/// unknown, what was written and both readings (`4500 GBP without its unit: GBP 45.00 or
/// GBP 4,500.00`); else `an unknown amount`.
pub fn effect_amount_text(e: &EffectRec) -> String {
    match (e.amount(), e.whole()) {
        (None, Some(w)) => {
            let major = (w.currency.exponent())
                .and_then(|exp| w.minor.checked_mul(10i64.checked_pow(exp)?))
                .map(|m| crate::money::Money::new(m, w.currency));
            match major {
                Some(major) => format!(
                    "{} {} without its unit: {} or {}",
                    w.minor,
                    w.currency,
                    amount_text(Some(w)),
                    amount_text(Some(major))
                ),
                None => amount_text(None::<crate::money::Money>),
            }
        }
        (amount, _) => amount_text(amount),
    }
}

pub use crate::correlate::same_request;

/// The attempts that were sent again: each with the latest earlier attempt in `attempts`
/// of the same request ([`same_request`]), which it retried.
pub fn retries<'m>(
    attempts: &[&'m AttemptRec],
) -> impl Iterator<Item = (&'m AttemptRec, &'m AttemptRec)> {
    (1..attempts.len()).filter_map(move |i| {
        let retry = attempts[i];
        let earlier = attempts[..i]
            .iter()
            .rev()
            .find(|a| same_request(a, retry))?;
        Some((*earlier, retry))
    })
}

/// Did this attempt end in an ambiguous failure (a timeout, a reset, a 502...)?
pub fn ended_ambiguous(a: &AttemptRec) -> bool {
    a.outcome
        .as_ref()
        .is_some_and(|o| o.class() == FailureClass::Ambiguous)
}

/// `timed out after 10.0 s`, `failed (connection reset) after 0.2 s`, `got 503 after 1.0 s`.
pub fn how_it_ended(a: &AttemptRec) -> String {
    let Some(o) = &a.outcome else {
        return "got no answer".to_string();
    };
    // A request no line logged (implied by its outcome) was sent at a time nobody knows.
    let after = match a.method.is_none() && o.at == a.at {
        true => String::new(),
        false => format!(" after {}", o.at.since(a.at).display_secs()),
    };
    match &o.kind {
        OutcomeKind::Failure { error, message, .. } => {
            let text = format!("{error} {message}").to_ascii_lowercase();
            if text.contains("timeout") || text.contains("timed out") {
                format!("timed out{after}")
            } else {
                format!("failed ({}){after}", o.describe())
            }
        }
        OutcomeKind::Response { status, .. } => format!("got {status}{after}"),
    }
}

/// The past tense of an effect kind for messages: `refunded`, `charged`, `paid out`. A
/// kind that is no verb (`payment`, `payment_order`, a `--tool-kind` name) is said as
/// what was made: `made a payment`.
pub fn did(kind: &str) -> String {
    match kind {
        "payout" => "paid out".to_string(),
        "payment" => "paid".to_string(),
        "transfer" => "transferred".to_string(),
        "refund" | "charge" | "capture" | "credit" => match kind.strip_suffix('e') {
            Some(stem) => format!("{stem}ed"),
            None => format!("{kind}ed"),
        },
        k => format!("made a {}", k.replace('_', " ")),
    }
}

/// What became of the effect, as a predicate: `was settled at T`, `was created at T`, or,
/// for a state that is no passive (a payment provider's `succeeded`), `succeeded`.
pub fn state_predicate(e: &EffectRec) -> String {
    let state = match (&e.state, e.state_at) {
        (Some(state), Some(at)) => format!("{state} at {at}"),
        (Some(state), None) => state.to_string(),
        _ => format!("created at {}", e.created),
    };
    let active = e.state.as_deref().is_some_and(|s| {
        INTRANSITIVE_STATES
            .iter()
            .any(|v| s.eq_ignore_ascii_case(v))
    });
    if active {
        state
    } else {
        format!("was {state}")
    }
}

/// States named by a verb that takes no object: "was succeeded" is not English.
const INTRANSITIVE_STATES: [&str; 2] = ["succeeded", "failed"];

/// A finding about one logical call, with its run, step, tool and order filled in.
pub fn call_finding(
    rule: &super::Rule,
    model: &Model,
    call: &LogicalCall,
    message: String,
) -> Finding {
    let mut f = Finding::new(rule.id, rule.default_severity, message);
    f.run = Some(call.run.to_string());
    f.step = Some(call.step);
    f.tool = Some(call.tool.to_string()).filter(|t| !t.is_empty());
    f.order = call
        .dispatches
        .iter()
        .find_map(|&d| model.dispatches[d].order.as_deref().map(String::from));
    f
}

/// Every attempt of a call in time order (its dispatches are already in time order).
pub fn call_attempts<'m>(model: &'m Model, call: &LogicalCall) -> Vec<&'m AttemptRec> {
    call.dispatches
        .iter()
        .flat_map(|&d| &model.dispatches[d].attempts)
        .collect()
}

/// Does the dispatch carry the arguments the agent gave (rather than an implied, empty call)?
pub fn has_args(d: &Dispatch) -> bool {
    d.loc.is_some() || !d.args_are_null()
}

/// A list for messages: `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Effects no client attempt accounts for that are one delivery (SPEC §4.6): those that
/// share a key, and those of one kind, order and known amount created within `--max-skew`
/// plus [`DELIVERY_SLACK`] of each other. Only groups of two or more, in a fixed order.
pub struct ServiceGroup {
    pub effects: Vec<usize>,
    /// Set when the group is the effects carrying this key.
    pub key: Option<String>,
}

/// How close (beyond the skew) untraced effects must be to count as one delivery: the
/// window correlation matches a traced effect's delivery copies in, so that one traced and
/// one untraced effect are judged as two untraced ones are.
pub use crate::correlate::DELIVERY_SLACK;

pub fn service_only_groups(model: &Model, max_skew: Duration) -> Vec<ServiceGroup> {
    let unmatched: Vec<usize> = (0..model.effects.len())
        .filter(|&i| model.effects[i].happened && model.effects[i].matched.is_none())
        .collect();
    let keyed: Vec<usize> = unmatched
        .iter()
        .copied()
        .filter(|&i| model.effects[i].key.is_some())
        .collect();
    let mut out = Vec::new();
    let mut grouped = vec![false; model.effects.len()];
    let kind_and_key = |i: usize| {
        let e = &model.effects[i];
        (e.kind.as_str(), e.key.as_deref().unwrap_or_default())
    };
    for effects in groups_by_key(&keyed, kind_and_key) {
        effects.iter().for_each(|&i| grouped[i] = true);
        let key = Some(kind_and_key(effects[0]).1.to_string());
        out.push(ServiceGroup { effects, key });
    }
    let ungrouped: Vec<usize> = unmatched
        .into_iter()
        .filter(|&i| !grouped[i])
        .filter(|&i| model.effects[i].order.is_some() && model.effects[i].amount_key().is_some())
        .collect();
    let order_and_amount = |i: usize| {
        let e = &model.effects[i];
        (e.kind.as_str(), e.order.as_deref(), e.amount_key())
    };
    let gap = Duration(max_skew.0.saturating_add(DELIVERY_SLACK.0));
    for mut effects in groups_by_key(&ungrouped, order_and_amount) {
        sort_by_creation(model, &mut effects);
        for cluster in clusters(model, &effects, gap) {
            out.push(ServiceGroup {
                effects: cluster,
                key: None,
            });
        }
    }
    out
}

/// An empty map with room for `n` entries, for grouping every effect or attempt: grown entry
/// by entry instead, a map rehashes all it holds at each doubling and faults in each larger
/// table, which was most of the grouping rules' time on a month of logs.
pub fn map_with_room<K, V>(n: usize) -> FxHashMap<K, V> {
    FxHashMap::with_capacity_and_hasher(n, Default::default())
}

/// Groups `items` (indexes) by `key`: the groups of two or more, in key order, each in
/// index order. The items that may share a key (`maybe_shared`) sorted by the key's hash
/// (keys compared only where hashes tie) instead of a map of lists, which held a list per
/// order (or key, or call) of the month; only the few groups are put in key order.
pub fn groups_by_key<K: Ord + Hash>(items: &[usize], key: impl Fn(usize) -> K) -> Vec<Vec<usize>> {
    let hashed: Vec<(u64, usize)> = items
        .iter()
        .map(|&i| (FxBuildHasher.hash_one(key(i)), i))
        .collect();
    let mut hashed = maybe_shared(hashed);
    hashed.sort_unstable_by(|&(ha, a), &(hb, b)| {
        ha.cmp(&hb)
            .then_with(|| key(a).cmp(&key(b)))
            .then(a.cmp(&b))
    });
    let mut groups: Vec<Vec<usize>> = hashed
        .chunk_by(|&(ha, a), &(hb, b)| ha == hb && key(a) == key(b))
        .filter(|g| g.len() > 1)
        .map(|g| g.iter().map(|&(_, i)| i).collect())
        .collect();
    groups.sort_unstable_by(|a, b| key(a[0]).cmp(&key(b[0])));
    groups
}

/// The items of `hashed` (hash, item) whose hash lands in a slot of a bit table that
/// another's lands in too: every item that shares its hash, and so its key, with another,
/// and a few that share a slot by chance. Sorting every item of a month by its hash was
/// most of the time of the rules that group effects; most items are alone, and two
/// passes over a table of about eight bits per item (in cache) set them aside.
fn maybe_shared(mut hashed: Vec<(u64, usize)>) -> Vec<(u64, usize)> {
    let bits = (hashed.len().max(64).ilog2() + 3).min(26);
    let slot = |h: u64| {
        let s = (h >> (64 - bits)) as usize;
        (s / 64, 1u64 << (s % 64))
    };
    let mut once = vec![0u64; (1 << bits) / 64];
    let mut twice = vec![0u64; (1 << bits) / 64];
    for &(h, _) in &hashed {
        let (word, bit) = slot(h);
        if once[word] & bit != 0 {
            twice[word] |= bit;
        }
        once[word] |= bit;
    }
    hashed.retain(|&(h, _)| {
        let (word, bit) = slot(h);
        twice[word] & bit != 0
    });
    hashed
}

/// The effects as the finding's effects (in creation order, each once) and their lines as
/// evidence, for rules that show effects the money of which another rule counts.
pub fn show_effects(model: &Model, effects: impl Iterator<Item = usize>, f: &mut Finding) {
    for i in effects {
        let e = &model.effects[i];
        f.evidence.extend(e.locs.iter().copied());
        f.effects.push(EffectRef {
            id: e.id.to_string(),
            created: e.created,
            amount: e.amount(),
        });
    }
    f.effects
        .sort_by(|a, b| (a.created, &a.id).cmp(&(b.created, &b.id)));
    f.effects.dedup_by(|a, b| a.id == b.id);
}

pub fn sort_by_creation(model: &Model, effects: &mut [usize]) {
    effects.sort_by(|&a, &b| {
        let (a, b) = (&model.effects[a], &model.effects[b]);
        (a.created, &a.id).cmp(&(b.created, &b.id))
    });
}

/// Runs of two or more effects (sorted by creation), each created within `gap` of the
/// previous one.
pub fn clusters(model: &Model, sorted: &[usize], gap: Duration) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    for &i in sorted {
        if let Some(&last) = current.last()
            && model.effects[i].created.since(model.effects[last].created) > gap
        {
            if current.len() > 1 {
                out.push(std::mem::take(&mut current));
            }
            current.clear();
        }
        current.push(i);
    }
    if current.len() > 1 {
        out.push(current);
    }
    out
}

/// `1 h 38 min`, `3 min 20 s`, `12.5 s`, `2 d 4 h`: a human span for messages, its last
/// unit rounded to the nearest.
pub fn span_text(d: Duration) -> String {
    let secs = d.0.max(0).saturating_add(500_000_000) / 1_000_000_000;
    if secs >= 86_400 {
        let hours = (secs + 1800) / 3600;
        format!("{} d {} h", hours / 24, hours % 24)
    } else if secs >= 3600 {
        let mins = (secs + 30) / 60;
        format!("{} h {} min", mins / 60, mins % 60)
    } else if secs >= 60 {
        format!("{} min {} s", secs / 60, secs % 60)
    } else {
        d.display_secs()
    }
}

/// The line of the lifecycle event that opened `segment` of `run` (its resume).
pub fn resume_evidence(model: &Model, run: &str, segment: u32, out: &mut Vec<Loc>) {
    if let (Some(at), Some(events)) = (model.resume_at(run, segment), model.runs.get(run)) {
        out.extend(
            events
                .iter()
                .filter(|e| e.at == at && e.what != Lifecycle::Crashed)
                .map(|e| e.loc)
                .take(1),
        );
    }
}

/// What the record rules look up per idempotency record, indexed once per check: a scan of
/// every effect and attempt per record is quadratic, minutes on a month of records.
pub struct RecordIndex<'m> {
    /// Effects logged with a key, or matched to an attempt sent with it, in effect order.
    effects_by_key: FxHashMap<&'m str, Vec<usize>>,
    /// Effects by effect id (one id may name effects of several kinds), in effect order.
    effects_by_id: FxHashMap<&'m str, Vec<usize>>,
    /// The first attempt sent with each key: (sent at, attempt), the least of both.
    first_attempt: FxHashMap<&'m str, (Timestamp, AttemptId)>,
    model: &'m Model,
}

impl<'m> RecordIndex<'m> {
    pub fn new(model: &'m Model) -> Self {
        let mut effects_by_key: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        let mut effects_by_id: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        for (i, e) in model.effects.iter().enumerate() {
            let logged = e.key.as_deref();
            if let Some(k) = logged {
                effects_by_key.entry(k).or_default().push(i);
            }
            if let Some(m) = e.matched
                && let Some(k) = model.attempt(m).key.as_deref()
                && logged != Some(k)
            {
                effects_by_key.entry(k).or_default().push(i);
            }
            effects_by_id.entry(e.id.as_str()).or_default().push(i);
        }
        let mut first_attempt: FxHashMap<&str, (Timestamp, AttemptId)> = FxHashMap::default();
        for (id, a) in model.attempts() {
            if let Some(k) = a.key.as_deref() {
                let slot = first_attempt.entry(k).or_insert((a.at, id));
                if (a.at, id) < *slot {
                    *slot = (a.at, id);
                }
            }
        }
        RecordIndex {
            effects_by_key,
            effects_by_id,
            first_attempt,
            model,
        }
    }

    /// The effects a record stands for, in effect order: logged with its key, matched to an
    /// attempt sent with its key, or named (by effect id) in the response it stored.
    pub fn record_effects(&self, rec: &RecordRec) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .effects_by_key
            .get(rec.key.as_str())
            .cloned()
            .unwrap_or_default();
        for named in record_strings(rec) {
            if let Some(found) = self.effects_by_id.get(named.as_str()) {
                out.extend(found);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The run, step and tool of the first attempt sent with `key`, for findings about a key.
    pub fn call_of_key(&self, key: &str) -> Option<(String, u32, String)> {
        self.first_attempt.get(key).map(|&(_, id)| {
            let d = &self.model.dispatches[id.dispatch()];
            let tool = self.model.tool_of(d);
            (d.call.run.to_string(), d.call.step, tool.to_string())
        })
    }
}

/// Every string in the response a record stored (effect ids among them).
pub fn record_strings(rec: &RecordRec) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(v) = rec
        .response
        .as_deref()
        .and_then(|r| serde_json::from_str::<serde_json::Value>(r).ok())
    {
        strings_in(&v, &mut out);
    }
    out
}

fn strings_in(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings_in(x, out)),
        serde_json::Value::Object(m) => m.values().for_each(|x| strings_in(x, out)),
        _ => {}
    }
}

/// The effects that happened, per dispatch they were matched to, in effect order, for the
/// `dispatches` a rule will look up: built once rather than scanning every effect per lookup,
/// and only for those dispatches (a few, where a map of every dispatch's effects cost more
/// than the rule's findings).
pub fn effects_by_dispatch(
    model: &Model,
    dispatches: impl IntoIterator<Item = usize>,
) -> FxHashMap<usize, Vec<usize>> {
    let mut out: FxHashMap<usize, Vec<usize>> =
        dispatches.into_iter().map(|d| (d, Vec::new())).collect();
    for (i, e) in model.effects.iter().enumerate() {
        if let (true, Some(m)) = (e.happened, e.matched)
            && let Some(effects) = out.get_mut(&m.dispatch())
        {
            effects.push(i);
        }
    }
    out
}

/// The keys the service logged on the effects of attempts whose own line shows none: the
/// effect was made by a request that carried that key, whatever the client's log printed (a
/// log that prints no headers, a span without captured headers, an implied attempt). The
/// evidence of the effect wins over the absence of a token.
#[derive(Default)]
pub struct ServiceKeys {
    /// Per attempt with no key of its own: the first of its effects the service logged with a
    /// key, and whether another of them carried a different key (the match then pinned
    /// effects of two requests on it, and its key is not known).
    by_attempt: FxHashMap<AttemptId, (u32, bool)>,
}

impl ServiceKeys {
    pub fn of(model: &Model) -> Self {
        let mut by_attempt: FxHashMap<AttemptId, (u32, bool)> = FxHashMap::default();
        for (i, e) in model.effects.iter().enumerate() {
            let (Some(key), Some(m)) = (e.key.as_deref(), e.matched) else {
                continue;
            };
            let attempt = model.attempt(m);
            // A client log that shows keys: a request of it without one sent none, whatever
            // the service wrote in its key column (an id of its own).
            if attempt.key.is_some() || model.key_known_absent(attempt) {
                continue;
            }
            let (first, disagree) = by_attempt.entry(m).or_insert((i as u32, false));
            if model.effects[*first as usize].key.as_deref() != Some(key) {
                *disagree = true;
            }
        }
        ServiceKeys { by_attempt }
    }

    pub fn is_empty(&self) -> bool {
        self.by_attempt.is_empty()
    }

    /// The one key the service logged on the effects of attempt `id`, which shows no key
    /// of its own, and the first effect it was logged on. `None` when no effect of it was
    /// logged with a key, or its effects carry different keys.
    pub fn key<'m>(&self, model: &'m Model, id: AttemptId) -> Option<(&'m str, usize)> {
        let &(first, disagree) = self.by_attempt.get(&id)?;
        let e = first as usize;
        (!disagree)
            .then(|| model.effects[e].key.as_deref().map(|k| (k, e)))
            .flatten()
    }

    /// Did the service log a key on some effect of attempt `id` (one or several keys)?
    pub fn shows_a_key(&self, id: AttemptId) -> bool {
        self.by_attempt.contains_key(&id)
    }
}

/// The key attempt `id` was sent with: its own line's, else the one the service logged on
/// its effects ([`ServiceKeys`]), with the effect it was read from.
pub fn sent_key<'m>(
    model: &'m Model,
    service: &ServiceKeys,
    id: AttemptId,
) -> Option<(&'m str, Option<usize>)> {
    match model.attempt(id).key.as_deref() {
        Some(k) => Some((k, None)),
        None if service.is_empty() => None,
        None => service.key(model, id).map(|(k, e)| (k, Some(e))),
    }
}

/// The key a finding about these attempts is about: the one they were sent with, when
/// every keyed attempt among them carried the same one.
pub fn common_key<'m>(attempts: impl IntoIterator<Item = &'m AttemptRec>) -> Option<String> {
    let mut keys = attempts.into_iter().filter_map(|a| a.key.as_deref());
    let first = keys.next()?;
    keys.all(|k| k == first).then(|| first.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testkit::Trace;

    /// A provider's `succeeded` is no passive: "refund rf_1 succeeded", not "was succeeded".
    #[test]
    fn an_effects_state_reads_as_a_predicate() {
        let mut t = Trace::new();
        t.refund(0, "rf_1", "A-1", 4500, None)
            .refund_settled(0, "rf_2", "A-2", 4500, 1_000);
        let mut model = t.model();
        let predicate = |model: &Model, i: usize| state_predicate(&model.effects[i]);
        assert_eq!(predicate(&model, 0), "was settled");
        assert!(
            predicate(&model, 1).starts_with("was settled at "),
            "{}",
            predicate(&model, 1)
        );
        model.effects[0].state = Some("Succeeded".into());
        assert_eq!(predicate(&model, 0), "Succeeded");
        model.effects[0].state = None;
        assert!(
            predicate(&model, 0).starts_with("was created at "),
            "{}",
            predicate(&model, 0)
        );
    }

    #[test]
    fn groups_by_key_gives_groups_of_two_or_more_in_key_order_indexes_ascending() {
        let keys = ["b", "a", "c", "b", "a", "b"];
        let items: Vec<usize> = vec![5, 4, 3, 2, 1, 0];
        assert_eq!(
            groups_by_key(&items, |i| keys[i]),
            vec![vec![1, 4], vec![0, 3, 5]]
        );
        // Every key hashing alike still groups by key.
        let same_hash = |i: usize| Collide(keys[i]);
        assert_eq!(
            groups_by_key(&items, same_hash),
            vec![vec![1, 4], vec![0, 3, 5]]
        );
    }

    proptest::proptest! {
        /// The groups are those a map of lists gives, however many items share a slot of
        /// the bit table by chance (few keys among many items, or many keys).
        #[test]
        fn groups_by_key_is_a_map_of_lists(
            keys in proptest::collection::vec(0u32..3000, 0..4000),
            spread in 1u32..3000,
        ) {
            let key = |i: usize| keys[i] % spread;
            let items: Vec<usize> = (0..keys.len()).rev().collect();
            let mut lists: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
            for &i in &items {
                lists.entry(key(i)).or_default().push(i);
            }
            let expected: Vec<Vec<usize>> = lists
                .into_values()
                .filter(|l| l.len() > 1)
                .map(|mut l| {
                    l.sort();
                    l
                })
                .collect();
            proptest::prop_assert_eq!(groups_by_key(&items, key), expected);
        }
    }

    #[derive(PartialEq, Eq, PartialOrd, Ord)]
    struct Collide(&'static str);

    impl Hash for Collide {
        fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
            state.write_u8(0);
        }
    }

    /// What [`RecordIndex::record_effects`] replaced: every effect scanned per record.
    fn record_effects_by_scan(model: &Model, rec: &RecordRec) -> Vec<usize> {
        let named = record_strings(rec);
        let key = rec.key.as_str();
        (0..model.effects.len())
            .filter(|&i| {
                let e = &model.effects[i];
                e.key.as_deref() == Some(key)
                    || e.matched
                        .is_some_and(|m| model.attempt(m).key.as_deref() == Some(key))
                    || named.iter().any(|n| *n == e.id)
            })
            .collect()
    }

    /// What [`RecordIndex::call_of_key`] replaced: every attempt scanned per key.
    fn call_of_key_by_scan(model: &Model, key: &str) -> Option<(String, u32, String)> {
        model
            .attempts()
            .filter(|(_, a)| a.key.as_deref() == Some(key))
            .min_by_key(|(id, a)| (a.at, *id))
            .map(|(id, _)| {
                let d = &model.dispatches[id.dispatch()];
                (
                    d.call.run.to_string(),
                    d.call.step,
                    model.tool_of(d).to_string(),
                )
            })
    }

    /// Each kind's past tense reads as English: no `paymented`, `transfered`.
    #[test]
    fn every_kind_is_said_in_the_past_tense() {
        let said: Vec<String> = crate::event::EFFECT_KINDS.iter().map(|k| did(k)).collect();
        assert_eq!(
            said,
            [
                "refunded",
                "charged",
                "paid out",
                "paid",
                "transferred",
                "captured",
                "credited"
            ]
        );
        assert_eq!(did("payment_order"), "made a payment order");
    }

    /// Thousands of records whose keys are shared by several attempts, logged on effects
    /// other than the ones their attempts matched, and whose responses name effects by id:
    /// the index answers exactly what the scans did.
    #[test]
    fn the_record_index_answers_what_scanning_every_effect_did() {
        const N: usize = 3000;
        let mut t = Trace::new();
        for i in 0..N {
            let ms = (i as i64) * 1000;
            let run = format!("r{}", i % 700);
            let step = (i / 700) as u32 + 1;
            let args = format!(r#"{{"order":"A-{}","amount_p":{}}}"#, i % 97, 100 + i % 3);
            let attempt_key = format!("k{}", i % 1200);
            let logged_key = format!("k{}", (i * 7) % 1300);
            t.tool_call(ms, &run, step, "issue_refund", &args)
                .attempt(ms + 1, &run, step, 1, Some(&attempt_key))
                .created(ms + 5, &run, step, &format!("rf_{}", i / 2), i % 3 == 0)
                .refund(
                    ms + 3,
                    &format!("rf_{i}"),
                    &format!("A-{}", i % 97),
                    100 + (i % 3) as i64,
                    (i % 4 != 0).then_some(logged_key.as_str()),
                );
        }
        for j in 0..N {
            let response = format!(
                r#"{{"refund_id":"rf_{}","also":["rf_{}"]}}"#,
                (j * 13) % N,
                j
            );
            let status = if j % 5 == 0 {
                "in_progress"
            } else {
                "completed"
            };
            t.record(
                (j as i64) * 1000 + 500,
                &format!("k{}", j % 1400),
                status,
                (j % 6 != 0).then_some(response.as_str()),
            );
        }
        let model = t.model();
        assert_eq!(model.records.len(), N);
        let index = RecordIndex::new(&model);
        let mut nonempty = 0;
        for rec in &model.records {
            let found = index.record_effects(rec);
            assert_eq!(found, record_effects_by_scan(&model, rec), "{}", rec.key);
            nonempty += usize::from(!found.is_empty());
            assert_eq!(
                index.call_of_key(&rec.key),
                call_of_key_by_scan(&model, &rec.key),
                "{}",
                rec.key
            );
        }
        assert!(nonempty > N / 2, "the case exercises the lookups");
    }
}
