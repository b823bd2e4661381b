//! Finding known entity names in text, without NLP: exact, case-insensitive,
//! word-bounded matches.
//!
//! A match has no letter or digit just before it, so it can only begin at a
//! word start of the text, and a name that begins with a word (its leading
//! run of letters and digits) matches only where the text's word there is
//! that same word. So each word start is tried once: its word is looked up
//! among the first words of the known names, and only when some name begins
//! with it are the spans ending at a word boundary (within the longest name)
//! looked up as whole names. A lookup is a few hash probes per word of the
//! text however many names there are, and adding or removing a name is a
//! hash update (entities arrive one by one; a reopen adds tens of thousands).
//!
//! An earlier design used Aho-Corasick here. An automaton over all names has to be
//! rebuilt as names arrive; the binary counter of automata this replaced ran
//! O(log n) automata plus a substring search for each of up to 255 recent
//! names on every stored memory (7 us of a 60 us write at 50k entities).

use rustc_hash::FxHashMap as HashMap;

use super::NodeId;

/// The name → entity index for mention detection.
#[derive(Debug, Default)]
pub struct NameMatcher {
    /// Lower-cased name → entities (across namespaces) with that name.
    names: HashMap<String, Vec<NodeId>>,
    /// First word of the registered names → how many names begin with it
    /// (the empty word for names that begin with punctuation).
    first_words: HashMap<String, usize>,
    /// Bytes of the longest name registered so far: no match is longer.
    longest: usize,
}

/// `name` as matched: trimmed and lower-cased.
fn key(name: &str) -> String {
    name.trim().to_lowercase()
}

/// The leading run of letters and digits of `text` (possibly empty).
fn first_word(text: &str) -> &str {
    let end = text
        .char_indices()
        .find(|(_, c)| !c.is_alphanumeric())
        .map_or(text.len(), |(i, _)| i);
    &text[..end]
}

impl NameMatcher {
    /// Register an entity's name.
    pub fn add(&mut self, name: &str, node: NodeId) {
        let key = key(name);
        if key.is_empty() {
            return;
        }
        self.longest = self.longest.max(key.len());
        let first = first_word(&key).to_owned();
        let nodes = self.names.entry(key).or_default();
        if nodes.is_empty() {
            *self.first_words.entry(first).or_default() += 1;
        }
        if !nodes.contains(&node) {
            nodes.push(node);
        }
    }

    /// Forget an entity's name.
    pub fn remove(&mut self, name: &str, node: NodeId) {
        let key = key(name);
        let Some(nodes) = self.names.get_mut(&key) else {
            return;
        };
        nodes.retain(|n| *n != node);
        if !nodes.is_empty() {
            return;
        }
        let first = first_word(&key);
        if let Some(count) = self.first_words.get_mut(first) {
            *count -= 1;
            if *count == 0 {
                self.first_words.remove(first);
            }
        }
        self.names.remove(&key);
    }

