//! The figures of `docs/flops.md`, section 5: per operator name and per kernel name FLOPs,
//! bytes, TFLOP/s, % of peak, arithmetic intensity and bound; per device and step the model
//! FLOPs, MFU, HFU and the share of time far below the roofline.

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::attribution::Attribution;
use super::formulas::Family;
use super::peaks::{DevicePeaks, PeakOverride, Precision};
use crate::model::{EventRef, Profile};
use crate::strings::StrId;

/// Operators achieving less than this share of their roof count as far below it, in percent.
pub const FAR_BELOW_ROOF_PCT: f64 = 10.0;

/// Compute- or memory-bound, from where the intensity lies against the ridge of the roofline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Intensity at or above the ridge: the FLOP/s peak is the roof.
    Compute,
    /// Intensity below the ridge: bandwidth × intensity is the roof.
    Memory,
}

impl Bound {
    /// Stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Compute => "compute",
            Self::Memory => "memory",
        }
    }
}

/// Where a set of FLOPs and bytes over a GPU time stands on a device's roofline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Roofline {
    /// Achieved TFLOP/s (FLOPs over GPU time).
    pub tflops_per_s: Option<f64>,
    /// Achieved FLOP/s as a percentage of the peak of its precision.
    pub pct_of_peak: Option<f64>,
    /// FLOPs per byte.
    pub intensity: Option<f64>,
    /// Compute- or memory-bound.
    pub bound: Option<Bound>,
    /// The roof at this intensity: min(peak, intensity × bandwidth), in TFLOP/s.
    pub roof_tflops_per_s: Option<f64>,
    /// Achieved FLOP/s as a percentage of the roof.
    pub pct_of_roof: Option<f64>,
}

impl Roofline {
    /// The place of `flops` and `bytes` done in `gpu_ns` at precision `p` on a device with
    /// `peaks`.
    #[allow(clippy::cast_precision_loss)]
    pub fn of(
        flops: Option<u64>,
        bytes: Option<u64>,
        gpu_ns: i64,
        p: Option<Precision>,
        peaks: Option<&DevicePeaks>,
    ) -> Self {
        let achieved = flops
            .filter(|_| gpu_ns > 0)
            .map(|f| f as f64 / (gpu_ns as f64 * 1e-9));
        let intensity = match (flops, bytes) {
            (Some(f), Some(b)) if b > 0 => Some(f as f64 / b as f64),
            _ => None,
        };
        let peak = p.and_then(|p| peaks?.flops_per_s(p));
        let bw = peaks.and_then(DevicePeaks::bytes_per_s);
        let bound = match (intensity, peak, bw) {
            (Some(i), Some(pk), Some(bw)) if bw > 0.0 => Some(if i >= pk / bw {
                Bound::Compute
            } else {
                Bound::Memory
            }),
            _ => None,
        };
        let roof = match (intensity, peak, bw) {
            (Some(i), Some(pk), Some(bw)) => Some(pk.min(i * bw)),
            _ => None,
        };
        let pct = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => Some(100.0 * a / b),
            _ => None,
        };
        Self {
            tflops_per_s: achieved.map(|a| a / 1e12),
            pct_of_peak: pct(achieved, peak),
            intensity,
            bound,
            roof_tflops_per_s: roof.map(|r| r / 1e12),
            pct_of_roof: pct(achieved, roof),
        }
    }
}

/// One row per operator (or kernel) name.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkRow {
    /// The name.
    pub name: String,
    /// Calls (operators: counted or owning GPU work; kernels: launches).
    pub calls: u64,
    /// Counted FLOPs, `None` when no call's FLOPs are known.
    pub flops: Option<u64>,
    /// Bytes of the calls with known FLOPs and bytes, `None` when none.
    pub bytes: Option<u64>,
    /// GPU time owned, within the range.
    pub gpu_time_ns: i64,
    /// GPU time of the calls with known FLOPs (the time TFLOP/s is worked out over).
    pub known_gpu_time_ns: i64,
    /// The family of the operator's formula.
    pub family: Option<Family>,
    /// The precision of most of its GPU time.
    pub precision: Option<Precision>,
    /// The device of most of its GPU time.
    pub device: Option<u32>,
    /// Where it stands on the device's roofline.
    pub roofline: Roofline,
}

