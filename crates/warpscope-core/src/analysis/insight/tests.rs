//! Synthetic profiles with hand-computed answers for every rule of `docs/analysis.md`.

use super::occupancy::{GpuArch, LaunchConfig, Limiter, OccupancyError, theoretical_occupancy};
use super::*;
use crate::builder::{ProfileBuilder, TrackId};
use crate::model::{
    ApiInfo, CopyInfo, CopyKind, Device, Format, GpuLane, KernelInfo, MemoryKind, TraceId,
};

/// A profile written event by event, times as given (origin 0).
pub(super) struct Synth {
    pub(super) b: ProfileBuilder,
    cpu: TrackId,
    correlation: u64,
}

impl Synth {
    pub(super) fn new(compute_capability: (u32, u32)) -> Self {
        let mut b = ProfileBuilder::new("synthetic.json".into(), Format::ChromeJson);
        b.origin_raw_ns = Some(0);
        b.devices.push(Device {
            id: 0,
            compute_capability: Some(compute_capability),
            ..Device::default()
        });
        let cpu = b.track(TrackKey::Thread {
            pid: TraceId::Int(1),
            tid: TraceId::Int(1),
        });
        Self {
            b,
            cpu,
            correlation: 0,
        }
    }

    pub(super) fn stream(&mut self, stream: u64) -> TrackId {
        self.b.track(TrackKey::Gpu {
            device: 0,
            context: 1,
            stream,
            lane: GpuLane::Work,
        })
    }

    pub(super) fn cpu(&mut self, start_ns: i64, dur_ns: i64, name: &str, kind: EventKind) {
        let name = self.b.intern(name);
        self.b.push(self.cpu, start_ns, dur_ns, name, kind);
    }

    /// A launching API call; returns its correlation id.
    pub(super) fn call(&mut self, start_ns: i64, dur_ns: i64, name: &str) -> u64 {
        self.correlation += 1;
        let name = self.b.intern(name);
        let info = ApiInfo {
            correlation: Some(self.correlation),
            ..ApiInfo::default()
        };
        self.b.push_api(
            self.cpu,
            start_ns,
            dur_ns,
            name,
            EventKind::Runtime,
            info,
            0,
        );
        self.correlation
    }

    pub(super) fn kernel(
        &mut self,
        track: TrackId,
        start_ns: i64,
        dur_ns: i64,
        name: &str,
        info: KernelInfo,
    ) {
        let name = self.b.intern(name);
        self.b.push_kernel(track, start_ns, dur_ns, name, info, 0);
    }

    /// A kernel launched by `call` (a correlation id from [`Synth::call`]).
    pub(super) fn launched(
        &mut self,
        track: TrackId,
        start_ns: i64,
        dur_ns: i64,
        name: &str,
        call: u64,
    ) {
        let info = KernelInfo {
            correlation: Some(call),
            ..KernelInfo::default()
        };
        self.kernel(track, start_ns, dur_ns, name, info);
    }

    pub(super) fn copy(&mut self, track: TrackId, start_ns: i64, dur_ns: i64, info: CopyInfo) {
        let name = self.b.intern("Memcpy");
        self.b
            .push_copy(track, start_ns, dur_ns, name, EventKind::Memcpy, info, 0);
    }

    pub(super) fn analyze(self) -> (Profile, Insights) {
        let p = self.b.finish();
        let ins = analyze(&p, TimeRange::ALL, &AnalyzeOptions::default());
        (p, ins)
    }
}

fn plain_copy() -> CopyInfo {
    CopyInfo {
        kind: CopyKind::HtoD,
        bytes: None,
        src_kind: None,
        dst_kind: None,
        correlation: None,
        external_id: None,
    }
}

pub(super) fn rules(ins: &Insights) -> Vec<(Rule, i64)> {
    ins.findings.iter().map(|f| (f.rule, f.time_ns)).collect()
}

