//! End-to-end tests of the `warpscope` binary: what a user types and what they read back.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::{stderr, stdout, warpscope};

fn summary_json(file: &str) -> serde_json::Value {
    let o = warpscope(&["summary", file, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("summary JSON")
}

fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpscope-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// PyTorch's "Self CUDA time total" for the shipped samples, in ms with 3 decimals.
const PYTORCH_TOTALS: [(&str, &str); 6] = [
    ("alexnet_b8", "4.871"),
    ("alexnet_b16", "7.206"),
    ("alexnet_b32", "11.593"),
    ("alexnet_b128", "39.869"),
    ("resnet50_b64_fp32", "82.995"),
    ("resnet50_b64_amp", "57.903"),
];

#[test]
fn summary_gpu_total_equals_pytorch_self_cuda_time_total() {
    for (name, ms) in PYTORCH_TOTALS {
        let j = summary_json(&format!("sample_profiles/{name}.pt.trace.json.gz"));
        let total = j["gpu_total_ns"].as_i64().unwrap();
        #[allow(clippy::cast_precision_loss)]
        let total_ms = total as f64 / 1e6;
        assert_eq!(format!("{total_ms:.3}"), ms, "{name}: {total} ns");
        // gpu_total_ns is the sum of every row, kernels, copies and sets together.
        let rows: i64 = j["gpu_activities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["total_ns"].as_i64().unwrap())
            .sum();
        assert_eq!(rows, total, "{name}");
    }
}

#[test]
fn summary_json_is_the_documented_contract() {
    let j = summary_json("sample_profiles/resnet50_b64_fp32.pt.trace.json.gz");
    assert_eq!(j["source"]["format"], "chrome-json");
    assert_eq!(j["source"]["tool"], "PyTorch profiler (Kineto)");
    assert_eq!(
        j["source"]["path"],
        "sample_profiles/resnet50_b64_fp32.pt.trace.json.gz"
    );
    assert_eq!(j["gpu_total_ns"], 82_994_730);
    // Copies rank with kernels: the 4 input copies (10.5 ms) come before the top kernel.
    assert_eq!(j["gpu_activities"][0]["name"], "[CUDA memcpy HtoD]");
    assert_eq!(j["gpu_activities"][0]["kind"], "memcpy");
    let top = j["gpu_activities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "kernel")
        .unwrap();
    assert_eq!(
        top["name"],
        "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float, float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, float)"
    );
    assert_eq!(top["kind"], "kernel");
    assert_eq!(top["calls"], 22);
    assert_eq!(top["total_ns"], 7_980_813);
    for key in ["avg_ns", "min_ns", "max_ns", "median_ns", "time_pct"] {
        assert!(top[key].is_number(), "{key}");
    }
    // Copies by kind: HtoD 4 copies of 77071360 bytes in 10527344 ns.
    let htod = j["memcpy"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "HtoD")
        .unwrap();
    assert_eq!(htod["calls"], 4);
    assert_eq!(htod["bytes"], 77_071_360);
    assert_eq!(htod["total_ns"], 10_527_344);
    assert!((htod["gbps"].as_f64().unwrap() - 77_071_360.0 / 10_527_344.0).abs() < 1e-9);
    let memcpy_rows: Vec<&str> = j["gpu_activities"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "memcpy")
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(
        memcpy_rows.contains(&"[CUDA memcpy HtoD]"),
        "{memcpy_rows:?}"
    );
    // API calls and operators are there, and an operator's GPU time comes from the kernels
    // it launched.
    let api = j["api"].as_array().unwrap();
    assert!(
        api.iter()
            .any(|a| a["name"] == "cudaLaunchKernel" && a["calls"].as_u64().unwrap() > 100)
    );
    let ops = j["ops"].as_array().unwrap();
    let conv = ops
        .iter()
        .find(|o| o["name"] == "aten::cudnn_convolution")
        .unwrap();
    assert!(conv["gpu_ns"].as_i64().unwrap() > 0);
    assert!(conv["self_ns"].as_i64().unwrap() <= conv["total_ns"].as_i64().unwrap());
    assert_eq!(j["warnings"].as_array().unwrap().len(), 0);
}

#[test]
fn top_limits_rows_but_not_totals() {
    let o = warpscope(&[
        "summary",
        "sample_profiles/alexnet_b8.pt.trace.json.gz",
        "--top",
        "3",
        "--format",
        "json",
    ]);
    assert!(o.status.success());
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["gpu_activities"].as_array().unwrap().len(), 3);
    assert_eq!(j["gpu_total_ns"], 4_870_889);
}

#[test]
fn summary_table_reads_like_nvprof() {
    let o = warpscope(&["summary", "sample_profiles/alexnet_b8.pt.trace.json.gz"]);
    assert!(o.status.success());
    let text = stdout(&o);
    assert!(text.contains("Type  Time(%)"), "{text}");
    assert!(
        text.contains(" GPU activities:   21.79%   1.0611ms        12"),
        "{text}"
    );
    assert!(text.contains("      API calls:"), "{text}");
    assert!(text.contains("[CUDA memcpy HtoD]"), "{text}");
}

#[test]
fn summary_csv_has_one_row_per_table_row() {
    let o = warpscope(&[
        "summary",
        "sample_profiles/alexnet_b8.pt.trace.json.gz",
        "--format",
        "csv",
    ]);
    assert!(o.status.success());
    let text = stdout(&o);
    assert_eq!(
        text.lines().next().unwrap(),
        "Type,Name,Kind,Calls,Total_ns,Avg_ns,Min_ns,Max_ns,Median_ns,Time_pct,Bytes,GBps,Self_ns,GPU_ns"
    );
    let gpu: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("GPU activities,"))
        .collect();
    let json = summary_json("sample_profiles/alexnet_b8.pt.trace.json.gz");
    assert_eq!(gpu.len(), json["gpu_activities"].as_array().unwrap().len());
    // Kernel names with commas are quoted.
    assert!(
        gpu.iter().any(|l| l.starts_with("GPU activities,\"void ")),
        "{gpu:?}"
    );
}

#[test]
fn info_describes_the_file() {
    let o = warpscope(&["info", "sample_profiles/alexnet_b8.pt.trace.json.gz"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("Format:    Chrome trace JSON (chrome-json)"),
        "{text}"
    );
    assert!(
        text.contains("Tool:      PyTorch profiler (Kineto), CUDA runtime 13000, CUPTI 130001"),
        "{text}"
    );
    assert!(
        text.contains("GPU 0: NVIDIA H100 80GB HBM3, compute 9.0, 132 SMs"),
        "{text}"
    );
    assert!(text.contains("GPU 0 · stream 7"), "{text}");
    assert!(text.contains("kernel 260"), "{text}");
    let o = warpscope(&[
        "info",
        "sample_profiles/alexnet_b8.pt.trace.json.gz",
        "--format",
        "json",
    ]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["devices"][0]["sm_count"], 132);
    assert!(j["span_ns"].as_i64().unwrap() > 0);
    let stream7 = j["tracks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["kind"] == "gpu_stream" && t["stream"] == 7)
        .unwrap();
    assert_eq!(stream7["device"], 0);
}

#[test]
fn bad_files_give_one_line_naming_the_file_and_exit_1() {
    let cases: Vec<(PathBuf, &str)> = vec![
        (temp_file("empty.json", b""), "file is empty"),
        (
            temp_file("notes.txt", b"hello, these are my notes\n"),
            "not a recognised profile",
        ),
        (
            temp_file("broken.json", b"{ this is not json"),
            "not valid trace JSON",
        ),
        (
            temp_file("other.json", b"{\"hello\": 1}"),
            "not a Chrome trace",
        ),
        (
            temp_file("bad.json.gz", b"\x1f\x8b\x08\x00garbage-not-deflate"),
            "gzip",
        ),
        (
            temp_file("binary.bin", &[0u8, 159, 146, 150, 1, 2, 3, 255, 0, 0, 7]),
            "binary data",
        ),
        (PathBuf::from("/nonexistent/trace.json"), "cannot read file"),
    ];
    for (path, expected) in cases {
        let p = path.to_str().unwrap();
        for sub in ["summary", "info"] {
            let o = warpscope(&[sub, p]);
            assert_eq!(o.status.code(), Some(1), "{sub} {p}");
            let err = stderr(&o);
            assert_eq!(err.lines().count(), 1, "{sub} {p}: {err}");
            assert!(err.starts_with("warpscope: error: "), "{err}");
            assert!(err.contains(p), "{err}");
            assert!(
                err.contains(expected),
                "{p}: expected {expected:?} in {err}"
            );
            assert!(!err.contains("panicked"), "{err}");
            assert!(stdout(&o).is_empty());
        }
    }
}

#[test]
fn a_directory_is_not_a_profile_and_the_job_commands_are_suggested() {
    let dir = std::env::temp_dir();
    let d = dir.to_str().unwrap();
    for args in [
        vec!["summary", d],
        vec!["info", d],
        vec!["analyze", d],
        vec!["compare", d, "sample_profiles/alexnet_b8.pt.trace.json.gz"],
    ] {
        let o = warpscope(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(&format!("{d}: is a directory")), "{err}");
        assert!(err.contains(&format!("`warpscope fleet {d}`")), "{err}");
        assert!(err.contains(&format!("`warpscope {d}`")), "{err}");
        assert!(!err.contains("Is a directory"), "{err}");
    }
}

#[test]
fn viewer_arguments_are_checked_before_a_window_opens() {
    let o = warpscope(&["--screenshot", "/tmp/x.png"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o).trim(),
        "warpscope: error: --screenshot needs at least one profile to show"
    );
    let o = warpscope(&[
        "--size",
        "huge",
        "sample_profiles/alexnet_b8.pt.trace.json.gz",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("expected WIDTHxHEIGHT"),
        "{}",
        stderr(&o)
    );
    let o = warpscope(&["--renderer", "vulkan", "x.json"]);
    assert_eq!(o.status.code(), Some(2));
}

#[cfg(target_os = "linux")]
#[test]
fn without_a_display_the_viewer_says_so_in_one_line() {
    let o = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .arg("sample_profiles/alexnet_b8.pt.trace.json.gz")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no display"), "{err}");
    assert!(err.contains("warpscope summary FILE"), "{err}");
}

#[test]
fn timings_go_to_stderr() {
    let o = warpscope(&[
        "info",
        "--timings",
        "sample_profiles/alexnet_b8.pt.trace.json.gz",
    ]);
    assert!(o.status.success());
    let err = stderr(&o);
    assert!(err.starts_with("timings: 1444 events"), "{err}");
    assert!(err.contains("peak RSS"), "{err}");
}

#[test]
fn help_explains_the_commands() {
    let o = warpscope(&["--help"]);
    assert!(o.status.success());
    let text = stdout(&o);
    for word in ["summary", "info", "--timings", "Examples:"] {
        assert!(text.contains(word), "{word}: {text}");
    }
    let o = warpscope(&["summary", "--help"]);
    assert!(stdout(&o).contains("--format"));
}

/// The conformance samples in ../shared/samples, when present, all work from the command line.
#[test]
fn every_shared_sample_loads_from_the_command_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/samples");
    if !dir.is_dir() {
        eprintln!("skipping: ../shared/samples not found");
        return;
    }
    let mut checked = 0;
    for sub in std::fs::read_dir(&dir).unwrap() {
        let sub = sub.unwrap().path();
        if !sub.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&sub).unwrap() {
            let f = f.unwrap().path();
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("resnet50_b32_60steps") {
                continue; // 139 MB: covered by the benchmark
            }
            let o = warpscope(&["summary", f.to_str().unwrap(), "--format", "json"]);
            // Not profiles (PyTorch's own figures, the rocminfo text rocprof writes beside a
            // run): a clean one-line error naming the file, never a crash. Every AMD profile
            // (databases and text formats) loads.
            let sysinfo = name.ends_with(".sysinfo.txt");
            let not_read = name == "pytorch_truth.json" || sysinfo;
            if sysinfo {
                assert!(stderr(&o).contains("rocminfo"), "{}", stderr(&o));
            }
            if not_read {
                assert_eq!(o.status.code(), Some(1), "{name}");
                let err = stderr(&o);
                assert_eq!(err.lines().count(), 1, "{err}");
                assert!(err.contains(&name), "{err}");
                if sysinfo {
                    assert!(err.contains("rocminfo output"), "{err}");
                }
            } else if name == "cfd_titanxp_cpu-profiling.csv" {
                assert_eq!(o.status.code(), Some(1), "{name}");
                assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
            } else {
                assert!(o.status.success(), "{name}: {}", stderr(&o));
                let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
                assert!(j["gpu_total_ns"].is_i64(), "{name}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 25, "{checked}");
}

/// A missing file, a directory and a truncated gzip each give one line that says the problem
/// once (the OS error is not repeated after the message that already holds it).
#[test]
fn an_unreadable_file_is_explained_once() {
    let two_bytes = temp_file("two.gz", &[0x1f, 0x8b]);
    let dir = std::env::temp_dir();
    for (path, problem) in [
        (
            PathBuf::from("no/such/file.json"),
            "No such file or directory",
        ),
        (dir, "is a directory"),
        (two_bytes, "ends inside a gzip header"),
    ] {
        let o = warpscope(&["summary", path.to_str().unwrap()]);
        assert!(!o.status.success());
        let err = stderr(&o);
        assert_eq!(err.matches(problem).count(), 1, "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// A mistyped command is not taken for a file to open.
#[test]
fn a_mistyped_command_gets_a_suggestion() {
    for (typed, meant) in [
        ("sumary", "summary"),
        ("anlyze", "analyze"),
        ("inof", "info"),
    ] {
        let o = warpscope(&[typed, "x.json"]);
        assert!(!o.status.success());
        let err = stderr(&o);
        assert!(
            err.contains(&format!(
                "unknown command `{typed}`: did you mean `{meant}`?"
            )),
            "{err}"
        );
    }
}

/// `summary --help` names every format, and the `--help` examples fit on one line each.
#[test]
fn help_names_every_format_and_keeps_examples_whole() {
    let o = warpscope(&["summary", "--help"]);
    let text = stdout(&o);
    for format in ["nvprof", "Nsight Systems", "Kineto"] {
        assert!(text.contains(format), "{text}");
    }
    let o = warpscope(&["--help"]);
    let text = stdout(&o);
    let line = text
        .lines()
        .find(|l| l.contains("warpscope compare"))
        .expect("a compare example");
    assert!(line.trim_end().ends_with(".pt.trace.json.gz"), "{line}");
}

/// The text tables shorten long C++ names as `compare` does (JSON keeps them whole).
#[test]
fn summary_tables_shorten_long_names() {
    let file = "sample_profiles/resnet50_b64_fp32.pt.trace.json.gz";
    let o = warpscope(&["summary", file]);
    let text = stdout(&o);
    let longest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(longest < 260, "a {longest}-character line");
    let j = summary_json(file);
    let whole = j["gpu_activities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().len())
        .max()
        .unwrap();
    assert!(whole > 200, "JSON names are whole ({whole} characters)");
}

/// A display that does not answer gives one line naming it, without winit's source path.
#[test]
fn a_display_that_does_not_answer_is_named() {
    let o = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .arg("sample_profiles/alexnet_b8.pt.trace.json.gz")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("DISPLAY", ":97")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("cannot open a window on the X display :97"),
        "{err}"
    );
    assert!(!err.contains(".cargo/registry"), "{err}");
    assert!(err.contains("warpscope summary FILE"), "{err}");
}

/// A gzip trace cut off in the middle: every command reads what is there, says first (under
/// the report's first line, or on stderr before CSV and JSON) that the file was cut off, and
/// exits 0 — warnings never change the exit status (README, "Exit status").
#[test]
fn a_cut_off_trace_is_warned_about_before_the_figures_and_exits_0() {
    let gz = std::fs::read("sample_profiles/alexnet_b8.pt.trace.json.gz").unwrap();
    let cut = temp_file("cut_alexnet_b8.json.gz", &gz[..gz.len() * 3 / 5]);
    let cut = cut.to_str().unwrap();
    let cut_off = "it was cut off";
    let other = "sample_profiles/alexnet_b16.pt.trace.json.gz";
    for args in [
        vec!["summary", cut],
        vec!["info", cut],
        vec!["analyze", cut],
        vec!["compare", cut, other],
        vec!["fleet", cut],
    ] {
        let o = warpscope(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let text = stdout(&o);
        let second = text.lines().nth(1).unwrap_or_default();
        assert!(
            second.starts_with("warning: ") && second.contains(cut_off),
            "{args:?}: the warning is not under the first line:\n{text}"
        );
        assert_eq!(text.matches(cut_off).count(), 1, "{args:?}: {text}");
        for format in ["csv", "json"] {
            let mut with = args.clone();
            with.extend(["--format", format]);
            let o = warpscope(&with);
            assert_eq!(o.status.code(), Some(0), "{with:?}");
            let err = stderr(&o);
            assert!(
                err.starts_with("warpscope: warning: ") && err.contains(cut_off),
                "{with:?}: {err}"
            );
        }
    }
    let out = std::env::temp_dir().join(format!("warpscope-cli-cut-pq-{}", std::process::id()));
    let o = warpscope(&["export", "--out", out.to_str().unwrap(), cut]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains(cut_off), "{}", stderr(&o));
    std::fs::remove_dir_all(out).unwrap();
}

/// What a user reads of an AMD database with `info`, `summary` and `analyze`: the MI300X agent
/// as a device with its gfx target and compute units, the HIP calls among the API calls, the
/// GEMMs on matrix cores with an occupancy.
#[test]
fn amd_databases_work_from_the_command_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/samples/rocm");
    if !dir.is_dir() {
        eprintln!("skipping: ../shared/samples not found");
        return;
    }
    let db = dir.join("rocprofv3_7.1.1_mi300x_bmm_results.db");
    let o = warpscope(&["info", db.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("GPU 2: AMD Instinct MI300X, gfx942, 304 CUs, 191.984GB"),
        "{text}"
    );
    let j = summary_json(db.to_str().unwrap());
    assert_eq!(j["source"]["format"], "rocpd-sqlite", "{j}");
    assert_eq!(j["gpu_total_ns"], 2_604_546, "{j}");
    let o = warpscope(&["analyze", db.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let a: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let gemm = a["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"].as_str().unwrap().contains("BatchedGemmKernel"))
        .unwrap_or_else(|| panic!("{a}"));
    assert_eq!(gemm["tensor_cores"], true, "{gemm}");
    assert_eq!(gemm["theoretical_occupancy_pct"], 12.5, "{gemm}");
    let rpd = dir.join("rpd_gfx90a_matmul.rpd");
    let j = summary_json(rpd.to_str().unwrap());
    assert_eq!(j["source"]["format"], "rpd-sqlite", "{j}");
}
