//! What the model knows about single GPU activities and API calls besides their time and name:
//! a kernel's launch configuration, a copy's direction and size, an API call's ids.

use serde::Serialize;

use crate::strings::StrId;

/// Launch details of one kernel execution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct KernelInfo {
    /// Grid dimensions (blocks).
    pub grid: Option<[u32; 3]>,
    /// Block dimensions (threads).
    pub block: Option<[u32; 3]>,
    /// Registers per thread (AMD: architected VGPRs per work-item).
    pub registers_per_thread: Option<u32>,
    /// Scalar registers (SGPRs) per wave (AMD).
    pub scalar_registers: Option<u32>,
    /// Accumulation registers (AGPRs) per work-item (AMD CDNA).
    pub accum_registers: Option<u32>,
    /// Private (scratch) memory per work-item in bytes (AMD private segment).
    pub scratch_bytes: Option<u64>,
    /// Threads per wave (AMD wavefront size, 32 or 64).
    pub wave_size: Option<u32>,
    /// Static shared memory per block in bytes (AMD: the LDS, group segment, per workgroup).
    pub static_shared_bytes: Option<u64>,
    /// Dynamic shared memory per block in bytes.
    pub dynamic_shared_bytes: Option<u64>,
    /// Shared memory per block in bytes when the file gives only a total (Kineto).
    pub shared_memory_bytes: Option<u64>,
    /// Theoretical/estimated achieved occupancy in percent.
    pub occupancy_pct: Option<f32>,
    /// Blocks per SM (Kineto).
    pub blocks_per_sm: Option<f32>,
    /// Warps per SM (Kineto).
    pub warps_per_sm: Option<f32>,
    /// CUPTI correlation id of the launching API call.
    pub correlation: Option<u64>,
    /// Framework external correlation id (Kineto `External id`).
    pub external_id: Option<u64>,
    /// Mangled name when the display name was demangled.
    pub mangled_name: Option<StrId>,
    /// The process group of a communication kernel (Kineto `Process Group Name`: `0`, `1`...),
    /// by which the same collective is matched across the ranks of a job.
    pub process_group: Option<StrId>,
}

/// Direction of a memory copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum CopyKind {
    /// Host to device.
    HtoD,
    /// Device to host.
    DtoH,
    /// Device to device (same device).
    DtoD,
    /// Host to host.
    HtoH,
    /// Peer to peer (device to another device).
    PtoP,
    /// Host to array.
    HtoA,
    /// Array to host.
    AtoH,
    /// Array to array.
    AtoA,
    /// Array to device.
    AtoD,
    /// Device to array.
    DtoA,
    /// Unified memory, host to device.
    UnifiedHtoD,
    /// Unified memory, device to host.
    UnifiedDtoH,
    /// Unified memory, device to device.
    UnifiedDtoD,
    /// A memory set (not a copy).
    Memset,
    /// Unknown direction.
    Unknown,
}

