//! How the widgets print the figures of the FLOPs analysis
//! ([`warpscope_core::analysis::flops`], rules in `docs/flops.md`): FLOP counts, rates, peaks
//! and their sources; and the analysis of a profile over a range, kept between frames.

use warpscope_core::analysis::flops::{
    DevicePeaks, FlopsReport, PeakOverride, Precision, flops_report,
};
use warpscope_core::{Profile, TimeRange};

use crate::ProfileKey;

/// What stands for a figure that is unknown (never 0).
pub const UNKNOWN: &str = "—";

/// A FLOP count with an SI prefix and four significant digits: `812 FLOP`, `1.234 GFLOP`,
/// `4.112 PFLOP`.
pub fn format_flops(flops: f64) -> String {
    const PREFIXES: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    let mut value = flops;
    let mut i = 0;
    while value.abs() >= 1000.0 && i + 1 < PREFIXES.len() {
        value /= 1000.0;
        i += 1;
    }
    if i == 0 {
        return format!("{value:.0} FLOP");
    }
    let decimals = if value.abs() >= 100.0 {
        1
    } else if value.abs() >= 10.0 {
        2
    } else {
        3
    };
    format!("{value:.decimals$} {}FLOP", PREFIXES[i])
}

/// A rate in TFLOP/s, to three significant digits at least (`0.0123`, `4.56`, `312.4`).
pub fn format_tflops(tflops_per_s: f64) -> String {
    if tflops_per_s >= 100.0 {
        format!("{tflops_per_s:.1}")
    } else if tflops_per_s >= 1.0 {
        format!("{tflops_per_s:.2}")
    } else if tflops_per_s >= 0.01 {
        format!("{tflops_per_s:.3}")
    } else {
        format!("{tflops_per_s:.2e}")
    }
}

/// A precision as users write it (`FP32`, `BF16`).
pub fn precision_name(p: Precision) -> String {
    p.as_str().to_uppercase()
}

/// Where the peaks of a device come from, for the user: the user's override (`user override:
/// 400 TFLOP/s`), the peaks table's row (`peaks table, NVIDIA H200: <its source>`), one for
/// each figure, or neither (an unknown device, with how to give them).
pub fn peak_source(peaks: &DevicePeaks) -> String {
    let row = peaks
        .row
        .map(|r| format!("peaks table, {}: {}", r.model, r.source));
    match (peaks.over.tflops, peaks.over.gbs, row) {
        (Some(t), Some(g), _) => format!("user override: {t} TFLOP/s, {g} GB/s"),
        (Some(t), None, Some(row)) => {
            format!("user override: {t} TFLOP/s; bandwidth from {row}")
        }
        (None, Some(g), Some(row)) => format!("{row}; bandwidth: user override {g} GB/s"),
        (None, None, Some(row)) => row,
        (Some(t), None, None) => {
            format!("user override: {t} TFLOP/s; no bandwidth known (give GB/s too)")
        }
        (None, Some(g), None) => {
            format!("user override: {g} GB/s; no TFLOP/s peak known (give TFLOP/s too)")
        }
        (None, None, None) => "unknown device: not in the peaks table (type its peaks in the \
             Roofline view, or start with --peak-tflops and --peak-gbs)"
            .to_string(),
    }
}

/// The peak a figure at precision `p` on a device with `peaks` is measured against, and where
/// it comes from ([`peak_source`]): `BF16 peak 989.5 TFLOP/s, memory 4800 GB/s (peaks table,
/// NVIDIA H200: <source>)`; the precision or device being unknown said plainly.
pub fn peak_text(peaks: Option<&DevicePeaks>, p: Option<Precision>) -> String {
    let Some(peaks) = peaks else {
        return "no GPU known for it: no peak".to_string();
    };
    let source = peak_source(peaks);
    let Some(p) = p else {
        return format!("precision unknown: no peak ({source})");
    };
    let bandwidth = peaks
        .bytes_per_s()
        .map_or_else(String::new, |b| format!(", memory {:.0} GB/s", b * 1e-9));
    match peaks.flops_per_s(p) {
        Some(f) => format!(
            "{} peak {} TFLOP/s{bandwidth} ({source})",
            precision_name(p),
            format_tflops(f * 1e-12)
        ),
        None => format!("no {} peak ({source})", precision_name(p)),
    }
}

