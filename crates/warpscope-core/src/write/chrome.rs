//! Chrome Trace Event Format writer, shaped like a PyTorch profiler (Kineto) trace so that
//! warpscope's own importer ([`crate::import::chrome`]) maps every event back to the same model,
//! and Perfetto and chrome://tracing show it.
//!
//! # Layout
//!
//! ```text
//! {"schemaVersion": 1, "deviceProperties": [...], "distributedInfo": {...},
//!  "baseTimeNanoseconds": ..., "warpscope": {...}, "traceEvents": [ one event per line ]}
//! ```
//!
//! - GPU tracks are Kineto's: `pid` = device, `tid` = stream, and `args` carry `device`,
//!   `context` and `stream`. When that (pid, tid) is already taken (a second lane or context of
//!   the stream, or a CPU thread with the same numbers), the tid is a name such as
//!   `stream 7 annotations (context 1)`, so every track has its own (pid, tid) and flow ends bind
//!   to the right one.
//! - Categories follow the kind: `kernel`, `gpu_memcpy`, `gpu_memset`, `gpu_user_annotation`,
//!   `cuda_sync`, `cuda_runtime`, `cuda_driver`, `cpu_op`, `user_annotation`,
//!   `python_function`, `overhead`, `cpu_instant_event`; plain slices have no `cat`. NVTX ranges
//!   (`nvtx`) and unified-memory events (`unified_memory`) have no Kineto category: these two
//!   names are warpscope's, and its importer reads them.
//! - Kernel args: `grid`, `block`, `registers per thread`, `shared memory`, `blocks per SM`,
//!   `warps per SM`, `est. achieved occupancy %`, `correlation`, `External id`, and when known
//!   `static shared memory`, `dynamic shared memory`, `mangled name` and `Process Group Name`.
//!   Copy args: `bytes`,
//!   `memory bandwidth (GB/s)`, `correlation`, `External id`, `copy kind` (`HtoD`,
//!   `Unified DtoH`, `Memset`, ...), `src memory`, `dst memory`. API args: `correlation`, `cbid`,
//!   `External id`.
//! - An event whose track is not the one its category implies (an NVTX marker on a GPU stream,
//!   an unknown activity on a stream, a unified-memory event on a host track) carries
//!   `"warpscope lane"`: `work`, `annotations`, `unified_memory` or `cpu`.
//! - Flows are `s`/`f` pairs, the `f` with `"bp": "e"`: `ac2g` for launches, `fwdbwd`, and
//!   `flow` for others. Each end is written at a time where the importer's binding (the deepest
//!   event enclosing the time) finds the very same event.
//! - Counters are `C` events with one `value` series; markers are global instants (`"s": "g"`);
//!   zero-length instants on threads are `i` events; async ranges are `b`/`e` pairs written next
//!   to each other (`n` for instants), one id per track.
//! - `ts` and `dur` are microseconds with exactly three decimals, made from integer nanoseconds
//!   with integer arithmetic (`-1234567` ns is `-1234.567`). `ts` is relative to the profile's
//!   origin (times before it are negative); `baseTimeNanoseconds` is the origin's Unix time when
//!   known, so that, as in Kineto traces, Unix time = `baseTimeNanoseconds` + `ts`.
//! - `"warpscope"` holds what trace events cannot: the source (path, format, tool and its
//!   version, schema version, details), the origin (`raw_ns`, `unix_ns`), the labels, the
//!   warnings of the original import, and every thread and GPU track's name and sort index. The
//!   importer reads it back: a reopened trace keeps its format
//!   ([`ChromeJson`](crate::model::Format::ChromeJson)), path, compression and sizes, but reports
//!   the original tool, tool version, schema version, details (plus `original path` and
//!   `original format`), labels, origin and warnings.
//!
//! # What a round trip (write, then import) keeps
//!
//! Exactly, as the tests check on a profile with every kind of event and on every sample
//! warpscope has (Kineto, TensorFlow, nvprof CSV, text and SQLite, Nsight Systems): every track
//! that has events (key, name, sort index); every event's start, duration, name, kind and
//! depth, in the same order; kernel, copy and API details; flows; counters; markers; devices;
//! process names; distributed info; labels; warnings; the origin.
//!
//! Lost or changed, by nature of the format or of the importer:
//! - Tracks without events, and the summary recorded in nvprof summary files (such a profile
//!   has no events and is written as an empty trace).
//! - Flows with an end on an async track are not written. Launch flows are rebuilt by the
//!   importer from correlation ids when kernels carry them (in one id space: correlation ids of
//!   several Nsight Systems processes can collide), and from the `ac2g` arrows otherwise.
//! - Events on async tracks come back as plain slices or instants; negative durations come back
//!   as 0 (with the importer's warning); a kernel, copy or set without details comes back with
//!   empty ones; an API call named `INVALID` or `""` with a known `cbid` is renamed.
//! - Process names lose surrounding white space (the importer trims them).
//! - A device with a SM count but no `numSms` property gains that property; property values
//!   keep their text (canonical integers are written as JSON numbers, the rest as strings).
//! - Counter values that are not finite are written as strings (`"NaN"`, `"inf"`): warpscope
//!   reads them back, other viewers drop them. Ids and streams above `i64::MAX` do not survive.
//! - A warning the re-import raises again under the same code (a TensorFlow timeline without
//!   stream lanes) is not counted twice: the original one is kept.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use flate2::Compression;
use flate2::write::GzEncoder;
use rustc_hash::FxHashSet;

