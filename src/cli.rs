//! Command-line interface: `summary`, `info`, `compare`, and the default action on bare file
//! arguments.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use warpscope_core::{Profile, TimeRange};

use crate::output::OutputFormat;
use crate::report;

/// warpscope: open GPU profiles (nvprof, Nsight Systems, PyTorch/Kineto, Chrome traces) and see
/// where the GPU time went.
#[derive(Debug, Parser)]
#[command(name = "warpscope", version, args_conflicts_with_subcommands = true)]
#[command(
    after_help = "Examples:\n  warpscope summary sample_profiles/alexnet_b8.pt.trace.json.gz\n  \
    warpscope summary trace.json --top 10 --format json\n  warpscope analyze trace.json.gz\n  \
    warpscope info trace.nvvp\n  warpscope compare sample_profiles/alexnet_b{8,32}.pt.trace.json.gz"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Profiles to open in the viewer; a directory opens every rank's trace in it as one job
    /// (one timeline, and the Job view: ranks × steps, stragglers).
    #[arg(value_name = "FILE_OR_DIR")]
    files: Vec<PathBuf>,
    /// Open FILE... as one comparison of runs (shown in the order of the swept number, batch
    /// or GPU count, the smallest the baseline; otherwise the first given).
    #[arg(long)]
    compare: bool,
    /// Show the Insights panel (why the GPU is not busy) below each profile's timeline.
    #[arg(long)]
    insights: bool,
    /// Show the Memory panel (peaks, what was live then, allocating operators) below each
    /// profile's timeline.
    #[arg(long, conflicts_with = "insights")]
    memory: bool,
    /// Show the Roofline view (each operator's achieved TFLOP/s against its FLOPs per byte,
    /// under the GPU's ceilings) below each profile's timeline.
    #[arg(long, conflicts_with_all = ["insights", "memory"])]
    roofline: bool,
    /// Render the main view with FILE... loaded into this PNG, then exit (for docs and CI).
    #[arg(long, value_name = "OUT.png")]
    screenshot: Option<PathBuf>,
    /// Window size for the viewer and for --screenshot.
    #[arg(long, value_name = "WxH", value_parser = crate::gui::parse_size, default_value = "1600x900")]
    size: [f32; 2],
    /// Renderer: wgpu, or glow (OpenGL). By default wgpu, falling back to glow.
    #[arg(long, value_enum)]
    renderer: Option<crate::gui::RendererChoice>,
    /// The viewer's peaks (every FLOPs figure of every tab; the Roofline view can change them).
    #[command(flatten)]
    peaks: PeakArgs,
    #[command(flatten)]
    common: Common,
}

impl Cli {
    /// The viewer's options, checked (what bare files on the command line open).
    pub fn viewer_options(self) -> Result<crate::gui::GuiOptions> {
        if let Some(first) = self.files.first() {
            check_not_a_mistyped_command(first)?;
        }
        if self.screenshot.is_some() && self.files.is_empty() {
            anyhow::bail!("--screenshot needs at least one profile to show");
        }
        if self.compare && self.files.len() < 2 {
            anyhow::bail!("--compare needs two or more profiles");
        }
        Ok(crate::gui::GuiOptions {
            peaks: self.peaks.over()?,
            files: self.files,
            compare: self.compare,
            screenshot: self.screenshot,
            size: self.size,
            renderer: self.renderer,
            insights: self.insights,
            memory: self.memory,
            roofline: self.roofline,
        })
    }
}

/// Peaks given by the user, for parts or clocks the peaks table lacks (docs/flops.md).
#[derive(Debug, Args, Clone, Copy)]
struct PeakArgs {
    /// Peak TFLOP/s to measure % of peak and MFU against, for every precision (instead of
    /// the peaks table's figure for the device).
    #[arg(long, value_name = "TFLOPS")]
    peak_tflops: Option<f64>,
    /// Peak memory bandwidth in GB/s, for the roofline (instead of the table's).
    #[arg(long, value_name = "GBS")]
    peak_gbs: Option<f64>,
}

