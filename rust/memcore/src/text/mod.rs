//! Full-text search: tantivy BM25 over committed segments plus the pending
//! documents not committed yet, so a write is visible to the next search.
//!
//! The index stores only each document's key (u64, indexed for deletes and
//! a fast field for lookups) and its analysed text. Namespace, kind, thread
//! and validity stay in the catalog, which filters inside the scoring loop:
//! metadata changes never rewrite index documents.

pub mod analyzer;
mod groups;
mod load;
mod pending;
mod scope;
mod stop_words;
mod terms;
mod writing;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use parking_lot::{Mutex, RwLock};
use rustc_hash::FxHashMap as HashMap;
use tantivy::fieldnorm::FieldNormReader;
use tantivy::query::{
    Bm25Weight, BooleanQuery, BoostQuery, EnableScoring, Occur, Query, TermQuery,
};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{Index, IndexReader, ReloadPolicy, Searcher, Term};

use crate::error::{Error, Result};
use analyzer::ANALYZER_NAME;
pub use groups::GroupTerm;
use load::Loaded;
use pending::PendingText;
pub use scope::{scope, scoped};
use terms::{Analyser, PAIR_BOOST, QueryTerms};
use writing::Writing;

/// A document's analysed terms, each prefixed with its scope.
pub type ScopedTerms = Arc<[String]>;

const KEY: &str = "key";
/// The scoped terms. The name carries the layout of what a document's text
/// holds: an index whose field is named otherwise fails the schema check on
/// open and is rebuilt from the store. It was `body` before terms were scoped,
/// `terms` before a turn's own text counted three times in its key
/// (`store::conversations::TURN_OWN_WEIGHT`), `terms_v2` before a snake_case
/// word was indexed whole as well as in parts (`analyzer`), `terms_v3` before
/// prose held pairs of adjacent words (`terms`), `terms_v4` before Chinese,
/// Japanese and Korean text indexed as character pairs and letters were
/// folded to ASCII (`analyzer`), `terms_v5` before a document indexed each
/// CJK character besides the pairs; rename it again when a key's definition
/// or its analysis changes, so no index mixes old terms with new ones.
const BODY: &str = "terms_v6";

fn tantivy_err(context: &str, e: &impl std::fmt::Display) -> Error {
    Error::Index(format!("text index: {context}: {e}"))
}

/// Whether a match needs any query term or all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Match {
    Any,
    All,
}

impl Match {
    fn occur(self) -> Occur {
        match self {
            Match::Any => Occur::Should,
            Match::All => Occur::Must,
        }
    }
}

/// What searches read: the committed snapshot and the pending documents,
/// swapped together so no document is missed or seen twice.
struct TextState {
    searcher: Searcher,
    pending: PendingText,
}

/// The BM25 index.
pub struct TextIndex {
    index: Index,
    key: Field,
    body: Field,
    analyser: Analyser,
    /// Set at open, or later when a process that shared the store with the
    /// owner of the index files takes them over ([`TextIndex::take_over`]).
    writer: OnceLock<Mutex<Writing>>,
    /// The index lives in memory only (a read-only open found it missing or
    /// damaged): no writer can be attached to it.
    in_memory: bool,
    reader: IndexReader,
    state: RwLock<TextState>,
    /// The last failure to read the committed segments (damage that the
    /// checks on open could not see: a file changed under the process), for
    /// [`TextIndex::take_read_failure`].
    read_failure: Mutex<Option<String>>,
}

impl std::fmt::Debug for TextIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextIndex")
            .field("docs", &self.state.read().searcher.num_docs())
            .finish_non_exhaustive()
    }
}

fn schema() -> (Schema, Field, Field) {
    let mut builder = Schema::builder();
    let key = builder.add_u64_field(KEY, INDEXED | FAST);
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(ANALYZER_NAME)
        .set_index_option(IndexRecordOption::WithFreqs);
    let body = builder.add_text_field(BODY, TextOptions::default().set_indexing_options(indexing));
    (builder.build(), key, body)
}

/// Whether `dir` holds a text index of this layout (its metadata names the
/// schema [`TextIndex::open`] expects). A process sharing a store waits for
/// this, not for any index files: on the first open after an upgrade the
/// owner finds the older layout and starts it over, and a process that
/// loaded the older files meanwhile could neither read them nor, later, take
/// them over (`engine::index_owner`).
pub fn layout_is_current(dir: &Path) -> bool {
    let (expected, _, _) = schema();
    crate::panics::catch(|| Index::open_in_dir(dir).is_ok_and(|index| index.schema() == expected))
        .unwrap_or(false)
}

