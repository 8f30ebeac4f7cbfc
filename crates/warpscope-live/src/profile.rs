//! Turns what a live run recorded (host spans, GPU activity from CUPTI or CUDA events, and the
//! CUDA-event intervals) into a [`Profile`], so the run opens on the timeline and in the tables
//! like a file, and can be saved as Chrome trace JSON.

use std::path::PathBuf;

use warpscope_core::model::{
    ApiInfo, CopyInfo, CopyKind, Device, Format, GpuLane, GpuVendor, KernelInfo, MemoryKind,
    TraceId,
};
use warpscope_core::{EventKind, Profile, ProfileBuilder, TrackKey};

use crate::results::{LiveRun, RESULTS_DETAIL_KEY};

/// A span on the host thread: a sweep point (user annotation), a CUDA API call, or CPU work.
#[derive(Clone, Debug, PartialEq)]
pub struct HostSpan {
    /// Name shown on the timeline.
    pub name: String,
    /// `UserAnnotation`, `Driver`, `Runtime` or `CpuOp`.
    pub kind: EventKind,
    /// Start, nanoseconds from the run's start.
    pub start_ns: i64,
    /// Duration in nanoseconds.
    pub dur_ns: i64,
    /// Correlation id linking an API call to the GPU work it launched.
    pub correlation: Option<u64>,
    /// CUPTI callback id of an API call.
    pub cbid: Option<u32>,
}

/// What a piece of GPU work was.
#[derive(Clone, Debug, PartialEq)]
pub enum GpuOpKind {
    /// A kernel.
    Kernel {
        /// Grid (blocks).
        grid: [u32; 3],
        /// Block (threads).
        block: [u32; 3],
        /// Registers per thread, when known.
        registers: Option<u32>,
        /// Static shared memory per block.
        static_shared: Option<u64>,
        /// Dynamic shared memory per block.
        dynamic_shared: Option<u64>,
    },
    /// A memory copy.
    Copy {
        /// Direction.
        kind: CopyKind,
        /// Bytes moved.
        bytes: u64,
        /// Source memory.
        src: MemoryKind,
        /// Destination memory.
        dst: MemoryKind,
    },
    /// A memory set.
    Memset {
        /// Bytes set.
        bytes: u64,
    },
}

/// One piece of GPU work with its real start and end.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuOp {
    /// Kernel name, or the copy's activity name.
    pub name: String,
    /// Start, nanoseconds from the run's start.
    pub start_ns: i64,
    /// Duration in nanoseconds.
    pub dur_ns: i64,
    /// Stream id.
    pub stream: u64,
    /// What it was.
    pub kind: GpuOpKind,
    /// Correlation id of the API call that launched it.
    pub correlation: Option<u64>,
}

/// An interval measured with a pair of CUDA events, drawn on the stream's annotation lane.
#[derive(Clone, Debug, PartialEq)]
pub struct EventSpan {
    /// What was timed (`vector_add grid-device 10M #2`).
    pub name: String,
    /// Start, nanoseconds from the run's start (from the run's base event).
    pub start_ns: i64,
    /// Elapsed time between the two events.
    pub dur_ns: i64,
}

/// Everything a run recorded for its timeline.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recording {
    /// Host process id.
    pub pid: i64,
    /// Host thread id.
    pub tid: i64,
    /// CUDA context id.
    pub context: u32,
    /// Spans on the host thread.
    pub host: Vec<HostSpan>,
    /// GPU work.
    pub gpu: Vec<GpuOp>,
    /// CUDA-event intervals.
    pub event_spans: Vec<EventSpan>,
    /// The stream the measured work ran on, as the GPU lanes number it (CUPTI's id when CUPTI
    /// collected the work): the CUDA-event lane goes beside it.
    pub stream: u64,
    /// Where the run started, in Unix-epoch nanoseconds.
    pub unix_start_ns: Option<i64>,
    /// Launches of the lab's own timing kernels (stream hold, cache flush) left out.
    pub timing_launches: u64,
}

/// The timeline label of a point, as the runner names its annotation.
fn point_label(run: &LiveRun, p: &crate::results::PointResult) -> String {
    let size = crate::plan::format_size(p.size, run.size_unit);
    let mut label = if run.user.is_some() {
        format!("{} N={size}", run.kernel)
    } else {
        format!("{} {} {size}", run.kernel, p.config)
    };
    if let Some(block) = p.block {
        label.push_str(&format!(" block {block}"));
    }
    label
}

