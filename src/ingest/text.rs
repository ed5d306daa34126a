//! Text traces (SPEC §3.1). To be written.
use super::{ParseOptions, Parsed};
use std::io::{self, Read};

pub fn parse(_reader: &mut dyn Read, _input: u32, _opts: &ParseOptions) -> io::Result<Parsed> {
    Ok(Parsed::default())
}
