//! warpscope's profile model as Parquet tables: the door to the engines clusters already run
//! (DuckDB, DataFusion, Spark, Polars...). One directory per table, one file per run (a rank of
//! a job, or a single profile), every time an exact INT64 of nanoseconds. The layout and the
//! columns are documented in `docs/export.md`; this crate keeps `warpscope-core` free of any
//! Parquet dependency. The tables are declared once ([`build_tables`], through [`ColumnSink`]):
//! the Python module fills Arrow tables from the same list.

mod columns;
mod ops;
mod sink;
mod tables;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use ops::cpu_ops_table;
pub use sink::{Col, ColumnSink, ColumnType, RowScope};
pub use tables::{TABLES, build_tables};

use warpscope_core::Profile;

/// Why writing the Parquet tables failed.
#[derive(Debug, thiserror::Error)]
pub enum ParquetError {
    /// A directory or file could not be created or written.
    #[error("{path}: cannot write: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The Parquet writer failed.
    #[error("{path}: cannot write Parquet: {source}")]
    Writer {
        /// The file.
        path: PathBuf,
        /// The writer's error.
        #[source]
        source: parquet::errors::ParquetError,
    },
}

/// Which run of the export a profile is.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunMeta {
    /// The run's number in the export (0 for a single profile; the file's position in a job).
    pub run: i32,
    /// Its rank in a distributed job, when known.
    pub rank: Option<i64>,
    /// The job's world size, when known.
    pub world_size: Option<i64>,
}

/// What one run's export wrote: per table, its file and row count.
#[derive(Clone, Debug)]
pub struct Written {
    /// `(table, file, rows)` in [`TABLES`] order.
    pub tables: Vec<(&'static str, PathBuf, usize)>,
}

/// The file of `table` for run `run` under `out_dir`: `OUT/<table>/run-00000.parquet`.
pub fn table_file(out_dir: &Path, table: &str, run: i32) -> PathBuf {
    out_dir.join(table).join(format!("run-{run:05}.parquet"))
}

/// Writes `profile` as run `meta.run` under `out_dir`: one file per table of [`TABLES`]
/// (see [`table_file`]), creating the directories.
///
/// # Errors
///
/// [`ParquetError`] naming the directory or file that could not be written.
pub fn write_parquet(
    profile: &Profile,
    meta: RunMeta,
    out_dir: &Path,
) -> Result<Written, ParquetError> {
    let mut written = Vec::new();
    let tables = build_tables(profile, meta, RowScope::default(), |name| {
        columns::Table::new(name, table_file(out_dir, name, meta.run))
    });
    for (name, table) in tables {
        let rows = table.rows();
        let path = table.finish()?;
        written.push((name, path, rows));
    }
    Ok(Written { tables: written })
}
