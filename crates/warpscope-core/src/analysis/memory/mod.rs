//! Where the memory goes: per device the allocated and reserved peaks and when, what was live
//! at the peak and which operators allocated it, the operators that allocate most, what is
//! still live at the end, and the memory findings. The rules are in `docs/memory.md`.

mod attribution;
mod curve;
mod findings;

pub use attribution::{Attribution, NO_OPERATOR, attribute, stack_operator};
pub use curve::{MemoryCurve, SpanMax, Sweep};
pub use findings::{MemoryFinding, MemoryRule};

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::model::{MemoryAction, MemoryDevice, MemorySource, Profile};
use crate::time::TimeRange;

/// The group of live memory whose allocation the records do not show: it was allocated before
/// the recording started.
pub const BEFORE_RECORDING: &str = "(allocated before the recording)";

/// Live memory of one operator (or size class).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LiveGroup {
    /// The operator (or the size class).
    pub operator: String,
    /// Bytes live.
    pub bytes: i64,
    /// Number of blocks live (0 for [`BEFORE_RECORDING`], whose blocks are not known).
    pub count: u64,
    /// The record of the group's largest block (for the viewer to show where it came from).
    #[serde(skip)]
    pub largest_record: Option<u32>,
}

/// Allocations or frees: how many and how many bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CountBytes {
    /// How many.
    pub count: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// A failed allocation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OomEvent {
    /// When.
    pub time_ns: i64,
    /// Bytes asked for.
    pub bytes: u64,
    /// Bytes allocated then.
    pub allocated_bytes: i64,
    /// Bytes reserved then.
    pub reserved_bytes: i64,
    /// The operator that asked.
    pub operator: String,
}

/// Memory of one device over the range.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceMemory {
    /// The device: `"cpu"` or the GPU's ordinal.
    pub device: MemoryDevice,
    /// The device's memory in bytes, where the profile says.
    pub capacity_bytes: Option<u64>,
    /// Largest allocated bytes.
    pub peak_allocated_bytes: i64,
    /// When the allocated peak was first reached (the range's start when it was carried in).
    pub peak_allocated_ns: i64,
    /// Largest reserved bytes.
    pub peak_reserved_bytes: i64,
    /// When the reserved peak was first reached.
    pub peak_reserved_ns: i64,
    /// Reserved bytes at the allocated peak.
    pub reserved_at_peak_bytes: i64,
    /// Reserved but not allocated at the allocated peak (fragmentation and cache).
    pub fragmentation_at_peak_bytes: i64,
    /// Allocated bytes at the range's start (the value carried into it; the first record's
    /// value before it for the whole run).
    pub start_allocated_bytes: i64,
    /// Lowest allocated bytes in the range (what stays allocated through a step: weights,
    /// gradients, optimizer state).
    pub low_allocated_bytes: i64,
    /// Allocated bytes at the range's end.
    pub end_allocated_bytes: i64,
    /// Reserved bytes at the range's end.
    pub end_reserved_bytes: i64,
    /// Allocations in the range.
    pub allocations: u64,
    /// Frees in the range.
    pub frees: u64,
    /// Bytes allocated in the range.
    pub allocated_total_bytes: u64,
    /// What was live at the allocated peak, by the operator that allocated it, largest first.
    pub live_at_peak: Vec<LiveGroup>,
    /// What was live at the allocated peak, by size class.
    pub live_at_peak_by_size: Vec<LiveGroup>,
    /// Bytes live at the allocated peak that operators outside the backward pass and the
    /// optimizer allocated (activations, for a training step).
    pub forward_live_at_peak_bytes: i64,
    /// Allocations made in the range and never freed in the recording.
    pub never_freed: CountBytes,
    /// Frees in the range of blocks allocated before the recording.
    pub frees_without_allocation: CountBytes,
    /// Failed allocations in the range.
    pub ooms: Vec<OomEvent>,
}

/// Allocations of one operator over the range, all devices together.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OperatorMemory {
    /// Operator name.
    pub name: String,
    /// Allocations made by it or by operators it called.
    pub alloc_count: u64,
    /// Their bytes.
    pub alloc_bytes: u64,
    /// Allocations made by it directly (it was the innermost operator).
    pub self_alloc_count: u64,
    /// Their bytes.
    pub self_alloc_bytes: u64,
    /// The record of its largest allocation.
    #[serde(skip)]
    pub largest_record: Option<u32>,
}