#[test]
fn categories_are_exclusive_by_priority_and_sum_to_the_window() {
    let mut s = Synth::new((9, 0));
    let (s7, s8, s9) = (s.stream(7), s.stream(8), s.stream(9));
    s.kernel(s7, 100, 100, "gemm", KernelInfo::default());
    s.kernel(
        s8,
        150,
        150,
        "ncclKernel_AllReduce_RING_LL_Sum_float",
        KernelInfo::default(),
    );
    s.copy(s9, 250, 150, plain_copy());
    s.kernel(s7, 500, 100, "relu", KernelInfo::default());
    s.copy(s9, 520, 20, plain_copy());
    let (_, ins) = s.analyze();
    let d = &ins.devices[0];
    assert_eq!(
        (d.window_start_ns, d.window_end_ns, d.window_ns),
        (100, 600, 500)
    );
    // busy: [100, 400) and [500, 600).
    assert_eq!((d.busy_ns, d.idle_ns), (400, 100));
    // compute [100,200)+[500,600); comm [200,300) (its [150,200) ran under compute);
    // memory [300,400) (the rest ran under compute or comm).
    assert_eq!((d.compute_ns, d.comm_ns, d.memory_ns), (200, 100, 100));
    assert_eq!(
        d.compute_ns + d.comm_ns + d.memory_ns + d.idle_ns,
        d.window_ns
    );
    assert_eq!(d.overlap_comm_compute_ns, 50);
    assert!((d.overlap_comm_pct - 100.0 / 3.0).abs() < 1e-9);
    assert_eq!(d.overlap_copy_compute_ns, 20);
    assert_eq!(d.kernel_ns, 350);
    assert_eq!(d.utilisation.len(), 200);
    let opts = AnalyzeOptions {
        buckets: 5,
        ..AnalyzeOptions::default()
    };
    let p = {
        let mut s = Synth::new((9, 0));
        let (s7, s9) = (s.stream(7), s.stream(9));
        s.kernel(s7, 100, 300, "gemm", KernelInfo::default());
        s.kernel(s7, 500, 50, "gemm", KernelInfo::default());
        s.copy(s9, 575, 25, plain_copy());
        s.b.finish()
    };
    let d = &analyze(&p, TimeRange::ALL, &opts).devices[0];
    assert_eq!(d.utilisation_bucket_ns, 100);
    assert_eq!(d.utilisation, vec![1.0, 1.0, 1.0, 0.0, 0.75]);
}

#[test]
fn a_range_clips_the_work_to_it() {
    let mut s = Synth::new((9, 0));
    let s7 = s.stream(7);
    s.kernel(s7, 0, 1_000, "a", KernelInfo::default());
    s.kernel(s7, 1_500, 1_000, "b", KernelInfo::default());
    let p = s.b.finish();
    let ins = analyze(&p, TimeRange::new(500, 2_000), &AnalyzeOptions::default());
    let d = &ins.devices[0];
    assert_eq!((d.window_start_ns, d.window_end_ns), (500, 2_000));
    assert_eq!((d.busy_ns, d.idle_ns), (1_000, 500));
    assert_eq!(ins.kernels.iter().map(|k| k.total_ns).sum::<i64>(), 1_000);
    let none = analyze(&p, TimeRange::new(5_000, 6_000), &AnalyzeOptions::default());
    assert!(none.devices.is_empty() && none.findings.is_empty());
}

