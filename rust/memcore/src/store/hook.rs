//! One hook between a write and its SQLite commit, for a store that is the
//! local replica of a shared truth (docs/scale-out.md, "Putting the engine on
//! PostgreSQL", (b)): the write's statements have run in the transaction but
//! nothing is committed yet, so the hook can ship what the write changed and
//! commit it elsewhere first. If the hook fails, the SQLite transaction rolls
//! back and the caller gets the hook's error: nothing is half-written.
//!
//! A store has at most one hook, set once; a store without one (every
//! embedded store) pays one never-taken branch per write.

use std::sync::Arc;

use rusqlite::Transaction;

use crate::error::Result;

/// Runs inside every write's transaction, after its statements and before
/// its commit, with the writer lock held (so calls never overlap and come in
/// commit order).
pub trait WriteHook: Send + Sync + std::fmt::Debug {
    /// Commit the write's changes elsewhere first; an error rolls it back.
    fn before_commit(&self, tx: &Transaction<'_>) -> Result<()>;
}

/// A hook its owner also keeps a handle on (to act on it between writes).
impl<H: WriteHook> WriteHook for Arc<H> {
    fn before_commit(&self, tx: &Transaction<'_>) -> Result<()> {
        (**self).before_commit(tx)
    }
}
