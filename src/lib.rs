//! idem-audit: finds side effects that happened more than once, and why.
//!
//! The pipeline, one module per stage: [`ingest`] (bytes → [`event`]s, with [`relevance`]
//! dropping the calls no rule needs as they are read) → [`correlate`]
//! (events → logical calls, attempts, effects and their matches) → [`rules`] (the model →
//! [`finding`]s) → [`report`] (findings → bytes). Commands in [`cmd`] wire them together.

pub mod alloc;
pub mod audit;
pub mod baseline;
pub mod blocks;
pub mod canonical;
pub mod classify;
pub mod cli;
pub mod cmd;
pub mod config;
pub mod correlate;
pub mod event;
pub mod finding;
pub mod flat_json;
pub(crate) mod flat_table;
pub mod hash_bits;
pub mod ingest;
pub mod metrics;
pub mod money;
pub mod period;
pub mod progress;
pub mod relevance;
pub mod report;
pub mod rules;
mod scan;
pub mod shared_texts;
pub mod stages;
pub mod time;
pub mod timeline;