/// Every kernel launch of a point with known FLOPs, wrapped in an operator named as the point
/// that states the FLOPs and bytes of one launch (`docs/flops.md`: an operator's `flops` and
/// `bytes`), so that the saved run shows the same FLOP/s on the roofline as the live table.
/// The operator reaches 1 ns beyond its launch call on each side, so that it encloses it.
fn push_point_ops(
    b: &mut ProfileBuilder,
    host: warpscope_core::builder::TrackId,
    run: &LiveRun,
    rec: &Recording,
) {
    let work: std::collections::HashMap<String, (u64, u64)> = run
        .points
        .iter()
        .filter(|p| p.work.flops >= 1.0)
        .map(|p| {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let figures = (
                p.work.flops.round() as u64,
                p.work.bytes.max(0.0).round() as u64,
            );
            (point_label(run, p), figures)
        })
        .collect();
    let kernels: std::collections::HashSet<u64> = rec
        .gpu
        .iter()
        .filter(|op| matches!(op.kind, GpuOpKind::Kernel { .. }))
        .filter_map(|op| op.correlation)
        .collect();
    let points: Vec<(i64, i64, (u64, u64), &str)> = rec
        .host
        .iter()
        .filter(|s| s.kind == EventKind::UserAnnotation)
        .filter_map(|s| {
            Some((
                s.start_ns,
                s.start_ns + s.dur_ns,
                *work.get(&s.name)?,
                s.name.as_str(),
            ))
        })
        .collect();
    for span in &rec.host {
        if !span.kind.is_api() || !span.correlation.is_some_and(|c| kernels.contains(&c)) {
            continue;
        }
        let end = span.start_ns + span.dur_ns;
        let Some(&(_, _, (flops, bytes), label)) = points
            .iter()
            .find(|(s, e, _, _)| *s <= span.start_ns && end <= *e)
        else {
            continue;
        };
        let args = warpscope_core::model::OpArgs {
            inputs: Box::new([]),
            flops: Some(flops),
            bytes: Some(bytes),
        };
        let row = b.intern_op_args(format!("{flops} {bytes}").as_bytes(), || args);
        let name = b.intern(label);
        b.push_op(host, span.start_ns - 1, span.dur_ns + 2, name, row);
    }
}

/// Builds the profile of a live run. `path` is what the profile calls its source (the output
/// file if the run is saved).
pub fn build_profile(run: &LiveRun, rec: &Recording, path: PathBuf) -> Profile {
    let mut b = ProfileBuilder::new(path, Format::Live);
    b.source.tool = "warpscope live".into();
    b.source.tool_version = Some(env!("CARGO_PKG_VERSION").into());
    let details = &mut b.source.details;
    details.push(("kernel".into(), run.kernel.clone()));
    details.push((
        "timing".into(),
        if run.cupti {
            "CUDA events (CU_EVENT_DEFAULT) and CUPTI activity records".into()
        } else {
            "CUDA events (CU_EVENT_DEFAULT)".into()
        },
    ));
    if let Some(note) = &run.cupti_note {
        details.push(("cupti".into(), note.clone()));
    }
    if let Some(bw) = run.peaks.d2d_bytes_per_s {
        details.push((
            "measured device-to-device bandwidth".into(),
            format!("{:.0} GB/s", bw * 1e-9),
        ));
    }
    if let Some(f) = run.peaks.sgemm_flops_per_s {
        details.push((
            "measured cuBLAS SGEMM rate".into(),
            format!("{:.0} GFLOP/s", f * 1e-9),
        ));
    }
    details.push((RESULTS_DETAIL_KEY.into(), run.to_json()));

    let facts = &run.device;
    b.devices.push(Device {
        id: facts.ordinal,
        name: facts.name.clone(),
        compute_capability: Some(facts.compute_capability),
        sm_count: Some(facts.sm_count),
        memory_bytes: Some(facts.memory_bytes),
        memory_bandwidth_bytes_per_s: run.peaks.d2d_bytes_per_s.map(|b| b as u64),
        properties: vec![("driver".into(), facts.driver_version.clone())],
        vendor: GpuVendor::Nvidia,
        gfx_target: None,
    });
    b.labels.push(("kernel".into(), run.kernel.clone()));
    if !facts.name.is_empty() {
        b.labels.push(("device".into(), facts.name.clone()));
    }
    let pid = TraceId::Int(rec.pid);
    b.process_names.push((pid, "warpscope live".into()));
    b.origin_raw_ns = Some(0);
    b.unix_offset_ns = rec.unix_start_ns;

    let host = b.track(TrackKey::Thread {
        pid,
        tid: TraceId::Int(rec.tid),
    });
    b.track_mut(host).name = format!("thread {} (live lab)", rec.tid);
    push_point_ops(&mut b, host, run, rec);
    for span in &rec.host {
        let name = b.intern(&span.name);
        if span.kind.is_api() {
            let info = ApiInfo {
                correlation: span.correlation,
                cbid: span.cbid,
                external_id: None,
            };
            b.push_api(host, span.start_ns, span.dur_ns, name, span.kind, info, 0);
        } else {
            b.push(host, span.start_ns, span.dur_ns, name, span.kind);
        }
    }

    for op in &rec.gpu {
        let track = gpu_track(&mut b, facts.ordinal, rec.context, op.stream, GpuLane::Work);
        let name = b.intern(&op.name);
        match &op.kind {
            GpuOpKind::Kernel {
                grid,
                block,
                registers,
                static_shared,
                dynamic_shared,
            } => {
                let info = KernelInfo {
                    grid: Some(*grid),
                    block: Some(*block),
                    registers_per_thread: *registers,
                    static_shared_bytes: *static_shared,
                    dynamic_shared_bytes: *dynamic_shared,
                    correlation: op.correlation,
                    ..KernelInfo::default()
                };
                b.push_kernel(track, op.start_ns, op.dur_ns, name, info, 0);
            }
            GpuOpKind::Copy {
                kind,
                bytes,
                src,
                dst,
            } => {
                let info = CopyInfo {
                    kind: *kind,
                    bytes: Some(*bytes),
                    src_kind: Some(*src),
                    dst_kind: Some(*dst),
                    correlation: op.correlation,
                    external_id: None,
                };
                let kind = match kind {
                    CopyKind::UnifiedHtoD | CopyKind::UnifiedDtoH | CopyKind::UnifiedDtoD => {
                        EventKind::UnifiedMemory
                    }
                    _ => EventKind::Memcpy,
                };
                b.push_copy(track, op.start_ns, op.dur_ns, name, kind, info, 0);
            }
            GpuOpKind::Memset { bytes } => {
                let info = CopyInfo {
                    kind: CopyKind::Memset,
                    bytes: Some(*bytes),
                    src_kind: None,
                    dst_kind: Some(MemoryKind::Device),
                    correlation: op.correlation,
                    external_id: None,
                };
                b.push_copy(
                    track,
                    op.start_ns,
                    op.dur_ns,
                    name,
                    EventKind::Memset,
                    info,
                    0,
                );
            }
        }
    }
    for span in &rec.event_spans {
        let track = gpu_track(
            &mut b,
            facts.ordinal,
            rec.context,
            rec.stream,
            GpuLane::Annotations,
        );
        let name = b.intern(&span.name);
        b.push(
            track,
            span.start_ns,
            span.dur_ns,
            name,
            EventKind::GpuAnnotation,
        );
    }
    for w in &run.warnings {
        b.warn("live-run", 1, w.clone());
    }
    if rec.timing_launches > 0 {
        b.warn(
            "live-timing-kernels",
            rec.timing_launches,
            "launches of the live lab's timing kernels (hold_stream, which holds the stream \
             while a measurement is queued, and flush_l2, which empties the L2 cache before it) \
             are left out",
        );
    }
    b.finish()
}

