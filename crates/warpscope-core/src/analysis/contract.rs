//! The JSON contracts of `warpscope analyze` and `warpscope memory` (README, `docs/analysis.md`,
//! `docs/memory.md`) as serialisable values, built here so that the CLI and the Python module
//! give the same documents: [`AnalyzeJson`], [`MemoryJson`], and the [`AnalyzedRange`] both
//! carry.

use serde::Serialize;

use super::SourceReport;
use super::compare::{step_numbers, step_range};
use super::flops::{Bound, FlopsFinding, FlopsReport, PeakOverride, flops_report};
use super::insight::{
    AnalyzeOptions, DeviceBreakdown, GapCause, HostWaitOp, Insights, KernelInsight, LaunchStats,
    StreamIdle, analyze,
};
use super::memory::{MemoryFinding, MemoryPeak, MemoryReport, memory_peaks, memory_report};
use crate::model::{EventRef, Profile};
use crate::time::TimeRange;

/// What [`AnalyzeJson`] is made of: the insights and the FLOPs analysis of `profile` over
/// `range` (peaks overridden by `over`), worked out side by side on two threads where there
/// are two: they only read the profile.
pub fn analyze_with_flops(
    profile: &Profile,
    range: TimeRange,
    opts: &AnalyzeOptions,
    over: PeakOverride,
) -> (Insights, FlopsReport) {
    let (flops, insights) = crate::parallel::join(
        || flops_report(profile, range, over),
        || analyze(profile, range, opts),
    );
    (insights, flops)
}

/// The range that was analysed, as the user asked for it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct AnalyzedRange {
    /// `all`, `range` or `step`.
    pub kind: &'static str,
    /// The step number for `step`.
    pub step: Option<u64>,
    /// Start in profile nanoseconds (`None` for the whole run).
    pub start_ns: Option<i64>,
    /// End in profile nanoseconds.
    pub end_ns: Option<i64>,
}

/// A `step` that the profile does not have.
#[derive(Clone, Debug, thiserror::Error)]
#[error("no step {step}: {known}")]
pub struct NoSuchStep {
    /// The step asked for.
    pub step: u64,
    /// The steps the profile has, in words (`it has steps 3 to 4`).
    pub known: String,
}

impl AnalyzedRange {
    /// The whole run.
    pub fn all() -> Self {
        Self {
            kind: "all",
            step: None,
            start_ns: None,
            end_ns: None,
        }
    }

    /// A range of profile nanoseconds.
    pub fn range(r: TimeRange) -> Self {
        Self {
            kind: "range",
            step: None,
            start_ns: Some(r.start_ns),
            end_ns: Some(r.end_ns),
        }
    }

    /// Training step `n` (`ProfilerStep#N`, [`step_range`]).
    ///
    /// # Errors
    ///
    /// [`NoSuchStep`], saying which steps the profile has.
    pub fn step(profile: &Profile, n: u64) -> Result<Self, NoSuchStep> {
        let Some(r) = step_range(profile, n) else {
            let steps = step_numbers(profile);
            let known = match (steps.first(), steps.last()) {
                (Some(a), Some(b)) if a == b => format!("it has step {a} only"),
                (Some(a), Some(b)) => format!("it has steps {a} to {b}"),
                _ => "it records no ProfilerStep#N ranges".to_string(),
            };
            return Err(NoSuchStep { step: n, known });
        };
        Ok(Self {
            kind: "step",
            step: Some(n),
            start_ns: Some(r.start_ns),
            end_ns: Some(r.end_ns),
        })
    }

    /// The range as a [`TimeRange`].
    pub fn time_range(&self) -> TimeRange {
        match (self.start_ns, self.end_ns) {
            (Some(s), Some(e)) => TimeRange::new(s, e),
            _ => TimeRange::ALL,
        }
    }
}

/// An event as JSON: where it is and what it is.
#[derive(Serialize)]
pub struct EventJson<'a> {
    /// Its track.
    pub track: u32,
    /// Its index on the track.
    pub index: u32,
    /// Its name.
    pub name: &'a str,
    /// Its start.
    pub start_ns: i64,
    /// Its duration.
    pub dur_ns: i64,
}

impl<'a> EventJson<'a> {
    /// The event `e` of `p`.
    pub fn of(p: &'a Profile, e: EventRef) -> Self {
        let ev = &p.tracks[e.track as usize].events;
        let i = e.index as usize;
        Self {
            track: e.track,
            index: e.index,
            name: p.str(ev.name[i]),
            start_ns: ev.start_ns[i],
            dur_ns: ev.dur_ns[i],
        }
    }
}