impl PeakArgs {
    /// The override, checked (the rule the viewer's Roofline view applies to typed peaks too).
    fn over(self) -> Result<warpscope_core::analysis::flops::PeakOverride> {
        Ok(warpscope_core::analysis::flops::PeakOverride::checked(
            self.peak_tflops,
            self.peak_gbs,
        )?)
    }
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
        /// The profile, in any supported format: nvprof CSV, text or .nvvp, Nsight Systems SQLite,
        /// Chrome/Kineto JSON; gzip-compressed or not.
        file: PathBuf,
        /// Show only the first N rows of each table (totals still count everything).
        #[arg(long, value_name = "N")]
        top: Option<usize>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        format: OutputFormat,
    },
    /// Why the GPU is not busy: utilisation and the time breakdown per device, the causes of idle
    /// time, launch latency, occupancy, Tensor Core use, and ranked findings with the time at
    /// stake (rules: docs/analysis.md).
    #[command(after_help = ANALYZE_HELP)]
    Analyze {
        /// The profile, in any supported format.
        file: PathBuf,
        /// Analyse only START..END, times from the start of the profile as on the timeline, with a
        /// unit: ns, µs (or us), ms or s (`2ms..3.5ms`; a bare number is nanoseconds).
        #[arg(long, value_name = "START..END", conflicts_with = "step")]
        range: Option<String>,
        /// Analyse only training step N (`ProfilerStep#N`: the GPU work of the step when the
        /// profile records it, otherwise the CPU step range).
        #[arg(long, value_name = "N")]
        step: Option<u64>,
        /// Rows of the kernel and operator tables, and gaps listed.
        #[arg(long, value_name = "N", default_value_t = 10)]
        top: usize,
        /// Gaps shorter than this between work already queued count as kernel wait.
        #[arg(long, value_name = "MICROSECONDS", default_value_t = 10.0)]
        kernel_wait_us: f64,
        #[command(flatten)]
        peaks: PeakArgs,
        /// Output format (`csv` prints the table).
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        format: OutputFormat,
    },
    /// How close to the hardware: every operator's FLOPs, bytes, achieved TFLOP/s, % of peak,
    /// arithmetic intensity and bound on the device's roofline, its kernels likewise, and
    /// model FLOPs, MFU and HFU per device and step. Needs operator shapes (PyTorch:
    /// `record_shapes=True`); rules: docs/flops.md.
    #[command(after_help = ROOFLINE_HELP)]
    Roofline {
        /// The profile.
        file: PathBuf,
        /// Only START..END, times from the start of the profile as on the timeline, with a
        /// unit: ns, us, ms or s (`2ms..3.5ms`).
        #[arg(long, value_name = "START..END", conflicts_with = "step")]
        range: Option<String>,
        /// Only training step N (`ProfilerStep#N`).
        #[arg(long, value_name = "N")]
        step: Option<u64>,
        /// Rows of the operator and kernel tables (the JSON has them all).
        #[arg(long, value_name = "N", default_value_t = 20)]
        top: usize,
        #[command(flatten)]
        peaks: PeakArgs,
        /// Output format (`csv` prints the table).
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        format: OutputFormat,
    },
    /// Where the memory goes, per device: allocated and reserved peaks and when, what was live
    /// at the peak by the operator that allocated it and by size, the operators that allocate
    /// most, what is never freed, out-of-memory events, and memory findings (rules:
    /// docs/memory.md). Reads PyTorch profiler traces recorded with `profile_memory=True` and
    /// CUDA allocator snapshots (`torch.cuda.memory._dump_snapshot`).
    #[command(after_help = MEMORY_HELP)]
    Memory {
        /// The profile or allocator snapshot.
        file: PathBuf,
        /// Only START..END, times from the start of the profile as on the timeline, with a
        /// unit: ns, µs (or us), ms or s (`2ms..3.5ms`).
        #[arg(long, value_name = "START..END", conflicts_with = "step")]
        range: Option<String>,
        /// Only training step N (`ProfilerStep#N`).
        #[arg(long, value_name = "N")]
        step: Option<u64>,
        /// Rows of the operator and live-at-peak tables (0: all).
        #[arg(long, value_name = "N", default_value_t = 10)]
        top: usize,
        /// Output format (`csv` prints the operators).
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        format: OutputFormat,
    },
    /// A distributed job as one: every rank's trace in DIR (or the files given), read in
    /// parallel; per rank the step time and time breakdown, each collective matched across
    /// ranks with its arrival skew, and stragglers ranked by score (rules: docs/fleet.md).
    #[command(after_help = FLEET_HELP)]
    Fleet {
        /// A directory of per-rank traces (Kineto `distributedInfo` gives the rank, else the
        /// file name: `_rank3`, `worker1`), or the files themselves.
        #[arg(value_name = "FILE_OR_DIR", required = true)]
        paths: Vec<PathBuf>,
        /// Rows of the straggler and collective tables (the JSON has them all).
        #[arg(long, value_name = "N", default_value_t = 10)]
        top: usize,
        /// Output format (`csv` prints the per-rank table).
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        format: OutputFormat,
    },
    /// Write profiles, or every rank of a job, as Parquet tables for DuckDB, DataFusion, Spark
    /// (events, kernels, copies, API calls, flows, devices, runs; docs/export.md), or as CSV
    /// files of the ranked tables.
    #[command(after_help = EXPORT_HELP)]
    Export {
        /// The profiles, or directories of per-rank traces.
        #[arg(value_name = "FILE_OR_DIR", required = true)]
        paths: Vec<PathBuf>,
        /// Where to write (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Parquet tables or CSV files.
        #[arg(long, value_enum, default_value_t = crate::export::ExportFormat::Parquet)]
        format: crate::export::ExportFormat,
    },
    /// What a file is: format and tool, devices, tracks with event counts, time span, warnings.
    Info {
        /// The profile.
        file: PathBuf,
        /// Output format (`table` is readable text).
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        format: OutputFormat,
    },
    /// Runs side by side (a batch sweep, 1 vs 2 GPUs, FP32 vs AMP): per-run totals, then kernels,
    /// copies by kind and CPU operators aligned by name, with ratios against a baseline run.
    #[command(after_help = COMPARE_HELP)]
    Compare {
        /// The runs, at least two, in any supported formats. Join the per-rank traces of one
        /// distributed job with `+` (`r0.json+r1.json`) to merge them into one run.
        #[arg(value_name = "FILE", required = true)]
        files: Vec<PathBuf>,
        /// The run the others are measured against, counted from 1 in the order the runs are
        /// given (merged ranks count as one run). Default: the smallest swept number (batch 8 in
        /// a batch sweep), or the first run when nothing is swept. Runs are shown in the order
        /// of the swept number.
        #[arg(long, value_name = "N")]
        baseline: Option<usize>,
        /// Label a run instead of reading its file name: FILE is the argument as typed or a file
        /// name; LABEL is free text, `key=value` pairs are read from it (`batch=64,precision=amp`).
        /// Repeat for several runs.
        #[arg(long = "label", value_name = "FILE=LABEL")]
        labels: Vec<String>,
        /// Show the N kernels, copy kinds and CPU operators with the longest time in any run
        /// (0: all). Totals always count everything.
        #[arg(long, value_name = "N", default_value_t = 20)]
        top: usize,
        /// Do not merge files whose names differ only in the rank (`job_rank0`, `job_rank1`).
        #[arg(long)]
        no_merge: bool,
        /// Output format.
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        format: OutputFormat,
    },
    /// The live lab: compile a bundled CUDA kernel for this GPU, launch it over a sweep of sizes
    /// and launch configurations, time every launch with CUDA events (and CUPTI where present),
    /// check it against a CPU reference, and report time, GB/s or GFLOP/s and % of the measured
    /// peak. Needs an NVIDIA GPU and driver; `--list` works anywhere.
    #[command(after_help = LIVE_HELP)]
    Live(Box<LiveArgs>),
}

