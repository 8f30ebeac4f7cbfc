//! Chrome Trace Event Format import: PyTorch profiler (Kineto, 2021 to now), TensorFlow 1.x
//! timelines and any other Trace Event Format file.
//!
//! The file is read on a second thread (decompressing gzip there) and cut into blocks of whole
//! events; this thread parses each event straight into the track columns. See
//! `shared/docs/formats.md` sections 6–8 and 10 for the variants handled here.

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use rustc_hash::FxHashMap;

use super::json::{self, Chunk, Parser, SplitError, StreamEnd, SyntaxError, Value};
use super::{ImportError, ImportTimings, Input, Progress};
use crate::builder::{PendingFlow, ProfileBuilder, TrackId};
use crate::cupti_cbid;
use crate::model::{
    ApiInfo, CopyInfo, CopyKind, CounterTrack, Device, DistributedInfo, EventKind, FlowKind,
    Format, GpuLane, KernelInfo, Marker, MemoryKind, NO_DETAIL, Profile, TimeOrigin, TraceId,
    TrackKey, Warning,
};
use crate::strings::StrId;
use crate::time::parse_decimal_scaled;

/// Imports a Chrome trace JSON file (plain or gzip).
pub fn import(
    input: Input<'_>,
    progress: &Progress,
) -> Result<(Profile, ImportTimings), ImportError> {
    let started = Instant::now();
    let path = input.path();
    let (reader, compressed, file_bytes) = input.open()?;
    progress.set_total(file_bytes);
    let counting = CountingReader {
        inner: reader,
        progress,
        read: 0,
        compressed,
    };
    let mut state = ChromeState::new(path);
    state.b.source.compressed = compressed;
    state.b.source.file_bytes = file_bytes;

    let (tx, rx) = sync_channel::<Chunk<PreBlock>>(2);
    let mut parse_time = std::time::Duration::ZERO;
    let mut read_time = std::time::Duration::ZERO;
    let outcome = std::thread::scope(|scope| {
        let reader_thread = scope.spawn(move || {
            let t = Instant::now();
            json::split_stream(counting, &tx, pre_tokenize);
            t.elapsed()
        });
        let mut result = Ok(());
        for chunk in &rx {
            if progress.is_cancelled() {
                result = Err(ImportError::Cancelled {
                    path: path.to_path_buf(),
                });
                break;
            }
            let t = Instant::now();
            let step = state.chunk(chunk);
            parse_time += t.elapsed();
            if let Err(e) = step {
                result = Err(e);
                break;
            }
        }
        // Unblock the reader if we stopped early, then wait for it.
        drop(rx);
        if let Ok(d) = reader_thread.join() {
            read_time = d;
        }
        result
    });
    outcome?;
    let t = Instant::now();
    let profile = state.finish()?;
    let index = t.elapsed();
    progress.set_done(file_bytes);
    Ok((
        profile,
        ImportTimings {
            read: read_time,
            parse: parse_time,
            index,
            total: started.elapsed(),
        },
    ))
}

/// Counts bytes as they are read, for the progress bar.
struct CountingReader<'p, 'a> {
    inner: Box<dyn Read + Send + 'a>,
    progress: &'p Progress,
    read: u64,
    compressed: bool,
}

impl Read for CountingReader<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.progress.is_cancelled() {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        // For gzip the decompressed size is unknown; estimate with a typical 12x ratio.
        let done = if self.compressed {
            self.read / 12
        } else {
            self.read
        };
        self.progress.set_done(done);
        Ok(n)
    }
}

/// A pid or tid as read, before normalisation.
#[derive(Clone, Debug)]
enum RawId<'a> {
    Int(i64),
    Str(Cow<'a, str>),
}

/// The fields of one event that matter, borrowed from the block.
#[derive(Default)]
struct RawEvent<'a> {
    ph: u8,
    name: Option<Cow<'a, str>>,
    cat: Option<Cow<'a, str>>,
    ts: Option<&'a [u8]>,
    dur: Option<&'a [u8]>,
    pid: Option<RawId<'a>>,
    tid: Option<RawId<'a>>,
    id: Option<RawId<'a>>,
    bind_id: Option<RawId<'a>>,
    flow_in: bool,
    flow_out: bool,
    bp_enclosing: bool,
    scope: u8,
    args: Option<&'a [u8]>,
    /// Fields present with a type that makes no sense (`"ts": true`).
    bad_field: Option<&'static str>,
    keys: u32,
}

/// How a category is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Kind(EventKind),
    /// Flow categories that link launches (`ac2g`, legacy `async`).
    LaunchFlow,
    /// Known category shown as a plain slice (`Trace`, `overhead`).
    Plain(EventKind),
    Unknown,
}

fn classify(cat: &str) -> Class {
    const TABLE: &[(&str, Class)] = &[
        ("kernel", Class::Kind(EventKind::Kernel)),
        ("gpu_memcpy", Class::Kind(EventKind::Memcpy)),
        ("memcpy", Class::Kind(EventKind::Memcpy)),
        ("gpu_memset", Class::Kind(EventKind::Memset)),
        ("memset", Class::Kind(EventKind::Memset)),
        ("cuda_runtime", Class::Kind(EventKind::Runtime)),
        ("runtime", Class::Kind(EventKind::Runtime)),
        ("cuda_driver", Class::Kind(EventKind::Driver)),
        ("cpu_op", Class::Kind(EventKind::CpuOp)),
        ("operator", Class::Kind(EventKind::CpuOp)),
        ("user_annotation", Class::Kind(EventKind::UserAnnotation)),
        ("gpu_user_annotation", Class::Kind(EventKind::GpuAnnotation)),
        ("python_function", Class::Kind(EventKind::PythonFunction)),
        ("python", Class::Kind(EventKind::PythonFunction)),
        ("cuda_sync", Class::Kind(EventKind::GpuSync)),
        ("overhead", Class::Kind(EventKind::Overhead)),
        // Not Kineto's: written by warpscope's exporter for kinds Kineto has no category for.
        ("nvtx", Class::Kind(EventKind::Nvtx)),
        ("unified_memory", Class::Kind(EventKind::UnifiedMemory)),
        ("ac2g", Class::LaunchFlow),
        ("async", Class::LaunchFlow),
        ("async_cpu_to_gpu", Class::LaunchFlow),
        ("cpu_to_cuda", Class::LaunchFlow),
        ("cpu_instant_event", Class::Plain(EventKind::Instant)),
        ("memory", Class::Plain(EventKind::Instant)),
        ("trace", Class::Plain(EventKind::Slice)),
        ("fwdbwd", Class::Plain(EventKind::Slice)),
        ("external_correlation", Class::Plain(EventKind::Slice)),
        ("cuda_event", Class::Plain(EventKind::Slice)),
        (
            "cuda_profiler_range",
            Class::Plain(EventKind::UserAnnotation),
        ),
        ("collective_comm", Class::Plain(EventKind::UserAnnotation)),
        ("hpu_op", Class::Kind(EventKind::CpuOp)),
        ("xpu_runtime", Class::Kind(EventKind::Runtime)),
        ("xpu_driver", Class::Kind(EventKind::Driver)),
        ("mtia_runtime", Class::Kind(EventKind::Runtime)),
        ("privateuse1_runtime", Class::Kind(EventKind::Runtime)),
        ("privateuse1_driver", Class::Kind(EventKind::Driver)),
        ("mtia_ccp_events", Class::Plain(EventKind::Slice)),
        ("mtia_insight", Class::Plain(EventKind::Slice)),
        ("mtia_counters", Class::Plain(EventKind::Slice)),
        ("glow_runtime", Class::Plain(EventKind::Slice)),
        ("xpu_scope_profiler", Class::Plain(EventKind::Slice)),
        ("xpu_sync", Class::Plain(EventKind::GpuSync)),
        ("hardware_counters", Class::Plain(EventKind::Slice)),
    ];
    // Categories may be comma-separated lists; the first known one decides.
    for part in cat.split(',') {
        let part = part.trim();
        if let Some((_, class)) = TABLE
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(part))
        {
            return *class;
        }
    }
    Class::Unknown
}

/// The kind a slice of category `cat` gets (what [`ChromeState::slice`] does with it).
#[cfg(test)]
pub(crate) fn category_kind(cat: &str) -> EventKind {
    match classify(cat) {
        Class::Kind(k) | Class::Plain(k) => k,
        Class::LaunchFlow | Class::Unknown => EventKind::Slice,
    }
}

/// GPU-side categories whose events belong on a GPU stream track.
pub(crate) fn gpu_lane(kind: EventKind) -> Option<GpuLane> {
    match kind {
        EventKind::Kernel | EventKind::Memcpy | EventKind::Memset => Some(GpuLane::Work),
        EventKind::GpuAnnotation | EventKind::GpuSync => Some(GpuLane::Annotations),
        EventKind::UnifiedMemory => Some(GpuLane::UnifiedMemory),
        _ => None,
    }
}

/// The arg with which warpscope's exporter places an event on another lane than its category's.
pub(crate) const LANE_ARG: &str = "warpscope lane";
/// [`LANE_ARG`] as a quoted JSON key.
const LANE_ARG_KEY: &[u8] = b"\"warpscope lane\"";

/// Text of a lane for [`LANE_ARG`] (`cpu` is the thread track of the event's pid and tid).
pub(crate) fn lane_text(lane: Option<GpuLane>) -> &'static str {
    match lane {
        Some(GpuLane::Work) => "work",
        Some(GpuLane::Annotations) => "annotations",
        Some(GpuLane::UnifiedMemory) => "unified_memory",
        None => "cpu",
    }
}

fn lane_from_text(text: &str) -> Option<Option<GpuLane>> {
    [
        Some(GpuLane::Work),
        Some(GpuLane::Annotations),
        Some(GpuLane::UnifiedMemory),
        None,
    ]
    .into_iter()
    .find(|&l| lane_text(l) == text)
}

/// Parses [`CopyKind::as_str`] text back.
fn copy_kind_from_text(text: &str) -> Option<CopyKind> {
    CopyKind::from_short(text).or(match text {
        "Unified HtoD" => Some(CopyKind::UnifiedHtoD),
        "Unified DtoH" => Some(CopyKind::UnifiedDtoH),
        "Unified DtoD" => Some(CopyKind::UnifiedDtoD),
        "Memset" => Some(CopyKind::Memset),
        "Unknown" => Some(CopyKind::Unknown),
        _ => None,
    })
}

/// Arguments of GPU events and API calls that the model keeps.
#[derive(Default)]
struct GpuArgs {
    device: Option<i64>,
    context: Option<i64>,
    stream: Option<i64>,
    correlation: Option<i64>,
    external_id: Option<i64>,
    cbid: Option<i64>,
    registers: Option<i64>,
    shared_memory: Option<i64>,
    blocks_per_sm: Option<f64>,
    warps_per_sm: Option<f64>,
    occupancy: Option<f64>,
    grid: Option<[u32; 3]>,
    block: Option<[u32; 3]>,
    bytes: Option<i64>,
    // Written by warpscope's exporter only (see `crate::export::chrome`).
    /// [`LANE_ARG`]: `Some(None)` puts the event on its thread's track.
    lane: Option<Option<GpuLane>>,
    /// `copy kind`; when present, `src memory` and `dst memory` are taken from args too.
    copy_kind: Option<CopyKind>,
    src_memory: Option<MemoryKind>,
    dst_memory: Option<MemoryKind>,
    static_shared: Option<i64>,
    dynamic_shared: Option<i64>,
    mangled_name: Option<String>,
}

