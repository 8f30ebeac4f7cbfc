//! `warpscope.load` and `warpscope.Profile`: one profile (or a time range of it), its tables as
//! pyarrow tables and its reports as the dicts of the CLI's JSON. Every call that works on the
//! profile releases the GIL, so Python threads can work on several profiles at once.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use serde::Serialize;
use warpscope_core::analysis::compare::profile_rank;
use warpscope_core::analysis::contract::{
    AnalyzeJson, AnalyzedRange, MemoryJson, analyze_with_flops,
};
use warpscope_core::analysis::flops::PeakOverride;
use warpscope_core::analysis::memory::memory_report;
use warpscope_core::analysis::{AnalyzeOptions, summary_report};
use warpscope_core::{Profile as CoreProfile, Progress, TimeRange, import_bytes, import_file};
use warpscope_parquet::{RowScope, RunMeta, TABLES, build_tables, cpu_ops_table};

use crate::arrow::{ArrowTable, arrow_err, to_pyarrow};
use crate::{LoadError, ProfileWarning, WarpscopeError, path_arg};

/// Every table `Profile.table` gives: the Parquet export's, then `cpu_ops`.
pub const TABLE_NAMES: [&str; 9] = [
    TABLES[0], TABLES[1], TABLES[2], TABLES[3], TABLES[4], TABLES[5], TABLES[6], TABLES[7],
    "cpu_ops",
];

/// A profile read by `warpscope.load`, or a time range of one (`Profile.time_range`). The
/// profile itself is shared, never copied: a view costs nothing.
#[pyclass(frozen, module = "warpscope")]
pub struct Profile {
    inner: Arc<CoreProfile>,
    /// The range this view keeps; [`TimeRange::ALL`] for the whole profile.
    range: TimeRange,
}

/// A serialisable report as a Python dict, through JSON: exactly what the CLI prints with
/// `--format json`, read by `json.loads`.
pub fn to_dict<'py>(py: Python<'py>, value: &impl Serialize) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value)
        .map_err(|e| WarpscopeError::new_err(format!("cannot serialise the report: {e}")))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// Reads a profile from a path or from bytes, with the GIL released.
fn read(py: Python<'_>, source: &Bound<'_, PyAny>, name: Option<&str>) -> PyResult<CoreProfile> {
    let result = if let Ok(bytes) = source.downcast::<PyBytes>() {
        let data = bytes.as_bytes().to_vec();
        let name = PathBuf::from(name.unwrap_or("<bytes>"));
        py.allow_threads(move || import_bytes(&name, &data, &Progress::new()))
    } else {
        let path = path_arg(source).map_err(|_| {
            PyTypeError::new_err(format!(
                "load() takes a path (str or os.PathLike) or bytes, not {}",
                source
                    .get_type()
                    .name()
                    .map_or_else(|_| "?".to_string(), |n| n.to_string())
            ))
        })?;
        if path.is_dir() {
            return Err(LoadError::new_err(format!(
                "{}: is a directory, not a profile: warpscope.fleet() reads the traces in it as \
                 the ranks of one job",
                path.display()
            )));
        }
        py.allow_threads(move || import_file(&path, &Progress::new()))
    };
    result.map_err(|e| LoadError::new_err(e.to_string()))
}

/// `warpscope.load(source, name=None)`: reads a profile in any format the CLI reads.
#[pyfunction]
#[pyo3(signature = (source, *, name = None))]
pub fn load(py: Python<'_>, source: &Bound<'_, PyAny>, name: Option<&str>) -> PyResult<Profile> {
    let profile = read(py, source, name)?;
    for w in &profile.warnings {
        let text = format!("{}: {}", profile.source.path.display(), w.message);
        let category = py.get_type::<ProfileWarning>();
        let text = std::ffi::CString::new(text.replace('\0', " "))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        PyErr::warn(py, category.as_any(), &text, 1)?;
    }
    Ok(Profile {
        inner: Arc::new(profile),
        range: TimeRange::ALL,
    })
}

impl Profile {
    /// A profile for Rust callers in this crate (`compare`).
    pub fn shared(&self) -> Arc<CoreProfile> {
        Arc::clone(&self.inner)
    }

    /// True for a `time_range` view.
    pub fn is_view(&self) -> bool {
        !self.range.is_all()
    }

