//! An effect a service logs as a sentence, one blank between words: `Refund re_0001
//! created for order A-88214: 45.00 GBP`, `Created refund re_0001 for order A-88214 (45.00
//! GBP)`, `Refund created: re_0001 order=A-88214 amount=45.00 currency=GBP`. Each was an
//! ignored line, so a payments log written so gave no effect and a duplicate went unseen.
//! The sentence is rewritten as the effect line the parser reads (`refund re_0001  order
//! A-88214  45.00 GBP  created`), only when it names a known kind, an id with a digit,
//! a word saying what happened (`created`, `failed`...) and an order: a sentence about a
//! refund (`Refund requested for order A-1`, `refund received ...`) stays no effect.

use crate::event::is_event_word;

/// Words a sentence puts between an effect's parts; passed over.
const FILLER: [&[u8]; 7] = [
    b"for",
    b"of",
    b"on",
    b"to",
    b"with",
    b"amount",
    b"idempotency",
];

/// What a sentence about an effect says.
pub(crate) struct Sentence<'a> {
    /// The kind, in lower case (`refund`).
    pub kind: Vec<u8>,
    pub id: &'a [u8],
    pub order: Option<&'a [u8]>,
    /// As written, with its currency (`45.00 GBP`, `£45.00`).
    pub amount: Option<Vec<u8>>,
    /// What happened, in lower case (`created`).
    pub event: Vec<u8>,
    /// The idempotency key after `key` (`(key: k_1)`, `idempotency key k_1`), as written.
    pub key: Option<&'a [u8]>,
    /// `key=value` words, as written.
    pub tokens: Vec<&'a [u8]>,
}

/// The effect line `sentence` stands for, fields two blanks apart, or `None`.
pub(super) fn effect_of_sentence(sentence: &[u8]) -> Option<Vec<u8>> {
    let Sentence {
        kind,
        id,
        order,
        amount,
        event,
        key,
        tokens,
    } = read_sentence(sentence)?;
    let mut line = [&kind[..], b" ", id].concat();
    if let Some(o) = order {
        line.extend_from_slice(b"  order ");
        line.extend_from_slice(o);
    }
    if let Some(a) = amount {
        line.extend_from_slice(b"  ");
        line.extend_from_slice(&a);
    }
    line.extend_from_slice(b"  ");
    line.extend_from_slice(&event);
    for t in tokens {
        line.extend_from_slice(b"  ");
        line.extend_from_slice(t);
    }
    if let Some(k) = key {
        line.extend_from_slice(b"  idempotency_key=");
        line.extend_from_slice(k);
    }
    Some(line)
}

/// The effect a sentence names, when it names a known kind, an id with a digit, a word
/// saying what happened and an order, and nothing but a few filler words besides.
pub(crate) fn read_sentence(sentence: &[u8]) -> Option<Sentence<'_>> {
    let read = read_words(sentence)?;
    let has_order = read.order.is_some() || read.tokens.iter().any(|t| t.starts_with(b"order"));
    has_order.then_some(read)
}

