//! The database side shared by both importers: opening a file, bytes or a gzip-compressed
//! database (through a temporary file), listing its tables, reading columns by name with
//! errors that name the table, and metadata tables that only warn when they are damaged.

use std::fmt::Display;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, MAIN_DB, OpenFlags, Row, Statement};
use rustc_hash::FxHashSet;

use crate::builder::ProfileBuilder;
use crate::import::{ImportError, Progress};

use super::cells::text;

/// The longest text or blob cell read, in bytes (SQLite's own default is 1 GB).
const MAX_CELL_BYTES: i32 = 64 << 20;

/// Rows read between two looks at the cancel flag.
const CANCEL_CHECK_ROWS: u64 = 1 << 16;

/// An open database with the list of its tables.
pub(crate) struct Db {
    pub(super) conn: Connection,
    path: PathBuf,
    /// The file SQLite reads (the decompressed copy for a gzip-compressed database); `None`
    /// for a database held in memory.
    file: Option<PathBuf>,
    tables: FxHashSet<String>,
    /// Views, which are never read (see [`Db::with_connection`]).
    pub(super) views: Vec<String>,
    file_bytes: u64,
    /// The decompressed copy of a gzip-compressed database, removed when the import ends.
    pub(super) temp: Option<TempFile>,
}

/// A temporary file that is removed when dropped.
pub(super) struct TempFile {
    pub(super) path: PathBuf,
    /// Bytes written (the decompressed size).
    pub(super) bytes: u64,
}

impl TempFile {
    /// Writes the decompressed content of `source` (named `name`) to a new temporary file.
    pub(super) fn decompress(
        name: &Path,
        source: &mut dyn Read,
        progress: &Progress,
    ) -> Result<Self, ImportError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "warpscope-{}-{}.sqlite",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let mut temp = Self { path, bytes: 0 };
        let mut file = std::fs::File::create_new(&temp.path).map_err(|source| ImportError::Io {
            path: temp.path.clone(),
            source,
        })?;
        // In chunks, so that the user can cancel a big (or bomb) file while it inflates.
        let mut chunk = vec![0u8; 1 << 20];
        loop {
            if progress.is_cancelled() {
                return Err(ImportError::Cancelled {
                    path: name.to_path_buf(),
                });
            }
            let n = match source.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(ImportError::Gzip {
                        path: name.to_path_buf(),
                        source,
                    });
                }
            };
            file.write_all(&chunk[..n])
                .map_err(|source| ImportError::Io {
                    path: temp.path.clone(),
                    source,
                })?;
            temp.bytes += n as u64;
        }
        file.flush().map_err(|source| ImportError::Io {
            path: temp.path.clone(),
            source,
        })?;
        Ok(temp)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        // Nothing to do if it is already gone.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The error for a database SQLite cannot read.
fn unreadable(path: &Path, location: &str, e: &dyn Display) -> ImportError {
    ImportError::Corrupt {
        path: path.to_path_buf(),
        location: location.to_string(),
        detail: format!("SQLite cannot read it (truncated or damaged file?): {e}"),
    }
}

impl Db {
    /// Opens `file` (`file_bytes` long, shown as `path`) read-only and lists its tables. A file
    /// SQLite cannot read (truncated header, not a database) is [`ImportError::Corrupt`].
    pub(super) fn open_file(
        file: &Path,
        path: &Path,
        file_bytes: u64,
    ) -> Result<Self, ImportError> {
        let conn = Connection::open_with_flags(
            file,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| unreadable(path, "database header", &e))?;
        let mut db = Self::with_connection(conn, path, file_bytes)?;
        db.file = Some(file.to_path_buf());
        Ok(db)
    }

    /// A second connection to the same file, for reading some tables on another thread;
    /// `None` for a database held in memory.
    pub(super) fn reopen(&self) -> Option<Result<Self, ImportError>> {
        let file = self.file.as_ref()?;
        Some(Self::open_file(file, &self.path, self.file_bytes))
    }

