//! The real app driven headless with egui_kittest: opening files, the tables and the timeline
//! working together, errors shown in the window.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use warpscope::app::{BottomView, WarpscopeApp};
use warpscope_core::analysis;
use warpscope_core::model::Profile;
use warpscope_core::{ImportError, Progress, TimeRange};
use warpscope_ui::format_duration;
use warpscope_ui::tables::Cell;

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample_profiles")
        .join(name)
}

#[derive(Debug)]
struct Dropped(PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

/// Gives the renderer a runtime directory as `main` does (else Mesa's Vulkan driver prints
/// `error: XDG_RUNTIME_DIR is invalid or not set` for every harness).
#[allow(unsafe_code)]
fn quiet_renderer() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: every harness of this binary is made through `app_harness`, which waits here
    // first: no renderer (nor anything else of ours that reads the environment) runs before
    // the variable is set.
    #[cfg(target_os = "linux")]
    ONCE.call_once(|| unsafe { warpscope::ensure_runtime_dir() });
}

fn app_harness(files: Vec<PathBuf>) -> Harness<'static, WarpscopeApp> {
    quiet_renderer();
    Harness::builder()
        .with_size([1400.0, 900.0])
        .build_eframe(move |cc| WarpscopeApp::new(cc, files, None))
}

/// Steps the app until nothing is loading any more.
fn settle(h: &mut Harness<'_, WarpscopeApp>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    h.step();
    while h.state().loading() {
        assert!(Instant::now() < deadline, "loading did not finish");
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    for _ in 0..3 {
        h.step();
    }
}

#[test]
fn a_dropped_profile_opens_in_a_tab_with_its_top_kernel_in_the_table() {
    let mut h = app_harness(Vec::new());
    h.step();
    assert!(
        h.query_by_label_contains("Drop GPU profiles here")
            .is_some()
    );
    h.input_mut()
        .dropped_files
        .push(Arc::new(Dropped(sample("alexnet_b8.pt.trace.json.gz"))));
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 1);
    assert_eq!(h.state().tabs[0].title(), "alexnet_b8.pt.trace.json.gz");
    // The top GPU activity of this run is the optimizer's multi-tensor add kernel (1.0611 ms).
    assert!(
        h.query_all_by_label_contains("multi_tensor_apply_kernel")
            .next()
            .is_some(),
        "top kernel not shown"
    );
    assert!(h.query_by_label_contains("1.0611ms").is_some());
}

#[test]
fn several_files_open_as_tabs_and_a_broken_one_shows_its_error_without_closing_the_others() {
    let dir = std::env::temp_dir().join(format!("warpscope-gui-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{ this is not json").unwrap();
    let mut h = app_harness(vec![
        sample("alexnet_b8.pt.trace.json.gz"),
        sample("alexnet_b16.pt.trace.json.gz"),
    ]);
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 2);
    h.input_mut().dropped_files.push(Arc::new(Dropped(broken)));
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 2, "the open tabs stay");
    assert_eq!(h.state().errors.len(), 1);
    let error = &h.state().errors[0];
    assert!(error.contains("broken.json"), "{error}");
    assert!(error.contains("not valid trace JSON"), "{error}");
    assert!(h.query_by_label_contains("not valid trace JSON").is_some());
    h.get_by_label("Dismiss").click();
    h.step();
    assert!(h.state().errors.is_empty());
}

#[test]
fn a_profile_with_import_warnings_lists_them_with_their_counts() {
    let dir = std::env::temp_dir().join(format!("warpscope-gui-warn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("negative.json");
    std::fs::write(
        &file,
        r#"{"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 5,
 "args": {"device": 0, "stream": 7}},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 20, "dur": -3,
 "args": {"device": 0, "stream": 7}},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 30, "dur": -4,
 "args": {"device": 0, "stream": 7}}
]}"#,
    )
    .unwrap();
    let mut h = app_harness(vec![file]);
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 1);
    // Open from the start, with each message and its count.
    assert!(h.query_by_label_contains("1 import warning").is_some());
    assert!(
        h.query_by_label("×2").is_some(),
        "the count of negative durations"
    );
    assert!(
        h.query_by_label_contains("negative `dur`").is_some(),
        "the warning's message"
    );
    // The header folds the list away.
    h.get_by_label_contains("import warning").click();
    h.step();
    h.step();
    assert!(h.query_by_label_contains("negative `dur`").is_none());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn recent_files_remember_what_was_opened() {
    let mut h = app_harness(vec![sample("alexnet_b32.pt.trace.json.gz")]);
    settle(&mut h);
    let recent = &h.state().recent;
    assert_eq!(recent.len(), 1);
    assert!(recent[0].ends_with("sample_profiles/alexnet_b32.pt.trace.json.gz"));
}

/// Opens `name` from the command line and waits for it.
fn opened(name: &str) -> Harness<'static, WarpscopeApp> {
    let mut h = app_harness(vec![sample(name)]);
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 1);
    h
}

#[test]
fn clicking_a_table_row_selects_that_kernel_on_the_timeline_and_steps_through_it() {
    let mut h = opened("alexnet_b8.pt.trace.json.gz");
    let top = h.state().tabs[0].tables.visible_rows()[0].name.clone();
    let id = h.state().tabs[0].profile.strings.find(&top).unwrap();
    h.get_all_by_label(&top).next().unwrap().click();
    h.run();
    assert_eq!(h.state().tabs[0].selection.name, Some(id));

    // Stepping selects each occurrence in turn and brings it into view.
    let mut starts = Vec::new();
    for _ in 0..3 {
        h.get_by_label("next occurrence").click();
        h.run();
        let tab = &h.state().tabs[0];
        let ev = tab.selection.event.expect("an occurrence is selected");
        let t = &tab.profile.tracks[ev.track as usize];
        assert_eq!(t.events.name[ev.index as usize], id);
        let start = t.events.start_ns[ev.index as usize];
        let view = tab.timeline.visible_range();
        assert!(view.start_ns <= start && start <= view.end_ns);
        starts.push(start);
    }
    assert!(starts.windows(2).all(|w| w[0] < w[1]), "{starts:?}");
    // The details panel shows the selected kernel.
    assert!(h.query_by_label("Launched by").is_some());
}

