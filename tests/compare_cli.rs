//! End-to-end tests of `warpscope compare`: the AlexNet batch sweep, ResNet-50 FP32 vs AMP, two
//! ranks of one job merged into one run, and the errors a user can make.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};

mod common;

use common::{stderr, stdout, warpscope};

fn ok(args: &[&str]) -> String {
    let o = warpscope(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    serde_json::from_str(&ok(&all)).expect("compare JSON")
}

/// Fails with exit status 1 and one line on stderr that contains `expected`.
fn fails(args: &[&str], expected: &str) -> String {
    let o = warpscope(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("warpscope: error: "), "{err}");
    assert!(err.contains(expected), "expected {expected:?} in {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(stdout(&o).is_empty());
    err
}

const SWEEP: [&str; 4] = [
    "sample_profiles/alexnet_b8.pt.trace.json.gz",
    "sample_profiles/alexnet_b16.pt.trace.json.gz",
    "sample_profiles/alexnet_b32.pt.trace.json.gz",
    "sample_profiles/alexnet_b128.pt.trace.json.gz",
];

const FP32: &str = "sample_profiles/resnet50_b64_fp32.pt.trace.json.gz";
const AMP: &str = "sample_profiles/resnet50_b64_amp.pt.trace.json.gz";

fn sweep_args(extra: &[&'static str]) -> Vec<&'static str> {
    let mut args = vec!["compare"];
    args.extend(SWEEP);
    args.extend(extra);
    args
}

fn shared_sample(name: &str) -> Option<PathBuf> {
    let p = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/samples/")).join(name);
    if p.is_file() {
        Some(p)
    } else {
        eprintln!("skipping: {} not found", p.display());
        None
    }
}

fn totals(j: &serde_json::Value) -> Vec<i64> {
    j["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["gpu_total_ns"].as_i64().unwrap())
        .collect()
}

#[test]
fn alexnet_sweep_json_is_the_documented_contract() {
    let j = json(&sweep_args(&["--top", "0"]));
    assert_eq!(j["baseline"], 0);
    assert_eq!(j["sweep"], "batch");
    assert_eq!(
        totals(&j),
        vec![4_870_889, 7_206_323, 11_593_018, 39_868_961]
    );
    let runs = j["runs"].as_array().unwrap();
    for (run, (batch, path)) in runs.iter().zip([8, 16, 32, 128].iter().zip(SWEEP)) {
        assert_eq!(run["label"], format!("batch={batch}"));
        assert_eq!(run["path"], path);
        assert_eq!(run["batch"], f64::from(*batch));
        assert_eq!(run["devices"], 1);
        for key in [
            "gpu_busy_pct",
            "span_ns",
            "time_per_step_ns",
            "time_per_sample_ns",
        ] {
            assert!(run[key].is_number(), "{key}");
        }
    }
    assert_eq!(runs[0]["is_baseline"], true);
    assert_eq!(runs[0]["gpu_total_ratio_vs_baseline"], 1.0);
    // Every kernel once, with one entry per run.
    let kernels = j["kernels"].as_array().unwrap();
    let mut names: Vec<&str> = kernels
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    let count = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), count, "a kernel appears twice");
    let in_all: Vec<&serde_json::Value> = kernels
        .iter()
        .filter(|k| {
            k["per_run"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| !r.is_null())
        })
        .collect();
    assert!(!in_all.is_empty());
    for k in &in_all {
        assert_eq!(k["per_run"].as_array().unwrap().len(), 4);
        assert_eq!(k["ratio_vs_baseline"][0], 1.0, "{}", k["name"]);
        assert_eq!(k["presence"][0], "both");
        for key in ["calls", "total_ns", "avg_ns", "min_ns", "max_ns"] {
            assert!(k["per_run"][3][key].is_i64(), "{key}");
        }
        let total = k["per_run"][2]["total_ns"].as_f64().unwrap();
        let base = k["per_run"][0]["total_ns"].as_f64().unwrap();
        let ratio = k["ratio_vs_baseline"][2].as_f64().unwrap();
        assert!((ratio - total / base).abs() < 1e-12);
    }
    // Kernels, copies and operators, ordered by their longest time in any run.
    let longest = |rows: &serde_json::Value, key: &str| -> Vec<i64> {
        rows.as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r["per_run"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|s| s[key].as_i64())
                    .max()
                    .unwrap()
            })
            .collect()
    };
    for table in ["kernels", "copies", "ops"] {
        let l = longest(&j[table], "total_ns");
        assert!(!l.is_empty(), "{table}");
        assert!(l.windows(2).all(|w| w[0] >= w[1]), "{table}: {l:?}");
    }
    let htod = j["copies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "HtoD")
        .unwrap();
    assert_eq!(htod["per_run"][0]["bytes"], 9_633_920);
    assert_eq!(htod["per_run"][0]["total_ns"], 970_894);
    assert!(j["ops"].as_array().unwrap().len() > 20);
}

#[test]
fn table_shows_the_totals_and_the_top_kernel() {
    let top = json(&sweep_args(&["--top", "1"]));
    let top_name = top["kernels"][0]["name"].as_str().unwrap().to_string();
    let text = ok(&sweep_args(&[]));
    assert!(
        text.starts_with("==warpscope== Comparing 4 runs; baseline #1 (batch=8); sweep: batch\n"),
        "{text}"
    );
    for total in ["4.8709ms", "7.2063ms", "11.593ms", "39.869ms"] {
        assert!(text.contains(total), "{total}: {text}");
    }
    for ratio in ["1.00x", "1.48x", "2.38x", "8.19x"] {
        assert!(text.contains(ratio), "{ratio}: {text}");
    }
    for file in SWEEP {
        assert!(text.contains(file), "{file}");
    }
    // The top kernel's name as shown (templates folded), on the baseline's line.
    let stem = &top_name[..top_name.find('<').unwrap_or(top_name.len())];
    let line = text
        .lines()
        .find(|l| l.contains(stem))
        .unwrap_or_else(|| panic!("{stem} not in {text}"));
    assert!(line.trim_start().starts_with("#1 "), "{line}");
    assert!(text.contains("Kernels (top 20 of "), "{text}");
    assert!(text.contains("Copies and sets by kind"), "{text}");
    assert!(text.contains("CPU operators (top 20 of "), "{text}");
    assert!(
        text.contains("     HtoD\n") || text.contains(" HtoD\n"),
        "{text}"
    );
    // Readable in 120 columns (file paths aside).
    for l in text.lines().filter(|l| !l.contains("sample_profiles/")) {
        assert!(l.chars().count() <= 120, "{} chars: {l}", l.chars().count());
    }
}

#[test]
fn baseline_changes_the_ratios() {
    let j = json(&sweep_args(&["--baseline", "2", "--top", "0"]));
    assert_eq!(j["baseline"], 1);
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs[1]["is_baseline"], true);
    assert_eq!(runs[0]["is_baseline"], false);
    assert_eq!(runs[1]["gpu_total_ratio_vs_baseline"], 1.0);
    let r0 = runs[0]["gpu_total_ratio_vs_baseline"].as_f64().unwrap();
    assert!((r0 - 4_870_889.0 / 7_206_323.0).abs() < 1e-12);
    for k in j["kernels"].as_array().unwrap() {
        if !k["per_run"][1].is_null() {
            assert_eq!(k["ratio_vs_baseline"][1], 1.0);
        }
    }
    let text = ok(&sweep_args(&["--baseline", "2"]));
    assert!(text.contains("baseline #2 (batch=16)"), "{text}");
    assert!(text.contains("vs #2"), "{text}");
    assert!(text.contains("0.68x"), "{text}");
}

#[test]
fn labels_can_be_overridden() {
    let j = json(&[
        "compare",
        SWEEP[0],
        SWEEP[1],
        "--label",
        "alexnet_b8.pt.trace.json.gz=batch=8,precision=fp32",
        "--label",
        &format!("{}=my run", SWEEP[1]),
    ]);
    assert_eq!(j["runs"][0]["label"], "batch=8,precision=fp32");
    let params = j["runs"][0]["params"].as_array().unwrap();
    assert!(
        params
            .iter()
            .any(|p| p["key"] == "precision" && p["value"] == "fp32")
    );
    assert_eq!(j["runs"][1]["label"], "my run");
    assert!(j["runs"][1]["batch"].is_null());
    let text = ok(&[
        "compare",
        SWEEP[0],
        SWEEP[1],
        "--label",
        "alexnet_b16.pt.trace.json.gz=b=64",
    ]);
    assert!(text.contains("#2  b=64 "), "{text}");
    fails(
        &["compare", SWEEP[0], SWEEP[1], "--label", "other.json=x"],
        "--label other.json=x: no run has that file",
    );
    fails(
        &["compare", SWEEP[0], SWEEP[1], "--label", "x"],
        "expected FILE=LABEL",
    );
}

#[test]
fn resnet_fp32_vs_amp_has_new_and_vanished_kernels() {
    let j = json(&["compare", FP32, AMP, "--top", "0"]);
    assert_eq!(totals(&j), vec![82_994_730, 57_903_050]);
    assert_eq!(j["runs"][0]["label"], "batch=64, precision=fp32");
    assert_eq!(j["runs"][1]["label"], "batch=64, precision=amp");
    assert!(j["sweep"].is_null());
    let presence = |p: &str| {
        j["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| k["presence"][1] == p)
            .count()
    };
    assert!(presence("new") > 0 && presence("vanished") > 0 && presence("both") > 0);
    let gone = j["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["presence"][1] == "vanished")
        .unwrap();
    assert!(gone["per_run"][1].is_null());
    assert!(gone["ratio_vs_baseline"][1].is_null());
    let text = ok(&["compare", FP32, AMP, "--top", "6"]);
    assert!(
        text.contains("82.995ms") && text.contains("57.903ms"),
        "{text}"
    );
    assert!(text.contains("0.70x"), "{text}");
    let marks = |m: &str| {
        text.lines()
            .filter(|l| l.split_whitespace().nth(5) == Some(m))
            .count()
    };
    assert!(marks("new") > 0 && marks("gone") > 0, "{text}");
    // Two instantiations of one template are told apart.
    let bn: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("bn_bw_1C11_kernel_new"))
        .collect();
    assert_eq!(bn.len(), 2, "{text}");
    assert_ne!(bn[0].split("void").nth(1), bn[1].split("void").nth(1));
}

#[test]
fn plus_merges_the_ranks_of_one_job() {
    let (Some(r0), Some(r1)) = (
        shared_sample("chrome-kineto/hta_world128_sampled_rank-0.json.gz"),
        shared_sample("chrome-kineto/hta_world128_sampled_rank-1.json.gz"),
    ) else {
        return;
    };
    let (r0, r1) = (r0.to_str().unwrap(), r1.to_str().unwrap());
    let merged = format!("{r0}+{r1}");
    let j = json(&["compare", r0, &merged]);
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["devices"], 1);
    assert_eq!(runs[0]["label"], "gpus=128, rank=0");
    assert_eq!(runs[1]["devices"], 2);
    assert_eq!(runs[1]["label"], "gpus=128");
    assert_eq!(runs[1]["path"], merged);
    assert!(
        runs[1]["nccl_total_ns"].as_i64().unwrap() > runs[0]["nccl_total_ns"].as_i64().unwrap()
    );
    let nccl = j["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["nccl"] == true)
        .unwrap();
    assert!(nccl["name"].as_str().unwrap().contains("nccl"));
    let text = ok(&["compare", r0, &merged]);
    assert!(
        text.contains("#2  gpus=128          2 ranks merged:\n"),
        "{text}"
    );
    assert_eq!(
        text.matches("hta_world128_sampled_rank-1.json.gz").count(),
        1,
        "{text}"
    );
    assert!(text.contains("[NCCL] ncclKernel_"), "{text}");
    assert!(text.contains("NCCL\n"), "{text}");

    // Files whose names differ only in the rank are merged without `+` ...
    let j = json(&["compare", SWEEP[0], r0, r1]);
    assert_eq!(j["runs"].as_array().unwrap().len(), 2);
    assert_eq!(j["runs"][1]["devices"], 2);
    let text = ok(&["compare", SWEEP[0], r0, r1]);
    assert!(text.contains("same name but for the rank"), "{text}");
    // ... unless asked not to, or when nothing would be left to compare them with.
    let j = json(&["compare", SWEEP[0], r0, r1, "--no-merge"]);
    assert_eq!(j["runs"].as_array().unwrap().len(), 3);
    let j = json(&["compare", r0, r1]);
    assert_eq!(j["runs"][1]["label"], "gpus=128, rank=1");
    // A merged run is one run for --baseline.
    fails(
        &["compare", SWEEP[0], r0, r1, "--baseline", "3"],
        "there are only 2 runs",
    );
    fails(&["compare", &merged], "at least two runs, got one");
}

#[test]
fn files_of_different_formats_compare() {
    let Some(csv) = shared_sample("nvprof-csv/cfd_titanxp_print-gpu-trace.csv") else {
        return;
    };
    let j = json(&["compare", csv.to_str().unwrap(), SWEEP[0]]);
    assert_eq!(j["runs"][0]["format"], "nvprof-csv");
    assert_eq!(j["runs"][1]["format"], "chrome-json");
    assert_eq!(j["runs"][1]["gpu_total_ns"], 4_870_889);
    assert!(j["runs"][0]["gpu_total_ns"].as_i64().unwrap() > 0);
}

#[test]
fn a_file_that_cannot_be_read_gives_one_line() {
    let dir = std::env::temp_dir().join(format!("warpscope-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let broken = dir.join("broken.json");
    std::fs::write(&broken, b"{ this is not json").unwrap();
    let b = broken.to_str().unwrap();
    fails(
        &["compare", SWEEP[0], b],
        &format!("{b}: line 1: not valid trace JSON"),
    );
    fails(&["compare", b, "/nonexistent/x.json"], b);
    fails(
        &["compare", SWEEP[0], "/nonexistent/x.json"],
        "/nonexistent/x.json: cannot read file",
    );
    fails(
        &["compare", SWEEP[0], &format!("{b}+{}", SWEEP[1])],
        "not valid trace JSON",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_arguments_are_clear_errors() {
    fails(
        &["compare", SWEEP[0]],
        "compare needs at least two runs, got one: ",
    );
    fails(
        &sweep_args(&["--baseline", "5"]),
        "--baseline 5: there are only 4 runs",
    );
    fails(
        &sweep_args(&["--baseline", "0"]),
        "--baseline 0: runs are counted from 1",
    );
    let o = warpscope(&["compare"]);
    assert_eq!(o.status.code(), Some(2));
    let help = ok(&["compare", "--help"]);
    for word in [
        "--baseline",
        "counted from 1",
        "--label",
        "FILE=LABEL",
        "--top",
        "+",
        "--no-merge",
    ] {
        assert!(help.contains(word), "{word}: {help}");
    }
    assert!(ok(&["--help"]).contains("compare"));
}

#[test]
fn top_limits_rows_but_not_totals() {
    let all = json(&sweep_args(&["--top", "0"]));
    let three = json(&sweep_args(&["--top", "3"]));
    assert_eq!(totals(&all), totals(&three));
    assert_eq!(all["runs"], three["runs"]);
    assert_eq!(three["kernels"].as_array().unwrap().len(), 3);
    assert_eq!(three["ops"].as_array().unwrap().len(), 3);
    assert_eq!(three["copies"].as_array().unwrap().len(), 3);
    assert!(all["kernels"].as_array().unwrap().len() > 20);
    assert_eq!(all["kernels"][0], three["kernels"][0]);
    let default = json(&sweep_args(&[]));
    assert_eq!(default["kernels"].as_array().unwrap().len(), 20);
    let text = ok(&sweep_args(&["--top", "3"]));
    let kernels = all["kernels"].as_array().unwrap().len();
    assert!(
        text.contains(&format!("Kernels (top 3 of {kernels} ")),
        "{text}"
    );
}

#[test]
fn csv_parses_with_one_row_per_table_row_and_run() {
    let text = ok(&sweep_args(&["--top", "5", "--format", "csv"]));
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        &header[..8],
        [
            "Table", "Run", "Label", "Name", "Presence", "NCCL", "Calls", "Total_ns"
        ]
    );
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let of = |table: &str| rows.iter().filter(|r| &r[0] == table).collect::<Vec<_>>();
    let runs = of("run");
    assert_eq!(runs.len(), 4);
    let totals: Vec<&str> = runs.iter().map(|r| &r[col("Total_ns")]).collect();
    assert_eq!(totals, ["4870889", "7206323", "11593018", "39868961"]);
    assert_eq!(&runs[0][col("Label")], "batch=8");
    assert_eq!(&runs[0][col("Baseline")], "true");
    assert_eq!(of("kernel").len(), 5 * 4);
    assert_eq!(of("op").len(), 5 * 4);
    assert_eq!(of("copy").len(), 3 * 4);
    let k = of("kernel")[0];
    assert_eq!(&k[col("Run")], "1");
    assert_eq!(&k[col("Ratio_vs_baseline")], "1.000000");
    let htod = of("copy").into_iter().find(|r| &r[3] == "HtoD").unwrap();
    assert_eq!(&htod[col("Bytes")], "9633920");
    assert_eq!(&htod[col("Total_ns")], "970894");
}

/// Runs are shown in the order of the swept number whatever order the shell gave them in, and
/// the baseline is the smallest unless `--baseline` names one (counted in the order given).
#[test]
fn a_sweep_is_ordered_by_its_number_and_based_on_the_smallest() {
    let files: Vec<String> = [128, 16, 32, 8]
        .iter()
        .map(|b| format!("sample_profiles/alexnet_b{b}.pt.trace.json.gz"))
        .collect();
    let mut args = vec!["compare", "--format", "json"];
    args.extend(files.iter().map(String::as_str));
    let o = warpscope(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = j["runs"].as_array().unwrap();
    let labels: Vec<&str> = runs.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["batch=8", "batch=16", "batch=32", "batch=128"]);
    assert_eq!(runs[0]["is_baseline"], true);
    // --baseline 1 is the first file given: batch=128, shown last.
    args.extend(["--baseline", "1"]);
    let o = warpscope(&args);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs[3]["label"], "batch=128");
    assert_eq!(runs[3]["is_baseline"], true);
}

/// An MI300X and an H100 run of the same model (the closest pair the samples hold:
/// docs/analysis.md section 8): their GEMMs share no name, but meet under `aten::addmm`. The
/// figures were worked out independently from the traces (innermost `cpu_op` around each
/// kernel's launching call, durations as exact decimal µs).
#[test]
fn amd_and_nvidia_runs_meet_by_operator() {
    let (Some(amd), Some(nvidia)) = (
        shared_sample("rocm/kineto_mi300x_bert_small.json.gz"),
        shared_sample("chrome-kineto/tracelens_h100_bert-small_with_stack.json.gz"),
    ) else {
        return;
    };
    let (amd, nvidia) = (amd.to_str().unwrap(), nvidia.to_str().unwrap());
    let j = json(&["compare", amd, nvidia, "--top", "0"]);
    let rows = j["kernels_by_operator"].as_array().unwrap();
    assert_eq!(rows.len(), 9);
    let row = |op: &str| rows.iter().find(|r| r["name"] == op).unwrap().clone();
    let addmm = row("aten::addmm");
    assert_eq!(addmm["per_run"][0]["kernels"], 26);
    assert_eq!(addmm["per_run"][0]["total_ns"], 174_130);
    assert_eq!(addmm["per_run"][1]["kernels"], 26);
    assert_eq!(addmm["per_run"][1]["total_ns"], 197_598);
    assert!(
        addmm["per_run"][0]["top_kernels"][0]
            .as_str()
            .unwrap()
            .starts_with("Cijk_")
    );
    assert_eq!(addmm["presence"][1], "both");
    let attention = row("aten::_flash_attention_forward");
    assert_eq!(attention["per_run"][0]["total_ns"], 113_656);
    assert_eq!(attention["per_run"][1]["total_ns"], 37_408);
    // By name, no GEMM of one run is in the other.
    let gemms_in_both = j["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["name"].as_str().unwrap().starts_with("Cijk_"))
        .filter(|k| k["presence"][1] == "both")
        .count();
    assert_eq!(gemms_in_both, 0);
    let text = ok(&["compare", amd, nvidia]);
    assert!(text.contains("Kernels by launching operator"), "{text}");
    assert!(text.contains("aten::addmm"), "{text}");
}

/// Each run's FLOPs figures in the compare JSON (docs/flops.md, per compared run): the model
/// FLOPs of scripts/flops_reference.py on the FP32 file, equal under bf16 autocast (each
/// convolution counted once), MFU against each run's own precision.
#[test]
fn compare_json_gives_mfu_and_tflops_per_run() {
    let j = json(&[
        "compare",
        "sample_profiles/resnet50_b32_fp32_mem_flops.pt.trace.json.gz",
        "sample_profiles/resnet50_b32_bf16_mem_flops.pt.trace.json.gz",
    ]);
    let runs = j["runs"].as_array().unwrap();
    let fp32 = &runs[0]["flops"];
    assert_eq!(fp32["model_flops"], 1_555_140_968_448_u64);
    assert_eq!(runs[1]["flops"]["model_flops"], 1_555_140_968_448_u64);
    // 1.555e12 FLOPs over the 82.984 ms window: 18.74 TFLOP/s, 3.79% of the TF32 peak.
    let tflops = fp32["tflops_per_s"].as_f64().unwrap();
    assert!((tflops - 18.740).abs() < 0.001, "{tflops}");
    let mfu = fp32["mfu"].as_f64().unwrap();
    assert!((mfu - 0.037_897).abs() < 1e-6, "{mfu}");
    let bf16_mfu = runs[1]["flops"]["mfu"].as_f64().unwrap();
    assert!(bf16_mfu > 0.0 && bf16_mfu < mfu, "{bf16_mfu}");
}
