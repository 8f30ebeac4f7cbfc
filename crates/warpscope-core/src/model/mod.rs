//! The profile model: one run of a program as tracks of events in integer nanoseconds.
//!
//! Every importer produces a [`Profile`] through [`crate::ProfileBuilder`]; the analysis, the
//! timeline and the CLI only ever read this model.

use std::path::PathBuf;

use serde::Serialize;

use crate::strings::{StrId, StringTable};
use crate::time::TimeRange;

pub(crate) mod column;
mod details;
pub mod memory;
mod op_args;
mod tables;

pub use details::{ApiInfo, CopyInfo, CopyKind, KernelInfo, MemoryKind};
pub use memory::{MemoryAction, MemoryData, MemoryDevice, MemorySource};
pub use op_args::{Dims, Dtype, OpArgs, OpArgsTable, OpInput};
pub use tables::{ApiTable, CopyTable, KernelTable};

/// The file formats warpscope reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Chrome Trace Event Format JSON (PyTorch profiler / Kineto, TensorFlow, generic).
    ChromeJson,
    /// `nvprof --csv` output.
    NvprofCsv,
    /// nvprof plain-text log.
    NvprofText,
    /// nvprof SQLite database (`nvprof -o file.nvvp`).
    NvprofSqlite,
    /// Nsight Systems SQLite export (`nsys export --type sqlite`).
    NsysSqlite,
    /// A live run made by warpscope itself.
    Live,
    /// A PyTorch CUDA caching-allocator snapshot (`torch.cuda.memory._dump_snapshot`, a
    /// pickle).
    TorchMemorySnapshot,
    /// rocprof v1 kernel trace CSV (`results.csv`).
    RocprofCsv,
    /// rocprof v1 Chrome trace JSON (`results.json`).
    RocprofJson,
    /// A `--stats` summary of rocprof v1 or rocprofv3 (`*stats.csv`).
    RocprofStats,
    /// rocprofv3 CSV traces (`kernel_trace.csv`, `memory_copy_trace.csv`, ...).
    Rocprofv3Csv,
    /// rocmProfileData's Chrome trace JSON (`rpd2tracing.py`).
    RpdJson,
    /// rocprofv3 SQLite database (`--output-format rocpd`, `*_results.db`, rocpd schema 3).
    RocpdSqlite,
    /// rocmProfileData (`rpd_tracer`) SQLite database (`.rpd`, RPD schema 2).
    RpdSqlite,
    /// Legacy rocprof (v1) SQLite database (`results.db`).
    RocprofSqlite,
}

impl Format {
    /// Stable identifier used in JSON output (`chrome-json`, `nvprof-csv`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ChromeJson => "chrome-json",
            Self::NvprofCsv => "nvprof-csv",
            Self::NvprofText => "nvprof-text",
            Self::NvprofSqlite => "nvprof-sqlite",
            Self::NsysSqlite => "nsys-sqlite",
            Self::Live => "live",
            Self::TorchMemorySnapshot => "torch-memory-snapshot",
            Self::RocprofCsv => "rocprof-csv",
            Self::RocprofJson => "rocprof-json",
            Self::RocprofStats => "rocprof-stats",
            Self::Rocprofv3Csv => "rocprofv3-csv",
            Self::RpdJson => "rpd-json",
            Self::RocpdSqlite => "rocpd-sqlite",
            Self::RpdSqlite => "rpd-sqlite",
            Self::RocprofSqlite => "rocprof-sqlite",
        }
    }

    /// Human-readable description.
    pub fn description(self) -> &'static str {
        match self {
            Self::ChromeJson => "Chrome trace JSON",
            Self::NvprofCsv => "nvprof CSV",
            Self::NvprofText => "nvprof text log",
            Self::NvprofSqlite => "nvprof SQLite (.nvvp)",
            Self::NsysSqlite => "Nsight Systems SQLite export",
            Self::Live => "warpscope live run",
            Self::TorchMemorySnapshot => "PyTorch CUDA memory snapshot (pickle)",
            Self::RocprofCsv => "rocprof v1 kernel trace CSV",
            Self::RocprofJson => "rocprof v1 Chrome trace JSON",
            Self::RocprofStats => "rocprof --stats summary CSV",
            Self::Rocprofv3Csv => "rocprofv3 CSV traces",
            Self::RpdJson => "rocmProfileData Chrome trace JSON",
            Self::RocpdSqlite => "rocprofv3 rocpd SQLite database",
            Self::RpdSqlite => "rocmProfileData RPD SQLite database",
            Self::RocprofSqlite => "rocprof v1 SQLite database",
        }
    }
}