impl TextIndex {
    /// Open the index in `dir` with the named analyser; returns it, the
    /// op-log seq its last commit covers, and a warning when the folder was
    /// damaged.
    ///
    /// A missing folder, or one of an older layout, is started over (the op
    /// log refills it). A damaged one (see [`load`]) is set aside as
    /// `text.corrupt-<time>` and started over likewise; a read-only engine,
    /// which may not touch the files, indexes in memory instead.
    pub fn open(
        dir: &Path,
        analyzer_name: &str,
        read_only: bool,
    ) -> Result<(Self, i64, Option<String>)> {
        let analyser = Analyser::new(analyzer_name)?;
        let analyzer = analyser.words_analyzer();
        let (schema, key, body) = schema();
        let (index, seq, warning) = match load::load(dir, &schema, body, analyzer) {
            Loaded::Sound(index, seq) => (index, seq, None),
            Loaded::Absent | Loaded::OtherLayout if !read_only => {
                let _ = std::fs::remove_dir_all(dir);
                (create_in(dir, schema)?, 0, None)
            }
            loaded @ (Loaded::Absent | Loaded::OtherLayout) => (
                Index::create_in_ram(schema),
                0,
                Some(format!(
                    "The text index at {} is {}; this read-only instance searches \
                     text from memory until the store is opened for writing once.",
                    dir.display(),
                    // After an upgrade that changed the analysis (`BODY`): not damage.
                    if matches!(loaded, Loaded::OtherLayout) {
                        "of an older release's layout"
                    } else {
                        "missing"
                    }
                )),
            ),
            Loaded::Damaged(why) if read_only => (
                Index::create_in_ram(schema),
                0,
                Some(format!(
                    "The text index at {} is damaged ({why}); this read-only instance \
                     searches text from memory; open the store for writing once to rebuild it.",
                    dir.display()
                )),
            ),
            Loaded::Damaged(why) => {
                let aside = crate::fsutil::set_aside(dir)?;
                let warning = format!(
                    "The text index was damaged ({why}); it was moved to {} and is being \
                     rebuilt from the database (searches meanwhile read the documents from memory).",
                    aside.display()
                );
                (create_in(dir, schema)?, 0, Some(warning))
            }
        };
        index.tokenizers().register(ANALYZER_NAME, analyzer.clone());
        // A read-only open of a missing or damaged folder indexes in memory.
        let in_memory = warning.is_some() && read_only;
        let writer = OnceLock::new();
        if !read_only {
            let _ = writer.set(Mutex::new(Writing::open(&index, key, body)?));
        }
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| tantivy_err("reader", &e))?;
        let state = RwLock::new(TextState {
            searcher: reader.searcher(),
            pending: PendingText::default(),
        });
        let text = TextIndex {
            index,
            key,
            body,
            analyser,
            writer,
            in_memory,
            reader,
            state,
            read_failure: Mutex::new(None),
        };
        Ok((text, seq, warning))
    }

    /// The analysed terms of `text` within `scope`: its words, and for
    /// prose the pairs of adjacent content words too ([`terms`]).
    pub fn scoped_terms(&self, scope: &str, text: &str) -> ScopedTerms {
        let mut analyser = self.analyser.clone();
        if scope::is_code(scope) {
            return analyser
                .words(text)
                .iter()
                .map(|t| scoped(scope, t))
                .collect();
        }
        let mut terms = Vec::new();
        analyser.document(text, |t| terms.push(scoped(scope, t)));
        terms.into()
    }

    /// Make a document searchable now (the write path); returns its terms,
    /// which the indexer then adds to the index without analysing again.
    pub fn stage(&self, key: u64, scope: &str, text: &str) -> ScopedTerms {
        let terms = self.scoped_terms(scope, text);
        self.state.write().pending.insert(key, &terms);
        terms
    }

    /// Forget a pending document (its key was retired before any commit).
    pub fn unstage(&self, key: u64) {
        self.state.write().pending.remove(key);
    }

    /// Documents pending a commit.
    pub fn pending_len(&self) -> usize {
        self.state.read().pending.len()
    }

    /// Committed documents (deleted ones excluded).
    pub fn committed_len(&self) -> u64 {
        self.state.read().searcher.num_docs()
    }

    /// Whether the document `key` is searchable: pending, or committed and
    /// not deleted (`memcore check` samples keys with it).
    pub fn contains(&self, key: u64) -> Result<bool> {
        let state = self.state.read();
        Ok(state.pending.contains(key) || self.holds(&state.searcher, key)?)
    }

    /// Whether the committed snapshot holds the live document `key` with
    /// `term` (a scoped term, as [`TextIndex::scoped_terms`] gives) among its
    /// terms: the open samples documents with it, so another store's index
    /// whose keys happen to match is told apart by content.
    pub fn holds_term(&self, key: u64, term: &str) -> Result<bool> {
        let by_key: Box<dyn Query> = Box::new(TermQuery::new(
            Term::from_field_u64(self.key, key),
            IndexRecordOption::Basic,
        ));
        let by_term: Box<dyn Query> = Box::new(TermQuery::new(
            Term::from_field_text(self.body, term),
            IndexRecordOption::Basic,
        ));
        let query = BooleanQuery::new(vec![(Occur::Must, by_key), (Occur::Must, by_term)]);
        let found = self
            .state
            .read()
            .searcher
            .search(&query, &tantivy::collector::Count)
            .map_err(|e| tantivy_err("lookup", &e))?;
        Ok(found > 0)
    }

    /// Whether a committed snapshot holds the live document `key`.
    fn holds(&self, searcher: &Searcher, key: u64) -> Result<bool> {
        let query = TermQuery::new(
            Term::from_field_u64(self.key, key),
            IndexRecordOption::Basic,
        );
        let found = searcher
            .search(&query, &tantivy::collector::Count)
            .map_err(|e| tantivy_err("lookup", &e))?;
        Ok(found > 0)
    }

    /// The op-log seq of the newest commit on disk (a read-only index's
    /// follower compares it with the commit it loaded last).
    pub fn disk_seq(&self) -> i64 {
        load::committed_seq(&self.index)
    }

    /// A read-only index: load the newest commit on disk (the writer's) and
    /// drop the pending documents it holds. Each is looked up, not drained
    /// by seq, so a commit that does not hold them (a rebuild under way)
    /// drops none. Returns how many were dropped.
    pub fn follow_commits(&self) -> Result<usize> {
        self.reader
            .reload()
            .map_err(|e| tantivy_err("reload", &e))?;
        let searcher = self.reader.searcher();
        // Only the follower stages documents in a read-only index, and it is
        // the caller: the keys cannot change between this read and the swap.
        let pending: Vec<u64> = self.state.read().pending.keys().collect();
        let mut held = rustc_hash::FxHashSet::default();
        for key in pending {
            if self.holds(&searcher, key)? {
                held.insert(key);
            }
        }
        let mut state = self.state.write();
        state.pending.drain_keys(&held);
        state.searcher = searcher;
        Ok(held.len())
    }

    fn writer(&self) -> Result<parking_lot::MutexGuard<'_, Writing>> {
        self.writer
            .get()
            .map(Mutex::lock)
            .ok_or_else(|| Error::Index("text index is read-only".into()))
    }

    /// Become the writer of an index opened read-only from disk (a process
    /// taking over the index files of a shared store): load the newest commit
    /// first, so what it holds in memory is what the files hold. Returns the
    /// seq that commit covers.
    pub fn take_over(&self) -> Result<i64> {
        if self.in_memory {
            return Err(Error::Index(
                "this text index lives in memory (its folder was missing or damaged at \
                 open); reopen the store to own its files"
                    .into(),
            ));
        }
        if self.writer.get().is_none() {
            self.follow_commits()?;
            let writing = Writing::open(&self.index, self.key, self.body)?;
            let _ = self.writer.set(Mutex::new(writing));
        }
        Ok(self.disk_seq())
    }

    /// Queue a document for the next commit (the indexer).
    pub fn add(&self, key: u64, terms: &ScopedTerms) -> Result<()> {
        self.writer()?.add(key, terms)
    }

    /// Queue the deletion of a key for the next commit (the indexer).
    pub fn delete(&self, key: u64) -> Result<()> {
        self.writer()?.delete(key)
    }

    /// Documents and deletions sent since the last successful commit.
    pub fn uncommitted(&self) -> usize {
        self.writer.get().map_or(0, |w| w.lock().uncommitted())
    }

    /// Commit everything queued, record `seq` as covered, and swap the new
    /// snapshot in while dropping the pending documents it now holds.
    ///
    /// On failure nothing moves: the pending documents stay searchable, the
    /// recorded seq stays where the index really is, and the next commit
    /// retries everything (see [`writing`]).
    pub fn commit(&self, seq: i64) -> Result<()> {
        self.writer()?.commit(&load::payload(seq))?;
        self.reader
            .reload()
            .map_err(|e| tantivy_err("reload", &e))?;
        let searcher = self.reader.searcher();
        let mut state = self.state.write();
        state.searcher = searcher;
        state.pending.drain_through(seq.max(0) as u64);
        Ok(())
    }

    /// Forget the writer's uncommitted state (after a panic inside it); the
    /// next commit resends every change since the last one.
    pub fn discard_writer(&self) {
        if let Some(w) = self.writer.get() {
            w.lock().discard_writer();
        }
    }

    /// Merge all segments into one (maintenance), dropping deleted documents.
    /// A lone segment holding deletions is rewritten too: BM25's statistics
    /// count a deleted document until its segment is rewritten, so without
    /// this a node that indexed and then deleted a document scores every
    /// query differently from one that never saw it
    /// (`tests/reliability/test_pg_nodes.py` compares a restarted node with a
    /// new one). Searches see the merged segment at once, not only after the
    /// next commit.
    pub fn merge_segments(&self) -> Result<()> {
        let metas = self
            .index
            .searchable_segment_metas()
            .map_err(|e| tantivy_err("segments", &e))?;
        if metas.len() > 1 || metas.iter().any(tantivy::SegmentMeta::has_deletes) {
            let ids: Vec<_> = metas.iter().map(tantivy::SegmentMeta::id).collect();
            self.writer()?.merge(&ids)?;
            self.reader
                .reload()
                .map_err(|e| tantivy_err("reload", &e))?;
            let searcher = self.reader.searcher();
            self.state.write().searcher = searcher;
        }
        Ok(())
    }

    /// Delete every document (a reset); committed at once.
    pub fn clear(&self, seq: i64) -> Result<()> {
        self.writer()?.delete_all()?;
        self.state.write().pending.clear();
        self.commit(seq)
    }

    /// The `k` best BM25 matches of `query` in any of `scopes` among keys
    /// `admit` accepts, as `(key, score)`, best first. Prose scopes rank by
    /// the query's words without stop words ([`stop_words`]) and by its
    /// pairs of adjacent words ([`terms`]), code scopes by all its words.
    pub fn search(
        &self,
        query: &str,
        scopes: &[String],
        k: usize,
        admit: impl Fn(u64) -> bool,
    ) -> Result<Vec<(u64, f32)>> {
        // Each analysis only when a scope of its kind is searched
        // (search_code searches code alone, recall prose alone).
        let searches = |code: bool| scopes.iter().any(|s| scope::is_code(s) == code);
        let prose = if searches(false) {
            self.analyser.clone().query(query)
        } else {
            QueryTerms::default()
        };
        let code_words = if searches(true) {
            self.query_terms(query)
        } else {
            Vec::new()
        };
        let mut terms = Vec::new();
        for s in scopes {
            let (words, pairs) = if scope::is_code(s) {
                (&code_words, &[][..])
            } else {
                (&prose.words, &prose.pairs[..])
            };
            terms.extend(words.iter().map(|t| (scoped(s, t), 1.0)));
            terms.extend(pairs.iter().map(|t| (scoped(s, t), PAIR_BOOST)));
        }
        self.search_matching(&terms, k, Match::Any, admit)
    }

    /// Like [`TextIndex::search`] within one scope, but only documents
    /// holding every word of the query, stop words included (a conjunction:
    /// cheap even when one term is everywhere; an entity's name is matched
    /// whole, "The Who" included).
    pub fn search_all_terms(
        &self,
        query: &str,
        scope: &str,
        k: usize,
        admit: impl Fn(u64) -> bool,
    ) -> Result<Vec<(u64, f32)>> {
        let terms: Vec<(String, f32)> = self
            .query_terms(query)
            .iter()
            .map(|t| (scoped(scope, t), 1.0))
            .collect();
        self.search_matching(&terms, k, Match::All, admit)
    }

    /// Every word of `query`, once each.
    fn query_terms(&self, query: &str) -> Vec<String> {
        let mut terms = self.analyser.clone().query_words(query);
        terms.sort_unstable();
        terms.dedup();
        terms
    }

    /// The best matches of `terms`, each `(term, boost)`.
    fn search_matching(
        &self,
        terms: &[(String, f32)],
        k: usize,
        mode: Match,
        admit: impl Fn(u64) -> bool,
    ) -> Result<Vec<(u64, f32)>> {
        if terms.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let state = self.state.read();
        let mut best = TopK::new(k);
        let searched = self
            .search_committed(&state.searcher, terms, mode, &admit, &mut best)
            .and_then(|()| search_pending(&state, self.body, terms, mode, &admit, &mut best));
        if let Err(e) = &searched {
            // Every step above reads committed segments: a failure means
            // they are damaged or unreadable, not that the query was bad.
            *self.read_failure.lock() = Some(e.to_string());
        }
        searched.map(|()| best.into_sorted())
    }

    /// The last failure to read the committed segments since this was last
    /// asked, if any (the indexer asks, and requests a rebuild).
    pub fn take_read_failure(&self) -> Option<String> {
        self.read_failure.lock().take()
    }

    fn search_committed(
        &self,
        searcher: &Searcher,
        terms: &[(String, f32)],
        mode: Match,
        admit: &impl Fn(u64) -> bool,
        best: &mut TopK,
    ) -> Result<()> {
        if searcher.num_docs() == 0 {
            return Ok(());
        }
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|(t, boost)| {
                let term = Term::from_field_text(self.body, t);
                let query = TermQuery::new(term, IndexRecordOption::WithFreqs);
                // A word scores as it is; only a pair is scaled.
                let q: Box<dyn Query> = if (boost - 1.0).abs() < f32::EPSILON {
                    Box::new(query)
                } else {
                    Box::new(BoostQuery::new(Box::new(query), *boost))
                };
                (mode.occur(), q)
            })
            .collect();
        let query = BooleanQuery::new(clauses);
        let weight = query
            .weight(EnableScoring::enabled_from_searcher(searcher))
            .map_err(|e| tantivy_err("query", &e))?;
        for segment in searcher.segment_readers() {
            let keys = segment
                .fast_fields()
                .u64(KEY)
                .map_err(|e| tantivy_err("fast field", &e))?;
            let alive = segment.alive_bitset();
            let start_threshold = best.threshold();
            let mut on_hit = |doc: u32, score: f32| {
                let live = alive.is_none_or(|a| a.is_alive(doc));
                if let (true, Some(key)) = (live, keys.first(doc))
                    && admit(key)
                {
                    best.push(key, score);
                }
                best.threshold()
            };
            weight
                .for_each_pruning(start_threshold, segment, &mut on_hit)
                .map_err(|e| tantivy_err("search", &e))?;
        }
        Ok(())
    }
}

