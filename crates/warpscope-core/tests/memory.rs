//! The memory report (`docs/memory.md`): a synthetic trace whose every figure is worked out by
//! hand, bad memory events, and the real samples against the independent Python reference
//! (`scripts/memory_reference.py`) and against what PyTorch itself reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use warpscope_core::analysis::memory::{BEFORE_RECORDING, MemoryRule, NO_OPERATOR, memory_report};
use warpscope_core::model::{EventKind, MemoryAction, MemoryDevice, MemorySource, Profile};
use warpscope_core::{Progress, TimeRange, import_bytes};

fn import(json: &str) -> Profile {
    import_bytes(Path::new("mem.json"), json.as_bytes(), &Progress::new()).unwrap()
}

const MIB: i64 = 1 << 20;

/// One `[memory]` event: time in µs, bytes (negative for a free), address, totals after it.
fn mem(ts: u64, bytes: i64, addr: u64, alloc: i64, reserved: i64) -> String {
    format!(
        r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":2,"ts":{ts},
           "args":{{"Total Reserved":{reserved},"Total Allocated":{alloc},"Bytes":{bytes},
                    "Device Id":0,"Device Type":1,"Addr":{addr}}}}}"#
    )
}

/// A step: `aten::conv2d` (10-40 µs) around `aten::empty` (12-14 µs), a backward operator
/// (50-80 µs), a 64 MiB block held from before the recording (freed at 90 µs), and a block
/// never freed.
fn synthetic() -> String {
    let events = [
        r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":2,"ts":0,"dur":100}"#.to_string(),
        r#"{"ph":"X","cat":"cpu_op","name":"aten::conv2d","pid":1,"tid":2,"ts":10,"dur":30}"#.to_string(),
        r#"{"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":2,"ts":12,"dur":2}"#.to_string(),
        r#"{"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: ConvolutionBackward0","pid":1,"tid":2,"ts":50,"dur":30}"#.to_string(),
        // Before the step's operators: 64 MiB allocated before the recording (the totals say).
        mem(5, 2 * MIB, 0x1000, 66 * MIB, 100 * MIB),
        mem(13, 8 * MIB, 0x2000, 74 * MIB, 100 * MIB),
        mem(20, 16 * MIB, 0x3000, 90 * MIB, 120 * MIB),
        mem(30, -8 * MIB, 0x2000, 82 * MIB, 120 * MIB),
        mem(60, 4 * MIB, 0x4000, 86 * MIB, 120 * MIB),
        mem(70, -16 * MIB, 0x3000, 70 * MIB, 120 * MIB),
        mem(90, -64 * MIB, 0x9000, 6 * MIB, 120 * MIB),
    ];
    format!("{{\"traceEvents\":[{}]}}", events.join(","))
}

