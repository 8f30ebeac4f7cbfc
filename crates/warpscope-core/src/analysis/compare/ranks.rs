//! Multi-rank runs: the per-rank traces of one distributed job merged into one multi-GPU
//! profile on a shared time axis, and recognising NCCL kernels.

use std::path::PathBuf;

use rustc_hash::{FxHashMap, FxHashSet};

use super::labels::RunLabel;
use crate::model::{
    ApiTable, CopyTable, EventKind, EventRef, Flow, KernelTable, NO_DETAIL, Profile, Source,
    TimeOrigin, TraceId, TrackKey, Warning,
};
use crate::strings::{StrId, StringTable};

/// Why per-rank profiles could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No profile was given.
    #[error("no profiles to merge")]
    NoProfiles,
    /// A profile holds only a summary recorded by nvprof, with no events to place on a timeline.
    #[error("{path}: a summary without events cannot be merged with other ranks")]
    SummaryOnly {
        /// The file.
        path: PathBuf,
    },
    /// Two profiles claim the same rank (the same file opened twice, or traces of two jobs).
    #[error("{first} and {second} are both rank {rank}")]
    DuplicateRank {
        /// The rank.
        rank: i64,
        /// The first file with that rank.
        first: PathBuf,
        /// The second file with that rank.
        second: PathBuf,
    },
}

pub use crate::names::is_nccl_kernel;

/// The rank of a profile: its `distributedInfo` rank, or the `rank` its file name gives
/// (`..._rank1.json`, `..._rank-1.json`, `..._rank3of8...`).
pub fn profile_rank(profile: &Profile) -> Option<i64> {
    profile
        .distributed
        .as_ref()
        .and_then(|d| d.rank)
        .or_else(|| {
            RunLabel::from_path(&profile.source.path)
                .value("rank")
                .and_then(|v| v.parse::<i64>().ok())
        })
}

/// How far each rank's times move to put all ranks on one clock, from their Unix-epoch time
/// origins: each origin minus the earliest one. When some origin is unknown every shift is 0
/// and the second value is false (the ranks then share a common start, not a clock).
pub fn rank_shifts_ns(unix_origins_ns: &[Option<i64>]) -> (Vec<i64>, bool) {
    let aligned = unix_origins_ns.iter().all(Option::is_some);
    let zero_ns = unix_origins_ns.iter().flatten().copied().min().unwrap_or(0);
    let shifts = unix_origins_ns
        .iter()
        .map(|o| match o {
            Some(unix) if aligned => unix.saturating_sub(zero_ns),
            _ => 0,
        })
        .collect();
    (shifts, aligned)
}

/// The devices that a profile's GPU tracks use, sorted.
fn used_devices(profile: &Profile) -> Vec<u32> {
    let mut devices: Vec<u32> = profile
        .tracks
        .iter()
        .filter_map(|t| match t.key {
            TrackKey::Gpu { device, .. } => Some(device),
            _ => None,
        })
        .collect();
    devices.sort_unstable();
    devices.dedup();
    devices
}

/// New device ids for each profile (old id → new id), in merge order. Devices keep their ids
/// when no two ranks share one; otherwise each rank's single device becomes its rank (ranks all
/// known, distinct, one device each), or devices are numbered in merge order.
fn device_maps(profiles: &[Profile], ranks: &[Option<i64>]) -> Vec<FxHashMap<u32, u32>> {
    let used: Vec<Vec<u32>> = profiles.iter().map(used_devices).collect();
    let mut seen: FxHashSet<u32> = FxHashSet::default();
    let disjoint = used.iter().flatten().all(|&d| seen.insert(d));
    let identity = |devices: &Vec<u32>| devices.iter().map(|&d| (d, d)).collect();
    if disjoint {
        return used.iter().map(identity).collect();
    }
    let by_rank: Option<Vec<u32>> = ranks
        .iter()
        .zip(&used)
        .map(|(rank, devices)| {
            let rank = u32::try_from((*rank)?).ok()?;
            (devices.len() <= 1).then_some(rank)
        })
        .collect();
    if let Some(by_rank) = by_rank {
        return used
            .iter()
            .zip(by_rank)
            .map(|(devices, rank)| devices.iter().map(|&d| (d, rank)).collect())
            .collect();
    }
    let mut next = 0u32;
    used.iter()
        .map(|devices| {
            devices
                .iter()
                .map(|&d| {
                    let new = next;
                    next += 1;
                    (d, new)
                })
                .collect()
        })
        .collect()
}

