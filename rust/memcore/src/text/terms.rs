//! What a document and a query are made of for BM25: their words and, for
//! prose, the pairs of adjacent content words.
//!
//! A pair is a term of its own (`"sister wed"` for "her sister's wedding"),
//! so a document saying the question's words side by side outranks one that
//! holds them scattered: term proximity, in the spirit of Metzler and Croft's
//! sequential dependence model (2005), at the price of a posting list per
//! pair rather than positions. Pairs are ordered, as in a phrase, and skip
//! stop words ("her sister's wedding" pairs `sister` with `wed`). Measured on LoCoMo
//! (`benches/results/quality-experiments.md`, section 18); code keeps words
//! only, since identifiers already index whole (`analyzer`). Chinese,
//! Japanese and Korean text indexes as character pairs, which hold their
//! own proximity: those tokens are never paired.

use rustc_hash::FxHashMap as HashMap;
use tantivy::tokenizer::{TextAnalyzer, TokenStream};

use super::analyzer;
use super::stop_words::StopWords;
use crate::error::Result;

/// Joins the two words of a pair term: never inside a word (the tokenizer
/// splits at anything but letters, digits and underscores).
const PAIR_JOINER: char = ' ';

/// How much a query's pair counts against one of its words. Chosen by
/// leave-one-conversation-out on LoCoMo (section 18): both folds gain with
/// it, and it is small enough that words still decide which documents match.
pub const PAIR_BOOST: f32 = 0.25;

/// A query's terms: content words (all words when it has nothing else) and
/// the pairs of adjacent content words.
#[derive(Debug, Default)]
pub struct QueryTerms {
    pub words: Vec<String>,
    pub pairs: Vec<String>,
}

/// The configured analyser and its language's stop words.
#[derive(Clone)]
pub struct Analyser {
    /// Documents' words ([`analyzer::build_document`]).
    words: TextAnalyzer,
    /// Queries' words ([`analyzer::build`]).
    query_words: TextAnalyzer,
    stop: StopWords,
}

impl Analyser {
    /// The analyser named in configuration.
    pub fn new(name: &str) -> Result<Self> {
        Ok(Analyser {
            words: analyzer::build_document(name)?,
            query_words: analyzer::build(name)?,
            stop: StopWords::of(name)?,
        })
    }

    /// The tantivy analyser of documents' words (registered with the index).
    pub fn words_analyzer(&self) -> &TextAnalyzer {
        &self.words
    }

    /// Every analysed term of a document's `text`, in order (stop words
    /// included).
    pub fn words(&mut self, text: &str) -> Vec<String> {
        analyzer::terms(&mut self.words, text)
    }

    /// Every analysed term of a query's `text`, in order (stop words
    /// included).
    pub fn query_words(&mut self, text: &str) -> Vec<String> {
        analyzer::terms(&mut self.query_words, text)
    }

    /// A prose document's terms, each passed to `emit`: per line, its words
    /// (stop words included: a stored text is never cut) and its pairs. A
    /// line equal to an earlier one (a turn's own text counts several times
    /// in its key) repeats that line's terms without analysing again.
    pub fn document(&mut self, text: &str, mut emit: impl FnMut(&str)) {
        let mut seen: HashMap<&str, Vec<String>> = HashMap::default();
        for line in text.split('\n') {
            let terms = seen.entry(line).or_insert_with(|| {
                let mut terms = Vec::new();
                self.line(line, Side::Document, |term| match term {
                    Term::Word(word, _) | Term::Pair(word) => terms.push(word),
                });
                terms
            });
            for term in terms.iter() {
                emit(term);
            }
        }
    }

    /// A query's content words and pairs, sorted and unique; a query of
    /// stop words only ("the who") keeps its words and has no pairs.
    pub fn query(&mut self, text: &str) -> QueryTerms {
        let mut query = QueryTerms::default();
        let mut stop_words = Vec::new();
        for line in text.split('\n') {
            self.line(line, Side::Query, |term| match term {
                Term::Word(word, Stop::No) => query.words.push(word),
                Term::Word(word, Stop::Yes) => stop_words.push(word),
                Term::Pair(pair) => query.pairs.push(pair),
            });
        }
        if query.words.is_empty() {
            query.words = stop_words;
        }
        for terms in [&mut query.words, &mut query.pairs] {
            terms.sort_unstable();
            terms.dedup();
        }
        query
    }

