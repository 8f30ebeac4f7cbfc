//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use warpscope_core::model::{EventKind, Profile, TrackKey};
use warpscope_core::{Progress, import_file};

/// `../shared/samples` next to the repository, if present (it is on developer machines and in
/// CI; a plain clone elsewhere skips the conformance tests).
pub fn samples_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/samples");
    dir.is_dir().then_some(dir)
}

/// The sample at `rel` (e.g. `kineto-h100/alexnet_b8.pt.trace.json.gz`), or `None` (and a note
/// on stderr) when the samples are not available.
pub fn sample(rel: &str) -> Option<PathBuf> {
    match samples_dir() {
        Some(d) => Some(d.join(rel)),
        None => {
            eprintln!("skipping: ../shared/samples not found");
            None
        }
    }
}

/// Imports a file, panicking with the error text on failure.
pub fn load(path: &Path) -> Profile {
    import_file(path, &Progress::new()).unwrap_or_else(|e| panic!("{e}"))
}

/// Events of `kind` on GPU tracks: (count, summed duration in ns).
pub fn gpu_kind_totals(p: &Profile, kind: EventKind) -> (u64, i64) {
    let mut n = 0;
    let mut total = 0;
    for t in p.tracks.iter().filter(|t| t.key.is_gpu()) {
        for i in 0..t.events.len() {
            if t.events.kind[i] == kind {
                n += 1;
                total += t.events.dur_ns[i];
            }
        }
    }
    (n, total)
}

/// Distinct (device, stream) pairs of GPU tracks holding kernels.
pub fn kernel_streams(p: &Profile) -> Vec<(u32, u64)> {
    let mut v: Vec<(u32, u64)> = p
        .tracks
        .iter()
        .filter(|t| t.events.kind.contains(&EventKind::Kernel))
        .filter_map(|t| match t.key {
            TrackKey::Gpu { device, stream, .. } => Some((device, stream)),
            _ => None,
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}