/// Where a profile came from.
#[derive(Clone, Debug, Serialize)]
pub struct Source {
    /// Path of the file as given by the user.
    pub path: PathBuf,
    /// Detected format.
    pub format: Format,
    /// The tool that wrote the file (`PyTorch profiler (Kineto)`, `TensorFlow 1.x timeline`,
    /// `nvprof`, `Nsight Systems`, ...).
    pub tool: String,
    /// Version of that tool, when the file says.
    pub tool_version: Option<String>,
    /// Schema or format version, when the file says (Kineto `schemaVersion`, nsys schema).
    pub schema_version: Option<String>,
    /// True if the file was gzip-compressed.
    pub compressed: bool,
    /// Size of the file on disk in bytes.
    pub file_bytes: u64,
    /// Size of the decompressed content in bytes.
    pub content_bytes: u64,
    /// Other facts the file states about itself, as (name, value) pairs (CUDA and CUPTI
    /// versions, trace id, display time unit).
    pub details: Vec<(String, String)>,
}

/// A GPU (or other accelerator) that appears in the profile.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Device {
    /// Device ordinal as used by event records.
    pub id: u32,
    /// Marketing name (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: Option<(u32, u32)>,
    /// Number of streaming multiprocessors (NVIDIA), or of compute units (AMD).
    pub sm_count: Option<u32>,
    /// Global memory in bytes.
    pub memory_bytes: Option<u64>,
    /// Peak memory bandwidth in bytes per second, when known.
    pub memory_bandwidth_bytes_per_s: Option<u64>,
    /// Other properties as (name, value) pairs, in file order.
    pub properties: Vec<(String, String)>,
    /// Who made the device, when the file says.
    pub vendor: GpuVendor,
    /// AMD ISA name (`gfx942`), when the file says.
    pub gfx_target: Option<String>,
}

/// Who made a [`Device`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GpuVendor {
    /// The file does not say.
    #[default]
    Unknown,
    /// NVIDIA.
    Nvidia,
    /// AMD.
    Amd,
}

/// A process or thread id as written in the file: a number, or an opaque string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TraceId {
    /// A numeric id (all-digit strings are normalised to this).
    Int(i64),
    /// A non-numeric string id (`"Spans"`, `""`).
    Name(StrId),
}

/// Which lane of a GPU stream an event belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GpuLane {
    /// Kernels, copies and sets.
    Work,
    /// GPU-side annotation ranges and synchronisation records.
    Annotations,
    /// Unified-memory migrations and page faults (one lane per device, stream 0).
    UnifiedMemory,
}

/// The identity of a track.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TrackKey {
    /// Work on one GPU stream.
    Gpu {
        /// Device ordinal.
        device: u32,
        /// CUDA context id (0 when the file does not say).
        context: u32,
        /// CUPTI stream id.
        stream: u64,
        /// Which lane of the stream.
        lane: GpuLane,
    },
    /// A CPU thread of a process.
    Thread {
        /// Process id.
        pid: TraceId,
        /// Thread id.
        tid: TraceId,
    },
    /// Asynchronous ranges of one process that are not bound to a thread.
    Async {
        /// Process id.
        pid: TraceId,
        /// Name of the async range family.
        name: StrId,
    },
}

impl TrackKey {
    /// True for GPU tracks.
    pub fn is_gpu(&self) -> bool {
        matches!(self, Self::Gpu { .. })
    }
}

