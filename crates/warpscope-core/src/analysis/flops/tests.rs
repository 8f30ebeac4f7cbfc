//! A synthetic training step with hand-worked FLOPs: autocast's double `aten::conv2d`,
//! `aten::linear` → `aten::addmm`, `aten::relu_` → `aten::clamp_min_`, a cast copy and an
//! operator without a formula, on an H200.

use super::*;
use crate::builder::{ProfileBuilder, TrackId};
use crate::model::{
    ApiInfo, Device, Dims, Dtype, EventKind, Format, GpuLane, KernelInfo, OpArgs, OpInput, TraceId,
    TrackKey,
};

struct Synth {
    b: ProfileBuilder,
    cpu: TrackId,
    gpu: TrackId,
    correlation: u64,
}

fn t(dtype: Dtype, dims: &[i64]) -> OpInput {
    OpInput {
        dtype,
        dims: Dims::Shape(dims.into()),
        ints: None,
    }
}

fn ints(v: &[i64]) -> OpInput {
    OpInput {
        dtype: Dtype::NotTensor,
        dims: Dims::Shape(Box::new([])),
        ints: Some(v.into()),
    }
}

impl Synth {
    fn new() -> Self {
        let mut b = ProfileBuilder::new("synthetic.json".into(), Format::ChromeJson);
        b.origin_raw_ns = Some(0);
        b.devices.push(Device {
            id: 0,
            name: "NVIDIA H200".into(),
            ..Device::default()
        });
        let cpu = b.track(TrackKey::Thread {
            pid: TraceId::Int(1),
            tid: TraceId::Int(1),
        });
        let gpu = b.track(TrackKey::Gpu {
            device: 0,
            context: 1,
            stream: 7,
            lane: GpuLane::Work,
        });
        Self {
            b,
            cpu,
            gpu,
            correlation: 0,
        }
    }

    fn op(&mut self, start_ns: i64, dur_ns: i64, name: &str, inputs: Vec<OpInput>) {
        let args = OpArgs {
            inputs: inputs.into(),
            flops: None,
            bytes: None,
        };
        let key = format!("{args:?}");
        let row = self.b.intern_op_args(key.as_bytes(), || args);
        let name = self.b.intern(name);
        self.b.push_op(self.cpu, start_ns, dur_ns, name, row);
    }

    fn plain(&mut self, start_ns: i64, dur_ns: i64, name: &str, kind: EventKind) {
        let name = self.b.intern(name);
        self.b.push(self.cpu, start_ns, dur_ns, name, kind);
    }

    /// A launch at `at_ns` of kernel `name` running `start_ns..start_ns + dur_ns`.
    fn launch(&mut self, at_ns: i64, start_ns: i64, dur_ns: i64, name: &str) {
        self.correlation += 1;
        let call = self.b.intern("cudaLaunchKernel");
        let api = ApiInfo {
            correlation: Some(self.correlation),
            ..ApiInfo::default()
        };
        self.b
            .push_api(self.cpu, at_ns, 10, call, EventKind::Runtime, api, 0);
        let info = KernelInfo {
            correlation: Some(self.correlation),
            ..KernelInfo::default()
        };
        let name = self.b.intern(name);
        self.b
            .push_kernel(self.gpu, start_ns, dur_ns, name, info, 0);
    }
}

const F: Dtype = Dtype::F32;
const B: Dtype = Dtype::Bf16;
/// 32·56·56 · 3·3 · 64 · 64 · 2.
const CONV_FLOPS: u64 = 7_398_752_256;
/// 2 · 32 · 2048 · 1000.
const ADDMM_FLOPS: u64 = 131_072_000;

