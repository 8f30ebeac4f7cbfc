//! Which operator calls count their FLOPs (each piece of work once: `docs/flops.md`,
//! section 2) and which operator owns each kernel, copy and set (section 4), found through the
//! launch correlations as the CPU-operators table joins them.

use rustc_hash::FxHashMap;

use super::formulas::{self, Work};
use super::peaks::{Precision, precision_of_kernel};
use crate::analysis::overlap_or_all;
use crate::model::{EventKind, EventRef, FlowKind, NO_PARENT, Profile, Track, TrackKey};
use crate::strings::StrId;
use crate::time::TimeRange;

/// One operator call that counts FLOPs or owns GPU work.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpCall {
    /// The CPU-operator event.
    pub event: EventRef,
    /// Its work, when warpscope has a formula for the operator.
    pub work: Option<Work>,
    /// True when its FLOPs are counted: it has known FLOPs and no other call of the same work
    /// is counted instead (the count-once rule).
    pub counted: bool,
    /// GPU time of the kernels, copies and sets it owns, within the range.
    pub gpu_ns: i64,
    /// The part of `gpu_ns` in kernels that do its arithmetic: all but copies, sets and
    /// layout kernels ([`moves_data_only`]).
    pub arith_gpu_ns: i64,
    /// The device of its first owned GPU work.
    pub device: Option<u32>,
    /// Start of its first owned GPU work (for the step it belongs to).
    pub first_gpu_ns: Option<i64>,
    /// The precision of its arithmetic: its longest kernel's, when the kernel's name says,
    /// else its input type's.
    pub precision: Option<Precision>,
}

impl OpCall {
    /// FLOPs counted for this call: `None` when not counted or unknown.
    pub fn counted_flops(&self) -> Option<u64> {
        if self.counted { self.work?.flops } else { None }
    }

    /// Bytes counted for this call (with its FLOPs).
    pub fn counted_bytes(&self) -> Option<u64> {
        if self.counted { self.work?.bytes } else { None }
    }
}

/// One kernel, copy or set and the operator call that owns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelShare {
    /// The GPU event.
    pub kernel: EventRef,
    /// The owning call's index in [`Attribution::calls`].
    pub call: u32,
    /// Its duration within the range.
    pub dur_ns: i64,
    /// True for a kernel that does its owner's arithmetic (not a copy, a set or a layout
    /// kernel: [`moves_data_only`]).
    pub arith: bool,
    /// The precision the kernel's name states ([`precision_of_kernel`]), if any.
    pub stated: Option<Precision>,
}

/// The operator calls of a profile with their FLOPs and the GPU work each owns.
#[derive(Clone, Debug, Default)]
pub struct Attribution {
    /// Calls that count FLOPs or own GPU work and touch the range, by event.
    pub calls: Vec<OpCall>,
    /// GPU work launched by an operator, by event.
    pub kernels: Vec<KernelShare>,
    /// Operator events whose shapes are recorded and usable but fit no formula (a convolution
    /// without `Concrete Inputs`, matrices that do not multiply) or whose FLOPs overflow 64
    /// bits: their FLOPs are unknown.
    pub unusable_calls: u64,
}

impl Attribution {
    /// The call of CPU-operator event `e`, if it counts FLOPs or owns GPU work.
    pub fn call(&self, e: EventRef) -> Option<&OpCall> {
        let i = self.calls.binary_search_by_key(&e, |c| c.event).ok()?;
        self.calls.get(i)
    }

    /// The owner and share of kernel, copy or set `e`.
    pub fn kernel(&self, e: EventRef) -> Option<&KernelShare> {
        let i = self.kernels.binary_search_by_key(&e, |k| k.kernel).ok()?;
        self.kernels.get(i)
    }

    /// FLOPs of kernel `e` ([`Attribution::share_flops`]).
    pub fn kernel_flops(&self, e: EventRef) -> Option<f64> {
        self.share_flops(self.kernel(e)?)
    }

    /// Bytes of kernel `e` ([`Attribution::share_bytes`]).
    pub fn kernel_bytes(&self, e: EventRef) -> Option<f64> {
        self.share_bytes(self.kernel(e)?)
    }

    /// The FLOPs of share `k`: its owner's counted FLOPs split by GPU time over the owner's
    /// kernels that do arithmetic, 0 for its other work (copies, sets, layout kernels:
    /// [`moves_data_only`]); where the owner launched no kernel that does arithmetic, split by
    /// time over all it launched (`docs/flops.md`, section 4). `None` when unknown or not
    /// counted.
    pub fn share_flops(&self, k: &KernelShare) -> Option<f64> {
        let c = self.calls.get(k.call as usize)?;
        split(c, k, c.counted_flops()?, Some(0.0))
    }

