//! The Chrome JSON that AMD's older tools write, read with its own rules rather than as a
//! generic trace, because the lanes are told apart by process name and the exact times are not
//! in `ts`/`dur`:
//!
//! - rocprof v1 `results.json` (`--hip-trace`, `--hsa-trace`, `--sys-trace`): `pid`, `tid`,
//!   `ts`, `dur` are strings of truncated µs, the nanoseconds are in `args.BeginNs` /
//!   `args.EndNs`; processes named `CPU HIP API` / `CPU HSA API` (calls), `COPY` (copies) and
//!   `GPU<n>` (kernels, device in `args.dev-id`); `DataFlow` `s`/`t` flows link calls to work;
//!   `otherData` is `rocminfo` flattened (`Agent5.Name` = `gfx942`).
//! - rocmProfileData's `rpd2tracing.py`: a bare array whose first element is `{}`; strings
//!   everywhere; `ts`/`dur` are whole µs truncated from the database's ns (the only times it
//!   has); the op type in `args.desc` (`KernelExecution`, `CopyHostToDevice`, `FillBuffer`);
//!   `api_op` `s`/`f` flows; `C` counters.
//!
//! The file is read whole into memory (these files are small next to Kineto traces).

use std::io::Read;
use std::path::Path;

use rustc_hash::FxHashMap;

use crate::builder::{PendingFlow, ProfileBuilder, TrackId};
use crate::import::ImportError;
use crate::import::json::{Parser, SyntaxError, Value};
use crate::model::{
    ApiInfo, CopyInfo, CopyKind, CounterTrack, Device, EventKind, FlowKind, KernelInfo, TraceId,
    TrackKey,
};

use super::kernels_v1::{kernel_name, queue_track};
use super::v3::copy_track;

/// One event's members that matter here.
#[derive(Default)]
struct Raw<'a> {
    ph: String,
    name: String,
    cat: String,
    pid: String,
    tid: String,
    ts: Option<Vec<u8>>,
    dur: Option<Vec<u8>>,
    id: String,
    bp: String,
    args: Option<&'a [u8]>,
}

/// What an X event's process is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lane {
    Calls(EventKind),
    Copies,
    Kernels,
    Other,
}

/// A flow point: (pid, tid) of its lane, time on the file clock in ns, `bp` `e`.
struct Point {
    lane: (String, String),
    ts_ns: i64,
    enclosing: bool,
}

/// A copy held back until the flows say which call launched it (and so its size).
struct PendingCopy {
    track: TrackId,
    start_ns: i64,
    dur_ns: i64,
    name: crate::strings::StrId,
    event: EventKind,
    kind: CopyKind,
    bytes: Option<u64>,
}

struct Reader {
    rpd: bool,
    /// `thread_name` M events: (pid, tid) → name.
    thread_names: FxHashMap<(String, String), String>,
    copies: Vec<PendingCopy>,
    /// Calls whose arguments name a size: (track, start, end, bytes).
    call_bytes: Vec<(TrackId, i64, i64, u64)>,
    process_names: FxHashMap<String, String>,
    /// (pid, tid) of each X event's lane → the track its events went to.
    lanes: FxHashMap<(String, String), TrackId>,
    starts: FxHashMap<String, Point>,
    ends: FxHashMap<String, Point>,
    counters: FxHashMap<(String, String), Vec<(i64, f64)>>,
    other_data: Vec<(String, String)>,
    events: u64,
    skipped: u64,
    unknown_lane: u64,
}

fn text_of(v: &Value<'_>) -> Option<String> {
    match v {
        Value::Str(s) => Some(s.to_string()),
        Value::Num(n) => Some(String::from_utf8_lossy(n).into_owned()),
        _ => None,
    }
}

fn bytes_of(v: &Value<'_>) -> Option<Vec<u8>> {
    match v {
        Value::Str(s) => Some(s.trim().as_bytes().to_vec()),
        Value::Num(n) => Some(n.to_vec()),
        _ => None,
    }
}

