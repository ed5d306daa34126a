//! One entry of a log platform's export: its time and the service's message, or why it
//! cannot be read.

use super::Kind;
use serde::Deserialize;
use serde_json::value::RawValue;

/// What an entry gave: the envelope's time (RFC 3339, UTC) and the service's message, with
/// where the message lies in the export (a byte offset, for its line), or nothing to read
/// (a Google Cloud audit entry's `protoPayload`: another service's record, not a line).
pub(super) enum Entry {
    Line {
        time: String,
        message: Vec<u8>,
        at: usize,
        /// The process that wrote it, when the entry names one ([`Journal::writer`]).
        writer: Option<Vec<u8>>,
    },
    Nothing,
}

/// Why an entry is skipped, and where it lies (a byte offset into the export).
pub(super) struct Bad {
    pub why: String,
    pub at: usize,
}

/// Reads the entry `raw` (borrowed from `base`, for the offsets) of an export of `kind`.
pub(super) fn read(kind: Kind, raw: &RawValue, base: &[u8]) -> Result<Entry, Bad> {
    let start = offset(raw, base);
    let bad = |why: String| Bad { why, at: start };
    match kind {
        Kind::JournalLines | Kind::JournalPretty => journal(raw, base).map_err(bad),
        Kind::CloudWatch => cloudwatch(raw, base).map_err(bad),
        Kind::GcpEntries => gcp(raw, base).map_err(bad),
    }
}

fn offset(raw: &RawValue, base: &[u8]) -> usize {
    (raw.get().as_ptr() as usize).saturating_sub(base.as_ptr() as usize)
}

#[derive(Deserialize)]
struct Journal<'a> {
    #[serde(
        rename = "__REALTIME_TIMESTAMP",
        borrow,
        default,
        deserialize_with = "present"
    )]
    realtime: Option<&'a RawValue>,
    #[serde(rename = "MESSAGE", borrow, default, deserialize_with = "present")]
    message: Option<&'a RawValue>,
    #[serde(rename = "_PID", borrow, default, deserialize_with = "present")]
    pid: Option<&'a RawValue>,
    #[serde(rename = "SYSLOG_PID", borrow, default, deserialize_with = "present")]
    syslog_pid: Option<&'a RawValue>,
    #[serde(
        rename = "SYSLOG_IDENTIFIER",
        borrow,
        default,
        deserialize_with = "present"
    )]
    identifier: Option<&'a RawValue>,
    #[serde(rename = "_COMM", borrow, default, deserialize_with = "present")]
    comm: Option<&'a RawValue>,
    #[serde(
        rename = "_SYSTEMD_UNIT",
        borrow,
        default,
        deserialize_with = "present"
    )]
    unit: Option<&'a RawValue>,
    #[serde(rename = "CONTAINER_ID", borrow, default, deserialize_with = "present")]
    container: Option<&'a RawValue>,
    #[serde(rename = "_HOSTNAME", borrow, default, deserialize_with = "present")]
    host: Option<&'a RawValue>,
    #[serde(rename = "_BOOT_ID", borrow, default, deserialize_with = "present")]
    boot: Option<&'a RawValue>,
}

impl Journal<'_> {
    /// The process that wrote the entry: its `_PID` (else the `SYSLOG_PID` it said), with
    /// its `_COMM` (else `SYSLOG_IDENTIFIER`), `_SYSTEMD_UNIT`, `CONTAINER_ID`, `_HOSTNAME`
    /// and `_BOOT_ID`, as the export writes them; none without a pid (the kernel's lines, an
    /// entry made by hand). The pid reused by another program, on another host or after a
    /// reboot is another process; so is each container Docker's journald driver logs for
    /// (every entry with dockerd's pid). `_COMM`, which journald takes from the kernel, comes
    /// before the identifier the program chose: one process logging its standard error
    /// (`python3`) and through syslog under a name of its own (`agent`) is one process.
    fn writer(&self) -> Option<Vec<u8>> {
        let pid = self.pid.or(self.syslog_pid)?;
        let parts = [
            Some(pid),
            self.comm.or(self.identifier),
            self.unit,
            self.container,
            self.host,
            self.boot,
        ];
        let mut writer = Vec::with_capacity(64);
        for part in parts {
            writer.extend_from_slice(part.map_or("", RawValue::get).as_bytes());
            writer.push(b'\n');
        }
        Some(writer)
    }
}

/// journalctl's `-o json` (and `json-pretty`): `__REALTIME_TIMESTAMP`, microseconds since
/// the epoch as a string of digits; `MESSAGE`, a string, or an array of its bytes when they
/// are no UTF-8, or `null` when over 4096 bytes and journalctl was not given `--all`.
fn journal(raw: &RawValue, base: &[u8]) -> Result<Entry, String> {
    let entry: Journal = object(raw, "journald entry")?;
    let time = match entry.realtime.map(RawValue::get) {
        None => return Err("journald entry without __REALTIME_TIMESTAMP".into()),
        Some(t) => (t.strip_prefix('"').and_then(|t| t.strip_suffix('"')))
            .and_then(digits)
            .and_then(|us| rfc3339(us, 6))
            .ok_or(format!(
                "journald entry's __REALTIME_TIMESTAMP {t} is not a number of microseconds"
            ))?,
    };
    let Some(message) = entry.message else {
        return Err("journald entry without MESSAGE".into());
    };
    let text = message.get();
    let bytes = if text.starts_with('"') {
        serde_json::from_str::<String>(text).map(String::into_bytes)
    } else if text.starts_with('[') {
        serde_json::from_str::<Vec<u8>>(text)
    } else if text == "null" {
        return Err("journald entry's MESSAGE is null: journalctl writes a field over 4096 bytes so unless given --all; export again with --all".into());
    } else {
        return Err(format!(
            "journald entry's MESSAGE is {}, not a string or bytes",
            what_json(text)
        ));
    };
    let message = bytes.map_err(|_| {
        format!(
            "journald entry's MESSAGE is {}, not a string or bytes",
            what_json(text)
        )
    })?;
    Ok(Entry::Line {
        time,
        message,
        at: offset(entry.message.unwrap_or(raw), base),
        writer: entry.writer(),
    })
}