fn step() -> Profile {
    let mut s = Synth::new();
    let x = [32, 64, 56, 56];
    let w = [64, 64, 3, 3];
    let conv_args = |d: Dtype| {
        vec![
            t(d, &x),
            t(d, &w),
            t(Dtype::NotTensor, &[]),
            ints(&[1, 1]),
            ints(&[1, 1]),
            ints(&[1, 1]),
            ints(&[1]),
        ]
    };
    s.plain(0, 100_000, "ProfilerStep#1", EventKind::UserAnnotation);
    // Autocast: the outer conv2d sees FP32, casts (a copy), then the inner bf16 conv2d.
    s.op(1_000, 19_000, "aten::conv2d", conv_args(F));
    s.op(1_100, 400, "aten::to", vec![t(F, &x)]);
    s.op(1_150, 300, "aten::copy_", vec![t(B, &x), t(F, &x)]);
    s.launch(1_200, 1_200, 1_000, "copy_kernel");
    s.op(2_000, 17_000, "aten::conv2d", conv_args(B));
    s.op(2_100, 15_900, "aten::cudnn_convolution", {
        vec![
            t(B, &x),
            t(B, &w),
            ints(&[1, 1]),
            ints(&[1, 1]),
            ints(&[1, 1]),
            ints(&[1]),
        ]
    });
    s.launch(
        2_200,
        3_000,
        10_000,
        "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32",
    );
    // linear → addmm, FP32 on the CUDA cores.
    s.op(
        30_000,
        10_000,
        "aten::linear",
        vec![t(F, &[32, 2048]), t(F, &[1000, 2048])],
    );
    s.op(30_100, 9_000, "aten::addmm", {
        vec![t(F, &[1000]), t(F, &[32, 2048]), t(F, &[2048, 1000])]
    });
    s.launch(
        30_200,
        31_000,
        5_000,
        "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_ffma",
    );
    // relu_ → clamp_min_.
    s.op(50_000, 2_000, "aten::relu_", vec![t(F, &[32, 1000])]);
    s.op(50_100, 1_000, "aten::clamp_min_", vec![t(F, &[32, 1000])]);
    s.launch(50_200, 51_000, 2_000, "elementwise_kernel");
    // No formula: its GPU time is owned, its FLOPs unknown.
    s.op(60_000, 1_000, "aten::_foreach_add_", vec![]);
    s.launch(60_100, 60_500, 1_000, "multi_tensor_apply_kernel");
    s.b.finish()
}

fn row<'a>(rows: &'a [WorkRow], name: &str) -> Option<&'a WorkRow> {
    rows.iter().find(|r| r.name == name)
}

#[test]
fn each_piece_of_work_is_counted_once_by_the_innermost_operator() {
    let p = step();
    let r = flops_report(&p, TimeRange::ALL, PeakOverride::default());
    let ops = &r.operators;
    let conv = row(ops, "aten::cudnn_convolution").expect("the convolution counts");
    assert_eq!(conv.flops, Some(CONV_FLOPS));
    assert_eq!(conv.gpu_time_ns, 10_000);
    assert_eq!(conv.precision, Some(Precision::Bf16));
    // Neither conv2d nor linear counts again; their work is in their inner operators.
    assert!(row(ops, "aten::conv2d").is_none());
    assert!(row(ops, "aten::linear").is_none());
    assert_eq!(
        row(ops, "aten::addmm").and_then(|r| r.flops),
        Some(ADDMM_FLOPS)
    );
    assert_eq!(
        row(ops, "aten::clamp_min_").and_then(|r| r.flops),
        Some(32_000)
    );
    assert!(row(ops, "aten::relu_").is_none());
    // The autocast cast outside the inner convolution counts its bytes: 6 422 528 × (2 + 4).
    let copy = row(ops, "aten::copy_").expect("the cast counts");
    assert_eq!((copy.flops, copy.bytes), (Some(0), Some(38_535_168)));
    // Without a formula: GPU time, unknown FLOPs (never 0).
    let foreach = row(ops, "aten::_foreach_add_").expect("owns GPU time");
    assert_eq!((foreach.flops, foreach.gpu_time_ns), (None, 1_000));
    assert_eq!(foreach.roofline.tflops_per_s, None);
}