use super::WriteError;
use crate::builder::enclosing_event;
use crate::import::chrome::{LANE_ARG, gpu_lane, lane_text};
use crate::model::{
    ApiInfo, CopyInfo, Device, EventKind, Events, FlowKind, KernelInfo, MemoryAction, MemoryDevice,
    MemoryKind, Profile, TraceId, Track, TrackKey,
};

/// Bytes gathered before they are handed to the writer.
const FLUSH_BYTES: usize = 1 << 16;

/// Writes `profile` as Chrome Trace Event Format JSON (Kineto-flavoured) to `out`.
///
/// Events are formatted one at a time into a small buffer that is handed to `out` every 64 KiB,
/// so memory stays flat however many events there are; `out` is flushed at the end. Wrap a
/// file in a [`BufWriter`] or use [`save_chrome_trace`].
pub fn write_chrome_trace(profile: &Profile, out: &mut impl Write) -> Result<(), WriteError> {
    let mut w = TraceWriter {
        out,
        buf: Vec::with_capacity(FLUSH_BYTES + 4096),
        first_event: true,
    };
    let ids = track_ids(profile);
    w.header(profile)?;
    w.metadata_events(profile, &ids)?;
    for (index, track) in profile.tracks.iter().enumerate() {
        w.track_events(profile, index, track, &ids[index])?;
    }
    w.counters(profile)?;
    w.markers(profile)?;
    w.memory(profile, &ids)?;
    w.flows(profile, &ids)?;
    w.buf.extend_from_slice(b"\n]}\n");
    w.out.write_all(&w.buf)?;
    w.out.flush()?;
    Ok(())
}

/// Writes `profile` to `path` as Chrome trace JSON, gzip-compressed when the path ends in `.gz`,
/// creating (or replacing) the file. Errors name the path; after one the file may be left
/// partly written.
pub fn save_chrome_trace(profile: &Profile, path: &Path) -> Result<(), WriteError> {
    let with_path = |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::create(path).map_err(with_path)?;
    let mut out = BufWriter::with_capacity(1 << 16, file);
    let gzip = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    let written = if gzip {
        let mut gz = GzEncoder::new(&mut out, Compression::default());
        write_chrome_trace(profile, &mut gz).and_then(|()| {
            gz.finish()?;
            Ok(())
        })
    } else {
        write_chrome_trace(profile, &mut out)
    };
    let flushed = written.and_then(|()| Ok(out.flush()?));
    flushed.map_err(|e| match e {
        WriteError::Write { source } => with_path(source),
        other @ WriteError::Io { .. } => other,
    })
}

/// The category written for a kind (`None`: no `cat`, read back as a plain slice).
fn category(kind: EventKind) -> Option<&'static str> {
    Some(match kind {
        EventKind::Kernel => "kernel",
        EventKind::Memcpy => "gpu_memcpy",
        EventKind::Memset => "gpu_memset",
        EventKind::UnifiedMemory => "unified_memory",
        EventKind::GpuAnnotation => "gpu_user_annotation",
        EventKind::GpuSync => "cuda_sync",
        EventKind::Runtime => "cuda_runtime",
        EventKind::Driver => "cuda_driver",
        EventKind::CpuOp => "cpu_op",
        EventKind::UserAnnotation => "user_annotation",
        EventKind::PythonFunction => "python_function",
        EventKind::Nvtx => "nvtx",
        EventKind::Overhead => "overhead",
        EventKind::Instant => "cpu_instant_event",
        EventKind::Slice => return None,
    })
}

/// The words [`MemoryKind::from_word`] reads back.
fn memory_word(kind: MemoryKind) -> &'static str {
    match kind {
        MemoryKind::Pageable => "Pageable",
        MemoryKind::Pinned => "Pinned",
        MemoryKind::Device => "Device",
        MemoryKind::Array => "Array",
        MemoryKind::Managed => "Managed",
        MemoryKind::DeviceStatic => "Device Static",
        MemoryKind::ManagedStatic => "Managed Static",
        MemoryKind::Host => "Host",
        MemoryKind::Unknown => "Unknown",
    }
}