/// The FLOPs analysis of the last profile, range and peak override asked for, computed again
/// only when one of them changes.
#[derive(Default)]
pub struct FlopsCache {
    key: Option<(ProfileKey, TimeRange, PeakOverride)>,
    report: Option<FlopsReport>,
    computations: u64,
}

impl FlopsCache {
    /// The analysis of `profile` over `range`, with the peaks `over`ridden where the user says.
    pub fn get(&mut self, profile: &Profile, range: TimeRange, over: PeakOverride) -> &FlopsReport {
        let key = (ProfileKey::of(profile), range, over);
        if self.key != Some(key) {
            self.key = Some(key);
            self.report = None;
        }
        if self.report.is_none() {
            self.computations += 1;
        }
        self.report
            .get_or_insert_with(|| flops_report(profile, range, over))
    }

    /// The analysis last computed, if any.
    pub fn report(&self) -> Option<&FlopsReport> {
        self.report.as_ref()
    }

    /// How many times the analysis ran.
    pub fn computations(&self) -> u64 {
        self.computations
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flop_counts_read_with_prefixes() {
        assert_eq!(format_flops(812.0), "812 FLOP");
        assert_eq!(format_flops(1_234_000_000.0), "1.234 GFLOP");
        assert_eq!(format_flops(45_670_000_000_000.0), "45.67 TFLOP");
        assert_eq!(format_flops(4.112e15), "4.112 PFLOP");
        assert_eq!(format_tflops(312.44), "312.4");
        assert_eq!(format_tflops(4.5612), "4.56");
        assert_eq!(format_tflops(0.0123), "0.012");
    }

    #[test]
    fn peaks_name_their_precision_and_source() {
        let h200 = DevicePeaks::of("NVIDIA H200", PeakOverride::default());
        let text = peak_text(Some(&h200), Some(Precision::Bf16));
        assert!(
            text.starts_with(
                "BF16 peak 989.5 TFLOP/s, memory 4800 GB/s (peaks table, NVIDIA H200: "
            )
        );
        let unknown = DevicePeaks::of("Mystery GPU", PeakOverride::default());
        assert!(peak_text(Some(&unknown), Some(Precision::Fp32)).contains("unknown device"));
        assert_eq!(peak_text(None, None), "no GPU known for it: no peak");
    }

    #[test]
    fn the_source_says_user_override_or_the_table_row() {
        let over = |tflops, gbs| PeakOverride { tflops, gbs };
        let mine = DevicePeaks::of("Mystery GPU", over(Some(400.0), Some(2000.0)));
        assert_eq!(peak_source(&mine), "user override: 400 TFLOP/s, 2000 GB/s");
        assert_eq!(
            peak_text(Some(&mine), Some(Precision::Tf32)),
            "TF32 peak 400.0 TFLOP/s, memory 2000 GB/s (user override: 400 TFLOP/s, 2000 GB/s)"
        );
        let half = DevicePeaks::of("NVIDIA H200", over(Some(400.0), None));
        assert!(
            peak_source(&half)
                .starts_with("user override: 400 TFLOP/s; bandwidth from peaks table, NVIDIA H200")
        );
        let table = DevicePeaks::of("NVIDIA H200", PeakOverride::default());
        assert!(peak_source(&table).starts_with("peaks table, NVIDIA H200: NVIDIA H200 Tensor"));
        let alone = DevicePeaks::of("Mystery GPU", over(Some(400.0), None));
        assert!(peak_source(&alone).contains("no bandwidth known"));
    }
}