/// One gap of each cause, with and without launching calls.
#[test]
fn idle_gaps_get_their_causes() {
    let mut s = Synth::new((9, 0));
    let s7 = s.stream(7);
    s.cpu(0, 90_000, "ProfilerStep#1", EventKind::UserAnnotation);
    s.cpu(2_500, 12_520, "aten::slow_thing", EventKind::CpuOp);
    let c1 = s.call(500, 10, "cudaLaunchKernel");
    let c2 = s.call(600, 10, "cudaLaunchKernel");
    let c3 = s.call(15_000, 10, "cudaLaunchKernel");
    let c4 = s.call(16_000, 10, "cudaLaunchKernel");
    s.launched(s7, 1_000, 1_000, "k1", c1);
    // 5 ns after k1, queued long before: kernel wait.
    s.launched(s7, 2_005, 995, "k2", c2);
    // Launched at 15 000, after k2 ended at 3 000: host wait of 17 000.
    s.launched(s7, 20_000, 1_000, "k3", c3);
    // Queued at 16 000, before k3 ended, yet 29 000 later: other.
    s.launched(s7, 50_000, 1_000, "k4", c4);
    // No launching call: 2 ns is kernel wait, 28 000 ns other.
    s.kernel(s7, 51_002, 998, "k5", KernelInfo::default());
    s.kernel(s7, 80_000, 1_000, "k6", KernelInfo::default());
    let (p, ins) = s.analyze();
    let d = &ins.devices[0];
    assert_eq!((d.window_ns, d.busy_ns, d.idle_ns), (80_000, 5_993, 74_007));
    assert_eq!(
        d.idle_breakdown,
        IdleBreakdown {
            host_wait_ns: 17_000,
            kernel_wait_ns: 7,
            other_ns: 57_000
        }
    );
    assert_eq!(ins.streams.len(), 1);
    assert_eq!(ins.streams[0].idle_breakdown, d.idle_breakdown);
    let gaps: Vec<(i64, i64, GapCause)> = ins
        .gaps
        .iter()
        .map(|g| (g.start_ns, g.dur_ns, g.cause))
        .collect();
    assert_eq!(
        gaps,
        vec![
            (21_000, 29_000, GapCause::Other),
            (52_000, 28_000, GapCause::Other),
            (3_000, 17_000, GapCause::HostWait),
            (2_000, 5, GapCause::KernelWait),
            (51_000, 2, GapCause::KernelWait),
        ]
    );
    let op_name = |g: &Gap| {
        g.operator.map(|e| {
            p.str(p.tracks[e.track as usize].events.name[e.index as usize])
                .to_string()
        })
    };
    // During the host-wait gap the launching thread was in aten::slow_thing.
    assert_eq!(op_name(&ins.gaps[2]).as_deref(), Some("aten::slow_thing"));
    // The other gap began between operators (only `ProfilerStep#1` was open, which does not
    // count), and its launching call too.
    assert_eq!(op_name(&ins.gaps[0]), None);
    assert_eq!(ins.host_wait_ops.len(), 1);
    assert_eq!(
        ins.host_wait_ops[0].operator.as_deref(),
        Some("aten::slow_thing")
    );
    assert_eq!(ins.host_wait_ops[0].time_ns, 17_000);
    // Host wait (21%) and other idle (71%) are both findings, the larger first.
    assert_eq!(
        rules(&ins),
        vec![(Rule::GpuIdleOther, 57_000), (Rule::HostWait, 17_000)]
    );
    assert!(
        ins.findings[1].message.contains("aten::slow_thing"),
        "{}",
        ins.findings[1].message
    );
    // A higher threshold turns the other gaps into kernel wait.
    let opts = AnalyzeOptions {
        kernel_wait_threshold_ns: 30_000,
        ..AnalyzeOptions::default()
    };
    let d = &analyze(&p, TimeRange::ALL, &opts).devices[0];
    assert_eq!(d.idle_breakdown.kernel_wait_ns, 57_007);
}

#[test]
fn streams_have_their_own_gaps() {
    let mut s = Synth::new((9, 0));
    let (s7, s8) = (s.stream(7), s.stream(8));
    s.kernel(s7, 0, 100, "a", KernelInfo::default());
    s.kernel(s7, 1_000, 100, "a", KernelInfo::default());
    s.kernel(s8, 500, 100, "b", KernelInfo::default());
    let (_, ins) = s.analyze();
    assert_eq!(ins.devices[0].idle_ns, 800);
    let streams: Vec<(u64, i64, i64)> = ins
        .streams
        .iter()
        .map(|st| (st.stream, st.window_ns, st.idle_ns))
        .collect();
    assert_eq!(streams, vec![(7, 1_100, 900), (8, 100, 0)]);
}

