//! Finding known entity names in text, without NLP: exact, case-insensitive,
//! word-bounded matches (Aho-Corasick over lower-cased names).
//!
//! Adding a name must be cheap (entities arrive one by one) while matching
//! must be fast (every stored memory is matched). So names live in a built
//! automaton plus a short list of recent additions scanned directly; the
//! automaton is rebuilt when that list grows past `DELTA_LIMIT`.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::NodeId;

/// Recent names matched by plain substring search before a rebuild.
const DELTA_LIMIT: usize = 256;

/// The name → entity index for mention detection.
#[derive(Debug, Default)]
pub struct NameMatcher {
    /// Lower-cased name → entities (across namespaces) with that name.
    names: HashMap<String, Vec<NodeId>>,
    automaton: Option<AhoCorasick>,
    /// Pattern index of the automaton → name.
    patterns: Vec<String>,
    /// Names added since the automaton was built.
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
        if self.delta.len() > DELTA_LIMIT {
            self.rebuild();
        }
    }

    /// Forget an entity's name.
    pub fn remove(&mut self, name: &str, node: NodeId) {
        let key = name.trim().to_lowercase();
        if let Some(nodes) = self.names.get_mut(&key) {
            nodes.retain(|n| *n != node);
        }
    }

    fn rebuild(&mut self) {
        self.names.retain(|_, nodes| !nodes.is_empty());
        self.patterns = self.names.keys().cloned().collect();
        self.automaton = AhoCorasickBuilder::new()
            .match_kind(MatchKind::Standard)
            .build(&self.patterns)
            .ok();
        self.delta.clear();
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
        if let Some(ac) = &self.automaton {
            for m in ac.find_overlapping_iter(&lower) {
                accept(&self.patterns[m.pattern().as_usize()], m.start());
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
    fn unicode_names() {
        let mut m = NameMatcher::default();
        m.add("Zürich", 4);
        assert_eq!(m.find("Trip to ZÜRICH!"), vec![4]);
    }
}
