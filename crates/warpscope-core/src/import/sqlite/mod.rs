//! nvprof (`nvprof -o x.nvvp`) and Nsight Systems (`nsys export --type sqlite`) SQLite
//! databases. [`import`] opens the file read-only, tells the two apart by their tables and hands
//! it to [`nvprof`] or [`nsys`]; this module holds what both share: reading columns by name,
//! resolving string ids, CUPTI enums and naming the tracks.

mod nsys;
mod nvprof;

use std::fmt::Display;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, MAIN_DB, OpenFlags, Row, Statement};
use rustc_hash::{FxHashMap, FxHashSet};

use super::{ImportError, ImportTimings, Input, Progress};
use crate::builder::{ProfileBuilder, TrackId};
use crate::model::{
    CopyInfo, CopyKind, Device, GpuLane, KernelInfo, MemoryKind, Profile, TraceId, TrackKey,
};
use crate::strings::StrId;

/// The longest text or blob cell read, in bytes (SQLite's own default is 1 GB).
const MAX_CELL_BYTES: i32 = 64 << 20;

/// Rows read between two looks at the cancel flag.
const CANCEL_CHECK_ROWS: u64 = 1 << 16;

/// Stream id that CUPTI writes for "no stream" (`-1` as an unsigned 32-bit value), used by
/// synchronisation records of whole contexts.
const NO_STREAM: u64 = 0xFFFF_FFFF;

/// Imports an nvprof `.nvvp` or Nsight Systems SQLite export, telling the two apart by their
/// tables. Other SQLite databases are rejected with [`ImportError::UnknownFormat`]. A
/// gzip-compressed database is decompressed to a temporary file first (SQLite reads pages at
/// random, so memory stays with SQLite's page cache, not with the database's size).
pub fn import(
    input: Input<'_>,
    progress: &Progress,
) -> Result<(Profile, ImportTimings), ImportError> {
    let started = Instant::now();
    let path = input.path();
    let (mut reader, compressed, file_bytes) = input.open()?;
    progress.set_total(file_bytes);
    let mut db = match input {
        _ if compressed => {
            let temp = TempFile::decompress(path, &mut reader, progress)?;
            let mut db = Db::open_file(&temp.path, path, file_bytes)?;
            db.temp = Some(temp);
            db
        }
        Input::File(file) => Db::open_file(file, path, file_bytes)?,
        Input::Bytes { data, .. } => Db::open_bytes(data, path)?,
    };
    drop(reader);
    let read = started.elapsed();
    let t = Instant::now();
    let mut b = if nvprof::recognise(&db) {
        nvprof::read(&db, progress)?
    } else if nsys::recognise(&db) {
        nsys::read(&db, progress)?
    } else {
        return Err(ImportError::UnknownFormat {
            path: path.to_path_buf(),
            detail: format!(
                "SQLite database without nvprof or Nsight Systems tables ({})",
                db.describe_tables()
            ),
        });
    };
    if !db.views.is_empty() {
        db.views.sort();
        let shown: Vec<&str> = db.views.iter().take(8).map(String::as_str).collect();
        b.warn(
            "sqlite_view_ignored",
            u64::try_from(db.views.len()).unwrap_or(u64::MAX),
            format!(
                "the database defines views ({}{}), which warpscope does not read: profilers \
                 write tables only",
                shown.join(", "),
                if db.views.len() > 8 { ", ..." } else { "" }
            ),
        );
    }
    b.source.file_bytes = file_bytes;
    b.source.compressed = compressed;
    b.source.content_bytes = db.temp.as_ref().map_or(file_bytes, |t| t.bytes);
    let parse = t.elapsed();
    let t = Instant::now();
    let profile = b.finish();
    let index = t.elapsed();
    progress.set_done(file_bytes);
    Ok((
        profile,
        ImportTimings {
            read,
            parse,
            index,
            total: started.elapsed(),
        },
    ))
}