#[test]
fn dragging_a_range_on_the_time_axis_shows_that_range_s_totals() {
    let mut h = opened("alexnet_b8.pt.trace.json.gz");
    let axis = h.get_by_label("time axis").rect();
    let y = axis.center().y;
    let (x0, x1) = (
        axis.left() + axis.width() * 0.2,
        axis.left() + axis.width() * 0.5,
    );
    h.drag_at(egui::pos2(x0, y));
    h.step();
    for k in 1..=4 {
        h.hover_at(egui::pos2(x0 + (x1 - x0) * k as f32 / 4.0, y));
        h.step();
    }
    h.drop_at(egui::pos2(x1, y));
    h.run();
    let tab = &h.state().tabs[0];
    let range = tab.selection.range.expect("a range is selected");
    let profile = Arc::clone(&tab.profile);
    let in_range = analysis::gpu_total_ns(&profile, range);
    let all = analysis::gpu_total_ns(&profile, TimeRange::ALL);
    assert!(0 < in_range && in_range < all, "{in_range} of {all}");
    let node = h.get_by_label_contains("Range ");
    let header = node
        .accesskit_node()
        .label()
        .filter(|l| !l.is_empty())
        .or_else(|| node.accesskit_node().value())
        .unwrap_or_default();
    assert!(
        header.starts_with(&format!("Range {}", format_duration(range.duration_ns()))),
        "{header}"
    );
    assert!(header.contains("busy"), "{header}");
    assert!(
        h.query_all_by_label_contains(&format!("GPU time {}", format_duration(in_range)))
            .count()
            == 2,
        "the range header and the table's total show the range's GPU time"
    );
    // The table's Time column adds up to the range's GPU time.
    let summed: i64 = h.state().tabs[0]
        .tables
        .visible_rows()
        .iter()
        .map(|r| match r.cells[1] {
            Cell::DurationNs(ns) => ns,
            _ => panic!("Time column holds durations"),
        })
        .sum();
    assert_eq!(summed, in_range);
}

#[test]
fn keys_zoom_the_timeline_under_the_pointer_and_f_fits_the_run() {
    let mut h = opened("alexnet_b16.pt.trace.json.gz");
    let whole = h.state().tabs[0].timeline.visible_range();
    let lanes = h.get_by_label("timeline").rect();
    h.hover_at(lanes.center());
    h.run();
    for _ in 0..4 {
        h.key_press(egui::Key::W);
    }
    h.run();
    let zoomed = h.state().tabs[0].timeline.visible_range();
    assert!(zoomed.duration_ns() < whole.duration_ns() / 2, "{zoomed:?}");
    h.key_press(egui::Key::F);
    h.run();
    assert_eq!(h.state().tabs[0].timeline.visible_range(), whole);
}

/// Esc clears what is selected (event, range, highlighted name), so that F then fits the whole
/// run instead of the selection.
#[test]
fn escape_clears_the_selection_and_f_then_fits_the_whole_run() {
    let mut h = opened("alexnet_b16.pt.trace.json.gz");
    let whole = h.state().tabs[0].timeline.visible_range();
    let lanes = h.get_by_label("timeline").rect();
    h.hover_at(lanes.center());
    h.run();
    let part = TimeRange::new(
        whole.start_ns + whole.duration_ns() / 4,
        whole.start_ns + whole.duration_ns() / 2,
    );
    h.state_mut().tabs[0].selection.range = Some(part);
    h.key_press(egui::Key::F);
    h.run();
    assert_eq!(h.state().tabs[0].timeline.visible_range(), part);
    h.key_press(egui::Key::Escape);
    h.run();
    assert_eq!(
        h.state().tabs[0].selection,
        warpscope_ui::Selection::default()
    );
    h.key_press(egui::Key::F);
    h.run();
    assert_eq!(h.state().tabs[0].timeline.visible_range(), whole);
}

/// The height of the panel below the timeline (its splitter, as AccessKit sees it).
fn tables_splitter(h: &Harness<'_, WarpscopeApp>) -> egui::Rect {
    h.query_all_by_label("Resize panel")
        .map(|n| n.rect())
        .find(|r| r.width() > r.height())
        .expect("the splitter above the tables")
}

/// A tall tables panel kept from an earlier run (egui keeps panel sizes between runs) does not
/// leave the timeline a sliver on the next start: it gets at least half the window back. What
/// the user drags in this run stays.
#[test]
fn a_tall_tables_panel_from_the_last_run_leaves_the_timeline_half_the_window() {
    let file = sample("alexnet_b16.pt.trace.json.gz");
    let timeline_h = |h: &Harness<'_, WarpscopeApp>| h.get_by_label("timeline").rect().height();
    let mut h = opened("alexnet_b16.pt.trace.json.gz");
    let drag_tables_to = |h: &mut Harness<'_, WarpscopeApp>, share: f64| {
        let splitter = tables_splitter(h);
        h.query_all_by_label("Resize panel")
            .find(|n| n.rect() == splitter)
            .unwrap()
            .set_value_accesskit(share);
        h.run();
    };
    drag_tables_to(&mut h, 0.75);
    assert!(timeline_h(&h) < 300.0, "{}", timeline_h(&h));
    // What eframe writes at exit and reads at the next start.
    let saved = h.ctx.memory(|m| ron::to_string(m).unwrap());
    let mut h = Harness::builder()
        .with_size([1400.0, 900.0])
        .build_eframe(move |cc| {
            cc.egui_ctx
                .memory_mut(|m| *m = ron::from_str(&saved).unwrap());
            WarpscopeApp::new(cc, vec![file], None)
        });
    settle(&mut h);
    assert!(timeline_h(&h) >= 0.4 * 900.0, "{}", timeline_h(&h));
    // The user's choice in this run is kept.
    drag_tables_to(&mut h, 0.75);
    for _ in 0..3 {
        h.step();
    }
    assert!(timeline_h(&h) < 300.0, "{}", timeline_h(&h));
}

#[test]
fn recent_files_survive_a_restart() {
    let mut h = opened("alexnet_b32.pt.trace.json.gz");
    let mut storage = MemoryStorage::default();
    eframe::App::save(h.state_mut(), &mut storage);
    let restarted = WarpscopeApp::restore(Some(&storage), &h.ctx, Vec::new(), None);
    assert_eq!(restarted.recent, h.state().recent);
    assert!(restarted.recent[0].ends_with("alexnet_b32.pt.trace.json.gz"));
}

#[derive(Default)]
struct MemoryStorage(std::collections::HashMap<String, String>);

impl eframe::Storage for MemoryStorage {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.to_string(), value);
    }
    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }
    fn flush(&mut self) {}
}

