//! Memory records in the builder: pushed on the file's clock with the thread track that made
//! them, put in time order and onto the profile's clock and track numbers in `finish`.

use super::{ProfileBuilder, TrackId, shift};
use crate::model::memory::{MemoryEvents, NO_STACK, NO_TRACK};
use crate::model::{MemoryAction, MemoryDevice};

/// The totals of a record whose file does not give them: `finish` replays them (see
/// [`ProfileBuilder::push_memory`]).
pub const UNKNOWN_TOTAL: i64 = i64::MIN;

/// One memory record as an importer pushes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryRecord {
    /// Time on the file's clock, in nanoseconds.
    pub time_ns: i64,
    /// Whose memory.
    pub device: MemoryDevice,
    /// What happened.
    pub action: MemoryAction,
    /// Address of the block or segment.
    pub addr: u64,
    /// Size in bytes.
    pub bytes: u64,
    /// Bytes allocated on the device after the record.
    pub allocated_bytes: i64,
    /// Bytes reserved on the device after the record.
    pub reserved_bytes: i64,
    /// The thread track that made the call, if known.
    pub track: Option<TrackId>,
    /// CUDA stream (0 when unknown).
    pub stream: u64,
    /// Stack index into the builder's `memory.stacks`, or [`NO_STACK`].
    pub stack: u32,
}

impl MemoryRecord {
    /// A record with no thread, stream or stack.
    pub fn new(
        time_ns: i64,
        device: MemoryDevice,
        action: MemoryAction,
        addr: u64,
        bytes: u64,
    ) -> Self {
        Self {
            time_ns,
            device,
            action,
            addr,
            bytes,
            allocated_bytes: 0,
            reserved_bytes: 0,
            track: None,
            stream: 0,
            stack: NO_STACK,
        }
    }
}

impl ProfileBuilder {
    /// Adds a memory record (any order; equal times keep the order of the pushes). A record
    /// whose totals are [`UNKNOWN_TOTAL`] makes `finish` replay its device's totals from the
    /// sizes: allocated is the running sum of allocations minus frees from the first record,
    /// raised so that its lowest point is 0 (what was allocated before is unknown), and
    /// reserved is taken equal to allocated; warning `memory_totals_replayed` says so.
    pub fn push_memory(&mut self, record: MemoryRecord) {
        self.memory_records.push(record);
    }

    /// Number of memory records pushed so far.
    pub fn memory_record_count(&self) -> usize {
        self.memory_records.len()
    }

