//! The span context Rust's `tracing-subscriber` writes between the level and the message:
//! `request{method=POST uri=/v1/refunds}:create_refund{order_id=A-1}: payments: refund
//! created refund_id=re_1 ...` (its default layout; `request:create_refund: ...` in its
//! compact one). Not read past, every line inside a span was ignored; and the fields of the
//! spans are the line's too: the order a handler's span names, the run and step of the
//! tool whose request the line logs.

use super::payload::nested_end;

/// The message after a span context at the start of `msg`, and each span's fields (`a=1
/// b="x"`), innermost first; `None` when `msg` starts with none. A context is one or more
/// spans, each a name and perhaps its fields in braces, joined by `:` and ended by `: `;
/// a lone name without fields is left to the logger prefixes (`agent: ...`).
pub(super) fn context(msg: &[u8]) -> Option<(&[u8], Vec<&[u8]>)> {
    let mut at = 0;
    let mut spans = 0;
    let mut fields = Vec::new();
    loop {
        let name_len =
            (msg[at..].iter()).position(|&b| !(b.is_ascii_alphanumeric() || b == b'_'))?;
        if name_len == 0 || !(msg[at].is_ascii_alphabetic() || msg[at] == b'_') {
            return None;
        }
        at += name_len;
        if msg.get(at) == Some(&b'{') {
            let end = nested_end(msg, at)?;
            let inner = msg[at + 1..end - 1].trim_ascii();
            if !inner.is_empty() {
                fields.push(inner);
            }
            at = end;
        }
        spans += 1;
        if msg.get(at) != Some(&b':') {
            return None;
        }
        at += 1;
        match msg.get(at) {
            Some(b' ') => break,
            Some(b) if b.is_ascii_alphabetic() || *b == b'_' => continue,
            _ => return None,
        }
    }
    if fields.is_empty() && spans < 2 {
        return None;
    }
    fields.reverse();
    let rest = msg[at..].trim_ascii_start();
    (!rest.is_empty()).then_some((rest, fields))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(msg: &str) -> Option<(String, Vec<String>)> {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        context(msg.as_bytes()).map(|(rest, f)| (text(rest), f.into_iter().map(text).collect()))
    }

    #[test]
    fn spans_are_read_past_and_their_fields_kept_innermost_first() {
        assert_eq!(
            read(
                "request{method=POST uri=/v1/refunds}:create_refund{order_id=A-1}: payments: refund created"
            ),
            Some((
                "payments: refund created".into(),
                vec!["order_id=A-1".into(), "method=POST uri=/v1/refunds".into()]
            ))
        );
        assert_eq!(
            read(r#"issue_refund{run="7f3a" args={"a": 1}}: agent::tools: POST"#),
            Some((
                "agent::tools: POST".into(),
                vec![r#"run="7f3a" args={"a": 1}"#.into()]
            ))
        );
        // The compact layout: names only.
        assert_eq!(
            read("request:create_refund: payments: refund created"),
            Some(("payments: refund created".into(), vec![]))
        );
        assert_eq!(read("empty{}: x"), None);
    }

    #[test]
    fn other_messages_have_no_context() {
        for msg in [
            "agent: POST https://x/v1/refunds",
            "refund created: {\"refund_id\": \"re_1\"}",
            "refund{id=1} created",
            "POST https://x/v1/refunds",
            "a{b=1}:",
            "a{b=1: x",
            "requests.exceptions.ReadTimeout: HTTPConnectionPool(host='x')",
        ] {
            assert_eq!(read(msg), None, "{msg}");
        }
    }
}
