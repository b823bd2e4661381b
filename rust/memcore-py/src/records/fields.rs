//! How each kind of field of a record becomes a Python value (`to_py`), a
//! JSON-ready value for `to_dict()` (`to_plain`), its stored form for an export
//! page (`to_raw`), and how it is read back from Python (`from_py`, for the
//! constructor that pickling and copying call).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pyclass::boolean_struct::True;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use pyo3::{IntoPyObjectExt, PyClass};

use memcore::{MemoryType, Source, Tier};

use super::Plain;
use super::time;

/// A native record class: frozen (so it can be read without a borrow) and
/// able to give its `to_dict()`.
pub trait Native: PyClass<Frozen = True> + Plain + Sync {}

impl<T: PyClass<Frozen = True> + Plain + Sync> Native for T {}

/// One field of a native record.
pub trait Field: Sized {
    /// The attribute's value.
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>>;

    /// The value in `to_dict()`: the attribute's value unless it has a
    /// JSON-ready form of its own (times as ISO text, records as dicts).
    fn to_plain(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.to_py(py)
    }

    /// The value in an export page: as stored (times in integer microseconds,
    /// metadata as its JSON text), so an import replays it exactly.
    fn to_raw(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.to_py(py)
    }

    /// Put the field into a `to_dict()` under `key`.
    fn write_plain(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyString>,
        out: &Bound<'_, PyDict>,
    ) -> PyResult<()> {
        out.set_item(key, self.to_plain(py)?)
    }

    /// The field from the value its attribute would have.
    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self>;
}

/// Plain values: the Python value is the JSON-ready one.
macro_rules! plain_fields {
    ($($ty:ty),+) => {$(
        impl Field for $ty {
            fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
                self.into_py_any(py)
            }

            fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
                value.extract()
            }
        }
    )+};
}
plain_fields!(String, f64, f32, i64, usize, u64, bool);

impl<T: Field> Field for Option<T> {
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self {
            Some(v) => v.to_py(py),
            None => Ok(py.None()),
        }
    }

    fn to_plain(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self {
            Some(v) => v.to_plain(py),
            None => Ok(py.None()),
        }
    }

    fn to_raw(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self {
            Some(v) => v.to_raw(py),
            None => Ok(py.None()),
        }
    }

    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        if value.is_none() {
            Ok(None)
        } else {
            T::from_py(value).map(Some)
        }
    }
}

/// A moment: a datetime as an attribute, ISO 8601 text in `to_dict()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp(pub i64);

impl Field for Stamp {
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(time::datetime(py, self.0)?.unbind())
    }

    fn to_plain(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        time::iso(self.0).into_py_any(py)
    }

    fn to_raw(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.0.into_py_any(py)
    }

    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        time::micros(value).map(Stamp)
    }
}

/// Metadata: JSON text, parsed by Python's `json` on first read and kept, so
/// the attribute is one object (as a dataclass field is) and a record never
/// read costs no parse. Most memories carry none (`{}`), answered directly.
pub struct Json {
    text: Option<String>,
    /// Text that does not parse reads as the text itself (a procedure's
    /// arguments, validated when stored but kept readable whatever they hold).
    lenient: bool,
    value: PyOnceLock<Py<PyAny>>,
}

impl std::fmt::Debug for Json {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Json")
            .field("text", &self.text)
            .finish_non_exhaustive()
    }
}

impl Json {
    pub fn new(text: String) -> Self {
        Self {
            text: Some(text),
            lenient: false,
            value: PyOnceLock::new(),
        }
    }

    /// JSON text that reads as itself when it does not parse.
    pub fn lenient(text: String) -> Self {
        Self {
            lenient: true,
            ..Self::new(text)
        }
    }

    fn parse(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        match self.text.as_deref() {
            None | Some("{}") => Ok(PyDict::new(py).into_any().unbind()),
            Some(text) => {
                let parsed = LOADS
                    .get_or_try_init(py, || {
                        py.import("json")?.getattr("loads").map(Bound::unbind)
                    })?
                    .call1(py, (text,));
                match parsed {
                    Err(e) if self.lenient && e.is_instance_of::<PyValueError>(py) => {
                        text.into_py_any(py)
                    }
                    parsed => parsed,
                }
            }
        }
    }
}

impl Field for Json {
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.value
            .get_or_try_init(py, || self.parse(py))
            .map(|v| v.clone_ref(py))
    }

    fn to_raw(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        static DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        match &self.text {
            Some(text) => text.into_py_any(py),
            None => DUMPS
                .get_or_try_init(py, || {
                    py.import("json")?.getattr("dumps").map(Bound::unbind)
                })?
                .call1(py, (self.to_py(py)?,)),
        }
    }

    /// A fresh copy: `to_dict()` output is the caller's to change.
    fn to_plain(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.text {
            Some(_) => self.parse(py),
            None => Ok(copy_plain(self.to_py(py)?.bind(py))?.unbind()),
        }
    }

    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        let value_cell = PyOnceLock::new();
        let _ = value_cell.set(value.py(), value.clone().unbind());
        Ok(Self {
            text: None,
            lenient: false,
            value: value_cell,
        })
    }
}

