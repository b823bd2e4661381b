//! Text analysis for BM25: identifier-aware tokenising, lower-casing and
//! (by default English) stemming.
//!
//! The tokenizer splits on anything that is not a letter, digit or
//! underscore and, inside a word, also at underscores, camelCase and
//! letter/digit boundaries, emitting the whole word and then its parts:
//! `getUserName` indexes as `getusername`, `get`, `user`, `name`, and
//! `MAX_TOKENS` as `max_tokens`, `max`, `tokens`, so code and prose meet in
//! one index ("user name" finds `getUserName`) and a whole identifier is a
//! rare term of its own (`parse_args` ranks the code that says it above code
//! that says "parse" and "args" apart).

use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, Stemmer, TextAnalyzer, Token, TokenStream, Tokenizer,
};

use crate::error::{Error, Result};

/// Name the analyser is registered under in the tantivy index.
pub const ANALYZER_NAME: &str = "memcore";
/// Tokens longer than this (bytes) are dropped: hashes and base64 blobs.
const MAX_TOKEN_BYTES: usize = 48;

/// Build the analyser named in configuration: `"simple"` (no stemming) or a
/// language for Snowball stemming (`"english"`/`"en"`, `"french"`/`"fr"`, …).
pub fn build(name: &str) -> Result<TextAnalyzer> {
    let base = TextAnalyzer::builder(IdentifierTokenizer)
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
        .filter(LowerCaser);
    Ok(match language_of(name)? {
        None => base.build(),
        Some(language) => base.filter(Stemmer::new(language)).build(),
    })
}

/// The stemming language of an analyser name (`None` for `"simple"`).
pub(super) fn language_of(name: &str) -> Result<Option<Language>> {
    if name == "simple" {
        return Ok(None);
    }
    language(name).map(Some).ok_or_else(|| {
        Error::invalid(
            "text_analyzer",
            format!(
                "Unknown text analyzer '{name}'. Use 'simple' or a stemming language: english, \
                 french, german, spanish, italian, portuguese, dutch, swedish, norwegian, danish, \
                 finnish, russian, romanian, hungarian, greek, turkish, arabic, tamil."
            ),
        )
    })
}

fn language(name: &str) -> Option<Language> {
    Some(match name {
        "english" | "en" => Language::English,
        "french" | "fr" => Language::French,
        "german" | "de" => Language::German,
        "spanish" | "es" => Language::Spanish,
        "italian" | "it" => Language::Italian,
        "portuguese" | "pt" => Language::Portuguese,
        "dutch" | "nl" => Language::Dutch,
        "swedish" | "sv" => Language::Swedish,
        "norwegian" | "no" => Language::Norwegian,
        "danish" | "da" => Language::Danish,
        "finnish" | "fi" => Language::Finnish,
        "russian" | "ru" => Language::Russian,
        "romanian" | "ro" => Language::Romanian,
        "hungarian" | "hu" => Language::Hungarian,
        "greek" | "el" => Language::Greek,
        "turkish" | "tr" => Language::Turkish,
        "arabic" | "ar" => Language::Arabic,
        "tamil" | "ta" => Language::Tamil,
        _ => return None,
    })
}

/// The analysed terms of `text`, in order (duplicates kept).
pub fn terms(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while let Some(token) = stream.next() {
        out.push(token.text.clone());
    }
    out
}

/// Splits text into words, then words into identifier parts.
#[derive(Debug, Clone, Copy)]
pub struct IdentifierTokenizer;

/// Token stream of [`IdentifierTokenizer`]: all tokens are computed up front
/// (texts are short) and replayed.
#[derive(Debug)]
pub struct IdentifierStream {
    tokens: Vec<Token>,
    next: usize,
}

impl Tokenizer for IdentifierTokenizer {
    type TokenStream<'a> = IdentifierStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> IdentifierStream {
        IdentifierStream {
            tokens: tokenize(text),
            next: 0,
        }
    }
}

