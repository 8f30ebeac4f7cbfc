//! Sets `cfg(has_samples)` when `../shared/samples` (the real profiles the conformance tests
//! read) lies next to the repository. Tests that need it are marked ignored, with the reason,
//! where it is absent, so `cargo test` says "N ignored" instead of passing them silently.

use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(has_samples)");
    println!("cargo::rerun-if-changed=build.rs");
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let samples = Path::new(&manifest).join("../../../shared/samples");
    if samples.is_dir() {
        // Re-checked when the folder changes; a folder added later needs `touch build.rs`.
        println!("cargo::rerun-if-changed={}", samples.display());
        println!("cargo::rustc-cfg=has_samples");
    }
}