fn flow_category(kind: FlowKind) -> &'static str {
    match kind {
        FlowKind::Launch => "ac2g",
        FlowKind::ForwardBackward => "fwdbwd",
        FlowKind::Other => "flow",
    }
}

/// A pid or tid to write.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Id {
    Int(i128),
    Text(String),
}

impl Id {
    fn of(p: &Profile, id: TraceId) -> Self {
        match id {
            TraceId::Int(v) => Self::Int(v.into()),
            TraceId::Name(s) => Self::Text(p.str(s).to_string()),
        }
    }
}

/// The `pid` and `tid` under which each track's events are written. GPU tracks are Kineto's
/// (device, stream) unless that pair is taken (by a CPU thread, or by another context or lane
/// of the stream): then the tid is a name such as `stream 7 annotations (context 1)`. The
/// importer takes the device and stream from the args, and binds flow ends by (pid, tid), so
/// every track gets its own pair.
fn track_ids(p: &Profile) -> Vec<(Id, Id)> {
    let mut taken: FxHashSet<(Id, Id)> = p
        .tracks
        .iter()
        .filter_map(|t| match t.key {
            TrackKey::Thread { pid, tid } => Some((Id::of(p, pid), Id::of(p, tid))),
            _ => None,
        })
        .collect();
    p.tracks
        .iter()
        .map(|t| match t.key {
            TrackKey::Gpu {
                device,
                context,
                stream,
                lane,
            } => {
                let pid = Id::Int(device.into());
                let plain = (pid.clone(), Id::Int(stream.into()));
                if i64::try_from(stream).is_ok() && taken.insert(plain.clone()) {
                    return plain;
                }
                let lane = lane_text(Some(lane)).replace('_', " ");
                let tid = Id::Text(format!("stream {stream} {lane} (context {context})"));
                taken.insert((pid.clone(), tid.clone()));
                (pid, tid)
            }
            TrackKey::Thread { pid, tid } => (Id::of(p, pid), Id::of(p, tid)),
            TrackKey::Async { pid, .. } => (Id::of(p, pid), Id::Int(0)),
        })
        .collect()
}

/// A time at which the importer's flow binding (the deepest event that encloses the time)
/// finds event `i`: its start, unless a later event that starts there too would be found, in
/// which case the first time after such events that is still inside `i`.
fn bind_time_ns(ev: &Events, i: usize) -> i64 {
    let start = ev.start_ns[i];
    let end = ev.end_ns(i);
    let target = u32::try_from(i).ok();
    let mut t = start;
    for _ in 0..64 {
        match enclosing_event(ev, t) {
            Some(k) if Some(k) == target => return t,
            Some(k) => {
                let next = ev.end_ns(k as usize).saturating_add(1);
                if next <= t || next > end {
                    break;
                }
                t = next;
            }
            None => break,
        }
    }
    start
}

struct TraceWriter<'w, W: Write> {
    out: &'w mut W,
    buf: Vec<u8>,
    first_event: bool,
}

