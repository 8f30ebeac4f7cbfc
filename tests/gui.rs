//! The real app driven headless with egui_kittest: opening files, the tables and the timeline
//! working together, errors shown in the window.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use warpscope::app::WarpscopeApp;

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

fn app_harness(files: Vec<PathBuf>) -> Harness<'static, WarpscopeApp> {
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
        h.query_by_label_contains("multi_tensor_apply_kernel")
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
    h.input_mut()
        .dropped_files
        .push(Arc::new(Dropped(broken.clone())));
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
fn recent_files_remember_what_was_opened() {
    let mut h = app_harness(vec![sample("alexnet_b32.pt.trace.json.gz")]);
    settle(&mut h);
    let recent = &h.state().recent;
    assert_eq!(recent.len(), 1);
    assert!(recent[0].ends_with("sample_profiles/alexnet_b32.pt.trace.json.gz"));
}
