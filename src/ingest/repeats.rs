//! Texts that recur line after line, shared instead of copied.
//!
//! A service's URLs repeat on every attempt of a month (`https://payments.internal/v1/refunds`
//! on a third of a million lines), and each was its own allocation among the parsed events
//! until correlation shared them (`correlate::ready`'s table, which hashes every text). A
//! [`Text`] clone only counts a reference, so a parser that hands out the same text again
//! keeps one copy; comparing with the last few costs less than hashing on the parse's path.

use crate::event::Text;

/// The last few distinct texts longer than a [`Text`] holds inline.
#[derive(Debug, Default)]
pub struct Repeats {
    recent: [Option<Text>; Repeats::KEPT],
    /// The slot the next new text replaces (round robin).
    next: usize,
}

impl Repeats {
    /// Enough for the endpoints a run's steps call in turn; URLs with ids in their path
    /// never repeat and only pass through.
    const KEPT: usize = 4;
    /// Shorter texts are stored inside the `Text` itself: there is nothing to share.
    const INLINE: usize = 16;

    /// `bytes` as text (invalid UTF-8 replaced), shared with an earlier equal text if one
    /// of the last few was.
    pub fn text(&mut self, bytes: &[u8], make: impl FnOnce(&[u8]) -> Text) -> Text {
        if bytes.len() <= Self::INLINE {
            return make(bytes);
        }
        if let Some(seen) = self.recent.iter().flatten().find(|t| t.as_bytes() == bytes) {
            return seen.clone();
        }
        let text = make(bytes);
        self.recent[self.next] = Some(text.clone());
        self.next = (self.next + 1) % Self::KEPT;
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn make(b: &[u8]) -> Text {
        Text::from(std::str::from_utf8(b).unwrap())
    }

    const URL: &[u8] = b"https://payments.internal/v1/refunds";

    #[test]
    fn a_repeated_text_is_the_same_allocation() {
        let mut repeats = Repeats::default();
        let first = repeats.text(URL, make);
        let again = repeats.text(URL, make);
        assert_eq!(again, "https://payments.internal/v1/refunds");
        assert_eq!(first.as_ptr(), again.as_ptr());
    }

    #[test]
    fn texts_are_kept_apart_and_the_oldest_is_forgotten() {
        let mut repeats = Repeats::default();
        let urls: Vec<String> = (0..=Repeats::KEPT)
            .map(|i| format!("https://svc.internal/v1/endpoint-{i}"))
            .collect();
        let first: Vec<Text> = urls
            .iter()
            .map(|u| repeats.text(u.as_bytes(), make))
            .collect();
        for (url, text) in urls.iter().zip(&first) {
            assert_eq!(text, url.as_str());
        }
        // The newest KEPT are shared; the first was replaced by the last.
        let last = repeats.text(urls[Repeats::KEPT].as_bytes(), make);
        assert_eq!(last.as_ptr(), first[Repeats::KEPT].as_ptr());
        let oldest = repeats.text(urls[0].as_bytes(), make);
        assert_eq!(oldest, urls[0].as_str());
        assert_ne!(oldest.as_ptr(), first[0].as_ptr());
    }

    #[test]
    fn short_texts_are_made_each_time() {
        let mut repeats = Repeats::default();
        let mut made = 0;
        for _ in 0..3 {
            let t = repeats.text(b"/v1/refunds", |b| {
                made += 1;
                make(b)
            });
            assert_eq!(t, "/v1/refunds");
        }
        assert_eq!(made, 3);
    }
}
