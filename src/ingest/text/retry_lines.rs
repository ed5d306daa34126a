//! The lines retry libraries log when a function they wrap raised and is called again:
//! tenacity's `Retrying agent.post_refund in 2.0 seconds as it raised ReadTimeout: ...`,
//! backoff's `Backing off post_refund(...) for 0.2s (httpx.ReadTimeout: timed out)` (and
//! `Giving up ...`, after which nothing is sent), and stamina's `stamina.retry_scheduled`.
//! Each is the failure of the call's latest request, and says the function is called again
//! after the wait it names: a request sent again, even where the HTTP client logs no
//! request (aiohttp's), so a duplicate it makes is the client's retry, not a gateway's.

use super::{Fields, TextParser, Verdict, small};
use crate::classify::FailureClass;
use crate::event::EventKind;
use crate::time::{Duration, Timestamp};

/// tenacity's `before_sleep_log` line for a function it will call again: `Retrying
/// agent.tools.issue_refund in 2.0 seconds as it raised ReadTimeout: The read operation
/// timed out.`: the exception, as a failure of the call's latest request (the request
/// itself logged by no one when its client is httpx).
pub(super) fn tenacity_raised(field: &[u8]) -> Option<&[u8]> {
    const RAISED: &[u8] = b" as it raised ";
    let rest = field.strip_prefix(b"Retrying ")?;
    let at = memchr::memmem::find(rest, RAISED)?;
    let raised = rest[at + RAISED.len()..].trim_ascii();
    Some(raised.strip_suffix(b".").unwrap_or(raised))
}

/// The function a retry library's line names (tenacity's `Retrying agent.tools.issue_refund
/// in 2.0 seconds ...`, backoff's `Backing off post_refund(...) for 0.2s ...`), as written;
/// tenacity writes `<unknown>` for a retry loop of no function.
pub(super) fn retried_function(field: &[u8]) -> Option<&[u8]> {
    let name = match field.strip_prefix(b"Retrying ") {
        Some(rest) => &rest[..memchr::memmem::find(rest, b" in ")?],
        None => {
            let rest = (field.strip_prefix(b"Backing off "))
                .or_else(|| field.strip_prefix(b"Giving up "))?;
            &rest[..memchr::memchr(b'(', rest)?]
        }
    };
    (!name.is_empty() && !name.starts_with(b"<") && !name.contains(&b' ')).then_some(name)
}

/// The `backoff` library's line for a function it will call again or gave up on: `Backing
/// off post_refund(...) for 0.2s (httpx.ReadTimeout: timed out)`, `Giving up post_refund(...)
/// after 3 tries (httpx.ReadTimeout: timed out)`: the exception in the last brackets, as
/// tenacity's is read.
pub(super) fn backoff_raised(field: &[u8]) -> Option<&[u8]> {
    let rest =
        (field.strip_prefix(b"Backing off ")).or_else(|| field.strip_prefix(b"Giving up "))?;
    let inner = rest.strip_suffix(b")")?;
    // The bracket that opens the last one, brackets in the message matched (`Read timed
    // out. (read timeout=10)`).
    let mut depth = 0usize;
    let open = inner.iter().rposition(|&b| {
        match b {
            b')' => depth += 1,
            b'(' if depth == 0 => return true,
            b'(' => depth -= 1,
            _ => {}
        }
        false
    })?;
    Some(&inner[open + 1..])
}

/// The wait before the function is called again, as tenacity's line (`in 2.0 seconds as it
/// raised`) or backoff's (`... for 0.2s (...)`) writes it; `None` for backoff's `Giving up`,
/// after which it is not. A wait written otherwise is taken as none: the call is made
/// again all the same.
pub(super) fn resent_after(field: &[u8]) -> Option<Duration> {
    let wait = if let Some(rest) = field.strip_prefix(b"Retrying ") {
        let from = memchr::memmem::find(rest, b" in ")? + 4;
        let to = memchr::memmem::find(&rest[from..], b" seconds as it raised ")?;
        &rest[from..from + to]
    } else {
        let rest = field.strip_prefix(b"Backing off ")?;
        let from = memchr::memmem::find(rest, b"(...) for ")? + 10;
        let to = memchr::memchr(b's', &rest[from..])?;
        &rest[from..from + to]
    };
    Some(wait_seconds(wait).unwrap_or_default())
}