#[test]
fn the_gemm_ladder_run_shows_its_rungs_occupancy_and_roofline() {
    let mut h = app_harness(vec![sample("live_sgemm_ladder_h200.json.gz")]);
    settle(&mut h);
    let run = h.state().tabs[0].live.clone().expect("live results");
    assert!(run.device.name.contains("H200"), "{}", run.device.name);
    assert!(run.all_checks_ok());
    // Every rung at 1024, 2048 and 4096, with the cuBLAS yardsticks.
    assert_eq!(run.points.len(), 7 * 3);
    for config in [
        "naive",
        "tiled",
        "regblock",
        "tensor",
        "cublas",
        "cublas-tf32",
        "cublas-fp16",
    ] {
        assert!(
            h.query_all_by_label(config).next().is_some(),
            "{config} missing"
        );
    }
    // Registers and occupancy of the bundled kernels (cuBLAS's own kernels have none).
    assert!(h.query_by_label("Occupancy").is_some());
    let regblock = run
        .points
        .iter()
        .find(|p| p.config == "regblock" && p.size == 4096)
        .unwrap();
    let occ = regblock.occupancy.unwrap();
    let shown = format!(
        "{:.0}% ({} blocks/SM)",
        100.0 * occ.fraction,
        occ.blocks_per_sm
    );
    assert!(
        h.query_all_by_label(&shown).next().is_some(),
        "{shown} not shown"
    );
    // Every point has a place on the roofline, the Tensor Core rung under the FP16 ceiling.
    let tensor = run
        .points
        .iter()
        .find(|p| p.config == "tensor" && p.size == 4096)
        .unwrap();
    let r = run.roofline(tensor).unwrap();
    assert_eq!(r.math, warpscope_live::Math::Fp16);
    assert_eq!(r.bound, warpscope_live::Bound::Compute);
    assert!(run.points.iter().all(|p| run.roofline(p).is_some()));
    h.get_by_label("Roofline").click();
    h.run_steps(3);
    h.snapshot("live_gemm_ladder_roofline");
}

#[test]
fn a_block_size_sweep_opens_on_its_occupancy_curve() {
    let mut h = app_harness(vec![sample("live_saxpy_blocks_h200.json.gz")]);
    settle(&mut h);
    let run = h.state().tabs[0].live.clone().expect("live results");
    let user = run.user.as_ref().expect("a user kernel's run");
    assert_eq!(user.kernel, "saxpy");
    let blocks: Vec<_> = run.points.iter().map(|p| p.block).collect();
    assert_eq!(
        blocks,
        [
            Some(32),
            Some(64),
            Some(128),
            Some(256),
            Some(512),
            Some(1024)
        ]
    );
    // 32 threads per block fill half the SM: 32 blocks of one warp, out of 64 warp slots.
    let occ = run.points[0].occupancy.unwrap();
    assert_eq!((occ.blocks_per_sm, occ.warps_per_sm), (32, 32));
    assert!(h.query_all_by_label("50% (32 blocks/SM)").next().is_some());
    assert!(h.query_by_label("Block").is_some());
    h.run_steps(3);
    h.snapshot("live_saxpy_block_sweep");
}

#[test]
fn snapshot_main_view_resnet50() {
    let mut h = opened("resnet50_b64_fp32.pt.trace.json.gz");
    h.run();
    h.snapshot("main_view_resnet50_b64_fp32");
}

/// Loads like the app, except that `resnet50_b32_60steps` stays loading until it is cancelled
/// (at most 30 s): a real load of it can finish before a test's click lands.
fn held_until_cancelled(path: &Path, progress: &Progress) -> Result<Profile, ImportError> {
    if path.ends_with("resnet50_b32_60steps.pt.trace.json.gz") {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if progress.is_cancelled() {
                return Err(ImportError::Cancelled {
                    path: path.to_path_buf(),
                });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    warpscope_core::import_file(path, progress)
}

#[test]
fn a_loading_file_shows_progress_and_can_be_cancelled() {
    let big = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/samples/kineto-h100/resnet50_b32_60steps.pt.trace.json.gz");
    let mut h = app_harness(Vec::new());
    h.state_mut().set_importer(held_until_cancelled);
    let ctx = h.ctx.clone();
    h.state_mut()
        .open_all(vec![big, sample("alexnet_b8.pt.trace.json.gz")], &ctx);
    h.step();
    assert!(h.state().loading());
    assert!(
        h.query_by_label_contains("Loading resnet50_b32_60steps")
            .is_some()
    );
    let cancel = h
        .get_all_by_label("Cancel")
        .next()
        .expect("a Cancel button per loading file")
        .rect();
    h.hover_at(cancel.center());
    h.step();
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos: cancel.center(),
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
    }
    settle(&mut h);
    // The cancelled file opens no tab and reports no error; the other file opened.
    let titles: Vec<String> = h.state().tabs.iter().map(|t| t.title()).collect();
    assert_eq!(titles, vec!["alexnet_b8.pt.trace.json.gz".to_string()]);
    assert!(h.state().errors.is_empty(), "{:?}", h.state().errors);
}

#[test]
fn four_files_opened_together_are_offered_as_a_comparison_with_four_runs() {
    let files: Vec<PathBuf> = ["b8", "b16", "b32", "b128"]
        .iter()
        .map(|b| sample(&format!("alexnet_{b}.pt.trace.json.gz")))
        .collect();
    let mut h = app_harness(Vec::new());
    h.step();
    for f in &files {
        h.input_mut()
            .dropped_files
            .push(Arc::new(Dropped(f.clone())));
    }
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 4);
    h.get_by_label_contains("4 profiles were opened together");
    h.get_by_label("Compare them").click();
    h.run();
    let app = h.state();
    assert_eq!(app.compares.len(), 1);
    assert_eq!(app.active, 4, "the comparison's tab is shown");
    let labels: Vec<&str> = app.compares[0]
        .comparison
        .runs
        .iter()
        .map(|r| r.label.as_str())
        .collect();
    assert_eq!(labels, ["batch=8", "batch=16", "batch=32", "batch=128"]);
    h.get_by_label("#1 batch=8 (baseline)");
    h.get_by_label_contains("Compare batch=8 | batch=16");
}

#[test]
fn the_compare_dialog_compares_chosen_open_profiles_against_the_chosen_baseline() {
    let mut h = app_harness(vec![
        sample("resnet50_b64_fp32.pt.trace.json.gz"),
        sample("resnet50_b64_amp.pt.trace.json.gz"),
        sample("alexnet_b8.pt.trace.json.gz"),
    ]);
    settle(&mut h);
    // Opened together: the offer is there, but the dialog picks a subset.
    h.get_by_label("Compare…").click();
    h.run();
    h.get_by_role_and_label(egui::Role::CheckBox, "alexnet_b8.pt.trace.json.gz")
        .click(); // untick
    // AMP is the baseline (tabs are in the order the files finished loading).
    let amp = h
        .state()
        .tabs
        .iter()
        .position(|t| t.title().contains("amp"))
        .unwrap();
    h.get_all_by_label("baseline").nth(amp).unwrap().click();
    h.run();
    h.get_by_label("Compare").click();
    h.run();
    let c = &h.state().compares[0].comparison;
    assert_eq!(c.runs.len(), 2);
    assert_eq!(c.runs[c.baseline].gpu_total_ns, 57_903_050);
    let fp32 = c.runs.iter().find(|r| !r.is_baseline).unwrap();
    assert_eq!(fp32.gpu_total_ns, 82_994_730);
    let ratio = fp32.gpu_total_ratio_vs_baseline.unwrap();
    assert!(
        (ratio - 82_994_730.0 / 57_903_050.0).abs() < 1e-9,
        "{ratio}"
    );
}

