//! The findings about GPU work itself: pageable copies, FP32 GEMMs off Tensor Cores and low
//! occupancy (`docs/analysis.md`, section 7). Their time at stake is an estimate: a measured
//! time scaled by an assumed speed-up, counting kernels only where they are on the critical path
//! ([`DeviceChain::critical_ns`]), and advice is given only at the level the kernel's owner
//! allows ([`crate::names::kernel_owner`]).

use rustc_hash::FxHashMap;

use super::idle::DeviceChain;
use super::rule::{
    Finding, LOW_OCCUPANCY_BELOW_PCT, LOW_OCCUPANCY_MIN_TIME_PCT, LOW_OCCUPANCY_TOP_KERNELS,
    NO_TENSOR_CORES_MIN_PCT, NO_TENSOR_CORES_SAVING, PAGEABLE_MIN_PCT, PINNED_SPEEDUP_ASSUMED,
    Rule, at_least,
};
use super::tensor_cores::is_fp32_gemm_off_tensor_cores;
use super::{Activity, Insights, longest_first};
use crate::analysis::pct;
use crate::model::{CopyKind, EventKind, MemoryKind, Profile};
use crate::names::{KernelOwner, kernel_owner};
use crate::strings::StrId;
use crate::time::format_duration_ns as dur;

/// Host↔device copies from or to pageable memory. Such a copy blocks the CPU while it runs, so
/// its time counts whether or not the GPU waits on the CPU afterwards.
pub(crate) fn pageable_copies(
    profile: &Profile,
    device: u32,
    window_ns: i64,
    acts: &[&Activity],
) -> Option<Finding> {
    // Per direction: (time in range, bytes, full duration) for pageable and pinned copies.
    let mut stats = [[(0i64, 0u64, 0i64); 2]; 2];
    let mut events = Vec::new();
    for a in acts.iter().filter(|a| a.kind == EventKind::Memcpy) {
        let track = &profile.tracks[a.event.track as usize];
        let Some(info) = profile.copy_info(track, a.event.index as usize) else {
            continue;
        };
        let dir = match info.kind {
            CopyKind::HtoD => 0,
            CopyKind::DtoH => 1,
            _ => continue,
        };
        let host = if dir == 0 {
            info.src_kind
        } else {
            info.dst_kind
        };
        let pinned = match host {
            Some(MemoryKind::Pageable) => 0,
            Some(MemoryKind::Pinned) => 1,
            _ => continue,
        };
        let s = &mut stats[dir][pinned];
        // Saturating: a hostile file can hold sizes and durations whose sums overflow.
        s.0 = s.0.saturating_add(a.dur_ns());
        s.1 = s.1.saturating_add(info.bytes.unwrap_or(0));
        s.2 =
            s.2.saturating_add(track.events.dur_ns[a.event.index as usize]);
        if pinned == 0 {
            events.push((a.dur_ns(), a.event));
        }
    }
    let bandwidth = |(_, bytes, full): (i64, u64, i64)| {
        #[allow(clippy::cast_precision_loss)]
        (full > 0 && bytes > 0).then(|| bytes as f64 / full as f64)
    };
    let mut stake = 0.0f64;
    let mut time = 0i64;
    let mut parts = Vec::new();
    for (dir, name) in [(0, "HtoD"), (1, "DtoH")] {
        let [pageable, pinned] = stats[dir];
        let Some(pageable_bw) = bandwidth(pageable) else {
            continue;
        };
        let (pinned_bw, measured) = match bandwidth(pinned) {
            Some(bw) => (bw, "measured in this profile"),
            None => (pageable_bw * PINNED_SPEEDUP_ASSUMED, "assumed 2×"),
        };
        time = time.saturating_add(pageable.0);
        if pinned_bw > pageable_bw {
            #[allow(clippy::cast_precision_loss)]
            let saved = pageable.0 as f64 * (1.0 - pageable_bw / pinned_bw);
            stake += saved;
        }
        parts.push(format!(
            "{name} {} at {:.1} GB/s (pinned: {:.1} GB/s, {measured})",
            dur(pageable.0),
            pageable_bw,
            pinned_bw
        ));
    }
    #[allow(clippy::cast_possible_truncation)]
    let stake = stake as i64;
    if !at_least(time, window_ns, PAGEABLE_MIN_PCT) || stake <= 0 {
        return None;
    }
    Some(Finding::new(
        Rule::PageableCopies,
        Some(device),
        stake,
        format!(
            "GPU {device} copied to or from pageable host memory: {}. Pinned memory \
             (`pin_memory=True`, cudaHostAlloc) would save about {}.",
            parts.join("; "),
            dur(stake)
        ),
        longest_first(&mut events),
    ))
}

/// The critical-path remark of a GPU-side finding: empty when all of `time_ns` is on it.
fn off_critical_path(time_ns: i64, critical_ns: i64) -> String {
    if critical_ns >= time_ns {
        return String::new();
    }
    format!(
        " Only {} of it ran where the step waits on the GPU; the rest ran before the GPU \
         waited for the CPU anyway, and making it faster would only lengthen that wait.",
        dur(critical_ns)
    )
}

