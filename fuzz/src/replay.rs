//! What every fuzz target runs, shared with the stable-toolchain regression test
//! (`crates/warpscope-core/tests/fuzz_regressions.rs` includes this file by path), so that a
//! replayed reproducer goes through exactly the entry point and the checks of its target.
//!
//! A run panics (which is what the fuzzer and the test catch) when the importer panics, when an
//! error does not name the input, or when a profile that loaded breaks an invariant: an event
//! with a negative duration or whose end overflows `i64`, a span that is negative or longer than
//! `i64`, negative GPU totals, out-of-range flows, events out of order.

use std::path::Path;

use warpscope_core::analysis::flops::{PeakOverride, flops_report};
use warpscope_core::analysis::{
    AnalyzeOptions, analyze, gpu_busy_ns, gpu_total_ns, summary_report,
};
use warpscope_core::model::memory::NO_STACK;
use warpscope_core::model::{EventKind, NO_DETAIL, NO_PARENT, Profile};
use warpscope_core::{Input, Progress, TimeRange, import};

/// The name every target gives its input; errors must start with it.
pub const INPUT_NAME: &str = "fuzz-input";

/// The fuzz targets, by name (the directories under `fuzz/regressions/`).
pub const TARGETS: &[&str] = &[
    "chrome_json",
    "nvprof_text",
    "nvprof_sqlite",
    "nsys_sqlite",
    "detect",
    "snapshot",
    "rocm_text",
    "rocpd_sqlite",
    "rpd_sqlite",
];

/// How one run ended (a broken invariant panics instead).
#[derive(Debug)]
pub enum Outcome {
    /// The input was too short for the target to try (the Chrome target needs its first byte).
    Skipped,
    /// The import failed with this message (which names the input).
    Error(String),
    /// The import succeeded.
    Loaded {
        /// Events in the profile.
        events: usize,
        /// Warnings the import counted (distinct codes).
        warnings: usize,
    },
}

/// Runs `target` on `data` and checks the result. Panics on an unknown target.
pub fn run(target: &str, data: &[u8]) -> Outcome {
    let name = Path::new(INPUT_NAME);
    let progress = Progress::default();
    let result = match target {
        "chrome_json" => {
            // The first byte picks the reader's block size (1 to 256 bytes), so that block
            // boundaries fall inside events, keys, strings and numbers.
            let Some((&first, json)) = data.split_first() else {
                return Outcome::Skipped;
            };
            let input = Input::Bytes { name, data: json };
            // Blocks of 1 to 256 bytes put block boundaries inside events, keys and numbers.
            let block_bytes = usize::from(first) + 1;
            import::chrome::import_with_block_bytes(input, &progress, block_bytes).map(|(p, _)| p)
        }
        "nvprof_text" => {
            import::nvprof::import(Input::Bytes { name, data }, &progress).map(|(p, _)| p)
        }
        // The SQLite targets call the same importer; they differ in seeds and dictionary.
        "nvprof_sqlite" | "nsys_sqlite" | "rocpd_sqlite" | "rpd_sqlite" => {
            import::sqlite::import(Input::Bytes { name, data }, &progress).map(|(p, _)| p)
        }
        "detect" => warpscope_core::import_bytes(name, data, &progress),
        // Plain or gzip-compressed allocator snapshot pickles.
        "snapshot" => {
            import::snapshot::import(Input::Bytes { name, data }, &progress).map(|(p, _)| p)
        }
        // The first byte picks which AMD text reader gets the rest (as if `sniff` had said).
        "rocm_text" => {
            let Some((&first, text)) = data.split_first() else {
                return Outcome::Skipped;
            };
            let kinds = [
                import::rocprof::RocmText::V1Kernels,
                import::rocprof::RocmText::Stats,
                import::rocprof::RocmText::V3Trace,
                import::rocprof::RocmText::V1Json,
                import::rocprof::RocmText::RpdJson,
            ];
            let kind = kinds[usize::from(first) % kinds.len()];
            import::rocprof::import(Input::Bytes { name, data: text }, &progress, kind)
                .map(|(p, _)| p)
        }
        other => panic!("unknown fuzz target {other:?}"),
    };
    match result {
        Ok(profile) => {
            check_profile(&profile);
            Outcome::Loaded {
                events: profile.event_count(),
                warnings: profile.warnings.len(),
            }
        }
        Err(e) => {
            let message = e.to_string();
            assert!(
                message.starts_with(INPUT_NAME),
                "error does not name the input: {message:?}"
            );
            Outcome::Error(message)
        }
    }
}