/// BM25 over the pending documents with the statistics of committed and
/// pending documents together, so a term seen only in pending text still
/// gets a sensible idf and scores stay comparable with committed ones.
fn search_pending(
    state: &TextState,
    body: Field,
    terms: &[(String, f32)],
    mode: Match,
    admit: &impl Fn(u64) -> bool,
    best: &mut TopK,
) -> Result<()> {
    let pending = &state.pending;
    if pending.is_empty() {
        return Ok(());
    }
    let searcher = &state.searcher;
    // Document frequencies count deleted-but-unmerged documents, so the
    // document count must too (max_doc, not num_docs), or df can exceed N.
    let committed_docs: u64 = searcher
        .segment_readers()
        .iter()
        .map(|s| u64::from(s.max_doc()))
        .sum();
    let mut committed_tokens = 0u64;
    for segment in searcher.segment_readers() {
        let inverted = segment
            .inverted_index(body)
            .map_err(|e| tantivy_err("stats", &e))?;
        committed_tokens += inverted.total_num_tokens();
    }
    let total_docs = committed_docs + pending.len() as u64;
    let avg_len = (committed_tokens + pending.total_tokens()) as f32 / total_docs.max(1) as f32;
    let mut scores: HashMap<u64, (f32, usize)> = HashMap::default();
    for (t, boost) in terms {
        if pending.doc_freq(t) == 0 {
            continue;
        }
        let df = doc_freq(state, body, t)?.min(total_docs);
        let weight = Bm25Weight::for_one_term_without_explain(df, total_docs, avg_len.max(1.0));
        for (key, tf, len) in pending.postings(t) {
            if admit(key) {
                let norm_id = FieldNormReader::fieldnorm_to_id(len);
                let entry = scores.entry(key).or_default();
                entry.0 += boost * weight.score(norm_id, tf);
                entry.1 += 1;
            }
        }
    }
    for (key, (score, matched)) in scores {
        if mode == Match::Any || matched == terms.len() {
            best.push(key, score);
        }
    }
    Ok(())
}

