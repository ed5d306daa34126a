//! A web server's access log line, the Common or Combined Log Format that nginx, Apache,
//! gunicorn and Express's morgan write (`203.0.113.5 - - [07/Dec/2026:08:01:02 +0000]
//! "POST /v1/refunds HTTP/1.1" 201 127 "-" "curl/8.5"`), and werkzeug's (Flask's development
//! server: `127.0.0.1 - - [07/Dec/2026 08:01:02] "POST /v1/refunds HTTP/1.1" 201 -`, local
//! time, no offset). Its timestamp is in brackets after the client's address, so it read as
//! a line with none and was skipped: `--strict` failed on every clean Flask or Express log.
//! Django's development server (its `django.server` logger, `[{server_time}] {message}`)
//! writes the same line without the client's fields: `[07/Dec/2026 14:19:36] "POST
//! /v1/refunds/ HTTP/1.1" 201 111`; aiohttp's default format (`%a %t "%r" %s %b ...`) with
//! the client's address alone: `127.0.0.1 [07/Dec/2026:14:21:04 +0000] "POST ..." 201 287`.
//!
//! HAProxy's log line (`option httplog`, its default HTTP format, or `option tcplog`) is a
//! gateway's access line of another shape: the client's address and port, the date it
//! accepted the connection in brackets, to the millisecond and in local time, then the
//! frontend's name and the rest (`127.0.0.1:38892 [07/Dec/2026:16:11:35.890] payments
//! replicas/pay-b 0/1001/0/8/1010 201 244 - - ---- 1/1/0/0/+1 0/0 "POST /v1/refunds
//! HTTP/1.1"`). What a gateway's line says of its retries is read by [`super::gateway`].
//!
//! Such a line is the service's record of a request it received: a method, a path and a
//! status, no effect and no key. The event model has no event for it that a rule would read
//! (an effect is what the service logs when it makes one), so a line of this shape with a
//! valid timestamp is read as understood and ignored, as SPEC §3.1 has a stamped line with
//! no message of its own. Asked only of lines that have no timestamp at their start.

use crate::time::{NANOS_PER_DAY, NANOS_PER_SEC, Timestamp, Zone, days_from_civil};

