//! `record-stuck`: an idempotency record still `in_progress` long after it was created.

use super::support::{RecordIndex, set_effects, span_text};
use super::{Rule, Settings, Shared};
use crate::correlate::Model;
use crate::finding::{Finding, Severity};

pub static RULE: Rule = Rule {
    id: "record-stuck",
    default_severity: Severity::Warning,
    default_enabled: true,
    summary: "an idempotency record is still in_progress long after it was created",
    explanation: r#"## What it does
Finds rows of the service's idempotency-records table whose status is still `in_progress`
more than `--stuck-after` (default 5m) before the newest event in the inputs.

## Why is this bad
The record is inserted before the effect and completed after it. One that stays
`in_progress` belongs to a request that died in between (a crash, a killed worker, a timeout
inside the service). Every retry with that key is answered 409 until the record expires, so
the caller can never finish the step, and nobody knows whether the effect happened.

## How to fix
Find out whether the effect happened (the record's key, the order's ledger), then complete or
delete the record. Give records a lease: a request that finds an `in_progress` record older
than the service's longest request may take it over after checking the ledger.

## Example
```
key,request_hash,status,response,created_at
9f1c...,5d41...,in_progress,,2026-12-02 14:02:11.402+00
c3a7...,7b2e...,completed,"{""status"": 201}",2026-12-02 14:31:40.118+00
```
`9f1c...` has been in progress for 29 minutes.
"#,
    check,
};

fn check(model: &Model, settings: &Settings, _shared: &Shared, out: &mut Vec<Finding>) {
    let Some(now) = model.latest_event else {
        return;
    };
    // Built for the first stuck record only: most dumps have none.
    let mut index: Option<RecordIndex> = None;
    for rec in &model.records {
        let age = now.since(rec.created);
        if rec.status != "in_progress" || age <= settings.stuck_after || rec.created.is_dateless() {
            continue;
        }
        let mut f = Finding::new(
            RULE.id,
            RULE.default_severity,
            format!(
                "the idempotency record for key {} has been in_progress since {}, {} before the newest event ({now}): the request that inserted it never finished, and retries with this key get 409",
                rec.key,
                rec.created,
                span_text(age),
            ),
        );
        f.key = Some(rec.key.to_string());
        let index = index.get_or_insert_with(|| RecordIndex::new(model));
        if let Some((run, step, tool)) = index.call_of_key(&rec.key) {
            f.run = Some(run);
            f.step = Some(step);
            f.tool = Some(tool).filter(|t| !t.is_empty());
        }
        f.evidence.push(rec.loc);
        let effects = index.record_effects(rec);
        if !effects.is_empty() {
            set_effects(&mut f, model, effects);
            f.excess_minor = None;
        }
        out.push(f);
    }
}
