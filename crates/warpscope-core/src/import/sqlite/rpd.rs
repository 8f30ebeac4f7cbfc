//! rocmProfileData (`rpd_tracer`) SQLite databases (`.rpd`, `rocpd_metadata.schema_version`
//! 2; unrelated to rocprofv3's rocpd despite the shared `rocpd_` prefix): GPU operations in
//! `rocpd_op`, HIP/HSA calls in `rocpd_api`, the call that launched each operation in
//! `rocpd_api_ops`, launch details in `rocpd_kernelapi` and `rocpd_copyapi`, names in
//! `rocpd_string`. The format is described in `docs/formats.md`, "rocmProfileData".

use rustc_hash::FxHashMap;

use super::amd::{
    COPY_LANE, Lanes, amd_device, api_kind, copy_kind, copy_memory, gfx_from_kernel_name,
    schema_version, workgroups,
};
use super::{Db, Strings, TimeCheck, Zero, int, name_tracks, thread_track, time, uint32, uint64};
use crate::builder::{ProfileBuilder, TrackId};
use crate::import::{ImportError, Progress};
use crate::model::{ApiInfo, CopyInfo, CopyKind, EventKind, Format, KernelInfo};
use crate::strings::StrId;

const OP: &str = "rocpd_op";
const API: &str = "rocpd_api";
const API_OPS: &str = "rocpd_api_ops";
const KERNEL_API: &str = "rocpd_kernelapi";
const COPY_API: &str = "rocpd_copyapi";
const CODE_OBJECT: &str = "rocpd_kernelcodeobject";
const STRING: &str = "rocpd_string";
const METADATA: &str = "rocpd_metadata";

/// True if the database is an RPD: `rocpd_op` and `rocpd_api` (the two tables every RPD has),
/// and a `rocpd_metadata` that says schema 2 or has no version (RPD before metadata).
pub(super) fn recognise(db: &Db) -> bool {
    if !(db.has(OP) && db.has(API)) {
        return false;
    }
    match schema_version(db, METADATA) {
        Some(v) => v == "2" || v == "1",
        None => true,
    }
}

/// Launch details of a kernel call (`rocpd_kernelapi`).
struct KernelCall {
    grid: Option<[u32; 3]>,
    workgroup: Option<[u32; 3]>,
    lds_bytes: Option<u64>,
    scratch_bytes: Option<u64>,
    code_object: Option<i64>,
    kernel_name: Option<i64>,
}

/// Reads an RPD into a builder.
pub(super) fn read(db: &Db, progress: &Progress) -> Result<ProfileBuilder, ImportError> {
    let mut b = ProfileBuilder::new(db.path().to_path_buf(), Format::RpdSqlite);
    b.source.tool = "rocmProfileData (rpd_tracer)".to_string();
    b.source.schema_version = schema_version(db, METADATA);
    let mut strings = Strings::new(db, &mut b, STRING, "id", "string")?;
    db.checkpoint(progress, 1, 4)?;
    let launched_by = api_of_ops(db, &mut b);
    let kernels = kernel_calls(db, &mut b);
    let copy_bytes = copy_sizes(db, &mut b);
    let registers = code_objects(db, &mut b);
    db.checkpoint(progress, 2, 4)?;
    read_api(db, &mut b, progress, &mut strings)?;
    db.checkpoint(progress, 3, 4)?;
    let ops = OpTables {
        launched_by: &launched_by,
        kernels: &kernels,
        copy_bytes: &copy_bytes,
        registers: &registers,
    };
    let mut lanes = Lanes::default();
    let gfx = read_ops(db, &mut b, progress, &mut strings, &ops, &mut lanes)?;
    strings.report(&mut b);
    name_tracks(&mut b, &FxHashMap::default(), &FxHashMap::default());
    lanes.name(&mut b);
    let mut gpus: Vec<u32> = b.undescribed_gpu_ids();
    gpus.sort_unstable();
    for id in gpus {
        let isa = gfx.get(&id).map(String::as_str);
        let name = isa.map_or_else(
            || format!("AMD GPU {id}"),
            |t| format!("AMD GPU {id} ({t})"),
        );
        b.devices.push(amd_device(id, name, isa));
    }
    Ok(b)
}

/// The launching call of each operation (`rocpd_api_ops`: `op_id` to `api_id`).
fn api_of_ops(db: &Db, b: &mut ProfileBuilder) -> FxHashMap<i64, i64> {
    let mut out = FxHashMap::default();
    db.meta_rows(b, API_OPS, &["api_id", "op_id"], &[], |row| {
        if let (Some(api), Some(op)) = (int(row, 0), int(row, 1)) {
            out.entry(op).or_insert(api);
        }
    });
    out
}

