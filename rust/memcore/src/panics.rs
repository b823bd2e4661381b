//! Panics turned into values: a panic in an index library (tantivy on a
//! damaged segment, say) must become an error the caller can report, never
//! an abort of the host process or an exception Python cannot handle.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// Run `work`, returning the panic's message if it panicked.
///
/// The closure is asserted unwind-safe: callers use it only where a panic
/// leaves at worst a derived index in doubt, which they then rebuild.
pub fn catch<T>(work: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(work)).map_err(|panic| panic_text(&*panic))
}

/// The message of a caught panic.
pub fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_message() {
        assert_eq!(catch(|| 3), Ok(3));
        let caught = catch(|| -> u8 { panic!("index out of bounds: {}", 7) });
        assert_eq!(caught, Err("index out of bounds: 7".to_owned()));
    }
}
