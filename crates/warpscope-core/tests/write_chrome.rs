//! Round trips through the Chrome trace writer: a profile is written with
//! `write::save_chrome_trace`, read back with the ordinary importer (`import_file`), and
//! compared with the original: tracks (key and name), events (start, duration, name, kind,
//! depth), kernel/copy/API details, flows, counters, markers, devices, labels, source and
//! warnings. What the format cannot keep is listed in `write::chrome`'s module docs; the
//! comparison here allows exactly that and nothing else.
//!
//! Covers a profile built by hand with every event kind, every profile in `sample_profiles/`,
//! and, when `../shared/samples` exists, one file of each other format.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use warpscope_core::builder::ProfileBuilder;
use warpscope_core::model::{
    ApiInfo, CopyInfo, CopyKind, CounterTrack, Device, DistributedInfo, EventKind, FlowKind,
    Format, GpuLane, KernelInfo, Marker, MemoryKind, Profile, TraceId, TrackKey,
};
use warpscope_core::write::{WriteError, save_chrome_trace, write_chrome_trace};
use warpscope_core::{Progress, TimeRange, import_file};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

/// A fresh directory for one test's files.
fn fixture_dir(test: &str) -> PathBuf {
    let n = NEXT_DIR.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "warpscope-write-chrome-{}-{n}-{test}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Saves `p` as `name` in a fresh directory and imports it again.
fn round_trip(p: &Profile, name: &str) -> Profile {
    let dir = fixture_dir(name);
    let path = dir.join(name);
    save_chrome_trace(p, &path).unwrap_or_else(|e| panic!("{e}"));
    let back = import_file(&path, &Progress::new()).unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(&dir);
    back
}

fn id_text(p: &Profile, id: TraceId) -> String {
    match id {
        TraceId::Int(v) => format!("{v}"),
        TraceId::Name(s) => format!("{:?}", p.str(s)),
    }
}

/// A track key as text, independent of the profile's string ids.
fn key_text(p: &Profile, key: &TrackKey) -> String {
    match *key {
        TrackKey::Gpu {
            device,
            context,
            stream,
            lane,
        } => format!("gpu {device}/{context}/{stream} {lane:?}"),
        TrackKey::Thread { pid, tid } => {
            format!("thread {}/{}", id_text(p, pid), id_text(p, tid))
        }
        TrackKey::Async { pid, name } => format!("async {}/{:?}", id_text(p, pid), p.str(name)),
    }
}

/// Kernel details with the mangled name and the process group as text.
fn kernel_text(
    p: &Profile,
    k: Option<&KernelInfo>,
) -> (KernelInfo, Option<String>, Option<String>) {
    let mut k = k.cloned().unwrap_or_default();
    let mangled = k.mangled_name.take().map(|m| p.str(m).to_string());
    let group = k.process_group.take().map(|g| p.str(g).to_string());
    (k, mangled, group)
}

/// One event with everything the round trip must keep.
#[derive(Debug, PartialEq)]
struct Ev {
    start_ns: i64,
    dur_ns: i64,
    name: String,
    kind: EventKind,
    depth: u16,
    kernel: Option<(KernelInfo, Option<String>, Option<String>)>,
    copy: Option<CopyInfo>,
    api: Option<ApiInfo>,
}

fn events(p: &Profile, index: usize) -> Vec<Ev> {
    let t = &p.tracks[index];
    let ev = &t.events;
    (0..ev.len())
        .map(|i| Ev {
            start_ns: ev.start_ns[i],
            dur_ns: ev.dur_ns[i],
            name: p.str(ev.name[i]).to_string(),
            kind: ev.kind[i],
            depth: ev.depth[i],
            kernel: (ev.kind[i] == EventKind::Kernel)
                .then(|| kernel_text(p, p.kernel_info(t, i).as_ref())),
            copy: p.copy_info(t, i),
            api: p.api_info(t, i),
        })
        .collect()
}

/// Tracks with events, by key text: (index, name, sort index).
fn tracks(p: &Profile) -> BTreeMap<String, (usize, String, Option<i64>)> {
    p.tracks
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.events.is_empty())
        .map(|(i, t)| (key_text(p, &t.key), (i, t.name.clone(), t.sort_index)))
        .collect()
}

