use super::*;

fn collect(input: &[u8]) -> Vec<(u32, Vec<u8>)> {
    let mut out = Vec::new();
    for_each_line(&mut &input[..], &mut LineNotes::default(), |n, l| {
        out.push((n, l.to_vec()))
    })
    .unwrap();
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
fn a_byte_order_mark_is_taken_off_the_first_line_only() {
    let input = b"\xEF\xBB\xBFa\n\xEF\xBB\xBFb\n";
    let expected = vec![(1, b"a".to_vec()), (2, b"\xEF\xBB\xBFb".to_vec())];
    assert_eq!(collect(input), expected);
    assert_eq!(collect(b"\xEF\xBB\xBFonly"), vec![(1, b"only".to_vec())]);
    let mut in_memory = Vec::new();
    for_each_line_in(input, |n, _, l| in_memory.push((n, l.to_vec())));
    assert_eq!(in_memory, expected);
    // A first line that merely starts like a mark keeps it: no UTF-8, it reads as
    // Windows-1252.
    assert_eq!(
        collect(b"\xEF\xBBx\n"),
        vec![(1, "ï»x".as_bytes().to_vec())]
    );
}

#[test]
fn spans_cover_the_stream_and_read_back_each_line() {
    let input = b"one\r\ntwo\n\nthree";
    let mut spans = Vec::new();
    for_each_line_at(&mut &input[..], &mut LineNotes::default(), |n, span, _| {
        spans.push((n, span))
    })
    .unwrap();
    assert_eq!(spans, vec![(1, 0..5), (2, 5..9), (3, 9..10), (4, 10..15)]);
    let third = &input[spans[3].1.start as usize..spans[3].1.end as usize];
    assert_eq!(third, b"three");
}

#[test]
fn lines_in_memory_split_as_read_lines_do() {
    let input = b"\xEF\xBB\xBFone\r\ntwo\n\n\0three\0";
    let mut read = Vec::new();
    for_each_line_at(&mut &input[..], &mut LineNotes::default(), |n, s, l| {
        read.push((n, s, l.to_vec()))
    })
    .unwrap();
    let mut in_memory = Vec::new();
    for_each_line_in(input, |n, s, l| in_memory.push((n, s, l.to_vec())));
    assert_eq!(read, in_memory);
}

/// A reader of a line may read whole lines after it: those are counted, not given, and
/// each line ahead ends where `line_end` says.
#[test]
fn lines_read_ahead_are_counted_and_skipped() {
    let input = b"a\nb1\r\nb2\nc\na\nb1\n";
    let mut given = Vec::new();
    let lines = for_each_line_ahead(
        &mut &input[..],
        &mut LineNotes::default(),
        |n, _, line, ahead| {
            given.push((n, line.to_vec()));
            if line != b"a" {
                return 0;
            }
            let bytes = ahead.bytes();
            let mut from = 0;
            let mut read = Vec::new();
            for k in 0..2 {
                let Some(end) = ahead.line_end(k) else { break };
                assert_eq!(bytes[end], b'\n');
                read.push(trim_line(&bytes[from..end]).to_vec());
                from = end + 1;
            }
            assert!(read.iter().zip([&b"b1"[..], b"b2"]).all(|(r, e)| r == e));
            read.len()
        },
    )
    .unwrap();
    assert_eq!(lines, 6);
    // The second `a` has one whole line after it: that one is read, and no more.
    let expected = [(1, &b"a"[..]), (4, b"c"), (5, b"a")];
    let expected: Vec<(u32, Vec<u8>)> = expected.iter().map(|(n, l)| (*n, l.to_vec())).collect();
    assert_eq!(given, expected);
}

#[test]
fn spans_stay_right_across_blocks() {
    let mut input = Vec::new();
    while input.len() < BLOCK * 2 + 100 {
        input.extend_from_slice(format!("line {}\n", input.len()).as_bytes());
    }
    let mut ok = true;
    for_each_line_at(
        &mut &input[..],
        &mut LineNotes::default(),
        |_, span, line| {
            let raw = &input[span.start as usize..span.end as usize];
            ok &= raw.strip_suffix(b"\n").unwrap_or(raw) == line;
        },
    )
    .unwrap();
    assert!(ok);
}

/// A line that is no UTF-8 is given read as Windows-1252 and counted, wherever its bad
/// byte lies against the reads (before or after a read's end, in a line that spans it);
/// UTF-8 and ASCII lines are given as they are.
#[test]
fn lines_that_are_no_utf8_are_read_as_windows_1252_across_reads() {
    for bad_at in [BLOCK - 10, BLOCK + 10] {
        let mut input = Vec::new();
        while input.len() < BLOCK - 40 {
            input.extend_from_slice("line é\n".as_bytes());
        }
        input.resize(BLOCK + 40, b'x');
        input[bad_at] = 0xFC;
        input.extend_from_slice(b"\ntail\n");
        let mut seen = LineNotes::default();
        let mut got = Vec::new();
        for_each_line(&mut &input[..], &mut seen, |n, l| got.push((n, l.to_vec()))).unwrap();
        let seen = seen.not_utf8;
        let (n, long) = &got[got.len() - 2];
        assert_eq!(
            seen,
            NotUtf8 {
                lines: 1,
                first: *n
            }
        );
        assert!(String::from_utf8(long.clone()).unwrap().contains('ü'));
        assert!(
            got[..got.len() - 2]
                .iter()
                .all(|(_, l)| l == "line é".as_bytes())
        );
        assert_eq!(got.last().unwrap().1, b"tail");
    }
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

/// A reader that gives at most `step` bytes a read, as a pipe or a decompressor may.
struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.step).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

/// What reading `input` with lines of up to `max_line` bytes gives, `step` bytes a read:
/// the lines given with their spans' bytes, the count returned, and the lines too long.
type Capped = (Vec<(u32, Vec<u8>, Vec<u8>)>, u32, TooLong);

fn read_capped(input: &[u8], max_line: usize, step: usize) -> Capped {
    let mut notes = LineNotes::default();
    let mut given = Vec::new();
    let mut reader = Trickle { bytes: input, step };
    let n = read_lines(&mut reader, &mut notes, max_line, |n, span, line, _| {
        let raw = input[span.start as usize..span.end as usize].to_vec();
        given.push((n, line.to_vec(), raw));
        0
    })
    .unwrap();
    (given, n, notes.too_long)
}

/// The same, split by hand: every line longer than `max_line` counted, the others given.
fn capped_by_hand(input: &[u8], max_line: usize) -> Capped {
    let mut given = Vec::new();
    let mut long = TooLong::default();
    let mut at = 0;
    let mut n = 0;
    while at < input.len() {
        let end = memchr::memchr(b'\n', &input[at..]).map_or(input.len(), |p| at + p);
        n += 1;
        let line = &input[at..end];
        let next = (end + 1).min(input.len());
        if line.len() > max_line {
            long.saw(n, line.len() as u64, max_line);
        } else {
            given.push((n, trim_line(line).to_vec(), input[at..next].to_vec()));
        }
        at = next;
    }
    let count = given.len() as u32;
    (given, count, long)
}

/// Lines longer than the cap are dropped and counted, wherever they fall against the reads
/// and the buffer (one read, many, at the buffer's start or after lines in it, at the end
/// of the input with or without a newline); every other line is given as it is, numbered
/// and placed as it was.
#[test]
fn lines_longer_than_the_cap_are_counted_not_given() {
    let max_line = 100;
    let mut lengths: Vec<usize> = vec![3, 100, 101, 0, 250, 99, 1000, 1000, 5, 101];
    // A few hundred more, pseudo-random around the cap.
    let mut seed: u64 = 7;
    for _ in 0..300 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        lengths.push((seed >> 33) as usize % 260);
    }
    let mut input = Vec::new();
    for (i, &len) in lengths.iter().enumerate() {
        input.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, len));
        input.push(b'\n');
    }
    for ending in [&b""[..], b"tail", &[b'z'; 300]] {
        let mut input = input.clone();
        input.extend_from_slice(ending);
        let expected = capped_by_hand(&input, max_line);
        assert!(expected.2.lines > 50);
        for step in [1, 7, 64, 101, 4096, 1 << 20] {
            assert!(
                read_capped(&input, max_line, step) == expected,
                "step {step}"
            );
        }
    }
}

