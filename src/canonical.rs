//! Canonical arguments and the reference idempotency key (SPEC §4).
//!
//! Two spellings matter. The *Python form* reproduces
//! `json.dumps(args, sort_keys=True, separators=(",", ":"))` byte for byte (floats as
//! Python's `repr`, non-ASCII as `\uXXXX`), so that [`reference_key`] equals the key an agent
//! computes with the write-up's function. The *canonical form* groups attempts into logical
//! calls and compares payloads: the Python form after the integral-float rule (`4500.0` is
//! written `4500`), so that it is also exactly what `key --normalize` hashes.
//! `scripts/key_vectors.py` computes both in Python; `tests/key_vectors.rs` checks them.

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt::Write;

/// Key-like argument names, lower case without `-` or `_`.
const KEY_FIELDS: &[&str] = &[
    "idempotencykey",
    "idempotencytoken",
    "idempotencyid",
    "requestid",
    "clientrequestid",
    "dedupkey",
    "dedupekey",
    "deduplicationkey",
    "deduplicationid",
];

/// Is `name` a key-like argument name ([`KEY_FIELDS`], compared without case, `-` or `_`)?
/// Compares without allocating: this runs for every argument name of every keyed call.
pub fn is_key_field(name: &str) -> bool {
    let squashed = || {
        name.bytes()
            .filter(|b| *b != b'-' && *b != b'_')
            .map(|b| b.to_ascii_lowercase())
    };
    KEY_FIELDS.iter().any(|k| squashed().eq(k.bytes()))
}

/// The canonical form: sorted keys, no whitespace, `4500.0` written `4500` (integral floats
/// below 2^53, where every integer is exactly a float), non-ASCII escaped as Python does.
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out, Style::Canonical);
    out
}

/// [`canonical`] of a flat object ([`crate::flat_json::flat_members`]) from its
/// members as written, without building its value: a month of tool calls have such
/// arguments. Written into `out` (cleared first, so that one buffer serves every call);
/// `false` when a key repeats (the parsed object keeps the last; left to it).
pub fn canonical_flat(members: &mut [(&str, &str)], out: &mut String) -> bool {
    // A parsed object's keys are in byte order too (see `write_value`).
    members.sort_unstable_by(|a, b| a.0.cmp(b.0));
    if members.windows(2).any(|w| w[0].0 == w[1].0) {
        return false;
    }
    out.clear();
    out.push('{');
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        // Keys and strings of a flat object need no escapes: written as they are.
        out.push('"');
        out.push_str(key);
        out.push_str("\":");
        match value.as_bytes().first() {
            Some(b'"' | b't' | b'f' | b'n') => out.push_str(value),
            _ => write_number(value, out, Style::Canonical),
        }
    }
    out.push('}');
    true
}

/// What Python's `json.dumps(value, sort_keys=True, separators=(",", ":"))` returns.
pub fn python_dumps(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out, Style::Python);
    out
}

/// The write-up's `idempotency_key(run, step, tool, args)`: the first 32 hex characters of
/// `sha256("RUN|STEP|TOOL|" + json.dumps(args, sort_keys=True, separators=(",",":")))`.
/// With `normalize`, the canonical form is hashed instead (integral floats as integers).
pub fn reference_key(run: &str, step: u32, tool: &str, args: &Value, normalize: bool) -> String {
    let body = if normalize {
        canonical(args)
    } else {
        python_dumps(args)
    };
    let material = format!("{run}|{step}|{tool}|{body}");
    let digest = Sha256::digest(material.as_bytes());
    let mut hex = String::with_capacity(64);
    for b in digest {
        let _ = write!(hex, "{b:02x}");
    }
    hex.truncate(32);
    hex
}

#[derive(Clone, Copy, PartialEq)]
enum Style {
    Canonical,
    Python,
}

fn write_value(value: &Value, out: &mut String, style: Style) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // The literal as written (`arbitrary_precision`): no allocation, no rounding.
        Value::Number(n) => write_number(n.as_str(), out, style),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out, style);
            }
            out.push(']');
        }
        Value::Object(map) => {
            // serde_json's map is a BTreeMap here (no `preserve_order`), so iteration is
            // sorted by UTF-8 bytes, which is the same order as Python's code-point sort.
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(k, out);
                out.push(':');
                write_value(v, out, style);
            }
            out.push('}');
        }
    }
}

