//! The headers syslog daemons and journald put before a program's message, as their files
//! and `journalctl` write them ([`docs/inputs/text.md`]):
//! - after an RFC 3339 stamp, `HOST TAG[PID]: ` or `HOST TAG: ` (rsyslog's
//!   `RSYSLOG_FileFormat`, the default on Debian; `journalctl -o short-iso[-precise]`):
//!   [`after_host_and_tag`];
//! - the BSD stamp of RFC 3164 with no year, `Dec  6 08:07:00 HOST TAG[PID]: ` (rsyslog's
//!   `RSYSLOG_TraditionalFileFormat`; `journalctl -o short`, and `-o short-precise` with
//!   microseconds): [`bsd`], dated by [`year_of`];
//! - RFC 5424's `<165>1 STAMP HOST APP PROCID MSGID SD MSG`, with or without its `<PRI>`
//!   (rsyslog's `RSYSLOG_SyslogProtocol23Format` in a file): [`rfc5424`].
//!
//! Asked only of lines that read as nothing with the header on (see `text::syslog_lines`
//! and [`super::gateway`]): an ordinary line never pays for them.

use crate::time::Zone;
use chrono::{Datelike, NaiveDate};

/// What a syslog header says of its line: the program's message, and the process that
/// wrote it when the header names one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header<'a> {
    /// `HOST TAG[PID]` (RFC 5424's `HOST APP-NAME PROCID`) as the header writes them, when
    /// it has a pid: the lines of one process have the same, another's (another pid, or
    /// the same pid on another host) differ. A tag without a pid names no process.
    pub process: Option<&'a [u8]>,
    pub msg: &'a [u8],
}

/// A line with an RFC 3339 stamp then `HOST TAG[PID]: `: the stamp and the message.
pub(crate) fn after_stamp_header(line: &[u8], zone: Zone) -> Option<(&[u8], &[u8])> {
    // An RFC 3339 stamp has no blank, so the header's single blank after it is the line's
    // first: two there (a text trace's fields) are no header, told before the stamp is read.
    let blank = memchr::memchr(b' ', line)?;
    if line.get(blank + 1) == Some(&b' ') {
        return None;
    }
    let (_, used) = crate::time::parse_stamp(line, zone)?;
    let stamp = &line[..used];
    is_rfc3339(stamp).then_some(())?;
    Some((stamp, after_host_and_tag(&line[used..])?.msg))
}

/// Whether a stamp is RFC 3339's, as syslog daemons write theirs: a `T` between date and
/// time, and `Z` or an offset (`+00:00`, journalctl's `+0000`). A logger's own stamp
/// (`2026-12-06 08:07:00,266`, `16:05:38`) is not, so its `Worker ID: ...` is no host
/// and tag.
pub(crate) fn is_rfc3339(stamp: &[u8]) -> bool {
    let offset = |tail: &[u8]| match tail {
        [sign, h1, h2, b':', m1, m2] | [_, sign, h1, h2, m1, m2] => {
            matches!(sign, b'+' | b'-') && [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit())
        }
        _ => false,
    };
    stamp.len() >= 20
        && stamp[10] == b'T'
        && (stamp.ends_with(b"Z") || offset(&stamp[stamp.len() - 6..]))
}

/// Whether a line opens with a BSD stamp's or RFC 5424's header (for detection: such a
/// file is a text log).
pub(crate) fn opens_with_header(line: &[u8]) -> bool {
    may_open_header(line) && (bsd(line).is_some() || rfc5424(line).is_some())
}

/// The message after `HOST TAG[PID]: ` or `HOST TAG: `, and the process it names; `rest`
/// is the line after its stamp, from the blank after it.
pub(crate) fn after_host_and_tag(rest: &[u8]) -> Option<Header<'_>> {
    let rest = rest.strip_prefix(b" ")?;
    let host_end = memchr::memchr(b' ', rest)?;
    if host_end == 0 || !rest[..host_end].iter().all(|&b| b.is_ascii_graphic()) {
        return None;
    }
    let (tag_len, has_pid, msg) = after_tag(&rest[host_end + 1..])?;
    let process = has_pid.then(|| &rest[..host_end + 1 + tag_len]);
    Some(Header { process, msg })
}