/// Documents holding `term`: committed (deleted ones not merged away yet
/// included, as tantivy counts them) and pending.
fn doc_freq(state: &TextState, body: Field, term: &str) -> Result<u64> {
    let committed = state
        .searcher
        .doc_freq(&Term::from_field_text(body, term))
        .map_err(|e| tantivy_err("stats", &e))?;
    Ok(committed + state.pending.doc_freq(term))
}

/// A new, empty index in `dir`.
fn create_in(dir: &Path, schema: Schema) -> Result<Index> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    Index::create_in_dir(dir, schema).map_err(|e| tantivy_err("create", &e))
}

/// A bounded min-heap of the best `(key, score)` pairs.
struct TopK {
    k: usize,
    heap: BinaryHeap<Reverse<(OrdF32, u64)>>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct OrdF32(f32);
impl Eq for OrdF32 {}
impl PartialOrd for OrdF32 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for OrdF32 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl TopK {
    fn new(k: usize) -> Self {
        TopK {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    fn push(&mut self, key: u64, score: f32) {
        self.heap.push(Reverse((OrdF32(score), key)));
        if self.heap.len() > self.k {
            self.heap.pop();
        }
    }

    /// Scores at or below this cannot enter the top k.
    fn threshold(&self) -> f32 {
        if self.heap.len() < self.k {
            0.0
        } else {
            self.heap.peek().map_or(0.0, |Reverse((s, _))| s.0)
        }
    }

    fn into_sorted(self) -> Vec<(u64, f32)> {
        let mut out: Vec<(u64, f32)> = self
            .heap
            .into_iter()
            .map(|Reverse((s, key))| (key, s.0))
            .collect();
        out.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::Kind;
    use tantivy::{IndexWriter, TantivyDocument};

    fn open(dir: &Path) -> TextIndex {
        TextIndex::open(dir, "english", false).unwrap().0
    }

    fn memories() -> Vec<String> {
        vec![scope("ns", Kind::Memory)]
    }

    /// Stage `text` as a memory of "ns" and return its terms (for `add`).
    fn stage(text_index: &TextIndex, key: u64, text: &str) -> ScopedTerms {
        text_index.stage(key, &memories()[0], text)
    }

    fn keys(hits: &[(u64, f32)]) -> Vec<u64> {
        let mut keys: Vec<u64> = hits.iter().map(|h| h.0).collect();
        keys.sort_unstable();
        keys
    }

    #[test]
    fn a_question_ranks_by_its_content_words_not_its_stop_words() {
        let dir = tempfile::tempdir().unwrap();
        let text = open(dir.path());
        stage(&text, 1, "The rate limit for the API is set in the gateway");
        stage(&text, 2, "User works as a backend engineer");
        // Without stop words the first shares "the", "for", "is" with the
        // question and outranks the fact about the user.
        let hits = text
            .search("what is the user's job for now", &memories(), 5, |_| true)
            .unwrap();
        assert_eq!(keys(&hits), vec![2]);
    }

    #[test]
    fn words_side_by_side_outrank_the_same_words_apart() {
        let dir = tempfile::tempdir().unwrap();
        let text = open(dir.path());
        let apart = "Her sister called about the wedding";
        let together = "Her sister's wedding is in June";
        let question = "when is her sister's wedding";
        // Pending, then committed: the pair scores the same way in both.
        let a = stage(&text, 1, apart);
        let b = stage(&text, 2, together);
        let hits = text.search(question, &memories(), 5, |_| true).unwrap();
        assert_eq!(hits[0].0, 2, "{hits:?}");
        text.add(1, &a).unwrap();
        text.add(2, &b).unwrap();
        text.commit(2).unwrap();
        let hits = text.search(question, &memories(), 5, |_| true).unwrap();
        assert_eq!(hits[0].0, 2, "{hits:?}");
        // Code keeps words only.
        let code = scope("ns", Kind::CodeChunk);
        assert!(
            !text
                .scoped_terms(&code, together)
                .iter()
                .any(|t| t.contains(' '))
        );
    }

    #[test]
    fn code_keeps_the_stop_words_that_are_its_keywords() {
        let dir = tempfile::tempdir().unwrap();
        let text = open(dir.path());
        let code = scope("ns", Kind::CodeChunk);
        text.stage(1, &code, "if key in table: return table[key]");
        text.stage(2, &code, "return table.get(key)");
        let hits = text
            .search("if key in table", &[code], 5, |_| true)
            .unwrap();
        assert_eq!(hits[0].0, 1, "{hits:?}");
        assert!(hits[0].1 > hits[1].1);
    }

    #[test]
    fn a_query_of_stop_words_only_keeps_them() {
        let dir = tempfile::tempdir().unwrap();
        let text = open(dir.path());
        stage(&text, 1, "The Who played at the festival");
        stage(&text, 2, "Festival tickets are sold out");
        let hits = text.search("the who", &memories(), 5, |_| true).unwrap();
        assert_eq!(keys(&hits), vec![1]);
    }

    #[test]
    fn staged_documents_are_found_before_and_after_commit() {
        let dir = tempfile::tempdir().unwrap();
        let text = open(dir.path());
        let a = stage(&text, 1, "The user prefers TypeScript");
        let b = stage(&text, 2, "The weather is nice today");
        let hits = text.search("typescript", &memories(), 5, |_| true).unwrap();
        assert_eq!(keys(&hits), vec![1]);
        text.add(1, &a).unwrap();
        text.add(2, &b).unwrap();
        text.commit(2).unwrap();
        assert_eq!(text.pending_len(), 0);
        let hits = text.search("typescript", &memories(), 5, |_| true).unwrap();
        assert_eq!(keys(&hits), vec![1]);
        let filtered = text
            .search("typescript", &memories(), 5, |k| k != 1)
            .unwrap();
        assert!(filtered.is_empty());
    }

    #[test]
    fn merging_drops_deleted_documents_from_the_bm25_statistics() {
        let falcon = |text: &TextIndex| text.search("falcon", &memories(), 5, |_| true).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let text = open(dir.path());
        for key in 1..=3 {
            text.add(key, &stage(&text, key, "falcon launch")).unwrap();
        }
        text.add(4, &stage(&text, 4, "weather report")).unwrap();
        text.commit(4).unwrap();
        text.delete(3).unwrap();
        text.commit(5).unwrap();
        let never_saw_it = tempfile::tempdir().unwrap();
        let other = open(never_saw_it.path());
        for (key, body) in [
            (1, "falcon launch"),
            (2, "falcon launch"),
            (4, "weather report"),
        ] {
            other.add(key, &stage(&other, key, body)).unwrap();
        }
        other.commit(4).unwrap();
        assert_eq!(keys(&falcon(&text)), vec![1, 2]);
        let (counted, clean) = (falcon(&text)[0].1, falcon(&other)[0].1);
        assert!(
            (counted - clean).abs() > 1e-4,
            "the deleted one still counts"
        );

        text.merge_segments().unwrap();
        assert_eq!(
            falcon(&text),
            falcon(&other),
            "searches see the merge at once"
        );
    }

    #[test]
    fn a_search_sees_only_the_scopes_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let text = open(dir.path());
        let other_kind = scope("ns", Kind::Entity);
        let other_namespace = scope("other", Kind::Memory);
        let committed = [
            (1, memories()[0].clone()),
            (2, other_kind.clone()),
            (3, other_namespace.clone()),
        ];
        for (key, s) in &committed {
            let terms = text.scoped_terms(s, "Falcon launch plan");
            text.add(*key, &terms).unwrap();
        }
        text.commit(3).unwrap();
        text.stage(4, &other_kind, "falcon notes");
        stage(&text, 5, "falcon notes");
        let found = |scopes: &[String]| keys(&text.search("falcon", scopes, 10, |_| true).unwrap());
        assert_eq!(found(&memories()), vec![1, 5]);
        assert_eq!(found(std::slice::from_ref(&other_kind)), vec![2, 4]);
        assert_eq!(
            found(&[memories()[0].clone(), other_namespace]),
            vec![1, 3, 5]
        );
        assert!(found(&[]).is_empty());
    }

    #[test]
    fn commit_payload_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let text = open(dir.path());
            let terms = text.scoped_terms(&memories()[0], "hello world");
            text.add(7, &terms).unwrap();
            text.commit(7).unwrap();
        }
        let (text, seq, warning) = TextIndex::open(dir.path(), "english", false).unwrap();
        assert_eq!((seq, warning), (7, None));
        let hits = text.search("hello", &memories(), 3, |_| true).unwrap();
        assert_eq!(hits[0].0, 7);
    }

