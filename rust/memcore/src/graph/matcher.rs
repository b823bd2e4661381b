//! Finding known entity names in text, without NLP: exact, case-insensitive,
//! word-bounded matches (Aho-Corasick over lower-cased names).
//!
//! Adding a name must be cheap (entities arrive one by one, and a reopen
//! adds tens of thousands) while matching must be fast (every stored memory
//! is matched). Names live in a few automata of doubling sizes plus a short
//! list of recent additions scanned directly. When that list fills up it
//! becomes an automaton, merged with every smaller one (a binary counter):
//! each name is rebuilt O(log n) times in all, and a lookup runs O(log n)
//! automata, where rebuilding one automaton of every name after each batch
//! of additions cost O(n²).

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::NodeId;

/// Recent names matched by plain substring search before they get an automaton.
const DELTA_LIMIT: usize = 256;

/// One automaton and the names it was built from.
#[derive(Debug)]
struct Level {
    automaton: AhoCorasick,
    /// Pattern index of the automaton → name.
    patterns: Vec<String>,
}

impl Level {
    fn build(patterns: Vec<String>) -> Option<Level> {
        let automaton = AhoCorasickBuilder::new()
            .match_kind(MatchKind::Standard)
            .build(&patterns)
            .ok()?;
        Some(Level {
            automaton,
            patterns,
        })
    }
}

/// The name → entity index for mention detection.
#[derive(Debug, Default)]
pub struct NameMatcher {
    /// Lower-cased name → entities (across namespaces) with that name.
    names: HashMap<String, Vec<NodeId>>,
    /// Automata, largest first; each at least twice the size of the next.
    levels: Vec<Level>,
    /// Names added since the last automaton was built.
    delta: Vec<String>,
}

impl NameMatcher {
    /// Register an entity's name.
    pub fn add(&mut self, name: &str, node: NodeId) {
        let key = name.trim().to_lowercase();
        if key.is_empty() {
            return;
        }
        let entry = self.names.entry(key.clone()).or_default();
        if entry.is_empty() {
            self.delta.push(key);
        }
        if !entry.contains(&node) {
            entry.push(node);
        }
        if self.delta.len() >= DELTA_LIMIT {
            self.merge_delta();
        }
    }

    /// Forget an entity's name. Its pattern stays in an automaton until the
    /// next merge that includes it; matches are checked against `names`.
    pub fn remove(&mut self, name: &str, node: NodeId) {
        let key = name.trim().to_lowercase();
        if let Some(nodes) = self.names.get_mut(&key) {
            nodes.retain(|n| *n != node);
        }
    }

    /// Turn the recent names into an automaton, folding in every level not
    /// at least twice its size, and drop names no longer registered.
    fn merge_delta(&mut self) {
        let mut patterns = std::mem::take(&mut self.delta);
        while self
            .levels
            .last()
            .is_some_and(|level| level.patterns.len() <= 2 * patterns.len())
        {
            let level = self.levels.pop().expect("checked above");
            patterns.extend(level.patterns);
        }
        patterns.sort_unstable();
        patterns.dedup();
        patterns.retain(|p| self.names.get(p).is_some_and(|nodes| !nodes.is_empty()));
        if self.levels.is_empty() {
            // Everything is being rebuilt: forget names no entity holds any more.
            self.names.retain(|_, nodes| !nodes.is_empty());
        }
        if patterns.is_empty() {
            return;
        }
        match Level::build(patterns) {
            Some(level) => self.levels.push(level),
            // Building failed (it cannot for plain strings): keep scanning them.
            None => self.delta = self.names.keys().cloned().collect(),
        }
    }

    /// Entities whose names occur in `text` as whole words.
    pub fn find(&self, text: &str) -> Vec<NodeId> {
        let lower = text.to_lowercase();
        let mut found = Vec::new();
        let mut accept = |name: &str, start: usize| {
            if is_word_bounded(&lower, start, start + name.len())
                && let Some(nodes) = self.names.get(name)
            {
                found.extend(nodes.iter().copied());
            }
        };
        for level in &self.levels {
            for m in level.automaton.find_overlapping_iter(&lower) {
                accept(&level.patterns[m.pattern().as_usize()], m.start());
            }
        }
        for name in &self.delta {
            for (start, _) in lower.match_indices(name.as_str()) {
                accept(name, start);
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }
}

fn is_word_bounded(text: &str, start: usize, end: usize) -> bool {
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_whole_words_case_insensitively() {
        let mut m = NameMatcher::default();
        m.add("Alice", 1);
        m.add("New York", 2);
        m.add("York", 3);
        assert_eq!(m.find("alice moved to NEW YORK."), vec![1, 2, 3]);
        assert!(m.find("Malice in Yorkshire").is_empty());
    }

    #[test]
    fn survives_rebuilds_and_removals() {
        let mut m = NameMatcher::default();
        for i in 0..600 {
            m.add(&format!("entity{i}"), i);
        }
        assert_eq!(m.find("we saw Entity7 and entity599"), vec![7, 599]);
        m.remove("entity7", 7);
        assert_eq!(m.find("we saw Entity7 and entity599"), vec![599]);
    }

    #[test]
    fn many_names_stay_findable_across_merges() {
        let mut m = NameMatcher::default();
        for i in 0..5000 {
            m.add(&format!("name{i}"), i);
        }
        assert!(m.levels.len() <= 8, "{} automata", m.levels.len());
        for i in (0..5000).step_by(97) {
            assert_eq!(m.find(&format!("about name{i} today")), vec![i]);
        }
        // Removed and re-added names, across later merges.
        m.remove("name10", 10);
        m.add("name10", 7777);
        for i in 5000..5600 {
            m.add(&format!("name{i}"), i);
        }
        assert_eq!(m.find("name10"), vec![7777]);
        assert_eq!(m.find("name5599 and name0"), vec![0, 5599]);
    }

    #[test]
    fn unicode_names() {
        let mut m = NameMatcher::default();
        m.add("Zürich", 4);
        assert_eq!(m.find("Trip to ZÜRICH!"), vec![4]);
    }
}