/// What an event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum EventKind {
    /// A GPU kernel execution.
    Kernel,
    /// A GPU memory copy.
    Memcpy,
    /// A GPU memory set.
    Memset,
    /// A unified-memory migration or page-fault group.
    UnifiedMemory,
    /// A GPU-side annotation range (`gpu_user_annotation`).
    GpuAnnotation,
    /// A GPU synchronisation record.
    GpuSync,
    /// A CUDA runtime API call (or HIP API call on ROCm).
    Runtime,
    /// A CUDA driver API call.
    Driver,
    /// A framework operator (`cpu_op`, `aten::mm`).
    CpuOp,
    /// A user annotation (`ProfilerStep#3`, NVTX-like ranges from the framework).
    UserAnnotation,
    /// A Python function frame.
    PythonFunction,
    /// An NVTX range or mark (or its AMD equivalent, a ROCTx range or mark).
    Nvtx,
    /// Profiler overhead.
    Overhead,
    /// An instant event (zero duration).
    Instant,
    /// Any other slice.
    Slice,
}

impl EventKind {
    /// Every kind, in declaration order.
    pub const ALL: [Self; 15] = [
        Self::Kernel,
        Self::Memcpy,
        Self::Memset,
        Self::UnifiedMemory,
        Self::GpuAnnotation,
        Self::GpuSync,
        Self::Runtime,
        Self::Driver,
        Self::CpuOp,
        Self::UserAnnotation,
        Self::PythonFunction,
        Self::Nvtx,
        Self::Overhead,
        Self::Instant,
        Self::Slice,
    ];

    /// True for kernels, copies and sets: the work counted in GPU time.
    pub fn is_gpu_activity(self) -> bool {
        matches!(self, Self::Kernel | Self::Memcpy | Self::Memset)
    }

    /// True for CUDA API calls.
    pub fn is_api(self) -> bool {
        matches!(self, Self::Runtime | Self::Driver)
    }

    /// Stable name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Kernel => "kernel",
            Self::Memcpy => "memcpy",
            Self::Memset => "memset",
            Self::UnifiedMemory => "unified_memory",
            Self::GpuAnnotation => "gpu_annotation",
            Self::GpuSync => "gpu_sync",
            Self::Runtime => "runtime",
            Self::Driver => "driver",
            Self::CpuOp => "cpu_op",
            Self::UserAnnotation => "user_annotation",
            Self::PythonFunction => "python_function",
            Self::Nvtx => "nvtx",
            Self::Overhead => "overhead",
            Self::Instant => "instant",
            Self::Slice => "slice",
        }
    }
}

/// Marks "no side-table entry" in [`Events::detail`].
pub const NO_DETAIL: u32 = u32::MAX;
/// Marks "no parent" in [`Events::parent`].
pub const NO_PARENT: u32 = u32::MAX;

/// The events of one track as a struct of arrays, sorted by start (and, for equal starts, by
/// longer duration first so parents precede their children).
#[derive(Clone, Debug, Default)]
pub struct Events {
    /// Start of each event, in nanoseconds from the profile origin.
    pub start_ns: Vec<i64>,
    /// Duration in nanoseconds (0 for instants).
    pub dur_ns: Vec<i64>,
    /// Display name.
    pub name: Vec<StrId>,
    /// Kind of each event.
    pub kind: Vec<EventKind>,
    /// Nesting depth on the track (0 = top level). Overlapping but not nested events get their
    /// own deeper row.
    pub depth: Vec<u16>,
    /// Index of the enclosing event on the same track, or [`NO_PARENT`]. A parent always comes
    /// before its children (events are sorted by start, longer first), which the CPU-operators
    /// table's single backward pass relies on.
    pub parent: Vec<u32>,
    /// Index into the side table for the event's kind (kernels, copies, API calls, and the
    /// recorded inputs of CPU operators), or [`NO_DETAIL`].
    pub detail: Vec<u32>,
}