/// An open `B` event.
struct OpenBegin {
    ts_ns: i64,
    name: StrId,
    class: Class,
    /// The begin event's args (the end's are used when it has none).
    args: Option<Vec<u8>>,
}

/// One `s`/`t`/`f` event.
#[derive(Clone, Copy)]
struct FlowPoint {
    ph: u8,
    at: (TraceId, TraceId, i64),
    enclosing: bool,
    kind: FlowKind,
}

/// A flow end point as read, bound to tracks in `finish`.
struct RawFlow {
    from: (TraceId, TraceId, i64),
    to: (TraceId, TraceId, i64),
    to_enclosing: bool,
    kind: FlowKind,
}

/// Where the consumer is in the event array.
#[derive(Default)]
struct StreamState {
    /// An incomplete element at the end of the previous block (blank when the cut was right).
    carry: Vec<u8>,
    /// Line at which `carry` starts.
    carry_line: u64,
    /// True once the event array closed: what follows is collected in `tail`.
    in_tail: bool,
    /// The input after the event array.
    tail: Vec<u8>,
}

struct ChromeState {
    b: ProfileBuilder,
    stream: StreamState,
    base_time_ns: Option<i64>,
    is_kineto: bool,
    /// (pid, tid) → the track its slices went to (for binding flows).
    thread_tracks: FxHashMap<(TraceId, TraceId), TrackId>,
    last_track: Option<(TrackKey, TrackId)>,
    open_begins: FxHashMap<(TraceId, TraceId), Vec<OpenBegin>>,
    open_async: FxHashMap<(TraceId, StrId, u64), Vec<(i64, StrId)>>,
    /// Flow points (`s`, `t`, `f`) by (category, id), matched in time order at the end.
    flow_points: FxHashMap<(StrId, u64), Vec<FlowPoint>>,
    /// v2 flow ends (`bind_id`): (id, is the start, the event's track and index).
    bind_points: Vec<(u64, bool, TrackId, u32, i64)>,
    raw_flows: Vec<RawFlow>,
    counters: FxHashMap<(TraceId, String), usize>,
    thread_names: FxHashMap<(TraceId, TraceId), Vec<String>>,
    thread_sort: FxHashMap<(TraceId, TraceId), i64>,
    process_labels: FxHashMap<TraceId, String>,
    unknown_categories: FxHashMap<String, u64>,
    ignored_phases: FxHashMap<u8, u64>,
    unsorted_cat: StrId,
    /// The top-level `"warpscope"` object of a trace warpscope wrote.
    carried: Option<Carried>,
    events_read: u64,
    lenient_tokens: u64,
    repaired_strings: u64,
    control_strings: u64,
}

impl ChromeState {
    fn new(path: &Path) -> Self {
        let mut b = ProfileBuilder::new(path.to_path_buf(), Format::ChromeJson);
        b.source.tool = "Chrome trace".to_string();
        let unsorted_cat = b.intern("");
        Self {
            b,
            stream: StreamState::default(),
            base_time_ns: None,
            is_kineto: false,
            thread_tracks: FxHashMap::default(),
            last_track: None,
            open_begins: FxHashMap::default(),
            open_async: FxHashMap::default(),
            flow_points: FxHashMap::default(),
            bind_points: Vec::new(),
            raw_flows: Vec::new(),
            counters: FxHashMap::default(),
            thread_names: FxHashMap::default(),
            thread_sort: FxHashMap::default(),
            process_labels: FxHashMap::default(),
            unknown_categories: FxHashMap::default(),
            ignored_phases: FxHashMap::default(),
            unsorted_cat,
            carried: None,
            events_read: 0,
            lenient_tokens: 0,
            repaired_strings: 0,
            control_strings: 0,
        }
    }

    fn path(&self) -> &Path {
        &self.b.source.path
    }

    fn corrupt(&self, line: u64, detail: impl Into<String>) -> ImportError {
        ImportError::Corrupt {
            path: self.path().to_path_buf(),
            location: format!("line {line}"),
            detail: detail.into(),
        }
    }

    fn chunk(&mut self, chunk: Chunk<PreBlock>) -> Result<(), ImportError> {
        match chunk {
            Chunk::Events {
                bytes,
                first_line,
                pre,
            } => {
                self.events_block(&bytes, first_line, pre);
                Ok(())
            }
            Chunk::TopLevel { key, value } => {
                self.top_level(&key, &value);
                Ok(())
            }
            Chunk::End(end) => self.end(end),
            Chunk::Error(SplitError::Io(source)) => Err(ImportError::reading(
                self.path(),
                self.b.source.compressed,
                source,
            )),
            Chunk::Error(SplitError::Syntax { line, detail }) => {
                Err(self.corrupt(line, format!("not valid trace JSON: {detail}")))
            }
        }
    }

    /// The input ended: report truncation and read what followed the event array.
    fn end(&mut self, end: StreamEnd) -> Result<(), ImportError> {
        self.b.source.content_bytes = end.bytes;
        if end.compressed_stream_cut && !end.found_events {
            return Err(self.corrupt(
                1,
                "the gzip data ends before any event: the file is cut off",
            ));
        }
        if !end.found_events {
            if end.truncated_before_events {
                return Err(self.corrupt(
                    1,
                    "the file ends before any \"traceEvents\" array: it is cut off or not a trace",
                ));
            }
            return Err(ImportError::UnknownFormat {
                path: self.path().to_path_buf(),
                detail: "JSON without a \"traceEvents\" array: not a Chrome trace".to_string(),
            });
        }
        let closing = if end.array_form { "]" } else { "]}" };
        if !self.stream.in_tail {
            let cut_mid_event = self
                .stream
                .carry
                .iter()
                .any(|b| !b.is_ascii_whitespace() && *b != b',');
            let what = if cut_mid_event {
                "in the middle of an event"
            } else {
                "inside the event list"
            };
            self.b.warn(
                "truncated",
                1,
                format!(
                    "the file ends {what} (no closing `{closing}`): it was cut off; the complete \
                     events before the cut were loaded"
                ),
            );
            return Ok(());
        }
        let tail = std::mem::take(&mut self.stream.tail);
        self.tail(&tail, end.array_form);
        Ok(())
    }

    /// Parses what follows the event array: more top-level keys and the closing `}`.
    fn tail(&mut self, tail: &[u8], array_form: bool) {
        const CUT: &str =
            "the file ends before its closing `}`: it was cut off after the event list";
        let mut p = Parser::new(tail);
        loop {
            p.skip_separators();
            let failed_at = match p.peek() {
                None if array_form => return,
                None => {
                    self.b.warn("truncated", 1, CUT);
                    return;
                }
                Some(b'}') if !array_form => return,
                Some(b'"') if !array_form => match p.key() {
                    Ok(k) => {
                        let key = String::from_utf8_lossy(&k).into_owned();
                        p.peek();
                        let start = p.offset();
                        match p.skip_value() {
                            Ok(()) => {
                                let value = tail[start..p.offset()].to_vec();
                                self.top_level(&key, &value);
                                continue;
                            }
                            Err(e) => e.offset,
                        }
                    }
                    Err(e) => e.offset,
                },
                Some(_) => p.offset(),
            };
            if failed_at >= tail.len() {
                self.b.warn("truncated", 1, CUT);
            } else {
                self.b.warn(
                    "trailing_garbage",
                    1,
                    "text after the event list that is not valid trace JSON was ignored",
                );
            }
            return;
        }
    }

