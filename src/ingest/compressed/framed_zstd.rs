//! The Collector's file exporter with `compression: zstd` (its default framing, the
//! `exportMessageAsBuffer` of contrib's `fileexporter`): each export batch is a 4-byte
//! big-endian length, then that many bytes of one zstd frame. Each batch is given as one
//! line, as the uncompressed exporter writes it.
//!
//! A batch is decompressed as it is read, never held whole: a frame of a few KiB can unpack
//! to GiBs (a damaged or hostile file), and held, one of 1 GiB took 2.1 GB of memory before
//! the line splitter's cap could skip it. Streamed, the splitter drops such a line as it goes
//! by, as it does any line too long to hold, and says its length.

use super::read_up_to;
use std::io::{self, BufRead, BufReader, Read, Take};

/// A frame's decoder, reading no further than the frame's length.
type FrameDecoder<R> = zstd::stream::read::Decoder<'static, Take<BufReader<R>>>;

pub(super) struct LengthFramedZstd<R: Read> {
    /// The stream between frames; `None` while one is being decoded.
    between: Option<BufReader<R>>,
    /// The frame being decoded.
    frame: Option<FrameDecoder<R>>,
    /// Whether what the frame has given so far ends with a newline.
    ends_line: bool,
    /// A batch has ended without a newline of its own: one is given before anything else.
    owes_newline: bool,
}

impl<R: Read> LengthFramedZstd<R> {
    pub(super) fn new(inner: R) -> Self {
        LengthFramedZstd {
            between: Some(BufReader::with_capacity(1 << 16, inner)),
            frame: None,
            ends_line: false,
            owes_newline: false,
        }
    }

    /// Starts the next frame after its length; `false` at the end of the input.
    fn next_frame(&mut self) -> io::Result<bool> {
        let Some(mut inner) = self.between.take() else {
            return Ok(false);
        };
        let mut len = [0u8; 4];
        match read_up_to(&mut inner, &mut len)? {
            0 => return Ok(false),
            4 => {}
            _ => return Err(cut_short("a frame's length")),
        }
        let len = u32::from_be_bytes(len) as u64;
        self.ends_line = false;
        if len == 0 {
            // An empty frame is an empty batch, not a broken stream.
            self.owes_newline = true;
            self.between = Some(inner);
        } else {
            self.frame = Some(zstd::stream::read::Decoder::with_buffer(inner.take(len))?);
        }
        Ok(true)
    }

    /// Ends the frame being decoded: the stream must hold all of its length.
    fn end_frame(&mut self, frame: FrameDecoder<R>) -> io::Result<()> {
        let rest = frame.finish();
        if rest.limit() > 0 {
            return Err(cut_short("a frame"));
        }
        self.between = Some(rest.into_inner());
        // One line a batch: a batch that ends its own line gets no blank line after it.
        self.owes_newline = !self.ends_line;
        Ok(())
    }
}

fn cut_short(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("length-prefixed zstd stream cut short inside {what}"),
    )
}

impl<R: Read> Read for LengthFramedZstd<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.owes_newline {
                self.owes_newline = false;
                buf[0] = b'\n';
                return Ok(1);
            }
            let Some(frame) = &mut self.frame else {
                if !self.next_frame()? {
                    return Ok(0);
                }
                continue;
            };
            match frame.read(buf) {
                Ok(0) => {
                    let frame = self.frame.take().expect("a frame being decoded");
                    self.end_frame(frame)?;
                }
                Ok(n) => {
                    self.ends_line = buf[n - 1] == b'\n';
                    return Ok(n);
                }
                // The input ended before the frame's length did.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    let left = frame.get_mut();
                    return match left.limit() > 0 && left.fill_buf()?.is_empty() {
                        true => Err(cut_short("a frame")),
                        false => Err(e),
                    };
                }
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn framed(frames: &[Vec<u8>]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for f in frames {
            bytes.extend((f.len() as u32).to_be_bytes());
            bytes.extend(f);
        }
        bytes
    }

    fn zst(text: &[u8]) -> Vec<u8> {
        zstd::encode_all(text, 3).unwrap()
    }

    /// Reads it all `step` bytes at a time.
    fn unpacked(bytes: &[u8], step: usize) -> io::Result<Vec<u8>> {
        let mut reader = LengthFramedZstd::new(bytes);
        let mut out = Vec::new();
        let mut buf = vec![0; step];
        loop {
            match reader.read(&mut buf)? {
                0 => return Ok(out),
                n => out.extend_from_slice(&buf[..n]),
            }
        }
    }

    /// Each batch a line, whatever the read size: a newline added where a batch has none,
    /// none where it ends its own, an empty frame an empty line, two frames under one length
    /// one batch.
    #[test]
    fn batches_are_lines_at_any_read_size() {
        let long: Vec<u8> = (0..300_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let bytes = framed(&[
            zst(b"{\"a\":1}"),
            zst(b"{\"b\":2}\n"),
            Vec::new(),
            [zst(b"{\"c\":"), zst(b"3}")].concat(),
            zst(&long),
        ]);
        let mut want = b"{\"a\":1}\n{\"b\":2}\n\n{\"c\":3}\n".to_vec();
        want.extend_from_slice(&long);
        want.push(b'\n');
        for step in [1, 7, 4096, 1 << 20] {
            assert_eq!(unpacked(&bytes, step).unwrap(), want, "step {step}");
        }
        assert_eq!(unpacked(&[], 10).unwrap(), b"");
    }

    /// A batch is given as it is decompressed: its first bytes come before its frame has
    /// been read through, so a frame that unpacks to GiBs is never held whole.
    #[test]
    fn a_batch_is_given_before_its_frame_is_read_through() {
        // Bytes that do not compress (xorshift), so that the frame is as long as the batch.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let big: Vec<u8> = (0..8 << 20)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let bytes = framed(&[zst(&big)]);
        let mut input = Cursor::new(&bytes[..]);
        let mut reader = LengthFramedZstd::new(&mut input);
        let mut buf = [0u8; 4096];
        let n = reader.read(&mut buf).unwrap();
        assert_eq!(buf[..n], big[..n]);
        drop(reader);
        let consumed = input.position() as usize;
        assert!(
            consumed < bytes.len() / 4,
            "{consumed} of {} bytes read for the first {n}",
            bytes.len()
        );
    }

    /// A frame or length cut off by the end of the input says so, after the batches before
    /// it; a frame that is no zstd is an error of its own.
    #[test]
    fn a_cut_frame_or_length_is_named() {
        let whole = framed(&[zst(b"one"), zst(b"two")]);
        for (bytes, what, before) in [
            (&whole[..whole.len() - 5], "a frame", &b"one\n"[..]),
            (&whole[..6], "a frame", b""),
            (
                &[&whole[..], &[0, 0]].concat(),
                "a frame's length",
                b"one\ntwo\n",
            ),
        ] {
            let mut reader = LengthFramedZstd::new(bytes);
            let mut out = Vec::new();
            let err = reader.read_to_end(&mut out).unwrap_err();
            let said = format!("length-prefixed zstd stream cut short inside {what}");
            assert_eq!(err.to_string(), said);
            assert_eq!(out, before);
        }
        let mut broken = framed(&[zst(b"one"), zst(b"two")]);
        let second = 4 + zst(b"one").len() + 4;
        broken[second..second + 4].copy_from_slice(b"\xde\xad\xbe\xef");
        let err = unpacked(&broken, 64).unwrap_err();
        assert!(!err.to_string().contains("cut short"), "{err}");
    }
}
