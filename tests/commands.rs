//! The end-to-end tests of the command line, one module per file of `tests/`, linked into one
//! binary (run one file's tests with `cargo test --test commands -- fleet_cli::`). `gui.rs`,
//! which drives the app headless, is a binary of its own.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Each file keeps its own `mod common;`, as when it was a binary of its own: the helpers are
// compiled once per file (and a profile they cache is loaded once per file, as before).
#![allow(clippy::duplicate_mod)]

#[path = "analyze_cli.rs"]
mod analyze_cli;
#[path = "cli.rs"]
mod cli;
#[path = "compare_cli.rs"]
mod compare_cli;
#[path = "fleet_cli.rs"]
mod fleet_cli;
#[path = "flops_cli.rs"]
mod flops_cli;
#[path = "live_cli.rs"]
mod live_cli;
#[path = "memory_cli.rs"]
mod memory_cli;

/// Every `.rs` file beside this one is compiled into a test binary: here (a `#[path]` module
/// above) or, for `gui.rs`, its own `[[test]]` in `Cargo.toml`. Cargo finds no test file
/// by itself in this package (`autotests = false`), so a file added without a line here would
/// never run.
#[test]
fn every_test_file_is_compiled() {
    let this = include_str!("commands.rs");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let own_binary = ["gui.rs", "commands.rs"].contains(&name.as_str());
        if name.ends_with(".rs") && !own_binary && !this.contains(&format!("#[path = \"{name}\"]"))
        {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "tests/{missing:?} not compiled: add them to tests/commands.rs"
    );
}
