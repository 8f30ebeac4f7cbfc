//! Comparing runs on real profiles: the AlexNet batch sweep and the ResNet-50 FP32/AMP pair in
//! `sample_profiles/`, and merging the two ranks of a distributed job from `../shared/samples`
//! (skipped with a note when that folder is absent).
//!
//! GPU totals are PyTorch's own "Self CUDA time total" figures (`sample_profiles/README.md`,
//! exact ns from the traces); step figures were computed independently with Python from the
//! decimal `dur` text of the `ProfilerStep#N` `user_annotation` events.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use warpscope_core::analysis::compare::{
    Comparison, Presence, RunLabel, StepSource, compare_runs, detect_steps, is_nccl_kernel,
    kernel_match_key, merge_ranks,
};
use warpscope_core::analysis::{ActivityKind, gpu_activities, gpu_total_ns};
use warpscope_core::model::{EventKind, Profile, TrackKey};
use warpscope_core::{Progress, TimeRange, import_file};

fn sample_profile(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../sample_profiles")
        .join(name)
}

fn load(path: &Path) -> Profile {
    import_file(path, &Progress::new()).unwrap_or_else(|e| panic!("{e}"))
}

const ALEXNET: [(&str, i64); 4] = [
    ("alexnet_b8.pt.trace.json.gz", 4_870_889),
    ("alexnet_b16.pt.trace.json.gz", 7_206_323),
    ("alexnet_b32.pt.trace.json.gz", 11_593_018),
    ("alexnet_b128.pt.trace.json.gz", 39_868_961),
];

/// (first step, second step) durations in ns of the two CPU `ProfilerStep#N` ranges per file.
const ALEXNET_STEPS_NS: [(i64, i64); 4] = [
    (6_727_538, 6_530_295),
    (7_148_110, 6_831_282),
    (12_315_352, 10_743_650),
    (23_215_170, 23_671_233),
];

fn alexnet() -> (Vec<Profile>, Vec<RunLabel>) {
    let profiles: Vec<Profile> = ALEXNET
        .iter()
        .map(|(name, _)| load(&sample_profile(name)))
        .collect();
    let labels = profiles.iter().map(RunLabel::of_profile).collect();
    (profiles, labels)
}

fn compare_alexnet(baseline: usize) -> (Vec<Profile>, Comparison) {
    let (profiles, labels) = alexnet();
    let refs: Vec<&Profile> = profiles.iter().collect();
    let c = compare_runs(&refs, &labels, baseline).unwrap();
    (profiles, c)
}

#[test]
fn alexnet_sweep_totals_and_labels() {
    let (_, c) = compare_alexnet(0);
    assert_eq!(c.runs.len(), 4);
    assert_eq!(c.sweep.as_deref(), Some("batch"));
    for (run, ((name, total), batch)) in c.runs.iter().zip(ALEXNET.iter().zip([8, 16, 32, 128])) {
        assert_eq!(run.gpu_total_ns, *total, "{name}");
        assert_eq!(run.label, format!("batch={batch}"));
        assert_eq!(run.batch, Some(f64::from(batch)));
        assert_eq!(run.sweep_value, Some(f64::from(batch)));
        assert!(run.path.ends_with(name), "{}", run.path);
        assert_eq!(run.format, "chrome-json");
        assert_eq!(run.devices, 1);
        assert!(run.gpu_busy_pct > 0.0 && run.gpu_busy_pct <= 100.0);
        assert!(run.has_cpu_ops);
        assert_eq!(run.nccl_total_ns, 0);
        #[allow(clippy::cast_precision_loss)]
        let ratio = *total as f64 / 4_870_889.0;
        assert_eq!(run.gpu_total_ratio_vs_baseline, Some(ratio));
    }
    assert!(c.runs[0].is_baseline);
    assert!(c.runs[1..].iter().all(|r| !r.is_baseline));
}