/// Sums of one name, built up call by call (in u128: the sums cannot overflow).
#[derive(Default)]
struct RowSums {
    calls: u64,
    flops: Option<u128>,
    bytes: Option<u128>,
    flops_with_bytes: u128,
    gpu_ns: i64,
    known_ns: i64,
    family: Option<Family>,
    /// GPU time per (precision, device).
    time_by: FxHashMap<(Option<Precision>, Option<u32>), i64>,
}

impl RowSums {
    fn add(
        &mut self,
        flops: Option<u64>,
        bytes: Option<u64>,
        gpu_ns: i64,
        precision: Option<Precision>,
        device: Option<u32>,
    ) {
        self.calls += 1;
        self.gpu_ns = self.gpu_ns.saturating_add(gpu_ns);
        if let Some(f) = flops {
            self.flops = Some(self.flops.unwrap_or(0) + u128::from(f));
            self.known_ns = self.known_ns.saturating_add(gpu_ns);
            if let Some(b) = bytes {
                self.bytes = Some(self.bytes.unwrap_or(0) + u128::from(b));
                self.flops_with_bytes += u128::from(f);
            }
        }
        *self.time_by.entry((precision, device)).or_default() += gpu_ns.max(1);
    }

    fn row(self, name: String, peaks: &FxHashMap<u32, DevicePeaks>) -> WorkRow {
        let (precision, device) = self
            .time_by
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
            .map_or((None, None), |(k, _)| *k);
        let sat = |v: u128| u64::try_from(v).unwrap_or(u64::MAX);
        let peaks_of = device.and_then(|d| peaks.get(&d));
        // TFLOP/s over the calls with FLOPs; intensity from the calls that have both figures.
        let mut roofline = Roofline::of(
            self.flops.map(sat),
            None,
            self.known_ns,
            precision,
            peaks_of,
        );
        let with_bytes = Roofline::of(
            Some(sat(self.flops_with_bytes)),
            self.bytes.map(sat),
            self.known_ns,
            precision,
            peaks_of,
        );
        roofline.intensity = with_bytes.intensity;
        roofline.bound = with_bytes.bound;
        roofline.roof_tflops_per_s = with_bytes.roof_tflops_per_s;
        roofline.pct_of_roof = match (roofline.tflops_per_s, roofline.roof_tflops_per_s) {
            (Some(a), Some(r)) if r > 0.0 => Some(100.0 * a / r),
            _ => None,
        };
        WorkRow {
            name,
            calls: self.calls,
            flops: self.flops.map(sat),
            bytes: self.bytes.map(sat),
            gpu_time_ns: self.gpu_ns,
            known_gpu_time_ns: self.known_ns,
            family: self.family,
            precision,
            device,
            roofline,
        }
    }
}

/// A share of a kernel's owner's figure, rounded to a whole number.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn whole(v: Option<f64>) -> Option<u64> {
    v.map(|v| v.round() as u64)
}

/// One row per operator name, most GPU time first (then most FLOPs, then by name).
pub fn operator_rows(
    profile: &Profile,
    att: &Attribution,
    peaks: &FxHashMap<u32, DevicePeaks>,
) -> Vec<WorkRow> {
    let mut by_name: FxHashMap<StrId, RowSums> = FxHashMap::default();
    for c in &att.calls {
        let name = name_of(profile, c.event);
        let sums = by_name.entry(name).or_default();
        sums.family = sums.family.or(c.work.map(|w| w.family));
        sums.add(
            c.counted_flops(),
            c.counted_bytes(),
            c.gpu_ns,
            c.precision,
            c.device,
        );
    }
    finish_rows(profile, by_name, peaks)
}