#[test]
fn synthetic_trace_gives_the_figures_worked_out_by_hand() {
    let p = import(&synthetic());
    assert_eq!(p.memory.source, MemorySource::KinetoEvents);
    assert_eq!(p.memory.events.len(), 7);
    // The memory events are records, not instants on the thread's lane.
    assert!(
        p.tracks
            .iter()
            .all(|t| t.events.kind.iter().all(|&k| k != EventKind::Instant))
    );
    let r = memory_report(&p, TimeRange::ALL, 0);
    assert_eq!(r.devices.len(), 1);
    let d = &r.devices[0];
    assert_eq!(d.device, MemoryDevice::Gpu(0));
    assert_eq!(d.start_allocated_bytes, 64 * MIB);
    assert_eq!(d.peak_allocated_bytes, 90 * MIB);
    assert_eq!(d.peak_allocated_ns, 20_000);
    assert_eq!(d.peak_reserved_bytes, 120 * MIB);
    assert_eq!(d.reserved_at_peak_bytes, 120 * MIB);
    assert_eq!(d.fragmentation_at_peak_bytes, 30 * MIB);
    assert_eq!(d.low_allocated_bytes, 6 * MIB);
    assert_eq!(
        (d.end_allocated_bytes, d.end_reserved_bytes),
        (6 * MIB, 120 * MIB)
    );
    assert_eq!((d.allocations, d.frees), (4, 3));
    // At the peak (20 µs): 2 MiB of no operator (5 µs is in the step, in no operator), 8 MiB
    // of aten::empty, 16 MiB of aten::conv2d, and 64 MiB from before.
    let live: Vec<(&str, i64, u64)> = d
        .live_at_peak
        .iter()
        .map(|g| (g.operator.as_str(), g.bytes, g.count))
        .collect();
    assert_eq!(
        live,
        vec![
            (BEFORE_RECORDING, 64 * MIB, 0),
            ("aten::conv2d", 16 * MIB, 1),
            ("aten::empty", 8 * MIB, 1),
            (NO_OPERATOR, 2 * MIB, 1),
        ]
    );
    let sizes: Vec<(&str, i64)> = d
        .live_at_peak_by_size
        .iter()
        .map(|g| (g.operator.as_str(), g.bytes))
        .collect();
    assert_eq!(
        sizes,
        vec![
            (BEFORE_RECORDING, 64 * MIB),
            ("10-100 MiB", 16 * MIB),
            ("1-10 MiB", 10 * MIB)
        ]
    );
    assert_eq!((d.never_freed.count, d.never_freed.bytes), (2, 6 << 20));
    assert_eq!(
        (
            d.frees_without_allocation.count,
            d.frees_without_allocation.bytes
        ),
        (1, 64 << 20)
    );
    // aten::empty is inside aten::conv2d: conv2d counts it with its children, not as its own.
    let op = |n: &str| r.operators.iter().find(|o| o.name == n).unwrap();
    let conv = op("aten::conv2d");
    assert_eq!((conv.alloc_count, conv.alloc_bytes), (2, 24 << 20));
    assert_eq!(
        (conv.self_alloc_count, conv.self_alloc_bytes),
        (1, 16 << 20)
    );
    let empty = op("aten::empty");
    assert_eq!((empty.alloc_count, empty.self_alloc_bytes), (1, 8 << 20));
    assert_eq!(r.operators[0].name, "aten::conv2d");
    // 24 of the 90 MiB peak are forward allocations: under half, no activations finding; the
    // device's size is unknown: no headroom finding.
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

#[test]
fn a_range_carries_the_totals_in_and_counts_only_its_records() {
    let p = import(&synthetic());
    // 25-65 µs on the profile's clock: time zero is the step's start (0 µs).
    let r = memory_report(&p, TimeRange::new(25_000, 65_000), 0);
    let d = &r.devices[0];
    assert_eq!(d.start_allocated_bytes, 90 * MIB);
    assert_eq!(d.peak_allocated_bytes, 90 * MIB);
    assert_eq!(d.peak_allocated_ns, 25_000, "the peak was carried in");
    assert_eq!((d.allocations, d.frees), (1, 1));
    assert_eq!(d.end_allocated_bytes, 86 * MIB);
    assert_eq!(
        d.live_at_peak.iter().map(|g| g.bytes).sum::<i64>(),
        90 * MIB
    );
    let ops: Vec<&str> = r.operators.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        ops,
        vec!["autograd::engine::evaluate_function: ConvolutionBackward0"]
    );
}

#[test]
fn oom_fragmentation_activations_and_headroom_fire_by_their_rules() {
    // A 1 GiB device: an OOM inside aten::conv2d, 300 MiB reserved but free at the peak.
    let events = [
        r#"{"ph":"X","cat":"cpu_op","name":"aten::conv2d","pid":1,"tid":2,"ts":10,"dur":30}"#
            .to_string(),
        mem(11, 600 * MIB, 0x1000, 600 * MIB, 900 * MIB),
        r#"{"ph":"i","s":"t","name":"[OutOfMemory]","pid":1,"tid":2,"ts":12,
            "args":{"Device Type":1,"Device Id":0,"Bytes":536870912,"Total Allocated":629145600,"Total Reserved":943718400}}"#
            .to_string(),
        mem(50, -600 * MIB, 0x1000, 0, 900 * MIB),
    ];
    let json = format!(
        r#"{{"deviceProperties":[{{"id":0,"name":"Small GPU","totalGlobalMem":1073741824}}],
            "traceEvents":[{}]}}"#,
        events.join(",")
    );
    let p = import(&json);
    assert!(p.memory.events.action.contains(&MemoryAction::Oom));
    let r = memory_report(&p, TimeRange::ALL, 0);
    let rules: Vec<MemoryRule> = r.findings.iter().map(|f| f.rule).collect();
    assert_eq!(
        rules,
        vec![
            MemoryRule::OutOfMemory,
            MemoryRule::ActivationsDominate,
            MemoryRule::Fragmentation
        ],
        "{:#?}",
        r.findings
    );
    let oom = &r.devices[0].ooms[0];
    assert_eq!(
        (oom.bytes, oom.operator.as_str()),
        (512 << 20, "aten::conv2d")
    );
    assert!(r.findings[0].message.contains("aten::conv2d"));

    // The same trace on an 80 GB GPU without the OOM: headroom, with its estimate.
    let roomy = json
        .replace("1073741824", "85899345920")
        .replace("[OutOfMemory]", "[NotMemory]");
    let r = memory_report(&import(&roomy), TimeRange::ALL, 0);
    let headroom = r
        .findings
        .iter()
        .find(|f| f.rule == MemoryRule::Headroom)
        .expect("headroom");
    assert!(
        headroom.message.contains("an estimate"),
        "{}",
        headroom.message
    );
}