/// An idle gap as JSON.
#[derive(Serialize)]
pub struct GapJson<'a> {
    /// The device.
    pub device: u32,
    /// Start of the gap.
    pub start_ns: i64,
    /// Its length.
    pub dur_ns: i64,
    /// Why the GPU waited.
    pub cause: GapCause,
    /// The GPU work after it.
    pub next: EventJson<'a>,
    /// The launch of that work.
    pub launch: Option<EventJson<'a>>,
    /// The operator around that launch.
    pub operator: Option<&'a str>,
    /// The blocking synchronisation the launching thread was in when the gap began.
    pub sync: Option<EventJson<'a>>,
}

/// A finding as JSON.
#[derive(Serialize)]
pub struct FindingJson<'a> {
    /// The rule's stable name.
    pub rule: &'static str,
    /// The device, for rules about one.
    pub device: Option<u32>,
    /// The time at stake.
    pub time_ns: i64,
    /// `measured` or `estimate`: what `time_ns` is.
    pub at_stake_basis: &'static str,
    /// The advice.
    pub message: &'a str,
    /// The events behind it.
    pub events: Vec<EventJson<'a>>,
}

/// Everything `warpscope analyze --format json` prints.
#[derive(Serialize)]
pub struct AnalyzeJson<'a> {
    /// The file.
    pub source: SourceReport,
    /// The range analysed.
    pub range: &'a AnalyzedRange,
    /// Time breakdown per device.
    pub devices: &'a [DeviceBreakdown],
    /// Idle time per stream.
    pub streams: &'a [StreamIdle],
    /// Kernels.
    pub kernels: &'a [KernelInsight],
    /// Share of kernel time in Tensor Core kernels.
    pub tensor_core_pct: f64,
    /// Launch latency.
    pub launch: &'a LaunchStats,
    /// The longest idle gaps.
    pub gaps: Vec<GapJson<'a>>,
    /// Operators the host waited in.
    pub host_wait_ops: &'a [HostWaitOp],
    /// The findings, largest time at stake first.
    pub findings: Vec<FindingJson<'a>>,
    /// Memory peaks per device, where the profile records memory.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<MemoryPeak>,
    /// The memory findings (`docs/memory.md`), where the profile records memory.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub memory_findings: Vec<MemoryFinding>,
    /// FLOPs, MFU and the operator roofline (`docs/flops.md`).
    pub flops: FlopsJson<'a>,
}

/// One step of a device in `analyze`'s `flops` section.
#[derive(Serialize)]
pub struct FlopsStepJson {
    /// The step number (`ProfilerStep#N`).
    pub step: u64,
    /// Model FLOPs of the step.
    pub flops: u64,
    /// The step's duration.
    pub time_ns: i64,
    /// Model FLOPs utilisation of the step, when the device's peak is known.
    pub mfu: Option<f64>,
}

/// One device in `analyze`'s `flops` section.
#[derive(Serialize)]
pub struct FlopsDeviceJson<'a> {
    /// The device.
    pub device: u32,
    /// Model FLOPs over the range.
    pub model_flops: u64,
    /// The dense peak used for MFU, FLOP/s.
    pub peak_flops_per_s: Option<f64>,
    /// Where that peak comes from (the peaks table's row, an override, or why it is unknown).
    pub peak_source: &'a str,
    /// Model FLOPs utilisation over the range.
    pub mfu: Option<f64>,
    /// Per step.
    pub steps: Vec<FlopsStepJson>,
}

/// One operator name in `analyze`'s `flops` section; unknown figures are `null`.
#[derive(Serialize)]
pub struct FlopsOperatorJson<'a> {
    /// The operator's name.
    pub name: &'a str,
    /// Its calls that were counted.
    pub calls: u64,
    /// FLOPs of those calls.
    pub flops: Option<u64>,
    /// Bytes they move.
    pub bytes: Option<u64>,
    /// GPU time of the kernels they launched.
    pub gpu_time_ns: i64,
    /// Achieved TFLOP/s.
    pub tflops_per_s: Option<f64>,
    /// Achieved over the peak of its precision, in percent.
    pub pct_of_peak: Option<f64>,
    /// FLOPs per byte.
    pub intensity: Option<f64>,
    /// `compute` or `memory`, from the roofline's ridge.
    pub bound: Option<&'static str>,
}

/// `analyze --format json`'s `flops` section, as the README documents it.
#[derive(Serialize)]
pub struct FlopsJson<'a> {
    /// Per device.
    pub devices: Vec<FlopsDeviceJson<'a>>,
    /// Per operator name.
    pub operators: Vec<FlopsOperatorJson<'a>>,
}