    #[test]
    fn pending_and_committed_scores_are_comparable() {
        let dir = tempfile::tempdir().unwrap();
        let text = open(dir.path());
        let terms = text.scoped_terms(&memories()[0], "alpha beta gamma");
        text.add(1, &terms).unwrap();
        text.commit(1).unwrap();
        stage(&text, 2, "alpha beta gamma");
        let hits = text.search("alpha", &memories(), 5, |_| true).unwrap();
        assert_eq!(hits.len(), 2);
        assert!((hits[0].1 - hits[1].1).abs() / hits[0].1 < 0.5, "{hits:?}");
    }

    #[test]
    fn all_terms_match_only_documents_holding_every_term() {
        let dir = tempfile::tempdir().unwrap();
        let text = open(dir.path());
        let scope = &memories()[0];
        for (key, body) in [(1, "project falcon launch"), (2, "project apollo")] {
            text.add(key, &text.scoped_terms(scope, body)).unwrap();
        }
        text.commit(2).unwrap();
        stage(&text, 3, "falcon project notes");
        stage(&text, 4, "falcon only");
        let all = text
            .search_all_terms("Project Falcon", scope, 10, |_| true)
            .unwrap();
        assert_eq!(keys(&all), vec![1, 3]);
        let any = text
            .search("Project Falcon", &memories(), 10, |_| true)
            .unwrap();
        assert_eq!(any.len(), 4);
    }

