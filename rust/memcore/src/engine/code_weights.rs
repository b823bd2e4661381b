//! search_code's signal weights, by the shape of the query.
//!
//! Code chunks have no graph signal, so only BM25's share of the weight
//! matters, and it depends on what the agent asks. A description ("read a
//! file line by line") is matched by meaning: on CoSQA's 500 descriptions
//! every BM25 share above 0 lowered R@1 and MRR once the vector carries the
//! hubness penalty (`crate::vector::HUB_KIND`). A query that names code
//! (`getUserName`, `parse_args`, `os.path.join`, `render()`) is matched by
//! its words: on 500 queries that are a function's compound name, BM25 lifts
//! MRR by two points. Both shares were chosen by 2-fold cross-validation
//! (`python -m benches.quality.cosqa_tune`; folds and grid in
//! `benches/results/quality-experiments.md`, section 13).

use super::search::RecallOptions;
use crate::fusion::{FusionMode, Weights};

/// Weights for a query that describes code: the vector ranks alone (BM25
/// still ranks when there is no query vector; see `crate::fusion`).
pub const DESCRIPTION_WEIGHTS: Weights = Weights {
    vector: 1.0,
    bm25: 0.0,
    ppr: 0.0,
};

/// Weights for a query that names an identifier.
pub const IDENTIFIER_WEIGHTS: Weights = Weights {
    vector: 0.85,
    bm25: 0.15,
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
    }
}

/// Whether some word of `query` is shaped like an identifier rather than
/// prose: snake_case (`parse_args`, `__init__`), camelCase or PascalCase
/// (`getUserName`, `HashMap`), a path (`os.path`, `Vec::new`) or a call
/// (`render()`). Plain words, acronyms (`JSON`) and version numbers
/// (`python 3.11`) are prose.
pub fn names_identifier(query: &str) -> bool {
    query.split_whitespace().any(|word| {
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
        snake || camel || call || path
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
}