#[test]
fn throughput_peak_and_bound_per_operator() {
    let p = step();
    let r = flops_report(&p, TimeRange::ALL, PeakOverride::default());
    let conv = row(&r.operators, "aten::cudnn_convolution").expect("row");
    // 7 398 752 256 FLOPs in 10 µs: 739.875 TFLOP/s, 74.77% of the H200's 989.5 bf16.
    let tf = conv.roofline.tflops_per_s.expect("known");
    assert!((tf - 739.875_225_6).abs() < 1e-6, "{tf}");
    let pct = conv.roofline.pct_of_peak.expect("known");
    assert!((pct - 100.0 * 739.875_225_6 / 989.5).abs() < 1e-6, "{pct}");
    assert_eq!(conv.roofline.bound, Some(Bound::Compute));
    // addmm runs an FFMA kernel: FP32 against 67 TFLOP/s.
    let addmm = row(&r.operators, "aten::addmm").expect("row");
    assert_eq!(addmm.precision, Some(Precision::Fp32));
    let pct = addmm.roofline.pct_of_peak.expect("known");
    assert!((pct - 100.0 * 26.2144 / 67.0).abs() < 1e-6, "{pct}");
    let clamp = row(&r.operators, "aten::clamp_min_").expect("row");
    assert_eq!(clamp.roofline.bound, Some(Bound::Memory));
    // Kernels inherit their owner's FLOPs.
    let k = row(
        &r.kernels,
        "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32",
    )
    .expect("k");
    assert_eq!(k.flops, Some(CONV_FLOPS));
}

#[test]
fn model_flops_mfu_and_steps() {
    let p = step();
    let r = flops_report(&p, TimeRange::ALL, PeakOverride::default());
    let d = &r.devices[0];
    assert_eq!(d.model_flops, CONV_FLOPS + ADDMM_FLOPS);
    assert_eq!(d.hardware_flops, CONV_FLOPS + ADDMM_FLOPS + 32_000);
    assert_eq!(d.precision, Some(Precision::Bf16));
    assert_eq!(d.peak_flops_per_s, Some(989.5e12));
    // The window runs from the first owned kernel (1 200) to the last end (61 500).
    assert_eq!(d.window_ns, 60_300);
    let mfu = d.mfu.expect("a peak");
    let want = (CONV_FLOPS + ADDMM_FLOPS) as f64 / (60_300e-9 * 989.5e12);
    assert!((mfu - want).abs() < 1e-12, "{mfu} {want}");
    assert_eq!(d.steps.len(), 1);
    assert_eq!((d.steps[0].step, d.steps[0].time_ns), (1, 100_000));
    assert_eq!(d.steps[0].flops, CONV_FLOPS + ADDMM_FLOPS);
    // An override replaces the table.
    let over = PeakOverride {
        tflops: Some(100.0),
        gbs: Some(1000.0),
    };
    let r2 = flops_report(&p, TimeRange::ALL, over);
    assert_eq!(r2.devices[0].peak_flops_per_s, Some(100e12));
    assert_eq!(r2.devices[0].peak_source, "--peak-tflops and --peak-gbs");
}

#[test]
fn kernel_and_call_lookups_for_the_viewer() {
    let p = step();
    let att = attribute(&p, TimeRange::ALL);
    let gpu = p
        .tracks
        .iter()
        .position(|t| t.key.is_gpu())
        .expect("a GPU track");
    let ev = &p.tracks[gpu].events;
    let conv_kernel = (0..ev.len())
        .find(|&i| p.str(ev.name[i]).starts_with("sm90"))
        .expect("the conv kernel");
    let e = crate::model::EventRef {
        track: u32::try_from(gpu).expect("small"),
        index: u32::try_from(conv_kernel).expect("small"),
    };
    assert_eq!(att.kernel_flops(e), Some(CONV_FLOPS as f64));
    let owner = att.calls[att.kernel(e).expect("owned").call as usize];
    assert_eq!(
        p.str(p.tracks[owner.event.track as usize].events.name[owner.event.index as usize]),
        "aten::cudnn_convolution"
    );
    assert!(att.call(owner.event).is_some_and(|c| c.counted));
}

