//! SPEC §3.1's lines written with one blank between fields, as `console.log(stamp,
//! 'agent run', run, 'step', step, ...)` joins its arguments: `agent run r4 step 4
//! tool=issue_refund args={...}`, `POST https://... (attempt 1)`, `201 Created
//! refund_id=re_1`. Read as one field, the tool call was skipped (`agent run` with a run id
//! of several words) and the requests and answers ignored: a whole trace lost. Only these
//! three shapes are rewritten, field by field, into their two-blank spelling.

use crate::event::HTTP_METHODS;

/// Whether `word` is an HTTP method, in capitals.
pub(super) fn is_method(word: &[u8]) -> bool {
    HTTP_METHODS.contains(&word)
}

/// Tokens whose value runs to the end of the line (a JSON object, an error's words).
const TO_THE_END: [&[u8]; 3] = [b"args=", b"error=", b"message="];

/// The line's two-blank spelling, if `msg` is one of the shapes written with one blank.
pub(super) fn respaced(msg: &[u8]) -> Option<Vec<u8>> {
    let words: Vec<&[u8]> = msg
        .split(|&b| b == b' ')
        .filter(|w| !w.is_empty())
        .collect();
    let mut fields: Vec<Vec<u8>> = Vec::new();
    let mut i = match words.as_slice() {
        [b"agent", b"run", run, ..] => {
            fields.push([&b"agent run "[..], run].concat());
            3
        }
        [method, url, ..] if HTTP_METHODS.contains(method) && is_url(url) => {
            fields.push([*method, b" ", *url].concat());
            2
        }
        [status, ..] if is_status(status) => {
            // The status and its reason's words, up to the first token.
            let reason = words[1..]
                .iter()
                .take_while(|w| !w.contains(&b'=') && !w.starts_with(b"("))
                .count();
            fields.push(words[..1 + reason].join(&b' '));
            1 + reason
        }
        _ => return None,
    };
    while let Some(&word) = words.get(i) {
        i += 1;
        if TO_THE_END.iter().any(|t| word.starts_with(t)) {
            // From the token's start to the end of the line, blanks and all.
            let start = word.as_ptr() as usize - msg.as_ptr() as usize;
            fields.push(msg[start..].trim_ascii_end().to_vec());
            break;
        }
        let field = match word {
            b"step"
                if words
                    .get(i)
                    .is_some_and(|n| n.iter().all(u8::is_ascii_digit)) =>
            {
                i += 1;
                [&b"step "[..], words[i - 1]].concat()
            }
            // `(attempt 2)`: to the closing parenthesis.
            w if w.starts_with(b"(") && !w.ends_with(b")") => {
                let end = (i..words.len()).find(|&k| words[k].ends_with(b")"))?;
                let field = words[i - 1..=end].join(&b' ');
                i = end + 1;
                field
            }
            // `Idempotency-Key: K`: a header's name and its value.
            w if w.ends_with(b":") && words.get(i).is_some() => {
                i += 1;
                [w, b" ", words[i - 1]].concat()
            }
            w => w.to_vec(),
        };
        fields.push(field);
    }
    (fields.len() > 1).then(|| fields.join(&b"  "[..]))
}

fn is_url(word: &[u8]) -> bool {
    word.starts_with(b"/") || word.windows(3).any(|w| w == b"://")
}

fn is_status(word: &[u8]) -> bool {
    word.len() == 3 && word.iter().all(u8::is_ascii_digit) && (b'1'..=b'5').contains(&word[0])
}

#[cfg(test)]
mod tests {
    use super::respaced;

    #[test]
    fn the_spec_shapes_with_one_blank_get_their_fields() {
        let cases = [
            (
                r#"agent run r4 step 4 tool=issue_refund args={"order_id":"A-1", "amount_minor":4500}"#,
                r#"agent run r4  step 4  tool=issue_refund  args={"order_id":"A-1", "amount_minor":4500}"#,
            ),
            ("agent run r4 step 4 ok", "agent run r4  step 4  ok"),
            (
                "agent run r4 step 4 failed error=409 Conflict",
                "agent run r4  step 4  failed  error=409 Conflict",
            ),
            (
                "POST http://127.0.0.1:42385/v1/refunds (attempt 1) Idempotency-Key: k-1",
                "POST http://127.0.0.1:42385/v1/refunds  (attempt 1)  Idempotency-Key: k-1",
            ),
            (
                "201 Created refund_id=re_86a1 amount_minor=4500 currency=GBP",
                "201 Created  refund_id=re_86a1  amount_minor=4500  currency=GBP",
            ),
            (
                "503 Service Unavailable (attempt 2)",
                "503 Service Unavailable  (attempt 2)",
            ),
        ];
        for (line, spaced) in cases {
            let got = respaced(line.as_bytes()).map(|b| String::from_utf8(b).unwrap());
            assert_eq!(got.as_deref(), Some(spaced), "{line}");
        }
        for line in [
            "agent run r4",
            "POST the form again",
            "201 Created",
            "503 Service Unavailable",
            "refund re_1 created for order A-1",
            "999 bottles of beer",
            "POST http://x/v1/refunds (attempt 1",
        ] {
            assert_eq!(respaced(line.as_bytes()), None, "{line}");
        }
    }
}
