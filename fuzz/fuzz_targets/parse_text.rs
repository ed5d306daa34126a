//! Any bytes parsed as text: no panic, every line accounted for, and dropping idle calls
//! changes no event and no count (`ingest::selfcheck`).
#![no_main]

use idem_audit::ingest::{Format, ParseOptions, selfcheck};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    selfcheck::check_parse(Format::Text, data, &ParseOptions::default());
    selfcheck::check_filter_agrees(Format::Text, data, &ParseOptions::default());
});
