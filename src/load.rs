//! Reading profiles for the CLI: one file, or the ranks of a job, with `--timings` on stderr.

use std::path::{Path, PathBuf};

use anyhow::Result;
use warpscope_core::analysis::fleet;
use warpscope_core::import::ImportTimings;
use warpscope_core::{Profile, Progress};

/// Opens the ranks of one job from files and directories ([`fleet::job_files`]) on all cores,
/// keeping each rank's facts, not its profile (the viewer opens jobs through its loader). With
/// `timings`, prints the file count, the time and the peak memory to stderr.
pub fn load_job(paths: &[PathBuf], timings: bool) -> Result<fleet::Job> {
    let started = std::time::Instant::now();
    let files = fleet::job_files(paths)?;
    let job = fleet::load_job(&files, fleet::JobOptions::default(), &Progress::default())?;
    if timings {
        let bytes: u64 = files
            .iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum();
        eprintln!(
            "timings: {} ranks, {:.1} MB of files in {:.3} s on {} threads; peak RSS {}",
            files.len(),
            bytes as f64 / 1e6,
            started.elapsed().as_secs_f64(),
            warpscope_core::parallel::threads(),
            peak_rss_text(),
        );
    }
    Ok(job)
}

/// Reads one profile; with `timings`, prints where the time went to stderr.
///
/// # Errors
///
/// The import's error; for a directory (other than one of rocprofv3 CSV traces, read as one
/// run), one that points to `warpscope fleet DIR` and to opening it as a job in the viewer.
pub fn load_profile(path: &Path, timings: bool) -> Result<Profile> {
    if path.is_dir() && !warpscope_core::import::rocprof::is_run_dir(path) {
        anyhow::bail!(
            "{0}: is a directory, not a profile: `warpscope fleet {0}` reads the traces in it as \
             the ranks of one job, and `warpscope {0}` opens them in the viewer as one job",
            path.display()
        );
    }
    let progress = Progress::new();
    let (profile, import_timings) = warpscope_core::import_file_timed(path, &progress)?;
    if timings {
        print_timings(&profile, &import_timings);
    }
    Ok(profile)
}

fn print_timings(profile: &Profile, t: &ImportTimings) {
    let mb = profile.source.content_bytes as f64 / 1e6;
    let secs = t.total.as_secs_f64();
    eprintln!(
        "timings: {} events, {:.1} MB{} in {:.3} s ({:.0} MB/s): read{} {:.3} s (on its own thread), parse {:.3} s, index {:.3} s; peak RSS {}",
        profile.event_count(),
        mb,
        if profile.source.compressed {
            " (gzip)"
        } else {
            ""
        },
        secs,
        if secs > 0.0 { mb / secs } else { 0.0 },
        if profile.source.compressed {
            "+decompress"
        } else {
            ""
        },
        t.read.as_secs_f64(),
        t.parse.as_secs_f64(),
        t.index.as_secs_f64(),
        peak_rss_text(),
    );
}

/// Peak resident set size in KiB (Linux `VmHWM`).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The process's peak resident memory, for the timing lines.
fn peak_rss_text() -> String {
    peak_rss().map_or_else(
        || "unknown".to_string(),
        |kb| format!("{:.1} MB", kb as f64 / 1024.0),
    )
}
