//! Sweep planning: which (configuration, size) points a run measures, parsed from the user's
//! `--sizes` and `--configs`, and checked against the kernel's limits before anything launches.

use crate::catalog::{ConfigSpec, KernelSpec, SizeUnit};
use crate::error::LiveError;

/// One point of a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    /// Launch configuration.
    pub config: &'static ConfigSpec,
    /// Size, in the kernel's [`SizeUnit`].
    pub size: u64,
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
        Ok(Self {
            kernel,
            sizes,
            configs,
            warmup,
            repeat,
            budget_s: 5.0,
        })
    }

    /// The points, configuration by configuration, sizes ascending.
    pub fn points(&self) -> Vec<Point> {
        self.configs
            .iter()
            .flat_map(|&config| self.sizes.iter().map(move |&size| Point { config, size }))
            .collect()
    }

    /// Number of launches planned (warm-ups included), for progress bars.
    pub fn launches(&self) -> u64 {
        let points = (self.configs.len() * self.sizes.len()) as u64;
        points * u64::from(self.repeat) + self.configs.len() as u64 * u64::from(self.warmup)
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
            "sgemm has no configuration \"fast\"; it has: naive, tiled, cublas"
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
    }
}
