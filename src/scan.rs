//! Searches in short text, sixteen bytes at a time, and the newlines of a whole read. A
//! log's line is about 70 bytes and its fields a few: the set-up of a general search
//! (memchr) cost about as much as the search itself, so these compare 16 bytes at once
//! (SSE2, part of every x86-64 processor; AVX2 for newlines where there is) and read the
//! mask of hits bit by bit, with a byte loop elsewhere.

/// Calls `each` with the place of every `\n` in `bytes`, in order: 64 bytes a step, with
/// AVX2 where the processor has it (two compares a step rather than four).
pub(crate) fn for_each_newline(bytes: &[u8], each: impl FnMut(usize)) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        return unsafe { for_each_newline_avx2(bytes, each) };
    }
    for_each_newline_by(bytes, each, newline_mask);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn for_each_newline_avx2(bytes: &[u8], each: impl FnMut(usize)) {
    // The closure inherits this function's target feature, so it may call the mask.
    for_each_newline_by(bytes, each, |chunk| newline_mask_avx2(chunk));
}

/// [`for_each_newline`], with `mask` finding a chunk's newlines.
#[inline(always)]
fn for_each_newline_by(bytes: &[u8], mut each: impl FnMut(usize), mask: impl Fn(&[u8; 64]) -> u64) {
    let mut chunks = bytes.chunks_exact(64);
    let mut base = 0;
    for chunk in &mut chunks {
        let mut mask = mask(chunk.try_into().expect("64 bytes"));
        while mask != 0 {
            each(base + mask.trailing_zeros() as usize);
            mask &= mask - 1;
        }
        base += 64;
    }
    for pos in memchr::memchr_iter(b'\n', chunks.remainder()) {
        each(base + pos);
    }
}

/// Whether every byte of `bytes` is ASCII: the standard `is_ascii`, but with AVX2 where
/// the processor has it, and without a branch per chunk. It runs over every read of an
/// input (256 KiB), which is ASCII nearly always, so the whole read is looked at.
pub(crate) fn is_ascii(bytes: &[u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        return unsafe { is_ascii_avx2(bytes) };
    }
    bytes.is_ascii()
}

/// [`is_ascii`]: every byte OR'ed together, which the compiler does 128 bytes a step.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn is_ascii_avx2(bytes: &[u8]) -> bool {
    bytes.iter().fold(0u8, |all, &b| all | b) < 0x80
}

/// Whether `byte` is in `bytes`, a short text (a status line's few words): up to sixteen
/// bytes are read as two overlapping words, each tested for the byte at once, where a
/// loop or `memchr`'s set-up costs several times as much.
#[inline(always)]
pub(crate) fn contains_byte(bytes: &[u8], byte: u8) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // A byte of `x` is zero: `x - ONES` borrows into that byte's high bit, which `x` lacks
    // (whether a byte is zero is exact; only which one is not).
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS != 0;
    let at = |i: usize, width: usize| {
        // The lanes past `width` hold a byte other than `byte`.
        let mut word = [!byte; 8];
        word[..width].copy_from_slice(&bytes[i..i + width]);
        has_zero(u64::from_le_bytes(word) ^ (ONES * u64::from(byte)))
    };
    match bytes.len() {
        0..4 => bytes.contains(&byte),
        len @ 4..8 => at(0, 4) || at(len - 4, 4),
        len @ 8..=16 => at(0, 8) || at(len - 8, 8),
        _ => memchr::memchr(byte, bytes).is_some(),
    }
}

/// Where the first space or tab of `bytes` is.
pub(crate) fn first_blank(bytes: &[u8]) -> Option<usize> {
    first_either(bytes, b' ', b'\t')
}

/// `a == b`, compared here rather than by the C library's `memcmp`: the texts compared for
/// every idle call of a month (its run, its tool, its request line) are a few bytes to a
/// few dozen, and calling `memcmp` cost more than comparing them (about 80 instructions a
/// call in all, callgrind). A word at a time; the last word is read overlapping.
#[inline(always)]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let len = a.len();
    if len != b.len() {
        return false;
    }
    // Two reads of a word's width cover any length from one to two words, overlapping.
    let ends = |width: usize, read: fn(&[u8]) -> u64| {
        read(&a[..width]) == read(&b[..width]) && read(&a[len - width..]) == read(&b[len - width..])
    };
    match len {
        0 => true,
        1..=3 => a[0] == b[0] && a[len / 2] == b[len / 2] && a[len - 1] == b[len - 1],
        4..=7 => ends(4, |s| {
            u64::from(u32::from_ne_bytes(s.try_into().expect("4 bytes")))
        }),
        8..=16 => ends(8, |s| u64::from_ne_bytes(s.try_into().expect("8 bytes"))),
        _ => {
            let word = |s: &[u8], at: usize| {
                assert!(at + 8 <= len);
                // SAFETY: the eight bytes from `at` are in `s` (both slices are `len` long),
                // and an unaligned read needs no alignment.
                unsafe { s.as_ptr().add(at).cast::<u64>().read_unaligned() }
            };
            let mut at = 0;
            while at + 8 < len {
                if word(a, at) != word(b, at) {
                    return false;
                }
                at += 8;
            }
            word(a, len - 8) == word(b, len - 8)
        }
    }
}

