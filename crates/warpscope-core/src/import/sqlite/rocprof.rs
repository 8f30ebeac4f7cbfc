//! Legacy rocprof (v1) SQLite databases (`rocprof --hip-trace ... -o results.csv` writes
//! `results.db` beside it): one table per trace, `HIP` and `HSA` (API calls), `OPS` (kernels and
//! other GPU operations), `COPY` (copies), `KERN` (the kernel trace, when collected with
//! timestamps), columns named as in rocprof's CSV files (`BeginNs`, `EndNs`, `dev-id`, ...).
//! `Index` is the correlation id: an operation has the `Index` of the call that launched it. The
//! format is described in `docs/formats.md`, "rocprof v1".

use rustc_hash::FxHashMap;

use super::amd::{COPY_LANE, Lanes, amd_device, api_kind, copy_kind, copy_memory, workgroups};
use super::db::Select;
use super::{
    Db, TimeCheck, Zero, add_missing_devices, int, name_tracks, text, thread_track, time, uint32,
    uint64,
};
use crate::builder::{ProfileBuilder, TrackId};
use crate::import::{ImportError, Progress};
use crate::model::{ApiInfo, CopyInfo, CopyKind, EventKind, Format, KernelInfo};
use crate::strings::StrId;

/// The API tables, in the order they are read.
const API_TABLES: [&str; 2] = ["HIP", "HSA"];
const OPS: &str = "OPS";
const COPY: &str = "COPY";
const KERN: &str = "KERN";

/// True if the database has a rocprof v1 trace table with rocprof's time columns.
pub(super) fn recognise(db: &Db) -> bool {
    [API_TABLES[0], API_TABLES[1], OPS, COPY, KERN]
        .iter()
        .any(|t| {
            db.has(t)
                && db.columns(t).is_ok_and(|cols| {
                    cols.iter().any(|c| c == "BeginNs")
                        || (*t == KERN && cols.iter().any(|c| c == "KernelName"))
                })
        })
}

/// Reads a rocprof v1 database into a builder.
pub(super) fn read(db: &Db, progress: &Progress) -> Result<ProfileBuilder, ImportError> {
    let mut b = ProfileBuilder::new(db.path().to_path_buf(), Format::RocprofSqlite);
    b.source.tool = "rocprof (v1)".to_string();
    let mut copy_bytes: FxHashMap<i64, u64> = FxHashMap::default();
    let mut names: FxHashMap<String, StrId> = FxHashMap::default();
    for (i, table) in API_TABLES.into_iter().enumerate() {
        db.checkpoint(progress, i as u64 + 1, 6)?;
        if db.has(table) && has_times(db, table) {
            read_api(db, &mut b, progress, table, &mut names, &mut copy_bytes)?;
        }
    }
    let mut lanes = Lanes::default();
    db.checkpoint(progress, 3, 6)?;
    let kern_timed = db.has(KERN) && has_times(db, KERN);
    if db.has(OPS) && has_times(db, OPS) {
        read_ops(
            db, &mut b, progress, OPS, &mut names, &mut lanes, kern_timed,
        )?;
    }
    db.checkpoint(progress, 4, 6)?;
    if kern_timed {
        read_ops(db, &mut b, progress, KERN, &mut names, &mut lanes, false)?;
    }
    db.checkpoint(progress, 5, 6)?;
    if db.has(COPY) && has_times(db, COPY) {
        read_copies(db, &mut b, progress, &mut names, &copy_bytes, &mut lanes)?;
    }
    name_tracks(&mut b, &FxHashMap::default(), &FxHashMap::default());
    lanes.name(&mut b);
    for id in b.undescribed_gpu_ids() {
        b.devices
            .push(amd_device(id, format!("AMD GPU {id}"), None));
    }
    add_missing_devices(&mut b);
    Ok(b)
}

/// True if `table` has rocprof's `BeginNs` and `EndNs` (an empty `KERN` of a run without
/// kernel tracing has only `Index` and `KernelName`).
fn has_times(db: &Db, table: &str) -> bool {
    db.columns(table)
        .is_ok_and(|c| c.iter().any(|c| c == "BeginNs") && c.iter().any(|c| c == "EndNs"))
}

