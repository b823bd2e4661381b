//! A store written by several processes at once (every agent window starts
//! its own MCP server on the same data directory; DESIGN section 1).
//!
//! SQLite serialises the writes, and the operation log orders them: its seq
//! is given inside the write transaction, under SQLite's write lock, so seq
//! order is commit order across every process. Each process keeps its own
//! search state (catalog, graph, pending text and vectors) and follows the
//! log into it, as a read-only engine does; its own writes are published at
//! once, so it reads them at once, and the others see them within a poll.
//!
//! One process owns the index files (`index/owner.lock`): its indexer is the
//! only one that commits the text index and saves the vector graph, and it
//! must receive every write in seq order, so that the seq an index file
//! claims to cover has no hole below it. The [`Gate`] keeps that order: a
//! process's own write goes to its indexer at once when it is the next seq
//! after everything applied (always, while no other process writes); when
//! another process's writes came between, it waits in `published` for the
//! follower, which reads the log in order under this process's writer lock
//! (so no own write sits between its commit and its publication) and hands
//! every op to the indexer, its own ones without publishing them twice.
//! Processes that do not own the files keep what they apply in memory and
//! load the owner's commits and saves as they appear.

use std::collections::BTreeSet;
use std::sync::mpsc::Sender;

use parking_lot::{Mutex, MutexGuard};

/// What the follower thread is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Stop following.
    Stop,
    /// Catch up now: an own write is waiting for the writes before it.
    Wake,
}

/// The order in which this process's search state and indexer take writes.
#[derive(Debug)]
pub struct Gate {
    state: Mutex<GateState>,
    wake: Mutex<Option<Sender<Signal>>>,
}

/// Where this process's search state stands in the log.
#[derive(Debug, Default)]
pub struct GateState {
    /// Every op up to here is applied (and, in the owner, queued for its
    /// indexer) in seq order.
    pub applied: i64,
    /// Own writes past `applied` already published to the search state, which
    /// the follower hands to the indexer in their turn.
    pub published: BTreeSet<i64>,
}

/// What a published write should do with the indexer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// It is the next op: index it now.
    Now,
    /// Others' writes come first: the follower indexes it after them.
    Later,
}

impl Gate {
    /// A gate whose search state holds the log up to `applied`.
    pub fn new(applied: i64) -> Self {
        Gate {
            state: Mutex::new(GateState {
                applied,
                published: BTreeSet::new(),
            }),
            wake: Mutex::new(None),
        }
    }

    /// Where the follower sends its catch-ups' signals from now on.
    pub fn connect(&self, follower: Sender<Signal>) {
        *self.wake.lock() = Some(follower);
    }

    /// Record an own write `seq`, just published to the search state (called
    /// under this process's writer lock, in commit order).
    pub fn published(&self, seq: i64) -> Turn {
        let mut state = self.state.lock();
        if seq == state.applied + 1 {
            state.applied = seq;
            return Turn::Now;
        }
        state.published.insert(seq);
        drop(state);
        if let Some(follower) = &*self.wake.lock() {
            let _ = follower.send(Signal::Wake);
        }
        Turn::Later
    }

    /// The state, for a catch-up (under this process's writer lock).
    pub fn lock(&self) -> MutexGuard<'_, GateState> {
        self.state.lock()
    }
}

impl GateState {
    /// The catch-up applied the log up to `seq`.
    pub fn advance(&mut self, seq: i64) {
        self.applied = self.applied.max(seq);
        let applied = self.applied;
        self.published.retain(|&s| s > applied);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_writes_go_now_until_another_process_writes_between() {
        let gate = Gate::new(10);
        assert_eq!(gate.published(11), Turn::Now);
        assert_eq!(gate.published(12), Turn::Now);
        // Seqs 13 and 14 were another process's: 15 waits for them.
        assert_eq!(gate.published(15), Turn::Later);
        assert_eq!(gate.lock().published, BTreeSet::from([15]));
        gate.lock().advance(15);
        assert_eq!(gate.lock().applied, 15);
        assert!(gate.lock().published.is_empty());
        assert_eq!(gate.published(16), Turn::Now);
    }

    #[test]
    fn a_waiting_write_wakes_the_follower() {
        let gate = Gate::new(0);
        let (tx, rx) = std::sync::mpsc::channel();
        gate.connect(tx);
        assert_eq!(gate.published(3), Turn::Later);
        assert_eq!(rx.try_recv(), Ok(Signal::Wake));
    }
}