/// Copies strings of one profile into the merged table, remembering the new id of each.
struct StringMap {
    new_id: Vec<StrId>,
}

impl StringMap {
    fn new(from: &StringTable, into: &mut StringTable) -> Self {
        let new_id = (0..from.len())
            .map(|i| into.intern(from.get(StrId(u32::try_from(i).unwrap_or(0)))))
            .collect();
        Self { new_id }
    }

    fn map(&self, id: StrId) -> StrId {
        self.new_id.get(id.0 as usize).copied().unwrap_or_default()
    }
}

/// `rank 1` or, when the rank is unknown, `run 3` (1-based position in the merge).
fn rank_text(rank: Option<i64>, position: usize) -> String {
    match rank {
        Some(r) => format!("rank {r}"),
        None => format!("run {}", position + 1),
    }
}

/// Merges the per-rank profiles of one distributed job into one profile.
///
/// - Profiles are ordered by rank ([`profile_rank`]; those without a rank last, in the order
///   given). Two profiles with the same rank are an error.
/// - Time: each profile is placed by its Unix-epoch origin ([`TimeOrigin::unix_ns`]), so events
///   that ran at the same moment line up; time zero is the earliest origin. When a profile has
///   no epoch origin, every profile starts at zero instead and a `ranks_not_aligned` warning
///   says so.
/// - GPUs keep their device ids unless two ranks use the same one; then each rank's device
///   becomes its rank (or, when ranks are unknown or a rank uses several devices, devices are
///   numbered in rank order). Device entries the file declares but no track uses are dropped.
/// - CPU processes keep their ids; a pid already used by an earlier rank becomes the name
///   `4037 (rank 1)`. Process names are prefixed with the rank (`rank 1: python3.10`).
/// - Warnings are kept, their messages prefixed with the rank; `source.details` records, per
///   rank, the file, the device mapping and the time shift.
/// - Labels: the first rank's, without `rank`, with `gpus` set to the world size when its name
///   does not give it (`bert_ddp2_rank0` + `bert_ddp2_rank1` → `gpus=2`).
///
/// The cost is linear in the number of events.
///
/// # Errors
///
/// [`MergeError::NoProfiles`] for an empty list, [`MergeError::SummaryOnly`] for an nvprof
/// summary (no events), [`MergeError::DuplicateRank`] when two profiles have the same rank.
pub fn merge_ranks(profiles: Vec<Profile>) -> Result<Profile, MergeError> {
    if profiles.is_empty() {
        return Err(MergeError::NoProfiles);
    }
    for p in &profiles {
        if p.recorded_summary.is_some() && p.event_count() == 0 {
            return Err(MergeError::SummaryOnly {
                path: p.source.path.clone(),
            });
        }
    }
    let mut profiles: Vec<(Option<i64>, Profile)> = profiles
        .into_iter()
        .map(|p| (profile_rank(&p), p))
        .collect();
    // Stable: profiles without a rank keep their order, after the ranked ones.
    profiles.sort_by_key(|(rank, _)| (rank.is_none(), rank.unwrap_or(0)));
    for pair in profiles.windows(2) {
        if let (Some(a), Some(b)) = (pair[0].0, pair[1].0)
            && a == b
        {
            return Err(MergeError::DuplicateRank {
                rank: a,
                first: pair[0].1.source.path.clone(),
                second: pair[1].1.source.path.clone(),
            });
        }
    }
    let (ranks, profiles): (Vec<Option<i64>>, Vec<Profile>) = profiles.into_iter().unzip();

    let origins: Vec<Option<i64>> = profiles.iter().map(|p| p.origin.unix_ns).collect();
    let (shifts_ns, aligned) = rank_shifts_ns(&origins);
    let zero_unix_ns = origins.iter().flatten().copied().min().unwrap_or(0);
    let device_maps = device_maps(&profiles, &ranks);

    let mut merged = skeleton(&profiles, &shifts_ns, aligned, zero_unix_ns);
    merged.labels = job_labels(&profiles);
    if !aligned {
        merged.warnings.push(Warning {
            code: "ranks_not_aligned".to_string(),
            message: "a rank's trace has no Unix-epoch time origin, so ranks are shown from a \
                      common start instead of on one clock"
                .to_string(),
            count: 1,
        });
    }
    let mut used_pids: FxHashSet<TraceId> = FxHashSet::default();
    for (position, (profile, (rank, (shift_ns, device_map)))) in profiles
        .into_iter()
        .zip(
            ranks
                .into_iter()
                .zip(shifts_ns.into_iter().zip(device_maps)),
        )
        .enumerate()
    {
        let who = rank_text(rank, position);
        append_rank(
            &mut merged,
            profile,
            &RankPlacement {
                who: &who,
                shift_ns,
                device_map: &device_map,
            },
            &mut used_pids,
        );
    }
    // Tracks in the order the builder gives them, flow ends following.
    merged.tracks =
        crate::builder::order_tracks(std::mem::take(&mut merged.tracks), &mut merged.flows).0;
    merged.devices.sort_by_key(|d| d.id);
    merged.markers.sort_by_key(|m| m.time_ns);
    merged.flows.sort_by_key(|f| (f.from, f.to));
    Ok(merged)
}