impl Events {
    /// Number of events.
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    /// True if there are no events.
    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }

    /// End of event `i` in nanoseconds.
    pub fn end_ns(&self, i: usize) -> i64 {
        self.start_ns[i].saturating_add(self.dur_ns[i])
    }

    /// Index of the first event that starts at or after `t_ns`.
    pub fn first_starting_at_or_after(&self, t_ns: i64) -> usize {
        self.start_ns.partition_point(|&s| s < t_ns)
    }

    pub(crate) fn push(
        &mut self,
        start_ns: i64,
        dur_ns: i64,
        name: StrId,
        kind: EventKind,
        detail: u32,
    ) {
        self.start_ns.push(start_ns);
        self.dur_ns.push(dur_ns);
        self.name.push(name);
        self.kind.push(kind);
        self.detail.push(detail);
    }

    /// Keeps only the events at `indices` (old positions), in that order: a filter, a
    /// permutation, or both, on up to [`crate::parallel::threads`] threads. Depth and parent
    /// are not carried (they are computed afterwards).
    pub(crate) fn pick(&mut self, indices: &[u32]) {
        fn column<T: Copy + Send + Sync>(col: &mut Vec<T>, indices: &[u32]) {
            let old = std::mem::take(col);
            *col = crate::parallel::gather(&old, indices);
        }
        column(&mut self.start_ns, indices);
        column(&mut self.dur_ns, indices);
        column(&mut self.name, indices);
        column(&mut self.kind, indices);
        column(&mut self.detail, indices);
    }

    /// Approximate heap bytes used by the columns.
    pub fn heap_bytes(&self) -> usize {
        self.start_ns.capacity() * 8
            + self.dur_ns.capacity() * 8
            + self.name.capacity() * 4
            + self.kind.capacity()
            + self.depth.capacity() * 2
            + self.parent.capacity() * 4
            + self.detail.capacity() * 4
    }
}

/// One lane of the timeline.
#[derive(Clone, Debug)]
pub struct Track {
    /// Identity of the track.
    pub key: TrackKey,
    /// Readable name (`stream 7`, `thread 481 (pt_autograd_0)`).
    pub name: String,
    /// Sort hint from the file (`thread_sort_index`), lower first.
    pub sort_index: Option<i64>,
    /// The events, sorted by start.
    pub events: Events,
    /// Greatest depth of any event plus one (the number of rows the track needs).
    pub max_depth: u16,
    /// Longest event duration, so that the events touching a time range can be found by binary
    /// search ([`Track::candidates`]).
    pub max_dur_ns: i64,
}

impl Track {
    /// The indices of the events that may touch `range`: every event that does is in it (some
    /// long-gone ones may be too, so callers still check each event). Found by binary search on
    /// the start times, using the track's longest duration to reach back.
    pub fn candidates(&self, range: &TimeRange) -> std::ops::Range<usize> {
        let ev = &self.events;
        if range.is_all() {
            return 0..ev.len();
        }
        let from = ev.first_starting_at_or_after(range.start_ns.saturating_sub(self.max_dur_ns));
        let to = ev.first_starting_at_or_after(range.end_ns.saturating_add(1));
        from..to.max(from)
    }
}

/// A reference to one event: track index and event index on that track.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct EventRef {
    /// Index into [`Profile::tracks`].
    pub track: u32,
    /// Index into that track's events.
    pub index: u32,
}

/// What a flow means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowKind {
    /// A CPU API call launched GPU work (correlation id).
    Launch,
    /// A forward operator to its backward operator (Kineto `fwdbwd`).
    ForwardBackward,
    /// Any other flow from the file.
    Other,
}

/// An arrow from one event to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Flow {
    /// Where the arrow starts.
    pub from: EventRef,
    /// Where the arrow ends.
    pub to: EventRef,
    /// What the arrow means.
    pub kind: FlowKind,
}

/// A series of sampled values (Chrome `C` events).
#[derive(Clone, Debug)]
pub struct CounterTrack {
    /// Process the counter belongs to.
    pub pid: TraceId,
    /// Counter name (`event name` or `event name.series`).
    pub name: String,
    /// Sample times, sorted.
    pub time_ns: Vec<i64>,
    /// Sample values.
    pub value: Vec<f64>,
}

/// A process- or trace-wide instant (`Iteration Start`, `Record Window End`).
#[derive(Clone, Debug, Serialize)]
pub struct Marker {
    /// Time of the marker.
    pub time_ns: i64,
    /// Its name.
    pub name: String,
}

/// A problem that did not stop the import, with how many times it happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// Stable identifier of the kind of problem (`unknown_category`, `truncated`).
    pub code: String,
    /// What happened and what was done about it, ready to show to the user.
    pub message: String,
    /// How many events or rows it concerns.
    pub count: u64,
}

