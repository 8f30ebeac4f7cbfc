//! Kineto traces recorded on ROCm (PyTorch built for HIP, roctracer underneath): the devices are
//! AMD GPUs, the runtime is HIP, and the numbers differ. GPU events (`pid`, `args.device`) carry
//! the HSA agent index, which counts the CPU agents first (the first GPU of a two-socket host
//! is 2), while `deviceProperties[].id` and the `[memory]` instants' `Device Id` are HIP
//! ordinals (0 for that same GPU). See `docs/formats.md` §14.2 ("Kineto on ROCm").

use rustc_hash::FxHashMap;

use super::ChromeState;
use crate::model::{GpuVendor, MemoryDevice, TrackKey};

/// Top-level keys only a ROCm build of Kineto writes.
pub(super) const ROCM_TOP_LEVEL_KEYS: &[&str] = &[
    "roctracer_version",
    "hip_runtime_version",
    "hip_driver_version",
];

/// The AMD ISA of a marketing name, for the Instinct parts whose name says it.
const GFX_BY_NAME: &[(&str, &str)] = &[
    ("MI355", "gfx950"),
    ("MI350", "gfx950"),
    ("MI325", "gfx942"),
    ("MI300", "gfx942"),
    ("MI250", "gfx90a"),
    ("MI210", "gfx90a"),
    ("MI100", "gfx908"),
];

/// `gfx942` from a Tensile kernel name holding `_ISA942_` (hipBLASLt and rocBLAS name their
/// kernels after the ISA they were built for).
pub(crate) fn gfx_from_kernel_name(name: &str) -> Option<String> {
    let at = name.find("_ISA")?;
    let rest = &name[at + 4..];
    let end = rest.find('_').unwrap_or(rest.len());
    let isa = &rest[..end];
    (!isa.is_empty() && isa.len() <= 5 && isa.bytes().all(|b| b.is_ascii_alphanumeric()))
        .then(|| format!("gfx{}", isa.to_ascii_lowercase()))
}

/// The ISA of an AMD device named `name`, where the name says (`AMD Instinct MI300X VF`).
pub(crate) fn gfx_from_device_name(name: &str) -> Option<String> {
    GFX_BY_NAME
        .iter()
        .find(|(part, _)| name.contains(part))
        .map(|(_, gfx)| (*gfx).to_string())
}

/// `6.4.43483` from HIP's packed version number `60443483` (major × 10⁷ + minor × 10⁵ +
/// patch); other text is shown as written.
pub(crate) fn hip_version_text(text: &str) -> String {
    match text.trim().parse::<u64>() {
        Ok(v) if v >= 10_000_000 => {
            format!("{}.{}.{}", v / 10_000_000, v / 100_000 % 100, v % 100_000)
        }
        _ => text.to_string(),
    }
}

impl ChromeState {
    /// True when the trace was recorded on ROCm: a top-level key only ROCm's Kineto writes, or
    /// a device named `AMD ...`.
    pub(super) fn is_rocm(&self) -> bool {
        self.b
            .source
            .details
            .iter()
            .any(|(k, _)| ROCM_TOP_LEVEL_KEYS.contains(&k.as_str()))
            || self.b.devices.iter().any(|d| d.name.starts_with("AMD"))
    }