/// The memory report of a profile over a range.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryReport {
    /// Where the records came from.
    pub source: MemorySource,
    /// Per device, CPU first.
    pub devices: Vec<DeviceMemory>,
    /// The operators that allocate most, by bytes with children.
    pub operators: Vec<OperatorMemory>,
    /// The memory findings, largest first.
    pub findings: Vec<MemoryFinding>,
}

/// The group of live memory that cannot be told apart because the records have no addresses
/// (PyTorch before 1.10): allocations cannot be matched to their frees.
pub const UNMATCHED: &str = "(not matched: the trace has no addresses)";

/// A device's memory peaks, as `summary` and `analyze` mention them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MemoryPeak {
    /// The device: `"cpu"` or the GPU's ordinal.
    pub device: MemoryDevice,
    /// Largest allocated bytes.
    pub peak_allocated_bytes: i64,
    /// When it was first reached.
    pub peak_allocated_ns: i64,
    /// Largest reserved bytes.
    pub peak_reserved_bytes: i64,
}

/// The peaks of every device with memory records over `range` (none for a profile without).
pub fn memory_peaks(profile: &Profile, range: TimeRange) -> Vec<MemoryPeak> {
    let none = Attribution::default();
    profile
        .memory
        .devices()
        .into_iter()
        .filter_map(|d| device_memory(profile, &none, d, range, 1))
        .map(|d| MemoryPeak {
            device: d.device,
            peak_allocated_bytes: d.peak_allocated_bytes,
            peak_allocated_ns: d.peak_allocated_ns,
            peak_reserved_bytes: d.peak_reserved_bytes,
        })
        .collect()
}

/// Size classes of live memory, by upper bound in bytes.
const SIZE_CLASSES: [(u64, &str); 5] = [
    (1 << 20, "< 1 MiB (small pool)"),
    (10 << 20, "1-10 MiB"),
    (100 << 20, "10-100 MiB"),
    (1 << 30, "100 MiB-1 GiB"),
    (u64::MAX, ">= 1 GiB"),
];

/// The size class of a block of `bytes`.
pub fn size_class(bytes: u64) -> &'static str {
    SIZE_CLASSES
        .iter()
        .find(|(upper, _)| bytes < *upper)
        .map_or(SIZE_CLASSES[4].1, |(_, name)| name)
}

/// The memory report of `profile` over `range`, with at most `top` rows per list (0: all).
pub fn memory_report(profile: &Profile, range: TimeRange, top: usize) -> MemoryReport {
    let attribution = attribute(profile);
    memory_report_with(profile, &attribution, range, top)
}

/// [`memory_report`] with the operators already worked out (the viewer keeps them).
pub fn memory_report_with(
    profile: &Profile,
    attribution: &Attribution,
    range: TimeRange,
    top: usize,
) -> MemoryReport {
    let devices: Vec<DeviceMemory> = profile
        .memory
        .devices()
        .into_iter()
        .filter_map(|d| device_memory(profile, attribution, d, range, top))
        .collect();
    let mut operators = operator_memory(profile, attribution, range);
    truncate(&mut operators, top);
    let findings = findings::memory_findings(&devices);
    MemoryReport {
        source: profile.memory.source,
        devices,
        operators,
        findings,
    }
}

fn truncate<T>(v: &mut Vec<T>, top: usize) {
    if top > 0 {
        v.truncate(top);
    }
}

/// True for the actions that the live blocks and the totals follow.
fn in_range(range: &TimeRange, t_ns: i64) -> bool {
    range.is_all() || (t_ns >= range.start_ns && t_ns < range.end_ns)
}

/// The signed change a record makes to the allocated total.
fn allocated_delta(action: MemoryAction, bytes: u64) -> i64 {
    let b = i64::try_from(bytes).unwrap_or(i64::MAX);
    match action {
        MemoryAction::Alloc => b,
        MemoryAction::Free => -b,
        _ => 0,
    }
}