#[test]
fn alexnet_kernels_equal_each_files_gpu_activities() {
    let (profiles, c) = compare_alexnet(0);
    for (run, p) in profiles.iter().enumerate() {
        let rows: Vec<_> = gpu_activities(p, TimeRange::ALL)
            .into_iter()
            .filter(|r| r.kind == ActivityKind::Kernel)
            .collect();
        // One aligned row per distinct name. Kineto writes most names demangled but some
        // (CUTLASS kernels in cuDNN) mangled: those rows show the demangled name, so look rows
        // up by match key.
        let in_run: Vec<_> = c
            .kernels
            .iter()
            .filter_map(|k| {
                let s = k.row.per_run[run].as_ref()?;
                Some((kernel_match_key(&k.row.name), s))
            })
            .collect();
        assert_eq!(in_run.len(), rows.len(), "run {run}");
        for row in &rows {
            let key = kernel_match_key(&row.name);
            let (_, s) = in_run
                .iter()
                .find(|(k, _)| *k == key)
                .unwrap_or_else(|| panic!("{} missing in run {run}", row.name));
            assert_eq!(s.calls, row.stats.calls, "{}", row.name);
            assert_eq!(s.total_ns, row.stats.total_ns, "{}", row.name);
            assert_eq!(s.avg_ns, row.stats.avg_ns, "{}", row.name);
            assert_eq!(s.min_ns, row.stats.min_ns, "{}", row.name);
            assert_eq!(s.max_ns, row.stats.max_ns, "{}", row.name);
        }
        let kernel_sum: i64 = rows.iter().map(|r| r.stats.total_ns).sum();
        assert_eq!(c.runs[run].kernel_total_ns, kernel_sum);
        assert_eq!(c.runs[run].gpu_total_ns, gpu_total_ns(p, TimeRange::ALL));
    }
    // Mangled names in the traces are shown demangled.
    let mangled: Vec<&str> = c
        .kernels
        .iter()
        .map(|k| k.row.name.as_str())
        .filter(|n| n.starts_with("_Z"))
        .collect();
    assert!(mangled.is_empty(), "{mangled:?}");
    assert!(
        c.kernels
            .iter()
            .any(|k| k.row.name.starts_with("void cutlass__5x_cudnn::Kernel<"))
    );
    // formats.md §9: kernel sums of the same traces.
    let kernel_sums: Vec<i64> = c.runs.iter().map(|r| r.kernel_total_ns).collect();
    assert_eq!(
        kernel_sums,
        vec![3_877_978, 5_004_726, 6_458_354, 15_465_240]
    );
}

#[test]
fn alexnet_alignment_and_ratios() {
    let (_, c) = compare_alexnet(1);
    assert_eq!(c.baseline, 1);
    // Each name once.
    let names: BTreeSet<&str> = c.kernels.iter().map(|k| k.row.name.as_str()).collect();
    assert_eq!(names.len(), c.kernels.len());
    let in_all: Vec<_> = c.kernels.iter().filter(|k| k.row.in_all_runs()).collect();
    assert!(!in_all.is_empty());
    for k in &in_all {
        let row = &k.row;
        assert_eq!(row.per_run.len(), 4);
        assert_eq!(row.presence, vec![Presence::Both; 4]);
        let base = row.per_run[1].as_ref().unwrap().total_ns;
        for (run, s) in row.per_run.iter().enumerate() {
            let s = s.as_ref().unwrap();
            let want = (base > 0).then(|| {
                #[allow(clippy::cast_precision_loss)]
                let r = s.total_ns as f64 / base as f64;
                r
            });
            assert_eq!(row.ratio_vs_baseline[run], want, "{}", row.name);
            assert_eq!(row.diff_vs_baseline_ns[run], s.total_ns - base);
        }
        assert_eq!(row.ratio_vs_baseline[1], Some(1.0));
    }
    // Rows missing from some run are marked against the baseline.
    for k in c.kernels.iter().filter(|k| !k.row.in_all_runs()) {
        for (run, s) in k.row.per_run.iter().enumerate() {
            let want = match (s.is_some(), k.row.per_run[1].is_some()) {
                (true, true) => Presence::Both,
                (true, false) => Presence::New,
                (false, true) => Presence::Vanished,
                (false, false) => Presence::Neither,
            };
            assert_eq!(k.row.presence[run], want);
        }
    }
    // Sorted by time in the baseline.
    let base_times: Vec<i64> = c
        .kernels
        .iter()
        .map(|k| k.row.per_run[1].as_ref().map_or(0, |s| s.total_ns))
        .collect();
    assert!(base_times.windows(2).all(|w| w[0] >= w[1]));
    // Copies by kind: HtoD 4 and DtoH 2 in every run (formats.md §9), plus memsets.
    let htod = c.copies.iter().find(|r| r.name == "HtoD").unwrap();
    assert!(htod.per_run.iter().all(|s| s.as_ref().unwrap().calls == 4));
    let dtoh = c.copies.iter().find(|r| r.name == "DtoH").unwrap();
    assert!(dtoh.per_run.iter().all(|s| s.as_ref().unwrap().calls == 2));
    let memset = c.copies.iter().find(|r| r.name == "Memset").unwrap();
    let memsets: Vec<u64> = memset
        .per_run
        .iter()
        .map(|s| s.as_ref().unwrap().calls)
        .collect();
    assert_eq!(memsets, vec![8, 12, 14, 28]);
    // CPU operators are there, aligned too.
    let mm = c.ops.iter().find(|r| r.name == "aten::addmm").unwrap();
    assert!(mm.in_all_runs());
}

