//! rocprofv3 SQLite databases (`rocprofv3 --output-format rocpd`, `*_results.db`, rocpd schema
//! 3, ROCm 7). Each session (one profiled process) writes its tables with its GUID as a suffix
//! (`rocpd_kernel_dispatch_00003fdc_92cb_…`) and plain-named views over them; the views are never
//! read (see `db.rs`), the suffixed tables are, columns by name. This file finds the sessions and
//! reads each in turn: what describes it (agents, processes, threads, queues, streams) in
//! `rocpd_info.rs`, kernel dispatches, memory copies and API regions in `rocpd_rows.rs`, memory
//! allocations in `rocpd_memory.rs`. The format is described in `docs/formats.md`, "rocprofv3".

use rustc_hash::{FxHashMap, FxHashSet};

use super::amd::{Lanes, schema_version};
use super::rocpd_info::{Session, SessionInfo, read_info};
use super::rocpd_rows::{read_copies, read_dispatches, read_regions, read_samples};
use super::{Db, Strings, add_missing_devices, name_tracks};
use crate::builder::ProfileBuilder;
use crate::import::{ImportError, Progress};
use crate::model::Format;
use crate::parallel;

/// The metadata table's name without the session suffix.
const METADATA: &str = "rocpd_metadata";
/// Tables with activity: a session has at least one.
const ACTIVITY: [&str; 4] = [
    "rocpd_kernel_dispatch",
    "rocpd_memory_copy",
    "rocpd_region",
    "rocpd_memory_allocate",
];

/// The sessions of a rocpd schema-3 database: every `rocpd_metadata<suffix>` table whose
/// `schema_version` is 3 (or 3.x), or that has none while the session's activity tables are
/// there, with at least one activity table. RPD (schema 2) has a `rocpd_metadata` too, which
/// says 2: that is how the two formats named "rocpd" are told apart.
fn sessions(db: &Db) -> Vec<Session> {
    let mut out = Vec::new();
    for table in db.tables_with_prefix(METADATA) {
        let suffix = &table[METADATA.len()..];
        if !(suffix.is_empty() || suffix.starts_with('_')) {
            continue;
        }
        let session = Session {
            suffix: suffix.to_string(),
            version: schema_version(db, table),
        };
        let schema_3 = match &session.version {
            Some(v) => v == "3" || v.starts_with("3."),
            None => true,
        };
        if schema_3 && ACTIVITY.iter().any(|t| db.has(&session.table(t))) {
            out.push(session);
        }
    }
    out
}

/// What [`regions_apart`] read: the regions in a builder of their own, and the string ids and
/// lookups it found missing.
type Apart = (ProfileBuilder, (FxHashSet<i64>, u64));

/// Reads the regions of session `s` over `db`, a second connection, into a builder of its own,
/// with the string ids it found missing. `None` when the string table cannot be looked up one
/// id at a time on this connection: the caller then reads the regions itself.
fn regions_apart(
    db: &Db,
    progress: &Progress,
    s: &Session,
    info: &SessionInfo,
    scope: u32,
) -> Result<Option<Apart>, ImportError> {
    let mut b = ProfileBuilder::new(db.path().to_path_buf(), Format::RocpdSqlite);
    let mut strings = Strings::new(db, &mut b, &s.table("rocpd_string"), "id", "string")?;
    if !strings.is_indexed() {
        return Ok(None);
    }
    read_regions(db, &mut b, progress, s, info, &mut strings, scope)?;
    Ok(Some((b, strings.into_missing())))
}

/// True if the database has a rocpd schema-3 session.
pub(super) fn recognise(db: &Db) -> bool {
    !sessions(db).is_empty()
}

/// Reads every session of a rocprofv3 database into one builder (a merged database of several
/// processes keeps their correlation ids apart by session).
pub(super) fn read(db: &Db, progress: &Progress) -> Result<ProfileBuilder, ImportError> {
    let mut b = ProfileBuilder::new(db.path().to_path_buf(), Format::RocpdSqlite);
    b.source.tool = "rocprofv3".to_string();
    let sessions = sessions(db);
    let steps = sessions.len() as u64 * 5 + 1;
    let mut lanes = Lanes::default();
    let mut thread_names = FxHashMap::default();
    for (i, s) in sessions.iter().enumerate() {
        if b.source.schema_version.is_none() {
            b.source.schema_version.clone_from(&s.version);
        }
        if s.version.is_none() {
            b.warn_at(
                "rocpd_schema_version_missing",
                1,
                &s.table(METADATA),
                "no schema_version: read as rocpd schema 3",
            );
        }
        let scope = u32::try_from(i).unwrap_or(u32::MAX);
        let info = read_info(db, &mut b, s);
        let mut strings = Strings::new(db, &mut b, &s.table("rocpd_string"), "id", "string")?;
        let step = i as u64 * 5;
        // The regions (API calls, as many as the dispatches and copies together or more) are
        // read on a second connection on another thread while this one reads the GPU tables;
        // their builder is appended as if its rows had been pushed here after the GPU tables,
        // so the profile is the same as when all is read on this thread
        // (`WARPSCOPE_THREADS=0`).
        std::thread::scope(|threads| -> Result<(), ImportError> {
            let apart = (db.has(&s.table("rocpd_region"))
                && strings.is_indexed()
                && parallel::threads() > 1)
                .then(|| db.reopen())
                .flatten()
                .map(|second| {
                    let info = &info;
                    threads.spawn(move || regions_apart(&second?, progress, s, info, scope))
                });
            db.checkpoint(progress, step + 1, steps)?;
            read_dispatches(db, &mut b, progress, s, &info, &mut lanes, scope)?;
            db.checkpoint(progress, step + 2, steps)?;
            read_copies(
                db,
                &mut b,
                progress,
                s,
                &info,
                &mut strings,
                &mut lanes,
                scope,
            )?;
            db.checkpoint(progress, step + 3, steps)?;
            let done_apart = match apart {
                Some(handle) => match handle.join() {
                    Ok(done) => done?,
                    Err(panic) => std::panic::resume_unwind(panic),
                },
                None => None,
            };
            match done_apart {
                Some((regions, missing)) => {
                    b.append(regions);
                    strings.absorb(missing);
                }
                None => read_regions(db, &mut b, progress, s, &info, &mut strings, scope)?,
            }
            Ok(())
        })?;
        read_samples(db, &mut b, progress, s, &info, &mut strings)?;
        db.checkpoint(progress, step + 4, steps)?;
        super::rocpd_memory::read(db, &mut b, progress, s, &info)?;
        strings.report(&mut b);
        thread_names.extend(info.thread_names);
    }
    name_tracks(&mut b, &FxHashMap::default(), &thread_names);
    lanes.name(&mut b);
    add_missing_devices(&mut b);
    Ok(b)
}
