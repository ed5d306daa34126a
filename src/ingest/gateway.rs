//! What a gateway's (a reverse proxy's) own lines say of a request it sent to an upstream
//! more than once, or gave up on after sending it: the evidence of a `gateway-retry`
//! ([`crate::event::GatewayTry`]). A gateway's access line is its record of one client
//! request, never another attempt of the client's nor an effect; most are read as ignored
//! ([`super::access_log`]), and these become events:
//! - an access line (the Common or Combined format with more fields, as nginx's
//!   `log_format` writes it) with a field listing two or more upstreams, nginx's
//!   `$upstream_addr` (`ua="127.0.0.2:5201, 127.0.0.3:5201"`, by any name or none, quoted
//!   or not), beside `$upstream_status` when a field lists as many statuses (`"504, 201"`);
//! - HAProxy's HTTP log line whose retry count (the last of `1/1/0/0/+1`; `+` when it was
//!   sent to another server, `option redispatch`) is one or more;
//! - nginx's error line `upstream timed out (110: Connection timed out) while reading
//!   response header from upstream, client: ..., request: "POST /v1/refunds HTTP/1.1",
//!   upstream: "http://127.0.0.2:5201/v1/refunds", ...` (or another error `while reading
//!   response header from upstream`): the request was sent and the gateway gave up on it,
//!   so the upstream may have acted on it; with `proxy_next_upstream ... non_idempotent`
//!   nginx sends it to the next.
//!
//! Each may follow a syslog header (`2026-12-07T16:11:36+00:00 gw haproxy[16851]: ...`, as
//! rsyslog writes /var/log/haproxy.log on Debian; [`super::syslog`]). Asked only of lines
//! that read as no event of their own.

use crate::event::{EventKind, GatewayTry, HTTP_METHODS, Text};

/// The gateway try an access line shows, if any (the line is one: [`super::access_log::stamp`]
/// read it). The Common format's request comes in quotes right after its stamp, HAProxy's
/// last on the line.
pub(crate) fn of_access_line(line: &[u8]) -> Option<EventKind> {
    let close = memchr::memchr(b']', line)?;
    let rest = &line[close + 1..];
    let (request, (resent, shows)) = match rest.strip_prefix(b" \"") {
        Some(quoted) => {
            let len = memchr::memchr(b'"', quoted)?;
            (&quoted[..len], upstream_lists(&quoted[len + 1..])?)
        }
        None => {
            let quoted = rest.strip_suffix(b"\"")?;
            let open = memchr::memrchr(b'"', quoted)?;
            (&quoted[open + 1..], haproxy_retries(rest)?)
        }
    };
    let (method, target) = method_and_target(request)?;
    Some(try_event(method, target, resent, shows))
}

/// The gateway try a stamped line that read as nothing shows: nginx's error line. (A
/// gateway's access line behind a syslog header is read in `text::syslog_lines`.)
#[cold]
pub(crate) fn of_error_line(line: &[u8]) -> Option<EventKind> {
    // Asked of every line that read as nothing: the phrase's searcher is made once.
    static GAVE_UP: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(NGINX_GAVE_UP));
    if line.len() < NGINX_GAVE_UP.len() {
        return None;
    }
    let at = GAVE_UP.find(line)?;
    nginx_gave_up(&line[..at], &line[at..])
}

/// nginx's phrase for an upstream that took the request and gave no answer it could use,
/// and the fields after it (from `client: `).
const NGINX_GAVE_UP: &[u8] = b" while reading response header from upstream, client: ";

/// nginx's error line: `... [error] 14238#14238: *2 WHAT while reading response header from
/// upstream, client: ..., request: "POST /v1/refunds HTTP/1.1", upstream: "URL", ...`;
/// `head` is the line up to the phrase, `fields` the rest. Only at level `error`: nginx's
/// `[warn] ... upstream server temporarily disabled while reading response header from
/// upstream` beside it says the server is set aside, not what became of a request.
fn nginx_gave_up(head: &[u8], fields: &[u8]) -> Option<EventKind> {
    memchr::memmem::find(head, b" [error] ")?;
    // The message after the connection's number: `*2 upstream timed out (110: ...)`.
    let star = memchr::memmem::find(head, b": *")?;
    let what = &head[star + 3..];
    let what = &what[memchr::memchr(b' ', what)? + 1..];
    let request = field(fields, b", request: \"")?;
    let upstream = field(fields, b", upstream: \"")?;
    let (method, target) = method_and_target(request)?;
    let shows = format!(
        "gave up on {} after sending it the request ({} while reading response header from upstream)",
        text(upstream),
        text(what)
    );
    Some(try_event(method, target, false, shows))
}

/// The value of a quoted field of nginx's error line: `, request: "..."`.
fn field<'a>(fields: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let at = memchr::memmem::find(fields, name)? + name.len();
    let len = memchr::memchr(b'"', &fields[at..])?;
    Some(&fields[at..at + len])
}