/// Distributed-training metadata (Kineto `distributedInfo`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DistributedInfo {
    /// Communication backend (`nccl`).
    pub backend: Option<String>,
    /// Rank of this process.
    pub rank: Option<i64>,
    /// Number of ranks.
    pub world_size: Option<i64>,
}

/// Which table of a recorded summary a row comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SummarySection {
    /// nvprof's "GPU activities".
    GpuActivities,
    /// nvprof's "API calls".
    ApiCalls,
}

/// One row of a summary that the file itself contains (an nvprof summary has no events, only
/// totals; they are kept as written, never recomputed).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecordedSummaryRow {
    /// Which table the row is in.
    pub section: SummarySection,
    /// Kernel, copy or API name as written.
    pub name: String,
    /// Time(%) as written.
    pub time_pct: f64,
    /// Total time in nanoseconds.
    pub total_ns: i64,
    /// Number of calls.
    pub calls: u64,
    /// Average time in nanoseconds.
    pub avg_ns: i64,
    /// Minimum time in nanoseconds.
    pub min_ns: i64,
    /// Maximum time in nanoseconds.
    pub max_ns: i64,
}

/// One row of nvprof's "Unified Memory profiling result" table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnifiedMemorySummaryRow {
    /// Device as written (`TITAN Xp (0)`).
    pub device: String,
    /// Row name (`Host To Device`, `Gpu page fault groups`).
    pub name: String,
    /// Count column.
    pub count: Option<u64>,
    /// Average size in bytes.
    pub avg_bytes: Option<u64>,
    /// Minimum size in bytes.
    pub min_bytes: Option<u64>,
    /// Maximum size in bytes.
    pub max_bytes: Option<u64>,
    /// Total size in bytes.
    pub total_bytes: Option<u64>,
    /// Total time in nanoseconds.
    pub total_ns: Option<i64>,
}

/// A summary recorded in the file (nvprof summary mode).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RecordedSummary {
    /// Rows in the file's order.
    pub rows: Vec<RecordedSummaryRow>,
    /// Unified-memory table rows.
    pub unified_memory: Vec<UnifiedMemorySummaryRow>,
    /// `Total CPU Page faults: N`.
    pub cpu_page_faults: Option<u64>,
}

/// Where time zero of the profile lies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TimeOrigin {
    /// Time zero on the file's own clock, in nanoseconds.
    pub raw_ns: i64,
    /// Time zero as nanoseconds since the Unix epoch, when the file allows computing it.
    pub unix_ns: Option<i64>,
}

/// One run: everything imported from one file (or one live run).
#[derive(Clone, Debug)]
pub struct Profile {
    /// Where the profile came from.
    pub source: Source,
    /// Time zero.
    pub origin: TimeOrigin,
    /// Devices, by id.
    pub devices: Vec<Device>,
    /// Labels (`batch=32`), from the file name or the user.
    pub labels: Vec<(String, String)>,
    /// Distributed-training metadata.
    pub distributed: Option<DistributedInfo>,
    /// Process names by pid.
    pub process_names: Vec<(TraceId, String)>,
    /// Problems met while importing.
    pub warnings: Vec<Warning>,
    /// All interned strings.
    pub strings: StringTable,
    /// The lanes, GPU tracks first (by device, stream), then threads.
    pub tracks: Vec<Track>,
    /// Side table of kernel details ([`Events::detail`] of kernel events).
    pub kernels: KernelTable,
    /// Side table of copy/set details.
    pub copies: CopyTable,
    /// Side table of API call details.
    pub api_calls: ApiTable,
    /// The recorded inputs of CPU operators ([`Events::detail`] of `CpuOp` events), one row
    /// per distinct set of shapes and types.
    pub op_args: OpArgsTable,
    /// Flows between events.
    pub flows: Vec<Flow>,
    /// Counter tracks.
    pub counters: Vec<CounterTrack>,
    /// Process- and trace-wide instants.
    pub markers: Vec<Marker>,
    /// Summary rows recorded in the file itself (nvprof summary mode).
    pub recorded_summary: Option<RecordedSummary>,
    /// Allocations, frees and allocator state, where the file recorded them.
    pub memory: MemoryData,
}

