//! Nsight Systems SQLite exports (`nsys export --type sqlite`, schemas 2.9 to 3.24 seen):
//! `CUPTI_ACTIVITY_KIND_*` tables that exist only when they have data, names as ids into
//! `StringIds`, timestamps on the capture's own clock, and packed global thread/process ids.
//! CUDA memory usage (`CUDA_GPU_MEMORY_USAGE_EVENTS`) is read by `nsys_memory.rs`.

use rustc_hash::{FxHashMap, FxHashSet};

use super::{
    ActivityNames, Db, Strings, TIME_LIMIT_NS, Time, TimeCheck, Zero, add_missing_devices,
    copy_info, correlation, gpu_track, int, kernel_info, memory_kind_nsys, memset_info,
    name_tracks, nsys_memory, pid_of, select_copies, select_kernels, select_memsets, stream_id,
    text, thread_track, tid_of, time, uint32, uint64, work_track,
};
use crate::builder::{ProfileBuilder, TrackId};
use crate::import::{ImportError, Progress};
use crate::model::{
    ApiInfo, CopyKind, Device, EventKind, Format, GpuLane, GpuVendor, TraceId, TrackKey,
};
use crate::parallel;
use crate::strings::StrId;

const KERNEL: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
const MEMCPY: &str = "CUPTI_ACTIVITY_KIND_MEMCPY";
const MEMSET: &str = "CUPTI_ACTIVITY_KIND_MEMSET";
const RUNTIME: &str = "CUPTI_ACTIVITY_KIND_RUNTIME";
const SYNCHRONIZATION: &str = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
const NVTX_EVENTS: &str = "NVTX_EVENTS";
const ACTIVITY_TABLES: [&str; 6] = [
    KERNEL,
    MEMCPY,
    MEMSET,
    RUNTIME,
    SYNCHRONIZATION,
    NVTX_EVENTS,
];

/// Nsight Systems times are on the capture's clock: 0 is a real time; only `start = end = 0`
/// means "not collected".
const ZERO: Zero = Zero::BothUncollected;

/// `ENUM_NSYS_EVENT_CLASS` values in the runtime table.
const CLASS_RUNTIME: i64 = 0;
const CLASS_DRIVER: i64 = 1;

/// `ENUM_NSYS_EVENT_TYPE` values in `NVTX_EVENTS`.
const NVTX_CATEGORY: i64 = 33;
const NVTX_MARK: i64 = 34;
const NVTX_PUSH_POP: i64 = 59;
const NVTX_START_END: i64 = 60;
const NVTX_DOMAIN_CREATE: i64 = 75;
const NVTX_DOMAIN_DESTROY: i64 = 76;

/// True if the database has the tables of an Nsight Systems export.
/// `StringIds` or the export's meta-data tables may be missing from a damaged file; either,
/// with activity tables, still says Nsight Systems.
pub(super) fn recognise(db: &Db) -> bool {
    let meta =
        db.has("EXPORT_META_DATA") || db.has("META_DATA_EXPORT") || db.has("TARGET_INFO_GPU");
    let activity = ACTIVITY_TABLES.iter().any(|t| db.has(t));
    (db.has("StringIds") && (meta || activity)) || (meta && activity)
}

/// Correlation scope of a serialized global id: its process.
fn scope_of(global: Option<i64>) -> u32 {
    global.map_or(0, |g| u32::try_from(pid_of(g)).unwrap_or(0))
}

/// Adds the process of a row's `globalPid` (if any) to `pids` and returns its correlation scope.
fn note_process(pids: &mut FxHashSet<i64>, global_pid: Option<i64>) -> u32 {
    if let Some(g) = global_pid {
        pids.insert(pid_of(g));
    }
    scope_of(global_pid)
}

