//! Text, CSV and JSON output of the live lab: the kernel catalogue (`warpscope live --list`) and a
//! run's result table.

use std::fmt::Write as _;

use anyhow::Result;
use serde::Serialize;
use warpscope_core::time::format_duration_ns;
use warpscope_live::{
    CATALOG, Check, DeviceFacts, LiveRun, Occupancy, Peaks, PointResult, Resources, RooflinePoint,
    UserInfo, format_size,
};

use super::csv_field;
use crate::output::OutputFormat;

#[derive(Serialize)]
struct CatalogEntry {
    name: &'static str,
    summary: &'static str,
    source: Option<&'static str>,
    size_unit: &'static str,
    default_sizes: Vec<u64>,
    configs: Vec<ConfigEntry>,
    metric: &'static str,
}

#[derive(Serialize)]
struct ConfigEntry {
    name: &'static str,
    summary: &'static str,
    target: warpscope_live::Target,
    memory: warpscope_live::Memory,
}

/// A kernel's default sizes as people write them (`1M`, `5M`, ...).
fn default_sizes(k: &warpscope_live::KernelSpec) -> Vec<String> {
    k.default_sizes
        .iter()
        .map(|&s| format_size(s, k.size_unit))
        .collect()
}

/// `warpscope live --list`.
pub fn live_catalog(format: OutputFormat) -> Result<String> {
    let entries: Vec<CatalogEntry> = CATALOG
        .iter()
        .map(|k| CatalogEntry {
            name: k.name,
            summary: k.summary,
            source: k.source_file,
            size_unit: k.size_unit.as_str(),
            default_sizes: k.default_sizes.to_vec(),
            configs: k
                .configs
                .iter()
                .map(|c| ConfigEntry {
                    name: c.name,
                    summary: c.summary,
                    target: c.target,
                    memory: c.memory,
                })
                .collect(),
            metric: match k.metric {
                warpscope_live::Metric::Bandwidth => "GB/s",
                warpscope_live::Metric::Flops => "GFLOP/s",
            },
        })
        .collect();
    Ok(match format {
        OutputFormat::Json => serde_json::to_string_pretty(&entries)? + "\n",
        OutputFormat::Csv => {
            let mut out = String::from("kernel,config,target,memory,size_unit,default_sizes\n");
            for k in CATALOG {
                let sizes = default_sizes(k);
                for c in k.configs {
                    let _ = writeln!(
                        out,
                        "{},{},{},{},{},{}",
                        k.name,
                        c.name,
                        if c.target == warpscope_live::Target::Gpu {
                            "gpu"
                        } else {
                            "cpu"
                        },
                        c.memory.as_str(),
                        csv_field(k.size_unit.as_str()),
                        csv_field(&sizes.join(" "))
                    );
                }
            }
            out
        }
        OutputFormat::Table => {
            let mut out = String::from("Bundled kernels (warpscope live KERNEL):\n");
            for k in CATALOG {
                let sizes = default_sizes(k);
                let _ = writeln!(out, "\n  {:<11} {}", k.name, k.summary);
                let _ = writeln!(
                    out,
                    "  {:<11} sizes in {}; default {}",
                    "",
                    k.size_unit.as_str(),
                    sizes.join(",")
                );
                for c in k.configs {
                    let _ = writeln!(out, "  {:<11}   {:<14} {}", "", c.name, c.summary);
                }
            }
            out
        }
    })
}

#[derive(Serialize)]
struct RunJson<'a> {
    kernel: &'a str,
    size_unit: &'static str,
    device: &'a DeviceFacts,
    peaks: &'a Peaks,
    cupti: bool,
    cupti_note: Option<&'a str>,
    warmup: u32,
    /// Launches per pair of CUDA events (`--batch`).
    batch: u32,
    rate_unit: &'static str,
    all_checks_ok: bool,
    warnings: &'a [String],
    user: Option<&'a UserInfo>,
    points: Vec<PointJson<'a>>,
}

