//! idem-audit: finds side effects that happened more than once, and why.
//!
//! The pipeline, one module per stage: [`ingest`] (bytes → [`event`]s) → [`correlate`]
//! (events → logical calls, attempts, effects and their matches) → [`rules`] (the model →
//! [`finding`]s) → [`report`] (findings → bytes). Commands in [`cmd`] wire them together.

pub mod canonical;
pub mod classify;
pub mod event;
pub mod ingest;
pub mod money;
pub mod time;
