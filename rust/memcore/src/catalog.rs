//! The catalog: what every live document key is, held in memory.
//!
//! Both indexes (HNSW and BM25) only know keys and content. Whether a key is
//! still current, which namespace, kind and thread it belongs to and when it
//! is valid lives here, rebuilt from SQLite on open and updated by the write
//! path while it still holds the writer lock. Every search filters through it,
//! inside the index traversal, so an invalidation or supersession is visible
//! to the very next search without rewriting any index document, and a
//! retired key still sitting in an index is never returned.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use parking_lot::RwLock;

use crate::kind::{Kind, KindSet};
use crate::temporal::{Timestamp, ValidAt};

/// Interned string id; 0 means "none".
pub type Sym = u32;

/// Strings (namespaces, threads, scopes, tags) as small integers.
#[derive(Debug, Default)]
pub struct Interner {
    ids: HashMap<String, Sym>,
    names: Vec<String>,
}

impl Interner {
    /// The id of `name`, assigning one if new.
    pub fn intern(&mut self, name: &str) -> Sym {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        self.names.push(name.to_owned());
        let id = self.names.len() as Sym;
        self.ids.insert(name.to_owned(), id);
        id
    }

    /// The id of `name` if it was ever interned.
    pub fn lookup(&self, name: &str) -> Option<Sym> {
        self.ids.get(name).copied()
    }

    /// `intern` for an optional value (None → 0).
    pub fn intern_opt(&mut self, name: Option<&str>) -> Sym {
        name.map_or(0, |n| self.intern(n))
    }
}

/// What a search needs to know about one document key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocMeta {
    pub kind: Kind,
    pub namespace: Sym,
    /// Conversation / agent thread (0 = none).
    pub thread: Sym,
    /// Kind-specific grouping: project of a code chunk, conversation of a
    /// user turn, entity of an observation (0 = none).
    pub scope: Sym,
    /// Kind-specific tag: language of a code chunk, type of a memory
    /// (0 = none).
    pub tag: Sym,
    pub valid_from: Timestamp,
    /// Effective end of validity (`Timestamp::MAX` when open).
    pub valid_end: Timestamp,
    /// Replaced by a newer version; hidden from "now" reads regardless of dates.
    pub superseded: bool,
    /// Percent of the text's sentences that are questions
    /// ([`crate::asking`]): memories and turns, 0 for every other kind.
    pub asks: u8,
}

/// The descriptive (string) form of a document's metadata, as the write path has it.
#[derive(Debug, Clone, Copy)]
pub struct DocLabels<'a> {
    pub kind: Kind,
    pub namespace: &'a str,
    pub thread: Option<&'a str>,
    pub scope: Option<&'a str>,
    pub tag: Option<&'a str>,
    pub valid_from: Timestamp,
    pub valid_end: Option<Timestamp>,
    pub superseded: bool,
    /// See [`DocMeta::asks`].
    pub asks: u8,
}

/// Which documents a search admits. Built per query from the request.
#[derive(Debug, Clone, Copy)]
pub struct Filter {
    pub namespace: Sym,
    pub kinds: KindSet,
    pub thread: Option<Sym>,
    pub scope: Option<Sym>,
    pub tag: Option<Sym>,
    /// A scope to leave out (the current conversation, for context retrieval).
    pub exclude_scope: Option<Sym>,
    pub valid: ValidAt,
    pub now: Timestamp,
}

impl Filter {
    /// Whether `doc` passes.
    #[inline]
    pub fn admits(&self, doc: &DocMeta) -> bool {
        doc.namespace == self.namespace
            && self.kinds.contains(doc.kind)
            && self.thread.is_none_or(|t| t == doc.thread)
            && self.scope.is_none_or(|s| s == doc.scope)
            && self.tag.is_none_or(|t| t == doc.tag)
            && self.exclude_scope.is_none_or(|s| s != doc.scope)
            && self.valid_ok(doc)
    }

