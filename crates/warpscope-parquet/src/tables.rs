//! The tables of one profile: events, kernels, copies, API calls, flows, memory records,
//! devices, runs. Every row carries `run` and `rank`; events are numbered within a run
//! (`event`), and the other tables refer to them by that number.

use warpscope_core::analysis::flops::{Precision, precision_of_kernel};
use warpscope_core::analysis::memory::attribute;
use warpscope_core::model::memory::NO_TRACK;
use warpscope_core::model::{EventKind, EventRef, FlowKind, MemoryDevice, TrackKey};
use warpscope_core::{Profile, TimeRange};

use crate::RunMeta;
use crate::sink::{Col, ColumnSink, RowScope};

/// The tables, in the order they are written.
pub const TABLES: [&str; 8] = [
    "events",
    "kernels",
    "copies",
    "api_calls",
    "flows",
    "memory",
    "devices",
    "runs",
];

/// `run` and `rank`, the first two columns of every table.
struct RunCols {
    run: Col,
    rank: Col,
}

impl RunCols {
    fn new(t: &mut impl ColumnSink) -> Self {
        Self {
            run: t.i32("run", false),
            rank: t.i64("rank", true),
        }
    }

    fn put(&self, t: &mut impl ColumnSink, meta: RunMeta) {
        t.put_i32(self.run, Some(meta.run));
        t.put_i64(self.rank, meta.rank);
    }
}

/// Where an event is: GPU (device, context, stream) or CPU (process, thread), as columns.
struct PlaceCols {
    device: Col,
    stream: Col,
    process: Col,
    thread: Col,
}

impl PlaceCols {
    fn new(t: &mut impl ColumnSink, cpu: bool) -> Self {
        Self {
            device: t.i32("device", true),
            stream: t.i64("stream", true),
            process: if cpu {
                t.str("process", true)
            } else {
                Col::NONE
            },
            thread: if cpu {
                t.str("thread", true)
            } else {
                Col::NONE
            },
        }
    }

    fn put(&self, t: &mut impl ColumnSink, place: &Place) {
        t.put_i32(self.device, place.device);
        t.put_i64(self.stream, place.stream);
        if self.process != Col::NONE {
            t.put_str(self.process, place.process.as_deref());
            t.put_str(self.thread, place.thread.as_deref());
        }
    }
}

/// Where a track's events ran, as the place columns write it: worked out once per track.
struct Place {
    device: Option<i32>,
    stream: Option<i64>,
    process: Option<String>,
    thread: Option<String>,
}

impl Place {
    fn of(p: &Profile, key: TrackKey) -> Self {
        let (device, stream, process, thread) = match key {
            TrackKey::Gpu { device, stream, .. } => (
                i32::try_from(device).ok(),
                i64::try_from(stream).ok(),
                None,
                None,
            ),
            TrackKey::Thread { pid, tid } => {
                (None, None, Some(p.id_text(pid)), Some(p.id_text(tid)))
            }
            TrackKey::Async { pid, name } => (
                None,
                None,
                Some(p.id_text(pid)),
                Some(p.str(name).to_string()),
            ),
        };
        Self {
            device,
            stream,
            process,
            thread,
        }
    }
}

/// Time, name and number of an event, as columns.
struct EventCols {
    event: Col,
    start: Col,
    dur: Col,
    name: Col,
}

impl EventCols {
    fn new(t: &mut impl ColumnSink) -> Self {
        Self {
            event: t.i64("event", false),
            start: t.i64("start_ns", false),
            dur: t.i64("dur_ns", false),
            name: t.str("name", false),
        }
    }
}

fn to_i32(v: Option<u32>) -> Option<i32> {
    v.and_then(|v| i32::try_from(v).ok())
}

fn to_i64(v: Option<u64>) -> Option<i64> {
    v.and_then(|v| i64::try_from(v).ok())
}

fn flow_kind(k: FlowKind) -> &'static str {
    match k {
        FlowKind::Launch => "launch",
        FlowKind::ForwardBackward => "forward_backward",
        FlowKind::Other => "other",
    }
}

