//! A quick yes for the usual spelling of a tool call's arguments: one JSON object of string
//! keys and plain values, written without spaces or escapes (`{"order":"A-1","amount":1250}`).
//! A month of logs has millions of them, and asking serde_json to check each one was a
//! visible part of the parse. `false` means only "not that spelling": callers then ask
//! serde_json, so the answer never differs from its own.

use crate::scan::first_marked;
use std::ops::Range;

/// Is `b` a JSON object of ASCII string keys and scalar values, without whitespace or
/// escapes? Never true for text that is not JSON.
pub fn is_flat_object(b: &[u8]) -> bool {
    flat_members(b, |_, _| {})
}

/// [`is_flat_object`], calling `each(key, value)` for its members in order as it reads
/// them, as places in `b`: the key without its quotes, the value as written (a string with
/// its quotes). Since keys and strings have no escapes, those are their values as text,
/// and all of them are ASCII.
pub fn flat_members(b: &[u8], mut each: impl FnMut(Range<usize>, Range<usize>)) -> bool {
    let mut at = 0;
    if b.first() != Some(&b'{') {
        return false;
    }
    at += 1;
    if b.get(at) == Some(&b'}') {
        return at + 1 == b.len();
    }
    loop {
        let Some(after_key) = plain_string(b, at) else {
            return false;
        };
        if b.get(after_key) != Some(&b':') {
            return false;
        }
        let Some(after_value) = scalar(b, after_key + 1) else {
            return false;
        };
        each(at + 1..after_key - 1, after_key + 1..after_value);
        match b.get(after_value) {
            Some(b',') => at = after_value + 1,
            Some(b'}') => return after_value + 1 == b.len(),
            _ => return false,
        }
    }
}

/// Printable ASCII other than `"` and `\`: a string's bytes that need no escape.
static PLAIN: [bool; 256] = {
    let mut plain = [false; 256];
    let mut c = b' ';
    while c <= b'~' {
        plain[c as usize] = c != b'"' && c != b'\\';
        c += 1;
    }
    plain
};

/// A string of printable ASCII without escapes starting at `at`: just past its closing quote.
pub(crate) fn plain_string(b: &[u8], at: usize) -> Option<usize> {
    if b.get(at) != Some(&b'"') {
        return None;
    }
    let end = first_not_plain(b, at + 1);
    (b.get(end) == Some(&b'"')).then_some(end + 1)
}

/// Where the first byte of `b` at or after `from` that is not [`PLAIN`] is (`b.len()` if
/// none), sixteen bytes at a time ([`first_marked`]): keys and values are a few bytes each,
/// and a byte-by-byte search was most of the check of a month of tool calls' arguments.
pub(crate) fn first_not_plain(b: &[u8], from: usize) -> usize {
    first_marked(b, from, not_plain_mask, |c| !PLAIN[usize::from(c)])
}

/// Bit `i` set where `chunk[i]` is not [`PLAIN`].
#[cfg(target_arch = "x86_64")]
fn not_plain_mask(chunk: &[u8; 16]) -> u16 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of x86-64's baseline; the load reads the array's 16 bytes and
    // needs no alignment.
    unsafe {
        let x = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
        // Compared as signed bytes, everything from 0x80 up is below a space too.
        let control_or_high = _mm_cmplt_epi8(x, _mm_set1_epi8(0x20));
        let del = _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f));
        let quote = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
        let any = _mm_or_si128(
            _mm_or_si128(control_or_high, del),
            _mm_or_si128(quote, backslash),
        );
        _mm_movemask_epi8(any) as u16
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn not_plain_mask(chunk: &[u8; 16]) -> u16 {
    not_plain_mask_bytewise(chunk)
}

/// [`not_plain_mask`] a byte at a time: elsewhere than x86-64, and the vector one's
/// reference.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn not_plain_mask_bytewise(chunk: &[u8; 16]) -> u16 {
    (0..16).fold(0, |m, i| m | u16::from(!PLAIN[usize::from(chunk[i])]) << i)
}

