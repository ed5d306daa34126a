//! A tool call in a program's own words, its fields as `name=value` tokens one blank apart
//! among them: `tool call run_id=r1 step=4 tool=issue_refund args={"order_id": "A-1"}`
//! (an f-string, or a logger joining its fields), or structlog's console layout, which
//! writes a dict as Python prints it: `args={'order_id': 'A-1', 'amount': 4500}`. Read as
//! one field, such a line named no call, and the call's requests had none to belong to.

use super::payload::nested_end;

/// The value of the token `name` (any case) among the words of `text`: up to the next
/// blank, or a whole object or array (`args={"a": 1, "b": 2}`), or a quoted string. The
/// inside of an object is never searched, so `step=` in an argument is not the call's.
pub(super) fn token_in<'a>(text: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let mut at = 0;
    while at < text.len() {
        if text[at] == b' ' {
            at += 1;
            continue;
        }
        let word_name_end = (text[at..].iter())
            .position(|&b| !(b.is_ascii_alphanumeric() || b == b'_'))
            .map_or(text.len(), |n| at + n);
        let is_token = word_name_end > at && text.get(word_name_end) == Some(&b'=');
        let value_at = word_name_end + 1;
        let end = match text.get(value_at) {
            Some(b'{' | b'[') if is_token => nested_end(text, value_at),
            Some(&q @ (b'"' | b'\'')) if is_token => (text[value_at + 1..].iter())
                .position(|&b| b == q)
                .map(|n| value_at + n + 2),
            _ => None,
        }
        .unwrap_or_else(|| next_blank(text, at));
        if is_token && text[at..word_name_end].eq_ignore_ascii_case(name) {
            return Some(unquoted(without_comma(&text[value_at..end])));
        }
        at = end;
    }
    None
}

/// A value that opens an object or array, cut where it closes, and what follows it
/// (`{'a': 1} run_id=r1 step=4`, a field whose tokens went on after the object); any
/// other value whole, with nothing after it.
pub(super) fn object_and_after(value: &[u8]) -> (&[u8], &[u8]) {
    match value.first() {
        Some(b'{' | b'[') => match nested_end(value, 0) {
            Some(end) => value.split_at(end),
            None => (value, &[]),
        },
        _ => (value, &[]),
    }
}

/// A field of words then `name=value` tokens one blank apart (`POST attempt=1 url=http://x`,
/// `refund response status=201 Created refund_id=re_1`, as tracing's and slog's text
/// layouts join a message and its fields): the words before the first token, and each
/// token, a word that is no token continuing the value before it (`status=201 Created`,
/// Display of a status; `error=error sending request for url (...)`). `None` without a
/// token after a word.
type Token<'a> = (&'a [u8], &'a [u8]);

pub(super) fn words_then_tokens(field: &[u8]) -> Option<(&[u8], Vec<Token<'_>>)> {
    let mut tokens: Vec<Token> = Vec::new();
    let mut head_end = None;
    let mut at = 0;
    // Where the value being read started, and where it ends so far.
    let mut open: Option<(usize, usize)> = None;
    while at < field.len() {
        if field[at] == b' ' {
            at += 1;
            continue;
        }
        let name_end = (field[at..].iter())
            .position(|&b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'.'))
            .map_or(field.len(), |n| at + n);
        let is_token =
            name_end > at && field[at].is_ascii_alphabetic() && field.get(name_end) == Some(&b'=');
        if !is_token {
            let end = next_blank(field, at);
            match open.as_mut() {
                Some((_, value_end)) => *value_end = end,
                None => head_end = Some(end),
            }
            at = end;
            continue;
        }
        close(field, &mut tokens, open);
        let value_at = name_end + 1;
        let end = match field.get(value_at) {
            Some(b'{' | b'[') => nested_end(field, value_at),
            Some(&q @ (b'"' | b'\'')) => (field[value_at + 1..].iter())
                .position(|&b| b == q)
                .map(|n| value_at + n + 2),
            _ => None,
        }
        .unwrap_or_else(|| next_blank(field, value_at));
        tokens.push((&field[at..name_end], &[]));
        open = Some((value_at, end));
        at = end;
    }
    close(field, &mut tokens, open);
    let head = &field[..head_end?];
    (!tokens.is_empty()).then_some((head, tokens))
}

/// Gives the last token its value, `field[start..end]` of the value being read.
fn close<'a>(field: &'a [u8], tokens: &mut [Token<'a>], open: Option<(usize, usize)>) {
    if let (Some((start, end)), Some(last)) = (open, tokens.last_mut()) {
        last.1 = unquoted(without_comma(&field[start..end]));
    }
}

/// A value without the comma that separates it from the next token (`tool=issue_refund,
/// runId=7f3a, step=2`, as a Java or JavaScript program joins them).
fn without_comma(value: &[u8]) -> &[u8] {
    value.strip_suffix(b",").unwrap_or(value)
}

fn next_blank(text: &[u8], from: usize) -> usize {
    (text[from..].iter())
        .position(|&b| b == b' ')
        .map_or(text.len(), |n| from + n)
}

