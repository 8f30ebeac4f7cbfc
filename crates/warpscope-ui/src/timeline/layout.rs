//! Lanes of the timeline: which tracks are shown, in which order, under which collapsible group
//! (a device, a process, the async ranges, the counters), with their readable names and heights.

use std::collections::HashSet;

use warpscope_core::model::{GpuLane, MemoryDevice, TraceId, TrackKey};
use warpscope_core::{Profile, Track};

/// Height of a group header row in points.
pub const GROUP_HEIGHT: f32 = 22.0;
/// Height of one depth row of an event lane in points.
pub const ROW_HEIGHT: f32 = 18.0;
/// Height of a counter lane in points.
pub const COUNTER_HEIGHT: f32 = 34.0;
/// Height of a device's utilisation lane in points.
pub const UTILISATION_HEIGHT: f32 = 28.0;
/// Height of a device's memory lane in points.
pub const MEMORY_HEIGHT: f32 = 44.0;
/// Vertical gap after each lane.
pub const LANE_GAP: f32 = 3.0;

/// A collapsible group of lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupKey {
    /// All streams of one GPU.
    Device(u32),
    /// All threads of one process.
    Process(TraceId),
    /// The async ranges of one process.
    Async(TraceId),
    /// The memory lanes of devices without lanes of their own (the CPU; the GPUs of an
    /// allocator snapshot).
    Memory,
    /// The counters.
    Counters,
}

/// What a lane shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneContent {
    /// The events of `profile.tracks[i]`.
    Track(usize),
    /// The samples of `profile.counters[i]`.
    Counter(usize),
    /// The busy fraction and idle causes of device `d` over time.
    Utilisation(u32),
    /// Allocated and reserved memory of a device over time.
    Memory(MemoryDevice),
}

/// One lane: a track or a counter, with its name.
#[derive(Clone, Debug)]
pub struct Lane {
    /// What the lane draws.
    pub content: LaneContent,
    /// Short name shown under the group header (`stream 7`).
    pub short_name: String,
    /// Full name (`GPU 0 · NVIDIA H100 80GB HBM3 · stream 7`).
    pub full_name: String,
    /// Number of depth rows (1 for counters).
    pub rows: u16,
}

impl Lane {
    /// Height of the lane in points (without the gap).
    pub fn height(&self) -> f32 {
        match self.content {
            LaneContent::Track(_) => f32::from(self.rows.max(1)) * ROW_HEIGHT,
            LaneContent::Counter(_) => COUNTER_HEIGHT,
            LaneContent::Utilisation(_) => UTILISATION_HEIGHT,
            LaneContent::Memory(_) => MEMORY_HEIGHT,
        }
    }
}

/// A group of lanes with its header.
#[derive(Clone, Debug)]
pub struct Group {
    /// Identity (used for collapsing).
    pub key: GroupKey,
    /// Header text (`GPU 0 · NVIDIA H100 80GB HBM3`, `python3 (450)`).
    pub name: String,
    /// The lanes in display order.
    pub lanes: Vec<Lane>,
}

