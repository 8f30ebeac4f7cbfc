//! `warpscope live`: plans a sweep from the command line, runs it with progress on stderr,
//! prints the results, and saves the run as Chrome trace JSON when asked.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use warpscope_live::{
    LiveOutput, LiveProgress, RunOptions, SweepPlan, UserKernel, UserRequest, kernel, parse_blocks,
    parse_sizes,
};

/// What `warpscope live KERNEL ...` asked for.
#[derive(Debug, Clone)]
pub struct LiveOptions {
    /// Kernel name.
    pub kernel: String,
    /// The user's own kernel (`--source`), instead of a bundled one.
    pub user: Option<UserRequest>,
    /// `--blocks` as typed.
    pub blocks: Option<String>,
    /// Time every point again with CUPTI paused.
    pub cupti_cost: bool,
    /// `--sizes` as typed.
    pub sizes: Option<String>,
    /// `--configs`.
    pub configs: Option<Vec<String>>,
    /// Timed launches per point.
    pub repeat: u32,
    /// Untimed launches per configuration.
    pub warmup: u32,
    /// Seconds of timed launches after which a point stops repeating.
    pub budget_s: f64,
    /// Launches per pair of CUDA events (`--batch`, 1 to 10000).
    pub batch: u32,
    /// Where to save the run as Chrome trace JSON.
    pub out: Option<PathBuf>,
    /// Skip CUPTI.
    pub no_cupti: bool,
    /// Skip the peak measurements.
    pub no_peaks: bool,
    /// Do not queue timed launches behind a held stream.
    pub no_queue: bool,
    /// Print progress to stderr.
    pub progress: bool,
}

/// Plans the sweep `opts` describes, or says what is wrong with it.
pub fn plan(opts: &LiveOptions) -> Result<SweepPlan> {
    let blocks = opts
        .blocks
        .as_deref()
        .map(parse_blocks)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    if let Some(req) = &opts.user {
        if opts.configs.is_some() {
            bail!(
                "--configs picks configurations of a bundled kernel; your own kernel (--source) \
                 has none"
            );
        }
        let user = UserKernel::from_request(req)?;
        let sizes = opts.sizes.as_deref().map(parse_sizes).transpose()?;
        let mut plan = SweepPlan::for_user(
            user,
            sizes.as_deref(),
            blocks.as_deref().unwrap_or_default(),
            opts.repeat,
            opts.warmup,
        )?;
        if !opts.budget_s.is_finite() || opts.budget_s <= 0.0 {
            bail!("--budget must be a positive number of seconds");
        }
        plan.budget_s = opts.budget_s;
        return Ok(plan.with_batch(opts.batch)?);
    }
    let Some(spec) = kernel(&opts.kernel) else {
        let names: Vec<_> = warpscope_live::CATALOG.iter().map(|k| k.name).collect();
        bail!(
            "no bundled kernel {:?}; the kernels are: {} (see `warpscope live --list`)",
            opts.kernel,
            names.join(", ")
        );
    };
    let sizes = opts.sizes.as_deref().map(parse_sizes).transpose()?;
    let mut plan = SweepPlan::new(
        spec,
        sizes.as_deref(),
        opts.configs.as_deref(),
        opts.repeat,
        opts.warmup,
    )?;
    if let Some(blocks) = &blocks {
        plan = plan.with_blocks(blocks)?;
    }
    if !opts.budget_s.is_finite() || opts.budget_s <= 0.0 {
        bail!("--budget must be a positive number of seconds");
    }
    plan.budget_s = opts.budget_s;
    Ok(plan.with_batch(opts.batch)?)
}

/// Checks that a file can be created in `out`'s folder (a missing folder, no permission).
fn check_writable(out: &Path) -> Result<()> {
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let probe = dir.join(format!(".warpscope-write-check-{}", std::process::id()));
    std::fs::File::create(&probe).with_context(|| format!("cannot write {}", out.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Runs the sweep and saves it if asked.
pub fn run(opts: &LiveOptions) -> Result<LiveOutput> {
    let plan = plan(opts)?;
    // Fail before running for minutes if the output cannot be written, without touching a file
    // that is already there: try a scratch file beside it.
    if let Some(out) = &opts.out {
        check_writable(out)?;
    }
    let progress = Arc::new(LiveProgress::default());
    let run_opts = RunOptions {
        measure_peaks: !opts.no_peaks,
        use_cupti: !opts.no_cupti,
        queue_ahead: !opts.no_queue,
        cupti_cost: opts.cupti_cost,
        profile_path: opts
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("live {}", plan.kernel_name()))),
    };
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reporter = opts.progress.then(|| {
        let (progress, done) = (Arc::clone(&progress), Arc::clone(&done));
        std::thread::spawn(move || {
            let mut last = String::new();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let status = progress.status();
                if status != last && !status.is_empty() {
                    let (n, total) = progress.counts();
                    eprintln!("[{n}/{total}] {status}");
                    last = status;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    });
    let result = warpscope_live::run_sweep(&plan, &run_opts, &progress);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    if let Some(r) = reporter {
        let _ = r.join();
    }
    let output = result?;
    if let Some(out) = &opts.out {
        warpscope_core::export::save_chrome_trace(&output.profile, out)
            .with_context(|| format!("cannot save the run to {}", out.display()))?;
    }
    Ok(output)
}
