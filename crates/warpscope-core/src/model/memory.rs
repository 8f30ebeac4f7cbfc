//! Memory records of a profile: every allocation and free the file recorded (Kineto `[memory]`
//! events, the `device_traces` of a CUDA caching-allocator snapshot), the allocator's segments
//! and blocks at the end where a snapshot gives them, and the stack frames they point to.
//!
//! The records are kept as the file gave them; curves, peaks and attributions are worked out by
//! [`crate::analysis::memory`], so that the same rules serve the whole run and a range.

use serde::Serialize;

use crate::strings::StrId;

/// Marks "no thread track" in [`MemoryEvents::track`].
pub const NO_TRACK: u32 = u32::MAX;
/// Marks "no stack" in [`MemoryEvents::stack`] and [`MemoryBlock::stack`].
pub const NO_STACK: u32 = u32::MAX;

/// Whose memory a record is about.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemoryDevice {
    /// Host memory (Kineto `Device Type` 0).
    #[default]
    Cpu,
    /// A GPU, by ordinal.
    Gpu(u32),
}

impl MemoryDevice {
    /// `cpu` or `GPU 0`.
    pub fn label(self) -> String {
        match self {
            Self::Cpu => "CPU".to_string(),
            Self::Gpu(id) => format!("GPU {id}"),
        }
    }
}

impl Serialize for MemoryDevice {
    /// `"cpu"`, or the GPU's ordinal as a number.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Cpu => s.serialize_str("cpu"),
            Self::Gpu(id) => s.serialize_u32(*id),
        }
    }
}

/// What one memory record says happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum MemoryAction {
    /// A block was handed out (Kineto: positive `Bytes`; snapshot: `alloc`).
    Alloc,
    /// A block was given back (Kineto: negative `Bytes`; snapshot: `free_completed`).
    Free,
    /// The program freed a block that a stream still uses (snapshot `free_requested`); the
    /// memory stays allocated until [`MemoryAction::Free`].
    FreeRequested,
    /// The allocator reserved memory from the device (`cudaMalloc`, snapshot `segment_alloc`
    /// and `segment_map`).
    SegmentAlloc,
    /// The allocator gave reserved memory back (snapshot `segment_free`, `segment_unmap`).
    SegmentFree,
    /// An allocation failed (snapshot `oom`, Kineto `[OutOfMemory]`). `bytes` is the size asked
    /// for.
    Oom,
    /// The allocator took a snapshot (snapshot `snapshot`); changes nothing.
    Snapshot,
}

impl MemoryAction {
    /// Stable name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Alloc => "alloc",
            Self::Free => "free",
            Self::FreeRequested => "free_requested",
            Self::SegmentAlloc => "segment_alloc",
            Self::SegmentFree => "segment_free",
            Self::Oom => "oom",
            Self::Snapshot => "snapshot",
        }
    }
}

/// Where the memory records come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemorySource {
    /// No memory records.
    #[default]
    None,
    /// Kineto `[memory]` events (`profile_memory=True`): the totals after each record are the
    /// allocator's own (`Total Allocated`, `Total Reserved`).
    KinetoEvents,
    /// A CUDA caching-allocator snapshot (`torch.cuda.memory._dump_snapshot`): the totals are
    /// replayed from the trace, anchored on the segments at the end.
    AllocatorSnapshot,
    /// Nsight Systems CUDA memory-usage records.
    Nsys,
    /// rocprofv3 memory-allocation records (rocpd `rocpd_memory_allocate`): the totals are the
    /// running sums of the sizes.
    Rocpd,
}

/// The memory records of a profile as a struct of arrays, sorted by time (records of equal
/// time keep the file's order, which is the allocator's).
#[derive(Clone, Debug, Default)]
pub struct MemoryEvents {
    /// When, in nanoseconds from the profile origin.
    pub time_ns: Vec<i64>,
    /// Whose memory.
    pub device: Vec<MemoryDevice>,
    /// What happened.
    pub action: Vec<MemoryAction>,
    /// Address of the block or segment (0 when the file does not say).
    pub addr: Vec<u64>,
    /// Size of the block or segment in bytes (always positive: the action says which way).
    pub bytes: Vec<u64>,
    /// Bytes allocated on the device after this record, as the allocator counted them (Kineto)
    /// or as replayed from the snapshot.
    pub allocated_bytes: Vec<i64>,
    /// Bytes reserved on the device after this record, likewise.
    pub reserved_bytes: Vec<i64>,
    /// The thread track ([`crate::model::Profile::tracks`] index) that made the call, or
    /// [`NO_TRACK`].
    pub track: Vec<u32>,
    /// The CUDA stream the block belongs to (snapshots), 0 when the file does not say.
    pub stream: Vec<u64>,
    /// Index into [`MemoryData::stacks`], or [`NO_STACK`].
    pub stack: Vec<u32>,
}

