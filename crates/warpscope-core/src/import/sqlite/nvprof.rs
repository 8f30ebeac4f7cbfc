//! nvprof SQLite databases (`nvprof -o x.nvvp`, `Version` 11 and 12): one
//! `CUPTI_ACTIVITY_KIND_*` table per CUPTI activity kind, names as ids into `StringTable`,
//! timestamps in nanoseconds since the Unix epoch.

use rustc_hash::{FxHashMap, FxHashSet};

use super::{
    ActivityNames, Db, Strings, TimeCheck, Zero, add_missing_devices, blob, copy_info, correlation,
    gpu_track, int, kernel_info, memory_kind_cupti, memset_info, name_tracks, select_copies,
    select_kernels, select_memsets, stream_id, thread_track, time, uint32, work_track,
};
use crate::builder::{ProfileBuilder, TrackId};
use crate::cupti_cbid::{driver_api_name, runtime_api_name};
use crate::demangle::demangle;
use crate::import::{ImportError, Progress};
use crate::model::{
    ApiInfo, CopyKind, Device, EventKind, Format, GpuLane, GpuVendor, TraceId, TrackKey,
};
use crate::strings::StrId;

const CONCURRENT_KERNEL: &str = "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL";
const KERNEL: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
const MEMCPY: &str = "CUPTI_ACTIVITY_KIND_MEMCPY";
const MEMCPY2: &str = "CUPTI_ACTIVITY_KIND_MEMCPY2";
const MEMSET: &str = "CUPTI_ACTIVITY_KIND_MEMSET";
const RUNTIME: &str = "CUPTI_ACTIVITY_KIND_RUNTIME";
const DRIVER: &str = "CUPTI_ACTIVITY_KIND_DRIVER";
const SYNCHRONIZATION: &str = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
const CONTEXT: &str = "CUPTI_ACTIVITY_KIND_CONTEXT";
const DEVICE: &str = "CUPTI_ACTIVITY_KIND_DEVICE";
const NAME: &str = "CUPTI_ACTIVITY_KIND_NAME";
const MARKER: &str = "CUPTI_ACTIVITY_KIND_MARKER";
const UNIFIED_MEMORY_COUNTER: &str = "CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER";

/// nvprof times are nanoseconds since the Unix epoch: a start or end of 0 is CUPTI's "not
/// collected".
const ZERO: Zero = Zero::EitherUncollected;

/// The versions whose layout was checked against real files.
const KNOWN_VERSIONS: [i64; 2] = [11, 12];

/// Correlation scope: nvprof's GPU rows carry no process id, and nvprof writes one database per
/// process, so the whole file is one correlation space.
const SCOPE: u32 = 0;

/// CUPTI marker flags.
const MARKER_INSTANT: i64 = 1;
const MARKER_START: i64 = 2;
const MARKER_END: i64 = 4;

/// CUPTI object kinds (`CUpti_ActivityObjectKind`).
const OBJECT_PROCESS: i64 = 1;
const OBJECT_THREAD: i64 = 2;
const OBJECT_DEVICE: i64 = 3;
const OBJECT_CONTEXT: i64 = 4;
const OBJECT_STREAM: i64 = 5;

/// True if the database has nvprof's tables.
/// Either of `StringTable` and `Version` may be missing from a damaged file (the other one and
/// the activity tables still say nvprof); Nsight Systems exports have neither.
pub(super) fn recognise(db: &Db) -> bool {
    let activity = db.has_prefix("CUPTI_ACTIVITY_KIND_");
    (db.has("StringTable") && (db.has("Version") || activity)) || (db.has("Version") && activity)
}

