//! `warpscope memory` end to end: the JSON contract, the table, and a profile without memory.

mod common;

use common::{stdout, warpscope};
use serde_json::Value;

const FP32: &str = "sample_profiles/resnet50_b32_fp32_mem_flops.pt.trace.json.gz";
const BF16: &str = "sample_profiles/resnet50_b32_bf16_mem_flops.pt.trace.json.gz";

fn memory_json(args: &[&str]) -> Value {
    let mut all = vec!["memory"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let out = warpscope(&all);
    assert!(out.status.success(), "{}", common::stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)))
}

#[test]
fn memory_json_is_the_documented_contract() {
    let j = memory_json(&[BF16, "--top", "5"]);
    let devices = j["devices"].as_array().expect("devices");
    // The CPU first, as "cpu"; the GPU by its ordinal.
    assert_eq!(devices[0]["device"], "cpu");
    let gpu = &devices[1];
    assert_eq!(gpu["device"], 0);
    for key in [
        "peak_allocated_bytes",
        "peak_allocated_ns",
        "peak_reserved_bytes",
        "end_allocated_bytes",
        "allocations",
        "frees",
    ] {
        assert!(
            gpu[key].is_i64() || gpu[key].is_u64(),
            "{key}: {}",
            gpu[key]
        );
    }
    assert_eq!(gpu["peak_allocated_bytes"], 1_971_978_752_i64);
    assert_eq!(gpu["peak_reserved_bytes"], 2_227_175_424_i64);
    let live = gpu["live_at_peak"].as_array().expect("live_at_peak");
    assert_eq!(live.len(), 5);
    for g in live {
        assert!(g["operator"].is_string() && g["bytes"].is_i64() && g["count"].is_u64());
    }
    let ops = j["operators"].as_array().expect("operators");
    assert_eq!(ops.len(), 5);
    for o in ops {
        for key in ["name", "alloc_count", "alloc_bytes", "self_alloc_bytes"] {
            assert!(!o[key].is_null(), "{key}");
        }
    }
    assert!(j["findings"].is_array());
    assert_eq!(j["range"]["kind"], "all");
}

#[test]
fn a_step_scopes_the_memory_report() {
    let all = memory_json(&[FP32]);
    let step = memory_json(&[FP32, "--step", "3"]);
    assert_eq!(step["range"]["kind"], "step");
    let (a, s) = (&all["devices"][1], &step["devices"][1]);
    assert!(s["allocations"].as_u64() < a["allocations"].as_u64());
    assert!(s["peak_allocated_bytes"].as_i64() <= a["peak_allocated_bytes"].as_i64());
}

#[test]
fn the_table_names_the_peak_and_its_holders() {
    let out = warpscope(&["memory", FP32, "--top", "3"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("GPU 0 of 139.80 GiB"), "{text}");
    assert!(text.contains("peak allocated       3.03 GiB"), "{text}");
    assert!(text.contains("aten::cudnn_convolution"), "{text}");
    assert!(text.contains("recorded window"), "{text}");
    assert!(text.contains("[headroom]"), "{text}");
}

#[test]
fn a_profile_without_memory_says_how_to_record_it() {
    let out = warpscope(&["memory", "sample_profiles/alexnet_b8.pt.trace.json.gz"]);
    assert!(out.status.success());
    assert!(stdout(&out).contains("profile_memory=True"));
    let j = memory_json(&["sample_profiles/alexnet_b8.pt.trace.json.gz"]);
    assert_eq!(j["devices"].as_array().map(Vec::len), Some(0));
}
