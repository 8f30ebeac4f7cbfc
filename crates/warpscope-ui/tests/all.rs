//! The widget tests of warpscope-ui, one module per file of `tests/`, linked into one binary
//! (one link of the GUI stack instead of one per file; run one file's tests with
//! `cargo test -p warpscope-ui --test all -- tables::`).
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Each file keeps its own `mod common;`, as when it was a binary of its own: the helpers are
// compiled once per file (and a profile they cache is loaded once per file, as before).
#![allow(clippy::duplicate_mod)]

#[path = "compare.rs"]
mod compare;
#[path = "flops.rs"]
mod flops;
#[path = "insights.rs"]
mod insights;
#[path = "memory.rs"]
mod memory;
#[path = "peaks.rs"]
mod peaks;
#[path = "tables.rs"]
mod tables;
#[path = "timeline.rs"]
mod timeline;

/// Every `.rs` file beside this one is compiled here, as a `#[path]` module above. Cargo finds
/// no test file by itself in this package (`autotests = false`), so a file added without a line
/// here would never run.
#[test]
fn every_test_file_is_compiled() {
    let this = include_str!("all.rs");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let own_binary = ["all.rs"].contains(&name.as_str());
        if name.ends_with(".rs") && !own_binary && !this.contains(&format!("#[path = \"{name}\"]"))
        {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "tests/{missing:?} not compiled: add them to tests/all.rs"
    );
}