    /// On a ROCm trace where the GPU events are numbered by HSA agent and `deviceProperties` by
    /// HIP ordinal (an event device that no property entry has, or a `[memory]` device that no
    /// GPU event has): gives the i-th property entry (by id) and the memory records of HIP
    /// device i to the i-th device of the GPU events (by number). Called before the devices
    /// without properties are filled in.
    pub(super) fn renumber_amd_devices(&mut self) {
        if !self.is_rocm() {
            return;
        }
        let mut events: Vec<u32> = self
            .b
            .tracks()
            .iter()
            .filter_map(|t| match t.key {
                TrackKey::Gpu { device, .. } => Some(device),
                _ => None,
            })
            .collect();
        events.sort_unstable();
        events.dedup();
        let mut props: Vec<u32> = self.b.devices.iter().map(|d| d.id).collect();
        props.sort_unstable();
        props.dedup();
        let memory = self.b.memory_gpu_ids();
        let unmatched_event = events.iter().any(|d| !props.contains(d));
        let unmatched_memory = memory.iter().any(|d| !events.contains(d));
        if !events.is_empty() && !props.is_empty() && (unmatched_event || unmatched_memory) {
            let map: FxHashMap<u32, u32> =
                props.iter().copied().zip(events.iter().copied()).collect();
            let taken: Vec<u32> = map.values().copied().collect();
            // Entries beyond the GPUs the events use keep their number unless it is now taken.
            self.b
                .devices
                .retain(|d| map.contains_key(&d.id) || !taken.contains(&d.id));
            for d in &mut self.b.devices {
                if let Some(&to) = map.get(&d.id) {
                    d.id = to;
                }
            }
            self.b.remap_memory_devices(|device| match device {
                MemoryDevice::Gpu(hip) => MemoryDevice::Gpu(map.get(&hip).copied().unwrap_or(hip)),
                other => other,
            });
            let shown: Vec<String> = map
                .iter()
                .map(|(hip, agent)| (*hip, *agent))
                .collect::<std::collections::BTreeMap<_, _>>()
                .into_iter()
                .map(|(hip, agent)| format!("HIP device {hip} = GPU {agent}"))
                .collect();
            self.b.source.details.push((
                "device numbering".to_string(),
                format!(
                    "GPU events name HSA agents (CPUs first), deviceProperties and memory HIP \
                     devices: {}",
                    shown.join(", ")
                ),
            ));
        }
    }

    /// On a ROCm trace: marks every device AMD, with its ISA (from the Tensile kernel names,
    /// else from the marketing name), and writes the HIP versions as `6.4.43483`.
    pub(super) fn mark_amd_devices(&mut self) {
        if !self.is_rocm() {
            return;
        }
        let isa = self.kernel_isa();
        for d in &mut self.b.devices {
            d.vendor = GpuVendor::Amd;
            if d.gfx_target.is_none() {
                d.gfx_target = isa.clone().or_else(|| gfx_from_device_name(&d.name));
            }
        }
        for (key, value) in &mut self.b.source.details {
            if key == "hip_runtime_version" || key == "hip_driver_version" {
                *value = hip_version_text(value);
            }
        }
    }

    /// The ISA the trace's Tensile kernels were built for, when they all agree.
    fn kernel_isa(&self) -> Option<String> {
        let mut found: Option<String> = None;
        for t in self.b.tracks().iter().filter(|t| t.key.is_gpu()) {
            let mut names: Vec<_> = t.events.name.clone();
            names.sort_unstable();
            names.dedup();
            for id in names {
                if let Some(isa) = gfx_from_kernel_name(self.b.strings.get(id)) {
                    match &found {
                        Some(f) if *f != isa => return None,
                        _ => found = Some(isa),
                    }
                }
            }
        }
        found
    }

    /// The tool version of a ROCm trace: `HIP runtime 6.4.43483, roctracer 4.1`.
    pub(super) fn rocm_tool_version(&self) -> Option<String> {
        self.versions(&[
            ("hip_runtime_version", "HIP runtime"),
            ("roctracer_version", "roctracer"),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isa_from_names_and_versions() {
        assert_eq!(
            gfx_from_kernel_name("Cijk_Alik_Bljk_B_MT16x16x128_ISA942_IU1_K1"),
            Some("gfx942".to_string())
        );
        assert_eq!(
            gfx_from_kernel_name("Cijk_x_ISA90a_y"),
            Some("gfx90a".to_string())
        );
        assert_eq!(gfx_from_kernel_name("attn_fwd"), None);
        assert_eq!(
            gfx_from_device_name("AMD Instinct MI300X VF"),
            Some("gfx942".to_string())
        );
        assert_eq!(gfx_from_device_name("AMD Radeon Graphics"), None);
        assert_eq!(hip_version_text("60443483"), "6.4.43483");
        assert_eq!(hip_version_text("6.2"), "6.2");
    }
}
