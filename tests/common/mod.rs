//! What the end-to-end tests of the binary share: running it and reading what it printed.
#![allow(dead_code, clippy::expect_used)] // each test crate uses its own part

use std::process::{Command, Output};

/// Runs the `warpscope` binary in the repository root with `args`.
pub fn warpscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run warpscope")
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
