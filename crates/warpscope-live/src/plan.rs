//! Sweep planning: which (configuration, size) points a run measures, parsed from the user's
//! `--sizes` and `--configs`, and checked against the kernel's limits before anything launches.

use std::sync::Arc;

use crate::catalog::{ConfigSpec, KernelSpec, SizeUnit, Target, USER_KERNEL};
use crate::error::LiveError;
use crate::user::UserKernel;

/// One point of a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    /// Launch configuration.
    pub config: &'static ConfigSpec,
    /// Size, in the kernel's [`SizeUnit`].
    pub size: u64,
    /// Threads per block when a `--blocks` sweep sets it; `None`: the configuration's own.
    pub block: Option<u32>,
}

/// A planned sweep: every configuration at every size, configuration by configuration.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    /// The kernel.
    pub kernel: &'static KernelSpec,
    /// Sizes, ascending, without duplicates.
    pub sizes: Vec<u64>,
    /// Configurations, in catalogue order.
    pub configs: Vec<&'static ConfigSpec>,
    /// Untimed launches before the timed ones, per configuration.
    pub warmup: u32,
    /// Timed launches per point.
    pub repeat: u32,
    /// Stop repeating a point once its timed launches add up to this many seconds (at least
    /// one launch is always timed), so a one-thread launch over 100 M floats does not run for
    /// minutes.
    pub budget_s: f64,
    /// Block sizes of a launch-configuration sweep (empty: each configuration's own block).
    pub blocks: Vec<u32>,
    /// The user's kernel, when [`SweepPlan::kernel`] is [`USER_KERNEL`].
    pub user: Option<Arc<UserKernel>>,
    /// Launches per pair of CUDA events (`--batch`): each timed operation is this many
    /// back-to-back launches with the L2 cache flushed once before them, and its time is the
    /// events' elapsed time divided by it. 1: one launch per event pair, the L2 flushed before
    /// each.
    pub batch: u32,
}

/// The most launches one pair of CUDA events may hold (`--batch`).
pub const MAX_BATCH: u32 = 10_000;

/// The time of one launch of a batch: the events' elapsed time over `batch` launches, rounded
/// to the nearest nanosecond.
pub fn per_launch_ns(elapsed_ns: i64, batch: u32) -> i64 {
    let k = i64::from(batch.max(1));
    (elapsed_ns + k / 2).div_euclid(k)
}