#[test]
fn launch_delays_typical_cost_graphs_and_launch_bound_kernels() {
    let mut s = Synth::new((9, 0));
    let s7 = s.stream(7);
    let c1 = s.call(0, 5_000, "cudaLaunchKernel");
    let c2 = s.call(10_000, 5_000, "cudaLaunchKernel");
    let c3 = s.call(20_000, 5_000, "cudaLaunchKernel");
    let c4 = s.call(40_000, 6_000, "cudaGraphLaunch");
    s.launched(s7, 5_100, 2_000, "a", c1);
    s.launched(s7, 15_200, 2_000, "a", c2);
    s.launched(s7, 25_300, 8_000, "b", c3);
    s.launched(s7, 46_400, 3_000, "a", c4);
    s.launched(s7, 49_400, 100, "c", c4);
    let (_, ins) = s.analyze();
    let l = &ins.launch;
    assert_eq!((l.kernels, l.kernels_with_launch), (5, 5));
    // Distinct calls last 5 000, 5 000, 5 000 and 6 000 ns: the median is 5 000.
    assert_eq!(l.typical_launch_ns, Some(5_000));
    // Delays 100, 200, 300, 400, 3 400.
    assert_eq!(
        (l.delay_median_ns, l.delay_p95_ns),
        (Some(300), Some(3_400))
    );
    assert_eq!(
        (l.launch_bound_kernels, l.launch_bound_ns, l.kernel_ns),
        (4, 7_100, 15_100)
    );
    assert_eq!((l.graph_launches, l.graph_kernels), (1, 2));
    let a = ins.kernels.iter().find(|k| k.name == "a").expect("a");
    assert_eq!((a.calls, a.total_ns, a.launch_bound_calls), (3, 7_000, 3));
    assert_eq!(
        (a.launch_delay_median_ns, a.launch_delay_p95_ns),
        (Some(200), Some(400))
    );
    // Every gap is host wait (29 300 ns); those before "a" (8 100 + 13 100) precede
    // launch-bound kernels.
    assert_eq!(ins.devices[0].idle_breakdown.host_wait_ns, 29_300);
    assert_eq!(
        rules(&ins),
        vec![(Rule::HostWait, 29_300), (Rule::LaunchBound, 21_200)]
    );
}

#[test]
fn occupancy_follows_the_calculator_on_hopper() {
    let h100 = GpuArch::for_compute_capability(9, 0).expect("9.0");
    let occ = |block_size, registers_per_thread, shared_bytes| {
        theoretical_occupancy(
            &h100,
            LaunchConfig {
                block_size,
                registers_per_thread,
                shared_bytes,
            },
        )
    };
    let check =
        |o: Result<occupancy::Occupancy, OccupancyError>, blocks, pct: f64, lim: &[Limiter]| {
            let o = o.expect("launchable");
            assert_eq!(o.blocks_per_sm, blocks, "{o:?}");
            assert!((o.occupancy_pct - pct).abs() < 1e-9, "{o:?}");
            assert_eq!(o.limiters, lim, "{o:?}");
        };
    // 8 warps per block, 1 024 registers per warp: 8 blocks by warps and by registers.
    check(
        occ(256, 32, 0),
        8,
        100.0,
        &[Limiter::Warps, Limiter::Registers],
    );
    // 128 registers: 4 096 per warp, 4 warps per sub-partition, 16 per SM: 2 blocks.
    check(occ(256, 128, 0), 2, 25.0, &[Limiter::Registers]);
    // 200 registers: 6 400 per warp; 2 fit a 16 384-register sub-partition, so 8 warps, not
    // the 10 the whole register file would hold.
    check(occ(32, 200, 0), 8, 12.5, &[Limiter::Registers]);
    // 48 KiB + the 1 KiB reservation = 50 176 bytes: 4 blocks in 228 KiB.
    check(occ(128, 32, 49_152), 4, 25.0, &[Limiter::SharedMemory]);
    // One-warp blocks run out of the 32 block slots first.
    check(occ(32, 16, 0), 32, 50.0, &[Limiter::Blocks]);
    // 255 registers: 8 192 per warp; 9 warps count as 12 for the per-block check.
    assert!(matches!(
        occ(288, 255, 0),
        Err(OccupancyError::RegistersPerBlock { .. })
    ));
    check(occ(256, 255, 0), 1, 12.5, &[Limiter::Registers]);
    assert!(matches!(
        occ(32, 32, 232_449),
        Err(OccupancyError::SharedMemory { .. })
    ));
    assert!(matches!(
        occ(1_025, 32, 0),
        Err(OccupancyError::BlockSize(1_025))
    ));
}

