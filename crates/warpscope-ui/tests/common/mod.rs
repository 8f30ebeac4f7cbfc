//! Profiles from `sample_profiles/`, shared by the widget tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::OnceLock;

use warpscope_core::{Profile, Progress, import_file};

/// Imports `sample_profiles/NAME`, panicking with the error on failure.
pub fn load(name: &str) -> Profile {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../sample_profiles")
        .join(name);
    import_file(&path, &Progress::new()).unwrap_or_else(|e| panic!("{e}"))
}

/// AlexNet at batch 8, loaded once per test binary.
pub fn alexnet() -> &'static Profile {
    static P: OnceLock<Profile> = OnceLock::new();
    P.get_or_init(|| load("alexnet_b8.pt.trace.json.gz"))
}

/// ResNet-50 at batch 64, FP32, loaded once per test binary.
pub fn resnet() -> &'static Profile {
    static P: OnceLock<Profile> = OnceLock::new();
    P.get_or_init(|| load("resnet50_b64_fp32.pt.trace.json.gz"))
}

/// Gives the renderer a runtime directory as the app's `main` does (else Mesa's Vulkan driver
/// prints `error: XDG_RUNTIME_DIR is invalid or not set` for every harness). Every harness of
/// these tests calls it before it is built.
#[allow(unsafe_code, dead_code)]
pub fn quiet_renderer() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: the harnesses wait here first, and nothing of ours reads the environment while
    // the variable is set; the renderer starts after.
    #[cfg(target_os = "linux")]
    ONCE.call_once(|| unsafe { warpscope_ui::ensure_runtime_dir() });
}