#[derive(Deserialize)]
struct CloudWatch<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    timestamp: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    message: Option<&'a RawValue>,
}

/// An event of CloudWatch Logs' `filter-log-events` or `get-log-events`: `timestamp`, the
/// event's time in milliseconds since the epoch (`ingestionTime` is when it arrived, not
/// read), and `message`.
fn cloudwatch(raw: &RawValue, base: &[u8]) -> Result<Entry, String> {
    let event: CloudWatch = object(raw, "CloudWatch Logs event")?;
    let time = match event.timestamp.map(RawValue::get) {
        None => return Err("CloudWatch Logs event without timestamp".into()),
        Some(t) => digits(t).and_then(|ms| rfc3339(ms, 3)).ok_or(format!(
            "CloudWatch Logs event's timestamp {t} is not a number of milliseconds"
        ))?,
    };
    let Some(message) = event.message else {
        return Err("CloudWatch Logs event without message".into());
    };
    let text: String = serde_json::from_str(message.get()).map_err(|_| {
        format!(
            "CloudWatch Logs event's message is {}, not a string",
            what_json(message.get())
        )
    })?;
    Ok(Entry::Line {
        time,
        message: text.into_bytes(),
        at: offset(message, base),
        writer: None,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Gcp<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    timestamp: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    text_payload: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    json_payload: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    proto_payload: Option<&'a RawValue>,
}

/// A Google Cloud Logging `LogEntry` (`gcloud logging read --format=json`): `timestamp`, the
/// event's time in RFC 3339 (`receiveTimestamp` is when it arrived, not read), and the
/// service's line in `textPayload`, or its structured record in `jsonPayload`.
fn gcp(raw: &RawValue, base: &[u8]) -> Result<Entry, String> {
    let entry: Gcp = object(raw, "Cloud Logging entry")?;
    let time = match entry.timestamp.map(RawValue::get) {
        None => return Err("Cloud Logging entry without timestamp".into()),
        Some(t) => serde_json::from_str::<String>(t)
            .ok()
            .filter(|s| s.len() >= 20 && s.as_bytes()[10] == b'T')
            .filter(|s| crate::ingest::starts_with_timestamp(s.as_bytes()))
            .ok_or(format!(
                "Cloud Logging entry's timestamp {t} is not an RFC 3339 time"
            ))?,
    };
    let (message, payload) = match (entry.text_payload, entry.json_payload) {
        (Some(text), _) => (
            serde_json::from_str::<String>(text.get()).map_err(|_| {
                format!(
                    "Cloud Logging entry's textPayload is {}, not a string",
                    what_json(text.get())
                )
            })?,
            text,
        ),
        (None, Some(json)) => match serde_json::from_str::<serde_json::Value>(json.get()) {
            Ok(v @ serde_json::Value::Object(_)) => (v.to_string(), json),
            Ok(_) => {
                return Err(format!(
                    "Cloud Logging entry's jsonPayload is {}, not an object",
                    what_json(json.get())
                ));
            }
            // Its text was read whole as the entry's: only its depth can refuse it.
            Err(_) => {
                return Err(format!(
                    "Cloud Logging entry's jsonPayload is nested too deep to read: more than \
                     {} levels of arrays and objects, the most the JSON reader reads",
                    crate::event::MAX_JSON_DEPTH
                ));
            }
        },
        (None, None) if entry.proto_payload.is_some() => return Ok(Entry::Nothing),
        (None, None) => {
            return Err("Cloud Logging entry without textPayload or jsonPayload".into());
        }
    };
    Ok(Entry::Line {
        time,
        message: message.into_bytes(),
        at: offset(payload, base),
        writer: None,
    })
}

/// A member that is there, `null` too (serde makes an `Option`'s `null` `None`).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// An entry's object, or why it is none.
fn object<'a, T: Deserialize<'a>>(raw: &'a RawValue, what: &str) -> Result<T, String> {
    if !raw.get().starts_with('{') {
        return Err(format!("{what} is {}, not an object", what_json(raw.get())));
    }
    serde_json::from_str(raw.get())
        .map_err(|e| format!("{what} unreadable: {}", super::super::json_why(&e)))
}

/// What a JSON value is, for a reason: `a number`, `an array`...
fn what_json(json: &str) -> &'static str {
    match json.as_bytes().first() {
        Some(b'"') => "a string",
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// A whole number of units written in digits alone (no sign, fraction or exponent: a
/// time given as a float is not one of these platforms').
fn digits(s: &str) -> Option<i64> {
    (!s.is_empty() && s.len() <= 18 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// `count` units of 10^-`places` s since the epoch as RFC 3339 in UTC with `places`
/// decimals, computed in integers: `2026-12-06T08:06:59.265123Z`.
pub(super) fn rfc3339(count: i64, places: u32) -> Option<String> {
    let per_second = 10i64.pow(places);
    let (secs, frac) = (count.div_euclid(per_second), count.rem_euclid(per_second));
    let t = chrono::DateTime::from_timestamp(secs, 0)?;
    use chrono::{Datelike, Timelike};
    Some(format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{frac:0width$}Z",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        width = places as usize
    ))
}
