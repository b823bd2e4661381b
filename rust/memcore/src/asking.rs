//! Texts that only ask: a question is a poor answer to a question.
//!
//! Asked "when did Melanie go camping?", the memory that matches best is
//! often the other speaker's "When did you go camping?": the same words and
//! the same meaning, and none of the answer, which was said after it. So a
//! memory or a turn ranks lower by the share of its sentences that are
//! questions (`fusion::fuse`): one that tells and then asks ("We went
//! camping last week. Have you been?") loses half as much, one that only
//! tells loses nothing. A turn that carries the agent's reply is exempt: an
//! agent's log records a question together with its answer, and that pair is
//! what is worth showing again.

/// How far a text made only of questions falls, in the z-score units of the
/// fusion (each signal's z-score among the candidates, weighted; the weights
/// sum to 1): from the head of a list to about its middle, while a memory
/// that half asks falls half as far. Chosen on LoCoMo by
/// leave-one-conversation-out (benches/results/quality-experiments.md,
/// section 29).
pub const ASKING_PENALTY: f32 = 4.0;

/// Question marks: the Latin one, the full-width one of Chinese and
/// Japanese text, the Arabic one.
const QUESTION_MARKS: [char; 3] = ['?', '\u{FF1F}', '\u{061F}'];
/// What else ends a sentence: full stops and exclamation marks, full-width
/// and ideographic ones included.
const SENTENCE_ENDS: [char; 5] = ['.', '!', '\u{FF01}', '\u{3002}', '\u{FF0E}'];
/// What may close a sentence after its mark: quotes and brackets.
const CLOSERS: [char; 9] = [
    '"', '\'', ')', ']', '\u{201D}', '\u{2019}', '\u{BB}', '\u{300D}', '*',
];

fn is_mark(c: char) -> bool {
    QUESTION_MARKS.contains(&c) || SENTENCE_ENDS.contains(&c)
}

/// Whether the mark `c` ends its sentence, given the character after it. A
/// Latin mark must be followed by a space, a closer, another mark or the
/// end, so "3.50", "e.g.", "v1.2" and a URL's "?q=" do not split a sentence;
/// a full-width mark needs nothing after it (CJK text puts no space there).
fn ends_here(c: char, next: Option<char>) -> bool {
    if c == '\n' || !c.is_ascii() {
        return true;
    }
    next.is_none_or(|n| n.is_whitespace() || is_mark(n) || CLOSERS.contains(&n))
}

/// The share of `text`'s sentences that end with a question mark, in
/// percent (0 for a text without any). A sentence ends at `.`, `!`, `?` (or
/// their full-width forms, `。` and the Arabic `؟`) or a line break; a run of
/// them ("?!", "...") ends one sentence, and the last sentence ends with the
/// text, punctuated or not.
pub fn asking_percent(text: &str) -> u8 {
    let (mut sentences, mut questions) = (0u32, 0u32);
    let (mut in_sentence, mut asks) = (false, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        if (c == '\n' || is_mark(c)) && ends_here(c, next) {
            asks |= QUESTION_MARKS.contains(&c);
            if next.is_some_and(is_mark) {
                continue; // the run goes on: "?!", "..."
            }
            if in_sentence {
                sentences += 1;
                questions += u32::from(asks);
                in_sentence = false;
            }
            asks = false;
        } else if c.is_alphanumeric() {
            in_sentence = true;
        }
    }
    if in_sentence {
        sentences += 1; // unpunctuated at the end: a statement
    }
    if sentences == 0 {
        return 0;
    }
    // At most 100, so the cast cannot truncate.
    (questions * 100).div_ceil(sentences) as u8
}

/// [`asking_percent`] of a conversation turn: 0 when the turn carries the
/// agent's reply.
pub fn turn_asking_percent(user_text: &str, agent_text: Option<&str>) -> u8 {
    if agent_text.is_some_and(|a| !a.trim().is_empty()) {
        return 0;
    }
    asking_percent(user_text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_sentences_that_ask() {
        assert_eq!(asking_percent("When did you go camping?"), 100);
        assert_eq!(asking_percent("We went camping. Have you been?"), 50);
        assert_eq!(asking_percent("We went camping last week!"), 0);
        assert_eq!(asking_percent("Wow! Really?! Tell me more."), 34);
        assert_eq!(asking_percent("Caroline: what did you paint?"), 100);
    }

    #[test]
    fn a_text_without_sentences_asks_nothing() {
        assert_eq!(asking_percent(""), 0);
        assert_eq!(asking_percent("?!..."), 0);
        assert_eq!(asking_percent("no punctuation at all"), 0);
    }

    #[test]
    fn other_scripts_ask_with_their_own_marks() {
        assert_eq!(asking_percent("你们什么时候去露营？"), 100);
        assert_eq!(asking_percent("我们六月去了。你呢？"), 50);
        assert_eq!(asking_percent("متى ذهبت؟"), 100);
        assert_eq!(asking_percent("¿Cuándo fuiste de campamento?"), 100);
    }

    #[test]
    fn a_mark_inside_a_word_ends_nothing() {
        assert_eq!(asking_percent("It costs 3.50 now, e.g. at the shop."), 0);
        assert_eq!(
            asking_percent("See https://example.com/search?q=tents for tents."),
            0
        );
        assert_eq!(asking_percent("She asked \"why?\" and left."), 50);
        assert_eq!(asking_percent("Upgrade to v1.2? It fixes the crash."), 50);
    }

    #[test]
    fn a_line_break_ends_a_sentence() {
        assert_eq!(asking_percent("Sounds good\nWhen is it?"), 50);
        assert_eq!(asking_percent("Is it?\n\nYes."), 50);
    }

    #[test]
    fn a_turn_with_the_agents_reply_is_exempt() {
        assert_eq!(turn_asking_percent("How do I deploy?", None), 100);
        assert_eq!(turn_asking_percent("How do I deploy?", Some("  ")), 100);
        assert_eq!(
            turn_asking_percent("How do I deploy?", Some("Run make.")),
            0
        );
    }
}