#[test]
fn ranks_of_one_job_opened_together_merge_into_one_profile_with_a_gpu_each() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/samples/chrome-kineto");
    let ranks: Vec<PathBuf> = ["0", "1"]
        .iter()
        .map(|r| dir.join(format!("hta_world128_sampled_rank-{r}.json.gz")))
        .collect();
    if !ranks.iter().all(|p| p.exists()) {
        eprintln!("skipped: the world-128 rank traces are absent");
        return;
    }
    let mut h = app_harness(ranks);
    settle(&mut h);
    h.get_by_label("Merge as ranks of one job").click();
    h.run();
    let app = h.state();
    assert_eq!(app.tabs.len(), 3, "the two ranks and the merged job");
    let merged = &app.tabs[app.active].profile;
    assert_eq!(merged.devices.len(), 2);
    let nccl_gpus: std::collections::BTreeSet<u32> = merged
        .tracks
        .iter()
        .filter_map(|t| match t.key {
            warpscope_core::TrackKey::Gpu { device, .. }
                if t.events
                    .name
                    .iter()
                    .any(|&n| warpscope_core::analysis::compare::is_nccl_kernel(merged.str(n))) =>
            {
                Some(device)
            }
            _ => None,
        })
        .collect();
    assert_eq!(nccl_gpus.len(), 2, "NCCL kernels on each GPU");
    // Its timeline shows both GPUs.
    let mut h2 = h;
    let names = {
        let app = h2.state_mut();
        let i = app.active;
        let tab = &mut app.tabs[i];
        tab.timeline.lane_names(&tab.profile)
    };
    let gpus: std::collections::BTreeSet<&str> = names
        .iter()
        .filter_map(|n| n.split(" · ").next())
        .filter(|g| g.starts_with("GPU "))
        .collect();
    assert_eq!(gpus.len(), 2, "{names:#?}");
}

#[test]
fn the_live_lab_opens_from_the_menu_and_without_a_gpu_says_so_and_cannot_run() {
    if warpscope_live::probe().is_ok() {
        eprintln!("skipped: this machine has a CUDA driver");
        return;
    }
    let mut h = app_harness(Vec::new());
    h.step();
    // The welcome screen has a "Live lab…" button too; use the menu's.
    h.get_by_label("Live").click();
    h.run_steps(2);
    h.query_all_by_label("Live lab…").last().unwrap().click();
    h.run_steps(3);
    assert!(h.state().live.open);
    // The GPU is looked for off the UI thread: give it a moment.
    let deadline = Instant::now() + Duration::from_secs(10);
    while h.query_by_label_contains("no CUDA driver found").is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    assert!(
        h.query_by_label_contains("no CUDA driver found").is_some(),
        "the window does not say why it cannot run"
    );
    // The inputs still work: the kernel's sizes and configurations are filled in...
    assert!(h.query_by_label("1x1-unified").is_some());
    assert!(h.query_by_label("cpu").is_some());
    // ...and follow the chosen kernel.
    h.get_by_label("Kernel").click();
    h.run_steps(2);
    h.get_by_label("sgemm").click();
    h.run_steps(3);
    for config in ["naive", "tiled", "cublas"] {
        assert!(h.query_by_label(config).is_some(), "{config} missing");
    }
    assert!(h.query_by_label("1x1-unified").is_none());
    assert_eq!(
        h.get_by_label("Sizes (m = n = k)").value().as_deref(),
        Some("512,1024,2048,4096")
    );
    // The batch (launches per CUDA-event pair) starts at 1: each launch timed on its own.
    assert_eq!(
        h.get_by_label("Launches per event pair").value().as_deref(),
        Some("1")
    );
    // ...but Run is disabled, and clicking it starts nothing.
    let run = h.get_by_label("Run");
    assert!(run.accesskit_node().is_disabled());
    run.click();
    h.run_steps(2);
    assert!(!h.state().live.busy());
    // The rest of the app is unaffected: a profile still opens.
    h.state_mut().open(
        sample("alexnet_b8.pt.trace.json.gz"),
        &egui::Context::default(),
    );
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 1);
}

/// The repository's `examples/` (`WARPSCOPE_EXAMPLES` names it where the test binary runs away
/// from its checkout, as on a GPU machine).
fn examples() -> PathBuf {
    std::env::var_os("WARPSCOPE_EXAMPLES").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"),
        PathBuf::from,
    )
}

#[test]
fn a_dropped_cu_file_opens_the_live_lab_on_its_kernel_checked_as_you_type() {
    let mut h = app_harness(Vec::new());
    h.step();
    let file = examples().join("saxpy_buggy.cu");
    h.input_mut().dropped_files.push(Arc::new(Dropped(file)));
    h.run_steps(3);
    // No profile tab: the source went to the Live lab, which shows its form.
    assert!(h.state().tabs.is_empty());
    assert!(h.state().live.open);
    let form = h
        .state()
        .live
        .source
        .clone()
        .expect("the form of the dropped file");
    assert_eq!(form.kernel, "saxpy_ref");
    assert_eq!(form.args, "f32=1.5 f32[N]=rand f32[N]=rand i32=N");
    assert!(h.query_by_label_contains("saxpy_buggy.cu").is_some());
    assert!(h.query_by_label("Ready: 3 point(s)").is_some());
    // The source is there to read, with its line numbers.
    h.get_by_label_contains("Source (").click();
    h.run_steps(3);
    assert!(
        h.query_by_label_contains("   1  // Two broken SAXPYs")
            .is_some(),
        "the source is not shown"
    );
    // A SPEC that does not match the signature is named at once, before any GPU is involved.
    h.state_mut().live.source.as_mut().unwrap().args = "f32=1.5 f32[N]=rand".into();
    h.run_steps(3);
    assert!(
        h.query_by_label_contains("saxpy_ref takes 4 parameter(s) (float a, const float *x, float *y, int n) but --args describes 2")
            .is_some(),
        "the form does not say what is wrong"
    );
    // An expression nested 5,000 deep, typed into the grid, is refused with a message (it used
    // to overflow the stack of the UI thread, which checks the form as you type).
    h.state_mut().live.source.as_mut().unwrap().args =
        "f32=1.5 f32[N]=rand f32[N]=rand i32=N".into();
    let deep = format!("{}N{}", "(".repeat(5000), ")".repeat(5000));
    let grid = h.get_by_label("Grid");
    grid.focus();
    grid.type_text(&deep);
    h.run_steps(3);
    assert!(
        h.query_by_label_contains(
            "--grid: an expression of 10001 bytes is too long (at most 1024)"
        )
        .is_some(),
        "the deep grid is not refused"
    );
    if warpscope_live::probe().is_err() {
        // Without a GPU the window says why, and Run stays disabled.
        let deadline = Instant::now() + Duration::from_secs(10);
        while h.query_by_label_contains("no CUDA driver found").is_none()
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
            h.step();
        }
        assert!(h.query_by_label_contains("no CUDA driver found").is_some());
        assert!(h.get_by_label("Run").accesskit_node().is_disabled());
    }
    // Back to the bundled kernels.
    h.get_by_label("Bundled kernels").click();
    h.run_steps(3);
    assert!(h.state().live.source.is_none());
    assert!(
        h.query_by_label("Drop a .cu file here to time your own kernel.")
            .is_some()
    );
}

