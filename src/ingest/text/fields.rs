//! A message split into fields: two or more spaces, or a tab, end one (SPEC §3.1), and a
//! field `name=value` is a token. Done for most lines of every log, so on the stack and a
//! word at a time.

use std::mem::MaybeUninit;

/// At most `N` items on the stack: splitting a line must not touch the heap, since most
/// lines of a real log become no event. Items past `N` are dropped (no message shape has
/// anywhere near that many fields). The slots start uninitialised: zeroing a kilobyte of
/// them for every line was a visible part of the parse.
pub(super) struct Few<T: Copy, const N: usize> {
    items: [MaybeUninit<T>; N],
    len: usize,
}

impl<T: Copy, const N: usize> Few<T, N> {
    fn new() -> Self {
        Few {
            items: [const { MaybeUninit::uninit() }; N],
            len: 0,
        }
    }

    fn push(&mut self, item: T) {
        if let Some(slot) = self.items.get_mut(self.len) {
            slot.write(item);
            self.len += 1;
        }
    }
}

impl<T: Copy, const N: usize> std::ops::Deref for Few<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        let init = &self.items[..self.len];
        // SAFETY: the first `len` slots were written by `push`, and `MaybeUninit<T>` has
        // the layout of `T`.
        unsafe { std::slice::from_raw_parts(init.as_ptr().cast::<T>(), init.len()) }
    }
}

const MAX_FIELDS: usize = 24;

/// The names a run is logged under, SPEC's first.
pub(super) const RUN_NAMES: [&[u8]; 3] = [b"run", b"run_id", b"runId"];

/// A message split into plain fields and `name=value` tokens.
pub(super) struct Fields<'a> {
    pub(super) plain: Few<&'a [u8], MAX_FIELDS>,
    pub(super) tokens: Few<(&'a [u8], &'a [u8]), MAX_FIELDS>,
}

impl<'a> Fields<'a> {
    pub(super) fn split(msg: &'a [u8]) -> Self {
        let mut fields = Fields::empty();
        fields.fill(msg);
        fields
    }

    /// No fields yet: nothing is written until [`Fields::fill`].
    pub(super) fn empty() -> Self {
        Fields {
            plain: Few::new(),
            tokens: Few::new(),
        }
    }

    /// [`Fields::split`] into fields made by [`Fields::empty`], where they stand: a kilobyte
    /// of slots is not moved for every line split.
    pub(super) fn fill(&mut self, msg: &'a [u8]) {
        let fields = self;
        let mut start = 0;
        while let Some(gap) = next_gap(msg, start) {
            fields.push(&msg[start..gap]);
            start = gap + 1;
            while start < msg.len() && matches!(msg[start], b' ' | b'\t') {
                start += 1;
            }
        }
        fields.push(&msg[start..]);
    }

    fn push(&mut self, field: &'a [u8]) {
        let field = field.trim_ascii();
        if field.is_empty() {
            return;
        }
        match token(field) {
            // `amount=4500 currency=GBP refund_id=re_1`: tokens one blank apart (structlog's
            // console layout pads the event, then joins its fields so), each its own; a
            // value of several words (`error=Read timed out`) stays whole.
            Some((_, value)) if value.contains(&b' ') && all_tokens(field) => {
                let mut rest = field;
                while let Some((word, after)) = next_token_word(rest) {
                    self.tokens.push(token(word).expect("a token, checked"));
                    rest = after;
                }
            }
            Some(t) => self.tokens.push(t),
            None => self.plain.push(field),
        }
    }