#[allow(clippy::too_many_lines)]
fn device_memory(
    profile: &Profile,
    attribution: &Attribution,
    device: MemoryDevice,
    range: TimeRange,
    top: usize,
) -> Option<DeviceMemory> {
    let ev = &profile.memory.events;
    let idx: Vec<usize> = (0..ev.len()).filter(|&i| ev.device[i] == device).collect();
    let first_in = idx.partition_point(|&i| !range.is_all() && ev.time_ns[i] < range.start_ns);
    let end_in = idx.partition_point(|&i| range.is_all() || ev.time_ns[i] < range.end_ns);
    // The totals carried into the range: the last record before it, or the first record's
    // value before it.
    let (start_alloc, start_reserved) = match first_in.checked_sub(1) {
        Some(k) => (ev.allocated_bytes[idx[k]], ev.reserved_bytes[idx[k]]),
        None => {
            let &i = idx.first()?;
            let before = ev.allocated_bytes[i] - allocated_delta(ev.action[i], ev.bytes[i]);
            (before.max(0), ev.reserved_bytes[i])
        }
    };
    if first_in >= end_in && first_in == 0 {
        return None;
    }
    let start_ns = if range.is_all() {
        ev.time_ns[idx[0]]
    } else {
        range.start_ns
    };
    let mut d = DeviceMemory {
        device,
        capacity_bytes: match device {
            MemoryDevice::Gpu(id) => profile.device(id).and_then(|d| d.memory_bytes),
            MemoryDevice::Cpu => None,
        },
        peak_allocated_bytes: start_alloc,
        peak_allocated_ns: start_ns,
        peak_reserved_bytes: start_reserved,
        peak_reserved_ns: start_ns,
        reserved_at_peak_bytes: start_reserved,
        fragmentation_at_peak_bytes: 0,
        start_allocated_bytes: start_alloc,
        low_allocated_bytes: start_alloc,
        end_allocated_bytes: start_alloc,
        end_reserved_bytes: start_reserved,
        allocations: 0,
        frees: 0,
        allocated_total_bytes: 0,
        live_at_peak: Vec::new(),
        live_at_peak_by_size: Vec::new(),
        forward_live_at_peak_bytes: 0,
        never_freed: CountBytes::default(),
        frees_without_allocation: CountBytes::default(),
        ooms: Vec::new(),
    };
    // Position in `idx` of the record that set the allocated peak (None: carried in).
    let mut peak_at: Option<usize> = None;
    for (k, &i) in idx.iter().enumerate().take(end_in).skip(first_in) {
        let (a, r, t) = (ev.allocated_bytes[i], ev.reserved_bytes[i], ev.time_ns[i]);
        match ev.action[i] {
            MemoryAction::Oom => {
                d.ooms.push(OomEvent {
                    time_ns: t,
                    bytes: ev.bytes[i],
                    allocated_bytes: a,
                    reserved_bytes: r,
                    operator: attribution.name(attribution.innermost(i)).to_string(),
                });
                continue;
            }
            MemoryAction::Snapshot => continue,
            MemoryAction::Alloc => {
                d.allocations += 1;
                d.allocated_total_bytes = d.allocated_total_bytes.saturating_add(ev.bytes[i]);
            }
            MemoryAction::Free => d.frees += 1,
            _ => {}
        }
        if a > d.peak_allocated_bytes {
            (
                d.peak_allocated_bytes,
                d.peak_allocated_ns,
                d.reserved_at_peak_bytes,
            ) = (a, t, r);
            peak_at = Some(k);
        }
        d.low_allocated_bytes = d.low_allocated_bytes.min(a);
        if r > d.peak_reserved_bytes {
            (d.peak_reserved_bytes, d.peak_reserved_ns) = (r, t);
        }
        (d.end_allocated_bytes, d.end_reserved_bytes) = (a, r);
    }
    d.fragmentation_at_peak_bytes = (d.reserved_at_peak_bytes - d.peak_allocated_bytes).max(0);
    // The blocks live after each record, replayed from the first record: at the peak, and at
    // the end for what the range allocated.
    let peak_pos = peak_at.or_else(|| first_in.checked_sub(1));
    let mut live: FxHashMap<u64, usize> = FxHashMap::default();
    let mut at_peak: Option<Vec<usize>> = None;
    if peak_pos.is_none() {
        at_peak = Some(Vec::new());
    }
    // Address 0 is no address: such records cannot be matched.
    let mut unmatched = false;
    for (k, &i) in idx.iter().enumerate() {
        match ev.action[i] {
            MemoryAction::Alloc | MemoryAction::Free if ev.addr[i] == 0 => unmatched = true,
            MemoryAction::Alloc => {
                live.insert(ev.addr[i], i);
            }
            MemoryAction::Free => {
                let older = live.remove(&ev.addr[i]).is_none();
                if older && k >= first_in && k < end_in {
                    d.frees_without_allocation.count += 1;
                    d.frees_without_allocation.bytes =
                        d.frees_without_allocation.bytes.saturating_add(ev.bytes[i]);
                }
            }
            _ => {}
        }
        if Some(k) == peak_pos {
            at_peak = Some(live.values().copied().collect());
        }
    }
    for &i in live.values() {
        if in_range(&range, ev.time_ns[i]) {
            d.never_freed.count += 1;
            d.never_freed.bytes = d.never_freed.bytes.saturating_add(ev.bytes[i]);
        }
    }
    let blocks = at_peak.unwrap_or_default();
    let rest = if unmatched {
        UNMATCHED
    } else {
        BEFORE_RECORDING
    };
    d.live_at_peak = group_live(
        &blocks,
        d.peak_allocated_bytes,
        rest,
        |i| attribution.name(attribution.innermost(i)).to_string(),
        ev,
    );
    d.live_at_peak_by_size = group_live(
        &blocks,
        d.peak_allocated_bytes,
        rest,
        |i| size_class(ev.bytes[i]).to_string(),
        ev,
    );
    d.forward_live_at_peak_bytes = blocks
        .iter()
        .filter(|&&i| findings::is_forward(attribution, i))
        .map(|&i| i64::try_from(ev.bytes[i]).unwrap_or(i64::MAX))
        .fold(0i64, i64::saturating_add);
    truncate(&mut d.live_at_peak, top);
    Some(d)
}

