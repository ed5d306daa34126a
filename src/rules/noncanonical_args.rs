//! `noncanonical-args`: tool arguments spelled so that a key derived from them is fragile: a
//! float or string amount, or two dispatches of one call whose raw arguments differ only in
//! key order or number format.

use super::support::{and_list, call_attempts, call_finding, common_key, has_args};
use super::{Rule, Settings, Shared};
use crate::canonical::{is_float_literal, python_dumps};
use crate::correlate::{Dispatch, Model};
use crate::finding::{Finding, Severity};
use serde_json::Value;

pub static RULE: Rule = Rule {
    id: "noncanonical-args",
    default_severity: Severity::Warning,
    default_enabled: true,
    summary: "an argument breaks key derivation: a float or string amount, or raw args that differ only in key order or number format",
    explanation: r#"## What it does
Reports a logical call whose arguments hold an amount written as a float (`4500.0`) or as a
string (`"4500"`), or that was dispatched twice with raw arguments that differ only in key
order or number format (`{"order":"A-1","amount_p":4500}` then
`{"amount_p":4500.0,"order":"A-1"}`). Amount fields are those named `amount*`, and the
`value`, `units` and `minor` fields of an object that also has a `currency`. One finding per
logical call.

## Why is this bad
The key is a hash of the serialised arguments. `json.dumps` writes `4500` and `4500.0`
differently, so a model that writes the amount once as an integer and once as a float
produces two keys for one refund, and the service performs it twice. A hash of the raw text
(rather than of sorted keys) also changes with key order. Floats for money invite rounding
errors besides.

## How to fix
Type amounts as integers in minor units (`amount_minor`, `amount_p`) in the tool schema and
validate them before the call; normalise the arguments (sort keys, integral floats to
integers) before deriving the key. `idem-audit key --normalize` shows the normalised key.

## Example
```
14:02:11.402  agent run 7f3a  step 4  tool=issue_refund  args={"order":"A-88214","amount_p":4500.0}
```
`amount_p` is a float: its key differs from the key of `"amount_p":4500`.
"#,
    check,
};

fn check(model: &Model, _settings: &Settings, _shared: &Shared, out: &mut Vec<Finding>) {
    for call in &model.calls {
        let mut problems: Vec<String> = Vec::new();
        let mut evidence = Vec::new();
        // (compact raw, Python form) of each spelling seen; only needed for re-dispatches.
        let mut spellings: Vec<(String, String)> = Vec::new();
        let redispatched = call.dispatches.len() > 1;
        for &d in &call.dispatches {
            let disp = &model.dispatches[d];
            if !has_args(disp) {
                continue;
            }
            let before = problems.len();
            if may_hold_a_float_or_numeric_string(&disp.args_raw) {
                amount_problems(&disp.args(), &mut Vec::new(), &mut problems);
            }
            if redispatched {
                respelled(disp, &mut spellings, &mut problems);
            }
            if problems.len() > before {
                evidence.extend(disp.loc);
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        problems.retain(|p| seen.insert(p.clone()));
        if problems.is_empty() {
            continue;
        }
        let message = format!(
            "{}: a key derived from these arguments changes with their spelling",
            and_list(&problems)
        );
        let mut f = call_finding(&RULE, model, call, message);
        f.key = common_key(call_attempts(model, call));
        f.evidence = evidence;
        out.push(f);
    }
}

/// A dispatch of the call whose raw arguments are spelled unlike an earlier one's.
fn respelled(disp: &Dispatch, spellings: &mut Vec<(String, String)>, problems: &mut Vec<String>) {
    let compact = compact_json(&disp.args_raw);
    if spellings.iter().any(|(c, _)| *c == compact) {
        return;
    }
    let dumps = python_dumps(&disp.args());
    if let Some((first_raw, _)) = spellings.first() {
        let what = if spellings.iter().any(|(_, d)| *d != dumps) {
            "number format"
        } else {
            "key order"
        };
        problems.push(format!(
            "it was dispatched as {first_raw} and again as {compact}, which differ only in {what}"
        ));
    }
    spellings.push((compact, dumps));
}

/// Amount fields holding a float or a string, as `amount_p is the float 4500.0`. The path
/// is a stack of borrowed names, joined only for a field that is reported.
fn amount_problems(v: &Value, path: &mut Vec<String>, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            let money_object = map.contains_key("currency") || map.contains_key("currency_code");
            for (k, child) in map {
                if is_amount_field(k, money_object) {
                    let here = || {
                        let mut p = String::new();
                        for part in path.iter().map(String::as_str).chain([k.as_str()]) {
                            if !p.is_empty() && !part.starts_with('[') {
                                p.push('.');
                            }
                            p.push_str(part);
                        }
                        p
                    };
                    match child {
                        Value::Number(n) if is_float_literal(n.as_str()) => {
                            out.push(format!("`{}` is the float {n}", here()));
                        }
                        Value::String(s) if looks_numeric(s) => {
                            out.push(format!("`{}` is the string \"{s}\"", here()));
                        }
                        _ => {}
                    }
                }
                if matches!(child, Value::Object(_) | Value::Array(_)) {
                    path.push(k.clone());
                    amount_problems(child, path, out);
                    path.pop();
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if matches!(item, Value::Object(_) | Value::Array(_)) {
                    path.push(format!("[{i}]"));
                    amount_problems(item, path, out);
                    path.pop();
                }
            }
        }
        _ => {}
    }
}

/// Can arguments written as `raw` hold a float or a numeric string anywhere? Only then can
/// [`amount_problems`] find one, so only then are they parsed: most arguments are an order id
/// and an integer amount, and their parse was most of this rule's time. Numbers keep their
/// literal text, so a float is a `.`, or an `e` after a digit, outside strings; a string
/// without escapes is its raw text; any escape is left to the parse. (Arguments a parser
/// handed over already parsed are the JSON of `raw`, or `raw` as one string when it is not
/// JSON, which holds no amount field.)
fn may_hold_a_float_or_numeric_string(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                let Some(len) = bytes[start..].iter().position(|&b| b == b'"' || b == b'\\') else {
                    return true;
                };
                // Both ends are ASCII quotes, so the slice is on character boundaries. Names
                // and ids start with a letter, which no number does: cheaper than the parse.
                let text = &raw[start..start + len];
                let starts_with_letter =
                    text.as_bytes().first().is_some_and(u8::is_ascii_alphabetic);
                if bytes[start + len] == b'\\' || (!starts_with_letter && looks_numeric(text)) {
                    return true;
                }
                i = start + len + 1;
            }
            b'.' => return true,
            b'e' | b'E' if i > 0 && bytes[i - 1].is_ascii_digit() => return true,
            _ => i += 1,
        }
    }
    false
}

