//! Theoretical occupancy, computed the way the CUDA occupancy calculator (`cuda_occupancy.h`)
//! does: how many blocks of a launch fit on one SM given its warps, registers and shared memory,
//! and which resource runs out first. The rules and the per-architecture limits are in
//! `docs/occupancy.md`; `tests/occupancy.rs` checks them against the driver on an H100 and
//! against NVIDIA's calculator header for every architecture.

use serde::Serialize;

pub mod cdna;

use cdna::{CdnaArch, CdnaLaunch, cdna_launch, cdna_occupancy};

/// The limits of one GPU architecture (compute capability) that decide occupancy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuArch {
    /// Compute capability (major, minor).
    pub compute_capability: (u32, u32),
    /// Resident warps per SM.
    pub max_warps_per_sm: u32,
    /// Resident blocks per SM.
    pub max_blocks_per_sm: u32,
    /// 32-bit registers per SM.
    pub regs_per_sm: u32,
    /// 32-bit registers one block may use.
    pub regs_per_block: u32,
    /// Shared memory per SM in bytes at the largest carveout (what the driver picks by default).
    pub shared_per_sm: u32,
    /// The most shared memory one block may use, with the opt-in attribute.
    pub shared_per_block_optin: u32,
    /// Shared memory the system reserves per resident block (1 KiB from Ampere on).
    pub reserved_shared_per_block: u32,
    /// Shared memory is allocated to blocks in multiples of this many bytes.
    pub shared_granularity: u32,
}

/// Threads per warp on every NVIDIA GPU.
pub const WARP_SIZE: u32 = 32;
/// Registers are allocated to a warp in multiples of this many.
pub const REG_ALLOC_UNIT: u32 = 256;
/// The register file is split into this many sub-partitions (one per warp scheduler; two on
/// GP100, compute capability 6.0); a warp's registers come from one of them.
pub const REG_SUB_PARTITIONS: u32 = 4;
/// The most registers one thread may use.
pub const MAX_REGS_PER_THREAD: u32 = 255;
/// The most threads in one block.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;

const KIB: u32 = 1024;

impl GpuArch {
    /// The limits of compute capability `major.minor`, for 5.0 to 10.3 and 12.0 (the table of
    /// `docs/occupancy.md`); `None` for others.
    pub fn for_compute_capability(major: u32, minor: u32) -> Option<Self> {
        // (max warps/SM, max blocks/SM, regs/block, shared/SM KiB, opt-in shared/block KiB)
        let (warps, blocks, regs_per_block, shared_kib, optin_kib) = match (major, minor) {
            (5, 0) | (6, 0) => (64, 32, 64 * KIB, 64, 48),
            (5, 2) | (6, 1) => (64, 32, 64 * KIB, 96, 48),
            (5, 3) | (6, 2) => (64, 32, 32 * KIB, 64, 48),
            (7, 0) | (7, 2) => (64, 32, 64 * KIB, 96, 96),
            (7, 5) => (32, 16, 64 * KIB, 64, 64),
            (8, 0) => (64, 32, 64 * KIB, 164, 163),
            (8, 6) => (48, 16, 64 * KIB, 100, 99),
            (8, 7) => (48, 16, 64 * KIB, 164, 163),
            (8, 9) => (48, 24, 64 * KIB, 100, 99),
            (9, 0) | (10, 0) | (10, 3) => (64, 32, 64 * KIB, 228, 227),
            (12, 0) => (48, 24, 64 * KIB, 100, 99),
            _ => return None,
        };
        let ampere_or_later = major >= 8;
        Some(Self {
            compute_capability: (major, minor),
            max_warps_per_sm: warps,
            max_blocks_per_sm: blocks,
            regs_per_sm: 64 * KIB,
            regs_per_block,
            shared_per_sm: shared_kib * KIB,
            shared_per_block_optin: optin_kib * KIB,
            reserved_shared_per_block: if ampere_or_later { KIB } else { 0 },
            shared_granularity: if ampere_or_later { 128 } else { 256 },
        })
    }
}

/// What a kernel launch asks of an SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Threads per block (the product of the block's dimensions).
    pub block_size: u32,
    /// Registers per thread.
    pub registers_per_thread: u32,
    /// Static plus dynamic shared memory per block, in bytes.
    pub shared_bytes: u64,
}

/// The resource that caps the number of resident blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    /// Warps per SM: the block size.
    Warps,
    /// The register file.
    Registers,
    /// Shared memory.
    SharedMemory,
    /// The most resident blocks per SM.
    Blocks,
}

impl Limiter {
    /// Every limiter, in the calculator's order.
    pub const ALL: [Self; 4] = [
        Self::Warps,
        Self::Registers,
        Self::SharedMemory,
        Self::Blocks,
    ];

    /// Stable name used in JSON and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Warps => "warps",
            Self::Registers => "registers",
            Self::SharedMemory => "shared_memory",
            Self::Blocks => "blocks",
        }
    }
}

