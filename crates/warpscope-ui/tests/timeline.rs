//! The timeline driven through egui_kittest over real profiles from `sample_profiles/`.

use std::path::{Path, PathBuf};

use egui::{Event, Key, Modifiers, PointerButton, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use warpscope_core::model::{EventKind, EventRef, GpuLane, TrackKey};
use warpscope_core::{Profile, Progress, TimeRange, import_file};
use warpscope_ui::Selection;
use warpscope_ui::timeline::{TimelineState, timeline_ui};

fn sample(name: &str) -> Profile {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../sample_profiles")
        .join(name);
    import_file(Path::new(&path), &Progress::new()).unwrap()
}

struct App {
    profile: Profile,
    state: TimelineState,
    selection: Selection,
}

const W: f32 = 1600.0;
const H: f32 = 900.0;

fn harness(profile: Profile) -> Harness<'static, App> {
    let state = TimelineState::new(&profile);
    let app = App {
        profile,
        state,
        selection: Selection::default(),
    };
    Harness::builder()
        .with_size(egui::vec2(W, H))
        .build_ui_state(
            |ui, app: &mut App| {
                let _ = timeline_ui(ui, &app.profile, &mut app.state, &mut app.selection);
            },
            app,
        )
}

/// Left edge and width of the lane area (the header column is 20 % of the width, the scroll
/// bar 8 points).
fn lane_area(h: &Harness<'_, App>) -> (f32, f32) {
    let r = h.get_by_label("timeline").rect();
    (r.min.x as f32, r.width() as f32)
}

#[test]
fn lanes_show_the_gpu_stream_and_the_python_threads() {
    let mut h = harness(sample("alexnet_b8.pt.trace.json.gz"));
    h.run();
    let app = h.state_mut();
    let names = app.state.lane_names(&app.profile);
    println!("{names:#?}");
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("GPU 0 · NVIDIA H100") && n.ends_with("stream 7"))
    );
    assert!(
        names
            .iter()
            .any(|n| n.contains("python") && n.contains("thread"))
    );
    // The headers are on screen with their names.
    let _ = h.get_by_label_contains("stream 7");
    let _ = h.get_by_label_contains("GPU 0 · NVIDIA H100");
}
