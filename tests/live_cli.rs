//! End-to-end tests of `warpscope live` on a machine without a GPU (this one, CI): the catalogue,
//! the clear "no CUDA driver" failure, the errors a user can make, and the live run made on an
//! H100 that ships in `sample_profiles/`, reopened like any profile.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::Path;

use warpscope_core::{Progress, import_file};
use warpscope_live::{CATALOG, LiveRun};

const SAMPLE: &str = "sample_profiles/live_vector_add_h100.json.gz";

mod common;

use common::{stderr, stdout, warpscope};

/// Fails with exit status 1, a message containing `expected`, and no panic.
fn fails(args: &[&str], expected: &str) {
    let o = warpscope(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    assert!(err.contains(expected), "{args:?}: {err}");
    assert!(!err.contains("internal error"), "{args:?} panicked: {err}");
}

fn gpu_here() -> bool {
    warpscope_live::probe().is_ok()
}

#[test]
fn list_shows_every_kernel_and_configuration() {
    let o = warpscope(&["live", "--list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for k in CATALOG {
        assert!(text.contains(k.name), "{} missing:\n{text}", k.name);
        for c in k.configs {
            assert!(text.contains(c.name), "{} {} missing", k.name, c.name);
        }
    }
    assert!(text.contains("default 1M,5M,10M,50M,100M"), "{text}");

    let o = warpscope(&["live", "--list", "--format", "json"]);
    let list: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "vector_add",
            "saxpy",
            "copy",
            "sgemm",
            "reduce",
            "transfer",
            "conv2d"
        ]
    );
    let vector_add = &list[0];
    assert_eq!(vector_add["configs"].as_array().unwrap().len(), 7);
    assert_eq!(vector_add["configs"][6]["target"], "cpu");
    assert_eq!(vector_add["source"], "vector_add.cu");

    let o = warpscope(&["live", "--list", "--format", "csv"]);
    let csv = stdout(&o);
    assert!(csv.starts_with("kernel,config,target,memory,"), "{csv}");
    assert!(csv.contains("vector_add,1x1-unified,gpu,unified,floats,1M 5M 10M 50M 100M"));
}

