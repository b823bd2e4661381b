//! Questions that ask for a list: "What books has Melanie read?", "Which
//! cities has Jon visited?", "what languages does the user speak".
//!
//! Such a question wants several things, and an agent's memory usually holds
//! them in several threads (one book mentioned in March, another in June).
//! The best thread, lifted whole by its words (`engine::thread_prior`),
//! tends to fill the top of the list with its own memories, most of them
//! about the one thing it talked about. So when a question asks for a list
//! and the caller said nothing about spreading, `recall` spreads its list
//! across threads (`engine::thread_spread`) at [`LIST_SPREAD`] per thread.
//!
//! Spreading every list this way costs recall: most questions' evidence sits
//! in one thread (benches/results/quality-experiments.md, sections 4 and
//! 28). For questions asking for a list it costs nothing on LoCoMo and
//! lifts multi-hop recall (section 31).
//!
//! English only: the test is the shape of a "what/which" question whose
//! noun is plural. A question in another language, or phrased otherwise
//! ("Where has Melanie camped?"), ranks by score as before.

/// How many hits of one thread come before another thread's next when a
/// question asks for a list: enough for a thread that holds the answer to
/// keep its best few at the top. Chosen on LoCoMo (section 31).
pub const LIST_SPREAD: usize = 4;

/// Words between the question word and its noun that say nothing of number:
/// "what kind of books", "which other cities".
const BEFORE_NOUN: [&str; 9] = [
    "kind", "kinds", "type", "types", "sort", "sorts", "of", "some", "other",
];

/// Verbs that end in "s" and can follow "what": "what does", "what goes".
const NOT_NOUNS: [&str; 2] = ["does", "goes"];

/// Whether `question` asks for a list of things: it starts with "what" or
/// "which" and its noun is plural ("what books", "which kinds of events"
/// reads "events"). A plural is a word of four letters or more ending in
/// "s" but not in "ss", "us", "is" or "'s" (so not "class", "status",
/// "this", "what's"); "has", "was" and "is" are too short to count.
pub fn asks_for_list(question: &str) -> bool {
    let is = |word: &str, list: &[&str]| list.iter().any(|w| word.eq_ignore_ascii_case(w));
    let mut words = question
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '\u{2019}'))
        .filter(|w| !w.is_empty());
    if !words.next().is_some_and(|w| is(w, &["what", "which"])) {
        return false;
    }
    // recall calls this for every query: the one copy made is the noun's.
    words
        .find(|w| !is(w, &BEFORE_NOUN))
        .is_some_and(|noun| is_plural(&noun.to_lowercase()))
}

fn is_plural(word: &str) -> bool {
    word.chars().count() >= 4
        && word.ends_with('s')
        && !["ss", "us", "is", "'s", "\u{2019}s"]
            .iter()
            .any(|end| word.ends_with(end))
        && !NOT_NOUNS.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_what_or_which_question_with_a_plural_noun_asks_for_a_list() {
        for q in [
            "What books has Melanie read?",
            "Which cities has Jon visited?",
            "what languages does the user speak",
            "What instruments does Melanie play?",
            "What kind of books does Caroline have in her library?",
            "Which other projects use PostgreSQL?",
            "WHAT TOOLS DID WE INSTALL?",
        ] {
            assert!(asks_for_list(q), "{q}");
        }
    }

    #[test]
    fn other_questions_do_not() {
        for q in [
            "What does the user prefer for frontend work?",
            "What is Caroline's identity?",
            "What's the user's name?",
            "What was the plan?",
            "What has Melanie painted?",
            "What status does the ticket have?",
            "What class handles retries?",
            "What book did Melanie read?",
            "What kinds of music?",
            "Where has Melanie camped?",
            "When did the user move?",
            "books the user likes",
            "What",
            "",
            "Quels livres a-t-elle lus ?",
        ] {
            assert!(!asks_for_list(q), "{q}");
        }
    }
}