impl<W: Write> TraceWriter<'_, W> {
    /// Hands the buffer to the writer once it is full.
    fn maybe_flush(&mut self) -> Result<(), WriteError> {
        if self.buf.len() >= FLUSH_BYTES {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Starts a new element of `traceEvents` (after flushing a full buffer).
    fn event(&mut self) -> Result<Obj<'_>, WriteError> {
        self.maybe_flush()?;
        if !self.first_event {
            self.buf.push(b',');
        }
        self.first_event = false;
        self.buf.push(b'\n');
        Ok(Obj::new(&mut self.buf))
    }

    fn header(&mut self, p: &Profile) -> Result<(), WriteError> {
        self.buf
            .extend_from_slice(b"{\n\"schemaVersion\": 1,\n\"deviceProperties\": [");
        for (n, d) in p.devices.iter().enumerate() {
            if n > 0 {
                self.buf.push(b',');
            }
            self.buf.extend_from_slice(b"\n  ");
            write_device(&mut self.buf, d);
        }
        self.buf.extend_from_slice(b"\n],\n");
        if let Some(d) = &p.distributed {
            self.buf.extend_from_slice(b"\"distributedInfo\": ");
            let mut o = Obj::new(&mut self.buf);
            if let Some(b) = &d.backend {
                o.str("backend", b);
            }
            if let Some(r) = d.rank {
                o.int("rank", r);
            }
            if let Some(w) = d.world_size {
                o.int("world_size", w);
            }
            o.end();
            self.buf.extend_from_slice(b",\n");
        }
        if let Some(unix_ns) = p.origin.unix_ns {
            self.buf.extend_from_slice(b"\"baseTimeNanoseconds\": ");
            push_int(&mut self.buf, unix_ns);
            self.buf.extend_from_slice(b",\n");
        }
        self.buf.extend_from_slice(b"\"warpscope\": ");
        write_carried(&mut self.buf, p);
        self.buf.extend_from_slice(b",\n\"traceEvents\": [");
        self.maybe_flush()
    }

    /// `process_name`, `thread_name` and `thread_sort_index` events.
    fn metadata_events(&mut self, p: &Profile, ids: &[(Id, Id)]) -> Result<(), WriteError> {
        for (pid, name) in &p.process_names {
            let mut o = self.event()?;
            o.str("ph", "M");
            o.str("name", "process_name");
            o.id("pid", &Id::of(p, *pid));
            o.int("tid", 0);
            o.key("args");
            let mut args = o.obj();
            args.str("name", name);
            args.end();
            o.end();
        }
        for (t, (pid, tid)) in p.tracks.iter().zip(ids) {
            if let TrackKey::Async { .. } = t.key {
                continue;
            }
            let mut o = self.event()?;
            o.str("ph", "M");
            o.str("name", "thread_name");
            o.id("pid", pid);
            o.id("tid", tid);
            o.key("args");
            let mut args = o.obj();
            args.str("name", &t.name);
            args.end();
            o.end();
            if let Some(sort) = t.sort_index {
                let mut o = self.event()?;
                o.str("ph", "M");
                o.str("name", "thread_sort_index");
                o.id("pid", pid);
                o.id("tid", tid);
                o.key("args");
                let mut args = o.obj();
                args.int("sort_index", sort);
                args.end();
                o.end();
            }
        }
        Ok(())
    }

    fn track_events(
        &mut self,
        p: &Profile,
        index: usize,
        track: &Track,
        (pid, tid): &(Id, Id),
    ) -> Result<(), WriteError> {
        let ev = &track.events;
        if let TrackKey::Async { .. } = track.key {
            return self.async_events(p, index, track, pid);
        }
        let track_lane = match track.key {
            TrackKey::Gpu { lane, .. } => Some(lane),
            _ => None,
        };
        for i in 0..ev.len() {
            let kind = ev.kind[i];
            let placed = gpu_lane(kind) != track_lane;
            if kind == EventKind::Instant && ev.dur_ns[i] == 0 && !placed {
                let mut o = self.event()?;
                o.str("ph", "i");
                o.str("s", "t");
                o.str("cat", "cpu_instant_event");
                o.str("name", p.str(ev.name[i]));
                o.id("pid", pid);
                o.id("tid", tid);
                o.us("ts", ev.start_ns[i]);
                o.end();
                continue;
            }
            let mut o = self.event()?;
            o.str("ph", "X");
            if let Some(cat) = category(kind) {
                o.str("cat", cat);
            }
            o.str("name", p.str(ev.name[i]));
            o.id("pid", pid);
            o.id("tid", tid);
            o.us("ts", ev.start_ns[i]);
            o.us("dur", ev.dur_ns[i]);
            let kernel = p.kernel_info(track, i);
            let copy = p.copy_info(track, i);
            let api = p.api_info(track, i);
            let op = p.op_args(track, i);
            let gpu = match track.key {
                TrackKey::Gpu {
                    device,
                    context,
                    stream,
                    ..
                } => Some((device, context, stream)),
                _ => None,
            };
            if gpu.is_none()
                && !placed
                && kernel.is_none()
                && copy.is_none()
                && api.is_none()
                && op.is_none()
            {
                o.end();
                continue;
            }
            o.key("args");
            let mut args = o.obj();
            if let Some((device, context, stream)) = gpu {
                args.int("device", device);
                args.int("context", context);
                args.int("stream", stream);
            }
            if placed {
                args.str(LANE_ARG, lane_text(track_lane));
            }
            if let Some(k) = kernel {
                kernel_args(&mut args, &k, p);
            }
            if let Some(c) = copy {
                copy_args(&mut args, &c, ev.dur_ns[i]);
            }
            if let Some(a) = api {
                api_args(&mut args, &a);
            }
            for (key, value) in op.map(super::op_args::members).unwrap_or_default() {
                args.key(key);
                args.buf.extend_from_slice(value.as_bytes());
            }
            args.end();
            o.end();
        }
        Ok(())
    }

    /// Async ranges as `b`/`e` pairs written next to each other (so the importer pairs them
    /// whatever their overlap), instants as `n`; the track's index is their id.
    fn async_events(
        &mut self,
        p: &Profile,
        id: usize,
        track: &Track,
        pid: &Id,
    ) -> Result<(), WriteError> {
        let ev = &track.events;
        for i in 0..ev.len() {
            let name = p.str(ev.name[i]);
            let instant = ev.kind[i] == EventKind::Instant && ev.dur_ns[i] == 0;
            let phases: &[(&str, i64)] = if instant {
                &[("n", ev.start_ns[i])]
            } else {
                &[("b", ev.start_ns[i]), ("e", ev.end_ns(i))]
            };
            for &(ph, ts) in phases {
                let mut o = self.event()?;
                o.str("ph", ph);
                o.str("cat", "async");
                o.int("id", id as u64);
                o.str("name", name);
                o.id("pid", pid);
                o.us("ts", ts);
                o.end();
            }
        }
        Ok(())
    }

    fn counters(&mut self, p: &Profile) -> Result<(), WriteError> {
        for c in &p.counters {
            for (&t, &v) in c.time_ns.iter().zip(&c.value) {
                let mut o = self.event()?;
                o.str("ph", "C");
                o.str("name", &c.name);
                o.id("pid", &Id::of(p, c.pid));
                o.us("ts", t);
                o.key("args");
                let mut args = o.obj();
                args.key("value");
                push_f64(args.buf, v);
                args.end();
                o.end();
            }
        }
        Ok(())
    }

    fn markers(&mut self, p: &Profile) -> Result<(), WriteError> {
        for m in &p.markers {
            let mut o = self.event()?;
            o.str("ph", "i");
            o.str("s", "g");
            o.str("name", &m.name);
            o.us("ts", m.time_ns);
            o.end();
        }
        Ok(())
    }

    /// Allocations, frees and failed allocations as Kineto's `[memory]` and `[OutOfMemory]`
    /// instants on the thread that made them, with the totals after each. A snapshot's
    /// segment and free-requested records have no Kineto form and are not written.
    fn memory(&mut self, p: &Profile, ids: &[(Id, Id)]) -> Result<(), WriteError> {
        let ev = &p.memory.events;
        let unknown = (Id::Int(0), Id::Int(0));
        for i in 0..ev.len() {
            let (name, bytes) = match ev.action[i] {
                MemoryAction::Alloc => ("[memory]", i128::from(ev.bytes[i])),
                MemoryAction::Free => ("[memory]", -i128::from(ev.bytes[i])),
                MemoryAction::Oom => ("[OutOfMemory]", i128::from(ev.bytes[i])),
                _ => continue,
            };
            let (pid, tid) = ids.get(ev.track[i] as usize).unwrap_or(&unknown);
            let (device_type, device_id) = match ev.device[i] {
                MemoryDevice::Cpu => (0, -1),
                MemoryDevice::Gpu(id) => (1, i64::from(id)),
            };
            let mut o = self.event()?;
            o.str("ph", "i");
            o.str("s", "t");
            o.str("cat", "cpu_instant_event");
            o.str("name", name);
            o.id("pid", pid);
            o.id("tid", tid);
            o.us("ts", ev.time_ns[i]);
            o.key("args");
            let mut args = o.obj();
            args.int("Device Type", device_type);
            args.int("Device Id", device_id);
            args.int("Addr", ev.addr[i]);
            args.int("Bytes", bytes);
            args.int("Total Allocated", ev.allocated_bytes[i]);
            args.int("Total Reserved", ev.reserved_bytes[i]);
            args.end();
            o.end();
        }
        Ok(())
    }

    fn flows(&mut self, p: &Profile, ids: &[(Id, Id)]) -> Result<(), WriteError> {
        for (n, f) in p.flows.iter().enumerate() {
            let ends = [(f.from, "s"), (f.to, "f")];
            let tracks = ends.map(|(e, _)| p.tracks.get(e.track as usize));
            let [Some(from), Some(to)] = tracks else {
                continue;
            };
            let on_async = |t: &Track| matches!(t.key, TrackKey::Async { .. });
            let missing = (f.from.index as usize >= from.events.len())
                || (f.to.index as usize >= to.events.len());
            if on_async(from) || on_async(to) || missing {
                continue;
            }
            for ((end, ph), track) in ends.into_iter().zip([from, to]) {
                let index = end.index as usize;
                let (pid, tid) = &ids[end.track as usize];
                let mut o = self.event()?;
                o.str("ph", ph);
                o.int("id", n as u64 + 1);
                o.id("pid", pid);
                o.id("tid", tid);
                o.us("ts", bind_time_ns(&track.events, index));
                o.str("cat", flow_category(f.kind));
                o.str("name", flow_category(f.kind));
                if ph == "f" {
                    o.str("bp", "e");
                }
                o.end();
            }
        }
        Ok(())
    }
}

