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

/// A function call as Python's `repr` of its arguments writes it, the way job queues log
/// the task they run (`issue_refund(order='A-1', amount_p=4500)`, Dramatiq's message;
/// `rq_tasks.issue_refund(amount_p=4500, order='A-1')`, RQ's job description): the
/// function's (dotted) name, and its arguments as a JSON object (keys sorted), the keyword ones by name
/// and the positional ones, if any, as the array `args`. The arguments are `None` when a
/// value is no JSON (a `Decimal('45.00')`, RQ's `'...'`-cut long value): the call is
/// still read, as one whose arguments are not known.
pub(crate) fn python_call(text: &[u8]) -> Option<(&[u8], Option<String>)> {
    let open = memchr::memchr(b'(', text)?;
    let name = &text[..open];
    let is_name = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.');
    let named = name
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && name.iter().all(is_name);
    let inner = text[open + 1..].strip_suffix(b")")?;
    if !named {
        return None;
    }
    Some((name, call_arguments(inner)))
}

/// `order='A-1', amount_p=4500` as `{"order":"A-1","amount_p":4500}` ([`python_call`]).
fn call_arguments(inner: &[u8]) -> Option<String> {
    let mut positional = Vec::new();
    let mut named = serde_json::Map::new();
    for arg in top_level_items(inner)? {
        let arg = arg.trim_ascii();
        if arg.is_empty() {
            continue;
        }
        let name_len = arg
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count();
        let keyword = name_len > 0
            && !arg[0].is_ascii_digit()
            && arg.get(name_len) == Some(&b'=')
            && arg.get(name_len + 1) != Some(&b'=');
        let value = if keyword { &arg[name_len + 1..] } else { arg };
        let value: serde_json::Value = serde_json::from_str(&python_as_json(value)?).ok()?;
        if keyword {
            let name = std::str::from_utf8(&arg[..name_len]).ok()?;
            named.insert(name.to_owned(), value);
        } else {
            positional.push(value);
        }
    }
    if !positional.is_empty() {
        named.insert("args".to_owned(), serde_json::Value::Array(positional));
    }
    serde_json::to_string(&named).ok()
}

/// The items of a comma-separated list, commas inside quotes and brackets left alone;
/// `None` when a quote or bracket is left open (a value cut short).
fn top_level_items(text: &[u8]) -> Option<Vec<&[u8]>> {
    let (mut items, mut depth, mut quote, mut start) = (Vec::new(), 0usize, None, 0);
    let mut escaped = false;
    for (i, &b) in text.iter().enumerate() {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if b == b'\\' => escaped = true,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'\'' | b'"' => quote = Some(b),
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth = depth.checked_sub(1)?,
                b',' if depth == 0 => {
                    items.push(&text[start..i]);
                    start = i + 1;
                }
                _ => {}
            },
        }
    }
    (quote.is_none() && depth == 0).then_some(())?;
    items.push(&text[start..]);
    Some(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(text: &str) -> Option<(String, Option<String>)> {
        python_call(text.as_bytes()).map(|(n, a)| (String::from_utf8_lossy(n).into_owned(), a))
    }

    #[test]
    fn a_calls_repr_gives_its_function_and_arguments() {
        let (name, args) = call("issue_refund(order='A-1', amount_p=4500)").unwrap();
        assert_eq!(name, "issue_refund");
        assert_eq!(args.as_deref(), Some(r#"{"amount_p":4500,"order":"A-1"}"#));
        let (name, args) =
            call("rq_tasks.issue_refund(amount_p=4500, order='A-1', note=\"a, b\")").unwrap();
        assert_eq!(name, "rq_tasks.issue_refund");
        assert_eq!(
            args.as_deref(),
            Some(r#"{"amount_p":4500,"note":"a, b","order":"A-1"}"#)
        );
        let (_, args) = call("refund('A-1', 4500, items=[1, 2], meta={'k': None})").unwrap();
        assert_eq!(
            args.as_deref(),
            Some(r#"{"args":["A-1",4500],"items":[1,2],"meta":{"k":null}}"#)
        );
        assert_eq!(call("ping()").unwrap().1.as_deref(), Some("{}"));
    }

    #[test]
    fn a_value_that_is_no_json_leaves_the_arguments_unknown() {
        for text in [
            "refund(amount=Decimal('45.00'))",
            "refund(note='a very long note that RQ cut sho...)",
            "refund(note='aaaa'...)",
        ] {
            let read = call(text);
            assert!(matches!(read, Some((_, None)) | None), "{text}: {read:?}");
        }
    }

    #[test]
    fn other_text_is_no_call() {
        for text in [
            "Failed to process message",
            "(order='A-1')",
            "issue refund(order='A-1')",
            "3rd(x=1)",
            "refund(order='A-1'",
        ] {
            assert_eq!(call(text), None, "{text}");
        }
    }
}