#[derive(Serialize)]
struct PointJson<'a> {
    config: &'a str,
    size: u64,
    size_text: String,
    planned: u32,
    timed: usize,
    /// Launches per pair of CUDA events; the times are per launch (elapsed / batch).
    batch: u32,
    event_median_ns: Option<i64>,
    event_min_ns: Option<i64>,
    cupti_median_ns: Option<i64>,
    /// (event − CUPTI) / CUPTI, medians.
    event_vs_cupti: Option<f64>,
    rate: Option<f64>,
    percent_of_peak: Option<f64>,
    flops: f64,
    bytes: f64,
    check: Option<&'a Check>,
    /// Threads per block of a `--blocks` sweep.
    block: Option<u32>,
    resources: Option<&'a Resources>,
    occupancy: Option<&'a Occupancy>,
    /// CUDA-event median with CUPTI paused (`--cupti-cost`).
    cupti_off_median_ns: Option<i64>,
    /// (with CUPTI − without) / without, event medians.
    cupti_cost: Option<f64>,
    roofline: Option<RooflinePoint>,
    error: Option<&'a str>,
    event_ns: &'a [i64],
    cupti_ns: &'a [i64],
    cupti_off_ns: &'a [i64],
}

/// A live run's results; `roofline` adds the roofline table to the text output.
pub fn live_run(run: &LiveRun, format: OutputFormat, roofline: bool) -> Result<String> {
    let points: Vec<PointJson<'_>> = run
        .points
        .iter()
        .map(|p| {
            let rate = run.rate(p);
            PointJson {
                config: &p.config,
                size: p.size,
                size_text: format_size(p.size, run.size_unit),
                planned: p.planned,
                timed: p.event_ns.len(),
                batch: p.batch,
                event_median_ns: p.median_event_ns(),
                event_min_ns: p.event_ns.iter().copied().min(),
                cupti_median_ns: p.median_cupti_ns(),
                event_vs_cupti: p.event_vs_cupti(),
                rate: rate.map(|r| r.0),
                percent_of_peak: rate.and_then(|r| r.1),
                flops: p.work.flops,
                bytes: p.work.bytes,
                check: p.check.as_ref(),
                block: p.block,
                resources: p.resources.as_ref(),
                occupancy: p.occupancy.as_ref(),
                cupti_off_median_ns: warpscope_live::median_ns(&p.cupti_off_ns),
                cupti_cost: p.cupti_cost(),
                roofline: run.roofline(p),
                error: p.error.as_deref(),
                event_ns: &p.event_ns,
                cupti_ns: &p.cupti_ns,
                cupti_off_ns: &p.cupti_off_ns,
            }
        })
        .collect();
    let json = RunJson {
        kernel: &run.kernel,
        size_unit: run.size_unit.as_str(),
        device: &run.device,
        peaks: &run.peaks,
        cupti: run.cupti,
        cupti_note: run.cupti_note.as_deref(),
        warmup: run.warmup,
        batch: run.batch,
        rate_unit: run.rate_unit(),
        all_checks_ok: run.all_checks_ok(),
        warnings: &run.warnings,
        user: run.user.as_ref(),
        points,
    };
    Ok(match format {
        OutputFormat::Json => serde_json::to_string_pretty(&json)? + "\n",
        OutputFormat::Csv => live_csv(&json),
        OutputFormat::Table => {
            let mut out = live_table(run, &json);
            launch_table(&mut out, run);
            if roofline {
                roofline_table(&mut out, run);
            }
            out
        }
    })
}

/// A point's name in the extra tables: configuration, size, block.
fn point_name(run: &LiveRun, p: &PointResult) -> (String, String) {
    let mut config = p.config.clone();
    if let Some(b) = p.block {
        config = format!("{config} b{b}");
    }
    (config, format_size(p.size, run.size_unit))
}