type FlowText = (String, usize, String, usize, String);

/// Flows whose ends are on thread or GPU tracks, by key text.
fn flows(p: &Profile) -> BTreeSet<FlowText> {
    p.flows
        .iter()
        .filter(|f| {
            [f.from, f.to]
                .iter()
                .all(|e| !matches!(p.tracks[e.track as usize].key, TrackKey::Async { .. }))
        })
        .map(|f| {
            let key = |track: u32| key_text(p, &p.tracks[track as usize].key);
            (
                key(f.from.track),
                f.from.index as usize,
                key(f.to.track),
                f.to.index as usize,
                format!("{:?}", f.kind),
            )
        })
        .collect()
}

fn counters(p: &Profile) -> Vec<(String, String, Vec<i64>, Vec<u64>)> {
    p.counters
        .iter()
        .map(|c| {
            (
                id_text(p, c.pid),
                c.name.clone(),
                c.time_ns.clone(),
                c.value.iter().map(|v| v.to_bits()).collect(),
            )
        })
        .collect()
}

/// Compares `back` (written and imported again) with `orig`, allowing only the documented
/// losses. `what` names the profile in failure messages.
fn assert_round_trip(orig: &Profile, back: &Profile, what: &str) {
    // Source: format and file facts are the new file's; the rest is carried.
    assert_eq!(back.source.format, Format::ChromeJson, "{what}");
    assert_eq!(back.source.tool, orig.source.tool, "{what}");
    assert_eq!(back.source.tool_version, orig.source.tool_version, "{what}");
    assert_eq!(
        back.source.schema_version, orig.source.schema_version,
        "{what}"
    );
    let mut details = orig.source.details.clone();
    for (key, value) in [
        (
            "original path",
            orig.source.path.to_string_lossy().into_owned(),
        ),
        ("original format", orig.source.format.as_str().to_string()),
    ] {
        if !details.iter().any(|(k, _)| k == key) {
            details.push((key.to_string(), value));
        }
    }
    assert_eq!(back.source.details, details, "{what}");
    assert_eq!(back.origin, orig.origin, "{what}");
    assert_eq!(back.labels, orig.labels, "{what}");
    assert_eq!(back.distributed, orig.distributed, "{what}");
    assert_eq!(
        back.warnings, orig.warnings,
        "{what}: the original warnings, and no new ones"
    );
    // Memory: every allocation, free and failed allocation, with its thread, so the report
    // (operators included) is the same.
    if orig.memory.source == warpscope_core::model::MemorySource::KinetoEvents {
        assert_eq!(back.memory.source, orig.memory.source, "{what}");
        assert_eq!(back.memory.events.len(), orig.memory.events.len(), "{what}");
        assert_eq!(
            warpscope_core::analysis::memory::memory_report(back, TimeRange::ALL, 0),
            warpscope_core::analysis::memory::memory_report(orig, TimeRange::ALL, 0),
            "{what}: memory"
        );
    }
    let names = |p: &Profile| -> Vec<(String, String)> {
        p.process_names
            .iter()
            .map(|(pid, n)| (id_text(p, *pid), n.clone()))
            .collect()
    };
    assert_eq!(names(back), names(orig), "{what}");

    // Devices: a SM count without a numSms property comes back with one.
    assert_eq!(back.devices.len(), orig.devices.len(), "{what}");
    for (d, b) in orig.devices.iter().zip(&back.devices) {
        assert_eq!(
            (d.id, &d.name, d.compute_capability, d.sm_count),
            (b.id, &b.name, b.compute_capability, b.sm_count),
            "{what}"
        );
        assert_eq!(d.memory_bytes, b.memory_bytes, "{what}");
        assert_eq!(
            d.memory_bandwidth_bytes_per_s, b.memory_bandwidth_bytes_per_s,
            "{what}"
        );
        let mut props = d.properties.clone();
        if let Some(sms) = d.sm_count
            && !props.iter().any(|(k, _)| k == "numSms")
        {
            props.insert(0, ("numSms".to_string(), sms.to_string()));
        }
        assert_eq!(b.properties, props, "{what}: device {}", d.id);
    }

    // Tracks and their events.
    let (ot, bt) = (tracks(orig), tracks(back));
    assert_eq!(
        ot.keys().collect::<Vec<_>>(),
        bt.keys().collect::<Vec<_>>(),
        "{what}: track keys"
    );
    for (key, (oi, oname, osort)) in &ot {
        let (bi, bname, bsort) = &bt[key];
        assert_eq!(oname, bname, "{what}: name of {key}");
        assert_eq!(osort, bsort, "{what}: sort index of {key}");
        let (oe, be) = (events(orig, *oi), events(back, *bi));
        assert_eq!(oe.len(), be.len(), "{what}: events on {key}");
        let async_track = key.starts_with("async");
        for (n, (o, b)) in oe.iter().zip(&be).enumerate() {
            // Documented: negative durations become 0, events without details get empty
            // ones, async events are slices or instants.
            let mut o_fixed = Ev {
                dur_ns: o.dur_ns.max(0),
                kernel: o.kernel.clone(),
                copy: o.copy,
                api: o.api,
                name: o.name.clone(),
                ..*o
            };
            if async_track && o.kind != EventKind::Instant {
                o_fixed.kind = EventKind::Slice;
            }
            if matches!(b.kind, EventKind::Memcpy | EventKind::Memset) && o.copy.is_none() {
                o_fixed.copy.clone_from(&b.copy);
            }
            assert_eq!(&o_fixed, b, "{what}: event {n} on {key}");
        }
    }

    let (of, bf) = (flows(orig), flows(back));
    assert_eq!(bf.len(), of.len(), "{what}: flow count");
    assert_eq!(bf, of, "{what}: flows");
    let kept = |p: &Profile| {
        p.flows
            .iter()
            .filter(|f| {
                [f.from, f.to]
                    .iter()
                    .all(|e| !matches!(p.tracks[e.track as usize].key, TrackKey::Async { .. }))
            })
            .count()
    };
    assert_eq!(kept(back), kept(orig), "{what}: flows, duplicates included");
    assert_eq!(counters(back), counters(orig), "{what}: counters");
    let markers = |p: &Profile| -> Vec<(i64, String)> {
        p.markers
            .iter()
            .map(|m| (m.time_ns, m.name.clone()))
            .collect()
    };
    assert_eq!(markers(back), markers(orig), "{what}: markers");
    assert_eq!(back.event_count(), orig.event_count(), "{what}");
}

