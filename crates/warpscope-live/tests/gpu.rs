//! On a machine with a GPU (`cargo test -p warpscope-live --test gpu -- --ignored`): a user kernel that faults is reported as a failed
//! point (the rest of its sweep as not run), and a later run in the same process fails with a
//! message rather than a crash; a buggy kernel is caught by `--check-against`; a batch launches
//! its kernel K times per sample and the check still reads one launch; a kernel that never ends
//! fails its point at the time limit and, once its process ended, the GPU runs the next one.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::Path;
use std::time::{Duration, Instant};

use warpscope_live::{
    LiveError, LiveProgress, RunOptions, SweepPlan, UserKernel, UserRequest, context_abandoned,
    exit_now, kernel, probe, run_sweep,
};

/// `examples/NAME` of the repository (`WARPSCOPE_EXAMPLES` names the folder where the test binary
/// runs away from its checkout).
fn example(name: &str) -> std::path::PathBuf {
    std::env::var_os("WARPSCOPE_EXAMPLES")
        .map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples"),
            Into::into,
        )
        .join(name)
}

fn user_plan(kernel_name: &str, check_against: Option<&str>) -> SweepPlan {
    let req = UserRequest {
        source: example("saxpy_buggy.cu"),
        kernel: kernel_name.into(),
        args: "f32=2.5 f32[N]=rand f32[N]=rand i32=N".into(),
        check_against: check_against.map(str::to_string),
        ..UserRequest::default()
    };
    let user = UserKernel::from_request(&req).unwrap();
    SweepPlan::for_user(user, Some(&[1_000_000, 2_000_000]), &[], 3, 1).unwrap()
}

/// The options of these tests (no peak measurements), once the GPU is known to be there.
fn gpu_options() -> RunOptions {
    if let Err(e) = probe() {
        panic!("this test needs an NVIDIA GPU and its driver: {e}");
    }
    RunOptions {
        measure_peaks: false,
        ..RunOptions::default()
    }
}

