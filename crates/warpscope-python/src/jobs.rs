//! The reports over several profiles: `warpscope.compare` (`warpscope compare --format json`)
//! and `warpscope.fleet` (`warpscope fleet --format json`).

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use warpscope_core::analysis::compare::{RunLabel, compare_runs, order_by_sweep};
use warpscope_core::analysis::fleet::{JobOptions, job_files, load_job};
use warpscope_core::{Profile as CoreProfile, Progress, import_file};

use crate::profile::{Profile, paths_arg, to_dict};
use crate::{LoadError, WarpscopeError, path_arg};

/// A run to compare: a profile already loaded, or a file to read.
enum Run {
    Loaded(Arc<CoreProfile>),
    File(std::path::PathBuf),
}

/// `warpscope.compare(runs, baseline=None, top=20)`: the runs (profiles or paths) side by side,
/// labelled from their file names and shown in the order of the swept number, as
/// `warpscope compare --format json` gives them.
#[pyfunction]
#[pyo3(signature = (runs, *, baseline = None, top = 20))]
pub fn compare<'py>(
    py: Python<'py>,
    runs: &Bound<'py, PyAny>,
    baseline: Option<usize>,
    top: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let mut given = Vec::new();
    for item in runs.try_iter()? {
        let item = item?;
        if let Ok(p) = item.downcast::<Profile>() {
            let p = p.get();
            if p.is_view() {
                return Err(PyValueError::new_err(
                    "compare() takes whole profiles, not time_range() views",
                ));
            }
            given.push(Run::Loaded(p.shared()));
        } else {
            given.push(Run::File(path_arg(&item).map_err(|_| {
                PyValueError::new_err("compare() takes a list of profiles or paths")
            })?));
        }
    }
    if given.len() < 2 {
        return Err(PyValueError::new_err(format!(
            "compare needs at least two runs, got {}",
            given.len()
        )));
    }
    if let Some(b) = baseline
        && b >= given.len()
    {
        return Err(PyValueError::new_err(format!(
            "baseline {b}: there are only {} runs (counted from 0 in the order given)",
            given.len()
        )));
    }
    let text = py.allow_threads(move || -> Result<String, PyErrText> {
        let profiles = read_all(given)?;
        let labels: Vec<RunLabel> = profiles.iter().map(|p| RunLabel::of_profile(p)).collect();
        let (profiles, labels, baseline) = order_by_sweep(profiles, labels, baseline);
        let refs: Vec<&CoreProfile> = profiles.iter().map(Arc::as_ref).collect();
        let mut comparison =
            compare_runs(&refs, &labels, baseline).map_err(|e| PyErrText::Other(e.to_string()))?;
        comparison.rank_and_cut(top);
        serde_json::to_string(&comparison).map_err(|e| PyErrText::Other(e.to_string()))
    });
    let text = text.map_err(PyErrText::into_err)?;
    py.import("json")?.call_method1("loads", (text,))
}

/// An error made without the GIL, raised once it is held again.
enum PyErrText {
    /// A file that could not be read (`LoadError`).
    Load(String),
    /// Anything else (`WarpscopeError`).
    Other(String),
}

impl PyErrText {
    fn into_err(self) -> PyErr {
        match self {
            Self::Load(t) => LoadError::new_err(t),
            Self::Other(t) => WarpscopeError::new_err(t),
        }
    }
}

/// The runs' profiles, the files read on threads of their own (each import spreads over the
/// cores too); the first file, in the order given, that cannot be read is the error.
fn read_all(given: Vec<Run>) -> Result<Vec<Arc<CoreProfile>>, PyErrText> {
    let results: Vec<Result<Arc<CoreProfile>, PyErrText>> = std::thread::scope(|scope| {
        let handles: Vec<_> = given
            .into_iter()
            .map(|run| {
                scope.spawn(move || match run {
                    Run::Loaded(p) => Ok(p),
                    Run::File(path) => import_file(&path, &Progress::new())
                        .map(Arc::new)
                        .map_err(|e| PyErrText::Load(e.to_string())),
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(PyErrText::Other(
                        "a file could not be read (internal error)".to_string(),
                    ))
                })
            })
            .collect()
    });
    results.into_iter().collect()
}

/// `warpscope.fleet(paths)`: a directory of per-rank traces (or the files) as one job, as
/// `warpscope fleet --format json` reports it.
#[pyfunction]
pub fn fleet<'py>(py: Python<'py>, paths: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let paths = paths_arg(paths)?;
    let report = py.allow_threads(move || {
        let files = job_files(&paths)?;
        load_job(&files, JobOptions::default(), &Progress::new()).map(|job| job.report)
    });
    let report = report.map_err(|e| LoadError::new_err(e.to_string()))?;
    to_dict(py, &report)
}
