//! Term scopes: every indexed term is prefixed with the scope of its
//! document, one per (namespace, kind), so a search walks only the posting
//! lists of the scopes it asks for.
//!
//! Without scopes every namespace and kind shared each term's posting list,
//! and the catalog rejected foreign documents one by one after scoring them:
//! a memory search for a person's name paid for every entity, observation,
//! turn and code chunk (and every other tenant's documents) using the same
//! word, and block-max pruning could not skip them. Scoped terms also give
//! each namespace and kind its own document frequencies, which is what the
//! per-kind z-scores of fusion assume. The catalog still checks every hit,
//! so a hash collision between namespaces costs speed, never correctness.

use crate::kind::Kind;

/// Separates the scope from the term (never produced by the analyser,
/// which emits letters and digits only).
const SEPARATOR: char = ':';

/// The prefix of every term of `kind` documents in `namespace`:
/// the kind's digit and a 64-bit hash of the namespace, e.g. `1f3a…9c:`.
pub fn scope(namespace: &str, kind: Kind) -> String {
    format!(
        "{}{:016x}{SEPARATOR}",
        kind as u8,
        fnv1a(namespace.as_bytes())
    )
}

/// Whether `scope` is one of code chunks: a query keeps its stop words
/// there, since `if`, `in`, `not` and `for` are code's own words.
pub fn is_code(scope: &str) -> bool {
    scope.as_bytes().first() == Some(&(b'0' + Kind::CodeChunk as u8))
}

/// `term` within `scope`.
pub fn scoped(scope: &str, term: &str) -> String {
    let mut out = String::with_capacity(scope.len() + term.len());
    out.push_str(scope);
    out.push_str(term);
    out
}

/// FNV-1a, 64-bit: stable across releases and platforms (scopes are
/// persisted in the index), unlike the std and Fx hashers.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_stable_and_distinct() {
        // Persisted in every index: this value must never change.
        assert_eq!(scope("default", Kind::Memory), "1ebada5168620c5fe:");
        assert_ne!(
            scope("default", Kind::Memory),
            scope("default", Kind::Entity)
        );
        assert_ne!(scope("alice", Kind::Memory), scope("bob", Kind::Memory));
        assert_eq!(scoped("1x:", "rust"), "1x:rust");
        assert!(is_code(&scope("default", Kind::CodeChunk)));
        assert!(!is_code(&scope("default", Kind::Memory)));
    }
}
