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
//!
//! Chinese, Japanese and Korean text is not split into words by spaces (or,
//! in Korean, a word carries its particles: 서울에), so a run of their
//! characters would be one token that no query word ever equals. A run of
//! Han, Hiragana, Katakana or Hangul indexes instead as its overlapping
//! character pairs (`上海市` as `上海`, `海市`), and a character standing
//! alone as itself, as Lucene's CJK analyser does: a query word of two or
//! more characters then matches wherever it occurs, with no dictionary.
//! A document also indexes each character of a longer run
//! ([`build_document`]), so a word of one character (`猫`, `海`, `빵`: common
//! in all three languages) finds the runs that hold it; a query asks for a
//! character only when it stands alone, so a longer word is matched by its
//! pairs alone and never counted twice.
//!
//! Letters are folded to ASCII after lower-casing and before stemming
//! (`München` indexes as `munchen`, `Montréal` as `montreal`), so a word
//! typed without its diacritics still matches; the stored text is kept as
//! written. Folding before the stemmer means a word and its bare spelling
//! always stem alike. ASCII words (all of English) pass through untouched.

use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, RemoveLongFilter, Stemmer, TextAnalyzer, Token,
    TokenStream, Tokenizer,
};

use crate::error::{Error, Result};

/// Name the analyser is registered under in the tantivy index.
pub const ANALYZER_NAME: &str = "memcore";
/// Tokens longer than this (bytes) are dropped: hashes and base64 blobs.
const MAX_TOKEN_BYTES: usize = 48;

/// Build the analyser named in configuration: `"simple"` (no stemming) or a
/// language for Snowball stemming (`"english"`/`"en"`, `"french"`/`"fr"`, …).
/// This is the analysis of queries; documents add CJK characters
/// ([`build_document`]).
pub fn build(name: &str) -> Result<TextAnalyzer> {
    build_with(name, IdentifierTokenizer { characters: false })
}

/// The analyser of documents: as [`build`], and every character of a CJK
/// run of two or more is a term too.
pub fn build_document(name: &str) -> Result<TextAnalyzer> {
    build_with(name, IdentifierTokenizer { characters: true })
}

fn build_with(name: &str, tokenizer: IdentifierTokenizer) -> Result<TextAnalyzer> {
    let base = TextAnalyzer::builder(tokenizer)
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter);
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
pub struct IdentifierTokenizer {
    /// Each character of a CJK run of two or more is a term besides its
    /// pairs (documents, not queries).
    characters: bool,
}

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
            tokens: tokenize(text, self.characters),
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

/// What a character is to the tokenizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// A letter, digit or underscore of a script written with spaces.
    Word,
    /// A letter of Chinese, Japanese or Korean ([`is_cjk`]).
    Cjk,
    /// Anything else: a separator.
    Other,
}

fn class(c: char) -> Class {
    if is_cjk(c) {
        Class::Cjk
    } else if c.is_alphanumeric() || c == '_' {
        Class::Word
    } else {
        Class::Other
    }
}

/// Whether `c` is a letter of Han, Hiragana, Katakana or Hangul (the
/// scripts indexed as character pairs). Marks and punctuation of those
/// blocks (`、`, `・`, `「`) are not letters and separate runs as any
/// punctuation does; the prolonged sound mark `ー` is a letter of Katakana
/// words (`コーヒー`) and stays in them.
pub(super) fn is_cjk(c: char) -> bool {
    let cjk = matches!(c,
        '\u{1100}'..='\u{11FF}'   // Hangul Jamo
        | '\u{3005}'..='\u{3007}' // 々 〆 〇
        | '\u{3040}'..='\u{30FF}' // Hiragana, Katakana
        | '\u{3130}'..='\u{318F}' // Hangul Compatibility Jamo
        | '\u{31F0}'..='\u{31FF}' // Katakana Phonetic Extensions
        | '\u{3400}'..='\u{4DBF}' // CJK Unified Ideographs Extension A
        | '\u{4E00}'..='\u{9FFF}' // CJK Unified Ideographs
        | '\u{A960}'..='\u{A97F}' // Hangul Jamo Extended-A
        | '\u{AC00}'..='\u{D7FF}' // Hangul Syllables, Jamo Extended-B
        | '\u{F900}'..='\u{FAFF}' // CJK Compatibility Ideographs
        | '\u{FF66}'..='\u{FFDC}' // half-width Katakana and Hangul
        | '\u{20000}'..='\u{3134F}' // CJK Unified Ideographs Extensions B-H
    );
    cjk && c.is_alphanumeric()
}

fn tokenize(text: &str, characters: bool) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut position = 0;
    let mut run: Option<(usize, Class)> = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        let class = class(c);
        match run {
            Some((_, current)) if current == class => {}
            _ => {
                match run {
                    Some((start, Class::Word)) => {
                        push_word(text, start, i, &mut position, &mut tokens);
                    }
                    Some((start, Class::Cjk)) => {
                        push_cjk(text, start, i, characters, &mut position, &mut tokens);
                    }
                    _ => {}
                }
                run = (class != Class::Other).then_some((i, class));
            }
        }
    }
    tokens
}