/// Reads an Nsight Systems export into a builder.
pub(super) fn read(db: &Db, progress: &Progress) -> Result<ProfileBuilder, ImportError> {
    let mut b = ProfileBuilder::new(db.path().to_path_buf(), Format::NsysSqlite);
    b.source.tool = "Nsight Systems".to_string();
    read_meta(db, &mut b);
    read_session_start(db, &mut b);
    let mut r = Reader {
        db,
        strings: Strings::new(db, &mut b, "StringIds", "id", "value")?,
        names: ActivityNames::default(),
        pids: FxHashSet::default(),
        devices: FxHashSet::default(),
    };
    const STEPS: u64 = 9;
    // The runtime table, as large as the kernel table in a real export, is read on a second
    // connection on another thread while this one reads the GPU tables; its builder is then
    // appended as if its rows had been pushed here after the GPU tables, so the profile is the
    // same as when all is read on this thread (`WARPSCOPE_THREADS=0`).
    std::thread::scope(|scope| -> Result<(), ImportError> {
        let apart = (db.has(RUNTIME) && r.strings.is_indexed() && parallel::threads() > 1)
            .then(|| db.reopen())
            .flatten()
            .map(|second| scope.spawn(move || read_api_apart(&second?, progress)));
        db.checkpoint(progress, 1, STEPS)?;
        if db.has(KERNEL) {
            r.read_kernels(&mut b, progress)?;
        }
        db.checkpoint(progress, 2, STEPS)?;
        if db.has(MEMCPY) {
            r.read_memcpy(&mut b, progress)?;
        }
        db.checkpoint(progress, 3, STEPS)?;
        if db.has(MEMSET) {
            r.read_memset(&mut b, progress)?;
        }
        db.checkpoint(progress, 4, STEPS)?;
        let done_apart = match apart {
            Some(handle) => match handle.join() {
                Ok(done) => done?,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            None => None,
        };
        match done_apart {
            Some(api) => {
                b.append(api.builder);
                r.pids.extend(api.pids);
                r.strings.absorb_missing(api.missing_strings);
            }
            None if db.has(RUNTIME) => r.read_api(&mut b, progress)?,
            None => {}
        }
        Ok(())
    })?;
    db.checkpoint(progress, 5, STEPS)?;
    if db.has(SYNCHRONIZATION) {
        r.read_sync(&mut b, progress)?;
    }
    db.checkpoint(progress, 6, STEPS)?;
    if db.has(NVTX_EVENTS) {
        r.read_nvtx(&mut b, progress)?;
    }
    db.checkpoint(progress, 7, STEPS)?;
    nsys_memory::read(db, &mut b, progress, &mut r.pids, &mut r.devices)?;
    db.checkpoint(progress, 8, STEPS)?;
    if !ACTIVITY_TABLES.iter().any(|t| db.has(t)) && !db.has(nsys_memory::MEMORY_USAGE) {
        b.warn(
            "sqlite_no_activity_tables",
            1,
            format!(
                "the export has none of the tables {}: the profile is empty",
                ACTIVITY_TABLES.join(", ")
            ),
        );
    }
    r.read_devices(&mut b);
    r.read_processes(&mut b);
    let thread_names = r.read_thread_names(&mut b)?;
    r.strings.report(&mut b);
    add_missing_devices(&mut b);
    name_tracks(&mut b, &FxHashMap::default(), &thread_names);
    Ok(b)
}

/// What [`read_api_apart`] read: the runtime table's events in a builder of their own, the
/// processes they name and the string ids it found missing.
struct ApiApart {
    builder: ProfileBuilder,
    pids: FxHashSet<i64>,
    missing_strings: FxHashSet<i64>,
}

/// Reads the runtime table over `db`, a second connection, into a builder of its own. `None`
/// when the string table cannot be looked up one id at a time on this connection: the caller
/// then reads the table itself (so that warnings about the string table come once).
fn read_api_apart(db: &Db, progress: &Progress) -> Result<Option<ApiApart>, ImportError> {
    let mut b = ProfileBuilder::new(db.path().to_path_buf(), Format::NsysSqlite);
    let strings = Strings::new(db, &mut b, "StringIds", "id", "value")?;
    if !strings.is_indexed() {
        return Ok(None);
    }
    let mut r = Reader {
        db,
        strings,
        names: ActivityNames::default(),
        pids: FxHashSet::default(),
        devices: FxHashSet::default(),
    };
    r.read_api(&mut b, progress)?;
    let Reader { pids, strings, .. } = r;
    Ok(Some(ApiApart {
        builder: b,
        pids,
        missing_strings: strings.into_missing_ids(),
    }))
}

/// `EXPORT_META_DATA` (≤ 2023) or `META_DATA_EXPORT` (2025+): product and schema versions.
fn read_meta(db: &Db, b: &mut ProfileBuilder) {
    let Some(table) = ["META_DATA_EXPORT", "EXPORT_META_DATA"]
        .into_iter()
        .find(|t| db.has(t))
    else {
        b.warn(
            "nsys_no_meta_data",
            1,
            "the export has neither META_DATA_EXPORT nor EXPORT_META_DATA: tool and schema \
             versions are unknown",
        );
        return;
    };
    let mut pairs: Vec<(String, String)> = Vec::new();
    db.meta_rows(b, table, &["name", "value"], &[], |row| {
        if let Some(name) = text(row, 0) {
            let value = match row.get_ref(1) {
                Ok(rusqlite::types::ValueRef::Text(t)) => String::from_utf8_lossy(t).into_owned(),
                _ => int(row, 1).map(|v| v.to_string()).unwrap_or_default(),
            };
            pairs.push((name.to_string(), value));
        }
    });
    for (name, value) in pairs {
        match name.as_str() {
            "EXPORT_PRODUCT_VERSION" => b.source.tool_version = Some(value),
            "EXPORT_SCHEMA_VERSION" => b.source.schema_version = Some(value),
            "EXPORT_TIME_UTC" => b.source.details.push(("exported (UTC)".to_string(), value)),
            "EXPORT_PARAM_INPUT_FILE" => b.source.details.push(("report".to_string(), value)),
            _ => {}
        }
    }
    b.source
        .details
        .push(("meta-data table".to_string(), table.to_string()));
}

/// `TARGET_INFO_SESSION_START_TIME.utcEpochNs`: the wall-clock time of the capture clock's zero.
/// A value outside `[0, 2^62)` ns since the epoch is ignored with a warning (the profile then
/// has no wall-clock time).
fn read_session_start(db: &Db, b: &mut ProfileBuilder) {
    const TABLE: &str = "TARGET_INFO_SESSION_START_TIME";
    let mut found: Option<(Time, Option<String>)> = None;
    db.meta_rows(b, TABLE, &["utcEpochNs"], &["utcTime"], |row| {
        if found.is_none() {
            found = Some((time(row, 0), text(row, 1).map(str::to_string)));
        }
    });
    let Some((ns, utc)) = found else {
        return;
    };
    match ns {
        Time::Ns(ns) if (0..TIME_LIMIT_NS).contains(&ns) => {
            b.unix_offset_ns = Some(ns);
            if let Some(utc) = utc {
                b.source
                    .details
                    .push(("session start (UTC)".to_string(), utc));
            }
        }
        Time::Null => {}
        Time::Ns(_) | Time::Invalid => b.warn_at(
            "nsys_session_start_out_of_range",
            1,
            TABLE,
            "utcEpochNs is negative, not an integer or beyond 2^62 ns; the capture's wall-clock \
             time is unknown",
        ),
    }
}

struct Reader<'c> {
    db: &'c Db,
    strings: Strings<'c>,
    names: ActivityNames,
    /// Processes that appear in activity tables.
    pids: FxHashSet<i64>,
    /// Devices that appear in activity tables.
    devices: FxHashSet<u32>,
}

