//! The export crate's tables ([`warpscope_parquet::build_tables`]) filled into Arrow arrays, and
//! handed to pyarrow through the Arrow C data interface (the PyCapsule protocol,
//! `__arrow_c_array__`): no per-row Python objects, and the arrays belong to pyarrow once
//! taken, so a table outlives its `Profile`.
//!
//! Types follow the Parquet export (`docs/export.md`): INT64 → `int64`, INT32 → `int32`,
//! DOUBLE → `float64`, text → `dictionary<int32, string>` (the names of a table are few and
//! repeat, as the Parquet files dictionary-encode them); optional columns are nullable.

use std::ffi::CString;
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, DictionaryArray, Float64Array, Int32Array, Int64Array, RecordBatch,
    StringArray, StructArray, types::Int32Type,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{ArrowError, Field, Schema};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};
use rustc_hash::FxHashMap;
use warpscope_parquet::{Col, ColumnSink, ColumnType};

/// The values of one column while it is filled, one per row (a default under a null).
enum Values {
    I64(Vec<i64>),
    I32(Vec<i32>),
    F64(Vec<f64>),
    /// Dictionary-encoded text: a key per row into `dict`.
    Str {
        keys: Vec<i32>,
        dict: Dictionary,
    },
}

/// The distinct strings of a column, in order of first appearance.
#[derive(Default)]
struct Dictionary {
    index: FxHashMap<Box<str>, i32>,
    text: String,
    offsets: Vec<usize>,
    /// The key of the last string looked up: runs of one value (`kind`, `process`) skip the
    /// hash.
    last: Option<usize>,
}

impl Dictionary {
    fn text_of(&self, k: usize) -> Option<&str> {
        self.text
            .get(*self.offsets.get(k)?..*self.offsets.get(k + 1)?)
    }

    fn key(&mut self, s: &str) -> i32 {
        if let Some(k) = self.last
            && self.text_of(k) == Some(s)
        {
            return i32::try_from(k).unwrap_or(i32::MAX);
        }
        let key = if let Some(&k) = self.index.get(s) {
            k
        } else {
            if self.offsets.is_empty() {
                self.offsets.push(0);
            }
            let k = i32::try_from(self.index.len()).unwrap_or(i32::MAX);
            self.text.push_str(s);
            self.offsets.push(self.text.len());
            self.index.insert(s.into(), k);
            k
        };
        self.last = usize::try_from(key).ok();
        key
    }

    fn into_array(mut self) -> Result<StringArray, ArrowError> {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        let offsets = self
            .offsets
            .iter()
            .map(|&o| i32::try_from(o))
            .collect::<Result<Vec<i32>, _>>()
            .map_err(|_| {
                ArrowError::ComputeError(
                    "a column's distinct strings exceed 2 GiB, more than an Arrow string array holds"
                        .to_string(),
                )
            })?;
        StringArray::try_new(
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            Buffer::from(self.text.into_bytes()),
            None,
        )
    }
}

/// One column: its name, whether it may hold nulls, and per row whether it has a value.
struct Column {
    name: &'static str,
    optional: bool,
    values: Values,
    /// One flag per row for optional columns (true: a value); empty for required ones.
    valid: Vec<bool>,
}

/// A table filled through [`ColumnSink`]: every row kept in memory, then made an Arrow
/// record batch by [`ArrowTable::finish`].
pub struct ArrowTable {
    columns: Vec<Column>,
    rows: usize,
    wanted: bool,
}

impl ArrowTable {
    /// An empty table; `wanted: false` declares columns but takes no rows (the tables of a
    /// profile are built in one pass, and a call wants one of them).
    pub fn new(wanted: bool) -> Self {
        Self {
            columns: Vec::new(),
            rows: 0,
            wanted,
        }
    }

    fn push(&mut self, c: Col, present: bool) -> Option<&mut Values> {
        let col = self.columns.get_mut(c.index()?)?;
        if col.optional {
            col.valid.push(present);
        }
        Some(&mut col.values)
    }