    #[test]
    fn a_word_finds_cjk_and_accented_text_around_it() {
        let dir = tempfile::tempdir().unwrap();
        let text = open(dir.path());
        let a = stage(&text, 1, "用户住在上海，喜欢喝绿茶");
        let b = stage(&text, 2, "ユーザーは東京に住んでいます");
        let c = stage(&text, 3, "She moved to München, then Montréal");
        let d = stage(&text, 4, "사용자는 서울에 살고 있습니다");
        let ask =
            |text: &TextIndex, q: &str| keys(&text.search(q, &memories(), 5, |_| true).unwrap());
        for committed in [false, true] {
            assert_eq!(ask(&text, "上海"), vec![1], "committed: {committed}");
            assert_eq!(ask(&text, "東京"), vec![2]);
            assert_eq!(ask(&text, "Munchen"), vec![3]);
            assert_eq!(ask(&text, "montreal"), vec![3]);
            assert_eq!(ask(&text, "서울"), vec![4]);
            // A word of one character, inside a run.
            assert_eq!(ask(&text, "茶"), vec![1]);
            for (key, terms) in [(1, &a), (2, &b), (3, &c), (4, &d)] {
                text.add(key, terms).unwrap();
            }
            text.commit(4).unwrap();
        }
    }

    #[test]
    fn an_index_of_the_previous_layout_is_started_over() {
        // The layout before CJK pairs and folding: `terms_v4`, whose terms
        // for this text were the whole run.
        let dir = tempfile::tempdir().unwrap();
        {
            let mut builder = Schema::builder();
            let key = builder.add_u64_field(KEY, INDEXED | FAST);
            let body = builder.add_text_field("terms_v4", tantivy::schema::STRING);
            let index = Index::create_in_dir(dir.path(), builder.build()).unwrap();
            let mut writer: IndexWriter = index.writer_with_num_threads(1, 15_000_000).unwrap();
            let mut doc = TantivyDocument::default();
            doc.add_u64(key, 1);
            doc.add_text(body, scoped(&memories()[0], "用户住在上海"));
            writer.add_document(doc).unwrap();
            let mut commit = writer.prepare_commit().unwrap();
            commit.set_payload(&load::payload(1));
            commit.commit().unwrap();
        }
        assert!(!layout_is_current(dir.path()));
        // A read-only open may not start it over: it searches from memory, and
        // says why without calling the files missing or damaged.
        let (_, seq, warning) = TextIndex::open(dir.path(), "english", true).unwrap();
        assert_eq!(seq, 0);
        assert!(
            warning
                .as_deref()
                .unwrap()
                .contains("of an older release's layout"),
            "{warning:?}"
        );
        assert!(
            !layout_is_current(dir.path()),
            "a read-only open changed the files"
        );
        let (text, seq, warning) = TextIndex::open(dir.path(), "english", false).unwrap();
        assert_eq!(seq, 0, "the op log must be replayed from the start");
        assert_eq!(warning, None, "an older layout is not damage");
        assert_eq!(text.committed_len(), 0);
        assert!(layout_is_current(dir.path()));
    }