    #[inline]
    fn valid_ok(&self, doc: &DocMeta) -> bool {
        match self.valid {
            ValidAt::Any => true,
            ValidAt::Now => {
                !doc.superseded && doc.valid_from <= self.now && self.now < doc.valid_end
            }
            ValidAt::At(t) => doc.valid_from <= t && t < doc.valid_end,
        }
    }
}

/// The live documents, by key, with secondary sets for the exact-search
/// fallback (keys per namespace+kind and per namespace+thread).
#[derive(Debug, Default)]
pub struct Catalog {
    docs: HashMap<u64, DocMeta>,
    by_kind: HashMap<(Sym, Kind), HashSet<u64>>,
    by_thread: HashMap<(Sym, Sym), HashSet<u64>>,
    by_scope: HashMap<(Sym, Sym), HashSet<u64>>,
    /// Documents per (namespace, kind, thread), and per (namespace, kind)
    /// how many threads hold any and how many documents those hold: the
    /// lengths and counts of the thread prior's BM25 (`engine::thread_prior`).
    thread_sizes: HashMap<(Sym, Kind, Sym), u32>,
    thread_totals: HashMap<(Sym, Kind), ThreadTotals>,
    names: Interner,
}

/// How many threads of one namespace and kind hold documents, and how many
/// documents they hold together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadTotals {
    pub threads: u32,
    pub documents: u64,
}

impl Catalog {
    /// Metadata of a live key.
    #[inline]
    pub fn get(&self, key: u64) -> Option<&DocMeta> {
        self.docs.get(&key)
    }

    /// Whether `key` is live and passes `filter`.
    #[inline]
    pub fn admits(&self, key: u64, filter: &Filter) -> bool {
        self.docs.get(&key).is_some_and(|d| filter.admits(d))
    }

