//! SQLite databases: nvprof (`nvprof -o x.nvvp`), Nsight Systems (`nsys export --type sqlite`),
//! rocprofv3's rocpd (schema 3), rocmProfileData's RPD (schema 2) and rocprof v1's
//! `results.db`. [`import`] opens the file read-only and hands it to the first format of
//! [`SQLITE_FORMATS`] that recognises its tables; what the readers share is here (resolving
//! string ids, CUPTI enums, naming the tracks), in `db.rs` (opening, tables, columns by name),
//! `cells.rs` (cells, the time rule) and `cupti_rows.rs` (the CUPTI activity SELECTs).

mod amd;
mod nsys;
mod nsys_memory;
mod nvprof;
mod rocpd;
mod rocpd_info;
mod rocpd_memory;
mod rocpd_rows;
mod rocprof;
mod rpd;

mod cells;
mod cupti_rows;
mod db;

use std::time::Instant;

use rusqlite::Statement;
use rustc_hash::{FxHashMap, FxHashSet};

use super::{ImportError, ImportTimings, Input, Progress};
use crate::builder::{ProfileBuilder, TrackId};
use crate::model::{CopyKind, Device, GpuLane, MemoryKind, Profile, TraceId, TrackKey};
use crate::strings::StrId;

use cells::*;
use cupti_rows::*;
use db::{Db, TempFile, quote};

/// One SQLite format: how its tables are recognised, and what reads them.
struct SqliteFormat {
    /// Its name in messages.
    name: &'static str,
    /// True if the database has this format's tables.
    recognise: fn(&Db) -> bool,
    /// Reads the database into a builder.
    read: fn(&Db, &Progress) -> Result<ProfileBuilder, ImportError>,
    /// True if the tool writes views beside its tables (expected, so not warned about; views
    /// are never read either way).
    writes_views: bool,
}

/// The SQLite formats, tried in order: the one table a new SQLite format is added to. The two
/// formats named "rocpd" are told apart by `rocpd_metadata.schema_version` and their tables
/// (see `rocpd::recognise` and `rpd::recognise`), never by the file's extension.
static SQLITE_FORMATS: [SqliteFormat; 5] = [
    SqliteFormat {
        name: "nvprof",
        recognise: nvprof::recognise,
        read: nvprof::read,
        writes_views: false,
    },
    SqliteFormat {
        name: "Nsight Systems",
        recognise: nsys::recognise,
        read: nsys::read,
        writes_views: false,
    },
    SqliteFormat {
        name: "rocprofv3 (rocpd schema 3)",
        recognise: rocpd::recognise,
        read: rocpd::read,
        writes_views: true,
    },
    SqliteFormat {
        name: "rocmProfileData (RPD schema 2)",
        recognise: rpd::recognise,
        read: rpd::read,
        writes_views: true,
    },
    SqliteFormat {
        name: "rocprof v1",
        recognise: rocprof::recognise,
        read: rocprof::read,
        writes_views: false,
    },
];

