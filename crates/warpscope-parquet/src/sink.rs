//! Where a table's rows go. The tables ([`crate::build_tables`]) declare their columns and push
//! their values through [`ColumnSink`], so the one list of columns serves every writer: the
//! Parquet files of this crate ([`crate::write_parquet`]) and the Arrow tables of the Python
//! module (`crates/warpscope-python`).

use warpscope_core::TimeRange;

/// A column of a table, by its position in the order the columns were declared (from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Col(usize);

impl Col {
    /// No column (a table without that column): values pushed to it are dropped.
    pub const NONE: Self = Self(usize::MAX);

    /// The column declared `index`-th (from 0).
    pub fn at(index: usize) -> Self {
        Self(index)
    }

    /// Its position among the table's columns; `None` for [`Col::NONE`].
    pub fn index(self) -> Option<usize> {
        (self != Self::NONE).then_some(self.0)
    }
}

/// The type of a column's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// 64-bit signed integers (every `_ns` time, every `_bytes` size, event numbers).
    I64,
    /// 32-bit signed integers.
    I32,
    /// 64-bit floats.
    F64,
    /// UTF-8 text.
    Str,
}

/// A table under construction: its columns are declared once (each call returns the next
/// [`Col`]), then every row gives each column one value or a null (`None`) and ends with
/// [`ColumnSink::end_row`]. A null in a column declared `optional: false` is the table's bug.
pub trait ColumnSink {
    /// Declares a column; the first declared is `Col::at(0)`.
    fn column(&mut self, name: &'static str, ty: ColumnType, optional: bool) -> Col;
    /// Appends a value (or a null) to an [`ColumnType::I64`] column.
    fn put_i64(&mut self, c: Col, v: Option<i64>);
    /// Appends a value (or a null) to an [`ColumnType::I32`] column.
    fn put_i32(&mut self, c: Col, v: Option<i32>);
    /// Appends a value (or a null) to an [`ColumnType::F64`] column.
    fn put_f64(&mut self, c: Col, v: Option<f64>);
    /// Appends a value (or a null) to an [`ColumnType::Str`] column.
    fn put_str(&mut self, c: Col, v: Option<&str>);
    /// Ends a row.
    fn end_row(&mut self);
    /// Whether the caller wants this table's rows at all: when `false`, the tables skip the
    /// work of filling it (a Python call for the kernels needs no memory attribution). The
    /// columns are declared all the same.
    fn wanted(&self) -> bool {
        true
    }

    /// Declares an INT64 column.
    fn i64(&mut self, name: &'static str, optional: bool) -> Col {
        self.column(name, ColumnType::I64, optional)
    }
    /// Declares an INT32 column.
    fn i32(&mut self, name: &'static str, optional: bool) -> Col {
        self.column(name, ColumnType::I32, optional)
    }
    /// Declares a DOUBLE column.
    fn f64(&mut self, name: &'static str, optional: bool) -> Col {
        self.column(name, ColumnType::F64, optional)
    }
    /// Declares a UTF-8 string column.
    fn str(&mut self, name: &'static str, optional: bool) -> Col {
        self.column(name, ColumnType::Str, optional)
    }
}

/// Which rows the tables keep: the whole run for the Parquet export, a time range for a view
/// (`profile.time_range(start_ns, end_ns)` in Python).
///
/// - `events`, `kernels`, `copies`, `api_calls`: the events that touch the range
///   ([`TimeRange::contains_event`]), whole (not clipped); `event` keeps its number in the run.
/// - `flows`: those whose two events are both kept.
/// - `memory`: the records whose time lies in `[start_ns, end_ns)`; `record` keeps its number.
/// - `devices`, `runs`: always whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowScope {
    /// The range; [`TimeRange::ALL`] keeps everything.
    pub range: TimeRange,
}

impl Default for RowScope {
    fn default() -> Self {
        Self {
            range: TimeRange::ALL,
        }
    }
}

impl RowScope {
    /// Whether an event `[start_ns, start_ns + dur_ns)` is kept.
    pub fn keeps_event(&self, start_ns: i64, dur_ns: i64) -> bool {
        self.range.contains_event(start_ns, dur_ns)
    }

    /// Whether a memory record at `time_ns` is kept.
    pub fn keeps_time(&self, time_ns: i64) -> bool {
        self.range.is_all() || (time_ns >= self.range.start_ns && time_ns < self.range.end_ns)
    }
}
