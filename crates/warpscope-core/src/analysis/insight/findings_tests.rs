//! Synthetic profiles for the findings' rules of `docs/analysis.md`, section 7: whose advice a
//! finding gives, the operator host wait is charged to, the occupancy pair, and the time at
//! stake (what a blocking sync costs, the critical path, measured or estimate).

use super::tests::Synth;
use super::*;
use crate::model::KernelInfo;
use crate::names::KernelOwner;

/// A launch of `block` threads at `registers` per thread, with Kineto's achieved occupancy.
fn launch(registers: u32, achieved: f32) -> KernelInfo {
    KernelInfo {
        block: Some([256, 1, 1]),
        registers_per_thread: Some(registers),
        shared_memory_bytes: Some(0),
        occupancy_pct: Some(achieved),
        ..KernelInfo::default()
    }
}

/// No finding's time at stake exceeds what it can explain: the idle time of its device for the
/// rules about idle time, the device's kernel (or copy) time for the rules about GPU work, the
/// communication time for communication; and each says whether it is measured.
fn check_time_at_stake(ins: &Insights) {
    let kernel_ns = crate::analysis::saturating_sum(ins.devices.iter().map(|d| d.kernel_ns));
    for f in &ins.findings {
        assert!(f.time_ns > 0, "{f:?}");
        assert_eq!(f.at_stake_basis, f.rule.at_stake_basis());
        let d = f
            .device
            .and_then(|id| ins.devices.iter().find(|d| d.device == id));
        let bound = match (f.rule, d) {
            (Rule::HostWait | Rule::LaunchBound | Rule::BlockingSync, Some(d)) => {
                d.idle_breakdown.host_wait_ns + d.idle_breakdown.kernel_wait_ns
            }
            (Rule::GpuIdleOther, Some(d)) => d.idle_breakdown.other_ns,
            (Rule::CommNotOverlapped, Some(d)) => d.comm_ns,
            (Rule::NoTensorCores, Some(d)) => d.kernel_ns,
            (Rule::PageableCopies, Some(d)) => d.busy_ns,
            (Rule::LowOccupancy, None) => kernel_ns,
            _ => panic!("unexpected device of {f:?}"),
        };
        assert!(f.time_ns <= bound, "{f:?} exceeds {bound}");
    }
}

#[test]
fn occupancy_advice_goes_only_to_kernels_the_user_owns() {
    let mut s = Synth::new((9, 0));
    let (s7, s8) = (s.stream(7), s.stream(8));
    // 128 registers at 256 threads: 25% on Hopper, limited by registers. Five kernels of equal
    // time, back to back on one stream, then a collective on another.
    let names = [
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "volta_sgemm_128x64_nn",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
        "my_stencil_kernel(float*, float const*)",
        "triton_red_fused_native_layer_norm_view_1",
    ];
    for (i, name) in names.iter().enumerate() {
        let track = if i == 0 { s8 } else { s7 };
        let start = i64::try_from(i).expect("small") * 10_000;
        s.kernel(track, start, 10_000, name, launch(128, 20.0));
    }
    let (_, ins) = s.analyze();
    let owners: Vec<(String, KernelOwner)> = ins
        .kernels
        .iter()
        .map(|k| (k.name.chars().take(6).collect(), k.owner))
        .collect();
    assert!(owners.contains(&("ncclDe".to_string(), KernelOwner::Communication)));
    assert!(owners.contains(&("my_ste".to_string(), KernelOwner::User)));
    let occupancy: Vec<&Finding> = ins
        .findings
        .iter()
        .filter(|f| f.rule == Rule::LowOccupancy)
        .collect();
    // Only the user's kernel and the generated one: NCCL's time is waiting on peers, cuBLAS and
    // ATen choose their own launch.
    assert_eq!(occupancy.len(), 2, "{occupancy:#?}");
    let mine = occupancy
        .iter()
        .find(|f| f.message.contains("my_stencil_kernel"))
        .expect("the user's kernel");
    assert!(
        mine.message.contains("__launch_bounds__"),
        "{}",
        mine.message
    );
    let generated = occupancy
        .iter()
        .find(|f| f.message.contains("triton_red"))
        .expect("the generated kernel");
    assert!(
        generated.message.contains("max-autotune"),
        "{}",
        generated.message
    );
    assert!(!generated.message.contains("__launch_bounds__"));
    assert!(
        !ins.findings
            .iter()
            .any(|f| f.message.contains("ncclDev") && f.rule == Rule::LowOccupancy)
    );
    // 10 000 ns at 25% of the 50% bar: half of it.
    assert_eq!(mine.time_ns, 5_000);
    assert_eq!(mine.at_stake_basis, AtStakeBasis::Estimate);
    check_time_at_stake(&ins);
}