fn kernel_args(args: &mut Obj<'_>, k: &KernelInfo, p: &Profile) {
    args.maybe_int("External id", k.external_id);
    args.maybe_int("correlation", k.correlation);
    args.maybe_int("registers per thread", k.registers_per_thread);
    args.maybe_int("shared memory", k.shared_memory_bytes);
    args.maybe_int("static shared memory", k.static_shared_bytes);
    args.maybe_int("dynamic shared memory", k.dynamic_shared_bytes);
    for (key, v) in [
        ("blocks per SM", k.blocks_per_sm),
        ("warps per SM", k.warps_per_sm),
        ("est. achieved occupancy %", k.occupancy_pct),
    ] {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            args.key(key);
            push_f32(args.buf, v);
        }
    }
    for (key, dims) in [("grid", k.grid), ("block", k.block)] {
        if let Some([x, y, z]) = dims {
            args.key(key);
            args.buf.push(b'[');
            push_int(args.buf, x);
            args.buf.push(b',');
            push_int(args.buf, y);
            args.buf.push(b',');
            push_int(args.buf, z);
            args.buf.push(b']');
        }
    }
    if let Some(m) = k.mangled_name {
        args.str("mangled name", p.str(m));
    }
    if let Some(g) = k.process_group {
        args.str("Process Group Name", p.str(g));
    }
}

