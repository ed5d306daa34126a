//! Ruby's `Logger` default layout, which Rails writes in production too:
//! `I, [2026-12-06T03:05:31.860855 #5365]  INFO -- agent: message`: the level's letter, the
//! local time and the process id in brackets, the level, `--`, the program's name (often
//! empty), a colon, the message. Read as `2026-12-06T03:05:31.860855  message` would be (local
//! time: `--input-tz`). Without this, every line of such a log was skipped.

/// Where the timestamp starts, if `line` starts as the layout does (`I, [`).
pub(crate) fn stamp_start(line: &[u8]) -> Option<usize> {
    match line {
        [
            b'D' | b'I' | b'W' | b'E' | b'F' | b'A' | b'U',
            b',',
            b' ',
            b'[',
            ..,
        ] => Some(4),
        _ => None,
    }
}

/// Where the message's blank starts, given what follows the timestamp: ` #PID]`, the level,
/// ` -- `, the program's name and its colon. The returned offset is within `after`.
pub(crate) fn message_start(after: &[u8]) -> Option<usize> {
    let pid = after.strip_prefix(b" #")?;
    let digits = pid.iter().take_while(|b| b.is_ascii_digit()).count();
    let rest = pid.get(digits..)?.strip_prefix(b"]")?;
    if digits == 0 {
        return None;
    }
    let dashes = find(rest, b" -- ")?;
    let level = rest[..dashes].trim_ascii();
    if level.is_empty() || !level.iter().all(u8::is_ascii_uppercase) {
        return None;
    }
    // The name may hold colons (`Payments::RefundService`): it ends at `: `, or at a
    // colon ending the line (an empty message).
    let name_at = dashes + 4;
    let name = &rest[name_at..];
    let colon = match find(name, b": ") {
        Some(at) => at,
        None if name.ends_with(b":") => name.len() - 1,
        None => return None,
    };
    Some(after.len() - rest.len() + name_at + colon + 1)
}

/// An exception as `Logger` writes one handed to it (`logger.warn(e)`): its message, then
/// its class in brackets (`Net::ReadTimeout with #<Socket:(closed)> (Net::ReadTimeout)`),
/// as `full_message` starts it, after where it was raised (`/usr/lib/ruby/3.1.0/net/
/// protocol.rb:219:in `rbuf_fill': ... (Net::ReadTimeout)`). The class and the message;
/// `is_class` says which names are exceptions' (the caller's rule for every language).
pub(crate) fn trailing_exception(
    field: &[u8],
    is_class: impl Fn(&[u8]) -> bool,
) -> Option<(&[u8], &[u8])> {
    let inner = field.strip_suffix(b")")?;
    let open = inner.iter().rposition(|&b| b == b'(')?;
    let class = &inner[open + 1..];
    let before = inner[..open].strip_suffix(b" ")?;
    if class.is_empty() || class.contains(&b' ') || !is_class(class) {
        return None;
    }
    Some((class, without_raise_site(before.trim_ascii())))
}

/// `message` without the `path:line:in `method': ` before it (and the program's words
/// before that: `refund attempt 1 failed: /usr/lib/...`).
fn without_raise_site(message: &[u8]) -> &[u8] {
    let Some(at) = find(message, b":in ") else {
        return message;
    };
    let (before, rest) = (&message[..at], &message[at + 4..]);
    let site = before.rsplit(|&b| b == b' ').next().unwrap_or(before);
    let quoted = rest.first().is_some_and(|&q| q == b'`' || q == b'\'');
    match find(rest, b"': ") {
        Some(end) if quoted && site.contains(&b':') => &rest[end + 3..],
        _ => message,
    }
}

/// A line of a Ruby backtrace: `/usr/lib/ruby/3.1.0/net/protocol.rb:193:in `readuntil'`,
/// or `from` before it (`full_message`'s lines after the first).
pub(crate) fn is_backtrace_line(line: &[u8]) -> bool {
    let frame = line.strip_prefix(b"from ").unwrap_or(line);
    let Some(at) = find(frame, b":in ") else {
        return false;
    };
    let site = &frame[..at];
    let Some(colon) = site.iter().rposition(|&b| b == b':') else {
        return false;
    };
    let (file, number) = (&site[..colon], &site[colon + 1..]);
    !file.is_empty()
        && !file.contains(&b' ')
        && !number.is_empty()
        && number.iter().all(u8::is_ascii_digit)
        && matches!(frame.get(at + 4), Some(b'`' | b'\''))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_is_read_to_the_programs_colon() {
        let after = b" #5365]  INFO -- : refund created id=re_1";
        let at = message_start(after).unwrap();
        assert_eq!(&after[at..], b" refund created id=re_1");
        let named = b" #5365] ERROR -- agent: POST http://x/v1/refunds";
        let at = message_start(named).unwrap();
        assert_eq!(&named[at..], b" POST http://x/v1/refunds");
        let class = b" #18704]  INFO -- Payments::RefundService: refund created id=re_1";
        let at = message_start(class).unwrap();
        assert_eq!(&class[at..], b" refund created id=re_1");
    }

    #[test]
    fn an_exception_logged_whole_is_its_class_and_message() {
        let is_class = |c: &[u8]| c.contains(&b':') || c.ends_with(b"Error");
        let (class, message) = trailing_exception(
            b"Net::ReadTimeout with #<Socket:(closed)> (Net::ReadTimeout)",
            is_class,
        )
        .unwrap();
        assert_eq!(
            (class, message),
            (
                &b"Net::ReadTimeout"[..],
                &b"Net::ReadTimeout with #<Socket:(closed)>"[..]
            )
        );
        let full = b"/usr/lib/ruby/3.1.0/net/protocol.rb:219:in `rbuf_fill': end of file reached (EOFError)";
        let (class, message) = trailing_exception(full, is_class).unwrap();
        assert_eq!(
            (class, message),
            (&b"EOFError"[..], &b"end of file reached"[..])
        );
        let said = b"refund attempt 1 failed: /usr/lib/ruby/3.1.0/net/protocol.rb:219:in `rbuf_fill': timed out (Net::ReadTimeout)";
        assert_eq!(trailing_exception(said, is_class).unwrap().1, b"timed out");
        // Words in brackets that name no exception's class are the message's own.
        assert_eq!(
            trailing_exception(b"refund created (partial)", is_class),
            None
        );
        assert_eq!(trailing_exception(b"retrying (attempt 2)", is_class), None);
    }

    #[test]
    fn backtrace_lines_are_file_line_and_method() {
        assert!(is_backtrace_line(
            b"/usr/lib/ruby/3.1.0/net/protocol.rb:193:in `readuntil'"
        ));
        assert!(is_backtrace_line(
            b"from app/tool.rb:57:in 'Tool#issue_refund'"
        ));
        assert!(!is_backtrace_line(b"refund re_1 created:in order"));
        assert!(!is_backtrace_line(b"POST http://x:8080/v1:in `x'"));
    }

    #[test]
    fn other_brackets_are_not_the_layout() {
        assert_eq!(stamp_start(b"[2026-12-06T03:05:31Z] INFO x"), None);
        assert_eq!(stamp_start(b"In, [x"), None);
        assert_eq!(message_start(b"] INFO -- : x"), None);
        assert_eq!(message_start(b" #12] info -- : x"), None);
        assert_eq!(message_start(b" #] INFO -- : x"), None);
        assert_eq!(message_start(b" #12]  INFO : x"), None);
    }
}