/// The message after `TAG[PID]: ` or `TAG: ` (a tag is a program's name: no blank, no
/// quote; its pid digits in brackets); a message may be empty (`TAG:` ends the line). With
/// it, the length of `TAG[PID]` and whether it has the pid.
fn after_tag(rest: &[u8]) -> Option<(usize, bool, &[u8])> {
    let colon = memchr::memchr(b':', &rest[..rest.len().min(MAX_TAG + 1)])?;
    let tag = &rest[..colon];
    let (name, has_pid) = match memchr::memchr(b'[', tag) {
        Some(open) => {
            let pid = tag[open + 1..].strip_suffix(b"]")?;
            if pid.is_empty() || !pid.iter().all(u8::is_ascii_digit) {
                return None;
            }
            (&tag[..open], true)
        }
        None => (tag, false),
    };
    let name_ok = !name.is_empty()
        && (name.iter()).all(|&b| b.is_ascii_graphic() && !matches!(b, b'"' | b'\'' | b'[' | b']'));
    if !name_ok {
        return None;
    }
    match &rest[colon + 1..] {
        [] => Some((colon, has_pid, &[])),
        [b' ', msg @ ..] => Some((colon, has_pid, msg)),
        _ => None,
    }
}

/// How long a tag may be: rsyslog's limit for a program's name is 32 bytes, a pid in
/// brackets follows.
const MAX_TAG: usize = 64;

/// A BSD stamp (RFC 3164): no year, the day padded with a blank or a zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BsdStamp<'a> {
    pub month: u32,
    pub day: u32,
    /// `HH:MM:SS`, with journalctl's `-o short-precise` microseconds after it.
    pub time: &'a [u8],
}

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// `Dec  6 08:07:00 HOST TAG[PID]: MSG` (or `Dec 06 08:07:00.266000 ...`): its stamp and
/// header.
pub(crate) fn bsd(line: &[u8]) -> Option<(BsdStamp<'_>, Header<'_>)> {
    let month = 1 + MONTHS.iter().position(|m| line.get(..3) == Some(&m[..]))? as u32;
    let day_text = match line.get(3..7)? {
        [b' ', b' ', d, b' '] | [b' ', b'0', d, b' '] if d.is_ascii_digit() => &line[5..6],
        [b' ', d1, d2, b' '] if d1.is_ascii_digit() && d2.is_ascii_digit() => &line[4..6],
        _ => return None,
    };
    let day = day_text.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0'));
    let time_len = clock_len(&line[7..])?;
    let time = &line[7..7 + time_len];
    let msg = after_host_and_tag(&line[7 + time_len..])?;
    (1..=31)
        .contains(&day)
        .then_some((BsdStamp { month, day, time }, msg))
}

/// The length of `HH:MM:SS` at the start of `b`, with a fraction after it if any.
fn clock_len(b: &[u8]) -> Option<usize> {
    let clock = b.get(..8)?;
    let shape = clock.iter().enumerate().all(|(i, c)| match i {
        2 | 5 => *c == b':',
        _ => c.is_ascii_digit(),
    });
    if !shape {
        return None;
    }
    let fraction = match b.get(8) {
        Some(b'.') => 1 + b[9..].iter().take_while(|c| c.is_ascii_digit()).count(),
        _ => 0,
    };
    (fraction != 1).then_some(8 + fraction)
}