fn copy_args(args: &mut Obj<'_>, c: &CopyInfo, dur_ns: i64) {
    args.maybe_int("External id", c.external_id);
    args.maybe_int("correlation", c.correlation);
    if let Some(bytes) = c.bytes {
        args.int("bytes", bytes);
        if dur_ns > 0 {
            // Bytes per nanosecond are GB/s; a display figure, so f64 is fine here.
            #[allow(clippy::cast_precision_loss)]
            let gb_per_s = bytes as f64 / dur_ns as f64;
            args.key("memory bandwidth (GB/s)");
            push_f64(args.buf, gb_per_s);
        }
    }
    args.str("copy kind", c.kind.as_str());
    if let Some(m) = c.src_kind {
        args.str("src memory", memory_word(m));
    }
    if let Some(m) = c.dst_kind {
        args.str("dst memory", memory_word(m));
    }
}

fn api_args(args: &mut Obj<'_>, a: &ApiInfo) {
    args.maybe_int("External id", a.external_id);
    args.maybe_int("cbid", a.cbid);
    args.maybe_int("correlation", a.correlation);
}

/// Property names written from the device's own fields (a property with one of these names
/// would clash with them).
const DEVICE_FIELDS: &[&str] = &[
    "id",
    "name",
    "totalGlobalMem",
    "computeMajor",
    "computeMinor",
    "major",
    "minor",
    "memoryBandwidthBytesPerSecond",
];

fn write_device(buf: &mut Vec<u8>, d: &Device) {
    let mut o = Obj::new(buf);
    o.int("id", d.id);
    o.str("name", &d.name);
    if let Some(m) = d.memory_bytes {
        o.int("totalGlobalMem", m);
    }
    if let Some((major, minor)) = d.compute_capability {
        o.int("computeMajor", major);
        o.int("computeMinor", minor);
    }
    if let Some(sms) = d.sm_count
        && !d.properties.iter().any(|(k, _)| k == "numSms")
    {
        o.int("numSms", sms);
    }
    if let Some(bw) = d.memory_bandwidth_bytes_per_s {
        o.int("memoryBandwidthBytesPerSecond", bw);
    }
    for (key, value) in &d.properties {
        if DEVICE_FIELDS.contains(&key.as_str()) {
            continue;
        }
        match value.parse::<i64>() {
            Ok(v) if v.to_string() == *value => o.int(key, v),
            _ => o.str(key, value),
        }
    }
    o.end();
}

/// The top-level `"warpscope"` object (read back by `import::chrome::parse_carried`).
fn write_carried(buf: &mut Vec<u8>, p: &Profile) {
    let mut o = Obj::new(buf);
    o.int("version", 1);
    o.key("source");
    let mut s = o.obj();
    s.str("path", &p.source.path.to_string_lossy());
    s.str("format", p.source.format.as_str());
    s.str("tool", &p.source.tool);
    s.opt_str("tool_version", p.source.tool_version.as_deref());
    s.opt_str("schema_version", p.source.schema_version.as_deref());
    s.key("details");
    write_pairs(s.buf, &p.source.details);
    s.end();
    o.key("origin");
    let mut origin = o.obj();
    origin.int("raw_ns", p.origin.raw_ns);
    origin.key("unix_ns");
    match p.origin.unix_ns {
        Some(v) => push_int(origin.buf, v),
        None => origin.buf.extend_from_slice(b"null"),
    }
    origin.end();
    o.key("labels");
    write_pairs(o.buf, &p.labels);
    o.key("warnings");
    o.buf.push(b'[');
    for (n, w) in p.warnings.iter().enumerate() {
        if n > 0 {
            o.buf.push(b',');
        }
        let mut wo = Obj::new(o.buf);
        wo.str("code", &w.code);
        wo.str("message", &w.message);
        wo.int("count", w.count);
        wo.end();
    }
    o.buf.push(b']');
    o.key("tracks");
    o.buf.push(b'[');
    let mut first = true;
    for t in &p.tracks {
        if matches!(t.key, TrackKey::Async { .. }) {
            continue;
        }
        if !first {
            o.buf.push(b',');
        }
        first = false;
        o.buf.extend_from_slice(b"\n  ");
        let mut to = Obj::new(o.buf);
        match t.key {
            TrackKey::Gpu {
                device,
                context,
                stream,
                lane,
            } => {
                to.key("gpu");
                let mut g = to.obj();
                g.int("device", device);
                g.int("context", context);
                g.int("stream", stream);
                g.str("lane", lane_text(Some(lane)));
                g.end();
            }
            TrackKey::Thread { pid, tid } => {
                to.id("pid", &Id::of(p, pid));
                to.id("tid", &Id::of(p, tid));
            }
            TrackKey::Async { .. } => {}
        }
        to.str("name", &t.name);
        to.key("sort_index");
        match t.sort_index {
            Some(v) => push_int(to.buf, v),
            None => to.buf.extend_from_slice(b"null"),
        }
        to.end();
    }
    o.buf.push(b']');
    o.end();
}

