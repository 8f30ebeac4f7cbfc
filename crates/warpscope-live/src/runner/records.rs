//! CUPTI's records turned into timeline events, and attributed to the timed launches through
//! their external correlation ids.

use std::collections::HashMap;

use warpscope_core::EventKind;
use warpscope_core::model::{CopyKind, MemoryKind};

use super::TIMING_KERNELS;
use crate::cupti::Record;
use crate::profile::{GpuOp, GpuOpKind, HostSpan, Recording};

/// Turns CUPTI records into timeline events (times relative to `t0`) and returns, per external
/// id, the span from the first start to the last end of the GPU work it caused.
pub(super) fn attribute(records: &[Record], t0: u64, rec: &mut Recording) -> HashMap<u64, i64> {
    let rel = |t: u64| (i128::from(t) - i128::from(t0)) as i64;
    let mut external: HashMap<u32, u64> = HashMap::new();
    for r in records {
        if let Record::External {
            external_id,
            correlation,
        } = r
        {
            external.insert(*correlation, *external_id);
        }
    }
    let mut extent: HashMap<u64, (u64, u64)> = HashMap::new();
    let mut note = |corr: u32, start: u64, end: u64| {
        if let Some(&id) = external.get(&corr) {
            let e = extent.entry(id).or_insert((start, end));
            e.0 = e.0.min(start);
            e.1 = e.1.max(end);
        }
    };
    for r in records {
        match r {
            Record::Kernel {
                name,
                start,
                end,
                stream,
                grid,
                block,
                registers,
                static_shared,
                dynamic_shared,
                correlation,
            } => {
                if TIMING_KERNELS.contains(&name.as_str()) {
                    rec.timing_launches += 1;
                    continue;
                }
                note(*correlation, *start, *end);
                let dims = |d: &[i32; 3]| d.map(|v| u32::try_from(v).unwrap_or(0));
                rec.gpu.push(GpuOp {
                    name: name.clone(),
                    start_ns: rel(*start),
                    dur_ns: end.saturating_sub(*start) as i64,
                    stream: u64::from(*stream),
                    kind: GpuOpKind::Kernel {
                        grid: dims(grid),
                        block: dims(block),
                        registers: Some(u32::from(*registers)),
                        static_shared: u64::try_from(*static_shared).ok(),
                        dynamic_shared: u64::try_from(*dynamic_shared).ok(),
                    },
                    correlation: Some(u64::from(*correlation)),
                });
            }
            Record::Memcpy {
                copy_kind,
                src_kind,
                dst_kind,
                bytes,
                start,
                end,
                stream,
                correlation,
            } => {
                note(*correlation, *start, *end);
                let kind = CopyKind::from_cupti(i64::from(*copy_kind));
                rec.gpu.push(GpuOp {
                    name: kind.activity_name(),
                    start_ns: rel(*start),
                    dur_ns: end.saturating_sub(*start) as i64,
                    stream: u64::from(*stream),
                    kind: GpuOpKind::Copy {
                        kind,
                        bytes: *bytes,
                        src: MemoryKind::from_cupti(i64::from(*src_kind)),
                        dst: MemoryKind::from_cupti(i64::from(*dst_kind)),
                    },
                    correlation: Some(u64::from(*correlation)),
                });
            }
            Record::Memset {
                bytes,
                start,
                end,
                stream,
                correlation,
            } => {
                note(*correlation, *start, *end);
                rec.gpu.push(GpuOp {
                    name: CopyKind::Memset.activity_name(),
                    start_ns: rel(*start),
                    dur_ns: end.saturating_sub(*start) as i64,
                    stream: u64::from(*stream),
                    kind: GpuOpKind::Memset { bytes: *bytes },
                    correlation: Some(u64::from(*correlation)),
                });
            }
            Record::Api {
                runtime,
                cbid,
                start,
                end,
                correlation,
                ..
            } => {
                let (name, kind) = if *runtime {
                    (
                        warpscope_core::cupti_cbid::runtime_api_name(*cbid),
                        EventKind::Runtime,
                    )
                } else {
                    (
                        warpscope_core::cupti_cbid::driver_api_name(*cbid),
                        EventKind::Driver,
                    )
                };
                let name = name.map_or_else(|| format!("CUDA API {cbid}"), str::to_string);
                rec.host.push(HostSpan {
                    name,
                    kind,
                    start_ns: rel(*start),
                    dur_ns: end.saturating_sub(*start) as i64,
                    correlation: Some(u64::from(*correlation)),
                    cbid: Some(*cbid),
                });
            }
            Record::External { .. } => {}
        }
    }
    // CUPTI numbers streams its own way: put the CUDA-event lane on the stream CUPTI saw the
    // measured work on.
    let measured_stream = records.iter().find_map(|r| match r {
        Record::Kernel {
            stream,
            correlation,
            name,
            ..
        } if external.contains_key(correlation) && !TIMING_KERNELS.contains(&name.as_str()) => {
            Some(*stream)
        }
        Record::Memcpy {
            stream,
            correlation,
            ..
        } if external.contains_key(correlation) => Some(*stream),
        _ => None,
    });
    if let Some(stream) = measured_stream {
        rec.stream = u64::from(stream);
    }
    extent
        .into_iter()
        .map(|(id, (s, e))| (id, e.saturating_sub(s) as i64))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cupti_records_become_timeline_events_and_per_launch_times() {
        let t0 = 1_000_000;
        let records = vec![
            Record::External {
                external_id: 7,
                correlation: 40,
            },
            Record::Api {
                runtime: false,
                cbid: 307,
                start: t0 + 100,
                end: t0 + 900,
                pid: 1,
                tid: 2,
                correlation: 40,
            },
            Record::Kernel {
                name: "vector_add".into(),
                start: t0 + 2_000,
                end: t0 + 12_000,
                stream: 13,
                grid: [4, 1, 1],
                block: [256, 1, 1],
                registers: 16,
                static_shared: 0,
                dynamic_shared: 0,
                correlation: 40,
            },
            // The lab's own cache flush is left out of the profile, and counted.
            Record::Kernel {
                name: "flush_l2".into(),
                start: t0 + 1_000,
                end: t0 + 1_900,
                stream: 13,
                grid: [1056, 1, 1],
                block: [256, 1, 1],
                registers: 16,
                static_shared: 0,
                dynamic_shared: 0,
                correlation: 38,
            },
            // Untagged work (a poisoning memset) is on the timeline but times nothing.
            Record::Memset {
                bytes: 4096,
                start: t0 + 500,
                end: t0 + 900,
                stream: 13,
                correlation: 39,
            },
            Record::Memcpy {
                copy_kind: 1,
                src_kind: 1,
                dst_kind: 3,
                bytes: 4096,
                start: t0 + 20_000,
                end: t0 + 21_000,
                stream: 13,
                correlation: 41,
            },
        ];
        let mut rec = Recording {
            stream: 14, // cuStreamGetId's number
            ..Recording::default()
        };
        let spans = attribute(&records, t0, &mut rec);
        assert_eq!(rec.stream, 13, "the events' lane is CUPTI's stream");
        assert_eq!(spans.get(&7), Some(&10_000));
        assert_eq!(spans.len(), 1);
        assert_eq!(rec.host.len(), 1);
        assert_eq!(rec.host[0].start_ns, 100);
        assert_eq!(rec.host[0].correlation, Some(40));
        assert_eq!(rec.gpu.len(), 3);
        assert_eq!(rec.timing_launches, 1);
        assert_eq!(rec.gpu[0].start_ns, 2_000);
        assert_eq!(rec.gpu[1].name, "[CUDA memset]");
        assert_eq!(rec.gpu[2].name, "[CUDA memcpy HtoD]");
        assert!(matches!(
            rec.gpu[2].kind,
            GpuOpKind::Copy {
                kind: CopyKind::HtoD,
                src: MemoryKind::Pageable,
                dst: MemoryKind::Device,
                ..
            }
        ));
    }
}