impl<'a> FlopsJson<'a> {
    /// The section of `r`.
    pub fn of(r: &'a FlopsReport) -> Self {
        Self {
            devices: r
                .devices
                .iter()
                .map(|d| FlopsDeviceJson {
                    device: d.device,
                    model_flops: d.model_flops,
                    peak_flops_per_s: d.peak_flops_per_s,
                    peak_source: &d.peak_source,
                    mfu: d.mfu,
                    steps: d
                        .steps
                        .iter()
                        .map(|s| FlopsStepJson {
                            step: s.step,
                            flops: s.flops,
                            time_ns: s.time_ns,
                            mfu: s.mfu,
                        })
                        .collect(),
                })
                .collect(),
            operators: r
                .operators
                .iter()
                .map(|o| FlopsOperatorJson {
                    name: &o.name,
                    calls: o.calls,
                    flops: o.flops,
                    bytes: o.bytes,
                    gpu_time_ns: o.gpu_time_ns,
                    tflops_per_s: o.roofline.tflops_per_s,
                    pct_of_peak: o.roofline.pct_of_peak,
                    intensity: o.roofline.intensity,
                    bound: o.roofline.bound.map(Bound::as_str),
                })
                .collect(),
        }
    }
}

/// A FLOPs finding as a finding of the list.
fn flops_finding_json<'a>(p: &'a Profile, f: &'a FlopsFinding) -> FindingJson<'a> {
    FindingJson {
        rule: f.rule.as_str(),
        device: f.device,
        time_ns: f.time_ns,
        at_stake_basis: f.at_stake_basis.as_str(),
        message: &f.message,
        events: events_json(p, &f.events),
    }
}

/// The events a finding names, as the document writes them.
fn events_json<'a>(p: &'a Profile, events: &[EventRef]) -> Vec<EventJson<'a>> {
    events.iter().map(|&e| EventJson::of(p, e)).collect()
}

/// The name of the operator `e`, if any.
pub fn operator_name(p: &Profile, e: Option<EventRef>) -> Option<&str> {
    e.map(|e| p.str(p.tracks[e.track as usize].events.name[e.index as usize]))
}

impl<'a> AnalyzeJson<'a> {
    /// The document of `ins` and `flops`, the insights and FLOPs of `p` over `range`.
    pub fn new(
        p: &'a Profile,
        ins: &'a Insights,
        flops: &'a FlopsReport,
        range: &'a AnalyzedRange,
    ) -> Self {
        let mut findings: Vec<FindingJson<'a>> = ins
            .findings
            .iter()
            .map(|f| FindingJson {
                rule: f.rule.as_str(),
                device: f.device,
                time_ns: f.time_ns,
                at_stake_basis: f.at_stake_basis.as_str(),
                message: &f.message,
                events: events_json(p, &f.events),
            })
            .collect();
        findings.extend(flops.findings.iter().map(|f| flops_finding_json(p, f)));
        // Largest time at stake first, as each list is (a stable sort keeps ties in their order).
        findings.sort_by_key(|f| std::cmp::Reverse(f.time_ns));
        Self {
            source: SourceReport::of(p),
            range,
            devices: &ins.devices,
            streams: &ins.streams,
            kernels: &ins.kernels,
            tensor_core_pct: ins.tensor_core_pct,
            launch: &ins.launch,
            gaps: ins
                .gaps
                .iter()
                .map(|g| GapJson {
                    device: g.device,
                    start_ns: g.start_ns,
                    dur_ns: g.dur_ns,
                    cause: g.cause,
                    next: EventJson::of(p, g.next),
                    launch: g.launch.map(|e| EventJson::of(p, e)),
                    operator: operator_name(p, g.operator),
                    sync: g.sync.map(|e| EventJson::of(p, e)),
                })
                .collect(),
            host_wait_ops: &ins.host_wait_ops,
            findings,
            memory: memory_peaks(p, range.time_range()),
            memory_findings: memory_report(p, range.time_range(), 1).findings,
            flops: FlopsJson::of(flops),
        }
    }
}

/// Everything `warpscope memory --format json` prints.
#[derive(Serialize)]
pub struct MemoryJson<'a> {
    /// The file.
    pub source: SourceReport,
    /// The range analysed.
    pub range: &'a AnalyzedRange,
    /// The report, its fields at the top level.
    #[serde(flatten)]
    pub report: &'a MemoryReport,
}

impl<'a> MemoryJson<'a> {
    /// The document of `report`, the memory report of `p` over `range`.
    pub fn new(p: &Profile, report: &'a MemoryReport, range: &'a AnalyzedRange) -> Self {
        Self {
            source: SourceReport::of(p),
            range,
            report,
        }
    }
}
