//! Command-line interface: `summary`, `info`, and the default action on bare file arguments.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use warpscope_core::import::ImportTimings;
use warpscope_core::{Profile, Progress, TimeRange};

use crate::report;

/// warpscope: open GPU profiles (nvprof, Nsight Systems, PyTorch/Kineto, Chrome traces) and see
/// where the GPU time went.
#[derive(Debug, Parser)]
#[command(name = "warpscope", version, args_conflicts_with_subcommands = true)]
#[command(
    after_help = "Examples:\n  warpscope summary sample_profiles/alexnet_b8.pt.trace.json.gz\n  \
    warpscope summary trace.json --top 10 --format json\n  warpscope info trace.json.gz"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Profiles to open in the viewer.
    files: Vec<PathBuf>,
    /// Open FILE... as one comparison of runs (the first is the baseline).
    #[arg(long)]
    compare: bool,
    /// Render the main view with FILE... loaded into this PNG, then exit (for docs and CI).
    #[arg(long, value_name = "OUT.png")]
    screenshot: Option<PathBuf>,
    /// Window size for the viewer and for --screenshot.
    #[arg(long, value_name = "WxH", value_parser = crate::gui::parse_size, default_value = "1600x900")]
    size: [f32; 2],
    /// Renderer: wgpu, or glow (OpenGL). By default wgpu, falling back to glow.
    #[arg(long, value_enum)]
    renderer: Option<crate::gui::RendererChoice>,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, Args, Clone, Copy)]
struct Common {
    /// Print where the import time went (read, parse, index) and the peak memory to stderr.
    #[arg(long, global = true)]
    timings: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Ranked tables like nvprof's summary: GPU activities, copies by kind, API calls, CPU ops.
    Summary {
        /// The profile (Chrome/Kineto JSON, plain or gzip).
        file: PathBuf,
        /// Show only the first N rows of each table (totals still count everything).
        #[arg(long, value_name = "N")]
        top: Option<usize>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        format: OutputFormat,
    },
    /// What a file is: format and tool, devices, tracks with event counts, time span, warnings.
    Info {
        /// The profile.
        file: PathBuf,
        /// Output format (`table` is readable text).
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        format: OutputFormat,
    },
}

/// How tables are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Aligned text, like nvprof.
    Table,
    /// Comma-separated values, one row per line, times in ns.
    Csv,
    /// JSON, a stable contract for scripts.
    Json,
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Some(Command::Summary { file, top, format }) => {
            let profile = load(&file, cli.common)?;
            let summary = warpscope_core::analysis::summary_report(&profile, TimeRange::ALL, top);
            emit(&report::summary(&summary, format)?)?;
        }
        Some(Command::Info { file, format }) => {
            let profile = load(&file, cli.common)?;
            emit(&report::info(&profile, format)?)?;
        }
        None => {
            if cli.screenshot.is_some() && cli.files.is_empty() {
                anyhow::bail!("--screenshot needs at least one profile to show");
            }
            if cli.compare && cli.files.len() < 2 {
                anyhow::bail!("--compare needs two or more profiles");
            }
            return crate::gui::run(&crate::gui::GuiOptions {
                files: cli.files,
                compare: cli.compare,
                screenshot: cli.screenshot,
                size: cli.size,
                renderer: cli.renderer,
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn emit(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        // A closed pipe (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to standard output"),
    }
}

fn load(path: &Path, common: Common) -> Result<Profile> {
    let progress = Progress::new();
    let (profile, timings) = warpscope_core::import_file_timed(path, &progress)?;
    if common.timings {
        print_timings(&profile, &timings);
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
        peak_rss().map_or_else(
            || "unknown".to_string(),
            |kb| format!("{:.1} MB", kb as f64 / 1024.0)
        ),
    );
}

/// Peak resident set size in KiB (Linux `VmHWM`).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