    /// One line's words, in order; a content word comes after the pair it
    /// closes with the content word before it (stop words between them are
    /// skipped).
    fn line(&mut self, line: &str, side: Side, mut emit: impl FnMut(Term)) {
        let mut previous: Option<String> = None;
        let analyzer = match side {
            Side::Document => &mut self.words,
            Side::Query => &mut self.query_words,
        };
        let mut stream = analyzer.token_stream(line);
        while let Some(token) = stream.next() {
            // The stop list holds unstemmed words: look the surface form up.
            let surface = &line[token.offset_from..token.offset_to];
            if self.stop.contains(surface) {
                emit(Term::Word(token.text.clone(), Stop::Yes));
                continue;
            }
            let word = token.text.clone();
            if surface.starts_with(analyzer::is_cjk) {
                // A CJK token is a pair of characters already, or one
                // (`analyzer`): pairing them again would add terms per
                // character for the same proximity, so they pair with
                // nothing and no pair spans them.
                previous = None;
                emit(Term::Word(word, Stop::No));
                continue;
            }
            if let Some(before) = previous.replace(word.clone()) {
                emit(Term::Pair(pair(&before, &word)));
            }
            emit(Term::Word(word, Stop::No));
        }
    }
}

/// Which analysis a line gets.
#[derive(Debug, Clone, Copy)]
enum Side {
    Document,
    Query,
}

/// Whether a word is one of its language's stop words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Yes,
    No,
}

/// A term of one line.
enum Term {
    Word(String, Stop),
    Pair(String),
}

fn pair(first: &str, second: &str) -> String {
    let mut out = String::with_capacity(first.len() + 1 + second.len());
    out.push_str(first);
    out.push(PAIR_JOINER);
    out.push_str(second);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(name: &str, text: &str) -> Vec<String> {
        let mut terms = Vec::new();
        Analyser::new(name)
            .unwrap()
            .document(text, |t| terms.push(t.to_owned()));
        terms
    }

    fn query(name: &str, text: &str) -> (Vec<String>, Vec<String>) {
        let q = Analyser::new(name).unwrap().query(text);
        (q.words, q.pairs)
    }

    #[test]
    fn a_document_keeps_every_word_and_pairs_its_content_words() {
        assert_eq!(
            document("english", "Her sister's wedding"),
            vec!["her", "sister", "s", "sister wed", "wed"]
        );
        // No pair across lines; a repeated line repeats its terms.
        assert_eq!(
            document("english", "red car\nblue sky\nred car"),
            [
                "red", "red car", "car", "blue", "blue sky", "sky", "red", "red car", "car"
            ]
        );
    }

    #[test]
    fn cjk_pairs_are_words_and_never_paired_again() {
        // A run of n characters gives its n characters and n - 1 pairs, and
        // no pair terms.
        assert_eq!(
            document("english", "住在上海"),
            vec!["住", "住在", "在", "在上", "上", "上海", "海"]
        );
        // No pair spans CJK text; words on one side still pair.
        assert_eq!(
            document("english", "green tea 绿茶 daily"),
            vec!["green", "green tea", "tea", "绿", "绿茶", "茶", "daili"]
        );
        assert_eq!(query("english", "上海"), (vec!["上海".into()], vec![]));
        assert_eq!(
            query("english", "東京タワー"),
            (
                vec!["タワ", "ワー", "京タ", "東京"]
                    .into_iter()
                    .map(String::from)
                    .collect(),
                vec![]
            )
        );
        // A query's characters are terms only standing alone.
        assert_eq!(query("english", "猫"), (vec!["猫".into()], vec![]));
        // Accent-free and accented queries ask for the same terms.
        assert_eq!(query("english", "Munchen"), query("english", "München"));
    }

    #[test]
    fn a_query_drops_stop_words_and_pairs_what_is_left() {
        let question = "What is the user's favourite_colour?";
        assert_eq!(
            query("english", question),
            (
                vec!["colour", "favourit", "favourite_colour", "user"]
                    .into_iter()
                    .map(String::from)
                    .collect(),
                vec![
                    "favourit colour",
                    "favourite_colour favourit",
                    "user favourite_colour"
                ]
                .into_iter()
                .map(String::from)
                .collect()
            )
        );
        // A month is not an auxiliary here: turn keys hold their day.
        assert_eq!(query("english", "hiking in May").0, vec!["hike", "may"]);
        assert_eq!(query("english", "hiking in May").1, vec!["hike may"]);
        // Another language's list; "simple" names no language and keeps all.
        assert_eq!(
            query("french", "le chat de la voisine").0,
            vec!["chat", "voisin"]
        );
        assert_eq!(query("simple", "the cat").0, vec!["cat", "the"]);
        // Only stop words: all of them, and no pairs.
        assert_eq!(
            query("english", "The Who"),
            (vec!["the".into(), "who".into()], vec![])
        );
        assert_eq!(
            Analyser::new("klingon").err().unwrap().code(),
            "INVALID_PARAMETER"
        );
    }
}