/// The occupancy of one launch configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Occupancy {
    /// Resident blocks per SM.
    pub blocks_per_sm: u32,
    /// Resident warps per SM.
    pub warps_per_sm: u32,
    /// Resident warps over the SM's maximum, in percent.
    pub occupancy_pct: f64,
    /// Every resource that allows no more than `blocks_per_sm` blocks (several when they tie), in
    /// the calculator's order: warps, registers, shared memory, blocks.
    pub limiters: Vec<Limiter>,
}

impl Occupancy {
    /// The limiters as a set (a `Copy` value, for grouping launches by what limits them).
    pub fn limiter_set(&self) -> LimiterSet {
        LimiterSet::of(&self.limiters)
    }

    /// The limiters joined by `+` (`registers`, `warps+registers`).
    pub fn limiter_text(&self) -> String {
        self.limiter_set().text()
    }
}

/// A set of [`Limiter`]s, one bit each (the calculator's limiting-factor bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LimiterSet(u8);

impl LimiterSet {
    /// The set of `limiters`.
    pub fn of(limiters: &[Limiter]) -> Self {
        Self(limiters.iter().fold(0, |bits, &l| bits | (1 << l as u8)))
    }

    /// The limiters joined by `+`, in the calculator's order (`warps+registers`).
    pub fn text(self) -> String {
        let names: Vec<&str> = Limiter::ALL
            .iter()
            .filter(|&&l| self.0 & (1 << l as u8) != 0)
            .map(|l| l.as_str())
            .collect();
        names.join("+")
    }
}

/// Why a configuration cannot launch at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OccupancyError {
    /// Zero threads, or more than 1024.
    #[error("a block of {0} threads cannot launch (1 to {MAX_THREADS_PER_BLOCK})")]
    BlockSize(u32),
    /// More than 255 registers per thread.
    #[error("{0} registers per thread is more than {MAX_REGS_PER_THREAD}")]
    Registers(u32),
    /// The block's registers do not fit the per-block register file.
    #[error(
        "a block of {block_size} threads at {registers} registers per thread needs more than the {limit} registers a block may use"
    )]
    RegistersPerBlock {
        /// Threads per block.
        block_size: u32,
        /// Registers per thread.
        registers: u32,
        /// Registers one block may use.
        limit: u32,
    },
    /// More shared memory than a block may use.
    #[error("{bytes} bytes of shared memory per block is more than the {limit} a block may use")]
    SharedMemory {
        /// Requested bytes.
        bytes: u64,
        /// The opt-in maximum.
        limit: u32,
    },
}

fn round_up(value: u64, unit: u64) -> u64 {
    value.div_ceil(unit) * unit
}

/// The theoretical occupancy of `config` on `arch`, as the CUDA occupancy calculator computes it
/// with the default cache and carveout preferences (the largest shared-memory carveout).
pub fn theoretical_occupancy(
    arch: &GpuArch,
    config: LaunchConfig,
) -> Result<Occupancy, OccupancyError> {
    let block = config.block_size;
    if block == 0 || block > MAX_THREADS_PER_BLOCK {
        return Err(OccupancyError::BlockSize(block));
    }
    if config.registers_per_thread > MAX_REGS_PER_THREAD {
        return Err(OccupancyError::Registers(config.registers_per_thread));
    }
    let warps_per_block = block.div_ceil(WARP_SIZE);

    // Warps: how many blocks' warps fit the SM.
    let by_warps = arch.max_warps_per_sm / warps_per_block;

    // Registers: allocated per warp in units of 256, from one of four sub-partitions. The
    // hardware checks the per-block limit as if the warps were spread over all sub-partitions.
    let regs_per_warp = round_up(
        u64::from(config.registers_per_thread) * u64::from(WARP_SIZE),
        u64::from(REG_ALLOC_UNIT),
    );
    // GP100 (6.0) splits its register file in two, every other architecture in four.
    let sub_partitions = if arch.compute_capability == (6, 0) {
        2
    } else {
        REG_SUB_PARTITIONS
    };
    let regs_per_block = regs_per_warp * u64::from(warps_per_block);
    let regs_assumed_per_block =
        regs_per_warp * round_up(u64::from(warps_per_block), u64::from(sub_partitions));
    let limit = u64::from(arch.regs_per_block);
    if regs_per_block > limit || regs_assumed_per_block > limit {
        return Err(OccupancyError::RegistersPerBlock {
            block_size: block,
            registers: config.registers_per_thread,
            limit: arch.regs_per_block,
        });
    }
    let per_sub_partition = u64::from(arch.regs_per_sm / sub_partitions);
    let by_registers = match per_sub_partition.checked_div(regs_per_warp) {
        None => u32::MAX,
        Some(warps) => {
            let warps = warps * u64::from(sub_partitions);
            u32::try_from(warps / u64::from(warps_per_block)).unwrap_or(u32::MAX)
        }
    };

    // Shared memory: the request plus the per-block reservation, rounded to the granularity.
    if config.shared_bytes > u64::from(arch.shared_per_block_optin) {
        return Err(OccupancyError::SharedMemory {
            bytes: config.shared_bytes,
            limit: arch.shared_per_block_optin,
        });
    }
    let by_shared = if config.shared_bytes == 0 && arch.reserved_shared_per_block == 0 {
        u32::MAX
    } else {
        let per_block = round_up(
            config.shared_bytes + u64::from(arch.reserved_shared_per_block),
            u64::from(arch.shared_granularity),
        );
        u32::try_from(u64::from(arch.shared_per_sm) / per_block).unwrap_or(u32::MAX)
    };

    let by_blocks = arch.max_blocks_per_sm;
    let blocks_per_sm = by_warps.min(by_registers).min(by_shared).min(by_blocks);
    let limiters = [
        (Limiter::Warps, by_warps),
        (Limiter::Registers, by_registers),
        (Limiter::SharedMemory, by_shared),
        (Limiter::Blocks, by_blocks),
    ]
    .into_iter()
    .filter(|&(_, n)| n == blocks_per_sm)
    .map(|(l, _)| l)
    .collect();
    let warps_per_sm = blocks_per_sm * warps_per_block;
    Ok(Occupancy {
        blocks_per_sm,
        warps_per_sm,
        occupancy_pct: f64::from(warps_per_sm) * 100.0 / f64::from(arch.max_warps_per_sm),
        limiters,
    })
}