/// `text` after `prefix`, if it starts with it ([`same_bytes`]).
#[inline(always)]
pub(crate) fn after_prefix<'t>(text: &'t [u8], prefix: &[u8]) -> Option<&'t [u8]> {
    let head = text.get(..prefix.len())?;
    same_bytes(head, prefix).then(|| &text[prefix.len()..])
}

/// Where the first `a` or `b` of `bytes` is.
pub(crate) fn first_either(bytes: &[u8], a: u8, b: u8) -> Option<usize> {
    let at = first_marked(bytes, 0, |chunk| mask16(chunk, a, b), |c| c == a || c == b);
    (at < bytes.len()).then_some(at)
}

/// Where the first byte of `bytes` at or after `from` is that `mask` marks (bit `i` for
/// byte `i` of a chunk), `bytes.len()` if none; sixteen bytes at a time. The bytes after
/// the last whole chunk are read as the last sixteen, overlapping what was searched: the
/// texts searched on the hot path (a tool call's arguments, a JSON string) are a chunk and
/// a few bytes. Only a slice shorter than a chunk is read byte by byte (`marked`).
pub(crate) fn first_marked(
    bytes: &[u8],
    from: usize,
    mask: impl Fn(&[u8; 16]) -> u16,
    marked: impl Fn(u8) -> bool,
) -> usize {
    let mut at = from;
    while let Some(chunk) = bytes.get(at..at + 16) {
        let m = mask(chunk.try_into().expect("16 bytes"));
        if m != 0 {
            return at + m.trailing_zeros() as usize;
        }
        at += 16;
    }
    if at >= bytes.len() {
        return bytes.len();
    }
    if let Some(last) = bytes.last_chunk::<16>() {
        // `at` is within the last sixteen bytes: the marks of those before it are dropped.
        let m = mask(last) >> (at - (bytes.len() - 16));
        return if m != 0 {
            at + m.trailing_zeros() as usize
        } else {
            bytes.len()
        };
    }
    let rest = &bytes[at..];
    at + rest.iter().position(|&c| marked(c)).unwrap_or(rest.len())
}

/// Bit `i` set where `chunk[i]` is a newline.
fn newline_mask(chunk: &[u8; 64]) -> u64 {
    let part = |i: usize| {
        let lanes = chunk[16 * i..16 * i + 16].try_into().expect("16 bytes");
        u64::from(mask16(lanes, b'\n', b'\n')) << (16 * i)
    };
    part(0) | part(1) | part(2) | part(3)
}

/// [`newline_mask`] in two 32-byte compares.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn newline_mask_avx2(chunk: &[u8; 64]) -> u64 {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_set1_epi8,
    };
    let newline = _mm256_set1_epi8(b'\n' as i8);
    let half = |at: usize| {
        // SAFETY: the load reads 32 of the array's 64 bytes (`at` is 0 or 32) and needs no
        // alignment; AVX2 is this function's target feature.
        let lanes = unsafe { _mm256_loadu_si256(chunk.as_ptr().add(at).cast::<__m256i>()) };
        u64::from(_mm256_movemask_epi8(_mm256_cmpeq_epi8(lanes, newline)) as u32)
    };
    half(0) | half(32) << 32
}