#[test]
fn alexnet_steps_and_time_per_sample() {
    let (profiles, c) = compare_alexnet(0);
    for (i, p) in profiles.iter().enumerate() {
        let steps = detect_steps(p).unwrap();
        assert_eq!(steps.source, StepSource::ProfilerStep);
        assert_eq!(steps.count, 2, "run {i}");
        let (a, b) = ALEXNET_STEPS_NS[i];
        assert_eq!(steps.total_ns, a + b);
        assert_eq!(steps.mean_ns, (a + b) / 2);
        assert_eq!((steps.min_ns, steps.max_ns), (a.min(b), a.max(b)));
        let run = &c.runs[i];
        assert_eq!(run.steps.as_ref(), Some(&steps));
        assert_eq!(run.time_per_step_ns, Some((a + b) / 2));
        assert_eq!(run.gpu_time_per_step_ns, Some(run.gpu_total_ns / 2));
        #[allow(clippy::cast_precision_loss)]
        let per_sample = ((a + b) / 2) as f64 / run.batch.unwrap();
        assert_eq!(run.time_per_sample_ns, Some(per_sample));
    }
    // Bigger batches cost less per sample on this GPU.
    let per_sample: Vec<f64> = c
        .runs
        .iter()
        .map(|r| r.time_per_sample_ns.unwrap())
        .collect();
    assert!(per_sample.windows(2).all(|w| w[0] > w[1]), "{per_sample:?}");
}

#[test]
fn resnet50_amp_replaces_kernels() {
    let fp32 = load(&sample_profile("resnet50_b64_fp32.pt.trace.json.gz"));
    let amp = load(&sample_profile("resnet50_b64_amp.pt.trace.json.gz"));
    let labels = [RunLabel::of_profile(&fp32), RunLabel::of_profile(&amp)];
    assert_eq!(labels[0].text, "batch=64, precision=fp32");
    assert_eq!(labels[1].text, "batch=64, precision=amp");
    let c = compare_runs(&[&fp32, &amp], &labels, 0).unwrap();
    assert_eq!(c.runs[0].gpu_total_ns, 82_994_730);
    assert_eq!(c.runs[1].gpu_total_ns, 57_903_050);
    // Same batch in both: nothing to sweep.
    assert_eq!(c.sweep, None);
    let row = |name: &str| {
        c.kernels
            .iter()
            .find(|k| k.row.name == name)
            .unwrap_or_else(|| panic!("{name} not aligned"))
    };
    // formats.md §9 top kernels: the FP32 batch-norm backward is gone under AMP, the half one is
    // new.
    let bn_fp32 = row(
        "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float, float, \
         float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, \
         cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, \
         float)",
    );
    assert_eq!(
        bn_fp32.row.presence,
        vec![Presence::Both, Presence::Vanished]
    );
    assert_eq!(bn_fp32.row.per_run[0].as_ref().unwrap().total_ns, 7_980_813);
    assert_eq!(bn_fp32.row.per_run[0].as_ref().unwrap().calls, 22);
    assert_eq!(bn_fp32.row.diff_vs_baseline_ns[1], -7_980_813);
    let bn_half = row(
        "void cudnn::bn_bw_1C11_kernel_new<__half, float, float2, 128, true, 1>(float, float, \
         float, float, cudnnTensorStruct, __half const*, cudnnTensorStruct, __half const*, \
         cudnnTensorStruct, __half*, float const*, float*, float*, float const*, float const*, \
         float)",
    );
    assert_eq!(bn_half.row.presence, vec![Presence::Neither, Presence::New]);
    assert_eq!(bn_half.row.per_run[1].as_ref().unwrap().total_ns, 6_975_908);
    assert_eq!(bn_half.row.ratio_vs_baseline[1], None);
    assert_eq!(bn_half.row.diff_vs_baseline_ns[1], 6_975_908);
    let vanished = c
        .kernels
        .iter()
        .filter(|k| k.row.presence[1] == Presence::Vanished)
        .count();
    let new = c
        .kernels
        .iter()
        .filter(|k| k.row.presence[1] == Presence::New)
        .count();
    let both = c
        .kernels
        .iter()
        .filter(|k| k.row.presence[1] == Presence::Both)
        .count();
    // formats.md §9: 75 distinct kernel names in FP32, 88 in AMP.
    assert_eq!(both + vanished, 75);
    assert_eq!(both + new, 88);
    assert!(vanished > 0 && new > 0);
    // AMP adds device-to-device copies (formats.md §9: DtoD 165 only in AMP).
    let dtod = c.copies.iter().find(|r| r.name == "DtoD").unwrap();
    assert_eq!(dtod.presence, vec![Presence::Neither, Presence::New]);
    assert_eq!(dtod.per_run[1].as_ref().unwrap().calls, 165);
    assert_eq!(dtod.per_run[1].as_ref().unwrap().bytes, 102_228_144);
}

