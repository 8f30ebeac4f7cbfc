//! `--stats` summaries: rocprof v1's `results.stats.csv` (kernels), `results.hip_stats.csv`
//! (HIP API) and `results.copy_stats.csv` (copies), and rocprofv3's `kernel_stats.csv`,
//! `hip_api_stats.csv`, `memory_copy_stats.csv`. Header `Name, Calls, TotalDurationNs,
//! AverageNs, Percentage`, and in rocprofv3 also `MinNs, MaxNs, StdDev`. They have no timeline:
//! they load as a profile of the tool's own totals (as an nvprof summary does), and
//! [`read_stats`] gives their rows to check warpscope's totals of the trace against.

use std::io::Read;
use std::path::Path;

use super::kernels_v1::kernel_name;
use super::table::Table;
use crate::builder::ProfileBuilder;
use crate::import::{ImportError, Input};
use crate::model::{CopyKind, RecordedSummary, RecordedSummaryRow, SummarySection};

/// One row of a `--stats` summary, as written.
#[derive(Clone, Debug, PartialEq)]
pub struct StatsRow {
    /// Kernel (without rocprof's `.kd` suffix), API call or copy name.
    pub name: String,
    /// Number of calls.
    pub calls: u64,
    /// Summed duration in nanoseconds.
    pub total_ns: i64,
    /// Average in nanoseconds, as written (rocprofv3 writes a fraction; it is rounded down).
    pub avg_ns: i64,
    /// Share of the file's total, in percent.
    pub percentage: f64,
    /// Shortest call (rocprofv3 only).
    pub min_ns: Option<i64>,
    /// Longest call (rocprofv3 only).
    pub max_ns: Option<i64>,
}

/// What a summary counts, from its file name, else from its names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Counts {
    Kernels,
    Copies,
    Api,
}

fn counts_of_file(path: &Path) -> Option<Counts> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    if name.contains("copy_stats") {
        Some(Counts::Copies)
    } else if name.contains("api_stats") || name.contains("hip_stats") || name.contains("hsa_stats")
    {
        Some(Counts::Api)
    } else if name.contains("kernel_stats") || name.ends_with(".stats.csv") {
        Some(Counts::Kernels)
    } else {
        None
    }
}

fn counts_of_name(name: &str) -> Counts {
    if name.starts_with("hip") || name.starts_with("__hip") || name.starts_with("hsa_") {
        Counts::Api
    } else if copy_kind(name).is_some() {
        Counts::Copies
    } else {
        Counts::Kernels
    }
}

/// The direction of a copy row (`CopyHostToDevice`, `MEMORY_COPY_DEVICE_TO_HOST`).
fn copy_kind(name: &str) -> Option<CopyKind> {
    Some(match name.trim_start_matches("MEMORY_COPY_") {
        "CopyHostToDevice" | "HOST_TO_DEVICE" => CopyKind::HtoD,
        "CopyDeviceToHost" | "DEVICE_TO_HOST" => CopyKind::DtoH,
        "CopyDeviceToDevice" | "DEVICE_TO_DEVICE" => CopyKind::DtoD,
        "CopyHostToHost" | "HOST_TO_HOST" => CopyKind::HtoH,
        "FillBuffer" => CopyKind::Memset,
        _ => return None,
    })
}

/// Reads the rows of a summary.
fn rows(input: impl Read, path: &Path) -> Result<(Vec<StatsRow>, u64), ImportError> {
    let mut t = Table::open(input, path)?;
    let what = "a --stats summary";
    let name_col = Some(t.required(path, "Name", what)?);
    let calls = Some(t.required(path, "Calls", what)?);
    let total = Some(t.required(path, "TotalDurationNs", what)?);
    let avg = t.column("AverageNs");
    let pct = t.column("Percentage");
    let min = t.column("MinNs");
    let max = t.column("MaxNs");
    let mut out = Vec::new();
    while let Some(row) = t.next_row(path)? {
        let line = row.line;
        let (Some(name), Some(n), Some(total_ns)) =
            (row.text(name_col), row.int(calls), row.int(total))
        else {
            return Err(ImportError::Corrupt {
                path: path.to_path_buf(),
                location: format!("line {line}"),
                detail: "a summary row without a name, a number of calls or a total".to_string(),
            });
        };
        // A fraction of a ns is dropped (`as` saturates a float out of range).
        #[allow(clippy::cast_possible_truncation)]
        let avg_ns = row
            .int(avg)
            .or_else(|| row.float(avg).map(|f| f.floor() as i64))
            .unwrap_or(0);
        out.push(StatsRow {
            name: kernel_name(name).to_string(),
            calls: u64::try_from(n).unwrap_or(0),
            total_ns,
            avg_ns,
            percentage: row.float(pct).unwrap_or(0.0),
            min_ns: row.int(min),
            max_ns: row.int(max),
        });
    }
    Ok((out, t.total_bytes()))
}