/// Reads an nvprof database into a builder.
pub(super) fn read(db: &Db, progress: &Progress) -> Result<ProfileBuilder, ImportError> {
    let mut b = ProfileBuilder::new(db.path().to_path_buf(), Format::NvprofSqlite);
    b.source.tool = "nvprof".to_string();
    b.unix_offset_ns = Some(0);
    read_version(db, &mut b);
    let mut r = Reader {
        db,
        strings: Strings::new(db, &mut b, "StringTable", "_id_", "value")?,
        names: ActivityNames::default(),
        stream_names: FxHashMap::default(),
        thread_names: FxHashMap::default(),
        context_devices: FxHashMap::default(),
    };
    const STEPS: u64 = 11;
    r.read_devices(&mut b)?;
    r.read_names(&mut b)?;
    r.read_contexts(&mut b);
    db.checkpoint(progress, 1, STEPS)?;
    let kernel_tables: Vec<&'static str> = [CONCURRENT_KERNEL, KERNEL]
        .into_iter()
        .filter(|t| db.has(t))
        .collect();
    if kernel_tables.is_empty() {
        b.warn(
            "nvprof_no_kernel_table",
            1,
            format!(
                "neither {CONCURRENT_KERNEL} nor {KERNEL} exists in this nvprof database: \
                 the profile has no kernels"
            ),
        );
    }
    // nvprof writes every activity table, empty or not: one that is missing (while others are
    // there) means a damaged file, whose missing activity the user should know about.
    if db.has_prefix("CUPTI_ACTIVITY_KIND_") {
        let kernels_missing = !db.has(CONCURRENT_KERNEL) && !db.has(KERNEL);
        for table in [
            CONCURRENT_KERNEL,
            KERNEL,
            MEMCPY,
            MEMSET,
            RUNTIME,
            DRIVER,
            SYNCHRONIZATION,
            MARKER,
        ] {
            let reported = kernels_missing && (table == CONCURRENT_KERNEL || table == KERNEL);
            if !db.has(table) && !reported {
                b.warn_at(
                    "nvprof_table_missing",
                    1,
                    table,
                    "table missing (nvprof writes every activity table, even when empty): \
                     activity of this kind is not shown",
                );
            }
        }
    }
    let mut kernel_names = FxHashMap::default();
    for table in kernel_tables {
        r.read_kernels(&mut b, table, &mut kernel_names, progress)?;
        db.checkpoint(progress, 3, STEPS)?;
    }
    for table in [MEMCPY, MEMCPY2] {
        if db.has(table) {
            r.read_memcpy(&mut b, table, progress)?;
        }
    }
    db.checkpoint(progress, 5, STEPS)?;
    if db.has(MEMSET) {
        r.read_memset(&mut b, progress)?;
    }
    db.checkpoint(progress, 6, STEPS)?;
    let mut pids = FxHashSet::default();
    for (table, kind) in [(RUNTIME, EventKind::Runtime), (DRIVER, EventKind::Driver)] {
        if db.has(table) {
            r.read_api(&mut b, table, kind, &mut pids, progress)?;
        }
        db.checkpoint(progress, 8, STEPS)?;
    }
    if pids.len() > 1 {
        b.warn(
            "nvprof_several_processes",
            u64::try_from(pids.len()).unwrap_or(u64::MAX),
            "API calls of several processes in one nvprof database: GPU rows carry no process id, \
             so launches are matched by correlation id alone",
        );
    }
    if db.has(SYNCHRONIZATION) {
        r.read_sync(&mut b, progress)?;
    }
    db.checkpoint(progress, 9, STEPS)?;
    if db.has(MARKER) {
        r.read_markers(&mut b, progress)?;
    }
    db.checkpoint(progress, 10, STEPS)?;
    if db.has(UNIFIED_MEMORY_COUNTER) {
        let mut stmt = db.prepare(
            UNIFIED_MEMORY_COUNTER,
            &format!("SELECT count(*) FROM {UNIFIED_MEMORY_COUNTER}"),
        )?;
        let rows: i64 = stmt
            .query_row([], |row| row.get(0))
            .map_err(|e| db.error(UNIFIED_MEMORY_COUNTER, e))?;
        b.warn(
            "nvprof_unified_memory_not_read",
            u64::try_from(rows).unwrap_or(0),
            format!(
                "{UNIFIED_MEMORY_COUNTER}: unified-memory transfers and page faults are not \
                 imported from nvprof databases yet"
            ),
        );
    }
    if !db.has_prefix("CUPTI_ACTIVITY_KIND_") {
        b.warn(
            "sqlite_no_activity_tables",
            1,
            "the database has no CUPTI_ACTIVITY_KIND_* tables: the profile is empty",
        );
    }
    r.strings.report(&mut b);
    add_missing_devices(&mut b);
    name_tracks(&mut b, &r.stream_names, &r.thread_names);
    Ok(b)
}

