//! Splits a byte stream into lines in large blocks with memchr, without reading the input
//! whole and without allocating per line. `\r\n` endings are trimmed; a last line without
//! a newline is still a line. NUL bytes at either end of a line are trimmed too: a log that
//! was being written when its machine crashed is often padded with NULs up to a block
//! boundary, and the next line the restarted service wrote follows the padding on the same
//! physical line; trimming keeps that line readable.

use std::io::{self, Read};
use std::ops::Range;

const BLOCK: usize = 1 << 20;

/// Calls `each(line_number, bytes)` for every line of `reader`, numbering from 1.
pub fn for_each_line<R: Read + ?Sized>(
    reader: &mut R,
    mut each: impl FnMut(u32, &[u8]),
) -> io::Result<u32> {
    for_each_line_at(reader, |n, _, line| each(n, line))
}

/// [`for_each_line`], also giving where each line lies in the stream: from its first byte
/// to the first byte of the next line (its newline included), so that a caller can read
/// a run of lines again later.
pub fn for_each_line_at<R: Read + ?Sized>(
    reader: &mut R,
    mut each: impl FnMut(u32, Range<u64>, &[u8]),
) -> io::Result<u32> {
    for_each_line_ahead(reader, |n, span, line, _| {
        each(n, span, line);
        0
    })
}

/// [`for_each_line_at`], also giving the bytes read after each line (the lines that follow
/// it in the buffer, the last of them perhaps cut short). `each` returns how many of those
/// bytes it has read itself, always whole lines ending with their newline: those lines
/// are counted but not given to it. A parser that recognises a run of lines at once reads
/// them there rather than one call at a time.
pub fn for_each_line_ahead<R: Read + ?Sized>(
    reader: &mut R,
    mut each: impl FnMut(u32, Range<u64>, &[u8], &[u8]) -> usize,
) -> io::Result<u32> {
    let mut buf: Vec<u8> = vec![0; BLOCK];
    let mut start = 0; // first byte of the pending (unterminated) line
    let mut end = 0; // bytes filled
    let mut base: u64 = 0; // stream offset of buf[0]
    let mut line_no: u32 = 0;
    loop {
        if end == buf.len() {
            if start > 0 {
                buf.copy_within(start..end, 0);
                end -= start;
                base += start as u64;
                start = 0;
            } else {
                // One line longer than the buffer: grow rather than cut it.
                buf.resize(buf.len() * 2, 0);
            }
        }
        let n = match reader.read(&mut buf[end..]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let scan_from = end;
        end += n;
        // Newlines before this place end lines `each` has read ahead: within this block,
        // since it only reads whole lines of what was filled.
        let mut read_ahead_to = 0;
        for_each_newline(&buf[scan_from..end], |pos| {
            let nl = scan_from + pos;
            line_no = line_no.saturating_add(1);
            if nl >= read_ahead_to {
                let span = base + start as u64..base + nl as u64 + 1;
                let ahead = &buf[nl + 1..end];
                let read = each(line_no, span, trim_line(&buf[start..nl]), ahead);
                read_ahead_to = nl + 1 + read.min(ahead.len());
            }
            start = nl + 1;
        });
    }
    if start < end {
        line_no = line_no.saturating_add(1);
        let span = base + start as u64..base + end as u64;
        each(line_no, span, trim_line(&buf[start..end]), &[]);
    }
    Ok(line_no)
}

/// [`for_each_line_at`] over bytes already in memory, without a read buffer.
pub fn for_each_line_in(bytes: &[u8], mut each: impl FnMut(u32, Range<u64>, &[u8])) -> u32 {
    let mut line_no: u32 = 0;
    let mut start = 0;
    while start < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |p| start + p + 1);
        line_no = line_no.saturating_add(1);
        let line = bytes[start..end]
            .strip_suffix(b"\n")
            .unwrap_or(&bytes[start..end]);
        each(line_no, start as u64..end as u64, trim_line(line));
        start = end;
    }
    line_no
}

/// Calls `each` with the place of every `\n` in `bytes`, in order. Lines of a log are short
/// (70 bytes is usual): a search started for each paid its set-up each time, about as much
/// as the search. Instead each 64 bytes are compared at once into a mask of their newlines,
/// and the mask is read bit by bit.
fn for_each_newline(bytes: &[u8], mut each: impl FnMut(usize)) {
    let mut chunks = bytes.chunks_exact(64);
    let mut base = 0;
    for chunk in &mut chunks {
        let mut mask = newline_mask(chunk.try_into().expect("64 bytes"));
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

/// Where the first `\n` of `bytes` is: a mask of 64 bytes at a time, since the newline of
/// a log's line is near (a search's set-up cost more than the search).
pub(crate) fn first_newline(bytes: &[u8]) -> Option<usize> {
    let mut chunks = bytes.chunks_exact(64);
    for (i, chunk) in chunks.by_ref().enumerate() {
        let mask = newline_mask(chunk.try_into().expect("64 bytes"));
        if mask != 0 {
            return Some(64 * i + mask.trailing_zeros() as usize);
        }
    }
    let rest = chunks.remainder();
    memchr::memchr(b'\n', rest).map(|p| bytes.len() - rest.len() + p)
}

/// Bit `i` set where `chunk[i]` is a newline: sixteen bytes to a compare (SSE2, which every
/// x86-64 processor has).
#[cfg(target_arch = "x86_64")]
fn newline_mask(chunk: &[u8; 64]) -> u64 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of x86-64's baseline, so every processor the binary runs on has
    // it; the loads read 16 bytes at 0, 16, 32 and 48 of a 64-byte array, and need no
    // alignment.
    unsafe {
        let newline = _mm_set1_epi8(b'\n' as i8);
        let at = chunk.as_ptr().cast::<__m128i>();
        let hits = |i: usize| {
            let lanes = _mm_loadu_si128(at.add(i));
            u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(lanes, newline)) as u16)
        };
        hits(0) | hits(1) << 16 | hits(2) << 32 | hits(3) << 48
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn newline_mask(chunk: &[u8; 64]) -> u64 {
    newline_mask_bytewise(chunk)
}

/// [`newline_mask`] a byte at a time: elsewhere than x86-64, and the vector one's reference.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn newline_mask_bytewise(chunk: &[u8; 64]) -> u64 {
    chunk
        .iter()
        .enumerate()
        .fold(0u64, |m, (i, &b)| m | (u64::from(b == b'\n') << i))
}