/// Launch details of every kernel call, by call id.
fn kernel_calls(db: &Db, b: &mut ProfileBuilder) -> FxHashMap<i64, KernelCall> {
    let mut out = FxHashMap::default();
    db.meta_rows(
        b,
        KERNEL_API,
        &["api_ptr_id"],
        &[
            "gridX",
            "gridY",
            "gridZ",
            "workgroupX",
            "workgroupY",
            "workgroupZ",
            "groupSegmentSize",
            "privateSegmentSize",
            "codeObject_id",
            "kernelName_id",
        ],
        |row| {
            let Some(id) = int(row, 0) else { return };
            let dims = |a: usize| match [a, a + 1, a + 2].map(|i| uint32(row, i)) {
                [Some(x), Some(y), Some(z)] => Some([x, y, z]),
                _ => None,
            };
            out.insert(
                id,
                KernelCall {
                    grid: dims(1),
                    workgroup: dims(4),
                    lds_bytes: uint64(row, 7),
                    scratch_bytes: uint64(row, 8),
                    code_object: int(row, 9),
                    kernel_name: int(row, 10),
                },
            );
        },
    );
    out
}

/// The size of every copy call, by call id.
fn copy_sizes(db: &Db, b: &mut ProfileBuilder) -> FxHashMap<i64, u64> {
    let mut out = FxHashMap::default();
    db.meta_rows(b, COPY_API, &["api_ptr_id"], &["size"], |row| {
        if let (Some(id), Some(size)) = (int(row, 0), uint64(row, 1)) {
            out.insert(id, size);
        }
    });
    out
}

/// VGPRs and SGPRs of each code object (`rocpd_kernelcodeobject`), by id.
fn code_objects(db: &Db, b: &mut ProfileBuilder) -> FxHashMap<i64, (Option<u32>, Option<u32>)> {
    let mut out = FxHashMap::default();
    db.meta_rows(b, CODE_OBJECT, &["id"], &["vgpr", "sgpr"], |row| {
        if let Some(id) = int(row, 0) {
            out.insert(id, (uint32(row, 1), uint32(row, 2)));
        }
    });
    out
}

/// The calls of `rocpd_api`, on their threads. HIP and HSA calls are API calls (correlation id
/// = the call's id); `UserMarker` rows are ROCTx ranges named by their argument string; any
/// other row is the tracer's own work (`hcc_activity_callback`, `OpTable::writeRows`), shown
/// as profiler overhead.
fn read_api(
    db: &Db,
    b: &mut ProfileBuilder,
    progress: &Progress,
    strings: &mut Strings<'_>,
) -> Result<(), ImportError> {
    let sel = db.select(
        API,
        &["start", "end", "apiName_id"],
        &["id", "pid", "tid", "args_id"],
    )?;
    let mut times = TimeCheck::new(Zero::BothUncollected);
    let mut tracks: FxHashMap<(i64, i64), TrackId> = FxHashMap::default();
    let mut kind_of: FxHashMap<StrId, EventKind> = FxHashMap::default();
    db.for_each_row(&sel, progress, |row| {
        let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
            return Ok(());
        };
        let name = strings.get_or_placeholder(db, b, int(row, 2).unwrap_or(0))?;
        let (pid, tid) = (int(row, 4).unwrap_or(0), int(row, 5).unwrap_or(0));
        let track = *tracks
            .entry((pid, tid))
            .or_insert_with(|| thread_track(b, pid, tid));
        let kind = *kind_of.entry(name).or_insert_with(|| {
            let text = b.strings.get(name);
            match api_kind(text) {
                EventKind::Slice if text == "UserMarker" => EventKind::Nvtx,
                EventKind::Slice | EventKind::Nvtx => EventKind::Overhead,
                k => k,
            }
        });
        match kind {
            k if k.is_api() => {
                let api = ApiInfo {
                    correlation: uint64(row, 3).filter(|&c| c != 0),
                    ..ApiInfo::default()
                };
                b.push_api(track, start, dur, name, k, api, 0);
            }
            EventKind::Nvtx => {
                let label = match int(row, 6) {
                    Some(id) => strings
                        .get(db, b, id)?
                        .filter(|s| !b.strings.get(*s).is_empty()),
                    None => None,
                };
                b.push(track, start, dur, label.unwrap_or(name), kind);
            }
            k => b.push(track, start, dur, name, k),
        }
        Ok(())
    })?;
    times.report(b, API);
    Ok(())
}