#[test]
fn occupancy_limits_differ_by_architecture() {
    let run = |major, minor, block_size, registers_per_thread, shared_bytes| {
        let arch = GpuArch::for_compute_capability(major, minor).expect("known");
        theoretical_occupancy(
            &arch,
            LaunchConfig {
                block_size,
                registers_per_thread,
                shared_bytes,
            },
        )
        .expect("launchable")
    };
    // Ampere GA10x holds 48 warps: one 1 024-thread block is 2/3 of them.
    let o = run(8, 6, 1_024, 32, 0);
    assert_eq!(
        (o.blocks_per_sm, o.limiters.clone()),
        (1, vec![Limiter::Warps])
    );
    assert!((o.occupancy_pct - 200.0 / 3.0).abs() < 1e-9);
    // Turing holds 32 warps: the same block fills it.
    assert_eq!(run(7, 5, 1_024, 32, 0).occupancy_pct, 100.0);
    // Pascal GP10x: 256-byte granularity, no reservation: 5 000 B → 5 120 B, 19 in 96 KiB.
    let o = run(6, 1, 64, 32, 5_000);
    assert_eq!(
        (o.blocks_per_sm, o.limiters),
        (19, vec![Limiter::SharedMemory])
    );
    // Ada: 24 block slots.
    assert_eq!(run(8, 9, 32, 16, 0).blocks_per_sm, 24);
    assert!(GpuArch::for_compute_capability(3, 5).is_none());
}

#[test]
fn kernel_rows_weight_occupancy_by_time_and_name_the_limiter() {
    let mut s = Synth::new((9, 0));
    let s7 = s.stream(7);
    let info = |registers, achieved| KernelInfo {
        block: Some([256, 1, 1]),
        registers_per_thread: Some(registers),
        shared_memory_bytes: Some(0),
        occupancy_pct: Some(achieved),
        ..KernelInfo::default()
    };
    // 3 000 ns at 25% (128 registers), 1 000 ns at 100% (32 registers): 43.75%.
    s.kernel(s7, 0, 3_000, "volta_sgemm_128x64_nn", info(128, 20.0));
    s.kernel(s7, 3_000, 1_000, "volta_sgemm_128x64_nn", info(32, 0.0));
    s.kernel(s7, 4_000, 500, "relu", info(32, 90.0));
    let (_, ins) = s.analyze();
    let k = &ins.kernels[0];
    assert_eq!(
        (k.name.as_str(), k.calls, k.total_ns),
        ("volta_sgemm_128x64_nn", 2, 4_000)
    );
    assert!((k.theoretical_occupancy_pct.expect("known") - 43.75).abs() < 1e-9);
    assert_eq!(k.occupancy_limiter.as_deref(), Some("registers"));
    // Kineto's 0 means "not computed": only the 20% launch counts, beside its own 25%.
    assert_eq!(k.achieved_occupancy_pct, Some(20.0));
    assert_eq!(k.theoretical_occupancy_where_achieved_pct, Some(25.0));
    assert!((k.achieved_occupancy_time_pct - 75.0).abs() < 1e-9);
    assert!(!k.tensor_cores);
    // The FP32 GEMM is 89% of kernel time, off Tensor Cores, at 43.75% occupancy; but it is
    // cuBLAS's, whose launch the user does not choose: no occupancy finding.
    assert_eq!(k.owner, crate::names::KernelOwner::VendorLibrary);
    assert_eq!(rules(&ins), vec![(Rule::NoTensorCores, 2_000)]);
}