const LIVE_HELP: &str = "\
Examples:
  warpscope live --list
  warpscope live vector_add
  warpscope live vector_add --sizes 1M,10M --configs grid-device,grid-unified,cpu --repeat 10
  warpscope live sgemm --sizes 1024,4096 --out sgemm.json && warpscope sgemm.json
  warpscope live sgemm --sizes 1024,2048,4096 --configs regblock,tensor,cublas,cublas-fp16 --roofline
  warpscope live copy --configs scalar --sizes 100M --blocks 32,64,128,256,512,1024
  warpscope live sgemm --configs regblock,tensor --sizes 1024,2048,4096 --batch 20 --no-cupti
  warpscope live --source examples/saxpy.cu --kernel saxpy \\
      --args 'f32=2.5 f32[N]=rand f32[N]=rand i32=N' --sizes 1M,100M --flops 2*N
  warpscope live --source examples/saxpy_buggy.cu --kernel saxpy_buggy \\
      --args 'f32=2.5 f32[N]=rand f32[N]=rand i32=N' --check-against saxpy_ref";

const FLEET_HELP: &str = "\
Examples:
  python3 scripts/gen_ranks.py /tmp/job --ranks 8 && warpscope fleet /tmp/job
  warpscope fleet traces/ --format json
  warpscope fleet job_rank0.json.gz job_rank1.json.gz --top 20";

