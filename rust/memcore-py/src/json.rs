//! serde_json values to Python objects (for error details and JSON fields).

use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// Convert a JSON value into the equivalent Python object.
pub fn to_python(py: Python<'_>, value: &serde_json::Value) -> PyResult<Py<PyAny>> {
    use serde_json::Value as V;
    Ok(match value {
        V::Null => py.None(),
        V::Bool(b) => b.into_py_any(py)?,
        V::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.into_py_any(py)?,
            (None, Some(f)) => f.into_py_any(py)?,
            (None, None) => n.to_string().into_py_any(py)?,
        },
        V::String(s) => s.into_py_any(py)?,
        V::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any().unbind()
        }
        V::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_python(py, v)?)?;
            }
            dict.into_any().unbind()
        }
    })
}
