//! AMD's text profiles: the legacy `rocprof` (v1) kernel trace `results.csv`, its `--stats`
//! summaries, rocprofv3's CSV traces (`kernel_trace.csv`, `memory_copy_trace.csv`,
//! `hip_api_trace.csv` / `hip_runtime_trace.csv`) and `*_stats.csv`, and the Chrome JSON that
//! rocprof v1 (`results.json`) and rocmProfileData (`rpd2tracing.py`) write. Formats, units and
//! pitfalls: `docs/formats.md` §14.
//!
//! - `mod.rs`: what a file is ([`sniff`]), the import of one file, of a directory or of a set
//!   of files of one run ([`import_set`]);
//! - `table.rs`: CSV reading by column name, shared by the readers below;
//! - `kernels_v1.rs`: rocprof v1 `results.csv`;
//! - `v3.rs`: rocprofv3 CSV traces;
//! - `stats.rs`: `--stats` summaries of both versions;
//! - `chrome.rs`: rocprof v1 `results.json` and RPD's Chrome JSON.

mod chrome;
mod kernels_v1;
mod stats;
mod table;
mod v3;

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::{ImportError, ImportTimings, Input, Progress};
use crate::builder::ProfileBuilder;
use crate::model::{Device, Format, GpuVendor, Profile, TrackKey};

pub use stats::{StatsRow, read_stats};

/// What an AMD text file is, from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RocmText {
    /// rocprof v1 kernel trace CSV (`results.csv`).
    V1Kernels,
    /// A `--stats` summary (`results.stats.csv`, `hip_api_stats.csv`...).
    Stats,
    /// A rocprofv3 CSV trace (kernels, memory copies or API calls).
    V3Trace,
    /// rocprof v1 `results.json`.
    V1Json,
    /// rocmProfileData's Chrome JSON (`rpd2tracing.py`).
    RpdJson,
}

/// The header line of a CSV file: the first line, without a byte-order mark.
fn header_line(head: &[u8]) -> Option<&str> {
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let end = memchr::memchr(b'\n', text).unwrap_or(text.len());
    std::str::from_utf8(&text[..end]).ok()
}

/// What an AMD text file is, or `None` for anything else (NVIDIA formats, other Chrome JSON).
pub fn sniff(head: &[u8]) -> Option<RocmText> {
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let first = text.iter().copied().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'{' | b'[')) {
        return sniff_json(text);
    }
    let header = header_line(text)?;
    let has = |name: &str| table::header_names(header).any(|h| h == name);
    if has("Name") && has("Calls") && has("TotalDurationNs") {
        return Some(RocmText::Stats);
    }
    if has("KernelName") && has("BeginNs") && has("EndNs") {
        return Some(RocmText::V1Kernels);
    }
    if has("Start_Timestamp") && has("End_Timestamp") {
        return Some(RocmText::V3Trace);
    }
    None
}

/// rocprof v1's JSON holds its ns times in `args.BeginNs`; RPD's is a bare array whose first
/// element is `{}` and whose events describe themselves in `args.desc`.
fn sniff_json(text: &[u8]) -> Option<RocmText> {
    let has = |needle: &[u8]| memchr::memmem::find(text, needle).is_some();
    if has(b"\"BeginNs\"") && has(b"\"DurationNs\"") {
        return Some(RocmText::V1Json);
    }
    let mut rest = text.iter().copied().filter(|b| !b.is_ascii_whitespace());
    let bare_empty_first =
        rest.next() == Some(b'[') && rest.next() == Some(b'{') && rest.next() == Some(b'}');
    (bare_empty_first && has(b"\"desc\"")).then_some(RocmText::RpdJson)
}

