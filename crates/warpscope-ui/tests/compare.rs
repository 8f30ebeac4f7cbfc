//! The comparison view driven through egui_kittest over the AlexNet batch sweep and the
//! ResNet-50 FP32/AMP pair in `sample_profiles/`: the totals and columns a user reads, the
//! charts' points, linked zoom of the stacked timelines, selection across runs, and snapshots.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly

mod common;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use warpscope_core::Profile;
use warpscope_core::analysis::compare::RunLabel;
use warpscope_ui::compare::{
    Alignment, ComparePage, CompareState, compare_ui, per_step_series, top_kernels,
};
use warpscope_ui::format_duration;

fn load(name: &str) -> Arc<Profile> {
    let mut profile = common::load(name);
    // Snapshots show the path: keep it the same in every checkout.
    profile.source.path = PathBuf::from("sample_profiles").join(name);
    Arc::new(profile)
}

fn alexnet_sweep() -> Vec<Arc<Profile>> {
    static P: OnceLock<Vec<Arc<Profile>>> = OnceLock::new();
    P.get_or_init(|| {
        ["b8", "b16", "b32", "b128"]
            .iter()
            .map(|b| load(&format!("alexnet_{b}.pt.trace.json.gz")))
            .collect()
    })
    .clone()
}

fn state_of(profiles: Vec<Arc<Profile>>) -> CompareState {
    let labels: Vec<RunLabel> = profiles.iter().map(|p| RunLabel::of_profile(p)).collect();
    CompareState::new(profiles, &labels, 0).unwrap()
}

fn harness(state: CompareState) -> Harness<'static, CompareState> {
    common::quiet_renderer();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1600.0, 1000.0))
        .with_max_steps(64)
        .build_ui_state(
            |ui, state: &mut CompareState| {
                egui::CentralPanel::default().show(ui, |ui| {
                    compare_ui(
                        ui,
                        state,
                        warpscope_core::analysis::flops::PeakOverride::default(),
                    );
                });
            },
            state,
        );
    h.run();
    h
}

#[test]
fn four_runs_give_four_columns_of_totals_and_of_kernels() {
    let mut h = harness(state_of(alexnet_sweep()));
    // PyTorch's own GPU totals, one per run, with the labels parsed from the file names.
    for (r, (label, ns)) in [
        ("batch=8", 4_870_889),
        ("batch=16", 7_206_323),
        ("batch=32", 11_593_018),
        ("batch=128", 39_868_961),
    ]
    .iter()
    .enumerate()
    {
        assert_eq!(h.state().comparison.runs[r].label, *label);
        h.get_by_label(&format!("GPU time run {r}: {}", format_duration(*ns)));
    }
    // Runs are numbered, as the status column (`only in #1, #3`) counts them.
    h.get_by_label("#1 batch=8 (baseline)");
    h.get_by_label("#4 batch=128");
    // Kernel table: one Total and one Calls column per run, a ratio per non-baseline run.
    let table = h.state().table(ComparePage::Kernels).unwrap();
    let titles: Vec<String> = table.columns.iter().map(|c| c.title.to_string()).collect();
    for label in [
        "#1 batch=8 (base)",
        "#2 batch=16",
        "#3 batch=32",
        "#4 batch=128",
    ] {
        assert!(titles.contains(&format!("Total {label}")), "{titles:?}");
        assert!(titles.contains(&format!("Calls {label}")), "{titles:?}");
    }
    assert_eq!(titles.iter().filter(|t| t.starts_with("× ")).count(), 3);
    // The optimizer kernel runs 12 times in every run: one row, four totals.
    let row = h
        .state()
        .visible_rows()
        .into_iter()
        .find(|r| r.name.contains("multi_tensor_apply_kernel"))
        .unwrap()
        .clone();
    let totals: Vec<String> = row
        .cells
        .iter()
        .zip(&titles)
        .filter(|(_, t)| t.starts_with("Total "))
        .map(|(c, _)| c.text())
        .collect();
    assert_eq!(totals.len(), 4);
    assert!(totals.iter().all(|t| t != "–"), "{totals:?}");

    // Showing the Avg columns adds one per run.
    h.get_by_label("Avg").click();
    h.run();
    let n = h.state().table(ComparePage::Kernels).unwrap().columns.len();
    assert_eq!(n, titles.len() + 4);
}

