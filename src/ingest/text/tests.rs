use super::*;
use crate::classify::FailureClass;
use crate::ingest::lines::newlines_of;
use crate::money::Currency;
use crate::time::{NANOS_PER_MILLI, NANOS_PER_SEC};

mod calls;
mod damaged;
mod effects;
mod failures;
mod idle;
mod incident;
mod times;

fn run(text: &str) -> Parsed {
    parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap()
}

fn tod(h: i64, m: i64, s: i64, ms: i64) -> Timestamp {
    Timestamp((h * 3600 + m * 60 + s) * NANOS_PER_SEC + ms * NANOS_PER_MILLI)
}

fn kinds(p: &Parsed) -> Vec<&EventKind> {
    p.events.iter().map(|e| &e.kind).collect()
}

fn ts(date: &str, h: i64, m: i64, s: i64, ms: i64) -> Timestamp {
    let days = crate::time::parse_date(date.as_bytes()).unwrap();
    Timestamp(days * NANOS_PER_DAY + tod(h, m, s, ms).0)
}

fn effects(p: &Parsed) -> Vec<&Effect> {
    p.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Effect(x) => Some(&**x),
            _ => None,
        })
        .collect()
}

fn reasons(p: &Parsed) -> Vec<(u32, String)> {
    p.stats
        .problems
        .iter()
        .map(|x| (x.line, x.reason.clone()))
        .collect()
}

/// The refunds a text read, with their times.
pub(super) fn refunds(p: &Parsed) -> Vec<(String, Timestamp)> {
    (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Effect(f) => Some((f.id.to_string(), e.at)),
            _ => None,
        })
        .collect()
}
