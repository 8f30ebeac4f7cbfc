//! Theoretical occupancy on AMD CDNA GPUs (gfx908 MI100, gfx90a MI200, gfx940–gfx942 MI300,
//! gfx950 MI350): how many workgroups of a dispatch fit on one compute unit given its waves,
//! VGPRs and AGPRs, SGPRs and LDS, as waves per SIMD. The limits and the rules are those of
//! LLVM's AMDGPU backend (`AMDGPUBaseInfo.cpp`), which the ROCm compiler uses to report
//! occupancy; `docs/occupancy.md`, "AMD CDNA", states them with their sources.

use super::{Limiter, Occupancy, OccupancyError};

/// The limits of one CDNA generation that decide occupancy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CdnaArch {
    /// The gfx target (`gfx942`).
    pub gfx: &'static str,
    /// Waves one SIMD holds (`getMaxWavesPerEU`).
    pub max_waves_per_simd: u32,
    /// SIMDs per compute unit (`getEUsPerCU`).
    pub simds_per_cu: u32,
    /// VGPRs per SIMD lane, architected and accumulation together where they share one file
    /// (`getTotalNumVGPRs`).
    pub vgprs_per_simd: u32,
    /// VGPRs are allocated to a wave in multiples of this many (`getVGPRAllocGranule`).
    pub vgpr_granule: u32,
    /// True where AGPRs and VGPRs share one file (gfx90a on): a wave needs its VGPRs, rounded
    /// to 4, plus its AGPRs. On gfx908 the files are apart: it needs the larger of the two.
    pub unified_vgprs: bool,
    /// LDS per compute unit in bytes (`getAddressableLocalMemorySize`).
    pub lds_per_cu: u32,
    /// Workgroups of more than one wave that one CU holds (barriers, `getMaxWorkGroupsPerCU`).
    pub max_workgroups_per_cu: u32,
}

/// Threads per wave on CDNA.
pub const CDNA_WAVE_SIZE: u32 = 64;

impl CdnaArch {
    /// The limits of a gfx target (`gfx942`, or with features `gfx942:sramecc+:xnack-`);
    /// `None` for targets that are not CDNA.
    pub fn for_gfx(target: &str) -> Option<Self> {
        let gfx = target.split(':').next().unwrap_or(target);
        let (name, waves, vgprs, granule, unified, lds_kib) = match gfx {
            "gfx908" => ("gfx908", 10, 256, 4, false, 64),
            "gfx90a" => ("gfx90a", 8, 512, 8, true, 64),
            "gfx940" => ("gfx940", 8, 512, 8, true, 64),
            "gfx941" => ("gfx941", 8, 512, 8, true, 64),
            "gfx942" => ("gfx942", 8, 512, 8, true, 64),
            "gfx950" => ("gfx950", 8, 512, 8, true, 160),
            _ => return None,
        };
        Some(Self {
            gfx: name,
            max_waves_per_simd: waves,
            simds_per_cu: 4,
            vgprs_per_simd: vgprs,
            vgpr_granule: granule,
            unified_vgprs: unified,
            lds_per_cu: lds_kib * 1024,
            max_workgroups_per_cu: 16,
        })
    }
}

/// What a dispatch asks of a compute unit. rocprofv3 decodes the registers from the kernel
/// descriptor: on gfx90a and gfx94x `vgprs` is the AGPRs' offset in the unified file
/// (`(ACCUM_OFFSET + 1) × 4`) and `agprs` the rest of the wave's allocation, so their sum is the
/// allocation itself; on gfx908 both are the granulated VGPR count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CdnaLaunch {
    /// Work-items per workgroup.
    pub workgroup_size: u32,
    /// Threads per wave (64 on CDNA).
    pub wave_size: u32,
    /// Architected VGPRs per work-item.
    pub vgprs: u32,
    /// Accumulation VGPRs (AGPRs) per work-item.
    pub agprs: u32,
    /// SGPRs per wave, when known.
    pub sgprs: Option<u32>,
    /// LDS per workgroup in bytes.
    pub lds_bytes: u64,
}

/// The VGPRs one wave is allocated: on a unified file the architected VGPRs rounded to 4 plus
/// the AGPRs, otherwise the larger of the two; then rounded to the granule.
pub fn allocated_vgprs(arch: &CdnaArch, vgprs: u32, agprs: u32) -> u32 {
    let total = if arch.unified_vgprs && agprs > 0 {
        vgprs.div_ceil(4) * 4 + agprs
    } else {
        vgprs.max(agprs)
    };
    total.max(1).div_ceil(arch.vgpr_granule) * arch.vgpr_granule
}

