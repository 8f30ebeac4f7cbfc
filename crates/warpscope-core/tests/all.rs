//! The integration tests of warpscope-core, one module per file of `tests/`, linked into one
//! binary (one link instead of one per file; run one file's tests with
//! `cargo test -p warpscope-core --test all -- conformance_chrome::`). `in_memory.rs` is a
//! binary of its own: it checks the temporary files of its process, which the other tests'
//! imports would add to.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Each file keeps its own `mod common;`, as when it was a binary of its own: the helpers are
// compiled once per file (and a profile they cache is loaded once per file, as before).
#![allow(clippy::duplicate_mod)]

#[path = "compare.rs"]
mod compare;
#[path = "conformance_amd_sqlite.rs"]
mod conformance_amd_sqlite;
#[path = "conformance_chrome.rs"]
mod conformance_chrome;
#[path = "conformance_nvprof.rs"]
mod conformance_nvprof;
#[path = "conformance_rocm_text.rs"]
mod conformance_rocm_text;
#[path = "conformance_sqlite.rs"]
mod conformance_sqlite;
#[path = "damaged_sqlite.rs"]
mod damaged_sqlite;
#[path = "fleet.rs"]
mod fleet;
#[path = "flops.rs"]
mod flops;
#[path = "fuzz_regressions.rs"]
mod fuzz_regressions;
#[path = "hostile_nvprof.rs"]
mod hostile_nvprof;
#[path = "memory.rs"]
mod memory;
#[path = "nsys_memory.rs"]
mod nsys_memory;
#[path = "occupancy.rs"]
mod occupancy;
#[path = "pitfalls_chrome.rs"]
mod pitfalls_chrome;
#[path = "snapshot.rs"]
mod snapshot;
#[path = "write_chrome.rs"]
mod write_chrome;

/// Every `.rs` file beside this one is compiled into a test binary: here (a `#[path]` module
/// above) or, for `in_memory.rs`, its own `[[test]]` in `Cargo.toml`. Cargo finds no test file
/// by itself in this package (`autotests = false`), so a file added without a line here would
/// never run.
#[test]
fn every_test_file_is_compiled() {
    let this = include_str!("all.rs");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let own_binary = ["in_memory.rs", "all.rs"].contains(&name.as_str());
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