impl Profile {
    /// The text of an interned string.
    pub fn str(&self, id: StrId) -> &str {
        self.strings.get(id)
    }

    /// True when the profile's GPUs are AMD's (any device marked [`GpuVendor::Amd`]).
    pub fn is_amd(&self) -> bool {
        self.devices.iter().any(|d| d.vendor == GpuVendor::Amd)
    }

    /// The name of the GPU runtime in texts about this profile: `HIP` on AMD GPUs, `CUDA`
    /// otherwise.
    pub fn runtime_name(&self) -> &'static str {
        if self.is_amd() { "HIP" } else { "CUDA" }
    }

    /// What the matrix units of this profile's GPUs are called: `Matrix Cores` (AMD MFMA),
    /// `Tensor Cores` otherwise.
    pub fn matrix_unit_name(&self) -> &'static str {
        if self.is_amd() {
            "Matrix Cores"
        } else {
            "Tensor Cores"
        }
    }

    /// Total number of events on all tracks.
    pub fn event_count(&self) -> usize {
        self.tracks.iter().map(|t| t.events.len()).sum()
    }

    /// The time span covered by events with a duration (instants and counters are left out so
    /// an outlier marker cannot stretch it), or `None` for a profile without such events.
    pub fn span_ns(&self) -> Option<(i64, i64)> {
        let mut span: Option<(i64, i64)> = None;
        for track in &self.tracks {
            let ev = &track.events;
            for i in 0..ev.len() {
                if ev.kind[i] == EventKind::Instant {
                    continue;
                }
                let (a, b) = (ev.start_ns[i], ev.end_ns(i));
                span = Some(span.map_or((a, b), |(s, e)| (s.min(a), e.max(b))));
            }
        }
        span
    }

    /// The device with ordinal `id`, if known.
    pub fn device(&self, id: u32) -> Option<&Device> {
        self.devices.iter().find(|d| d.id == id)
    }

    /// Name of process `pid` as given by the file.
    pub fn process_name(&self, pid: TraceId) -> Option<&str> {
        self.process_names
            .iter()
            .find(|(p, _)| *p == pid)
            .map(|(_, n)| n.as_str())
    }

    /// Kernel details of an event, if it is a kernel with details.
    pub fn kernel_info(&self, track: &Track, index: usize) -> Option<KernelInfo> {
        if track.events.kind[index] != EventKind::Kernel {
            return None;
        }
        self.kernels.get(track.events.detail[index] as usize)
    }

    /// Copy details of an event, if it is a copy or set with details.
    pub fn copy_info(&self, track: &Track, index: usize) -> Option<CopyInfo> {
        match track.events.kind[index] {
            EventKind::Memcpy | EventKind::Memset | EventKind::UnifiedMemory => {
                self.copies.get(track.events.detail[index] as usize)
            }
            _ => None,
        }
    }

    /// API details of an event, if it is an API call with details.
    pub fn api_info(&self, track: &Track, index: usize) -> Option<ApiInfo> {
        if !track.events.kind[index].is_api() {
            return None;
        }
        self.api_calls.get(track.events.detail[index] as usize)
    }

    /// The recorded inputs (shapes and types) of a CPU operator event, if it has them.
    pub fn op_args(&self, track: &Track, index: usize) -> Option<&OpArgs> {
        if track.events.kind[index] != EventKind::CpuOp {
            return None;
        }
        self.op_args.get(track.events.detail[index] as usize)
    }

    /// Readable id text (`481`, `Spans`).
    pub fn id_text(&self, id: TraceId) -> String {
        match id {
            TraceId::Int(v) => v.to_string(),
            TraceId::Name(s) => self.str(s).to_string(),
        }
    }

    /// Approximate heap bytes used by the profile's event data.
    pub fn heap_bytes(&self) -> usize {
        self.tracks
            .iter()
            .map(|t| t.events.heap_bytes())
            .sum::<usize>()
            + self.strings.heap_bytes()
            + self.kernels.heap_bytes()
            + self.copies.heap_bytes()
            + self.api_calls.heap_bytes()
            + self.op_args.heap_bytes()
            + self.flows.capacity() * std::mem::size_of::<Flow>()
            + self.memory.heap_bytes()
    }
}
