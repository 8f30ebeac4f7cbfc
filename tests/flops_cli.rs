//! `warpscope analyze`'s `flops` section and `warpscope roofline` (docs/flops.md), run as a user
//! runs them on the shipped ResNet-50 traces (H200, PyTorch 2.11, `record_shapes=True`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{stderr, stdout, warpscope};
use serde_json::Value;

const FP32: &str = "sample_profiles/resnet50_b32_fp32_mem_flops.pt.trace.json.gz";
const BF16: &str = "sample_profiles/resnet50_b32_bf16_mem_flops.pt.trace.json.gz";

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--format", "json"]);
    let o = warpscope(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

fn flops_of(ops: &Value, name: &str) -> u64 {
    ops.as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == name)
        .and_then(|o| o["flops"].as_u64())
        .unwrap_or_else(|| panic!("no FLOPs for {name}"))
}

#[test]
fn analyze_flops_section_is_the_documented_contract() {
    let j = json(&["analyze", FP32]);
    let f = &j["flops"];
    assert_eq!(keys(f), ["devices", "operators"]);
    let d = &f["devices"][0];
    assert_eq!(
        keys(d),
        [
            "device",
            "mfu",
            "model_flops",
            "peak_flops_per_s",
            "peak_source",
            "steps"
        ]
    );
    let ops = &f["operators"];
    assert_eq!(
        keys(&ops[0]),
        [
            "bound",
            "bytes",
            "calls",
            "flops",
            "gpu_time_ns",
            "intensity",
            "name",
            "pct_of_peak",
            "tflops_per_s"
        ]
    );
    // Model FLOPs are the convolutions and matrix products, each counted once.
    let model: u64 = [
        "aten::cudnn_convolution",
        "aten::convolution_backward",
        "aten::addmm",
        "aten::mm",
    ]
    .iter()
    .map(|n| flops_of(ops, n))
    .sum();
    assert_eq!(d["model_flops"].as_u64(), Some(model));
    // The forward convolutions: what PyTorch's profiler reported for `aten::conv2d`
    // (pytorch_truth.json), counted at the innermost operator.
    assert_eq!(flops_of(ops, "aten::cudnn_convolution"), 523_153_440_768);
    // cuDNN ran the convolutions in TF32 (its kernel names say so): the H200's dense TF32 peak.
    assert_eq!(d["peak_flops_per_s"].as_f64(), Some(494.5e12));
    assert!(d["peak_source"].as_str().unwrap().contains("H200"));
    // Two recorded steps; each step's MFU is its FLOPs over (step time × peak).
    let steps = d["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    let step_sum: u64 = steps.iter().map(|s| s["flops"].as_u64().unwrap()).sum();
    assert_eq!(step_sum, model);
    for s in steps {
        #[allow(clippy::cast_precision_loss)]
        let want = s["flops"].as_u64().unwrap() as f64
            / (s["time_ns"].as_i64().unwrap() as f64 * 1e-9 * 494.5e12);
        let mfu = s["mfu"].as_f64().unwrap();
        assert!((mfu - want).abs() < 1e-12 && mfu > 0.0 && mfu < 1.0, "{s}");
    }
    // Unknown figures are null, never 0: max-pool backward has no formula.
    let pool = ops
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "aten::max_pool2d_with_indices_backward")
        .unwrap();
    assert!(
        pool["flops"].is_null() && pool["tflops_per_s"].is_null(),
        "{pool}"
    );
}

#[test]
fn bf16_autocast_counts_each_convolution_once() {
    let fp32 = json(&["analyze", FP32]);
    let bf16 = json(&["analyze", BF16]);
    // The same model and batch: the same work, although PyTorch's profiler doubles bf16.
    assert_eq!(
        fp32["flops"]["devices"][0]["model_flops"],
        bf16["flops"]["devices"][0]["model_flops"]
    );
    assert_eq!(
        bf16["flops"]["devices"][0]["peak_flops_per_s"].as_f64(),
        Some(989.5e12)
    );
}