#[test]
fn without_a_gpu_a_run_fails_with_a_clear_message() {
    if gpu_here() {
        eprintln!("skipped: this machine has a CUDA driver");
        return;
    }
    fails(&["live", "vector_add"], "no CUDA driver found");
    fails(
        &["live", "sgemm", "--sizes", "256", "--format", "json"],
        "no CUDA driver found",
    );
    // Nothing was measured, so nothing is left behind.
    let dir = std::env::temp_dir().join(format!("warpscope-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("run.json");
    fails(
        &["live", "copy", "--out", out.to_str().unwrap()],
        "no CUDA driver found",
    );
    assert!(!out.exists());
    // A file already there is left as it was.
    std::fs::write(&out, "an earlier run").unwrap();
    fails(
        &["live", "copy", "--out", out.to_str().unwrap()],
        "no CUDA driver found",
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "an earlier run");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn mistakes_are_named_before_anything_runs() {
    fails(&["live", "vecadd"], "no bundled kernel \"vecadd\"");
    fails(
        &["live", "vector_add", "--sizes", "1M,lots"],
        "cannot read size \"lots\"",
    );
    fails(
        &["live", "vector_add", "--configs", "grid-device,huge"],
        "vector_add has no configuration \"huge\"; it has: 1x1-device",
    );
    fails(
        &["live", "sgemm", "--sizes", "100000"],
        "out of range for sgemm",
    );
    fails(
        &["live", "saxpy", "--repeat", "0"],
        "--repeat must be at least 1",
    );
    fails(
        &["live", "saxpy", "--budget", "0"],
        "--budget must be a positive",
    );
    for k in ["0", "10001"] {
        fails(
            &["live", "sgemm", "--batch", k],
            &format!("--batch {k}: a batch is 1 to 10000 launches per pair of CUDA events"),
        );
    }
    fails(
        &["live", "saxpy", "--out", "/no/such/dir/run.json"],
        "cannot write /no/such/dir/run.json",
    );
    // No kernel and no --list is a usage error from the argument parser.
    let o = warpscope(&["live"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn the_h100_sample_run_reopens_with_its_results() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(SAMPLE);
    let profile = import_file(&path, &Progress::new()).unwrap();
    assert_eq!(profile.source.tool, "warpscope live");
    let run = LiveRun::from_profile(&profile).expect("live results in the sample");
    assert_eq!(run.kernel, "vector_add");
    assert!(run.device.name.contains("H100"), "{}", run.device.name);
    // The full sweep: 3 launch shapes x 2 memories x 5 sizes, plus the CPU at 5 sizes.
    assert_eq!(run.points.len(), 35);
    assert!(run.all_checks_ok());
    assert!(run.cupti, "the sample was made with CUPTI");
    assert!(run.peaks.d2d_bytes_per_s.is_some());
    for p in &run.points {
        assert!(!p.event_ns.is_empty(), "{} {}", p.config, p.size);
    }
    // Its kernels are on the timeline and in the tables like any profile's.
    let o = warpscope(&["summary", SAMPLE, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = summary["gpu_activities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"vector_add"), "{names:?}");
    let o = warpscope(&["info", SAMPLE]);
    let info = stdout(&o);
    assert!(info.contains("warpscope live"), "{info}");
    assert!(info.contains("live_results:"), "{info}");
    assert!(
        !info.contains("\"points\""),
        "info printed the raw results JSON"
    );
}

const SAXPY_ARGS: &str = "f32=2.5 f32[N]=rand f32[N]=rand i32=N";

/// `warpscope live --source examples/FILE --kernel KERNEL --args SPEC` plus `more`.
fn user(file: &str, kernel: &str, spec: &str, more: &[&str]) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(file);
    let mut args: Vec<String> = [
        "live",
        "--source",
        path.to_str().unwrap(),
        "--kernel",
        kernel,
        "--args",
        spec,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(more.iter().map(|s| s.to_string()));
    args
}

fn fails_user(args: &[String], expected: &str) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fails(&args, expected);
}

#[test]
fn a_user_kernel_is_checked_before_the_gpu_and_then_needs_a_driver() {
    if gpu_here() {
        eprintln!("skipped: this machine has a CUDA driver");
        return;
    }
    // Everything right: the only thing missing is the GPU.
    fails_user(
        &user(
            "saxpy.cu",
            "saxpy",
            SAXPY_ARGS,
            &["--flops", "2*N", "--blocks", "64,256"],
        ),
        "no CUDA driver found",
    );
    // A C++ (mangled) kernel and --check-against are found textually too.
    fails_user(
        &user(
            "saxpy_buggy.cu",
            "saxpy_buggy",
            SAXPY_ARGS,
            &["--check-against", "saxpy_ref"],
        ),
        "no CUDA driver found",
    );
    fails_user(
        &user(
            "saxpy.cu",
            "saxpy_grid_stride",
            SAXPY_ARGS,
            &["--grid", "1056"],
        ),
        "no CUDA driver found",
    );
}

#[test]
fn user_kernel_mistakes_are_one_clear_message() {
    fails_user(&user("nope.cu", "saxpy", SAXPY_ARGS, &[]), "cannot read ");
    fails_user(
        &user("saxpy.cu", "saxpi", SAXPY_ARGS, &[]),
        "saxpy.cu has no __global__ function \"saxpi\"; it has: saxpy, saxpy_grid_stride",
    );
    fails_user(
        &user("saxpy.cu", "saxpy", "f32=2.5 f32[N]=rand f32[N]=rand", &[]),
        "saxpy takes 4 parameter(s) (float a, const float *__restrict__ x, float *__restrict__ y, \
         int n) but --args describes 3",
    );
    fails_user(
        &user(
            "saxpy.cu",
            "saxpy",
            "f32=2.5 f64[N]=rand f32[N]=rand i32=N",
            &[],
        ),
        "parameter 2 of saxpy (const float *__restrict__ x) is f32 but --args gives f64",
    );
    fails_user(
        &user(
            "saxpy.cu",
            "saxpy",
            "f32=2.5 f32[N]=ones f32[N]=rand i32=N",
            &[],
        ),
        "argument 2 (\"f32[N]=ones\"): \"ones\" is not an initialiser",
    );
    fails_user(
        &user("saxpy.cu", "saxpy", SAXPY_ARGS, &["--sizes", "3G"]),
        "argument 4 (i32=N): 3000000000 does not fit in i32",
    );
    fails_user(
        &user(
            "saxpy.cu",
            "saxpy",
            "f32=2.5 f32[N*N]=rand f32[N]=rand i32=N",
            &["--sizes", "1M"],
        ),
        "argument 2 (f32[N*N]=rand) needs more than 64 GiB at N = 1000000",
    );
    fails_user(
        &user("saxpy.cu", "saxpy", SAXPY_ARGS, &["--grid", "N/(B-B)"]),
        "--grid: N/(B-B) cannot be computed",
    );
    fails_user(
        &user("saxpy.cu", "saxpy", SAXPY_ARGS, &["--blocks", "0,64"]),
        "block size 0 is out of range: CUDA allows 1 to 1024 threads per block",
    );
    fails_user(
        &user("saxpy.cu", "saxpy", SAXPY_ARGS, &["--block", "64x32"]),
        "block 64x32 has 2048 threads",
    );
    fails_user(
        &user(
            "saxpy.cu",
            "saxpy",
            SAXPY_ARGS,
            &["--check-against", "saxpy_ref"],
        ),
        "has no __global__ function \"saxpy_ref\"",
    );
    fails_user(
        &user(
            "saxpy.cu",
            "saxpy",
            SAXPY_ARGS,
            &["--include", "/no/such/dir"],
        ),
        "--include /no/such/dir: no such folder",
    );
    // --kernel without --source, or a bundled kernel with --source, is a usage error.
    let o = warpscope(&["live", "--kernel", "saxpy"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = warpscope(&[
        "live", "saxpy", "--source", "x.cu", "--kernel", "k", "--args", "i32=1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn hostile_user_kernel_inputs_are_one_clear_message() {
    // A deeply nested grid expression used to overflow the stack.
    let deep = format!("{}N{}", "(".repeat(5000), ")".repeat(5000));
    fails_user(
        &user("saxpy.cu", "saxpy", SAXPY_ARGS, &["--grid", &deep]),
        "--grid: an expression of 10001 bytes is too long (at most 1024)",
    );
    // Negative scalars, C's integer division, B in lengths, typed start values.
    fails_user(
        &user(
            "saxpy.cu",
            "saxpy",
            "f32=-2.5 f32[N]=rand f32[N]=rand i32=-N/3",
            &["--sizes", "9G"],
        ),
        "argument 4 (i32=-N/3): -3000000000 does not fit in i32",
    );
    fails_user(
        &user(
            "saxpy.cu",
            "saxpy",
            "f32=2.5 f32[N-B]=rand f32[N]=rand i32=N",
            &["--sizes", "1000", "--blocks", "64,1024"],
        ),
        "argument 2: N-B cannot be computed at N = 1000, B = 1024: it is negative (-24)",
    );
    fails_user(
        &user(
            "saxpy.cu",
            "saxpy",
            "f32=2.5 f32[N]=rand f32[N]=1e400 i32=N",
            &[],
        ),
        "argument 3 (\"f32[N]=1e400\"): inf is not a finite number",
    );
    // Options that would be ignored are refused.
    fails_user(
        &user("saxpy.cu", "saxpy", SAXPY_ARGS, &["--configs", "x"]),
        "--configs picks configurations of a bundled kernel; your own kernel (--source) has none",
    );
    fails_user(
        &user(
            "saxpy.cu",
            "saxpy",
            SAXPY_ARGS,
            &["--block", "16x16", "--blocks", "64,128"],
        ),
        "--block 16x16 and --blocks cannot go together",
    );
    fails_user(
        &user("saxpy.cu", "saxpy", SAXPY_ARGS, &["--define", "É=2"]),
        "--define \"É=2\": use NAME or NAME=VALUE",
    );
}

#[test]
fn block_sweeps_of_bundled_kernels_need_a_free_block() {
    fails(
        &["live", "sgemm", "--blocks", "64,128"],
        "sgemm has no configuration whose block size can change (--blocks)",
    );
    fails(
        &["live", "copy", "--blocks", "64,128"],
        "copy memcpy has a fixed launch shape; --blocks works with: scalar, vec4",
    );
    fails(
        &["live", "copy", "--configs", "scalar", "--blocks", "48"],
        "multiples of 32",
    );
    fails(
        &["live", "sgemm", "--configs", "tensor", "--sizes", "1000"],
        "sgemm tensor needs sizes that are multiples of 128; 1000 is not",
    );
}

/// The occupancy the driver's API reported on the H200 (`cuOccupancyMaxActiveBlocksPerMultiprocessor`)
/// agrees with warpscope's own calculator (docs/occupancy.md) for every kernel launch in the
/// samples, given the registers and shared memory the driver reported for the function.
#[test]
fn the_drivers_occupancy_matches_the_calculator_on_the_h200_samples() {
    use warpscope_core::analysis::insight::occupancy::{
        GpuArch, LaunchConfig, theoretical_occupancy,
    };
    let arch = GpuArch::for_compute_capability(9, 0).unwrap();
    let mut compared = 0;
    for (file, block_of) in [
        ("live_sgemm_ladder_h200.json.gz", None),
        ("live_saxpy_blocks_h200.json.gz", Some(())),
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("sample_profiles")
            .join(file);
        let run = LiveRun::from_profile(&import_file(&path, &Progress::new()).unwrap()).unwrap();
        assert_eq!(run.device.compute_capability, (9, 0));
        for p in &run.points {
            let (Some(r), Some(driver)) = (p.resources, p.occupancy) else {
                continue;
            };
            // The GEMM rungs' blocks (sgemm.cu's launch shapes); the sweep records its own.
            let block = match (block_of, p.config.as_str()) {
                (Some(()), _) => p.block.unwrap(),
                (None, "naive") => 256,
                (None, "tiled") => 1024,
                (None, "regblock") => 256,
                (None, "tensor") => 128,
                (None, other) => panic!("unexpected rung {other}"),
            };
            let ours = theoretical_occupancy(
                &arch,
                LaunchConfig {
                    block_size: block,
                    registers_per_thread: r.registers.unwrap(),
                    shared_bytes: r.static_shared_bytes.unwrap(),
                },
            )
            .unwrap();
            assert_eq!(
                (ours.blocks_per_sm, ours.warps_per_sm),
                (driver.blocks_per_sm, driver.warps_per_sm),
                "{file} {} {} block {block}",
                p.config,
                p.size
            );
            compared += 1;
        }
    }
    // 12 GEMM rungs (4 kernels x 3 sizes) and 6 block sizes.
    assert_eq!(compared, 18);
}

#[test]
fn a_batch_is_checked_before_the_gpu_and_a_batched_run_reopens() {
    if !gpu_here() {
        fails(
            &["live", "sgemm", "--configs", "tensor", "--batch", "20"],
            "no CUDA driver found",
        );
        let args = user("saxpy.cu", "saxpy", SAXPY_ARGS, &["--batch", "10000"]);
        fails_user(&args, "no CUDA driver found");
    }
    let args = user("saxpy.cu", "saxpy", SAXPY_ARGS, &["--batch", "0"]);
    fails_user(&args, "--batch 0: a batch is 1 to 10000 launches");
    // The H200 run: 2 configurations x (1 warm-up + 5 timed batches of 20 + 1 check launch).
    let sample = "sample_profiles/live_sgemm_batch20_h200.json.gz";
    let o = warpscope(&["summary", sample, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let calls = |name: &str| {
        summary["gpu_activities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .map(|r| r["calls"].as_u64().unwrap())
    };
    assert_eq!(calls("gemm_tensor_fp16"), Some(121));
    assert_eq!(calls("sgemm_regblock"), Some(121));
    let profile = import_file(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join(sample),
        &Progress::new(),
    )
    .unwrap();
    let run = LiveRun::from_profile(&profile).unwrap();
    assert!(
        run.points
            .iter()
            .all(|p| p.batch == 20 && p.event_ns.len() == 5)
    );
    assert!(run.all_checks_ok());
}

/// `warpscope live --source examples/hang.cu --kernel wait_for_flag` with `more`.
fn hang(more: &[&str]) -> Vec<String> {
    user("hang.cu", "wait_for_flag", "i32[N]=0 f32[N]=0 i32=N", more)
}

#[test]
fn the_time_limit_is_checked_before_the_gpu() {
    // Not a positive number of seconds: a usage error from the argument parser.
    for (bad, says) in [
        ("0", "the time limit must be a positive number of seconds"),
        ("-5", "the time limit must be a positive number of seconds"),
        ("100000", "at most 86400"),
        (
            "ten",
            "\"ten\" is not a number of seconds (write 10, 2.5 or off)",
        ),
    ] {
        let args = hang(&[&format!("--timeout={bad}")]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = warpscope(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains("--timeout <SECONDS>") && err.contains(says),
            "{bad}: {err}"
        );
    }
    let o = warpscope(&["live", "--help"]);
    let help = stdout(&o);
    assert!(
        help.contains("--timeout <SECONDS>") && help.contains("Default: 4 x --budget"),
        "{help}"
    );
    if gpu_here() {
        eprintln!("skipped the rest: this machine has a CUDA driver");
        return;
    }
    // Right, or off: the only thing missing is the GPU.
    for ok in ["10", "2.5s", "off"] {
        fails_user(&hang(&["--timeout", ok]), "no CUDA driver found");
    }
    fails(
        &["live", "vector_add", "--timeout", "3", "--budget", "1"],
        "no CUDA driver found",
    );
}
