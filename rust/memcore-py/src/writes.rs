//! [`run_write`], the one way a bound method runs a write, so that on a
//! PostgreSQL node a write overtaken by another node's write of its
//! namespace is run again rather than refused, and its position in the
//! shared log is kept for `last_write_position` (`crate::replication`).

use std::cell::RefCell;

use pyo3::prelude::*;

use memcore::Engine;
use memcore::pg::ship::{Outcome, Position};

use crate::errors::{BindResult, run};

thread_local! {
    /// The log position of the calling thread's last write through
    /// [`run_write`], with the address of the engine it wrote on (one thread
    /// may write on several nodes). `Engine::written` takes the core's own
    /// record of it, so `last_write_position` reads this one.
    static LAST_WRITE: RefCell<Option<(usize, Position)>> = const { RefCell::new(None) };
}

fn address(engine: &Engine) -> usize {
    std::ptr::from_ref(engine) as usize
}

/// Run the write `work(input)` on `engine` with the GIL released, as [`run`]
/// does. On a PostgreSQL node it goes through `Engine::written`: a write
/// another node overtook (refused, nothing written) runs again lock first,
/// on a fresh copy of `input`, and the write's position is kept for
/// `last_write_position`. A SQLite store runs `work` once on `input` itself:
/// no copy, no retry, nothing more than the check of the mode.
pub fn run_write<T, A, F>(py: Python<'_>, engine: &Engine, input: A, work: F) -> BindResult<T>
where
    T: Send,
    A: Clone + Send,
    F: Fn(A) -> memcore::Result<T> + Send,
{
    if !engine.on_postgres() {
        return run(py, engine, move || work(input));
    }
    run(py, engine, move || {
        let written = engine.written(|_| work(input.clone()))?;
        if let Some(position) = written.position {
            LAST_WRITE.with(|last| *last.borrow_mut() = Some((address(engine), position)));
        }
        Ok(written.value)
    })
}

/// Take the calling thread's last write position on `engine`.
pub fn take_last_write(engine: &Engine) -> Option<Position> {
    let recorded = LAST_WRITE.with(|last| {
        let mut slot = last.borrow_mut();
        match &*slot {
            Some((owner, _)) if *owner == address(engine) => slot.take().map(|(_, p)| p),
            _ => None,
        }
    });
    // A write that bypassed `run_write` left the core's record, newer than
    // ours (`run_write` takes the core's record of each of its writes).
    match engine.last_write_outcome() {
        Some(Outcome::Shipped(position)) => Some(position),
        _ => recorded,
    }
}