/// µs as written (`"622109046136"`, `8306017479780`, `12.5`) in ns.
fn us_to_ns(text: &[u8]) -> Option<i64> {
    crate::time::parse_decimal_scaled(text, 3)
}

fn parse_raw<'a>(text: &'a [u8]) -> Result<Raw<'a>, SyntaxError> {
    let mut raw = Raw::default();
    let mut p = Parser::new(text);
    p.object(|p, key| {
        let v = p.value()?;
        match key {
            b"ph" => raw.ph = text_of(&v).unwrap_or_default(),
            b"name" => raw.name = text_of(&v).unwrap_or_default(),
            b"cat" => raw.cat = text_of(&v).unwrap_or_default(),
            b"pid" => raw.pid = text_of(&v).unwrap_or_default(),
            b"tid" => raw.tid = text_of(&v).unwrap_or_default(),
            b"ts" => raw.ts = bytes_of(&v),
            b"dur" => raw.dur = bytes_of(&v),
            b"id" => raw.id = text_of(&v).unwrap_or_default(),
            b"bp" => raw.bp = text_of(&v).unwrap_or_default(),
            b"args" => {
                if let Value::Object(o) = v {
                    raw.args = Some(o);
                }
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(raw)
}

/// The members of an args object as text (numbers as written), skipping nested values.
fn args_of(args: Option<&[u8]>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(text) = args {
        let mut p = Parser::new(text);
        let _ = p.object(|p, k| {
            let v = p.value()?;
            if let Some(t) = text_of(&v) {
                out.push((String::from_utf8_lossy(k).into_owned(), t));
            }
            Ok(())
        });
    }
    out
}

fn arg<'a>(args: &'a [(String, String)], key: &str) -> Option<&'a str> {
    args.iter().find(|(k, _)| k == key).map(|(_, v)| v.trim())
}

fn arg_int(args: &[(String, String)], key: &str) -> Option<i64> {
    super::table::parse_int(arg(args, key)?)
}

/// `CopyHostToDevice` → HtoD (`FillBuffer` is a set).
fn copy_kind(op: &str) -> Option<CopyKind> {
    Some(match op {
        "CopyHostToDevice" => CopyKind::HtoD,
        "CopyDeviceToHost" => CopyKind::DtoH,
        "CopyDeviceToDevice" => CopyKind::DtoD,
        "CopyHostToHost" => CopyKind::HtoH,
        "CopyPeerToPeer" | "CopyDeviceToPeer" => CopyKind::PtoP,
        "FillBuffer" => CopyKind::Memset,
        _ => return None,
    })
}

/// The calls rpd_tracer makes about itself (`hcc_activity_callback`, `OpTable::writeRows`).
fn is_tracer_overhead(name: &str) -> bool {
    name == "hcc_activity_callback" || name.ends_with("::writeRows")
}

/// `ptr(0x7f..) size(4000000000)`, `sizeBytes(4000000000)`, `size=0x77400000`: the bytes a
/// call's argument string names.
fn bytes_in_call_args(text: &str) -> Option<u64> {
    for key in ["sizeBytes(", "sizeBytes=", "size(", "size="] {
        if let Some(at) = text.find(key) {
            let rest = &text[at + key.len()..];
            let end = rest.find([')', ' ', '|', ',']).unwrap_or(rest.len());
            return super::table::parse_int(&rest[..end]).and_then(|v| u64::try_from(v).ok());
        }
    }
    None
}

impl Reader {
    fn lane_of(&self, pid: &str) -> Lane {
        let name = self.process_names.get(pid).map_or("", String::as_str);
        if name.contains("HSA API") {
            Lane::Calls(EventKind::Driver)
        } else if name.contains("API") {
            Lane::Calls(EventKind::Runtime)
        } else if name == "COPY" {
            Lane::Copies
        } else if name.starts_with("GPU") {
            Lane::Kernels
        } else {
            Lane::Other
        }
    }

    fn element(&mut self, p: &mut Parser<'_>, b: &mut ProfileBuilder) -> Result<(), SyntaxError> {
        let v = p.value()?;
        let Value::Object(text) = v else {
            self.skipped += 1;
            return Ok(());
        };
        let Ok(raw) = parse_raw(text) else {
            self.skipped += 1;
            return Ok(());
        };
        match raw.ph.as_str() {
            "" if raw.name.is_empty() => {} // The `{}` both tools start with.
            "M" => {
                if raw.name == "thread_name" {
                    let args = args_of(raw.args);
                    if let Some(n) = arg(&args, "name") {
                        self.thread_names
                            .insert((raw.pid.clone(), raw.tid.clone()), n.to_string());
                    }
                } else if raw.name == "process_name" {
                    let args = args_of(raw.args);
                    if let Some(n) = arg(&args, "name") {
                        self.process_names.insert(raw.pid.clone(), n.to_string());
                        if let Ok(pid) = raw.pid.parse::<i64>() {
                            b.process_names.push((TraceId::Int(pid), n.to_string()));
                        }
                    }
                }
            }
            "X" => self.slice(&raw, b),
            "s" | "t" | "f" => {
                let Some(ts_ns) = raw.ts.as_deref().and_then(us_to_ns) else {
                    self.skipped += 1;
                    return Ok(());
                };
                let point = Point {
                    lane: (raw.pid.clone(), raw.tid.clone()),
                    ts_ns,
                    enclosing: raw.bp == "e",
                };
                let key = format!("{}:{}", raw.cat, raw.id);
                if raw.ph == "s" {
                    self.starts.insert(key, point);
                } else {
                    self.ends.insert(key, point);
                }
            }
            "C" => {
                let Some(ts_ns) = raw.ts.as_deref().and_then(us_to_ns) else {
                    self.skipped += 1;
                    return Ok(());
                };
                for (series, value) in args_of(raw.args) {
                    if let Ok(v) = value.parse::<f64>() {
                        let name = if series == raw.name || series == "depth" || series == "idle" {
                            raw.name.clone()
                        } else {
                            format!("{}.{series}", raw.name)
                        };
                        self.counters
                            .entry((raw.pid.clone(), name))
                            .or_default()
                            .push((ts_ns, v));
                    }
                }
            }
            _ => self.skipped += 1,
        }
        Ok(())
    }

    /// The start and duration of an X event: rocprof v1's ns args where present, else `ts`
    /// and `dur` in µs.
    fn span(raw: &Raw<'_>, args: &[(String, String)]) -> Option<(i64, i64)> {
        if let (Some(begin), Some(end)) = (arg_int(args, "BeginNs"), arg_int(args, "EndNs")) {
            return Some((begin, end.saturating_sub(begin)));
        }
        let start = us_to_ns(raw.ts.as_deref()?)?;
        let dur = raw.dur.as_deref().and_then(us_to_ns).unwrap_or(0);
        Some((start, dur))
    }

    fn slice(&mut self, raw: &Raw<'_>, b: &mut ProfileBuilder) {
        let args = args_of(raw.args);
        let Some((start_ns, dur_ns)) = Self::span(raw, &args) else {
            self.skipped += 1;
            return;
        };
        self.events += 1;
        // RPD says what a GPU op is in `desc`; rocprof v1 by its lane.
        let desc = arg(&args, "desc").unwrap_or("");
        let lane = if self.rpd {
            if desc == "KernelExecution" {
                Lane::Kernels
            } else if copy_kind(desc).is_some() {
                Lane::Copies
            } else if self
                .process_names
                .get(&raw.pid)
                .is_some_and(|n| n.starts_with("GPU"))
            {
                Lane::Other
            } else {
                Lane::Calls(EventKind::Runtime)
            }
        } else {
            self.lane_of(&raw.pid)
        };
        let lane_key = (raw.pid.clone(), raw.tid.clone());
        let name = raw.name.as_str();
        let track = match lane {
            Lane::Calls(kind) => {
                // rocprof v1 files its calls under the lane's pid; the thread is in args.
                let pid = arg_int(&args, "pid").or_else(|| super::table::parse_int(&raw.pid));
                let tid = arg_int(&args, "tid").or_else(|| super::table::parse_int(&raw.tid));
                let pid = pid.unwrap_or(0);
                let track = self.thread_track(b, pid, tid.unwrap_or(pid));
                let id = b.intern(name);
                if is_tracer_overhead(name) {
                    b.push(track, start_ns, dur_ns, id, EventKind::Overhead);
                } else {
                    b.push_api(track, start_ns, dur_ns, id, kind, ApiInfo::default(), 0);
                    let call_args = arg(&args, "args").unwrap_or(desc);
                    if let Some(bytes) = bytes_in_call_args(call_args) {
                        self.call_bytes.push((
                            track,
                            start_ns,
                            start_ns.saturating_add(dur_ns),
                            bytes,
                        ));
                    }
                }
                track
            }
            Lane::Other if !self.rpd => {
                self.unknown_lane += 1;
                let pid = super::table::parse_int(&raw.pid).unwrap_or(0);
                let tid = super::table::parse_int(&raw.tid).unwrap_or(0);
                let track = self.thread_track(b, pid, tid);
                let id = b.intern(name);
                b.push(track, start_ns, dur_ns, id, EventKind::Slice);
                track
            }
            _ => {
                let device = arg_int(&args, "dev-id")
                    .or_else(|| super::table::parse_int(&raw.pid))
                    .and_then(|d| u32::try_from(d).ok())
                    .unwrap_or(0);
                let queue = arg_int(&args, "queue-id")
                    .or_else(|| super::table::parse_int(&raw.tid))
                    .and_then(|q| u64::try_from(q).ok())
                    .unwrap_or(0);
                // rocprof v1's copies are on the DMA engines, not on the kernels' queue.
                let track = if lane == Lane::Copies && !self.rpd {
                    copy_track(b, device)
                } else {
                    queue_track(b, device, queue)
                };
                let id = b.intern(kernel_name(name));
                match lane {
                    Lane::Kernels => {
                        b.push_kernel(track, start_ns, dur_ns, id, KernelInfo::default(), 0);
                    }
                    Lane::Copies => {
                        let op = if self.rpd { desc } else { name };
                        let kind = copy_kind(op).unwrap_or(CopyKind::Unknown);
                        let ev = if kind == CopyKind::Memset {
                            EventKind::Memset
                        } else {
                            EventKind::Memcpy
                        };
                        self.copies.push(PendingCopy {
                            track,
                            start_ns,
                            dur_ns,
                            name: id,
                            event: ev,
                            kind,
                            bytes: None,
                        });
                    }
                    _ => b.push(track, start_ns, dur_ns, id, EventKind::GpuSync),
                }
                track
            }
        };
        self.lanes.entry(lane_key).or_insert(track);
    }
}

impl Reader {
    /// The track of thread `tid` of process `pid`, named on creation (`Hip 1087077` where a
    /// `thread_name` event says, else `thread 1087077`).
    fn thread_track(&self, b: &mut ProfileBuilder, pid: i64, tid: i64) -> TrackId {
        let key = TrackKey::Thread {
            pid: TraceId::Int(pid),
            tid: TraceId::Int(tid),
        };
        let fresh = b.find_track(&key).is_none();
        let track = b.track(key);
        if fresh {
            b.track_mut(track).name = self
                .thread_names
                .get(&(pid.to_string(), tid.to_string()))
                .cloned()
                .unwrap_or_else(|| format!("thread {tid}"));
        }
        track
    }

    fn new(rpd: bool) -> Self {
        Self {
            rpd,
            thread_names: FxHashMap::default(),
            copies: Vec::new(),
            call_bytes: Vec::new(),
            process_names: FxHashMap::default(),
            lanes: FxHashMap::default(),
            starts: FxHashMap::default(),
            ends: FxHashMap::default(),
            counters: FxHashMap::default(),
            other_data: Vec::new(),
            events: 0,
            skipped: 0,
            unknown_lane: 0,
        }
    }

    /// Flows, copy sizes, counters, devices from `otherData`, warnings.
    fn finish(mut self, b: &mut ProfileBuilder) {
        let mut flows = Vec::new();
        let mut unmatched = 0u64;
        for (key, end) in &self.ends {
            let (Some(start), Some(&to_track)) = (self.starts.get(key), self.lanes.get(&end.lane))
            else {
                unmatched += 1;
                continue;
            };
            let Some(&from_track) = self.lanes.get(&start.lane) else {
                unmatched += 1;
                continue;
            };
            flows.push(PendingFlow {
                from_track,
                from_ns: start.ts_ns,
                to_track,
                to_ns: end.ts_ns,
                to_enclosing: end.enclosing,
                kind: FlowKind::Launch,
            });
        }
        self.size_copies(&flows);
        for c in std::mem::take(&mut self.copies) {
            let info = CopyInfo {
                kind: c.kind,
                bytes: c.bytes,
                src_kind: None,
                dst_kind: None,
                correlation: None,
                external_id: None,
            };
            b.push_copy(c.track, c.start_ns, c.dur_ns, c.name, c.event, info, 0);
        }
        flows.sort_by_key(|f| (f.from_track.0, f.from_ns, f.to_track.0, f.to_ns));
        b.pending_flows.extend(flows);
        let mut counters: Vec<_> = std::mem::take(&mut self.counters).into_iter().collect();
        counters.sort_by(|a, b| a.0.cmp(&b.0));
        for ((pid, name), mut samples) in counters {
            samples.sort_by_key(|s| s.0);
            b.counters.push(CounterTrack {
                pid: TraceId::Int(super::table::parse_int(&pid).unwrap_or(0)),
                name,
                time_ns: samples.iter().map(|s| s.0).collect(),
                value: samples.iter().map(|s| s.1).collect(),
            });
        }
        self.devices_from_other_data(b);
        b.warn(
            "unmatched_flow",
            unmatched,
            "flow ends without a start (or on a lane without events) were skipped",
        );
        b.warn(
            "bad_event",
            self.skipped,
            "events without the members their phase needs (or of an unknown phase) were skipped",
        );
        b.warn(
            "unknown_lane",
            self.unknown_lane,
            "events on processes that are not a known API, COPY or GPU lane are plain slices",
        );
        if self.rpd {
            b.source.details.push((
                "times".to_string(),
                "whole µs, truncated from the .rpd database's ns by rpd2tracing; open the .rpd \
                 for ns"
                    .to_string(),
            ));
        }
    }

    /// Gives each copy the size its launching call names, following the flows.
    fn size_copies(&mut self, flows: &[PendingFlow]) {
        if self.call_bytes.is_empty() || self.copies.is_empty() {
            return;
        }
        self.copies
            .sort_by_key(|c| (c.track.0, c.start_ns, std::cmp::Reverse(c.dur_ns)));
        self.call_bytes.sort_by_key(|c| (c.0.0, c.1));
        for f in flows {
            let call = self
                .call_bytes
                .partition_point(|c| (c.0.0, c.1) <= (f.from_track.0, f.from_ns));
            let Some(&(track, start, end, bytes)) =
                call.checked_sub(1).and_then(|i| self.call_bytes.get(i))
            else {
                continue;
            };
            if track != f.from_track || f.from_ns < start || f.from_ns > end {
                continue;
            }
            let at = if f.to_enclosing {
                self.copies
                    .partition_point(|c| (c.track.0, c.start_ns) <= (f.to_track.0, f.to_ns))
                    .checked_sub(1)
            } else {
                Some(
                    self.copies
                        .partition_point(|c| (c.track.0, c.start_ns) < (f.to_track.0, f.to_ns)),
                )
            };
            if let Some(c) = at.and_then(|i| self.copies.get_mut(i))
                && c.track == f.to_track
            {
                c.bytes = Some(bytes);
            }
        }
    }

    /// rocprof v1's `otherData` is `rocminfo` flattened: `Agent5.Name` = `gfx942`,
    /// `Agent5.MarketingName`, `Agent5.ComputeUnit`, `Agent5.DeviceType` = `GPU`. Agent N of
    /// rocminfo (from 1) is HSA agent N − 1, the number in `dev-id`.
    fn devices_from_other_data(&self, b: &mut ProfileBuilder) {
        let mut agents: FxHashMap<u32, Device> = FxHashMap::default();
        let mut gpus = Vec::new();
        for (key, value) in &self.other_data {
            let Some(rest) = key.strip_prefix("Agent") else {
                continue;
            };
            let Some((n, field)) = rest.split_once('.') else {
                continue;
            };
            let Some(agent) = n.parse::<u32>().ok().and_then(|n| n.checked_sub(1)) else {
                continue;
            };
            let d = agents.entry(agent).or_insert_with(|| Device {
                id: agent,
                ..Device::default()
            });
            match field {
                "Name" if value.starts_with("gfx") => d.gfx_target = Some(value.clone()),
                "MarketingName" => d.name.clone_from(value),
                "ComputeUnit" => d.sm_count = value.trim().parse().ok(),
                "DeviceType" if value == "GPU" => gpus.push(agent),
                _ => {}
            }
        }
        for id in gpus {
            if let Some(d) = agents.remove(&id)
                && !b.devices.iter().any(|x| x.id == id)
            {
                b.devices.push(d);
            }
        }
        if let Some((_, v)) = self
            .other_data
            .iter()
            .find(|(k, _)| k.ends_with("RuntimeVersion"))
        {
            b.source
                .details
                .push(("HSA runtime".to_string(), v.clone()));
        }
    }
}

/// Reads rocprof v1's `results.json` (`rpd` false) or RPD's Chrome JSON (`rpd` true) into
/// `b`; returns the bytes read.
pub(super) fn read(
    mut input: impl Read,
    path: &Path,
    compressed: bool,
    rpd: bool,
    b: &mut ProfileBuilder,
) -> Result<u64, ImportError> {
    let mut bytes = Vec::new();
    input
        .read_to_end(&mut bytes)
        .map_err(|e| ImportError::reading(path, compressed, e))?;
    let mut r = Reader::new(rpd);
    let mut p = Parser::new(&bytes);
    let result = match p.peek() {
        Some(b'{') => p.object(|p, key| match key {
            b"traceEvents" => p.array(|p| r.element(p, b)),
            b"otherData" => {
                if let Value::Object(o) = p.value()? {
                    r.other_data = args_of(Some(o));
                }
                Ok(())
            }
            _ => p.skip_value(),
        }),
        _ => p.array(|p| r.element(p, b)),
    };
    if let Err(e) = result {
        let line = memchr::memchr_iter(b'\n', &bytes[..e.offset.min(bytes.len())]).count() + 1;
        if r.events == 0 {
            return Err(ImportError::Corrupt {
                path: path.to_path_buf(),
                location: format!("line {line}"),
                detail: format!("broken JSON before any event: {}", e.detail),
            });
        }
        b.warn(
            "truncated",
            1,
            format!(
                "the JSON breaks off at line {line} ({}); the events before it were read",
                e.detail
            ),
        );
    }
    r.finish(b);
    Ok(bytes.len() as u64)
}