/// Waves per SIMD that the VGPRs allow (`getNumWavesPerEUWithNumVGPRs`).
fn waves_by_vgprs(arch: &CdnaArch, vgprs: u32, agprs: u32) -> u32 {
    let total = if arch.unified_vgprs && agprs > 0 {
        vgprs.div_ceil(4) * 4 + agprs
    } else {
        vgprs.max(agprs)
    };
    if total < arch.vgpr_granule {
        return arch.max_waves_per_simd;
    }
    (arch.vgprs_per_simd / allocated_vgprs(arch, vgprs, agprs)).clamp(1, arch.max_waves_per_simd)
}

/// Waves per SIMD that the SGPRs allow on GFX9 (`getOccupancyWithNumSGPRs`, generations from
/// Volcanic Islands to GFX9): 10 up to 80, 9 up to 88, 8 up to 100, 7 above.
fn waves_by_sgprs(arch: &CdnaArch, sgprs: u32) -> u32 {
    let waves = match sgprs {
        0..=80 => 10,
        81..=88 => 9,
        89..=100 => 8,
        _ => 7,
    };
    waves.min(arch.max_waves_per_simd)
}

/// The theoretical occupancy of `launch` on `arch`: workgroups per CU and waves per CU
/// (`blocks_per_sm`, `warps_per_sm`), resident waves over the CU's maximum in percent, and what
/// limits it (`registers` for VGPRs, AGPRs or SGPRs, `shared_memory` for LDS, `warps` for the
/// waves a SIMD holds, `blocks` for the workgroup barriers).
pub fn cdna_occupancy(arch: &CdnaArch, launch: CdnaLaunch) -> Result<Occupancy, OccupancyError> {
    let size = launch.workgroup_size;
    if size == 0 || size > 1024 {
        return Err(OccupancyError::BlockSize(size));
    }
    // More than a SIMD lane's file (512 unified; 256 of each on gfx908) cannot launch.
    let allocated = allocated_vgprs(arch, launch.vgprs, launch.agprs);
    let file = if arch.unified_vgprs {
        arch.vgprs_per_simd
    } else {
        arch.vgprs_per_simd.min(256)
    };
    if allocated > file {
        return Err(OccupancyError::Registers(allocated));
    }
    if launch.lds_bytes > u64::from(arch.lds_per_cu) {
        return Err(OccupancyError::SharedMemory {
            bytes: launch.lds_bytes,
            limit: arch.lds_per_cu,
        });
    }
    let wave_size = if launch.wave_size == 0 {
        CDNA_WAVE_SIZE
    } else {
        launch.wave_size
    };
    let waves_per_group = size.div_ceil(wave_size);
    // Workgroups are spread over the CU's SIMDs: at `w` waves per SIMD the CU holds
    // `w * SIMDs / waves per workgroup` of them (`getMaxWorkGroupsPerCU`).
    let groups = |waves_per_simd: u32| waves_per_simd * arch.simds_per_cu / waves_per_group;
    let by_waves = groups(arch.max_waves_per_simd);
    let by_registers = groups(
        waves_by_vgprs(arch, launch.vgprs, launch.agprs)
            .min(launch.sgprs.map_or(u32::MAX, |s| waves_by_sgprs(arch, s))),
    );
    let by_lds = u64::from(arch.lds_per_cu)
        .checked_div(launch.lds_bytes)
        .map_or(u32::MAX, |n| u32::try_from(n).unwrap_or(u32::MAX));
    let by_barriers = if waves_per_group > 1 {
        arch.max_workgroups_per_cu
    } else {
        u32::MAX
    };
    let blocks = by_waves.min(by_registers).min(by_lds).min(by_barriers);
    let limiters = [
        (Limiter::Warps, by_waves),
        (Limiter::Registers, by_registers),
        (Limiter::SharedMemory, by_lds),
        (Limiter::Blocks, by_barriers),
    ]
    .into_iter()
    .filter(|&(_, n)| n == blocks)
    .map(|(l, _)| l)
    .collect();
    let waves = blocks * waves_per_group;
    let max_waves = arch.max_waves_per_simd * arch.simds_per_cu;
    Ok(Occupancy {
        blocks_per_sm: blocks,
        warps_per_sm: waves,
        occupancy_pct: f64::from(waves.min(max_waves)) * 100.0 / f64::from(max_waves),
        limiters,
    })
}

