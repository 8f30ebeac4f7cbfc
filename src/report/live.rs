//! Text, CSV and JSON output of the live lab: the kernel catalogue (`warpscope live --list`) and a
//! run's result table.

use std::fmt::Write as _;

use anyhow::Result;
use serde::Serialize;
use warpscope_core::time::format_duration_ns;
use warpscope_live::{CATALOG, Check, DeviceFacts, LiveRun, Peaks, format_size};

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
    rate_unit: &'static str,
    all_checks_ok: bool,
    warnings: &'a [String],
    points: Vec<PointJson<'a>>,
}

#[derive(Serialize)]
struct PointJson<'a> {
    config: &'a str,
    size: u64,
    size_text: String,
    planned: u32,
    timed: usize,
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
    event_ns: &'a [i64],
    cupti_ns: &'a [i64],
}

/// A live run's results.
pub fn live_run(run: &LiveRun, format: OutputFormat) -> Result<String> {
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
                event_median_ns: p.median_event_ns(),
                event_min_ns: p.event_ns.iter().copied().min(),
                cupti_median_ns: p.median_cupti_ns(),
                event_vs_cupti: p.event_vs_cupti(),
                rate: rate.map(|r| r.0),
                percent_of_peak: rate.and_then(|r| r.1),
                flops: p.work.flops,
                bytes: p.work.bytes,
                check: p.check.as_ref(),
                event_ns: &p.event_ns,
                cupti_ns: &p.cupti_ns,
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
        rate_unit: run.rate_unit(),
        all_checks_ok: run.all_checks_ok(),
        warnings: &run.warnings,
        points,
    };
    Ok(match format {
        OutputFormat::Json => serde_json::to_string_pretty(&json)? + "\n",
        OutputFormat::Csv => live_csv(&json),
        OutputFormat::Table => live_table(run, &json),
    })
}

fn opt_ns(v: Option<i64>) -> String {
    v.map(format_duration_ns).unwrap_or_else(|| "-".into())
}

fn live_csv(run: &RunJson<'_>) -> String {
    let mut out = format!(
        "config,size,timed,event_median_ns,event_min_ns,cupti_median_ns,rate_{},percent_of_peak,rel_error,check\n",
        run.rate_unit.replace('/', "_per_")
    );
    for p in &run.points {
        let num = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
        let int = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{}",
            csv_field(p.config),
            p.size,
            p.timed,
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
            p.config,
            p.size_text,
            format!("{}/{}", p.timed, p.planned),
            opt_ns(p.event_median_ns),
            opt_ns(p.cupti_median_ns),
            p.event_vs_cupti
                .map_or_else(|| "-".into(), |v| format!("{:+.1}%", 100.0 * v)),
            p.rate.map_or_else(|| "-".into(), |r| format!("{r:.1}")),
            p.percent_of_peak
                .map_or_else(|| "-".into(), |v| format!("{v:.1}%")),
            p.check.map_or_else(|| "-".into(), |c| c.text())
        );
    }
    for w in &run.warnings {
        let _ = writeln!(out, "\nWarning: {w}");
    }
    if run
        .points
        .iter()
        .any(|p| p.event_ns.len() < p.planned as usize)
    {
        let _ = writeln!(
            out,
            "\n(fewer timed launches than planned: a point stops repeating once its launches add up \
             to the time budget, --budget)"
        );
    }
    out
}
