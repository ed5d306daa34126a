//! Compressed inputs, unpacked as they are read: gzip (every member, NUL padding after the
//! last read past) and zstd (every frame, back to back or each after its length as the
//! OpenTelemetry Collector writes them, [`framed_zstd`]); bzip2 and xz told by their magic,
//! not unpacked.

mod framed_zstd;

use super::source::Reader;
use framed_zstd::LengthFramedZstd;
use std::io::{self, BufRead, Cursor, Read};

/// Wraps the reader in a decoder when the stream starts with gzip's or zstd's magic bytes
/// (and says so). Both read every member or frame: rotated logs are often several gzip
/// members, and the OpenTelemetry Collector's file exporter writes a zstd frame per batch,
/// back to back or, by default, each after its length ([`LengthFramedZstd`]).
pub(super) fn decompressing(mut raw: Reader<'_>) -> io::Result<(Reader<'_>, bool)> {
    const GZIP: [u8; 2] = [0x1f, 0x8b];
    let mut magic = [0u8; 8];
    let got = read_up_to(&mut raw, &mut magic)?;
    let head = &magic[..got];
    let replay = Cursor::new(head.to_vec()).chain(raw);
    if head.starts_with(&GZIP) {
        let member = flate2::bufread::GzDecoder::new(io::BufReader::with_capacity(1 << 16, replay));
        Ok((
            Box::new(GzMembers {
                member: Some(member),
            }),
            true,
        ))
    } else if head.starts_with(&ZSTD) {
        Ok((Box::new(zstd::stream::read::Decoder::new(replay)?), true))
    } else if head.len() == 8 && head[4..] == ZSTD {
        Ok((Box::new(LengthFramedZstd::new(replay)), true))
    } else {
        Ok((Box::new(replay), false))
    }
}

const ZSTD: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The compression a stream starts with that is not unpacked here, by its magic bytes, and
/// the command that unpacks it: bzip2 (`BZh`, a block size, a block's or the end's magic)
/// and xz. They were read as a few lines of binary, each "no parsable timestamp" (review37 L2).
pub(super) fn compressed_unread(head: &[u8]) -> Option<(&'static str, &'static str)> {
    const XZ: &[u8] = b"\xFD7zXZ\0";
    let bzip2 = head.len() >= 10
        && head.starts_with(b"BZh")
        && (b'1'..=b'9').contains(&head[3])
        && (head[4..10] == *b"1AY&SY" || head[4..10] == *b"\x17\x72\x45\x38\x50\x90");
    if bzip2 {
        Some(("bzip2", "bunzip2 -k FILE"))
    } else if head.starts_with(XZ) {
        Some(("xz", "unxz -k FILE"))
    } else {
        None
    }
}

/// Fills as much of `buf` as the reader has, returning how much that was.
fn read_up_to(raw: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match raw.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// The members of a gzip file, one after another, and after the last only NUL bytes if
/// anything: a file pre-allocated and padded, which `zcat` reads too. flate2's
/// `MultiGzDecoder` took the padding for a member's header and failed the file.
struct GzMembers<R> {
    member: Option<flate2::bufread::GzDecoder<R>>,
}

impl<R: BufRead> Read for GzMembers<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(member) = &mut self.member else {
                return Ok(0);
            };
            let n = member.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            let Some(mut rest) = self.member.take().map(|m| m.into_inner()) else {
                return Ok(0);
            };
            loop {
                let after = rest.fill_buf()?;
                match after.first() {
                    None => return Ok(0),
                    Some(0) => {
                        let zeros = after.iter().take_while(|&&b| b == 0).count();
                        rest.consume(zeros);
                    }
                    Some(0x1f) => break,
                    Some(_) => {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            "bytes after the last gzip member that are no gzip member",
                        ));
                    }
                }
            }
            self.member = Some(flate2::bufread::GzDecoder::new(rest));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(text: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(text).unwrap();
        enc.finish().unwrap()
    }

    fn unpacked(bytes: Vec<u8>) -> io::Result<Vec<u8>> {
        let (mut reader, compressed) = decompressing(Box::new(Cursor::new(bytes)))?;
        assert!(compressed);
        let mut out = Vec::new();
        reader.read_to_end(&mut out)?;
        Ok(out)
    }

    /// Members back to back are one stream; NUL padding after the last is read past, as
    /// `zcat` does; other bytes after it are an error.
    #[test]
    fn gzip_members_then_nul_padding_read_whole() {
        let two = [gzip(b"a\n"), gzip(b"b\n")].concat();
        assert_eq!(unpacked(two.clone()).unwrap(), b"a\nb\n");
        let padded = [two.clone(), vec![0; 512]].concat();
        assert_eq!(unpacked(padded).unwrap(), b"a\nb\n");
        let garbage = [two, b"junk".to_vec()].concat();
        assert!(unpacked(garbage).is_err());
    }

    #[test]
    fn bzip2_and_xz_are_told_by_their_magic_and_nothing_else_is() {
        let said = |head: &[u8]| compressed_unread(head).map(|(how, _)| how);
        assert_eq!(said(b"BZh91AY&SY\x01\x02"), Some("bzip2"));
        assert_eq!(said(b"BZh1\x17\x72\x45\x38\x50\x90\0\0"), Some("bzip2"));
        assert_eq!(said(b"\xFD7zXZ\0\0\x04"), Some("xz"));
        for other in [
            &b"BZh9 is how a line may start\n"[..],
            b"BZh91AY",
            b"\xFD7zXY\0",
            b"",
        ] {
            assert_eq!(said(other), None, "{other:?}");
        }
    }
}
