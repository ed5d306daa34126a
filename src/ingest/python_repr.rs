//! Values as Python's `repr` writes them (structlog's KeyValueRenderer, `%s` of a dict):
//! read as the JSON they stand for.

/// JSON for an object or array written as Python prints one (`{'order_id': 'A-1', 'ok':
/// True, 'note': None}`): strings in either quote, `True`, `False` and `None`. `None` for
/// anything else (a `Decimal('45.00')`, a set, a tuple), which stays as written and is
/// reported as arguments that are not JSON.
pub(crate) fn python_as_json(value: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(value).ok()?;
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' | '"' => {
                out.push('"');
                let mut closed = false;
                while let Some((_, s)) = chars.next() {
                    match s {
                        '\\' => match chars.next()?.1 {
                            '\'' => out.push('\''),
                            e => {
                                out.push('\\');
                                out.push(e);
                            }
                        },
                        s if s == c => {
                            closed = true;
                            break;
                        }
                        '"' => out.push_str("\\\""),
                        s => out.push(s),
                    }
                }
                if !closed {
                    return None;
                }
                out.push('"');
            }
            c if c.is_ascii_alphabetic() => {
                let word_end = text[i..]
                    .find(|w: char| !w.is_ascii_alphanumeric() && w != '_')
                    .map_or(text.len(), |n| i + n);
                out.push_str(match &text[i..word_end] {
                    "True" => "true",
                    "False" => "false",
                    "None" => "null",
                    _ => return None,
                });
                while chars.peek().is_some_and(|&(j, _)| j < word_end) {
                    chars.next();
                }
            }
            c => out.push(c),
        }
    }
    serde_json::from_str::<serde::de::IgnoredAny>(&out).ok()?;
    Some(out)
}