const EXPORT_HELP: &str = "\
Examples:
  warpscope export --out /tmp/pq sample_profiles/resnet50_b64_fp32.pt.trace.json.gz
  warpscope export --out /tmp/job_pq /tmp/job        # a directory of per-rank traces
  # then query it with DuckDB's Python package (pip install duckdb):
  python3 -c \"import duckdb; duckdb.sql(\\\"SELECT name, count(*), sum(dur_ns) FROM '/tmp/job_pq/kernels/*.parquet' GROUP BY 1 ORDER BY 3 DESC LIMIT 10\\\").show()\"
  warpscope export --format csv --out /tmp/csv /tmp/job";

const MEMORY_HELP: &str = "\
Examples:
  warpscope memory trace.pt.trace.json.gz
  warpscope memory snapshot.pickle --top 20
  warpscope memory trace.json --step 3 --format json";

const ANALYZE_HELP: &str = "\
Examples:
  warpscope analyze sample_profiles/alexnet_b8.pt.trace.json.gz
  warpscope analyze trace.json --step 3 --format json
  warpscope analyze trace.json --range 2ms..3.5ms --top 20";

const ROOFLINE_HELP: &str = "\
Examples:
  warpscope roofline sample_profiles/resnet50_b32_bf16_mem_flops.pt.trace.json.gz
  warpscope roofline trace.json --step 3 --format json
  warpscope roofline trace.json --peak-tflops 400 --peak-gbs 2000";

const COMPARE_HELP: &str = "\
Runs are labelled from their file names (alexnet_b32 -> batch=32, bert_ddp2_rank1 -> gpus=2,
rank=1, resnet50_b64_amp -> batch=64, precision=amp). Files in one directory whose names and
labels differ only in the rank are merged into one run (unless that leaves fewer than two runs,
or with --no-merge); `+` merges files explicitly.

Examples:
  warpscope compare sample_profiles/alexnet_b{8,16,32,128}.pt.trace.json.gz
  warpscope compare fp32.json amp.json --baseline 2 --label fp32.json=precision=fp32
  warpscope compare one_gpu.json job_rank0.json+job_rank1.json --format json";

