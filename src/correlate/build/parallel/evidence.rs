//! What a request's line tells of which of a step's parallel calls sent it.

use super::super::Builder;
use crate::correlate::Dispatch;
use crate::event::url_parts;
use serde_json::Value;

impl Builder<'_> {
    /// The one of `calls` that a request with `key`, to `url`, names: the call whose
    /// earlier requests or arguments hold the key; else the call whose arguments alone hold
    /// a value that the URL's path or query has as a whole segment (`/v1/orders/A-2/refunds`,
    /// `?order=A-2`), no segment naming another call. `None` when nothing tells.
    pub(super) fn named_by_request(
        &self,
        calls: &[usize],
        key: Option<&str>,
        url: Option<&str>,
    ) -> Option<usize> {
        let dispatches = &self.model.dispatches;
        let values: Vec<Vec<String>> = (calls.iter())
            .map(|&c| argument_values(&dispatches[c]))
            .collect();
        if let Some(key) = key {
            let holds = |i: usize| {
                let d = &dispatches[calls[i]];
                d.attempts.iter().any(|a| a.key.as_deref() == Some(key))
                    || values[i].iter().any(|v| v == key)
            };
            if let Some(i) = only_one((0..calls.len()).filter(|&i| holds(i))) {
                return Some(calls[i]);
            }
        }
        let (_, target) = url_parts(url?);
        let mut named = None;
        for segment in target.split(['/', '?', '&', '=', ';', ',']) {
            let holds = |i: &usize| values[*i].iter().any(|v| v == segment);
            let Some(holder) = only_one((0..calls.len()).filter(holds)) else {
                continue;
            };
            if named.is_some_and(|n| n != holder) {
                return None;
            }
            named = Some(holder);
        }
        named.map(|i| calls[i])
    }
}

/// The item, if there is exactly one.
fn only_one<T>(mut items: impl Iterator<Item = T>) -> Option<T> {
    let first = items.next()?;
    items.next().is_none().then_some(first)
}

/// The values of the call's arguments, at any depth, that a URL or a key may be: texts
/// that hold no blank, and whole numbers as written.
fn argument_values(d: &Dispatch) -> Vec<String> {
    let args = d.args();
    let mut out = Vec::new();
    let mut stack = vec![&*args];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) if !s.is_empty() && !s.contains(char::is_whitespace) => {
                out.push(s.clone())
            }
            Value::Number(n) if n.is_i64() || n.is_u64() => out.push(n.to_string()),
            Value::Array(items) => stack.extend(items),
            Value::Object(members) => stack.extend(members.values()),
            _ => {}
        }
    }
    out
}
