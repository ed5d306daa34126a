//! pino-pretty's layout (Node.js), the usual way a pino log is read during development:
//! `[07:41:22.014] INFO (payments/13151): refund created` (or `[2026-12-06 07:42:10.902
//! +0000]` with `translateTime`), the logged object's members on the lines after it, four
//! blanks in (`    refundId: "re_0002kufv"`), or after the message on the same line with
//! `--singleLine` (`refund created {"refundId":...}`). The name and process in parentheses
//! are read past, and the members below a message are its tokens (`refundId=re_0002kufv`),
//! as a logger's fields after its message are.

/// The message after pino-pretty's `(name/pid):`, `(pid):` or `(name/pid on host):`.
pub(super) fn without_origin(msg: &[u8]) -> Option<&[u8]> {
    let inner = msg.strip_prefix(b"(")?;
    let close = inner.iter().position(|&b| b == b')')?;
    let origin = &inner[..close];
    let plain =
        |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.' | b' ' | b'@');
    let has_pid = origin
        .split(|&b| b == b'/' || b == b' ')
        .any(|w| !w.is_empty() && w.iter().all(u8::is_ascii_digit));
    let rest = inner[close + 1..].strip_prefix(b": ")?;
    (has_pid && origin.iter().all(plain) && !rest.is_empty()).then_some(rest)
}

/// A member line: four blanks, a name, `: `, a value.
pub(super) fn member(raw: &[u8]) -> Option<(&[u8], &[u8])> {
    let line = raw.strip_prefix(b"    ")?;
    let colon = line.iter().position(|&b| b == b':')?;
    let (name, value) = (&line[..colon], line[colon + 1..].strip_prefix(b" ")?);
    let is_name = name
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && name.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_');
    is_name.then_some((name, value.trim_ascii_end()))
}

/// The members below a message, as tokens to add to it (`  refundId=re_0002kufv  amount=
/// 4500`): the lines `ahead` (`line_end(k)` where the `k`th ends) that are member lines with
/// a plain value (a string, a number, `true`, `false`, `null`), up to the first that is
/// not. `None` when the next line is no member line.
pub(super) fn members_below(
    bytes: &[u8],
    line_end: impl Fn(usize) -> Option<usize>,
) -> Option<Vec<u8>> {
    let mut tokens = Vec::new();
    let mut start = 0;
    // Inside a nested object or array: its lines are passed over to its closing one.
    let mut nested = false;
    for k in 0.. {
        let Some(end) = line_end(k) else { break };
        let line = &bytes[start..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        start = end + 1;
        if nested {
            if !line.starts_with(b"    ") {
                break;
            }
            let closing = line.strip_prefix(b"    ").and_then(|l| l.first());
            nested = !matches!(closing, Some(b'}' | b']'));
            continue;
        }
        let Some((name, value)) = member(line) else {
            break;
        };
        let value = match value.first() {
            Some(b'"') => match serde_json::from_slice::<String>(value) {
                Ok(s) if !s.contains("  ") && !s.is_empty() => s.into_bytes(),
                _ => continue,
            },
            Some(b) if b.is_ascii_digit() || *b == b'-' => value.to_vec(),
            _ if matches!(value, b"true" | b"false" | b"null") => value.to_vec(),
            // A nested object or array (pino-http's `req: {`): its lines follow, and what it
            // holds is not read.
            Some(b'{' | b'[') => {
                nested = !matches!(value, b"{}" | b"[]");
                continue;
            }
            _ => break,
        };
        tokens.extend_from_slice(b"  ");
        tokens.extend_from_slice(name);
        tokens.push(b'=');
        tokens.extend_from_slice(&value);
    }
    (!tokens.is_empty()).then_some(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_in_parentheses_is_read_past() {
        for (msg, rest) in [
            (
                &b"(payments/13151): refund created"[..],
                Some(&b"refund created"[..]),
            ),
            (b"(13151): refund created", Some(b"refund created")),
            (
                b"(payments/13151 on vm): refund created",
                Some(b"refund created"),
            ),
            (b"(see below): refund created", None),
            (b"(payments/13151) refund created", None),
        ] {
            assert_eq!(
                without_origin(msg),
                rest,
                "{}",
                String::from_utf8_lossy(msg)
            );
        }
    }

    #[test]
    fn plain_members_below_are_tokens() {
        let text = b"    req: {\n      \"method\": \"POST\"\n    }\n    refundId: \"re_0002kufv\"\n    orderId: \"A-1\"\n    amount: 4500\n    meta: {\n      a: 1\n    }\n    currency: \"GBP\"\n[07:41:22.314] INFO (payments/1): next\n";
        let ends: Vec<usize> = (0..text.len()).filter(|&i| text[i] == b'\n').collect();
        let tokens = members_below(text, |k| ends.get(k).copied()).unwrap();
        assert_eq!(
            String::from_utf8(tokens).unwrap(),
            "  refundId=re_0002kufv  orderId=A-1  amount=4500  currency=GBP"
        );
        let none = b"[07:41:22.314] INFO (payments/1): next\n";
        assert_eq!(
            members_below(none, |k| (k == 0).then_some(none.len() - 1)),
            None
        );
        assert_eq!(member(b"  two: blanks"), None);
        assert_eq!(
            member(b"    refundId: \"x\""),
            Some((&b"refundId"[..], &b"\"x\""[..]))
        );
    }
}