    fn top_level(&mut self, key: &str, value: &[u8]) {
        let mut p = Parser::new(value);
        let v = p.value();
        let text = |v: &Result<Value<'_>, SyntaxError>| -> Option<String> {
            match v {
                Ok(Value::Str(s)) => Some(s.to_string()),
                Ok(Value::Num(n)) => Some(String::from_utf8_lossy(n).into_owned()),
                _ => None,
            }
        };
        match key {
            "schemaVersion" => {
                self.is_kineto = true;
                self.b.source.schema_version = text(&v);
            }
            "baseTimeNanoseconds" => {
                self.is_kineto = true;
                match &v {
                    Ok(Value::Num(n)) => self.base_time_ns = json::int_from_text(n),
                    Ok(Value::Str(s)) => self.base_time_ns = s.trim().parse().ok(),
                    _ => {}
                }
                if self.base_time_ns.is_none() {
                    self.b.warn(
                        "bad_base_time",
                        1,
                        "baseTimeNanoseconds is not an integer; times are shown relative",
                    );
                }
            }
            "deviceProperties" | "computeProperties" => {
                self.is_kineto = true;
                let mut props = Parser::new(value);
                let devices = parse_device_properties(&mut props);
                if devices.is_none() {
                    self.b.warn(
                        "bad_device_properties",
                        1,
                        "deviceProperties could not be read; devices are named by number",
                    );
                }
                self.b.devices.extend(devices.unwrap_or_default());
            }
            "warpscope" => {
                self.carried = parse_carried(value, &mut self.b);
                if self.carried.is_none() {
                    self.b.warn(
                        "bad_warpscope_metadata",
                        1,
                        "the \"warpscope\" object could not be read; labels and the original \
                         source are not shown",
                    );
                }
            }
            "distributedInfo" => {
                let mut d = DistributedInfo::default();
                let mut p = Parser::new(value);
                let ok = p.object(|p, k| {
                    match (k, p.value()?) {
                        (b"backend", Value::Str(s)) => d.backend = Some(s.into_owned()),
                        (b"rank", Value::Num(n)) => d.rank = json::int_from_text(n),
                        (b"world_size", Value::Num(n)) => d.world_size = json::int_from_text(n),
                        _ => {}
                    }
                    Ok(())
                });
                if ok.is_ok() {
                    self.b.distributed = Some(d);
                }
            }
            "displayTimeUnit"
            | "traceName"
            | "trace_id"
            | "cupti_version"
            | "cuda_runtime_version"
            | "cuda_driver_version"
            | "record_shapes"
            | "with_stack"
            | "with_flops"
            | "with_modules"
            | "profile_memory" => {
                if let Some(t) = text(&v) {
                    if matches!(
                        key,
                        "cupti_version" | "cuda_runtime_version" | "cuda_driver_version"
                    ) {
                        self.is_kineto = true;
                    }
                    self.b.source.details.push((key.to_string(), t));
                }
            }
            _ => {}
        }
    }

    /// Handles one block of the event array. A block tokenized on the reader thread is used
    /// when it starts where the previous block ended (no incomplete element carried over);
    /// otherwise the carried-over bytes and the block are parsed here.
    fn events_block(&mut self, bytes: &[u8], first_line: u64, pre: Option<PreBlock>) {
        if self.stream.in_tail {
            self.stream.tail.extend_from_slice(bytes);
            return;
        }
        let carry_is_blank = self
            .stream
            .carry
            .iter()
            .all(|b| b.is_ascii_whitespace() || *b == b',');
        if carry_is_blank {
            if let Some(pre) = pre {
                self.lenient_tokens += pre.lenient_tokens;
                self.repaired_strings += pre.repaired_strings;
                self.control_strings += pre.control_strings;
                for e in &pre.events {
                    let ev = e.to_raw(bytes, &pre.owned);
                    self.events_read += 1;
                    self.event(&ev);
                }
                self.stream.carry.clear();
                self.stream.carry_line = first_line;
                // Continue after the last element the reader parsed.
                let rest = &bytes[pre.stop_at..];
                let rest_line = first_line + count_lines(&bytes[..pre.stop_at]);
                self.parse_here(rest, rest_line);
                return;
            }
            self.stream.carry.clear();
            self.stream.carry_line = first_line;
            self.parse_here(bytes, first_line);
        } else {
            let mut data = std::mem::take(&mut self.stream.carry);
            data.extend_from_slice(bytes);
            let line = self.stream.carry_line;
            self.parse_here(&data, line);
        }
    }

    /// Parses elements leniently until the data ends, an element is incomplete (kept as the
    /// carry for the next block) or the array closes (the rest is the tail).
    fn parse_here(&mut self, data: &[u8], first_line: u64) {
        let mut bad_syntax = 0u64;
        let mut first_bad: Option<(u64, &'static str)> = None;
        let mut non_objects = 0u64;
        let mut lenient = 0u64;
        let mut repaired = 0u64;
        let mut control = 0u64;
        let stop = tokenize(data, false, |ev, p| {
            match ev {
                Ok(ev) => {
                    self.events_read += 1;
                    self.event(&ev);
                }
                Err(TokenIssue::Syntax(offset, detail)) => {
                    bad_syntax += 1;
                    if first_bad.is_none() {
                        first_bad = Some((
                            first_line + count_lines(&data[..offset.min(data.len())]),
                            detail,
                        ));
                    }
                }
                Err(TokenIssue::NotObject) => non_objects += 1,
            }
            lenient = p.lenient_tokens;
            repaired = p.repaired_strings;
            control = p.control_strings;
        });
        self.lenient_tokens += lenient;
        self.repaired_strings += repaired;
        self.control_strings += control;
        match stop {
            Stop::End => {}
            Stop::Incomplete(at) | Stop::Error(at) => {
                self.stream.carry = data[at..].to_vec();
                self.stream.carry_line = first_line + count_lines(&data[..at]);
            }
            Stop::ArrayEnd(at) => {
                self.stream.in_tail = true;
                self.stream.tail = data[at + 1..].to_vec();
            }
        }
        if non_objects > 0 {
            self.b.warn(
                "non_object_event",
                non_objects,
                "elements of traceEvents that are not objects were skipped",
            );
        }
        if let Some((line, detail)) = first_bad {
            self.b.warn(
                "bad_event_syntax",
                bad_syntax,
                format!("events with broken JSON were skipped (first at line {line}: {detail})"),
            );
        }
    }

    fn event(&mut self, ev: &RawEvent<'_>) {
        if ev.keys == 0 {
            self.b
                .warn("empty_event", 1, "empty `{}` events were skipped");
            return;
        }
        if let Some(field) = ev.bad_field {
            self.b.warn(
                &format!("bad_type_{field}"),
                1,
                format!("events whose `{field}` has the wrong type were skipped"),
            );
            return;
        }
        let pid = self.norm_id(ev.pid.as_ref());
        let tid = self.norm_id(ev.tid.as_ref());
        if ev.ph == b'M' {
            self.metadata(ev, pid, tid);
            return;
        }
        if ev.ph == 0 {
            self.b.warn(
                "missing_ph",
                1,
                "events without a `ph` (phase) were skipped",
            );
            return;
        }
        let Some(ts_text) = ev.ts else {
            self.b
                .warn("missing_ts", 1, "events without a `ts` were skipped");
            return;
        };
        let Some(ts_ns) = parse_decimal_scaled(ts_text, 3) else {
            self.b.warn(
                "bad_ts",
                1,
                "events whose `ts` is not a number were skipped",
            );
            return;
        };
        let name_text = ev.name.as_deref().unwrap_or("");
        match ev.ph {
            b'X' => {
                let dur_ns = match ev.dur {
                    Some(d) => {
                        match parse_decimal_scaled(d, 3) {
                            Some(v) if v < 0 => {
                                self.b.warn(
                                    "negative_dur",
                                    1,
                                    "complete events with a negative `dur` were given duration 0",
                                );
                                0
                            }
                            Some(v) => v,
                            None => {
                                self.b.warn("bad_dur", 1, "complete events whose `dur` is not a number were given duration 0");
                                0
                            }
                        }
                    }
                    None => {
                        self.b.warn(
                            "missing_dur",
                            1,
                            "complete events without `dur` were given duration 0",
                        );
                        0
                    }
                };
                let cat = ev.cat.as_deref().unwrap_or("");
                let class = self.class_of(cat);
                let track = self.slice(class, pid, tid, ts_ns, dur_ns, name_text, ev.args);
                if let Some(id) = ev.bind_id.as_ref().and_then(|i| self.flow_id(i)) {
                    let index = self.b.tracks()[track.0 as usize]
                        .events
                        .len()
                        .saturating_sub(1);
                    let index = u32::try_from(index).unwrap_or(0);
                    if ev.flow_out {
                        self.bind_points.push((id, true, track, index, ts_ns));
                    }
                    if ev.flow_in {
                        self.bind_points.push((id, false, track, index, ts_ns));
                    }
                }
            }
            b'B' => {
                let cat = ev.cat.as_deref().unwrap_or("");
                let class = self.class_of(cat);
                let name = self.b.intern(name_text);
                self.open_begins
                    .entry((pid, tid))
                    .or_default()
                    .push(OpenBegin {
                        ts_ns,
                        name,
                        class,
                        args: ev.args.map(<[u8]>::to_vec),
                    });
            }
            b'E' => {
                let open = self.open_begins.get_mut(&(pid, tid)).and_then(Vec::pop);
                match open {
                    Some(open) => {
                        let name = self.b.strings.get(open.name).to_string();
                        let merged = merge_args(open.args.as_deref(), ev.args);
                        let args = merged.as_deref();
                        self.slice(
                            open.class,
                            pid,
                            tid,
                            open.ts_ns,
                            (ts_ns - open.ts_ns).max(0),
                            &name,
                            args,
                        );
                    }
                    None => self.b.warn(
                        "unmatched_end",
                        1,
                        "end (`E`) events without a matching begin were skipped",
                    ),
                }
            }
            b'i' | b'I' | b'R' => {
                if ev.scope == b'g' || ev.scope == b'p' {
                    self.b.markers.push(Marker {
                        time_ns: ts_ns,
                        name: name_text.to_string(),
                    });
                } else {
                    let name = self.b.intern(name_text);
                    let track = self.thread_track(pid, tid);
                    self.b.push(track, ts_ns, 0, name, EventKind::Instant);
                }
            }
            b'C' => self.counter(pid, name_text, ev.id.as_ref(), ts_ns, ev.args),
            b's' | b't' | b'f' => self.flow(ev, pid, tid, ts_ns),
            b'b' | b'e' | b'n' => self.async_event(ev, pid, ts_ns, name_text),
            other => *self.ignored_phases.entry(other).or_insert(0) += 1,
        }
    }

    fn class_of(&mut self, cat: &str) -> Class {
        let class = classify(cat);
        if class == Class::Unknown && !cat.is_empty() {
            if let Some(n) = self.unknown_categories.get_mut(cat) {
                *n += 1;
            } else {
                self.unknown_categories.insert(cat.to_string(), 1);
            }
        }
        class
    }

    fn norm_id(&mut self, id: Option<&RawId<'_>>) -> TraceId {
        match id {
            None => TraceId::Int(0),
            Some(RawId::Int(v)) => TraceId::Int(*v),
            Some(RawId::Str(s)) => {
                let t = s.trim();
                match t.parse::<i64>() {
                    Ok(v) if !t.is_empty() => TraceId::Int(v),
                    _ => TraceId::Name(self.b.intern(s)),
                }
            }
        }
    }

    fn flow_id(&self, id: &RawId<'_>) -> Option<u64> {
        match id {
            RawId::Int(v) => Some(*v as u64),
            RawId::Str(s) => {
                let t = s.trim();
                let t = t
                    .strip_prefix("0x")
                    .map_or_else(|| t.parse().ok(), |h| u64::from_str_radix(h, 16).ok());
                t.or_else(|| {
                    // Hash opaque string ids.
                    use std::hash::{Hash, Hasher};
                    let mut h = rustc_hash::FxHasher::default();
                    s.hash(&mut h);
                    Some(h.finish())
                })
            }
        }
    }

    fn thread_track(&mut self, pid: TraceId, tid: TraceId) -> TrackId {
        let key = TrackKey::Thread { pid, tid };
        let id = self.track(key);
        self.thread_tracks.entry((pid, tid)).or_insert(id);
        id
    }

    fn track(&mut self, key: TrackKey) -> TrackId {
        if let Some((k, id)) = self.last_track
            && k == key
        {
            return id;
        }
        let id = self.b.track(key);
        self.last_track = Some((key, id));
        id
    }

    /// Adds one slice; returns its track.
    #[allow(clippy::too_many_arguments)]
    fn slice(
        &mut self,
        class: Class,
        pid: TraceId,
        tid: TraceId,
        ts_ns: i64,
        dur_ns: i64,
        name_text: &str,
        args: Option<&[u8]>,
    ) -> TrackId {
        let kind = match class {
            Class::Kind(k) | Class::Plain(k) => k,
            Class::LaunchFlow | Class::Unknown => EventKind::Slice,
        };
        let name = self.b.intern(name_text);
        let natural_lane = gpu_lane(kind);
        // Args matter for GPU work and API calls, and for events that say where they go.
        let placed = args.is_some_and(|a| memchr::memmem::find(a, LANE_ARG_KEY).is_some());
        let a = match args {
            Some(a) if natural_lane.is_some() || kind.is_api() || placed => {
                parse_gpu_args(a, &mut self.lenient_tokens)
            }
            _ => GpuArgs::default(),
        };
        let lane = a.lane.unwrap_or(natural_lane);
        let track = if let Some(lane) = lane {
            let device = a
                .device
                .or(match pid {
                    TraceId::Int(v) => Some(v),
                    TraceId::Name(_) => None,
                })
                .unwrap_or(0);
            let stream = a.stream.or_else(|| self.stream_from_tid(tid)).unwrap_or(0);
            let key = TrackKey::Gpu {
                device: u32::try_from(device).unwrap_or(0),
                context: u32::try_from(a.context.unwrap_or(0)).unwrap_or(0),
                stream: u64::try_from(stream).unwrap_or(0),
                lane,
            };
            let track = self.track(key);
            self.thread_tracks.entry((pid, tid)).or_insert(track);
            track
        } else {
            self.thread_track(pid, tid)
        };
        let correlation = a.correlation.and_then(|c| u64::try_from(c).ok());
        let external_id = a.external_id.and_then(|c| u64::try_from(c).ok());
        match kind {
            EventKind::Kernel => {
                let mangled_name = a.mangled_name.as_deref().map(|m| self.b.intern(m));
                let info = KernelInfo {
                    grid: a.grid,
                    block: a.block,
                    registers_per_thread: a.registers.and_then(|v| u32::try_from(v).ok()),
                    static_shared_bytes: a.static_shared.and_then(|v| u64::try_from(v).ok()),
                    dynamic_shared_bytes: a.dynamic_shared.and_then(|v| u64::try_from(v).ok()),
                    shared_memory_bytes: a.shared_memory.and_then(|v| u64::try_from(v).ok()),
                    occupancy_pct: a.occupancy.map(|v| v as f32),
                    blocks_per_sm: a.blocks_per_sm.map(|v| v as f32),
                    warps_per_sm: a.warps_per_sm.map(|v| v as f32),
                    correlation,
                    external_id,
                    mangled_name,
                };
                self.b.push_kernel(track, ts_ns, dur_ns, name, info, 0);
            }
            EventKind::Memcpy | EventKind::Memset | EventKind::UnifiedMemory
                if kind != EventKind::UnifiedMemory || a.copy_kind.is_some() =>
            {
                let (copy_kind, src_kind, dst_kind) = if let Some(k) = a.copy_kind {
                    (k, a.src_memory, a.dst_memory)
                } else if kind == EventKind::Memset {
                    (CopyKind::Memset, None, parse_memset_kind(name_text))
                } else {
                    parse_memcpy_name(name_text)
                };
                let info = CopyInfo {
                    kind: copy_kind,
                    bytes: a.bytes.and_then(|v| u64::try_from(v).ok()),
                    src_kind,
                    dst_kind,
                    correlation,
                    external_id,
                };
                self.b.push_copy(track, ts_ns, dur_ns, name, kind, info, 0);
            }
            _ if kind.is_api() => {
                let cbid = a.cbid.and_then(|v| u32::try_from(v).ok());
                let name = if name_text == "INVALID" || name_text.is_empty() {
                    let looked_up = cbid.and_then(|c| {
                        if kind == EventKind::Driver {
                            cupti_cbid::driver_api_name(c)
                        } else {
                            cupti_cbid::runtime_api_name(c)
                        }
                    });
                    match looked_up {
                        Some(n) => {
                            self.b.warn(
                                "invalid_api_name",
                                1,
                                "API calls named \"INVALID\" were named from their callback id (cbid)",
                            );
                            self.b.intern(n)
                        }
                        None => name,
                    }
                } else {
                    name
                };
                let info = ApiInfo {
                    correlation,
                    cbid,
                    external_id,
                };
                self.b.push_api(track, ts_ns, dur_ns, name, kind, info, 0);
            }
            _ => self.b.push(track, ts_ns, dur_ns, name, kind),
        }
        track
    }

    fn stream_from_tid(&self, tid: TraceId) -> Option<i64> {
        match tid {
            TraceId::Int(v) => Some(v),
            TraceId::Name(s) => {
                let text = self.b.strings.get(s);
                let digits: String = text
                    .chars()
                    .rev()
                    .skip_while(|c| !c.is_ascii_digit())
                    .take_while(char::is_ascii_digit)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                digits.parse().ok()
            }
        }
    }

    fn metadata(&mut self, ev: &RawEvent<'_>, pid: TraceId, tid: TraceId) {
        let Some(args) = ev.args else { return };
        let mut name: Option<String> = None;
        let mut sort_index: Option<i64> = None;
        let mut labels: Option<String> = None;
        let mut p = Parser::new(args);
        let _ = p.object(|p, k| {
            match (k, p.value()?) {
                (b"name", Value::Str(s)) => name = Some(s.trim().to_string()),
                (b"labels", Value::Str(s)) => labels = Some(s.trim().to_string()),
                (b"sort_index", Value::Num(n)) => sort_index = json::int_from_text(n),
                _ => {}
            }
            Ok(())
        });
        match ev.name.as_deref() {
            Some("process_name") => {
                if let Some(n) = name {
                    if let Some(entry) = self.b.process_names.iter_mut().find(|(p, _)| *p == pid) {
                        entry.1 = n;
                    } else {
                        self.b.process_names.push((pid, n));
                    }
                }
            }
            Some("process_labels") => {
                if let Some(l) = labels {
                    self.process_labels.insert(pid, l);
                }
            }
            Some("thread_name") => {
                if let Some(n) = name {
                    let names = self.thread_names.entry((pid, tid)).or_default();
                    if !names.contains(&n) {
                        names.push(n);
                    }
                }
            }
            Some("thread_sort_index") => {
                if let Some(s) = sort_index {
                    self.thread_sort.insert((pid, tid), s);
                }
            }
            _ => {}
        }
    }

    fn counter(
        &mut self,
        pid: TraceId,
        name: &str,
        id: Option<&RawId<'_>>,
        ts_ns: i64,
        args: Option<&[u8]>,
    ) {
        let Some(args) = args else { return };
        let mut series: Vec<(String, f64)> = Vec::new();
        let mut p = Parser::new(args);
        let _ = p.object(|p, k| {
            match p.value()? {
                Value::Num(n) => {
                    if let Some(v) = json::float_from_text(n) {
                        series.push((String::from_utf8_lossy(k).into_owned(), v));
                    }
                }
                Value::Str(s) => {
                    if let Ok(v) = s.trim().parse::<f64>() {
                        series.push((String::from_utf8_lossy(k).into_owned(), v));
                    }
                }
                _ => {}
            }
            Ok(())
        });
        let base = match id {
            Some(RawId::Int(v)) => format!("{name} {v}"),
            Some(RawId::Str(s)) => format!("{name} {s}"),
            None => name.to_string(),
        };
        let single = series.len() == 1;
        for (key, value) in series {
            let full = if single && (key == "value" || key == name) {
                base.clone()
            } else {
                format!("{base} {key}")
            };
            let index = match self.counters.get(&(pid, full.clone())) {
                Some(&i) => i,
                None => {
                    self.b.counters.push(CounterTrack {
                        pid,
                        name: full.clone(),
                        time_ns: Vec::new(),
                        value: Vec::new(),
                    });
                    let i = self.b.counters.len() - 1;
                    self.counters.insert((pid, full), i);
                    i
                }
            };
            self.b.counters[index].time_ns.push(ts_ns);
            self.b.counters[index].value.push(value);
        }
    }

    fn flow(&mut self, ev: &RawEvent<'_>, pid: TraceId, tid: TraceId, ts_ns: i64) {
        let Some(id) = ev.id.as_ref().and_then(|i| self.flow_id(i)) else {
            self.b.warn(
                "flow_without_id",
                1,
                "flow events without an `id` were skipped",
            );
            return;
        };
        let cat_text = ev.cat.as_deref().unwrap_or("");
        let kind = match classify(cat_text) {
            Class::LaunchFlow => FlowKind::Launch,
            _ if cat_text == "fwdbwd" => FlowKind::ForwardBackward,
            _ => FlowKind::Other,
        };
        let cat = if kind == FlowKind::Launch {
            self.unsorted_cat
        } else {
            self.b.intern(cat_text)
        };
        self.flow_points
            .entry((cat, id))
            .or_default()
            .push(FlowPoint {
                ph: ev.ph,
                at: (pid, tid, ts_ns),
                enclosing: ev.ph == b't' || ev.bp_enclosing,
                kind,
            });
    }

    /// Chains the flow points of each (category, id) in file order: `s` starts an arrow, `t`
    /// continues it, `f` ends it. An end read before any start waits for the next start (the
    /// format does not require events in order). Ends that never get a start are normal
    /// (Kineto writes them for calls that launch nothing) and are dropped.
    fn match_flow_points(&mut self) {
        let mut keys: Vec<_> = self.flow_points.keys().copied().collect();
        keys.sort_unstable();
        for key in keys {
            let Some(points) = self.flow_points.remove(&key) else {
                continue;
            };
            let mut from: Option<(TraceId, TraceId, i64)> = None;
            let mut waiting: Option<FlowPoint> = None;
            for p in points {
                match (p.ph, from) {
                    (b's', _) => match waiting.take() {
                        Some(end) => self.raw_flows.push(RawFlow {
                            from: p.at,
                            to: end.at,
                            to_enclosing: end.enclosing,
                            kind: end.kind,
                        }),
                        None => from = Some(p.at),
                    },
                    (_, Some(start)) => {
                        self.raw_flows.push(RawFlow {
                            from: start,
                            to: p.at,
                            to_enclosing: p.enclosing,
                            kind: p.kind,
                        });
                        from = (p.ph == b't').then_some(p.at);
                    }
                    (b'f', None) => waiting = Some(p),
                    _ => {}
                }
            }
        }
        // v2 flows bind to the very events that carry them.
        let mut points = std::mem::take(&mut self.bind_points);
        points.sort_by_key(|p| (p.0, p.4, !p.1));
        let mut open: Option<(u64, TrackId, u32)> = None;
        for (id, is_out, track, index, _) in points {
            if is_out {
                open = Some((id, track, index));
            } else if let Some((oid, otrack, oindex)) = open
                && oid == id
            {
                self.b
                    .push_exact_flow((otrack, oindex), (track, index), FlowKind::Other);
            }
        }
    }

    fn async_event(&mut self, ev: &RawEvent<'_>, pid: TraceId, ts_ns: i64, name_text: &str) {
        let id = ev.id.as_ref().and_then(|i| self.flow_id(i)).unwrap_or(0);
        let cat = self.b.intern(ev.cat.as_deref().unwrap_or(""));
        let name = self.b.intern(name_text);
        match ev.ph {
            b'b' => self
                .open_async
                .entry((pid, cat, id))
                .or_default()
                .push((ts_ns, name)),
            b'e' => {
                let open = self.open_async.get_mut(&(pid, cat, id)).and_then(Vec::pop);
                match open {
                    Some((start, begin_name)) => {
                        let track = self.track(TrackKey::Async {
                            pid,
                            name: begin_name,
                        });
                        self.b.push(
                            track,
                            start,
                            (ts_ns - start).max(0),
                            begin_name,
                            EventKind::Slice,
                        );
                    }
                    None => self.b.warn(
                        "unmatched_async_end",
                        1,
                        "async end (`e`) events without a matching begin were skipped",
                    ),
                }
            }
            _ => {
                let track = self.track(TrackKey::Async { pid, name });
                self.b.push(track, ts_ns, 0, name, EventKind::Instant);
            }
        }
    }

    fn finish(mut self) -> Result<Profile, ImportError> {
        if self.events_read == 0 && self.b.event_count() == 0 && self.b.counters.is_empty() {
            self.b.warn("no_events", 1, "the trace contains no events");
        }
        // Close begins that never ended at the end of the trace.
        let trace_end = self
            .b
            .tracks()
            .iter()
            .flat_map(|t| (0..t.events.len()).map(move |i| t.events.end_ns(i)))
            .max();
        let mut unclosed = 0u64;
        let mut opens: Vec<_> = std::mem::take(&mut self.open_begins).into_iter().collect();
        opens.sort_by_key(|(k, _)| *k);
        for ((pid, tid), stack) in opens {
            for open in stack {
                unclosed += 1;
                let end = trace_end.unwrap_or(open.ts_ns).max(open.ts_ns);
                let name = self.b.strings.get(open.name).to_string();
                self.slice(
                    open.class,
                    pid,
                    tid,
                    open.ts_ns,
                    end - open.ts_ns,
                    &name,
                    open.args.as_deref(),
                );
            }
        }
        if unclosed > 0 {
            self.b.warn(
                "unclosed_begin",
                unclosed,
                "begin (`B`) events without an end were extended to the end of the trace",
            );
        }
        let unclosed_async: u64 = self.open_async.values().map(|v| v.len() as u64).sum();
        if unclosed_async > 0 {
            self.b.warn(
                "unclosed_async",
                unclosed_async,
                "async begin (`b`) events without an end were skipped",
            );
        }
        self.match_flow_points();
        self.apply_tensorflow_layout();
        self.name_tracks();
        self.bind_flows();
        self.fill_devices();
        self.report_counts();
        self.describe_tool();
        let carried = self.carried.take();
        if let Some(c) = &carried {
            self.apply_carried(c);
        }
        // Time base: Kineto 2024+ writes times relative to baseTimeNanoseconds; older traces use
        // Unix-epoch microseconds.
        self.b.unix_offset_ns = match self.base_time_ns {
            Some(base) => Some(base),
            None => {
                let earliest = self
                    .b
                    .tracks()
                    .iter()
                    .filter_map(|t| t.events.start_ns.iter().min().copied())
                    .min();
                earliest.filter(|&t| t > 946_684_800_000_000_000).map(|_| 0)
            }
        };
        let mut profile = self.b.finish();
        if let Some(c) = carried {
            if let Some(origin) = c.origin {
                profile.origin = origin;
            }
            // The original import's warnings come first, as they were; one the re-import raised
            // again under the same code is not counted twice.
            let own = std::mem::replace(&mut profile.warnings, c.warnings);
            for w in own {
                if !profile.warnings.iter().any(|c| c.code == w.code) {
                    profile.warnings.push(w);
                }
            }
        }
        Ok(profile)
    }

    /// Restores what a trace written by warpscope says about the profile it came from.
    fn apply_carried(&mut self, c: &Carried) {
        let source = &mut self.b.source;
        if let Some(tool) = &c.tool {
            source.tool.clone_from(tool);
        }
        source.tool_version.clone_from(&c.tool_version);
        source.schema_version.clone_from(&c.schema_version);
        source.details.clone_from(&c.details);
        for (key, value) in [("original path", &c.path), ("original format", &c.format)] {
            if let Some(v) = value
                && !source.details.iter().any(|(k, _)| k == key)
            {
                source.details.push((key.to_string(), v.clone()));
            }
        }
        self.b.labels.clone_from(&c.labels);
        for (key, name, sort_index) in &c.tracks {
            if let Some(id) = self.b.find_track(key) {
                let t = self.b.track_mut(id);
                t.name.clone_from(name);
                t.sort_index = *sort_index;
            }
        }
        if c.origin.is_some() {
            // Event times are relative to the carried origin.
            self.b.origin_raw_ns = Some(0);
        }
    }

    /// TensorFlow 1.x timelines put every device event twice: on its `/stream:N` pid and on
    /// `stream:all` (kernels) or `memcpy` (copies). Keep the per-stream copies as GPU tracks,
    /// classify them by their twin, and drop the twins.
    fn apply_tensorflow_layout(&mut self) {
        #[derive(Clone, Copy, PartialEq)]
        enum Role {
            Stream(u32, u64),
            All(u32),
            Memcpy(u32),
        }
        let mut roles: FxHashMap<TraceId, Role> = FxHashMap::default();
        for (pid, name) in &self.b.process_names {
            let Some(rest) = name.split("/device:GPU:").nth(1) else {
                continue;
            };
            let Some(rest) = rest.strip_suffix(" Compute") else {
                continue;
            };
            let mut parts = rest.splitn(2, '/');
            let Some(device) = parts.next().and_then(|d| d.parse::<u32>().ok()) else {
                continue;
            };
            match parts.next() {
                Some("stream:all") => {
                    roles.insert(*pid, Role::All(device));
                }
                Some("memcpy") => {
                    roles.insert(*pid, Role::Memcpy(device));
                }
                Some(s) => {
                    if let Some(stream) = s
                        .strip_prefix("stream:")
                        .and_then(|n| n.parse::<u64>().ok())
                    {
                        roles.insert(*pid, Role::Stream(device, stream));
                    }
                }
                None => {}
            }
        }
        if !roles.values().any(|r| matches!(r, Role::Stream(..))) {
            if self
                .b
                .process_names
                .iter()
                .any(|(_, n)| n.contains("/device:GPU:"))
            {
                self.b.source.tool = "TensorFlow 1.x timeline".to_string();
                self.b.warn(
                    "tf_no_streams",
                    1,
                    "this TensorFlow timeline has no per-stream GPU lanes (recorded without device \
                     tracing); GPU ops appear only as launches on the device's op track",
                );
            }
            return;
        }
        self.b.source.tool = "TensorFlow 1.x timeline".to_string();
        // Events on the twin pids, by (device, start, duration, name).
        let mut twins: FxHashMap<(u32, i64, i64, StrId), EventKind> = FxHashMap::default();
        for t in self.b.tracks() {
            let TrackKey::Thread { pid, .. } = t.key else {
                continue;
            };
            let (device, kind) = match roles.get(&pid) {
                Some(Role::All(d)) => (*d, EventKind::Kernel),
                Some(Role::Memcpy(d)) => (*d, EventKind::Memcpy),
                _ => continue,
            };
            let ev = &t.events;
            for i in 0..ev.len() {
                twins.insert((device, ev.start_ns[i], ev.dur_ns[i], ev.name[i]), kind);
            }
        }
        let mut unmatched = 0u64;
        let stream_tracks: Vec<(TrackId, u32, u64)> = self
            .b
            .tracks()
            .iter()
            .enumerate()
            .filter_map(|(i, t)| match t.key {
                TrackKey::Thread { pid, .. } => match roles.get(&pid) {
                    Some(Role::Stream(d, s)) => {
                        Some((TrackId(u32::try_from(i).unwrap_or(0)), *d, *s))
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect();
        for &(track_id, device, _) in &stream_tracks {
            let n = self.b.tracks()[track_id.0 as usize].events.len();
            for i in 0..n {
                let (start, dur, name, kind) = {
                    let ev = &self.b.tracks()[track_id.0 as usize].events;
                    (ev.start_ns[i], ev.dur_ns[i], ev.name[i], ev.kind[i])
                };
                if kind == EventKind::Instant {
                    continue;
                }
                let twin = twins.get(&(device, start, dur, name)).copied();
                let new_kind = twin.unwrap_or_else(|| {
                    unmatched += 1;
                    EventKind::Kernel
                });
                let detail = if new_kind == EventKind::Memcpy {
                    let text = self.b.strings.get(name);
                    let kind = text
                        .strip_prefix("MEMCPY")
                        .and_then(CopyKind::from_short)
                        .unwrap_or(CopyKind::Unknown);
                    self.b.copies.push(CopyInfo {
                        kind,
                        bytes: None,
                        src_kind: None,
                        dst_kind: None,
                        correlation: None,
                        external_id: None,
                    });
                    u32::try_from(self.b.copies.len() - 1).unwrap_or(NO_DETAIL)
                } else {
                    NO_DETAIL
                };
                let ev = &mut self.b.track_mut(track_id).events;
                ev.kind[i] = new_kind;
                ev.detail[i] = detail;
            }
        }
        if unmatched > 0 {
            self.b.warn(
                "tf_unmatched",
                unmatched,
                "TensorFlow stream events without a twin on stream:all or memcpy were counted as kernels",
            );
        }
        for &(track_id, device, stream) in &stream_tracks {
            self.b.rekey_track(
                track_id,
                TrackKey::Gpu {
                    device,
                    context: 0,
                    stream,
                    lane: GpuLane::Work,
                },
            );
        }
        // Drop the twins, and tracks emptied by merging several tids of one stream pid.
        self.b.remove_tracks(|t| match t.key {
            TrackKey::Thread { pid, .. } => {
                t.events.is_empty()
                    || matches!(roles.get(&pid), Some(Role::All(_) | Role::Memcpy(_)))
            }
            _ => t.events.is_empty(),
        });
        self.thread_tracks.clear();
        self.last_track = None;
    }

    fn name_tracks(&mut self) {
        let n = self.b.tracks().len();
        for i in 0..n {
            let key = self.b.tracks()[i].key;
            let (name, sort) = match key {
                TrackKey::Gpu { stream, lane, .. } => {
                    let base = format!("stream {stream}");
                    let name = match lane {
                        GpuLane::Work => base,
                        GpuLane::Annotations => format!("{base} annotations"),
                        GpuLane::UnifiedMemory => "unified memory".to_string(),
                    };
                    (name, None)
                }
                TrackKey::Thread { pid, tid } => {
                    let name = match self.thread_names.get(&(pid, tid)) {
                        Some(names) if !names.is_empty() => names.join(" / "),
                        _ => format!("thread {}", self.id_text(tid)),
                    };
                    (name, self.thread_sort.get(&(pid, tid)).copied())
                }
                TrackKey::Async { name, .. } => (self.b.strings.get(name).to_string(), None),
            };
            let t = self.b.track_mut(TrackId(u32::try_from(i).unwrap_or(0)));
            t.name = name;
            t.sort_index = sort;
        }
        for (pid, labels) in std::mem::take(&mut self.process_labels) {
            if !self.b.process_names.iter().any(|(p, _)| *p == pid) {
                self.b.process_names.push((pid, labels));
            }
        }
    }

    fn id_text(&self, id: TraceId) -> String {
        match id {
            TraceId::Int(v) => v.to_string(),
            TraceId::Name(s) => self.b.strings.get(s).to_string(),
        }
    }

    fn bind_flows(&mut self) {
        let has_correlations =
            !self.b.kernels.is_empty() && self.b.kernels.iter().any(|k| k.correlation.is_some());
        let mut thread_tracks = std::mem::take(&mut self.thread_tracks);
        if thread_tracks.is_empty() {
            for (i, t) in self.b.tracks().iter().enumerate() {
                if let TrackKey::Thread { pid, tid } = t.key {
                    thread_tracks.insert((pid, tid), TrackId(u32::try_from(i).unwrap_or(0)));
                }
            }
        }
        for f in std::mem::take(&mut self.raw_flows) {
            if f.kind == FlowKind::Launch && has_correlations {
                // Correlation ids already link every launch; the arrows would duplicate them.
                continue;
            }
            let (Some(&from_track), Some(&to_track)) = (
                thread_tracks.get(&(f.from.0, f.from.1)),
                thread_tracks.get(&(f.to.0, f.to.1)),
            ) else {
                continue;
            };
            self.b.pending_flows.push(PendingFlow {
                from_track,
                from_ns: f.from.2,
                to_track,
                to_ns: f.to.2,
                to_enclosing: f.to_enclosing,
                kind: f.kind,
            });
        }
    }

    fn fill_devices(&mut self) {
        let mut used: Vec<u32> = self
            .b
            .tracks()
            .iter()
            .filter_map(|t| match t.key {
                TrackKey::Gpu { device, .. } => Some(device),
                _ => None,
            })
            .collect();
        used.sort_unstable();
        used.dedup();
        for id in used {
            if self.b.devices.iter().any(|d| d.id == id) {
                continue;
            }
            let label = self
                .process_label_of_device(id)
                .unwrap_or_else(|| format!("GPU {id}"));
            self.b.devices.push(Device {
                id,
                name: label,
                ..Device::default()
            });
        }
    }

    fn process_label_of_device(&self, id: u32) -> Option<String> {
        let pid = TraceId::Int(i64::from(id));
        self.b
            .process_names
            .iter()
            .find(|(p, n)| *p == pid && n.starts_with("GPU"))
            .map(|(_, n)| n.clone())
    }

    fn report_counts(&mut self) {
        if self.lenient_tokens > 0 {
            self.b.warn(
                "lenient_tokens",
                self.lenient_tokens,
                "invalid JSON tokens (N/A, NaN, Infinity) were read as null",
            );
        }
        if self.control_strings > 0 {
            self.b.warn(
                "control_characters",
                self.control_strings,
                "strings with raw control characters (invalid JSON) were kept as they are",
            );
        }
        if self.repaired_strings > 0 {
            self.b.warn(
                "invalid_utf8",
                self.repaired_strings,
                "strings with invalid UTF-8 were repaired (bad bytes shown as �)",
            );
        }
        let is_kineto = self.is_kineto;
        let mut unknown: Vec<_> = std::mem::take(&mut self.unknown_categories)
            .into_iter()
            .collect();
        unknown.sort();
        if is_kineto {
            for (cat, n) in unknown {
                self.b.warn(
                    &format!("unknown_category:{cat}"),
                    n,
                    format!("events of unknown category {cat:?} are shown as plain slices"),
                );
            }
        }
        let mut ignored: Vec<_> = std::mem::take(&mut self.ignored_phases)
            .into_iter()
            .collect();
        ignored.sort_unstable();
        for (ph, n) in ignored {
            let what = match ph {
                b'N' | b'O' | b'D' => "object events",
                b'P' => "sample events",
                b'S' | b'T' | b'p' | b'F' => "legacy async events",
                b'c' | b'(' | b')' | b'V' | b'v' => "clock-sync, context and memory-dump events",
                _ => "events of an unknown phase",
            };
            self.b.warn(
                &format!("ignored_phase:{}", char::from(ph)),
                n,
                format!("{what} (ph {:?}) are not shown", char::from(ph)),
            );
        }
    }

    fn describe_tool(&mut self) {
        if self.is_kineto {
            self.b.source.tool = "PyTorch profiler (Kineto)".to_string();
            let detail = |k: &str| {
                self.b
                    .source
                    .details
                    .iter()
                    .find(|(key, _)| key == k)
                    .map(|(_, v)| v.clone())
            };
            let mut parts = Vec::new();
            if let Some(v) = detail("cuda_runtime_version") {
                parts.push(format!("CUDA runtime {v}"));
            }
            if let Some(v) = detail("cupti_version") {
                parts.push(format!("CUPTI {v}"));
            }
            if !parts.is_empty() {
                self.b.source.tool_version = Some(parts.join(", "));
            }
        } else if self.b.source.tool == "Chrome trace" {
            let has_gpu = self.b.tracks().iter().any(|t| t.key.is_gpu());
            if has_gpu {
                self.b.source.tool = "Chrome trace (GPU events)".to_string();
            }
        }
    }
}

/// The args of a `B` and its `E` merged into one object (the end's keys win).
fn merge_args(begin: Option<&[u8]>, end: Option<&[u8]>) -> Option<Vec<u8>> {
    match (begin, end) {
        (Some(b), Some(e)) if b.len() >= 2 && e.len() >= 2 => {
            let mut m = b[..b.len() - 1].to_vec();
            m.push(b',');
            m.extend_from_slice(&e[1..]);
            Some(m)
        }
        (Some(b), _) => Some(b.to_vec()),
        (None, e) => e.map(<[u8]>::to_vec),
    }
}

/// Why [`tokenize`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// The data ended between elements.
    End,
    /// The element starting here runs past the end of the data.
    Incomplete(usize),
    /// Strict mode: the element starting here is not a valid event.
    Error(usize),
    /// The `]` closing the event array is here.
    ArrayEnd(usize),
}

/// A problem with one element, reported in lenient mode.
enum TokenIssue {
    /// Broken JSON inside a complete element, at this offset.
    Syntax(usize, &'static str),
    /// An element that is not an object.
    NotObject,
}

/// Walks the elements of (part of) the event array, calling `on` for each. In strict mode
/// (speculative tokenizing on the reader thread) it stops at the first problem; in lenient mode
/// it skips broken elements and reports them.
fn tokenize<'a>(
    data: &'a [u8],
    strict: bool,
    mut on: impl FnMut(Result<RawEvent<'a>, TokenIssue>, &Parser<'a>),
) -> Stop {
    let mut p = Parser::new(data);
    loop {
        p.skip_separators();
        let Some(b) = p.peek() else { return Stop::End };
        let start = p.offset();
        match b {
            b'{' => match parse_event(&mut p) {
                Ok(ev) => on(Ok(ev), &p),
                Err(e) => match json::ValueScanner::default().feed(data, start) {
                    None => return Stop::Incomplete(start),
                    Some(_) if strict => return Stop::Error(start),
                    Some(end) => {
                        on(Err(TokenIssue::Syntax(e.offset, e.detail)), &p);
                        p.seek(end);
                    }
                },
            },
            b']' => return Stop::ArrayEnd(start),
            _ if strict => return Stop::Error(start),
            _ => match p.skip_value() {
                Ok(()) => on(Err(TokenIssue::NotObject), &p),
                Err(e) if e.offset >= data.len() => return Stop::Incomplete(start),
                Err(e) => {
                    on(Err(TokenIssue::Syntax(e.offset, e.detail)), &p);
                    p.seek(start + 1);
                }
            },
        }
    }
}

fn count_lines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// Text of an event field inside a block, or an unescaped copy.
#[derive(Clone, Copy, Debug)]
enum TextRef {
    Slice(u32, u32),
    Owned(u32),
}

/// A pid/tid/id inside a block.
#[derive(Clone, Copy, Debug)]
enum IdRef {
    Int(i64),
    Text(TextRef),
}

/// A [`RawEvent`] made on the reader thread, as offsets into its block (so it can cross
/// threads without copying strings).
#[derive(Debug)]
struct PreEvent {
    ph: u8,
    scope: u8,
    flow_in: bool,
    flow_out: bool,
    bp_enclosing: bool,
    keys: u32,
    bad_field: Option<&'static str>,
    name: Option<TextRef>,
    cat: Option<TextRef>,
    ts: Option<TextRef>,
    dur: Option<TextRef>,
    pid: Option<IdRef>,
    tid: Option<IdRef>,
    id: Option<IdRef>,
    bind_id: Option<IdRef>,
    args: Option<TextRef>,
}

/// A block tokenized on the reader thread.
#[derive(Debug)]
struct PreBlock {
    events: Vec<PreEvent>,
    /// Unescaped strings referred to by [`TextRef::Owned`].
    owned: Vec<String>,
    /// Where tokenizing stopped; the consumer parses the rest itself.
    stop_at: usize,
    lenient_tokens: u64,
    repaired_strings: u64,
    control_strings: u64,
}

/// Tokenizes a block on the reader thread (strict: stops at the first problem).
fn pre_tokenize(bytes: &[u8]) -> PreBlock {
    let mut block = PreBlock {
        events: Vec::with_capacity(bytes.len() / 256),
        owned: Vec::new(),
        stop_at: 0,
        lenient_tokens: 0,
        repaired_strings: 0,
        control_strings: 0,
    };
    if u32::try_from(bytes.len()).is_err() {
        return block;
    }
    let stop = tokenize(bytes, true, |ev, p| {
        if let Ok(ev) = ev {
            let e = PreEvent::from_raw(&ev, bytes, &mut block.owned);
            block.events.push(e);
        }
        block.lenient_tokens = p.lenient_tokens;
        block.repaired_strings = p.repaired_strings;
        block.control_strings = p.control_strings;
    });
    block.stop_at = match stop {
        Stop::End => bytes.len(),
        Stop::Incomplete(at) | Stop::Error(at) | Stop::ArrayEnd(at) => at,
    };
    block
}

impl PreEvent {
    fn from_raw(ev: &RawEvent<'_>, data: &[u8], owned: &mut Vec<String>) -> Self {
        let base = data.as_ptr() as usize;
        let slice = |s: &[u8]| -> Option<TextRef> {
            let start = (s.as_ptr() as usize).checked_sub(base)?;
            let end = start + s.len();
            (end <= data.len()).then(|| {
                TextRef::Slice(
                    u32::try_from(start).unwrap_or(0),
                    u32::try_from(end).unwrap_or(0),
                )
            })
        };
        let mut text = |c: &Cow<'_, str>| -> TextRef {
            match c {
                Cow::Borrowed(s) => slice(s.as_bytes()),
                Cow::Owned(_) => None,
            }
            .unwrap_or_else(|| {
                owned.push(c.to_string());
                TextRef::Owned(u32::try_from(owned.len() - 1).unwrap_or(0))
            })
        };
        let name = ev.name.as_ref().map(&mut text);
        let cat = ev.cat.as_ref().map(&mut text);
        let mut id = |r: &RawId<'_>| -> IdRef {
            match r {
                RawId::Int(v) => IdRef::Int(*v),
                RawId::Str(c) => IdRef::Text(text(c)),
            }
        };
        let pid = ev.pid.as_ref().map(&mut id);
        let tid = ev.tid.as_ref().map(&mut id);
        let eid = ev.id.as_ref().map(&mut id);
        let bind_id = ev.bind_id.as_ref().map(&mut id);
        Self {
            ph: ev.ph,
            scope: ev.scope,
            flow_in: ev.flow_in,
            flow_out: ev.flow_out,
            bp_enclosing: ev.bp_enclosing,
            keys: ev.keys,
            bad_field: ev.bad_field,
            name,
            cat,
            ts: ev.ts.and_then(slice),
            dur: ev.dur.and_then(slice),
            pid,
            tid,
            id: eid,
            bind_id,
            args: ev.args.and_then(slice),
        }
    }

    fn to_raw<'a>(&self, bytes: &'a [u8], owned: &'a [String]) -> RawEvent<'a> {
        let raw = |t: TextRef| -> &'a [u8] {
            match t {
                TextRef::Slice(a, b) => bytes.get(a as usize..b as usize).unwrap_or(&[]),
                TextRef::Owned(i) => owned.get(i as usize).map_or(&[][..], |s| s.as_bytes()),
            }
        };
        let text = |t: TextRef| -> Cow<'a, str> {
            match std::str::from_utf8(raw(t)) {
                Ok(s) => Cow::Borrowed(s),
                Err(_) => Cow::Owned(String::from_utf8_lossy(raw(t)).into_owned()),
            }
        };
        let id = |r: IdRef| -> RawId<'a> {
            match r {
                IdRef::Int(v) => RawId::Int(v),
                IdRef::Text(t) => RawId::Str(text(t)),
            }
        };
        RawEvent {
            ph: self.ph,
            name: self.name.map(text),
            cat: self.cat.map(text),
            ts: self.ts.map(raw),
            dur: self.dur.map(raw),
            pid: self.pid.map(id),
            tid: self.tid.map(id),
            id: self.id.map(id),
            bind_id: self.bind_id.map(id),
            flow_in: self.flow_in,
            flow_out: self.flow_out,
            bp_enclosing: self.bp_enclosing,
            scope: self.scope,
            args: self.args.map(raw),
            bad_field: self.bad_field,
            keys: self.keys,
        }
    }
}