    /// The fields of a line whose first field holds single-spaced tokens (`refund created
    /// refund_id=rf_1 order_id=A-1`, as loggers that join with one blank write): its first
    /// two words stay one field, each word after them is a field of its own, and the other
    /// fields follow. `None` when the first field has no token after two words.
    pub(super) fn respaced(&self) -> Option<Fields<'a>> {
        let first = *self.plain.first()?;
        let mut words = first.split(|&b| b == b' ').filter(|w| !w.is_empty());
        let kind = words.next()?;
        // `refund.created refund_id=rf_1 ...`: the first word says both.
        let dotted = super::dotted_event(kind).is_some();
        let id = if dotted { kind } else { words.next()? };
        let rest: Vec<&'a [u8]> = words.collect();
        // Only an effect's own line: an id with a digit in it (`refund rf_3 ...`), or a word
        // saying what happened and an id token (`refund created refund_id=rf_2 ...`); not a
        // sentence about a refund (`refund request received order_id=A-1 ...`).
        let id_token = |w: &&[u8]| token(w).is_some_and(|(n, _)| n.ends_with(b"_id") || n == b"id");
        let names_effect = (!dotted && id.iter().any(u8::is_ascii_digit))
            || ((dotted || crate::event::is_event_word(id)) && rest.iter().any(id_token));
        if !names_effect || !rest.iter().any(|w| token(w).is_some()) {
            return None;
        }
        let head_end = id.as_ptr() as usize - first.as_ptr() as usize + id.len();
        debug_assert!(first[..head_end].starts_with(kind));
        let mut out = Fields::empty();
        out.push(&first[..head_end]);
        let offset = |w: &[u8]| w.as_ptr() as usize - first.as_ptr() as usize;
        let mut i = 0;
        while let Some(&word) = rest.get(i) {
            i += 1;
            // `amount=4500 GBP`: a number and its currency's code, one value.
            let code = rest
                .get(i)
                .filter(|c| c.len() == 3 && c.iter().all(u8::is_ascii_uppercase));
            let number = token(word).is_some_and(|(n, v)| {
                n.starts_with(b"amount") && v.first().is_some_and(u8::is_ascii_digit)
            });
            match code {
                Some(code) if number => {
                    out.push(&first[offset(word)..offset(code) + 3]);
                    i += 1;
                }
                _ => out.push(word),
            }
        }
        for &field in &self.plain[1..] {
            out.push(field);
        }
        for &t in self.tokens.iter() {
            out.tokens.push(t);
        }
        Some(out)
    }

    /// The fields of a line with an object logged after its message (`refund created:
    /// {"refund_id": "rf_1", ...}`, see [`super::payload`]): the message before the object
    /// (without its `:`) is the first field, the object's members are tokens. `None` when
    /// no field holds such an object, or the message names no effect kind.
    pub(super) fn with_payload(&self) -> Option<Fields<'a>> {
        let (i, open) = (self.plain.iter().enumerate())
            .find_map(|(i, f)| Some((i, f.iter().position(|&b| b == b'{')?)))?;
        let field = self.plain[i];
        let head = field[..open].trim_ascii();
        let head = head.strip_suffix(b":").unwrap_or(head).trim_ascii();
        // A message about anything else (`user created: {...}`) is the application's.
        let kind = head.split(|&b| b == b' ').next().unwrap_or_default();
        let kind = String::from_utf8_lossy(kind).to_ascii_lowercase();
        if !head.is_empty() && !crate::event::is_effect_kind(&kind) {
            return None;
        }
        let mut out = Fields::empty();
        for (j, &other) in self.plain.iter().enumerate() {
            match j == i {
                true => out.push(head),
                false => out.push(other),
            }
        }
        for &t in self.tokens.iter() {
            out.tokens.push(t);
        }
        let tokens = &mut out.tokens;
        super::payload::members(&field[open..], |n, v| tokens.push((n, v))).then_some(out)
    }

    /// The fields of a line whose first field is words then tokens one blank apart
    /// ([`super::call_tokens::words_then_tokens`]): the words a field, each token its own,
    /// the other fields as they were. `None` when the first field is not of that shape.
    pub(super) fn words_then_tokens(&self) -> Option<Fields<'a>> {
        let first = self.plain.first()?;
        // Most lines that get here have no token in their first field at all.
        memchr::memchr(b'=', first)?;
        let (head, tokens) = super::call_tokens::words_then_tokens(first)?;
        let mut out = Fields::empty();
        out.plain.push(head);
        for t in tokens.into_iter().chain(self.tokens.iter().copied()) {
            out.tokens.push(t);
        }
        for &field in self.plain.iter().skip(1) {
            out.push(field);
        }
        Some(out)
    }

    /// The run a line names: SPEC's `run=`, or a program's own `run_id=` / `runId=`.
    pub(super) fn run(&self) -> Option<&'a [u8]> {
        RUN_NAMES.iter().find_map(|name| self.token(name))
    }

    pub(super) fn token(&self, name: &[u8]) -> Option<&'a [u8]> {
        self.tokens
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }

    /// The idempotency key a request line carries: an `idempotency_key=` token (SPEC §3.1),
    /// a header written as a field (`Idempotency-Key: K`), or inside a dump of the headers
    /// (`headers={"Idempotency-Key": "K"}`, JSON or Python's `{'Idempotency-Key': 'K'}`).
    /// Providers prefix the header's name with a hyphen (`X-Idempotency-Key`,
    /// `Cko-Idempotency-Key`); `has_idempotency_key=false` names no key. A value that is no
    /// key (`None`, `[REDACTED]`: see [`crate::ingest::is_key_value`]) is none. One reading for the general
    /// path and the idle calls' shortcut.
    pub(super) fn idempotency_key(&self) -> Option<&'a [u8]> {
        let names_key = |name: &[u8]| {
            const HEADER: &[u8] = b"-idempotency-key";
            name.eq_ignore_ascii_case(b"idempotency_key")
                // Java's and JavaScript's spelling (`idempotencyKey=...`).
                || name.eq_ignore_ascii_case(b"idempotencyKey")
                || name.eq_ignore_ascii_case(&HEADER[1..])
                || (name.len() > HEADER.len()
                    && name[name.len() - HEADER.len()..].eq_ignore_ascii_case(HEADER))
        };
        let token = (self.tokens.iter())
            .find(|(n, _)| names_key(n))
            .map(|(_, v)| *v);
        let header = || {
            self.plain.iter().find_map(|p| {
                let colon = p.iter().position(|&b| b == b':')?;
                let name = &p[..colon];
                let is_name = name.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-');
                (is_name && names_key(name)).then(|| p[colon + 1..].trim_ascii())
            })
        };
        let dumped = || key_in_headers_dump(self.token(b"headers")?);
        (token.or_else(header).or_else(dumped)).and_then(crate::ingest::key_of)
    }
}

