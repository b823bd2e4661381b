//! The one place core errors become Python exceptions: each variant to its own
//! class, each class carrying its public code (docs/configuration.md, "Errors"), and the
//! one place core work runs without the GIL ([`run`]), where a panic in the
//! core becomes a `StorageError` instead of crossing into Python.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use memcore::Engine;

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

/// Set the `code` class attribute on every exception class.
pub fn register_codes(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    let classes: [(Bound<'_, pyo3::types::PyType>, &str); 11] = [
        (py.get_type::<MemcoreError>(), "MEMCORE_ERROR"),
        (py.get_type::<NotFoundError>(), "NOT_FOUND"),
        (py.get_type::<MemoryNotFoundError>(), "MEMORY_NOT_FOUND"),
        (py.get_type::<InvalidParameterError>(), "INVALID_PARAMETER"),
        (py.get_type::<ValidationFailedError>(), "VALIDATION_FAILED"),
        (py.get_type::<StorageError>(), "STORAGE_ERROR"),
        (py.get_type::<EmbeddingError>(), "EMBEDDING_ERROR"),
        (
            py.get_type::<DimensionMismatchError>(),
            "DIMENSION_MISMATCH",
        ),
        (py.get_type::<ResourceBusyError>(), "RESOURCE_BUSY"),
        (py.get_type::<UnauthorizedError>(), "UNAUTHORIZED"),
        (py.get_type::<PayloadTooLargeError>(), "PAYLOAD_TOO_LARGE"),
    ];
    for (class, code) in classes {
        class.setattr("code", code)?;
        module.add(class.name()?.to_str()?, class)?;
    }
    Ok(())
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
    use memcore::Error as E;
    let message = error.to_string();
    let err = match &error {
        E::MemoryNotFound { .. } => MemoryNotFoundError::new_err(message),
        E::NotFound { .. } => NotFoundError::new_err(message),
        E::InvalidParameter { .. } => InvalidParameterError::new_err(message),
        E::ValidationFailed { .. } => ValidationFailedError::new_err(message),
        E::Storage(_) | E::Io { .. } | E::Index(_) | E::Damaged { .. } | E::ReadOnly { .. } => {
            StorageError::new_err(message)
        }
        E::DimensionMismatch { .. } => DimensionMismatchError::new_err(message),
        E::ResourceBusy { .. } => ResourceBusyError::new_err(message),
        E::PayloadTooLarge { .. } => PayloadTooLargeError::new_err(message),
    };
    Python::attach(|py| {
        // Best effort: a failure to attach details must not hide the error.
        if let Ok(details) = details(py, &error) {
            let _ = err.value(py).setattr("details", details);
        }
    });
    err
}

fn details<'py>(py: Python<'py>, error: &memcore::Error) -> PyResult<Bound<'py, PyDict>> {
    use memcore::Error as E;
    let out = PyDict::new(py);
    match error {
        E::MemoryNotFound { id } => out.set_item("id", id)?,
        E::NotFound { kind, id } => {
            out.set_item("kind", kind)?;
            out.set_item("id", id)?;
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