/// Launch resources and occupancy (and CUPTI's cost), for runs that recorded them.
fn launch_table(out: &mut String, run: &LiveRun) {
    let any_cost = run.points.iter().any(|p| !p.cupti_off_ns.is_empty());
    if !run
        .points
        .iter()
        .any(|p| p.occupancy.is_some() || p.resources.is_some() || any_cost)
    {
        return;
    }
    let _ = writeln!(
        out,
        "\nLaunch: registers per thread, static shared memory per block, local memory per \
         thread, theoretical occupancy (driver occupancy API){}",
        if any_cost {
            "; CUPTI cost = event median with CUPTI over event median with CUPTI paused"
        } else {
            ""
        }
    );
    let _ = write!(
        out,
        "{:<20} {:>9} {:>6} {:>8} {:>7} {:>14} {:>12}",
        "config", "size", "regs", "shared", "local", "occupancy", "event med"
    );
    if any_cost {
        let _ = write!(out, " {:>12} {:>10}", "CUPTI off", "CUPTI cost");
    }
    let _ = writeln!(out);
    for p in &run.points {
        let (config, size) = point_name(run, p);
        let r = p.resources.unwrap_or_default();
        let opt = |v: Option<u64>| v.map_or_else(|| "-".into(), |v| v.to_string());
        let occ = p.occupancy.map_or_else(
            || "-".into(),
            |o| format!("{:.0}% ({} blk)", 100.0 * o.fraction, o.blocks_per_sm),
        );
        let _ = write!(
            out,
            "{:<20} {:>9} {:>6} {:>8} {:>7} {:>14} {:>12}",
            config,
            size,
            opt(r.registers.map(u64::from)),
            opt(r.static_shared_bytes),
            opt(r.local_bytes),
            occ,
            opt_ns(p.median_event_ns()),
        );
        if any_cost {
            let _ = write!(
                out,
                " {:>12} {:>10}",
                opt_ns(warpscope_live::median_ns(&p.cupti_off_ns)),
                p.cupti_cost()
                    .map_or_else(|| "-".into(), |c| format!("{:+.1}%", 100.0 * c))
            );
        }
        let _ = writeln!(out);
    }
}

/// The roofline: each point's arithmetic intensity, rate, roof and share of it.
fn roofline_table(out: &mut String, run: &LiveRun) {
    let (Some(bw), sgemm) = (run.peaks.d2d_bytes_per_s, run.peaks.sgemm_flops_per_s) else {
        let _ = writeln!(
            out,
            "\nRoofline: no ceilings were measured (run without --no-peaks)"
        );
        return;
    };
    let _ = writeln!(
        out,
        "\nRoofline (ceilings measured in this run): DRAM {:.0} GB/s (device-to-device copy); \
         FP32 {}, TF32 {}, FP16 {} GFLOP/s (cuBLAS). Roof = min(intensity x DRAM, compute).",
        bw * 1e-9,
        gf(sgemm),
        gf(run.peaks.tf32_flops_per_s),
        gf(run.peaks.fp16_flops_per_s),
    );
    let _ = writeln!(
        out,
        "{:<20} {:>9} {:>10} {:>8} {:>11} {:>11} {:>7}  bound",
        "config", "size", "FLOP/byte", "math", "GFLOP/s", "roof", "% roof"
    );
    let mut placed = 0;
    for p in &run.points {
        let Some(r) = run.roofline(p) else { continue };
        placed += 1;
        let (config, size) = point_name(run, p);
        let _ = writeln!(
            out,
            "{:<20} {:>9} {:>10.3} {:>8} {:>11.1} {:>11.1} {:>6.1}%  {}",
            config,
            size,
            r.intensity,
            r.math.as_str(),
            r.flops_per_s * 1e-9,
            r.roof_flops_per_s * 1e-9,
            r.percent_of_roof,
            match r.bound {
                warpscope_live::Bound::Memory => "memory",
                warpscope_live::Bound::Compute => "compute",
            }
        );
    }
    if placed < run.points.len() {
        let _ = writeln!(
            out,
            "({} point(s) have no place on a FLOP roofline: no FLOPs (copies), the CPU, \
             host-device transfers, or failed)",
            run.points.len() - placed
        );
    }
}

fn gf(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{:.0}", v * 1e-9))
}

fn opt_ns(v: Option<i64>) -> String {
    v.map(format_duration_ns).unwrap_or_else(|| "-".into())
}

fn live_csv(run: &RunJson<'_>) -> String {
    let mut out = format!(
        "config,size,timed,batch,event_median_ns,event_min_ns,cupti_median_ns,rate_{},percent_of_peak,rel_error,check\n",
        run.rate_unit.replace('/', "_per_")
    );
    for p in &run.points {
        let num = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
        let int = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(p.config),
            p.size,
            p.timed,
            p.batch,
            int(p.event_median_ns),
            int(p.event_min_ns),
            int(p.cupti_median_ns),
            num(p.rate),
            num(p.percent_of_peak),
            p.check
                .map(|c| format!("{:e}", c.rel_error))
                .unwrap_or_default(),
            match p.check {
                Some(c) if c.ok => "ok",
                Some(_) => "FAILED",
                None => "",
            }
        );
    }
    out
}

