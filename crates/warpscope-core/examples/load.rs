//! Loads one profile the way `warpscope summary` does, without the GUI crates: imports it,
//! builds the summary, prints one line (events, warnings, span, GPU total) and exits 0, or
//! prints the error and exits 1. What `scripts/hostile.sh` runs when the viewer is not built.
//!
//! ```text
//! cargo run --release -p warpscope-core --example load -- FILE
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use warpscope_core::analysis::summary_report;
use warpscope_core::{Progress, TimeRange, import_file};

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: load FILE");
        return ExitCode::from(2);
    };
    match import_file(&path, &Progress::default()) {
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
                "events={} warnings=[{}] span_ns={span} gpu_total_ns={}",
                profile.event_count(),
                warnings.join(","),
                report.gpu_total_ns
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