/// Steps the app until the Live lab's run in flight is over.
fn wait_for_live_run(h: &mut Harness<'_, WarpscopeApp>) {
    let deadline = Instant::now() + Duration::from_secs(120);
    h.step();
    while h.state().live.busy() {
        assert!(Instant::now() < deadline, "the live run did not finish");
        std::thread::sleep(Duration::from_millis(50));
        h.step();
    }
    h.run_steps(3);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn on_a_gpu_a_faulting_kernel_fails_its_run_and_the_app_runs_the_next_one() {
    // Run with `--ignored` where a GPU and the warpscope binary (`WARPSCOPE_LIVE_EXE`) are at
    // hand: the app runs sweeps in that binary, not in this test.
    if let Err(e) = warpscope_live::probe() {
        panic!("this test needs an NVIDIA GPU and its driver: {e}");
    }
    assert!(
        std::env::var_os("WARPSCOPE_LIVE_EXE").is_some(),
        "set WARPSCOPE_LIVE_EXE to the warpscope binary"
    );
    let mut h = app_harness(vec![examples().join("saxpy_buggy.cu")]);
    h.run_steps(3);
    let deadline = Instant::now() + Duration::from_secs(30);
    while h.query_by_label_contains("NVIDIA").is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    let set = |h: &mut Harness<'_, WarpscopeApp>, kernel: &str| {
        let form = h.state_mut().live.source.as_mut().unwrap();
        form.kernel = kernel.into();
        form.args = "f32=2.5 f32[N]=rand f32[N]=rand i32=N".into();
    };
    // The fault ends the child process that ran it; its run opens with the failed points.
    set(&mut h, "saxpy_fault");
    h.run_steps(2);
    h.get_by_label("Run").click();
    wait_for_live_run(&mut h);
    assert_eq!(h.state().tabs.len(), 1, "{:?}", h.state().live.error);
    assert!(
        h.query_all_by_label_contains("the kernel faulted")
            .next()
            .is_some(),
        "the fault is not shown"
    );
    // The app is unharmed: the next run works.
    set(&mut h, "saxpy_ref");
    h.run_steps(2);
    h.get_by_label("Run").click();
    wait_for_live_run(&mut h);
    assert_eq!(h.state().tabs.len(), 2, "{:?}", h.state().live.error);
    assert!(
        h.query_all_by_label_contains("the kernel faulted")
            .next()
            .is_none()
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn on_a_gpu_a_kernel_that_never_ends_fails_at_the_limit_and_stop_ends_it_mid_launch() {
    // Run like the test above, with `WARPSCOPE_LIVE_EXE` set.
    if let Err(e) = warpscope_live::probe() {
        panic!("this test needs an NVIDIA GPU and its driver: {e}");
    }
    assert!(
        std::env::var_os("WARPSCOPE_LIVE_EXE").is_some(),
        "set WARPSCOPE_LIVE_EXE to the warpscope binary"
    );
    let mut h = app_harness(vec![examples().join("hang.cu")]);
    h.run_steps(3);
    let deadline = Instant::now() + Duration::from_secs(30);
    while h.query_by_label_contains("NVIDIA").is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    let set = |h: &mut Harness<'_, WarpscopeApp>, kernel: &str, flag: u32, limit_s: f64| {
        let live = &mut h.state_mut().live;
        live.timeout_s = limit_s;
        let form = live.source.as_mut().unwrap();
        form.kernel = kernel.into();
        form.args = format!("i32[N]={flag} f32[N]=0 i32=N");
    };
    // The child stops at the limit: its run opens with the point failed, the rest not run.
    set(&mut h, "wait_for_flag", 0, 2.0);
    h.run_steps(2);
    h.get_by_label("Run").click();
    wait_for_live_run(&mut h);
    assert_eq!(h.state().tabs.len(), 1, "{:?}", h.state().live.error);
    assert!(
        h.query_all_by_label_contains("did not finish within 2 s; it was stopped")
            .next()
            .is_some(),
        "the time limit is not shown"
    );
    // Stop, in the middle of a launch that would run for 600 s: the run's process ends now.
    set(&mut h, "wait_for_flag", 0, 600.0);
    h.run_steps(2);
    h.get_by_label("Run").click();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(50));
        h.step();
    }
    assert!(h.state().live.busy());
    h.get_by_label("Stop").click();
    let stopped = Instant::now();
    wait_for_live_run(&mut h);
    assert!(
        stopped.elapsed() < Duration::from_secs(10),
        "{:?}",
        stopped.elapsed()
    );
    assert_eq!(h.state().tabs.len(), 1);
    assert_eq!(h.state().live.error, None);
    // The GPU is free again: the same kernel, its flag set, runs to the end.
    set(&mut h, "finish_flag", 1, 20.0);
    h.run_steps(2);
    h.get_by_label("Run").click();
    wait_for_live_run(&mut h);
    assert_eq!(h.state().tabs.len(), 2, "{:?}", h.state().live.error);
    let run = h.state().tabs[1].live.as_ref().unwrap();
    assert!(run.points.iter().all(|p| p.error.is_none()), "{run:?}");
}

