//! memcore's fixed namespace hash and the `--namespace-range` form, from the
//! core (`memcore::pg::placement`), so the command line and a node place a
//! namespace by one definition.

use pyo3::prelude::*;

use memcore::pg::placement;

use crate::errors::BindResult;

/// The bucket of `namespace` among `buckets` (at least 1).
#[pyfunction]
pub fn namespace_bucket(namespace: &str, buckets: u32) -> u32 {
    placement::bucket(namespace, buckets)
}

/// `(lo, hi, buckets)` of a range written `LO-HI/BUCKETS`.
///
/// Raises:
///     InvalidParameterError: Not of that form, or out of bounds.
#[pyfunction]
pub fn parse_namespace_range(text: &str) -> BindResult<(u32, u32, u32)> {
    let range = placement::NamespaceRange::parse(text)?;
    Ok((range.lo, range.hi, range.buckets))
}