/// The arguments of `warpscope live`.
#[derive(Debug, Args)]
pub struct LiveArgs {
    /// The bundled kernel (see --list); leave out with --source.
    #[arg(required_unless_present_any = ["list", "source"], conflicts_with = "source")]
    kernel: Option<String>,
    /// Your own kernel: a .cu file, compiled with NVRTC for this GPU (with --kernel and
    /// --args).
    #[arg(long, value_name = "FILE.cu", requires_all = ["user_kernel", "args"])]
    source: Option<PathBuf>,
    /// The __global__ function of --source to time.
    #[arg(long = "kernel", value_name = "NAME", requires = "source")]
    user_kernel: Option<String>,
    /// Its parameters in order: buffers `f32[N]=rand`, `i32[N]=iota`, `f64[N*N]=1.5`,
    /// scalars `f32=2.5`, `i32=N` (types f32 f64 i32 u32 i64 u64; lengths in N).
    #[arg(
        long,
        value_name = "SPEC",
        requires = "source",
        allow_hyphen_values = true
    )]
    args: Option<String>,
    /// Grid in blocks, in N and B (threads per block): `N/256`, `(N+B-1)/B`, `64,64`.
    /// Default: enough blocks to cover N.
    #[arg(long, value_name = "EXPR", requires = "source")]
    grid: Option<String>,
    /// Threads per block of --source's kernel: 256, 16x16. Default 256.
    #[arg(long, value_name = "N", requires = "source")]
    block: Option<String>,
    /// Sweep the block size (1-D): 32,64,128,256,512,1024, with theoretical occupancy beside
    /// the time. Works for --source and for bundled configurations with a free block.
    #[arg(long, value_name = "LIST")]
    blocks: Option<String>,
    /// A macro for --source: NAME or NAME=VALUE (repeatable).
    #[arg(long = "define", value_name = "K=V", requires = "source")]
    defines: Vec<String>,
    /// An include folder for --source (repeatable).
    #[arg(long = "include", value_name = "DIR", requires = "source")]
    includes: Vec<PathBuf>,
    /// Bytes one launch must move, in N (default: every buffer once).
    #[arg(long, value_name = "EXPR", requires = "source")]
    bytes: Option<String>,
    /// Floating-point operations of one launch, in N (then rates are GFLOP/s).
    #[arg(long, value_name = "EXPR", requires = "source")]
    flops: Option<String>,
    /// Another kernel of --source, run once on the same inputs; every buffer must match.
    #[arg(long, value_name = "NAME", requires = "source")]
    check_against: Option<String>,
    /// Time every point again with CUPTI's collection paused, and show the difference.
    #[arg(long)]
    cupti_cost: bool,
    /// Print the roofline table (arithmetic intensity against the measured ceilings).
    #[arg(long)]
    roofline: bool,
    /// List the bundled kernels and their configurations.
    #[arg(long)]
    list: bool,
    /// Sizes to sweep, comma-separated: 1M,5M,10M (K, M, G are powers of 1000; Ki, Mi, Gi
    /// powers of 1024). Default: the kernel's own.
    #[arg(long, value_name = "SIZES")]
    sizes: Option<String>,
    /// Launch configurations, comma-separated (see --list). Default: all.
    #[arg(long, value_name = "CONFIGS", value_delimiter = ',')]
    configs: Option<Vec<String>>,
    /// Timed launches per point.
    #[arg(long, value_name = "N", default_value_t = 5)]
    repeat: u32,
    /// Untimed launches per configuration before the first timed one.
    #[arg(long, value_name = "N", default_value_t = 1)]
    warmup: u32,
    /// Stop repeating a point once its timed launches add up to this many seconds (a batch
    /// counts all its launches).
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    budget: f64,
    /// Launches per pair of CUDA events: each timed sample is K back-to-back launches, the L2
    /// flushed once before them (warm for all but the first), timed as elapsed / K ("batch"
    /// time beside the default "cold" one). 1 to 10000; results are checked on a separate
    /// single launch.
    #[arg(long, value_name = "K", default_value_t = 1)]
    batch: u32,
    /// Save the run as Chrome trace JSON (open it with `warpscope FILE`; `.gz` compresses).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Time with CUDA events only, without CUPTI activity records.
    #[arg(long)]
    no_cupti: bool,
    /// Skip measuring the device-to-device bandwidth and cuBLAS SGEMM rate first.
    #[arg(long)]
    no_peaks: bool,
    /// Launch each timed operation straight away instead of queuing it behind a kernel that
    /// holds the stream (then CUDA-event times include the launch latency). Needed under
    /// Nsight Compute, which serializes launches.
    #[arg(long)]
    no_queue: bool,
    /// The longest one launch may run, in seconds, or `off`. A kernel still running then fails
    /// its point ("did not finish within 10 s; it was stopped"), the rest of the sweep is not
    /// run, and warpscope exits with 1 (ending the process is what stops the kernel). A batch
    /// gets K times this. Default: 4 x --budget, at least 10 s (20 s).
    #[arg(long, value_name = "SECONDS", value_parser = crate::live::parse_timeout)]
    timeout: Option<crate::live::Timeout>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    format: OutputFormat,
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Some(Command::Summary { file, top, format }) => {
            let profile = load(&file, cli.common)?;
            warn_beside(&profile, format);
            let summary = warpscope_core::analysis::summary_report(&profile, TimeRange::ALL, top);
            emit(&report::summary(&summary, format)?)?;
        }
        Some(Command::Compare {
            files,
            baseline,
            labels,
            top,
            no_merge,
            format,
        }) => {
            let output = crate::compare::compare(&crate::compare::CompareOptions {
                files,
                baseline,
                labels,
                top,
                auto_merge: !no_merge,
                timings: cli.common.timings,
            })?;
            if format != OutputFormat::Table {
                for w in &output.warnings {
                    eprintln!("warpscope: warning: {w}");
                }
            }
            emit(&report::compare(&output, format)?)?;
        }
        Some(Command::Live(live)) => {
            let LiveArgs {
                kernel,
                source,
                user_kernel,
                args,
                grid,
                block,
                blocks,
                defines,
                includes,
                bytes,
                flops,
                check_against,
                cupti_cost,
                roofline,
                list,
                sizes,
                configs,
                repeat,
                warmup,
                budget,
                batch,
                out,
                no_cupti,
                no_peaks,
                no_queue,
                timeout,
                format,
            } = *live;
            if list {
                emit(&report::live_catalog(format)?)?;
                return Ok(ExitCode::SUCCESS);
            }
            let user = source.map(|source| warpscope_live::UserRequest {
                source,
                kernel: user_kernel.unwrap_or_default(),
                args: args.unwrap_or_default(),
                grid,
                block,
                defines,
                includes,
                bytes,
                flops,
                check_against,
            });
            let output = crate::live::run(&crate::live::LiveOptions {
                kernel: kernel.unwrap_or_default(),
                user,
                blocks,
                cupti_cost,
                sizes,
                configs,
                repeat,
                warmup,
                budget_s: budget,
                batch,
                out,
                no_cupti,
                no_peaks,
                no_queue,
                timeout: timeout.unwrap_or_default(),
                progress: true,
            })?;
            emit(&report::live_run(&output.run, format, roofline)?)?;
            if warpscope_live::context_abandoned() {
                // The kernel still runs and no CUDA teardown can finish: only the process's
                // end stops it and frees the GPU.
                eprintln!(
                    "warpscope: error: a kernel did not finish within its time limit; it was \
                     stopped and the rest of the sweep was not run (see the table)"
                );
                warpscope_live::exit_now(1);
            }
            if !output.run.all_checks_ok() {
                eprintln!(
                    "warpscope: error: {}",
                    if output.run.points.iter().any(|p| p.error.is_some()) {
                        "a point failed (see the table)"
                    } else if output
                        .run
                        .user
                        .as_ref()
                        .is_some_and(|u| u.check_against.is_some())
                    {
                        "a result did not match the --check-against kernel's"
                    } else {
                        "a result did not match its CPU reference"
                    }
                );
                return Ok(ExitCode::FAILURE);
            }
        }
        Some(Command::Analyze {
            file,
            range,
            step,
            top,
            kernel_wait_us,
            peaks,
            format,
        }) => {
            let over = peaks.over()?;
            // Checked before the file is read: a bad argument costs no import.
            if !(kernel_wait_us.is_finite() && kernel_wait_us >= 0.0) {
                anyhow::bail!("--kernel-wait-us must be a number of microseconds, 0 or more");
            }
            let profile = load(&file, cli.common)?;
            warn_beside(&profile, format);
            let (time_range, analyzed) = analysis_range(&profile, &file, range.as_deref(), step)?;
            let opts = warpscope_core::analysis::AnalyzeOptions {
                top_gaps: top,
                #[allow(clippy::cast_possible_truncation)]
                kernel_wait_threshold_ns: (kernel_wait_us * 1_000.0).round() as i64,
                ..Default::default()
            };
            let (insights, flops) = warpscope_core::analysis::contract::analyze_with_flops(
                &profile, time_range, &opts, over,
            );
            warn_flops_beside(&profile, &flops, format);
            emit(&report::analyze(
                &profile, &insights, &flops, &analyzed, top, format,
            )?)?;
        }
        Some(Command::Roofline {
            file,
            range,
            step,
            top,
            peaks,
            format,
        }) => {
            let over = peaks.over()?;
            let profile = load(&file, cli.common)?;
            warn_beside(&profile, format);
            let (time_range, analyzed) = analysis_range(&profile, &file, range.as_deref(), step)?;
            let flops = warpscope_core::analysis::flops::flops_report(&profile, time_range, over);
            warn_flops_beside(&profile, &flops, format);
            emit(&report::roofline(&profile, &flops, &analyzed, top, format)?)?;
        }
        Some(Command::Memory {
            file,
            range,
            step,
            top,
            format,
        }) => {
            let profile = load(&file, cli.common)?;
            let (time_range, analyzed) = analysis_range(&profile, &file, range.as_deref(), step)?;
            let r = warpscope_core::analysis::memory::memory_report(&profile, time_range, top);
            emit(&report::memory(&profile, &r, &analyzed, format)?)?;
        }
        Some(Command::Fleet { paths, top, format }) => {
            let job = crate::load::load_job(&paths, cli.common.timings)?;
            if format != OutputFormat::Table {
                for w in &job.report.warnings {
                    eprintln!("warpscope: warning: {w}");
                }
            }
            emit(&report::fleet(&job.report, top, format)?)?;
        }
        Some(Command::Export { paths, out, format }) => {
            let text = crate::export::export(&paths, &out, format)?;
            emit(&text)?;
        }
        Some(Command::Info { file, format }) => {
            let profile = load(&file, cli.common)?;
            warn_beside(&profile, format);
            emit(&report::info(&profile, format)?)?;
        }
        None => return crate::gui::run(&cli.viewer_options()?),
    }
    Ok(ExitCode::SUCCESS)
}