/// The value of a member named `...idempotency-key` or `idempotency_key` (any case, any
/// prefix) in a dump of headers as JSON or as a Python dict: the quoted text after the
/// name's closing quote and a colon. The quotes may be escaped, when the dump is itself a
/// quoted value (`headers="{\"Idempotency-Key\": \"k\"}"`).
fn key_in_headers_dump(dump: &[u8]) -> Option<&[u8]> {
    const NAME: &[u8] = b"idempotency-key";
    // Lower case, `_` as `-`: the same length, so places in it are places in the dump.
    let folded: Vec<u8> = (dump.iter())
        .map(|&b| {
            if b == b'_' {
                b'-'
            } else {
                b.to_ascii_lowercase()
            }
        })
        .collect();
    let mut from = 0;
    while let Some(at) = find(&folded[from..], NAME).map(|i| from + i) {
        from = at + NAME.len();
        let rest = &dump[from..];
        let escaped = rest.first() == Some(&b'\\');
        let rest = if escaped { &rest[1..] } else { rest };
        let Some(&quote) = rest.first().filter(|q| matches!(q, b'"' | b'\'')) else {
            continue;
        };
        let after = rest[1..].trim_ascii_start();
        let Some(after) = after.strip_prefix(b":").map(<[u8]>::trim_ascii_start) else {
            continue;
        };
        let opening: &[u8] = if escaped { &[b'\\', quote] } else { &[quote] };
        let Some(value) = after.strip_prefix(opening) else {
            continue;
        };
        let end = value.iter().position(|&b| b == quote || b == b'\\')?;
        if end > 0 && value[end..].starts_with(opening) {
            return Some(&value[..end]);
        }
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Where the field starting at `from` ends: at a tab, or at a space followed by another.
/// Eight bytes at a time (this runs over every byte of every line): a word's lanes equal
/// to a space, and those of the word one byte on, give the places where two spaces meet.
pub(super) fn next_gap(msg: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // High bit of each byte lane that equals `c` (exact: no carries between lanes).
    let lanes_equal = |w: u64, c: u8| {
        let x = w ^ (ONES * c as u64);
        !(((x & !(ONES << 7)) + !(ONES << 7)) | x) & (ONES << 7)
    };
    let mut i = from;
    while i + 9 <= msg.len() {
        let word = |at: usize| u64::from_le_bytes(msg[at..at + 8].try_into().expect("8 bytes"));
        let (here, next) = (word(i), word(i + 1));
        let hits = (lanes_equal(here, b' ') & lanes_equal(next, b' ')) | lanes_equal(here, b'\t');
        if hits != 0 {
            return Some(i + hits.trailing_zeros() as usize / 8);
        }
        i += 8;
    }
    (i..msg.len()).find(|&j| msg[j] == b'\t' || (msg[j] == b' ' && msg.get(j + 1) == Some(&b' ')))
}

/// A whole field of the form `name=value`, `name` being a word.
pub(super) fn token(field: &[u8]) -> Option<(&[u8], &[u8])> {
    let eq = field.iter().position(|&b| b == b'=')?;
    let name = &field[..eq];
    let is_name = !name.is_empty()
        && name
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    is_name.then(|| (name, unquoted(&field[eq + 1..])))
}

/// Whether every word of `field`, one blank apart, is a `name=value` token; a value in
/// double quotes is one word, blanks and all (`note="order_id=A-1 refund_id=rf_1"`).
fn all_tokens(field: &[u8]) -> bool {
    let mut rest = field;
    while let Some((word, after)) = next_token_word(rest) {
        if token(word).is_none() {
            return false;
        }
        rest = after;
    }
    rest.trim_ascii().is_empty()
}

/// The first word of `text` and what follows it: up to a blank, or past the closing quote
/// of a value that opens one (`name="a b"`, Python's `name='a b'`). `None` at the end, or
/// at a quote left open.
fn next_token_word(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let text = text.trim_ascii_start();
    if text.is_empty() {
        return None;
    }
    let quoted = text
        .iter()
        .position(|&b| b == b'=' || b == b' ')
        .filter(|&eq| text[eq] == b'=')
        .and_then(|eq| Some((eq, *text.get(eq + 1).filter(|q| matches!(q, b'"' | b'\''))?)));
    let end = match quoted {
        Some((eq, quote)) => eq + 2 + text[eq + 2..].iter().position(|&b| b == quote)? + 1,
        None => text.iter().position(|&b| b == b' ').unwrap_or(text.len()),
    };
    Some((&text[..end], &text[end..]))
}

/// A value without the quotes a logger put around it (`idempotency_key=""`, Go's `%q`;
/// `key="k_1"`, Ruby's `inspect`; `refund_id='re_1'`, Python's `repr`): read with them, an
/// empty key was a key, shared by every request, and `currency='GBP'` no currency. A value
/// with its quote inside is left as written.
fn unquoted(value: &[u8]) -> &[u8] {
    match value {
        [b'"', inner @ .., b'"'] if !inner.contains(&b'"') => inner,
        // Python's `repr` (`logger.info("refund_id=%r", rid)`, an f-string's `{rid!r}`).
        [b'\'', inner @ .., b'\''] if !inner.contains(&b'\'') => inner,
        _ => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A quoted value with blanks in it is one word, in either quotes.
    #[test]
    fn a_quoted_value_is_one_word_blanks_and_all() {
        for (text, word) in [
            (&b"note=\"a b\" x=1"[..], &b"note=\"a b\""[..]),
            (
                b"args='{\"order\": \"A-1\"}' x=1",
                b"args='{\"order\": \"A-1\"}'",
            ),
            (b"a=b c=d", b"a=b"),
        ] {
            assert_eq!(next_token_word(text).map(|(w, _)| w), Some(word));
        }
        assert_eq!(next_token_word(b"note='open"), None);
        assert!(all_tokens(
            b"refund_id='re_1' reason='requested by customer'"
        ));
    }

    /// Go's `%q`, Ruby's `inspect` and Python's `repr` quote a value; a quote inside it
    /// leaves it as written.
    #[test]
    fn token_values_are_read_without_their_quotes() {
        for (field, value) in [
            (&b"key=\"k_1\""[..], &b"k_1"[..]),
            (b"refund_id='re_0001'", b"re_0001"),
            (b"key=\"\"", b""),
            (b"key=''", b""),
            (b"note='it's'", b"'it's'"),
            (b"key=None", b"None"),
        ] {
            assert_eq!(
                token(field),
                Some((
                    &field[..field.iter().position(|&b| b == b'=').unwrap()],
                    value
                ))
            );
        }
    }

    #[test]
    fn gaps_found_a_word_at_a_time_are_where_a_byte_loop_finds_them() {
        let naive = |msg: &[u8], from: usize| {
            (from..msg.len())
                .find(|&j| msg[j] == b'\t' || (msg[j] == b' ' && msg.get(j + 1) == Some(&b' ')))
        };
        let alphabet = [b' ', b'\t', b'a', 0xa0];
        let check = |msg: &[u8]| {
            for from in 0..=msg.len() {
                assert_eq!(next_gap(msg, from), naive(msg, from), "{msg:?} from {from}");
            }
        };
        // Every string of up to 9 bytes over space, tab, `a` and a high byte...
        for len in 0..=9u32 {
            for code in 0..4usize.pow(len) {
                let msg: Vec<u8> = (0..len)
                    .map(|k| alphabet[code / 4usize.pow(k) % 4])
                    .collect();
                check(&msg);
            }
        }
        // ...and longer ones, several words long, from a fixed pseudo-random sequence.
        let mut x: u64 = 7;
        for _ in 0..3000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (x >> 58) as usize + 9;
            let msg: Vec<u8> = (0..len)
                .map(|k| {
                    let r = x.rotate_left(k as u32 * 7) ^ (k as u64).wrapping_mul(0x9e37_79b9);
                    // Mostly letters, so that gaps are rare enough to reach later words.
                    if r.is_multiple_of(5) {
                        alphabet[(r >> 8) as usize % 2]
                    } else {
                        b'a'
                    }
                })
                .collect();
            check(&msg);
        }
    }
}