/// Reads `Version(version)` into the schema version.
fn read_version(db: &Db, b: &mut ProfileBuilder) {
    if !db.has("Version") {
        b.warn(
            "nvprof_no_version",
            1,
            "the nvprof database has no Version table; read as Version 12",
        );
        return;
    }
    let mut version = None;
    db.meta_rows(b, "Version", &["version"], &[], |row| {
        version = version.or(int(row, 0));
    });
    if let Some(v) = version {
        b.source.schema_version = Some(format!("Version {v}"));
        if !KNOWN_VERSIONS.contains(&v) {
            b.warn(
                "nvprof_unknown_version",
                1,
                format!(
                    "nvprof database Version {v} was never seen by warpscope (11 and 12 were); \
                     columns are read by name, so most data should still be right"
                ),
            );
        }
    }
}

/// Decodes the first two little-endian `u32`s of a 12-byte CUPTI `objectId` (process and thread
/// for objectKind 1/2, device and context for 3/4/5) and the third (stream).
fn object_id(bytes: &[u8]) -> Option<(u32, u32, u32)> {
    let word = |i: usize| {
        bytes
            .get(i * 4..i * 4 + 4)
            .and_then(|w| <[u8; 4]>::try_from(w).ok())
            .map(u32::from_le_bytes)
    };
    Some((word(0)?, word(1)?, word(2).unwrap_or(0)))
}

struct Reader<'c> {
    db: &'c Db,
    strings: Strings<'c>,
    names: ActivityNames,
    stream_names: FxHashMap<(u32, u32, u64), String>,
    thread_names: FxHashMap<(i64, i64), String>,
    context_devices: FxHashMap<u32, u32>,
}