impl SweepPlan {
    /// Plans `kernel` over `sizes` (default: the kernel's) and the configurations named in
    /// `configs` (default: all).
    pub fn new(
        kernel: &'static KernelSpec,
        sizes: Option<&[u64]>,
        configs: Option<&[String]>,
        repeat: u32,
        warmup: u32,
    ) -> Result<Self, LiveError> {
        let mut sizes = sizes.unwrap_or(kernel.default_sizes).to_vec();
        sizes.sort_unstable();
        sizes.dedup();
        if sizes.is_empty() {
            return Err(LiveError::Plan("no sizes given".into()));
        }
        if let Some(&s) = sizes.iter().find(|&&s| s == 0 || s > kernel.max_size) {
            return Err(LiveError::Plan(format!(
                "size {} is out of range for {}: sizes ({}) go from 1 to {}",
                format_size(s, kernel.size_unit),
                kernel.name,
                kernel.size_unit.as_str(),
                format_size(kernel.max_size, kernel.size_unit)
            )));
        }
        let configs: Vec<&'static ConfigSpec> = match configs {
            None => kernel.configs.iter().collect(),
            Some(names) => {
                let mut picked = Vec::new();
                for name in names {
                    let c = kernel.config(name.trim()).ok_or_else(|| {
                        LiveError::Plan(format!(
                            "{} has no configuration {:?}; it has: {}",
                            kernel.name,
                            name.trim(),
                            kernel.config_names()
                        ))
                    })?;
                    if !picked.contains(&c) {
                        picked.push(c);
                    }
                }
                // Catalogue order, so tables and plots read the same whatever the user typed.
                kernel
                    .configs
                    .iter()
                    .filter(|c| picked.contains(c))
                    .collect()
            }
        };
        if configs.is_empty() {
            return Err(LiveError::Plan("no configurations given".into()));
        }
        if repeat == 0 {
            return Err(LiveError::Plan("--repeat must be at least 1".into()));
        }
        for c in &configs {
            if let Some(&s) = sizes.iter().find(|&&s| s % c.size_multiple != 0) {
                return Err(LiveError::Plan(format!(
                    "{} {} needs sizes that are multiples of {}; {s} is not",
                    kernel.name, c.name, c.size_multiple
                )));
            }
        }
        Ok(Self {
            kernel,
            sizes,
            configs,
            warmup,
            repeat,
            budget_s: 5.0,
            blocks: Vec::new(),
            user: None,
            batch: 1,
        })
    }

    /// Plans a user kernel over `sizes` (default: 1M, 10M, 100M), checking every expression at
    /// every size (and block size) before anything runs.
    pub fn for_user(
        user: UserKernel,
        sizes: Option<&[u64]>,
        blocks: &[u32],
        repeat: u32,
        warmup: u32,
    ) -> Result<Self, LiveError> {
        let mut plan = Self::new(&USER_KERNEL, sizes, None, repeat, warmup)?;
        user.validate(&plan.sizes, blocks)?;
        let threads: Vec<Option<u32>> = if blocks.is_empty() {
            vec![None]
        } else {
            blocks.iter().copied().map(Some).collect()
        };
        // Read once: the form asks again at every keystroke.
        let available_kb = crate::host::host_available_kb();
        for &n in &plan.sizes {
            for &b in &threads {
                let need = user.host_bytes(user.vars(n, b))?;
                let what = format!("{} at N = {n}", user.kernel);
                crate::host::check_memory_against(&what, need, available_kb)?;
            }
        }
        plan.blocks = blocks.to_vec();
        plan.user = Some(Arc::new(user));
        Ok(plan)
    }

    /// Sweeps the block size of every configuration over `blocks` (threads per block, 1-D).
    /// Only configurations whose block the kernel lets you choose can be swept.
    pub fn with_blocks(mut self, blocks: &[u32]) -> Result<Self, LiveError> {
        if let Some(c) = self
            .configs
            .iter()
            .find(|c| c.block.is_none() || c.target == Target::Cpu)
        {
            let sweepable: Vec<_> = self
                .kernel
                .configs
                .iter()
                .filter(|c| c.block.is_some())
                .map(|c| c.name)
                .collect();
            return Err(LiveError::Plan(if sweepable.is_empty() {
                format!(
                    "{} has no configuration whose block size can change (--blocks)",
                    self.kernel.name
                )
            } else {
                format!(
                    "{} {} has a fixed launch shape; --blocks works with: {} (pick them with \
                     --configs)",
                    self.kernel.name,
                    c.name,
                    sweepable.join(", ")
                )
            }));
        }
        if let Some(b) = blocks.iter().find(|&&b| b % 32 != 0) {
            return Err(LiveError::Plan(format!(
                "block size {b}: the bundled kernels take whole warps (multiples of 32)"
            )));
        }
        self.blocks = blocks.to_vec();
        Ok(self)
    }

    /// Times `batch` back-to-back launches between each pair of CUDA events (`--batch`), the
    /// L2 cache flushed once before them, so the events' fixed cost is shared by `batch`
    /// launches. Refuses 0 and more than [`MAX_BATCH`].
    pub fn with_batch(mut self, batch: u32) -> Result<Self, LiveError> {
        if batch == 0 || batch > MAX_BATCH {
            return Err(LiveError::Plan(format!(
                "--batch {batch}: a batch is 1 to {MAX_BATCH} launches per pair of CUDA events \
                 (1, the default, times each launch on its own)"
            )));
        }
        self.batch = batch;
        Ok(self)
    }

    /// True once timed operations adding up to `spent_ns` (a batch counts all its launches)
    /// have used the plan's time budget, so a point stops repeating.
    pub fn budget_reached(&self, spent_ns: i64) -> bool {
        spent_ns as f64 * 1e-9 >= self.budget_s
    }

    /// The block sizes each configuration runs with (`None`: its own).
    fn block_list(&self) -> Vec<Option<u32>> {
        if self.blocks.is_empty() {
            vec![None]
        } else {
            self.blocks.iter().map(|&b| Some(b)).collect()
        }
    }

    /// The name a run is known by: the bundled kernel's, or the user kernel's.
    pub fn kernel_name(&self) -> &str {
        self.user
            .as_deref()
            .map_or(self.kernel.name, |u| u.kernel.as_str())
    }

    /// The points, configuration by configuration, block size by block size, sizes ascending.
    pub fn points(&self) -> Vec<Point> {
        let blocks = self.block_list();
        let mut out = Vec::new();
        for &config in &self.configs {
            for &block in &blocks {
                for &size in &self.sizes {
                    out.push(Point {
                        config,
                        size,
                        block,
                    });
                }
            }
        }
        out
    }

    /// Number of timed operations planned (warm-ups included), for progress bars. A batch is
    /// one operation; a batched plan adds one single launch per point, whose result is checked.
    pub fn launches(&self) -> u64 {
        // Saturating: --repeat 4294967295 over many sizes and blocks passes u64 (debug builds
        // panicked on the overflow, release ones wrapped to a small progress total).
        let groups = (self.configs.len() as u64).saturating_mul(self.block_list().len() as u64);
        let points = groups.saturating_mul(self.sizes.len() as u64);
        points
            .saturating_mul(u64::from(self.repeat))
            .saturating_add(groups.saturating_mul(u64::from(self.warmup)))
            .saturating_add(self.check_launches())
    }

    /// The single launches a batched plan adds, one per point, so the check against the
    /// reference sees the result of one launch (kernels that update a buffer in place, such as
    /// `y = a*x + y`, would otherwise show a batch's accumulated result). 0 without batching.
    pub fn check_launches(&self) -> u64 {
        if self.batch > 1 {
            (self.configs.len() as u64)
                .saturating_mul(self.block_list().len() as u64)
                .saturating_mul(self.sizes.len() as u64)
        } else {
            0
        }
    }

    /// Kernel launches planned at most (the budget can stop a point sooner): every timed
    /// operation and warm-up is `batch` launches, plus the single check launches.
    pub fn kernel_launches(&self) -> u64 {
        self.launches()
            .saturating_sub(self.check_launches())
            .saturating_mul(u64::from(self.batch))
            .saturating_add(self.check_launches())
    }
}

