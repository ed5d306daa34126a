//! `record-after-effect`: the idempotency record for a key was written after the effect that
//! carries that key.

use super::support::{RecordIndex, set_effects};
use super::{Rule, Settings, Shared};
use crate::correlate::Model;
use crate::finding::{Finding, Severity};
use crate::time::{Duration, NANOS_PER_SEC, Timestamp};

pub static RULE: Rule = Rule {
    id: "record-after-effect",
    default_severity: Severity::Error,
    default_enabled: true,
    summary: "an idempotency record was written after its effect",
    explanation: r#"## What it does
Compares each idempotency record's `created_at` with the effects that carry its key (logged
with the key, matched to an attempt sent with it, or named in the record's stored response)
and reports records created after such an effect.

## Why is this bad
The record is the lock. Inserted after the effect, it cannot stop a concurrent duplicate:
two requests with the same key both find no record, both perform the effect, and one of the
inserts fails (or, without a unique key, both succeed). The header looks enforced and is not.

## How to fix
Insert the record (status `in_progress`, under the key's unique constraint) before performing
the effect, in its own committed transaction; perform the effect; then store the response and
mark the record `completed`. A request that loses the insert race answers 409.

## Example
```
--- payments service ---
2026-12-02T14:02:11.501Z  refund rf_8XM1  order A-88214  4500p  key=9f1c...
--- idempotency_records dump ---
9f1c...,5d41...,completed,"{""refund_id"": ""rf_8XM1""}",2026-12-02 14:02:11.902+00
```
The record was created 0.4 s after the refund it guards.
"#,
    check,
};

fn check(model: &Model, _settings: &Settings, _shared: &Shared, out: &mut Vec<Finding>) {
    if model.records.is_empty() {
        return;
    }
    let index = RecordIndex::new(model);
    for rec in &model.records {
        if rec.created.is_dateless() {
            continue;
        }
        let earlier: Vec<usize> = index
            .record_effects(rec)
            .into_iter()
            .filter(|&i| {
                let e = &model.effects[i];
                e.happened && !e.created.is_dateless() && rec.created > latest_possible(e.created)
            })
            .collect();
        let Some(&first) = earlier
            .iter()
            .min_by_key(|&&i| (model.effects[i].created, &model.effects[i].id))
        else {
            continue;
        };
        let e = &model.effects[first];
        let mut f = Finding::new(
            RULE.id,
            RULE.default_severity,
            format!(
                "the idempotency record for key {} was created at {}, {} after {} {} (created {}): the service inserts the record after performing the effect, so it cannot stop a concurrent duplicate",
                rec.key,
                rec.created,
                rec.created.since(e.created).display_secs(),
                e.kind,
                e.id,
                e.created,
            ),
        );
        f.key = Some(rec.key.to_string());
        if let Some((run, step, tool)) = index.call_of_key(&rec.key) {
            f.run = Some(run);
            f.step = Some(step);
            f.tool = Some(tool).filter(|t| !t.is_empty());
        }
        f.evidence.push(rec.loc);
        set_effects(&mut f, model, earlier);
        f.excess_minor = None;
        out.push(f);
    }
}

/// An effect time written to the second (a settlement export) may stand for any instant in
/// that second; both times are the service's own, so no client skew is added.
fn latest_possible(created: Timestamp) -> Timestamp {
    if created.0 % NANOS_PER_SEC == 0 {
        created.plus(Duration(NANOS_PER_SEC - 1))
    } else {
        created
    }
}