/// The subcommands, for suggestions.
const COMMANDS: [&str; 10] = [
    "summary", "info", "analyze", "roofline", "memory", "compare", "fleet", "export", "live",
    "help",
];

/// Fails with a suggestion when `arg` is not a file but looks like a mistyped subcommand
/// (`sumary` → `summary`), instead of trying to open it as a profile.
fn check_not_a_mistyped_command(arg: &Path) -> Result<()> {
    let Some(text) = arg.to_str() else {
        return Ok(());
    };
    if arg.exists() || text.contains(['/', '\\', '.']) {
        return Ok(());
    }
    if let Some(best) = COMMANDS
        .iter()
        .map(|c| (edit_distance(text, c), *c))
        .filter(|&(d, _)| d <= 2)
        .min()
    {
        anyhow::bail!(
            "unknown command `{text}`: did you mean `{}`? (`warpscope --help` lists the commands)",
            best.1
        );
    }
    Ok(())
}

/// Levenshtein distance between two short words.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The range `analyze` works on, from `--range` or `--step`.
fn analysis_range(
    profile: &Profile,
    file: &Path,
    range: Option<&str>,
    step: Option<u64>,
) -> Result<(TimeRange, report::AnalyzedRange)> {
    let analyzed = if let Some(text) = range {
        let (start_ns, end_ns) = parse_range(text)?;
        report::AnalyzedRange::range(TimeRange::new(start_ns, end_ns))
    } else if let Some(n) = step {
        report::AnalyzedRange::step(profile, n)
            .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?
    } else {
        report::AnalyzedRange::all()
    };
    Ok((analyzed.time_range(), analyzed))
}

