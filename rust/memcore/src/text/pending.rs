//! Documents written but not yet committed to tantivy, as a tiny in-memory
//! inverted index, so BM25 sees a write before the background commit.
//!
//! Keys are op-log seqs and arrive in increasing order, so each posting list
//! is sorted and a commit covering seq `s` drains exactly the keys `<= s`.

use rustc_hash::FxHashMap as HashMap;

/// One pending document: its term frequencies and its length in tokens.
#[derive(Debug, Clone)]
struct PendingDoc {
    terms: Vec<(String, u32)>,
    len: u32,
}

/// The pending documents.
#[derive(Debug, Default)]
pub struct PendingText {
    docs: HashMap<u64, PendingDoc>,
    postings: HashMap<String, Vec<(u64, u32)>>,
    total_tokens: u64,
}

impl PendingText {
    /// Add a document from its analysed terms.
    pub fn insert(&mut self, key: u64, terms: &[String]) {
        self.remove(key);
        let len = terms.len() as u32;
        let mut freqs: HashMap<&str, u32> = HashMap::default();
        for t in terms {
            *freqs.entry(t).or_default() += 1;
        }
        let mut terms: Vec<(String, u32)> =
            freqs.into_iter().map(|(t, f)| (t.to_owned(), f)).collect();
        terms.sort_unstable();
        for (t, tf) in &terms {
            self.postings.entry(t.clone()).or_default().push((key, *tf));
        }
        self.total_tokens += u64::from(len);
        self.docs.insert(key, PendingDoc { terms, len });
    }

    /// Forget one document.
    pub fn remove(&mut self, key: u64) {
        let Some(doc) = self.docs.remove(&key) else {
            return;
        };
        self.total_tokens -= u64::from(doc.len);
        for (t, _) in &doc.terms {
            if let Some(list) = self.postings.get_mut(t) {
                list.retain(|(k, _)| *k != key);
                if list.is_empty() {
                    self.postings.remove(t);
                }
            }
        }
    }

    /// Forget every document with key `<= seq` (they are committed now).
    pub fn drain_through(&mut self, seq: u64) {
        let gone: Vec<u64> = self.docs.keys().copied().filter(|k| *k <= seq).collect();
        for key in gone {
            self.remove(key);
        }
    }

    /// Number of pending documents.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Sum of pending document lengths.
    pub fn total_tokens(&self) -> u64 {
        self.total_tokens
    }

    /// Pending documents containing `term`.
    pub fn doc_freq(&self, term: &str) -> u64 {
        self.postings.get(term).map_or(0, |l| l.len() as u64)
    }

    /// `(key, term frequency, document length)` of every pending document
    /// holding `term`.
    pub fn postings<'a>(&'a self, term: &str) -> impl Iterator<Item = (u64, u32, u32)> + 'a {
        self.postings
            .get(term)
            .into_iter()
            .flatten()
            .map(|&(key, tf)| (key, tf, self.docs.get(&key).map_or(0, |d| d.len)))
    }

    /// Forget everything.
    pub fn clear(&mut self) {
        *self = PendingText::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn insert_remove_and_drain() {
        let mut p = PendingText::default();
        p.insert(1, &words("a b a"));
        p.insert(2, &words("b c"));
        assert_eq!(p.doc_freq("a"), 1);
        assert_eq!(p.doc_freq("b"), 2);
        assert_eq!(p.total_tokens(), 5);
        let a: Vec<_> = p.postings("a").collect();
        assert_eq!(a, vec![(1, 2, 3)]);
        p.drain_through(1);
        assert_eq!(p.len(), 1);
        assert_eq!(p.doc_freq("a"), 0);
        assert_eq!(p.total_tokens(), 2);
        p.remove(2);
        assert!(p.is_empty());
    }
}