#[test]
fn the_filter_and_a_header_click_order_the_kernels() {
    let mut h = harness(state_of(alexnet_sweep()));
    h.get_by_role(egui::Role::TextInput).click();
    h.run();
    h.get_by_role(egui::Role::TextInput).type_text("GEMM");
    h.run();
    let rows = h.state().visible_rows();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r.name.to_lowercase().contains("gemm")));
    h.get_by_label("Total #2 batch=16").click();
    h.run();
    let totals: Vec<Option<i64>> = h
        .state()
        .visible_rows()
        .iter()
        .map(|r| {
            let col = h
                .state()
                .table(ComparePage::Kernels)
                .unwrap()
                .columns
                .iter()
                .position(|c| c.title == "Total #2 batch=16")
                .unwrap();
            match &r.cells[col] {
                warpscope_ui::tables::Cell::MaybeDurationNs(v) => *v,
                other => panic!("{other:?}"),
            }
        })
        .collect();
    assert!(totals.windows(2).all(|w| w[0] >= w[1]), "{totals:?}");
}

#[test]
fn amp_shows_replaced_kernels_as_new_and_gone() {
    let h = harness(state_of(vec![
        load("resnet50_b64_fp32.pt.trace.json.gz"),
        load("resnet50_b64_amp.pt.trace.json.gz"),
    ]));
    let c = &h.state().comparison;
    assert_eq!(c.runs[0].gpu_total_ns, 82_994_730);
    assert_eq!(c.runs[1].gpu_total_ns, 57_903_050);
    let rows = h.state().visible_rows();
    let status = |needle: &str| {
        rows.iter()
            .filter(|r| r.name.contains(needle))
            .map(|r| r.cells[1].text())
            .collect::<Vec<_>>()
    };
    assert!(status("bn_bw_1C11_kernel_new<float").contains(&"gone".to_string()));
    assert!(status("__half").iter().any(|s| s == "new"));
}

#[test]
fn the_scaling_chart_has_one_point_per_run() {
    let mut state = state_of(alexnet_sweep());
    state.page = ComparePage::Charts;
    let mut h = harness(state);
    let c = &h.state().comparison;
    assert_eq!(c.sweep.as_deref(), Some("batch"));
    let xs: Vec<f64> = c.runs.iter().filter_map(|r| r.sweep_value).collect();
    assert_eq!(xs, vec![8.0, 16.0, 32.0, 128.0]);
    assert!(c.runs.iter().all(|r| r.time_per_step_ns.is_some()));
    assert_eq!(top_kernels(c, 8).len(), 8);
    h.get_by_label_contains("Time per sample against batch");
    h.get_by_label_contains("Top kernels: time per run");
    // Like with like: GPU time per step, never above the step's wall time on one GPU.
    let [step, gpu] = per_step_series(c);
    assert_eq!(step.len(), 4);
    assert_eq!(gpu.len(), 4);
    for ((x, s), (gx, g)) in step.iter().zip(&gpu) {
        assert_eq!(x, gx);
        assert!(g <= s, "batch {x}: GPU {g} ms per step, step {s} ms");
    }
    // The legends lie under their plots, not over the largest points.
    let below = |title: &str, entry: &str| {
        let t = h.get_by_label_contains(title).rect();
        let lowest = h
            .query_all_by_label_contains(entry)
            .map(|n| n.rect().top())
            .fold(f32::MIN, f32::max);
        assert!(
            lowest > t.bottom() + 150.0,
            "{entry} at {lowest}, over the plot under {t:?}"
        );
    };
    below(
        "Time per step and GPU time per step against batch",
        "GPU time per step",
    );
    below("Top kernels' time against batch", "K1 ");
    below("Top kernels: time per run", "#4 batch=128");
    h.snapshot("compare_alexnet_charts");
}

#[test]
fn zooming_one_timeline_moves_all_of_them() {
    let mut state = state_of(alexnet_sweep());
    state.page = ComparePage::Timelines;
    let mut h = harness(state);
    let anchors = h.state().anchors_ns();
    let before: Vec<_> = h
        .state()
        .timelines
        .iter()
        .map(|t| t.visible_range())
        .collect();
    // Zoom in with W over the second run's timeline.
    let lanes = h.get_all_by_label("timeline").nth(1).unwrap().rect();
    h.hover_at(lanes.center());
    h.run();
    for _ in 0..3 {
        h.key_press(Key::W);
    }
    h.run();
    let after: Vec<_> = h
        .state()
        .timelines
        .iter()
        .map(|t| t.visible_range())
        .collect();
    assert!(after[1].duration_ns() < before[1].duration_ns() / 2);
    // Every run shows the same window relative to its first GPU activity.
    for i in 0..after.len() {
        assert_eq!(after[i].duration_ns(), after[1].duration_ns());
        assert_eq!(
            after[i].start_ns - anchors[i],
            after[1].start_ns - anchors[1]
        );
    }
    // Aligned at ProfilerStep#3 instead, the runs line up at that step.
    h.state_mut().alignment = Alignment::Step(3);
    h.run();
    let anchors = h.state().anchors_ns();
    assert!(
        anchors
            .iter()
            .zip(h.state().anchors_ns())
            .all(|(a, b)| *a == b)
    );
    let views: Vec<_> = h
        .state()
        .timelines
        .iter()
        .map(|t| t.visible_range())
        .collect();
    for i in 0..views.len() {
        assert_eq!(
            views[i].start_ns - anchors[i],
            views[0].start_ns - anchors[0]
        );
    }
    h.snapshot("compare_alexnet_timelines");
}