    /// Every live key.
    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.docs.keys().copied()
    }

    /// Number of live documents.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether there are no live documents.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The interned id of a string, if known (unknown strings match nothing).
    pub fn sym(&self, name: &str) -> Option<Sym> {
        self.names.lookup(name)
    }

    /// Add or replace a live key.
    pub fn insert(&mut self, key: u64, labels: &DocLabels<'_>) {
        let meta = DocMeta {
            kind: labels.kind,
            namespace: self.names.intern(labels.namespace),
            thread: self.names.intern_opt(labels.thread),
            scope: self.names.intern_opt(labels.scope),
            tag: self.names.intern_opt(labels.tag),
            valid_from: labels.valid_from,
            valid_end: labels.valid_end.unwrap_or(Timestamp::MAX),
            superseded: labels.superseded,
            asks: labels.asks,
        };
        self.remove(key);
        self.by_kind
            .entry((meta.namespace, meta.kind))
            .or_default()
            .insert(key);
        if meta.thread != 0 {
            self.by_thread
                .entry((meta.namespace, meta.thread))
                .or_default()
                .insert(key);
            self.count_in_thread(&meta, true);
        }
        if meta.scope != 0 {
            self.by_scope
                .entry((meta.namespace, meta.scope))
                .or_default()
                .insert(key);
        }
        self.docs.insert(key, meta);
    }

    /// Retire a key (its record was deleted or got new content).
    pub fn remove(&mut self, key: u64) {
        let Some(meta) = self.docs.remove(&key) else {
            return;
        };
        if let Some(set) = self.by_kind.get_mut(&(meta.namespace, meta.kind)) {
            set.remove(&key);
        }
        if let Some(set) = self.by_thread.get_mut(&(meta.namespace, meta.thread)) {
            set.remove(&key);
        }
        if meta.thread != 0 {
            self.count_in_thread(&meta, false);
        }
        if let Some(set) = self.by_scope.get_mut(&(meta.namespace, meta.scope)) {
            set.remove(&key);
        }
    }

    /// Count a document in (`added`) or out of its thread's size and totals.
    fn count_in_thread(&mut self, meta: &DocMeta, added: bool) {
        let group = (meta.namespace, meta.kind);
        let size = self
            .thread_sizes
            .entry((meta.namespace, meta.kind, meta.thread))
            .or_default();
        let totals = self.thread_totals.entry(group).or_default();
        if added {
            totals.threads += u32::from(*size == 0);
            totals.documents += 1;
            *size += 1;
        } else {
            *size -= 1;
            totals.threads -= u32::from(*size == 0);
            totals.documents -= 1;
            if *size == 0 {
                self.thread_sizes
                    .remove(&(meta.namespace, meta.kind, meta.thread));
            }
        }
    }

    /// How many live documents of `kind` in `namespace` carry `thread`
    /// (whatever their validity: a thread's history is part of what it is about).
    pub fn thread_size(&self, namespace: Sym, kind: Kind, thread: Sym) -> u32 {
        self.thread_sizes
            .get(&(namespace, kind, thread))
            .copied()
            .unwrap_or(0)
    }

    /// The threads of `kind` documents in `namespace` and their documents.
    pub fn thread_totals(&self, namespace: Sym, kind: Kind) -> ThreadTotals {
        self.thread_totals
            .get(&(namespace, kind))
            .copied()
            .unwrap_or_default()
    }

    /// Forget every document (a reset).
    pub fn clear(&mut self) {
        *self = Catalog::default();
    }

    /// Keys `filter` may admit: the smallest of the thread set, the scope set
    /// and the union of the kind sets (callers still apply `admits`).
    pub fn candidates(&self, filter: &Filter) -> Vec<u64> {
        let narrow = [
            filter
                .thread
                .map(|t| self.by_thread.get(&(filter.namespace, t))),
            filter
                .scope
                .map(|s| self.by_scope.get(&(filter.namespace, s))),
        ];
        let smallest = narrow
            .into_iter()
            .flatten()
            .min_by_key(|set| set.map_or(0, HashSet::len));
        match smallest {
            Some(Some(set)) if set.len() <= self.kind_total(filter) => {
                set.iter().copied().collect()
            }
            Some(None) => Vec::new(),
            _ => self
                .kind_sets(filter)
                .flat_map(|set| set.iter().copied())
                .collect(),
        }
    }

    /// The live keys of one namespace and kind (hubness is computed per group).
    pub fn group_keys(&self, namespace: Sym, kind: Kind) -> Vec<u64> {
        self.by_kind
            .get(&(namespace, kind))
            .map_or_else(Vec::new, |set| set.iter().copied().collect())
    }

    /// Upper bound of how many keys `filter` can admit (cheap).
    pub fn estimate(&self, filter: &Filter) -> usize {
        let count = |set: Option<&HashSet<u64>>| set.map_or(0, HashSet::len);
        let mut bound = self.kind_total(filter);
        if let Some(t) = filter.thread {
            bound = bound.min(count(self.by_thread.get(&(filter.namespace, t))));
        }
        if let Some(s) = filter.scope {
            bound = bound.min(count(self.by_scope.get(&(filter.namespace, s))));
        }
        bound
    }

    fn kind_sets<'a>(&'a self, filter: &'a Filter) -> impl Iterator<Item = &'a HashSet<u64>> {
        Kind::ALL
            .into_iter()
            .filter(|k| filter.kinds.contains(*k))
            .filter_map(|k| self.by_kind.get(&(filter.namespace, k)))
    }

    fn kind_total(&self, filter: &Filter) -> usize {
        self.kind_sets(filter).map(HashSet::len).sum()
    }
}

/// The catalog behind a lock: many concurrent searches, one writer at a time.
pub type SharedCatalog = RwLock<Catalog>;

#[cfg(test)]
mod tests {
    use super::*;

    fn labels<'a>(kind: Kind, ns: &'a str, thread: Option<&'static str>) -> DocLabels<'a> {
        DocLabels {
            kind,
            namespace: ns,
            thread,
            scope: None,
            tag: None,
            valid_from: 10,
            valid_end: None,
            superseded: false,
            asks: 0,
        }
    }

