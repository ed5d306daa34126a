//! Rotated logs: `agent.log.2.gz`, `agent.log.1` and `agent.log` are one log cut in three,
//! and a tool call at the end of one file has its requests at the start of the next. Text
//! logs found together under such names are read in order by one parser ([`Rotated`]), as
//! the one log they were; each file keeps its own name, lines and accounts in the report.
//! Read apart, the requests after the cut belonged to no call and the write-up's incident
//! read as two decisions instead of one call's retry.

use super::container::Unended;
use super::source::{
    Failure, Input, Opened, Origin, Outcome, Reader, SNIFF_BYTES, open, telling_content,
};
use super::text::Rotated;
use super::{Format, ParseOptions, Parsed};
use std::collections::BTreeMap;
use std::io::{Cursor, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Where a file stands in its log's rotation: older files first.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Age {
    /// `NAME-20261130`, `NAME.2026-11-30`, `NAME.2026-11-30_14-00-00`: the date's digits.
    Dated(String),
    /// `NAME.1`, `NAME.2`...: a larger number is older, so the order key is its negation.
    Numbered(i64),
    /// `NAME` itself, written to now.
    Current,
}

/// The log a file name belongs to and its age in that log's rotation, if the name is a
/// rotated one (`agent.log.1`, `agent.log.2.gz`, `agent.log-20261130.gz`,
/// `agent.log.2026-11-30`). Any other name is its own log, `Current`.
pub fn rotation_of(name: &str) -> (&str, Age) {
    let bare = [".gz", ".zst"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
        .unwrap_or(name);
    let numbered = bare.rsplit_once('.').filter(|(base, n)| {
        !base.is_empty()
            && !base.ends_with('.')
            && (1..=4).contains(&n.len())
            && n.bytes().all(|b| b.is_ascii_digit())
    });
    if let Some((base, n)) = numbered {
        return (base, Age::Numbered(-n.parse::<i64>().unwrap_or(0)));
    }
    // A date (and time) the rotation wrote after a `.` or `-`: digits and separators, a
    // year of this era first, at least the date's eight digits. `agent-0.log`, `run-42`
    // are names.
    let stamp = |b: u8| b.is_ascii_digit() || b == b'-' || b == b'_';
    let from = bare.bytes().rposition(|b| !stamp(b)).map_or(0, |i| i + 1);
    let cut = match (
        bare.as_bytes().get(from.wrapping_sub(1)),
        bare.as_bytes().get(from),
    ) {
        (Some(b'.'), _) => from - 1,
        (_, Some(b'-')) => from,
        _ => return (name, Age::Current),
    };
    let (base, suffix) = (&bare[..cut], &bare[cut + 1..]);
    let digits: String = suffix.chars().filter(char::is_ascii_digit).collect();
    let dated = !base.is_empty()
        && !base.ends_with(['.', '-'])
        && digits.len() >= 8
        && (digits.starts_with("19") || digits.starts_with("20"));
    if dated {
        return (base, Age::Dated(digits));
    }
    (name, Age::Current)
}

/// Where an input shown as `display` sorts: by the path shown, except that a rotated
/// log's files sort together, oldest first (`agent.log.2.gz`, `agent.log.1`, `agent.log`),
/// so that its lines are numbered, listed and, at equal times, ordered as written.
pub fn order(display: &str) -> (&str, Age, &str) {
    let folder = display.rfind(['/', '\\']).map_or(0, |i| i + 1);
    let (log, age) = rotation_of(&display[folder..]);
    (&display[..folder + log.len()], age, display)
}

/// The inputs in groups to read together: each rotated log's files, oldest first, and
/// every other input alone. A log's files are grouped only when they sit in one folder and
/// there are two or more of them (its current file or earlier ones).
pub fn groups(inputs: &[Input]) -> Vec<Vec<usize>> {
    let mut logs: BTreeMap<(&Path, &str), Vec<(Age, usize)>> = BTreeMap::new();
    let mut alone = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let Origin::File(path) = &input.origin else {
            alone.push(vec![i]);
            continue;
        };
        let (Some(folder), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str()))
        else {
            alone.push(vec![i]);
            continue;
        };
        let (log, age) = rotation_of(name);
        logs.entry((folder, log)).or_default().push((age, i));
    }
    let mut groups = alone;
    for (_, mut files) in logs {
        files.sort();
        groups.push(files.into_iter().map(|(_, i)| i).collect());
    }
    groups.sort_by_key(|g| g[0]);
    groups
}

