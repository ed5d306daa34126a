//! The canonicaliser on any JSON: no panic, and its output is a fixed point.
#![no_main]

use idem_audit::ingest::selfcheck;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    selfcheck::check_canonical(data);
});
