//! What the three AMD SQLite formats (rocprofv3 rocpd, RPD, rocprof v1) share: devices as HSA
//! agent indices, copy directions from operation names, API calls by family, lane names.

use rustc_hash::FxHashMap;

use super::cells::{int, text};
use super::db::Db;
use crate::builder::{ProfileBuilder, TrackId};
use crate::model::{CopyKind, Device, EventKind, GpuLane, GpuVendor, MemoryKind, TrackKey};

/// Lanes of copies are numbered apart from queues and streams: this bit is set in their
/// `TrackKey::Gpu::stream`, so a copy engine never shares a lane number with a queue.
pub(super) const COPY_LANE: u64 = 1 << 40;

/// The direction of a copy from the operation names the AMD tools write: rocprofv3's
/// `MEMORY_COPY_HOST_TO_DEVICE`, RPD's and rocprof v1's `CopyHostToDevice`. `None` for a name
/// that is not a copy.
pub(super) fn copy_kind(name: &str) -> Option<CopyKind> {
    let key: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let key = key
        .strip_prefix("memorycopy")
        .or_else(|| key.strip_prefix("copy"))?;
    Some(match key {
        "hosttodevice" => CopyKind::HtoD,
        "devicetohost" => CopyKind::DtoH,
        "devicetodevice" => CopyKind::DtoD,
        "hosttohost" => CopyKind::HtoH,
        "peertopeer" => CopyKind::PtoP,
        _ => CopyKind::Unknown,
    })
}

/// The memory kinds (source, destination) of a copy of `kind`.
pub(super) fn copy_memory(kind: CopyKind) -> (Option<MemoryKind>, Option<MemoryKind>) {
    let host = Some(MemoryKind::Host);
    let device = Some(MemoryKind::Device);
    match kind {
        CopyKind::HtoD => (host, device),
        CopyKind::DtoH => (device, host),
        CopyKind::DtoD | CopyKind::PtoP => (device, device),
        CopyKind::HtoH => (host, host),
        _ => (None, None),
    }
}

/// The kind of an API call or range from its family: HIP calls are the runtime API, HSA calls
/// the layer below it (shown as driver calls), ROCTx ranges and marks as NVTX-like annotations;
/// RCCL, rocDecode and rocJPEG calls are library calls that launch work, kept with the runtime.
pub(super) fn api_kind(family: &str) -> EventKind {
    let upper = family.to_ascii_uppercase();
    if upper.starts_with("MARKER") || upper.starts_with("ROCTX") {
        EventKind::Nvtx
    } else if upper.starts_with("HIP") || upper.starts_with("RCCL") || upper.starts_with("ROC") {
        EventKind::Runtime
    } else if upper.starts_with("HSA") {
        EventKind::Driver
    } else {
        EventKind::Slice
    }
}

/// A device described by an AMD tool: vendor AMD, `gfx_target` when `isa` names one.
pub(super) fn amd_device(id: u32, name: String, isa: Option<&str>) -> Device {
    Device {
        id,
        name,
        vendor: GpuVendor::Amd,
        gfx_target: isa.filter(|t| is_gfx_target(t)).map(str::to_string),
        ..Device::default()
    }
}

/// True for an AMD ISA name (`gfx942`, `gfx90a`, `gfx1100`).
pub(super) fn is_gfx_target(s: &str) -> bool {
    s.strip_prefix("gfx").is_some_and(|rest| {
        !rest.is_empty() && rest.len() <= 5 && rest.chars().all(|c| c.is_ascii_alphanumeric())
    })
}

/// The gfx target named in a kernel name (Tensile writes `_ISA90a_`, `_ISA942_`), for files
/// that describe no device.
pub(super) fn gfx_from_kernel_name(name: &str) -> Option<String> {
    let at = name.find("_ISA")? + 4;
    let digits: String = name[at..]
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect();
    let target = format!("gfx{digits}");
    is_gfx_target(&target).then_some(target)
}

/// The GPU lanes of one file, named as the tool names them: `(device, lane)` to a name.
#[derive(Default)]
pub(super) struct Lanes {
    tracks: FxHashMap<(u32, u64), TrackId>,
    names: FxHashMap<(u32, u64), String>,
}

impl Lanes {
    /// The work track of `lane` on `device`, created with `name()` if new.
    pub(super) fn track(
        &mut self,
        b: &mut ProfileBuilder,
        device: u32,
        lane: u64,
        name: impl FnOnce() -> String,
    ) -> TrackId {
        *self.tracks.entry((device, lane)).or_insert_with(|| {
            self.names.insert((device, lane), name());
            b.track(TrackKey::Gpu {
                device,
                context: 0,
                stream: lane,
                lane: GpuLane::Work,
            })
        })
    }