/// `POST /v1/refunds HTTP/1.1`: a known method and the target after it.
pub(crate) fn method_and_target(request: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut words = request.split(|&b| b == b' ').filter(|w| !w.is_empty());
    let (method, target) = (words.next()?, words.next()?);
    (HTTP_METHODS.contains(&method) && target.starts_with(b"/")).then_some((method, target))
}

/// HAProxy's retries: the last count of `ACTCONN/FECONN/BECONN/SRVCONN/RETRIES`, `+` before
/// it when the request was sent to another server; the server and status that answered.
/// `fields` is the line after its stamp.
fn haproxy_retries(fields: &[u8]) -> Option<(bool, String)> {
    let mut words = fields.split(|&b| b == b' ').filter(|w| !w.is_empty());
    let (_frontend, server, _timers, status) =
        (words.next()?, words.next()?, words.next()?, words.next()?);
    let counts = words.find(|w| w.iter().filter(|&&b| b == b'/').count() == 4)?;
    let retries = counts.rsplit(|&b| b == b'/').next()?;
    let (redispatched, digits) = match retries.strip_prefix(b"+") {
        Some(digits) => (true, digits),
        None => (false, retries),
    };
    let n: u32 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    if n == 0 {
        return None;
    }
    let times = if n == 1 { "time" } else { "times" };
    let elsewhere = if redispatched {
        ", to another server"
    } else {
        ""
    };
    Some((
        true,
        format!(
            "sent the request again {n} {times}{elsewhere} (HAProxy's retries), and {} answered {}",
            text(server),
            text(status)
        ),
    ))
}

/// A field after the request listing two or more upstreams (nginx's `$upstream_addr`,
/// `127.0.0.2:5201, 127.0.0.3:5201`) and one listing as many statuses.
fn upstream_lists(after: &[u8]) -> Option<(bool, String)> {
    upstreams_tried(&lists_of(after))
}

/// Among a line's fields' values that are lists (`a, b`), one of two or more upstreams and
/// one of as many statuses (`$upstream_status`, `504, 201`): what they show. Both, so that
/// another list of addresses with ports (a load balancer's `X-Forwarded-For` logged beside
/// them) is not taken for upstreams.
pub(crate) fn upstreams_tried(lists: &[Vec<&[u8]>]) -> Option<(bool, String)> {
    let addresses = lists
        .iter()
        .find(|l| l.len() >= 2 && l.iter().all(|a| is_upstream(a)))?;
    let statuses = lists.iter().find(|l| {
        l.len() == addresses.len()
            && l.iter()
                .all(|s| *s == b"-" || (s.len() == 3 && s.iter().all(u8::is_ascii_digit)))
    })?;
    let tried: Vec<String> = (addresses.iter().zip(statuses))
        .map(|(a, s)| format!("{} ({})", text(a), text(s)))
        .collect();
    Some((
        true,
        format!("sent the request to {}", tried.join(", then to ")),
    ))
}

/// The values of a line's fields that are lists (`a, b`): words joined while one ends in a
/// comma, a field's name (`ua=`) and quotes taken off.
fn lists_of(after: &[u8]) -> Vec<Vec<&[u8]>> {
    let mut lists = Vec::new();
    let mut list: Vec<&[u8]> = Vec::new();
    for word in after.split(|&b| b == b' ').filter(|w| !w.is_empty()) {
        let word = match memchr::memchr(b'=', word) {
            Some(eq) if list.is_empty() => &word[eq + 1..],
            _ => word,
        };
        let item = unquoted(word.trim_ascii());
        match item.strip_suffix(b",") {
            Some(item) => list.push(item),
            None => {
                list.push(item);
                if list.len() >= 2 {
                    lists.push(std::mem::take(&mut list));
                }
                list.clear();
            }
        }
    }
    lists
}

/// `word` without the quotes at either end.
fn unquoted(word: &[u8]) -> &[u8] {
    let word = word.strip_prefix(b"\"").unwrap_or(word);
    word.strip_suffix(b"\"").unwrap_or(word)
}

/// An upstream as nginx writes it: `HOST:PORT` (an address or a name; IPv6 in brackets)
/// or `unix:PATH`.
fn is_upstream(a: &[u8]) -> bool {
    if a.starts_with(b"unix:/") {
        return true;
    }
    let Some(colon) = memchr::memrchr(b':', a) else {
        return false;
    };
    let (host, port) = (&a[..colon], &a[colon + 1..]);
    let host_ok = match host.strip_prefix(b"[") {
        Some(v6) => v6.ends_with(b"]"),
        None => {
            !host.is_empty()
                && (host.iter()).all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'))
        }
    };
    host_ok && !port.is_empty() && port.len() <= 5 && port.iter().all(u8::is_ascii_digit)
}

/// A slice of a line as text.
fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The event a gateway's line about request `method` `target` is.
pub(crate) fn try_event(method: &[u8], target: &[u8], resent: bool, shows: String) -> EventKind {
    EventKind::GatewayTry(Box::new(GatewayTry {
        method: Text::from(text(method).as_str()),
        target: Text::from(text(target).as_str()),
        resent,
        shows: Text::from(shows.as_str()),
    }))
}

#[cfg(test)]
mod tests;