fn unquoted(value: &[u8]) -> &[u8] {
    match value {
        [b'"', inner @ .., b'"'] | [b'\'', inner @ .., b'\''] => inner,
        _ => value,
    }
}
pub(super) use crate::ingest::python_repr::python_as_json;

#[cfg(test)]
mod tests {
    use super::*;

    fn token<'a>(text: &'a str, name: &str) -> Option<&'a str> {
        token_in(text.as_bytes(), name.as_bytes()).map(|v| std::str::from_utf8(v).unwrap())
    }

    #[test]
    fn tokens_among_words_are_found_with_their_whole_values() {
        let line = r#"tool call run_id=r1 step=4 tool=issue_refund args={"order_id": "A-1", "step": 9} note="two words""#;
        assert_eq!(token(line, "run_id"), Some("r1"));
        assert_eq!(token(line, "step"), Some("4"));
        assert_eq!(token(line, "TOOL"), Some("issue_refund"));
        assert_eq!(
            token(line, "args"),
            Some(r#"{"order_id": "A-1", "step": 9}"#)
        );
        assert_eq!(token(line, "note"), Some("two words"));
        // Tokens joined by `, `.
        let joined = r#"Executing tool call: tool=issue_refund, runId=7f3a, step=2, args={"a": 1}"#;
        assert_eq!(token(joined, "runId"), Some("7f3a"));
        assert_eq!(token(joined, "step"), Some("2"));
        assert_eq!(token(joined, "args"), Some(r#"{"a": 1}"#));
        // Names inside an object, or words that are no token, are not tokens.
        assert_eq!(token(line, "order_id"), None);
        assert_eq!(token("tool call for run r1", "run"), None);
        assert_eq!(token("a=b=c", "b"), None);
        // An object left open runs to the next blank, never past the line.
        assert_eq!(token("args={'a': 1 step=2", "args"), Some("{'a':"));
        assert_eq!(token("args={'a': 1 step=2", "step"), Some("2"));
    }

    #[test]
    fn words_then_tokens_are_split_and_free_words_join_the_value_before_them() {
        let split = |f: &'static str| {
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            words_then_tokens(f.as_bytes()).map(|(head, tokens)| {
                let tokens: Vec<(String, String)> =
                    tokens.iter().map(|(n, v)| (text(n), text(v))).collect();
                (text(head), tokens)
            })
        };
        let pair = |n: &str, v: &str| (n.to_string(), v.to_string());
        assert_eq!(
            split(r#"POST attempt=1 url=http://x/v1 idempotency_key="-""#),
            Some((
                "POST".into(),
                vec![
                    pair("attempt", "1"),
                    pair("url", "http://x/v1"),
                    pair("idempotency_key", "-")
                ]
            ))
        );
        assert_eq!(
            split("refund response status=201 Created refund_id=re_1"),
            Some((
                "refund response".into(),
                vec![pair("status", "201 Created"), pair("refund_id", "re_1")]
            ))
        );
        assert_eq!(
            split(r#"retrying error=error sending request for url (http://x) args={"a": 1} n=2"#),
            Some((
                "retrying".into(),
                vec![
                    pair("error", "error sending request for url (http://x)"),
                    pair("args", r#"{"a": 1}"#),
                    pair("n", "2")
                ]
            ))
        );
        // Words alone, tokens alone: not this shape.
        assert_eq!(split("refund created for order A-1"), None);
        assert_eq!(split("attempt=1 url=http://x"), None);
    }

    #[test]
    fn an_object_ends_where_it_closes() {
        let split = |v: &'static str| {
            let (a, b) = object_and_after(v.as_bytes());
            (
                std::str::from_utf8(a).unwrap(),
                std::str::from_utf8(b).unwrap(),
            )
        };
        assert_eq!(split("{'a': 1} run_id=r1"), ("{'a': 1}", " run_id=r1"));
        assert_eq!(split("[1, 2]"), ("[1, 2]", ""));
        assert_eq!(split("{'a': 1"), ("{'a': 1", ""));
        assert_eq!(split("r1 step=2"), ("r1 step=2", ""));
    }

    #[test]
    fn python_objects_become_json() {
        let json = |s: &str| python_as_json(s.as_bytes());
        assert_eq!(
            json(
                r#"{'order_id': 'A-1', 'amount': 4500, 'ok': True, 'note': None, 'who': "O'Brien"}"#
            )
            .as_deref(),
            Some(
                r#"{"order_id": "A-1", "amount": 4500, "ok": true, "note": null, "who": "O'Brien"}"#
            )
        );
        assert_eq!(
            json(r#"{'q': 'say "hi"', 'it\'s': 1}"#).as_deref(),
            Some(r#"{"q": "say \"hi\"", "it's": 1}"#)
        );
        // Not Python's plain values: left alone.
        for not_plain in [
            "{'amount': Decimal('45.00')}",
            "{'a', 'b'}",
            "{'a': 1",
            "{'a': nan}",
        ] {
            assert_eq!(json(not_plain), None, "{not_plain}");
        }
    }
}
