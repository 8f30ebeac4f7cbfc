//! FLOPs (`docs/flops.md`): every Kineto sample with `Input Dims` against the independent
//! Python reference (`scripts/flops_reference.py`), the forward convolutions and matrix
//! products against what PyTorch's own profiler reported (`pytorch_truth.json`), and hostile
//! shapes in a trace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use warpscope_core::analysis::flops::{PeakOverride, flops_report, op_work};
use warpscope_core::model::EventKind;
use warpscope_core::{Profile, Progress, TimeRange, import_bytes};

/// The Kineto samples that record operator shapes.
const SAMPLES: &[&str] = &[
    "kineto-h200-mem/resnet50_b32_fp32_mem_flops.pt.trace.json.gz",
    "kineto-h200-mem/resnet50_b32_bf16_mem_flops.pt.trace.json.gz",
    "kineto-h200-mem/mlp_compiled_triton.pt.trace.json.gz",
    "kineto-h100/alexnet_b8.pt.trace.json.gz",
    "kineto-h100/alexnet_b128.pt.trace.json.gz",
    "kineto-h100/resnet50_b64_amp.pt.trace.json.gz",
    "kineto-h100/resnet50_b64_fp32.pt.trace.json.gz",
    "chrome-kineto/kineto2021_v100_resnet50_worker0.pt.trace.json.gz",
    "chrome-kineto/hta_a100_2022_rank3of8_async_cpu_to_gpu.json.gz",
    "chrome-kineto/hta_mi250_rocm6.2_minitoy.json.gz",
    "chrome-kineto/hta_world128_sampled_rank-0.json.gz",
    "chrome-kineto/tracelens_b200_world8_eager_no_metadata.json.gz",
    "chrome-kineto/tracelens_h100_bert-small_with_stack.json.gz",
];

/// The sum of the formula over every event named `name`, counted or not (what PyTorch's
/// profiler sums).
fn all_events(p: &Profile, name: &str) -> u64 {
    let mut total = 0;
    for t in &p.tracks {
        for i in 0..t.events.len() {
            if t.events.kind[i] == EventKind::CpuOp && p.str(t.events.name[i]) == name {
                total += op_work(p, t, i).and_then(|w| w.flops).unwrap_or(0);
            }
        }
    }
    total
}