/// What [`read_ops`] looks operations' calls up in.
struct OpTables<'a> {
    launched_by: &'a FxHashMap<i64, i64>,
    kernels: &'a FxHashMap<i64, KernelCall>,
    copy_bytes: &'a FxHashMap<i64, u64>,
    registers: &'a FxHashMap<i64, (Option<u32>, Option<u32>)>,
}

/// The GPU operations of `rocpd_op`, one lane per (GPU, queue), copies on a lane of their own:
/// `KernelExecution` rows are kernels, `Copy*` rows copies, `FillBuffer` rows sets, anything
/// else (barriers, markers) a GPU synchronisation record. Returns the gfx target each GPU's
/// kernel names give (Tensile's `_ISA90a_`).
fn read_ops(
    db: &Db,
    b: &mut ProfileBuilder,
    progress: &Progress,
    strings: &mut Strings<'_>,
    t: &OpTables<'_>,
    lanes: &mut Lanes,
) -> Result<FxHashMap<u32, String>, ImportError> {
    let sel = db.select(
        OP,
        &["start", "end", "gpuId", "opType_id"],
        &["id", "queueId", "description_id"],
    )?;
    let mut times = TimeCheck::new(Zero::BothUncollected);
    let mut op_kinds: FxHashMap<StrId, (EventKind, CopyKind)> = FxHashMap::default();
    let mut gfx: FxHashMap<u32, String> = FxHashMap::default();
    db.for_each_row(&sel, progress, |row| {
        let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
            return Ok(());
        };
        let device = uint32(row, 2).unwrap_or(0);
        let op_type = strings.get_or_placeholder(db, b, int(row, 3).unwrap_or(0))?;
        let (kind, copy) = *op_kinds.entry(op_type).or_insert_with(|| {
            let text = b.strings.get(op_type);
            match (text, copy_kind(text)) {
                ("KernelExecution", _) => (EventKind::Kernel, CopyKind::Unknown),
                (_, Some(c)) => (EventKind::Memcpy, c),
                ("FillBuffer", _) => (EventKind::Memset, CopyKind::Memset),
                _ => (EventKind::GpuSync, CopyKind::Unknown),
            }
        });
        let call = int(row, 4).and_then(|op| t.launched_by.get(&op).copied());
        let correlation = call.and_then(|c| u64::try_from(c).ok()).filter(|&c| c != 0);
        let queue = int(row, 5).unwrap_or(0);
        let lane = u64::try_from(queue).unwrap_or(0)
            | if kind == EventKind::Kernel {
                0
            } else {
                COPY_LANE
            };
        let track = lanes.track(b, device, lane, || match kind {
            EventKind::Kernel => format!("Queue {queue}"),
            _ => format!("copies · Queue {queue}"),
        });
        let description = match int(row, 6) {
            Some(id) => strings
                .get(db, b, id)?
                .filter(|s| !b.strings.get(*s).is_empty()),
            None => None,
        };
        match kind {
            EventKind::Kernel => {
                let k = call.and_then(|c| t.kernels.get(&c));
                let name = match (description, k.and_then(|k| k.kernel_name)) {
                    (Some(d), _) => d,
                    (None, Some(id)) => strings.get_or_placeholder(db, b, id)?,
                    (None, None) => op_type,
                };
                if !gfx.contains_key(&device)
                    && let Some(isa) = gfx_from_kernel_name(b.strings.get(name))
                {
                    gfx.insert(device, isa);
                }
                let regs = k
                    .and_then(|k| k.code_object)
                    .and_then(|c| t.registers.get(&c));
                let info = KernelInfo {
                    grid: workgroups(k.and_then(|k| k.grid), k.and_then(|k| k.workgroup)),
                    block: k.and_then(|k| k.workgroup),
                    registers_per_thread: regs.and_then(|r| r.0),
                    scalar_registers: regs.and_then(|r| r.1),
                    static_shared_bytes: k.and_then(|k| k.lds_bytes),
                    scratch_bytes: k.and_then(|k| k.scratch_bytes),
                    correlation,
                    ..KernelInfo::default()
                };
                b.push_kernel(track, start, dur, name, info, 0);
            }
            EventKind::Memcpy | EventKind::Memset => {
                let (src_kind, dst_kind) = copy_memory(copy);
                let info = CopyInfo {
                    kind: copy,
                    bytes: call.and_then(|c| t.copy_bytes.get(&c).copied()),
                    src_kind,
                    dst_kind,
                    correlation,
                    external_id: None,
                };
                b.push_copy(track, start, dur, op_type, kind, info, 0);
            }
            _ => b.push(track, start, dur, description.unwrap_or(op_type), kind),
        }
        Ok(())
    })?;
    times.report(b, OP);
    Ok(gfx)
}
