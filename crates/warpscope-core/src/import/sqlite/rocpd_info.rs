//! What describes a rocprofv3 session: its table suffix, and the agents (GPUs become devices),
//! processes, threads, queues and streams its rows refer to by row id.

use rustc_hash::FxHashMap;

use super::amd::{amd_device, is_gfx_target};
use super::{Db, int, text, uint32};
use crate::builder::ProfileBuilder;
use crate::model::Device;

/// One session: the suffix of its tables (`_0000…`, or empty) and the `schema_version` its
/// metadata gives.
pub(super) struct Session {
    /// Appended to every table name of the session.
    pub(super) suffix: String,
    /// `rocpd_metadata.schema_version`, if the table has it.
    pub(super) version: Option<String>,
}

impl Session {
    /// The name of table `base` in this session.
    pub(super) fn table(&self, base: &str) -> String {
        format!("{base}{}", self.suffix)
    }
}

/// What the description tables of one session say, by their row ids.
#[derive(Default)]
pub(super) struct SessionInfo {
    /// Agent row id to (device ordinal, is a GPU).
    pub(super) agents: FxHashMap<i64, (u32, bool)>,
    /// Wavefront size of each GPU, by device ordinal.
    pub(super) wave_size: FxHashMap<u32, u32>,
    /// Thread row id to (pid, tid).
    pub(super) threads: FxHashMap<i64, (i64, i64)>,
    /// Process row id to pid.
    pub(super) processes: FxHashMap<i64, i64>,
    /// Queue row id to its name.
    pub(super) queues: FxHashMap<i64, String>,
    /// Stream row id to its name.
    pub(super) streams: FxHashMap<i64, String>,
    /// Thread names, by (pid, tid).
    pub(super) thread_names: FxHashMap<(i64, i64), String>,
}

impl SessionInfo {
    /// The (pid, tid) of thread row `id`: the thread table's, or the id itself for both when
    /// the table lacks it (rocprofv3 writes the thread's OS id as its row id).
    pub(super) fn thread(&self, pid: Option<i64>, id: i64) -> (i64, i64) {
        self.threads.get(&id).copied().unwrap_or_else(|| {
            let pid = pid.map_or(id, |p| self.processes.get(&p).copied().unwrap_or(p));
            (pid, id)
        })
    }
}

/// Reads the description tables of session `s` (each only warns when it is damaged).
pub(super) fn read_info(db: &Db, b: &mut ProfileBuilder, s: &Session) -> SessionInfo {
    let mut info = SessionInfo::default();
    read_agents(db, b, s, &mut info);
    let processes = s.table("rocpd_info_process");
    let mut commands: Vec<(i64, String)> = Vec::new();
    db.meta_rows(b, &processes, &["id"], &["pid", "command"], |row| {
        if let Some(id) = int(row, 0) {
            let pid = int(row, 1).unwrap_or(id);
            info.processes.insert(id, pid);
            if let Some(c) = text(row, 2).filter(|c| !c.is_empty()) {
                commands.push((pid, c.to_string()));
            }
        }
    });
    for (pid, command) in commands {
        b.source
            .details
            .push(("command".to_string(), command.clone()));
        b.process_names
            .push((crate::model::TraceId::Int(pid), command));
    }
    let threads = s.table("rocpd_info_thread");
    db.meta_rows(b, &threads, &["id"], &["pid", "tid", "name"], |row| {
        if let Some(id) = int(row, 0) {
            let pid_row = int(row, 1);
            let pid = pid_row.map_or(id, |p| info.processes.get(&p).copied().unwrap_or(p));
            let tid = int(row, 2).unwrap_or(id);
            info.threads.insert(id, (pid, tid));
            if let Some(n) = text(row, 3).filter(|n| !n.is_empty()) {
                info.thread_names.insert((pid, tid), n.to_string());
            }
        }
    });
    for (base, map) in [
        ("rocpd_info_queue", &mut info.queues),
        ("rocpd_info_stream", &mut info.streams),
    ] {
        db.meta_rows(b, &s.table(base), &["id"], &["name"], |row| {
            if let (Some(id), Some(name)) = (int(row, 0), text(row, 1)) {
                map.insert(id, name.to_string());
            }
        });
    }
    info
}