    /// The range the reports work on: `range` or `step` when given, else this view's.
    fn analyzed(&self, range: Option<(i64, i64)>, step: Option<u64>) -> PyResult<AnalyzedRange> {
        match (range, step) {
            (Some(_), Some(_)) => Err(PyValueError::new_err("give range or step, not both")),
            (Some((s, e)), None) => {
                if e <= s {
                    return Err(PyValueError::new_err(format!(
                        "range ({s}, {e}): the end must come after the start"
                    )));
                }
                Ok(AnalyzedRange::range(TimeRange::new(s, e)))
            }
            (None, Some(n)) => AnalyzedRange::step(&self.inner, n).map_err(|e| {
                WarpscopeError::new_err(format!("{}: {e}", self.inner.source.path.display()))
            }),
            (None, None) if self.range.is_all() => Ok(AnalyzedRange::all()),
            (None, None) => Ok(AnalyzedRange::range(self.range)),
        }
    }

    /// One table of the export crate's list (or `cpu_ops`), built with the GIL released.
    fn arrow_table<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let Some(&name) = TABLE_NAMES.iter().find(|&&t| t == name) else {
            return Err(PyValueError::new_err(format!(
                "no table {name:?}: the tables are {}",
                TABLE_NAMES.join(", ")
            )));
        };
        let (profile, range) = (Arc::clone(&self.inner), self.range);
        let batch = py.allow_threads(move || {
            if name == "cpu_ops" {
                return cpu_ops_table(&profile, range, ArrowTable::new(true)).finish();
            }
            // As `warpscope export` numbers a single profile.
            let meta = RunMeta {
                run: 0,
                rank: profile_rank(&profile),
                world_size: profile.distributed.as_ref().and_then(|d| d.world_size),
            };
            let tables = build_tables(&profile, meta, RowScope { range }, |t| {
                ArrowTable::new(t == name)
            });
            tables
                .into_iter()
                .find(|(t, _)| *t == name)
                .map_or_else(|| ArrowTable::new(true).finish(), |(_, t)| t.finish())
        });
        to_pyarrow(py, batch.map_err(arrow_err)?)
    }
}

#[pymethods]
impl Profile {
    /// The file the profile was read from (as given), or the name given to bytes.
    #[getter]
    fn path(&self) -> String {
        self.inner.source.path.display().to_string()
    }

