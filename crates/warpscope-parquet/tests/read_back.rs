//! The Parquet files read back with the `parquet` crate give exactly the numbers
//! `warpscope summary` gives.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Row;
use warpscope_core::analysis::{ActivityKind, summary_report};
use warpscope_core::{Progress, TimeRange, import_file};
use warpscope_parquet::{RunMeta, TABLES, table_file, write_parquet};

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../sample_profiles")
        .join(name)
}

fn rows(path: &Path) -> Vec<Row> {
    let reader = SerializedFileReader::try_from(path).unwrap();
    reader
        .get_row_iter(None)
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Column `name` of a row, by name.
fn col<'a>(row: &'a Row, name: &str) -> &'a parquet::record::Field {
    row.get_column_iter()
        .find(|(n, _)| n.as_str() == name)
        .map(|(_, f)| f)
        .unwrap_or_else(|| panic!("no column {name}"))
}

fn long(row: &Row, name: &str) -> i64 {
    match col(row, name) {
        parquet::record::Field::Long(v) => *v,
        other => panic!("{name}: {other:?}"),
    }
}

fn text(row: &Row, name: &str) -> String {
    match col(row, name) {
        parquet::record::Field::Str(v) => v.clone(),
        other => panic!("{name}: {other:?}"),
    }
}

/// (calls, total ns) per name.
type Totals = BTreeMap<String, (u64, i64)>;