#[test]
fn a_saved_live_run_opens_with_its_results_table_and_plot() {
    let mut h = app_harness(vec![sample("live_vector_add_h100.json.gz")]);
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 1);
    let tab = &h.state().tabs[0];
    let run = tab.live.as_ref().expect("live results");
    assert_eq!(
        tab.bottom,
        BottomView::Live,
        "a live run opens on its results"
    );
    assert_eq!(run.points.len(), 35);
    // The result table: every configuration, the CPU baseline, checks passed.
    for config in ["1x1-device", "1x256-unified", "grid-device", "cpu"] {
        assert!(
            h.query_all_by_label(config).next().is_some(),
            "{config} missing from the results"
        );
    }
    assert!(h.query_by_label_contains("FAILED").is_none());
    assert!(
        h.query_all_by_label_contains("ok (rel. error")
            .next()
            .is_some()
    );
    let grid_100m = run
        .points
        .iter()
        .find(|p| p.config == "grid-device" && p.size == 100_000_000)
        .unwrap();
    let shown = format_duration(grid_100m.median_event_ns().unwrap());
    assert!(h.query_by_label(&shown).is_some(), "{shown} not shown");
    // The kernels are on the timeline and in the tables too.
    h.get_by_label("Tables").click();
    h.run_steps(3);
    assert_eq!(h.state().tabs[0].bottom, BottomView::Tables);
    assert!(h.query_all_by_label_contains("vector_add").next().is_some());
}