/// Parses the fields of one event object.
fn parse_event<'a>(p: &mut Parser<'a>) -> Result<RawEvent<'a>, SyntaxError> {
    let mut ev = RawEvent::default();
    p.object(|p, key| {
        ev.keys += 1;
        match key {
            b"ph" => match p.value()? {
                Value::Str(s) => ev.ph = s.as_bytes().first().copied().unwrap_or(0),
                Value::Null => {}
                _ => ev.bad_field = Some("ph"),
            },
            b"name" => match p.value()? {
                Value::Str(s) => ev.name = Some(s),
                Value::Num(n) => {
                    ev.name = Some(Cow::Owned(String::from_utf8_lossy(n).into_owned()));
                }
                Value::Null => {}
                _ => ev.bad_field = Some("name"),
            },
            b"cat" => match p.value()? {
                Value::Str(s) => ev.cat = Some(s),
                Value::Null => {}
                _ => ev.bad_field = Some("cat"),
            },
            b"ts" => ev.ts = number_text(p, &mut ev.bad_field, "ts")?,
            b"dur" => ev.dur = number_text(p, &mut ev.bad_field, "dur")?,
            b"pid" => ev.pid = raw_id(p, &mut ev.bad_field, "pid")?,
            b"tid" => ev.tid = raw_id(p, &mut ev.bad_field, "tid")?,
            b"id" => ev.id = raw_id(p, &mut ev.bad_field, "id")?,
            b"id2" => {
                p.object(|p, k| {
                    if k == b"local" || k == b"global" {
                        ev.id = raw_id(p, &mut ev.bad_field, "id2")?;
                        Ok(())
                    } else {
                        p.skip_value()
                    }
                })?;
            }
            b"bind_id" => ev.bind_id = raw_id(p, &mut ev.bad_field, "bind_id")?,
            b"flow_in" => ev.flow_in = matches!(p.value()?, Value::Bool(true)),
            b"flow_out" => ev.flow_out = matches!(p.value()?, Value::Bool(true)),
            b"bp" => ev.bp_enclosing = matches!(p.value()?, Value::Str(s) if s == "e"),
            b"s" => {
                if let Value::Str(s) = p.value()? {
                    ev.scope = s.as_bytes().first().copied().unwrap_or(b't');
                }
            }
            b"args" => {
                if let Value::Object(text) = p.value()? {
                    ev.args = Some(text);
                }
            }
            _ => p.skip_value()?,
        }
        Ok(())
    })?;
    Ok(ev)
}