    /// Gives every lane its name (call after `name_tracks`, which names them `stream N`).
    pub(super) fn name(self, b: &mut ProfileBuilder) {
        for (key, id) in self.tracks {
            if let Some(name) = self.names.get(&key) {
                b.track_mut(id).name.clone_from(name);
            }
        }
    }
}

/// The `schema_version` value of a metadata table (`tag`, `value` rows), if it can be read.
pub(super) fn schema_version(db: &Db, table: &str) -> Option<String> {
    let sql = format!(
        "SELECT value FROM {} WHERE tag = 'schema_version' LIMIT 1",
        super::db::quote(table)
    );
    let mut stmt = db.prepare(table, &sql).ok()?;
    let mut rows = stmt.query([]).ok()?;
    let row = rows.next().ok()??;
    match int(row, 0) {
        Some(v) => Some(v.to_string()),
        None => text(row, 0).map(|t| t.trim().to_string()),
    }
}

/// The grid in workgroups from the AMD grid in work-items (HSA's dispatch packet gives the
/// grid's size in work-items; the model, as CUDA, counts blocks).
pub(super) fn workgroups(grid: Option<[u32; 3]>, workgroup: Option<[u32; 3]>) -> Option<[u32; 3]> {
    let (g, w) = (grid?, workgroup?);
    Some([0, 1, 2].map(|i| if w[i] == 0 { 0 } else { g[i].div_ceil(w[i]) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_directions_come_from_the_operation_names() {
        assert_eq!(
            copy_kind("MEMORY_COPY_HOST_TO_DEVICE"),
            Some(CopyKind::HtoD)
        );
        assert_eq!(
            copy_kind("MEMORY_COPY_DEVICE_TO_HOST"),
            Some(CopyKind::DtoH)
        );
        assert_eq!(copy_kind("CopyDeviceToDevice"), Some(CopyKind::DtoD));
        assert_eq!(copy_kind("CopyHostToDevice"), Some(CopyKind::HtoD));
        assert_eq!(copy_kind("MEMORY_COPY_NONE"), Some(CopyKind::Unknown));
        assert_eq!(copy_kind("KernelExecution"), None);
        assert_eq!(copy_kind("FillBuffer"), None);
    }

    #[test]
    fn gfx_targets_are_recognised() {
        assert!(is_gfx_target("gfx942"));
        assert!(is_gfx_target("gfx90a"));
        assert!(!is_gfx_target("gfx"));
        assert!(!is_gfx_target("AMD Instinct MI300X"));
        assert_eq!(
            gfx_from_kernel_name("Cijk_Ailk_Bljk_SB_MT128x64x16_MI32x32x2x1_SN_ISA90a_IU1"),
            Some("gfx90a".to_string())
        );
        assert_eq!(gfx_from_kernel_name("vector_add"), None);
    }

    #[test]
    fn api_families_map_to_kinds() {
        assert_eq!(api_kind("HIP_RUNTIME_API_EXT"), EventKind::Runtime);
        assert_eq!(api_kind("HIP_COMPILER_API_EXT"), EventKind::Runtime);
        assert_eq!(api_kind("HSA_CORE_API"), EventKind::Driver);
        assert_eq!(api_kind("MARKER_CORE_RANGE_API"), EventKind::Nvtx);
        assert_eq!(api_kind("ROCTX"), EventKind::Nvtx);
        assert_eq!(api_kind("KERNEL_DISPATCH"), EventKind::Slice);
    }

    #[test]
    fn grids_in_work_items_become_workgroups() {
        assert_eq!(
            workgroups(Some([77824, 1, 1]), Some([256, 1, 1])),
            Some([304, 1, 1])
        );
        assert_eq!(
            workgroups(Some([1792, 782, 1]), Some([256, 1, 1])),
            Some([7, 782, 1])
        );
        // A partial workgroup counts.
        assert_eq!(
            workgroups(Some([1000, 1, 1]), Some([256, 1, 1])),
            Some([4, 1, 1])
        );
        assert_eq!(
            workgroups(Some([8, 1, 1]), Some([0, 1, 1])),
            Some([0, 1, 1])
        );
        assert_eq!(workgroups(None, Some([1, 1, 1])), None);
    }
}