#[test]
fn bad_memory_events_are_left_out_with_a_warning() {
    let events = [
        // No Bytes; a negative total; an accelerator without a device id; text that is no
        // number; no Addr (kept); and one good event.
        r#"{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Device Type":1,"Device Id":0,"Total Allocated":1,"Total Reserved":1}}"#,
        r#"{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":2,"args":{"Device Type":1,"Device Id":0,"Bytes":4,"Total Allocated":-5,"Total Reserved":1}}"#,
        r#"{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":3,"args":{"Device Type":1,"Bytes":4,"Total Allocated":5,"Total Reserved":8}}"#,
        r#"{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":4,"args":{"Device Type":"gpu","Bytes":4,"Total Allocated":5,"Total Reserved":8}}"#,
        r#"{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":5,"args":{"Device Type":1,"Device Id":0,"Bytes":4,"Total Allocated":4,"Total Reserved":8}}"#,
        r#"{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":6,"args":{"Device Type":1,"Device Id":0,"Bytes":1e300,"Total Allocated":4,"Total Reserved":8,"Addr":7}}"#,
        r#"{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":7}"#,
        r#"{"ph":"X","name":"x","pid":1,"tid":1,"ts":0,"dur":10}"#,
    ];
    let p = import(&format!("{{\"traceEvents\":[{}]}}", events.join(",")));
    let count = |code: &str| {
        p.warnings
            .iter()
            .find(|w| w.code == code)
            .map_or(0, |w| w.count)
    };
    assert_eq!(count("memory_missing_field"), 4, "{:#?}", p.warnings);
    assert_eq!(count("memory_negative_total"), 1);
    assert_eq!(count("memory_bad_device"), 1);
    assert_eq!(count("memory_missing_addr"), 1);
    assert_eq!(p.memory.events.len(), 1);
    // A free with no allocation before it: counted as a free of an older block.
    let freed = import(
        r#"{"traceEvents":[{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":1,
           "args":{"Device Type":1,"Device Id":0,"Bytes":-4096,"Addr":9,"Total Allocated":0,"Total Reserved":8192}}]}"#,
    );
    let r = memory_report(&freed, TimeRange::ALL, 0);
    assert_eq!(r.devices[0].frees_without_allocation.count, 1);
    assert_eq!(r.devices[0].start_allocated_bytes, 4096);
}

#[test]
fn memory_records_survive_any_block_size_of_the_parallel_import() {
    let json = synthetic();
    let whole = import(&json);
    for block in [1, 7, 64, 300] {
        let (p, _) = warpscope_core::import::chrome::import_with_block_bytes(
            warpscope_core::Input::Bytes {
                name: Path::new("mem.json"),
                data: json.as_bytes(),
            },
            &Progress::new(),
            block,
        )
        .unwrap();
        assert_eq!(p.memory.events.time_ns, whole.memory.events.time_ns);
        assert_eq!(p.memory.events.bytes, whole.memory.events.bytes);
        assert_eq!(
            memory_report(&p, TimeRange::ALL, 0),
            memory_report(&whole, TimeRange::ALL, 0),
            "block size {block}"
        );
    }
}

