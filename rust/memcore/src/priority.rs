//! Background work yields the CPU to callers.
//!
//! The indexer, the WAL checkpointer and tantivy's indexing and merge
//! threads run beside the threads that serve calls. On a small machine (two
//! cores) a burst of writes keeps the indexer busy while the caller's next
//! `store_memory` waits a scheduler slice (milliseconds) for a core: at full
//! write rate that was the p99 of a 0.1 ms call. At nice 10 the scheduler
//! gives callers the core as soon as they wake, and background work takes
//! what is left, which is all of it when nobody calls.
//!
//! Linux only (a thread's nice value is per thread there, and inherited by
//! the threads it spawns); elsewhere these are no-ops.

/// Nice value of background threads (callers keep their own, usually 0).
pub const BACKGROUND_NICE: i32 = 10;

/// Lower the calling thread's priority to [`BACKGROUND_NICE`] (never raise it).
fn lower_current_thread() {
    #[cfg(target_os = "linux")]
    linux::lower_current_thread();
}

/// Start a named, long-lived thread that runs `f` at background priority.
pub fn spawn_named<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<T>> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            lower_current_thread();
            f()
        })
}

/// Run `f` on a helper thread at background priority and return its result,
/// so threads that `f` spawns (a library's worker pools) inherit the priority.
pub fn spawn_background<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                lower_current_thread();
                f()
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// The calling thread's nice value (0 where threads have none of their own).
pub fn current_nice() -> i32 {
    #[cfg(target_os = "linux")]
    return linux::current_nice();
    #[cfg(not(target_os = "linux"))]
    0
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod linux {
    use super::BACKGROUND_NICE;

    pub fn current_nice() -> i32 {
        // SAFETY: plain syscalls on the calling thread's own id. getpriority
        // may return -1 as a value, so errors are told apart by errno.
        unsafe {
            let tid = libc::gettid() as libc::id_t;
            *libc::__errno_location() = 0;
            let nice = libc::getpriority(libc::PRIO_PROCESS, tid);
            if nice == -1 && *libc::__errno_location() != 0 {
                0
            } else {
                nice
            }
        }
    }

    pub fn lower_current_thread() {
        let current = current_nice();
        if current >= BACKGROUND_NICE {
            return;
        }
        // SAFETY: as above. A failure leaves the priority as it was, which
        // is correct, only slower for callers.
        unsafe {
            let tid = libc::gettid() as libc::id_t;
            libc::setpriority(libc::PRIO_PROCESS, tid, BACKGROUND_NICE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_threads_run_at_lower_priority_and_their_children_inherit_it() {
        let caller = current_nice();
        let (own, child) = spawn_background(|| {
            let child = std::thread::spawn(current_nice).join().unwrap();
            (current_nice(), child)
        });
        assert_eq!(current_nice(), caller, "the caller's priority is untouched");
        if cfg!(target_os = "linux") {
            assert_eq!(own, BACKGROUND_NICE.max(caller));
            assert_eq!(child, own);
        }
    }
}