impl Reader<'_> {
    fn read_kernels(
        &mut self,
        b: &mut ProfileBuilder,
        progress: &Progress,
    ) -> Result<(), ImportError> {
        let sel = select_kernels(
            self.db,
            KERNEL,
            "demangledName",
            &["globalPid", "mangledName"],
        )?;
        let db = self.db;
        let strings = &mut self.strings;
        let (pids, devices) = (&mut self.pids, &mut self.devices);
        let mut times = TimeCheck::new(ZERO);
        let mut tracks: FxHashMap<(u32, u32, u64), TrackId> = FxHashMap::default();
        db.for_each_row(&sel, progress, |row| {
            let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
                return Ok(());
            };
            let device = uint32(row, 2).unwrap_or(0);
            let stream = stream_id(row, 3);
            let context = uint32(row, 5).unwrap_or(0);
            let name = strings.get_or_placeholder(db, b, int(row, 4).unwrap_or(0))?;
            let mangled = match int(row, 17) {
                Some(id) => strings.get(db, b, id)?,
                None => None,
            };
            let track = *tracks.entry((device, context, stream)).or_insert_with(|| {
                devices.insert(device);
                work_track(b, device, context, stream)
            });
            let scope = note_process(pids, int(row, 16));
            b.push_kernel(track, start, dur, name, kernel_info(row, mangled), scope);
            Ok(())
        })?;
        times.report(b, KERNEL);
        Ok(())
    }

    /// Copies; copyKind 11–13 are unified-memory migrations and go to the device's
    /// unified-memory lane as [`EventKind::UnifiedMemory`].
    fn read_memcpy(
        &mut self,
        b: &mut ProfileBuilder,
        progress: &Progress,
    ) -> Result<(), ImportError> {
        let sel = select_copies(self.db, MEMCPY, &["globalPid"])?;
        let names = &mut self.names;
        let (pids, devices) = (&mut self.pids, &mut self.devices);
        let mut times = TimeCheck::new(ZERO);
        let mut tracks: FxHashMap<(u32, u32, u64, bool), TrackId> = FxHashMap::default();
        self.db.for_each_row(&sel, progress, |row| {
            let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
                return Ok(());
            };
            let device = uint32(row, 2).unwrap_or(0);
            let kind = CopyKind::from_cupti(int(row, 4).unwrap_or(0));
            let unified = matches!(
                kind,
                CopyKind::UnifiedHtoD | CopyKind::UnifiedDtoH | CopyKind::UnifiedDtoD
            );
            let (context, stream) = if unified {
                (0, 0)
            } else {
                (uint32(row, 6).unwrap_or(0), stream_id(row, 3))
            };
            let (lane, event) = if unified {
                (GpuLane::UnifiedMemory, EventKind::UnifiedMemory)
            } else {
                (GpuLane::Work, EventKind::Memcpy)
            };
            let track = *tracks
                .entry((device, context, stream, unified))
                .or_insert_with(|| {
                    devices.insert(device);
                    gpu_track(b, device, context, stream, lane)
                });
            let scope = note_process(pids, int(row, 10));
            let name = names.copy(b, kind);
            let info = copy_info(row, kind, memory_kind_nsys);
            b.push_copy(track, start, dur, name, event, info, scope);
            Ok(())
        })?;
        times.report(b, MEMCPY);
        Ok(())
    }

    fn read_memset(
        &mut self,
        b: &mut ProfileBuilder,
        progress: &Progress,
    ) -> Result<(), ImportError> {
        let sel = select_memsets(self.db, MEMSET, "memKind", &["globalPid"])?;
        let name = self.names.copy(b, CopyKind::Memset);
        let (pids, devices) = (&mut self.pids, &mut self.devices);
        let mut times = TimeCheck::new(ZERO);
        self.db.for_each_row(&sel, progress, |row| {
            let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
                return Ok(());
            };
            let device = uint32(row, 2).unwrap_or(0);
            let context = uint32(row, 5).unwrap_or(0);
            devices.insert(device);
            let track = work_track(b, device, context, stream_id(row, 3));
            let scope = note_process(pids, int(row, 8));
            let info = memset_info(row, memory_kind_nsys);
            b.push_copy(track, start, dur, name, EventKind::Memset, info, scope);
            Ok(())
        })?;
        times.report(b, MEMSET);
        Ok(())
    }

    /// Runtime and driver calls, told apart by `eventClass` (0 runtime, 1 driver). Names keep
    /// CUPTI's `_v7000` suffix as stored; the analysis strips it for display.
    fn read_api(&mut self, b: &mut ProfileBuilder, progress: &Progress) -> Result<(), ImportError> {
        let sel = self.db.select(
            RUNTIME,
            &["start", "end", "nameId"],
            &["eventClass", "globalTid", "correlationId"],
        )?;
        let db = self.db;
        let strings = &mut self.strings;
        let pids = &mut self.pids;
        let mut times = TimeCheck::new(ZERO);
        let (mut other_class, mut no_thread) = (0u64, 0u64);
        let mut tracks: FxHashMap<i64, TrackId> = FxHashMap::default();
        let mut class_of_name: FxHashMap<StrId, EventKind> = FxHashMap::default();
        db.for_each_row(&sel, progress, |row| {
            let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
                return Ok(());
            };
            let Some(global_tid) = int(row, 4) else {
                no_thread += 1;
                return Ok(());
            };
            let name = strings.get_or_placeholder(db, b, int(row, 2).unwrap_or(0))?;
            let kind = match int(row, 3) {
                Some(CLASS_RUNTIME) => EventKind::Runtime,
                Some(CLASS_DRIVER) => EventKind::Driver,
                Some(_) => {
                    other_class += 1;
                    return Ok(());
                }
                // Without eventClass, tell driver calls (`cuLaunchKernel`) by their name.
                None => *class_of_name.entry(name).or_insert_with(|| {
                    let n = b.strings.get(name);
                    if n.starts_with("cu") && !n.starts_with("cuda") {
                        EventKind::Driver
                    } else {
                        EventKind::Runtime
                    }
                }),
            };
            let track = *tracks.entry(global_tid).or_insert_with(|| {
                pids.insert(pid_of(global_tid));
                thread_track(b, pid_of(global_tid), tid_of(global_tid))
            });
            let info = ApiInfo {
                correlation: correlation(row, 5),
                cbid: None,
                external_id: None,
            };
            b.push_api(
                track,
                start,
                dur,
                name,
                kind,
                info,
                scope_of(Some(global_tid)),
            );
            Ok(())
        })?;
        times.report(b, RUNTIME);
        b.warn(
            "nsys_other_event_class",
            other_class,
            format!("{RUNTIME}: rows whose eventClass is neither CUDA runtime (0) nor driver (1) were skipped"),
        );
        b.warn(
            "nsys_api_without_thread",
            no_thread,
            format!("{RUNTIME}: rows without a globalTid were skipped"),
        );
        Ok(())
    }

    fn read_sync(
        &mut self,
        b: &mut ProfileBuilder,
        progress: &Progress,
    ) -> Result<(), ImportError> {
        let sel = self.db.select(
            SYNCHRONIZATION,
            &["start", "end", "deviceId"],
            &["contextId", "streamId", "syncType", "globalPid"],
        )?;
        let names = &mut self.names;
        let (pids, devices) = (&mut self.pids, &mut self.devices);
        let mut times = TimeCheck::new(ZERO);
        self.db.for_each_row(&sel, progress, |row| {
            let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
                return Ok(());
            };
            let name = names.sync(b, int(row, 5));
            let device = uint32(row, 2).unwrap_or(0);
            devices.insert(device);
            note_process(pids, int(row, 6));
            let context = uint32(row, 3).unwrap_or(0);
            let track = gpu_track(b, device, context, stream_id(row, 4), GpuLane::Annotations);
            b.push(track, start, dur, name, EventKind::GpuSync);
            Ok(())
        })?;
        times.report(b, SYNCHRONIZATION);
        Ok(())
    }

    /// NVTX ranges and marks. Push/pop and start/end ranges go on the thread that opened them;
    /// marks are zero-duration events.
    fn read_nvtx(
        &mut self,
        b: &mut ProfileBuilder,
        progress: &Progress,
    ) -> Result<(), ImportError> {
        let sel = self.db.select(
            NVTX_EVENTS,
            &["start", "eventType"],
            &["end", "text", "textId", "globalTid", "domainId"],
        )?;
        let db = self.db;
        let strings = &mut self.strings;
        let pids = &mut self.pids;
        let mut times = TimeCheck::new(ZERO);
        let (mut unterminated, mut no_thread, mut other) = (0u64, 0u64, 0u64);
        let mut domains: Vec<String> = Vec::new();
        let mut tracks: FxHashMap<i64, TrackId> = FxHashMap::default();
        let unnamed = b.intern("(unnamed NVTX range)");
        db.for_each_row(&sel, progress, |row| {
            let event_type = int(row, 1).unwrap_or(-1);
            let is_range = matches!(event_type, NVTX_PUSH_POP | NVTX_START_END);
            match event_type {
                NVTX_PUSH_POP | NVTX_START_END | NVTX_MARK => {}
                NVTX_DOMAIN_CREATE => {
                    if let Some(t) = text(row, 3) {
                        domains.push(t.to_string());
                    }
                    return Ok(());
                }
                NVTX_CATEGORY | NVTX_DOMAIN_DESTROY => return Ok(()),
                _ => {
                    other += 1;
                    return Ok(());
                }
            }
            let start = time(row, 0);
            let placed = if is_range {
                let end = time(row, 2);
                if end == Time::Null {
                    unterminated += 1;
                    return Ok(());
                }
                times.span(start, end)
            } else {
                // A mark at 0 is one at the capture's start, not a time left uncollected.
                times.instant(start).map(|t| (t, 0))
            };
            let Some((start, dur)) = placed else {
                return Ok(());
            };
            let Some(global_tid) = int(row, 5) else {
                no_thread += 1;
                return Ok(());
            };
            let name = match text(row, 3) {
                Some(t) => b.intern(t),
                None => match int(row, 4) {
                    Some(id) => strings.get_or_placeholder(db, b, id)?,
                    None => unnamed,
                },
            };
            let track = *tracks.entry(global_tid).or_insert_with(|| {
                pids.insert(pid_of(global_tid));
                thread_track(b, pid_of(global_tid), tid_of(global_tid))
            });
            b.push(track, start, dur, name, EventKind::Nvtx);
            Ok(())
        })?;
        times.report(b, NVTX_EVENTS);
        if !domains.is_empty() {
            domains.sort();
            domains.dedup();
            b.source
                .details
                .push(("NVTX domains".to_string(), domains.join(", ")));
        }
        b.warn(
            "nvtx_start_without_end",
            unterminated,
            format!("{NVTX_EVENTS}: NVTX ranges that start but never end were left out"),
        );
        b.warn(
            "nvtx_without_thread",
            no_thread,
            format!("{NVTX_EVENTS}: NVTX events without a globalTid were skipped"),
        );
        b.warn(
            "nvtx_other_event_type",
            other,
            format!("{NVTX_EVENTS}: rows of NVTX event types warpscope does not show were skipped"),
        );
        Ok(())
    }

    /// Devices from `TARGET_INFO_GPU`, kept only if they appear in activity tables. Activity rows
    /// give CUDA device ordinals; `TARGET_INFO_CUDA_DEVICE` (2025+) maps them to GPU ids, older
    /// exports give the ordinal as `cuDevice`.
    fn read_devices(&mut self, b: &mut ProfileBuilder) {
        const GPU: &str = "TARGET_INFO_GPU";
        const CUDA_DEVICE: &str = "TARGET_INFO_CUDA_DEVICE";
        if self.devices.is_empty() || !self.db.has(GPU) {
            return;
        }
        // CUDA ordinal → GPU id, preferring rows of the processes in the profile.
        let mut gpu_of_cuda: FxHashMap<u32, (bool, i64)> = FxHashMap::default();
        let pids = &self.pids;
        self.db
            .meta_rows(b, CUDA_DEVICE, &["gpuId", "cudaId"], &["pid"], |row| {
                if let (Some(gpu), Some(cuda)) = (int(row, 0), uint32(row, 1)) {
                    let ours = int(row, 2).is_some_and(|p| pids.contains(&p));
                    let slot = gpu_of_cuda.entry(cuda).or_insert((ours, gpu));
                    if ours && !slot.0 {
                        *slot = (ours, gpu);
                    }
                }
            });
        // GPU id → the lowest CUDA ordinal mapped to it.
        let mut cuda_of_gpu: FxHashMap<i64, u32> = FxHashMap::default();
        for (&cuda, &(_, gpu)) in &gpu_of_cuda {
            let slot = cuda_of_gpu.entry(gpu).or_insert(cuda);
            *slot = (*slot).min(cuda);
        }
        // Every GPU of the machine is listed (`info` shows them all), those without activity
        // too; when two rows claim one ordinal, the one the CUDA device table maps wins.
        let mut found: FxHashMap<u32, (bool, Device)> = FxHashMap::default();
        self.db.meta_rows(
            b,
            GPU,
            &["id"],
            &[
                "name",
                "cuDevice",
                "computeMajor",
                "computeMinor",
                "smCount",
                "totalMemory",
                "memoryBandwidth",
                "busLocation",
                "chipName",
                "clockRate",
                "l2CacheSize",
                "uuid",
            ],
            |row| {
                let Some(gpu_id) = int(row, 0) else {
                    return;
                };
                let mapped = cuda_of_gpu.get(&gpu_id).copied();
                let ordinal =
                    mapped.or_else(|| uint32(row, 2).or_else(|| u32::try_from(gpu_id).ok()));
                let Some(ordinal) = ordinal else {
                    return;
                };
                if found
                    .get(&ordinal)
                    .is_some_and(|(was_mapped, _)| *was_mapped || mapped.is_none())
                {
                    return;
                }
                let as_u32 = |i| uint32(row, i);
                let mut properties = Vec::new();
                for (label, i) in [("PCI bus", 8), ("chip", 9), ("UUID", 12)] {
                    if let Some(t) = text(row, i).filter(|t| !t.is_empty()) {
                        properties.push((label.to_string(), t.to_string()));
                    }
                }
                if let Some(hz) = int(row, 10) {
                    properties.push(("core clock".to_string(), format!("{} kHz", hz / 1000)));
                }
                if let Some(l2) = int(row, 11) {
                    properties.push(("L2 cache".to_string(), format!("{l2} B")));
                }
                found.insert(
                    ordinal,
                    (
                        mapped.is_some(),
                        Device {
                            id: ordinal,
                            name: text(row, 1)
                                .map_or_else(|| format!("GPU {ordinal}"), str::to_string),
                            compute_capability: as_u32(3).zip(as_u32(4)),
                            sm_count: as_u32(5),
                            memory_bytes: uint64(row, 6),
                            memory_bandwidth_bytes_per_s: uint64(row, 7),
                            properties,
                            vendor: GpuVendor::Nvidia,
                            gfx_target: None,
                        },
                    ),
                );
            },
        );
        b.devices.extend(found.into_values().map(|(_, d)| d));
    }

    /// Names of the processes that appear in activity tables (`PROCESSES` lists every process
    /// on the machine).
    fn read_processes(&mut self, b: &mut ProfileBuilder) {
        const TABLE: &str = "PROCESSES";
        if self.pids.is_empty() {
            return;
        }
        let pids = &self.pids;
        let mut names: FxHashMap<i64, String> = FxHashMap::default();
        self.db
            .meta_rows(b, TABLE, &["globalPid"], &["name", "pid"], |row| {
                let pid = int(row, 0).map(pid_of).or_else(|| int(row, 2));
                if let (Some(pid), Some(name)) = (pid, text(row, 1))
                    && pids.contains(&pid)
                {
                    names.entry(pid).or_insert_with(|| name.to_string());
                }
            });
        let mut names: Vec<(TraceId, String)> = names
            .into_iter()
            .map(|(p, n)| (TraceId::Int(p), n))
            .collect();
        names.sort_by_key(|(p, _)| *p);
        b.process_names.extend(names);
    }

    /// Names of the threads that have tracks, from `ThreadNames`.
    fn read_thread_names(
        &mut self,
        b: &mut ProfileBuilder,
    ) -> Result<FxHashMap<(i64, i64), String>, ImportError> {
        const TABLE: &str = "ThreadNames";
        let mut out = FxHashMap::default();
        if !self.db.has(TABLE) {
            return Ok(out);
        }
        let threads: FxHashSet<(i64, i64)> = b
            .tracks()
            .iter()
            .filter_map(|t| match t.key {
                TrackKey::Thread {
                    pid: TraceId::Int(p),
                    tid: TraceId::Int(t),
                } => Some((p, t)),
                _ => None,
            })
            .collect();
        if threads.is_empty() {
            return Ok(out);
        }
        // The first name row of each thread, as the table orders them.
        let mut wanted: FxHashMap<(i64, i64), i64> = FxHashMap::default();
        self.db
            .meta_rows(b, TABLE, &["nameId", "globalTid"], &[], |row| {
                if let (Some(name), Some(g)) = (int(row, 0), int(row, 1)) {
                    let key = (pid_of(g), tid_of(g));
                    if threads.contains(&key) {
                        wanted.entry(key).or_insert(name);
                    }
                }
            });
        for (key, name) in wanted {
            if let Some(t) = self.strings.text(self.db, name)? {
                out.insert(key, t);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_ids_unpack() {
        let g = 283_274_752_664_331;
        assert_eq!(pid_of(g), 107_275);
        assert_eq!(tid_of(g), 107_275);
        assert_eq!((g >> 48) & 0xFF, 1);
        assert_eq!(scope_of(Some(283_274_752_557_056)), 107_275);
    }

    #[test]
    fn nsys_memory_kinds_differ_from_cupti() {
        use crate::model::MemoryKind;
        assert_eq!(memory_kind_nsys(Some(0)), Some(MemoryKind::Pageable));
        assert_eq!(memory_kind_nsys(Some(2)), Some(MemoryKind::Device));
        assert_eq!(memory_kind_nsys(Some(7)), Some(MemoryKind::Unknown));
        assert_eq!(
            super::super::memory_kind_cupti(Some(0)),
            Some(MemoryKind::Unknown)
        );
        assert_eq!(
            super::super::memory_kind_cupti(Some(3)),
            Some(MemoryKind::Device)
        );
    }
}