// ---------------------------------------------------------------------------------------------
// (a) A profile with everything
// ---------------------------------------------------------------------------------------------

/// Interns `name` and pushes an event without details.
fn push_named(
    b: &mut ProfileBuilder,
    track: warpscope_core::builder::TrackId,
    start_ns: i64,
    dur_ns: i64,
    name: &str,
    kind: EventKind,
) {
    let name = b.intern(name);
    b.push(track, start_ns, dur_ns, name, kind);
}

const ORIGIN_RAW_NS: i64 = 1_700_000_000_123_456_789;

fn gpu(device: u32, context: u32, stream: u64, lane: GpuLane) -> TrackKey {
    TrackKey::Gpu {
        device,
        context,
        stream,
        lane,
    }
}

/// A live run with every event kind, nesting, details, flows of every kind, a counter, a
/// marker, two devices, labels, warnings and awkward names and times.
#[allow(clippy::too_many_lines)]
fn everything_profile() -> Profile {
    let mut b = ProfileBuilder::new("/runs/lab run 1.live".into(), Format::Live);
    b.source.tool = "warpscope live".to_string();
    b.source.tool_version = Some("0.1.0".to_string());
    b.source.details = vec![
        ("CUDA driver".to_string(), "13.0".to_string()),
        ("scenario".to_string(), "saxpy \"fast\" path\\n".to_string()),
    ];
    b.labels = vec![
        ("batch".to_string(), "32".to_string()),
        ("precision".to_string(), "fp32 é".to_string()),
    ];
    b.origin_raw_ns = Some(ORIGIN_RAW_NS);
    b.unix_offset_ns = Some(0);
    b.distributed = Some(DistributedInfo {
        backend: Some("nccl".to_string()),
        rank: Some(1),
        world_size: Some(2),
    });
    b.devices = vec![
        Device {
            id: 0,
            name: "NVIDIA H100 80GB HBM3".to_string(),
            compute_capability: Some((9, 0)),
            sm_count: Some(132),
            memory_bytes: Some(85_029_158_912),
            memory_bandwidth_bytes_per_s: Some(3_352_320_000_000),
            properties: vec![
                ("maxThreadsPerBlock".to_string(), "1024".to_string()),
                ("numSms".to_string(), "132".to_string()),
                ("driver".to_string(), "580.65".to_string()),
                ("padded".to_string(), "007".to_string()),
            ],
        },
        Device {
            id: 1,
            name: "Tesla \"V100\"".to_string(),
            compute_capability: Some((7, 0)),
            sm_count: Some(80),
            memory_bytes: None,
            memory_bandwidth_bytes_per_s: None,
            properties: Vec::new(),
        },
    ];
    let pid = TraceId::Int(4242);
    let spans = TraceId::Name(b.intern("Spans"));
    b.process_names = vec![
        (pid, "python3 \"train.py\"".to_string()),
        (spans, "Spans".to_string()),
    ];
    b.warn(
        "cupti_missing",
        2,
        "CUPTI was not found; \"kernels\" timed with events only",
    );
    b.warn("other", 1, "a second problem");

    let t0 = ORIGIN_RAW_NS;
    let cpu = b.track(TrackKey::Thread {
        pid,
        tid: TraceId::Int(4243),
    });
    b.track_mut(cpu).name = "thread 4243 (python3) / thread 4243 (pt_autograd_0)".to_string();
    b.track_mut(cpu).sort_index = Some(3);
    let api_tid = b.intern("CUDA API");
    let api_track = b.track(TrackKey::Thread {
        pid,
        tid: TraceId::Name(api_tid),
    });
    b.track_mut(api_track).name = " CUDA API \t(weird \"name\") ".to_string();
    let host_um = b.intern("unified memory (no device)");
    let host_um_track = b.track(TrackKey::Thread {
        pid,
        tid: TraceId::Name(host_um),
    });
    b.track_mut(host_um_track).name = "unified memory (no device)".to_string();
    let profiler_tid = b.intern("PyTorch Profiler");
    let span_track = b.track(TrackKey::Thread {
        pid: spans,
        tid: TraceId::Name(profiler_tid),
    });
    b.track_mut(span_track).name = "PyTorch Profiler".to_string();
    let async_name = b.intern("dataloader fetch");
    let async_track = b.track(TrackKey::Async {
        pid,
        name: async_name,
    });
    b.track_mut(async_track).name = "dataloader fetch".to_string();
    let work0 = b.track(gpu(0, 1, 7, GpuLane::Work));
    b.track_mut(work0).name = "stream 7 (compute)".to_string();
    let ann0 = b.track(gpu(0, 1, 7, GpuLane::Annotations));
    b.track_mut(ann0).name = "stream 7 sync".to_string();
    let work1 = b.track(gpu(1, 2, 0xFFFF_FFFF, GpuLane::Work));
    b.track_mut(work1).name = "context 2".to_string();
    let um1 = b.track(gpu(1, 0, 0, GpuLane::UnifiedMemory));
    b.track_mut(um1).name = "unified memory".to_string();

    // CPU: nested operators, odd and negative times.
    let name = |b: &mut ProfileBuilder, s: &str| b.intern(s);
    let step = name(&mut b, "ProfilerStep#1");
    let op = name(&mut b, "aten::linear");
    let mm = name(&mut b, "aten::mm \"quoted\" \\ back\u{1}slash ünïcode 😀");
    let py = name(&mut b, "train.py(12): forward");
    let launch = name(&mut b, "cudaLaunchKernel");
    let memcpy_api = name(&mut b, "cudaMemcpyAsync");
    let memset_api = name(&mut b, "cudaMemsetAsync");
    let drv = name(&mut b, "cuLaunchKernel");
    let over = name(&mut b, "CUPTI overhead");
    let inst = name(&mut b, "[mark]");
    let slice = name(&mut b, "plain slice");
    let nvtx = name(&mut b, "nvtx range");
    let late_op = name(&mut b, "aten::add");
    b.push(
        cpu,
        t0 - 5_000,
        1_000_001 + 5_000,
        step,
        EventKind::UserAnnotation,
    ); // starts before origin
    b.push(cpu, t0 - 4_999, 999, py, EventKind::PythonFunction);
    b.push(cpu, t0 - 3_000, 500_000, op, EventKind::CpuOp);
    b.push(cpu, t0 - 3_000, 400_000, mm, EventKind::CpuOp); // same start as its parent
    b.push(cpu, t0 + 1, 999, nvtx, EventKind::Nvtx);
    b.push(cpu, t0 + 1, 0, inst, EventKind::Instant);
    b.push(cpu, t0 + 600_000, 1, late_op, EventKind::CpuOp);
    b.push(cpu, t0 + 700_000, 10, over, EventKind::Overhead);
    b.push(cpu, t0 + 800_000, 0, slice, EventKind::Slice);
    let api = |c: u64, cbid: u32| ApiInfo {
        correlation: Some(c),
        cbid: Some(cbid),
        external_id: Some(c + 1000),
    };
    b.push_api(
        api_track,
        t0 + 10,
        5_000,
        launch,
        EventKind::Runtime,
        api(11, 211),
        0,
    );
    b.push_api(
        api_track,
        t0 + 12,
        3_000,
        drv,
        EventKind::Driver,
        api(14, 307),
        0,
    );
    b.push_api(
        api_track,
        t0 + 6_000,
        2_000,
        memcpy_api,
        EventKind::Runtime,
        api(12, 41),
        0,
    );
    b.push_api(
        api_track,
        t0 + 9_000,
        1_001,
        memset_api,
        EventKind::Runtime,
        api(13, 49),
        0,
    );
    push_named(
        &mut b,
        span_track,
        t0 - 5_000,
        2_000_000,
        "PyTorch Profiler (0)",
        EventKind::Slice,
    );

    // Async ranges that overlap without nesting, and an instant.
    b.push(async_track, t0 + 100, 1_000, async_name, EventKind::Slice);
    b.push(async_track, t0 + 600, 1_000, async_name, EventKind::Slice);
    b.push(async_track, t0 + 5_000, 0, async_name, EventKind::Instant);

    // GPU work with every detail.
    let kernel = name(&mut b, "void gemm<float>(float*, \"x\")");
    let mangled = name(&mut b, "_Z4gemmIfEvPf");
    let group = name(&mut b, "default_pg");
    b.push_kernel(
        work0,
        t0 + 20_000,
        1_000_001,
        kernel,
        KernelInfo {
            grid: Some([132, 2, 1]),
            block: Some([256, 1, 1]),
            registers_per_thread: Some(96),
            static_shared_bytes: Some(1024),
            dynamic_shared_bytes: Some(49_152),
            shared_memory_bytes: Some(50_176),
            occupancy_pct: Some(12.5),
            blocks_per_sm: Some(0.1),
            warps_per_sm: Some(3.3333333),
            correlation: Some(11),
            external_id: Some(1011),
            mangled_name: Some(mangled),
            process_group: Some(group),
        },
        0,
    );
    let copy_name = name(&mut b, "Memcpy HtoD (Pageable -> Device)");
    b.push_copy(
        work0,
        t0 + 8_000,
        999,
        copy_name,
        EventKind::Memcpy,
        CopyInfo {
            kind: CopyKind::HtoD,
            bytes: Some(4_194_304),
            src_kind: Some(MemoryKind::Pageable),
            dst_kind: Some(MemoryKind::Device),
            correlation: Some(12),
            external_id: Some(1012),
        },
        0,
    );
    // nvprof-style names say nothing of the memory kinds: the args carry them.
    let set_name = name(&mut b, "[CUDA memset]");
    b.push_copy(
        work0,
        t0 + 10_500,
        1,
        set_name,
        EventKind::Memset,
        CopyInfo {
            kind: CopyKind::Memset,
            bytes: Some(0),
            src_kind: None,
            dst_kind: Some(MemoryKind::DeviceStatic),
            correlation: Some(13),
            external_id: None,
        },
        0,
    );
    let ann = name(&mut b, "forward");
    b.push(ann0, t0 + 19_999, 1_000_003, ann, EventKind::GpuAnnotation);
    push_named(
        &mut b,
        ann0,
        t0 + 1_100_000,
        50,
        "Stream sync",
        EventKind::GpuSync,
    );
    push_named(
        &mut b,
        ann0,
        t0 + 1_100_000,
        0,
        "nvtx mark on a stream",
        EventKind::Nvtx,
    );
    let small = name(&mut b, "small_kernel");
    b.push_kernel(
        work1,
        t0 + 30_000,
        1,
        small,
        KernelInfo {
            correlation: Some(99), // no API call has it: no flow
            ..KernelInfo::default()
        },
        0,
    );
    push_named(
        &mut b,
        work1,
        t0 + 31_000,
        2,
        "[Unknown activity]",
        EventKind::Slice,
    );
    let um_name = name(&mut b, "[Unified Memory Memcpy HtoD]");
    b.push_copy(
        um1,
        t0 + 40_000,
        7_777,
        um_name,
        EventKind::UnifiedMemory,
        CopyInfo {
            kind: CopyKind::UnifiedHtoD,
            bytes: Some(65_536),
            src_kind: None,
            dst_kind: None,
            correlation: None,
            external_id: None,
        },
        0,
    );
    push_named(
        &mut b,
        um1,
        t0 + 50_000,
        3,
        "[Unified Memory GPU page faults]",
        EventKind::UnifiedMemory,
    );
    push_named(
        &mut b,
        host_um_track,
        t0 + 60_000,
        4,
        "[Unified Memory CPU page faults]",
        EventKind::UnifiedMemory,
    );

    // Flows besides the launches (linked by correlation): forward/backward and other.
    // Push indices: cpu 0 = step, 2 = op, 3 = mm, 6 = late_op; work0 0 = kernel.
    b.push_exact_flow((cpu, 3), (cpu, 6), FlowKind::ForwardBackward);
    b.push_exact_flow((cpu, 2), (work0, 0), FlowKind::Other);
    b.push_exact_flow((ann0, 2), (cpu, 0), FlowKind::Other);

    b.counters.push(CounterTrack {
        pid,
        name: "GPU memory allocated".to_string(),
        time_ns: vec![t0 - 10, t0 + 1, t0 + 999],
        value: vec![0.0, 1.5e9, f64::NAN],
    });
    b.counters.push(CounterTrack {
        pid: spans,
        name: "tiny".to_string(),
        time_ns: vec![t0 + 1_000_001],
        value: vec![-1e-300],
    });
    b.markers.push(Marker {
        time_ns: t0 + 1_234_567,
        name: "Iteration Start: \"PyTorch\" Profiler".to_string(),
    });
    b.markers.push(Marker {
        time_ns: t0 - 1,
        name: "before the origin".to_string(),
    });
    b.finish()
}

