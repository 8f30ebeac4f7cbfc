//! Replays every input under `fuzz/regressions/<target>/` (minimised fuzzer crashes and
//! hand-written pathological inputs) through the same entry point and the same checks as the
//! fuzz target of that name (`fuzz/src/replay.rs`, included below), on the stable toolchain.
//!
//! Each input must end in `Ok` or in an error that names the input, never a panic, and a
//! profile that loads must keep the invariants (no negative durations or spans, no overflowing
//! ends, no negative GPU totals). A missing or empty directory fails: a replay of nothing must
//! not pass.
//!
//! Hand-written inputs may ask for more in their name: `hw_err_*` must end in an error (a broken
//! file is not an empty profile), `hw_warn_*` must end in an error or a load with a warning
//! (extreme values are never kept silently).

use std::fs;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[path = "../../../fuzz/src/replay.rs"]
mod replay;

/// Where the last panic happened and its message, recorded by the quiet hook.
static LAST_PANIC_AT: Mutex<Option<String>> = Mutex::new(None);

fn regressions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions")
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
        .unwrap_or_else(|| "(non-string panic payload)".to_string())
}

/// The inputs of one target, sorted, or why there are none.
fn inputs(target: &str) -> Result<Vec<PathBuf>, String> {
    let dir = regressions_dir().join(target);
    let entries = fs::read_dir(&dir)
        .map_err(|e| format!("{}: cannot list regressions: {e}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| format!("{}: cannot list regressions: {e}", dir.display()))?
            .path();
        if path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(format!(
            "{}: no regression inputs for target {target}",
            dir.display()
        ));
    }
    Ok(files)
}

#[test]
fn every_fuzz_regression_replays_cleanly() {
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    let default_hook = panic::take_hook();
    panic::set_hook(Box::new(|info| {
        let at = info.location().map(|l| {
            format!(
                "{}:{} ({})",
                l.file(),
                l.line(),
                panic_message(info.payload())
            )
        });
        *LAST_PANIC_AT.lock().unwrap_or_else(|e| e.into_inner()) = at;
    }));
    for &target in replay::TARGETS {
        let files = inputs(target).unwrap_or_else(|e| panic!("{e}"));
        let (mut loaded, mut errors) = (0, 0);
        for file in &files {
            let data = fs::read(file).unwrap();
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            *LAST_PANIC_AT.lock().unwrap_or_else(|e| e.into_inner()) = None;
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| replay::run(target, &data)));
            let recorded = LAST_PANIC_AT
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            // A panic on a worker thread (the Chrome reader) that the importer swallowed.
            if let (Ok(_), Some(at)) = (&outcome, &recorded) {
                failures.push(format!("{target}/{name}: a thread panicked at {at}"));
            }
            // Shown with --nocapture: what each input ended in.
            match &outcome {
                Ok(replay::Outcome::Error(message)) => println!("{target}/{name}: {message}"),
                Ok(o) => println!("{target}/{name}: {o:?}"),
                Err(_) => println!("{target}/{name}: panicked"),
            }
            match outcome {
                Ok(replay::Outcome::Loaded { events, warnings }) => {
                    loaded += 1;
                    if name.starts_with("hw_err_") {
                        failures.push(format!(
                            "{target}/{name}: loaded ({events} events, {warnings} warnings) \
                             instead of ending in an error"
                        ));
                    } else if name.starts_with("hw_warn_") && warnings == 0 {
                        failures.push(format!(
                            "{target}/{name}: loaded ({events} events) without a warning"
                        ));
                    }
                }
                Ok(replay::Outcome::Error(_)) => errors += 1,
                Ok(replay::Outcome::Skipped) => {
                    failures.push(format!("{target}/{name}: too short to replay"));
                }
                Err(payload) => {
                    let at = recorded.unwrap_or_else(|| panic_message(payload.as_ref()));
                    failures.push(format!("{target}/{name}: panicked at {at}"));
                }
            }
        }
        counts.push(format!(
            "{target}: {} inputs, {loaded} loaded, {errors} errors",
            files.len()
        ));
    }
    panic::set_hook(default_hook);
    println!("{}", counts.join("\n"));
    assert!(
        failures.is_empty(),
        "{} fuzz regression(s) fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_missing_regression_directory_fails() {
    let err = inputs("no_such_target").unwrap_err();
    assert!(err.contains("cannot list regressions"), "{err}");
}