impl MemoryEvents {
    /// Number of records.
    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    /// True if there are no records.
    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// Index of the first record at or after `t_ns`.
    pub fn first_at_or_after(&self, t_ns: i64) -> usize {
        self.time_ns.partition_point(|&t| t < t_ns)
    }

    /// Approximate heap bytes used by the columns.
    pub fn heap_bytes(&self) -> usize {
        self.time_ns.capacity() * 8
            + self.device.capacity() * std::mem::size_of::<MemoryDevice>()
            + self.action.capacity()
            + self.addr.capacity() * 8
            + self.bytes.capacity() * 8
            + self.allocated_bytes.capacity() * 8
            + self.reserved_bytes.capacity() * 8
            + self.track.capacity() * 4
            + self.stream.capacity() * 8
            + self.stack.capacity() * 4
    }
}

/// One stack frame of a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StackFrame {
    /// Function name.
    pub name: StrId,
    /// Source file (`??` or empty when unknown).
    pub filename: StrId,
    /// Line number (0 when unknown).
    pub line: u32,
}

/// Call stacks, each a list of frames innermost first, stored once however many records share
/// them.
#[derive(Clone, Debug, Default)]
pub struct Stacks {
    /// Every distinct frame.
    pub frames: Vec<StackFrame>,
    /// Frame indices of all stacks, one after another.
    pub frame_ids: Vec<u32>,
    /// Where each stack's frames start in `frame_ids`; stack `i` is
    /// `frame_ids[starts[i]..starts[i + 1]]` (one more entry than there are stacks).
    pub starts: Vec<u32>,
}

impl Stacks {
    /// Number of stacks.
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// True if there are no stacks.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The frames of stack `i`, innermost first (empty for [`NO_STACK`] or an unknown index).
    pub fn frames_of(&self, i: u32) -> impl Iterator<Item = &StackFrame> {
        let i = i as usize;
        let range = match (self.starts.get(i), self.starts.get(i + 1)) {
            (Some(&a), Some(&b)) => a as usize..b as usize,
            _ => 0..0,
        };
        self.frame_ids
            .get(range)
            .unwrap_or_default()
            .iter()
            .filter_map(|&f| self.frames.get(f as usize))
    }
}

/// State of a block in a snapshot's segment at the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockState {
    /// Allocated and in use.
    ActiveAllocated,
    /// Freed by the program, still in use by a stream (`active_pending_free`).
    ActivePendingFree,
    /// Free, cached by the allocator.
    Inactive,
}

/// A block of a segment at the end of a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryBlock {
    /// Address.
    pub addr: u64,
    /// Size in bytes (the allocator's rounded size).
    pub bytes: u64,
    /// Size the program asked for.
    pub requested_bytes: u64,
    /// State.
    pub state: BlockState,
    /// Index into [`MemoryData::stacks`] of where it was allocated, or [`NO_STACK`].
    pub stack: u32,
}

/// A segment (one `cudaMalloc` of the caching allocator) at the end of a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemorySegment {
    /// Device.
    pub device: MemoryDevice,
    /// Address.
    pub addr: u64,
    /// Size in bytes.
    pub total_bytes: u64,
    /// Bytes of it allocated.
    pub allocated_bytes: u64,
    /// Stream it belongs to.
    pub stream: u64,
    /// `large` or `small` pool.
    pub pool: String,
    /// True for expandable segments.
    pub expandable: bool,
    /// Its blocks, by address.
    pub blocks: Vec<MemoryBlock>,
}

/// Everything a profile knows about memory.
#[derive(Clone, Debug, Default)]
pub struct MemoryData {
    /// Where the records come from.
    pub source: MemorySource,
    /// The records, by time.
    pub events: MemoryEvents,
    /// Stacks that records and blocks point to (snapshots).
    pub stacks: Stacks,
    /// Segments at the end (snapshots), by device and address.
    pub segments: Vec<MemorySegment>,
    /// Allocator settings as (name, value) pairs (snapshots).
    pub settings: Vec<(String, String)>,
}

impl MemoryData {
    /// True if the profile recorded nothing about memory.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty() && self.segments.is_empty()
    }

    /// The devices that have records or segments, sorted (CPU first).
    pub fn devices(&self) -> Vec<MemoryDevice> {
        let mut d: Vec<MemoryDevice> = self.events.device.clone();
        d.extend(self.segments.iter().map(|s| s.device));
        d.sort_unstable();
        d.dedup();
        d
    }

    /// Approximate heap bytes.
    pub fn heap_bytes(&self) -> usize {
        self.events.heap_bytes()
            + self.stacks.frames.capacity() * std::mem::size_of::<StackFrame>()
            + self.stacks.frame_ids.capacity() * 4
            + self.stacks.starts.capacity() * 4
            + self
                .segments
                .iter()
                .map(|s| s.blocks.capacity() * std::mem::size_of::<MemoryBlock>())
                .sum::<usize>()
    }
}