    /// The bytes of share `k`, split as its FLOPs: the operator's inputs and outputs are what
    /// its arithmetic kernels read and write; what a copy, set or layout kernel beside them
    /// moves is not known from the shapes (`None`).
    pub fn share_bytes(&self, k: &KernelShare) -> Option<f64> {
        let c = self.calls.get(k.call as usize)?;
        split(c, k, c.counted_bytes()?, None)
    }
}

/// `total`, a figure of call `c`, split for share `k` (section 4): by time over the call's
/// arithmetic kernels, `other` for its other work, by time over all its work where it has no
/// arithmetic kernel.
fn split(c: &OpCall, k: &KernelShare, total: u64, other: Option<f64>) -> Option<f64> {
    if c.arith_gpu_ns <= 0 {
        share(total, k.dur_ns, c.gpu_ns)
    } else if k.arith {
        share(total, k.dur_ns, c.arith_gpu_ns)
    } else {
        other
    }
}

/// True for a kernel that only moves data for its operator: the layout transforms
/// (`nchwToNhwcKernel`, `nhwcToNchwKernel`) and workspace fills (`init_device_workspace_kernel`)
/// that cuDNN runs around a convolution. They get none of the operator's FLOPs.
pub fn moves_data_only(kernel_name: &str) -> bool {
    ["nchwToNhwc", "nhwcToNchw", "init_device_workspace"]
        .iter()
        .any(|p| kernel_name.contains(p))
}

/// `total` × `part_ns` / `whole_ns`.
#[allow(clippy::cast_precision_loss)]
pub(super) fn share(total: u64, part_ns: i64, whole_ns: i64) -> Option<f64> {
    (whole_ns > 0).then(|| total as f64 * part_ns as f64 / whole_ns as f64)
}

/// The work of an operator call by name and recorded inputs (`None` when warpscope has no
/// formula for the operator; the FLOPs inside are `None` when the call has no usable shapes).
pub fn op_work(profile: &Profile, track: &Track, index: usize) -> Option<Work> {
    let name = profile.str(track.events.name[index]);
    match profile.op_args(track, index) {
        Some(args) => formulas::work(name, args),
        None => formulas::family_of(name).map(|family| Work {
            family,
            flops: None,
            bytes: None,
            dtype: None,
        }),
    }
}

/// No work: not an operator.
const NO_WORK: u32 = u32::MAX;
/// An event that owns no GPU work.
const NO_SLOT: u32 = u32::MAX;
/// Known FLOPs of a model operator (matrix product, convolution, attention) nested in the
/// event.
const HEAVY_BELOW: u8 = 1;
/// Known FLOPs of any operator nested in the event.
const KNOWN_BELOW: u8 = 2;
/// The event counts its FLOPs.
const COUNTED: u8 = 4;
/// The event is nested in a counted model operator.
const INSIDE_HEAVY: u8 = 8;

/// Works of distinct (name, inputs) pairs, worked out once each.
#[derive(Default)]
pub(super) struct Works {
    list: Vec<Option<Work>>,
    /// Per work: recorded, usable shapes that still give no FLOPs.
    unusable: Vec<bool>,
    index: FxHashMap<(StrId, u32), u32>,
}

impl Works {
    fn of(&mut self, profile: &Profile, track: &Track, i: usize) -> u32 {
        let key = (track.events.name[i], track.events.detail[i]);
        if let Some(&w) = self.index.get(&key) {
            return w;
        }
        let w = u32::try_from(self.list.len()).unwrap_or(NO_WORK);
        let work = op_work(profile, track, i);
        let usable = profile
            .op_args(track, i)
            .is_some_and(|a| !a.has_invalid_dims() && !a.has_unknown_dtype());
        self.unusable
            .push(usable && work.is_some_and(|w| w.flops.is_none()));
        self.list.push(work);
        self.index.insert(key, w);
        w
    }

    fn get(&self, w: u32) -> Option<Work> {
        self.list.get(w as usize).copied().flatten()
    }

    /// `Some(true)` for known FLOPs of a model operator, `Some(false)` for known FLOPs of
    /// another, `None` for unknown FLOPs or no formula.
    fn known(&self, w: u32) -> Option<bool> {
        let w = self.get(w)?;
        w.flops.map(|_| w.family.is_model())
    }
}

/// The counted calls and owners of one CPU track: per event, its work, flags and owning call
/// (an event index, or [`NO_PARENT`]).
struct TrackCount {
    /// Events whose usable shapes gave no FLOPs.
    unusable: u64,
    work: Vec<u32>,
    flags: Vec<u8>,
    owner: Vec<u32>,
}