/// Past the first block, the buffer grows to the cap and no further: a line of the cap is
/// given whole, one a byte longer is not.
#[test]
fn the_buffer_grows_up_to_the_cap() {
    let max_line = BLOCK * 2 + 5;
    let mut input = b"first\n".to_vec();
    input.resize(input.len() + max_line, b'x');
    input.extend_from_slice(b"\nsecond\n");
    input.resize(input.len() + max_line + 1, b'y');
    input.extend_from_slice(b"\nthird");
    let (given, n, long) = read_capped(&input, max_line, 1 << 16);
    let lens: Vec<(u32, usize)> = given.iter().map(|(n, l, _)| (*n, l.len())).collect();
    assert_eq!(lens, [(1, 5), (2, max_line), (3, 6), (5, 5)]);
    assert_eq!(n, 4);
    let mut expected = TooLong::default();
    expected.saw(4, max_line as u64 + 1, max_line);
    assert_eq!(long, expected);
}

/// What each line ahead of each line of `input` (read `step` bytes a read) is: per line
/// given, its lines ahead as given one by one ([`as_given`]) with where each ends in the
/// stream's bytes, unless the lines ahead were recoded; and the lines given, with the
/// input's note on lines no UTF-8. The reader reads ahead `take` lines wherever it can, and
/// they are then not given.
type Seen = (
    Vec<(u32, Vec<(Vec<u8>, Option<usize>)>)>,
    Vec<(u32, Vec<u8>)>,
    NotUtf8,
);

