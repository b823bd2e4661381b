//! `memcore._core`: PyO3 bindings of the pure Rust core. Conversion and error
//! mapping only; every algorithm lives in the `memcore` crate.

// PyO3 extracts arguments as owned values; taking them by reference would
// only add a copy at the boundary.
#![allow(clippy::needless_pass_by_value)]

mod arrays;
mod code;
mod conversation;
mod engine;
mod errors;
mod graph;
mod json;
mod memories;
mod records;
mod restore;
mod search;

use pyo3::prelude::*;

/// Native core of memcore (storage, indexes, graph, fusion).
#[pymodule]
mod _core {
    use pyo3::prelude::*;

    #[pymodule_export]
    use crate::engine::PyEngine;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        m.add("SCHEMA_VERSION", memcore::store::schema_version())?;
        crate::errors::register_codes(m)
    }
}
