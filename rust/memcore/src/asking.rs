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

/// The share of `text`'s sentences that end with a question mark, in
/// percent (0 for a text without any). A sentence ends at `.`, `!`, `?` or a
/// line break; a run of them ("?!", "...") ends one sentence, and the last
/// sentence ends with the text, punctuated or not.
pub fn asking_percent(text: &str) -> u8 {
    let (mut sentences, mut questions) = (0u32, 0u32);
    let (mut in_sentence, mut asks) = (false, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' | '!' | '?' | '\n' => {
                asks |= c == '?';
                let run_goes_on = matches!(chars.peek(), Some('.' | '!' | '?'));
                if in_sentence && !run_goes_on {
                    sentences += 1;
                    questions += u32::from(asks);
                    in_sentence = false;
                }
                if !run_goes_on {
                    asks = false;
                }
            }
            c if c.is_alphanumeric() => in_sentence = true,
            _ => {}
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