const MONTHS: [&[u8]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// How far into a line the bracketed timestamp may start: an address, an identity and a user.
const STAMP_WITHIN: usize = 300;

/// The instant of an access log's line, if `line` is one: three fields (the client, its
/// identity and user, `-` when unknown), the client's address alone (aiohttp's) or nothing
/// (Django's), the timestamp in brackets, the request line in quotes and a status. A time
/// without an offset (werkzeug's, Django's) is in `zone` (`--tz`).
pub(crate) fn stamp(line: &[u8], zone: Zone) -> Option<Timestamp> {
    let open = memchr::memchr(b'[', &line[..line.len().min(STAMP_WITHIN)])?;
    if let Some(at) = haproxy_stamp(line, open, zone) {
        return Some(at);
    }
    if open > 0 {
        let fields = line[..open].strip_suffix(b" ")?;
        let mut words = fields.split(|&b| b == b' ');
        let three = words.by_ref().take(3).filter(|w| !w.is_empty()).count() == 3;
        if !((three && words.next().is_none()) || is_address(fields)) {
            return None;
        }
    }
    let after = &line[open + 1..];
    let close = memchr::memchr(b']', after)?;
    let at = clf_time(&after[..close], zone)?;
    let request = after[close + 1..].strip_prefix(b" \"")?;
    // The request line's closing quote, then the status: `..." 201`.
    let end = memchr::memmem::find(request, b"\" ")?;
    let status = request.get(end + 2..end + 5)?;
    let ends = request.get(end + 5).is_none_or(|&b| b == b' ');
    (status.iter().all(u8::is_ascii_digit) && ends).then_some(at)
}

/// HAProxy's line: `ADDRESS:PORT [DD/Mon/YYYY:HH:MM:SS.mmm] FRONTEND ...` (the bracket
/// opening at `open`), in `zone`. The address is IPv4 or IPv6, written as HAProxy writes
/// it (`::1:45678`, no brackets), or `unix` (a UNIX socket's client).
fn haproxy_stamp(line: &[u8], open: usize, zone: Zone) -> Option<Timestamp> {
    let client = line[..open].strip_suffix(b" ")?;
    let colon = memchr::memrchr(b':', client)?;
    let (address, port) = (&client[..colon], &client[colon + 1..]);
    let port_ok = !port.is_empty() && port.len() <= 5 && port.iter().all(u8::is_ascii_digit);
    if !port_ok || !(is_address(address) || address == b"unix") {
        return None;
    }
    let after = &line[open + 1..];
    let close = memchr::memchr(b']', after)?;
    let stamp = &after[..close];
    // The milliseconds make it HAProxy's, and a frontend's name must follow.
    let frontend = after[close + 1..].strip_prefix(b" ")?;
    let millis = stamp.len() == 24 && stamp[20] == b'.';
    (millis && frontend.first().is_some_and(|b| !b.is_ascii_whitespace()))
        .then(|| clf_time(stamp, zone))
        .flatten()
}

/// `07/Dec/2026:08:01:02 +0000` (the log formats') or `07/Dec/2026 08:01:02` (werkzeug's).
pub(crate) fn clf_time(text: &[u8], zone: Zone) -> Option<Timestamp> {
    let day = two_digits(text.get(0..2)?)?;
    let month = MONTHS.iter().position(|m| text.get(3..6) == Some(*m))? as i64 + 1;
    let year = text.get(7..11)?;
    if text.get(2) != Some(&b'/') || text.get(6) != Some(&b'/') {
        return None;
    }
    let year = (year.iter().all(u8::is_ascii_digit))
        .then(|| year.iter().fold(0i64, |y, &d| y * 10 + i64::from(d - b'0')))?;
    if !matches!(text.get(11), Some(b':' | b' ')) {
        return None;
    }
    let (tod, used) = crate::time::parse_time_of_day(text.get(12..)?)?;
    let local = days_from_civil(year, month, day)?
        .checked_mul(NANOS_PER_DAY)?
        .checked_add(tod)?;
    let offset = match &text[12 + used..] {
        [] => zone.offset_of_local(local),
        [b' ', sign @ (b'+' | b'-'), hh1, hh2, mm1, mm2] => {
            let secs = two_digits(&[*hh1, *hh2])? * 3600 + two_digits(&[*mm1, *mm2])? * 60;
            if *sign == b'-' { -secs } else { secs }
        }
        _ => return None,
    };
    Some(Timestamp(local.checked_sub(offset * NANOS_PER_SEC)?))
}

/// An IPv4 or IPv6 address (`127.0.0.1`, `::1`, `::ffff:10.0.0.5`): a client's alone.
fn is_address(field: &[u8]) -> bool {
    let dots = field.iter().filter(|&&b| b == b'.').count();
    let colons = field.iter().filter(|&&b| b == b':').count();
    let chars = (field.iter()).all(|b| b.is_ascii_hexdigit() || matches!(b, b'.' | b':'));
    chars && ((dots == 3 && colons == 0 && field[0].is_ascii_digit()) || colons >= 2)
}

fn two_digits(b: &[u8]) -> Option<i64> {
    match b {
        [a, b] if a.is_ascii_digit() && b.is_ascii_digit() => {
            Some(i64::from(a - b'0') * 10 + i64::from(b - b'0'))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: &str) -> Option<String> {
        stamp(line.as_bytes(), Zone::parse("+01:00").unwrap()).map(|t| t.to_string())
    }

    #[test]
    fn the_servers_access_lines_and_their_times() {
        // morgan's "combined" (nginx's, Apache's, gunicorn's): the offset as written.
        assert_eq!(
            at(
                r#"::ffff:127.0.0.1 - - [07/Dec/2026:07:33:10 +0000] "POST /v1/refunds HTTP/1.1" 201 127 "-" "python-httpx/0.29.0""#
            )
            .as_deref(),
            Some("2026-12-07T07:33:10.000Z")
        );
        assert_eq!(
            at(r#"203.0.113.5 - alice [07/Dec/2026:08:01:02 -0500] "GET / HTTP/1.0" 200 2326"#)
                .as_deref(),
            Some("2026-12-07T13:01:02.000Z")
        );
        // werkzeug's: local time, in --tz.
        assert_eq!(
            at(r#"127.0.0.1 - - [07/Dec/2026 08:01:02] "POST /v1/refunds HTTP/1.1" 201 -"#)
                .as_deref(),
            Some("2026-12-07T07:01:02.000Z")
        );
        // aiohttp's: the client's address alone.
        assert_eq!(
            at(
                r#"127.0.0.1 [07/Dec/2026:14:21:04 +0000] "POST /v1/refunds HTTP/1.1" 201 287 "-" "Python/3.11 aiohttp/3.14.5""#
            )
            .as_deref(),
            Some("2026-12-07T14:21:04.000Z")
        );
        assert!(at(r#"::1 [07/Dec/2026:14:21:04 +0000] "GET / HTTP/1.1" 200 2"#).is_some());
        // HAProxy's: the client's port, milliseconds, local time; its other lines too.
        assert_eq!(
            at(
                r#"127.0.0.1:38892 [07/Dec/2026:16:11:35.890] payments replicas/pay-b 0/1001/0/8/1010 201 244 - - ---- 1/1/0/0/+1 0/0 "POST /v1/refunds HTTP/1.1""#
            )
            .as_deref(),
            Some("2026-12-07T15:11:35.890Z")
        );
        for haproxy in [
            "::1:45678 [07/Dec/2026:16:11:35.890] payments/1: SSL handshake failure",
            "10.0.0.7:5432 [07/Dec/2026:16:11:35.890] fe_tcp be_db/db1 1/0/5007 212 -- 1/1/1/1/0 0/0",
            r#"unix:1 [07/Dec/2026:16:11:35.890] payments payments/<NOSRV> -1/-1/-1/-1/0 400 0 - - CR-- 1/1/0/0/0 0/0 "<BADREQ>""#,
        ] {
            assert!(at(haproxy).is_some(), "{haproxy}");
        }
        // Django's runserver: no client's fields, local time.
        assert_eq!(
            at(r#"[07/Dec/2026 14:19:36] "POST /v1/refunds/ HTTP/1.1" 201 111"#).as_deref(),
            Some("2026-12-07T13:19:36.000Z")
        );
    }

    #[test]
    fn lines_of_other_shapes_are_not_access_lines() {
        for line in [
            // No request in quotes, or no status after it.
            r#"127.0.0.1 - - [07/Dec/2026 08:01:02] POST /v1/refunds 201"#,
            r#"127.0.0.1 - - [07/Dec/2026 08:01:02] "POST /v1/refunds HTTP/1.1""#,
            r#"127.0.0.1 - - [07/Dec/2026 08:01:02] "POST /v1/refunds HTTP/1.1" 2011"#,
            // No such date or time; a month in another language.
            r#"127.0.0.1 - - [31/Feb/2026:08:01:02 +0000] "GET / HTTP/1.1" 200 1"#,
            r#"127.0.0.1 - - [07/Dec/2026:25:01:02 +0000] "GET / HTTP/1.1" 200 1"#,
            r#"127.0.0.1 - - [07/Dez/2026:08:01:02 +0000] "GET / HTTP/1.1" 200 1"#,
            // Not three fields before the stamp: prose, an application's own line.
            r#"refund failed [07/Dec/2026:08:01:02 +0000] "POST /v1/refunds HTTP/1.1" 503 -"#,
            r#"- - [07/Dec/2026:08:01:02 +0000] "POST /v1/refunds HTTP/1.1" 503 -"#,
            // One word before the stamp that is no address.
            r#"refund [07/Dec/2026:08:01:02 +0000] "POST /v1/refunds HTTP/1.1" 503 -"#,
            r#"1.2.3 [07/Dec/2026:08:01:02 +0000] "POST /v1/refunds HTTP/1.1" 503 -"#,
            r#"cafe [07/Dec/2026:08:01:02 +0000] "POST /v1/refunds HTTP/1.1" 503 -"#,
            // Django's stamp before a message of another shape: no request line and status.
            "[07/Dec/2026 14:19:36] refund re_1 created for order A-1",
            r#"[07/Dec/2026 14:19:36] "refund created" re_1"#,
            "[2026-12-07 07:32:50,932] INFO in service_flask: Refund re_1 created",
            // HAProxy's shape without its milliseconds, port or frontend; a word before.
            "127.0.0.1:38892 [07/Dec/2026:16:11:35] payments replicas/pay-b 0/1/0/8/10 201",
            "127.0.0.1 [07/Dec/2026:16:11:35.890] payments replicas/pay-b 0/1/0/8/10 201",
            "127.0.0.1:38892 [07/Dec/2026:16:11:35.890]",
            "127.0.0.1:38892 [07/Dec/2026:16:11:35.890]  payments",
            "worker:1 [07/Dec/2026:16:11:35.890] refund re_1 created",
            "127.0.0.1:port [07/Dec/2026:16:11:35.890] payments replicas/pay-b",
        ] {
            assert_eq!(at(line), None, "{line}");
        }
    }
}