/// True when a JSON number is written as a float (`4500.0`, `1e3`).
pub fn is_float_literal(text: &str) -> bool {
    text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
}

/// 2^53: below it every integral float is an exact integer (Python's `normalize` in
/// `scripts/key_vectors.py` uses the same bound).
const MAX_EXACT: f64 = 9_007_199_254_740_992.0;

fn write_number(text: &str, out: &mut String, style: Style) {
    if !is_float_literal(text) {
        // Python's int() drops a minus sign on zero; JSON forbids other leading zeros.
        let digits = text.trim_start_matches('-');
        if digits.bytes().all(|b| b == b'0') {
            out.push('0');
        } else {
            out.push_str(text);
        }
        return;
    }
    let f: f64 = text.parse().unwrap_or(f64::NAN);
    if style == Style::Canonical && f.is_finite() && f.fract() == 0.0 && f.abs() < MAX_EXACT {
        let _ = write!(out, "{}", f as i64);
        return;
    }
    out.push_str(&python_float_repr(f));
}

/// Python's `repr(float)`: the shortest round-trip digits, scientific notation when the
/// decimal exponent is below -4 or at least 16 (`1e+20`, `1.5e-07`), else fixed (`4500.0`).
pub fn python_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    // Rust's `{:e}` is also shortest-round-trip: `1.5e-7`, `4.5e3`, `-0e0`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.push_str(&"0".repeat(int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.push_str(&"0".repeat((-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    out
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    let mut rest = s;
    // Printable ASCII other than `"` and `\` is written as it is: a run at a time.
    while !rest.is_empty() {
        let plain = rest
            .bytes()
            .position(|b| !(b' '..=b'~').contains(&b) || b == b'"' || b == b'\\')
            .unwrap_or(rest.len());
        out.push_str(&rest[..plain]);
        let Some(c) = rest[plain..].chars().next() else {
            break;
        };
        write_escaped(c, out);
        rest = &rest[plain + c.len_utf8()..];
    }
    out.push('"');
}

/// A character outside printable ASCII, or `"` or `\`, as Python's `json.dumps` escapes it.
fn write_escaped(c: char, out: &mut String) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{08}' => out.push_str("\\b"),
        '\u{0c}' => out.push_str("\\f"),
        c if (c as u32) < 0x20 => {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        // Python's ensure_ascii escapes everything outside ' '..='~', DEL included.
        c if (c as u32) >= 0x7f => {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        }
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn canonical_sorts_and_normalises_integral_floats() {
        assert_eq!(
            canonical(&v(
                r#"{ "order": "A-1", "amount_p": 4500.0, "x": {"b":1,"a":[1.5, 2.0]} }"#
            )),
            r#"{"amount_p":4500,"order":"A-1","x":{"a":[1.5,2],"b":1}}"#
        );
    }

    #[test]
    fn python_dumps_matches_python() {
        assert_eq!(
            python_dumps(&v(r#"{"b":4500.0,"a":"é"}"#)),
            r#"{"a":"\u00e9","b":4500.0}"#
        );
        assert_eq!(python_float_repr(1e20), "1e+20");
        assert_eq!(python_float_repr(1.5e-7), "1.5e-07");
        assert_eq!(python_float_repr(-0.0), "-0.0");
        assert_eq!(python_float_repr(0.0001), "0.0001");
        assert_eq!(python_float_repr(1e16), "1e+16");
        assert_eq!(python_float_repr(123456789012345.6), "123456789012345.6");
        assert_eq!(
            python_dumps(&v(r#"["😀", "\u007f", -0]"#)),
            r#"["\ud83d\ude00","\u007f",0]"#
        );
    }

    #[test]
    fn reference_key_of_the_incident_call() {
        let args = v(r#"{"order":"A-88214","amount_p":4500}"#);
        let reordered = v(r#"{"amount_p":4500,"order":"A-88214"}"#);
        let key = reference_key("7f3a", 4, "issue_refund", &args, false);
        // What the write-up's Python function returns for the same inputs.
        assert_eq!(key, "21f4d5951991bb054dcaf0900af3d015");
        assert_eq!(
            key,
            reference_key("7f3a", 4, "issue_refund", &reordered, false)
        );
        assert_ne!(key, reference_key("7f3a", 5, "issue_refund", &args, false));
    }
}