/// A run of CJK letters: each pair of neighbours (`東京都` gives `東京`,
/// `京都`), or the one letter of a run of one; with `characters`, each
/// letter before the pair it starts (`東`, `東京`, `京`, `京都`, `都`).
fn push_cjk(
    text: &str,
    start: usize,
    end: usize,
    characters: bool,
    position: &mut usize,
    out: &mut Vec<Token>,
) {
    let run = &text[start..end];
    let bounds: Vec<usize> = run
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(run.len()))
        .collect();
    if bounds.len() == 2 {
        emit_token(out, position, start, run);
        return;
    }
    for (n, w) in bounds.windows(2).enumerate() {
        if characters {
            emit_token(out, position, start + w[0], &run[w[0]..w[1]]);
        }
        if let Some(&pair_end) = bounds.get(n + 2) {
            emit_token(out, position, start + w[0], &run[w[0]..pair_end]);
        }
    }
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
    fn diacritics_fold_to_ascii_before_stemming() {
        assert_eq!(analyse("simple", "Zürich café"), vec!["zurich", "cafe"]);
        assert_eq!(
            analyse("english", "München Montréal Straße São Æsir"),
            vec!["munchen", "montreal", "strass", "sao", "aesir"]
        );
        // A word and its bare spelling stem alike, in any language.
        for (name, written, bare) in [
            ("english", "résumés", "resumes"),
            ("french", "hôpitaux", "hopitaux"),
            ("german", "Überraschungen", "Uberraschungen"),
            ("spanish", "ingeniería", "ingenieria"),
            ("portuguese", "manhãs", "manhas"),
        ] {
            assert_eq!(analyse(name, written), analyse(name, bare), "{name}");
        }
    }

    #[test]
    fn cjk_runs_index_as_overlapping_character_pairs() {
        assert_eq!(
            analyse("english", "用户住在上海，喜欢喝绿茶"),
            vec![
                "用户", "户住", "住在", "在上", "上海", "喜欢", "欢喝", "喝绿", "绿茶"
            ]
        );
        // Kana and kanji pair across the change of script, as one run.
        assert_eq!(
            analyse("english", "東京に住む"),
            vec!["東京", "京に", "に住", "住む"]
        );
        // Katakana keeps its prolonged sound mark; Hangul pairs likewise.
        assert_eq!(analyse("english", "コーヒー"), vec!["コー", "ーヒ", "ヒー"]);
        assert_eq!(
            analyse("english", "서울에 살고"),
            vec!["서울", "울에", "살고"]
        );
    }

    #[test]
    fn a_document_also_indexes_each_character_of_a_run() {
        let document = |text: &str| terms(&mut build_document("english").unwrap(), text);
        assert_eq!(
            document("東京都、猫"),
            vec!["東", "東京", "京", "京都", "都", "猫"]
        );
        // Everything else as a query sees it.
        let text = "我用Python写getUserName代码 München";
        let cjk = |t: &String| t.starts_with(is_cjk);
        let mut words: Vec<String> = document(text).into_iter().filter(|t| !cjk(t)).collect();
        let mut query: Vec<String> = analyse("english", text)
            .into_iter()
            .filter(|t| !cjk(t))
            .collect();
        words.sort();
        query.sort();
        assert_eq!(words, query);
    }

    #[test]
    fn a_lone_cjk_character_is_a_term_of_its_own() {
        assert_eq!(analyse("english", "猫"), vec!["猫"]);
        assert_eq!(analyse("english", "猫、犬と鳥"), vec!["猫", "犬と", "と鳥"]);
        assert_eq!(analyse("simple", "집 앞"), vec!["집", "앞"]);
    }

    #[test]
    fn mixed_scripts_split_where_the_script_changes() {
        assert_eq!(
            analyse("english", "我用Python写getUserName代码"),
            vec![
                "我用",
                "python",
                "写",
                "getusernam",
                "get",
                "user",
                "name",
                "代码"
            ]
        );
        assert_eq!(
            analyse("simple", "Rust和Go 2024年"),
            vec!["rust", "和", "go", "2024", "年"]
        );
        // Full-width Latin folds to ASCII; it is not CJK.
        assert_eq!(analyse("simple", "ＡＰＩ設計"), vec!["api", "設計"]);
    }

    /// The tokenizer as it was before CJK pairs (words are runs of letters,
    /// digits and underscores, whatever their script), kept to show that
    /// ASCII text analyses exactly as before.
    #[derive(Clone)]
    struct Before;

    impl Tokenizer for Before {
        type TokenStream<'a> = IdentifierStream;

        fn token_stream<'a>(&'a mut self, text: &'a str) -> IdentifierStream {
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
            IdentifierStream { tokens, next: 0 }
        }
    }

    #[test]
    fn ascii_text_analyses_exactly_as_before() {
        let text = "Caroline went to the LGBTQ support group on 7 May 2023; she's \
            researching adoption agencies.\nMelanie: \"I painted a sunrise at the lake!\" \
            def load_config(path): return HTTPServer(utf8_path, maxRetries=3) # TODO \
            __init__ MAX_TOKENS 0x1f3a aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa \
            running dogs, happily organised user's favourite_colour -- e-mail: a@b.io";
        for name in ["english", "simple", "french", "german"] {
            let language = language_of(name).unwrap();
            let base = TextAnalyzer::builder(Before)
                .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
                .filter(LowerCaser);
            let mut before = match language {
                None => base.build(),
                Some(language) => base.filter(Stemmer::new(language)).build(),
            };
            let now = tokens(&mut build(name).unwrap(), text);
            assert_eq!(now, tokens(&mut before, text), "{name}");
            assert!(now.len() > 40);
            let document = tokens(&mut build_document(name).unwrap(), text);
            assert_eq!(document, now, "{name}");
        }
    }

    /// Every token with its offsets and position.
    fn tokens(analyzer: &mut TextAnalyzer, text: &str) -> Vec<(String, usize, usize, usize)> {
        let mut out = Vec::new();
        let mut stream = analyzer.token_stream(text);
        while let Some(t) = stream.next() {
            out.push((t.text.clone(), t.offset_from, t.offset_to, t.position));
        }
        out
    }
}
