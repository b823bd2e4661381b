//! The only file that touches numpy: vectors in, copied once, before the GIL
//! is released (the engine keeps them, so the copy is needed anyway).

use numpy::{PyReadonlyArray1, PyReadonlyArray2};

/// Copy an optional 1-D float32 array into an owned vector.
pub fn owned_vector(array: Option<PyReadonlyArray1<'_, f32>>) -> Option<Vec<f32>> {
    array.map(|a| match a.as_slice() {
        Ok(contiguous) => contiguous.to_vec(),
        Err(_) => a.as_array().iter().copied().collect(),
    })
}

/// Copy an optional 2-D float32 array into owned rows.
pub fn owned_rows(array: Option<PyReadonlyArray2<'_, f32>>) -> Option<Vec<Vec<f32>>> {
    array.map(|a| {
        a.as_array()
            .rows()
            .into_iter()
            .map(|r| r.to_vec())
            .collect()
    })
}