fn reference(script: &Path, file: &Path) -> Option<serde_json::Value> {
    let out = match std::process::Command::new("python3")
        .arg(script)
        .arg(file)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipping the reference: python3 cannot run: {e}");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "reference failed on {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn every_sample_with_shapes_equals_the_python_reference() {
    let Some(root) = common::samples_dir() else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/flops_reference.py");
    for rel in SAMPLES {
        let path = root.join(rel);
        let Some(r) = reference(&script, &path) else {
            return;
        };
        let p = common::load(&path);
        let ours = flops_report(&p, TimeRange::ALL, PeakOverride::default());
        let mut our_ops: Vec<serde_json::Value> = ours
            .operators
            .iter()
            .map(|o| {
                serde_json::json!({
                    "name": o.name,
                    "calls": o.calls,
                    "flops": o.flops,
                    "bytes": o.bytes,
                    "gpu_time_ns": o.gpu_time_ns,
                })
            })
            .collect();
        our_ops.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        let ref_ops = r["operators"].as_array().unwrap();
        assert_eq!(our_ops.len(), ref_ops.len(), "{rel}: operator rows");
        for (o, want) in our_ops.iter().zip(ref_ops) {
            assert_eq!(o, want, "{rel}");
        }
        // Kernels: their owners' figures split over the kernels that do the arithmetic.
        let mut our_kernels: Vec<serde_json::Value> = ours
            .kernels
            .iter()
            .map(|k| {
                serde_json::json!({
                    "name": k.name,
                    "calls": k.calls,
                    "flops": k.flops,
                    "bytes": k.bytes,
                    "gpu_time_ns": k.gpu_time_ns,
                })
            })
            .collect();
        our_kernels.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        let ref_kernels = r["kernels"].as_array().unwrap();
        assert_eq!(our_kernels.len(), ref_kernels.len(), "{rel}: kernel rows");
        for (k, want) in our_kernels.iter().zip(ref_kernels) {
            assert_eq!(k, want, "{rel}");
        }
        // Model and hardware FLOPs per device.
        let mut ref_devices: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for d in r["devices"].as_array().unwrap() {
            ref_devices.insert(
                d["device"].to_string(),
                (
                    d["model_flops"].as_u64().unwrap(),
                    d["hardware_flops"].as_u64().unwrap(),
                ),
            );
        }
        let our_devices: BTreeMap<String, (u64, u64)> = ours
            .devices
            .iter()
            .filter(|d| d.hardware_flops > 0 || d.model_flops > 0)
            .map(|d| (d.device.to_string(), (d.model_flops, d.hardware_flops)))
            .collect();
        let ref_devices: BTreeMap<String, (u64, u64)> = ref_devices
            .into_iter()
            .filter(|(_, v)| v.0 > 0 || v.1 > 0)
            .collect();
        assert_eq!(our_devices, ref_devices, "{rel}: devices");
        // The formula over every event, counted or not.
        for (name, v) in r["all_events"].as_object().unwrap() {
            assert_eq!(all_events(&p, name), v.as_u64().unwrap(), "{rel}: {name}");
        }
    }
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn forward_convolutions_and_matrix_products_equal_pytorchs_profiler() {
    let Some(root) = common::samples_dir() else {
        return;
    };
    let truth: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join("kineto-h200-mem/pytorch_truth.json")).unwrap(),
    )
    .unwrap();
    let mut model = Vec::new();
    for run in ["resnet50_b32_fp32_mem_flops", "resnet50_b32_bf16_mem_flops"] {
        let t = &truth[run];
        let p = common::load(
            &root
                .join("kineto-h200-mem")
                .join(t["trace"].as_str().unwrap()),
        );
        // The profiler sums its formula over every event of these names: so does this.
        for (name, flops) in t["profiler_flops_by_op"].as_object().unwrap() {
            assert_eq!(
                all_events(&p, name),
                flops.as_u64().unwrap(),
                "{run}: {name}"
            );
        }
        let r = flops_report(&p, TimeRange::ALL, PeakOverride::default());
        let ops = |name: &str| {
            r.operators
                .iter()
                .find(|o| o.name == name)
                .and_then(|o| o.flops)
                .unwrap_or(0)
        };
        let conv2d = t["profiler_flops_by_op"]["aten::conv2d"].as_u64().unwrap();
        // Counted once, at the innermost convolution: FP32 has one conv2d event per
        // convolution, so the counted FLOPs equal the profiler's; bf16 autocast has two
        // nested ones, which the profiler counts twice.
        let counted = ops("aten::cudnn_convolution");
        if run.contains("fp32") {
            assert_eq!(counted, conv2d, "{run}");
        } else {
            assert_eq!(2 * counted, conv2d, "{run}");
        }
        assert_eq!(
            ops("aten::addmm"),
            t["profiler_flops_by_op"]["aten::addmm"].as_u64().unwrap()
        );
        model.push(r.devices[0].model_flops);
    }
    // The same work in FP32 and bf16.
    assert_eq!(model[0], model[1]);
}

#[test]
fn hostile_shapes_are_unknown_with_a_warning_never_a_panic() {
    let ev = |name: &str, dims: &str, types: &str| {
        format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"{name}","pid":1,"tid":1,"ts":1,"dur":5,
               "args":{{"Input type":{types},"Input Dims":{dims}}}}}"#
        )
    };
    let events = [
        ev("aten::mm", "[[-3, 4], [4, 5]]", r#"["float", "float"]"#),
        ev(
            "aten::mm",
            "[[9223372036854775807, 2], [2, 2]]",
            r#"["float", "float"]"#,
        ),
        ev(
            "aten::bmm",
            "[[4294967296, 4294967296, 4294967296], [4294967296, 4294967296, 2]]",
            r#"["float", "float"]"#,
        ),
        // Each size fits, the FLOPs (2 · 2^80) do not.
        ev(
            "aten::bmm",
            "[[1048576, 1048576, 1048576], [1048576, 1048576, 1048576]]",
            r#"["float", "float"]"#,
        ),
        ev(
            "aten::mm",
            "[[2, 2], [2, 2]]",
            r#"["c10::Mystery", "float"]"#,
        ),
        ev("aten::mm", "[[2], 7, \"x\"]", r#"["float"]"#),
        ev("aten::add", "[[2, 2], [3, 3]]", "[]"),
        ev("aten::addmm", "[[1.5, 2]]", "7"),
    ];
    let json = format!(r#"{{"traceEvents":[{}]}}"#, events.join(","));
    let p = import_bytes(Path::new("hostile.json"), json.as_bytes(), &Progress::new()).unwrap();
    // Per event: a negative size, two overflowing products, a size that is no list and a
    // fractional size; an unknown type name, and tensors recorded without a type (three).
    let count = |p: &warpscope_core::Profile, code: &str| {
        p.warnings.iter().find(|w| w.code == code).map(|w| w.count)
    };
    assert_eq!(count(&p, "op_dims_invalid"), Some(5), "{:?}", p.warnings);
    assert_eq!(count(&p, "op_dtype_unknown"), Some(4), "{:?}", p.warnings);
    // Read in blocks on worker threads (each distinct text read once, when the blocks are
    // merged), the file gives the same inputs and warnings.
    for block in [1, 50, 400] {
        let (b, _) = warpscope_core::import::chrome::import_with_block_bytes(
            warpscope_core::Input::Bytes {
                name: Path::new("hostile.json"),
                data: json.as_bytes(),
            },
            &Progress::new(),
            block,
        )
        .unwrap();
        assert_eq!(b.op_args.rows, p.op_args.rows, "block size {block}");
        assert_eq!(count(&b, "op_dims_invalid"), Some(5), "block size {block}");
        assert_eq!(count(&b, "op_dtype_unknown"), Some(4), "block size {block}");
    }
    let r = flops_report(&p, TimeRange::ALL, PeakOverride::default());
    // Every call is unknown, so nothing is counted; the overflowing bmm is named.
    assert!(r.is_empty());
    assert_eq!(r.attribution.unusable_calls, 1, "{:?}", r.warnings);
    assert!(
        r.warnings[0].contains("FLOPs beyond 2^64"),
        "{:?}",
        r.warnings
    );
    for t in &p.tracks {
        for i in 0..t.events.len() {
            if let Some(w) = op_work(&p, t, i) {
                assert_eq!(w.flops, None, "{}", p.str(t.events.name[i]));
            }
        }
    }
}

/// Nsight Compute's counters for one FP32 convolution forward and backward on an H200
/// (`docs/flops_ncu_layout.json`, from `scripts/ncu_layout_kernels.sh`): the GEMM kernels that
/// run on Tensor Cores with `mma.sync` TF32 (16×8×8, 2 048 FLOPs an instruction) execute
/// exactly the FLOPs of the convolution formula, and cuDNN's layout kernels, which get none of
/// the operator's FLOPs (`docs/flops.md`, section 4), one FP32 multiply per element at most.
#[test]
fn nsight_compute_counts_the_formulas_flops_in_the_gemm_kernels_and_none_in_layout_kernels() {
    use warpscope_core::analysis::flops::{formulas, moves_data_only};
    use warpscope_core::model::{Dims, Dtype, OpArgs, OpInput};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/flops_ncu_layout.json");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let tensor = |dims: &[i64]| OpInput {
        dtype: Dtype::F32,
        dims: Dims::Shape(dims.into()),
        ints: None,
    };
    let ints = |v: &[i64]| OpInput {
        dtype: Dtype::NotTensor,
        dims: Dims::Shape(Box::new([])),
        ints: Some(v.into()),
    };
    // aten::cudnn_convolution(input, weight, padding, stride, dilation, groups, ...).
    let args = OpArgs {
        inputs: vec![
            tensor(&[32, 64, 56, 56]),
            tensor(&[64, 64, 3, 3]),
            ints(&[1, 1]),
            ints(&[1, 1]),
            ints(&[1, 1]),
            ints(&[1]),
        ]
        .into(),
        flops: None,
        bytes: None,
    };
    let conv = formulas::work("aten::cudnn_convolution", &args)
        .and_then(|w| w.flops)
        .unwrap();
    assert_eq!(conv, 7_398_752_256);
    let elements: u64 = 32 * 64 * 56 * 56;
    let (mut gemms, mut layouts) = (0, 0);
    for k in doc["kernels"].as_array().unwrap() {
        let name = k["kernel"].as_str().unwrap();
        let count = |f: &str| k[f].as_u64().unwrap();
        if name.contains("fprop_implicit_gemm_tf32") || name.contains("s1688dgrad") {
            assert_eq!(count("tensor_hmma_inst") * 2048, conv, "{name}");
            gemms += 1;
        }
        if moves_data_only(name) {
            let fp32 = 2 * count("ffma") + count("fadd") + count("fmul");
            assert!(fp32 <= elements, "{name}: {fp32}");
            assert!(fp32 * 1000 < conv, "{name}: {fp32} against {conv}");
            layouts += 1;
        }
    }
    assert_eq!((gemms, layouts), (4, 18));
}
