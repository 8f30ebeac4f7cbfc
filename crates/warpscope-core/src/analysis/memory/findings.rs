//! Memory findings: what the memory figures say the user can change (`docs/memory.md`,
//! "Findings", states each rule and its thresholds). Each is advice for the person running the
//! model: batch size, allocator settings, activation checkpointing.

use serde::Serialize;

use super::{Attribution, DeviceMemory};
use crate::analysis::pct;
use crate::model::MemoryDevice;

/// Headroom: the reserved peak must stay below this share of the device's memory, in percent.
pub const HEADROOM_BELOW_PCT: f64 = 50.0;
/// Share of the device's memory a larger batch is assumed able to use, in percent.
pub const HEADROOM_USABLE_PCT: f64 = 90.0;
/// Fragmentation: reserved but unallocated memory at the allocated peak must reach this share
/// of the reserved memory then, in percent...
pub const FRAGMENTATION_MIN_PCT: f64 = 20.0;
/// ...and this many bytes.
pub const FRAGMENTATION_MIN_BYTES: i64 = 256 << 20;
/// Activations: forward-pass allocations must hold this share of the peak, in percent.
pub const ACTIVATIONS_MIN_PCT: f64 = 50.0;

/// The memory rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryRule {
    /// An allocation failed.
    OutOfMemory,
    /// Much reserved memory was not allocated at the peak.
    Fragmentation,
    /// Activations dominate the peak.
    ActivationsDominate,
    /// The peak is far below the device's memory.
    Headroom,
}

impl MemoryRule {
    /// Stable name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OutOfMemory => "out_of_memory",
            Self::Fragmentation => "fragmentation",
            Self::ActivationsDominate => "activations_dominate",
            Self::Headroom => "headroom",
        }
    }
}

/// One memory finding.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryFinding {
    /// The rule that fired.
    pub rule: MemoryRule,
    /// The device it concerns.
    pub device: MemoryDevice,
    /// The memory at stake: what the advice could free or use, in bytes (an estimate).
    pub bytes: i64,
    /// What was found and what to try, with its numbers.
    pub message: String,
}

/// True if record `i`'s operators are outside the backward pass and the optimizer (and it has
/// some). Never for NVTX ranges: their names do not say.
pub(super) fn is_forward(attribution: &Attribution, i: usize) -> bool {
    let chain = attribution.chain(i);
    !attribution.nvtx_ranges
        && chain.iter().any(|&o| o != 0)
        && chain.iter().all(|&o| {
            let name = attribution.name(o);
            let lower = name.to_ascii_lowercase();
            !(name.starts_with("autograd::")
                || lower.contains("backward")
                || lower.contains("optimizer"))
        })
}

fn gib(bytes: i64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let g = bytes as f64 / f64::from(1u32 << 30);
    format!("{g:.2} GiB")
}

/// The findings of the devices' figures, most bytes first (an out-of-memory first of all).
pub(super) fn memory_findings(devices: &[DeviceMemory]) -> Vec<MemoryFinding> {
    let mut out = Vec::new();
    for d in devices {
        let MemoryDevice::Gpu(_) = d.device else {
            continue;
        };
        let who = d.device.label();
        if let Some(oom) = d.ooms.first() {
            let top: Vec<String> = d
                .live_at_peak
                .iter()
                .take(3)
                .map(|g| format!("{} {}", g.operator, gib(g.bytes)))
                .collect();
            out.push(MemoryFinding {
                rule: MemoryRule::OutOfMemory,
                device: d.device,
                bytes: i64::try_from(oom.bytes).unwrap_or(i64::MAX),
                message: format!(
                    "{who}: {} allocation(s) failed; the first asked for {} in {} with {} \
                     allocated and {} reserved. Largest holders at the peak: {}. Lower the \
                     batch size, checkpoint activations, or set \
                     PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True if reserved is well above \
                     allocated.",
                    d.ooms.len(),
                    gib(i64::try_from(oom.bytes).unwrap_or(i64::MAX)),
                    oom.operator,
                    gib(oom.allocated_bytes),
                    gib(oom.reserved_bytes),
                    top.join(", ")
                ),
            });
        }
        let frag = d.fragmentation_at_peak_bytes;
        if frag >= FRAGMENTATION_MIN_BYTES
            && pct(frag, d.reserved_at_peak_bytes) >= FRAGMENTATION_MIN_PCT
        {
            out.push(MemoryFinding {
                rule: MemoryRule::Fragmentation,
                device: d.device,
                bytes: frag,
                message: format!(
                    "{who}: at the allocated peak {} were reserved but not allocated ({:.0}% of \
                     the {} reserved): cached blocks the allocator could not reuse for the sizes \
                     asked. Try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.",
                    gib(frag),
                    pct(frag, d.reserved_at_peak_bytes),
                    gib(d.reserved_at_peak_bytes)
                ),
            });
        }
        let growing = d.peak_allocated_bytes - d.low_allocated_bytes;
        if d.forward_live_at_peak_bytes > 0
            && pct(d.forward_live_at_peak_bytes, d.peak_allocated_bytes) >= ACTIVATIONS_MIN_PCT
        {
            out.push(MemoryFinding {
                rule: MemoryRule::ActivationsDominate,
                device: d.device,
                bytes: d.forward_live_at_peak_bytes,
                message: format!(
                    "{who}: {} of the {} peak ({:.0}%) was allocated by forward operators and \
                     still live: activations kept for the backward pass. Activation \
                     checkpointing (torch.utils.checkpoint) trades recomputation for this \
                     memory; bf16 autocast halves it.",
                    gib(d.forward_live_at_peak_bytes),
                    gib(d.peak_allocated_bytes),
                    pct(d.forward_live_at_peak_bytes, d.peak_allocated_bytes)
                ),
            });
        }
        if let Some(cap) = d.capacity_bytes.and_then(|c| i64::try_from(c).ok())
            && cap > 0
            && pct(d.peak_reserved_bytes, cap) < HEADROOM_BELOW_PCT
            && d.ooms.is_empty()
        {
            #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
            let usable = (cap as f64 * HEADROOM_USABLE_PCT / 100.0) as i64;
            let factor = if growing > 0 {
                #[allow(clippy::cast_precision_loss)]
                let f = (usable - d.low_allocated_bytes) as f64 / growing as f64;
                format!(
                    "; if what grows within the step ({}) grows with the batch, about {f:.1}x \
                     the batch would fit in {HEADROOM_USABLE_PCT:.0}% of the memory \
                     (an estimate)",
                    gib(growing)
                )
            } else {
                String::new()
            };
            out.push(MemoryFinding {
                rule: MemoryRule::Headroom,
                device: d.device,
                bytes: usable - d.peak_reserved_bytes,
                message: format!(
                    "{who}: the reserved peak is {} of {} ({:.0}%){factor}. A larger batch \
                     would use the GPU better.",
                    gib(d.peak_reserved_bytes),
                    gib(cap),
                    pct(d.peak_reserved_bytes, cap)
                ),
            });
        }
    }
    out.sort_by(|a, b| {
        (a.rule != MemoryRule::OutOfMemory)
            .cmp(&(b.rule != MemoryRule::OutOfMemory))
            .then_with(|| b.bytes.cmp(&a.bytes))
    });
    out
}