#[test]
fn selecting_a_kernel_highlights_it_in_every_run() {
    let mut h = harness(state_of(alexnet_sweep()));
    let name = h
        .state()
        .visible_rows()
        .into_iter()
        .find(|r| r.name.contains("multi_tensor_apply_kernel"))
        .unwrap()
        .name
        .clone();
    h.get_by_label(&name).click();
    h.run();
    assert_eq!(h.state().selected.as_deref(), Some(name.as_str()));
    for (sel, p) in h.state().selections.iter().zip(&h.state().profiles) {
        let id = sel.name.expect("highlighted in every run");
        assert_eq!(p.str(id), name);
    }
}

/// With more than two runs the status says which runs have a kernel, not one ambiguous "gone".
#[test]
fn the_status_names_the_runs_a_kernel_is_missing_from() {
    let h = harness(state_of(alexnet_sweep()));
    let c = &h.state().comparison;
    let mut partial = 0;
    for k in &c.kernels {
        let row = h
            .state()
            .visible_rows()
            .into_iter()
            .find(|r| r.name == k.row.name)
            .map(|r| r.cells[1].text());
        let Some(status) = row else { continue };
        let missing: Vec<String> = k
            .row
            .per_run
            .iter()
            .enumerate()
            .filter(|(_, r)| r.is_none())
            .map(|(i, _)| format!("#{}", i + 1))
            .collect();
        if missing.is_empty() {
            assert!(!status.contains("in #"), "{status}");
            continue;
        }
        partial += 1;
        assert!(
            !status.contains("gone") && !status.contains("new"),
            "{status}"
        );
        if let Some(list) = status.strip_prefix("not in ") {
            assert_eq!(
                list.split(' ').next().map(|_| list.to_string()),
                Some(missing.join(", "))
            );
        } else {
            assert!(status.starts_with("only in "), "{status}");
        }
    }
    assert!(partial > 0, "the sweep has kernels missing from some runs");
}

/// FP32 against bf16 autocast: the totals give each run's peak memory and the charts a bar per
/// run, so a comparison shows what autocast saves.
#[test]
fn fp32_against_bf16_shows_the_memory_autocast_saves() {
    let profiles = vec![
        load("resnet50_b32_fp32_mem_flops.pt.trace.json.gz"),
        load("resnet50_b32_bf16_mem_flops.pt.trace.json.gz"),
    ];
    let mut state = state_of(profiles);
    let runs = &state.comparison.runs;
    assert_eq!(runs[0].peak_allocated_bytes, Some(3_254_683_136));
    assert_eq!(runs[1].peak_allocated_bytes, Some(1_971_978_752));
    assert_eq!(runs[1].peak_reserved_bytes, Some(2_227_175_424));
    state.page = ComparePage::Charts;
    let mut h = harness(state);
    h.get_by_label("peak allocated run 0: 3.03 GiB");
    h.get_by_label("peak reserved run 1: 2.07 GiB");
    h.get_by_label_contains("Peak memory per run");
    h.get_by_label("peak allocated");
    h.snapshot("compare_resnet50_memory_charts");
}

