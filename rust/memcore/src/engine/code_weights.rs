//! search_code's signal weights, and the names whose definitions it ranks
//! first, by the shape of the query.
//!
//! Code chunks have no graph signal, so only BM25's share of the weight
//! matters, and it depends on what the agent asks. A description ("read a
//! file line by line") is matched by meaning: on CoSQA's 500 descriptions
//! every BM25 share above 0 lowered R@1 and MRR once the vector carries the
//! hubness penalty (`crate::vector::HUB_KIND`); chosen by 2-fold
//! cross-validation (`python -m benches.quality.cosqa_tune`; section 13 of
//! `benches/results/quality-experiments.md`). A query that names code
//! (`getUserName`, `parse_args`, `os.path.join`, `render()`) gets the chunks
//! that define those names first ([`defined_names`]), then is matched by its
//! words alone: what follows the definitions is the code that uses the name
//! and names that are no chunk of their own (constants), and on both, in the
//! Python standard library, every vector share lowered MRR; both folds of
//! `python -m benches.quality.identifier_tune` pick BM25 alone (section 15).

use super::search::RecallOptions;
use crate::fusion::{FusionMode, Weights};

/// Weights for a query that describes code: the vector ranks alone (BM25
/// still ranks when there is no query vector; see `crate::fusion`).
pub const DESCRIPTION_WEIGHTS: Weights = Weights {
    vector: 1.0,
    bm25: 0.0,
    ppr: 0.0,
};

/// Weights for a query that names an identifier: BM25 ranks alone (the
/// vector still ranks when BM25 matches nothing; see `crate::fusion`).
pub const IDENTIFIER_WEIGHTS: Weights = Weights {
    vector: 0.0,
    bm25: 1.0,
    ppr: 0.0,
};

/// How search_code fuses its signals for `query`: z-scores weighted by
/// [`IDENTIFIER_WEIGHTS`] when it names an identifier, else by
/// [`DESCRIPTION_WEIGHTS`].
pub fn code_recall(query: &str) -> RecallOptions {
    let weights = if names_identifier(query) {
        IDENTIFIER_WEIGHTS
    } else {
        DESCRIPTION_WEIGHTS
    };
    RecallOptions {
        weights,
        mode: FusionMode::ZScore,
        // Code chunks have no thread prior (it reads memories' threads).
        thread_prior: 0.0,
        max_per_thread: None,
        // Code asks nothing (its chunks' share is 0): skip the lookups.
        question_penalty: 0.0,
    }
}

/// Whether some word of `query` is shaped like an identifier rather than
/// prose: snake_case (`parse_args`, `__init__`), camelCase or PascalCase
/// (`getUserName`, `HashMap`), a path (`os.path`, `Vec::new`) or a call
/// (`render()`). Plain words, acronyms (`JSON`) and version numbers
/// (`python 3.11`) are prose.
pub fn names_identifier(query: &str) -> bool {
    identifier_words(query).next().is_some()
}

/// At most this many names are looked up per query.
const MAX_NAMES: usize = 8;

/// The names a definition of what `query` names would carry: each
/// identifier-shaped word as written, without a call's arguments, and the
/// last part of a path (`os.path.join` -> `os.path.join`, `join`;
/// `Vec::new` -> `Vec.new`, `new`; `render()` -> `render`), and a query of
/// one plain word (`setlocale`) as it is: alone, a word is looked up as a
/// name, while in a sentence only identifier-shaped words are (`read a file
/// line by line` must not rank functions named `read` or `line` first).
/// search_code ranks the chunks so named first: an agent that asks for a
/// name mostly wants its definition, which BM25 and the vector alone rank
/// below the places that use the name (`benches/quality/definitions.py`).
pub fn defined_names(query: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut words = query.split_whitespace();
    if let (Some(word), None) = (words.next(), words.next()) {
        let word = word.trim_matches(PROSE_PUNCTUATION);
        let name_chars = word.chars().all(|c| c.is_alphanumeric() || c == '_');
        if name_chars && word.chars().any(char::is_alphabetic) {
            names.push(word.to_owned());
        }
    }
    for word in identifier_words(query) {
        let base = word.split('(').next().unwrap_or_default();
        let last = base.rsplit('.').next().unwrap_or_default();
        for name in [base, last] {
            if !name.is_empty() && !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
        }
    }
    names.truncate(MAX_NAMES);
    names
}

/// The identifier-shaped words of `query`, trimmed of prose punctuation,
/// `::` written as `.`.
fn identifier_words(query: &str) -> impl Iterator<Item = String> + '_ {
    query.split_whitespace().filter_map(|word| {
        let word = word.trim_matches(PROSE_PUNCTUATION).replace("::", ".");
        let chars: Vec<char> = word.chars().collect();
        let snake = word.contains('_') && chars.iter().any(|c| c.is_alphabetic());
        let camel = chars
            .windows(2)
            .any(|w| w[0].is_lowercase() && w[1].is_uppercase());
        let call = chars
            .windows(2)
            .any(|w| w[0].is_alphanumeric() && w[1] == '(');
        let path = chars
            .windows(3)
            .any(|w| w[0].is_alphanumeric() && w[1] == '.' && w[2].is_alphabetic());
        (snake || camel || call || path).then_some(word)
    })
}

/// What a word of prose may end or start with.
const PROSE_PUNCTUATION: &[char] = &['"', '\'', '`', ',', '.', ';', ':', '!', '?'];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_prose() {
        for q in [
            "python read a file line by line",
            "how to convert a JSON string to a dict",
            "python 3.11 sort list of tuples by second element",
            "what does the 'yield' keyword do?",
            "",
        ] {
            assert!(!names_identifier(q), "{q}");
            assert_eq!(code_recall(q).weights, DESCRIPTION_WEIGHTS);
        }
    }

    #[test]
    fn identifiers_are_recognised_in_any_common_shape() {
        for q in [
            "getUserName",
            "where is parse_args called",
            "__init__",
            "HashMap entry api",
            "os.path.join with two dirs",
            "Vec::new",
            "render() in the page view",
            "\"load_config\"?",
        ] {
            assert!(names_identifier(q), "{q}");
            assert_eq!(code_recall(q).weights, IDENTIFIER_WEIGHTS);
        }
    }

    #[test]
    fn defined_names_are_the_words_a_definition_carries() {
        let names = |q: &str| defined_names(q);
        assert_eq!(names("getUserName"), ["getUserName"]);
        assert_eq!(names("where is parse_args called"), ["parse_args"]);
        assert_eq!(
            names("os.path.join with two dirs"),
            ["os.path.join", "join"]
        );
        assert_eq!(names("Vec::new"), ["Vec.new", "new"]);
        assert_eq!(
            names("render(page) and `load_config`?"),
            ["render", "load_config"]
        );
        assert_eq!(names("__init__ __init__"), ["__init__"]);
        assert!(names("read a file line by line").is_empty());
        assert_eq!(names("setlocale"), ["setlocale"]);
        assert_eq!(names("`Block`?"), ["Block"]);
        assert!(names("3.11").is_empty() && names("C++").is_empty());
        let many = (0..20).map(|i| format!("name_{i}")).collect::<Vec<_>>();
        assert_eq!(names(&many.join(" ")).len(), MAX_NAMES);
    }
}
