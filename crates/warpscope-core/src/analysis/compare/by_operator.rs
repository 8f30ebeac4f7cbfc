//! Kernels grouped by the framework operator that launched them, so that runs whose kernels
//! have different names (cuBLAS on an H100, hipBLASLt on an MI300X: the same `aten::addmm`)
//! can be compared operator by operator. The rule is in `docs/analysis.md` ("Comparing runs on
//! different GPUs").

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::Measured;
use crate::model::{EventKind, FlowKind, NO_PARENT, Profile};
use crate::strings::StrId;

/// How many kernel names an operator's row lists.
pub const NAMES_SHOWN: usize = 3;

/// The kernels one operator launched in one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OperatorKernels {
    /// Number of kernel executions.
    pub kernels: u64,
    /// Their summed duration.
    pub total_ns: i64,
    /// Number of distinct kernel names.
    pub distinct_kernels: usize,
    /// The kernel names with the most time, longest first (at most [`NAMES_SHOWN`]).
    pub top_kernels: Vec<String>,
}

impl Measured for OperatorKernels {
    fn compared_ns(&self) -> i64 {
        self.total_ns
    }
}

/// Every kernel with a launch flow, under the innermost framework operator (`cpu_op`) around
/// the call that launched it (the call itself when it is one), by operator name. Kernels whose
/// launch has no operator around it are left out.
pub fn kernels_by_operator(profile: &Profile) -> Vec<(String, OperatorKernels)> {
    let mut sums: FxHashMap<StrId, (u64, i64, FxHashMap<StrId, i64>)> = FxHashMap::default();
    for flow in profile.flows.iter().filter(|f| f.kind == FlowKind::Launch) {
        let (Some(to), Some(from)) = (
            profile.tracks.get(flow.to.track as usize),
            profile.tracks.get(flow.from.track as usize),
        ) else {
            continue;
        };
        let k = flow.to.index as usize;
        if to.events.kind.get(k) != Some(&EventKind::Kernel) {
            continue;
        }
        let ev = &from.events;
        let mut at = flow.from.index;
        let op = loop {
            let i = at as usize;
            if i >= ev.len() {
                break None;
            }
            if ev.kind[i] == EventKind::CpuOp {
                break Some(ev.name[i]);
            }
            at = ev.parent.get(i).copied().unwrap_or(NO_PARENT);
            if at == NO_PARENT {
                break None;
            }
        };
        let Some(op) = op else { continue };
        let entry = sums.entry(op).or_default();
        entry.0 += 1;
        entry.1 = entry.1.saturating_add(to.events.dur_ns[k]);
        let by_name = entry.2.entry(to.events.name[k]).or_default();
        *by_name = by_name.saturating_add(to.events.dur_ns[k]);
    }
    let mut rows: Vec<(String, OperatorKernels)> = sums
        .into_iter()
        .map(|(op, (kernels, total_ns, names))| {
            let mut names: Vec<(StrId, i64)> = names.into_iter().collect();
            names.sort_by(|a, b| {
                b.1.cmp(&a.1)
                    .then_with(|| profile.str(a.0).cmp(profile.str(b.0)))
            });
            let row = OperatorKernels {
                kernels,
                total_ns,
                distinct_kernels: names.len(),
                top_kernels: names
                    .iter()
                    .take(NAMES_SHOWN)
                    .map(|(n, _)| profile.str(*n).to_string())
                    .collect(),
            };
            (profile.str(op).to_string(), row)
        })
        .collect();
    rows.sort_by(|a, b| b.1.total_ns.cmp(&a.1.total_ns).then_with(|| a.0.cmp(&b.0)));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::ProfileBuilder;
    use crate::model::{ApiInfo, Format, GpuLane, KernelInfo, TraceId, TrackKey};

    /// `aten::addmm` launches a GEMM through a nested `aten::mm`-less call chain; a launch
    /// outside any operator is left out.
    fn run(kernel: &str, dur_ns: i64) -> Profile {
        let mut b = ProfileBuilder::new("run.json".into(), Format::ChromeJson);
        let cpu = b.track(TrackKey::Thread {
            pid: TraceId::Int(1),
            tid: TraceId::Int(1),
        });
        let gpu = b.track(TrackKey::Gpu {
            device: 0,
            context: 0,
            stream: 7,
            lane: GpuLane::Work,
        });
        let addmm = b.intern("aten::addmm");
        b.push(cpu, 0, 100, addmm, EventKind::CpuOp);
        let launch = b.intern("launch");
        for (i, start) in [(1u64, 10i64), (2, 200)] {
            let info = ApiInfo {
                correlation: Some(i),
                ..ApiInfo::default()
            };
            b.push_api(cpu, start, 5, launch, EventKind::Runtime, info, 0);
            let k = b.intern(kernel);
            let kinfo = KernelInfo {
                correlation: Some(i),
                ..KernelInfo::default()
            };
            b.push_kernel(gpu, start + 20, dur_ns, k, kinfo, 0);
        }
        b.finish()
    }

    #[test]
    fn kernels_meet_under_their_operator_whatever_their_names() {
        let nvidia = kernels_by_operator(&run("sm90_xmma_gemm_f16f16", 30));
        let amd = kernels_by_operator(&run("Cijk_Alik_Bljk_B_MT16x16x128_MI16x16x1", 50));
        assert_eq!(
            nvidia.len(),
            1,
            "the launch at 200 ns has no operator around it"
        );
        assert_eq!(nvidia[0].0, "aten::addmm");
        assert_eq!(amd[0].0, "aten::addmm");
        assert_eq!(nvidia[0].1.kernels, 1);
        assert_eq!(nvidia[0].1.total_ns, 30);
        assert_eq!(amd[0].1.total_ns, 50);
        assert_eq!(
            amd[0].1.top_kernels,
            ["Cijk_Alik_Bljk_B_MT16x16x128_MI16x16x1"]
        );
    }
}
