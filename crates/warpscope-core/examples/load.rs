//! Loads each profile named on the command line the way `warpscope summary` does, without the
//! GUI crates: imports it, builds the summary, and prints one line per file (events, warnings,
//! span, GPU total, time) or the error. Exits 1 if any file failed. What `scripts/hostile.sh`
//! runs when the viewer is not built, and a quick way to measure an importer:
//!
//! ```text
//! cargo build --release -p warpscope-core --example load
//! /usr/bin/time -v target/release/examples/load FILE...
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use warpscope_core::analysis::summary_report;
use warpscope_core::{Progress, TimeRange, import_file};

fn main() -> ExitCode {
    let files: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    if files.is_empty() {
        eprintln!("usage: load FILE...");
        return ExitCode::from(2);
    }
    let mut code = ExitCode::SUCCESS;
    for path in &files {
        let started = Instant::now();
        match import_file(path, &Progress::new()) {
            Ok(profile) => {
                let report = summary_report(&profile, TimeRange::ALL, None);
                let span = profile
                    .span_ns()
                    .map_or("none".to_string(), |(s, e)| format!("{s}..{e}"));
                let warnings: Vec<String> = profile
                    .warnings
                    .iter()
                    .map(|w| format!("{}x{}", w.code, w.count))
                    .collect();
                println!(
                    "{}: events={} warnings=[{}] span_ns={span} gpu_total_ns={} in {:.3} s",
                    path.display(),
                    profile.event_count(),
                    warnings.join(","),
                    report.gpu_total_ns,
                    started.elapsed().as_secs_f64()
                );
            }
            Err(e) => {
                eprintln!("error: {e}");
                code = ExitCode::FAILURE;
            }
        }
    }
    code
}
