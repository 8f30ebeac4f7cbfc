//! Findings from the FLOPs (`docs/flops.md`, section 6): matrix products far from peak at
//! awkward shapes, FP32 matrix products that could run on Tensor Cores, and much time in
//! memory-bound operators a compiler would fuse. Each states its rule, the time at stake and
//! advice at the level the user controls (model code and training settings, not kernels).

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::attribution::{Attribution, OpCall};
use super::figures::{Bound, DeviceFlops, Roofline};
use super::formulas::Family;
use super::peaks::Precision;
use crate::analysis::insight::AtStakeBasis;
use crate::model::{EventRef, Profile};
use crate::time::format_duration_ns as dur;

/// A matrix product or convolution must take this share of its device's operator GPU time,
/// in percent...
pub const SLOW_GEMM_MIN_TIME_PCT: f64 = 5.0;
/// ...and reach less than this share of its precision's peak, in percent.
pub const SLOW_GEMM_BELOW_PEAK_PCT: f64 = 30.0;
/// Sizes that are multiples of this suit Tensor Cores (16 bytes of FP16/BF16).
pub const TENSOR_CORE_MULTIPLE: i64 = 8;
/// FP32 (not TF32) matrix products and convolutions must take this share of the device's
/// operator GPU time, in percent.
pub const FP32_MATMUL_MIN_TIME_PCT: f64 = 10.0;
/// Memory-bound operators other than matrix products must take this share, in percent.
pub const MEMORY_BOUND_MIN_TIME_PCT: f64 = 20.0;
/// The share of memory-bound time fusion is assumed to remove.
pub const FUSION_SAVING: f64 = 0.5;
/// The share of FP32 matrix time TF32 or AMP is assumed to save when the device's peaks do
/// not tell.
pub const TF32_SAVING_ASSUMED: f64 = 0.5;

/// The FLOPs rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlopsRule {
    /// A matrix product or convolution far below its peak.
    GemmFarFromPeak,
    /// FP32 matrix products and convolutions off Tensor Cores.
    Fp32Matmul,
    /// Much time in memory-bound operators that fusion removes.
    MemoryBoundOps,
}

impl FlopsRule {
    /// Stable name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::GemmFarFromPeak => "gemm_far_from_peak",
            Self::Fp32Matmul => "fp32_matmul",
            Self::MemoryBoundOps => "memory_bound_ops",
        }
    }
}

/// One FLOPs finding.
#[derive(Clone, Debug, Serialize)]
pub struct FlopsFinding {
    /// The rule that fired.
    pub rule: FlopsRule,
    /// The device it concerns.
    pub device: Option<u32>,
    /// The time at stake (an estimate: a measured time scaled by an assumed saving).
    pub time_ns: i64,
    /// Always an estimate.
    pub at_stake_basis: AtStakeBasis,
    /// What was found and what to try.
    pub message: String,
    /// The operator calls behind it, longest first (at most 20).
    pub events: Vec<EventRef>,
}

/// Calls of one (device, name) with what the rules ask.
#[derive(Default)]
struct Group<'a> {
    gpu_ns: i64,
    flops: u64,
    unaligned_ns: i64,
    example: Option<String>,
    calls: Vec<&'a OpCall>,
}

/// True when the sizes a Tensor Core kernel tiles (the last two of each matrix, the channels
/// of a convolution's weight) are all multiples of [`TENSOR_CORE_MULTIPLE`]; `None` without
/// shapes.
fn aligned(profile: &Profile, c: &OpCall) -> Option<(bool, String)> {
    let track = &profile.tracks[c.event.track as usize];
    let args = profile.op_args(track, c.event.index as usize)?;
    let family = c.work?.family;
    let mut sizes: Vec<i64> = Vec::new();
    let mut shapes: Vec<String> = Vec::new();
    for t in args.tensors() {
        let s = t.shape()?;
        shapes.push(format!("{s:?}"));
        match family {
            // Channels: of the input, the weight, and the output's gradient.
            Family::Conv => {
                if s.len() >= 3 {
                    sizes.push(s[1]);
                }
            }
            _ => {
                if s.len() >= 2 {
                    sizes.extend(&s[s.len() - 2..]);
                }
            }
        }
    }
    let ok = sizes.iter().all(|d| d % TENSOR_CORE_MULTIPLE == 0);
    Some((ok, shapes.join(" × ")))
}

