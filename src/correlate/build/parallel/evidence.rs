//! What a request's line tells of which of a step's parallel calls sent it.

use super::super::Builder;
use crate::correlate::Dispatch;
use crate::correlate::kinds::effect_kind_of;
use crate::event::url_parts;
use serde_json::Value;

impl Builder<'_> {
    /// The one of `calls` that a request with `key`, to `url`, names: the call whose
    /// earlier requests or arguments hold the key; else the call whose arguments alone hold
    /// a value that the URL's path or query has as a whole segment (`/v1/orders/A-2/refunds`,
    /// `?order=A-2`), no segment naming another call; else the one call that makes the kind
    /// of effect the URL names (`/v1/refunds`). `None` when nothing tells.
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
        let url = url?;
        let mut named = None;
        for segment in url_parts(url).1.split(['/', '?', '&', '=', ';', ',']) {
            let holds = |i: &usize| values[*i].iter().any(|v| v == segment);
            let Some(holder) = only_one((0..calls.len()).filter(holds)) else {
                continue;
            };
            if named.is_some_and(|n| n != holder) {
                return None;
            }
            named = Some(holder);
        }
        if let Some(i) = named {
            return Some(calls[i]);
        }
        // A refund's URL beside a call that makes none (an email, a lookup).
        let kind = effect_kind_of("", Some(url), &[])?;
        let makes = |&c: &usize| dispatches[c].effect_kind.as_ref() == Some(&kind);
        only_one(calls.iter().copied().filter(makes))
    }
}

impl Builder<'_> {
    /// The one of `calls` whose tool is `function`, the function a retry library's line
    /// names (`agent.tools.issue_refund`: its last name): two calls of one tool are not
    /// told apart by it.
    pub(super) fn named_by_function(&self, calls: &[usize], function: &str) -> Option<usize> {
        let name = function.rsplit(['.', ':']).next()?;
        let tool = |&c: &usize| self.model.tool_of(&self.model.dispatches[c]) == name;
        only_one(calls.iter().copied().filter(tool))
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