/// Bit `i` set where `chunk[i]` is `a` or `b`.
#[cfg(target_arch = "x86_64")]
fn mask16(chunk: &[u8; 16], a: u8, b: u8) -> u16 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of x86-64's baseline, so every processor the binary runs on has
    // it; the load reads the 16 bytes of the array, and needs no alignment.
    unsafe {
        let lanes = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
        let hits = _mm_or_si128(
            _mm_cmpeq_epi8(lanes, _mm_set1_epi8(a as i8)),
            _mm_cmpeq_epi8(lanes, _mm_set1_epi8(b as i8)),
        );
        _mm_movemask_epi8(hits) as u16
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn mask16(chunk: &[u8; 16], a: u8, b: u8) -> u16 {
    mask16_bytewise(chunk, a, b)
}

/// [`mask16`] a byte at a time: elsewhere than x86-64, and the vector one's reference.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn mask16_bytewise(chunk: &[u8; 16], a: u8, b: u8) -> u16 {
    (0..16).fold(0, |m, i| m | u16::from(chunk[i] == a || chunk[i] == b) << i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length up to a few words, a difference at every place: each is seen.
    #[test]
    fn same_bytes_sees_a_difference_anywhere() {
        for len in 0..=40usize {
            let a: Vec<u8> = (0..len as u8).map(|i| i.wrapping_mul(37)).collect();
            assert!(same_bytes(&a, &a.clone()), "len {len}");
            for at in 0..len {
                let mut b = a.clone();
                b[at] ^= 0x80;
                assert!(!same_bytes(&a, &b), "len {len}, differing at {at}");
            }
            assert!(!same_bytes(&a, &a[..len.saturating_sub(1)]) || len == 0);
        }
    }

    proptest::proptest! {
        /// Equal as slices compare, whatever the lengths and wherever they differ.
        #[test]
        fn same_bytes_is_slice_equality(
            a in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..70),
            flip in proptest::option::of(0usize..70),
            cut in 0usize..3,
        ) {
            let mut b = a.clone();
            if let Some(i) = flip.filter(|&i| i < b.len()) {
                b[i] ^= 1 << (i % 8);
            }
            b.truncate(b.len().saturating_sub(cut));
            proptest::prop_assert_eq!(same_bytes(&a, &b), a == b);
            proptest::prop_assert_eq!(after_prefix(&a, &b), a.strip_prefix(&b[..]));
        }
    }

    /// A byte above 127 is seen wherever it lies, in a read of any length.
    #[test]
    fn a_byte_above_127_is_told_wherever_it_lies() {
        for len in [0, 1, 31, 32, 63, 64, 127, 128, 129, 300] {
            let ascii: Vec<u8> = (0..len).map(|i| b"ab\ncd ef\t"[i % 9]).collect();
            assert!(is_ascii(&ascii), "{len}");
            for at in 0..len {
                let mut bytes = ascii.clone();
                bytes[at] |= 0x80;
                assert!(!is_ascii(&bytes), "len {len}, at {at}");
            }
        }
    }

    /// Found wherever it lies, in texts of every length up to a few words, and not found
    /// where it is not, whatever the other bytes (a byte one above or below it included).
    #[test]
    fn contains_byte_is_a_plain_search() {
        for byte in [b'=', 0, 0xff, 0x80] {
            for len in 0..40usize {
                let other = [byte.wrapping_add(1), byte.wrapping_sub(1), b'a', 0x7f];
                let text: Vec<u8> = (0..len).map(|i| other[i % other.len()]).collect();
                assert!(!contains_byte(&text, byte), "{byte} {len}");
                for at in 0..len {
                    let mut with = text.clone();
                    with[at] = byte;
                    assert!(contains_byte(&with, byte), "{byte} {len} {at}");
                }
            }
        }
    }

    #[test]
    fn newlines_and_blanks_are_found_where_a_plain_search_finds_them() {
        let mut x: u64 = 11;
        for len in (0..300).chain([1 << 12, (1 << 12) + 63]) {
            for density in [2u64, 9, 70] {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        x = x
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        match (x >> 33) % density {
                            0 => b'\n',
                            1 if x >> 60 == 0 => b' ',
                            1 if x >> 60 == 1 => b'\t',
                            1 => 0x8a, // a newline's low bits with the high bit set
                            _ => (x >> 40) as u8,
                        }
                    })
                    .collect();
                let mut found = Vec::new();
                for_each_newline(&bytes, |p| found.push(p));
                let expected: Vec<usize> = memchr::memchr_iter(b'\n', &bytes).collect();
                assert_eq!(found, expected, "len {len}, density {density}");
                // The 16-byte masks too, which a processor with AVX2 does not use.
                found.clear();
                for_each_newline_by(&bytes, |p| found.push(p), newline_mask);
                assert_eq!(found, expected, "len {len}, density {density}");
                for chunk in bytes.chunks_exact(16) {
                    let chunk: &[u8; 16] = chunk.try_into().unwrap();
                    for (a, b) in [(b'\n', b'\n'), (b' ', b'\t')] {
                        assert_eq!(mask16(chunk, a, b), mask16_bytewise(chunk, a, b));
                    }
                }
                for from in [0, 1, 15, 16, 17, len / 2] {
                    let from = from.min(bytes.len());
                    let blank = bytes[from..].iter().position(|&b| b == b' ' || b == b'\t');
                    assert_eq!(first_blank(&bytes[from..]), blank, "len {len}, from {from}");
                }
            }
        }
    }
}
