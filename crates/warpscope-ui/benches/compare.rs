//! How interactive a comparison is: the time to compute it, and the CPU time per frame of the
//! comparison view (`egui::Context::run_ui` at 1920x1080) on its kernel table with the filter
//! changing every frame, on the charts and on the stacked timelines. Two cases: the four AlexNet
//! runs of `sample_profiles/`, and the 139 MB resnet50_b32_60steps trace against itself. Run with
//! `cargo bench -p warpscope-ui --bench compare`.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use warpscope_core::analysis::compare::RunLabel;
use warpscope_core::{Profile, Progress, import_file};
use warpscope_ui::compare::{ComparePage, CompareState, compare_ui};

const BIG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/samples/kineto-h100/resnet50_b32_60steps.pt.trace.json.gz"
);
const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../sample_profiles");
const FRAMES: usize = 40;
const FILTERS: [&str; 5] = ["", "g", "ge", "gem", "gemm"];

fn main() {
    let alexnet: Vec<Arc<Profile>> = ["b8", "b16", "b32", "b128"]
        .iter()
        .filter_map(|b| {
            let path = format!("{SAMPLES}/alexnet_{b}.pt.trace.json.gz");
            import_file(Path::new(&path), &Progress::new()).ok()
        })
        .map(Arc::new)
        .collect();
    measure("alexnet x4", &alexnet);
    match import_file(Path::new(BIG), &Progress::new()) {
        Ok(p) => {
            let p = Arc::new(p);
            measure("resnet50_b32_60steps x2", &[Arc::clone(&p), p]);
        }
        Err(e) => println!("skipped the 139 MB trace: {e}"),
    }
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("loadavg: {}", load.trim());
    }
}

fn measure(label: &str, profiles: &[Arc<Profile>]) {
    let labels: Vec<RunLabel> = profiles.iter().map(|p| RunLabel::of_profile(p)).collect();
    let mut times = Vec::new();
    let mut state = None;
    for _ in 0..5 {
        let t = Instant::now();
        state = CompareState::new(profiles.to_vec(), &labels, 0).ok();
        times.push(ms(t));
    }
    let Some(mut state) = state else {
        println!("{label}: cannot compare");
        return;
    };
    println!(
        "{label}: compare_runs median {:.1} ms ({} kernels aligned)",
        median(&mut times),
        state.comparison.kernels.len()
    );
    let ctx = egui::Context::default();
    for page in [
        ComparePage::Kernels,
        ComparePage::Charts,
        ComparePage::Timelines,
    ] {
        state.page = page;
        let _ = frame(&ctx, &mut state); // first frame lays out and builds caches
        let mut ui_ms = Vec::new();
        for i in 0..FRAMES {
            if page == ComparePage::Kernels {
                FILTERS[i % FILTERS.len()].clone_into(&mut state.filter);
            }
            let t = Instant::now();
            let _ = frame(&ctx, &mut state);
            ui_ms.push(ms(t));
        }
        let what = if page == ComparePage::Kernels {
            "kernel table, filter changing every frame"
        } else {
            page.title()
        };
        println!(
            "{label} {what}: ui median {:.2} ms, max {:.2} ms",
            median(&mut ui_ms),
            ui_ms.iter().copied().fold(0.0, f64::max)
        );
    }
}

fn frame(ctx: &egui::Context, state: &mut CompareState) -> egui::FullOutput {
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(1920.0, 1080.0),
        )),
        ..egui::RawInput::default()
    };
    ctx.run_ui(input, |ui| {
        egui::CentralPanel::default().show(ui, |ui| {
            compare_ui(
                ui,
                state,
                warpscope_core::analysis::flops::PeakOverride::default(),
            );
        });
    })
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
