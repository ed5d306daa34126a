//! The lines after the one being read that the reader's buffer already holds, for a parser
//! that reads a run of lines at once ([`super::for_each_line_ahead`]).

/// The lines after the one being read that the reader's buffer already holds: its bytes
/// (the last line perhaps cut short) and where each whole line among them ends.
#[derive(Clone, Copy)]
pub struct Ahead<'a> {
    pub(super) bytes: &'a [u8],
    /// The places of the newlines after the line, in the buffer; `from` is `bytes`' place.
    pub(super) newlines: &'a [usize],
    pub(super) from: usize,
    /// The line is the stream's last and no newline ends it ([`Ahead::cut_short`]).
    pub(super) cut: bool,
    /// The lines ahead were recoded ([`Ahead::recoded`]).
    pub(super) recoded: bool,
}

impl<'a> Ahead<'a> {
    /// Nothing ahead.
    pub const NONE: Ahead<'static> = Ahead {
        bytes: &[],
        newlines: &[],
        from: 0,
        cut: false,
        recoded: false,
    };

    /// Nothing ahead, and the line is the stream's last, with no newline after it.
    pub(super) const CUT: Ahead<'static> = Ahead {
        cut: true,
        ..Ahead::NONE
    };

    /// `bytes` with the places of their newlines (`newlines`, found by the caller).
    pub fn new(bytes: &'a [u8], newlines: &'a [usize]) -> Self {
        Ahead {
            bytes,
            newlines,
            from: 0,
            cut: false,
            recoded: false,
        }
    }

    /// Whether the line is the stream's last and has no newline: a writer still at work, or
    /// a crash or a copy that cut the file inside it. A line that then reads as none of a
    /// format's shapes may be the first bytes of an event, and is skipped with
    /// [`super::CUT_SHORT`] rather than ignored as chatter.
    pub fn cut_short(&self) -> bool {
        self.cut
    }

    /// The bytes ahead: each whole line as UTF-8, as it is given when read (a line that is
    /// no UTF-8 read as Windows-1252); the last, cut short, as it was read.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Whether the lines ahead were recoded, some of them being no UTF-8
    /// ([`super::recoded`]): their bytes, and the places [`Ahead::line_end`] gives, are then
    /// not the stream's, and no place in the file may be reckoned from them.
    pub fn recoded(&self) -> bool {
        self.recoded
    }

    /// Where the `k`th whole line ahead (from 0) ends in [`Ahead::bytes`]: its newline's
    /// place, if the buffer holds that line whole. Found once for the whole buffer rather
    /// than searched for by each reader of a line ahead.
    pub fn line_end(&self, k: usize) -> Option<usize> {
        self.newlines.get(k).map(|&nl| nl - self.from)
    }
}