/// A line as given to callers: without its `\r`, nor NULs at either end.
pub(crate) fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.first() != Some(&0) && line.last() != Some(&0) {
        return line;
    }
    let start = line.iter().position(|&b| b != 0).unwrap_or(line.len());
    let end = line.iter().rposition(|&b| b != 0).map_or(start, |i| i + 1);
    &line[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(input: &[u8]) -> Vec<(u32, Vec<u8>)> {
        let mut out = Vec::new();
        for_each_line(&mut &input[..], |n, l| out.push((n, l.to_vec()))).unwrap();
        out
    }

    #[test]
    fn splits_and_numbers_lines() {
        let lines = collect(b"a\r\nb\n\nc");
        assert_eq!(
            lines,
            vec![
                (1, b"a".to_vec()),
                (2, b"b".to_vec()),
                (3, vec![]),
                (4, b"c".to_vec())
            ]
        );
        assert!(collect(b"").is_empty());
    }

    #[test]
    fn trims_nul_padding_around_a_line() {
        let lines = collect(b"\0\0\x0014:02:12  ok\0\0\r\n\0\0\nx\0y");
        assert_eq!(
            lines,
            vec![
                (1, b"14:02:12  ok".to_vec()),
                (2, vec![]),
                (3, b"x\0y".to_vec())
            ]
        );
    }

    #[test]
    fn spans_cover_the_stream_and_read_back_each_line() {
        let input = b"one\r\ntwo\n\nthree";
        let mut spans = Vec::new();
        for_each_line_at(&mut &input[..], |n, span, _| spans.push((n, span))).unwrap();
        assert_eq!(spans, vec![(1, 0..5), (2, 5..9), (3, 9..10), (4, 10..15)]);
        let third = &input[spans[3].1.start as usize..spans[3].1.end as usize];
        assert_eq!(third, b"three");
    }

    #[test]
    fn lines_in_memory_split_as_read_lines_do() {
        let input = b"one\r\ntwo\n\n\0three\0";
        let mut read = Vec::new();
        for_each_line_at(&mut &input[..], |n, s, l| read.push((n, s, l.to_vec()))).unwrap();
        let mut in_memory = Vec::new();
        for_each_line_in(input, |n, s, l| in_memory.push((n, s, l.to_vec())));
        assert_eq!(read, in_memory);
    }

    #[test]
    fn spans_stay_right_across_blocks() {
        let mut input = Vec::new();
        while input.len() < BLOCK * 2 + 100 {
            input.extend_from_slice(format!("line {}\n", input.len()).as_bytes());
        }
        let mut ok = true;
        for_each_line_at(&mut &input[..], |_, span, line| {
            let raw = &input[span.start as usize..span.end as usize];
            ok &= raw.strip_suffix(b"\n").unwrap_or(raw) == line;
        })
        .unwrap();
        assert!(ok);
    }

    #[test]
    fn handles_lines_longer_than_a_block() {
        let mut input = vec![b'x'; BLOCK * 3 + 7];
        input.push(b'\n');
        input.extend_from_slice(b"tail\n");
        let lines = collect(&input);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].1.len(), BLOCK * 3 + 7);
        assert_eq!(lines[1].1, b"tail");
    }

    #[test]
    fn newlines_are_found_where_memchr_finds_them() {
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
                            1 => 0x8a, // a newline's low bits with the high bit set
                            _ => (x >> 40) as u8,
                        }
                    })
                    .collect();
                let mut found = Vec::new();
                for_each_newline(&bytes, |p| found.push(p));
                let expected: Vec<usize> = memchr::memchr_iter(b'\n', &bytes).collect();
                assert_eq!(found, expected, "len {len}, density {density}");
                for from in [0, 1, 63, 64, 65, len / 2] {
                    let from = from.min(bytes.len());
                    assert_eq!(
                        first_newline(&bytes[from..]),
                        memchr::memchr(b'\n', &bytes[from..]),
                        "len {len}, from {from}"
                    );
                }
                for chunk in bytes.chunks_exact(64) {
                    let chunk: &[u8; 64] = chunk.try_into().unwrap();
                    assert_eq!(newline_mask(chunk), newline_mask_bytewise(chunk));
                }
            }
        }
    }
}