/// The FLOPs findings, largest time at stake first.
pub fn findings(
    profile: &Profile,
    att: &Attribution,
    devices: &[DeviceFlops],
) -> Vec<FlopsFinding> {
    let mut out = Vec::new();
    for d in devices {
        if d.op_gpu_ns <= 0 {
            continue;
        }
        let mine = att
            .calls
            .iter()
            .filter(|c| c.counted && c.device == Some(d.device) && c.gpu_ns > 0);
        let mut gemms: FxHashMap<(&str, Option<Precision>), Group<'_>> = FxHashMap::default();
        let mut fp32 = Group::default();
        let mut memory = Group::default();
        for c in mine {
            let Some(work) = c.work else { continue };
            let Some(flops) = work.flops else { continue };
            let name = profile
                .str(profile.tracks[c.event.track as usize].events.name[c.event.index as usize]);
            if matches!(work.family, Family::Matmul | Family::Conv) {
                let g = gemms.entry((name, c.precision)).or_default();
                g.gpu_ns += c.gpu_ns;
                g.flops = g.flops.saturating_add(flops);
                if let Some((ok, shapes)) = aligned(profile, c)
                    && !ok
                {
                    g.unaligned_ns += c.gpu_ns;
                    g.example.get_or_insert(shapes);
                }
                g.calls.push(c);
                if c.precision == Some(Precision::Fp32) {
                    fp32.gpu_ns += c.gpu_ns;
                    fp32.calls.push(c);
                }
            } else if matches!(
                work.family,
                Family::Elementwise | Family::Norm | Family::Reduction | Family::Copy
            ) {
                let roof = Roofline::of(
                    Some(flops),
                    work.bytes,
                    c.gpu_ns,
                    c.precision,
                    Some(&d.peaks),
                );
                if roof.bound == Some(Bound::Memory) {
                    memory.gpu_ns += c.gpu_ns;
                    memory.calls.push(c);
                }
            }
        }
        let mut names: Vec<_> = gemms.into_iter().collect();
        names.sort_by(|a, b| b.1.gpu_ns.cmp(&a.1.gpu_ns).then_with(|| a.0.cmp(&b.0)));
        for ((name, precision), g) in names {
            out.extend(far_from_peak(d, name, precision, &g));
        }
        out.extend(fp32_matmul(d, &fp32));
        out.extend(memory_bound(d, &memory));
    }
    out.sort_by(|a, b| {
        b.time_ns
            .cmp(&a.time_ns)
            .then_with(|| a.rule.cmp(&b.rule))
            .then_with(|| a.device.cmp(&b.device))
    });
    out
}

/// Share of `d`'s operator GPU time, in percent.
#[allow(clippy::cast_precision_loss)]
fn share_of(d: &DeviceFlops, ns: i64) -> f64 {
    if d.op_gpu_ns <= 0 {
        return 0.0;
    }
    100.0 * ns as f64 / d.op_gpu_ns as f64
}

