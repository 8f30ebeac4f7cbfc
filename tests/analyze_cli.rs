//! End-to-end tests of `warpscope analyze`: the JSON contract, the figures a user checks on the
//! shipped samples, the range and step options, the errors, and equality to the nanosecond with
//! the independent reference `scripts/analysis_reference.py` on every Kineto sample.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::{stderr, stdout, warpscope};
use serde_json::Value;

fn analyze_json(args: &[&str]) -> Value {
    let mut all = vec!["analyze"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let o = warpscope(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("analyze JSON")
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// The sums every device and stream must satisfy.
fn check_sums(j: &Value) {
    for d in j["devices"].as_array().unwrap() {
        let window = int(&d["window_ns"]);
        assert_eq!(
            window,
            int(&d["window_end_ns"]) - int(&d["window_start_ns"])
        );
        assert_eq!(int(&d["busy_ns"]) + int(&d["idle_ns"]), window);
        assert_eq!(
            int(&d["compute_ns"]) + int(&d["comm_ns"]) + int(&d["memory_ns"]) + int(&d["idle_ns"]),
            window
        );
        let b = &d["idle_breakdown"];
        assert_eq!(
            int(&b["host_wait_ns"]) + int(&b["kernel_wait_ns"]) + int(&b["other_ns"]),
            int(&d["idle_ns"])
        );
        let buckets = d["utilisation"].as_array().unwrap();
        assert!(!buckets.is_empty());
        assert!(
            buckets
                .iter()
                .all(|u| (0.0..=1.0).contains(&u.as_f64().unwrap()))
        );
    }
    for s in j["streams"].as_array().unwrap() {
        let b = &s["idle_breakdown"];
        assert_eq!(
            int(&b["host_wait_ns"]) + int(&b["kernel_wait_ns"]) + int(&b["other_ns"]),
            int(&s["idle_ns"])
        );
        assert_eq!(
            int(&s["busy_ns"]) + int(&s["idle_ns"]),
            int(&s["window_ns"])
        );
    }
}

/// The per-device figures of the JSON contract (and of the reference).
const DEVICE_FIGURES: &[&str] = &[
    "device",
    "window_ns",
    "busy_ns",
    "idle_ns",
    "compute_ns",
    "comm_ns",
    "memory_ns",
    "overlap_comm_compute_ns",
    "overlap_copy_compute_ns",
    "idle_breakdown",
];

#[test]
fn analyze_json_is_the_documented_contract() {
    let j = analyze_json(&["sample_profiles/resnet50_b64_amp.pt.trace.json.gz"]);
    assert_eq!(j["source"]["format"], "chrome-json");
    assert_eq!(j["range"]["kind"], "all");
    let d = &j["devices"][0];
    let more = [
        "utilisation",
        "tensor_core_pct",
        "theoretical_occupancy_pct",
        "achieved_occupancy_pct",
        "theoretical_occupancy_where_achieved_pct",
        "achieved_occupancy_time_pct",
    ];
    for key in DEVICE_FIGURES.iter().chain(&more) {
        assert!(d.get(key).is_some(), "devices[0] has no {key}");
    }
    let k = &j["kernels"][0];
    for key in [
        "name",
        "calls",
        "total_ns",
        "theoretical_occupancy_pct",
        "occupancy_limiter",
        "achieved_occupancy_pct",
        "tensor_cores",
        "launch_delay_median_ns",
        "launch_delay_p95_ns",
        "owner",
        "theoretical_occupancy_where_achieved_pct",
        "achieved_occupancy_time_pct",
    ] {
        assert!(k.get(key).is_some(), "kernels[0] has no {key}");
    }
    let g = &j["gaps"][0];
    for key in ["cause", "operator", "sync"] {
        assert!(g.get(key).is_some(), "gaps[0] has no {key}");
    }
    assert!(j["tensor_core_pct"].as_f64().unwrap() > 0.0);
    assert!(j["launch"]["typical_launch_ns"].as_i64().unwrap() > 0);
    let f = &j["findings"][0];
    for key in ["rule", "time_ns", "at_stake_basis", "message", "events"] {
        assert!(f.get(key).is_some(), "findings[0] has no {key}");
    }
    // Findings come largest first, and each names real events.
    let times: Vec<i64> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| int(&f["time_ns"]))
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    let ev = &f["events"][0];
    assert!(ev["name"].as_str().is_some() && int(&ev["dur_ns"]) >= 0);
    check_sums(&j);
}

/// Every finding says whether its time at stake is measured or an estimate, and none claims
/// more than it can explain: the idle time of its device for the rules about idle time, its
/// kernel time for the rules about kernels, its communication time for communication.
fn check_time_at_stake(j: &Value) {
    let devices = j["devices"].as_array().unwrap();
    let kernel_ns: i64 = devices.iter().map(|d| int(&d["kernel_ns"])).sum();
    for f in j["findings"].as_array().unwrap() {
        let rule = f["rule"].as_str().unwrap();
        let basis = f["at_stake_basis"].as_str().unwrap();
        let measured = [
            "host_wait",
            "gpu_idle_other",
            "blocking_sync",
            "launch_bound",
            "comm_not_overlapped",
        ]
        .contains(&rule);
        assert_eq!(basis, if measured { "measured" } else { "estimate" }, "{f}");
        let d = devices.iter().find(|d| d["device"] == f["device"]);
        let bound = match (rule, d) {
            ("host_wait" | "launch_bound" | "blocking_sync", Some(d)) => {
                int(&d["idle_breakdown"]["host_wait_ns"])
                    + int(&d["idle_breakdown"]["kernel_wait_ns"])
            }
            ("gpu_idle_other", Some(d)) => int(&d["idle_breakdown"]["other_ns"]),
            ("comm_not_overlapped", Some(d)) => int(&d["comm_ns"]),
            ("no_tensor_cores", Some(d)) => int(&d["kernel_ns"]),
            ("pageable_copies", Some(d)) => int(&d["busy_ns"]),
            ("low_occupancy", None) => kernel_ns,
            // The FLOPs rules (docs/flops.md): a share of the operators' GPU time.
            ("gemm_far_from_peak" | "fp32_matmul" | "memory_bound_ops", Some(d)) => {
                int(&d["busy_ns"])
            }
            _ => panic!("unexpected device of {f}"),
        };
        assert!(int(&f["time_ns"]) <= bound, "{f} claims more than {bound}");
    }
}

/// The case: the viewer's finding named `aten::relu_` while the CLI listed
/// `ProfilerStep#3` first. One rule now (the innermost operator, step and profiler annotations
/// left out), and the finding names the first of the list.
#[test]
fn host_wait_names_the_operator_the_list_puts_first() {
    let j = analyze_json(&["sample_profiles/resnet50_b64_fp32.pt.trace.json.gz"]);
    let top = j["host_wait_ops"][0]["operator"].as_str().unwrap();
    assert!(!top.starts_with("ProfilerStep"), "{top}");
    let f = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "host_wait")
        .unwrap();
    let message = f["message"].as_str().unwrap();
    assert!(message.contains(&format!("`{top}`")), "{top}: {message}");
    for o in j["host_wait_ops"].as_array().unwrap() {
        let name = o["operator"].as_str().unwrap_or("");
        assert!(!name.starts_with("ProfilerStep"), "{o}");
    }
    check_time_at_stake(&j);
}

/// alexnet at batch 8 on an H100: the GPU waits on the CPU most of the time. The busy time
/// equals PyTorch's "Self CUDA time total" (4.871 ms): nothing overlaps in this trace.
#[test]
fn alexnet_b8_waits_on_the_host() {
    let j = analyze_json(&["sample_profiles/alexnet_b8.pt.trace.json.gz"]);
    let d = &j["devices"][0];
    assert_eq!(int(&d["busy_ns"]), 4_870_889);
    assert_eq!(int(&d["window_ns"]), 12_963_351);
    let b = &d["idle_breakdown"];
    assert_eq!(
        (
            int(&b["host_wait_ns"]),
            int(&b["kernel_wait_ns"]),
            int(&b["other_ns"])
        ),
        (7_698_532, 382_090, 11_840)
    );
    assert_eq!(j["findings"][0]["rule"], "host_wait");
    let rules: Vec<&str> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(rules.contains(&"launch_bound"), "{rules:?}");
    check_sums(&j);
    check_time_at_stake(&j);
}

/// The batch sweep tells the story: launch-bound and host-bound at batch 8, busy at 128.
#[test]
fn the_batch_sweep_moves_from_host_bound_to_busy() {
    let busy = |batch: u32| {
        let j = analyze_json(&[&format!(
            "sample_profiles/alexnet_b{batch}.pt.trace.json.gz"
        )]);
        j["devices"][0]["busy_pct"].as_f64().unwrap()
    };
    let (b8, b128) = (busy(8), busy(128));
    assert!(
        b8 < 40.0 && b128 > 80.0,
        "busy {b8:.1}% at 8, {b128:.1}% at 128"
    );
}

#[test]
fn range_and_step_scope_the_analysis() {
    let file = "sample_profiles/alexnet_b8.pt.trace.json.gz";
    let step = analyze_json(&[file, "--step", "3"]);
    assert_eq!(step["range"]["kind"], "step");
    assert_eq!(step["range"]["step"], 3);
    let (start, end) = (
        int(&step["range"]["start_ns"]),
        int(&step["range"]["end_ns"]),
    );
    let d = &step["devices"][0];
    assert!(int(&d["window_start_ns"]) >= start && int(&d["window_end_ns"]) <= end);
    check_sums(&step);
    // The same range given as times finds the same figures.
    let range = format!("{start}ns..{end}ns");
    let same = analyze_json(&[file, "--range", &range]);
    assert_eq!(same["devices"], step["devices"]);
    // A range with units, exactly converted.
    let ms = analyze_json(&[file, "--range", "2ms..3.5ms"]);
    assert_eq!(int(&ms["range"]["start_ns"]), 2_000_000);
    assert_eq!(int(&ms["range"]["end_ns"]), 3_500_000);
    assert!(int(&ms["devices"][0]["window_ns"]) <= 1_500_000);
    check_sums(&ms);
    // Nothing in the range: no devices, no findings, still a success.
    let empty = analyze_json(&[file, "--range", "1s..2s"]);
    assert!(empty["devices"].as_array().unwrap().is_empty());
    assert!(empty["findings"].as_array().unwrap().is_empty());
}

#[test]
fn bad_ranges_and_steps_are_explained() {
    let file = "sample_profiles/alexnet_b8.pt.trace.json.gz";
    let cases: [(&[&str], &str); 4] = [
        (&["--step", "9"], "no step 9: it has steps 2 to 3"),
        (
            &["--range", "3ms..1ms"],
            "the end must come after the start",
        ),
        (&["--range", "3ms"], "expected START..END"),
        (&["--range", "1..2 parsecs"], "bad end"),
    ];
    for (args, message) in cases {
        let mut all = vec!["analyze", file];
        all.extend_from_slice(args);
        let o = warpscope(&all);
        assert!(!o.status.success(), "{args:?}");
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
    }
    let o = warpscope(&["analyze", "no/such/file.json"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no/such/file.json"), "{}", stderr(&o));
}

#[test]
fn the_table_shows_the_breakdown_findings_and_kernels() {
    let o = warpscope(&["analyze", "sample_profiles/alexnet_b8.pt.trace.json.gz"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for needle in [
        "GPU 0 (NVIDIA H100 80GB HBM3): window 12.963ms, busy 4.8709ms (37.6%)",
        "host wait 7.6985ms (59.4%)",
        "1. [host_wait] 7.6985ms at stake, measured (GPU 0)",
        "Largest gaps:",
        "Kernels by time:",
        "docs/analysis.md",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
}

/// Every Kineto sample we can find: the shipped ones and, when present, those of
/// `../shared/samples` (H100 traces made for this project, and public traces from HTA, TraceLens
/// and Kineto itself: A100 DDP with NCCL, MI250, V100 from 2021, B200).
fn kineto_samples() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        "sample_profiles",
        "../shared/samples/kineto-h100",
        "../shared/samples/chrome-kineto",
    ] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            eprintln!("skipping {dir}: not found");
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.to_string_lossy().ends_with(".json.gz") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Runs the reference, or says why it cannot.
fn reference(file: &Path) -> Option<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/analysis_reference.py");
    let out = match Command::new("python3").arg(&script).arg(file).output() {
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
    Some(serde_json::from_slice(&out.stdout).expect("reference JSON"))
}

/// The fields both sides print, compared exactly.
fn pick(v: &Value, keys: &[&str]) -> Value {
    let mut m = serde_json::Map::new();
    for k in keys {
        m.insert((*k).to_string(), v[*k].clone());
    }
    Value::Object(m)
}

#[test]
fn every_figure_equals_the_independent_reference() {
    let files = kineto_samples();
    assert!(files.len() >= 7, "{files:?}");
    const DEVICE: &[&str] = DEVICE_FIGURES;
    const STREAM: &[&str] = &[
        "device",
        "stream",
        "window_ns",
        "busy_ns",
        "idle_ns",
        "idle_breakdown",
    ];
    const KERNEL: &[&str] = &[
        "name",
        "calls",
        "total_ns",
        "launch_delay_median_ns",
        "launch_delay_p95_ns",
    ];
    const LAUNCH: &[&str] = &[
        "typical_launch_ns",
        "kernels_with_launch",
        "launch_bound_kernels",
        "launch_bound_ns",
        "kernel_ns",
        "graph_launches",
        "graph_kernels",
    ];
    for file in &files {
        let Some(r) = reference(file) else {
            return;
        };
        let name = file.display().to_string();
        let o = warpscope(&["analyze", &name, "--format", "json", "--top", "100000"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let ours: Value = serde_json::from_slice(&o.stdout).unwrap();
        let list = |v: &Value, key: &str, keys: &[&str]| -> Vec<Value> {
            v[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| pick(x, keys))
                .collect()
        };
        assert_eq!(
            list(&ours, "devices", DEVICE),
            list(&r, "devices", DEVICE),
            "{name}: devices"
        );
        assert_eq!(
            list(&ours, "streams", STREAM),
            list(&r, "streams", STREAM),
            "{name}: streams"
        );
        assert_eq!(
            list(&ours, "kernels", KERNEL),
            list(&r, "kernels", KERNEL),
            "{name}: kernels"
        );
        assert_eq!(
            pick(&ours["launch"], LAUNCH),
            pick(&r["launch"], LAUNCH),
            "{name}: launch"
        );
        // The largest gaps: length, cause, the CPU operator during each and the blocking sync
        // the launching thread was in (by name; ours is an event).
        let gaps = |v: &Value, n: usize| -> Vec<Value> {
            v["gaps"]
                .as_array()
                .unwrap()
                .iter()
                .take(n)
                .map(|g| {
                    let mut g2 = pick(g, &["device", "dur_ns", "cause", "operator"]);
                    let sync = match &g["sync"] {
                        Value::Object(e) => e["name"].clone(),
                        other => other.clone(),
                    };
                    g2["sync"] = sync;
                    g2
                })
                .collect()
        };
        let n = ours["gaps"].as_array().unwrap().len();
        assert_eq!(gaps(&ours, n), gaps(&r, n), "{name}: gaps");
        // Host wait by operator: the same list (the reference groups over all devices, so
        // compared where there is one).
        let ops = |v: &Value| -> Vec<Value> {
            v["host_wait_ops"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| pick(o, &["operator", "time_ns"]))
                .collect()
        };
        if ours["devices"].as_array().unwrap().len() == 1 {
            assert_eq!(ops(&ours), ops(&r), "{name}: host_wait_ops");
        }
        check_sums(&ours);
        check_time_at_stake(&ours);
    }
}