impl TokenStream for IdentifierStream {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut position = 0;
    let mut word_start: Option<usize> = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (c.is_alphanumeric() || c == '_', word_start) {
            (true, None) => word_start = Some(i),
            (false, Some(start)) => {
                push_word(text, start, i, &mut position, &mut tokens);
                word_start = None;
            }
            _ => {}
        }
    }
    tokens
}

/// A run of letters, digits and underscores: without its outer underscores,
/// the whole of it when it holds one (`load_config`), then each of its
/// underscore-separated parts as a word of its own.
fn push_word(text: &str, start: usize, end: usize, position: &mut usize, out: &mut Vec<Token>) {
    let run = &text[start..end];
    let after_leading = run.trim_start_matches('_');
    let word = after_leading.trim_end_matches('_');
    if word.is_empty() {
        return; // only underscores
    }
    let start = start + run.len() - after_leading.len();
    if word.contains('_') {
        emit_token(out, position, start, word);
    }
    let mut offset = 0;
    for part in word.split('_') {
        if !part.is_empty() {
            push_part(start + offset, part, position, out);
        }
        offset += part.len() + 1;
    }
}

fn emit_token(out: &mut Vec<Token>, position: &mut usize, from: usize, text: &str) {
    out.push(Token {
        offset_from: from,
        offset_to: from + text.len(),
        position: *position,
        text: text.to_owned(),
        position_length: 1,
    });
    *position += 1;
}

/// A word without underscores: itself, then its camelCase and letter/digit
/// parts when it has more than one.
fn push_part(start: usize, word: &str, position: &mut usize, out: &mut Vec<Token>) {
    emit_token(out, position, start, word);
    let parts = split_identifier(word);
    if parts.len() > 1 {
        for (from, to) in parts {
            emit_token(out, position, start + from, &word[from..to]);
        }
    }
}

/// Byte ranges of the parts of an identifier: a new part starts at a
/// lower→upper change (`userName`), before the last capital of a run
/// followed by lower case (`HTTPServer` → `HTTP`, `Server`), and at
/// letter↔digit changes (`utf8` → `utf`, `8`).
fn split_identifier(word: &str) -> Vec<(usize, usize)> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for w in 1..chars.len() {
        let (i, c) = chars[w];
        let prev = chars[w - 1].1;
        let next = chars.get(w + 1).map(|&(_, n)| n);
        let boundary = (prev.is_lowercase() && c.is_uppercase())
            || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase))
            || (prev.is_alphabetic() && c.is_numeric())
            || (prev.is_numeric() && c.is_alphabetic());
        if boundary {
            parts.push((start, i));
            start = i;
        }
    }
    parts.push((start, word.len()));
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyse(name: &str, text: &str) -> Vec<String> {
        terms(&mut build(name).unwrap(), text)
    }

    #[test]
    fn camel_case_words_also_index_their_parts() {
        assert_eq!(
            analyse("simple", "getUserName()"),
            vec!["getusername", "get", "user", "name"]
        );
        assert_eq!(
            analyse("simple", "HTTPServer utf8"),
            vec!["httpserver", "http", "server", "utf8", "utf", "8"]
        );
        assert_eq!(
            analyse("simple", "load_userName __init__ MAX_TOKENS _"),
            vec![
                "load_username",
                "load",
                "username",
                "user",
                "name",
                "init",
                "max_tokens",
                "max",
                "tokens"
            ]
        );
    }

    #[test]
    fn english_stems() {
        assert_eq!(analyse("english", "Running dogs"), vec!["run", "dog"]);
    }

    #[test]
    fn unknown_analyzer_is_refused() {
        assert_eq!(build("klingon").err().unwrap().code(), "INVALID_PARAMETER");
    }

    #[test]
    fn unicode_words_survive() {
        assert_eq!(analyse("simple", "Zürich café"), vec!["zürich", "café"]);
    }
}