    fn filter(c: &Catalog, ns: &str, kinds: KindSet, valid: ValidAt) -> Filter {
        Filter {
            namespace: c.sym(ns).unwrap_or(Sym::MAX),
            kinds,
            thread: None,
            scope: None,
            tag: None,
            exclude_scope: None,
            valid,
            now: 100,
        }
    }

    #[test]
    fn filters_by_namespace_kind_and_thread() {
        let mut c = Catalog::default();
        c.insert(1, &labels(Kind::Memory, "a", Some("t1")));
        c.insert(2, &labels(Kind::Memory, "b", None));
        c.insert(3, &labels(Kind::CodeChunk, "a", None));
        let f = filter(&c, "a", KindSet::only(Kind::Memory), ValidAt::Now);
        assert!(c.admits(1, &f));
        assert!(!c.admits(2, &f));
        assert!(!c.admits(3, &f));
        let mut by_thread = f;
        by_thread.thread = c.sym("t1");
        assert_eq!(c.candidates(&by_thread), vec![1]);
        assert_eq!(c.estimate(&by_thread), 1);
    }

    #[test]
    fn validity_and_supersession() {
        let mut c = Catalog::default();
        let mut l = labels(Kind::Memory, "a", None);
        l.valid_end = Some(50);
        c.insert(1, &l);
        let mut s = labels(Kind::Memory, "a", None);
        s.superseded = true;
        c.insert(2, &s);
        let now = filter(&c, "a", KindSet::ALL, ValidAt::Now);
        assert!(!c.admits(1, &now), "ended before now");
        assert!(!c.admits(2, &now), "superseded");
        let then = filter(&c, "a", KindSet::ALL, ValidAt::At(20));
        assert!(c.admits(1, &then));
        assert!(c.admits(2, &then), "history sees superseded records");
    }

    #[test]
    fn thread_sizes_follow_inserts_replacements_and_removals() {
        let mut c = Catalog::default();
        c.insert(1, &labels(Kind::Memory, "a", Some("t1")));
        c.insert(2, &labels(Kind::Memory, "a", Some("t1")));
        c.insert(3, &labels(Kind::Memory, "a", Some("t2")));
        c.insert(4, &labels(Kind::Entity, "a", Some("t1")));
        c.insert(5, &labels(Kind::Memory, "a", None));
        let (a, t1, t2) = (
            c.sym("a").unwrap(),
            c.sym("t1").unwrap(),
            c.sym("t2").unwrap(),
        );
        assert_eq!(c.thread_size(a, Kind::Memory, t1), 2);
        assert_eq!(c.thread_size(a, Kind::Entity, t1), 1);
        let totals = |c: &Catalog| c.thread_totals(a, Kind::Memory);
        assert_eq!(
            totals(&c),
            ThreadTotals {
                threads: 2,
                documents: 3
            }
        );
        // A replaced key moves to its new thread; a removed one leaves.
        c.insert(3, &labels(Kind::Memory, "a", Some("t1")));
        assert_eq!(c.thread_size(a, Kind::Memory, t2), 0);
        assert_eq!(
            totals(&c),
            ThreadTotals {
                threads: 1,
                documents: 3
            }
        );
        c.remove(1);
        c.remove(5);
        assert_eq!(c.thread_size(a, Kind::Memory, t1), 2);
        assert_eq!(
            totals(&c),
            ThreadTotals {
                threads: 1,
                documents: 2
            }
        );
    }

    #[test]
    fn removal_updates_secondary_sets() {
        let mut c = Catalog::default();
        c.insert(1, &labels(Kind::Memory, "a", Some("t")));
        c.remove(1);
        assert!(c.is_empty());
        let mut f = filter(&c, "a", KindSet::ALL, ValidAt::Any);
        f.thread = c.sym("t");
        assert!(c.candidates(&f).is_empty());
    }
}
