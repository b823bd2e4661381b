//! Words a query can drop before BM25 ranks: the function words of a
//! language, which say how a question is asked, not what it is about.
//!
//! An agent asks its memory in questions ("what is the user's job?",
//! "how should I format answers for the user?"), and its stores are small:
//! in forty facts "the", "for" and "is" are rare enough for BM25 to rank a
//! fact that shares only them above the one that answers. The index keeps
//! every word (a stored text is never changed by this, and an entity's name
//! is still matched whole); only a query loses these, and a query made of
//! nothing else keeps them all (`terms::Analyser::query`).

use tantivy::tokenizer::{Language, LowerCaser, RawTokenizer, StopWordFilter, TextAnalyzer};

use super::analyzer;
use crate::error::Result;

/// English function words: articles and determiners, pronouns, question
/// words, auxiliaries, prepositions and conjunctions, and the pieces a
/// contraction or possessive leaves once the tokenizer splits it at the
/// apostrophe ("user's" gives `s`, "doesn't" gives `doesn` and `t`).
/// Lower case and unstemmed: the filter runs before the stemmer. "may" is
/// not one: it is a month, and every turn's key holds its day. Written for
/// questions asked of a memory, so it is longer than a search engine's
/// list of a few dozen and shorter than a linguist's.
#[rustfmt::skip]
const ENGLISH: &[&str] = &[
    // articles, determiners, quantifiers
    "a", "an", "the", "this", "that", "these", "those", "some", "any", "each", "every", "all",
    "both", "either", "neither", "such", "other", "own", "same", "few", "more", "most", "much",
    "many", "no", "not", "nor", "only", "very", "too", "so", "just", "than", "also",
    // pronouns
    "i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves", "you", "your",
    "yours", "yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers",
    "herself", "it", "its", "itself", "they", "them", "their", "theirs", "themselves",
    // question words
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how",
    // auxiliaries
    "am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "having",
    "do", "does", "did", "doing", "will", "would", "shall", "should", "can", "could", "might",
    "must",
    // prepositions
    "of", "in", "on", "at", "to", "for", "from", "by", "with", "about", "against", "between",
    "into", "through", "during", "before", "after", "above", "below", "up", "down", "out",
    "off", "over", "under", "again", "further", "onto", "upon", "within", "without",
    // conjunctions and adverbs of the sentence
    "and", "but", "or", "if", "because", "as", "until", "while", "then", "once", "here",
    "there", "now", "ever",
    // what a split contraction or possessive leaves
    "s", "t", "d", "ll", "m", "re", "ve", "don", "doesn", "didn", "isn", "aren", "wasn",
    "weren", "hasn", "haven", "hadn", "won", "wouldn", "shouldn", "couldn", "mustn", "shan",
];

/// The stop words of the configured analyser: none for `"simple"` and for a
/// language without a list.
#[derive(Clone)]
pub struct StopWords(Option<TextAnalyzer>);

impl StopWords {
    pub fn of(analyzer_name: &str) -> Result<Self> {
        let filter = analyzer::language_of(analyzer_name)?.and_then(filter);
        Ok(StopWords(filter.map(|f| {
            TextAnalyzer::builder(RawTokenizer::default())
                .filter(LowerCaser)
                .filter(f)
                .build()
        })))
    }

    /// Whether `word` (any case, unstemmed) is a stop word.
    pub fn contains(&mut self, word: &str) -> bool {
        // The filter drops a stop word: its stream of one word is empty.
        self.0
            .as_mut()
            .is_some_and(|a| !a.token_stream(word).advance())
    }
}

/// The stop-word filter of a stemming language, or `None` where memcore has
/// no list (the query then keeps every word). English is memcore's own list
/// above; the others are the Snowball project's lists that tantivy carries.
fn filter(language: Language) -> Option<StopWordFilter> {
    match language {
        Language::English => Some(StopWordFilter::remove(
            ENGLISH.iter().map(|w| (*w).to_owned()),
        )),
        other => StopWordFilter::new(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_list_is_lower_case_and_unique() {
        let mut seen = std::collections::HashSet::new();
        for word in ENGLISH {
            assert_eq!(*word, word.to_lowercase());
            assert!(seen.insert(*word), "{word} twice");
        }
    }

    #[test]
    fn a_language_without_a_list_has_no_stop_words() {
        let mut english = StopWords::of("english").unwrap();
        assert!(english.contains("The") && english.contains("s"));
        assert!(!english.contains("May") && !english.contains("user"));
        assert!(StopWords::of("french").unwrap().contains("le"));
        assert!(!StopWords::of("simple").unwrap().contains("the"));
        assert!(!StopWords::of("tamil").unwrap().contains("the"));
        assert!(StopWords::of("klingon").is_err());
    }
}