/// Every table of `p` as run `meta`, in [`TABLES`] order, each pushed into the sink `make`
/// gives for its name; `scope` says which rows are kept. A sink that is not
/// [`ColumnSink::wanted`] gets its columns but no rows.
#[allow(clippy::too_many_lines)] // one pass over the events fills four tables side by side
pub fn build_tables<S: ColumnSink>(
    p: &Profile,
    meta: RunMeta,
    scope: RowScope,
    mut make: impl FnMut(&'static str) -> S,
) -> Vec<(&'static str, S)> {
    // Events.
    let mut events = make("events");
    let e_run = RunCols::new(&mut events);
    let e_ev = EventCols::new(&mut events);
    let e_kind = events.str("kind", false);
    let e_track = events.i32("track", false);
    let e_place = PlaceCols::new(&mut events, true);
    let e_depth = events.i32("depth", false);
    // FLOPs (docs/flops.md): what an operator counts, and each kernel's share of its owner's.
    let e_flops = events.i64("flops", true);
    let e_moved = events.i64("moved_bytes", true);
    // Kernels.
    let mut kernels = make("kernels");
    let k_run = RunCols::new(&mut kernels);
    let k_ev = EventCols::new(&mut kernels);
    let k_place = PlaceCols::new(&mut kernels, false);
    let k_grid = [
        kernels.i32("grid_x", true),
        kernels.i32("grid_y", true),
        kernels.i32("grid_z", true),
    ];
    let k_block = [
        kernels.i32("block_x", true),
        kernels.i32("block_y", true),
        kernels.i32("block_z", true),
    ];
    let k_regs = kernels.i32("registers_per_thread", true);
    let k_shared = kernels.i64("shared_memory_bytes", true);
    let k_static = kernels.i64("static_shared_bytes", true);
    let k_dynamic = kernels.i64("dynamic_shared_bytes", true);
    let k_occ = kernels.f64("achieved_occupancy_pct", true);
    let k_bps = kernels.f64("blocks_per_sm", true);
    let k_wps = kernels.f64("warps_per_sm", true);
    let k_corr = kernels.i64("correlation", true);
    let k_ext = kernels.i64("external_id", true);
    let k_group = kernels.str("process_group", true);
    let k_mangled = kernels.str("mangled_name", true);
    let k_flops = kernels.f64("flops", true);
    let k_moved = kernels.f64("moved_bytes", true);
    let k_precision = kernels.str("precision", true);
    let k_operator = kernels.i64("operator_event", true);
    let flops = warpscope_core::analysis::flops::attribute(p, TimeRange::ALL);
    // The events row of every track's first event, for references to operators.
    let track_first: Vec<i64> = p
        .tracks
        .iter()
        .scan(0i64, |next, t| {
            let first = *next;
            *next += i64::try_from(t.events.len()).unwrap_or(i64::MAX);
            Some(first)
        })
        .collect();
    // Copies and sets.
    let mut copies = make("copies");
    let c_run = RunCols::new(&mut copies);
    let c_ev = EventCols::new(&mut copies);
    let c_place = PlaceCols::new(&mut copies, false);
    let c_event_kind = copies.str("kind", false);
    let c_copy_kind = copies.str("copy_kind", false);
    let c_activity = copies.str("activity", false);
    let c_bytes = copies.i64("bytes", true);
    let c_src = copies.str("src_kind", true);
    let c_dst = copies.str("dst_kind", true);
    let c_corr = copies.i64("correlation", true);
    // API calls.
    let mut api = make("api_calls");
    let a_run = RunCols::new(&mut api);
    let a_ev = EventCols::new(&mut api);
    let a_kind = api.str("kind", false);
    let a_place = PlaceCols::new(&mut api, true);
    let a_corr = api.i64("correlation", true);
    let a_cbid = api.i32("cbid", true);
    let a_ext = api.i64("external_id", true);

    let (events_wanted, kernels_wanted, copies_wanted, api_wanted) = (
        events.wanted(),
        kernels.wanted(),
        copies.wanted(),
        api.wanted(),
    );
    let mut first_event: Vec<i64> = Vec::with_capacity(p.tracks.len());
    let mut next = 0i64;
    for (t, track) in p.tracks.iter().enumerate() {
        first_event.push(next);
        let ev = &track.events;
        let gpu = track.key.is_gpu();
        let place = Place::of(p, track.key);
        for i in 0..ev.len() {
            let id = next + i64::try_from(i).unwrap_or(i64::MAX);
            let (start, dur, kind) = (ev.start_ns[i], ev.dur_ns[i], ev.kind[i]);
            if !scope.keeps_event(start, dur) {
                continue;
            }
            let name = p.str(ev.name[i]);
            let put_ev = |tb: &mut S, c: &EventCols| {
                tb.put_i64(c.event, Some(id));
                tb.put_i64(c.start, Some(start));
                tb.put_i64(c.dur, Some(dur));
                tb.put_str(c.name, Some(name));
            };
            let here = EventRef {
                track: u32::try_from(t).unwrap_or(u32::MAX),
                index: u32::try_from(i).unwrap_or(u32::MAX),
            };
            if events_wanted {
                e_run.put(&mut events, meta);
                put_ev(&mut events, &e_ev);
                events.put_str(e_kind, Some(kind.as_str()));
                events.put_i32(e_track, i32::try_from(t).ok());
                e_place.put(&mut events, &place);
                events.put_i32(e_depth, Some(i32::from(ev.depth[i])));
                let call = (kind == EventKind::CpuOp)
                    .then(|| flops.call(here))
                    .flatten();
                let count = |v: Option<u64>| v.and_then(|v| i64::try_from(v).ok());
                events.put_i64(e_flops, count(call.and_then(|c| c.counted_flops())));
                events.put_i64(e_moved, count(call.and_then(|c| c.counted_bytes())));
                events.end_row();
            }

            if gpu && kind == EventKind::Kernel {
                if !kernels_wanted {
                    continue;
                }
                let k = p.kernel_info(track, i).unwrap_or_default();
                k_run.put(&mut kernels, meta);
                put_ev(&mut kernels, &k_ev);
                k_place.put(&mut kernels, &place);
                for d in 0..3 {
                    kernels.put_i32(k_grid[d], to_i32(k.grid.map(|g| g[d])));
                    kernels.put_i32(k_block[d], to_i32(k.block.map(|b| b[d])));
                }
                kernels.put_i32(k_regs, to_i32(k.registers_per_thread));
                kernels.put_i64(k_shared, to_i64(k.shared_memory_bytes));
                kernels.put_i64(k_static, to_i64(k.static_shared_bytes));
                kernels.put_i64(k_dynamic, to_i64(k.dynamic_shared_bytes));
                kernels.put_f64(k_occ, k.occupancy_pct.map(f64::from));
                kernels.put_f64(k_bps, k.blocks_per_sm.map(f64::from));
                kernels.put_f64(k_wps, k.warps_per_sm.map(f64::from));
                kernels.put_i64(k_corr, to_i64(k.correlation));
                kernels.put_i64(k_ext, to_i64(k.external_id));
                kernels.put_str(k_group, k.process_group.map(|g| p.str(g)));
                kernels.put_str(k_mangled, k.mangled_name.map(|m| p.str(m)));
                let owner = flops
                    .kernel(here)
                    .and_then(|s| flops.calls.get(s.call as usize));
                kernels.put_f64(k_flops, flops.kernel_flops(here));
                kernels.put_f64(k_moved, flops.kernel_bytes(here));
                let precision = precision_of_kernel(name).or(owner.and_then(|c| c.precision));
                kernels.put_str(k_precision, precision.map(Precision::as_str));
                kernels.put_i64(
                    k_operator,
                    owner.map(|c| track_first[c.event.track as usize] + i64::from(c.event.index)),
                );
                kernels.end_row();
            } else if gpu
                && (kind.is_gpu_activity()
                    || (kind == EventKind::UnifiedMemory && p.copy_info(track, i).is_some()))
            {
                if !copies_wanted {
                    continue;
                }
                let c = p.copy_info(track, i);
                let copy_kind = if kind == EventKind::Memset {
                    warpscope_core::model::CopyKind::Memset
                } else {
                    c.map_or(warpscope_core::model::CopyKind::Unknown, |c| c.kind)
                };
                c_run.put(&mut copies, meta);
                put_ev(&mut copies, &c_ev);
                c_place.put(&mut copies, &place);
                copies.put_str(c_event_kind, Some(kind.as_str()));
                copies.put_str(c_copy_kind, Some(copy_kind.as_str()));
                copies.put_str(c_activity, Some(&copy_kind.activity_name()));
                copies.put_i64(c_bytes, to_i64(c.and_then(|c| c.bytes)));
                copies.put_str(
                    c_src,
                    c.and_then(|c| c.src_kind)
                        .map(|k| format!("{k:?}"))
                        .as_deref(),
                );
                copies.put_str(
                    c_dst,
                    c.and_then(|c| c.dst_kind)
                        .map(|k| format!("{k:?}"))
                        .as_deref(),
                );
                copies.put_i64(c_corr, to_i64(c.and_then(|c| c.correlation)));
                copies.end_row();
            } else if kind.is_api() && api_wanted {
                let a = p.api_info(track, i).unwrap_or_default();
                a_run.put(&mut api, meta);
                put_ev(&mut api, &a_ev);
                api.put_str(a_kind, Some(kind.as_str()));
                a_place.put(&mut api, &place);
                api.put_i64(a_corr, to_i64(a.correlation));
                api.put_i32(a_cbid, to_i32(a.cbid));
                api.put_i64(a_ext, to_i64(a.external_id));
                api.end_row();
            }
        }
        next += i64::try_from(ev.len()).unwrap_or(i64::MAX);
    }

    // Flows, by event number.
    let mut flows = make("flows");
    let f_run = RunCols::new(&mut flows);
    let f_from = flows.i64("from_event", false);
    let f_to = flows.i64("to_event", false);
    let f_kind = flows.str("kind", false);
    let number = |e: warpscope_core::model::EventRef| {
        first_event
            .get(e.track as usize)
            .map(|f| f + i64::from(e.index))
    };
    let kept = |e: EventRef| {
        p.tracks.get(e.track as usize).is_some_and(|t| {
            let i = e.index as usize;
            i < t.events.len() && scope.keeps_event(t.events.start_ns[i], t.events.dur_ns[i])
        })
    };
    let flows_wanted = flows.wanted();
    for f in p.flows.iter().filter(|_| flows_wanted) {
        let (Some(from), Some(to)) = (number(f.from), number(f.to)) else {
            continue;
        };
        if !(kept(f.from) && kept(f.to)) {
            continue;
        }
        f_run.put(&mut flows, meta);
        flows.put_i64(f_from, Some(from));
        flows.put_i64(f_to, Some(to));
        flows.put_str(f_kind, Some(flow_kind(f.kind)));
        flows.end_row();
    }

    let memory = memory_table(p, meta, scope, make("memory"), number);

    // Devices.
    let mut devices = make("devices");
    let d_run = RunCols::new(&mut devices);
    let d_id = devices.i32("device", false);
    let d_name = devices.str("name", false);
    let d_major = devices.i32("compute_major", true);
    let d_minor = devices.i32("compute_minor", true);
    let d_sms = devices.i32("sm_count", true);
    let d_mem = devices.i64("memory_bytes", true);
    let devices_wanted = devices.wanted();
    for d in p.devices.iter().filter(|_| devices_wanted) {
        d_run.put(&mut devices, meta);
        devices.put_i32(d_id, i32::try_from(d.id).ok());
        devices.put_str(d_name, Some(&d.name));
        devices.put_i32(d_major, to_i32(d.compute_capability.map(|c| c.0)));
        devices.put_i32(d_minor, to_i32(d.compute_capability.map(|c| c.1)));
        devices.put_i32(d_sms, to_i32(d.sm_count));
        devices.put_i64(d_mem, to_i64(d.memory_bytes));
        devices.end_row();
    }

    // The run.
    let mut runs = make("runs");
    let r_run = RunCols::new(&mut runs);
    let r_world = runs.i64("world_size", true);
    let r_file = runs.str("file", false);
    let r_format = runs.str("format", false);
    let r_tool = runs.str("tool", false);
    let r_origin = runs.i64("unix_origin_ns", true);
    let r_events = runs.i64("events", false);
    if runs.wanted() {
        r_run.put(&mut runs, meta);
        runs.put_i64(r_world, meta.world_size);
        runs.put_str(r_file, Some(&p.source.path.display().to_string()));
        runs.put_str(r_format, Some(p.source.format.as_str()));
        runs.put_str(r_tool, Some(&p.source.tool));
        runs.put_i64(r_origin, p.origin.unix_ns);
        runs.put_i64(r_events, Some(next));
        runs.end_row();
    }

    vec![
        ("events", events),
        ("kernels", kernels),
        ("copies", copies),
        ("api_calls", api),
        ("flows", flows),
        ("memory", memory),
        ("devices", devices),
        ("runs", runs),
    ]
}

/// The memory records of `p` (`Profile::memory`), one row each in time order, numbered
/// `record` from 0, with the thread track and the operators `analysis::memory` gives them;
/// `event_number` turns an operator's event into its `event` number. A profile without memory
/// records gives a table without rows, as for every other table.
fn memory_table<S: ColumnSink>(
    p: &Profile,
    meta: RunMeta,
    scope: RowScope,
    mut t: S,
    event_number: impl Fn(EventRef) -> Option<i64>,
) -> S {
    let run = RunCols::new(&mut t);
    let record = t.i64("record", false);
    let time = t.i64("time_ns", false);
    let device = t.i32("device", true);
    let action = t.str("action", false);
    let addr = t.i64("addr", false);
    let bytes = t.i64("bytes", false);
    let allocated = t.i64("allocated_bytes", false);
    let reserved = t.i64("reserved_bytes", false);
    let stream = t.i64("stream", false);
    let track = t.i32("track", true);
    let process = t.str("process", true);
    let thread = t.str("thread", true);
    let operator = t.str("operator", false);
    let stack = t.str("operator_stack", false);
    let operator_event = t.i64("operator_event", true);

    let ev = &p.memory.events;
    if ev.is_empty() || !t.wanted() {
        return t;
    }
    let ops = attribute(p);
    // Where each thread track is, worked out the first time a record names it.
    let mut places: Vec<Option<Place>> = Vec::new();
    places.resize_with(p.tracks.len(), || None);
    for i in 0..ev.len() {
        if !scope.keeps_time(ev.time_ns[i]) {
            continue;
        }
        run.put(&mut t, meta);
        t.put_i64(record, i64::try_from(i).ok());
        t.put_i64(time, Some(ev.time_ns[i]));
        t.put_i32(
            device,
            match ev.device[i] {
                MemoryDevice::Cpu => None,
                MemoryDevice::Gpu(d) => i32::try_from(d).ok(),
            },
        );
        t.put_str(action, Some(ev.action[i].as_str()));
        // An address's 64 bits as a signed integer: real addresses (below 2^57) read as written.
        t.put_i64(addr, Some(i64::from_ne_bytes(ev.addr[i].to_ne_bytes())));
        t.put_i64(bytes, Some(i64::try_from(ev.bytes[i]).unwrap_or(i64::MAX)));
        t.put_i64(allocated, Some(ev.allocated_bytes[i]));
        t.put_i64(reserved, Some(ev.reserved_bytes[i]));
        t.put_i64(
            stream,
            Some(i64::try_from(ev.stream[i]).unwrap_or(i64::MAX)),
        );
        let tr = ev.track[i];
        let place = match (places.get_mut(tr as usize), p.tracks.get(tr as usize)) {
            (Some(slot), Some(on)) if tr != NO_TRACK => {
                Some(&*slot.get_or_insert_with(|| Place::of(p, on.key)))
            }
            _ => None,
        };
        t.put_i32(track, place.and(i32::try_from(tr).ok()));
        t.put_str(process, place.and_then(|pl| pl.process.as_deref()));
        t.put_str(thread, place.and_then(|pl| pl.thread.as_deref()));
        t.put_str(operator, Some(ops.name(ops.innermost(i))));
        t.put_str(stack, Some(&ops.stack_text(i)));
        t.put_i64(
            operator_event,
            ops.operator_event(i).and_then(&event_number),
        );
        t.end_row();
    }
    t
}
