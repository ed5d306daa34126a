//! Any bytes parsed as csv: no panic, every line accounted for (`ingest::selfcheck`).
#![no_main]

use idem_audit::ingest::{Format, ParseOptions, selfcheck};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    selfcheck::check_parse(Format::Csv, data, &ParseOptions::default());
});