/// RFC 5424's `<PRI>1 STAMP HOST APP PROCID MSGID SD MSG`, `<PRI>` optional: its stamp and
/// its header, the message empty when it has none, the process `HOST APP PROCID` unless
/// PROCID is `-`. Structured data (`-` or `[id k="v" ...]...`) is read past. A line whose
/// stamp is `-` (none) is not read as one: it has no time.
pub(crate) fn rfc5424(line: &[u8]) -> Option<(&[u8], Header<'_>)> {
    let line = match line.strip_prefix(b"<") {
        Some(pri) => {
            let close = pri.iter().take(4).position(|&b| b == b'>')?;
            if close == 0 || !pri[..close].iter().all(u8::is_ascii_digit) {
                return None;
            }
            &pri[close + 1..]
        }
        None => line,
    };
    let rest = line.strip_prefix(b"1 ")?;
    let mut words = rest.splitn(6, |&b| b == b' ');
    let stamp = words
        .next()
        .filter(|s| s.first().is_some_and(u8::is_ascii_digit))?;
    // HOST, APP-NAME, PROCID, MSGID: a word each (`-` for none).
    let mut header = [&[][..]; 4];
    for word in &mut header {
        *word = words
            .next()
            .filter(|w| !w.is_empty() && w.iter().all(u8::is_ascii_graphic))?;
    }
    let sd_and_msg = words.next()?;
    let msg = after_structured_data(sd_and_msg)?;
    // A message may open with a byte-order mark (RFC 5424 §6.4).
    let msg = msg.strip_prefix("\u{feff}".as_bytes()).unwrap_or(msg);
    // The words lie one after another in `rest`, a blank between each.
    let host_at = stamp.len() + 1;
    let procid_end = host_at + header[0].len() + header[1].len() + header[2].len() + 2;
    let process = (header[2] != b"-").then(|| &rest[host_at..procid_end]);
    Some((stamp, Header { process, msg }))
}

/// The message after RFC 5424's structured data: `-`, or elements `[ID PARAM="VALUE" ...]`
/// one after another (a value escapes `"`, `\` and `]` with a backslash).
fn after_structured_data(b: &[u8]) -> Option<&[u8]> {
    let end = match b.first()? {
        b'-' => 1,
        b'[' => {
            let mut at = 0;
            while b.get(at) == Some(&b'[') {
                at += element_len(&b[at..])?;
            }
            at
        }
        _ => return None,
    };
    match &b[end..] {
        [] => Some(&[]),
        [b' ', msg @ ..] => Some(msg),
        _ => None,
    }
}

/// The length of one structured-data element `[...]` at the start of `b`.
fn element_len(b: &[u8]) -> Option<usize> {
    let (mut quoted, mut escaped) = (false, false);
    for (i, &c) in b.iter().enumerate().skip(1) {
        match c {
            _ if escaped => escaped = false,
            b'\\' if quoted => escaped = true,
            b'"' => quoted = !quoted,
            b']' if !quoted => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// Whether an unstamped line may open with a syslog header: a month's abbreviation then a
/// blank, or RFC 5424's `<PRI>` or version. One look at the first bytes.
#[inline]
pub(crate) fn may_open_header(line: &[u8]) -> bool {
    match line {
        [b'<', d, ..] => d.is_ascii_digit(),
        [b'1', b' ', d, ..] => d.is_ascii_digit(),
        [a, b, c, b' ', ..] => {
            a.is_ascii_uppercase() && b.is_ascii_lowercase() && c.is_ascii_lowercase()
        }
        _ => false,
    }
}

/// Where the year of a BSD stamp is taken from: a date its lines are near, or the latest
/// instant they may be at (none written after the file was last written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum YearFrom {
    /// The stamp is in the year that puts it nearest this date (`--date`, `# date:`): a
    /// log from December read with a January date is last year's.
    Near(NaiveDate),
    /// The stamp is in the latest year that puts it no later than the day after this date
    /// (the file's modification time; the scan's time): a day of slack for the zones.
    NotAfter(NaiveDate),
}

/// The year of a BSD stamp's `month` and `day`, by `from`; `None` for a day no year
/// near it has (`Feb 30`).
pub(crate) fn year_of(month: u32, day: u32, from: YearFrom) -> Option<i32> {
    let (YearFrom::Near(date) | YearFrom::NotAfter(date)) = from;
    // Five years back: 29 February is in one of any four.
    let dated = |y: i32| NaiveDate::from_ymd_opt(y, month, day).map(|d| (y, d));
    let mut candidates = (date.year() - 5..=date.year() + 1).filter_map(dated);
    match from {
        YearFrom::Near(_) => candidates
            .min_by_key(|(_, d)| (d.signed_duration_since(date).num_days().abs(), -d.year()))
            .map(|(y, _)| y),
        YearFrom::NotAfter(_) => candidates
            .rfind(|(_, d)| d.signed_duration_since(date).num_days() <= 1)
            .map(|(y, _)| y),
    }
}

#[cfg(test)]
mod tests;