/// Host wait is charged to the innermost operator that is not a step or profiler annotation,
/// and the finding names the first of the list the CLI prints and the viewer shows.
#[test]
fn host_wait_is_charged_to_the_same_operator_everywhere() {
    let mut s = Synth::new((9, 0));
    let s7 = s.stream(7);
    s.cpu(0, 100_000, "ProfilerStep#1", EventKind::UserAnnotation);
    s.cpu(
        10,
        500,
        "[pytorch|profiler|execution_trace|thread]",
        EventKind::UserAnnotation,
    );
    s.cpu(50_000, 2_000, "aten::relu_", EventKind::CpuOp);
    s.cpu(52_000, 18_000, "aten::slow", EventKind::CpuOp);
    let c1 = s.call(100, 10, "cudaLaunchKernel");
    let c2 = s.call(51_000, 10, "cudaLaunchKernel");
    let c3 = s.call(69_000, 10, "cudaLaunchKernel");
    s.launched(s7, 1_000, 1_000, "k1", c1);
    // 2 000..51 500: the thread was between operators (only the step was open) until
    // aten::relu_ launched k2: charged to aten::relu_.
    s.launched(s7, 51_500, 1_000, "k2", c2);
    // 52 500..69 500: inside aten::slow.
    s.launched(s7, 69_500, 500, "k3", c3);
    let (p, ins) = s.analyze();
    let ops: Vec<(Option<&str>, i64)> = ins
        .host_wait_ops_of(0)
        .iter()
        .map(|o| (o.operator.as_deref(), o.time_ns))
        .collect();
    assert_eq!(
        ops,
        vec![(Some("aten::relu_"), 49_500), (Some("aten::slow"), 17_000)]
    );
    let top = ins.top_host_wait_op(0).expect("host wait");
    assert_eq!(top.operator.as_deref(), Some("aten::relu_"));
    let f = ins
        .findings
        .iter()
        .find(|f| f.rule == Rule::HostWait)
        .expect("host wait finding");
    assert!(f.message.contains("`aten::relu_`"), "{}", f.message);
    for g in &ins.gaps {
        let op = g.operator.map(|e| {
            p.str(p.tracks[e.track as usize].events.name[e.index as usize])
                .to_string()
        });
        assert!(
            !op.as_deref().is_some_and(is_step_or_profiler_annotation),
            "{op:?}"
        );
    }
    assert!(is_step_or_profiler_annotation("ProfilerStep#3"));
    assert!(is_step_or_profiler_annotation("train_step_12"));
    assert!(is_step_or_profiler_annotation("PyTorch Profiler (0)"));
    assert!(!is_step_or_profiler_annotation("aten::relu_"));
    assert!(!is_step_or_profiler_annotation("## forward ##"));
    check_time_at_stake(&ins);
}

/// With no operator open at all, the finding says the thread was between operators.
#[test]
fn host_wait_between_operators_says_so() {
    let mut s = Synth::new((9, 0));
    let s7 = s.stream(7);
    s.cpu(0, 100_000, "ProfilerStep#1", EventKind::UserAnnotation);
    let c1 = s.call(100, 10, "cudaLaunchKernel");
    let c2 = s.call(50_000, 10, "cudaLaunchKernel");
    s.launched(s7, 1_000, 1_000, "k1", c1);
    s.launched(s7, 50_100, 1_000, "k2", c2);
    let (_, ins) = s.analyze();
    assert_eq!(ins.top_host_wait_op(0).expect("one").operator, None);
    let f = &ins.findings[0];
    assert_eq!(f.rule, Rule::HostWait);
    assert!(f.message.contains("between operators"), "{}", f.message);
}

/// Theoretical and achieved occupancy are averaged over the same kernels, weighted by time.
#[test]
fn achieved_and_theoretical_occupancy_average_the_same_kernels() {
    let mut s = Synth::new((9, 0));
    let s7 = s.stream(7);
    // 9 000 ns at 25% theoretical that Kineto did not estimate (its 0)...
    s.kernel(s7, 0, 9_000, "a", launch(128, 0.0));
    // ...1 000 ns at 100% theoretical, 100% achieved...
    s.kernel(s7, 9_000, 1_000, "b", launch(32, 100.0));
    // ...and 1 000 ns with Kineto's 10% but no launch details: no theoretical value.
    let no_details = KernelInfo {
        occupancy_pct: Some(10.0),
        ..KernelInfo::default()
    };
    s.kernel(s7, 10_000, 1_000, "c", no_details);
    let (_, ins) = s.analyze();
    let d = &ins.devices[0];
    assert!((d.theoretical_occupancy_pct.expect("known") - 32.5).abs() < 1e-9);
    // Over kernel b only (the one with both figures): 100% achieved of 100% theoretical, not
    // 55% (b and c) beside 32.5% (a and b).
    assert_eq!(d.achieved_occupancy_pct, Some(100.0));
    assert_eq!(d.theoretical_occupancy_where_achieved_pct, Some(100.0));
    assert!((d.achieved_occupancy_time_pct - 100.0 / 11.0).abs() < 1e-9);
    let c = ins.kernels.iter().find(|k| k.name == "c").expect("c");
    assert_eq!(
        (c.theoretical_occupancy_pct, c.achieved_occupancy_pct),
        (None, None)
    );
}