/// One row per kernel name (and copy and set launched by an operator): the FLOPs and bytes of
/// its owners split by GPU time ([`Attribution::share_flops`], [`Attribution::share_bytes`]).
pub fn kernel_rows(
    profile: &Profile,
    att: &Attribution,
    peaks: &FxHashMap<u32, DevicePeaks>,
) -> Vec<WorkRow> {
    let mut by_name: FxHashMap<StrId, RowSums> = FxHashMap::default();
    for k in &att.kernels {
        let Some(c) = att.calls.get(k.call as usize) else {
            continue;
        };
        let name = name_of(profile, k.kernel);
        let sums = by_name.entry(name).or_default();
        sums.family = sums.family.or(c.work.map(|w| w.family));
        let flops = whole(att.share_flops(k));
        let bytes = whole(att.share_bytes(k));
        sums.add(flops, bytes, k.dur_ns, k.stated.or(c.precision), c.device);
    }
    finish_rows(profile, by_name, peaks)
}

fn finish_rows(
    profile: &Profile,
    by_name: FxHashMap<StrId, RowSums>,
    peaks: &FxHashMap<u32, DevicePeaks>,
) -> Vec<WorkRow> {
    let mut rows: Vec<WorkRow> = by_name
        .into_iter()
        .map(|(name, s)| s.row(profile.str(name).to_string(), peaks))
        .collect();
    rows.sort_by(|a, b| {
        b.gpu_time_ns
            .cmp(&a.gpu_time_ns)
            .then_with(|| b.flops.cmp(&a.flops))
            .then_with(|| a.name.cmp(&b.name))
    });
    rows
}

fn name_of(profile: &Profile, e: EventRef) -> StrId {
    profile.tracks[e.track as usize].events.name[e.index as usize]
}

/// The FLOPs of one training step on one device.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepFlops {
    /// The step number (`ProfilerStep#N`).
    pub step: u64,
    /// Model FLOPs of the calls whose first GPU work starts in the step.
    pub flops: u64,
    /// All counted FLOPs of those calls (model and others).
    pub hardware_flops: u64,
    /// The step's time (the span of its GPU work where recorded, else of its CPU range).
    pub time_ns: i64,
    /// Model FLOPs over (step time × peak); `None` without a peak.
    pub mfu: Option<f64>,
}

/// The FLOPs figures of one device.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceFlops {
    /// Device ordinal.
    pub device: u32,
    /// Its name as the profile gives it (empty when it does not).
    pub name: String,
    /// Its peaks.
    pub peaks: DevicePeaks,
    /// The precision of most of its model FLOPs (the peak MFU is measured against).
    pub precision: Option<Precision>,
    /// Peak FLOP/s at that precision.
    pub peak_flops_per_s: Option<f64>,
    /// Peak bytes per second.
    pub peak_bytes_per_s: Option<f64>,
    /// Where the peaks come from.
    pub peak_source: String,
    /// FLOPs of matrix products, convolutions and attention (the work `FlopCounterMode`
    /// counts), counted once.
    pub model_flops: u64,
    /// All counted FLOPs (model, elementwise, normalisation, reductions).
    pub hardware_flops: u64,
    /// The device's window: from its first to its last GPU work owned by an operator, within
    /// the range.
    pub window_ns: i64,
    /// Model FLOPs over (window × peak).
    pub mfu: Option<f64>,
    /// All counted FLOPs over (window × peak).
    pub hfu: Option<f64>,
    /// GPU time owned by operators.
    pub op_gpu_ns: i64,
    /// Of it, the time of calls with known FLOPs.
    pub known_gpu_ns: i64,
    /// Share of the time of calls with a known roof spent in calls below
    /// [`FAR_BELOW_ROOF_PCT`] of it, in percent.
    pub far_below_roof_pct: Option<f64>,
    /// Per training step.
    pub steps: Vec<StepFlops>,
}