/// `0.2`, `2.0`, `0.470717` seconds, up to a day: a wait as retry libraries write one.
pub(super) fn wait_seconds(text: &[u8]) -> Option<Duration> {
    const LONGEST: i64 = 86_400;
    let (whole, fraction) = match memchr::memchr(b'.', text) {
        Some(dot) => (&text[..dot], &text[dot + 1..]),
        None => (text, &b""[..]),
    };
    let digits = |d: &[u8]| d.iter().all(u8::is_ascii_digit);
    let plain = !whole.is_empty() && whole.len() <= 6 && fraction.len() <= 9;
    (plain && digits(whole) && digits(fraction)).then_some(())?;
    let whole: i64 = std::str::from_utf8(whole).ok()?.parse().ok()?;
    (whole < LONGEST).then_some(())?;
    let nanos = (fraction.iter().chain(std::iter::repeat(&b'0')).take(9))
        .fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
    Some(Duration(whole * 1_000_000_000 + nanos))
}

/// backon's `notify` hook as its README writes it, `retrying {:?} after {:?}` (backon
/// logs nothing itself: the program's hook does): `retrying reqwest::Error { kind: Request,
/// url: "...", source: TimedOut } after 100ms`, or the error's `Display`. The error's class
/// and words, read as Rust's HTTP clients print an error ([`super::rust_error`]), and the
/// wait (Rust's `Debug` of a `Duration`); `None` when the words between are no such error.
pub(super) fn backon_notified(field: &[u8]) -> Option<(&'static [u8], &[u8], Duration)> {
    let rest = field.strip_prefix(b"retrying ")?;
    let at = memchr::memmem::rfind(rest, b" after ")?;
    let wait = rest[at + 7..].trim_ascii();
    let after = (!wait.is_empty()).then(|| super::client::go_duration(wait))??;
    let (class, message) = super::rust_error::request_error(&rest[..at])?;
    Some((class, message, after))
}

/// stamina's line for a call it will make again (`stamina.retry_scheduled`), as read.
#[derive(Debug, PartialEq)]
pub(super) struct StaminaRetry<'a> {
    /// The exception's class and message, when the line names it.
    raised: Option<(&'a [u8], &'a [u8])>,
    /// The function retried (`callable=`), when named.
    callable: Option<&'a [u8]>,
    after: Duration,
}

const STAMINA: &[u8] = b"stamina.retry_scheduled";

/// stamina's line (see [`StaminaRetry`]): through the standard library's logging its
/// message alone, the details in the record's extras, which a format does not show;
/// through structlog's console layout the details as tokens (`args=(...)
/// callable=__main__.post_refund caused_by="ReadTimeout('timed out')" kwargs={}
/// retry_num=1 wait_for=0.2 waited_so_far=0.0`). `None` for any other message.
pub(super) fn stamina_retry(msg: &[u8]) -> Option<StaminaRetry<'_>> {
    let rest = msg.strip_prefix(STAMINA)?;
    if rest.first().is_some_and(|b| !b.is_ascii_whitespace()) {
        return None;
    }
    Some(StaminaRetry::of_fields(
        token_value(rest, b"caused_by="),
        token_value(rest, b"callable="),
        token_value(rest, b"wait_for="),
    ))
}

impl<'a> StaminaRetry<'a> {
    /// stamina's fields as written: `caused_by` (the exception's repr), `callable`,
    /// `wait_for` (seconds); any may be missing.
    pub(super) fn of_fields(
        caused_by: Option<&'a [u8]>,
        callable: Option<&'a [u8]>,
        wait_for: Option<&[u8]>,
    ) -> Self {
        StaminaRetry {
            raised: caused_by.and_then(exception_repr),
            callable: callable.filter(|c| !c.is_empty()),
            after: wait_for.and_then(wait_seconds).unwrap_or_default(),
        }
    }
}

