//! java.util.logging's default layout (`SimpleFormatter`), two lines a record: a header with
//! the local time and the source (`Dec 06, 2026 1:21:34 AM com.acme.Payments create`), then
//! the level and the message (`INFO: refund re_1 created ...`), a stack trace after it when
//! one was logged. The header's time is kept, and the message line is read as the line
//! `2026-12-06T01:21:34  INFO  refund re_1 created ...` would be (local time: `--tz`).
//! Without this, every line of the JDK's default log was a skipped line.

const MONTHS: [&[u8]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// JUL's level names (English), as the message line starts: `INFO: `.
const LEVELS: [&[u8]; 7] = [
    b"SEVERE", b"WARNING", b"INFO", b"CONFIG", b"FINE", b"FINER", b"FINEST",
];

/// The header's time as an ISO local time (`2026-12-06T01:21:34`), if `line` is a header:
/// `MMM d, yyyy h:mm:ss AM|PM` then the source, or nothing.
pub(crate) fn header_time(line: &[u8]) -> Option<String> {
    let [year, month, day, hour, minute, second] = header_fields(line)?;
    Some(format!(
        "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}"
    ))
}

/// Whether `line` is a record's header ([`header_time`]), asked without its time written.
pub(crate) fn is_header(line: &[u8]) -> bool {
    header_fields(line).is_some()
}

/// A header's year, month, day, hour (of 24), minute and second.
fn header_fields(line: &[u8]) -> Option<[u32; 6]> {
    let month = MONTHS.iter().position(|m| line.starts_with(m))? + 1;
    let rest = line.get(3..)?.strip_prefix(b" ")?;
    let (day, rest) = number(rest, 1, 2)?;
    let rest = rest.strip_prefix(b", ")?;
    let (year, rest) = number(rest, 4, 4)?;
    let rest = rest.strip_prefix(b" ")?;
    let (hour, rest) = number(rest, 1, 2)?;
    let (minute, rest) = number(rest.strip_prefix(b":")?, 2, 2)?;
    let (second, rest) = number(rest.strip_prefix(b":")?, 2, 2)?;
    let rest = rest.strip_prefix(b" ")?;
    let pm = match rest.get(..2)? {
        b"AM" => false,
        b"PM" => true,
        _ => return None,
    };
    if !(rest.len() == 2 || rest[2] == b' ') || !(1..=12).contains(&hour) || day == 0 {
        return None;
    }
    let hour = hour % 12 + if pm { 12 } else { 0 };
    Some([year, month as u32, day, hour, minute, second])
}

/// The level and message of a record's second line (`INFO: refund ...`).
pub(crate) fn message_line(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = line.iter().take(8).position(|&b| b == b':')?;
    let level = &line[..colon];
    let message = line[colon + 1..].strip_prefix(b" ")?;
    LEVELS.contains(&level).then_some((level, message))
}

/// Digits, between `min` and `max` of them, and what follows.
fn number(text: &[u8], min: usize, max: usize) -> Option<(u32, &[u8])> {
    let n = text
        .iter()
        .take(max)
        .take_while(|b| b.is_ascii_digit())
        .count();
    if n < min {
        return None;
    }
    let value = std::str::from_utf8(&text[..n]).ok()?.parse().ok()?;
    Some((value, &text[n..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_message_lines() {
        let cases = [
            (
                "Dec 06, 2026 1:21:34 AM com.acme.Payments create",
                "2026-12-06T01:21:34",
            ),
            ("Dec 6, 2026 12:05:00 AM c.P m", "2026-12-06T00:05:00"),
            ("Jan 31, 2027 12:00:01 PM", "2027-01-31T12:00:01"),
            (
                "Nov 03, 2026 11:59:59 PM com.acme.Agent run",
                "2026-11-03T23:59:59",
            ),
        ];
        for (line, iso) in cases {
            assert_eq!(header_time(line.as_bytes()).as_deref(), Some(iso), "{line}");
        }
        for line in [
            "Dec 06 2026 1:21:34 AM x",
            "Dec 06, 2026 13:21:34 PM x",
            "Dec 06, 2026 1:21:34 AMx",
            "Decided 06, 2026",
            "December 06, 2026 1:21:34 AM x",
        ] {
            assert_eq!(header_time(line.as_bytes()), None, "{line}");
        }
        assert_eq!(
            message_line(b"INFO: refund re_1 created"),
            Some((&b"INFO"[..], &b"refund re_1 created"[..]))
        );
        assert_eq!(
            message_line(b"SEVERE: java.net.http.HttpTimeoutException: request timed out")
                .map(|m| m.0),
            Some(&b"SEVERE"[..])
        );
        assert_eq!(message_line(b"Caused by: java.io.IOException: x"), None);
        assert_eq!(message_line(b"INFO:refund"), None);
    }
}