/// The launch configuration of a kernel from its recorded details, when the file gives the
/// block and the registers (shared memory missing counts as none).
pub fn launch_config(info: &crate::model::KernelInfo) -> Option<LaunchConfig> {
    let block = info.block?;
    let block_size = block.iter().try_fold(1u32, |acc, &d| acc.checked_mul(d))?;
    let registers_per_thread = info.registers_per_thread?;
    let shared_bytes = match (info.static_shared_bytes, info.dynamic_shared_bytes) {
        (None, None) => info.shared_memory_bytes.unwrap_or(0),
        (s, d) => s.unwrap_or(0).saturating_add(d.unwrap_or(0)),
    };
    Some(LaunchConfig {
        block_size,
        registers_per_thread,
        shared_bytes,
    })
}

/// The occupancy limits of a device: an NVIDIA architecture (from its compute capability) or
/// an AMD CDNA one (from its gfx target).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// An NVIDIA GPU.
    Nvidia(GpuArch),
    /// An AMD CDNA GPU.
    Cdna(CdnaArch),
}

/// What a launch asks of an SM or compute unit, in the terms of its device's [`Arch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Launch {
    /// On an NVIDIA GPU.
    Nvidia(LaunchConfig),
    /// On an AMD CDNA GPU.
    Cdna(CdnaLaunch),
}

/// The architecture of device `device` of `profile`: NVIDIA by compute capability, AMD by gfx
/// target; `None` when the file says neither or the architecture is not covered.
pub fn arch_of_device(profile: &crate::Profile, device: u32) -> Option<Arch> {
    let d = profile.device(device)?;
    if let Some((major, minor)) = d.compute_capability {
        return GpuArch::for_compute_capability(major, minor).map(Arch::Nvidia);
    }
    d.gfx_target
        .as_deref()
        .and_then(CdnaArch::for_gfx)
        .map(Arch::Cdna)
}

/// The launch of a kernel with details `info` on `arch`, when the file gives what it needs.
pub fn launch_of(arch: &Arch, info: &crate::model::KernelInfo) -> Option<Launch> {
    match arch {
        Arch::Nvidia(_) => launch_config(info).map(Launch::Nvidia),
        Arch::Cdna(_) => cdna_launch(info).map(Launch::Cdna),
    }
}

/// The theoretical occupancy of `launch` on `arch`; `None` when the two are of different
/// vendors.
pub fn launch_occupancy(arch: &Arch, launch: Launch) -> Option<Result<Occupancy, OccupancyError>> {
    match (arch, launch) {
        (Arch::Nvidia(a), Launch::Nvidia(l)) => Some(theoretical_occupancy(a, l)),
        (Arch::Cdna(a), Launch::Cdna(l)) => Some(cdna_occupancy(a, l)),
        _ => None,
    }
}

/// The theoretical occupancy of the kernel event `index` of `track`: `None` when the file lacks
/// its launch details or its device's architecture (compute capability or gfx target), or the
/// architecture is not covered; an error when the recorded configuration could not launch.
pub fn kernel_occupancy(
    profile: &crate::Profile,
    track: &crate::Track,
    index: usize,
) -> Option<Result<Occupancy, OccupancyError>> {
    let crate::TrackKey::Gpu { device, .. } = track.key else {
        return None;
    };
    let info = profile.kernel_info(track, index)?;
    let arch = arch_of_device(profile, device)?;
    launch_occupancy(&arch, launch_of(&arch, &info)?)
}