/// Interns `s` once per distinct text.
fn name(b: &mut ProfileBuilder, names: &mut FxHashMap<String, StrId>, s: &str) -> StrId {
    if let Some(&id) = names.get(s) {
        return id;
    }
    let id = b.intern(s);
    names.insert(s.to_string(), id);
    id
}

/// The size a copy call passes, from rocprof's argument text (`( dst(0x…) src(0x…)
/// sizeBytes(4000000000) kind(1))`).
fn size_argument(args: &str) -> Option<u64> {
    let at = args.find("sizeBytes(")? + "sizeBytes(".len();
    let digits: String = args[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The calls of an API table, on their threads; the sizes of copy calls are kept by `Index`.
fn read_api(
    db: &Db,
    b: &mut ProfileBuilder,
    progress: &Progress,
    table: &'static str,
    names: &mut FxHashMap<String, StrId>,
    copy_bytes: &mut FxHashMap<i64, u64>,
) -> Result<(), ImportError> {
    let sel = db.select(
        table,
        &["BeginNs", "EndNs", "Name"],
        &["pid", "tid", "Index", "args"],
    )?;
    let mut times = TimeCheck::new(Zero::EitherUncollected);
    let mut tracks: FxHashMap<(i64, i64), TrackId> = FxHashMap::default();
    db.for_each_row(&sel, progress, |row| {
        let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
            return Ok(());
        };
        let call = text(row, 2).unwrap_or("");
        let kind = match api_kind(call) {
            EventKind::Slice if table == "HSA" => EventKind::Driver,
            EventKind::Slice => EventKind::Runtime,
            k => k,
        };
        let id = name(b, names, call);
        let (pid, tid) = (int(row, 3).unwrap_or(0), int(row, 4).unwrap_or(0));
        let track = *tracks
            .entry((pid, tid))
            .or_insert_with(|| thread_track(b, pid, tid));
        let index = int(row, 5);
        if let (Some(i), Some(size)) = (index, text(row, 6).and_then(size_argument)) {
            copy_bytes.insert(i, size);
        }
        if kind.is_api() {
            let api = ApiInfo {
                correlation: index
                    .and_then(|i| u64::try_from(i).ok())
                    .filter(|&c| c != 0),
                ..ApiInfo::default()
            };
            b.push_api(track, start, dur, id, kind, api, 0);
        } else {
            b.push(track, start, dur, id, kind);
        }
        Ok(())
    })?;
    times.report(b, table);
    Ok(())
}

/// The SELECT of a kernel table: `OPS` (name `Name`) or `KERN` (name `KernelName`, with the
/// kernel trace's launch columns).
fn select_ops(db: &Db, table: &str) -> Result<Select, ImportError> {
    let name = if table == KERN { "KernelName" } else { "Name" };
    db.select(
        table,
        &["BeginNs", "EndNs", name],
        &[
            "dev-id",
            "gpu-id",
            "queue-id",
            "stream-id",
            "Index",
            "grd",
            "wgr",
            "lds",
            "scr",
            "arch_vgpr",
            "vgpr",
            "accum_vgpr",
            "sgpr",
            "wave_size",
        ],
    )
}

/// The kernels of `OPS` or `KERN` (and, in `OPS`, the fills and barriers the HIP trace also
/// records). With `skip_kernels`, `OPS` gives only what is not a kernel: `KERN` has them.
#[allow(clippy::too_many_arguments)] // the reader's shared state, as the other readers
fn read_ops(
    db: &Db,
    b: &mut ProfileBuilder,
    progress: &Progress,
    table: &'static str,
    names: &mut FxHashMap<String, StrId>,
    lanes: &mut Lanes,
    skip_kernels: bool,
) -> Result<(), ImportError> {
    let sel = select_ops(db, table)?;
    let mut times = TimeCheck::new(Zero::EitherUncollected);
    db.for_each_row(&sel, progress, |row| {
        let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
            return Ok(());
        };
        let op = text(row, 2).unwrap_or("");
        let kind = match op {
            "FillBuffer" => EventKind::Memset,
            o if o.starts_with("Barrier") || o.starts_with("Marker") => EventKind::GpuSync,
            _ => EventKind::Kernel,
        };
        if skip_kernels && kind == EventKind::Kernel {
            return Ok(());
        }
        let device = uint32(row, 3).or_else(|| uint32(row, 4)).unwrap_or(0);
        let (queue, stream) = (int(row, 5), int(row, 6));
        let lane = u64::try_from(stream.or(queue).unwrap_or(0)).unwrap_or(0);
        let track = lanes.track(b, device, lane, || match (stream, queue) {
            (Some(s), Some(q)) => format!("stream {s} · queue {q}"),
            (Some(s), None) => format!("stream {s}"),
            (None, Some(q)) => format!("queue {q}"),
            (None, None) => "queue".to_string(),
        });
        let id = name(b, names, op);
        let correlation = uint64(row, 7).filter(|&c| c != 0);
        match kind {
            EventKind::Kernel => {
                // The kernel trace gives the grid in work-items and one workgroup size.
                let workgroup = uint32(row, 9).map(|w| [w, 1, 1]);
                let grid = workgroups(uint32(row, 8).map(|g| [g, 1, 1]), workgroup);
                let info = KernelInfo {
                    grid,
                    block: workgroup,
                    static_shared_bytes: uint64(row, 10),
                    scratch_bytes: uint64(row, 11),
                    registers_per_thread: uint32(row, 12).or_else(|| uint32(row, 13)),
                    accum_registers: uint32(row, 14),
                    scalar_registers: uint32(row, 15),
                    wave_size: uint32(row, 16),
                    correlation,
                    ..KernelInfo::default()
                };
                b.push_kernel(track, start, dur, id, info, 0);
            }
            EventKind::Memset => {
                let info = CopyInfo {
                    kind: CopyKind::Memset,
                    bytes: None,
                    src_kind: None,
                    dst_kind: None,
                    correlation,
                    external_id: None,
                };
                b.push_copy(track, start, dur, id, kind, info, 0);
            }
            k => b.push(track, start, dur, id, k),
        }
        Ok(())
    })?;
    times.report(b, table);
    Ok(())
}