fn live_table(run: &LiveRun, json: &RunJson<'_>) -> String {
    let mut out = String::new();
    let d = &run.device;
    if let Some(u) = &run.user {
        let _ = writeln!(out, "Your kernel {} from {} ({})", u.kernel, u.file, u.args);
        if let Some(r) = &u.check_against {
            let _ = writeln!(
                out,
                "Checked against {r}: every buffer after one launch of each on the same inputs"
            );
        }
        if !u.compile_log.is_empty() {
            let _ = writeln!(out, "NVRTC log:\n{}", u.compile_log);
        }
    }
    let _ = writeln!(
        out,
        "{} on {} ({} SMs, compute capability {}.{}, driver CUDA {})",
        run.kernel,
        d.name,
        d.sm_count,
        d.compute_capability.0,
        d.compute_capability.1,
        d.driver_version
    );
    let _ = writeln!(
        out,
        "Timing: CUDA events (CU_EVENT_DEFAULT){}; {} warm-up launch(es) per configuration",
        if run.cupti {
            " and CUPTI activity records"
        } else {
            ""
        },
        run.warmup
    );
    if run.batch > 1 {
        let _ = writeln!(
            out,
            "Batched: {k} launches per event pair, L2 warm after the first (flushed once before \
             each batch); times are per launch (elapsed / {k}); checks read a separate single \
             launch",
            k = run.batch
        );
    }
    if let Some(note) = &run.cupti_note {
        let _ = writeln!(out, "CUPTI: {note}");
    }
    let mut peaks = Vec::new();
    if let Some(bw) = run.peaks.d2d_bytes_per_s {
        peaks.push(format!("device-to-device copy {:.0} GB/s", bw * 1e-9));
    }
    if let Some(f) = run.peaks.sgemm_flops_per_s {
        peaks.push(format!("cuBLAS SGEMM {:.0} GFLOP/s", f * 1e-9));
    }
    if let Some(f) = run.peaks.tf32_flops_per_s {
        peaks.push(format!("cuBLAS TF32 {:.0} GFLOP/s", f * 1e-9));
    }
    if let Some(f) = run.peaks.fp16_flops_per_s {
        peaks.push(format!("cuBLAS FP16 {:.0} GFLOP/s", f * 1e-9));
    }
    if !peaks.is_empty() {
        let _ = writeln!(out, "Measured peaks: {}", peaks.join("; "));
    }
    let _ = writeln!(out);
    let unit = run.rate_unit();
    let _ = writeln!(
        out,
        "{:<14} {:>9} {:>6} {:>12} {:>12} {:>8} {:>11} {:>7}  check",
        "config", "size", "timed", "event med", "CUPTI med", "ev-CUPTI", unit, "% peak"
    );
    for p in &json.points {
        let _ = writeln!(
            out,
            "{:<14} {:>9} {:>6} {:>12} {:>12} {:>8} {:>11} {:>7}  {}",
            p.block
                .map_or_else(|| p.config.to_string(), |b| format!("{} b{b}", p.config)),
            p.size_text,
            format!("{}/{}", p.timed, p.planned),
            opt_ns(p.event_median_ns),
            opt_ns(p.cupti_median_ns),
            p.event_vs_cupti
                .map_or_else(|| "-".into(), |v| format!("{:+.1}%", 100.0 * v)),
            p.rate.map_or_else(|| "-".into(), |r| format!("{r:.1}")),
            p.percent_of_peak
                .map_or_else(|| "-".into(), |v| format!("{v:.1}%")),
            match (p.error, p.check) {
                (Some(e), _) => format!("FAILED: {e}"),
                (None, Some(c)) => c.text(),
                (None, None) => "-".into(),
            }
        );
    }
    for w in &run.warnings {
        let _ = writeln!(out, "\nWarning: {w}");
    }
    if run
        .points
        .iter()
        .any(|p| p.error.is_none() && p.event_ns.len() < p.planned as usize)
    {
        let _ = writeln!(
            out,
            "\n(fewer timed launches than planned: a point stops repeating once its launches add up \
             to the time budget, --budget)"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn sample(name: &str) -> LiveRun {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("sample_profiles")
            .join(name);
        let profile = warpscope_core::import_file(&path, &warpscope_core::Progress::new()).unwrap();
        LiveRun::from_profile(&profile).unwrap()
    }

    #[test]
    fn a_block_sweep_table_names_each_block_with_its_occupancy() {
        let run = sample("live_saxpy_blocks_h200.json.gz");
        let text = live_run(&run, OutputFormat::Table, false).unwrap();
        assert!(text.starts_with("Your kernel saxpy from "), "{text}");
        assert!(text.contains("saxpy b32           100M    5/5"), "{text}");
        assert!(
            text.contains("saxpy b32                 100M     10        0       0   50% (32 blk)"),
            "{text}"
        );
        assert!(
            text.contains("saxpy b1024               100M     10        0       0   100% (2 blk)"),
            "{text}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&live_run(&run, OutputFormat::Json, false).unwrap()).unwrap();
        assert_eq!(json["user"]["kernel"], "saxpy");
        assert_eq!(json["points"][0]["block"], 32);
        assert_eq!(json["points"][0]["occupancy"]["blocks_per_sm"], 32);
        assert_eq!(json["points"][0]["resources"]["registers"], 10);
    }

    #[test]
    fn the_roofline_table_holds_each_rung_to_its_ceiling() {
        let run = sample("live_sgemm_ladder_h200.json.gz");
        let text = live_run(&run, OutputFormat::Table, true).unwrap();
        let line = |prefix: &str| {
            text.lines()
                .rfind(|l| l.starts_with(prefix))
                .unwrap_or_else(|| panic!("{prefix} missing:\n{text}"))
                .to_string()
        };
        assert!(
            text.contains("Roofline (ceilings measured in this run): DRAM 4214 GB/s"),
            "{text}"
        );
        // The last "tensor 4096" line is the roofline's: FP16 ceiling, compute-bound.
        let tensor = line("tensor                    4096");
        assert!(tensor.contains("1024.000  FP16 TC"), "{tensor}");
        assert!(tensor.ends_with("56.1%  compute"), "{tensor}");
        let regblock = line("regblock                  4096");
        assert!(regblock.contains("682.667     FP32"), "{regblock}");
        assert!(regblock.ends_with("83.6%  compute"), "{regblock}");
        let json: serde_json::Value =
            serde_json::from_str(&live_run(&run, OutputFormat::Json, false).unwrap()).unwrap();
        let points = json["points"].as_array().unwrap();
        assert!(points.iter().all(|p| p["roofline"]["bound"] == "compute"));
    }

    #[test]
    fn a_batched_run_says_so_in_every_format() {
        let run = sample("live_sgemm_batch20_h200.json.gz");
        assert_eq!(run.batch, 20);
        let text = live_run(&run, OutputFormat::Table, false).unwrap();
        assert!(
            text.contains(
                "Batched: 20 launches per event pair, L2 warm after the first (flushed once \
                 before each batch); times are per launch (elapsed / 20); checks read a separate \
                 single launch"
            ),
            "{text}"
        );
        // Per launch, the events and CUPTI's span of the batch agree within a percent.
        assert!(
            text.contains("tensor              1024    5/5     17.629µs     17.491µs    +0.8%"),
            "{text}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&live_run(&run, OutputFormat::Json, false).unwrap()).unwrap();
        assert_eq!(json["batch"], 20);
        assert_eq!(json["points"][1]["config"], "tensor");
        assert_eq!(json["points"][1]["batch"], 20);
        assert_eq!(json["points"][1]["event_median_ns"], 17_629);
        let csv = live_run(&run, OutputFormat::Csv, false).unwrap();
        assert!(
            csv.starts_with("config,size,timed,batch,event_median_ns,"),
            "{csv}"
        );
        assert!(csv.contains("\ntensor,1024,5,20,17629,"), "{csv}");
    }

    #[test]
    fn an_unbatched_run_says_nothing_of_batches_and_a_synthetic_one_does() {
        let mut run = sample("live_sgemm_ladder_h200.json.gz");
        assert_eq!(run.batch, 1, "a run saved before --batch reads as batch 1");
        let text = live_run(&run, OutputFormat::Table, false).unwrap();
        assert!(!text.contains("Batched"), "{text}");
        let csv = live_run(&run, OutputFormat::Csv, false).unwrap();
        assert!(csv.contains("\ntensor,4096,5,1,"), "{csv}");
        run.batch = 4;
        for p in &mut run.points {
            p.batch = 4;
        }
        let text = live_run(&run, OutputFormat::Table, false).unwrap();
        assert!(
            text.contains("Batched: 4 launches per event pair") && text.contains("(elapsed / 4)"),
            "{text}"
        );
        let csv = live_run(&run, OutputFormat::Csv, false).unwrap();
        assert!(csv.contains("\ntensor,4096,5,4,"), "{csv}");
    }
}
