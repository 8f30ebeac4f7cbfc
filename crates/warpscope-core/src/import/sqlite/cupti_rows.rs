//! The SELECTs that nvprof and Nsight Systems share for their CUPTI activity tables (kernels,
//! copies, sets), and the details read from their rows.

use rusqlite::Row;

use super::cells::{correlation, dim3, int, uint32, uint64};
use super::db::{Db, Select};
use crate::import::ImportError;
use crate::model::{CopyInfo, CopyKind, KernelInfo, MemoryKind};
use crate::strings::StrId;

/// Selects from a kernel table (`name_col` is its name column): 0 `start`, 1 `end`, 2 `deviceId`,
/// 3 `streamId`, 4 `name_col`, 5 `contextId`, 6 `correlationId`, 7–15 the launch configuration
/// that [`kernel_info`] reads, then `extra` from 16.
pub(super) fn select_kernels(
    db: &Db,
    table: &'static str,
    name_col: &'static str,
    extra: &[&'static str],
) -> Result<Select, ImportError> {
    const LAUNCH: [&str; 11] = [
        "contextId",
        "correlationId",
        "gridX",
        "gridY",
        "gridZ",
        "blockX",
        "blockY",
        "blockZ",
        "registersPerThread",
        "staticSharedMemory",
        "dynamicSharedMemory",
    ];
    db.select(
        table,
        &["start", "end", "deviceId", "streamId", name_col],
        &[&LAUNCH[..], extra].concat(),
    )
}

/// The launch details of a row of [`select_kernels`].
pub(super) fn kernel_info(row: &Row<'_>, mangled_name: Option<StrId>) -> KernelInfo {
    KernelInfo {
        grid: dim3(row, 7, 8, 9),
        block: dim3(row, 10, 11, 12),
        registers_per_thread: uint32(row, 13),
        static_shared_bytes: uint64(row, 14),
        dynamic_shared_bytes: uint64(row, 15),
        correlation: correlation(row, 6),
        mangled_name,
        ..KernelInfo::default()
    }
}

/// Selects from a memcpy table: 0 `start`, 1 `end`, 2 `deviceId`, 3 `streamId`, 4 `copyKind`,
/// 5 `bytes`, 6 `contextId`, 7 `correlationId`, 8 `srcKind`, 9 `dstKind`, then `extra` from 10.
pub(super) fn select_copies(
    db: &Db,
    table: &'static str,
    extra: &[&'static str],
) -> Result<Select, ImportError> {
    db.select(
        table,
        &["start", "end", "deviceId", "streamId", "copyKind", "bytes"],
        &[
            &["contextId", "correlationId", "srcKind", "dstKind"][..],
            extra,
        ]
        .concat(),
    )
}

/// The details of a row of [`select_copies`] of `kind`, whose memory kinds `memory_kind`
/// decodes.
pub(super) fn copy_info(
    row: &Row<'_>,
    kind: CopyKind,
    memory_kind: fn(Option<i64>) -> Option<MemoryKind>,
) -> CopyInfo {
    CopyInfo {
        kind,
        bytes: uint64(row, 5),
        src_kind: memory_kind(int(row, 8)),
        dst_kind: memory_kind(int(row, 9)),
        correlation: correlation(row, 7),
        external_id: None,
    }
}

/// Selects from a memset table (`memory_col` is its memory-kind column): 0 `start`, 1 `end`,
/// 2 `deviceId`, 3 `streamId`, 4 `bytes`, 5 `contextId`, 6 `correlationId`, 7 `memory_col`, then
/// `extra` from 8.
pub(super) fn select_memsets(
    db: &Db,
    table: &'static str,
    memory_col: &'static str,
    extra: &[&'static str],
) -> Result<Select, ImportError> {
    db.select(
        table,
        &["start", "end", "deviceId", "streamId", "bytes"],
        &[&["contextId", "correlationId", memory_col][..], extra].concat(),
    )
}

/// The details of a row of [`select_memsets`], whose memory kind `memory_kind` decodes.
pub(super) fn memset_info(
    row: &Row<'_>,
    memory_kind: fn(Option<i64>) -> Option<MemoryKind>,
) -> CopyInfo {
    CopyInfo {
        kind: CopyKind::Memset,
        bytes: uint64(row, 4),
        src_kind: None,
        dst_kind: memory_kind(int(row, 7)),
        correlation: correlation(row, 6),
        external_id: None,
    }
}