#[test]
fn a_profile_with_everything_round_trips() {
    let orig = everything_profile();
    // The fixture has what it claims.
    let kinds: BTreeSet<EventKind> = orig
        .tracks
        .iter()
        .flat_map(|t| t.events.kind.iter().copied())
        .collect();
    assert_eq!(kinds.len(), 15, "every event kind: {kinds:?}");
    assert!(
        orig.tracks
            .iter()
            .any(|t| t.events.start_ns.contains(&-5_000))
    );
    assert!(orig.tracks.iter().any(|t| t.max_depth >= 3));
    assert_eq!(
        orig.flows.len(),
        6,
        "3 launches by correlation + 3 exact flows"
    );
    assert!(orig.flows.iter().any(|f| f.kind == FlowKind::Launch));

    for name in ["everything.json", "everything.pt.trace.json.gz"] {
        let back = round_trip(&orig, name);
        assert_round_trip(&orig, &back, name);
        assert_eq!(back.source.tool, "warpscope live");
        assert_eq!(back.source.compressed, name.ends_with(".gz"));
        assert_eq!(back.labels[0], ("batch".to_string(), "32".to_string()));
        // Twice gives the same again, and the first original stays the original.
        let again = round_trip(&back, name);
        assert_round_trip(&back, &again, name);
        assert!(
            again
                .source
                .details
                .contains(&("original format".to_string(), "live".to_string()))
        );
    }
}