    /// The format: `chrome-json`, `nsys-sqlite`, `nvprof-csv`, ...
    #[getter]
    fn format(&self) -> &'static str {
        self.inner.source.format.as_str()
    }

    /// The tool that wrote the file.
    #[getter]
    fn tool(&self) -> String {
        self.inner.source.tool.clone()
    }

    /// Problems met while reading that did not stop it: dicts of `code`, `message`, `count`.
    #[getter]
    fn warnings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.inner.warnings)
    }

    /// Number of events in the whole profile.
    #[getter]
    fn event_count(&self) -> usize {
        self.inner.event_count()
    }

    /// The view's range as `(start_ns, end_ns)`, or `None` for the whole profile.
    #[getter]
    fn range(&self) -> Option<(i64, i64)> {
        (!self.range.is_all()).then_some((self.range.start_ns, self.range.end_ns))
    }

    /// The profile's extent `(start_ns, end_ns)`: its first event's start to its last event's
    /// end.
    #[getter]
    fn extent(&self) -> (i64, i64) {
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        for t in &self.inner.tracks {
            let ev = &t.events;
            for i in 0..ev.len() {
                lo = lo.min(ev.start_ns[i]);
                hi = hi.max(ev.start_ns[i].saturating_add(ev.dur_ns[i]));
            }
        }
        if lo > hi { (0, 0) } else { (lo, hi) }
    }

    /// A view of `[start_ns, end_ns)`: its tables keep the events that touch the range (whole),
    /// its reports analyse the range, as `warpscope analyze --range` does.
    fn time_range(&self, start_ns: i64, end_ns: i64) -> PyResult<Self> {
        if end_ns <= start_ns {
            return Err(PyValueError::new_err(format!(
                "time_range({start_ns}, {end_ns}): the end must come after the start"
            )));
        }
        Ok(Self {
            inner: Arc::clone(&self.inner),
            range: TimeRange::new(start_ns, end_ns),
        })
    }

    /// The table `name` (one of `warpscope.TABLES`) as a `pyarrow.Table`.
    fn table<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        self.arrow_table(py, name)
    }

    /// Every event: the Parquet export's `events` table.
    fn events<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.arrow_table(py, "events")
    }

    /// The kernels, with their launch configuration: the `kernels` table.
    fn kernels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.arrow_table(py, "kernels")
    }

    /// Copies and sets: the `copies` table.
    fn copies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.arrow_table(py, "copies")
    }

    /// CUDA runtime and driver calls: the `api_calls` table.
    fn api_calls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.arrow_table(py, "api_calls")
    }

    /// Launch and other flows between events, by event number: the `flows` table.
    fn flows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.arrow_table(py, "flows")
    }

    /// The memory records (allocations, frees) with their operators: the `memory` table.
    fn memory_records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.arrow_table(py, "memory")
    }

    /// The GPUs: the `devices` table.
    fn devices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.arrow_table(py, "devices")
    }

    /// The CPU operators by name (`warpscope summary`'s operators table, whole).
    fn cpu_ops<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.arrow_table(py, "cpu_ops")
    }

    /// `warpscope summary --format json` as a dict (over this view's range).
    #[pyo3(signature = (top = None))]
    fn summary<'py>(&self, py: Python<'py>, top: Option<usize>) -> PyResult<Bound<'py, PyAny>> {
        let (profile, range) = (Arc::clone(&self.inner), self.range);
        let text =
            py.allow_threads(move || serde_json::to_string(&summary_report(&profile, range, top)));
        json_dict(py, text)
    }

    /// `warpscope analyze --format json` as a dict: over `range=(start_ns, end_ns)`, training
    /// step `step`, or this view's range.
    #[pyo3(signature = (*, range = None, step = None, top = 10, kernel_wait_us = 10.0))]
    fn analyze<'py>(
        &self,
        py: Python<'py>,
        range: Option<(i64, i64)>,
        step: Option<u64>,
        top: usize,
        kernel_wait_us: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let analyzed = self.analyzed(range, step)?;
        if !(kernel_wait_us.is_finite() && kernel_wait_us >= 0.0) {
            return Err(PyValueError::new_err(
                "kernel_wait_us must be a number of microseconds, 0 or more",
            ));
        }
        let opts = AnalyzeOptions {
            top_gaps: top,
            #[allow(clippy::cast_possible_truncation)]
            kernel_wait_threshold_ns: (kernel_wait_us * 1_000.0).round() as i64,
            ..Default::default()
        };
        let profile = Arc::clone(&self.inner);
        let text = py.allow_threads(move || {
            // The FLOPs section as the CLI computes it without --peak-* overrides.
            let (insights, flops) = analyze_with_flops(
                &profile,
                analyzed.time_range(),
                &opts,
                PeakOverride::default(),
            );
            serde_json::to_string(&AnalyzeJson::new(&profile, &insights, &flops, &analyzed))
        });
        json_dict(py, text)
    }

    /// `warpscope memory --format json` as a dict (docs/memory.md): peaks, what was live at
    /// them, the allocating operators, findings.
    #[pyo3(signature = (*, range = None, step = None, top = 10))]
    fn memory<'py>(
        &self,
        py: Python<'py>,
        range: Option<(i64, i64)>,
        step: Option<u64>,
        top: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let analyzed = self.analyzed(range, step)?;
        let profile = Arc::clone(&self.inner);
        let text = py.allow_threads(move || {
            let report = memory_report(&profile, analyzed.time_range(), top);
            serde_json::to_string(&MemoryJson::new(&profile, &report, &analyzed))
        });
        json_dict(py, text)
    }

    // The FLOPs figures (issue 28) join here as one more method of the same shape: the
    // report's builder in `warpscope_core::analysis`, called with the GIL released, serialised
    // with `json_dict` exactly as the CLI's `--format json` prints it.

    fn __repr__(&self) -> String {
        let range = if self.range.is_all() {
            String::new()
        } else {
            format!(", range=({}, {})", self.range.start_ns, self.range.end_ns)
        };
        format!(
            "<warpscope.Profile {:?} ({}), {} events{range}>",
            self.inner.source.path.display().to_string(),
            self.inner.source.format.as_str(),
            self.inner.event_count()
        )
    }
}

/// A report serialised with the GIL released, as a dict.
fn json_dict(py: Python<'_>, text: serde_json::Result<String>) -> PyResult<Bound<'_, PyAny>> {
    let text =
        text.map_err(|e| WarpscopeError::new_err(format!("cannot serialise the report: {e}")))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// Paths given as one path or a list of them.
pub fn paths_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
    if let Ok(one) = path_arg(obj) {
        return Ok(vec![one]);
    }
    if obj.downcast::<PyList>().is_ok() || obj.hasattr("__iter__")? {
        return obj.try_iter()?.map(|p| path_arg(&p?)).collect();
    }
    Err(PyTypeError::new_err("expected a path or a list of paths"))
}
