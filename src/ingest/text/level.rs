//! A log level between the timestamp and the message (`14:02:11.402  INFO  POST ...`), as
//! loggers configured with a level column write: read past, so that such a log reads as the
//! plain spelling (SPEC §3.1) does. Without this, every line of such a log was *ignored*.

/// The levels read past, in any case, bare or in brackets (`[WARN]`), followed by the two or
/// more blanks (or a tab) that end a field.
const LEVELS: &[&[u8]] = &[
    b"TRACE",
    b"DEBUG",
    b"INFO",
    b"NOTICE",
    b"WARN",
    b"WARNING",
    b"ERROR",
    b"ERR",
    b"CRIT",
    b"CRITICAL",
    b"FATAL",
    b"SEVERE",
];

/// `msg` without a leading level field.
#[inline]
pub(super) fn without_level(msg: &[u8]) -> &[u8] {
    // The plain messages start `agent`, a method, a status, an exception's module or an
    // effect's kind: one byte tells nearly all of them from a level.
    match msg.first() {
        Some(b'T' | b'D' | b'I' | b'N' | b'W' | b'E' | b'C' | b'F' | b'S' | b'[') => {}
        Some(b't' | b'd' | b'i' | b'n' | b'w' | b'e' | b'c' | b'f' | b's') => {}
        _ => return msg,
    }
    let (word, after) = match msg.iter().position(|&b| b == b' ' || b == b'\t') {
        Some(end) => (&msg[..end], &msg[end..]),
        None => return msg,
    };
    let word = word
        .strip_prefix(b"[")
        .and_then(|w| w.strip_suffix(b"]"))
        .unwrap_or(word);
    let ends_field = after.starts_with(b"  ") || after.starts_with(b"\t");
    if ends_field && LEVELS.iter().any(|l| l.eq_ignore_ascii_case(word)) {
        let rest = after.trim_ascii_start();
        if !rest.is_empty() {
            return rest;
        }
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::without_level;

    #[test]
    fn levels_are_read_past() {
        for line in [
            "INFO  agent run 7f3a  started",
            "info  agent run 7f3a  started",
            "Warning     agent run 7f3a  started",
            "[ERROR]  agent run 7f3a  started",
            "DEBUG\tagent run 7f3a  started",
        ] {
            assert_eq!(
                without_level(line.as_bytes()),
                b"agent run 7f3a  started",
                "{line}"
            );
        }
    }

    #[test]
    fn messages_that_only_look_like_levels_are_kept() {
        for line in [
            "agent run 7f3a  started",
            "POST https://payments.internal/v1/refunds  (attempt 1)",
            "ConnectionError: refused",
            "INFO",
            "INFO  ",
            "INFO message after one space",
            "Error: something  else",
            "charge ch_1  order A-1  4500p  captured",
            "information  is not a level",
        ] {
            let kept = without_level(line.trim_end().as_bytes());
            assert_eq!(kept, line.trim_end().as_bytes(), "{line}");
        }
    }
}