/// The log each input is a file of, by input index: the index of its group's oldest file
/// (correlation's [`crate::correlate::CorrelateOptions::logs`]).
pub fn logs(inputs: &[Input]) -> Vec<u32> {
    let mut logs = vec![0; inputs.len()];
    for group in groups(inputs) {
        for &i in &group {
            logs[i] = group[0] as u32;
        }
    }
    logs
}

/// Reads one rotated log's files (`group`, oldest first): its text files through one
/// parser, any other file alone. The events go with the last text file read; every file
/// keeps its own accounts.
pub fn read_group(
    inputs: &[Input],
    group: &[usize],
    forced: Option<Format>,
    opts: &ParseOptions,
    read: &AtomicU64,
) -> Vec<(usize, Outcome)> {
    let mut parser: Option<Rotated> = None;
    let mut outcomes: Vec<(usize, Outcome)> = Vec::with_capacity(group.len());
    let mut last_text = None;
    let uncounted = AtomicU64::new(0);
    // The next file's first line was read as the end of the last file's cut last line.
    let joined = AtomicBool::new(false);
    for (k, &i) in group.iter().enumerate() {
        let input = &inputs[i];
        let opts = &*opts.for_file(input);
        let mut opened = open(input, forced, opts, read);
        let continues = joined.swap(false, Ordering::Relaxed);
        if continues && matches!(opened, Err(Outcome::NotALog(_))) {
            // Its first line is the end of a record (read already): the rest is the log's.
            opened = open(input, Some(Format::Text), opts, &uncounted);
        } else if parser.is_some() && matches!(opened, Err(Outcome::NotALog(_))) {
            // A file cut inside a record (`copytruncate` cuts anywhere) starts with the
            // record's last lines, not a timestamp: the log it continues is text, if a
            // stamped line follows. Its first bytes were counted once already.
            let again = open(input, Some(Format::Text), opts, &uncounted);
            let stamped = |o: &Opened| {
                (o.head.split(|&b| b == b'\n'))
                    .any(|l| super::starts_with_timestamp(l.trim_ascii()))
            };
            if again.as_ref().is_ok_and(stamped) {
                opened = again;
            }
        }
        let outcome = match opened {
            Err(outcome) => outcome,
            Ok(Opened {
                format: Format::Text,
                head,
                rest,
                decoded,
                failure,
                container,
                export,
                processes,
                ..
            }) => {
                let opts = &ParseOptions {
                    line_processes: processes,
                    ..opts.clone()
                };
                let parser = parser.get_or_insert_with(|| Rotated::new(opts));
                parser.first_line_read = continues;
                // Where the file starts is told by what detection reads first, however
                // much more was read looking for a span dump.
                let first = &head[..head.len().min(SNIFF_BYTES)];
                // A last line with no newline goes on at the next file's start (below).
                let rest: Reader = Box::new(JoinNext {
                    inner: rest,
                    last: head.last().copied(),
                    next: group.get(k + 1).map(|&n| &inputs[n]),
                    failure: &failure,
                    opts,
                    joined: &joined,
                    wrapped: container.is_some(),
                });
                let (read, content) =
                    telling_content(&head, rest, |all| parser.read(first, all, i as u32, opts));
                let outcome = match read {
                    Ok(mut stats) => {
                        stats.blank = !content;
                        stats.failed(failure.take());
                        Unended::retell(container.as_ref(), &mut stats);
                        super::export::Skips::settle(export.as_ref(), &mut stats);
                        last_text = Some(outcomes.len());
                        let parsed = Parsed {
                            stats,
                            ..Parsed::default()
                        };
                        Outcome::Parsed(Format::Text, Box::new(parsed))
                    }
                    Err(e) => Outcome::Unreadable(e.to_string()),
                };
                Opened::noted(decoded.as_deref(), outcome)
            }
            Ok(other) => {
                let (format, rereadable) = (other.format, other.rereadable);
                let opts = &*other.options(opts);
                let (parsed, content) = telling_content(&other.head, other.rest, |all| {
                    super::parse_input(format, all, i as u32, opts, rereadable)
                });
                let outcome = match parsed {
                    Ok(mut parsed) => {
                        parsed.stats.blank = !content;
                        parsed.stats.failed(other.failure.take());
                        Unended::retell(other.container.as_ref(), &mut parsed.stats);
                        super::export::Skips::settle(other.export.as_ref(), &mut parsed.stats);
                        Outcome::Parsed(format, Box::new(parsed))
                    }
                    Err(e) => Outcome::Unreadable(e.to_string()),
                };
                Opened::noted(other.decoded.as_deref(), outcome)
            }
        };
        outcomes.push((i, outcome));
    }
    if let (Some(parser), Some(at)) = (parser, last_text)
        && let Outcome::Parsed(_, accounts) = &mut outcomes[at].1
    {
        let mut parsed = parser.finish();
        parsed.stats = std::mem::take(&mut accounts.stats);
        **accounts = parsed;
    }
    outcomes
}

