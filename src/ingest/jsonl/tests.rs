use super::fields::{KNOWN, slot};
use super::*;
use crate::money::{Currency, Money};

mod amounts;
mod damaged;
mod effects;
mod events;
mod fields;

/// The amount of each event, `None` for events that are no effect.
fn effect_amounts(p: &Parsed) -> Vec<Option<Money>> {
    (p.events.iter())
        .map(|e| match &e.kind {
            EventKind::Effect(x) => x.amount,
            _ => None,
        })
        .collect()
}

fn run(text: &str) -> Parsed {
    parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap()
}