fn write_pairs(buf: &mut Vec<u8>, pairs: &[(String, String)]) {
    buf.push(b'[');
    for (n, (k, v)) in pairs.iter().enumerate() {
        if n > 0 {
            buf.push(b',');
        }
        buf.push(b'[');
        push_str(buf, k);
        buf.push(b',');
        push_str(buf, v);
        buf.push(b']');
    }
    buf.push(b']');
}

/// Writes one JSON object's members, managing the commas.
struct Obj<'b> {
    buf: &'b mut Vec<u8>,
    first: bool,
}

impl<'b> Obj<'b> {
    fn new(buf: &'b mut Vec<u8>) -> Self {
        buf.push(b'{');
        Self { buf, first: true }
    }

    /// Writes `"key":`; the caller writes the value.
    fn key(&mut self, key: &str) {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        push_str(self.buf, key);
        self.buf.push(b':');
    }

    /// Starts an object as the value of the last key.
    fn obj(&mut self) -> Obj<'_> {
        Obj::new(self.buf)
    }

    fn str(&mut self, key: &str, value: &str) {
        self.key(key);
        push_str(self.buf, value);
    }

    fn opt_str(&mut self, key: &str, value: Option<&str>) {
        self.key(key);
        match value {
            Some(v) => push_str(self.buf, v),
            None => self.buf.extend_from_slice(b"null"),
        }
    }

    fn int(&mut self, key: &str, value: impl Into<i128>) {
        self.key(key);
        push_int(self.buf, value);
    }

    /// `key: value` when there is a value; nothing otherwise.
    fn maybe_int(&mut self, key: &str, value: Option<impl Into<i128>>) {
        if let Some(v) = value {
            self.int(key, v);
        }
    }

    /// A time in nanoseconds, written as microseconds with three decimals.
    fn us(&mut self, key: &str, ns: i64) {
        self.key(key);
        push_us(self.buf, ns);
    }

    fn id(&mut self, key: &str, id: &Id) {
        self.key(key);
        match id {
            Id::Int(v) => push_int(self.buf, *v),
            Id::Text(s) => push_str(self.buf, s),
        }
    }

    fn end(self) {
        self.buf.push(b'}');
    }
}

/// Writes an integer in decimal.
fn push_int(buf: &mut Vec<u8>, value: impl Into<i128>) {
    let value: i128 = value.into();
    if value < 0 {
        buf.push(b'-');
    }
    let mut v = value.unsigned_abs();
    let mut digits = [0u8; 40];
    let mut n = digits.len();
    loop {
        n -= 1;
        digits[n] = b'0' + u8::try_from(v % 10).unwrap_or(0);
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[n..]);
}

/// Writes integer nanoseconds as microseconds with exactly three decimals, with integer
/// arithmetic only: `-1234567` → `-1234.567`, `1` → `0.001`.
fn push_us(buf: &mut Vec<u8>, ns: i64) {
    if ns < 0 {
        buf.push(b'-');
    }
    let abs = ns.unsigned_abs();
    push_int(buf, abs / 1000);
    let frac = abs % 1000;
    buf.extend_from_slice(&[
        b'.',
        b'0' + u8::try_from(frac / 100).unwrap_or(0),
        b'0' + u8::try_from(frac / 10 % 10).unwrap_or(0),
        b'0' + u8::try_from(frac % 10).unwrap_or(0),
    ]);
}