fn number_text<'a>(
    p: &mut Parser<'a>,
    bad: &mut Option<&'static str>,
    field: &'static str,
) -> Result<Option<&'a [u8]>, SyntaxError> {
    Ok(match p.value()? {
        Value::Num(n) => Some(n),
        Value::Str(Cow::Borrowed(s)) => Some(s.trim().as_bytes()),
        Value::Str(Cow::Owned(_)) | Value::Bool(_) | Value::Object(_) | Value::Array(_) => {
            *bad = Some(field);
            None
        }
        Value::Null => None,
    })
}

fn raw_id<'a>(
    p: &mut Parser<'a>,
    bad: &mut Option<&'static str>,
    field: &'static str,
) -> Result<Option<RawId<'a>>, SyntaxError> {
    Ok(match p.value()? {
        Value::Num(n) => match json::int_from_text(n) {
            Some(v) => Some(RawId::Int(v)),
            None => Some(RawId::Str(Cow::Owned(
                String::from_utf8_lossy(n).into_owned(),
            ))),
        },
        Value::Str(s) => Some(RawId::Str(s)),
        Value::Null => None,
        Value::Bool(_) | Value::Object(_) | Value::Array(_) => {
            *bad = Some(field);
            None
        }
    })
}

/// Reads the arguments kept for GPU events and API calls.
fn parse_gpu_args(args: &[u8], lenient_tokens: &mut u64) -> GpuArgs {
    let mut a = GpuArgs::default();
    let mut p = Parser::new(args);
    let int = |v: &Value<'_>| -> Option<i64> {
        match v {
            Value::Num(n) => {
                json::int_from_text(n).or_else(|| json::float_from_text(n).map(|f| f as i64))
            }
            Value::Str(s) => {
                let t = s.trim();
                t.strip_prefix("0x")
                    .map_or_else(|| t.parse().ok(), |h| i64::from_str_radix(h, 16).ok())
            }
            _ => None,
        }
    };
    let float = |v: &Value<'_>| -> Option<f64> {
        match v {
            Value::Num(n) => json::float_from_text(n),
            Value::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
    };
    let _ = p.object(|p, key| {
        let v = p.value()?;
        match key {
            b"device" | b"Device" => a.device = int(&v),
            b"context" => a.context = int(&v),
            b"stream" => a.stream = int(&v),
            b"correlation" => a.correlation = int(&v),
            b"External id" | b"external id" => a.external_id = int(&v),
            b"cbid" => a.cbid = int(&v),
            b"registers per thread" => a.registers = int(&v),
            b"shared memory" => a.shared_memory = int(&v),
            b"blocks per SM" => a.blocks_per_sm = float(&v),
            b"warps per SM" => a.warps_per_sm = float(&v),
            b"est. achieved occupancy %" => a.occupancy = float(&v),
            b"bytes" => a.bytes = int(&v),
            b"grid" => a.grid = dims(&v),
            b"block" => a.block = dims(&v),
            b"static shared memory" => a.static_shared = int(&v),
            b"dynamic shared memory" => a.dynamic_shared = int(&v),
            k => {
                let Value::Str(s) = &v else { return Ok(()) };
                match k {
                    b"copy kind" => a.copy_kind = copy_kind_from_text(s),
                    b"src memory" => a.src_memory = Some(MemoryKind::from_word(s)),
                    b"dst memory" => a.dst_memory = Some(MemoryKind::from_word(s)),
                    b"mangled name" => a.mangled_name = Some(s.to_string()),
                    k if k == LANE_ARG.as_bytes() => a.lane = lane_from_text(s),
                    _ => {}
                }
            }
        }
        Ok(())
    });
    *lenient_tokens += p.lenient_tokens;
    a
}