/// `gemm_far_from_peak` for the calls `g` of operator `name` at `precision`.
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
fn far_from_peak(
    d: &DeviceFlops,
    name: &str,
    precision: Option<Precision>,
    g: &Group<'_>,
) -> Option<FlopsFinding> {
    let share = share_of(d, g.gpu_ns);
    if share < SLOW_GEMM_MIN_TIME_PCT {
        return None;
    }
    let pct = Roofline::of(Some(g.flops), None, g.gpu_ns, precision, Some(&d.peaks)).pct_of_peak?;
    if pct >= SLOW_GEMM_BELOW_PEAK_PCT {
        return None;
    }
    let at_stake = (g.gpu_ns as f64 * (1.0 - pct / SLOW_GEMM_BELOW_PEAK_PCT)) as i64;
    let p = precision.map_or("unknown precision", Precision::as_str);
    let advice = match &g.example {
        Some(shapes) => format!(
            "{} of it has sizes that are not multiples of {TENSOR_CORE_MULTIPLE} (e.g. \
             {shapes}): pad the layer widths, vocabulary or batch to multiples of \
             {TENSOR_CORE_MULTIPLE} (64 for large matrices) so Tensor Core kernels can tile them",
            dur(g.unaligned_ns)
        ),
        None => "its shapes are small for the GPU: a larger batch, or fewer and wider layers, \
                 gives each kernel more work"
            .to_string(),
    };
    Some(FlopsFinding {
        rule: FlopsRule::GemmFarFromPeak,
        device: Some(d.device),
        time_ns: at_stake,
        at_stake_basis: AtStakeBasis::Estimate,
        message: format!(
            "`{name}` ({p}) took {} ({share:.1}% of the operators' GPU time on GPU {}) at \
             {pct:.1}% of the {p} peak; {advice}. At stake: the time it would save at \
             {SLOW_GEMM_BELOW_PEAK_PCT:.0}% of peak.",
            dur(g.gpu_ns),
            d.device
        ),
        events: longest(&g.calls),
    })
}

/// `fp32_matmul` for the FP32 matrix calls `fp32`.
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
fn fp32_matmul(d: &DeviceFlops, fp32: &Group<'_>) -> Option<FlopsFinding> {
    let share = share_of(d, fp32.gpu_ns);
    if share < FP32_MATMUL_MIN_TIME_PCT {
        return None;
    }
    let ratio = match (
        d.peaks.flops_per_s(Precision::Fp32),
        d.peaks.flops_per_s(Precision::Tf32),
    ) {
        (Some(a), Some(b)) if b > a => 1.0 - a / b,
        _ => TF32_SAVING_ASSUMED,
    };
    Some(FlopsFinding {
        rule: FlopsRule::Fp32Matmul,
        device: Some(d.device),
        time_ns: (fp32.gpu_ns as f64 * ratio) as i64,
        at_stake_basis: AtStakeBasis::Estimate,
        message: format!(
            "Matrix products and convolutions in plain FP32 took {} ({share:.1}% of the \
             operators' GPU time on GPU {}). Allow TF32 \
             (`torch.set_float32_matmul_precision(\"high\")`) or train with autocast in \
             bf16/fp16 so they run on Tensor Cores. At stake: their time scaled by the \
             FP32-to-TF32 peak ratio.",
            dur(fp32.gpu_ns),
            d.device
        ),
        events: longest(&fp32.calls),
    })
}

/// `memory_bound_ops` for the memory-bound calls `memory`.
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
fn memory_bound(d: &DeviceFlops, memory: &Group<'_>) -> Option<FlopsFinding> {
    let share = share_of(d, memory.gpu_ns);
    if share < MEMORY_BOUND_MIN_TIME_PCT {
        return None;
    }
    Some(FlopsFinding {
        rule: FlopsRule::MemoryBoundOps,
        device: Some(d.device),
        time_ns: (memory.gpu_ns as f64 * FUSION_SAVING) as i64,
        at_stake_basis: AtStakeBasis::Estimate,
        message: format!(
            "Memory-bound elementwise, normalisation and copy operators took {} ({share:.1}% \
             of the operators' GPU time on GPU {}): each reads and writes whole tensors for \
             little arithmetic. `torch.compile` fuses chains of them into fewer kernels. At \
             stake: {:.0}% of their time (assumed).",
            dur(memory.gpu_ns),
            d.device,
            FUSION_SAVING * 100.0
        ),
        events: longest(&memory.calls),
    })
}

/// The events of the longest calls, at most 20.
fn longest(calls: &[&OpCall]) -> Vec<EventRef> {
    let mut v: Vec<&OpCall> = calls.to_vec();
    v.sort_by(|a, b| b.gpu_ns.cmp(&a.gpu_ns).then_with(|| a.event.cmp(&b.event)));
    v.into_iter().take(20).map(|c| c.event).collect()
}