/// The count-once rule on one track. A model operator with known FLOPs counts them unless a
/// model operator with known FLOPs is nested in it (the innermost one counts: `aten::conv2d`
/// → `aten::convolution` → `aten::cudnn_convolution`, autocast's double `aten::conv2d`,
/// `aten::linear` → `aten::addmm`). Another operator with known FLOPs counts them unless an
/// operator with known FLOPs is nested in it (`aten::relu_` → `aten::clamp_min_`) or it is
/// nested in a counted model operator (whose formula holds the whole call). The owner of an
/// event is the nearest counted call around it, else the innermost operator around it.
fn count_track(profile: &Profile, track: &Track, works: &mut Works) -> TrackCount {
    let ev = &track.events;
    let n = ev.len();
    let mut work = vec![NO_WORK; n];
    let mut unusable = 0u64;
    for (i, w) in work.iter_mut().enumerate() {
        if ev.kind[i] == EventKind::CpuOp {
            *w = works.of(profile, track, i);
            unusable += u64::from(works.unusable[*w as usize]);
        }
    }
    // From the last event to the first (children come after their parent): what is nested
    // in each event.
    let mut flags = vec![0u8; n];
    for i in (0..n).rev() {
        let mut f = flags[i] & (HEAVY_BELOW | KNOWN_BELOW);
        match works.known(work[i]) {
            Some(true) => f |= HEAVY_BELOW | KNOWN_BELOW,
            Some(false) => f |= KNOWN_BELOW,
            None => {}
        }
        let p = ev.parent[i];
        if p != NO_PARENT {
            flags[p as usize] |= f;
        }
    }
    // From the first to the last: what is around each event.
    let mut owner = vec![NO_PARENT; n];
    for i in 0..n {
        let p = ev.parent[i];
        let (inside, parent_owner) = if p == NO_PARENT {
            (false, NO_PARENT)
        } else {
            let p = p as usize;
            let heavy = flags[p] & COUNTED != 0 && works.known(work[p]) == Some(true);
            (flags[p] & INSIDE_HEAVY != 0 || heavy, owner[p])
        };
        let counted = match works.known(work[i]) {
            Some(true) => flags[i] & HEAVY_BELOW == 0,
            Some(false) => !inside && flags[i] & KNOWN_BELOW == 0,
            None => false,
        };
        if inside {
            flags[i] |= INSIDE_HEAVY;
        }
        if counted {
            flags[i] |= COUNTED;
        }
        let owner_counted =
            parent_owner != NO_PARENT && flags[parent_owner as usize] & COUNTED != 0;
        owner[i] = if counted {
            u32::try_from(i).unwrap_or(NO_PARENT)
        } else if owner_counted {
            parent_owner
        } else if ev.kind[i] == EventKind::CpuOp {
            u32::try_from(i).unwrap_or(NO_PARENT)
        } else {
            parent_owner
        };
    }
    TrackCount {
        unusable,
        work,
        flags,
        owner,
    }
}

/// What a call owns, gathered from the launches.
#[derive(Clone, Copy, Default)]
struct Owned {
    gpu_ns: i64,
    arith_ns: i64,
    device: Option<u32>,
    first_ns: Option<i64>,
    /// The precision of its longest kernel whose name states one, and that kernel's time.
    longest: Option<(i64, Precision)>,
}