/// The samples recorded with memory events, and the allocator snapshot.
const SAMPLES: [&str; 8] = [
    "kineto-h200-mem/resnet50_b32_fp32_mem_flops.snapshot.pickle.gz",
    "kineto-h200-mem/resnet50_b32_fp32_mem_flops.pt.trace.json.gz",
    "kineto-h200-mem/resnet50_b32_bf16_mem_flops.pt.trace.json.gz",
    "kineto-h200-mem/mlp_compiled_triton.pt.trace.json.gz",
    "kineto-h200-mem/mlp_cuda_graph.pt.trace.json.gz",
    "chrome-kineto/kineto2021_v100_resnet50_worker0.pt.trace.json.gz",
    "chrome-kineto/tracelens_h100_bert-small_with_stack.json.gz",
    "rocm/kineto_mi300x_bert_small.json.gz",
];

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn every_memory_sample_equals_the_python_reference_to_the_byte() {
    let Some(root) = common::samples_dir() else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/memory_reference.py");
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipping: python3 not found");
        return;
    }
    for rel in SAMPLES {
        let path = root.join(rel);
        let out = std::process::Command::new("python3")
            .arg(&script)
            .arg(&path)
            .args(["--top", "0"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let reference: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let p = common::load(&path);
        let ours = serde_json::to_value(memory_report(&p, TimeRange::ALL, 0)).unwrap();
        let ref_devices = reference["devices"].as_array().unwrap();
        let our_devices = ours["devices"].as_array().unwrap();
        assert_eq!(ref_devices.len(), our_devices.len(), "{rel}: devices");
        // The CUDA graph replays allocate nothing; every other sample has records.
        assert_eq!(
            ref_devices.is_empty(),
            rel.contains("cuda_graph"),
            "{rel}: memory devices"
        );
        for (r, o) in ref_devices.iter().zip(our_devices) {
            for (key, value) in r.as_object().unwrap() {
                assert_eq!(&o[key], value, "{rel}: device {}: {key}", r["device"]);
            }
        }
        assert_eq!(
            ours["operators"], reference["operators"],
            "{rel}: operators"
        );
    }
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn recorded_peaks_against_what_pytorch_reported() {
    let Some(root) = common::samples_dir() else {
        return;
    };
    let truth: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join("kineto-h200-mem/pytorch_truth.json")).unwrap(),
    )
    .unwrap();
    let gpu = |run: &str| {
        let p = common::load(&root.join(format!("kineto-h200-mem/{run}.pt.trace.json.gz")));
        let r = memory_report(&p, TimeRange::ALL, 0);
        let d = r
            .devices
            .into_iter()
            .find(|d| d.device == MemoryDevice::Gpu(0))
            .unwrap();
        let t = &truth[run];
        (
            d,
            t["max_memory_allocated"].as_i64().unwrap(),
            t["max_memory_reserved"].as_i64().unwrap(),
        )
    };
    // bf16: the recorded steps hold the run's peak: reserved exactly, allocated within a block.
    let (d, alloc, reserved) = gpu("resnet50_b32_bf16_mem_flops");
    assert_eq!(d.peak_reserved_bytes, reserved);
    assert!(alloc - d.peak_allocated_bytes <= 65_536 && d.peak_allocated_bytes <= alloc);
    // FP32: the whole-run peak lies in the first, unrecorded step (cuDNN autotuning); the trace's
    // peak is that of its steps, well below, and not made up.
    let (d, alloc, reserved) = gpu("resnet50_b32_fp32_mem_flops");
    assert_eq!(d.peak_allocated_bytes, 3_254_683_136);
    assert!(d.peak_allocated_bytes < alloc && d.peak_reserved_bytes < reserved);
}

#[test]
fn traces_without_totals_or_addresses_are_replayed_and_not_matched() {
    // PyTorch before 1.10: `[memory]` events with `Bytes` only.
    let e = |ts: u64, bytes: i64| {
        format!(
            r#"{{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":{ts},
               "args":{{"Device Type":1,"Device Id":0,"Bytes":{bytes}}}}}"#
        )
    };
    let events = [
        e(1, -100),
        e(2, 300),
        e(3, 50),
        e(4, -300),
        r#"{"ph":"X","cat":"Operator","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":10}"#
            .to_string(),
    ];
    let p = import(&format!("{{\"traceEvents\":[{}]}}", events.join(",")));
    let warned = |code: &str| p.warnings.iter().any(|w| w.code == code);
    assert!(warned("memory_totals_replayed") && warned("memory_missing_addr"));
    // The running sum is -100, 200, 250, -50: raised by 100 so the lowest point is 0.
    assert_eq!(p.memory.events.allocated_bytes, vec![0, 300, 350, 50]);
    assert_eq!(p.memory.events.reserved_bytes, vec![0, 300, 350, 50]);
    let r = memory_report(&p, TimeRange::ALL, 0);
    let d = &r.devices[0];
    assert_eq!(d.peak_allocated_bytes, 350);
    assert_eq!(d.frees_without_allocation.count, 0);
    let live: Vec<&str> = d.live_at_peak.iter().map(|g| g.operator.as_str()).collect();
    assert_eq!(live, vec![warpscope_core::analysis::memory::UNMATCHED]);
    // A step recorded as an operator (older Kineto) is not an operator.
    assert_eq!(r.operators.len(), 1);
    assert_eq!(r.operators[0].name, NO_OPERATOR);
}