fn seen_ahead(input: &[u8], step: usize, take: usize) -> Seen {
    let mut notes = LineNotes::default();
    let (mut aheads, mut given) = (Vec::new(), Vec::new());
    let mut reader = Trickle { bytes: input, step };
    read_lines(&mut reader, &mut notes, MAX_LINE, |n, _, line, ahead| {
        given.push((n, line.to_vec()));
        let bytes = ahead.bytes();
        let (mut from, mut lines) = (0, Vec::new());
        for k in 0.. {
            let Some(end) = ahead.line_end(k) else { break };
            let mut plain = Vec::new();
            let line = as_given(&bytes[from..end], n + 1 + k as u32, false, &mut plain);
            lines.push((line.to_vec(), (!ahead.recoded()).then_some(end + 1)));
            from = end + 1;
        }
        let read = take.min(lines.len());
        aheads.push((n, lines));
        read
    })
    .unwrap();
    (aheads, given, notes.not_utf8)
}

/// `lines` repeated to 400, with a last one cut short.
fn repeated(lines: [&[u8]; 5]) -> Vec<u8> {
    let mut input = Vec::new();
    for i in 0..400 {
        input.extend_from_slice(lines[i % 5]);
    }
    input.extend_from_slice(b"cut \xE9");
    input
}

/// Lines read ahead read as the same lines read one by one: a line that is no UTF-8 read as
/// Windows-1252 there too (the lines ahead then said to be recoded), a UTF-8 or ASCII one
/// as it is, wherever the reads end; lines ahead not recoded end in the stream where their
/// bytes do; and every line that is no UTF-8 is counted once, whether read ahead or given.
/// Lines of UTF-8 and ASCII alone are never recoded.
#[test]
fn lines_ahead_read_as_they_are_given() {
    let utf8 = "14:02:11.404  order Müller-1  4500p\n".as_bytes();
    let latin = repeated([
        b"14:02:11.403  order M\xFCller-1  4500p\r\n",
        utf8,
        b"14:02:11.405  plain\n",
        b"\0\0R\xE9ussi \x80\n",
        b"\n",
    ]);
    let plain = repeated([utf8, utf8, b"14:02:11.405  plain\n", b"\n", b"\n"]);
    for (input, not_utf8) in [(latin, 161), (plain, 1)] {
        // Read one by one, with nothing ahead: the reference.
        let (_, reference, counted) = seen_ahead(&input, 1 << 20, 0);
        assert_eq!(counted.lines, not_utf8);
        let offsets: Vec<usize> = (input.split_inclusive(|&b| b == b'\n'))
            .scan(0, |at, l| {
                *at += l.len();
                Some(*at)
            })
            .collect();
        for step in [1, 13, 100, 4096, 1 << 20] {
            let (aheads, given, _) = seen_ahead(&input, step, 0);
            assert_eq!(given, reference, "step {step}");
            let mut recoded = 0;
            for (n, lines) in &aheads {
                for (k, (line, stream_end)) in lines.iter().enumerate() {
                    let at = (*n as usize) + k;
                    assert_eq!(line, &reference[at].1, "step {step}: line {}", at + 1);
                    let ends = offsets[at] - offsets[*n as usize - 1];
                    match stream_end {
                        Some(end) => assert_eq!(*end, ends, "step {step}: line {}", at + 1),
                        None => recoded += 1,
                    }
                }
            }
            assert_eq!(recoded > 0, not_utf8 > 1 && step > 1, "step {step}");
            // Lines read ahead and not given are counted all the same.
            let (_, given, seen) = seen_ahead(&input, step, 2);
            assert_eq!(given.len() < reference.len(), step > 1, "step {step}");
            assert_eq!(seen, counted, "step {step}");
        }
    }
}