fn dims(v: &Value<'_>) -> Option<[u32; 3]> {
    let Value::Array(text) = v else { return None };
    let mut out = [1u32; 3];
    let mut n = 0;
    let mut p = Parser::new(text);
    p.array(|p| {
        let v = p.value()?;
        if let Value::Num(t) = v
            && n < 3
        {
            out[n] = json::int_from_text(t)
                .and_then(|x| u32::try_from(x).ok())
                .unwrap_or(0);
        }
        n += 1;
        Ok(())
    })
    .ok()?;
    (n > 0).then_some(out)
}

/// `Memcpy HtoD (Pageable -> Device)` → (HtoD, Pageable, Device). ROCm writes
/// `Memcpy HtoD (Host -> Device)`.
fn parse_memcpy_name(name: &str) -> (CopyKind, Option<MemoryKind>, Option<MemoryKind>) {
    let rest = name.strip_prefix("Memcpy ").unwrap_or(name);
    let kind_word = rest.split_whitespace().next().unwrap_or("");
    let kind = CopyKind::from_short(kind_word).unwrap_or(CopyKind::Unknown);
    let (src, dst) = match (rest.find('('), rest.rfind(')')) {
        (Some(a), Some(b)) if a < b => {
            let inner = &rest[a + 1..b];
            match inner.split_once("->") {
                Some((s, d)) => (
                    Some(MemoryKind::from_word(s)),
                    Some(MemoryKind::from_word(d)),
                ),
                None => (None, None),
            }
        }
        _ => (None, None),
    };
    (kind, src, dst)
}