    /// The rows as one Arrow record batch, columns in declaration order.
    ///
    /// # Errors
    ///
    /// An Arrow error when a column cannot be made (a null in a required column, more than
    /// 2 GiB of distinct strings in one column).
    pub fn finish(self) -> Result<RecordBatch, ArrowError> {
        let mut fields = Vec::with_capacity(self.columns.len());
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.columns.len());
        for c in self.columns {
            let nulls = c.optional.then(|| NullBuffer::from(c.valid));
            let array: ArrayRef = match c.values {
                Values::I64(v) => Arc::new(Int64Array::try_new(ScalarBuffer::from(v), nulls)?),
                Values::I32(v) => Arc::new(Int32Array::try_new(ScalarBuffer::from(v), nulls)?),
                Values::F64(v) => Arc::new(Float64Array::try_new(ScalarBuffer::from(v), nulls)?),
                Values::Str { keys, dict } => {
                    let keys = Int32Array::try_new(ScalarBuffer::from(keys), nulls)?;
                    Arc::new(DictionaryArray::<Int32Type>::try_new(
                        keys,
                        Arc::new(dict.into_array()?),
                    )?)
                }
            };
            fields.push(Field::new(c.name, array.data_type().clone(), c.optional));
            arrays.push(array);
        }
        let schema = Arc::new(Schema::new(fields));
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(self.rows));
        RecordBatch::try_new_with_options(schema, arrays, &options)
    }
}

impl ColumnSink for ArrowTable {
    fn column(&mut self, name: &'static str, ty: ColumnType, optional: bool) -> Col {
        let values = match ty {
            ColumnType::I64 => Values::I64(Vec::new()),
            ColumnType::I32 => Values::I32(Vec::new()),
            ColumnType::F64 => Values::F64(Vec::new()),
            ColumnType::Str => Values::Str {
                keys: Vec::new(),
                dict: Dictionary::default(),
            },
        };
        self.columns.push(Column {
            name,
            optional,
            values,
            valid: Vec::new(),
        });
        Col::at(self.columns.len() - 1)
    }

    fn put_i64(&mut self, c: Col, v: Option<i64>) {
        if let Some(Values::I64(vals)) = self.push(c, v.is_some()) {
            vals.push(v.unwrap_or_default());
        }
    }

    fn put_i32(&mut self, c: Col, v: Option<i32>) {
        if let Some(Values::I32(vals)) = self.push(c, v.is_some()) {
            vals.push(v.unwrap_or_default());
        }
    }

    fn put_f64(&mut self, c: Col, v: Option<f64>) {
        if let Some(Values::F64(vals)) = self.push(c, v.is_some()) {
            vals.push(v.unwrap_or_default());
        }
    }

    fn put_str(&mut self, c: Col, v: Option<&str>) {
        if let Some(Values::Str { keys, dict }) = self.push(c, v.is_some()) {
            keys.push(v.map_or(0, |s| dict.key(s)));
        }
    }

    fn end_row(&mut self) {
        self.rows += 1;
    }

    fn wanted(&self) -> bool {
        self.wanted
    }
}

/// A record batch waiting for pyarrow: `__arrow_c_array__` hands it over once.
#[pyclass(module = "warpscope._warpscope", name = "_ArrowBatch")]
pub struct ArrowBatch {
    batch: Option<RecordBatch>,
}

#[pymethods]
impl ArrowBatch {
    /// The Arrow PyCapsule protocol: the schema and the array of the batch, as a struct array.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema; // the batch has one schema; pyarrow casts if it must
        let batch = self.batch.take().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err("this Arrow batch was already taken")
        })?;
        let array = StructArray::from(batch);
        let data = array.to_data();
        let schema = FFI_ArrowSchema::try_from(data.data_type()).map_err(arrow_err)?;
        let array = FFI_ArrowArray::new(&data);
        let schema = PyCapsule::new(py, schema, Some(capsule_name("arrow_schema")?))?;
        let array = PyCapsule::new(py, array, Some(capsule_name("arrow_array")?))?;
        PyTuple::new(py, [schema.into_any(), array.into_any()])
    }
}

fn capsule_name(name: &str) -> PyResult<CString> {
    CString::new(name).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
}

/// An Arrow error as a Python exception.
pub fn arrow_err(e: ArrowError) -> PyErr {
    crate::WarpscopeError::new_err(format!("cannot make the Arrow table: {e}"))
}

/// `batch` as a `pyarrow.Table` (pyarrow imports it through the C data interface).
pub fn to_pyarrow(py: Python<'_>, batch: RecordBatch) -> PyResult<Bound<'_, PyAny>> {
    let pa = py.import("pyarrow")?;
    let holder = Bound::new(py, ArrowBatch { batch: Some(batch) })?;
    let batch = pa.getattr("record_batch")?.call1((holder,))?;
    pa.getattr("Table")?
        .getattr("from_batches")?
        .call1((vec![batch],))
}
