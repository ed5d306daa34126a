//! Keys and idempotency records, looked up once per check: which effects a record stands
//! for, which attempt first sent a key, and the key an attempt was sent with.

use crate::correlate::{AttemptId, AttemptRec, Model, RecordRec};
use crate::time::Timestamp;
use rustc_hash::FxHashMap;

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