#[test]
fn a_profile_saved_as_chrome_trace_reopens_with_the_same_kernels() {
    let mut h = app_harness(vec![sample("alexnet_b8.pt.trace.json.gz")]);
    settle(&mut h);
    let dir = std::env::temp_dir().join(format!("warpscope-save-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("saved.json.gz");
    h.state_mut().save_profile_as(0, out.clone());
    let deadline = Instant::now() + Duration::from_secs(30);
    while h.state().saving() {
        assert!(Instant::now() < deadline, "saving did not finish");
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    assert!(h.state().errors.is_empty(), "{:?}", h.state().errors);
    // The saved file is remembered and opens like any trace, with the same GPU time.
    assert_eq!(h.state().recent[0], std::fs::canonicalize(&out).unwrap());
    let original = &h.state().tabs[0].profile;
    let reopened = warpscope_core::import_file(&out, &warpscope_core::Progress::new()).unwrap();
    assert_eq!(
        analysis::gpu_total_ns(&reopened, TimeRange::ALL),
        analysis::gpu_total_ns(original, TimeRange::ALL)
    );
    // A file that cannot be written shows its error in the window; the tab stays.
    h.state_mut()
        .save_profile_as(0, PathBuf::from("/no/such/dir/saved.json"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while h.state().saving() {
        assert!(Instant::now() < deadline, "saving did not finish");
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    assert!(
        h.state()
            .errors
            .iter()
            .any(|e| e.contains("/no/such/dir/saved.json")),
        "{:?}",
        h.state().errors
    );
    assert_eq!(h.state().tabs.len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The Insights panel below the timeline: why the GPU is not busy, and a finding's button that
/// takes the timeline to its events.
#[test]
fn the_insights_panel_explains_the_run_and_shows_a_finding_on_the_timeline() {
    let mut h = app_harness(vec![sample("alexnet_b8.pt.trace.json.gz")]);
    settle(&mut h);
    assert_eq!(h.state().tabs[0].bottom, BottomView::Tables);
    h.get_by_label("Insights").click();
    h.run_steps(3);
    assert_eq!(h.state().tabs[0].bottom, BottomView::Insights);
    h.get_by_label_contains("1. host_wait");
    h.get_by_label_contains("host wait 7.6985ms (59.4%)");
    let before = h.state().tabs[0].timeline.visible_range();
    h.get_by_label("Show finding 1").click();
    h.run_steps(3);
    let tab = &h.state().tabs[0];
    assert!(
        tab.selection.event.is_some(),
        "the finding's first event is selected"
    );
    assert!(tab.timeline.visible_range().duration_ns() <= before.duration_ns());
}

/// The Memory panel: the peak and what held it; a click on an operator selects it on the
/// timeline; the GPU's memory lane sits under its utilisation lane.
#[test]
fn the_memory_panel_shows_the_peak_and_selects_the_allocating_operator() {
    let mut h = app_harness(vec![sample("resnet50_b32_bf16_mem_flops.pt.trace.json.gz")]);
    settle(&mut h);
    let lanes = {
        let tab = &mut h.state_mut().tabs[0];
        let profile = Arc::clone(&tab.profile);
        tab.timeline.lane_names(&profile)
    };
    let utilisation = lanes
        .iter()
        .position(|l| l.contains("utilisation"))
        .unwrap();
    assert!(
        lanes[utilisation + 1].starts_with("GPU 0 · NVIDIA H200 · memory"),
        "{lanes:?}"
    );
    h.get_by_label("Memory").click();
    h.run_steps(3);
    assert_eq!(h.state().tabs[0].bottom, BottomView::Memory);
    h.get_by_label("1.84 GiB");
    h.get_by_label_contains("Peak allocated");
    // The largest holder at the peak: the convolutions' outputs.
    assert!(h.state().tabs[0].selection.event.is_none());
    // The first is the live-at-peak row (below the fold of a 900-point window).
    h.get_all_by_label("aten::cudnn_convolution")
        .next()
        .unwrap()
        .click_accesskit();
    h.run_steps(3);
    let tab = &h.state().tabs[0];
    let ev = tab
        .selection
        .event
        .expect("the allocating operator is selected");
    let track = &tab.profile.tracks[ev.track as usize];
    assert_eq!(
        tab.profile.str(track.events.name[ev.index as usize]),
        "aten::cudnn_convolution"
    );
    let start = track.events.start_ns[ev.index as usize];
    let view = tab.timeline.visible_range();
    assert!(view.start_ns <= start && start <= view.end_ns);
}

/// A profile without memory records says how to record them.
#[test]
fn the_memory_panel_of_a_profile_without_memory_says_how_to_record_it() {
    let mut h = opened("alexnet_b8.pt.trace.json.gz");
    h.get_by_label("Memory").click();
    h.run_steps(3);
    h.get_by_label_contains("profile_memory=True");
}

/// The user's peaks, typed in one tab's Roofline view, hold for every tab of the app (it keeps
/// one override: docs/flops.md, section 5): the other tab's fields show them, its Insights
/// measure MFU against them.
#[test]
fn peaks_typed_in_one_tab_hold_for_every_tab() {
    let mut h = app_harness(vec![
        sample("resnet50_b32_fp32_mem_flops.pt.trace.json.gz"),
        sample("resnet50_b32_bf16_mem_flops.pt.trace.json.gz"),
    ]);
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 2);
    h.state_mut().active = 0;
    h.run_steps(2);
    h.get_by_label("Roofline").click();
    h.run_steps(3);
    h.get_by_label_contains("in use: peaks table, NVIDIA H200: ");
    h.get_by_label("Peak TFLOP/s").focus();
    h.run_steps(2);
    h.get_by_label("Peak TFLOP/s").type_text("400");
    h.run_steps(2);
    h.get_by_label("Apply peaks").click();
    h.run_steps(3);
    assert_eq!(h.state().peaks.tflops, Some(400.0));
    h.get_by_label_contains("in use: user override: 400 TFLOP/s; bandwidth from peaks table");
    h.state_mut().active = 1;
    h.run_steps(2);
    h.get_by_label("Roofline").click();
    h.run_steps(3);
    assert_eq!(
        h.get_by_label("Peak TFLOP/s").value().as_deref(),
        Some("400")
    );
    h.get_by_label("Insights").click();
    h.run_steps(3);
    let d = h.state().tabs[1]
        .insights
        .flops()
        .expect("MFU computed")
        .devices[0]
        .clone();
    assert_eq!(d.peak_flops_per_s, Some(400e12));
    h.get_by_label_contains("from user override: 400 TFLOP/s; bandwidth from peaks table");
}

/// The Roofline view below the timeline: the operators on the H200's roofline; a click on a
/// point selects that operator on the timeline and in the tables.
#[test]
fn the_roofline_view_selects_the_operator_clicked() {
    let mut h = opened("resnet50_b32_fp32_mem_flops.pt.trace.json.gz");
    h.get_by_label("Roofline").click();
    h.run_steps(3);
    assert_eq!(h.state().tabs[0].bottom, BottomView::Roofline);
    h.get_by_label_contains("ceilings of GPU 0 · NVIDIA H200");
    let point = h.state().tabs[0]
        .roofline
        .points()
        .iter()
        .find(|p| p.name == "aten::convolution_backward")
        .cloned()
        .expect("convolution_backward is on the plot");
    h.hover_at(point.pos);
    h.step();
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos: point.pos,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
    }
    h.run_steps(3);
    let tab = &h.state().tabs[0];
    let ev = tab.selection.event.expect("its longest call is selected");
    let track = &tab.profile.tracks[ev.track as usize];
    assert_eq!(
        tab.profile.str(track.events.name[ev.index as usize]),
        "aten::convolution_backward"
    );
    // The tables follow: the CPU operators table highlights its row.
    h.get_by_label("Tables").click();
    h.run_steps(3);
    h.get_by_label("CPU operators").click();
    h.run_steps(3);
    assert_eq!(
        h.state().tabs[0].tables.selected_row(),
        Some("aten::convolution_backward")
    );
}

/// Files opened together get their tabs in the order given, whatever order they finish loading
/// in; comparing them puts the runs in the order of the batch size, batch=8 the baseline.
#[test]
fn tabs_keep_the_order_given_and_a_comparison_sorts_by_batch() {
    let given = ["alexnet_b128", "alexnet_b8", "alexnet_b32", "alexnet_b16"];
    let files: Vec<PathBuf> = given
        .iter()
        .map(|n| sample(&format!("{n}.pt.trace.json.gz")))
        .collect();
    let mut h = app_harness(files);
    settle(&mut h);
    let titles: Vec<String> = h.state().tabs.iter().map(|t| t.title()).collect();
    let expected: Vec<String> = given
        .iter()
        .map(|n| format!("{n}.pt.trace.json.gz"))
        .collect();
    assert_eq!(titles, expected);
    h.get_by_label("Compare them").click();
    h.run_steps(3);
    let c = &h.state().compares[0].comparison;
    let labels: Vec<&str> = c.runs.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["batch=8", "batch=16", "batch=32", "batch=128"]);
    assert!(c.runs[0].is_baseline);
}

/// Without a desktop portal (remote, X11-forwarded or minimal sessions), File → Open… shows
/// warpscope's own file browser: folders open with a click, a profile opens with Open.
#[test]
fn file_open_works_without_a_desktop_portal() {
    let mut h = app_harness(Vec::new());
    h.state_mut().builtin_dialogs = true;
    h.run();
    // The welcome screen's Open… (the File menu's is the same action).
    h.get_by_label("Open…").click();
    h.run();
    assert!(h.state().browser.is_some(), "the browser is open");
    h.get_by_label_contains("sample_profiles/").click();
    h.run();
    let dir = h.state().browser.as_ref().unwrap().0.dir().to_path_buf();
    assert!(dir.ends_with("sample_profiles"), "{}", dir.display());
    h.get_by_label_contains("alexnet_b8.pt.trace.json.gz")
        .click();
    h.run();
    h.get_by_label("Open").click();
    h.step();
    assert!(h.state().browser.is_none());
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 1);
    assert_eq!(h.state().tabs[0].title(), "alexnet_b8.pt.trace.json.gz");
    // Escape closes it without opening anything.
    h.get_by_label("File").click();
    h.run();
    h.get_by_label("Open…").click();
    h.run();
    assert!(h.state().browser.is_some());
    h.key_press(egui::Key::Escape);
    h.run();
    assert!(h.state().browser.is_none());
    assert_eq!(h.state().tabs.len(), 1);
}

/// A harness shows the app with a usable `XDG_RUNTIME_DIR`, as `main` does, so that Mesa's
/// drivers do not print `error: XDG_RUNTIME_DIR is invalid or not set`.
#[cfg(target_os = "linux")]
#[test]
fn the_renderer_gets_a_runtime_directory() {
    let _h = app_harness(Vec::new());
    let dir = std::env::var_os("XDG_RUNTIME_DIR").expect("XDG_RUNTIME_DIR is set");
    assert!(Path::new(&dir).is_dir(), "{}", dir.to_string_lossy());
}

/// A folder `warpscope-gui-NAME-PID` holding `sub/`, which holds a copy of `file` of the
/// samples (twice, so that a row of files lies where the folder's row was).
fn browser_tree(name: &str, file: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("warpscope-gui-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let sub = root.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    for copy in ["a_", "b_"] {
        std::fs::copy(sample(file), sub.join(format!("{copy}{file}"))).unwrap();
    }
    root
}

/// Double-clicking a folder enters it, and nothing more: the second click lands on the file
/// that is now under the pointer and must neither choose nor open it.
#[test]
fn double_clicking_a_folder_in_the_file_browser_only_enters_it() {
    let root = browser_tree("dblclick", "alexnet_b8.pt.trace.json.gz");
    // Short steps, so that two clicks are one double-click (kittest's default is 1/4 s a step).
    let mut h = Harness::builder()
        .with_size([1400.0, 900.0])
        .with_step_dt(0.02)
        .build_eframe(|cc| WarpscopeApp::new(cc, Vec::new(), None));
    h.state_mut().browser = Some((
        warpscope::app::FileBrowser::new(warpscope::app::BrowserMode::Open, root.clone()),
        None,
    ));
    h.run();
    let at = h.get_by_label_contains("sub/").rect().center();
    for _ in 0..2 {
        h.hover_at(at);
        for pressed in [true, false] {
            h.event(egui::Event::PointerButton {
                pos: at,
                button: egui::PointerButton::Primary,
                pressed,
                modifiers: egui::Modifiers::NONE,
            });
        }
        h.step();
        h.step();
    }
    h.run();
    let browser = &h
        .state()
        .browser
        .as_ref()
        .expect("the browser stays open")
        .0;
    assert_eq!(browser.dir(), root.join("sub"));
    assert!(
        h.query_by_label_contains("Click a profile").is_some(),
        "nothing chosen"
    );
    assert!(!h.state().loading(), "nothing opened");
    assert!(h.state().tabs.is_empty());
    std::fs::remove_dir_all(root).unwrap();
}

/// Choosing a file changes the text beside the Open button, not where the button is.
#[test]
fn the_file_browser_s_open_button_stays_put_when_a_file_is_chosen() {
    let mut h = app_harness(Vec::new());
    h.state_mut().browser = Some((
        warpscope::app::FileBrowser::new(
            warpscope::app::BrowserMode::Open,
            sample("alexnet_b8.pt.trace.json.gz")
                .parent()
                .unwrap()
                .to_path_buf(),
        ),
        None,
    ));
    h.run();
    let before = h.get_by_label("Open").rect();
    h.get_by_label_contains("alexnet_b16.pt.trace.json.gz")
        .click();
    h.run();
    assert!(h.query_by_label_contains("1 file chosen").is_some());
    assert_eq!(h.get_by_label("Open").rect(), before);
}

/// A file that is open already is not opened again, however it is asked for (dropped, from the
/// file browser, from Open recent, under another spelling of its path): its tab is shown.
#[test]
fn opening_an_open_file_again_shows_its_tab() {
    let b8 = sample("alexnet_b8.pt.trace.json.gz");
    let mut h = app_harness(vec![b8.clone()]);
    settle(&mut h);
    h.input_mut()
        .dropped_files
        .push(Arc::new(Dropped(sample("alexnet_b16.pt.trace.json.gz"))));
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 2);
    assert_eq!(h.state().active, 1);
    // Dropped again, written another way.
    let again = b8
        .parent()
        .unwrap()
        .join("../sample_profiles/alexnet_b8.pt.trace.json.gz");
    h.input_mut().dropped_files.push(Arc::new(Dropped(again)));
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 2);
    assert_eq!(h.state().active, 0);
    // From the file browser (whose entries give the name and the size).
    h.state_mut().browser = Some((
        warpscope::app::FileBrowser::new(
            warpscope::app::BrowserMode::Open,
            b8.parent().unwrap().to_path_buf(),
        ),
        None,
    ));
    h.run();
    h.get_by_label_contains("alexnet_b16.pt.trace.json.gz   ")
        .click();
    h.run();
    h.get_by_label("Open").click();
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 2);
    assert_eq!(h.state().active, 1);
    // From Open recent.
    h.get_by_label("File").click();
    h.run();
    h.get_by_label("Open recent").click();
    h.run();
    let recent_b8 = std::fs::canonicalize(&b8).unwrap().display().to_string();
    h.get_by_label(&recent_b8).click();
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 2);
    assert_eq!(h.state().active, 0);
}