    /// Entities whose names occur in `text` as whole words.
    pub fn find(&self, text: &str) -> Vec<NodeId> {
        let mut found = Vec::new();
        if self.names.is_empty() {
            return found;
        }
        let lower = text.to_lowercase();
        let mut after_word = false;
        for (start, c) in lower.char_indices() {
            let word_start = !after_word;
            after_word = c.is_alphanumeric();
            if word_start {
                self.names_at(&lower, start, &mut found);
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// Add the entities of every name that `text` holds at word start
    /// `start` and that ends at a word boundary.
    fn names_at(&self, text: &str, start: usize, found: &mut Vec<NodeId>) {
        let rest = &text[start..];
        let word = first_word(rest);
        if !self.first_words.contains_key(word) {
            return;
        }
        // Span ends: before each non-alphanumeric character from the end of
        // the first word on, and the end of the text.
        let limit = self.longest.min(rest.len());
        let ends = rest[word.len()..]
            .char_indices()
            .filter(|(_, c)| !c.is_alphanumeric())
            .map(|(i, _)| word.len() + i)
            .chain(std::iter::once(rest.len()))
            .take_while(|&end| end <= limit);
        for end in ends {
            if let Some(nodes) = self.names.get(&rest[..end]) {
                found.extend(nodes.iter().copied());
            }
        }
    }
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
    fn a_removed_name_is_no_longer_found() {
        let mut m = NameMatcher::default();
        for i in 0..600 {
            m.add(&format!("entity{i}"), i);
        }
        assert_eq!(m.find("we saw Entity7 and entity599"), vec![7, 599]);
        m.remove("entity7", 7);
        assert_eq!(m.find("we saw Entity7 and entity599"), vec![599]);
    }

    #[test]
    fn many_names_stay_findable_across_removals_and_re_adds() {
        let mut m = NameMatcher::default();
        for i in 0..5000 {
            m.add(&format!("name{i}"), i);
        }
        for i in (0..5000).step_by(97) {
            assert_eq!(m.find(&format!("about name{i} today")), vec![i]);
        }
        // A name removed and given to another entity, then more names.
        m.remove("name10", 10);
        m.add("name10", 7777);
        for i in 5000..5600 {
            m.add(&format!("name{i}"), i);
        }
        assert_eq!(m.find("name10"), vec![7777]);
        assert_eq!(m.find("name5599 and name0"), vec![0, 5599]);
    }

    #[test]
    fn names_with_punctuation_match_at_word_boundaries() {
        let mut m = NameMatcher::default();
        m.add("C++", 1);
        m.add("node.js", 2);
        m.add(".NET", 3);
        m.add("C", 4);
        m.add("New York City", 5);
        m.add("york", 6);
        assert_eq!(m.find("Ported from C++ to Node.js"), vec![1, 2, 4]);
        assert_eq!(m.find("(.net) in new york city"), vec![3, 5, 6]);
        // Only "c" is bounded there: ".net" follows a letter, "c++" a letter follows.
        assert_eq!(m.find("asp.net and c++x and nodejs"), vec![4]);
        assert_eq!(m.find("c++"), vec![1, 4], "at the very end of the text");
    }

    #[test]
    fn a_name_is_not_found_inside_a_longer_word_or_past_the_text() {
        let mut m = NameMatcher::default();
        m.add("Bian", 1);
        m.add("Bianca Lopez", 2);
        assert!(m.find("bianca met lopez").is_empty());
        assert_eq!(m.find("Bianca Lopez and bian"), vec![1, 2]);
        assert!(
            m.find("bianca lope").is_empty(),
            "a name longer than the text"
        );
    }

    #[test]
    fn a_name_shared_across_namespaces_stays_until_its_last_entity_goes() {
        let mut m = NameMatcher::default();
        m.add("Acme", 1);
        m.add(" acme ", 2);
        assert_eq!(m.find("acme"), vec![1, 2]);
        m.remove("ACME", 1);
        assert_eq!(m.find("acme"), vec![2]);
        m.remove("acme", 2);
        assert!(m.find("acme").is_empty());
        assert!(
            m.first_words.is_empty() && m.names.is_empty(),
            "nothing left behind"
        );
        m.add("acme corp", 3);
        assert_eq!(m.find("acme corp"), vec![3]);
    }

    #[test]
    fn unicode_names() {
        let mut m = NameMatcher::default();
        m.add("Zürich", 4);
        assert_eq!(m.find("Trip to ZÜRICH!"), vec![4]);
    }

    /// Every registered name at every position of `text`, kept where it is
    /// word-bounded: the definition, without the first-word index.
    fn reference(names: &[(&str, NodeId)], text: &str) -> Vec<NodeId> {
        let lower = text.to_lowercase();
        let mut found = Vec::new();
        for &(name, node) in names {
            let name = key(name);
            if name.is_empty() {
                continue; // blank names are not registered
            }
            // Overlapping occurrences too ("..", in "...").
            let starts = lower.char_indices().map(|(i, _)| i);
            for start in starts.filter(|&i| lower[i..].starts_with(name.as_str())) {
                let end = start + name.len();
                let before = lower[..start].chars().next_back();
                let after = lower[end..].chars().next();
                if !before.is_some_and(char::is_alphanumeric)
                    && !after.is_some_and(char::is_alphanumeric)
                {
                    found.push(node);
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    #[test]
    fn matches_the_definition_on_random_texts() {
        use rand::{Rng, SeedableRng, rngs::StdRng};
        // Few letters and much punctuation, so names overlap, nest and touch.
        const ALPHABET: &[char] = &['a', 'b', 'B', 'ä', '1', ' ', ' ', '.', '+', '-'];
        let mut rng = StdRng::seed_from_u64(7);
        let word = |rng: &mut StdRng, max: usize| -> String {
            let len = rng.random_range(1..=max);
            (0..len)
                .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())])
                .collect()
        };
        for round in 0..200 {
            let owned: Vec<String> = (0..8).map(|_| word(&mut rng, 5)).collect();
            let names: Vec<(&str, NodeId)> = owned
                .iter()
                .enumerate()
                .map(|(i, n)| (n.as_str(), i as NodeId))
                .collect();
            let mut m = NameMatcher::default();
            for &(name, node) in &names {
                m.add(name, node);
            }
            for _ in 0..20 {
                let text = word(&mut rng, 40);
                assert_eq!(
                    m.find(&text),
                    reference(&names, &text),
                    "round {round}: {text:?} in {owned:?}"
                );
            }
        }
    }
}