fn add(t: &mut Totals, name: String, dur_ns: i64) {
    let e = t.entry(name).or_default();
    e.0 += 1;
    e.1 += dur_ns;
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpscope-parquet-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn kernels_and_copies_read_back_give_the_summary_exactly() {
    for name in [
        "resnet50_b64_fp32.pt.trace.json.gz",
        "alexnet_b8.pt.trace.json.gz",
        "live_vector_add_h100.json.gz",
    ] {
        let profile = import_file(&sample(name), &Progress::default()).unwrap();
        let out = temp_dir(name);
        let meta = RunMeta {
            run: 0,
            rank: Some(3),
            world_size: Some(8),
        };
        let written = write_parquet(&profile, meta, &out).unwrap();
        assert_eq!(
            written.tables.iter().map(|t| t.0).collect::<Vec<_>>(),
            TABLES
        );
        let summary = summary_report(&profile, TimeRange::ALL, None);

        // GPU activities: kernels by name, copies and sets by their row name.
        let mut got = Totals::new();
        for r in rows(&table_file(&out, "kernels", 0)) {
            assert_eq!(long(&r, "rank"), 3);
            add(&mut got, text(&r, "name"), long(&r, "dur_ns"));
        }
        for r in rows(&table_file(&out, "copies", 0)) {
            if text(&r, "kind") != "unified_memory" {
                add(&mut got, text(&r, "activity"), long(&r, "dur_ns"));
            }
        }
        let want: Totals = summary
            .gpu_activities
            .iter()
            .map(|a| (a.name.clone(), (a.stats.calls, a.stats.total_ns)))
            .collect();
        assert_eq!(got, want, "{name}");
        assert_eq!(got.values().map(|v| v.1).sum::<i64>(), summary.gpu_total_ns);
        assert!(
            summary
                .gpu_activities
                .iter()
                .any(|a| a.kind == ActivityKind::Kernel)
        );

        // Copies by kind with their bytes.
        let mut bytes: BTreeMap<String, (u64, i64, i64)> = BTreeMap::new();
        for r in rows(&table_file(&out, "copies", 0)) {
            let e = bytes.entry(text(&r, "copy_kind")).or_default();
            e.0 += 1;
            e.1 += match col(&r, "bytes") {
                parquet::record::Field::Long(v) => *v,
                _ => 0,
            };
            e.2 += long(&r, "dur_ns");
        }
        let want: BTreeMap<String, (u64, i64, i64)> = summary
            .memcpy
            .iter()
            .map(|c| {
                (
                    c.kind.clone(),
                    (c.calls, i64::try_from(c.bytes).unwrap(), c.total_ns),
                )
            })
            .collect();
        assert_eq!(bytes, want, "{name}");

        // Every event once, numbered 0..n; the run row says how many.
        let events = rows(&table_file(&out, "events", 0));
        assert_eq!(events.len(), profile.event_count());
        assert!(
            events
                .iter()
                .enumerate()
                .all(|(i, r)| long(r, "event") == i64::try_from(i).unwrap())
        );
        let run = rows(&table_file(&out, "runs", 0));
        assert_eq!(
            long(&run[0], "events"),
            i64::try_from(profile.event_count()).unwrap()
        );
        assert_eq!(long(&run[0], "world_size"), 8);
        // Flows point at events that exist.
        for f in rows(&table_file(&out, "flows", 0)) {
            assert!(usize::try_from(long(&f, "to_event")).unwrap() < events.len());
        }
        assert_eq!(
            rows(&table_file(&out, "devices", 0)).len(),
            profile.devices.len()
        );
        std::fs::remove_dir_all(&out).unwrap();
    }
}

#[test]
fn an_unwritable_directory_is_named() {
    let profile =
        import_file(&sample("alexnet_b8.pt.trace.json.gz"), &Progress::default()).unwrap();
    let file = temp_dir("blocked");
    std::fs::write(&file, "a file where the directory should be").unwrap();
    let err = write_parquet(&profile, RunMeta::default(), &file).unwrap_err();
    assert!(err.to_string().contains("cannot write"), "{err}");
    assert!(
        err.to_string().contains("warpscope-parquet-blocked"),
        "{err}"
    );
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn a_large_table_is_written_in_row_groups_of_131072_rows_and_read_back_whole() {
    // 300,000 events: written as they come, three row groups (131,072 + 131,072 + 37,856),
    // instead of one group of 2^20 rows held in memory whole (460 MB for 1 M events).
    let dir = temp_dir("rowgroups");
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("many.json");
    let events: Vec<String> = (0..300_000)
        .map(|i| {
            format!(
                r#"{{"ph":"X","cat":"cpu_op","name":"op{}","pid":1,"tid":1,"ts":{i},"dur":1}}"#,
                i % 7
            )
        })
        .collect();
    std::fs::write(
        &trace,
        format!(r#"{{"traceEvents":[{}]}}"#, events.join(",")),
    )
    .unwrap();
    let profile = import_file(&trace, &Progress::default()).unwrap();
    let meta = RunMeta {
        run: 0,
        rank: None,
        world_size: None,
    };
    let written = write_parquet(&profile, meta, &dir).unwrap();
    assert_eq!(written.tables[0].2, 300_000);
    let reader = SerializedFileReader::try_from(table_file(&dir, "events", 0).as_path()).unwrap();
    let groups: Vec<i64> = reader
        .metadata()
        .row_groups()
        .iter()
        .map(|g| g.num_rows())
        .collect();
    assert_eq!(groups, [131_072, 131_072, 37_856]);
    // The third group starts with event 262,144, named as written.
    let first = reader
        .get_row_group(2)
        .unwrap()
        .get_row_iter(None)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(long(&first, "event"), 262_144);
    assert_eq!(text(&first, "name"), format!("op{}", 262_144 % 7));
    // A table without rows is still a file, of one empty group.
    let flows = SerializedFileReader::try_from(table_file(&dir, "flows", 0).as_path()).unwrap();
    assert_eq!(flows.metadata().file_metadata().num_rows(), 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn opt_long(row: &Row, name: &str) -> Option<i64> {
    match col(row, name) {
        parquet::record::Field::Long(v) => Some(*v),
        parquet::record::Field::Int(v) => Some(i64::from(*v)),
        parquet::record::Field::Null => None,
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn the_memory_table_has_every_record_and_gives_the_memory_report() {
    use warpscope_core::analysis::memory::{attribute, memory_report};
    use warpscope_core::model::MemoryDevice;

    let name = "resnet50_b32_bf16_mem_flops.pt.trace.json.gz";
    let profile = import_file(&sample(name), &Progress::default()).unwrap();
    let out = temp_dir("memory");
    let written = write_parquet(&profile, RunMeta::default(), &out).unwrap();
    let n = profile.memory.events.len();
    assert!(n > 0);
    assert!(
        written
            .tables
            .contains(&("memory", table_file(&out, "memory", 0), n))
    );
    let mem = rows(&table_file(&out, "memory", 0));
    assert_eq!(mem.len(), n);
    let report = memory_report(&profile, TimeRange::ALL, 0);

    // Every record once, numbered in time order, with the model's values.
    let ev = &profile.memory.events;
    let ops = attribute(&profile);
    let events = rows(&table_file(&out, "events", 0));
    for (i, r) in mem.iter().enumerate() {
        assert_eq!(long(r, "record"), i64::try_from(i).unwrap());
        assert_eq!(long(r, "time_ns"), ev.time_ns[i]);
        assert_eq!(text(r, "action"), ev.action[i].as_str());
        assert_eq!(long(r, "bytes"), i64::try_from(ev.bytes[i]).unwrap());
        assert_eq!(long(r, "addr"), i64::try_from(ev.addr[i]).unwrap());
        let device = match ev.device[i] {
            MemoryDevice::Cpu => None,
            MemoryDevice::Gpu(d) => Some(i64::from(d)),
        };
        assert_eq!(opt_long(r, "device"), device);
        assert_eq!(text(r, "operator"), ops.name(ops.innermost(i)));
        assert_eq!(text(r, "operator_stack"), ops.stack_text(i));
        // The thread is the events table's, and the operator's event is an event of that
        // name on that track.
        let track = opt_long(r, "track").unwrap();
        assert_eq!(track, i64::from(ev.track[i]));
        let op_event = opt_long(r, "operator_event").map(|e| &events[usize::try_from(e).unwrap()]);
        if let Some(e) = op_event {
            assert_eq!(opt_long(e, "track"), Some(track));
            assert_eq!(text(e, "name"), text(r, "operator"));
            assert_eq!(text(e, "thread"), text(r, "thread"));
            assert_eq!(text(e, "process"), text(r, "process"));
        } else {
            assert_eq!(text(r, "operator"), "(no operator)");
        }
    }

    // Peak allocated of GPU 0, allocations and frees per device: the report's.
    let gpu0 = |r: &Row| opt_long(r, "device") == Some(0);
    let peak = mem
        .iter()
        .filter(|r| gpu0(r))
        .map(|r| long(r, "allocated_bytes"))
        .max()
        .unwrap();
    let d0 = report
        .devices
        .iter()
        .find(|d| d.device == MemoryDevice::Gpu(0))
        .unwrap();
    assert_eq!(peak, d0.peak_allocated_bytes);
    for d in &report.devices {
        let of = |action: &str| {
            mem.iter()
                .filter(|r| {
                    text(r, "action") == action
                        && opt_long(r, "device")
                            == match d.device {
                                MemoryDevice::Cpu => None,
                                MemoryDevice::Gpu(g) => Some(i64::from(g)),
                            }
                })
                .count() as u64
        };
        assert_eq!((of("alloc"), of("free")), (d.allocations, d.frees), "{d:?}");
    }

    // Bytes allocated per innermost operator: the report's self bytes.
    let mut self_bytes: BTreeMap<String, u64> = BTreeMap::new();
    for r in mem.iter().filter(|r| text(r, "action") == "alloc") {
        *self_bytes.entry(text(r, "operator")).or_default() +=
            u64::try_from(long(r, "bytes")).unwrap();
    }
    let want: BTreeMap<String, u64> = report
        .operators
        .iter()
        .filter(|o| o.self_alloc_count > 0)
        .map(|o| (o.name.clone(), o.self_alloc_bytes))
        .collect();
    assert_eq!(self_bytes, want);
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_profile_without_memory_records_writes_an_empty_memory_table() {
    let profile =
        import_file(&sample("alexnet_b8.pt.trace.json.gz"), &Progress::default()).unwrap();
    assert!(profile.memory.events.is_empty());
    let out = temp_dir("nomemory");
    write_parquet(&profile, RunMeta::default(), &out).unwrap();
    let reader = SerializedFileReader::try_from(table_file(&out, "memory", 0).as_path()).unwrap();
    assert_eq!(reader.metadata().file_metadata().num_rows(), 0);
    let columns: Vec<&str> = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.name())
        .collect();
    assert_eq!(
        columns,
        [
            "run",
            "rank",
            "record",
            "time_ns",
            "device",
            "action",
            "addr",
            "bytes",
            "allocated_bytes",
            "reserved_bytes",
            "stream",
            "track",
            "process",
            "thread",
            "operator",
            "operator_stack",
            "operator_event",
        ]
    );
    std::fs::remove_dir_all(&out).unwrap();
}

fn opt_double(row: &Row, name: &str) -> Option<f64> {
    match col(row, name) {
        parquet::record::Field::Double(v) => Some(*v),
        parquet::record::Field::Null => None,
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn flops_columns_read_back_give_the_roofline_totals() {
    use warpscope_core::analysis::flops::{PeakOverride, flops_report};

    let name = "resnet50_b32_fp32_mem_flops.pt.trace.json.gz";
    let profile = import_file(&sample(name), &Progress::default()).unwrap();
    let out = temp_dir("flops");
    write_parquet(&profile, RunMeta::default(), &out).unwrap();
    let report = flops_report(&profile, TimeRange::ALL, PeakOverride::default());
    let counted: u64 = report.operators.iter().filter_map(|o| o.flops).sum();
    // Operator events: the counted FLOPs, each piece of work once.
    let events = rows(&table_file(&out, "events", 0));
    let from_events: i64 = events.iter().filter_map(|r| opt_long(r, "flops")).sum();
    assert_eq!(u64::try_from(from_events).unwrap(), counted);
    // Kernels: their operators' FLOPs split by time, the precision, and the owning operator.
    let kernels = rows(&table_file(&out, "kernels", 0));
    let from_kernels: f64 = kernels.iter().filter_map(|r| opt_double(r, "flops")).sum();
    // The kernels' shares (an operator's copies and sets take the rest of its FLOPs).
    let att = &report.attribution;
    let owned: f64 = att
        .kernels
        .iter()
        .filter(|k| {
            let ev = &profile.tracks[k.kernel.track as usize].events;
            ev.kind[k.kernel.index as usize] == warpscope_core::EventKind::Kernel
        })
        .filter_map(|k| att.kernel_flops(k.kernel))
        .sum();
    assert!(
        (from_kernels - owned).abs() / owned < 1e-9,
        "{from_kernels} {owned}"
    );
    let tf32 = kernels
        .iter()
        .filter(|r| text(r, "name").contains("tf32"))
        .all(|r| text(r, "precision") == "tf32");
    assert!(tf32);
    let operator = kernels
        .iter()
        .find_map(|r| opt_long(r, "operator_event"))
        .expect("kernels have owners");
    let op_row = events
        .iter()
        .find(|r| long(r, "event") == operator)
        .expect("the operator's row");
    assert_eq!(text(op_row, "kind"), "cpu_op");
    std::fs::remove_dir_all(&out).unwrap();
}