#[test]
fn json_contract_on_real_runs() {
    let (_, c) = compare_alexnet(0);
    let v = serde_json::to_value(&c).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 4);
    assert_eq!(v["runs"][3]["label"], "batch=128");
    assert_eq!(v["runs"][3]["gpu_total_ns"], 39_868_961);
    assert_eq!(v["runs"][3]["params"][0]["key"], "batch");
    assert_eq!(v["runs"][3]["params"][0]["number"], 128.0);
    assert_eq!(v["runs"][3]["steps"]["count"], 2);
    let k = &v["kernels"][0];
    assert_eq!(k["per_run"].as_array().unwrap().len(), 4);
    assert!(k["per_run"][0]["calls"].is_u64());
    assert!(k["per_run"][0]["total_ns"].is_i64());
    assert!(k["per_run"][0]["avg_ns"].is_i64());
    assert_eq!(k["ratio_vs_baseline"].as_array().unwrap().len(), 4);
}

/// `../shared/samples/chrome-kineto/<name>`, or `None` (with a note) when absent. Never copied
/// into this repository: the files have their own licences.
fn shared_sample(name: &str) -> Option<PathBuf> {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/samples/chrome-kineto/"
    ))
    .join(name);
    if path.is_file() {
        Some(path)
    } else {
        eprintln!("skipping: {} not found", path.display());
        None
    }
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn two_ranks_merge_into_one_two_gpu_profile() {
    // Ranks 0 and 1 of a 128-rank NCCL job (HTA test data): GPU pid 0 and 1 on the files.
    let (Some(r0), Some(r1)) = (
        shared_sample("hta_world128_sampled_rank-0.json.gz"),
        shared_sample("hta_world128_sampled_rank-1.json.gz"),
    ) else {
        return;
    };
    let (p0, p1) = (load(&r0), load(&r1));
    let origins = (p0.origin.unix_ns.unwrap(), p1.origin.unix_ns.unwrap());
    let totals = (
        gpu_total_ns(&p0, TimeRange::ALL),
        gpu_total_ns(&p1, TimeRange::ALL),
    );
    let events = p0.event_count() + p1.event_count();
    let flows = p0.flows.len() + p1.flows.len();
    let label = RunLabel::of_profile(&p1);
    assert_eq!(label.text, "gpus=128, rank=1");
    // Given in the wrong order: merged by rank.
    let m = merge_ranks(vec![p1, p0]).unwrap();
    assert_eq!(m.event_count(), events);
    assert_eq!(m.flows.len(), flows);
    assert_eq!(m.origin.unix_ns, Some(origins.0.min(origins.1)));
    assert_eq!(gpu_total_ns(&m, TimeRange::ALL), totals.0 + totals.1);
    let mut nccl_by_device: Vec<(u32, String)> = Vec::new();
    let mut devices = BTreeSet::new();
    for t in &m.tracks {
        let TrackKey::Gpu { device, .. } = t.key else {
            continue;
        };
        devices.insert(device);
        for i in 0..t.events.len() {
            let name = m.str(t.events.name[i]);
            if t.events.kind[i] == EventKind::Kernel && is_nccl_kernel(name) {
                nccl_by_device.push((device, name.to_string()));
            }
        }
    }
    assert_eq!(devices, BTreeSet::from([0, 1]));
    let nccl = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)";
    for device in [0, 1] {
        let on_device: Vec<_> = nccl_by_device
            .iter()
            .filter(|(d, _)| *d == device)
            .collect();
        assert_eq!(on_device.len(), 10, "GPU {device}");
        assert!(on_device.iter().all(|(_, n)| n == nccl));
    }
    // On one clock: both ranks ran step 551 at about the same time (within a second).
    let step_starts: Vec<i64> = m
        .tracks
        .iter()
        .filter(|t| !t.key.is_gpu())
        .flat_map(|t| {
            (0..t.events.len())
                .filter(|&i| m.str(t.events.name[i]) == "ProfilerStep#551")
                .map(|i| t.events.start_ns[i])
        })
        .collect();
    assert_eq!(step_starts.len(), 2);
    assert!((step_starts[0] - step_starts[1]).abs() < 1_000_000_000);
    // CPU processes stay apart and are named after their rank.
    let names: Vec<&str> = m.process_names.iter().map(|(_, n)| n.as_str()).collect();
    assert!(names.iter().any(|n| n.starts_with("rank 0")), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("rank 1")), "{names:?}");
    // The merged profile is labelled as the job, and compares like any other: NCCL time on
    // both GPUs.
    let label = RunLabel::of_profile(&m);
    assert_eq!(label.text, "gpus=128");
    let c = compare_runs(&[&m], &[label], 0).unwrap();
    assert_eq!(c.runs[0].devices, 2);
    let row = c.kernels.iter().find(|k| k.row.name == nccl).unwrap();
    assert!(row.nccl);
    assert_eq!(row.row.per_run[0].as_ref().unwrap().calls, 20);
    assert!(c.runs[0].nccl_total_ns > 0);
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn ddp_rank0_sample_has_nccl_kernels() {
    let Some(path) = shared_sample("hta_a100_ddp2_nccl_rank0.json.gz") else {
        return;
    };
    let p = load(&path);
    let rows = gpu_activities(&p, TimeRange::ALL);
    let nccl: BTreeSet<&str> = rows
        .iter()
        .filter(|r| r.kind == ActivityKind::Kernel && is_nccl_kernel(&r.name))
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(
        nccl,
        BTreeSet::from([
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
            "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
        ])
    );
    let label = RunLabel::of_profile(&p);
    assert_eq!(label.text, "gpus=2, rank=0");
    // ProfilerStep#4..#6 (Python, from the decimal `dur` text).
    let steps = detect_steps(&p).unwrap();
    assert_eq!(steps.count, 3);
    assert_eq!(steps.total_ns, 222_442_191 + 219_726_905 + 224_936_243);
    assert_eq!(steps.mean_ns, 222_368_446);
    // A single rank merges to itself.
    let events = p.event_count();
    let m = merge_ranks(vec![p]).unwrap();
    assert_eq!(m.event_count(), events);
    assert_eq!(RunLabel::of_profile(&m).text, "gpus=2");
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn mixed_formats_an_nvprof_summary_against_an_nvprof_trace() {
    let root = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/samples/nvprof-csv/"
    ));
    let (trace, summary) = (
        root.join("cfd_titanxp_print-gpu-trace.csv"),
        root.join("cfd_titanxp_print-gpu-summary.csv"),
    );
    if !trace.is_file() || !summary.is_file() {
        eprintln!("skipping: {} not found", root.display());
        return;
    }
    let (trace, summary) = (load(&trace), load(&summary));
    let labels = [RunLabel::of_profile(&trace), RunLabel::of_profile(&summary)];
    assert_eq!(labels[1].text, "cfd_titanxp_print-gpu-summary");
    let c = compare_runs(&[&trace, &summary], &labels, 0).unwrap();
    // formats.md §9: the summary's own figures, not recomputed (a different run than the trace).
    let flux = c
        .kernels
        .iter()
        .find(|k| k.row.name.starts_with("cuda_compute_flux("))
        .unwrap();
    assert!(flux.row.in_all_runs());
    assert_eq!(flux.row.per_run[0].as_ref().unwrap().total_ns, 297_488_829);
    assert_eq!(flux.row.per_run[1].as_ref().unwrap().total_ns, 268_352_834);
    assert_eq!(flux.row.per_run[1].as_ref().unwrap().calls, 6000);
    // Copies of the summary come from its recorded rows (sizes unknown there).
    let dtod = c.copies.iter().find(|r| r.name == "DtoD").unwrap();
    assert!(dtod.in_all_runs(), "{:?}", c.copies);
    assert_eq!(dtod.per_run[0].as_ref().unwrap().calls, 2000);
    assert_eq!(dtod.per_run[1].as_ref().unwrap().bytes, 0);
    assert_eq!(c.runs[1].steps, None);
    assert_eq!(c.runs[1].span_ns, 0);
    assert!(!c.runs[1].has_cpu_ops);
}