#[test]
fn the_written_json_is_kineto_shaped() {
    let orig = everything_profile();
    let mut out = Vec::new();
    write_chrome_trace(&orig, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(v["schemaVersion"], 1);
    assert_eq!(v["deviceProperties"][0]["numSms"], 132);
    assert_eq!(v["deviceProperties"][1]["name"], "Tesla \"V100\"");
    assert_eq!(v["warpscope"]["source"]["tool"], "warpscope live");
    assert_eq!(v["warpscope"]["origin"]["raw_ns"], ORIGIN_RAW_NS);
    assert_eq!(v["baseTimeNanoseconds"], ORIGIN_RAW_NS);
    let events = v["traceEvents"].as_array().unwrap();
    let find = |name: &str| {
        events
            .iter()
            .find(|e| e["name"] == name && e["ph"] != "M")
            .unwrap_or_else(|| panic!("no event {name}"))
    };
    let k = find("void gemm<float>(float*, \"x\")");
    assert_eq!(k["cat"], "kernel");
    assert_eq!((k["pid"].as_i64(), k["tid"].as_i64()), (Some(0), Some(7)));
    assert_eq!(k["args"]["grid"], serde_json::json!([132, 2, 1]));
    assert_eq!(k["args"]["registers per thread"], 96);
    assert_eq!(k["args"]["correlation"], 11);
    assert_eq!(k["args"]["External id"], 1011);
    // ts and dur are written as exact three-decimal text.
    assert!(
        text.contains("\"ts\":20.000,\"dur\":1000.001"),
        "kernel times"
    );
    assert!(
        text.contains("\"ts\":-5.000,\"dur\":1005.001"),
        "a negative start"
    );
    let c = find("Memcpy HtoD (Pageable -> Device)");
    assert_eq!(c["cat"], "gpu_memcpy");
    assert_eq!(c["args"]["bytes"], 4_194_304);
    assert!(c["args"]["memory bandwidth (GB/s)"].as_f64().unwrap() > 4000.0);
    let a = find("cudaLaunchKernel");
    assert_eq!(a["cat"], "cuda_runtime");
    assert_eq!(
        (
            a["args"]["cbid"].as_i64(),
            a["args"]["correlation"].as_i64()
        ),
        (Some(211), Some(11))
    );
    let ac2g: Vec<_> = events.iter().filter(|e| e["cat"] == "ac2g").collect();
    assert_eq!(ac2g.len(), 6, "three launches, an s and an f each");
    assert!(
        ac2g.iter()
            .filter(|e| e["ph"] == "f")
            .all(|e| e["bp"] == "e")
    );
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "M" && e["name"] == "thread_name")
    );
    assert!(events.iter().any(|e| e["ph"] == "C" && e["name"] == "tiny"));
    assert!(events.iter().any(|e| e["ph"] == "i" && e["s"] == "g"));
    // One event per line.
    assert!(text.lines().count() > events.len());
}