/// Parses `START..END` (times with a unit: `2ms..3.5ms`, `1500us..2s`; bare numbers are ns).
pub(crate) fn parse_range(text: &str) -> Result<(i64, i64)> {
    let (a, b) = text
        .split_once("..")
        .with_context(|| format!("--range {text:?}: expected START..END, such as 2ms..3.5ms"))?;
    let start = parse_time(a).with_context(|| format!("--range {text:?}: bad start {a:?}"))?;
    let end = parse_time(b).with_context(|| format!("--range {text:?}: bad end {b:?}"))?;
    if end <= start {
        anyhow::bail!("--range {text:?}: the end must come after the start");
    }
    Ok((start, end))
}

/// Parses a time with a unit (`ns`, `us`, `µs`, `ms`, `s`; none means ns) to nanoseconds,
/// exactly.
fn parse_time(text: &str) -> Result<i64> {
    let t = text.trim();
    let (number, scale) = [("ns", 0), ("us", 3), ("µs", 3), ("ms", 6), ("s", 9)]
        .iter()
        .find_map(|&(unit, scale)| t.strip_suffix(unit).map(|n| (n.trim(), scale)))
        .unwrap_or((t, 0));
    warpscope_core::time::parse_decimal_scaled(number.as_bytes(), scale)
        .context("expected a number with a unit: ns, µs (or us), ms or s")
}