/// FP32 against bf16 autocast: the same model FLOPs (each convolution counted once, docs/flops.md),
/// each run's MFU against the peak of its own precision and its model TFLOP/s in the totals, and
/// an MFU bar per run in the charts.
#[test]
fn fp32_against_bf16_shows_mfu_and_tflops_per_run() {
    let profiles = vec![
        load("resnet50_b32_fp32_mem_flops.pt.trace.json.gz"),
        load("resnet50_b32_bf16_mem_flops.pt.trace.json.gz"),
    ];
    let mut state = state_of(profiles);
    let runs = &state.comparison.runs;
    let fp32 = runs[0].flops.as_ref().unwrap();
    let bf16 = runs[1].flops.as_ref().unwrap();
    // The model FLOPs of scripts/flops_reference.py on the FP32 file.
    assert_eq!(fp32.model_flops, 1_555_140_968_448);
    assert_eq!(bf16.model_flops, fp32.model_flops);
    state.page = ComparePage::Charts;
    let h = harness(state);
    // FP32: 1.555e12 FLOPs in the 82.984 ms window at the TF32 peak of 494.5 TFLOP/s.
    h.get_by_label("MFU run 0: 3.8%");
    h.get_by_label("TFLOP/s run 0: 18.74");
    h.get_by_label_contains("MFU per run");
    h.get_by_label_contains("#2 batch=32, precision=bf16: MFU ");
}

/// The AlexNet batch sweep: MFU against the batch, TFLOP/s on hover and in the legend.
#[test]
fn a_batch_sweep_charts_mfu_against_the_batch() {
    let mut state = state_of(alexnet_sweep());
    state.page = ComparePage::Charts;
    let h = harness(state);
    h.get_by_label_contains("MFU against batch");
    let runs = &h.state().comparison.runs;
    let mfu: Vec<f64> = runs
        .iter()
        .map(|r| r.flops.as_ref().and_then(|f| f.mfu).unwrap())
        .collect();
    // More work per launch: MFU grows with the batch.
    assert!(mfu.windows(2).all(|w| w[0] < w[1]), "{mfu:?}");
    for (r, run) in runs.iter().enumerate() {
        h.get_by_label_contains(&format!("#{} {}: MFU ", r + 1, run.label));
    }
}

/// A profile of `../shared/samples` (the public samples, not in the repository), or `None`
/// where the checkout has none.
fn shared(rel: &str) -> Option<Arc<Profile>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/samples")
        .join(rel);
    if !path.exists() {
        eprintln!("skipped: {} is not here", path.display());
        return None;
    }
    let profile = warpscope_core::import_file(&path, &warpscope_core::Progress::new()).unwrap();
    Some(Arc::new(profile))
}

/// An MI300X and an H100 run of BERT (`tests/compare_cli.rs` has the figures worked out from
/// the traces): no GEMM name is shared, so the Kernels page cannot line them up, but the
/// "Kernels by operator" page puts hipBLASLt's and cuBLAS's GEMMs on one `aten::addmm` row.
#[test]
fn amd_and_nvidia_kernels_meet_under_their_operator() {
    let (Some(amd), Some(nvidia)) = (
        shared("rocm/kineto_mi300x_bert_small.json.gz"),
        shared("chrome-kineto/tracelens_h100_bert-small_with_stack.json.gz"),
    ) else {
        return;
    };
    let mut h = harness(state_of(vec![amd, nvidia]));
    h.get_by_label("Kernels by operator").click();
    h.run();
    assert_eq!(h.state().page, ComparePage::ByOperator);
    let table = h.state().table(ComparePage::ByOperator).unwrap().clone();
    let titles: Vec<String> = table.columns.iter().map(|c| c.title.to_string()).collect();
    let col = |prefix: &str, run: usize| {
        titles
            .iter()
            .position(|t| t.starts_with(&format!("{prefix} #{run}")))
            .unwrap_or_else(|| panic!("{prefix} #{run} in {titles:?}"))
    };
    let rows = h.state().visible_rows();
    assert_eq!(rows.len(), 9);
    let addmm = rows.iter().find(|r| r.name == "aten::addmm").unwrap();
    assert_eq!(addmm.cells[col("Time", 1)].text(), format_duration(174_130));
    assert_eq!(addmm.cells[col("Time", 2)].text(), format_duration(197_598));
    assert_eq!(addmm.cells[col("Kernels", 1)].text(), "26");
    assert_eq!(addmm.cells[col("Kernels", 2)].text(), "26");
    assert!(
        addmm.cells[col("Longest kernels", 1)]
            .text()
            .contains("Cijk_"),
        "{:?}",
        addmm.cells[col("Longest kernels", 1)].text()
    );
    // Selecting the operator highlights it in both runs' timelines.
    h.state_mut().select(Some("aten::addmm".to_string()));
    h.run();
    assert!(h.state().selections.iter().all(|s| s.name.is_some()));
    // Each figure of every run side by side: the two times first, then the ratio.
    assert!(titles[2].starts_with("Time #1") && titles[3].starts_with("Time #2"));
    assert!(titles[4].starts_with("× #2"), "{titles:?}");
}
