//! Java code logging `java.net.http`'s own objects: an `HttpRequest` prints as `URL METHOD`
//! (`issue_refund attempt 2: http://host/v1/refunds POST headers={Idempotency-Key=[k]}`), an
//! `HttpResponse` as `(METHOD URL) STATUS`, often with its body after it (`... -> (POST
//! http://host/v1/refunds) 201 {"id":"re_2",...}`). Rewritten as SPEC §3.1's request and
//! answer lines; read as they were, the answer's body was taken for a logged refund and the
//! request for nothing, and the call's retry for a gateway's.

use crate::event::HTTP_METHODS;

/// The SPEC line `msg` stands for, if it holds an `HttpResponse`'s or `HttpRequest`'s text.
pub(super) fn respaced(msg: &[u8]) -> Option<Vec<u8>> {
    let scheme = memchr::memmem::find(msg, b"://")?;
    let url_start = msg[..scheme]
        .iter()
        .rposition(|&b| b == b' ' || b == b'(')?
        + 1;
    let url_end = (msg[url_start..]
        .iter()
        .position(|&b| b == b' ' || b == b')'))
    .map_or(msg.len(), |p| url_start + p);
    let url = &msg[url_start..url_end];
    let attempt = attempt_number(&msg[..url_start]);
    // The word before the URL: `(POST` opens an answer.
    let head = msg[..url_start].trim_ascii_end();
    let word = &head[head.iter().rposition(|&b| b == b' ').map_or(0, |p| p + 1)..];
    let mut line = match word.strip_prefix(b"(") {
        // `(POST http://...) 201 {...}`: an answer.
        Some(method) => {
            let rest = msg[url_end..].strip_prefix(b") ")?;
            let status = rest.get(..3).filter(|s| s.iter().all(u8::is_ascii_digit))?;
            if !HTTP_METHODS.contains(&method) || rest.get(3).is_some_and(|&b| b != b' ') {
                return None;
            }
            let mut line = status.to_vec();
            if let Some(id) = body_string(&rest[3..], "id") {
                line.extend_from_slice(b"  effect_id=");
                line.extend_from_slice(id.as_bytes());
            }
            if body_is_true(&rest[3..], "replayed") {
                line.extend_from_slice(b"  replayed=true");
            }
            line
        }
        // `http://... POST`: a request.
        _ => {
            let after = msg[url_end..].trim_ascii_start();
            let method_end = after.iter().position(|&b| b == b' ').unwrap_or(after.len());
            let method = &after[..method_end];
            if !HTTP_METHODS.contains(&method) {
                return None;
            }
            let mut line = [method, b" ", url].concat();
            if let Some(key) = header(&after[method_end..], b"idempotency-key=[") {
                line.extend_from_slice(b"  idempotency_key=");
                line.extend_from_slice(key);
            }
            line
        }
    };
    if let Some(n) = attempt {
        line.extend_from_slice(format!("  (attempt {n})").as_bytes());
    }
    Some(line)
}

/// `attempt 2` among the words before the request or answer.
fn attempt_number(words: &[u8]) -> Option<u32> {
    let at = memchr::memmem::find(words, b"attempt ")?;
    let digits: Vec<u8> = (words[at + 8..].iter())
        .take_while(|b| b.is_ascii_digit())
        .copied()
        .collect();
    std::str::from_utf8(&digits)
        .ok()?
        .parse()
        .ok()
        .filter(|&n| n >= 1)
}

/// A string member of the JSON object that starts `text` (after blanks).
fn body_string(text: &[u8], name: &str) -> Option<String> {
    let body: serde_json::Value = serde_json::from_slice(text.trim_ascii()).ok()?;
    let value = body.get(name)?.as_str()?;
    (!value.is_empty() && !value.contains(char::is_whitespace)).then(|| value.to_string())
}

fn body_is_true(text: &[u8], name: &str) -> bool {
    let body: Option<serde_json::Value> = serde_json::from_slice(text.trim_ascii()).ok();
    body.is_some_and(|b| b.get(name) == Some(&serde_json::Value::Bool(true)))
}

/// A header's first value in Java's `Map` text (`{Idempotency-Key=[k-1], ...}`), the name
/// in lower case with `=[` after it.
fn header<'a>(text: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let lower = text.to_ascii_lowercase();
    let at = memchr::memmem::find(&lower, name)? + name.len();
    let end = text[at..].iter().position(|&b| b == b']' || b == b',')?;
    Some(&text[at..at + end]).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::respaced;

    fn read(s: &str) -> Option<String> {
        respaced(s.as_bytes()).map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn javas_request_and_response_texts_become_spec_lines() {
        assert_eq!(
            read("issue_refund attempt 2: http://127.0.0.1:43499/v1/refunds POST headers={Content-Type=[application/json]}").as_deref(),
            Some("POST http://127.0.0.1:43499/v1/refunds  (attempt 2)")
        );
        assert_eq!(
            read("sending https://p.internal/v1/refunds POST headers={Idempotency-Key=[k-1], Content-Type=[application/json]}").as_deref(),
            Some("POST https://p.internal/v1/refunds  idempotency_key=k-1")
        );
        assert_eq!(
            read(r#"issue_refund attempt 2 -> (POST http://127.0.0.1:43499/v1/refunds) 201 {"id":"re_2","status":"succeeded","replayed":false}"#).as_deref(),
            Some("201  effect_id=re_2  (attempt 2)")
        );
        assert_eq!(
            read(r#"got (POST https://p/v1/refunds) 200 {"id":"re_1","replayed":true}"#).as_deref(),
            Some("200  effect_id=re_1  replayed=true")
        );
        for other in [
            "see https://docs.example.com/refunds for details",
            "fetched https://p/v1/refunds in 20 ms",
            "(POST https://p/v1/refunds) took long",
            "(FETCH https://p/v1/refunds) 200",
        ] {
            assert_eq!(read(other), None, "{other}");
        }
    }
}