#[test]
fn key_order_and_unknown_top_level_keys_do_not_matter() {
    // Re-serialized by another tool: keys sorted (so "warpscope" comes after "traceEvents"),
    // numbers reformatted, unknown keys added.
    let orig = everything_profile();
    let mut out = Vec::new();
    write_chrome_trace(&orig, &mut out).unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    v["zzzUnknown"] = serde_json::json!({"nested": [1, 2, {"traceEvents": []}]});
    v["INFO"] = serde_json::json!("a log line");
    let text = serde_json::to_string(&v).unwrap();
    assert!(text.find("\"warpscope\"").unwrap() > text.find("\"traceEvents\"").unwrap());
    let dir = fixture_dir("reordered");
    let path = dir.join("reordered.json");
    std::fs::write(&path, text).unwrap();
    let mut back = common::load(&path);
    // serde_json sorted the device properties too.
    let mut orig = orig;
    for d in orig.devices.iter_mut().chain(back.devices.iter_mut()) {
        d.properties.sort();
    }
    assert_round_trip(&orig, &back, "reordered");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn writing_into_a_missing_directory_names_the_path() {
    let dir = fixture_dir("missing");
    let path = dir.join("no such dir").join("trace.json.gz");
    let err = save_chrome_trace(&everything_profile(), &path).unwrap_err();
    assert!(
        matches!(&err, WriteError::Io { path: p, .. } if *p == path),
        "{err:?}"
    );
    assert!(err.to_string().contains(&*path.to_string_lossy()), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failing_writer_gives_a_write_error() {
    struct Full;
    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let err = write_chrome_trace(&everything_profile(), &mut Full).unwrap_err();
    assert!(matches!(err, WriteError::Write { .. }));
    assert!(err.to_string().contains("disk full"));
}

// ---------------------------------------------------------------------------------------------
// (b) The shipped sample profiles
// ---------------------------------------------------------------------------------------------

#[test]
fn every_shipped_sample_profile_round_trips() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sample_profiles");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "gz" || e == "json"))
        // An allocator snapshot's segments and stacks have no Chrome form.
        .filter(|p| !p.to_string_lossy().contains(".snapshot."))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "{files:?}");
    for path in files {
        let orig = common::load(&path);
        let what = path.file_name().unwrap().to_string_lossy().into_owned();
        // Live-lab runs are small (a block sweep of one kernel is a few hundred events).
        let least = if what.starts_with("live_") { 100 } else { 1000 };
        assert!(orig.event_count() > least, "{what}: {}", orig.event_count());
        let back = round_trip(&orig, &format!("{what}.json.gz"));
        assert_round_trip(&orig, &back, &what);
        // The tool that made the file survives (Kineto, or warpscope's own live lab).
        assert_eq!(back.source.tool, orig.source.tool, "{what}");
        assert!(!back.flows.is_empty(), "{what}");
    }
}

// ---------------------------------------------------------------------------------------------
// (c) Other formats from ../shared/samples
// ---------------------------------------------------------------------------------------------

/// Exports and re-imports a sample of another format; skips when the samples are absent.
fn other_format(rel: &str, format: Format) {
    let Some(path) = common::sample(rel) else {
        return;
    };
    let orig = common::load(&path);
    assert_eq!(orig.source.format, format, "{rel}");
    assert!(orig.event_count() > 0, "{rel}");
    let back = round_trip(&orig, "other.json");
    assert_round_trip(&orig, &back, rel);
    assert!(
        back.source
            .details
            .contains(&("original format".to_string(), format.as_str().to_string()))
    );
}

#[test]
fn an_nvprof_database_round_trips() {
    other_format(
        "nvprof-sqlite/jetsonnano_tensorrt_yolo_nvtx.nvvp",
        Format::NvprofSqlite,
    );
}

#[test]
fn an_nsys_database_round_trips() {
    other_format(
        "nsys-sqlite/nsys2022.2_a100_vecadd_uvm_report1.sqlite",
        Format::NsysSqlite,
    );
}

#[test]
fn an_nvprof_csv_trace_round_trips() {
    other_format(
        "nvprof-csv/cfd_titanxp_print-gpu-trace.csv",
        Format::NvprofCsv,
    );
}

#[test]
fn a_tensorflow_timeline_round_trips() {
    other_format(
        "chrome-tensorflow/tf1_mnistxla_gpu_timeline.ctf.json",
        Format::ChromeJson,
    );
}

#[test]
fn a_2021_kineto_trace_with_string_ids_round_trips() {
    other_format(
        "chrome-kineto/kineto2021_v100_resnet50_worker0.pt.trace.json.gz",
        Format::ChromeJson,
    );
}
