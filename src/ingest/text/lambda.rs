//! AWS Lambda's runtimes' lines, tab-separated (docs/inputs/text.md): Node's
//! `2026-12-07T08:07:00.123Z\t<request id>\tINFO\tmessage` and Python's
//! `[INFO]\t2026-12-07T08:07:00.123Z\t<request id>\tmessage`. The stamp is read as any, the
//! request id and Node's level passed over, and the message read as a message after a stamp
//! (a JSON object per [`super::json_messages`]). The platform's own lines (`START RequestId:
//! ...`, `END ...`, `REPORT ...`) are known non-events ([`crate::ingest::banner`]).
//!
//! Asked only of a line whose stamp a tab follows, or that opens with `[`.

use super::level::LEVELS;

/// The request id after the line's stamp (`rest`, from the tab after it; empty outside an
/// invocation), and the rest of the line without it and Node's level: from the tab before
/// the message. `None` when it is not Lambda's.
#[cold]
pub(super) fn after_request_id(rest: &[u8]) -> Option<(&[u8], &[u8])> {
    let after_id = rest.strip_prefix(b"\t")?;
    let tab = memchr::memchr(b'\t', after_id)?;
    let id = &after_id[..tab];
    if !is_request_id(id) {
        return None;
    }
    let after_id = &after_id[tab..];
    // Node writes its level (`console.info`: INFO, `console.error`: ERROR) before the message.
    let level = after_id[1..].iter().take(6).position(|&b| b == b'\t');
    match level {
        Some(end) if NODE_LEVELS.contains(&&after_id[1..1 + end]) => {
            Some((id, &after_id[1 + end..]))
        }
        _ => Some((id, after_id)),
    }
}

/// The invocation the runtime's lines read so far were written in: the request id of the
/// latest, unless the platform's `START RequestId: ...` of another came after it (an
/// invocation that has logged nothing yet).
#[derive(Default)]
pub(super) struct Invocation {
    id: Option<[u8; 36]>,
}

impl Invocation {
    /// A runtime's line with request id `id` (none outside an invocation).
    pub(super) fn line(&mut self, id: &[u8]) {
        self.id = id.try_into().ok();
    }

    /// A line without a stamp that may be the platform's `START RequestId: ID ...`.
    pub(super) fn platform_line(&mut self, line: &[u8]) {
        if let Some(rest) = line.strip_prefix(b"START RequestId: ")
            && self.id.is_some_and(|id| !rest.starts_with(&id))
        {
            self.id = None;
        }
    }

    /// Whether the latest lines were an invocation's, and no other has started since.
    pub(super) fn is_open(&self) -> bool {
        self.id.is_some()
    }
}

/// The error of Python's runtime's report of what a handler raised (awslambdaric's
/// `log_error`): `[ERROR] Type: message` (or `[ERROR] Type`), its traceback's lines after it
/// joined by `\r` (`Traceback (most recent call last):` first); without them, only when the
/// type is named as exceptions are (`...Error`, `...Timeout`, [`is_exception_header`]).
pub(super) fn unhandled_error(line: &[u8]) -> Option<&[u8]> {
    let rest = line.strip_prefix(b"[ERROR] ")?;
    let (error, traced) = match memchr::memchr(b'\r', rest) {
        Some(cr) => (&rest[..cr], rest[cr + 1..].starts_with(TRACEBACK)),
        None => (rest, false),
    };
    let name_end = memchr::memchr(b':', error).unwrap_or(error.len());
    let (name, after) = error.split_at(name_end);
    let named = name.first().is_some_and(u8::is_ascii_alphabetic)
        && (name.iter()).all(|&b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_')
        && (after.is_empty() || after.starts_with(b": "));
    (named && (traced || super::tail::is_exception_header(error))).then_some(error)
}

const TRACEBACK: &[u8] = b"Traceback (most recent call last):";

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
            Some((ID.as_bytes(), &b"\trefund created"[..]))
        );
        let python = format!("\t{ID}\trefund created");
        assert_eq!(
            after_request_id(python.as_bytes()),
            Some((ID.as_bytes(), &b"\trefund created"[..]))
        );
        assert_eq!(
            after_request_id(b"\tundefined\tWARN\tstarting"),
            Some((&b"undefined"[..], &b"\tstarting"[..]))
        );
        // No request id: another program's tab-separated line.
        assert_eq!(after_request_id(b"\tworker-1\tINFO\trefund created"), None);
        assert_eq!(after_request_id(format!(" {ID}\tINFO\tx").as_bytes()), None);
        // A message that opens with a word like a level is kept when no tab ends it.
        let words = format!("\t{ID}\tINFO refund created");
        assert_eq!(
            after_request_id(words.as_bytes()).map(|(_, after)| after),
            Some(&b"\tINFO refund created"[..])
        );
    }

    /// awslambdaric's report of an unhandled error: its error, with its traceback after it
    /// (`\r`s), or alone when named as exceptions are; any other `[ERROR]` line is none.
    #[test]
    fn the_runtimes_report_of_an_unhandled_error() {
        let read = |l: &str| {
            unhandled_error(l.as_bytes()).map(|e| String::from_utf8_lossy(e).into_owned())
        };
        let traced = "[ERROR] LedgerTimeout: ledger did not answer within 3 s\rTraceback (most recent call last):\r\u{a0} File \"/var/task/handler.py\", line 33, in handler";
        assert_eq!(
            read(traced).as_deref(),
            Some("LedgerTimeout: ledger did not answer within 3 s")
        );
        let bare = "[ERROR] StopIteration\rTraceback (most recent call last):\r";
        assert_eq!(read(bare).as_deref(), Some("StopIteration"));
        assert_eq!(
            read("[ERROR] Runtime.ImportModuleError: Unable to import module 'app'").as_deref(),
            Some("Runtime.ImportModuleError: Unable to import module 'app'")
        );
        for other in [
            "[ERROR] StopIteration",
            "[ERROR] refund failed: ledger down",
            "[ERROR] Config: bad\rTraceback",
            "[ERROR]\t2026-12-07T08:07:00.123Z\tLedgerTimeout: x",
            "[INFO] LedgerTimeout: x\rTraceback (most recent call last):",
            "ERROR LedgerTimeout: x",
        ] {
            assert_eq!(read(other), None, "{other:?}");
        }
    }

    /// The invocation is the latest line's, until another's START.
    #[test]
    fn an_invocation_is_open_from_its_lines_until_anothers_start() {
        let mut invocation = Invocation::default();
        assert!(!invocation.is_open());
        invocation.line(ID.as_bytes());
        assert!(invocation.is_open());
        invocation.platform_line(format!("START RequestId: {ID} Version: $LATEST").as_bytes());
        invocation.platform_line(format!("END RequestId: {ID}").as_bytes());
        assert!(invocation.is_open());
        invocation.platform_line(
            b"START RequestId: 774437d7-1794-4413-8f36-bf770a1d2317 Version: $LATEST",
        );
        assert!(!invocation.is_open());
        invocation.line(b"");
        assert!(!invocation.is_open());
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
