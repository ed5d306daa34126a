//! `unattributed-effect`: an effect that no client attempt accounts for.

use super::support::{amount_text, set_effects};
use super::{Rule, Settings, Shared};
use crate::correlate::Model;
use crate::finding::{Finding, Severity};

pub static RULE: Rule = Rule {
    id: "unattributed-effect",
    default_severity: Severity::Info,
    default_enabled: true,
    summary: "an effect that no client attempt accounts for",
    explanation: r#"## What it does
Finds effects that match no client attempt by effect id, key, or order and time. Only effect
kinds that some client trace in the inputs produces are considered, and only inside the time
span those traces cover, so a payments log full of checkout charges does not drown the report.

## Why is this bad
Either a client trace is missing (a worker whose logs were not collected, a path that does not
log its attempts) or something other than the agent is performing effects: a gateway retry, a
queue redelivery, a second deployment. Both leave duplicates that cannot be attributed.

## How to fix
Collect the traces of every caller of the service, log the effect id of every response, and
have the service log the idempotency key with the effect so that it can be matched exactly.

## Example
```
14:05:00.000  refund rf_ZZ1  order A-90001  1200p  settled 14:05:09.000
```
with no attempt for order A-90001 in the client traces of that window.
"#,
    check,
};

fn check(model: &Model, _settings: &Settings, _shared: &Shared, out: &mut Vec<Finding>) {
    for (i, e) in model.effects.iter().enumerate() {
        if !e.happened
            || e.matched.is_some()
            || !model.client_kinds.contains(&e.kind)
            || !model.within_client_span(e.created)
        {
            continue;
        }
        let mut f = Finding::new(
            RULE.id,
            RULE.default_severity,
            format!(
                "{} {} of {} on order {} matches no client attempt",
                e.kind,
                e.id,
                amount_text(e.amount()),
                e.order.as_deref().unwrap_or("(none)")
            ),
        );
        f.key = e.key.as_deref().map(String::from);
        set_effects(&mut f, model, vec![i]);
        f.excess_minor = None;
        out.push(f);
    }
}