/// Parses a list of sizes: `1M,5M,10M`, `1e6`, `4096`, `64KiB`, `1GB`. `K`, `M`, `G` are powers
/// of 1000 (one million floats is `1M`), `Ki`, `Mi`, `Gi` powers of 1024; a trailing `B` is
/// allowed.
pub fn parse_sizes(text: &str) -> Result<Vec<u64>, LiveError> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(parse_size)
        .collect()
}

fn parse_size(text: &str) -> Result<u64, LiveError> {
    let bad = || {
        LiveError::Plan(format!(
            "cannot read size {text:?}: use numbers like 1000, 1e6, 5M, 64Ki or 1GB"
        ))
    };
    let t = text.strip_suffix(['B', 'b']).unwrap_or(text);
    let (digits, factor) = [
        ("Ki", 1u64 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("K", 1_000),
        ("k", 1_000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
    ]
    .iter()
    .find_map(|&(suffix, f)| t.strip_suffix(suffix).map(|d| (d, f)))
    .unwrap_or((t, 1));
    let digits = digits.trim();
    if let Ok(n) = digits.parse::<u64>() {
        return n.checked_mul(factor).ok_or_else(bad);
    }
    let value: f64 = digits.parse().map_err(|_| bad())?;
    let total = value * factor as f64;
    if !total.is_finite() || total < 1.0 || total.fract() != 0.0 || total > 1e18 {
        return Err(bad());
    }
    Ok(total as u64)
}

/// A size as people write it: `1M`, `5M`, `250K`, `4096`, `64 KiB`.
pub fn format_size(size: u64, unit: SizeUnit) -> String {
    if unit == SizeUnit::Bytes {
        return match size {
            s if s >= 1 << 30 && s % (1 << 30) == 0 => format!("{} GiB", s >> 30),
            s if s >= 1 << 20 && s % (1 << 20) == 0 => format!("{} MiB", s >> 20),
            s if s >= 1 << 10 && s % (1 << 10) == 0 => format!("{} KiB", s >> 10),
            s => format!("{s} B"),
        };
    }
    match size {
        s if s >= 1_000_000_000 && s % 1_000_000_000 == 0 => format!("{}G", s / 1_000_000_000),
        s if s >= 1_000_000 && s % 1_000_000 == 0 => format!("{}M", s / 1_000_000),
        s if s >= 10_000 && s % 1_000 == 0 => format!("{}K", s / 1_000),
        s => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::kernel;

    #[test]
    fn sizes_parse_like_people_write_them() {
        assert_eq!(
            parse_sizes("1M,5M, 10M,50M,100M").unwrap(),
            [1_000_000, 5_000_000, 10_000_000, 50_000_000, 100_000_000]
        );
        assert_eq!(
            parse_sizes("1e6,2.5K,4096").unwrap(),
            [1_000_000, 2_500, 4096]
        );
        assert_eq!(
            parse_sizes("64KiB,1MiB,1GB").unwrap(),
            [65_536, 1_048_576, 1_000_000_000]
        );
        for bad in ["x", "1.5", "-3", "0.0001K", "1Q", "99999999999G"] {
            let err = parse_sizes(bad).unwrap_err().to_string();
            assert!(err.contains("cannot read size"), "{bad}: {err}");
        }
    }

    #[test]
    fn sizes_format_back() {
        assert_eq!(format_size(1_000_000, SizeUnit::Floats), "1M");
        assert_eq!(format_size(250_000, SizeUnit::Floats), "250K");
        assert_eq!(format_size(4096, SizeUnit::MatrixSide), "4096");
        assert_eq!(format_size(1 << 20, SizeUnit::Bytes), "1 MiB");
        assert_eq!(format_size(1000, SizeUnit::Bytes), "1000 B");
    }

    #[test]
    fn default_plan_is_every_config_at_every_default_size() {
        let k = kernel("vector_add").unwrap();
        let plan = SweepPlan::new(k, None, None, 5, 1).unwrap();
        let points = plan.points();
        assert_eq!(points.len(), 7 * 5);
        assert_eq!(points[0].config.name, "1x1-device");
        assert_eq!(points[0].size, 1_000_000);
        assert_eq!(points[4].size, 100_000_000);
        assert_eq!(points[34].config.name, "cpu");
        assert_eq!(plan.launches(), 35 * 5 + 7);
    }

    #[test]
    fn chosen_configs_keep_catalogue_order_and_sizes_sort() {
        let k = kernel("vector_add").unwrap();
        let configs = ["cpu".to_string(), "grid-device".into(), "cpu".into()];
        let plan = SweepPlan::new(k, Some(&[10, 1, 10]), Some(&configs), 3, 0).unwrap();
        let names: Vec<_> = plan.configs.iter().map(|c| c.name).collect();
        assert_eq!(names, ["grid-device", "cpu"]);
        assert_eq!(plan.sizes, [1, 10]);
    }

    #[test]
    fn bad_plans_say_what_is_wrong() {
        let k = kernel("sgemm").unwrap();
        let err = SweepPlan::new(k, None, Some(&["fast".into()]), 1, 0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "sgemm has no configuration \"fast\"; it has: naive, tiled, regblock, tensor, cublas, \
             cublas-tf32, cublas-fp16"
        );
        let err = SweepPlan::new(k, Some(&[100_000]), None, 1, 0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "size 100K is out of range for sgemm: sizes (m = n = k) go from 1 to 16384"
        );
        let err = SweepPlan::new(k, Some(&[]), None, 1, 0).unwrap_err();
        assert_eq!(err.to_string(), "no sizes given");
        let err = SweepPlan::new(k, None, None, 0, 0).unwrap_err();
        assert!(err.to_string().contains("--repeat"), "{err}");
        let err = SweepPlan::new(k, Some(&[1000]), Some(&["regblock".into()]), 1, 0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "sgemm regblock needs sizes that are multiples of 128; 1000 is not"
        );
    }

    #[test]
    fn block_sweeps_multiply_the_points_and_need_a_free_block() {
        let k = kernel("copy").unwrap();
        let configs = ["scalar".to_string()];
        let plan = SweepPlan::new(k, Some(&[1_000_000]), Some(&configs), 3, 1)
            .unwrap()
            .with_blocks(&[32, 64, 1024])
            .unwrap();
        let points = plan.points();
        let blocks: Vec<_> = points.iter().map(|p| p.block).collect();
        assert_eq!(blocks, [Some(32), Some(64), Some(1024)]);
        assert_eq!(plan.launches(), 3 * 3 + 3);
        let err = SweepPlan::new(k, None, None, 3, 1)
            .unwrap()
            .with_blocks(&[64])
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "copy memcpy has a fixed launch shape; --blocks works with: scalar, vec4 (pick them \
             with --configs)"
        );
        let sgemm = SweepPlan::new(kernel("sgemm").unwrap(), None, None, 3, 1).unwrap();
        assert!(
            sgemm
                .with_blocks(&[64])
                .unwrap_err()
                .to_string()
                .contains("no configuration whose block size can change")
        );
        let err = SweepPlan::new(k, None, Some(&configs), 3, 1)
            .unwrap()
            .with_blocks(&[48])
            .unwrap_err();
        assert!(err.to_string().contains("multiples of 32"), "{err}");
    }

    #[test]
    fn a_batch_is_one_to_ten_thousand_launches_and_counts_in_full() {
        let k = kernel("sgemm").unwrap();
        let configs = ["regblock".to_string(), "tensor".into()];
        let plan = || SweepPlan::new(k, Some(&[1024, 2048, 4096]), Some(&configs), 20, 1).unwrap();
        for bad in [0, MAX_BATCH + 1] {
            let err = plan().with_batch(bad).unwrap_err().to_string();
            assert_eq!(
                err,
                format!(
                    "--batch {bad}: a batch is 1 to 10000 launches per pair of CUDA events (1, \
                     the default, times each launch on its own)"
                )
            );
        }
        // Unbatched: 6 points x 20 timed + 2 configurations x 1 warm-up, no check launches.
        let one = plan();
        assert_eq!(one.batch, 1);
        assert_eq!((one.launches(), one.check_launches()), (122, 0));
        assert_eq!(one.kernel_launches(), 122);
        // --batch 20: the same 122 timed operations and warm-ups, each 20 launches, plus one
        // single launch per point whose result is checked.
        let batched = plan().with_batch(20).unwrap();
        assert_eq!(batched.check_launches(), 6);
        assert_eq!(batched.launches(), 128);
        assert_eq!(batched.kernel_launches(), 122 * 20 + 6);
        assert_eq!(plan().with_batch(MAX_BATCH).unwrap().batch, 10_000);
        // --repeat 4294967295 --batch 10000 over 500,000 sizes of saxpy (one configuration):
        // 500,000 × (2^32 − 1) × 10,000 launches pass u64::MAX; the count stops there instead
        // of overflowing (a panic in debug builds, a wrapped progress total in release ones).
        let sizes: Vec<u64> = (1..=500_000).map(|i| i * 16).collect();
        let huge = SweepPlan::new(
            kernel("saxpy").unwrap(),
            Some(&sizes),
            None,
            u32::MAX,
            u32::MAX,
        )
        .unwrap()
        .with_batch(MAX_BATCH)
        .unwrap();
        let groups = huge.configs.len() as u64;
        assert_eq!(
            huge.launches(),
            groups * 500_000 * u64::from(u32::MAX)
                + groups * u64::from(u32::MAX)
                + groups * 500_000
        );
        assert_eq!(huge.kernel_launches(), u64::MAX);
    }

    #[test]
    fn a_batch_is_timed_per_launch_and_budgeted_in_full() {
        // 20 launches in 349 us of events: 17.45 us each, rounded to the nanosecond.
        assert_eq!(per_launch_ns(349_000, 20), 17_450);
        assert_eq!(per_launch_ns(349_010, 20), 17_451);
        assert_eq!(per_launch_ns(18_300, 1), 18_300);
        let mut plan = SweepPlan::new(kernel("sgemm").unwrap(), Some(&[4096]), None, 5, 0)
            .unwrap()
            .with_batch(20)
            .unwrap();
        plan.budget_s = 0.01;
        // The budget counts everything a batch ran: 20 launches of 400 us use 8 ms of it.
        assert!(!plan.budget_reached(20 * 400_000));
        assert!(plan.budget_reached(2 * 20 * 400_000));
    }
}
