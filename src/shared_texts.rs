//! Texts that recur, held once and handed out again: a [`Text`] clone only counts a
//! reference. A month's attempts name a few URLs hundreds of thousands of times; the parser
//! shares the ones it reads, and correlation makes the model's own copies the same way (a
//! table each, so that the model keeps none of the parser's memory).

use crate::event::Text;
use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;

/// The texts seen so far, forgotten when too many (URLs with ids in their path), so never
/// unbounded.
#[derive(Debug, Default)]
pub struct SharedTexts(HashTable<Text>);

impl SharedTexts {
    pub const MAX: usize = 4096;
    /// Shorter texts are stored inside the `Text` itself: there is nothing to share.
    const INLINE: usize = 16;

    /// The earlier text equal to `text`, or a new one, remembered.
    pub fn get(&mut self, text: &str) -> Text {
        if text.len() <= Self::INLINE {
            return Text::from(text);
        }
        let hash = FxBuildHasher.hash_one(text);
        if let Some(known) = self.0.find(hash, |k| k.as_str() == text) {
            return known.clone();
        }
        if self.0.len() >= Self::MAX {
            self.0.clear();
        }
        let made = Text::from(text);
        self.0
            .insert_unique(hash, made.clone(), |k| FxBuildHasher.hash_one(k.as_str()));
        made
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://payments.internal/v1/refunds";

    #[test]
    fn a_repeated_text_is_the_same_allocation() {
        let mut texts = SharedTexts::default();
        let first = texts.get(URL);
        let again = texts.get(URL);
        assert_eq!((first.as_str(), again.as_str()), (URL, URL));
        assert_eq!(first.as_ptr(), again.as_ptr(), "one buffer");
    }

    #[test]
    fn texts_are_kept_apart_and_many_do_not_pile_up() {
        let mut texts = SharedTexts::default();
        let urls: Vec<String> = (0..2 * SharedTexts::MAX)
            .map(|i| format!("https://svc.internal/v1/endpoint-{i}"))
            .collect();
        let first: Vec<Text> = urls.iter().map(|u| texts.get(u)).collect();
        for (url, text) in urls.iter().zip(&first) {
            assert_eq!(text, url.as_str());
        }
        assert!(texts.0.len() <= SharedTexts::MAX);
        // The newest are shared; the oldest were forgotten and are made again.
        let last = texts.get(urls.last().unwrap());
        assert_eq!(last.as_ptr(), first.last().unwrap().as_ptr());
        let oldest = texts.get(&urls[0]);
        assert_eq!(oldest, urls[0].as_str());
        assert_ne!(oldest.as_ptr(), first[0].as_ptr());
    }

    #[test]
    fn short_texts_are_not_held() {
        let mut texts = SharedTexts::default();
        for _ in 0..3 {
            assert_eq!(texts.get("/v1/refunds"), "/v1/refunds");
        }
        assert_eq!(texts.get("POST"), "POST");
        assert_eq!(texts.0.len(), 0);
    }
}