/// The copies of `COPY`, their sizes from the launching call's arguments.
fn read_copies(
    db: &Db,
    b: &mut ProfileBuilder,
    progress: &Progress,
    names: &mut FxHashMap<String, StrId>,
    copy_bytes: &FxHashMap<i64, u64>,
    lanes: &mut Lanes,
) -> Result<(), ImportError> {
    let sel = db.select(
        COPY,
        &["BeginNs", "EndNs", "Name"],
        &["dev-id", "queue-id", "stream-id", "Index"],
    )?;
    let mut times = TimeCheck::new(Zero::EitherUncollected);
    db.for_each_row(&sel, progress, |row| {
        let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
            return Ok(());
        };
        let op = text(row, 2).unwrap_or("");
        let kind = copy_kind(op).unwrap_or(CopyKind::Unknown);
        let device = uint32(row, 3).unwrap_or(0);
        let stream = int(row, 5);
        let lane = COPY_LANE | u64::try_from(stream.unwrap_or(0)).unwrap_or(0);
        let track = lanes.track(b, device, lane, || match stream {
            Some(s) => format!("copies · stream {s}"),
            None => "copies".to_string(),
        });
        let index = int(row, 6);
        let (src_kind, dst_kind) = copy_memory(kind);
        let info = CopyInfo {
            kind,
            bytes: index.and_then(|i| copy_bytes.get(&i).copied()),
            src_kind,
            dst_kind,
            correlation: index
                .and_then(|i| u64::try_from(i).ok())
                .filter(|&c| c != 0),
            external_id: None,
        };
        let id = name(b, names, op);
        b.push_copy(track, start, dur, id, EventKind::Memcpy, info, 0);
        Ok(())
    })?;
    times.report(b, COPY);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_sizes_come_from_the_call_arguments() {
        assert_eq!(
            size_argument(
                "( dst(0x7fc7d5600000) src(0x7fe2ae547010) sizeBytes(4000000000) kind(1))"
            ),
            Some(4_000_000_000)
        );
        assert_eq!(
            size_argument("( ptr(0x7fc7d5600000) size(4000000000))"),
            None
        );
    }
}
