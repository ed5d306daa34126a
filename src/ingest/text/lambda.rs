//! AWS Lambda's runtimes' lines, tab-separated (docs/inputs/text.md): Node's
//! `2026-12-07T08:07:00.123Z\t<request id>\tINFO\tmessage` and Python's
//! `[INFO]\t2026-12-07T08:07:00.123Z\t<request id>\tmessage`. The stamp is read as any, the
//! request id and Node's level passed over, and the message read as a message after a stamp
//! (a JSON object per [`super::json_messages`]). The platform's own lines (`START RequestId:
//! ...`, `END ...`, `REPORT ...`) are known non-events ([`crate::ingest::banner`]).
//!
//! Asked only of a line whose stamp a tab follows, or that opens with `[`.

use super::level::LEVELS;

/// The rest of the line after its stamp (`rest`, from the tab after it) without the request
/// id and Node's level: from the tab before the message. `None` when it is not Lambda's.
#[cold]
pub(super) fn after_request_id(rest: &[u8]) -> Option<&[u8]> {
    let after_id = rest.strip_prefix(b"\t")?;
    let tab = memchr::memchr(b'\t', after_id)?;
    if !is_request_id(&after_id[..tab]) {
        return None;
    }
    let after_id = &after_id[tab..];
    // Node writes its level (`console.info`: INFO, `console.error`: ERROR) before the message.
    let level = after_id[1..].iter().take(6).position(|&b| b == b'\t');
    match level {
        Some(end) if NODE_LEVELS.contains(&&after_id[1..1 + end]) => Some(&after_id[1 + end..]),
        _ => Some(after_id),
    }
}

/// The levels Node's runtime writes (`console.trace` to `console.error`, and `FATAL`).
const NODE_LEVELS: [&[u8]; 6] = [b"TRACE", b"DEBUG", b"INFO", b"WARN", b"ERROR", b"FATAL"];

/// A request id (a UUID), or what the runtimes write outside an invocation: Node's
/// `undefined`, Python's nothing.
fn is_request_id(id: &[u8]) -> bool {
    let uuid = id.len() == 36
        && id.iter().enumerate().all(|(i, &b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        });
    uuid || id.is_empty() || id == b"undefined"
}

/// Python's `[INFO]\t` before the stamp: where the stamp starts.
pub(crate) fn python_stamp_start(line: &[u8]) -> Option<usize> {
    let close = line.iter().take(11).position(|&b| b == b']')?;
    let level = line.strip_prefix(b"[")?.get(..close - 1)?;
    let start = close + 2;
    (LEVELS.contains(&level)
        && line.get(close + 1) == Some(&b'\t')
        && line.get(start).is_some_and(u8::is_ascii_digit))
    .then_some(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "3f1c0b52-6a0e-4c59-9d1e-2b7f4a8c9e01";

    #[test]
    fn the_request_id_and_nodes_level_are_passed_over() {
        let node = format!("\t{ID}\tINFO\trefund created");
        assert_eq!(
            after_request_id(node.as_bytes()),
            Some(&b"\trefund created"[..])
        );
        let python = format!("\t{ID}\trefund created");
        assert_eq!(
            after_request_id(python.as_bytes()),
            Some(&b"\trefund created"[..])
        );
        assert_eq!(
            after_request_id(b"\tundefined\tWARN\tstarting"),
            Some(&b"\tstarting"[..])
        );
        // No request id: another program's tab-separated line.
        assert_eq!(after_request_id(b"\tworker-1\tINFO\trefund created"), None);
        assert_eq!(after_request_id(format!(" {ID}\tINFO\tx").as_bytes()), None);
        // A message that opens with a word like a level is kept when no tab ends it.
        let words = format!("\t{ID}\tINFO refund created");
        assert_eq!(
            after_request_id(words.as_bytes()),
            Some(&b"\tINFO refund created"[..])
        );
    }

    #[test]
    fn pythons_level_in_brackets_before_the_stamp() {
        assert_eq!(
            python_stamp_start(b"[INFO]\t2026-12-07T08:07:00.123Z\tx"),
            Some(7)
        );
        assert_eq!(
            python_stamp_start(b"[WARNING]\t2026-12-07T08:07:00.123Z"),
            Some(10)
        );
        assert_eq!(python_stamp_start(b"[INFO] 2026-12-07T08:07:00.123Z"), None);
        assert_eq!(
            python_stamp_start(b"[worker]\t2026-12-07T08:07:00.123Z"),
            None
        );
        assert_eq!(python_stamp_start(b"[INFO]\tstarted"), None);
        assert_eq!(python_stamp_start(b"[]\t2026"), None);
    }
}
