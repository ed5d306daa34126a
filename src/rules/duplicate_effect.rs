//! `duplicate-effect`: one logical call (or one key) produced two or more effects.

use super::{Rule, Settings, Shared};
use crate::correlate::Model;
use crate::finding::{Finding, Severity};
use groups::{check_calls, check_service_only};

mod cause;
mod gateway;
mod groups;
mod story;

pub static RULE: Rule = Rule {
    id: "duplicate-effect",
    default_severity: Severity::Error,
    default_enabled: true,
    summary: "one logical call (or one key) produced two or more effects",
    explanation: r#"## What it does
Finds logical calls (run, step, tool, canonical arguments) that the service performed more
than once: two or more effects of the same kind and amount matched to the attempts of one
call, or carrying one idempotency key. A request the call sent again after it was answered
2xx (under another key or none) is sent on purpose, not retried: its effects are not
copies of the first's (a tool refunding two charges of an order, or two line items; two of
one amount are `duplicate-decision`'s). A call that a resume re-issued under another step number
(`renumbered-step`) and a step the framework re-invoked count as the same call. An effect
that no attempt accounts for, created within `--max-skew` plus a few seconds of one of the
call's effects of the same kind, order and amount, is a copy of it (a gateway's retry, a
queue's redelivery) and counts as the call's. Effects that no client trace covers are also
reported when two of the same kind, order and amount were created within `--max-skew` plus a
few seconds.

Each finding carries a cause, a property of the call:
- `resume`: effects on both sides of a resume of the run (the call was re-issued after it);
- `step-retry`: the framework dispatched the same step twice in one segment of the run and
  both dispatches reached the service (often with a fresh reasoning trace);
- `client-retry`: the call was retried after an ambiguous failure (timeout, reset, 502...):
  one request (method and URL) reached the service twice, whether the tool's code or its
  HTTP client (urllib3's `Retry`) sent it again;
- `gateway-retry`: the call sent one attempt only as far as its trace shows (one that
  reached the service), so something below the traced request replayed it: a gateway or a
  queue, or the HTTP library's own retry where the trace records one span per call of the
  library (OpenTelemetry's `requests` instrumentation does not see urllib3's `Retry`).
  A gateway's log given beside the trace may show it: nginx's access line listing two
  upstreams (`$upstream_addr`, `$upstream_status`), HAProxy's retry count, nginx's `upstream
  timed out ... while reading response header from upstream`; the finding then cites those
  lines and says what they show. They never make or unmake a duplicate;
- `unknown`: no client trace covers the effects, or the call that made them logged no
  request (a trace of tool calls without the HTTP client's lines or spans).

## Why is this bad
Every effect beyond the first is money paid out twice. Its excess (the sum of the effects
beyond the first) is what finance has to recover.

## How to fix
Derive an idempotency key from what stays constant across attempts (run, step, tool and
canonical arguments), compute it once outside the retry loop, send it as `Idempotency-Key`,
and make the service enforce it (a unique record inserted before the effect).

## Example
```
14:02:11.418  POST https://payments.internal/v1/refunds  (attempt 1)
14:02:21.418  urllib3.exceptions.ReadTimeoutError: read timeout=10
14:02:21.930  POST https://payments.internal/v1/refunds  (attempt 2)
--- payments service, same window ---
14:02:11.501  refund rf_8XM1  order A-88214  4500p  settled 14:02:22.884
14:02:23.088  refund rf_9KQ2  order A-88214  4500p  settled 14:02:34.010
```
Two refunds for one call: cause `client-retry`, excess GBP 45.00.
"#,
    check,
};

fn check(model: &Model, settings: &Settings, shared: &Shared, out: &mut Vec<Finding>) {
    check_calls(model, out);
    check_service_only(model, settings, shared, out);
}

#[cfg(test)]
mod tests;
