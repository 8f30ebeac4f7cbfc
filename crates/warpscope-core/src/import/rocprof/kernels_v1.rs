//! rocprof v1's kernel trace, `results.csv` (`rocprof --stats` or `-i input.txt` runs): one row
//! per dispatch with `BeginNs`/`EndNs` in nanoseconds and the kernel's resources (`grd`, `wgr`,
//! `lds`, `scr`, `arch_vgpr`, `accum_vgpr`, `sgpr`, `wave_size`).

use std::io::Read;
use std::path::Path;

use super::table::{Row, Table};
use crate::builder::ProfileBuilder;
use crate::import::ImportError;
use crate::model::{GpuLane, KernelInfo, TrackKey};

/// A kernel name as rocprof writes it, without the kernel-descriptor suffix it appends
/// (`__amd_rocclr_copyBuffer.kd`, `f(int) [clone .kd]`), so that it reads as other tools write
/// it.
pub(super) fn kernel_name(raw: &str) -> &str {
    let name = raw.trim();
    name.strip_suffix(" [clone .kd]")
        .or_else(|| name.strip_suffix(".kd"))
        .unwrap_or(name)
}

/// Workgroups of an HSA grid: the grid counts work-items (`grd` = 155648 with `wgr` = 512 is
/// 304 workgroups), rounded up as the hardware does for a partial last workgroup.
pub(super) fn workgroups(grid_items: u32, workgroup: u32) -> u32 {
    if workgroup == 0 {
        return grid_items;
    }
    grid_items.div_ceil(workgroup)
}

/// The columns of a kernel's resources (registers, LDS, scratch, wave size), under the names
/// rocprof v1 or rocprofv3 gives them.
pub(super) struct ResourceColumns {
    lds: Option<usize>,
    scratch: Option<usize>,
    vgpr: Option<usize>,
    agpr: Option<usize>,
    sgpr: Option<usize>,
    wave: Option<usize>,
}

impl ResourceColumns {
    /// rocprof v1's `results.csv` names.
    pub(super) fn v1<R: Read>(t: &Table<R>) -> Self {
        Self {
            lds: t.column("lds"),
            scratch: t.column("scr"),
            vgpr: t.any_column(&["arch_vgpr", "vgpr"]),
            agpr: t.column("accum_vgpr"),
            sgpr: t.column("sgpr"),
            wave: t.column("wave_size"),
        }
    }

    /// rocprofv3's kernel-trace CSV names (ROCm 6 and 7).
    pub(super) fn v3<R: Read>(t: &Table<R>) -> Self {
        Self {
            lds: t.any_column(&["LDS_Block_Size", "Group_Segment_Size"]),
            scratch: t.any_column(&["Scratch_Size", "Private_Segment_Size"]),
            vgpr: t.any_column(&["Arch_VGPR_Count", "VGPR_Count"]),
            agpr: t.column("Accum_VGPR_Count"),
            sgpr: t.column("SGPR_Count"),
            wave: t.column("Wave_Size"),
        }
    }

    /// The kernel's resources in `row`; every other field of the info is its default.
    pub(super) fn info(&self, row: &Row<'_>) -> KernelInfo {
        KernelInfo {
            registers_per_thread: row.u32(self.vgpr),
            accum_registers: row.u32(self.agpr),
            scalar_registers: row.u32(self.sgpr),
            wave_size: row.u32(self.wave),
            static_shared_bytes: row.u64(self.lds),
            scratch_bytes: row.u64(self.scratch),
            ..KernelInfo::default()
        }
    }
}

/// Reads the kernel rows into `b`; returns the bytes read.
pub(super) fn read(
    input: impl Read,
    path: &Path,
    b: &mut ProfileBuilder,
) -> Result<u64, ImportError> {
    let mut t = Table::open(input, path)?;
    let what = "a rocprof kernel trace";
    let name_col = Some(t.required(path, "KernelName", what)?);
    let begin = Some(t.required(path, "BeginNs", what)?);
    let end = Some(t.required(path, "EndNs", what)?);
    let gpu = t.any_column(&["gpu-id", "dev-id"]);
    let queue = t.column("queue-id");
    let grd = t.column("grd");
    let wgr = t.column("wgr");
    let resources = ResourceColumns::v1(&t);
    let complete = t.column("CompleteNs");
    let (mut skipped, mut early_complete) = (0u64, 0u64);
    while let Some(row) = t.next_row(path)? {
        let (Some(name), Some(start_ns), Some(end_ns)) =
            (row.text(name_col), row.int(begin), row.int(end))
        else {
            skipped += 1;
            continue;
        };
        if row.int(complete).is_some_and(|c| c < end_ns) {
            early_complete += 1;
        }
        let block = row.u32(wgr);
        let info = KernelInfo {
            grid: row
                .u32(grd)
                .map(|g| [workgroups(g, block.unwrap_or(0)), 1, 1]),
            block: block.map(|w| [w, 1, 1]),
            ..resources.info(&row)
        };
        let device = row.u32(gpu).unwrap_or(0);
        let stream = row.u64(queue).unwrap_or(0);
        let name = b.intern(kernel_name(name));
        let track = queue_track(b, device, stream);
        b.push_kernel(
            track,
            start_ns,
            end_ns.saturating_sub(start_ns),
            name,
            info,
            0,
        );
    }
    b.warn(
        "rows_skipped",
        skipped,
        format!("{what}: rows without a kernel name, BeginNs or EndNs were skipped"),
    );
    if early_complete > 0 {
        b.source.details.push((
            "CompleteNs".to_string(),
            format!(
                "earlier than EndNs on {early_complete} rows (the host saw the completion \
                 signal first); kernels end at EndNs"
            ),
        ));
    }
    Ok(t.total_bytes())
}

/// The track of hardware queue `queue` of GPU `device`, named `queue N`.
pub(super) fn queue_track(
    b: &mut ProfileBuilder,
    device: u32,
    queue: u64,
) -> crate::builder::TrackId {
    let key = TrackKey::Gpu {
        device,
        context: 0,
        stream: queue,
        lane: GpuLane::Work,
    };
    let fresh = b.find_track(&key).is_none();
    let track = b.track(key);
    if fresh {
        b.track_mut(track).name = format!("queue {queue}");
    }
    track
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_grids_as_other_tools_show_them() {
        assert_eq!(
            kernel_name("__amd_rocclr_copyBuffer.kd"),
            "__amd_rocclr_copyBuffer"
        );
        assert_eq!(kernel_name("void f<1>(int) [clone .kd]"), "void f<1>(int)");
        assert_eq!(kernel_name("plain"), "plain");
        assert_eq!(workgroups(155_648, 512), 304);
        assert_eq!(workgroups(1000, 256), 4);
        assert_eq!(workgroups(7, 0), 7);
    }
}
