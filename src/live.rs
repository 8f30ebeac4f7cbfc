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

/// `--timeout`: the longest one launch may run before its point fails and the sweep stops.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Timeout {
    /// Derived from the budget ([`warpscope_live::default_timeout_s`]: 20 s for the default 5 s).
    #[default]
    Default,
    /// No limit (`--timeout off`).
    Off,
    /// This many seconds (checked by [`parse_timeout`]).
    Seconds(f64),
}

/// Parses `--timeout`: a positive number of seconds (`10`, `2.5`, `10s`), at most a day, or
/// `off`.
pub fn parse_timeout(text: &str) -> Result<Timeout, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("off") {
        return Ok(Timeout::Off);
    }
    let number = text.strip_suffix('s').unwrap_or(text).trim();
    let seconds: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds (write 10, 2.5 or off)"))?;
    warpscope_live::timeout_ns(seconds)?;
    Ok(Timeout::Seconds(seconds))
}

impl Timeout {
    /// The limit in nanoseconds for a run whose budget is `budget_s` (`None`: no limit).
    pub fn limit_ns(self, budget_s: f64) -> Result<Option<u64>> {
        let seconds = match self {
            Self::Off => return Ok(None),
            Self::Default => warpscope_live::default_timeout_s(budget_s),
            Self::Seconds(s) => s,
        };
        warpscope_live::timeout_ns(seconds)
            .map(Some)
            .map_err(|e| anyhow::anyhow!("--timeout: {e}"))
    }
}

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
    /// The longest one launch may run.
    pub timeout: Timeout,
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

/// Runs the sweep and saves it if asked. After a kernel that did not finish within the time
/// limit ([`warpscope_live::context_abandoned`]), the caller must end the process with
/// [`warpscope_live::exit_now`] once it has shown the results: that is what stops the kernel.
pub fn run(opts: &LiveOptions) -> Result<LiveOutput> {
    let plan = plan(opts)?;
    // Fail before running for minutes if the output cannot be written, without touching a file
    // that is already there: try a scratch file beside it.
    if let Some(out) = &opts.out {
        check_writable(out)?;
    }
    let timeout_ns = opts.timeout.limit_ns(plan.budget_s)?;
    let progress = Arc::new(LiveProgress::default());
    let run_opts = RunOptions {
        measure_peaks: !opts.no_peaks,
        use_cupti: !opts.no_cupti,
        queue_ahead: !opts.no_queue,
        cupti_cost: opts.cupti_cost,
        timeout_ns,
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
        warpscope_core::write::save_chrome_trace(&output.profile, out)
            .with_context(|| format!("cannot save the run to {}", out.display()))?;
    }
    Ok(output)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_timeout_is_seconds_or_off_and_defaults_to_four_budgets() {
        assert_eq!(parse_timeout("10"), Ok(Timeout::Seconds(10.0)));
        assert_eq!(parse_timeout("2.5s"), Ok(Timeout::Seconds(2.5)));
        assert_eq!(parse_timeout("OFF"), Ok(Timeout::Off));
        assert!(
            parse_timeout("ten")
                .unwrap_err()
                .contains("not a number of seconds")
        );
        for bad in ["0", "-3", "inf", "NaN", "100000"] {
            let err = parse_timeout(bad).unwrap_err();
            assert!(err.starts_with("the time limit must be"), "{bad}: {err}");
        }
        assert_eq!(
            Timeout::Default.limit_ns(5.0).unwrap(),
            Some(20_000_000_000)
        );
        assert_eq!(
            Timeout::Default.limit_ns(0.5).unwrap(),
            Some(10_000_000_000)
        );
        assert_eq!(
            Timeout::Default.limit_ns(60.0).unwrap(),
            Some(240_000_000_000)
        );
        assert_eq!(
            Timeout::Seconds(3.0).limit_ns(5.0).unwrap(),
            Some(3_000_000_000)
        );
        assert_eq!(Timeout::Off.limit_ns(5.0).unwrap(), None);
    }
}