/// FP32 GEMMs and convolutions of libraries, the framework or generated code that run on the
/// CUDA cores: TF32 or AMP, which the user switches on, would move them to Tensor Cores. The
/// user's own kernels are left out: those flags do not change them.
pub(crate) fn no_tensor_cores(
    profile: &Profile,
    device: u32,
    kernel_ns: i64,
    acts: &[&Activity],
    chain: &DeviceChain,
) -> Option<Finding> {
    let (major, _) = profile.device(device)?.compute_capability?;
    if major < 7 {
        return None;
    }
    let (mut time, mut critical) = (0i64, 0i64);
    let mut events = Vec::new();
    // Classified once per name, not per launch.
    let mut fp32_gemm: FxHashMap<StrId, bool> = FxHashMap::default();
    for a in acts
        .iter()
        .filter(|a| a.kind == EventKind::Kernel && !a.tensor_cores)
    {
        let name = profile.tracks[a.event.track as usize].events.name[a.event.index as usize];
        if *fp32_gemm.entry(name).or_insert_with(|| {
            let name = profile.str(name);
            is_fp32_gemm_off_tensor_cores(name)
                && !matches!(
                    kernel_owner(name),
                    KernelOwner::User | KernelOwner::Communication
                )
        }) {
            time = time.saturating_add(a.dur_ns());
            critical = critical.saturating_add(chain.critical_ns(a.start_ns, a.end_ns));
            events.push((a.dur_ns(), a.event));
        }
    }
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    let stake = (critical as f64 * NO_TENSOR_CORES_SAVING) as i64;
    if !at_least(time, kernel_ns, NO_TENSOR_CORES_MIN_PCT) || stake <= 0 {
        return None;
    }
    Some(Finding::new(
        Rule::NoTensorCores,
        Some(device),
        stake,
        format!(
            "GPU {device} spent {} ({:.1}% of kernel time) in FP32 GEMMs and convolutions on the \
             CUDA cores. Allow TF32 (torch.backends.cuda.matmul.allow_tf32 = True, \
             torch.backends.cudnn.allow_tf32 = True) or use AMP to move them to Tensor Cores; \
             that typically halves their time (about {}).{}",
            dur(time),
            pct(time, kernel_ns),
            dur(stake),
            off_critical_path(time, critical)
        ),
        longest_first(&mut events),
    ))
}

/// What the owner of a kernel can do about its occupancy; `None` when nobody the report speaks
/// to can change it (a library's, the framework's or a collective's launch configuration).
fn occupancy_advice(owner: KernelOwner, limiter: &str) -> Option<&'static str> {
    match owner {
        KernelOwner::User => Some(match limiter.split('+').next().unwrap_or("") {
            "registers" => "Cap registers (__launch_bounds__, -maxrregcount) or split the kernel.",
            "shared_memory" => "Use less shared memory per block (smaller tiles) or fewer stages.",
            "blocks" => "Use larger blocks: the SM's block slots run out before its warps.",
            _ => "Use smaller blocks or a grid that fills more SMs.",
        }),
        KernelOwner::Generated => Some(
            "TorchInductor generated it: torch.compile(mode=\"max-autotune\") searches its \
             launch configuration (block sizes, warps, stages).",
        ),
        KernelOwner::Communication | KernelOwner::VendorLibrary | KernelOwner::Framework => None,
    }
}

/// Low theoretical occupancy of a top kernel that its reader can change: the user's own, or
/// one TorchInductor generated. Library, framework and communication kernels choose their own
/// launch (a GEMM's big tiles make low occupancy a design choice; a collective waits on its
/// peers), so they get no occupancy finding.
pub(crate) fn low_occupancy(
    profile: &Profile,
    ins: &Insights,
    acts: &[Activity],
    chains: &[DeviceChain],
) -> Vec<Finding> {
    let kernel_ns = crate::analysis::saturating_sum(ins.kernels.iter().map(|k| k.total_ns));
    let mut out = Vec::new();
    let mut critical_of: Option<FxHashMap<&str, i64>> = None;
    for k in ins.kernels.iter().take(LOW_OCCUPANCY_TOP_KERNELS) {
        // Tensor Core GEMMs keep big tiles in registers and shared memory: low occupancy is
        // their design, not a defect.
        let Some(occ) = k.theoretical_occupancy_pct.filter(|_| !k.tensor_cores) else {
            continue;
        };
        let limiter = k.occupancy_limiter.as_deref().unwrap_or("unknown");
        let Some(advice) = occupancy_advice(k.owner, limiter) else {
            continue;
        };
        if occ >= LOW_OCCUPANCY_BELOW_PCT || pct(k.total_ns, kernel_ns) < LOW_OCCUPANCY_MIN_TIME_PCT
        {
            continue;
        }
        let critical = *critical_of
            .get_or_insert_with(|| critical_by_name(profile, acts, chains))
            .get(k.name.as_str())
            .unwrap_or(&0);
        #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
        let stake = (critical as f64 * (1.0 - occ / LOW_OCCUPANCY_BELOW_PCT)) as i64;
        if stake <= 0 {
            continue;
        }
        out.push(Finding::new(
            Rule::LowOccupancy,
            None,
            stake,
            format!(
                "`{}` takes {} ({:.1}% of kernel time) at a theoretical occupancy of {occ:.0}%, \
                 limited by {}. {advice}{}",
                crate::names::short_name(&k.name, 80),
                dur(k.total_ns),
                pct(k.total_ns, kernel_ns),
                limiter.replace('_', " "),
                off_critical_path(k.total_ns, critical)
            ),
            k.longest.clone(),
        ));
    }
    out
}

/// Each kernel name's time on the critical path of its device.
fn critical_by_name<'p>(
    profile: &'p Profile,
    acts: &[Activity],
    chains: &[DeviceChain],
) -> FxHashMap<&'p str, i64> {
    let mut out: FxHashMap<&str, i64> = FxHashMap::default();
    for a in acts.iter().filter(|a| a.kind == EventKind::Kernel) {
        let Ok(c) = chains.binary_search_by_key(&a.device, |c| c.device) else {
            continue;
        };
        let name = profile.tracks[a.event.track as usize].events.name[a.event.index as usize];
        let entry = out.entry(profile.str(name)).or_default();
        *entry = entry.saturating_add(chains[c].critical_ns(a.start_ns, a.end_ns));
    }
    out
}
