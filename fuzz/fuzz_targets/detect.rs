//! Format detection on any bytes, then the detected parser: no panic, every line accounted.
#![no_main]

use idem_audit::ingest::{ParseOptions, selfcheck};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    selfcheck::check_detect(data, &ParseOptions::default());
});