/// Every `ProfilerStep#N`'s range as `compare::step_ranges` gives it (the span of its GPU-side
/// annotations where recorded, else of its CPU ranges), `(N, range)` sorted by `N`, found with
/// one array lookup per event: names are matched once each, and the GPU work lanes (where no
/// step annotation lies) are not read.
pub(super) fn step_spans(profile: &Profile) -> Vec<(u64, crate::time::TimeRange)> {
    type Span = Option<(i64, i64)>;
    let step_of: Vec<Option<u64>> = (0..profile.strings.len())
        .map(|i| {
            let id = StrId(u32::try_from(i).unwrap_or(u32::MAX));
            profile.str(id).strip_prefix("ProfilerStep#")?.parse().ok()
        })
        .collect();
    if step_of.iter().all(Option::is_none) {
        return Vec::new();
    }
    let mut spans: FxHashMap<u64, (Span, Span)> = FxHashMap::default();
    for track in &profile.tracks {
        let gpu = match track.key {
            crate::model::TrackKey::Gpu { lane, .. } => {
                if lane == crate::model::GpuLane::Work {
                    continue;
                }
                true
            }
            _ => false,
        };
        let ev = &track.events;
        for i in 0..ev.len() {
            let Some(Some(n)) = step_of.get(ev.name[i].0 as usize) else {
                continue;
            };
            if ev.dur_ns[i] <= 0 {
                continue;
            }
            let entry = spans.entry(*n).or_default();
            let span = if gpu { &mut entry.0 } else { &mut entry.1 };
            let (a, b) = (ev.start_ns[i], ev.end_ns(i));
            *span = Some(span.map_or((a, b), |(s, e)| (s.min(a), e.max(b))));
        }
    }
    let mut out: Vec<(u64, crate::time::TimeRange)> = spans
        .into_iter()
        .filter_map(|(n, (g, c))| g.or(c).map(|(s, e)| (n, crate::time::TimeRange::new(s, e))))
        .collect();
    out.sort_by_key(|(n, _)| *n);
    out
}

/// Sums of one device.
#[derive(Default)]
struct DeviceSums {
    model: u64,
    hardware: u64,
    model_by_precision: FxHashMap<Precision, u64>,
    first_ns: Option<i64>,
    last_ns: Option<i64>,
    op_gpu_ns: i64,
    known_gpu_ns: i64,
    roof_known_ns: i64,
    far_below_ns: i64,
    steps: FxHashMap<u64, (u64, u64)>,
}