/// The value of token `name` (`caused_by=`, with its `=`) among structlog's, after a blank:
/// bare up to the next blank, or Python's `repr` of a string, quoted.
fn token_value<'a>(text: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let at = memchr::memmem::find_iter(text, name).find(|&i| i > 0 && text[i - 1] == b' ')?;
    let value = &text[at + name.len()..];
    match value.first()? {
        &q @ (b'"' | b'\'') => {
            // The closing quote is the one before a blank or the end.
            let close = (1..value.len())
                .find(|&i| value[i] == q && value.get(i + 1).is_none_or(|&b| b == b' '))?;
            Some(&value[1..close])
        }
        _ => Some(&value[..memchr::memchr(b' ', value).unwrap_or(value.len())]),
    }
}

/// An exception's `repr` (`ReadTimeout('timed out')`, `TimeoutError()`): its class and the
/// message in the brackets, without its quotes.
fn exception_repr(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let open = memchr::memchr(b'(', text)?;
    let (class, inner) = (&text[..open], text[open + 1..].strip_suffix(b")")?);
    let named = class.first().is_some_and(u8::is_ascii_alphabetic)
        && (class.iter()).all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'));
    let message = match inner {
        [q @ (b'\'' | b'"'), message @ .., last] if q == last => message,
        inner => inner,
    };
    named.then_some((class, message))
}

impl TextParser {
    /// A retry library's line: the failure (`class`, `message`) of the call's latest request
    /// that `function` raised, sent again `after` the wait; a client's retry, with or
    /// without a tool call.
    pub(super) fn retry_library_failure(
        &mut self,
        class: &[u8],
        message: &[u8],
        f: &Fields,
        function: Option<&[u8]>,
        after: Option<Duration>,
    ) -> Result<Option<EventKind>, String> {
        let _ = self.call_or_anonymous(self.line_at);
        let mut failure = self.failure_line(class, message, f)?;
        if let EventKind::Failure(failed) = &mut failure {
            failed.raised_in = function.map(small);
            failed.resent_after = after;
            if let (Some(call), Some(number), Some(after)) = (&failed.call, failed.attempt, after) {
                self.resent_by_library(call, number, self.line_at, after);
            }
        }
        Ok(Some(failure))
    }

    /// stamina's line at `at` ([`stamina_retry`]): the failure of the call's latest request,
    /// called again after the wait; `None` for any other message.
    #[cold]
    pub(super) fn stamina_line(&mut self, at: Timestamp, msg: &[u8]) -> Option<Verdict> {
        self.stamina_event(at, stamina_retry(msg)?)
    }