    #[test]
    fn an_index_of_the_unscoped_layout_is_started_over() {
        let dir = tempfile::tempdir().unwrap();
        {
            // The layout before scoped terms: the same key, a plain `body` field.
            let mut builder = Schema::builder();
            let key = builder.add_u64_field(KEY, INDEXED | FAST);
            let body = builder.add_text_field("body", tantivy::schema::TEXT);
            let index = Index::create_in_dir(dir.path(), builder.build()).unwrap();
            let mut writer: IndexWriter = index.writer_with_num_threads(1, 15_000_000).unwrap();
            let mut doc = TantivyDocument::default();
            doc.add_u64(key, 1);
            doc.add_text(body, "old layout");
            writer.add_document(doc).unwrap();
            let mut commit = writer.prepare_commit().unwrap();
            commit.set_payload("5");
            commit.commit().unwrap();
        }
        let (text, seq, warning) = TextIndex::open(dir.path(), "english", false).unwrap();
        assert_eq!(seq, 0, "the op log must be replayed from the start");
        assert_eq!(warning, None, "an older layout is not damage");
        assert_eq!(text.committed_len(), 0);
    }

    /// A committed index in `dir/text` holding keys 1..=3, covering seq 3.
    fn committed(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("text");
        let text = open(&path);
        for key in 1..=3 {
            text.add(
                key,
                &text.scoped_terms(&memories()[0], "damaged segment test"),
            )
            .unwrap();
        }
        text.commit(3).unwrap();
        path
    }