/// Set in the process a faulting kernel runs in (see below).
const FAULT_CHILD: &str = "WARPSCOPE_GPU_TEST_FAULT_CHILD";

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_faulting_kernel_fails_its_point_and_poisons_only_its_process() {
    // A fault poisons every later CUDA call of its process, and the other tests of this binary
    // run in this one: the fault gets a process of its own (this test binary, running only this
    // test).
    if std::env::var_os(FAULT_CHILD).is_none() {
        let name = "a_faulting_kernel_fails_its_point_and_poisons_only_its_process";
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--ignored", "--exact", name, "--test-threads=1"])
            .env(FAULT_CHILD, "1")
            .status()
            .unwrap();
        assert!(status.success(), "the test's own process failed: {status}");
        return;
    }
    let opts = gpu_options();
    let progress = LiveProgress::default();
    let out = run_sweep(&user_plan("saxpy_fault", None), &opts, &progress).unwrap();
    let points = &out.run.points;
    assert_eq!(points.len(), 2);
    let first = points[0].error.as_deref().unwrap();
    assert!(first.starts_with("the kernel faulted: "), "{first}");
    assert!(points[1].error.as_deref().unwrap().starts_with("not run"));
    assert!(!out.run.all_checks_ok());

    // A fault is sticky: no later CUDA call in this process works (a reset primary context
    // included), which is why the GUI runs every sweep in a child process. The next run says so
    // instead of crashing.
    let plan = SweepPlan::new(
        kernel("vector_add").unwrap(),
        Some(&[1_000_000]),
        Some(&["grid-device".to_string()]),
        3,
        1,
    )
    .unwrap();
    let err = run_sweep(&plan, &opts, &progress).unwrap_err().to_string();
    assert!(err.starts_with("CUDA "), "{err}");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_buggy_kernel_is_caught_by_check_against() {
    let opts = gpu_options();
    let out = run_sweep(
        &user_plan("saxpy_buggy", Some("saxpy_ref")),
        &opts,
        &LiveProgress::default(),
    )
    .unwrap();
    let check = out.run.points[0].check.unwrap();
    assert!(!check.ok && check.rel_error > 0.5, "{check:?}");
    let out = run_sweep(
        &user_plan("saxpy_ref", Some("saxpy_buggy")),
        &opts,
        &LiveProgress::default(),
    )
    .unwrap();
    assert!(!out.run.points[0].check.unwrap().ok);
}

/// Launches of `name` on the profile's timeline.
fn launches(profile: &warpscope_core::Profile, name: &str) -> u64 {
    warpscope_core::analysis::summary_report(profile, warpscope_core::TimeRange::ALL, None)
        .gpu_activities
        .iter()
        .find(|r| r.name == name)
        .map_or(0, |r| r.stats.calls)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_batch_launches_k_times_per_sample_and_the_check_reads_one_launch() {
    // SAXPY updates y in place: the check must see one launch's y, not twenty launches' worth.
    for use_cupti in [true, false] {
        let opts = RunOptions {
            use_cupti,
            ..gpu_options()
        };
        let plan = SweepPlan::new(kernel("saxpy").unwrap(), Some(&[1_000_000]), None, 3, 1)
            .unwrap()
            .with_batch(20)
            .unwrap();
        let out = run_sweep(&plan, &opts, &LiveProgress::default()).unwrap();
        let p = &out.run.points[0];
        assert_eq!((out.run.batch, p.batch, p.event_ns.len()), (20, 20, 3));
        assert!(p.check.unwrap().ok, "CUPTI {use_cupti}: {:?}", p.check);
        // One warm-up batch and 3 timed batches of 20, then the single check launch.
        assert_eq!(launches(&out.profile, "saxpy"), 81, "CUPTI {use_cupti}");
    }
}

/// `examples/hang.cu`'s `name` over 1M and 2M, its flag (the first buffer) starting at `flag`.
fn hang_plan(name: &str, flag: &str) -> SweepPlan {
    let req = UserRequest {
        source: example("hang.cu"),
        kernel: name.into(),
        args: format!("i32[N]={flag} f32[N]=0 i32=N"),
        ..UserRequest::default()
    };
    let user = UserKernel::from_request(&req).unwrap();
    SweepPlan::for_user(user, Some(&[1_000_000, 2_000_000]), &[], 3, 1).unwrap()
}

/// Set in the process a kernel that never ends runs in (see below).
const HANG_CHILD: &str = "WARPSCOPE_GPU_TEST_HANG_CHILD";

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_kernel_that_never_ends_fails_its_point_at_the_limit_and_the_next_process_runs() {
    if std::env::var_os(HANG_CHILD).is_some() {
        // The process the kernel never ends in. Only its end stops the kernel, and no exit
        // handler may wait for it: it ends with `exit_now`, 0 when every check passed.
        let checks = std::panic::catch_unwind(|| {
            let opts = RunOptions {
                timeout_ns: Some(2_000_000_000),
                ..gpu_options()
            };
            let start = Instant::now();
            let out = run_sweep(
                &hang_plan("wait_for_flag", "0"),
                &opts,
                &LiveProgress::default(),
            )
            .unwrap();
            let took = start.elapsed();
            let points = &out.run.points;
            assert_eq!(
                points[0].error.as_deref(),
                Some("the kernel did not finish within 2 s; it was stopped")
            );
            let rest = points[1].error.as_deref().unwrap();
            assert!(
                rest.starts_with("not run: an earlier kernel did not finish"),
                "{rest}"
            );
            assert!(!out.run.all_checks_ok() && context_abandoned());
            // The warm-up launch hangs: the limit and the setup, far from forever.
            assert!(took < Duration::from_secs(60), "{took:?}");
            eprintln!("the sweep with a kernel that never ends took {took:?}");
            // Nothing more runs in this process, and saying so does not wait for the kernel.
            let err = run_sweep(
                &hang_plan("finish_flag", "1"),
                &opts,
                &LiveProgress::default(),
            )
            .unwrap_err();
            assert!(matches!(err, LiveError::Abandoned), "{err}");
        });
        exit_now(i32::from(checks.is_err()));
    }
    let name = "a_kernel_that_never_ends_fails_its_point_at_the_limit_and_the_next_process_runs";
    let start = Instant::now();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            name,
            "--test-threads=1",
            "--nocapture",
        ])
        .env(HANG_CHILD, "1")
        .status()
        .unwrap();
    assert!(status.success(), "the test's own process failed: {status}");
    eprintln!("its process ended after {:?}", start.elapsed());
    // The GPU is free again: the same kernel with its flag set runs in this process.
    let opts = RunOptions {
        timeout_ns: Some(10_000_000_000),
        ..gpu_options()
    };
    let out = run_sweep(
        &hang_plan("finish_flag", "1"),
        &opts,
        &LiveProgress::default(),
    )
    .unwrap();
    for p in &out.run.points {
        assert_eq!((p.error.as_deref(), p.event_ns.len()), (None, 3), "{p:?}");
    }
}