/// The rows of a `--stats` summary file (plain or gzip), as written.
///
/// # Errors
///
/// The file cannot be read, lacks the `Name`, `Calls` or `TotalDurationNs` column, or has a
/// row without them.
pub fn read_stats(path: &Path) -> Result<Vec<StatsRow>, ImportError> {
    let (reader, _, _) = Input::File(path).open()?;
    rows(reader, path).map(|(r, _)| r)
}

/// Reads a summary into `b` as its recorded summary; returns the bytes read.
pub(super) fn read_into(
    input: impl Read,
    path: &Path,
    b: &mut ProfileBuilder,
) -> Result<u64, ImportError> {
    let (rows, bytes) = rows(input, path)?;
    let file_counts = counts_of_file(path);
    let mut summary = RecordedSummary::default();
    let (mut without_extremes, mut negative) = (0, 0);
    for r in rows {
        let times = [Some(r.total_ns), Some(r.avg_ns), r.min_ns, r.max_ns];
        if times.iter().flatten().any(|&t| t < 0) {
            negative += 1;
            continue;
        }
        let counts = file_counts.unwrap_or_else(|| counts_of_name(&r.name));
        let (section, name) = match counts {
            Counts::Api => (SummarySection::ApiCalls, r.name),
            Counts::Kernels => (SummarySection::GpuActivities, r.name),
            Counts::Copies => (
                SummarySection::GpuActivities,
                copy_kind(&r.name).map_or(r.name, |k| k.activity_name_in("HIP")),
            ),
        };
        if r.min_ns.is_none() || r.max_ns.is_none() {
            without_extremes += 1;
        }
        summary.rows.push(RecordedSummaryRow {
            section,
            name,
            time_pct: r.percentage,
            total_ns: r.total_ns,
            calls: r.calls,
            avg_ns: r.avg_ns,
            min_ns: r.min_ns.unwrap_or(r.avg_ns),
            max_ns: r.max_ns.unwrap_or(r.avg_ns),
        });
    }
    b.warn(
        "negative_summary_times",
        negative,
        "summary rows with a negative time were skipped",
    );
    b.warn(
        "stats_without_min_max",
        without_extremes,
        "rocprof v1 summaries give no shortest or longest call: Min and Max show the average",
    );
    b.source.details.push((
        "summary".to_string(),
        "totals written by the profiler (no timeline); open the trace beside it (results.csv, \
         results.json, results.db or the *_trace.csv files) to see the events"
            .to_string(),
    ));
    b.recorded_summary = Some(summary);
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_summary_counts() {
        let c = |n: &str| counts_of_file(Path::new(n));
        assert_eq!(c("results.stats.csv"), Some(Counts::Kernels));
        assert_eq!(c("results.hip_stats.csv"), Some(Counts::Api));
        assert_eq!(c("results.copy_stats.csv"), Some(Counts::Copies));
        assert_eq!(c("1234_hip_api_stats.csv"), Some(Counts::Api));
        assert_eq!(c("1234_memory_copy_stats.csv"), Some(Counts::Copies));
        assert_eq!(c("1234_kernel_stats.csv"), Some(Counts::Kernels));
        assert_eq!(c("totals.csv"), None);
        assert_eq!(counts_of_name("__hipPushCallConfiguration"), Counts::Api);
        assert_eq!(counts_of_name("CopyHostToDevice"), Counts::Copies);
        assert_eq!(counts_of_name("vector_add(float*)"), Counts::Kernels);
    }

    #[test]
    fn rows_read_both_versions() {
        let v3 = b"\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\",\"MinNs\",\"MaxNs\",\"StdDev\"\n\
\"hipFree\",12,1994421,166201.750000,0.6470,7790,1036046,299086.860470\n\
\"hipSetDevice\",1,660,660.000000,2.141e-04,660,660,0.00000000e+00";
        let (read, _) = rows(&v3[..], Path::new("hip_api_stats.csv")).unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].avg_ns, 166_201);
        assert_eq!(read[0].min_ns, Some(7790));
        assert!((read[1].percentage - 2.141e-4).abs() < 1e-12);
        let bad = b"\"Name\",\"Calls\",\"TotalDurationNs\"\n\"k\",x,1\n";
        let err = rows(&bad[..], Path::new("s.csv")).err().unwrap();
        assert_eq!(
            err.to_string(),
            "s.csv: line 2: a summary row without a name, a number of calls or a total"
        );
    }
}
