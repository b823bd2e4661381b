//! The records the API returns, as frozen native classes (`memcore.MemoryRecord`, …).
//!
//! A record keeps its fields as Rust values and makes the Python value of a
//! field only when it is read: a search or a listing returns many records whose
//! fields are mostly never looked at, and building every string, float and
//! datetime up front was most of what returning them cost. The [`record!`]
//! macro declares a class once from its field list: the getters, a constructor
//! taking every field (which is also how a record is unpickled and copied),
//! `to_dict()` (JSON-ready: ISO 8601 times), equality, `repr`, `__reduce__`, and
//! the export page's dict (`raw_dict`, as stored). How one field becomes a
//! Python value, a JSON-ready value and a stored value is decided in one place,
//! its [`Field`] implementation in `fields.rs`.

pub mod code;
pub mod conversation;
pub mod facts;
mod fields;
pub mod graph;
pub mod store;
mod time;

pub use fields::{Field, Flat, Json, Records, Stamp, Strings, Texts};

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A native record: its JSON-ready dict, for `to_dict()` and for the records
/// that hold it (a hit's memory, a view's observations).
pub trait Plain {
    fn plain<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>>;
}

/// The key a field has in `to_dict()`: its name, unless the record says otherwise.
macro_rules! field_key {
    ($field:ident) => {
        stringify!($field)
    };
    ($field:ident, $key:literal) => {
        $key
    };
}
pub(crate) use field_key;

/// Declare a frozen record class from its fields (`name: Type`, or
/// `name as "key": Type` when `to_dict()` names it differently). Each field's
/// type implements [`Field`]; the class gets a getter per field, a constructor
/// taking the fields in order (positional or by name, as a dataclass's),
/// `__match_args__` (the field names), `to_dict()`, `__eq__` (same class, equal
/// fields), `__hash__`, `__repr__`, `__reduce__` (so pickle, `copy.copy` and
/// `copy.deepcopy` work), and `raw_dict()` for export pages.
macro_rules! record {
    (
        $(#[doc = $doc:literal])*
        $name:ident {
            $( $(#[doc = $fdoc:literal])* $field:ident $(as $key:literal)? : $ty:ty ),+ $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[pyclass(frozen, module = "memcore._core")]
        #[derive(Debug)]
        pub struct $name {
            $( pub $field: $ty, )+
        }

        impl $crate::records::Plain for $name {
            fn plain<'py>(
                &self,
                py: pyo3::Python<'py>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::types::PyDict>> {
                let out = pyo3::types::PyDict::new(py);
                $(
                    $crate::records::Field::write_plain(
                        &self.$field,
                        py,
                        pyo3::intern!(py, $crate::records::field_key!($field $(, $key)?)),
                        &out,
                    )?;
                )+
                Ok(out)
            }
        }

        impl $name {
            /// The record as a dict of an export page: every field as stored (`to_raw`),
            /// under its `to_dict()` key.
            #[allow(dead_code)] // only the records an export page holds use it
            pub fn raw_dict<'py>(
                &self,
                py: pyo3::Python<'py>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::types::PyDict>> {
                let out = pyo3::types::PyDict::new(py);
                $(
                    out.set_item(
                        pyo3::intern!(py, $crate::records::field_key!($field $(, $key)?)),
                        $crate::records::Field::to_raw(&self.$field, py)?,
                    )?;
                )+
                Ok(out)
            }

            /// Every field as its Python value, in declaration order.
            fn values<'py>(
                &self,
                py: pyo3::Python<'py>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::types::PyTuple>> {
                pyo3::types::PyTuple::new(
                    py,
                    [$( $crate::records::Field::to_py(&self.$field, py)?, )+],
                )
            }
        }

        #[pymethods]
        impl $name {
            /// The field names in order, as a dataclass lists them (and pattern matching uses).
            #[classattr]
            fn __match_args__(
                py: pyo3::Python<'_>,
            ) -> pyo3::PyResult<pyo3::Py<pyo3::types::PyTuple>> {
                Ok(pyo3::types::PyTuple::new(py, [$( stringify!($field), )+])?.unbind())
            }

            #[new]
            #[pyo3(signature = ($($field),+))]
            #[allow(clippy::too_many_arguments)]
            fn __new__($($field: &pyo3::Bound<'_, pyo3::PyAny>),+) -> pyo3::PyResult<Self> {
                Ok(Self { $( $field: <$ty as $crate::records::Field>::from_py($field)?, )+ })
            }

            $(
                $(#[doc = $fdoc])*
                #[getter]
                // The getter is named as the public attribute (`from_name`), not by Rust's
                // conventions for conversions.
                #[allow(clippy::wrong_self_convention)]
                fn $field(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                    $crate::records::Field::to_py(&self.$field, py)
                }
            )+

            /// The record as JSON-ready plain values (ISO 8601 times).
            fn to_dict<'py>(
                &self,
                py: pyo3::Python<'py>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::types::PyDict>> {
                $crate::records::Plain::plain(self, py)
            }

            fn __eq__(
                slf: &pyo3::Bound<'_, Self>,
                other: &pyo3::Bound<'_, pyo3::PyAny>,
            ) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                let py = slf.py();
                if !other.get_type().is(slf.get_type()) {
                    return Ok(py.NotImplemented());
                }
                let other = other.cast::<Self>()?.get();
                let same = slf.get().values(py)?.eq(other.values(py)?)?;
                Ok(pyo3::types::PyBool::new(py, same).to_owned().into_any().unbind())
            }

            /// The hash of the fields, as a frozen dataclass's (a record holding a dict
            /// of metadata is not hashable, as before).
            fn __hash__(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<isize> {
                self.values(py)?.hash()
            }

            fn __repr__(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<String> {
                let values = self.values(py)?;
                let names = [$( stringify!($field), )+];
                let mut parts = Vec::with_capacity(names.len());
                for (name, value) in names.iter().zip(values.iter()) {
                    parts.push(format!("{name}={}", value.repr()?));
                }
                Ok(format!("{}({})", stringify!($name), parts.join(", ")))
            }

            fn __reduce__<'py>(
                slf: &pyo3::Bound<'py, Self>,
            ) -> pyo3::PyResult<(
                pyo3::Bound<'py, pyo3::types::PyType>,
                pyo3::Bound<'py, pyo3::types::PyTuple>,
            )> {
                Ok((slf.get_type(), slf.get().values(slf.py())?))
            }
        }
    };
}
pub(crate) use record;
