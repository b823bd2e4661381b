//! The one place core errors become Python exceptions: each variant to its own
//! class, each class carrying its public code (docs/configuration.md, "Errors"), and the
//! one place core work runs without the GIL ([`run`]), where a panic in the
//! core becomes a `StorageError` instead of crossing into Python.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};

use memcore::{Engine, ErrorCode};

use crate::json::to_python;

create_exception!(
    memcore,
    MemcoreError,
    PyException,
    "Base class of every memcore error."
);
create_exception!(
    memcore,
    NotFoundError,
    MemcoreError,
    "A record does not exist."
);
create_exception!(
    memcore,
    MemoryNotFoundError,
    NotFoundError,
    "A memory id does not exist."
);
create_exception!(
    memcore,
    InvalidParameterError,
    MemcoreError,
    "An argument is invalid."
);
create_exception!(
    memcore,
    ValidationFailedError,
    MemcoreError,
    "A request breaks a domain rule."
);
create_exception!(
    memcore,
    StorageError,
    MemcoreError,
    "The store could not be read or written."
);
create_exception!(
    memcore,
    EmbeddingError,
    MemcoreError,
    "Embeddings are unavailable or failed."
);
create_exception!(
    memcore,
    DimensionMismatchError,
    MemcoreError,
    "Stored vectors and model differ."
);
create_exception!(
    memcore,
    ResourceBusyError,
    MemcoreError,
    "The resource is held elsewhere."
);
create_exception!(
    memcore,
    UnauthorizedError,
    MemcoreError,
    "The caller is not authorised."
);
create_exception!(
    memcore,
    PayloadTooLargeError,
    MemcoreError,
    "A request exceeds a size limit."
);

/// The exception class of each public code. The match is exhaustive, so a
/// code added to the core's list does not compile here until it has a class.
fn class_of(py: Python<'_>, code: ErrorCode) -> Bound<'_, PyType> {
    match code {
        ErrorCode::MemoryNotFound => py.get_type::<MemoryNotFoundError>(),
        ErrorCode::NotFound => py.get_type::<NotFoundError>(),
        ErrorCode::InvalidParameter => py.get_type::<InvalidParameterError>(),
        ErrorCode::ValidationFailed => py.get_type::<ValidationFailedError>(),
        ErrorCode::Storage => py.get_type::<StorageError>(),
        ErrorCode::Embedding => py.get_type::<EmbeddingError>(),
        ErrorCode::DimensionMismatch => py.get_type::<DimensionMismatchError>(),
        ErrorCode::ResourceBusy => py.get_type::<ResourceBusyError>(),
        ErrorCode::Unauthorized => py.get_type::<UnauthorizedError>(),
        ErrorCode::PayloadTooLarge => py.get_type::<PayloadTooLargeError>(),
    }
}

/// Add the exception classes to the module, each with its `code` class
/// attribute, from the core's one list of codes; `ERROR_CODES` lists them
/// for Python (a test checks `memcore.errors` has a class for each).
pub fn register_codes(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    let base = py.get_type::<MemcoreError>();
    base.setattr("code", "MEMCORE_ERROR")?;
    module.add(base.name()?.to_str()?, base)?;
    for &code in ErrorCode::ALL {
        let class = class_of(py, code);
        class.setattr("code", code.as_str())?;
        module.add(class.name()?.to_str()?, class)?;
    }
    let codes: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    module.add("ERROR_CODES", PyTuple::new(py, codes)?)
}

/// An error on its way out of a bound method: a core error to translate, or
/// a Python error raised while converting values. (A local type, because
/// neither the core error nor `PyErr` is ours to implement `From` between.)
#[derive(Debug)]
pub enum BindError {
    Core(memcore::Error),
    Python(PyErr),
    /// The core panicked; the message says what it was doing.
    Panic(String),
}

impl From<memcore::Error> for BindError {
    fn from(e: memcore::Error) -> Self {
        BindError::Core(e)
    }
}

impl From<PyErr> for BindError {
    fn from(e: PyErr) -> Self {
        BindError::Python(e)
    }
}

impl From<BindError> for PyErr {
    fn from(error: BindError) -> PyErr {
        match error {
            BindError::Core(e) => core_to_python(e),
            BindError::Python(e) => e,
            BindError::Panic(message) => StorageError::new_err(message),
        }
    }
}

fn core_to_python(error: memcore::Error) -> PyErr {
    Python::attach(|py| {
        let err = PyErr::from_type(class_of(py, error.error_code()), error.to_string());
        // Best effort: a failure to attach details must not hide the error.
        if let Ok(details) = details(py, &error) {
            let _ = err.value(py).setattr("details", details);
        }
        err
    })
}

fn details<'py>(py: Python<'py>, error: &memcore::Error) -> PyResult<Bound<'py, PyDict>> {
    use memcore::Error as E;
    let out = PyDict::new(py);
    match error {
        E::MemoryNotFound { id } => out.set_item("id", memcore::error::shown_key(id))?,
        E::NotFound { kind, id } => {
            out.set_item("kind", kind)?;
            out.set_item("id", memcore::error::shown_key(id))?;
        }
        E::InvalidParameter { field, .. } => out.set_item("field", field)?,
        E::ValidationFailed { details, .. } => out.set_item("problems", to_python(py, details)?)?,
        E::Damaged { path, .. } => out.set_item("path", path)?,
        _ => {}
    }
    Ok(out)
}

/// Result type of every bound method.
pub type BindResult<T> = Result<T, BindError>;

/// Run core work on `engine` with the GIL released.
///
/// A panic inside (tantivy on a damaged segment, say) would otherwise reach
/// Python as `PanicException`, a `BaseException` that servers do not catch:
/// here it becomes a `StorageError` (code STORAGE_ERROR), and the engine is
/// marked so its indexes are rebuilt from the database at the next open.
pub fn run<T, F>(py: Python<'_>, engine: &Engine, work: F) -> BindResult<T>
where
    T: Send,
    F: FnOnce() -> memcore::Result<T> + Send,
{
    match py.detach(|| memcore::panics::catch(work)) {
        Ok(done) => Ok(done?),
        Err(panic) => {
            let reason = format!("internal error: {panic}");
            engine.mark_for_rebuild(&reason);
            Err(BindError::Panic(format!(
                "Storage error: {reason}; the indexes will be rebuilt from the database \
                 (at the next open, or now with rebuild_indexes)."
            )))
        }
    }
}

/// [`run`] for work that has no engine yet (opening one).
pub fn run_unbound<T, F>(py: Python<'_>, work: F) -> BindResult<T>
where
    T: Send,
    F: FnOnce() -> memcore::Result<T> + Send,
{
    match py.detach(|| memcore::panics::catch(work)) {
        Ok(done) => Ok(done?),
        Err(panic) => Err(BindError::Panic(format!(
            "Storage error: internal error while opening: {panic}; deleting the store's \
             index folder makes the next open rebuild the indexes from the database."
        ))),
    }
}