/// The launch of a kernel from its recorded details, when the file gives the workgroup and the
/// VGPRs (missing AGPRs and LDS count as none, missing SGPRs as no limit).
pub fn cdna_launch(info: &crate::model::KernelInfo) -> Option<CdnaLaunch> {
    let block = info.block?;
    let workgroup_size = block.iter().try_fold(1u32, |acc, &d| acc.checked_mul(d))?;
    Some(CdnaLaunch {
        workgroup_size,
        wave_size: info.wave_size.unwrap_or(CDNA_WAVE_SIZE),
        vgprs: info.registers_per_thread?,
        agprs: info.accum_registers.unwrap_or(0),
        sgprs: info.scalar_registers,
        lds_bytes: info
            .static_shared_bytes
            .unwrap_or(0)
            .saturating_add(info.dynamic_shared_bytes.unwrap_or(0)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(workgroup_size: u32, vgprs: u32, agprs: u32, lds_bytes: u64) -> CdnaLaunch {
        CdnaLaunch {
            workgroup_size,
            wave_size: 64,
            vgprs,
            agprs,
            sgprs: Some(32),
            lds_bytes,
        }
    }

    /// Worked by hand from the rules of `docs/occupancy.md`.
    #[test]
    fn mi300_occupancy_follows_the_llvm_rules() {
        let mi300 = CdnaArch::for_gfx("gfx942").expect("CDNA");
        // 256 work-items = 4 waves, one per SIMD; 64 VGPRs -> 512/64 = 8 waves per SIMD:
        // 8 workgroups, 32 waves, full.
        let o = cdna_occupancy(&mi300, launch(256, 64, 0, 0)).expect("fits");
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (8, 32));
        assert!((o.occupancy_pct - 100.0).abs() < 1e-9);
        assert_eq!(o.limiters, vec![Limiter::Warps, Limiter::Registers]);
        // 128 VGPRs + 128 AGPRs = 256 -> 2 waves per SIMD: 25%.
        let o = cdna_occupancy(&mi300, launch(256, 128, 128, 0)).expect("fits");
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (2, 8));
        assert!((o.occupancy_pct - 25.0).abs() < 1e-9);
        assert_eq!(o.limiters, vec![Limiter::Registers]);
        // 90 VGPRs round to 96 -> 5 waves; unaligned VGPRs round to 4 before the AGPRs are
        // added: 90 -> 92 + 4 = 96.
        assert_eq!(allocated_vgprs(&mi300, 90, 0), 96);
        assert_eq!(allocated_vgprs(&mi300, 90, 4), 96);
        assert_eq!(allocated_vgprs(&mi300, 93, 4), 104);
        // 64 KiB of LDS per workgroup: one workgroup.
        let o = cdna_occupancy(&mi300, launch(256, 32, 0, 65536)).expect("fits");
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (1, 4));
        assert!((o.occupancy_pct - 12.5).abs() < 1e-9);
        assert_eq!(o.limiters, vec![Limiter::SharedMemory]);
        // One-wave workgroups are not capped by barriers: 8 per SIMD, 32 per CU.
        let o = cdna_occupancy(&mi300, launch(64, 16, 0, 0)).expect("fits");
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (32, 32));
        // Two-wave workgroups: 16 barriers cap them at 16 workgroups = 32 waves.
        let o = cdna_occupancy(&mi300, launch(128, 16, 0, 0)).expect("fits");
        assert_eq!(o.blocks_per_sm, 16);
        // 1024 work-items = 16 waves, 4 per SIMD: two workgroups at most.
        let o = cdna_occupancy(&mi300, launch(1024, 64, 0, 0)).expect("fits");
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (2, 32));
        // SGPRs above 100 leave 7 waves per SIMD.
        let o = cdna_occupancy(
            &mi300,
            CdnaLaunch {
                sgprs: Some(102),
                ..launch(64, 16, 0, 0)
            },
        )
        .expect("fits");
        assert_eq!(o.warps_per_sm, 28);
        // The rocprofv3 sample's ck_tile batched GEMM: 128 + 384 = the whole file, 1 wave per
        // SIMD, 64 KiB of LDS: one 256-item workgroup, 4 of 32 waves.
        let o = cdna_occupancy(
            &mi300,
            CdnaLaunch {
                sgprs: Some(112),
                ..launch(256, 128, 384, 65536)
            },
        )
        .expect("fits");
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (1, 4));
        assert_eq!(o.limiters, vec![Limiter::Registers, Limiter::SharedMemory]);
        assert!(cdna_occupancy(&mi300, launch(64, 256, 264, 0)).is_err());
        assert!(cdna_occupancy(&mi300, launch(0, 16, 0, 0)).is_err());
        assert!(cdna_occupancy(&mi300, launch(256, 16, 0, 70000)).is_err());
    }

    #[test]
    fn mi100_keeps_its_register_files_apart() {
        let mi100 = CdnaArch::for_gfx("gfx908").expect("CDNA");
        // 10 waves per SIMD; 128 VGPRs and 128 AGPRs in separate files: 256 / 128 = 2.
        assert_eq!(allocated_vgprs(&mi100, 128, 128), 128);
        let o = cdna_occupancy(&mi100, launch(256, 128, 128, 0)).expect("fits");
        assert_eq!(o.warps_per_sm, 8);
        assert!((o.occupancy_pct - 20.0).abs() < 1e-9);
        let o = cdna_occupancy(&mi100, launch(256, 24, 0, 0)).expect("fits");
        assert_eq!(o.warps_per_sm, 40);
        assert!(CdnaArch::for_gfx("gfx1100").is_none());
        assert_eq!(
            CdnaArch::for_gfx("gfx942:sramecc+:xnack-").map(|a| a.gfx),
            Some("gfx942")
        );
    }
}
