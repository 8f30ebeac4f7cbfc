//! Import speed and memory on the big Kineto trace, against Python's `json.load` of the same
//! file measured in the same run (the yardstick; this machine is shared and noisy).
//!
//! `cargo bench -p warpscope-core --bench import` uses
//! `../shared/samples/kineto-h100/resnet50_b32_60steps.pt.trace.json.gz`, decompressed once to
//! a temporary file; set `WARPSCOPE_BENCH_FILE` to measure another file. Each measurement runs
//! `WARPSCOPE_BENCH_RUNS` times (default 5) and the median is reported.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant};

use warpscope_core::import::json::{Chunk, split_stream};
use warpscope_core::{Progress, import_file_timed};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn runs() -> usize {
    std::env::var("WARPSCOPE_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
}

fn input_file() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("WARPSCOPE_BENCH_FILE") {
        return Some(PathBuf::from(p));
    }
    let gz = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/samples/kineto-h100/resnet50_b32_60steps.pt.trace.json.gz");
    if !gz.exists() {
        return None;
    }
    let out = std::env::temp_dir().join("warpscope-bench-resnet50_b32_60steps.pt.trace.json");
    if !out.exists() {
        let mut d = flate2::read::MultiGzDecoder::new(std::fs::File::open(&gz).unwrap());
        let mut bytes = Vec::new();
        d.read_to_end(&mut bytes).unwrap();
        std::fs::write(&out, bytes).unwrap();
    }
    Some(out)
}

fn main() {
    let Some(path) = input_file() else {
        eprintln!("bench skipped: sample trace not found (set WARPSCOPE_BENCH_FILE)");
        return;
    };
    let mb = std::fs::metadata(&path).unwrap().len() as f64 / 1e6;
    println!("file: {} ({mb:.1} MB)", path.display());
    println!(
        "load average: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );

    // 1. Reading alone: read + cut into blocks (the reader thread's work when it has no time
    //    to spare for tokenizing).
    let mut split = Vec::new();
    for _ in 0..runs() {
        let t = Instant::now();
        let (tx, rx) = sync_channel(64);
        let file = std::fs::File::open(&path).unwrap();
        let h = std::thread::spawn(move || split_stream(file, &tx, |_: &[u8]| ()));
        let mut n = 0usize;
        for c in rx {
            if let Chunk::Events { bytes, .. } = c {
                n += bytes.len();
            }
        }
        h.join().unwrap();
        assert!(n > 0);
        split.push(t.elapsed());
    }
    let s = median(split);
    println!(
        "read + cut into blocks: median {:.3} s, {:.0} MB/s",
        s.as_secs_f64(),
        mb / s.as_secs_f64()
    );

    // 2. The full import.
    let mut total = Vec::new();
    let mut parse = Vec::new();
    let mut index = Vec::new();
    let mut events = 0;
    for _ in 0..runs() {
        let (p, t) = import_file_timed(&path, &Progress::new()).unwrap();
        events = p.event_count();
        total.push(t.total);
        parse.push(t.parse);
        index.push(t.index);
    }
    let t = median(total);
    println!(
        "import: median {:.3} s, {:.0} MB/s ({} events; parse {:.3} s, index {:.3} s)",
        t.as_secs_f64(),
        mb / t.as_secs_f64(),
        events,
        median(parse).as_secs_f64(),
        median(index).as_secs_f64()
    );

    // 3. Yardstick: Python's json.load of the same file, same run.
    let mut py = Vec::new();
    for _ in 0..runs().min(3) {
        let t = Instant::now();
        let ok = Command::new("python3")
            .args(["-c", "import json,sys; json.load(open(sys.argv[1]))"])
            .arg(&path)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            println!("yardstick: python3 not available");
            return;
        }
        py.push(t.elapsed());
    }
    let p = median(py);
    println!(
        "yardstick python json.load: median {:.3} s, {:.0} MB/s -> warpscope is {:.1}x faster",
        p.as_secs_f64(),
        mb / p.as_secs_f64(),
        p.as_secs_f64() / t.as_secs_f64()
    );
}