/// [`read_sentence`] without its order: a sentence a client may write of the effect its
/// answer named (`refund re_1 created`: [`super::told_effect`]).
pub(super) fn read_words(sentence: &[u8]) -> Option<Sentence<'_>> {
    let words = || {
        sentence
            .split(|c| c.is_ascii_whitespace())
            .map(bare)
            .filter(|w| !w.is_empty())
    };
    // The kind: the first word, or the second after a verb (`Created refund ...`). Looked
    // for before the words are collected: nearly every line that gets here names none.
    let at = words().take(2).position(is_kind_word)?;
    let words: Vec<&[u8]> = words().collect();
    let lower = |w: &[u8]| w.to_ascii_lowercase();
    let kind = lower(words[at]);
    let mut event: Option<Vec<u8>> = (at == 1)
        .then(|| lower(words[0]))
        .filter(|w| is_event_word(w));
    let mut id: Option<&[u8]> = None;
    let mut order: Option<&[u8]> = None;
    let mut amount: Option<Vec<u8>> = None;
    let mut key: Option<&[u8]> = None;
    let mut tokens: Vec<&[u8]> = Vec::new();
    let mut i = at + 1;
    while i < words.len() {
        let w = words[i];
        let next = words.get(i + 1).copied();
        if w.contains(&b'=') {
            tokens.push(w);
        } else if w.eq_ignore_ascii_case(b"order") && next.is_some() {
            order = next;
            i += 1;
        } else if w.eq_ignore_ascii_case(b"key") && next.is_some() {
            key = next;
            i += 1;
        } else if is_event_word(&lower(w)) && event.is_none() {
            event = Some(lower(w));
        } else if id.is_none()
            && order.is_none()
            && amount.is_none()
            && w.iter().any(u8::is_ascii_digit)
            && !is_number(w)
        {
            id = Some(w);
        } else if is_number(w) && next.is_some_and(is_currency_code) {
            amount = Some([w, b" ", next.unwrap_or_default()].concat());
            i += 1;
        } else if amount.is_none()
            && crate::money::parse_written(&String::from_utf8_lossy(w)).is_some()
        {
            amount = Some(w.to_vec());
        } else if !FILLER.iter().any(|f| w.eq_ignore_ascii_case(f)) && !is_number(w) {
            // Another word: a sentence this reading does not know; no effect.
            return None;
        }
        i += 1;
    }
    Some(Sentence {
        kind,
        id: id?,
        order,
        amount,
        event: event?,
        key,
        tokens,
    })
}

/// Whether `w`, in lower case, is an effect kind ([`crate::event::is_effect_kind`]; the
/// kinds are ASCII, so a word of other bytes is none).
fn is_kind_word(w: &[u8]) -> bool {
    crate::event::EFFECT_KINDS
        .iter()
        .any(|k| w.eq_ignore_ascii_case(k.as_bytes()))
}

/// A word without the punctuation a sentence puts around it (`A-88214:`, `(45.00`, `GBP)`).
fn bare(w: &[u8]) -> &[u8] {
    let w = w.strip_prefix(b"(").unwrap_or(w);
    let end = w
        .iter()
        .rposition(|c| !matches!(c, b':' | b',' | b';' | b')' | b'.'))
        .map_or(0, |p| p + 1);
    &w[..end]
}

fn is_number(w: &[u8]) -> bool {
    !w.is_empty() && w.iter().all(|c| c.is_ascii_digit() || *c == b'.') && w[0].is_ascii_digit()
}

fn is_currency_code(w: &[u8]) -> bool {
    w.len() == 3 && w.iter().all(u8::is_ascii_uppercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(s: &str) -> Option<String> {
        effect_of_sentence(s.as_bytes()).map(|l| String::from_utf8(l).unwrap())
    }

    #[test]
    fn sentences_a_service_writes_become_its_effect_line() {
        let line = "refund re_0001  order A-88214  45.00 GBP  created";
        assert_eq!(
            read("Refund re_0001 created for order A-88214: 45.00 GBP").as_deref(),
            Some(line)
        );
        assert_eq!(
            read("Created refund re_0001 for order A-88214 (45.00 GBP)").as_deref(),
            Some(line)
        );
        assert_eq!(
            read("Refund re_0001 created for order A-88214, amount 45.00 GBP").as_deref(),
            Some(line)
        );
        assert_eq!(
            read("Refund created: re_0001 order=A-88214 amount=45.00 currency=GBP").as_deref(),
            Some("refund re_0001  created  order=A-88214  amount=45.00  currency=GBP")
        );
        assert_eq!(
            read("Refund re_9 failed for order A-1").as_deref(),
            Some("refund re_9  order A-1  failed")
        );
        // Ruby's `"Refund #{id} created for order #{order}: #{amount} #{currency} (key: ...)"`.
        assert_eq!(
            read("Refund re_0001 created for order A-1: 4500 GBP (key: 98d6d6ac-1206)").as_deref(),
            Some("refund re_0001  order A-1  4500 GBP  created  idempotency_key=98d6d6ac-1206")
        );
    }

    #[test]
    fn sentences_about_a_refund_are_no_effect() {
        for s in [
            "Refund requested for order A-1",
            "refund received for order A-1: 45.00 GBP",
            "Refund re_0001 created",
            "Refund created for order A-88214",
            "Refund re_0001 created by the support team for order A-1",
            "Customer asked for a refund of order A-1 created 3 days ago",
        ] {
            assert_eq!(read(s), None, "{s}");
        }
    }
}
