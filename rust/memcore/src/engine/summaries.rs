//! Each conversation's summary, made without a model: the few sentences of
//! the conversation that carry most of its topic (a centroid summary, as in
//! Radev et al.'s MEAD: a word weighs how often the conversation repeats it,
//! times its rarity across the conversation's sentences), picked greedily by
//! the weight they add to what is already picked (so a sentence that repeats
//! a picked one adds nothing, as in maximal marginal relevance), and shown in
//! the conversation's order. `memory_list_dir_with_abstract` shows it.
//!
//! Maintenance refreshes a conversation's summary when it has new turns and
//! its summary is older than the refresh interval, one conversation per
//! transaction, so a run stopped at any point resumes where it was.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};

use super::Engine;
use crate::error::Result;
use crate::store::conversations::Turns;
use crate::store::table::{self, Table};
use crate::temporal::Timestamp;

/// Terms never worth showing in an abstract (nor weighing in a summary).
pub(super) const STOPWORDS: &[&str] = &[
    "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "her", "was", "one",
    "our", "out", "has", "had", "have", "him", "his", "how", "its", "may", "new", "now", "see",
    "two", "who", "did", "get", "got", "let", "put", "say", "she", "too", "use", "with", "this",
    "that", "from", "they", "will", "would", "there", "their", "what", "about", "which", "when",
    "make", "like", "just", "into", "than", "then", "them", "some", "could", "other", "these",
    "your", "been", "more", "also", "were", "here", "what's", "it's", "does", "should", "very",
    "want", "need", "please", "user", "i'm", "don't",
];

/// Sentences in a summary.
pub const SUMMARY_SENTENCES: usize = 3;
/// Characters a summary holds at most.
pub const SUMMARY_CHARS: usize = 600;
/// Sentences read per conversation: its first and last halves of this many.
const MAX_SENTENCES: usize = 4000;
/// Conversations refreshed per maintenance run.
const REFRESH_BATCH: usize = 1000;

/// The extractive summary of `texts` (in order): at most `sentences`
/// sentences and `max_chars` characters.
pub fn summarize(texts: &[String], sentences: usize, max_chars: usize) -> String {
    let mut all: Vec<(usize, &str, HashSet<String>)> = Vec::new();
    for text in texts {
        for sentence in split_sentences(text) {
            let words = content_words(sentence);
            if (3..=60).contains(&words.len()) {
                all.push((all.len(), sentence, words.into_iter().collect()));
            }
        }
    }
    if all.len() > MAX_SENTENCES {
        let tail = all.split_off(all.len() - MAX_SENTENCES / 2);
        all.truncate(MAX_SENTENCES / 2);
        all.extend(tail);
    }
    let mut frequency: HashMap<&str, f64> = HashMap::new();
    for (_, _, words) in &all {
        for w in words {
            *frequency.entry(w.as_str()).or_default() += 1.0;
        }
    }
    let n = all.len() as f64;
    // A word the conversation says once is no topic of it; one in every sentence says
    // nothing either. With no word said twice, every word counts once.
    let repeats = frequency.values().any(|&df| df > 1.0);
    let weight = |w: &str| {
        let df = frequency.get(w).copied().unwrap_or(1.0);
        let topical = if repeats { df - 1.0 } else { 1.0 };
        topical * (1.0 + n / df).ln()
    };
    let mut covered: HashSet<&str> = HashSet::new();
    let mut picked: Vec<usize> = Vec::new();
    let mut chars = 0;
    while picked.len() < sentences {
        // The sentence adding the most weight not yet covered (per square root of its
        // length, so long sentences do not win by length alone).
        let best = all
            .iter()
            .enumerate()
            .filter(|(i, (_, sentence, _))| {
                !picked.contains(i) && chars + sentence.chars().count() < max_chars
            })
            .map(|(i, (_, _, words))| {
                let fresh = words.iter().filter(|w| !covered.contains(w.as_str()));
                let gain: f64 = fresh.map(|w| weight(w)).sum();
                (gain / (words.len() as f64).sqrt(), i)
            })
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
        let Some((gain, i)) = best else { break };
        if gain <= 0.0 {
            break;
        }
        let (_, sentence, words) = &all[i];
        chars += sentence.chars().count() + 1;
        covered.extend(words.iter().map(String::as_str));
        picked.push(i);
    }
    picked.sort_unstable();
    picked
        .iter()
        .map(|&i| all[i].1)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Sentences: ends at `.`, `!`, `?` (followed by a space or the end) and at
/// line breaks; trimmed, empty ones left out.
fn split_sentences(text: &str) -> impl Iterator<Item = &str> {
    let mut pieces = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            let end = matches!(b, b'.' | b'!' | b'?')
                && bytes.get(i + 1).is_none_or(u8::is_ascii_whitespace);
            if end {
                pieces.push(&line[start..=i]);
                start = i + 1;
            }
        }
        pieces.push(&line[start..]);
    }
    pieces.into_iter().map(str::trim).filter(|s| !s.is_empty())
}