/// Builds the groups of a profile: devices (streams' work and annotation lanes, then the device's
/// unified-memory lane), processes (threads), async ranges, counters. Empty tracks are left out.
pub fn build_groups(profile: &Profile) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    // GPU tracks: sorted by (device, stream, lane) with the unified-memory lane last per device.
    let mut gpu: Vec<(u32, u8, u64, u64, u8, usize)> = Vec::new();
    let mut threads: Vec<(TraceId, i64, TraceId, usize)> = Vec::new();
    let mut asyncs: Vec<(TraceId, usize)> = Vec::new();
    let mut pid_order: Vec<TraceId> = Vec::new();
    for (i, track) in profile.tracks.iter().enumerate() {
        if track.events.is_empty() {
            continue;
        }
        match track.key {
            TrackKey::Gpu {
                device,
                context,
                stream,
                lane,
            } => {
                let um = u8::from(lane == GpuLane::UnifiedMemory);
                gpu.push((device, um, stream, u64::from(context), lane as u8, i));
            }
            TrackKey::Thread { pid, tid } => {
                if !pid_order.contains(&pid) {
                    pid_order.push(pid);
                }
                let _ = tid;
                threads.push((pid, track.sort_index.unwrap_or(i64::MAX), tid, i));
            }
            TrackKey::Async { pid, .. } => asyncs.push((pid, i)),
        }
    }
    gpu.sort_unstable();
    let memory_devices = profile.memory.devices();
    for &(device, _, _, _, _, i) in &gpu {
        let track = &profile.tracks[i];
        let device_name = device_title(profile, device);
        let short = track_short_name(profile, i);
        if groups
            .last()
            .is_none_or(|g| g.key != GroupKey::Device(device))
        {
            groups.push(Group {
                key: GroupKey::Device(device),
                name: device_name.clone(),
                lanes: vec![Lane {
                    content: LaneContent::Utilisation(device),
                    short_name: "utilisation".to_string(),
                    full_name: format!(
                        "{device_name} · utilisation: busy (green) and idle time by cause \
                         (orange host wait, yellow kernel wait, grey other); click to show or \
                         hide the causes"
                    ),
                    rows: 1,
                }],
            });
        }
        if let Some(g) = groups.last_mut() {
            if g.lanes.len() == 1 && memory_devices.contains(&MemoryDevice::Gpu(device)) {
                g.lanes
                    .push(memory_lane(MemoryDevice::Gpu(device), &device_name));
            }
            g.lanes.push(Lane {
                content: LaneContent::Track(i),
                full_name: format!("{device_name} · {short}"),
                short_name: short,
                rows: track.max_depth.max(1),
            });
        }
    }
    // Processes in order of pid (numeric first), threads by sort index then tid.
    pid_order.sort_unstable();
    threads.sort_unstable_by_key(|a| (a.0, a.1, a.2));
    for pid in &pid_order {
        let title = process_title(profile, *pid);
        let lanes: Vec<Lane> = threads
            .iter()
            .filter(|t| t.0 == *pid)
            .map(|&(_, _, _, i)| {
                let short = track_short_name(profile, i);
                Lane {
                    content: LaneContent::Track(i),
                    full_name: format!("{title} · {short}"),
                    short_name: short,
                    rows: profile.tracks[i].max_depth.max(1),
                }
            })
            .collect();
        groups.push(Group {
            key: GroupKey::Process(*pid),
            name: title,
            lanes,
        });
    }
    let mut async_pids: Vec<TraceId> = asyncs.iter().map(|a| a.0).collect();
    async_pids.sort_unstable();
    async_pids.dedup();
    for pid in async_pids {
        let title = format!("{} · async", process_title(profile, pid));
        let lanes = asyncs
            .iter()
            .filter(|a| a.0 == pid)
            .map(|&(_, i)| {
                let short = track_short_name(profile, i);
                Lane {
                    content: LaneContent::Track(i),
                    full_name: format!("{title} · {short}"),
                    short_name: short,
                    rows: profile.tracks[i].max_depth.max(1),
                }
            })
            .collect();
        groups.push(Group {
            key: GroupKey::Async(pid),
            name: title,
            lanes,
        });
    }
    // Memory of devices without a group of their own: the CPU, a snapshot's GPUs.
    let own: Vec<Lane> = memory_devices
        .iter()
        .filter(|&&d| match d {
            MemoryDevice::Gpu(id) => !groups.iter().any(|g| g.key == GroupKey::Device(id)),
            MemoryDevice::Cpu => true,
        })
        .map(|&d| {
            let title = match d {
                MemoryDevice::Gpu(id) => device_title(profile, id),
                MemoryDevice::Cpu => "CPU".to_string(),
            };
            let mut lane = memory_lane(d, &title);
            lane.short_name = format!("{title} memory");
            lane
        })
        .collect();
    if !own.is_empty() {
        groups.push(Group {
            key: GroupKey::Memory,
            name: "Memory".to_string(),
            lanes: own,
        });
    }
    let counters: Vec<Lane> = profile
        .counters
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.time_ns.is_empty())
        .map(|(i, c)| {
            let short = format!("{} ({})", c.name, profile.id_text(c.pid));
            Lane {
                content: LaneContent::Counter(i),
                full_name: format!("Counters · {short}"),
                short_name: short,
                rows: 1,
            }
        })
        .collect();
    if !counters.is_empty() {
        groups.push(Group {
            key: GroupKey::Counters,
            name: "Counters".to_string(),
            lanes: counters,
        });
    }
    groups
}