/// Dicts and lists copied all the way down (tuples become lists), as `to_dict()`
/// has always returned a record's metadata.
fn copy_plain<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = value.py();
    if let Ok(dict) = value.cast::<PyDict>() {
        let out = PyDict::new(py);
        for (k, v) in dict.iter() {
            out.set_item(k, copy_plain(&v)?)?;
        }
        return Ok(out.into_any());
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let items = value
            .try_iter()?
            .map(|v| copy_plain(&v?))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(PyList::new(py, items)?.into_any());
    }
    Ok(value.clone())
}

/// Texts shown as a tuple (a record's attributes do not change), a list in `to_dict()`.
#[derive(Debug)]
pub struct Texts(pub Vec<String>);

impl Field for Texts {
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        PyTuple::new(py, &self.0)?.into_py_any(py)
    }

    fn to_plain(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        PyList::new(py, &self.0)?.into_py_any(py)
    }

    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        value
            .try_iter()?
            .map(|v| v?.extract())
            .collect::<PyResult<_>>()
            .map(Texts)
    }
}

/// Texts shown as a list, as the dataclass records held them (a context item's
/// shared documents, a check's integrity messages): a new list at each read.
#[derive(Debug)]
pub struct Strings(pub Vec<String>);

impl Field for Strings {
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        PyList::new(py, &self.0)?.into_py_any(py)
    }

    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        Texts::from_py(value).map(|t| Strings(t.0))
    }
}

impl Field for MemoryType {
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.as_str().into_py_any(py)
    }

    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(MemoryType::parse(&value.extract::<String>()?)
            .map_err(crate::errors::BindError::from)?)
    }
}

impl Field for Source {
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.as_str().into_py_any(py)
    }

    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Source::parse(&value.extract::<String>()?).map_err(crate::errors::BindError::from)?)
    }
}

impl Field for Tier {
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.as_str().into_py_any(py)
    }

    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Tier::parse(&value.extract::<String>()?).map_err(crate::errors::BindError::from)?)
    }
}

/// A record held by another (a hit's scores): itself as the attribute, its
/// dict in `to_dict()`.
impl<T> Field for Py<T>
where
    T: Native,
{
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.clone_ref(py).into_any())
    }

    fn to_plain(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.get().plain(py)?.into_any().unbind())
    }

    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(value.cast::<T>()?.clone().unbind())
    }
}

/// A record whose fields `to_dict()` lists in place of the record itself (a
/// hit is its memory's fields plus `scores`).
#[derive(Debug)]
pub struct Flat<T>(pub Py<T>);

impl<T> Field for Flat<T>
where
    T: Native,
{
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.0.to_py(py)
    }

    fn write_plain(
        &self,
        py: Python<'_>,
        _key: &Bound<'_, PyString>,
        out: &Bound<'_, PyDict>,
    ) -> PyResult<()> {
        out.update(self.0.get().plain(py)?.as_mapping())
    }

    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        Py::<T>::from_py(value).map(Flat)
    }
}

/// A list of records (a view's observations): one list object as the
/// attribute, a list of dicts in `to_dict()`.
#[derive(Debug)]
pub struct Records<T>(Py<PyList>, std::marker::PhantomData<fn() -> T>);

impl<T> Records<T>
where
    T: Native,
{
    /// The records as a new Python list.
    pub fn new<I>(py: Python<'_>, items: I) -> PyResult<Self>
    where
        I: IntoIterator<Item = T>,
        T: Into<pyo3::PyClassInitializer<T>>,
    {
        Self::try_new(py, items.into_iter().map(Ok))
    }

    /// The records, each made by a conversion that may fail, as a new Python list.
    pub fn try_new<I>(py: Python<'_>, items: I) -> PyResult<Self>
    where
        I: IntoIterator<Item = PyResult<T>>,
        T: Into<pyo3::PyClassInitializer<T>>,
    {
        let list = PyList::empty(py);
        for item in items {
            list.append(Bound::new(py, item?)?)?;
        }
        Ok(Self(list.unbind(), std::marker::PhantomData))
    }

    /// The Python list the attribute shows.
    pub fn list<'py>(&self, py: Python<'py>) -> &Bound<'py, PyList> {
        self.0.bind(py)
    }
}

impl<T> Field for Records<T>
where
    T: Native,
{
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.0.clone_ref(py).into_any())
    }

    fn to_plain(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let list = self.0.bind(py);
        let out = PyList::empty(py);
        for item in list.iter() {
            out.append(item.cast::<T>()?.get().plain(py)?)?;
        }
        Ok(out.into_any().unbind())
    }

    fn from_py(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        let list = PyList::empty(value.py());
        for item in value.try_iter()? {
            let item = item?;
            item.cast::<T>()?;
            list.append(item)?;
        }
        Ok(Self(list.unbind(), std::marker::PhantomData))
    }
}