#[test]
fn findings_name_fp32_matmuls_and_memory_bound_time() {
    let p = step();
    let r = flops_report(&p, TimeRange::ALL, PeakOverride::default());
    let rules: Vec<FlopsRule> = r.findings.iter().map(|f| f.rule).collect();
    // addmm in FP32: 5 µs of 19 µs of operator time (26%).
    assert!(rules.contains(&FlopsRule::Fp32Matmul), "{rules:?}");
    let f = r
        .findings
        .iter()
        .find(|f| f.rule == FlopsRule::Fp32Matmul)
        .expect("fired");
    // Saving scaled by 1 - 67 / 494.5.
    assert_eq!(f.time_ns, (5_000.0 * (1.0 - 67.0 / 494.5)) as i64);
    // clamp_min_ and the copy are memory-bound: 3 µs of 19 µs, below 20%.
    assert!(!rules.contains(&FlopsRule::MemoryBoundOps));
}

/// The kernels of `p` by name, as events.
fn kernel_named(p: &Profile, name: &str) -> crate::model::EventRef {
    let gpu = p
        .tracks
        .iter()
        .position(|t| t.key.is_gpu())
        .expect("a GPU track");
    let ev = &p.tracks[gpu].events;
    let i = (0..ev.len())
        .find(|&i| p.str(ev.name[i]) == name)
        .expect("the kernel");
    crate::model::EventRef {
        track: u32::try_from(gpu).expect("small"),
        index: u32::try_from(i).expect("small"),
    }
}

#[test]
fn layout_kernels_get_no_flops_beside_the_arithmetic_kernels() {
    let mut s = Synth::new();
    let a = [64, 128];
    let b = [128, 32];
    // mm: 2 · 64 · 128 · 32 FLOPs; bytes (64·128 + 128·32 + 64·32) · 4.
    let flops = 2 * 64 * 128 * 32;
    let bytes = (64 * 128 + 128 * 32 + 64 * 32) * 4;
    s.op(0, 10_000, "aten::mm", vec![t(F, &a), t(F, &b)]);
    s.launch(
        100,
        1_000,
        1_000,
        "void cudnn::ops::nchwToNhwcKernel<float>",
    );
    s.launch(200, 2_000, 3_000, "gemm_a");
    s.launch(300, 5_000, 1_000, "gemm_b");
    s.launch(400, 6_000, 500, "void cudnn::ops::nhwcToNchwKernel<float>");
    // An operator that launches layout kernels alone: split over them by time.
    s.op(20_000, 5_000, "aten::mm", vec![t(F, &a), t(F, &b)]);
    s.launch(20_100, 21_000, 1_000, "nchwToNhwcKernel_alone");
    let p = s.b.finish();
    let att = attribute(&p, TimeRange::ALL);
    let k = |name: &str| kernel_named(&p, name);
    // The two GEMM kernels (4 µs) carry all the FLOPs and bytes, 3:1 by time.
    assert_eq!(att.kernel_flops(k("gemm_a")), Some(flops as f64 * 0.75));
    assert_eq!(att.kernel_flops(k("gemm_b")), Some(flops as f64 * 0.25));
    assert_eq!(att.kernel_bytes(k("gemm_a")), Some(bytes as f64 * 0.75));
    // The layout kernels do no arithmetic; what they move is not known from the shapes.
    let layout = k("void cudnn::ops::nchwToNhwcKernel<float>");
    assert_eq!(att.kernel_flops(layout), Some(0.0));
    assert_eq!(att.kernel_bytes(layout), None);
    // Alone, the layout kernel holds its operator's work.
    assert_eq!(
        att.kernel_flops(k("nchwToNhwcKernel_alone")),
        Some(flops as f64)
    );
    // The operator's own figures count all its GPU time (layout kernels included).
    let rows = operator_rows(&p, &att, &device_peaks(&p, PeakOverride::default()));
    let mm = rows.iter().find(|r| r.name == "aten::mm").expect("mm row");
    assert_eq!(mm.gpu_time_ns, 5_500 + 1_000);
    assert_eq!(mm.flops, Some(2 * flops));
    // The kernel table: the layout kernel reads 0 FLOP/s and has no intensity.
    let krows = kernel_rows(&p, &att, &device_peaks(&p, PeakOverride::default()));
    let row = krows
        .iter()
        .find(|r| r.name.contains("cudnn::ops::nchwToNhwc"))
        .expect("layout row");
    assert_eq!(row.flops, Some(0));
    assert_eq!(row.bytes, None);
    assert_eq!(row.roofline.intensity, None);
}