/// A sync that blocks the CPU while the GPU is busy costs nothing; what it costs is the GPU
/// idle time after the GPU ran dry during it, until the CPU launched more, up to the time the
/// CPU was blocked (what it could have done meanwhile).
#[test]
fn a_blocking_sync_costs_the_idle_time_after_it() {
    // The CPU blocks 9.8 µs while the GPU works, and launches the next kernel 40 ns after the
    // GPU ran dry.
    let mut s = Synth::new((9, 0));
    let s7 = s.stream(7);
    let c1 = s.call(0, 100, "cudaLaunchKernel");
    s.launched(s7, 150, 9_850, "k1", c1);
    s.cpu(200, 9_810, "cudaDeviceSynchronize", EventKind::Runtime);
    let c2 = s.call(10_015, 10, "cudaLaunchKernel");
    s.launched(s7, 10_040, 1_000, "k2", c2);
    let (_, ins) = s.analyze();
    assert!(ins.gaps[0].sync.is_some());
    assert!(
        !ins.findings.iter().any(|f| f.rule == Rule::BlockingSync),
        "{:#?}",
        ins.findings
    );

    // Now the CPU works 20 µs after the sync returns before it launches: the GPU idles
    // 10 000..30 010 behind the sync, of which the 9 810 ns the CPU was blocked are at stake
    // (it could have done that much of its work while the GPU was busy).
    let mut s = Synth::new((9, 0));
    let s7 = s.stream(7);
    let c1 = s.call(0, 100, "cudaLaunchKernel");
    s.launched(s7, 150, 9_850, "k1", c1);
    s.cpu(190, 9_830, "aten::item", EventKind::CpuOp);
    s.cpu(200, 9_810, "cudaStreamSynchronize", EventKind::Runtime);
    s.cpu(10_010, 20_000, "aten::loss_stuff", EventKind::CpuOp);
    let c2 = s.call(29_990, 10, "cudaLaunchKernel");
    s.launched(s7, 30_010, 1_000, "k2", c2);
    // A later sync made while the GPU was already idle does not count: it did not wait.
    s.cpu(31_100, 10, "cudaStreamSynchronize", EventKind::Runtime);
    let c3 = s.call(40_000, 10, "cudaLaunchKernel");
    s.launched(s7, 40_020, 1_000, "k3", c3);
    let (_, ins) = s.analyze();
    let f = ins
        .findings
        .iter()
        .find(|f| f.rule == Rule::BlockingSync)
        .expect("blocking sync");
    assert_eq!((f.device, f.time_ns), (Some(0), 9_810));
    assert_eq!(f.at_stake_basis, AtStakeBasis::Measured);
    assert!(
        f.message
            .contains("`cudaStreamSynchronize` in `aten::item`, 9.8100µs"),
        "{}",
        f.message
    );
    assert!(f.message.contains("then idled 20.010µs"), "{}", f.message);
    assert_eq!(f.events.len(), 1);
    check_time_at_stake(&ins);
}

/// Making a kernel faster shortens the step only where the step waits on the GPU: not in a run
/// of work that the GPU then follows by waiting for the CPU.
#[test]
fn gpu_side_time_at_stake_counts_only_the_critical_path() {
    let mut s = Synth::new((9, 0));
    let s7 = s.stream(7);
    let c1 = s.call(0, 100, "cudaLaunchKernel");
    let c2 = s.call(15_000, 100, "cudaLaunchKernel");
    // An FP32 cuBLAS GEMM, then 5 µs of waiting for the CPU: off the critical path.
    s.launched(s7, 200, 10_000, "volta_sgemm_128x64_nn", c1);
    // The same GEMM at the end of the window: on it.
    s.launched(s7, 15_200, 10_000, "volta_sgemm_128x64_nn", c2);
    let (_, ins) = s.analyze();
    let f = ins
        .findings
        .iter()
        .find(|f| f.rule == Rule::NoTensorCores)
        .expect("no tensor cores");
    // Half of the 10 µs on the critical path, not half of all 20 µs.
    assert_eq!(f.time_ns, 5_000);
    assert_eq!(f.at_stake_basis, AtStakeBasis::Estimate);
    assert!(f.message.contains("Only 10.000µs"), "{}", f.message);
    check_time_at_stake(&ins);
}

/// The user's own GEMM is not advised to flip TF32: that flag does not change it.
#[test]
fn the_users_own_gemm_gets_no_tensor_core_flag_advice() {
    let mut s = Synth::new((9, 0));
    let s7 = s.stream(7);
    s.kernel(s7, 0, 10_000, "my_sgemm_kernel", KernelInfo::default());
    let (_, ins) = s.analyze();
    assert!(ins.findings.is_empty(), "{:#?}", ins.findings);
}
