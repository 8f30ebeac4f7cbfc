//! `warpscope._warpscope`, the native part of the Python package `warpscope`
//! (`python/warpscope`): [`load`] a profile of any format the CLI reads (the GIL released, on
//! all cores), its tables as `pyarrow.Table`s (`arrow.rs`), and the CLI's JSON reports
//! (`summary`, `analyze`, `memory`, `compare`, `fleet`) as the same dicts (`profile.rs`,
//! `jobs.rs`). The API and its rules: `docs/python.md`; the typed stub:
//! `python/warpscope/_warpscope.pyi`.

mod arrow;
mod jobs;
mod profile;

use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyUserWarning};
use pyo3::prelude::*;

pub use profile::Profile;

create_exception!(
    warpscope,
    WarpscopeError,
    PyException,
    "Base class of warpscope's errors."
);
create_exception!(
    warpscope,
    LoadError,
    WarpscopeError,
    "A profile could not be read; the message names the file and the problem."
);
create_exception!(
    warpscope,
    ProfileWarning,
    PyUserWarning,
    "A problem met while reading a profile that did not stop it (also in `Profile.warnings`)."
);

/// A path given as `str` or `os.PathLike`.
fn path_arg(obj: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    obj.extract::<PathBuf>()
}

/// The module.
#[pymodule]
fn _warpscope(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("WarpscopeError", py.get_type::<WarpscopeError>())?;
    m.add("LoadError", py.get_type::<LoadError>())?;
    m.add("ProfileWarning", py.get_type::<ProfileWarning>())?;
    m.add("TABLES", profile::TABLE_NAMES.to_vec())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Profile>()?;
    m.add_class::<arrow::ArrowBatch>()?;
    m.add_function(wrap_pyfunction!(profile::load, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::compare, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::fleet, m)?)?;
    Ok(())
}