    /// Flip a byte in the middle of every segment file of `dir`.
    fn damage_segments(dir: &Path) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bookkeeping = path
                .extension()
                .is_some_and(|x| x.eq_ignore_ascii_case("json") || x.eq_ignore_ascii_case("lock"));
            if name.starts_with('.') || bookkeeping {
                continue;
            }
            let mut bytes = std::fs::read(&path).unwrap();
            let middle = bytes.len() / 2;
            bytes[middle] ^= 0x5a;
            std::fs::write(&path, bytes).unwrap();
        }
    }

    #[test]
    fn a_damaged_segment_is_set_aside_and_the_index_starts_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = committed(dir.path());
        damage_segments(&path);
        let (text, seq, warning) = TextIndex::open(&path, "english", false).unwrap();
        assert_eq!(seq, 0, "the op log must be replayed from the start");
        let warning = warning.expect("the damage is reported");
        assert!(warning.contains("checksum"), "{warning}");
        assert_eq!(text.committed_len(), 0);
        let aside: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("text.corrupt-"))
            .collect();
        assert_eq!(aside.len(), 1, "{aside:?}");
        drop(text);
        let (_, _, warning) = TextIndex::open(&path, "english", false).unwrap();
        assert_eq!(warning, None, "the fresh index is sound");
    }

    #[test]
    fn a_damaged_meta_file_is_named_in_a_short_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = committed(dir.path());
        let meta = path.join("meta.json");
        let json = std::fs::read_to_string(&meta).unwrap();
        // Cut inside the JSON: tantivy's error quotes the whole file.
        std::fs::write(&meta, &json[..json.len() / 2]).unwrap();
        let (_, seq, warning) = TextIndex::open(&path, "english", false).unwrap();
        assert_eq!(seq, 0);
        let warning = warning.expect("the damage is reported");
        assert!(
            warning.contains("(meta.json failed the open check)"),
            "{warning}"
        );
        assert!(!warning.contains("segments"), "no file content: {warning}");
        // The sentence and the folder it was moved to; the file held ~1 KB.
        let aside = path.display().to_string().len() + 20;
        assert!(
            warning.len() < aside + 200,
            "{} bytes: {warning}",
            warning.len()
        );
    }

    #[test]
    fn a_read_only_open_of_a_damaged_index_works_from_memory() {
        let dir = tempfile::tempdir().unwrap();
        let path = committed(dir.path());
        damage_segments(&path);
        let (text, seq, warning) = TextIndex::open(&path, "english", true).unwrap();
        assert_eq!(seq, 0);
        assert!(warning.unwrap().contains("read-only"));
        stage(&text, 1, "damaged segment test");
        assert_eq!(
            keys(&text.search("segment", &memories(), 5, |_| true).unwrap()),
            vec![1]
        );
        assert!(
            path.join("meta.json").exists(),
            "a read-only open leaves the files alone"
        );
    }

    #[test]
    fn a_commit_after_a_dropped_writer_still_holds_every_document() {
        let dir = tempfile::tempdir().unwrap();
        let text = open(dir.path());
        let a = stage(&text, 1, "first note");
        text.add(1, &a).unwrap();
        // As after a failed commit or a panic: the writer's state is gone.
        text.discard_writer();
        let b = stage(&text, 2, "second note");
        text.add(2, &b).unwrap();
        text.commit(2).unwrap();
        assert_eq!((text.committed_len(), text.pending_len()), (2, 0));
        assert_eq!(
            keys(&text.search("note", &memories(), 5, |_| true).unwrap()),
            vec![1, 2]
        );
        assert_eq!(text.uncommitted(), 0);
    }

    #[test]
    fn deleted_keys_disappear_after_commit() {
        let dir = tempfile::tempdir().unwrap();
        let text = open(dir.path());
        text.add(1, &text.scoped_terms(&memories()[0], "rust core"))
            .unwrap();
        text.commit(1).unwrap();
        text.delete(1).unwrap();
        text.commit(2).unwrap();
        let hits = text.search("rust", &memories(), 3, |_| true).unwrap();
        assert!(hits.is_empty());
    }
}