/// A job of 8 ranks written by `scripts/gen_ranks.py` (rank 5 computes 30% longer, rank 2
/// launches its collectives 400 µs late), or `None` when python3 cannot run.
fn generated_job(name: &str) -> Option<PathBuf> {
    let dir = std::env::temp_dir().join(format!("warpscope-gui-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen_ranks.py");
    match std::process::Command::new("python3")
        .arg(&script)
        .arg(&dir)
        .output()
    {
        Ok(o) if o.status.success() => Some(dir),
        Ok(o) => panic!("{}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => {
            eprintln!("skipped: python3 cannot run: {e}");
            None
        }
    }
}

#[test]
fn a_job_directory_opens_as_one_timeline_and_a_heat_map_cell_shows_that_rank_s_step() {
    let Some(dir) = generated_job("job") else {
        return;
    };
    // An analysis written beside the traces is left out, with a warning.
    std::fs::write(dir.join("analysis.json"), "{\"stragglers\": [2, 5]}").unwrap();
    let mut h = app_harness(vec![dir.clone()]);
    settle(&mut h);
    let (order, cell) = {
        let app = h.state();
        assert_eq!(app.tabs.len(), 1);
        let tab = &app.tabs[0];
        assert_eq!(
            tab.title(),
            format!(
                "{} (job of 8 ranks)",
                dir.file_name().unwrap().to_string_lossy()
            )
        );
        assert_eq!(tab.bottom, BottomView::Job);
        assert_eq!(
            tab.profile.devices.len(),
            8,
            "one GPU per rank on one timeline"
        );
        let job = tab.job.as_ref().unwrap();
        assert!(
            job.warnings[0].contains("analysis.json: not a recognised profile"),
            "{:?}",
            job.warnings
        );
        let cell = *job
            .step_cells
            .iter()
            .find(|c| c.rank == 5 && c.step == 3)
            .unwrap();
        (warpscope_ui::fleet::rank_order(job), cell)
    };
    // Rows by straggler score: the late rank, then the slow one.
    assert_eq!(&order[..2], &[2, 5]);
    // Every rank's row gives its score, 0 included, as `warpscope fleet` prints it.
    {
        let job = Arc::clone(h.state().tabs[0].job.as_ref().unwrap());
        for r in &job.ranks {
            h.get_by_label(&format!(
                "rank {} · score {}",
                r.rank,
                warpscope_ui::format_duration(job.score_of(r.rank))
            ));
        }
        assert!(job.ranks.iter().any(|r| job.score_of(r.rank) == 0));
    }
    // By default the map shows compute against each step's median rank, and says so.
    h.get_by_label_contains("Compute: each rank against the median rank of the step");
    h.get_by_label_contains("rank 5 step 3: compute").click();
    h.run();
    let app = h.state_mut();
    let tab = &mut app.tabs[0];
    let range = tab.timeline.visible_range();
    let margin = cell.dur_ns / 50;
    assert_eq!(range.start_ns, cell.start_ns - margin);
    assert_eq!(range.end_ns, cell.start_ns + cell.dur_ns + margin);
    assert_eq!(tab.fleet.selected, Some((5, 3)));
    let top = tab.timeline.top_group_name(&tab.profile).unwrap();
    assert!(top.starts_with("GPU 5"), "{top}");
    // The step lies where the merged timeline has rank 5's ProfilerStep#3.
    let step3 = warpscope_core::analysis::compare::step_range(&tab.profile, 3).unwrap();
    assert!(step3.start_ns <= cell.start_ns && cell.start_ns + cell.dur_ns <= step3.end_ns);
    std::fs::remove_dir_all(dir).unwrap();
}