/// The memory lane of `device`, titled `title`.
fn memory_lane(device: MemoryDevice, title: &str) -> Lane {
    Lane {
        content: LaneContent::Memory(device),
        short_name: "memory".to_string(),
        full_name: format!(
            "{title} · memory: allocated (filled) and reserved (line) over time, the peak \
             marked; hover for the figures and the allocation that moved them"
        ),
        rows: 1,
    }
}

/// `GPU 0 · NVIDIA H100 80GB HBM3`.
pub fn device_title(profile: &Profile, device: u32) -> String {
    match profile.device(device) {
        Some(d) if !d.name.is_empty() => format!("GPU {device} · {}", d.name),
        _ => format!("GPU {device}"),
    }
}

/// `python3 (450)`, or `process 450` when the file names no process.
pub fn process_title(profile: &Profile, pid: TraceId) -> String {
    let id = profile.id_text(pid);
    match profile.process_name(pid) {
        Some(name) if !name.is_empty() => format!("{name} ({id})"),
        _ => format!("process {id}"),
    }
}

/// The track's own name (`stream 7`, `thread 481 (pt_autograd_0)`), made up from its key when
/// the importer left it empty.
pub fn track_short_name(profile: &Profile, i: usize) -> String {
    let track = &profile.tracks[i];
    let base = if track.name.is_empty() {
        match track.key {
            TrackKey::Gpu { stream, .. } => format!("stream {stream}"),
            TrackKey::Thread { tid, .. } => format!("thread {}", profile.id_text(tid)),
            TrackKey::Async { name, .. } => profile.str(name).to_string(),
        }
    } else {
        distinct_thread_name(profile, track)
    };
    match track.key {
        TrackKey::Gpu {
            lane: GpuLane::Annotations,
            ..
        } if !base.contains("annotation") => format!("{base} · annotations"),
        TrackKey::Gpu {
            lane: GpuLane::UnifiedMemory,
            ..
        } if !base.to_lowercase().contains("unified") => "unified memory".to_string(),
        _ => base,
    }
}

/// A thread's name without the generic one when the file gave two: Kineto names a thread both
/// `thread 481 (python3)` (after its process) and `thread 481 (pt_autograd_0)`; the importer keeps
/// both as `A / B`, the lane shows the one that says more.
fn distinct_thread_name(profile: &Profile, track: &Track) -> String {
    let TrackKey::Thread { pid, .. } = track.key else {
        return track.name.clone();
    };
    let Some(process) = profile.process_name(pid) else {
        return track.name.clone();
    };
    let generic = format!("({process})");
    let parts: Vec<&str> = track.name.split(" / ").collect();
    let specific: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|p| !p.ends_with(&generic))
        .collect();
    if specific.is_empty() || specific.len() == parts.len() {
        track.name.clone()
    } else {
        specific.join(" / ")
    }
}

/// Vertical placement of lanes for one frame.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    /// (group index, y of the header top, collapsed).
    pub headers: Vec<(usize, f32, bool)>,
    /// (group index, lane index, y of the lane top).
    pub lanes: Vec<(usize, usize, f32)>,
    /// Total content height.
    pub height: f32,
}

/// Places groups and lanes from y = 0 down, skipping the lanes of collapsed groups.
pub fn place(groups: &[Group], collapsed: &HashSet<GroupKey>) -> Placement {
    let mut p = Placement::default();
    let mut y = 0.0;
    for (gi, g) in groups.iter().enumerate() {
        let is_collapsed = collapsed.contains(&g.key);
        p.headers.push((gi, y, is_collapsed));
        y += GROUP_HEIGHT;
        if is_collapsed {
            continue;
        }
        for (li, lane) in g.lanes.iter().enumerate() {
            p.lanes.push((gi, li, y));
            y += lane.height() + LANE_GAP;
        }
    }
    p.height = y;
    p
}
