//! Documents written but not yet committed to tantivy, as a tiny in-memory
//! inverted index, so BM25 sees a write before the background commit.
//!
//! Keys are op-log seqs and arrive in increasing order, so each posting list
//! is sorted and a commit covering seq `s` drains exactly the keys `<= s`.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

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

    /// Whether `key` is pending.
    pub fn contains(&self, key: u64) -> bool {
        self.docs.contains_key(&key)
    }

    /// Forget one document.
    pub fn remove(&mut self, key: u64) {
        let Some(doc) = self.docs.remove(&key) else {
            return;
        };
        self.total_tokens -= u64::from(doc.len);
        for (t, _) in &doc.terms {
            if let Some(list) = self.postings.get_mut(t) {
                // Lists are sorted (keys arrive in commit order), so the entry is
                // found by bisection; the scan only runs if that order was broken.
                match list.binary_search_by_key(&key, |(k, _)| *k) {
                    Ok(i) => {
                        list.remove(i);
                    }
                    Err(_) => list.retain(|(k, _)| *k != key),
                }
                if list.is_empty() {
                    self.postings.remove(t);
                }
            }
        }
    }

    /// Forget every document with key `<= seq` (they are committed now).
    ///
    /// One pass over every posting list, not [`PendingText::remove`] per key:
    /// a commit drains tens of thousands of documents whose common terms share
    /// lists as long as the buffer, and removing them one by one was quadratic
    /// (hundreds of milliseconds under the lock every write waits for).
    pub fn drain_through(&mut self, seq: u64) {
        let mut drained_tokens = 0u64;
        self.docs.retain(|key, doc| {
            let keep = *key > seq;
            if !keep {
                drained_tokens += u64::from(doc.len);
            }
            keep
        });
        self.total_tokens -= drained_tokens;
        self.postings.retain(|_, list| {
            list.retain(|(key, _)| *key > seq);
            !list.is_empty()
        });
    }

    /// Every pending key.
    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.docs.keys().copied()
    }

    /// Drop the given documents in one pass, like [`PendingText::drain_through`]
    /// (a read-only index loaded a commit that holds them).
    pub fn drain_keys(&mut self, keys: &HashSet<u64>) {
        let mut drained_tokens = 0u64;
        self.docs.retain(|key, doc| {
            let keep = !keys.contains(key);
            if !keep {
                drained_tokens += u64::from(doc.len);
            }
            keep
        });
        self.total_tokens -= drained_tokens;
        self.postings.retain(|_, list| {
            list.retain(|(key, _)| !keys.contains(key));
            !list.is_empty()
        });
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
    fn drain_keeps_later_documents_whatever_the_insert_order() {
        let mut p = PendingText::default();
        for key in [5, 1, 4, 2, 3] {
            p.insert(key, &words("common rare"));
        }
        p.insert(6, &words("common only"));
        p.drain_through(3);
        assert_eq!(p.len(), 3);
        assert_eq!(p.doc_freq("common"), 3);
        assert_eq!(p.doc_freq("rare"), 2);
        assert_eq!(p.total_tokens(), 6);
        let keys: Vec<u64> = p.postings("common").map(|(k, _, _)| k).collect();
        assert_eq!(keys, vec![5, 4, 6]);
        p.remove(4);
        let keys: Vec<u64> = p.postings("common").map(|(k, _, _)| k).collect();
        assert_eq!(keys, vec![5, 6]);
        assert_eq!(p.doc_freq("rare"), 1);
        p.drain_through(6);
        assert!(p.is_empty());
        assert_eq!(p.total_tokens(), 0);
        assert_eq!(p.doc_freq("common"), 0);
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