/// `Memset (Device)` → Device.
fn parse_memset_kind(name: &str) -> Option<MemoryKind> {
    let a = name.find('(')?;
    let b = name.rfind(')')?;
    (a < b).then(|| MemoryKind::from_word(&name[a + 1..b]))
}

/// Parses Kineto's `deviceProperties` array.
fn parse_device_properties(p: &mut Parser<'_>) -> Option<Vec<Device>> {
    let mut devices = Vec::new();
    p.array(|p| {
        let mut d = Device::default();
        let mut major = None;
        let mut minor = None;
        p.object(|p, k| {
            let key = String::from_utf8_lossy(k).into_owned();
            let v = p.value()?;
            let text = match &v {
                Value::Num(n) => String::from_utf8_lossy(n).into_owned(),
                Value::Str(s) => s.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return Ok(()),
            };
            let int = json::int_from_text(text.as_bytes());
            match key.as_str() {
                "id" => d.id = int.and_then(|v| u32::try_from(v).ok()).unwrap_or(0),
                "name" => d.name = text,
                "totalGlobalMem" => d.memory_bytes = int.and_then(|v| u64::try_from(v).ok()),
                "computeMajor" | "major" => major = int.and_then(|v| u32::try_from(v).ok()),
                "computeMinor" | "minor" => minor = int.and_then(|v| u32::try_from(v).ok()),
                "numSms" => {
                    d.sm_count = int.and_then(|v| u32::try_from(v).ok());
                    d.properties.push((key, text));
                }
                // Written by warpscope's exporter.
                "memoryBandwidthBytesPerSecond" => {
                    d.memory_bandwidth_bytes_per_s = int.and_then(|v| u64::try_from(v).ok());
                }
                _ => d.properties.push((key, text)),
            }
            Ok(())
        })?;
        if let (Some(a), Some(b)) = (major, minor) {
            d.compute_capability = Some((a, b));
        }
        devices.push(d);
        Ok(())
    })
    .ok()?;
    Some(devices)
}

/// What a trace written by warpscope's exporter says about the profile it came from: its
/// top-level `"warpscope"` object (see `crate::export::chrome` for the layout).
#[derive(Debug, Default)]
struct Carried {
    path: Option<String>,
    format: Option<String>,
    tool: Option<String>,
    tool_version: Option<String>,
    schema_version: Option<String>,
    details: Vec<(String, String)>,
    /// Time zero of the original profile; event times in the file are relative to it.
    origin: Option<TimeOrigin>,
    labels: Vec<(String, String)>,
    warnings: Vec<Warning>,
    /// Track names and sort indices by key.
    tracks: Vec<(TrackKey, String, Option<i64>)>,
}

/// Text of a string or number value; `None` for null and anything else.
fn text_of(v: &Value<'_>) -> Option<String> {
    match v {
        Value::Str(s) => Some(s.to_string()),
        Value::Num(n) => Some(String::from_utf8_lossy(n).into_owned()),
        _ => None,
    }
}