#[test]
fn pageable_copies_blocking_syncs_and_lonely_communication_are_found() {
    let mut s = Synth::new((9, 0));
    let (s7, s8) = (s.stream(7), s.stream(8));
    let copy = |src| CopyInfo {
        kind: CopyKind::HtoD,
        bytes: Some(1_000_000),
        src_kind: Some(src),
        dst_kind: Some(MemoryKind::Device),
        correlation: None,
        external_id: None,
    };
    // Pageable at 1 000 000 B / 4 000 ns = 250 GB/s, pinned at 500 GB/s: half the time saved.
    s.copy(s7, 0, 4_000, copy(MemoryKind::Pageable));
    s.copy(s7, 4_000, 2_000, copy(MemoryKind::Pinned));
    s.kernel(
        s8,
        6_000,
        4_000,
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
        KernelInfo::default(),
    );
    // A sync while the GPU is busy to the end costs nothing: no blocking_sync finding.
    s.cpu(6_000, 4_000, "cudaDeviceSynchronize", EventKind::Runtime);
    let (_, ins) = s.analyze();
    assert_eq!(
        rules(&ins),
        vec![
            (Rule::CommNotOverlapped, 4_000),
            (Rule::PageableCopies, 2_000)
        ]
    );
    let pageable = &ins.findings[1];
    assert!(
        pageable.message.contains("250.0 GB/s"),
        "{}",
        pageable.message
    );
    assert!(
        pageable.message.contains("500.0 GB/s"),
        "{}",
        pageable.message
    );
    assert_eq!(pageable.events.len(), 1);
}

#[test]
fn communication_is_told_by_name() {
    // `is_communication` lives in `crate::names`, re-exported here.
    assert!(is_communication(
        "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)"
    ));
    assert!(is_communication("void ncclDevKernel_Generic<...>"));
    assert!(is_communication("RCCL_AllReduce"));
    assert!(!is_communication("volta_sgemm_128x64_nn"));
}

/// Thousands of devices (a hostile or merged file) give a row each with the right figures; the
/// per-device lookups are binary searches, so this stays linear.
#[test]
fn thousands_of_devices_each_get_their_breakdown() {
    let mut b = ProfileBuilder::new("many.json".into(), Format::ChromeJson);
    b.origin_raw_ns = Some(0);
    let k = b.intern("k");
    for device in 0..5_000u32 {
        let t = b.track(TrackKey::Gpu {
            device,
            context: 1,
            stream: 7,
            lane: GpuLane::Work,
        });
        b.push_kernel(t, 0, 100, k, KernelInfo::default(), 0);
        b.push_kernel(t, 300, 100, k, KernelInfo::default(), 0);
    }
    let p = b.finish();
    let ins = analyze(&p, TimeRange::ALL, &AnalyzeOptions::default());
    assert_eq!(ins.devices.len(), 5_000);
    for (i, d) in ins.devices.iter().enumerate() {
        assert_eq!(d.device, u32::try_from(i).unwrap());
        assert_eq!((d.window_ns, d.busy_ns, d.idle_ns), (400, 200, 200));
        // No launching calls: the 200 ns gap is short, kernel wait.
        assert_eq!(d.idle_breakdown.kernel_wait_ns, 200);
    }
}