/// `amount*` anywhere; `value`, `units`, `minor` beside a `currency`. Without allocating:
/// this runs for every argument name of every call.
fn is_amount_field(name: &str, money_object: bool) -> bool {
    let starts_amount = name
        .get(..6)
        .is_some_and(|p| p.eq_ignore_ascii_case("amount"));
    starts_amount
        || (money_object
            && ["value", "units", "minor", "minor_units"]
                .iter()
                .any(|f| name.eq_ignore_ascii_case(f)))
}

/// `4500`, `-12`, `45.00`, ` 7 `: a number in quotes.
fn looks_numeric(s: &str) -> bool {
    let t = s.trim();
    let t = t.strip_prefix(['-', '+']).unwrap_or(t);
    let mut parts = t.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next();
    !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
}

/// The raw JSON without insignificant whitespace, keys in the order written.
fn compact_json(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in raw.trim().chars() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testkit::Trace;

    fn one_call(args: &str) -> Vec<Finding> {
        let mut t = Trace::new();
        t.tool_call(0, "r", 4, "issue_refund", args)
            .attempt(10, "r", 4, 1, None);
        t.check(&RULE)
    }

    #[test]
    fn float_and_string_amounts() {
        let f = one_call(r#"{"order":"A-1","amount_p":4500.0}"#);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message.contains("`amount_p` is the float 4500.0"),
            "{}",
            f[0].message
        );
        let f = one_call(r#"{"order":"A-1","amount_minor":"4500","currency":"GBP"}"#);
        assert!(
            f[0].message
                .contains("`amount_minor` is the string \"4500\""),
            "{}",
            f[0].message
        );
        let f = one_call(r#"{"order":"A-1","price":{"value":45.5,"currency":"GBP"}}"#);
        assert!(
            f[0].message.contains("`price.value` is the float 45.5"),
            "{}",
            f[0].message
        );
    }

    /// The finding's key is the one the call's attempts shared, if any.
    #[test]
    fn the_key_is_the_one_the_calls_attempts_shared() {
        let key = |keys: &[Option<&str>]| {
            let mut t = Trace::new();
            t.tool_call(
                0,
                "r",
                4,
                "issue_refund",
                r#"{"order":"A-1","amount_p":4500.0}"#,
            );
            for (i, k) in keys.iter().enumerate() {
                t.attempt(10 + i as i64 * 100, "r", 4, i as u32 + 1, *k);
            }
            let f = t.check(&RULE);
            assert_eq!(f.len(), 1, "{f:?}");
            f[0].key.clone()
        };
        assert_eq!(key(&[Some("k"), Some("k")]).as_deref(), Some("k"));
        assert_eq!(key(&[None]), None);
        assert_eq!(key(&[Some("k1"), Some("k2")]), None);
    }

    /// The text check skips the parse only for arguments in which the parse finds nothing.
    #[test]
    fn arguments_not_parsed_hold_no_amount_problem() {
        let cases = [
            r#"{"order":"A-1","amount_p":4500}"#,
            r#"{"order":"A-1","amount_p":4500.0}"#,
            r#"{"order":"A-1","amount_p":45E2}"#,
            r#"{"order":"A-1","amount_p":45e2}"#,
            r#"{"order":"A-1","amount_p":"4500"}"#,
            r#"{"order":"A-1","amount_p":" -45.00 "}"#,
            r#"{"order":"A-1","amount_p":"\u0034500"}"#,
            r#"{"order":"A\"1","amount_p":"4500"}"#,
            r#"{"items":[{"amount":1},{"amount":2.5}],"note":"e.g. 3"}"#,
            r#"{"price":{"value":"12","currency":"GBP"},"tag":"x"}"#,
            r#"{"price":{"units":12,"currency":"GBP"},"ok":true}"#,
            r#"{"amount_p":4500,"ok":false,"none":null,"list":[1,2,3]}"#,
            "{\"order\":\"Ä-1\",\"amount_p\":4500}",
            r#"{"order":"A-1","amount_p":4500"#,
            "order=A-1 amount=4500.0",
        ];
        for raw in cases {
            let parsed: Value = serde_json::from_str(raw).unwrap_or(Value::Null);
            let mut found = Vec::new();
            amount_problems(&parsed, &mut Vec::new(), &mut found);
            if !found.is_empty() {
                assert!(may_hold_a_float_or_numeric_string(raw), "{raw}: {found:?}");
            }
        }
        assert!(!may_hold_a_float_or_numeric_string(
            r#"{"order":"A-1","amount_p":4500,"ok":true}"#
        ));
    }

    #[test]
    fn integer_amounts_and_other_floats_are_fine() {
        assert!(
            one_call(r#"{"order":"A-1","amount_p":4500,"confidence":0.93,"note":"12"}"#).is_empty()
        );
        assert!(one_call(r#"{"order":"A-1","amount_p":4500,"value":1.5}"#).is_empty());
    }

    #[test]
    fn redispatch_with_reordered_or_reformatted_args() {
        let mut t = Trace::new();
        t.tool_call(
            0,
            "r",
            4,
            "issue_refund",
            r#"{"order":"A-1","amount_p":4500}"#,
        )
        .tool_call(
            1000,
            "r",
            4,
            "issue_refund",
            r#"{ "amount_p": 4500, "order": "A-1" }"#,
        );
        let f = t.check(&RULE);
        assert_eq!(f.len(), 1);
        assert!(f[0].message.contains("key order"), "{}", f[0].message);
        let mut t = Trace::new();
        t.tool_call(0, "r", 4, "issue_refund", r#"{"order":"A-1","n":4500}"#)
            .tool_call(1000, "r", 4, "issue_refund", r#"{"order":"A-1","n":4.5e3}"#);
        let f = t.check(&RULE);
        assert!(f[0].message.contains("number format"), "{}", f[0].message);
        // Whitespace alone is not a different spelling.
        let mut t = Trace::new();
        t.tool_call(
            0,
            "r",
            4,
            "issue_refund",
            r#"{"order":"A-1","amount_p":4500}"#,
        )
        .tool_call(
            1000,
            "r",
            4,
            "issue_refund",
            r#"{"order": "A-1", "amount_p": 4500}"#,
        );
        assert!(t.check(&RULE).is_empty());
    }

    #[test]
    fn numeric_strings() {
        assert!(looks_numeric("4500") && looks_numeric("-45.00") && looks_numeric(" 7 "));
        assert!(
            !looks_numeric("45.")
                && !looks_numeric("")
                && !looks_numeric("A-1")
                && !looks_numeric("1e3")
        );
        assert_eq!(
            compact_json(r#"{ "a" : "x  y", "b":[1, 2] }"#),
            r#"{"a":"x  y","b":[1,2]}"#
        );
    }
}