impl Reader<'_> {
    fn read_devices(&mut self, b: &mut ProfileBuilder) -> Result<(), ImportError> {
        let mut rows = Vec::new();
        self.db.meta_rows(
            b,
            DEVICE,
            &["id"],
            &[
                "name",
                "computeCapabilityMajor",
                "computeCapabilityMinor",
                "numMultiprocessors",
                "globalMemorySize",
                "globalMemoryBandwidth",
                "l2CacheSize",
                "coreClockRate",
                "numMemcpyEngines",
                "maxThreadsPerBlock",
                "maxSharedMemoryPerBlock",
                "maxRegistersPerBlock",
                "eccEnabled",
            ],
            |row| {
                if let Some(id) = uint32(row, 0) {
                    let vals: Vec<Option<i64>> = (1..14).map(|i| int(row, i)).collect();
                    rows.push((id, vals));
                }
            },
        );
        for (id, v) in rows {
            let name = match v[0] {
                Some(s) => self.strings.text(self.db, s)?,
                None => None,
            };
            let as_u32 = |x: Option<i64>| x.and_then(|x| u32::try_from(x).ok());
            let as_u64 = |x: Option<i64>| x.and_then(|x| u64::try_from(x).ok());
            let mut properties = Vec::new();
            let mut prop = |label: &str, value: Option<i64>, unit: &str| {
                if let Some(value) = value {
                    properties.push((label.to_string(), format!("{value}{unit}")));
                }
            };
            prop("L2 cache", v[6], " B");
            prop("core clock", v[7], " kHz");
            prop("copy engines", v[8], "");
            prop("max threads per block", v[9], "");
            prop("max shared memory per block", v[10], " B");
            prop("max registers per block", v[11], "");
            prop("ECC enabled", v[12], "");
            b.devices.push(Device {
                id,
                name: name.unwrap_or_else(|| format!("GPU {id}")),
                compute_capability: as_u32(v[1]).zip(as_u32(v[2])),
                sm_count: as_u32(v[3]),
                memory_bytes: as_u64(v[4]),
                // CUPTI gives the bandwidth in kB/s.
                memory_bandwidth_bytes_per_s: as_u64(v[5]).map(|kb| kb.saturating_mul(1000)),
                properties,
                vendor: GpuVendor::Nvidia,
                gfx_target: None,
            });
        }
        Ok(())
    }

    /// Process, thread and stream names from `CUPTI_ACTIVITY_KIND_NAME`.
    fn read_names(&mut self, b: &mut ProfileBuilder) -> Result<(), ImportError> {
        let mut rows = Vec::new();
        self.db
            .meta_rows(b, NAME, &["objectKind", "objectId", "name"], &[], |row| {
                if let (Some(kind), Some(obj), Some(name)) =
                    (int(row, 0), blob(row, 1).and_then(object_id), int(row, 2))
                {
                    rows.push((kind, obj, name));
                }
            });
        let mut named_processes: FxHashSet<TraceId> =
            b.process_names.iter().map(|(p, _)| *p).collect();
        for (kind, (a, bb, c), name) in rows {
            let Some(name) = self.strings.text(self.db, name)? else {
                continue;
            };
            match kind {
                OBJECT_PROCESS => {
                    let pid = TraceId::Int(i64::from(a));
                    if named_processes.insert(pid) {
                        b.process_names.push((pid, name));
                    }
                }
                OBJECT_THREAD => {
                    self.thread_names
                        .insert((i64::from(a), i64::from(bb)), name);
                }
                OBJECT_STREAM => {
                    self.stream_names.insert((a, bb, u64::from(c)), name);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Context → device, for the synchronisation rows that name only the context.
    fn read_contexts(&mut self, b: &mut ProfileBuilder) {
        let map = &mut self.context_devices;
        self.db
            .meta_rows(b, CONTEXT, &["contextId", "deviceId"], &[], |row| {
                if let (Some(c), Some(d)) = (uint32(row, 0), uint32(row, 1)) {
                    map.insert(c, d);
                }
            });
    }

    fn read_kernels(
        &mut self,
        b: &mut ProfileBuilder,
        table: &'static str,
        names: &mut FxHashMap<i64, (StrId, Option<StrId>)>,
        progress: &Progress,
    ) -> Result<(), ImportError> {
        let sel = select_kernels(self.db, table, "name", &[])?;
        let db = self.db;
        let strings = &mut self.strings;
        let mut times = TimeCheck::new(ZERO);
        let mut tracks: FxHashMap<(u32, u32, u64), TrackId> = FxHashMap::default();
        db.for_each_row(&sel, progress, |row| {
            let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
                return Ok(());
            };
            let device = uint32(row, 2).unwrap_or(0);
            let stream = stream_id(row, 3);
            let context = uint32(row, 5).unwrap_or(0);
            let name_id = int(row, 4).unwrap_or(0);
            let (name, mangled) = match names.get(&name_id) {
                Some(&n) => n,
                None => {
                    let n = match strings.text(db, name_id)? {
                        Some(raw) => match demangle(&raw) {
                            Some(d) => (b.intern(&d), Some(b.intern(&raw))),
                            None => (b.intern(&raw), None),
                        },
                        None => (b.intern(&format!("<string {name_id}>")), None),
                    };
                    names.insert(name_id, n);
                    n
                }
            };
            let track = *tracks
                .entry((device, context, stream))
                .or_insert_with(|| work_track(b, device, context, stream));
            b.push_kernel(track, start, dur, name, kernel_info(row, mangled), SCOPE);
            Ok(())
        })?;
        times.report(b, table);
        Ok(())
    }

    fn read_memcpy(
        &mut self,
        b: &mut ProfileBuilder,
        table: &'static str,
        progress: &Progress,
    ) -> Result<(), ImportError> {
        let sel = select_copies(self.db, table, &[])?;
        let names = &mut self.names;
        let mut times = TimeCheck::new(ZERO);
        let mut tracks: FxHashMap<(u32, u32, u64), TrackId> = FxHashMap::default();
        self.db.for_each_row(&sel, progress, |row| {
            let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
                return Ok(());
            };
            let device = uint32(row, 2).unwrap_or(0);
            let stream = stream_id(row, 3);
            let context = uint32(row, 6).unwrap_or(0);
            let kind = CopyKind::from_cupti(int(row, 4).unwrap_or(0));
            let name = names.copy(b, kind);
            let track = *tracks
                .entry((device, context, stream))
                .or_insert_with(|| work_track(b, device, context, stream));
            let info = copy_info(row, kind, memory_kind_cupti);
            b.push_copy(track, start, dur, name, EventKind::Memcpy, info, SCOPE);
            Ok(())
        })?;
        times.report(b, table);
        Ok(())
    }

    fn read_memset(
        &mut self,
        b: &mut ProfileBuilder,
        progress: &Progress,
    ) -> Result<(), ImportError> {
        let sel = select_memsets(self.db, MEMSET, "memoryKind", &[])?;
        let name = self.names.copy(b, CopyKind::Memset);
        let mut times = TimeCheck::new(ZERO);
        self.db.for_each_row(&sel, progress, |row| {
            let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
                return Ok(());
            };
            let device = uint32(row, 2).unwrap_or(0);
            let stream = stream_id(row, 3);
            let context = uint32(row, 5).unwrap_or(0);
            let track = work_track(b, device, context, stream);
            let info = memset_info(row, memory_kind_cupti);
            b.push_copy(track, start, dur, name, EventKind::Memset, info, SCOPE);
            Ok(())
        })?;
        times.report(b, MEMSET);
        Ok(())
    }

    fn read_api(
        &mut self,
        b: &mut ProfileBuilder,
        table: &'static str,
        kind: EventKind,
        pids: &mut FxHashSet<i64>,
        progress: &Progress,
    ) -> Result<(), ImportError> {
        let sel = self.db.select(
            table,
            &["start", "end", "cbid", "processId", "threadId"],
            &["correlationId"],
        )?;
        let (api_name, family): (fn(u32) -> Option<&'static str>, &str) =
            if kind == EventKind::Driver {
                (driver_api_name, "driver")
            } else {
                (runtime_api_name, "runtime")
            };
        let mut names: FxHashMap<u32, StrId> = FxHashMap::default();
        let mut unknown = 0u64;
        let mut times = TimeCheck::new(ZERO);
        let mut tracks: FxHashMap<(i64, i64), TrackId> = FxHashMap::default();
        self.db.for_each_row(&sel, progress, |row| {
            let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
                return Ok(());
            };
            let cbid = uint32(row, 2).unwrap_or(0);
            let pid = int(row, 3).unwrap_or(0);
            // threadId is stored as a signed 32-bit value.
            let tid = int(row, 4).unwrap_or(0) & 0xFFFF_FFFF;
            pids.insert(pid);
            let name = *names.entry(cbid).or_insert_with(|| match api_name(cbid) {
                Some(n) => b.intern(n),
                None => {
                    unknown += 1;
                    b.intern(&format!("CUDA {family} API cbid {cbid}"))
                }
            });
            let track = *tracks
                .entry((pid, tid))
                .or_insert_with(|| thread_track(b, pid, tid));
            let info = ApiInfo {
                correlation: correlation(row, 5),
                cbid: Some(cbid),
                external_id: None,
            };
            b.push_api(track, start, dur, name, kind, info, SCOPE);
            Ok(())
        })?;
        b.warn(
            "nvprof_unknown_cbid",
            unknown,
            format!(
                "{table}: callback ids not in warpscope's CUPTI tables are named `CUDA ... API \
                 cbid N`"
            ),
        );
        times.report(b, table);
        Ok(())
    }

    fn read_sync(
        &mut self,
        b: &mut ProfileBuilder,
        progress: &Progress,
    ) -> Result<(), ImportError> {
        let sel = self.db.select(
            SYNCHRONIZATION,
            &["start", "end"],
            &["type", "contextId", "streamId"],
        )?;
        let names = &mut self.names;
        let contexts = &self.context_devices;
        let mut times = TimeCheck::new(ZERO);
        self.db.for_each_row(&sel, progress, |row| {
            let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
                return Ok(());
            };
            let name = names.sync(b, int(row, 2));
            let context = uint32(row, 3).unwrap_or(0);
            let device = contexts.get(&context).copied().unwrap_or(0);
            let track = gpu_track(b, device, context, stream_id(row, 4), GpuLane::Annotations);
            b.push(track, start, dur, name, EventKind::GpuSync);
            Ok(())
        })?;
        times.report(b, SYNCHRONIZATION);
        Ok(())
    }

    /// NVTX: START/END row pairs sharing `id` become ranges, INSTANTANEOUS rows marks.
    fn read_markers(
        &mut self,
        b: &mut ProfileBuilder,
        progress: &Progress,
    ) -> Result<(), ImportError> {
        let sel = self.db.select(
            MARKER,
            &["flags", "timestamp", "id", "objectKind", "objectId", "name"],
            &["domain"],
        )?;
        struct Start {
            ts: i64,
            name: i64,
            track: TrackKey,
        }
        let mut starts: FxHashMap<i64, Start> = FxHashMap::default();
        let mut ends: Vec<(i64, i64)> = Vec::new();
        let mut marks: Vec<(i64, i64, TrackKey)> = Vec::new();
        let mut domains: FxHashSet<i64> = FxHashSet::default();
        let (mut duplicate, mut other, mut no_object) = (0u64, 0u64, 0u64);
        // Every row's timestamp passes the plausibility rule on its own; a range's start and end
        // then differ by less than 2^62.
        let mut times = TimeCheck::new(ZERO);
        self.db.for_each_row(&sel, progress, |row| {
            let flags = int(row, 0).unwrap_or(0);
            if flags & (MARKER_START | MARKER_INSTANT | MARKER_END) == 0 {
                other += 1;
                return Ok(());
            }
            let Some(ts) = times.instant(time(row, 1)) else {
                return Ok(());
            };
            let id = int(row, 2).unwrap_or(0);
            if flags & MARKER_END != 0 {
                ends.push((id, ts));
                return Ok(());
            }
            let object = blob(row, 4).and_then(object_id);
            let Some(track) = object.and_then(|o| marker_track(int(row, 3), o)) else {
                no_object += 1;
                return Ok(());
            };
            if let Some(d) = int(row, 6).filter(|&d| d != 0) {
                domains.insert(d);
            }
            let name = int(row, 5).unwrap_or(0);
            if flags & MARKER_START != 0 {
                if starts.insert(id, Start { ts, name, track }).is_some() {
                    duplicate += 1;
                }
            } else {
                marks.push((ts, name, track));
            }
            Ok(())
        })?;
        times.report(b, MARKER);
        let (mut unmatched_end, mut negative) = (0u64, 0u64);
        for (id, end) in ends {
            let Some(s) = starts.remove(&id) else {
                unmatched_end += 1;
                continue;
            };
            let name = self.strings.get_or_placeholder(self.db, b, s.name)?;
            let track = b.track(s.track);
            // Both times passed the rule, so the difference fits.
            let dur = end.saturating_sub(s.ts);
            if dur < 0 {
                negative += 1;
            }
            b.push(track, s.ts, dur.max(0), name, EventKind::Nvtx);
        }
        for (ts, name, key) in marks {
            let name = self.strings.get_or_placeholder(self.db, b, name)?;
            let track = b.track(key);
            b.push(track, ts, 0, name, EventKind::Nvtx);
        }
        let mut domain_names = Vec::new();
        for d in domains {
            if let Some(t) = self.strings.text(self.db, d)? {
                domain_names.push(t);
            }
        }
        if !domain_names.is_empty() {
            domain_names.sort();
            b.source
                .details
                .push(("NVTX domains".to_string(), domain_names.join(", ")));
        }
        let unmatched_start = u64::try_from(starts.len()).unwrap_or(u64::MAX);
        b.warn(
            "nvtx_start_without_end",
            unmatched_start,
            format!("{MARKER}: NVTX ranges that start but never end were left out"),
        );
        b.warn(
            "nvtx_end_without_start",
            unmatched_end,
            format!("{MARKER}: NVTX range ends without a matching start were left out"),
        );
        b.warn(
            "nvtx_duplicate_start",
            duplicate,
            format!("{MARKER}: NVTX range starts reusing an open range's id replaced it"),
        );
        b.warn(
            "nvtx_negative_duration",
            negative,
            format!("{MARKER}: NVTX ranges ending before they start were kept with zero duration"),
        );
        b.warn(
            "nvtx_other_marker",
            other,
            format!("{MARKER}: synchronisation markers were skipped"),
        );
        b.warn(
            "nvtx_unknown_object",
            no_object,
            format!("{MARKER}: markers on no known thread, device, context or stream were skipped"),
        );
        Ok(())
    }
}