fn emit(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        // A closed pipe (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to standard output"),
    }
}

/// Warnings come before the results: a table prints them under its first line; CSV and JSON
/// (which may keep them in a `warnings` field too) get them on stderr, before the output.
fn warn_beside(profile: &Profile, format: OutputFormat) {
    if format == OutputFormat::Table {
        return;
    }
    for w in &profile.warnings {
        eprintln!(
            "warpscope: warning: {}: {}",
            profile.source.path.display(),
            crate::warning_text(w)
        );
    }
}

/// The FLOPs analysis's warnings on stderr beside CSV or JSON output (a table prints them).
fn warn_flops_beside(
    profile: &Profile,
    r: &warpscope_core::analysis::flops::FlopsReport,
    format: OutputFormat,
) {
    if format == OutputFormat::Table {
        return;
    }
    for w in &r.warnings {
        eprintln!("warpscope: warning: {}: {w}", profile.source.path.display());
    }
}

fn load(path: &Path, common: Common) -> Result<Profile> {
    crate::load::load_profile(path, common.timings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpscope_core::analysis::flops::PeakOverride;

    fn viewer(args: &[&str]) -> Result<crate::gui::GuiOptions> {
        let cli = Cli::try_parse_from(std::iter::once("warpscope").chain(args.iter().copied()))?;
        cli.viewer_options()
    }

    #[test]
    fn the_viewer_takes_the_peak_override() {
        let opts = viewer(&["trace.json", "--peak-tflops", "400", "--peak-gbs", "2000"]).unwrap();
        assert_eq!(
            opts.peaks,
            PeakOverride {
                tflops: Some(400.0),
                gbs: Some(2000.0)
            }
        );
        assert_eq!(opts.files, [PathBuf::from("trace.json")]);
        let opts = viewer(&["--roofline", "--peak-tflops", "400", "trace.json"]).unwrap();
        assert_eq!(opts.peaks.tflops, Some(400.0));
        assert_eq!(opts.peaks.gbs, None);
        assert!(opts.roofline);
        assert_eq!(
            viewer(&["trace.json"]).unwrap().peaks,
            PeakOverride::default()
        );
    }

    #[test]
    fn the_viewer_refuses_the_peaks_analyze_refuses() {
        for (args, message) in [
            (
                ["trace.json", "--peak-tflops=-5"],
                "--peak-tflops must be a number greater than 0",
            ),
            (
                ["trace.json", "--peak-gbs=0"],
                "--peak-gbs must be a number greater than 0",
            ),
        ] {
            let e = viewer(&args).err().expect("refused");
            assert_eq!(crate::error_text(&e), message);
        }
        // The same flags after `analyze` are analyze's, checked the same way.
        let cli = Cli::try_parse_from(["warpscope", "analyze", "t.json", "--peak-tflops=-5"]);
        assert!(cli.is_ok(), "clap leaves the check to warpscope");
        assert!(viewer(&["trace.json", "--peak-tflops", "fast"]).is_err());
    }
}
