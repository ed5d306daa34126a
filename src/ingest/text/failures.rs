//! A client's failure in the words its language logs it: an exception's class and message
//! (Python's, Ruby's `::` paths, PHP's namespaces, Java's `Caused by:` chain), a retry
//! library's line about the exception it retries (tenacity, backoff: [`super::retry_lines`])
//! and Go's `url.Error`.

use super::text;
use crate::classify::classify_failure;
use crate::event::Failure;
use crate::ingest::lines::Ahead;

/// `urllib3.exceptions.ReadTimeoutError: read timeout=10`, or a bare dotted exception class;
/// Ruby's and C++'s spell the path with `::` (`Net::ReadTimeout: Net::ReadTimeout`).
pub(super) fn exception_line(field: &[u8]) -> Option<(&[u8], &[u8])> {
    let (class, message) = match class_end(field) {
        Some(c) => (&field[..c], field[c + 1..].trim_ascii()),
        None => (field, &b""[..]),
    };
    // A byte no name has (a blank, other punctuation, a byte above 127) stays in the
    // path as written below: no name, told before the path is made.
    let name_byte = |&b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$');
    if !class
        .iter()
        .all(|b| name_byte(b) || matches!(*b, b':' | b'\\'))
    {
        return None;
    }
    // A path of segments joined by `.` or `::`, none empty (`a.`, `.b`, `a..b` are no
    // names). `class_end` left only `::` pairs in it.
    let mut path = String::from_utf8_lossy(class);
    if class.contains(&b':') {
        path = path.replace("::", ".").into();
    }
    // PHP's namespaces: `GuzzleHttp\Exception\ConnectException`.
    if class.contains(&b'\\') {
        path = path.replace('\\', ".").into();
    }
    let is_ident = !path.is_empty()
        && path.bytes().all(|b| name_byte(&b))
        && path.split('.').all(|seg| !seg.is_empty());
    if !is_ident {
        return None;
    }
    let last = path.rsplit('.').next().unwrap_or(&path).as_bytes();
    let error_like = |name: &[u8]| {
        [
            &b"Error"[..],
            b"Exception",
            b"Timeout",
            b"Exceeded",
            b"Refused",
            b"Reset",
            b"Failed",
        ]
        .iter()
        .any(|s| name.ends_with(s))
    };
    let named_like_error = error_like(last);
    // A dotted class with a message is an exception (`requests.exceptions.ChunkedEncoding
    // ...`); a `::` path must have an error's name in it (`Faraday::ConnectionFailed`,
    // `Excon::Error::Socket`: `Payments::RefundClient: refund issued` is a logger's name),
    // or be one of Ruby's `Errno::` codes.
    let dotted_class = class.contains(&b'.')
        && !message.is_empty()
        && last.first().is_some_and(u8::is_ascii_uppercase);
    let ruby_path = (class.contains(&b':') || class.contains(&b'\\'))
        && (class.starts_with(b"Errno::") || path.split('.').any(|seg| error_like(seg.as_bytes())));
    (named_like_error || dotted_class || ruby_path).then_some((class, message))
}

/// An exception after the program's own words about a failure, as `console.error(prefix,
/// err)` and `log.error("...: %s", e)` write it: `refund attempt 1 failed: RequestError:
/// Timeout awaiting 'request' for 1000ms`. The words must say a request (an attempt, a
/// call) failed, or name the call's tool (`names_call`: `issue_refund failed`), and the
/// class must be named as an error is (`...Error`, `...Exception`, `...Timeout`).
pub(super) fn prefixed_exception(
    field: &[u8],
    names_call: impl FnOnce(&[u8]) -> bool,
) -> Option<(&[u8], &[u8])> {
    let cut = memchr::memmem::find(field, b": ")?;
    // Stripe's SDK's own record (`message="Encountered a retryable error ...(Network
    // error: ReadTimeout: ...)"`): its reader says which request failed.
    let words = &field[..cut];
    let sdk = [
        &b"message=\"Encountered a retryable error "[..],
        b"message='Encountered a retryable error ",
    ];
    if sdk.iter().any(|q| memchr::memmem::find(words, q).is_some()) {
        return None;
    }
    match words_about_a_failure(words) {
        Some(true) => {}
        Some(false) if names_call(words) => {}
        _ => return None,
    }
    let rest = field[cut + 2..].trim_ascii();
    let Some((class, message)) = exception_line(rest) else {
        // Node's client's message alone (`${err.message}`): no class to name.
        let text = std::str::from_utf8(field).ok()?;
        let failure = crate::classify::node_client_failure(text)?;
        return Some((&b""[..], failure.as_bytes()));
    };
    let name = class
        .rsplit(|&b| b == b'.' || b == b':')
        .next()
        .unwrap_or(class);
    let named_as_error = [&b"Error"[..], b"Exception", b"Timeout"]
        .iter()
        .any(|s| name.ends_with(s) && name.len() > s.len());
    named_as_error.then_some((class, message))
}