#[test]
fn roofline_shows_operators_against_the_devices_ceilings() {
    let o = warpscope(&["roofline", BF16, "--top", "5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for want in [
        "GPU 0 (NVIDIA H200): peak 989.5 TFLOP/s (bf16), 4800 GB/s",
        "ceilings (TFLOP/s): fp64 34.0, fp32 67.0, tf32 494.5, fp16 989.5, bf16 989.5, fp8 1979.0",
        "aten::convolution_backward",
        "Kernels (their operator's FLOPs split by time over its arithmetic kernels; layout \
         kernels and copies 0):",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
    let j = json(&["roofline", BF16]);
    // cuDNN's layout kernels around the convolutions do none of their FLOPs.
    let layout = j["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"].as_str().unwrap().contains("nchwToNhwcKernel"))
        .expect("the layout kernel's row");
    assert_eq!(layout["flops"], 0, "{layout}");
    assert!(layout["intensity"].is_null(), "{layout}");
    let d = &j["devices"][0];
    assert_eq!(d["precision"], "bf16");
    let ridge = d["ridge_flops_per_byte"].as_f64().unwrap();
    assert!((ridge - 989.5e12 / 4800e9).abs() < 1e-9, "{ridge}");
    for row in j["operators"].as_array().unwrap() {
        // Bound follows the ridge wherever the intensity is known.
        if let (Some(i), Some(b)) = (row["intensity"].as_f64(), row["bound"].as_str()) {
            assert_eq!(b, if i >= ridge { "compute" } else { "memory" }, "{row}");
        }
    }
    // Kernel shares add up to their operators' FLOPs.
    #[allow(clippy::cast_precision_loss)]
    let op_total: f64 = j["operators"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["flops"].as_u64())
        .map(|v| v as f64)
        .sum();
    #[allow(clippy::cast_precision_loss)]
    let kernel_total: f64 = j["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["flops"].as_u64())
        .map(|v| v as f64)
        .sum();
    assert!(
        (op_total - kernel_total).abs() / op_total < 1e-6,
        "{op_total} {kernel_total}"
    );
}

#[test]
fn peak_overrides_and_profiles_without_shapes() {
    let j = json(&[
        "roofline",
        FP32,
        "--peak-tflops",
        "100",
        "--peak-gbs",
        "1000",
    ]);
    let d = &j["devices"][0];
    assert_eq!(d["peak_flops_per_s"].as_f64(), Some(100e12));
    assert_eq!(d["peak_bytes_per_s"].as_f64(), Some(1000e9));
    assert_eq!(d["peak_source"], "--peak-tflops and --peak-gbs");
    let bad = warpscope(&["roofline", FP32, "--peak-tflops", "0"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("--peak-tflops must be a number greater than 0"));
    // A live run recorded no operator shapes of PyTorch's kind, and an old trace no shapes.
    let o = warpscope(&["roofline", "sample_profiles/live_vector_add_h100.json.gz"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("No operator has known FLOPs"),
        "{}",
        stdout(&o)
    );
}

/// A live GEMM ladder on an H200 (`warpscope live sgemm --sizes 1024,4096 --out`, 2026-11-29),
/// read back as a profile: each point's operator shows the FLOP/s the live table printed (the
/// point's FLOPs over the median CUPTI kernel time). The operator's figure is over every
/// launch, warm-ups included, so the two differ by the spread of the launches: under 0.1% for
/// 11 of the 14 points, 3.0% at most (cuBLAS TF32 at 1024, 13 µs kernels).
#[test]
fn live_gemms_saved_as_profiles_show_the_live_tflops() {
    use std::io::Read as _;
    const LIVE: &str = "sample_profiles/live_sgemm_flops_h200.json.gz";
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(LIVE).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    let results = file["warpscope"]["source"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d[0] == "live_results")
        .map(|d| serde_json::from_str::<Value>(d[1].as_str().unwrap()).unwrap())
        .expect("the live results travel with the run");
    let j = json(&["roofline", LIVE]);
    let rows = j["operators"].as_array().unwrap();
    let mut checked = 0;
    for p in results["points"].as_array().unwrap() {
        let mut cupti: Vec<i64> = p["cupti_ns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        let flops = p["work"]["flops"].as_f64().unwrap();
        if cupti.is_empty() || flops <= 0.0 {
            continue;
        }
        cupti.sort_unstable();
        #[allow(clippy::cast_precision_loss)]
        let live = flops / (cupti[(cupti.len() - 1) / 2] as f64 * 1e-9) / 1e12;
        let name = format!("sgemm {} {}", p["config"].as_str().unwrap(), p["size"]);
        let row = rows
            .iter()
            .find(|r| r["name"] == name.as_str())
            .unwrap_or_else(|| panic!("no row {name}"));
        let ours = row["tflops_per_s"].as_f64().unwrap();
        assert!(
            (ours - live).abs() / live < 0.04,
            "{name}: roofline {ours:.3} TFLOP/s, live {live:.3}"
        );
        checked += 1;
    }
    assert!(checked >= 10, "{checked} points");
}