fn content_words(sentence: &str) -> Vec<String> {
    sentence
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '_'))
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| {
            w.chars().count() >= 3
                && !STOPWORDS.contains(&w.as_str())
                && !w.chars().all(|c| c.is_ascii_digit())
        })
        .collect()
}

impl Engine {
    /// Refresh the summaries of `namespace`'s conversations that have turns
    /// their summary does not cover and a summary older than `before` (or
    /// none); returns how many were refreshed.
    pub(super) fn refresh_summaries(
        &self,
        namespace: &str,
        before: Timestamp,
        now: Timestamp,
    ) -> Result<usize> {
        let stale: Vec<(String, i64)> = self
            .store
            .reader()?
            .prepare(
                "SELECT c.id, (SELECT count(*) FROM turns t
                               WHERE t.namespace = c.namespace AND t.conversation_id = c.id) AS n
                 FROM conversations c
                 LEFT JOIN conversation_summaries s
                   ON s.namespace = c.namespace AND s.conversation_id = c.id
                 WHERE c.namespace = ?1 AND (s.refreshed_at IS NULL OR s.refreshed_at <= ?2)
                   AND n > coalesce(s.turns, 0)
                 ORDER BY c.updated_at LIMIT ?3",
            )?
            .query_map(params![namespace, before, REFRESH_BATCH as i64], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        for (id, turns) in &stale {
            let texts = conversation_texts(&*self.store.reader()?, namespace, id)?;
            let summary = summarize(&texts, SUMMARY_SENTENCES, SUMMARY_CHARS);
            self.store.write(|tx| {
                tx.execute(
                    "INSERT INTO conversation_summaries(namespace, conversation_id, summary, turns,
                                                       refreshed_at)
                     VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT DO UPDATE SET summary = excluded.summary,
                         turns = excluded.turns, refreshed_at = excluded.refreshed_at",
                    params![namespace, id, summary, turns, now],
                )?;
                Ok(())
            })?;
        }
        Ok(stale.len())
    }
}

/// A conversation's user and agent texts, in order.
fn conversation_texts(conn: &Connection, namespace: &str, id: &str) -> Result<Vec<String>> {
    // Whole turns, so their checksums are verified (`store::checksum`).
    let sql = format!(
        "SELECT {} FROM turns WHERE namespace = ?1 AND conversation_id = ?2
         ORDER BY turn_index",
        Turns::COLUMNS
    );
    let mut texts = Vec::new();
    for turn in table::all::<Turns>(conn, &sql, params![namespace, id])? {
        texts.push(turn.user_text);
        texts.extend(turn.agent_text);
    }
    Ok(texts)
}

/// A conversation's stored summary, if maintenance made one.
pub(super) fn stored_summary(
    conn: &Connection,
    namespace: &str,
    id: &str,
) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached(
            "SELECT summary FROM conversation_summaries WHERE namespace = ?1 AND conversation_id = ?2",
        )?
        .query_row(params![namespace, id], |r| r.get(0))
        .optional()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_keeps_the_sentences_that_carry_the_conversation() {
        let texts: Vec<String> = [
            "Hi there!",
            "The login page fails after the OAuth token refresh.",
            "Thanks.",
            "I think the OAuth token refresh breaks the login session cookie.",
            "The weather is nice today in the park.",
            "Fixed: the login session cookie now survives the token refresh.",
        ]
        .map(str::to_owned)
        .to_vec();
        let summary = summarize(&texts, 2, 600);
        assert!(summary.contains("login"), "{summary}");
        assert!(!summary.contains("weather"), "{summary}");
        assert!(!summary.contains("Thanks"), "{summary}");
        // Order of the conversation, not of the scores.
        let first = texts.iter().position(|t| summary.starts_with(t.as_str()));
        assert!(first.is_some(), "{summary}");
    }

    #[test]
    fn a_summary_repeats_nothing_and_respects_its_bounds() {
        let texts: Vec<String> = vec![
            "Deploy the billing service to staging on Friday.".into(),
            "Deploy the billing service to staging on Friday!".into(),
            "The database migration for invoices needs a backfill first.".into(),
        ];
        let summary = summarize(&texts, 3, 600);
        assert_eq!(summary.matches("billing").count(), 1, "{summary}");
        assert!(summarize(&texts, 3, 10).is_empty());
        assert!(summarize(&[], 3, 600).is_empty());
        // With no word said twice, a sentence is still picked.
        let single = vec!["The database migration needs a backfill first.".to_owned()];
        assert_eq!(summarize(&single, 3, 600), single[0]);
    }

    #[test]
    fn sentences_end_at_marks_followed_by_space_and_at_lines() {
        let parts: Vec<&str> = split_sentences("Version 3.5 is out. Really?\nYes").collect();
        assert_eq!(parts, vec!["Version 3.5 is out.", "Really?", "Yes"]);
    }
}