/// Writes a float as its shortest round-tripping decimal (`0.1`, `1500000000.0`, `1e-300`);
/// values JSON cannot hold (NaN, infinities) as strings, which warpscope parses back.
fn push_f64(buf: &mut Vec<u8>, v: f64) {
    // Writing to a Vec cannot fail.
    if v.is_finite() {
        let _ = write!(buf, "{v:?}");
    } else {
        let _ = write!(buf, "\"{v}\"");
    }
}

/// Writes a finite `f32` as its own shortest decimal (`0.1`, not `0.10000000149011612`) when
/// reading that as an `f64` and narrowing it gives the same `f32`, as the importer does.
fn push_f32(buf: &mut Vec<u8>, v: f32) {
    let at = buf.len();
    let _ = write!(buf, "{v:?}");
    let back = std::str::from_utf8(&buf[at..])
        .ok()
        .and_then(|t| t.parse::<f64>().ok());
    #[allow(clippy::cast_possible_truncation)]
    if back.map(|b| b as f32) != Some(v) {
        buf.truncate(at);
        push_f64(buf, f64::from(v));
    }
}

/// Writes `s` as a JSON string: quotes, backslashes and control characters escaped, everything
/// else (non-ASCII included) as UTF-8.
fn push_str(buf: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    buf.push(b'"');
    let bytes = s.as_bytes();
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let short: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..0x20 => &[],
            _ => continue,
        };
        buf.extend_from_slice(&bytes[from..i]);
        from = i + 1;
        if short.is_empty() {
            buf.extend_from_slice(b"\\u00");
            buf.push(HEX[usize::from(b >> 4)]);
            buf.push(HEX[usize::from(b & 0xf)]);
        } else {
            buf.extend_from_slice(short);
        }
    }
    buf.extend_from_slice(&bytes[from..]);
    buf.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::chrome::category_kind;

    fn text(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut buf = Vec::new();
        f(&mut buf);
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn times_are_microseconds_with_three_decimals() {
        let us = |ns| text(|b| push_us(b, ns));
        assert_eq!(us(-1_234_567), "-1234.567");
        assert_eq!(us(0), "0.000");
        assert_eq!(us(1), "0.001");
        assert_eq!(us(999), "0.999");
        assert_eq!(us(-1), "-0.001");
        assert_eq!(us(1_000_001), "1000.001");
        assert_eq!(us(i64::MAX), "9223372036854775.807");
        assert_eq!(us(i64::MIN), "-9223372036854775.808");
        for ns in [i64::MIN, -1_234_567, -1, 0, 1, 999, 1_000_001, i64::MAX] {
            assert_eq!(
                crate::time::parse_decimal_scaled(us(ns).as_bytes(), 3),
                Some(ns)
            );
        }
        assert_eq!(text(|b| push_int(b, i128::MIN + 1)).len(), 40);
        assert_eq!(text(|b| push_int(b, u64::MAX)), u64::MAX.to_string());
    }

    #[test]
    fn strings_are_escaped_for_json() {
        let nasty = "a\"b\\c\nd\re\tf\u{8}\u{c}\u{0}\u{1f}\u{7f} é 😀 \u{2028}";
        let json = text(|b| push_str(b, nasty));
        assert_eq!(serde_json::from_str::<String>(&json).unwrap(), nasty);
        assert_eq!(json, serde_json::to_string(nasty).unwrap());
    }

    #[test]
    fn every_kind_has_a_category_the_importer_maps_back() {
        for kind in EventKind::ALL {
            assert_eq!(
                category_kind(category(kind).unwrap_or("")),
                kind,
                "{kind:?}"
            );
        }
    }

    #[test]
    fn floats_round_trip() {
        for v in [0.1, 1.0, -0.0, 1e300, -1e-300, 5e-324, 123_456.789, 1.5e9] {
            let t = text(|b| push_f64(b, v));
            assert_eq!(t.parse::<f64>().unwrap().to_bits(), v.to_bits(), "{t}");
            assert!(serde_json::from_str::<f64>(&t).is_ok(), "{t} is JSON");
        }
        assert_eq!(text(|b| push_f64(b, -1e-300)), "-1e-300");
        assert_eq!(text(|b| push_f32(b, 0.1)), "0.1");
        for v in [
            0.1f32,
            3.333_333_3,
            12.5,
            f32::MAX,
            f32::MIN_POSITIVE,
            1e-45,
        ] {
            let t = text(|b| push_f32(b, v));
            #[allow(clippy::cast_possible_truncation)]
            let back = t.parse::<f64>().unwrap() as f32;
            assert_eq!(back.to_bits(), v.to_bits(), "{t}");
        }
        assert_eq!(text(|b| push_f64(b, f64::NAN)), "\"NaN\"");
        assert_eq!(text(|b| push_f64(b, f64::NEG_INFINITY)), "\"-inf\"");
    }
}