/// Whether a program's words say a failure (`refund attempt 1 failed`), and if so whether
/// of a request: `Some(false)` for another failure's (`receipt email failed`), `None` for
/// words that say no failure.
pub(super) fn words_about_a_failure(words: &[u8]) -> Option<bool> {
    const SAYS_FAILED: [&str; 4] = ["fail", "error", "exception", "gave up"];
    const OF_A_REQUEST: [&str; 5] = ["attempt", "request", "call", "retry", "http"];
    // `Retrying POST URL (1 retries left): Faraday::TimeoutError: ...` (a retry callback's
    // words): the request named failed.
    if let Some(rest) = words.strip_prefix(b"Retrying ")
        && let Some(method) = rest.split(|&b| b == b' ').next()
        && crate::event::HTTP_METHODS.contains(&method)
    {
        return Some(true);
    }
    let words = String::from_utf8_lossy(words).to_ascii_lowercase();
    (SAYS_FAILED.iter().any(|w| words.contains(w)))
        .then(|| OF_A_REQUEST.iter().any(|w| words.contains(w)))
}

/// Ruby's exception class in a `message (Class)` spelling ([`ruby::trailing_exception`](super::ruby::trailing_exception)):
/// a path (`Net::ReadTimeout`, `Errno::ECONNRESET`) or a name ending as an error's does
/// (`EOFError`); a bare word in brackets (`(Timeout)`, `(Failed)`) is the program's own.
pub(super) fn is_ruby_exception_class(class: &[u8]) -> bool {
    let named = [&b"Error"[..], b"Exception"]
        .iter()
        .any(|s| class.ends_with(s) && class.len() > s.len());
    exception_line(class).is_some() && (memchr::memmem::find(class, b"::").is_some() || named)
}

/// undici's `TypeError: fetch failed` (Node's `fetch`) says nothing of what failed; the
/// `[cause]:` Node prints in the error's dump below it does (`Error: connect ECONNREFUSED
/// 127.0.0.1:8443`: never sent, safe to send again). Read from the lines the reader holds
/// after the failure's, up to the next stamped line; without one, the wrapper's class
/// (ambiguous) stands.
pub(super) fn failure_of_cause(failure: &mut Failure, ahead: &Ahead) {
    if !(failure.error.as_str() == "TypeError" && failure.message.as_str() == "fetch failed") {
        return java_root_cause(failure, ahead);
    }
    let bytes = ahead.bytes();
    let mut start = 0;
    for k in 0..64 {
        let Some(end) = ahead.line_end(k) else {
            return;
        };
        let line = bytes[start..end].trim_ascii();
        if crate::ingest::starts_with_stamped_record(line) {
            return;
        }
        if let Some((class, message)) = line.strip_prefix(b"[cause]: ").and_then(exception_line) {
            failure.class = classify_failure(&text(class), &text(message));
            failure.message = format!("fetch failed (cause: {}: {})", text(class), text(message))
                .as_str()
                .into();
            return;
        }
        start = end + 1;
    }
}

/// A Java exception prints the wrapper first and its root cause under the last `Caused by:`
/// of its stack trace (`RefundApiException: POST failed`, ..., `Caused by:
/// java.net.ConnectException: Connection refused`): the root says what happened to the
/// request, so its class is the failure's (a refused connection wrapped by the
/// application's own exception is safe to send again). From the lines the reader holds,
/// up to the next stamped line.
fn java_root_cause(failure: &mut Failure, ahead: &Ahead) {
    let bytes = ahead.bytes();
    let mut root = None;
    let mut start = 0;
    for k in 0..256 {
        let Some(end) = ahead.line_end(k) else { break };
        let line = bytes[start..end].trim_ascii();
        // A coloured log's next record starts with colour codes (the lines ahead are as read).
        if crate::ingest::starts_with_stamped_record(line) || line.first() == Some(&0x1b) {
            break;
        }
        if let Some(cause) = line.strip_prefix(b"Caused by: ").and_then(exception_line) {
            root = Some(cause);
        }
        start = end + 1;
    }
    let Some((class, message)) = root else { return };
    let (class, message) = (text(class), text(message));
    failure.class = classify_failure(&class, &message);
    failure.message = format!("{} (caused by {class}: {message})", failure.message)
        .trim_start()
        .into();
}

/// Go's HTTP client fails a request as `Post "https://...": context deadline exceeded`
/// (a `url.Error`: the method as Go spells it, the quoted URL, the cause): the cause.
pub(super) fn go_request_error(field: &[u8]) -> Option<&[u8]> {
    const OPS: [&[u8]; 7] = [
        b"Get", b"Post", b"Put", b"Patch", b"Delete", b"Head", b"Options",
    ];
    let space = field.iter().position(|&b| b == b' ')?;
    let rest = field[space + 1..].strip_prefix(b"\"")?;
    let url_end = rest.iter().position(|&b| b == b'"')?;
    let url = &rest[..url_end];
    // A URL, as Go quotes it: a scheme's `://` or a path, no blank.
    let is_url = (url.starts_with(b"/") || url.windows(3).any(|w| w == b"://"))
        && !url.iter().any(u8::is_ascii_whitespace);
    let cause = rest[url_end + 1..].strip_prefix(b": ")?.trim_ascii();
    (OPS.contains(&&field[..space]) && is_url && !cause.is_empty()).then_some(cause)
}

/// Where an exception's class ends and its message starts: the first `:` that is not half of
/// a path's `::`.
fn class_end(field: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < field.len() {
        if field[i] == b':' {
            if field.get(i + 1) != Some(&b':') {
                return Some(i);
            }
            i += 1;
        }
        i += 1;
    }
    None
}