/// Labels of the whole job: those of the first rank (its own, or its file name's) without the
/// rank, and `gpus` = the world size (or the number of ranks) when the name does not say.
fn job_labels(profiles: &[Profile]) -> Vec<(String, String)> {
    let first = &profiles[0];
    let label = RunLabel::of_profile(first);
    let mut labels: Vec<(String, String)> = label
        .params
        .iter()
        .filter(|p| p.key != "rank")
        .map(|p| (p.key.clone(), p.value.clone()))
        .collect();
    if label.param("gpus").is_none() {
        let world = first
            .distributed
            .as_ref()
            .and_then(|d| d.world_size)
            .unwrap_or_else(|| i64::try_from(profiles.len()).unwrap_or(i64::MAX));
        labels.push(("gpus".to_string(), world.to_string()));
    }
    labels
}

/// The merged profile before any rank is appended: source and time origin from the ranks,
/// everything else empty.
fn skeleton(profiles: &[Profile], shifts_ns: &[i64], aligned: bool, zero_unix_ns: i64) -> Profile {
    let first = &profiles[0];
    Profile {
        source: Source {
            path: first.source.path.clone(),
            format: first.source.format,
            tool: first.source.tool.clone(),
            tool_version: first.source.tool_version.clone(),
            schema_version: first.source.schema_version.clone(),
            compressed: profiles.iter().any(|p| p.source.compressed),
            file_bytes: profiles.iter().map(|p| p.source.file_bytes).sum(),
            content_bytes: profiles.iter().map(|p| p.source.content_bytes).sum(),
            details: Vec::new(),
        },
        origin: if aligned {
            let earliest = profiles
                .iter()
                .zip(shifts_ns)
                .find(|(_, shift)| **shift == 0)
                .map_or(first, |(p, _)| p);
            TimeOrigin {
                raw_ns: earliest.origin.raw_ns,
                unix_ns: Some(zero_unix_ns),
            }
        } else {
            first.origin
        },
        devices: Vec::new(),
        labels: Vec::new(),
        distributed: first.distributed.clone().map(|mut d| {
            d.rank = None;
            d
        }),
        process_names: Vec::new(),
        warnings: Vec::new(),
        strings: StringTable::default(),
        tracks: Vec::new(),
        kernels: KernelTable::default(),
        copies: CopyTable::default(),
        api_calls: ApiTable::default(),
        op_args: crate::model::OpArgsTable::default(),
        flows: Vec::new(),
        counters: Vec::new(),
        markers: Vec::new(),
        recorded_summary: None,
        memory: crate::model::MemoryData::default(),
    }
}