/// The device figures: one entry per device with GPU work owned by an operator.
#[allow(clippy::cast_precision_loss)]
pub fn device_flops(
    profile: &Profile,
    att: &Attribution,
    peaks: &FxHashMap<u32, DevicePeaks>,
) -> Vec<DeviceFlops> {
    let steps = step_spans(profile);
    // Steps by start, for finding a call's step by binary search.
    let mut by_start: Vec<(i64, i64, u64)> = steps
        .iter()
        .map(|(n, r)| (r.start_ns, r.end_ns, *n))
        .collect();
    by_start.sort_unstable();
    let mut sums: FxHashMap<u32, DeviceSums> = FxHashMap::default();
    for c in &att.calls {
        let Some(d) = c.device else { continue };
        let s = sums.entry(d).or_default();
        s.op_gpu_ns = s.op_gpu_ns.saturating_add(c.gpu_ns);
        let first = c.first_gpu_ns.unwrap_or(0);
        s.first_ns = Some(s.first_ns.map_or(first, |v| v.min(first)));
        let Some(flops) = c.counted_flops() else {
            continue;
        };
        s.known_gpu_ns = s.known_gpu_ns.saturating_add(c.gpu_ns);
        let model = c.work.is_some_and(|w| w.family.is_model());
        s.hardware = s.hardware.saturating_add(flops);
        if model {
            s.model = s.model.saturating_add(flops);
            if let Some(p) = c.precision {
                let e = s.model_by_precision.entry(p).or_default();
                *e = e.saturating_add(flops);
            }
        }
        let roof = Roofline::of(
            Some(flops),
            c.counted_bytes(),
            c.gpu_ns,
            c.precision,
            peaks.get(&d),
        );
        if let Some(pct) = roof.pct_of_roof {
            s.roof_known_ns = s.roof_known_ns.saturating_add(c.gpu_ns);
            if pct < FAR_BELOW_ROOF_PCT {
                s.far_below_ns = s.far_below_ns.saturating_add(c.gpu_ns);
            }
        }
        if let Some(start) = c.first_gpu_ns {
            // The latest step starting at or before the call's first work, if it holds it.
            let k = by_start.partition_point(|&(s, _, _)| s <= start);
            let at = k
                .checked_sub(1)
                .map(|k| by_start[k])
                .filter(|&(_, end, _)| start < end);
            if let Some((_, _, n)) = at {
                let e = s.steps.entry(n).or_default();
                if model {
                    e.0 = e.0.saturating_add(flops);
                }
                e.1 = e.1.saturating_add(flops);
            }
        }
    }
    // The window's end: the last end of the GPU work of each device.
    for k in &att.kernels {
        let Some(c) = att.calls.get(k.call as usize) else {
            continue;
        };
        let Some(d) = c.device else { continue };
        let ev = &profile.tracks[k.kernel.track as usize].events;
        let end = ev.end_ns(k.kernel.index as usize);
        if let Some(s) = sums.get_mut(&d) {
            s.last_ns = Some(s.last_ns.map_or(end, |v| v.max(end)));
        }
    }
    let mut out: Vec<DeviceFlops> = sums
        .into_iter()
        .map(|(device, s)| {
            let peaks_of = peaks
                .get(&device)
                .cloned()
                .unwrap_or_else(|| DevicePeaks::of("", PeakOverride::default()));
            let precision = s
                .model_by_precision
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
                .map(|(p, _)| *p);
            let peak = precision.and_then(|p| peaks_of.flops_per_s(p));
            let window_ns = match (s.first_ns, s.last_ns) {
                (Some(a), Some(b)) if b > a => b - a,
                _ => 0,
            };
            let util = |flops: u64, time_ns: i64| -> Option<f64> {
                let pk = peak?;
                (time_ns > 0).then(|| flops as f64 / (time_ns as f64 * 1e-9 * pk))
            };
            let mut step_list: Vec<StepFlops> = steps
                .iter()
                .filter_map(|(n, r)| {
                    let (model, hardware) = s.steps.get(n).copied()?;
                    let time_ns = r.end_ns.saturating_sub(r.start_ns);
                    Some(StepFlops {
                        step: *n,
                        flops: model,
                        hardware_flops: hardware,
                        time_ns,
                        mfu: util(model, time_ns),
                    })
                })
                .collect();
            step_list.sort_by_key(|st| st.step);
            DeviceFlops {
                device,
                name: profile
                    .device(device)
                    .map(|d| d.name.clone())
                    .unwrap_or_default(),
                precision,
                peak_flops_per_s: peak,
                peak_bytes_per_s: peaks_of.bytes_per_s(),
                peak_source: peaks_of.source(),
                peaks: peaks_of,
                model_flops: s.model,
                hardware_flops: s.hardware,
                window_ns,
                mfu: util(s.model, window_ns),
                hfu: util(s.hardware, window_ns),
                op_gpu_ns: s.op_gpu_ns,
                known_gpu_ns: s.known_gpu_ns,
                far_below_roof_pct: (s.roof_known_ns > 0)
                    .then(|| 100.0 * s.far_below_ns as f64 / s.roof_known_ns as f64),
                steps: step_list,
            }
        })
        .collect();
    out.sort_by_key(|d| d.device);
    out
}