/// The operator calls of `profile` that touch `range`, with the FLOPs each counts and the
/// GPU work each owns within the range.
pub fn attribute(profile: &Profile, range: TimeRange) -> Attribution {
    let mut works = Works::default();
    let mut counts: Vec<Option<TrackCount>> = Vec::with_capacity(profile.tracks.len());
    for track in &profile.tracks {
        let has_ops = !track.key.is_gpu() && track.events.kind.contains(&EventKind::CpuOp);
        counts.push(has_ops.then(|| count_track(profile, track, &mut works)));
    }
    // GPU work by owner: per track, the slot in `owned` of each owner event (or `NO_SLOT`),
    // and the shares.
    let mut slots: Vec<Vec<u32>> = counts
        .iter()
        .map(|c| {
            c.as_ref()
                .map_or_else(Vec::new, |c| vec![NO_SLOT; c.owner.len()])
        })
        .collect();
    let mut owned: Vec<Owned> = Vec::new();
    let mut shares: Vec<(EventRef, EventRef, i64, bool, Option<Precision>)> = Vec::new();
    // The precision each kernel name states, and whether it moves data only, looked at once
    // per name.
    let mut named: FxHashMap<StrId, (Option<Precision>, bool)> = FxHashMap::default();
    for flow in &profile.flows {
        if flow.kind != FlowKind::Launch {
            continue;
        }
        let Some(Some(count)) = counts.get(flow.from.track as usize) else {
            continue;
        };
        let Some(&o) = count.owner.get(flow.from.index as usize) else {
            continue;
        };
        if o == NO_PARENT {
            continue;
        }
        let gpu_track = &profile.tracks[flow.to.track as usize];
        let gi = flow.to.index as usize;
        let g = &gpu_track.events;
        if !g.kind[gi].is_gpu_activity() {
            continue;
        }
        let Some(dur_ns) = overlap_or_all(&range, g.start_ns[gi], g.dur_ns[gi]) else {
            continue;
        };
        let device = match gpu_track.key {
            TrackKey::Gpu { device, .. } => Some(device),
            _ => None,
        };
        let Some(slot) = slots
            .get_mut(flow.from.track as usize)
            .and_then(|t| t.get_mut(o as usize))
        else {
            continue;
        };
        if *slot == NO_SLOT {
            *slot = u32::try_from(owned.len()).unwrap_or(NO_SLOT);
            owned.push(Owned::default());
        }
        let Some(entry) = owned.get_mut(*slot as usize) else {
            continue;
        };
        entry.gpu_ns = entry.gpu_ns.saturating_add(dur_ns);
        if entry.first_ns.is_none_or(|f| g.start_ns[gi] < f) {
            entry.first_ns = Some(g.start_ns[gi]);
            entry.device = device;
        }
        let (mut arith, mut stated) = (false, None);
        if g.kind[gi] == EventKind::Kernel {
            let name = g.name[gi];
            let (p, data_only) = *named.entry(name).or_insert_with(|| {
                let text = profile.str(name);
                (precision_of_kernel(text), moves_data_only(text))
            });
            if let Some(p) = p
                && entry.longest.is_none_or(|(d, _)| dur_ns > d)
            {
                entry.longest = Some((dur_ns, p));
            }
            (arith, stated) = (!data_only, p);
        }
        if arith {
            entry.arith_ns = entry.arith_ns.saturating_add(dur_ns);
        }
        let owner = EventRef {
            track: flow.from.track,
            index: o,
        };
        shares.push((flow.to, owner, dur_ns, arith, stated));
    }
    let mut calls: Vec<OpCall> = Vec::new();
    for (t, count) in counts.iter().enumerate() {
        let Some(count) = count else { continue };
        let track = &profile.tracks[t];
        let ev = &track.events;
        let t = u32::try_from(t).unwrap_or(u32::MAX);
        for i in 0..ev.len() {
            // Owners and counted calls are operators: other events are not looked up.
            if ev.kind[i] != EventKind::CpuOp {
                continue;
            }
            let counted = count.flags[i] & COUNTED != 0;
            let index = u32::try_from(i).unwrap_or(u32::MAX);
            let own = slots[t as usize]
                .get(i)
                .and_then(|&slot| owned.get(slot as usize))
                .copied();
            if !counted && own.is_none() {
                continue;
            }
            if own.is_none() && overlap_or_all(&range, ev.start_ns[i], ev.dur_ns[i]).is_none() {
                continue;
            }
            let own = own.unwrap_or_default();
            let work = works.get(count.work[i]);
            let from_kernel = own.longest.map(|(_, p)| p);
            let precision =
                from_kernel.or_else(|| work.and_then(|w| w.dtype).and_then(Precision::of_dtype));
            calls.push(OpCall {
                event: EventRef { track: t, index },
                work,
                counted,
                gpu_ns: own.gpu_ns,
                arith_gpu_ns: own.arith_ns,
                device: own.device,
                first_gpu_ns: own.first_ns,
                precision,
            });
        }
    }
    // `calls` is in event order; the shares point at calls by position.
    let mut kernels: Vec<KernelShare> = shares
        .into_iter()
        .filter_map(|(kernel, owner, dur_ns, arith, stated)| {
            let call = calls.binary_search_by_key(&owner, |c| c.event).ok()?;
            Some(KernelShare {
                kernel,
                call: u32::try_from(call).ok()?,
                dur_ns,
                arith,
                stated,
            })
        })
        .collect();
    kernels.sort_unstable_by_key(|k| k.kernel);
    kernels.dedup_by_key(|k| k.kernel);
    let unusable_calls = counts.iter().flatten().map(|c| c.unusable).sum();
    Attribution {
        calls,
        kernels,
        unusable_calls,
    }
}