/// An open database with the list of its tables.
pub(super) struct Db {
    conn: Connection,
    path: PathBuf,
    tables: FxHashSet<String>,
    /// Views, which are never read (see [`Db::with_connection`]).
    views: Vec<String>,
    file_bytes: u64,
    /// The decompressed copy of a gzip-compressed database, removed when the import ends.
    temp: Option<TempFile>,
}

/// A temporary file that is removed when dropped.
struct TempFile {
    path: PathBuf,
    /// Bytes written (the decompressed size).
    bytes: u64,
}

impl TempFile {
    /// Writes the decompressed content of `source` (named `name`) to a new temporary file.
    fn decompress(
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
    fn open_file(file: &Path, path: &Path, file_bytes: u64) -> Result<Self, ImportError> {
        let conn = Connection::open_with_flags(
            file,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| unreadable(path, "database header", &e))?;
        Self::with_connection(conn, path, file_bytes)
    }

    /// Opens a database held in memory (a read-only copy made by SQLite), shown as `path`.
    fn open_bytes(data: &[u8], path: &Path) -> Result<Self, ImportError> {
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

    /// A short list of the tables, for error messages.
    fn describe_tables(&self) -> String {
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
        table: &'static str,
        required: &[&'static str],
        optional: &[&'static str],
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
            table,
            sql: format!("SELECT {} FROM {}", exprs.join(", "), quote(table)),
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
        table: &'static str,
        required: &[&'static str],
        optional: &[&'static str],
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
        let table = select.table;
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

/// A SELECT built by [`Db::select`].
pub(super) struct Select {
    table: &'static str,
    sql: String,
}

/// An INTEGER cell, or `None` for NULL (REAL is truncated, or `None` outside `i64`; numeric TEXT
/// parsed, BLOBs read as `None`).
pub(super) fn int(row: &Row<'_>, i: usize) -> Option<i64> {
    match row.get_ref(i) {
        Ok(ValueRef::Integer(v)) => Some(v),
        Ok(ValueRef::Real(f)) => real_to_i64(f),
        Ok(ValueRef::Text(t)) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// A TEXT cell, or `None`.
pub(super) fn text<'r>(row: &'r Row<'_>, i: usize) -> Option<&'r str> {
    match row.get_ref(i) {
        Ok(ValueRef::Text(t)) => std::str::from_utf8(t).ok(),
        _ => None,
    }
}

/// A BLOB cell, or `None`.
pub(super) fn blob<'r>(row: &'r Row<'_>, i: usize) -> Option<&'r [u8]> {
    match row.get_ref(i) {
        Ok(ValueRef::Blob(b)) => Some(b),
        _ => None,
    }
}

/// A non-negative cell as `u32` (`None` for NULL or out of range).
pub(super) fn uint32(row: &Row<'_>, i: usize) -> Option<u32> {
    int(row, i).and_then(|v| u32::try_from(v).ok())
}

/// A non-negative cell as `u64` (`None` for NULL or negative).
pub(super) fn uint64(row: &Row<'_>, i: usize) -> Option<u64> {
    int(row, i).and_then(|v| u64::try_from(v).ok())
}

/// A CUPTI correlation id: 0 and NULL mean none.
pub(super) fn correlation(row: &Row<'_>, i: usize) -> Option<u64> {
    uint64(row, i).filter(|&c| c != 0)
}

/// A stream id as CUPTI means it: `-1` (stored signed or as 4294967295) is "no stream".
pub(super) fn stream_id(row: &Row<'_>, i: usize) -> u64 {
    match int(row, i) {
        Some(v) if v < 0 => NO_STREAM,
        Some(v) => u64::try_from(v).unwrap_or(NO_STREAM),
        None => 0,
    }
}

/// Three cells as a dimension triple (grid or block), if all are present.
pub(super) fn dim3(row: &Row<'_>, x: usize, y: usize, z: usize) -> Option<[u32; 3]> {
    Some([uint32(row, x)?, uint32(row, y)?, uint32(row, z)?])
}

/// Selects from a kernel table (`name_col` is its name column): 0 `start`, 1 `end`, 2 `deviceId`,
/// 3 `streamId`, 4 `name_col`, 5 `contextId`, 6 `correlationId`, 7–15 the launch configuration
/// that [`kernel_info`] reads, then `extra` from 16.
pub(super) fn select_kernels(
    db: &Db,
    table: &'static str,
    name_col: &'static str,
    extra: &[&'static str],
) -> Result<Select, ImportError> {
    const LAUNCH: [&str; 11] = [
        "contextId",
        "correlationId",
        "gridX",
        "gridY",
        "gridZ",
        "blockX",
        "blockY",
        "blockZ",
        "registersPerThread",
        "staticSharedMemory",
        "dynamicSharedMemory",
    ];
    db.select(
        table,
        &["start", "end", "deviceId", "streamId", name_col],
        &[&LAUNCH[..], extra].concat(),
    )
}

/// The launch details of a row of [`select_kernels`].
pub(super) fn kernel_info(row: &Row<'_>, mangled_name: Option<StrId>) -> KernelInfo {
    KernelInfo {
        grid: dim3(row, 7, 8, 9),
        block: dim3(row, 10, 11, 12),
        registers_per_thread: uint32(row, 13),
        static_shared_bytes: uint64(row, 14),
        dynamic_shared_bytes: uint64(row, 15),
        correlation: correlation(row, 6),
        mangled_name,
        ..KernelInfo::default()
    }
}

/// Selects from a memcpy table: 0 `start`, 1 `end`, 2 `deviceId`, 3 `streamId`, 4 `copyKind`,
/// 5 `bytes`, 6 `contextId`, 7 `correlationId`, 8 `srcKind`, 9 `dstKind`, then `extra` from 10.
pub(super) fn select_copies(
    db: &Db,
    table: &'static str,
    extra: &[&'static str],
) -> Result<Select, ImportError> {
    db.select(
        table,
        &["start", "end", "deviceId", "streamId", "copyKind", "bytes"],
        &[
            &["contextId", "correlationId", "srcKind", "dstKind"][..],
            extra,
        ]
        .concat(),
    )
}

/// The details of a row of [`select_copies`] of `kind`, whose memory kinds `memory_kind`
/// decodes.
pub(super) fn copy_info(
    row: &Row<'_>,
    kind: CopyKind,
    memory_kind: fn(Option<i64>) -> Option<MemoryKind>,
) -> CopyInfo {
    CopyInfo {
        kind,
        bytes: uint64(row, 5),
        src_kind: memory_kind(int(row, 8)),
        dst_kind: memory_kind(int(row, 9)),
        correlation: correlation(row, 7),
        external_id: None,
    }
}

/// Selects from a memset table (`memory_col` is its memory-kind column): 0 `start`, 1 `end`,
/// 2 `deviceId`, 3 `streamId`, 4 `bytes`, 5 `contextId`, 6 `correlationId`, 7 `memory_col`, then
/// `extra` from 8.
pub(super) fn select_memsets(
    db: &Db,
    table: &'static str,
    memory_col: &'static str,
    extra: &[&'static str],
) -> Result<Select, ImportError> {
    db.select(
        table,
        &["start", "end", "deviceId", "streamId", "bytes"],
        &[&["contextId", "correlationId", memory_col][..], extra].concat(),
    )
}

/// The details of a row of [`select_memsets`], whose memory kind `memory_kind` decodes.
pub(super) fn memset_info(
    row: &Row<'_>,
    memory_kind: fn(Option<i64>) -> Option<MemoryKind>,
) -> CopyInfo {
    CopyInfo {
        kind: CopyKind::Memset,
        bytes: uint64(row, 4),
        src_kind: None,
        dst_kind: memory_kind(int(row, 7)),
        correlation: correlation(row, 6),
        external_id: None,
    }
}

/// A time cell as read from a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Time {
    /// NULL (or a missing optional column).
    Null,
    /// An integer (or a REAL or numeric TEXT that holds one).
    Ns(i64),
    /// Something that is not a time: a BLOB, non-numeric TEXT, a REAL outside `i64`.
    Invalid,
}

/// The time in cell `i` (see [`Time`]).
pub(super) fn time(row: &Row<'_>, i: usize) -> Time {
    match row.get_ref(i) {
        Ok(ValueRef::Null) => Time::Null,
        Ok(ValueRef::Integer(v)) => Time::Ns(v),
        Ok(ValueRef::Real(f)) => real_to_i64(f).map_or(Time::Invalid, Time::Ns),
        Ok(ValueRef::Text(t)) => std::str::from_utf8(t)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .map_or(Time::Invalid, Time::Ns),
        Ok(ValueRef::Blob(_)) | Err(_) => Time::Invalid,
    }
}

/// A REAL truncated to an integer, or `None` if it is not finite or outside `i64` (a plain
/// `as` cast would silently saturate `1e300` to `i64::MAX`).
fn real_to_i64(f: f64) -> Option<i64> {
    // -2^63 is exact in f64; 2^63 is the first value above i64::MAX.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    #[allow(clippy::cast_possible_truncation)]
    (f.is_finite() && (-LIMIT..LIMIT).contains(&f)).then_some(f as i64)
}

/// The plausibility rule for timestamps of both formats: nvprof writes nanoseconds since the
/// Unix epoch and Nsight Systems nanoseconds on the capture's clock (from about its start), so a
/// time is a non-negative integer below [`TIME_LIMIT_NS`] (2^62 ns: 146 years after the clock's
/// zero, year 2116 for nvprof). Rows with a time outside it are skipped and counted; the bound
/// also keeps every sum and difference of two times inside `i64`.
pub(super) const TIME_LIMIT_NS: i64 = crate::builder::TIME_LIMIT_NS;

/// What a time that is zero means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Zero {
    /// Only `start = end = 0` means "not collected" (Nsight Systems: 0 is the capture's start).
    BothUncollected,
    /// A start or end of 0 means "not collected" (nvprof: CUPTI writes 0 when it could not
    /// collect a timestamp, and its clock is the Unix epoch, so 0 is never a real time).
    EitherUncollected,
}

/// Applies the plausibility rule to rows and counts those it rejects, so the importers can warn
/// once per table.
pub(super) struct TimeCheck {
    /// What a zero time means in this format.
    zero: Zero,
    /// Rows with NULL start or end.
    pub(super) missing: u64,
    /// Rows whose time could not be collected (see [`Zero`]).
    pub(super) uncollected: u64,
    /// Rows with a time that is not an integer, negative or beyond [`TIME_LIMIT_NS`].
    pub(super) out_of_range: u64,
    /// Rows whose end lies before their start (kept with zero duration).
    pub(super) negative: u64,
}

impl TimeCheck {
    /// A check for a format whose zero times mean `zero`.
    pub(super) fn new(zero: Zero) -> Self {
        Self {
            zero,
            missing: 0,
            uncollected: 0,
            out_of_range: 0,
            negative: 0,
        }
    }

    /// A single time (an instant): `Some` if it passes the rule, else `None` (counted).
    pub(super) fn instant(&mut self, t: Time) -> Option<i64> {
        match t {
            Time::Null => {
                self.missing += 1;
                None
            }
            Time::Ns(0) if self.zero == Zero::EitherUncollected => {
                self.uncollected += 1;
                None
            }
            Time::Ns(t) if (0..TIME_LIMIT_NS).contains(&t) => Some(t),
            Time::Ns(_) | Time::Invalid => {
                self.out_of_range += 1;
                None
            }
        }
    }

    /// `(start, duration)` of a row, or `None` (counted) when it cannot be placed in time. An end
    /// before the start (both plausible) is kept with zero duration, counted: the activity
    /// happened, only its length is unknown.
    pub(super) fn span(&mut self, start: Time, end: Time) -> Option<(i64, i64)> {
        match (start, end) {
            (Time::Null, _) | (_, Time::Null) => {
                self.missing += 1;
                return None;
            }
            (Time::Ns(0), Time::Ns(0)) => {
                self.uncollected += 1;
                return None;
            }
            _ => {}
        }
        let start = self.instant(start)?;
        // A row with both times wrong is counted once, as the start's fault.
        let end = self.instant(end)?;
        if end < start {
            self.negative += 1;
            return Some((start, 0));
        }
        Some((start, end - start))
    }

    /// Turns the counts into warnings on `b` that name `table`.
    pub(super) fn report(self, b: &mut ProfileBuilder, table: &str) {
        b.warn_at(
            "sqlite_null_time",
            self.missing,
            table,
            "rows without a start or end time were skipped",
        );
        b.warn_at(
            "sqlite_uncollected_time",
            self.uncollected,
            table,
            match self.zero {
                Zero::BothUncollected => {
                    "rows with start = end = 0 (timestamp not collected by CUPTI) were skipped"
                }
                Zero::EitherUncollected => {
                    "rows with a start or end of 0 (timestamp not collected by CUPTI) were skipped"
                }
            },
        );
        b.warn_at(
            "sqlite_time_out_of_range",
            self.out_of_range,
            table,
            "rows with a time that is negative, not an integer or beyond 2^62 ns (146 years \
             after the clock's zero) were skipped",
        );
        b.warn_at(
            "sqlite_negative_duration",
            self.negative,
            table,
            "rows ending before they start were kept with zero duration",
        );
    }
}

/// Resolves integer string ids (`StringTable._id_` in nvprof, `StringIds.id` in nsys) lazily, one
/// query per distinct id, interning each string once. When the id column has no index (a
/// rebuilt or hand-made table), one query per id would scan the whole table each time, so the
/// table is read once into a map instead. A string table that is missing, lacks a column or
/// cannot be read is not an error: every name shows as `<string N>`, with a warning.
pub(super) struct Strings<'c> {
    table: &'static str,
    source: StringSource<'c>,
    cache: FxHashMap<i64, Option<StrId>>,
    missing: u64,
}

/// Where [`Strings`] looks ids up.
enum StringSource<'c> {
    /// One indexed query per id.
    Query(Statement<'c>),
    /// The whole table, read once.
    Loaded(FxHashMap<i64, String>),
    /// No usable table.
    Unavailable,
}

impl<'c> Strings<'c> {
    /// A resolver over `table`, whose id column is `id_col` and text column `value`.
    pub(super) fn new(
        db: &'c Db,
        b: &mut ProfileBuilder,
        table: &'static str,
        id_col: &'static str,
    ) -> Result<Self, ImportError> {
        let source = match Self::open(db, table, id_col) {
            Ok(source) => source,
            Err(why) => {
                b.warn_at(
                    "sqlite_string_table_unusable",
                    1,
                    table,
                    &format!("{why}; names are shown as <string N>"),
                );
                StringSource::Unavailable
            }
        };
        Ok(Self {
            table,
            source,
            cache: FxHashMap::default(),
            missing: 0,
        })
    }

    /// The lookup for `table`, or why it cannot be used.
    fn open(db: &'c Db, table: &'static str, id_col: &str) -> Result<StringSource<'c>, String> {
        if !db.has(table) {
            return Err("the table is missing".to_string());
        }
        let present = db.columns(table).map_err(|e| e.to_string())?;
        for c in [id_col, "value"] {
            if !present.iter().any(|p| p.eq_ignore_ascii_case(c)) {
                return Err(format!("the table has no column {c}"));
            }
        }
        let (t, id) = (quote(table), quote(id_col));
        let sql = format!("SELECT value FROM {t} WHERE {id} = ?1");
        let plan = format!("EXPLAIN QUERY PLAN {sql}");
        let indexed = {
            let mut stmt = db.conn.prepare(&plan).map_err(|e| e.to_string())?;
            let mut rows = stmt.query([0]).map_err(|e| e.to_string())?;
            let mut indexed = true;
            while let Some(row) = rows.next().map_err(|e| e.to_string())? {
                if text(row, 3).is_some_and(|d| d.starts_with("SCAN")) {
                    indexed = false;
                }
            }
            indexed
        };
        if indexed {
            return db
                .conn
                .prepare(&sql)
                .map(StringSource::Query)
                .map_err(|e| e.to_string());
        }
        let mut map = FxHashMap::default();
        let mut stmt = db
            .conn
            .prepare(&format!("SELECT {id}, value FROM {t}"))
            .map_err(|e| e.to_string())?;
        let mut rows = stmt.query([]).map_err(|e| e.to_string())?;
        while let Some(row) = rows.next().map_err(|e| e.to_string())? {
            if let (Some(id), Some(v)) = (int(row, 0), text(row, 1)) {
                map.entry(id).or_insert_with(|| v.to_string());
            }
        }
        Ok(StringSource::Loaded(map))
    }

    /// The text of string `id`, uncached (for names that are transformed before interning).
    /// An id without a row, or whose value is not text, counts as missing.
    pub(super) fn text(&mut self, db: &Db, id: i64) -> Result<Option<String>, ImportError> {
        let found = match &mut self.source {
            StringSource::Query(stmt) => {
                let mut rows = stmt.query([id]).map_err(|e| db.error(self.table, e))?;
                match rows.next().map_err(|e| db.error(self.table, e))? {
                    Some(row) => text(row, 0).map(str::to_string),
                    None => None,
                }
            }
            StringSource::Loaded(map) => map.get(&id).cloned(),
            StringSource::Unavailable => None,
        };
        if found.is_none() {
            self.missing += 1;
        }
        Ok(found)
    }
    /// The interned string `id`, or `None` if the table lacks it.
    pub(super) fn get(
        &mut self,
        db: &Db,
        b: &mut ProfileBuilder,
        id: i64,
    ) -> Result<Option<StrId>, ImportError> {
        if let Some(&s) = self.cache.get(&id) {
            return Ok(s);
        }
        let s = self.text(db, id)?.map(|t| b.intern(&t));
        self.cache.insert(id, s);
        Ok(s)
    }

    /// The interned string `id`, or a placeholder naming the id when the table lacks it.
    pub(super) fn get_or_placeholder(
        &mut self,
        db: &Db,
        b: &mut ProfileBuilder,
        id: i64,
    ) -> Result<StrId, ImportError> {
        match self.get(db, b, id)? {
            Some(s) => Ok(s),
            None => {
                let s = b.intern(&format!("<string {id}>"));
                self.cache.insert(id, Some(s));
                Ok(s)
            }
        }
    }

    /// Warns about ids that pointed to no string.
    pub(super) fn report(&self, b: &mut ProfileBuilder) {
        if matches!(self.source, StringSource::Unavailable) {
            return;
        }
        b.warn_at(
            "sqlite_missing_string",
            self.missing,
            self.table,
            "names referring to ids missing from this table (or not text) are shown as \
             <string N>",
        );
    }
}

/// Display names of copy kinds and synchronisation types, interned once.
#[derive(Default)]
pub(super) struct ActivityNames {
    copies: FxHashMap<CopyKind, StrId>,
    syncs: FxHashMap<&'static str, StrId>,
}

impl ActivityNames {
    /// The nvprof-style name (`[CUDA memcpy HtoD]`) of `kind`.
    pub(super) fn copy(&mut self, b: &mut ProfileBuilder, kind: CopyKind) -> StrId {
        *self
            .copies
            .entry(kind)
            .or_insert_with(|| b.intern(&kind.activity_name()))
    }

    /// The name of a CUPTI / nsys synchronisation type (`Stream synchronize`).
    pub(super) fn sync(&mut self, b: &mut ProfileBuilder, sync_type: Option<i64>) -> StrId {
        let label = sync_name(sync_type);
        *self.syncs.entry(label).or_insert_with(|| b.intern(label))
    }
}

/// CUPTI's `CUpti_ActivityMemoryKind` (nvprof `srcKind`, `dstKind`, `memoryKind`).
pub(super) fn memory_kind_cupti(v: Option<i64>) -> Option<MemoryKind> {
    v.map(MemoryKind::from_cupti)
}

/// Nsight Systems' `ENUM_CUDA_MEM_KIND`, which numbers the kinds differently from CUPTI.
pub(super) fn memory_kind_nsys(v: Option<i64>) -> Option<MemoryKind> {
    Some(match v? {
        0 => MemoryKind::Pageable,
        1 => MemoryKind::Pinned,
        2 => MemoryKind::Device,
        3 => MemoryKind::Array,
        4 => MemoryKind::Managed,
        5 => MemoryKind::DeviceStatic,
        6 => MemoryKind::ManagedStatic,
        _ => MemoryKind::Unknown,
    })
}

/// Name of a CUPTI / nsys synchronisation type.
fn sync_name(sync_type: Option<i64>) -> &'static str {
    match sync_type {
        Some(1) => "Event synchronize",
        Some(2) => "Stream wait event",
        Some(3) => "Stream synchronize",
        Some(4) => "Context synchronize",
        _ => "Synchronize",
    }
}

/// The GPU work track of a stream.
pub(super) fn work_track(
    b: &mut ProfileBuilder,
    device: u32,
    context: u32,
    stream: u64,
) -> TrackId {
    gpu_track(b, device, context, stream, GpuLane::Work)
}

/// The track of `lane` of a stream.
pub(super) fn gpu_track(
    b: &mut ProfileBuilder,
    device: u32,
    context: u32,
    stream: u64,
    lane: GpuLane,
) -> TrackId {
    b.track(TrackKey::Gpu {
        device,
        context,
        stream,
        lane,
    })
}

/// The CPU track of a thread.
pub(super) fn thread_track(b: &mut ProfileBuilder, pid: i64, tid: i64) -> TrackId {
    b.track(TrackKey::Thread {
        pid: TraceId::Int(pid),
        tid: TraceId::Int(tid),
    })
}

/// Names every track: `stream 7`, `stream 7 sync`, `unified memory`, the thread's name or
/// `thread N`. `stream_names` and `thread_names` come from the file.
pub(super) fn name_tracks(
    b: &mut ProfileBuilder,
    stream_names: &FxHashMap<(u32, u32, u64), String>,
    thread_names: &FxHashMap<(i64, i64), String>,
) {
    for i in 0..b.tracks().len() {
        let key = b.tracks()[i].key;
        let name = match key {
            TrackKey::Gpu {
                device,
                context,
                stream,
                lane,
            } => {
                let base = match stream_names.get(&(device, context, stream)) {
                    Some(n) => format!("stream {stream} ({n})"),
                    None if stream == NO_STREAM => format!("context {context}"),
                    None => format!("stream {stream}"),
                };
                match lane {
                    GpuLane::Work => base,
                    GpuLane::Annotations => format!("{base} sync"),
                    GpuLane::UnifiedMemory => "unified memory".to_string(),
                }
            }
            TrackKey::Thread {
                pid: TraceId::Int(pid),
                tid: TraceId::Int(tid),
            } => match thread_names.get(&(pid, tid)) {
                Some(n) => n.clone(),
                None => format!("thread {tid}"),
            },
            TrackKey::Thread { .. } | TrackKey::Async { .. } => continue,
        };
        b.track_mut(TrackId(u32::try_from(i).unwrap_or(u32::MAX)))
            .name = name;
    }
}

/// Adds a bare [`Device`] for every device that has GPU tracks but no description in the file.
pub(super) fn add_missing_devices(b: &mut ProfileBuilder) {
    let mut added = 0;
    for id in b.undescribed_gpu_ids() {
        b.devices.push(Device {
            id,
            name: format!("GPU {id}"),
            ..Device::default()
        });
        added += 1;
    }
    b.warn(
        "sqlite_unknown_device",
        added,
        "devices with activity but no description in the file are shown as `GPU N`",
    );
}

/// `name` quoted as an SQL identifier.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