    /// Opens a database held in memory (a read-only copy made by SQLite), shown as `path`.
    pub(super) fn open_bytes(data: &[u8], path: &Path) -> Result<Self, ImportError> {
        let mut conn =
            Connection::open_in_memory().map_err(|e| unreadable(path, "database header", &e))?;
        conn.deserialize_read_exact(MAIN_DB, data, data.len(), true)
            .map_err(|e| unreadable(path, "database header", &e))?;
        Self::with_connection(conn, path, data.len() as u64)
    }

    /// Lists the tables of an open connection. Views are listed apart and never read: a view is
    /// a query, and a hostile one (a recursive CTE, a cross join of large tables) would run for
    /// ever from a file of a few kilobytes; neither nvprof nor Nsight Systems writes views.
    fn with_connection(
        conn: Connection,
        path: &Path,
        file_bytes: u64,
    ) -> Result<Self, ImportError> {
        let corrupt = |location: &str, e: &dyn Display| unreadable(path, location, e);
        // The scans are sequential, so a modest page cache is enough; memory-mapped I/O was 4%
        // faster on a 200 MB export but added the mapped file to the resident set. Only a hint:
        // a failure here is not an error.
        let _ = conn.execute_batch("PRAGMA cache_size = -8192;");
        // No cell of a real export comes near this; a hostile one (a gigabyte of zeros that
        // gzip makes a megabyte) fails its table with "string or blob too big" instead of
        // taking the memory.
        conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, MAX_CELL_BYTES)
            .map_err(|e| corrupt("database header", &e))?;
        let mut tables = FxHashSet::default();
        let mut views = Vec::new();
        {
            let mut stmt = conn
                .prepare("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')")
                .map_err(|e| corrupt("table sqlite_master", &e))?;
            let mut rows = stmt
                .query([])
                .map_err(|e| corrupt("table sqlite_master", &e))?;
            while let Some(row) = rows
                .next()
                .map_err(|e| corrupt("table sqlite_master", &e))?
            {
                if let Ok(ValueRef::Text(t)) = row.get_ref(0) {
                    let name = String::from_utf8_lossy(t).into_owned();
                    if text(row, 1) == Some("view") {
                        views.push(name);
                    } else {
                        tables.insert(name);
                    }
                }
            }
        }
        Ok(Self {
            conn,
            path: path.to_path_buf(),
            file: None,
            tables,
            views,
            file_bytes,
            temp: None,
        })
    }

    /// The file.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// True if the database has table `name`.
    pub(super) fn has(&self, name: &str) -> bool {
        self.tables.contains(name)
    }

    /// True if any table name starts with `prefix`.
    pub(super) fn has_prefix(&self, prefix: &str) -> bool {
        self.tables.iter().any(|t| t.starts_with(prefix))
    }

    /// The tables whose names start with `prefix`, sorted.
    pub(super) fn tables_with_prefix(&self, prefix: &str) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .tables
            .iter()
            .map(String::as_str)
            .filter(|t| t.starts_with(prefix))
            .collect();
        names.sort_unstable();
        names
    }

    /// A short list of the tables, for error messages.
    pub(super) fn describe_tables(&self) -> String {
        if self.tables.is_empty() {
            return "it has no tables".to_string();
        }
        let mut names: Vec<&str> = self.tables.iter().map(String::as_str).collect();
        names.sort_unstable();
        let shown = names.iter().take(8).copied().collect::<Vec<_>>().join(", ");
        if names.len() > 8 {
            format!("{} tables: {shown}, ...", names.len())
        } else {
            format!("tables: {shown}")
        }
    }

    /// An [`ImportError::Corrupt`] naming this file and `table`.
    pub(super) fn error(&self, table: &str, detail: impl Display) -> ImportError {
        ImportError::Corrupt {
            path: self.path.clone(),
            location: format!("table {table}"),
            detail: detail.to_string(),
        }
    }

    /// The column names of `table`, in order.
    pub(super) fn columns(&self, table: &str) -> Result<Vec<String>, ImportError> {
        let sql = format!("PRAGMA table_info({})", quote(table));
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.error(table, e))?;
        let mut rows = stmt.query([]).map_err(|e| self.error(table, e))?;
        let mut names = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.error(table, e))? {
            if let Ok(ValueRef::Text(t)) = row.get_ref(1) {
                names.push(String::from_utf8_lossy(t).into_owned());
            }
        }
        Ok(names)
    }

    /// Builds `SELECT required..., optional... FROM table`, reading columns by name: a missing
    /// required column is an error naming the table, a missing optional one reads as NULL. The
    /// result's column `i` is `required[i]`, then `optional[i - required.len()]`.
    pub(super) fn select(
        &self,
        table: &str,
        required: &[&str],
        optional: &[&str],
    ) -> Result<Select, ImportError> {
        let present = self.columns(table)?;
        let has = |c: &str| present.iter().any(|p| p.eq_ignore_ascii_case(c));
        let missing: Vec<&str> = required.iter().copied().filter(|c| !has(c)).collect();
        if !missing.is_empty() {
            return Err(self.error(
                table,
                format!(
                    "missing required column{} {} (the table has: {})",
                    if missing.len() > 1 { "s" } else { "" },
                    missing.join(", "),
                    present.join(", ")
                ),
            ));
        }
        let mut exprs = Vec::with_capacity(required.len() + optional.len());
        for &c in required {
            exprs.push(quote(c));
        }
        for &c in optional {
            exprs.push(if has(c) { quote(c) } else { "NULL".to_string() });
        }
        Ok(Select {
            table: table.to_string(),
            sql: format!("SELECT {} FROM {}", exprs.join(", "), quote(table)),
        })
    }

    /// Builds `SELECT ... FROM main LEFT JOIN ...`, reading columns by name, for a table whose
    /// rows refer to another's (`joins`: the joined table, its key column, and the column of
    /// `main` that holds the key). The result's column `i` is `columns[i]`: (0 for `main`, `j +
    /// 1` for `joins[j]`, the column, whether it is required). A required column of `main` that
    /// is missing is an error naming the table; any other missing column reads as NULL, and so
    /// do all the columns of a join whose table or key columns are missing. `main`'s rowid is
    /// never needed: every join goes through a key.
    pub(super) fn select_join(
        &self,
        main: &str,
        joins: &[Join<'_>],
        columns: &[(usize, &str, bool)],
    ) -> Result<Select, ImportError> {
        let present = self.columns(main)?;
        let has = |cols: &[String], c: &str| cols.iter().any(|p| p.eq_ignore_ascii_case(c));
        let missing: Vec<&str> = columns
            .iter()
            .filter(|&&(t, c, required)| t == 0 && required && !has(&present, c))
            .map(|&(_, c, _)| c)
            .collect();
        if !missing.is_empty() {
            return Err(self.error(
                main,
                format!(
                    "missing required column{} {} (the table has: {})",
                    if missing.len() > 1 { "s" } else { "" },
                    missing.join(", "),
                    present.join(", ")
                ),
            ));
        }
        // Per joined table: its columns, or `None` when the join cannot be made.
        let mut joined: Vec<Option<Vec<String>>> = Vec::with_capacity(joins.len());
        let mut from = format!("{} AS t0", quote(main));
        for (j, join) in joins.iter().enumerate() {
            let cols = if self.has(join.table) && has(&present, join.from_column) {
                Some(self.columns(join.table)?).filter(|cols| has(cols, join.key))
            } else {
                None
            };
            if cols.is_some() {
                from.push_str(&format!(
                    " LEFT JOIN {} AS t{} ON t{}.{} = t0.{}",
                    quote(join.table),
                    j + 1,
                    j + 1,
                    quote(join.key),
                    quote(join.from_column)
                ));
            }
            joined.push(cols);
        }
        let exprs: Vec<String> = columns
            .iter()
            .map(|&(t, c, _)| {
                let cols = if t == 0 {
                    Some(&present)
                } else {
                    joined.get(t - 1).and_then(Option::as_ref)
                };
                match cols {
                    Some(cols) if has(cols, c) => format!("t{t}.{}", quote(c)),
                    _ => "NULL".to_string(),
                }
            })
            .collect();
        Ok(Select {
            table: main.to_string(),
            sql: format!("SELECT {} FROM {from}", exprs.join(", ")),
        })
    }

    /// Reads a table that only supplies names or metadata: calls `each` for every row of
    /// `SELECT required..., optional... FROM table` (columns numbered as in [`Db::select`]). Such
    /// a table never fails the import: when it lacks a required column or SQLite cannot read
    /// it, the rows read so far are kept and a warning names the table and the column or the
    /// error. A missing table reads as empty, silently (callers that expect it warn themselves).
    pub(super) fn meta_rows(
        &self,
        b: &mut ProfileBuilder,
        table: &str,
        required: &[&str],
        optional: &[&str],
        each: impl FnMut(&Row<'_>),
    ) {
        if !self.has(table) {
            return;
        }
        let present = match self.columns(table) {
            Ok(p) => p,
            Err(e) => {
                b.warn_at(
                    "sqlite_metadata_unreadable",
                    1,
                    table,
                    &format!("SQLite cannot read the table ({e}); the names or details it holds are not shown"),
                );
                return;
            }
        };
        let has = |c: &str| present.iter().any(|p| p.eq_ignore_ascii_case(c));
        let missing: Vec<&str> = required.iter().copied().filter(|c| !has(c)).collect();
        if !missing.is_empty() {
            for c in missing {
                b.warn_at(
                    "sqlite_metadata_column_missing",
                    1,
                    &format!("{table}.{c}"),
                    "column missing: the names or details this table supplies are not shown",
                );
            }
            return;
        }
        let result = self
            .select(table, required, optional)
            .and_then(|sel| self.scan(&sel, each));
        if let Err(e) = result {
            b.warn_at(
                "sqlite_metadata_unreadable",
                1,
                table,
                &format!("SQLite cannot read the table ({e}); the names or details it holds are not shown"),
            );
        }
    }

    /// Calls `each` for every row of `select`, without cancellation (small tables).
    fn scan(&self, select: &Select, mut each: impl FnMut(&Row<'_>)) -> Result<(), ImportError> {
        self.for_each_row(select, &Progress::default(), |row| {
            each(row);
            Ok(())
        })
    }

    /// Runs `select` and calls `each` for every row, stopping on the first error and checking
    /// the cancel flag every few thousand rows.
    pub(super) fn for_each_row(
        &self,
        select: &Select,
        progress: &Progress,
        mut each: impl FnMut(&Row<'_>) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        let table = select.table.as_str();
        let mut stmt = self
            .conn
            .prepare(&select.sql)
            .map_err(|e| self.error(table, e))?;
        let mut rows = stmt.query([]).map_err(|e| self.error(table, e))?;
        let mut n = 0u64;
        while let Some(row) = rows.next().map_err(|e| self.error(table, e))? {
            each(row)?;
            n += 1;
            if n.is_multiple_of(CANCEL_CHECK_ROWS) && progress.is_cancelled() {
                return Err(self.cancelled());
            }
        }
        Ok(())
    }

    /// A prepared statement for a small query, with errors naming `table`.
    pub(super) fn prepare(&self, table: &str, sql: &str) -> Result<Statement<'_>, ImportError> {
        self.conn.prepare(sql).map_err(|e| self.error(table, e))
    }

    /// The cancellation error for this file.
    pub(super) fn cancelled(&self) -> ImportError {
        ImportError::Cancelled {
            path: self.path.clone(),
        }
    }

    /// Fails with [`ImportError::Cancelled`] if the user cancelled; otherwise reports progress as
    /// `step` of `steps` tables done.
    pub(super) fn checkpoint(
        &self,
        progress: &Progress,
        step: u64,
        steps: u64,
    ) -> Result<(), ImportError> {
        if progress.is_cancelled() {
            return Err(self.cancelled());
        }
        progress.set_done(self.file_bytes.saturating_mul(step) / steps.max(1));
        Ok(())
    }
}

/// A join of [`Db::select_join`]: `LEFT JOIN table ON table.key = main.from_column`.
pub(super) struct Join<'a> {
    /// The joined table.
    pub(super) table: &'a str,
    /// Its key column (an `INTEGER PRIMARY KEY`, so each row is one lookup).
    pub(super) key: &'a str,
    /// The column of the main table that holds the key.
    pub(super) from_column: &'a str,
}

/// A SELECT built by [`Db::select`] or [`Db::select_join`].
pub(crate) struct Select {
    table: String,
    sql: String,
}

/// `name` quoted as an SQL identifier.
pub(super) fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