/// Live blocks grouped by `key`, largest first (then by name), with what the blocks do not
/// account for of `total` as the group `rest`.
fn group_live(
    blocks: &[usize],
    total: i64,
    rest: &str,
    key: impl Fn(usize) -> String,
    ev: &crate::model::memory::MemoryEvents,
) -> Vec<LiveGroup> {
    let mut groups: FxHashMap<String, LiveGroup> = FxHashMap::default();
    let mut known: i64 = 0;
    for &i in blocks {
        let bytes = i64::try_from(ev.bytes[i]).unwrap_or(i64::MAX);
        known = known.saturating_add(bytes);
        let name = key(i);
        let g = groups.entry(name.clone()).or_insert(LiveGroup {
            operator: name,
            bytes: 0,
            count: 0,
            largest_record: None,
        });
        g.bytes = g.bytes.saturating_add(bytes);
        g.count += 1;
        if g.largest_record
            .is_none_or(|r| ev.bytes[r as usize] < ev.bytes[i])
        {
            g.largest_record = u32::try_from(i).ok();
        }
    }
    let mut out: Vec<LiveGroup> = groups.into_values().collect();
    if total > known {
        out.push(LiveGroup {
            operator: rest.to_string(),
            bytes: total - known,
            count: 0,
            largest_record: None,
        });
    }
    out.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then_with(|| a.operator.cmp(&b.operator))
    });
    out
}

/// Allocations per operator name over the range, every device.
fn operator_memory(
    profile: &Profile,
    attribution: &Attribution,
    range: TimeRange,
) -> Vec<OperatorMemory> {
    let ev = &profile.memory.events;
    let mut rows: FxHashMap<u32, OperatorMemory> = FxHashMap::default();
    let mut seen: Vec<u32> = Vec::new();
    for i in 0..ev.len() {
        if ev.action[i] != MemoryAction::Alloc || !in_range(&range, ev.time_ns[i]) {
            continue;
        }
        let bytes = ev.bytes[i];
        seen.clear();
        for (depth, &op) in attribution.chain(i).iter().enumerate() {
            let row = rows.entry(op).or_insert_with(|| OperatorMemory {
                name: attribution.name(op).to_string(),
                ..OperatorMemory::default()
            });
            if row
                .largest_record
                .is_none_or(|r| ev.bytes[r as usize] < bytes)
            {
                row.largest_record = u32::try_from(i).ok();
            }
            if depth == 0 {
                row.self_alloc_count += 1;
                row.self_alloc_bytes = row.self_alloc_bytes.saturating_add(bytes);
            }
            // An operator that calls itself counts an allocation once.
            if !seen.contains(&op) {
                seen.push(op);
                row.alloc_count += 1;
                row.alloc_bytes = row.alloc_bytes.saturating_add(bytes);
            }
        }
    }
    let mut out: Vec<OperatorMemory> = rows.into_values().collect();
    out.sort_by(|a, b| {
        b.alloc_bytes
            .cmp(&a.alloc_bytes)
            .then_with(|| b.self_alloc_bytes.cmp(&a.self_alloc_bytes))
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}