/// The agents of session `s`: every one is mapped to its HSA agent index (`absolute_index`, CPU
/// agents first, as the other AMD tools number devices); the GPUs become devices, with what
/// `extdata` (the agent's properties as JSON) says about them.
fn read_agents(db: &Db, b: &mut ProfileBuilder, s: &Session, info: &mut SessionInfo) {
    let table = s.table("rocpd_info_agent");
    let mut devices: Vec<Device> = Vec::new();
    db.meta_rows(
        b,
        &table,
        &["id"],
        &[
            "type",
            "absolute_index",
            "name",
            "product_name",
            "model_name",
            "extdata",
            "logical_index",
            "type_index",
        ],
        |row| {
            let Some(id) = int(row, 0) else { return };
            let ordinal = uint32(row, 2)
                .or_else(|| u32::try_from(id).ok())
                .unwrap_or(u32::MAX);
            let gpu = text(row, 1).is_some_and(|t| t.eq_ignore_ascii_case("GPU"));
            info.agents.insert(id, (ordinal, gpu));
            if !gpu || devices.iter().any(|d| d.id == ordinal) {
                return;
            }
            let isa = text(row, 3);
            let product = text(row, 4).filter(|p| !p.is_empty());
            let name = product
                .or(isa)
                .map_or_else(|| format!("GPU {ordinal}"), str::to_string);
            let mut device = amd_device(ordinal, name, isa);
            if let Some(m) = text(row, 5).filter(|m| !m.is_empty()) {
                device.properties.push(("model".to_string(), m.to_string()));
            }
            for (key, col) in [("logical index", 7), ("type index", 8)] {
                if let Some(v) = int(row, col) {
                    device.properties.push((key.to_string(), v.to_string()));
                }
            }
            if let Some(json) = text(row, 6) {
                agent_properties(&mut device, json);
            }
            if let Some(w) = device
                .properties
                .iter()
                .find(|(k, _)| k == "wave_front_size")
                .and_then(|(_, v)| v.parse().ok())
                .filter(|&w| w > 0)
            {
                info.wave_size.insert(ordinal, w);
            }
            devices.push(device);
        },
    );
    // Another session of a merged database may have described the same GPU.
    devices.retain(|d| !b.devices.iter().any(|e| e.id == d.id));
    devices.sort_by_key(|d| d.id);
    b.devices.extend(devices);
}

/// Properties of an agent's `extdata` that the viewer and the occupancy rules use: compute
/// units, wavefront size, SIMDs per CU, waves per SIMD, LDS, clocks, XCCs, memory.
fn agent_properties(device: &mut Device, json: &str) {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(json) else {
        return;
    };
    let uint = |key: &str| map.get(key).and_then(serde_json::Value::as_u64);
    device.sm_count = uint("cu_count")
        .and_then(|v| u32::try_from(v).ok())
        .filter(|&v| v > 0);
    for key in [
        "wave_front_size",
        "simd_per_cu",
        "max_waves_per_simd",
        "lds_size_in_kb",
        "num_xcc",
        "max_engine_clk_fcompute",
        "gfx_target_version",
        "device_id",
    ] {
        if let Some(v) = uint(key).filter(|&v| v > 0) {
            device.properties.push((key.to_string(), v.to_string()));
        }
    }
    if device.gfx_target.is_none()
        && let Some(name) = map.get("name").and_then(serde_json::Value::as_str)
        && is_gfx_target(name)
    {
        device.gfx_target = Some(name.to_string());
    }
    // The device's own memory: the frame buffer bank (heap type 1, HSA_HEAPTYPE_FRAME_BUFFER_PUBLIC
    // and _PRIVATE are 1 and 2).
    if let Some(serde_json::Value::Array(banks)) = map.get("mem_banks") {
        let bytes: u64 = banks
            .iter()
            .filter(|bank| {
                bank.get("heap_type")
                    .and_then(serde_json::Value::as_u64)
                    .is_some_and(|h| h == 1 || h == 2)
            })
            .filter_map(|bank| {
                bank.get("size_in_bytes")
                    .and_then(serde_json::Value::as_u64)
            })
            .fold(0, u64::saturating_add);
        device.memory_bytes = (bytes > 0).then_some(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_extdata_gives_compute_units_and_memory() {
        let mut d = amd_device(2, "AMD Instinct MI300X".to_string(), Some("gfx942"));
        agent_properties(
            &mut d,
            r#"{"cu_count":304,"wave_front_size":64,"simd_per_cu":4,"max_waves_per_simd":8,
                "name":"gfx942","mem_banks":[{"heap_type":1,"size_in_bytes":206141652992}]}"#,
        );
        assert_eq!(d.sm_count, Some(304));
        assert_eq!(d.memory_bytes, Some(206_141_652_992));
        assert_eq!(d.gfx_target.as_deref(), Some("gfx942"));
        assert!(
            d.properties
                .contains(&("wave_front_size".to_string(), "64".to_string()))
        );
        // Broken JSON changes nothing.
        let mut e = amd_device(3, "x".to_string(), None);
        agent_properties(&mut e, "{\"cu_count\":");
        assert_eq!(e.sm_count, None);
    }
}