fn int_of(v: &Value<'_>) -> Option<i64> {
    match v {
        Value::Num(n) => json::int_from_text(n),
        _ => None,
    }
}

/// `[["key", "value"], ...]`.
fn string_pairs(text: &[u8]) -> Result<Vec<(String, String)>, SyntaxError> {
    let mut out = Vec::new();
    Parser::new(text).array(|p| {
        if let Value::Array(pair) = p.value()? {
            let mut items = Vec::new();
            Parser::new(pair).array(|p| {
                items.extend(text_of(&p.value()?));
                Ok(())
            })?;
            if let Ok([k, v]) = <[String; 2]>::try_from(items) {
                out.push((k, v));
            }
        }
        Ok(())
    })?;
    Ok(out)
}

/// Reads the top-level `"warpscope"` object; `None` if it is not an object.
fn parse_carried(value: &[u8], b: &mut ProfileBuilder) -> Option<Carried> {
    let mut c = Carried::default();
    let mut p = Parser::new(value);
    p.object(|p, key| {
        match (key, p.value()?) {
            (b"source", Value::Object(text)) => Parser::new(text).object(|p, k| {
                let v = p.value()?;
                match k {
                    b"path" => c.path = text_of(&v),
                    b"format" => c.format = text_of(&v),
                    b"tool" => c.tool = text_of(&v),
                    b"tool_version" => c.tool_version = text_of(&v),
                    b"schema_version" => c.schema_version = text_of(&v),
                    b"details" => {
                        if let Value::Array(t) = v {
                            c.details = string_pairs(t)?;
                        }
                    }
                    _ => {}
                }
                Ok(())
            })?,
            (b"origin", Value::Object(text)) => {
                let mut origin = TimeOrigin::default();
                let mut raw = None;
                Parser::new(text).object(|p, k| {
                    let v = p.value()?;
                    match k {
                        b"raw_ns" => raw = int_of(&v),
                        b"unix_ns" => origin.unix_ns = int_of(&v),
                        _ => {}
                    }
                    Ok(())
                })?;
                c.origin = raw.map(|raw_ns| TimeOrigin { raw_ns, ..origin });
            }
            (b"labels", Value::Array(text)) => c.labels = string_pairs(text)?,
            (b"warnings", Value::Array(text)) => Parser::new(text).array(|p| {
                let Value::Object(w) = p.value()? else {
                    return Ok(());
                };
                let (mut code, mut message, mut count) = (None, None, None);
                Parser::new(w).object(|p, k| {
                    let v = p.value()?;
                    match k {
                        b"code" => code = text_of(&v),
                        b"message" => message = text_of(&v),
                        b"count" => count = int_of(&v).and_then(|n| u64::try_from(n).ok()),
                        _ => {}
                    }
                    Ok(())
                })?;
                if let Some(code) = code {
                    c.warnings.push(Warning {
                        code,
                        message: message.unwrap_or_default(),
                        count: count.unwrap_or(1),
                    });
                }
                Ok(())
            })?,
            (b"tracks", Value::Array(text)) => Parser::new(text).array(|p| {
                let Value::Object(t) = p.value()? else {
                    return Ok(());
                };
                if let Some(track) = parse_carried_track(t, b)? {
                    c.tracks.push(track);
                }
                Ok(())
            })?,
            _ => {}
        }
        Ok(())
    })
    .ok()?;
    Some(c)
}

/// `{"device", "context", "stream", "lane"}` of a GPU track in the `tracks` list.
fn parse_carried_gpu_key(text: &[u8]) -> Result<Option<TrackKey>, SyntaxError> {
    let (mut device, mut context, mut stream, mut lane) = (None, None, None, None);
    Parser::new(text).object(|p, k| {
        let v = p.value()?;
        let int = int_of(&v);
        match k {
            b"device" => device = int.and_then(|n| u32::try_from(n).ok()),
            b"context" => context = int.and_then(|n| u32::try_from(n).ok()),
            b"stream" => stream = int.and_then(|n| u64::try_from(n).ok()),
            b"lane" => lane = text_of(&v).and_then(|t| lane_from_text(&t)).flatten(),
            _ => {}
        }
        Ok(())
    })?;
    Ok(match (device, context, stream, lane) {
        (Some(device), Some(context), Some(stream), Some(lane)) => Some(TrackKey::Gpu {
            device,
            context,
            stream,
            lane,
        }),
        _ => None,
    })
}

/// One entry of the `tracks` list: `{"gpu": {"device", "context", "stream", "lane"}, "name",
/// "sort_index"}` or `{"pid", "tid", "name", "sort_index"}`.
fn parse_carried_track(
    text: &[u8],
    b: &mut ProfileBuilder,
) -> Result<Option<(TrackKey, String, Option<i64>)>, SyntaxError> {
    let mut gpu = None;
    let (mut pid, mut tid, mut name, mut sort_index) = (None, None, None, None);
    let mut id = |v: &Value<'_>| -> Option<TraceId> {
        match v {
            Value::Num(n) => json::int_from_text(n).map(TraceId::Int),
            Value::Str(s) => Some(match s.trim().parse::<i64>() {
                Ok(v) => TraceId::Int(v),
                Err(_) => TraceId::Name(b.intern(s)),
            }),
            _ => None,
        }
    };
    Parser::new(text).object(|p, k| {
        let v = p.value()?;
        match (k, &v) {
            (b"gpu", Value::Object(g)) => gpu = parse_carried_gpu_key(g)?,
            (b"pid", v) => pid = id(v),
            (b"tid", v) => tid = id(v),
            (b"name", v) => name = text_of(v),
            (b"sort_index", v) => sort_index = int_of(v),
            _ => {}
        }
        Ok(())
    })?;
    let key = match (gpu, pid, tid) {
        (Some(key), _, _) => key,
        (None, Some(pid), Some(tid)) => TrackKey::Thread { pid, tid },
        _ => return Ok(None),
    };
    Ok(name.map(|n| (key, n, sort_index)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memcpy_names() {
        assert_eq!(
            parse_memcpy_name("Memcpy HtoD (Pageable -> Device)"),
            (
                CopyKind::HtoD,
                Some(MemoryKind::Pageable),
                Some(MemoryKind::Device)
            )
        );
        assert_eq!(
            parse_memcpy_name("Memcpy DtoD (Device -> Device)").0,
            CopyKind::DtoD
        );
        assert_eq!(
            parse_memcpy_name("Memcpy HtoD (Host -> Device)").1,
            Some(MemoryKind::Host)
        );
        assert_eq!(parse_memcpy_name("weird").0, CopyKind::Unknown);
        assert_eq!(
            parse_memset_kind("Memset (Device)"),
            Some(MemoryKind::Device)
        );
    }

    #[test]
    fn what_warpscope_writes_maps_back() {
        assert_eq!(category_kind("nvtx"), EventKind::Nvtx);
        assert_eq!(category_kind("unified_memory"), EventKind::UnifiedMemory);
        assert_eq!(category_kind("cpu_instant_event"), EventKind::Instant);
        assert_eq!(category_kind(""), EventKind::Slice);
        assert_eq!(
            gpu_lane(EventKind::UnifiedMemory),
            Some(GpuLane::UnifiedMemory)
        );
        for lane in [
            Some(GpuLane::Work),
            Some(GpuLane::Annotations),
            Some(GpuLane::UnifiedMemory),
            None,
        ] {
            assert_eq!(lane_from_text(lane_text(lane)), Some(lane));
        }
        for kind in (0..=14).map(CopyKind::from_cupti).chain([CopyKind::Memset]) {
            assert_eq!(copy_kind_from_text(kind.as_str()), Some(kind));
        }
        let a = parse_gpu_args(
            br#"{"copy kind": "Unified DtoH", "src memory": "Device Static",
                 "static shared memory": 16, "mangled name": "_Z1kv", "warpscope lane": "cpu"}"#,
            &mut 0,
        );
        assert_eq!(a.copy_kind, Some(CopyKind::UnifiedDtoH));
        assert_eq!(a.src_memory, Some(MemoryKind::DeviceStatic));
        assert_eq!(a.dst_memory, None);
        assert_eq!(a.static_shared, Some(16));
        assert_eq!(a.mangled_name.as_deref(), Some("_Z1kv"));
        assert_eq!(a.lane, Some(None));
    }

    #[test]
    fn the_warpscope_object_is_read() {
        let mut b = ProfileBuilder::new("x.json".into(), Format::ChromeJson);
        let c = parse_carried(
            br#"{"version": 1, "future key": [1, {"x": 2}],
                "source": {"path": "/r/a.live", "format": "live", "tool": "warpscope live",
                           "tool_version": null, "schema_version": "3",
                           "details": [["k", "v"], ["bad"], ["k2", "v \"2\""]]},
                "origin": {"raw_ns": -5, "unix_ns": null},
                "labels": [["batch", "32"]],
                "warnings": [{"code": "c", "message": "m", "count": 3}],
                "tracks": [{"gpu": {"device": 1, "context": 2, "stream": 3, "lane": "annotations"},
                            "name": "s3", "sort_index": null},
                           {"pid": 7, "tid": "CUDA API", "name": "api", "sort_index": 4},
                           {"pid": 7, "name": "no tid"}]}"#,
            &mut b,
        )
        .unwrap();
        assert_eq!(c.tool.as_deref(), Some("warpscope live"));
        assert_eq!(c.tool_version, None);
        assert_eq!(c.schema_version.as_deref(), Some("3"));
        assert_eq!(c.format.as_deref(), Some("live"));
        assert_eq!(c.details.len(), 2);
        assert_eq!(c.details[1].1, "v \"2\"");
        assert_eq!(
            c.origin,
            Some(TimeOrigin {
                raw_ns: -5,
                unix_ns: None
            })
        );
        assert_eq!(c.labels, vec![("batch".to_string(), "32".to_string())]);
        assert_eq!(c.warnings[0].count, 3);
        assert_eq!(c.tracks.len(), 2);
        assert_eq!(
            c.tracks[0].0,
            TrackKey::Gpu {
                device: 1,
                context: 2,
                stream: 3,
                lane: GpuLane::Annotations
            }
        );
        let api = b.intern("CUDA API");
        assert_eq!(
            c.tracks[1],
            (
                TrackKey::Thread {
                    pid: TraceId::Int(7),
                    tid: TraceId::Name(api)
                },
                "api".to_string(),
                Some(4)
            )
        );
        assert!(parse_carried(b"[1, 2]", &mut b).is_none());
    }

    #[test]
    fn categories_are_case_insensitive_with_legacy_names() {
        assert_eq!(classify("Kernel"), Class::Kind(EventKind::Kernel));
        assert_eq!(classify("kernel"), Class::Kind(EventKind::Kernel));
        assert_eq!(classify("Runtime"), Class::Kind(EventKind::Runtime));
        assert_eq!(classify("Operator"), Class::Kind(EventKind::CpuOp));
        assert_eq!(classify("async_cpu_to_gpu"), Class::LaunchFlow);
        assert_eq!(classify("foo,kernel"), Class::Kind(EventKind::Kernel));
        assert_eq!(classify("never_seen"), Class::Unknown);
    }
}
