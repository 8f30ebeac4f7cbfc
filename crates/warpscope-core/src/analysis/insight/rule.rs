//! What a finding is: the rules (their stable names and whether their time at stake is measured
//! or an estimate), their thresholds, and [`Finding`] itself. The rules are run in
//! [`super::findings`] and [`super::gpu_rules`]; `docs/analysis.md`, section 7, writes them down.

use serde::Serialize;

use crate::analysis::pct;
use crate::model::{EventRef, Profile};

/// Host wait must reach this share of the window, in percent.
pub const HOST_WAIT_MIN_PCT: f64 = 10.0;
/// "Other" idle must reach this share of the window, in percent.
pub const IDLE_OTHER_MIN_PCT: f64 = 10.0;
/// Pageable copies must take this share of the window, in percent.
pub const PAGEABLE_MIN_PCT: f64 = 1.0;
/// When the profile has no pinned copy of a direction, pinned memory is assumed this many times
/// faster than pageable.
pub const PINNED_SPEEDUP_ASSUMED: f64 = 2.0;
/// The GPU idle time behind blocking synchronisation must reach this share of the device's
/// window, in percent.
pub const BLOCKING_SYNC_MIN_PCT: f64 = 5.0;
/// A kernel is checked for occupancy when it is among this many longest...
pub const LOW_OCCUPANCY_TOP_KERNELS: usize = 5;
/// ...and takes at least this share of kernel time, in percent...
pub const LOW_OCCUPANCY_MIN_TIME_PCT: f64 = 5.0;
/// ...and its weighted theoretical occupancy is below this, in percent.
pub const LOW_OCCUPANCY_BELOW_PCT: f64 = 50.0;
/// Launch-bound kernels must be at least this share of a device's kernels, in percent...
pub const LAUNCH_BOUND_MIN_KERNELS_PCT: f64 = 20.0;
/// ...and the gaps before them at least this share of its window, in percent.
pub const LAUNCH_BOUND_MIN_GAP_PCT: f64 = 5.0;
/// FP32 GEMMs and convolutions off Tensor Cores must take this share of kernel time, in percent.
pub const NO_TENSOR_CORES_MIN_PCT: f64 = 10.0;
/// The share of their time TF32 or AMP is assumed to save.
pub const NO_TENSOR_CORES_SAVING: f64 = 0.5;
/// Communication not overlapped with compute must take this share of the window, in percent.
pub const COMM_NOT_OVERLAPPED_MIN_PCT: f64 = 5.0;

/// The rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The GPU waited for the CPU.
    HostWait,
    /// The GPU idled with work queued.
    GpuIdleOther,
    /// Host↔device copies from pageable memory.
    PageableCopies,
    /// The GPU ran dry while the CPU was blocked in a synchronisation.
    BlockingSync,
    /// A top kernel of the user's has low theoretical occupancy.
    LowOccupancy,
    /// Many kernels shorter than a launch.
    LaunchBound,
    /// FP32 GEMMs and convolutions off Tensor Cores.
    NoTensorCores,
    /// Communication not hidden behind compute.
    CommNotOverlapped,
}

impl Rule {
    /// Stable name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::HostWait => "host_wait",
            Self::GpuIdleOther => "gpu_idle_other",
            Self::PageableCopies => "pageable_copies",
            Self::BlockingSync => "blocking_sync",
            Self::LowOccupancy => "low_occupancy",
            Self::LaunchBound => "launch_bound",
            Self::NoTensorCores => "no_tensor_cores",
            Self::CommNotOverlapped => "comm_not_overlapped",
        }
    }

    /// What a finding's time at stake is: a time measured in the profile, or an estimate.
    pub fn at_stake_basis(self) -> AtStakeBasis {
        match self {
            Self::HostWait
            | Self::GpuIdleOther
            | Self::BlockingSync
            | Self::LaunchBound
            | Self::CommNotOverlapped => AtStakeBasis::Measured,
            Self::PageableCopies | Self::LowOccupancy | Self::NoTensorCores => {
                AtStakeBasis::Estimate
            }
        }
    }
}

/// What a finding's time at stake is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AtStakeBasis {
    /// A time measured in the profile (GPU idle time, exposed communication): what the cause
    /// cost here, and the most that removing it can give back.
    Measured,
    /// A measured time scaled by an assumed speed-up (pinned memory 2× faster, Tensor Cores
    /// halving a GEMM, time proportional to the missing occupancy).
    Estimate,
}

impl AtStakeBasis {
    /// Stable name used in JSON and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Measured => "measured",
            Self::Estimate => "estimate",
        }
    }
}

/// One finding.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// The rule that fired.
    pub rule: Rule,
    /// The device it concerns (`None`: the whole run).
    pub device: Option<u32>,
    /// The time at stake: what the step would lose if the cause were removed, at most.
    pub time_ns: i64,
    /// Whether `time_ns` is measured or an estimate ([`Rule::at_stake_basis`]).
    pub at_stake_basis: AtStakeBasis,
    /// What was found and what to try, with its numbers.
    pub message: String,
    /// The events behind it, most important first (at most 20).
    pub events: Vec<EventRef>,
}

impl Finding {
    /// A finding of `rule`, its basis taken from the rule.
    pub(crate) fn new(
        rule: Rule,
        device: Option<u32>,
        time_ns: i64,
        message: String,
        events: Vec<EventRef>,
    ) -> Self {
        Self {
            rule,
            device,
            time_ns,
            at_stake_basis: rule.at_stake_basis(),
            message,
            events,
        }
    }
}

pub(crate) fn name_of(profile: &Profile, e: EventRef) -> &str {
    profile.str(profile.tracks[e.track as usize].events.name[e.index as usize])
}

pub(crate) fn at_least(part: i64, whole: i64, min_pct: f64) -> bool {
    part > 0 && pct(part, whole) >= min_pct
}
