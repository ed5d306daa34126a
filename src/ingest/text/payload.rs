//! An object logged after a message: `refund created: {"refund_id": "rf_1", "amount": 45.0}`
//! (`json.dumps`, `JSON.stringify`) or `Refund created {'refund_id': 'rf_1'}` (a Python
//! dict as `%s` writes it). Its top-level members are read as the line's `name=value`
//! tokens, borrowed from the line: values with escapes, nested objects and arrays, and
//! anything not a plain scalar (`Decimal('45.00')`, `None`) are passed over.

/// Calls `member(name, value)` for each plain member of the object `obj` (from `{` to its
/// last `}`); false, having given some members or none, when `obj` is not such an object.
pub(super) fn members<'a>(obj: &'a [u8], mut member: impl FnMut(&'a [u8], &'a [u8])) -> bool {
    let Some(inner) = obj.strip_prefix(b"{").and_then(|o| o.strip_suffix(b"}")) else {
        return false;
    };
    let mut at = 0;
    loop {
        at = skip_blanks(inner, at);
        if at >= inner.len() {
            return true;
        }
        let Some((name, end)) = quoted(inner, at) else {
            return false;
        };
        at = skip_blanks(inner, end);
        if inner.get(at) != Some(&b':') {
            return false;
        }
        at = skip_blanks(inner, at + 1);
        let (value, end) = match inner.get(at) {
            Some(b'"' | b'\'') => match quoted(inner, at) {
                Some((v, end)) => (Some(v), end),
                None => return false,
            },
            Some(b'{' | b'[') => match nested_end(inner, at) {
                Some(end) => (None, end),
                None => return false,
            },
            Some(_) => {
                let end = (inner[at..].iter())
                    .position(|&b| b == b',')
                    .map_or(inner.len(), |n| at + n);
                let v = inner[at..end].trim_ascii();
                let scalar = v
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || b"_.+-".contains(&b));
                let none = matches!(v, b"null" | b"None");
                (Some(v).filter(|_| scalar && !none), end)
            }
            None => return false,
        };
        if let Some(v) = value {
            member(name, v);
        }
        at = skip_blanks(inner, end);
        match inner.get(at) {
            Some(b',') => at += 1,
            None => return true,
            Some(_) => return false,
        }
    }
}

fn skip_blanks(b: &[u8], mut at: usize) -> usize {
    while b.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// A string in `"` or `'` at `at` without escapes: its inside and the index past it.
fn quoted(b: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let quote = *b.get(at)?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let len = b[at + 1..].iter().position(|&c| c == quote)?;
    let inside = &b[at + 1..at + 1 + len];
    (!inside.contains(&b'\\')).then_some((inside, at + len + 2))
}

/// Past the object or array at `at`, its strings read as [`quoted`] reads them.
pub(super) fn nested_end(b: &[u8], mut at: usize) -> Option<usize> {
    let mut depth = 0u32;
    while let Some(&c) = b.get(at) {
        match c {
            b'"' | b'\'' => {
                at = quoted(b, at)?.1;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(at + 1);
                }
            }
            _ => {}
        }
        at += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(obj: &str) -> Option<Vec<(String, String)>> {
        let mut out = Vec::new();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        members(obj.as_bytes(), |n, v| out.push((text(n), text(v)))).then_some(out)
    }

    #[test]
    fn json_and_python_objects_give_their_plain_members() {
        let pairs = |p: &[(&str, &str)]| {
            Some(
                p.iter()
                    .map(|(n, v)| (n.to_string(), v.to_string()))
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            read(
                r#"{"refund_id": "rf_1", "amount": 45.0, "meta": {"a": [1, "}"]}, "currency": "GBP"}"#
            ),
            pairs(&[
                ("refund_id", "rf_1"),
                ("amount", "45.0"),
                ("currency", "GBP")
            ])
        );
        assert_eq!(
            read("{'refund_id': 'rf_1', 'amount': Decimal('45.00'), 'note': None, 'ok': True}"),
            pairs(&[("refund_id", "rf_1"), ("ok", "True")])
        );
        assert_eq!(read("{}"), pairs(&[]));
        for bad in [
            r#"{"a" 1}"#,
            r#"{"a": "x\"y"}"#,
            r#"{"a": 1"#,
            r#"{a: 1}"#,
            r#"{"a": {"b": 1}"#,
        ] {
            assert!(read(bad).is_none(), "{bad}");
        }
    }
}