fn scalar(b: &[u8], at: usize) -> Option<usize> {
    match *b.get(at)? {
        b'"' => plain_string(b, at),
        b't' => literal(b, at, b"true"),
        b'f' => literal(b, at, b"false"),
        b'n' => literal(b, at, b"null"),
        _ => number(b, at),
    }
}

pub(crate) fn literal(b: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    b.get(at..at + word.len())
        .filter(|w| *w == word)
        .map(|_| at + word.len())
}

/// JSON's number grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
pub(crate) fn number(b: &[u8], mut at: usize) -> Option<usize> {
    let digits = |from: usize| {
        let n = b[from.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        (n > 0).then_some(from + n)
    };
    if b.get(at) == Some(&b'-') {
        at += 1;
    }
    at = match b.get(at)? {
        b'0' => at + 1,
        b'1'..=b'9' => digits(at)?,
        _ => return None,
    };
    if b.get(at) == Some(&b'.') {
        at = digits(at + 1)?;
    }
    if matches!(b.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(b.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        at = digits(at)?;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn serde_says(b: &[u8]) -> bool {
        serde_json::from_slice::<serde::de::IgnoredAny>(b).is_ok()
    }

    #[test]
    fn says_yes_to_the_usual_spellings() {
        for ok in [
            r#"{}"#,
            r#"{"order":"A-272203"}"#,
            r#"{"order":"R-1","amount_minor":10450,"currency":"GBP"}"#,
            r#"{"a":-0.5e+3,"b":true,"c":false,"d":null,"e":0}"#,
        ] {
            assert!(is_flat_object(ok.as_bytes()), "{ok}");
            assert!(serde_says(ok.as_bytes()), "{ok}");
        }
    }

    #[test]
    fn says_no_to_anything_else_json_or_not() {
        for no in [
            "",
            "{",
            r#"{"a":1"#,
            r#"{"a":1,}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":-}"#,
            r#"{"a":1e}"#,
            r#"{"a":tru}"#,
            r#"{"a":"x\"y"}"#,
            r#"{"a":[1]}"#,
            r#"{"a":{"b":1}}"#,
            r#"{ "a":1}"#,
            r#"{"a":1} "#,
            r#"{"é":1}"#,
            r#"{a:1}"#,
            "[1]",
        ] {
            assert!(!is_flat_object(no.as_bytes()), "{no}");
        }
    }

    /// The search finds what the table says, for every byte at every place and after any
    /// start, in slices shorter and longer than a chunk; and the vector mask is the
    /// bytewise one.
    #[test]
    fn first_not_plain_agrees_with_the_table() {
        let by_table = |b: &[u8], from: usize| {
            (b[from..].iter().position(|&c| !PLAIN[c as usize])).map_or(b.len(), |p| from + p)
        };
        for len in 0..40 {
            for at in 0..len {
                for c in 0..=255u8 {
                    let mut b = vec![b'a'; len];
                    b[at] = c;
                    for from in [0, 1, at.saturating_sub(1), at, at + 1, len / 2, len] {
                        let from = from.min(len);
                        assert_eq!(
                            first_not_plain(&b, from),
                            by_table(&b, from),
                            "{b:?} {from}"
                        );
                    }
                    if let Some(chunk) = b.first_chunk::<16>() {
                        assert_eq!(not_plain_mask(chunk), not_plain_mask_bytewise(chunk));
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// A yes is never given to text serde_json refuses, over near-JSON mutations.
        #[test]
        fn never_yes_where_serde_says_no(
            s in r#"\{("[a-z\\"é ]{0,4}":(-?[0-9.eE+-]{1,5}|"[a-z ]{0,3}"|true|nul|[\[{]),?){0,3}\}?"#,
        ) {
            if is_flat_object(s.as_bytes()) {
                prop_assert!(serde_says(s.as_bytes()), "{}", s);
            }
        }
    }
}