    /// The GPUs the memory records pushed so far name, in order, each once.
    pub fn memory_gpu_ids(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = self
            .memory_records
            .iter()
            .filter_map(|r| match r.device {
                MemoryDevice::Gpu(id) => Some(id),
                MemoryDevice::Cpu => None,
            })
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Renames the device of every memory record pushed so far (a file that numbers memory
    /// by another scheme than its GPU events: ROCm Kineto traces).
    pub fn remap_memory_devices(&mut self, f: impl Fn(MemoryDevice) -> MemoryDevice) {
        for r in &mut self.memory_records {
            r.device = f(r.device);
        }
    }

    /// The records in time order on the profile's clock, tracks as numbered by `position` (old
    /// track id to place in the finished profile). Records that cannot be placed within the
    /// time limit of the origin are left out and counted.
    ///
    /// Compact keys (time, index of the push) are sorted rather than the records: a Kineto
    /// trace's records come as runs already in order (one per thread and profiling window),
    /// which the stable sort merges, and the keys are a fifth of the records' bytes (sorting
    /// the records took 30 ms for 571 k of them). The records are then put in that order in
    /// place, so no second copy of them is made.
    pub(super) fn finish_memory(
        &mut self,
        origin_raw_ns: i64,
        position: &[u32],
    ) -> (MemoryEvents, u64) {
        let mut records = std::mem::take(&mut self.memory_records);
        let before = records.len();
        records.retain_mut(|r| match shift(r.time_ns, origin_raw_ns) {
            Some(t) => {
                r.time_ns = t;
                true
            }
            None => false,
        });
        let dropped = (before - records.len()) as u64;
        let mut keys: Vec<(i64, usize)> = records
            .iter()
            .enumerate()
            .map(|(i, r)| (r.time_ns, i))
            .collect();
        // Stable: records of one time stay in the allocator's order.
        crate::parallel::sort_by_key(&mut keys, |&(t, _)| t);
        permute(&mut records, &mut keys);
        drop(keys);
        let n = records.len();
        let mut ev = MemoryEvents {
            time_ns: Vec::with_capacity(n),
            device: Vec::with_capacity(n),
            action: Vec::with_capacity(n),
            addr: Vec::with_capacity(n),
            bytes: Vec::with_capacity(n),
            allocated_bytes: Vec::with_capacity(n),
            reserved_bytes: Vec::with_capacity(n),
            track: Vec::with_capacity(n),
            stream: Vec::with_capacity(n),
            stack: Vec::with_capacity(n),
        };
        let replayed = replay_unknown_totals(&mut records);
        if replayed > 0 {
            self.warn(
                "memory_totals_replayed",
                replayed,
                "memory records without the allocator's totals (`Total Allocated`, `Total \
                 Reserved`; PyTorch before 1.10): allocated memory is replayed from their sizes \
                 from the start of the recording, its lowest point taken as 0 (what was \
                 allocated before is unknown); reserved memory is unknown and shown equal to \
                 allocated",
            );
        }
        for r in records {
            ev.time_ns.push(r.time_ns);
            ev.device.push(r.device);
            ev.action.push(r.action);
            ev.addr.push(r.addr);
            ev.bytes.push(r.bytes);
            ev.allocated_bytes.push(r.allocated_bytes);
            ev.reserved_bytes.push(r.reserved_bytes);
            ev.track.push(
                r.track
                    .and_then(|t| position.get(t.0 as usize).copied())
                    .unwrap_or(NO_TRACK),
            );
            ev.stream.push(r.stream);
            ev.stack.push(r.stack);
        }
        (ev, dropped)
    }
}

/// Puts the element at `order[k].1` at `k` for every `k`, in place, one cycle of the
/// permutation after the other (`order` is a permutation of the indices of `v`, used up: each
/// index is set to `usize::MAX` once its place is filled).
fn permute<T: Copy>(v: &mut [T], order: &mut [(i64, usize)]) {
    for start in 0..v.len() {
        if order[start].1 == usize::MAX {
            continue;
        }
        let first = v[start];
        let mut k = start;
        loop {
            let from = std::mem::replace(&mut order[k].1, usize::MAX);
            if from == start {
                v[k] = first;
                break;
            }
            v[k] = v[from];
            k = from;
        }
    }
}

/// Replays the totals of every device that has a record with [`UNKNOWN_TOTAL`] (records in
/// time order); returns how many records that device's replay covered.
fn replay_unknown_totals(records: &mut [MemoryRecord]) -> u64 {
    let mut devices: Vec<MemoryDevice> = records
        .iter()
        .filter(|r| r.allocated_bytes == UNKNOWN_TOTAL || r.reserved_bytes == UNKNOWN_TOTAL)
        .map(|r| r.device)
        .collect();
    devices.sort_unstable();
    devices.dedup();
    let mut replayed = 0u64;
    for device in devices {
        let mut sum: i64 = 0;
        let mut lowest: i64 = 0;
        let mut sums = Vec::new();
        for r in records.iter().filter(|r| r.device == device) {
            let bytes = i64::try_from(r.bytes).unwrap_or(i64::MAX);
            match r.action {
                MemoryAction::Alloc => sum = sum.saturating_add(bytes),
                MemoryAction::Free => sum = sum.saturating_sub(bytes),
                _ => {}
            }
            lowest = lowest.min(sum);
            sums.push(sum);
        }
        for (r, s) in records.iter_mut().filter(|r| r.device == device).zip(sums) {
            let total = s.saturating_sub(lowest);
            (r.allocated_bytes, r.reserved_bytes) = (total, total);
            replayed += 1;
        }
    }
    replayed
}

#[cfg(test)]
mod tests {
    use super::permute;

    #[test]
    fn permute_puts_every_element_where_the_order_says() {
        let mut seed: u64 = 11;
        for n in [0usize, 1, 2, 3, 10, 257] {
            let v: Vec<u32> = (0..n as u32).map(|x| x * 7 + 1).collect();
            // A shuffled order (Fisher-Yates).
            let mut order: Vec<(i64, usize)> = (0..n).map(|i| (0, i)).collect();
            for i in (1..n).rev() {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                order.swap(i, (seed >> 33) as usize % (i + 1));
            }
            let want: Vec<u32> = order.iter().map(|&(_, i)| v[i]).collect();
            let mut got = v.clone();
            permute(&mut got, &mut order);
            assert_eq!(got, want, "n = {n}");
        }
    }
}