impl CopyKind {
    /// Short name (`HtoD`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::HtoD => "HtoD",
            Self::DtoH => "DtoH",
            Self::DtoD => "DtoD",
            Self::HtoH => "HtoH",
            Self::PtoP => "PtoP",
            Self::HtoA => "HtoA",
            Self::AtoH => "AtoH",
            Self::AtoA => "AtoA",
            Self::AtoD => "AtoD",
            Self::DtoA => "DtoA",
            Self::UnifiedHtoD => "Unified HtoD",
            Self::UnifiedDtoH => "Unified DtoH",
            Self::UnifiedDtoD => "Unified DtoD",
            Self::Memset => "Memset",
            Self::Unknown => "Unknown",
        }
    }

    /// Parses the short names used by nvprof, Kineto and TensorFlow (`HtoD`, `DtoH`, ...).
    pub fn from_short(s: &str) -> Option<Self> {
        Some(match s {
            "HtoD" => Self::HtoD,
            "DtoH" => Self::DtoH,
            "DtoD" => Self::DtoD,
            "HtoH" => Self::HtoH,
            "PtoP" => Self::PtoP,
            "HtoA" => Self::HtoA,
            "AtoH" => Self::AtoH,
            "AtoA" => Self::AtoA,
            "AtoD" => Self::AtoD,
            "DtoA" => Self::DtoA,
            _ => return None,
        })
    }

    /// The CUPTI `CUpti_ActivityMemcpyKind` value (nvprof and nsys `copyKind`; 11–13 are nsys's
    /// unified-memory kinds).
    pub fn from_cupti(kind: i64) -> Self {
        match kind {
            1 => Self::HtoD,
            2 => Self::DtoH,
            3 => Self::HtoA,
            4 => Self::AtoH,
            5 => Self::AtoA,
            6 => Self::AtoD,
            7 => Self::DtoA,
            8 => Self::DtoD,
            9 => Self::HtoH,
            10 => Self::PtoP,
            11 => Self::UnifiedHtoD,
            12 => Self::UnifiedDtoH,
            13 => Self::UnifiedDtoD,
            _ => Self::Unknown,
        }
    }

    /// The nvprof-style activity name (`[CUDA memcpy HtoD]`, `[CUDA memset]`).
    pub fn activity_name(self) -> String {
        match self {
            Self::Memset => "[CUDA memset]".to_string(),
            Self::UnifiedHtoD => "[Unified Memory Memcpy HtoD]".to_string(),
            Self::UnifiedDtoH => "[Unified Memory Memcpy DtoH]".to_string(),
            Self::UnifiedDtoD => "[Unified Memory Memcpy DtoD]".to_string(),
            Self::Unknown => "[CUDA memcpy]".to_string(),
            other => format!("[CUDA memcpy {}]", other.as_str()),
        }
    }
}

/// Where memory lives (CUPTI's `CUpti_ActivityMemoryKind` meaning; nsys's numbering is
/// converted at import).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum MemoryKind {
    /// Pageable host memory.
    Pageable,
    /// Pinned (page-locked) host memory.
    Pinned,
    /// Device memory.
    Device,
    /// CUDA array.
    Array,
    /// Managed (unified) memory.
    Managed,
    /// Static device memory.
    DeviceStatic,
    /// Static managed memory.
    ManagedStatic,
    /// Host memory of unknown kind (ROCm `Host`).
    Host,
    /// Unknown.
    Unknown,
}

impl MemoryKind {
    /// CUPTI's `CUpti_ActivityMemoryKind` numbers (nvprof `srcKind`, `dstKind`, `memoryKind`,
    /// CUPTI activity records).
    pub fn from_cupti(kind: i64) -> Self {
        match kind {
            1 => Self::Pageable,
            2 => Self::Pinned,
            3 => Self::Device,
            4 => Self::Array,
            5 => Self::Managed,
            6 => Self::DeviceStatic,
            7 => Self::ManagedStatic,
            _ => Self::Unknown,
        }
    }

    /// Parses the words used in Kineto memcpy names and nvprof CSV cells.
    pub fn from_word(s: &str) -> Self {
        match s.trim() {
            "Pageable" => Self::Pageable,
            "Pinned" => Self::Pinned,
            "Device" => Self::Device,
            "Array" => Self::Array,
            "Managed" => Self::Managed,
            "Device Static" | "DeviceStatic" => Self::DeviceStatic,
            "Managed Static" | "ManagedStatic" => Self::ManagedStatic,
            "Host" => Self::Host,
            _ => Self::Unknown,
        }
    }
}

/// Details of one copy, set or unified-memory transfer.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CopyInfo {
    /// Direction (or [`CopyKind::Memset`]).
    pub kind: CopyKind,
    /// Bytes moved or set.
    pub bytes: Option<u64>,
    /// Source memory kind.
    pub src_kind: Option<MemoryKind>,
    /// Destination memory kind.
    pub dst_kind: Option<MemoryKind>,
    /// CUPTI correlation id of the launching API call.
    pub correlation: Option<u64>,
    /// Framework external correlation id.
    pub external_id: Option<u64>,
}

/// Details of one API call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ApiInfo {
    /// CUPTI correlation id.
    pub correlation: Option<u64>,
    /// CUPTI callback id.
    pub cbid: Option<u32>,
    /// Framework external correlation id.
    pub external_id: Option<u64>,
}
