//! What a search asks for ([`SearchQuery`]), its catalog filter, and the
//! candidate pool recall builds: shared by the read path (`search.rs`) and the
//! graph signal (`graph_rank.rs`), so neither has to import the other.

use rustc_hash::FxHashMap as HashMap;

use super::Engine;
use crate::catalog::{Catalog, Filter};
use crate::fusion::Signals;
use crate::kind::{Kind, KindSet};
use crate::temporal::{ValidAt, now_micros};

/// What to search among.
#[derive(Debug, Clone, Copy)]
pub struct SearchQuery<'a> {
    pub namespace: &'a str,
    pub kinds: KindSet,
    pub thread_id: Option<&'a str>,
    /// Kind-specific scope (project of code chunks, conversation of turns).
    pub scope: Option<&'a str>,
    /// Kind-specific tag (language of code chunks).
    pub tag: Option<&'a str>,
    /// A scope to leave out (e.g. the current conversation).
    pub exclude_scope: Option<&'a str>,
    pub valid: ValidAt,
    pub limit: usize,
}

impl<'a> SearchQuery<'a> {
    /// Currently valid memories of a namespace.
    pub fn memories(namespace: &'a str, limit: usize) -> Self {
        SearchQuery {
            namespace,
            kinds: KindSet::only(Kind::Memory),
            thread_id: None,
            scope: None,
            tag: None,
            exclude_scope: None,
            valid: ValidAt::Now,
            limit,
        }
    }
}

/// Recall candidates: key → (kind, signals).
pub(super) type Pool = HashMap<u64, (Kind, Signals)>;

impl Engine {
    /// The filter for `query`, or None when it can match nothing (an
    /// unknown namespace, thread, scope or tag).
    pub(super) fn filter(catalog: &Catalog, query: &SearchQuery<'_>) -> Option<Filter> {
        let sym = |name: Option<&str>| match name {
            None => Some(None),
            Some(n) => catalog.sym(n).map(Some),
        };
        Some(Filter {
            namespace: catalog.sym(query.namespace)?,
            kinds: query.kinds,
            thread: sym(query.thread_id)?,
            scope: sym(query.scope)?,
            tag: sym(query.tag)?,
            exclude_scope: query.exclude_scope.and_then(|s| catalog.sym(s)),
            valid: query.valid,
            now: now_micros(),
        })
    }
}