    /// stamina's retry, read from its line or a structured logger's fields, at `at`.
    pub(super) fn stamina_event(&mut self, at: Timestamp, retry: StaminaRetry) -> Option<Verdict> {
        let (class, message) = retry.raised.unwrap_or((
            b"unlogged failure",
            b"stamina retries the call without naming the exception",
        ));
        let (f, after) = (Fields::empty(), Some(retry.after));
        let mut failure =
            (self.retry_library_failure(class, message, &f, retry.callable, after)).ok()??;
        if let EventKind::Failure(failed) = &mut failure
            && retry.raised.is_none()
        {
            // A timeout or a connection lost, or any other exception: not said.
            failed.class = FailureClass::Ambiguous;
        }
        Some(Verdict::Event(at, failure))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_librarys_line_names_its_function() {
        let named = |line: &str| retried_function(line.as_bytes()).map(<[u8]>::to_vec);
        let f = |s: &str| Some(s.as_bytes().to_vec());
        assert_eq!(
            named("Retrying agent.tools.issue_refund in 2.0 seconds as it raised ReadTimeout: ."),
            f("agent.tools.issue_refund")
        );
        assert_eq!(
            named("Backing off post_refund(...) for 0.2s (httpx.ReadTimeout: timed out)"),
            f("post_refund")
        );
        assert_eq!(
            named("Giving up post_refund(...) after 3 tries (httpx.ReadTimeout)"),
            f("post_refund")
        );
        // A retry loop of no function.
        assert_eq!(
            named("Retrying <unknown> in 0.25 seconds as it raised ConnectError: ."),
            None
        );
        assert_eq!(
            named("Retrying request to /v1/refunds in 0.47 seconds"),
            None
        );
    }

    #[test]
    fn the_wait_before_the_call_is_made_again() {
        let secs = |s: f64| Some(Duration((s * 1e9).round() as i64));
        assert_eq!(
            resent_after(b"Retrying agent.post_refund in 2.0 seconds as it raised ReadTimeout: x."),
            secs(2.0)
        );
        assert_eq!(
            resent_after(b"Backing off post_refund(...) for 0.2s (httpx.ReadTimeout: timed out)"),
            secs(0.2)
        );
        assert_eq!(
            resent_after(b"Backing off post_refund(...) for 90.5s (TimeoutError)"),
            secs(90.5)
        );
        // Given up: nothing is sent again.
        assert_eq!(
            resent_after(b"Giving up post_refund(...) after 3 tries (TimeoutError)"),
            None
        );
        assert_eq!(resent_after(b"Retrying the payments API soon"), None);
        assert_eq!(wait_seconds(b"0.470717"), secs(0.470717));
        assert_eq!(wait_seconds(b"1e3"), None);
        assert_eq!(wait_seconds(b"86400"), None);
    }

    #[test]
    fn backons_notify_line_as_its_readme_writes_it() {
        let read = |line: &str| {
            backon_notified(line.as_bytes())
                .map(|(c, m, after)| (c, String::from_utf8_lossy(m).into_owned(), after))
        };
        let debug = r#"retrying reqwest::Error { kind: Request, url: "http://x/v1/refunds", source: TimedOut } after 100ms"#;
        let (class, message, after) = read(debug).unwrap();
        assert_eq!(
            (class, after),
            (&b"reqwest::Error"[..], Duration(100_000_000))
        );
        assert!(message.contains("source: TimedOut"), "{message}");
        let display = "retrying error sending request for url (http://x/v1/refunds) after 1.5s";
        assert_eq!(read(display).map(|r| r.2), Some(Duration(1_500_000_000)));
        for other in [
            "retrying after 100ms",
            "retrying the payments API after 2s",
            "retrying reqwest::Error { kind: Request, source: TimedOut } after a while",
            "retrying receipt email: error sending request for url (http://mail/x) after 1s",
            "Retrying reqwest::Error { kind: Request, source: TimedOut } after 1s",
        ] {
            assert!(read(other).is_none(), "{other}");
        }
    }

    #[test]
    fn staminas_lines_through_logging_and_structlog() {
        assert_eq!(
            stamina_retry(b"stamina.retry_scheduled"),
            Some(StaminaRetry {
                raised: None,
                callable: None,
                after: Duration(0),
            })
        );
        let structlog = br#"stamina.retry_scheduled        args=("{'order_id': 'A-1'}", '{}') callable=__main__.post_refund caused_by="ReadTimeout('timed out')" kwargs={} retry_num=1 wait_for=0.2 waited_so_far=0.0"#;
        assert_eq!(
            stamina_retry(structlog),
            Some(StaminaRetry {
                raised: Some((b"ReadTimeout", b"timed out")),
                callable: Some(b"__main__.post_refund"),
                after: Duration(200_000_000),
            })
        );
        let bare = b"stamina.retry_scheduled args=() caused_by='TimeoutError()' wait_for=1.5";
        assert_eq!(
            stamina_retry(bare).and_then(|r| r.raised),
            Some((&b"TimeoutError"[..], &b""[..]))
        );
        for other in [
            &b"stamina.retry_scheduled_total 3"[..],
            b"stamina.retries",
            b"the stamina.retry_scheduled hook",
        ] {
            assert_eq!(stamina_retry(other), None);
        }
    }
}
