//! Layouts that write the level before the timestamp: the Django docs' "verbose" formatter,
//! which Django projects copy (`{levelname} {asctime} {module} {process:d} {thread:d}
//! {message}`: `INFO 2026-12-07 14:19:34,919 views 17272 139677115872960 Refund re_1 created
//! ...`), and Python's `%(levelname)s %(asctime)s ...` or `%(levelname)-8s %(asctime)s ...`.
//! Such a line has no timestamp at its start, so every line of such a log was skipped.
//! Asked only of lines the stamped shapes did not take.
//!
//! The process and thread ids such layouts write after the logger's name are read past too,
//! wherever the level stands (`INFO views 17272 139677115872960 Refund ...` after a stamp):
//! only of a message that read as nothing with them, so a message that starts with a
//! number (`201 Created ...`) is read as it was.

use super::level::{LEVELS, is_logger_name};
use super::{TextParser, Verdict, idle};
use crate::ingest::lines::Ahead;
use crate::time::Stamp;

/// Where the timestamp starts in `line`, after a level in capitals (Python's `levelname`)
/// padded with blanks or not: the first byte after the blanks, when it is a digit.
pub(crate) fn stamp_start(line: &[u8]) -> Option<usize> {
    // AWS Lambda's Python runtime: `[INFO]\t2026-12-07T08:07:00.123Z\t...`.
    if line.first() == Some(&b'[') {
        return super::lambda::python_stamp_start(line);
    }
    let word_end = line.iter().take(9).position(|&b| b == b' ')?;
    if !LEVELS.contains(&&line[..word_end]) {
        return None;
    }
    let blanks = line[word_end..].iter().take_while(|&&b| b == b' ').count();
    let start = word_end + blanks;
    line.get(start)
        .is_some_and(u8::is_ascii_digit)
        .then_some(start)
}

/// The message after the logger's name that starts `msg` (the word after the stamp, where
/// the level came before it): a name in one word, or a module's dotted path when process
/// or thread ids follow it (without them, `httpx.ReadTimeout timed out` may be a message).
pub(super) fn after_name(msg: &[u8]) -> Option<&[u8]> {
    let blank = memchr::memchr(b' ', msg)?;
    let (name, rest) = (&msg[..blank], &msg[blank + 1..]);
    let one_word = !name.contains(&b'.') && !name.contains(&b':');
    let named = is_logger_name(name) && (one_word || after_ids(rest).is_some());
    (named && rest.first().is_some_and(|b| !b.is_ascii_whitespace())).then_some(rest)
}

/// The message after one or two numbers at the start of `msg`, each followed by one blank:
/// the process and thread ids of `{process:d} {thread:d}` (`17272 139677115872960 Refund
/// ...`).
pub(super) fn after_ids(msg: &[u8]) -> Option<&[u8]> {
    let mut rest = msg;
    for read in 0..2 {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        match rest.get(digits) {
            Some(b' ') if digits > 0 => rest = &rest[digits + 1..],
            _ if read > 0 => break,
            _ => return None,
        }
    }
    rest.first()
        .is_some_and(|b| !b.is_ascii_whitespace())
        .then_some(rest)
}

impl TextParser {
    /// A level before the timestamp (`INFO 2026-12-07 14:19:34,919 views ...`,
    /// [`stamp_start`]): the timestamp, and how many bytes it took with the level.
    #[cold]
    pub(super) fn level_first_stamp(&mut self, line: &[u8]) -> Option<(Stamp, usize)> {
        let start = stamp_start(line)?;
        let (stamp, used) = self.dates.parse_stamp(&line[start..], self.zone)?;
        Some((stamp, start + used))
    }

    /// `msg`, the message after a logger's name; when it reads as nothing, read again past
    /// the process and thread ids that may follow the name ([`after_ids`]).
    #[cold]
    pub(super) fn read_after_logger(
        &mut self,
        unsplit: idle::Unsplit,
        msg: &[u8],
        ahead: Ahead,
    ) -> Verdict {
        // `INFO payments {"event": ...}`: a JSON object logged as the message.
        if super::json_messages::may_be_object(msg) {
            return self.json_object(unsplit.n, msg, Some(unsplit.at.at));
        }
        match self.read_message(idle::Unsplit { msg, ..unsplit }, ahead) {
            Verdict::Ignored => match after_ids(msg) {
                Some(msg) => self.read_message(idle::Unsplit { msg, ..unsplit }, ahead),
                None => Verdict::Ignored,
            },
            verdict => verdict,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_before_the_stamp_is_read_past() {
        assert_eq!(
            stamp_start(b"INFO 2026-12-07 14:19:34,919 views 1 2 Refund"),
            Some(5)
        );
        assert_eq!(stamp_start(b"WARNING  2026-12-07 14:19:34,919 x"), Some(9));
        assert_eq!(stamp_start(b"CRITICAL 14:19:34 x"), Some(9));
        for other in [
            &b"Info 2026-12-07 14:19:34,919 x"[..],
            b"INFO: 2026-12-07 14:19:34,919 x",
            b"INFO refund created 4500",
            b"REFUND 2026-12-07 x",
            b"INFO",
        ] {
            assert_eq!(
                stamp_start(other),
                None,
                "{}",
                String::from_utf8_lossy(other)
            );
        }
    }

    #[test]
    fn a_name_and_its_ids_are_read_past() {
        let msg = b"views 17272 139677115872960 Refund re_1 created".as_slice();
        let after = after_name(msg).unwrap();
        assert_eq!(after, b"17272 139677115872960 Refund re_1 created");
        assert_eq!(after_ids(after), Some(&b"Refund re_1 created"[..]));
        assert_eq!(after_ids(b"17272 Refund re_1"), Some(&b"Refund re_1"[..]));
        assert_eq!(
            after_name(b"payments.views 17272 Refund re_1"),
            Some(&b"17272 Refund re_1"[..])
        );
        // A dotted word without ids may be the message's (an exception's class).
        assert_eq!(after_name(b"httpx.ReadTimeout timed out"), None);
        assert_eq!(after_name(b"payments.views Refund re_1"), None);
        // No number, a number run into a word, a third number left as the message's.
        assert_eq!(after_ids(b"Refund re_1"), None);
        assert_eq!(after_ids(b"17272a Refund"), None);
        assert_eq!(after_ids(b"1 2 3 Refund"), Some(&b"3 Refund"[..]));
        assert_eq!(after_ids(b"17272  Refund"), None);
    }
}