/// The track a marker belongs to, from its `objectKind` and decoded `objectId`.
fn marker_track(kind: Option<i64>, (a, b, c): (u32, u32, u32)) -> Option<TrackKey> {
    let gpu = |device, context, stream| TrackKey::Gpu {
        device,
        context,
        stream,
        lane: GpuLane::Annotations,
    };
    match kind? {
        OBJECT_PROCESS => Some(TrackKey::Thread {
            pid: TraceId::Int(i64::from(a)),
            tid: TraceId::Int(0),
        }),
        OBJECT_THREAD => Some(TrackKey::Thread {
            pid: TraceId::Int(i64::from(a)),
            tid: TraceId::Int(i64::from(b)),
        }),
        OBJECT_DEVICE => Some(gpu(a, 0, 0)),
        OBJECT_CONTEXT => Some(gpu(a, b, 0)),
        OBJECT_STREAM => Some(gpu(a, b, u64::from(c))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_ids_ignore_the_padding() {
        let bytes = [0xCF, 0x01, 0, 0, 0, 0, 0, 0, 0x54, 0x49, 0x56, 0x49];
        assert_eq!(object_id(&bytes), Some((463, 0, 0x4956_4954)));
        assert_eq!(object_id(&[1, 2, 3]), None);
    }
}