/// Panics if the memory records of `profile` break an invariant: columns of different
/// lengths, records out of time order, stacks or frames out of range.
pub fn check_memory(profile: &Profile) {
    let m = &profile.memory;
    let ev = &m.events;
    let n = ev.len();
    assert!(
        [
            ev.device.len(),
            ev.action.len(),
            ev.addr.len(),
            ev.bytes.len(),
            ev.allocated_bytes.len(),
            ev.reserved_bytes.len(),
            ev.track.len(),
            ev.stream.len(),
            ev.stack.len()
        ]
        .iter()
        .all(|&len| len == n),
        "memory columns of different lengths"
    );
    assert!(
        ev.time_ns.windows(2).all(|w| w[0] <= w[1]),
        "memory records out of time order"
    );
    let stacks = &m.stacks;
    let in_range = |s: u32| s == NO_STACK || (s as usize) < stacks.len();
    assert!(
        ev.stack.iter().all(|&s| in_range(s)),
        "record stack out of range"
    );
    for seg in &m.segments {
        assert!(
            seg.blocks.iter().all(|b| in_range(b.stack)),
            "block stack out of range"
        );
    }
    assert!(
        stacks.starts.windows(2).all(|w| w[0] <= w[1])
            && stacks
                .starts
                .last()
                .is_none_or(|&e| e as usize == stacks.frame_ids.len()),
        "stack starts not increasing to the end of the frame ids"
    );
    assert!(
        stacks
            .frame_ids
            .iter()
            .all(|&f| (f as usize) < stacks.frames.len()),
        "frame id out of range"
    );
}