/// The names of [`SQLITE_FORMATS`] as one phrase (`a, b or c`).
fn format_names() -> String {
    let names: Vec<&str> = SQLITE_FORMATS.iter().map(|f| f.name).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// Imports a SQLite database of any of [`SQLITE_FORMATS`], told apart by their tables. Other
/// SQLite databases are rejected with [`ImportError::UnknownFormat`]. A gzip-compressed
/// database is decompressed to a temporary file first (SQLite reads pages at random, so memory
/// stays with SQLite's page cache, not with the database's size).
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
    let Some(format) = SQLITE_FORMATS.iter().find(|f| (f.recognise)(&db)) else {
        return Err(ImportError::UnknownFormat {
            path: path.to_path_buf(),
            detail: format!(
                "SQLite database without the tables of {} ({})",
                format_names(),
                db.describe_tables()
            ),
        });
    };
    let mut b = (format.read)(&db, progress)?;
    if !db.views.is_empty() && !format.writes_views {
        db.views.sort();
        let shown: Vec<&str> = db.views.iter().take(8).map(String::as_str).collect();
        b.warn(
            "sqlite_view_ignored",
            u64::try_from(db.views.len()).unwrap_or(u64::MAX),
            format!(
                "the database defines views ({}{}), which warpscope does not read: {} writes \
                 tables only",
                shown.join(", "),
                if db.views.len() > 8 { ", ..." } else { "" },
                format.name
            ),
        );
    }
    b.source.file_bytes = file_bytes;
    b.source.compressed = compressed;
    b.source.content_bytes = db.temp.as_ref().map_or(file_bytes, |t| t.bytes);
    // SQLite's page cache (and a decompressed copy) go before the tracks are sorted and linked.
    drop(db);
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

/// Resolves integer string ids (`StringTable._id_` in nvprof, `StringIds.id` in nsys) lazily, one
/// query per distinct id, interning each string once. When the id column has no index (a
/// rebuilt or hand-made table), one query per id would scan the whole table each time, so the
/// table is read once into a map instead. A string table that is missing, lacks a column or
/// cannot be read is not an error: every name shows as `<string N>`, with a warning.
pub(super) struct Strings<'c> {
    table: String,
    source: StringSource<'c>,
    cache: FxHashMap<i64, Option<StrId>>,
    /// Ids looked up through [`Strings::get`] that have no string (each counted once).
    missing_ids: FxHashSet<i64>,
    /// Uncached lookups through [`Strings::text`] that found no string.
    text_missing: u64,
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
    /// A resolver over `table`, whose id column is `id_col` and text column `value_col`.
    pub(super) fn new(
        db: &'c Db,
        b: &mut ProfileBuilder,
        table: &str,
        id_col: &str,
        value_col: &str,
    ) -> Result<Self, ImportError> {
        let source = match Self::open(db, table, id_col, value_col) {
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
            table: table.to_string(),
            source,
            cache: FxHashMap::default(),
            missing_ids: FxHashSet::default(),
            text_missing: 0,
        })
    }

    /// True when ids are looked up one indexed query at a time, so a second resolver over
    /// another connection costs nothing up front (see `nsys::read`).
    pub(super) fn is_indexed(&self) -> bool {
        matches!(self.source, StringSource::Query(_))
    }

    /// The lookup for `table`, or why it cannot be used.
    fn open(
        db: &'c Db,
        table: &str,
        id_col: &str,
        value_col: &str,
    ) -> Result<StringSource<'c>, String> {
        if !db.has(table) {
            return Err("the table is missing".to_string());
        }
        let present = db.columns(table).map_err(|e| e.to_string())?;
        for c in [id_col, value_col] {
            if !present.iter().any(|p| p.eq_ignore_ascii_case(c)) {
                return Err(format!("the table has no column {c}"));
            }
        }
        let (t, id, value) = (quote(table), quote(id_col), quote(value_col));
        let sql = format!("SELECT {value} FROM {t} WHERE {id} = ?1");
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
            .prepare(&format!("SELECT {id}, {value} FROM {t}"))
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
        let found = self.lookup(db, id)?;
        if found.is_none() {
            self.text_missing += 1;
        }
        Ok(found)
    }

    /// The text of string `id`, `None` if the table lacks it.
    fn lookup(&mut self, db: &Db, id: i64) -> Result<Option<String>, ImportError> {
        Ok(match &mut self.source {
            StringSource::Query(stmt) => {
                let mut rows = stmt.query([id]).map_err(|e| db.error(&self.table, e))?;
                match rows.next().map_err(|e| db.error(&self.table, e))? {
                    Some(row) => text(row, 0).map(str::to_string),
                    None => None,
                }
            }
            StringSource::Loaded(map) => map.get(&id).cloned(),
            StringSource::Unavailable => None,
        })
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
        let s = self.lookup(db, id)?.map(|t| b.intern(&t));
        if s.is_none() {
            self.missing_ids.insert(id);
        }
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

    /// Takes over the ids another resolver over the same table found missing (one that read
    /// some of the tables on another thread), so each id is still counted once.
    pub(super) fn absorb_missing(&mut self, ids: FxHashSet<i64>) {
        self.missing_ids.extend(ids);
    }

    /// The ids [`Strings::get`] found missing, for [`Strings::absorb_missing`].
    pub(super) fn into_missing_ids(self) -> FxHashSet<i64> {
        self.missing_ids
    }

    /// The ids [`Strings::get`] found missing and the count of [`Strings::text`] lookups that
    /// found nothing, for [`Strings::absorb`].
    pub(super) fn into_missing(self) -> (FxHashSet<i64>, u64) {
        (self.missing_ids, self.text_missing)
    }

    /// Takes over what another resolver over the same table found missing
    /// ([`Strings::into_missing`]), so each is still counted once.
    pub(super) fn absorb(&mut self, (ids, text_missing): (FxHashSet<i64>, u64)) {
        self.missing_ids.extend(ids);
        self.text_missing += text_missing;
    }

    /// Warns about ids that pointed to no string.
    pub(super) fn report(&self, b: &mut ProfileBuilder) {
        if matches!(self.source, StringSource::Unavailable) {
            return;
        }
        b.warn_at(
            "sqlite_missing_string",
            self.missing_ids.len() as u64 + self.text_missing,
            &self.table,
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

/// Process id of an Nsight Systems serialized global id (`globalPid` or `globalTid`), which
/// `nsys.rs` and `nsys_memory.rs` both read.
fn pid_of(global: i64) -> i64 {
    (global >> 24) & 0xFF_FFFF
}

/// Thread id of an Nsight Systems serialized global id.
fn tid_of(global: i64) -> i64 {
    global & 0xFF_FFFF
}