/// Imports one AMD text file of the kind [`sniff`] found.
///
/// # Errors
///
/// An [`ImportError`] naming the file: unreadable, or a table without the columns it needs.
pub fn import(
    input: Input<'_>,
    progress: &Progress,
    kind: RocmText,
) -> Result<(Profile, ImportTimings), ImportError> {
    let started = Instant::now();
    let (reader, compressed, size) = input.open()?;
    progress.set_total(size);
    let path = input.path();
    let mut b = match kind {
        RocmText::V1Kernels => new_builder(path, Format::RocprofCsv, "rocprof (v1)"),
        RocmText::Stats => new_builder(path, Format::RocprofStats, "rocprof --stats"),
        RocmText::V3Trace => new_builder(path, Format::Rocprofv3Csv, "rocprofv3"),
        RocmText::V1Json => new_builder(path, Format::RocprofJson, "rocprof (v1)"),
        RocmText::RpdJson => new_builder(path, Format::RpdJson, "rocmProfileData (rpd2tracing)"),
    };
    b.source.compressed = compressed;
    b.source.file_bytes = size;
    let content_bytes = match kind {
        RocmText::V1Kernels => kernels_v1::read(reader, path, &mut b)?,
        RocmText::Stats => stats::read_into(reader, path, &mut b)?,
        RocmText::V3Trace => v3::read(reader, path, &mut b)?,
        RocmText::V1Json | RocmText::RpdJson => {
            chrome::read(reader, path, compressed, kind == RocmText::RpdJson, &mut b)?
        }
    };
    b.source.content_bytes = content_bytes;
    let parse = started.elapsed();
    Ok(finish(b, progress, size, started, parse))
}

/// A builder for an AMD text file.
fn new_builder(path: &Path, format: Format, tool: &str) -> ProfileBuilder {
    let mut b = ProfileBuilder::new(path.to_path_buf(), format);
    b.source.tool = tool.to_string();
    b
}

/// Names the GPUs that have tracks but no description (`GPU 2`), marks every device AMD, and
/// finishes the profile.
fn finish(
    mut b: ProfileBuilder,
    progress: &Progress,
    size: u64,
    started: Instant,
    parse: std::time::Duration,
) -> (Profile, ImportTimings) {
    for id in b.undescribed_gpu_ids() {
        b.devices.push(Device {
            id,
            name: format!("GPU {id}"),
            ..Device::default()
        });
    }
    let isa = kernel_isa_by_device(&b);
    for d in &mut b.devices {
        d.vendor = GpuVendor::Amd;
        if d.gfx_target.is_none() {
            d.gfx_target = isa.get(&d.id).cloned().flatten();
        }
    }
    b.devices.sort_by_key(|d| d.id);
    let t = Instant::now();
    let profile = b.finish();
    progress.set_done(size);
    let timings = ImportTimings {
        read: std::time::Duration::ZERO,
        parse,
        index: t.elapsed(),
        total: started.elapsed(),
    };
    (profile, timings)
}

/// Per GPU, the ISA its Tensile kernels name (`_ISA90a_`: gfx90a), `None` where they disagree.
fn kernel_isa_by_device(b: &ProfileBuilder) -> std::collections::BTreeMap<u32, Option<String>> {
    let mut out: std::collections::BTreeMap<u32, Option<String>> = Default::default();
    for t in b.tracks() {
        let TrackKey::Gpu { device, .. } = t.key else {
            continue;
        };
        let mut names = t.events.name.clone();
        names.sort_unstable();
        names.dedup();
        for id in names {
            if let Some(isa) = super::chrome::gfx_from_kernel_name(b.strings.get(id)) {
                match out.get(&device) {
                    Some(Some(found)) if *found != isa => {
                        out.insert(device, None);
                    }
                    Some(None) => {}
                    _ => {
                        out.insert(device, Some(isa));
                    }
                }
            }
        }
    }
    out
}

/// True for a file whose name rocprofv3 gives its CSV traces (`*_trace.csv`).
fn is_v3_trace_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with("_trace.csv"))
}