/// Panics if `profile` breaks an invariant that the viewer and the analysis rely on.
pub fn check_profile(profile: &Profile) {
    check_memory(profile);
    for (t, track) in profile.tracks.iter().enumerate() {
        let ev = &track.events;
        let n = ev.len();
        assert!(
            [
                ev.dur_ns.len(),
                ev.name.len(),
                ev.kind.len(),
                ev.depth.len(),
                ev.parent.len(),
                ev.detail.len()
            ]
            .iter()
            .all(|&len| len == n),
            "track {t} ({}): event columns of different lengths",
            track.name
        );
        assert!(
            track.max_dur_ns >= 0,
            "track {t} ({}): max_dur_ns {} < 0",
            track.name,
            track.max_dur_ns
        );
        for i in 0..n {
            let (start, dur) = (ev.start_ns[i], ev.dur_ns[i]);
            assert!(
                dur >= 0,
                "track {t} ({}) event {i} ({:?} {:?}): negative duration {dur} ns (start {start})",
                track.name,
                ev.kind[i],
                profile.str(ev.name[i])
            );
            assert!(
                start.checked_add(dur).is_some(),
                "track {t} ({}) event {i}: start {start} + duration {dur} overflows i64",
                track.name
            );
            assert!(
                dur <= track.max_dur_ns,
                "track {t} ({}) event {i}: duration {dur} > track max_dur_ns {}",
                track.name,
                track.max_dur_ns
            );
            if i > 0 {
                assert!(
                    ev.start_ns[i - 1] <= start,
                    "track {t} ({}): events {} and {i} out of order ({} > {start})",
                    track.name,
                    i - 1,
                    ev.start_ns[i - 1]
                );
            }
            let parent = ev.parent[i];
            assert!(
                parent == NO_PARENT || (parent as usize) < i,
                "track {t} ({}) event {i}: parent {parent} is not an earlier event",
                track.name
            );
        }
    }
    if let Some((start, end)) = profile.span_ns() {
        let length = end.checked_sub(start);
        assert!(
            length.is_some_and(|l| l >= 0),
            "span {start}..{end} ns is negative or longer than i64 ({length:?})"
        );
    }
    for (k, flow) in profile.flows.iter().enumerate() {
        for end in [flow.from, flow.to] {
            let ok = profile
                .tracks
                .get(end.track as usize)
                .is_some_and(|t| (end.index as usize) < t.events.len());
            assert!(ok, "flow {k} points at a missing event {end:?}");
        }
    }
    for counter in &profile.counters {
        assert_eq!(
            counter.time_ns.len(),
            counter.value.len(),
            "counter {:?}: times and values of different lengths",
            counter.name
        );
    }
    // The analysis behind `warpscope summary`, with overflow checks on.
    let total = gpu_total_ns(profile, TimeRange::ALL);
    assert!(total >= 0, "GPU total {total} ns < 0");
    for (device, busy) in gpu_busy_ns(profile, TimeRange::ALL) {
        assert!(busy >= 0, "device {device}: GPU busy {busy} ns < 0");
    }
    // The insight layer (`warpscope analyze`): its sums must hold on any file.
    let insights = analyze(profile, TimeRange::ALL, &AnalyzeOptions::default());
    for d in &insights.devices {
        let b = &d.idle_breakdown;
        assert_eq!(
            d.compute_ns + d.comm_ns + d.memory_ns + d.idle_ns,
            d.window_ns,
            "device {}: the categories do not sum to the window",
            d.device
        );
        assert_eq!(
            b.host_wait_ns + b.kernel_wait_ns + b.other_ns,
            d.idle_ns,
            "device {}: the idle causes do not sum to idle",
            d.device
        );
    }
    let report = summary_report(profile, TimeRange::ALL, None);
    assert!(
        report.gpu_total_ns >= 0,
        "summary GPU total {} ns < 0",
        report.gpu_total_ns
    );
    let rows = report
        .gpu_activities
        .iter()
        .map(|r| ("GPU activity", &r.name, &r.stats));
    for (table, name, stats) in
        rows.chain(report.api.iter().map(|r| ("API row", &r.name, &r.stats)))
    {
        assert!(
            stats.total_ns >= 0 && stats.min_ns >= 0,
            "{table} {name:?}: total {} ns, min {} ns",
            stats.total_ns,
            stats.min_ns
        );
    }
    for row in &report.memcpy {
        assert!(
            row.total_ns >= 0,
            "copy row {:?}: total {} ns",
            row.kind,
            row.total_ns
        );
    }
    // Operator shapes point into their table, and the FLOPs analysis (`docs/flops.md`) holds
    // its sums on any file: unknown figures stay unknown, sums saturate.
    for track in &profile.tracks {
        let ev = &track.events;
        for i in 0..ev.len() {
            if ev.kind[i] == EventKind::CpuOp && ev.detail[i] != NO_DETAIL {
                assert!(
                    (ev.detail[i] as usize) < profile.op_args.len(),
                    "operator {i} of track {}: shapes row {} out of range",
                    track.name,
                    ev.detail[i]
                );
            }
        }
    }
    let flops = flops_report(profile, TimeRange::ALL, PeakOverride::default());
    for d in &flops.devices {
        assert!(
            d.model_flops <= d.hardware_flops && d.window_ns >= 0,
            "device {}: model FLOPs {} > hardware FLOPs {} or window {} ns < 0",
            d.device,
            d.model_flops,
            d.hardware_flops,
            d.window_ns
        );
    }
    for r in flops.operators.iter().chain(&flops.kernels) {
        assert!(
            r.gpu_time_ns >= 0 && r.known_gpu_time_ns <= r.gpu_time_ns,
            "FLOPs row {:?}: GPU time {} ns, of it known {} ns",
            r.name,
            r.gpu_time_ns,
            r.known_gpu_time_ns
        );
    }
    // The JSON that `warpscope summary --format json` prints must serialise.
    if let Err(e) = serde_json::to_string(&report) {
        panic!("summary does not serialise: {e}");
    }
}