/// A file of a rotated log read to its end, then, when its last line has no newline and
/// the file did not fail, the next file's first line: `copytruncate` copies the log while
/// it is being written, and a line cut there goes on at the start of the file written
/// after. Read as one line, it is cited at the first file's line. Only a first line of a
/// sensible length ([`SNIFF_BYTES`]) is joined.
struct JoinNext<'a> {
    inner: Reader<'a>,
    /// The last byte read, once any is.
    last: Option<u8>,
    next: Option<&'a Input>,
    failure: &'a Failure,
    opts: &'a ParseOptions,
    /// Set when the next file's first line has been given.
    joined: &'a AtomicBool,
    /// A container runtime's log: its last line is never joined to the next file's first.
    /// A runtime rotates between its own lines, and a line it split across two files
    /// would be joined to the next file's part unwrapped, the runtime's stamp put inside
    /// it: what there is of it is read as cut short instead.
    wrapped: bool,
}

impl Read for JoinNext<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        if let Some(&b) = buf[..n].last() {
            self.last = Some(b);
            return Ok(n);
        }
        let cut = self.last.is_some_and(|b| b != b'\n') && !self.wrapped;
        let Some(next) = self.next.take().filter(|_| cut) else {
            return Ok(n);
        };
        if self.failure.failed() {
            return Ok(0);
        }
        // Its bytes are counted when the file is read as itself.
        let uncounted = AtomicU64::new(0);
        let Ok(opened) = open(next, Some(Format::Text), self.opts, &uncounted) else {
            return Ok(0);
        };
        let Some(end) = memchr::memchr(b'\n', &opened.head) else {
            return Ok(0);
        };
        self.inner = Box::new(Cursor::new(opened.head[..=end].to_vec()));
        self.joined.store(true, Ordering::Relaxed);
        self.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotated_names_name_their_log_and_age() {
        let cases = [
            ("agent.log", "agent.log", Age::Current),
            ("agent.log.1", "agent.log", Age::Numbered(-1)),
            ("agent.log.12.gz", "agent.log", Age::Numbered(-12)),
            (
                "agent.log-20261130",
                "agent.log",
                Age::Dated("20261130".into()),
            ),
            (
                "agent.log-20261130.gz",
                "agent.log",
                Age::Dated("20261130".into()),
            ),
            (
                "agent.log.2026-11-30",
                "agent.log",
                Age::Dated("20261130".into()),
            ),
            (
                "agent.log.2026-11-30_14-00-00",
                "agent.log",
                Age::Dated("20261130140000".into()),
            ),
            // Names, not rotations.
            ("agent-0.log", "agent-0.log", Age::Current),
            ("run-42", "run-42", Age::Current),
            ("agent.log.12345", "agent.log.12345", Age::Current),
            ("payments-1999.log", "payments-1999.log", Age::Current),
            (".1", ".1", Age::Current),
            ("a..1", "a..1", Age::Current),
        ];
        for (name, log, age) in cases {
            assert_eq!(rotation_of(name), (log, age), "{name}");
        }
    }

    #[test]
    fn a_rotated_logs_files_sort_oldest_first_among_the_others() {
        let mut shown = vec![
            "logs/agent.log",
            "logs/agent.log-x",
            "logs/agent.log.1",
            "logs/agent.log.10.gz",
            "logs/agent.log.2.gz",
            "logs/a.log",
            "logs/agent.logs",
        ];
        shown.sort_by(|a, b| order(a).cmp(&order(b)));
        assert_eq!(
            shown,
            [
                "logs/a.log",
                "logs/agent.log.10.gz",
                "logs/agent.log.2.gz",
                "logs/agent.log.1",
                "logs/agent.log",
                "logs/agent.log-x",
                "logs/agent.logs",
            ]
        );
    }

    fn file(path: &str) -> Input {
        Input {
            display: path.into(),
            origin: Origin::File(path.into()),
            explicit: false,
        }
    }

    #[test]
    fn a_rotated_logs_files_are_one_group_oldest_first() {
        let inputs: Vec<Input> = [
            "logs/agent.log",
            "logs/agent.log.1",
            "logs/agent.log.2.gz",
            "logs/other/agent.log.1",
            "logs/payments.log",
            "logs/svc.log-20261129.gz",
            "logs/svc.log-20261130",
        ]
        .into_iter()
        .map(file)
        .collect();
        let groups = groups(&inputs);
        assert_eq!(groups, vec![vec![2, 1, 0], vec![3], vec![4], vec![5, 6]]);
    }
}