/// True for a directory that holds rocprofv3 CSV traces (`*_trace.csv`), which
/// [`import_dir`] reads as one run.
pub fn is_run_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .filter_map(Result::ok)
            .any(|e| is_v3_trace_name(&e.path()))
    })
}

/// Imports the rocprofv3 CSV traces of one run in a directory (every `*_trace.csv` in it, not
/// below) as one profile.
///
/// # Errors
///
/// The directory cannot be listed, holds no `*_trace.csv`, or one of them cannot be read.
pub fn import_dir(
    dir: &Path,
    progress: &Progress,
) -> Result<(Profile, ImportTimings), ImportError> {
    let io = |source| ImportError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && is_v3_trace_name(p))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(ImportError::Unsupported {
            path: dir.to_path_buf(),
            detail: "a directory is read as the rocprofv3 CSV traces of one run, and this one \
                     holds no *_trace.csv file"
                .to_string(),
        });
    }
    import_set_as(dir, &files, progress)
}

/// Imports several rocprofv3 CSV traces of one run (`kernel_trace.csv`,
/// `memory_copy_trace.csv`, `hip_api_trace.csv`...) as one profile, named after the first.
///
/// # Errors
///
/// A file that is not a rocprofv3 CSV trace, or that cannot be read.
pub fn import_set(
    paths: &[PathBuf],
    progress: &Progress,
) -> Result<(Profile, ImportTimings), ImportError> {
    let Some(first) = paths.first() else {
        return Err(ImportError::Empty {
            path: PathBuf::new(),
        });
    };
    import_set_as(first, paths, progress)
}

fn import_set_as(
    name: &Path,
    paths: &[PathBuf],
    progress: &Progress,
) -> Result<(Profile, ImportTimings), ImportError> {
    let started = Instant::now();
    let mut b = new_builder(name, Format::Rocprofv3Csv, "rocprofv3");
    let mut size = 0;
    for path in paths {
        let input = Input::File(path);
        let (head, _) = super::read_head(input)?;
        if sniff(&head) != Some(RocmText::V3Trace) {
            return Err(ImportError::UnknownFormat {
                path: path.clone(),
                detail: "opened with other rocprofv3 CSV traces of one run, but it is not one \
                         (no Start_Timestamp and End_Timestamp columns)"
                    .to_string(),
            });
        }
        let (reader, compressed, bytes) = input.open()?;
        b.source.compressed |= compressed;
        size += bytes;
        b.source.content_bytes += v3::read(reader, path, &mut b)?;
        let file = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        b.source.details.push(("file".to_string(), file));
    }
    b.source.file_bytes = size;
    let parse = started.elapsed();
    Ok(finish(b, progress, size, started, parse))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing_tells_the_amd_text_formats_apart() {
        assert_eq!(
            sniff(b"\"Index\",\"KernelName\",\"gpu-id\",\"BeginNs\",\"EndNs\"\n0,\"k\",2,1,2"),
            Some(RocmText::V1Kernels)
        );
        assert_eq!(
            sniff(b"\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\"\n"),
            Some(RocmText::Stats)
        );
        assert_eq!(
            sniff(b"\"Kind\",\"Direction\",\"Start_Timestamp\",\"End_Timestamp\""),
            Some(RocmText::V3Trace)
        );
        assert_eq!(
            sniff(b"{ \"traceEvents\":[{}\n,{\"args\":{\"BeginNs\":\"1\",\"DurationNs\":\"2\"}}"),
            Some(RocmText::V1Json)
        );
        assert_eq!(
            sniff(b"[ {}\n,{\"pid\":\"2\",\"args\":{\"desc\":\"KernelExecution\"}}"),
            Some(RocmText::RpdJson)
        );
        assert_eq!(sniff(b"{\"traceEvents\": [{\"ph\": \"X\"}]}"), None);
        assert_eq!(sniff(b"\"Start\",\"Duration\",\"Name\"\n"), None);
        assert_eq!(sniff(b"hello"), None);
    }
}