/// Where one rank goes in the merged profile.
struct RankPlacement<'a> {
    /// `rank 1`.
    who: &'a str,
    /// Added to every time of the rank.
    shift_ns: i64,
    /// Old device id → new device id.
    device_map: &'a FxHashMap<u32, u32>,
}

/// Appends the tracks, side tables and metadata of one rank to `merged`.
#[allow(clippy::too_many_lines)] // one straight pass over the parts of a profile
fn append_rank(
    merged: &mut Profile,
    profile: Profile,
    place: &RankPlacement<'_>,
    used_pids: &mut FxHashSet<TraceId>,
) {
    let who = place.who;
    let strings = StringMap::new(&profile.strings, &mut merged.strings);
    // CPU process ids: keep them unless an earlier rank used them.
    let mut pid_map: FxHashMap<TraceId, TraceId> = FxHashMap::default();
    let cpu_pids = profile
        .tracks
        .iter()
        .filter_map(|t| match t.key {
            TrackKey::Thread { pid, .. } | TrackKey::Async { pid, .. } => Some(pid),
            TrackKey::Gpu { .. } => None,
        })
        .chain(profile.counters.iter().map(|c| c.pid));
    for pid in cpu_pids {
        if pid_map.contains_key(&pid) {
            continue;
        }
        let moved = match pid {
            TraceId::Int(v) => TraceId::Int(v),
            TraceId::Name(s) => TraceId::Name(strings.map(s)),
        };
        let new = if used_pids.contains(&moved) {
            let text = format!("{} ({who})", profile.id_text(pid));
            TraceId::Name(merged.strings.intern(&text))
        } else {
            moved
        };
        used_pids.insert(new);
        pid_map.insert(pid, new);
    }
    let map_id = |id: TraceId| match id {
        TraceId::Int(v) => TraceId::Int(v),
        TraceId::Name(s) => TraceId::Name(strings.map(s)),
    };
    let map_tid = map_id;

    // Process names, for CPU processes only (GPU "processes" are devices).
    let mut named: FxHashSet<TraceId> = FxHashSet::default();
    for (pid, name) in &profile.process_names {
        if let Some(&new) = pid_map.get(pid)
            && named.insert(new)
        {
            merged.process_names.push((new, format!("{who}: {name}")));
        }
    }
    for &new in pid_map.values() {
        if named.insert(new) {
            merged.process_names.push((new, who.to_string()));
        }
    }
    merged.process_names.sort_by_key(|(pid, _)| *pid);

    // Devices that are used, renumbered.
    for device in &profile.devices {
        if let Some(&new) = place.device_map.get(&device.id)
            && merged.device(new).is_none()
        {
            let mut d = device.clone();
            d.id = new;
            d.properties.push(("rank".to_string(), who.to_string()));
            merged.devices.push(d);
        }
    }
    let mut mapping: Vec<String> = place
        .device_map
        .iter()
        .map(|(old, new)| format!("GPU {old} → GPU {new}"))
        .collect();
    mapping.sort();
    merged.source.details.push((
        who.to_string(),
        format!(
            "{}; {}; times shifted by {} ns",
            profile.source.path.display(),
            if mapping.is_empty() {
                "no GPU work".to_string()
            } else {
                mapping.join(", ")
            },
            place.shift_ns
        ),
    ));
    for w in &profile.warnings {
        merged.warnings.push(Warning {
            code: w.code.clone(),
            message: format!("{who}: {}", w.message),
            count: w.count,
        });
    }

    // Side tables: appended, so detail indices move by the current lengths.
    let kernel_base = u32::try_from(merged.kernels.len()).unwrap_or(0);
    let copy_base = u32::try_from(merged.copies.len()).unwrap_or(0);
    let api_base = u32::try_from(merged.api_calls.len()).unwrap_or(0);
    merged.kernels.append(profile.kernels, |s| strings.map(s));
    merged.copies.append(profile.copies);
    merged.api_calls.append(profile.api_calls);
    let op_args_base = u32::try_from(merged.op_args.len()).unwrap_or(0);
    merged.op_args.rows.extend(profile.op_args.rows);

    let track_base = u32::try_from(merged.tracks.len()).unwrap_or(0);
    for mut track in profile.tracks {
        track.key = match track.key {
            TrackKey::Gpu {
                device,
                context,
                stream,
                lane,
            } => TrackKey::Gpu {
                device: place.device_map.get(&device).copied().unwrap_or(device),
                context,
                stream,
                lane,
            },
            TrackKey::Thread { pid, tid } => TrackKey::Thread {
                pid: pid_map.get(&pid).copied().unwrap_or(pid),
                tid: map_tid(tid),
            },
            TrackKey::Async { pid, name } => TrackKey::Async {
                pid: pid_map.get(&pid).copied().unwrap_or(pid),
                name: strings.map(name),
            },
        };
        let ev = &mut track.events;
        for s in &mut ev.start_ns {
            *s = s.saturating_add(place.shift_ns);
        }
        for n in &mut ev.name {
            *n = strings.map(*n);
        }
        for (detail, &kind) in ev.detail.iter_mut().zip(&ev.kind) {
            if *detail == NO_DETAIL {
                continue;
            }
            let base = match kind {
                EventKind::Kernel => kernel_base,
                EventKind::Memcpy | EventKind::Memset | EventKind::UnifiedMemory => copy_base,
                EventKind::Runtime | EventKind::Driver => api_base,
                EventKind::CpuOp => op_args_base,
                _ => {
                    *detail = NO_DETAIL;
                    continue;
                }
            };
            *detail = detail.saturating_add(base);
        }
        merged.tracks.push(track);
    }
    merged.flows.extend(profile.flows.into_iter().map(|f| Flow {
        from: EventRef {
            track: f.from.track + track_base,
            index: f.from.index,
        },
        to: EventRef {
            track: f.to.track + track_base,
            index: f.to.index,
        },
        kind: f.kind,
    }));
    merged
        .counters
        .extend(profile.counters.into_iter().map(|mut c| {
            c.pid = pid_map.get(&c.pid).copied().unwrap_or(c.pid);
            for t in &mut c.time_ns {
                *t = t.saturating_add(place.shift_ns);
            }
            c
        }));
    merged
        .markers
        .extend(profile.markers.into_iter().map(|mut m| {
            m.time_ns = m.time_ns.saturating_add(place.shift_ns);
            m.name = format!("{} ({who})", m.name);
            m
        }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::ProfileBuilder;
    use crate::model::{ApiInfo, Device, DistributedInfo, Format, GpuLane, KernelInfo};

    /// One rank: a kernel launched by an API call on the CPU, device 0, pid 100.
    fn rank(rank: Option<i64>, path: &str, unix_origin_ns: Option<i64>) -> Profile {
        let mut b = ProfileBuilder::new(path.into(), Format::ChromeJson);
        b.distributed = rank.map(|r| DistributedInfo {
            backend: Some("nccl".to_string()),
            rank: Some(r),
            world_size: Some(2),
        });
        b.devices.push(Device {
            id: 0,
            name: "GPU".to_string(),
            ..Device::default()
        });
        let cpu = b.track(TrackKey::Thread {
            pid: TraceId::Int(100),
            tid: TraceId::Int(100),
        });
        let gpu = b.track(TrackKey::Gpu {
            device: 0,
            context: 1,
            stream: 7,
            lane: GpuLane::Work,
        });
        let launch = b.intern("cudaLaunchKernel");
        let kernel = b.intern(&format!("ncclKernel_AllReduce_{path}"));
        let api = ApiInfo {
            correlation: Some(1),
            ..ApiInfo::default()
        };
        b.push_api(cpu, 1_000, 10, launch, EventKind::Runtime, api, 0);
        let info = KernelInfo {
            correlation: Some(1),
            ..KernelInfo::default()
        };
        b.push_kernel(gpu, 1_020, 500, kernel, info, 0);
        b.process_names
            .push((TraceId::Int(100), "python3".to_string()));
        b.unix_offset_ns = unix_origin_ns.map(|o| o - 1_000);
        b.warn("w", 1, "something");
        b.finish()
    }

    #[test]
    fn ranks_sharing_device_zero_become_distinct_devices_on_one_clock() {
        let r1 = rank(Some(1), "r1.json", Some(5_000_000_100));
        let r0 = rank(Some(0), "r0.json", Some(5_000_000_000));
        let m = merge_ranks(vec![r1, r0]).unwrap();
        assert_eq!(m.origin.unix_ns, Some(5_000_000_000));
        let gpus: Vec<(u32, i64, String)> = m
            .tracks
            .iter()
            .filter_map(|t| match t.key {
                TrackKey::Gpu { device, .. } => Some((
                    device,
                    t.events.start_ns[0],
                    m.str(t.events.name[0]).to_string(),
                )),
                _ => None,
            })
            .collect();
        assert_eq!(
            gpus,
            vec![
                (0, 20, "ncclKernel_AllReduce_r0.json".to_string()),
                (1, 120, "ncclKernel_AllReduce_r1.json".to_string()),
            ]
        );
        assert_eq!(
            m.devices.iter().map(|d| d.id).collect::<Vec<_>>(),
            vec![0, 1]
        );
        // pid 100 of rank 1 is renamed; both processes are named after their rank.
        let names: Vec<(String, String)> = m
            .process_names
            .iter()
            .map(|(p, n)| (m.id_text(*p), n.clone()))
            .collect();
        assert!(names.contains(&("100".to_string(), "rank 0: python3".to_string())));
        assert!(names.contains(&("100 (rank 1)".to_string(), "rank 1: python3".to_string())));
        // Launch flows still join each rank's API call to its own kernel.
        assert_eq!(m.flows.len(), 2);
        for f in &m.flows {
            let from = &m.tracks[f.from.track as usize];
            let to = &m.tracks[f.to.track as usize];
            let api = m.api_info(from, f.from.index as usize).unwrap();
            let kernel = m.kernel_info(to, f.to.index as usize).unwrap();
            assert_eq!(api.correlation, kernel.correlation);
            assert_eq!(
                from.events.start_ns[f.from.index as usize] + 20,
                to.events.start_ns[f.to.index as usize]
            );
        }
        assert_eq!(m.warnings.len(), 2);
        assert!(m.warnings[0].message.starts_with("rank 0: "));
        assert_eq!(m.labels, vec![("gpus".to_string(), "2".to_string())]);
        assert_eq!(m.source.details.len(), 2);
        assert!(
            m.source.details[1].1.contains("GPU 0 → GPU 1"),
            "{:?}",
            m.source.details
        );
    }

    #[test]
    fn ranks_without_epoch_origins_start_together() {
        let a = rank(None, "a.json", None);
        let b = rank(None, "b.json", None);
        let m = merge_ranks(vec![a, b]).unwrap();
        assert!(m.warnings.iter().any(|w| w.code == "ranks_not_aligned"));
        let starts: Vec<(u32, i64)> = m
            .tracks
            .iter()
            .filter_map(|t| match t.key {
                TrackKey::Gpu { device, .. } => Some((device, t.events.start_ns[0])),
                _ => None,
            })
            .collect();
        assert_eq!(starts, vec![(0, 20), (1, 20)]);
        assert_eq!(m.origin.unix_ns, None);
    }

    #[test]
    fn merge_errors() {
        assert!(matches!(
            merge_ranks(Vec::new()),
            Err(MergeError::NoProfiles)
        ));
        let a = rank(Some(0), "a.json", Some(1));
        let b = rank(Some(0), "b.json", Some(1));
        let err = merge_ranks(vec![a, b]).unwrap_err();
        assert!(matches!(err, MergeError::DuplicateRank { rank: 0, .. }));
        assert_eq!(err.to_string(), "a.json and b.json are both rank 0");
    }
}