fn gpu_track(
    b: &mut ProfileBuilder,
    device: u32,
    context: u32,
    stream: u64,
    lane: GpuLane,
) -> warpscope_core::builder::TrackId {
    let id = b.track(TrackKey::Gpu {
        device,
        context,
        stream,
        lane,
    });
    if b.track_mut(id).name.is_empty() {
        b.track_mut(id).name = match lane {
            GpuLane::Annotations => format!("stream {stream} CUDA events"),
            _ => format!("stream {stream}"),
        };
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Memory, SizeUnit, Target, kernel};
    use crate::gpu::DeviceFacts;
    use crate::results::{Peaks, PointResult};
    use warpscope_core::TimeRange;
    use warpscope_core::analysis::summary_report;

    fn run() -> LiveRun {
        LiveRun {
            kernel: "vector_add".into(),
            size_unit: SizeUnit::Floats,
            device: DeviceFacts {
                ordinal: 0,
                name: "NVIDIA H100 80GB HBM3".into(),
                compute_capability: (9, 0),
                sm_count: 132,
                memory_bytes: 85_000_000_000,
                driver_version: "13.0".into(),
            },
            peaks: Peaks {
                d2d_bytes_per_s: Some(3.0e12),
                ..Peaks::default()
            },
            cupti: true,
            cupti_note: None,
            warmup: 1,
            points: vec![PointResult {
                config: "grid-device".into(),
                target: Target::Gpu,
                memory: Memory::Device,
                size: 1_000_000,
                work: kernel("vector_add").unwrap().work(1_000_000),
                planned: 2,
                event_ns: vec![12_000, 11_000],
                cupti_ns: vec![10_000, 10_500],
                check: None,
                block: None,
                resources: None,
                occupancy: None,
                math: crate::catalog::Math::Fp32,
                cupti_off_ns: Vec::new(),
                error: None,
                batch: 1,
            }],
            warnings: Vec::new(),
            user: None,
            batch: 1,
        }
    }

    fn launch(corr: u64, start_ns: i64) -> (HostSpan, GpuOp) {
        (
            HostSpan {
                name: "cuLaunchKernel".into(),
                kind: EventKind::Driver,
                start_ns,
                dur_ns: 3_000,
                correlation: Some(corr),
                cbid: Some(307),
            },
            GpuOp {
                name: "vector_add".into(),
                start_ns: start_ns + 5_000,
                dur_ns: 10_000,
                stream: 13,
                kind: GpuOpKind::Kernel {
                    grid: [3907, 1, 1],
                    block: [256, 1, 1],
                    registers: Some(16),
                    static_shared: Some(0),
                    dynamic_shared: Some(0),
                },
                correlation: Some(corr),
            },
        )
    }

    #[test]
    fn a_recording_becomes_a_profile_with_tracks_flows_and_results() {
        let mut rec = Recording {
            pid: 4242,
            tid: 4243,
            context: 1,
            unix_start_ns: Some(1_700_000_000_000_000_000),
            ..Recording::default()
        };
        rec.host.push(HostSpan {
            name: "vector_add grid-device 1M".into(),
            kind: EventKind::UserAnnotation,
            start_ns: 1_000,
            dur_ns: 60_000,
            correlation: None,
            cbid: None,
        });
        for (i, t) in [(1, 2_000), (2, 30_000)] {
            let (h, g) = launch(i, t);
            rec.host.push(h);
            rec.gpu.push(g);
        }
        rec.gpu.push(GpuOp {
            name: "[CUDA memcpy HtoD]".into(),
            start_ns: 50_000,
            dur_ns: 4_000,
            stream: 13,
            kind: GpuOpKind::Copy {
                kind: CopyKind::HtoD,
                bytes: 4_000_000,
                src: MemoryKind::Pageable,
                dst: MemoryKind::Device,
            },
            correlation: None,
        });
        rec.stream = 13;
        rec.event_spans.push(EventSpan {
            name: "vector_add grid-device 1M #1".into(),
            start_ns: 6_500,
            dur_ns: 12_000,
        });
        let p = build_profile(&run(), &rec, PathBuf::from("live.json"));

        assert_eq!(p.source.format, Format::Live);
        assert_eq!(p.source.tool, "warpscope live");
        assert_eq!(p.devices[0].name, "NVIDIA H100 80GB HBM3");
        assert_eq!(
            p.devices[0].memory_bandwidth_bytes_per_s,
            Some(3_000_000_000_000)
        );
        assert!(p.labels.contains(&("kernel".into(), "vector_add".into())));
        // GPU work lane, CUDA-event lane, host thread.
        let names: Vec<_> = p.tracks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "stream 13",
                "stream 13 CUDA events",
                "thread 4243 (live lab)"
            ]
        );
        let gpu = &p.tracks[0];
        assert_eq!(gpu.events.len(), 3);
        assert_eq!(gpu.events.start_ns[0], 7_000);
        assert_eq!(gpu.events.dur_ns[0], 10_000);
        assert_eq!(p.kernel_info(gpu, 0).unwrap().grid, Some([3907, 1, 1]));
        assert_eq!(p.copy_info(gpu, 2).unwrap().bytes, Some(4_000_000));
        // The two launches are nested in the annotation and linked to their kernels, each in an
        // operator named after the point that states the point's FLOPs and bytes per launch.
        let host = &p.tracks[2];
        assert_eq!(host.events.depth, [0, 1, 2, 1, 2]);
        assert_eq!(p.flows.len(), 2);
        let flops = warpscope_core::analysis::flops::flops_report(
            &p,
            TimeRange::ALL,
            warpscope_core::analysis::flops::PeakOverride::default(),
        );
        let row = flops
            .operators
            .iter()
            .find(|o| o.name == "vector_add grid-device 1M")
            .expect("the point's operator");
        assert_eq!(
            (row.calls, row.flops, row.bytes),
            (2, Some(2_000_000), Some(24_000_000))
        );
        // 1M FLOPs in each 10 µs kernel: 0.1 TFLOP/s, the live table's FLOPs over its CUPTI
        // median (10 000 ns).
        assert_eq!(row.gpu_time_ns, 20_000);
        let tflops = row.roofline.tflops_per_s.expect("known");
        assert!((tflops - 0.1).abs() < 1e-12, "{tflops}");
        assert_eq!(p.origin.unix_ns, Some(1_700_000_000_000_000_000));
        // The results travel with the profile.
        assert_eq!(LiveRun::from_profile(&p), Some(run()));
        // And the ordinary kernel table sees the kernels.
        let summary = summary_report(&p, TimeRange::ALL, None);
        let top = &summary.gpu_activities[0];
        assert_eq!(top.name, "vector_add");
        assert_eq!(top.stats.calls, 2);
        assert_eq!(top.stats.total_ns, 20_000);
    }
}
