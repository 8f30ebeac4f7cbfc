//! Pitfall and malformed-input tests of the Chrome / Kineto / TensorFlow importer
//! (`docs/formats.md` sections 6–8 and pitfalls 29–43).
//!
//! Every fixture is written by the test itself into its own directory under
//! `std::env::temp_dir()`; each test asserts the exact outcome: events, tracks, flows and the
//! complete list of warnings (code and count), or the one-line error naming the file.
//!
//! Tests marked `#[ignore = "BUG: ..."]` assert what a careful user expects and what the importer
//! does not do yet; they are listed in the report to the lead engineer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use warpscope_core::analysis::{self, ActivityKind, copies_by_kind, gpu_activities};
use warpscope_core::model::{
    CopyKind, EventKind, FlowKind, GpuLane, MemoryKind, NO_PARENT, Profile, Track, TrackKey,
};
use warpscope_core::{Progress, TimeRange, import_file};

// ---------------------------------------------------------------------------------------------
// Fixture helpers
// ---------------------------------------------------------------------------------------------

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

/// A fresh directory for one test's fixtures.
fn fixture_dir(test: &str) -> PathBuf {
    let n = NEXT_DIR.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "warpscope-pitfalls-chrome-{}-{n}-{test}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

fn warnings_text(p: &Profile) -> String {
    if p.warnings.is_empty() {
        return "no warnings".to_string();
    }
    p.warnings
        .iter()
        .map(|w| format!("  [{}] x{}: {}", w.code, w.count, w.message))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes `bytes` as `name` in a fresh directory and imports it, panicking with the error.
fn load_bytes(test: &str, name: &str, bytes: &[u8]) -> Profile {
    let dir = fixture_dir(test);
    let path = write(&dir, name, bytes);
    let p = import_file(&path, &Progress::new())
        .unwrap_or_else(|e| panic!("{test}: import failed: {e}"));
    let _ = std::fs::remove_dir_all(&dir);
    p
}

fn load_text(test: &str, text: &str) -> Profile {
    load_bytes(test, "trace.json", text.as_bytes())
}

/// Imports and expects an error; returns its text after checking it is one line naming the
/// file.
fn error_of(path: &Path) -> String {
    match import_file(path, &Progress::new()) {
        Ok(p) => panic!(
            "{}: expected an error, loaded {} events; warnings:\n{}",
            path.display(),
            p.event_count(),
            warnings_text(&p)
        ),
        Err(e) => {
            let text = e.to_string();
            assert!(
                text.contains(&path.display().to_string()),
                "error does not name the file: {text:?}"
            );
            assert!(!text.contains('\n'), "error is not one line: {text:?}");
            assert!(!text.trim().is_empty());
            text
        }
    }
}

/// The complete warning list must be exactly `want` (code, count), in any order.
#[track_caller]
fn assert_warnings(p: &Profile, want: &[(&str, u64)]) {
    let got: BTreeMap<String, u64> = p
        .warnings
        .iter()
        .map(|w| (w.code.clone(), w.count))
        .collect();
    let want: BTreeMap<String, u64> = want.iter().map(|(c, n)| ((*c).to_string(), *n)).collect();
    assert_eq!(got, want, "warnings:\n{}", warnings_text(p));
    for w in &p.warnings {
        assert!(
            !w.message.trim().is_empty(),
            "warning {} has no message",
            w.code
        );
    }
}

/// One event as seen through the public model, with its start on the file's own clock.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Ev {
    name: String,
    kind: EventKind,
    raw_start_ns: i64,
    dur_ns: i64,
    depth: u16,
}

fn events_of(p: &Profile, t: &Track) -> Vec<Ev> {
    (0..t.events.len())
        .map(|i| Ev {
            name: p.str(t.events.name[i]).to_string(),
            kind: t.events.kind[i],
            raw_start_ns: t.events.start_ns[i] + p.origin.raw_ns,
            dur_ns: t.events.dur_ns[i],
            depth: t.events.depth[i],
        })
        .collect()
}

fn ev(name: &str, kind: EventKind, raw_start_ns: i64, dur_ns: i64, depth: u16) -> Ev {
    Ev {
        name: name.to_string(),
        kind,
        raw_start_ns,
        dur_ns,
        depth,
    }
}

/// Thread tracks whose pid and tid read as `pid` / `tid`.
fn threads<'p>(p: &'p Profile, pid: &str, tid: &str) -> Vec<&'p Track> {
    p.tracks
        .iter()
        .filter(|t| match t.key {
            TrackKey::Thread { pid: a, tid: b } => p.id_text(a) == pid && p.id_text(b) == tid,
            _ => false,
        })
        .collect()
}

fn thread<'p>(p: &'p Profile, pid: &str, tid: &str) -> &'p Track {
    let v = threads(p, pid, tid);
    assert_eq!(
        v.len(),
        1,
        "thread tracks for pid {pid:?} tid {tid:?}; tracks: {:?}",
        track_list(p)
    );
    v[0]
}

fn gpu_track(p: &Profile, device: u32, stream: u64, lane: GpuLane) -> &Track {
    p.tracks
        .iter()
        .find(|t| {
            matches!(t.key, TrackKey::Gpu { device: d, stream: s, lane: l, .. }
                if d == device && s == stream && l == lane)
        })
        .unwrap_or_else(|| {
            panic!(
                "no GPU track {device}/{stream}/{lane:?}; tracks: {:?}",
                track_list(p)
            )
        })
}

fn track_list(p: &Profile) -> Vec<String> {
    p.tracks
        .iter()
        .map(|t| format!("{:?} {:?} ({} events)", t.key, t.name, t.events.len()))
        .collect()
}

fn all_events(p: &Profile) -> Vec<Ev> {
    let mut v: Vec<Ev> = p.tracks.iter().flat_map(|t| events_of(p, t)).collect();
    v.sort_by(|a, b| (a.raw_start_ns, &a.name).cmp(&(b.raw_start_ns, &b.name)));
    v
}

/// A complete event on a CPU thread.
fn x(name: &str, cat: &str, pid: i64, tid: i64, ts: &str, dur: &str) -> String {
    format!(
        r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": {pid}, "tid": {tid}, "ts": {ts}, "dur": {dur}}}"#
    )
}

/// A kernel on device 0, stream 7.
fn kernel(name: &str, ts: &str, dur: &str, corr: u64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "kernel", "name": "{name}", "pid": 0, "tid": 7, "ts": {ts}, "dur": {dur}, "args": {{"device": 0, "stream": 7, "correlation": {corr}, "External id": 1, "registers per thread": 32, "shared memory": 0, "grid": [4, 1, 1], "block": [128, 1, 1]}}}}"#
    )
}

fn object_form(events: &[String]) -> String {
    format!(
        "{{\"schemaVersion\": 1, \"traceEvents\": [\n{}\n]}}",
        events.join(",\n")
    )
}

// ---------------------------------------------------------------------------------------------
// Pitfall 29: containers
// ---------------------------------------------------------------------------------------------

fn three_events() -> Vec<String> {
    vec![
        x("a", "cpu_op", 1, 1, "100", "50"),
        x("b", "cpu_op", 1, 1, "110", "10"),
        x("c", "cpu_op", 1, 2, "200", "5"),
    ]
}

#[test]
fn object_and_bare_array_forms_give_the_same_events() {
    let ev = three_events();
    let obj = load_text("obj", &format!("{{\"traceEvents\": [{}]}}", ev.join(",")));
    let arr = load_text("arr", &format!("[{}]", ev.join(",")));
    assert_warnings(&obj, &[]);
    assert_warnings(&arr, &[]);
    let want = vec![
        ev_("a", 100_000, 50_000, 0),
        ev_("b", 110_000, 10_000, 1),
        ev_("c", 200_000, 5_000, 0),
    ];
    assert_eq!(all_events(&obj), want);
    assert_eq!(all_events(&arr), want);
    assert_eq!(obj.origin.raw_ns, 100_000);
    assert_eq!(arr.origin.raw_ns, 100_000);
}

fn ev_(name: &str, raw: i64, dur: i64, depth: u16) -> Ev {
    ev(name, EventKind::CpuOp, raw, dur, depth)
}

#[test]
fn bare_array_without_closing_bracket_loads_what_it_has() {
    let ev = three_events();
    // Cut inside the third element, right after the second element's comma, and right after
    // the second element.
    let full = format!("[{}]", ev.join(","));
    let third = full
        .find(r#"{"ph": "X", "cat": "cpu_op", "name": "c""#)
        .unwrap();
    let cuts = [
        full[..third + 20].to_string(),
        full[..third].to_string(),
        full[..third - 1].to_string(),
        format!("[{},\n{}\n", ev[0], ev[1]),
    ];
    for (i, text) in cuts.iter().enumerate() {
        let p = load_text(&format!("arrcut{i}"), text);
        assert_warnings(&p, &[("truncated", 1)]);
        assert_eq!(
            all_events(&p),
            vec![ev_("a", 100_000, 50_000, 0), ev_("b", 110_000, 10_000, 1)],
            "cut {i}: {text:?}"
        );
    }
}

#[test]
fn object_form_cut_inside_trace_events_loads_what_it_has() {
    let ev = three_events();
    let full = object_form(&ev);
    let third = full
        .find(r#"{"ph": "X", "cat": "cpu_op", "name": "c""#)
        .unwrap();
    for (i, cut) in [third + 33, third, third - 2].into_iter().enumerate() {
        let p = load_text(&format!("objcut{i}"), &full[..cut]);
        assert_warnings(&p, &[("truncated", 1)]);
        assert_eq!(
            all_events(&p),
            vec![ev_("a", 100_000, 50_000, 0), ev_("b", 110_000, 10_000, 1)],
            "cut at {cut}: {:?}",
            &full[..cut]
        );
    }
    // Cut after the event list, before the closing brace (and inside a later key).
    let after = format!("{{\"traceEvents\": [{}]", ev.join(","));
    let p = load_text("objcut_after", &after);
    assert_warnings(&p, &[("truncated", 1)]);
    assert_eq!(p.event_count(), 3);
    let inside_key = format!("{{\"traceEvents\": [{}], \"baseTimeNanosec", ev.join(","));
    let p = load_text("objcut_key", &inside_key);
    assert_warnings(&p, &[("truncated", 1)]);
    assert_eq!(p.event_count(), 3);
}

#[test]
fn gzip_is_detected_by_magic_bytes_not_by_extension() {
    let text = object_form(&three_events());
    let dir = fixture_dir("gzip");
    // gzip content with a misleading name.
    for name in ["trace.json", "trace.txt", "trace"] {
        let path = write(&dir, name, &gzip(text.as_bytes()));
        let p = import_file(&path, &Progress::new()).unwrap_or_else(|e| panic!("{e}"));
        assert!(p.source.compressed, "{name}");
        assert_eq!(p.event_count(), 3, "{name}");
        assert_warnings(&p, &[]);
    }
    // A `.gz` name on plain JSON.
    let path = write(&dir, "plain.json.gz", text.as_bytes());
    let p = import_file(&path, &Progress::new()).unwrap_or_else(|e| panic!("{e}"));
    assert!(!p.source.compressed);
    assert_eq!(p.event_count(), 3);
    assert_warnings(&p, &[]);
    // Corrupt gzip data after the magic: an error naming the file.
    let mut bad = gzip(text.as_bytes());
    for b in bad.iter_mut().skip(12).take(40) {
        *b ^= 0x5a;
    }
    let path = write(&dir, "corrupt.json.gz", &bad);
    let e = error_of(&path);
    assert!(e.contains("gzip"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A gzip file cut off while it was being written is a "file cut off before its closing
/// brackets": load the events that decompress completely, and warn.
#[test]
fn truncated_gzip_loads_what_it_has_and_warns() {
    let mut events = Vec::new();
    for i in 0..20_000 {
        events.push(x(
            &format!("op{i}"),
            "cpu_op",
            1,
            1,
            &(i * 10).to_string(),
            "5",
        ));
    }
    let text = object_form(&events);
    let gz = gzip(text.as_bytes());
    let cut = &gz[..gz.len() / 2];
    let p = load_bytes("gzcut", "trace.json.gz", cut);
    assert!(p.source.compressed);
    let n = p.event_count();
    assert!(n > 1000 && n < 20_000, "{n} events");
    assert_warnings(&p, &[("truncated", 1)]);
}

#[test]
fn leading_newline_whitespace_and_bom_are_accepted() {
    let body = object_form(&three_events());
    let arr = format!("[{}]", three_events().join(","));
    let cases: Vec<Vec<u8>> = vec![
        format!("\n{body}").into_bytes(),
        format!("\r\n \t\n{body}\n\n").into_bytes(),
        [b"\xEF\xBB\xBF".as_slice(), body.as_bytes()].concat(),
        [b"\xEF\xBB\xBF\n".as_slice(), arr.as_bytes()].concat(),
    ];
    for (i, bytes) in cases.iter().enumerate() {
        let p = load_bytes(&format!("lead{i}"), "trace.json", bytes);
        assert_warnings(&p, &[]);
        assert_eq!(p.event_count(), 3, "case {i}");
    }
}

#[test]
fn trailing_commas_and_empty_events() {
    let ev = three_events();
    let text = format!(
        "{{\"traceEvents\": [{}, , {{}}, {}, {{ }}, {},], \"displayTimeUnit\": \"ms\",}}",
        ev[0], ev[1], ev[2]
    );
    let p = load_text("commas", &text);
    assert_eq!(p.event_count(), 3);
    // Nothing is dropped silently: the two empty events are counted.
    assert_warnings(&p, &[("empty_event", 2)]);
    let arr = format!("[{},{},{},{{}},]", ev[0], ev[1], ev[2]);
    let p = load_text("commas_arr", &arr);
    assert_eq!(p.event_count(), 3);
    assert_warnings(&p, &[("empty_event", 1)]);
}

#[test]
fn extra_top_level_keys_in_any_order() {
    let ev = three_events().join(",");
    let text = format!(
        r#"{{"INFO": "2024-05-22 some log line with ] and }} in it",
  "metadata": {{"nested": [1, {{"k": "]}}\"["}}], "x": null}},
  "mast_job_name": "job", "host_name": "host-1",
  "schemaVersion": 1,
  "traceEvents": [{ev}],
  "otherData": {{"version": "x"}}, "stackFrames": {{}}, "samples": [],
  "systemTraceEvents": "raw text",
  "traceName": "t.json", "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1700000000000000000}}"#
    );
    let p = load_text("extra_keys", &text);
    assert_warnings(&p, &[]);
    assert_eq!(p.event_count(), 3);
    assert_eq!(p.origin.unix_ns, Some(1_700_000_000_000_000_000 + 100_000));
}

// ---------------------------------------------------------------------------------------------
// Pitfall 30/31: timestamps
// ---------------------------------------------------------------------------------------------

#[test]
fn base_time_nanoseconds_before_or_after_trace_events() {
    // Kineto 2024+: ts relative to baseTimeNanoseconds, "{us}.{ns:03}".
    let ev = [
        kernel("k", "4458676388068.751", "2.5", 1),
        x("op", "cpu_op", 10, 10, "4458676388060.001", "20.01"),
    ]
    .join(",");
    let base: i64 = 1_716_423_322_388_068_751 - 4_458_676_388_060_001;
    let before = format!(
        "{{\"baseTimeNanoseconds\": {base}, \"displayTimeUnit\": \"ms\", \"traceEvents\": [{ev}]}}"
    );
    let after = format!(
        "{{\"traceEvents\": [{ev}], \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": {base}}}"
    );
    for (label, text) in [("before", before), ("after", after)] {
        let p = load_text(label, &text);
        assert_warnings(&p, &[]);
        assert_eq!(p.origin.raw_ns, 4_458_676_388_060_001, "{label}");
        assert_eq!(p.origin.unix_ns, Some(1_716_423_322_388_068_751), "{label}");
        let k = gpu_track(&p, 0, 7, GpuLane::Work);
        assert_eq!(k.events.start_ns, vec![8_750], "{label}");
        assert_eq!(k.events.dur_ns, vec![2_500], "{label}");
        assert_eq!(thread(&p, "10", "10").events.dur_ns, vec![20_010]);
    }
}

#[test]
fn ts_as_int_decimals_and_string_are_exact() {
    let text = object_form(&[
        x("int", "cpu_op", 1, 1, "1000", "1"),
        x("three", "cpu_op", 1, 2, "1000.123", "0.001"),
        x("one", "cpu_op", 1, 3, "1000.5", "1.5"),
        x("two", "cpu_op", 1, 4, "1000.25", "22.51"),
        x("string", "cpu_op", 1, 5, "\"1000.125\"", "3"),
        x("padded_string", "cpu_op", 1, 6, "\" 1001 \"", "3"),
        x("int_ts_float_dur", "cpu_op", 1, 7, "1002", "68.0"),
        x("zero_frac", "cpu_op", 1, 8, "1003.000", "0.100"),
    ]);
    let p = load_text("ts", &text);
    assert_warnings(&p, &[]);
    let got: Vec<(String, i64, i64)> = all_events(&p)
        .into_iter()
        .map(|e| (e.name, e.raw_start_ns, e.dur_ns))
        .collect();
    let want: Vec<(String, i64, i64)> = [
        ("int", 1_000_000, 1_000),
        ("three", 1_000_123, 1),
        ("string", 1_000_125, 3_000),
        ("two", 1_000_250, 22_510),
        ("one", 1_000_500, 1_500),
        ("padded_string", 1_001_000, 3_000),
        ("int_ts_float_dur", 1_002_000, 68_000),
        ("zero_frac", 1_003_000, 100),
    ]
    .into_iter()
    .map(|(n, s, d)| (n.to_string(), s, d))
    .collect();
    assert_eq!(got, want);
    // Small relative times are not mistaken for Unix-epoch times.
    assert_eq!(p.origin.unix_ns, None);
}

#[test]
fn display_time_unit_does_not_rescale() {
    for unit in ["ns", "ms"] {
        let text = format!(
            "{{\"displayTimeUnit\": \"{unit}\", \"traceEvents\": [{}, {}]}}",
            x("a", "cpu_op", 1, 1, "1000", "2"),
            x("b", "cpu_op", 1, 1, "1010.5", "0.25")
        );
        let p = load_text(unit, &text);
        assert_warnings(&p, &[]);
        assert_eq!(
            all_events(&p),
            vec![ev_("a", 1_000_000, 2_000, 0), ev_("b", 1_010_500, 250, 0)],
            "displayTimeUnit {unit}"
        );
        assert!(
            p.source
                .details
                .iter()
                .any(|(k, v)| k == "displayTimeUnit" && v == unit)
        );
    }
}

#[test]
fn absolute_epoch_microseconds_with_three_decimals_are_exact_ns() {
    // Early-2024 Kineto: 19 significant digits, more than an f64 holds. The child nests
    // exactly (ends at the parent's end); through f64 it would appear to stick out.
    let text = format!(
        "{{\"displayTimeUnit\": \"ns\", \"traceEvents\": [{}, {}, {}]}}",
        x("parent", "cpu_op", 1, 1, "1712195495519689.047", "1.001"),
        x("child", "cpu_op", 1, 1, "1712195495519689.048", "1.000"),
        x("next", "cpu_op", 1, 1, "1712195495519690.049", "0.001"),
    );
    let p = load_text("epoch3", &text);
    assert_warnings(&p, &[]);
    assert_eq!(p.origin.raw_ns, 1_712_195_495_519_689_047);
    assert_eq!(p.origin.unix_ns, Some(1_712_195_495_519_689_047));
    let t = thread(&p, "1", "1");
    assert_eq!(t.events.start_ns, vec![0, 1, 1_002]);
    assert_eq!(t.events.dur_ns, vec![1_001, 1_000, 1]);
    assert_eq!(t.events.depth, vec![0, 1, 0]);
    assert_eq!(t.events.parent, vec![NO_PARENT, 0, NO_PARENT]);
    assert_eq!(t.events.end_ns(1), t.events.end_ns(0));
}

#[test]
fn zero_negative_and_missing_dur() {
    let text = object_form(&[
        x("zero", "cpu_op", 1, 1, "10", "0"),
        x("negative", "cpu_op", 1, 1, "20", "-5"),
        r#"{"ph": "X", "cat": "cpu_op", "name": "missing", "pid": 1, "tid": 1, "ts": 30}"#
            .to_string(),
        x("normal", "cpu_op", 1, 1, "40", "1"),
        kernel("k0", "50", "0", 1),
    ]);
    let p = load_text("dur", &text);
    // Every event is kept; negative and missing durations become 0 and are reported.
    assert_warnings(&p, &[("negative_dur", 1), ("missing_dur", 1)]);
    assert_eq!(
        events_of(&p, thread(&p, "1", "1")),
        vec![
            ev_("zero", 10_000, 0, 0),
            ev_("negative", 20_000, 0, 0),
            ev_("missing", 30_000, 0, 0),
            ev_("normal", 40_000, 1_000, 0),
        ]
    );
    // A zero-duration kernel is a kernel: counted, summing 0.
    assert_eq!(common::gpu_kind_totals(&p, EventKind::Kernel), (1, 0));
    let rows = gpu_activities(&p, TimeRange::ALL);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].stats.calls, 1);
}

// ---------------------------------------------------------------------------------------------
// Phases
// ---------------------------------------------------------------------------------------------

#[test]
fn begin_end_nest_per_thread() {
    let text = r#"{"traceEvents": [
  {"ph": "B", "cat": "cpu_op", "name": "outer", "pid": 1, "tid": 1, "ts": 10},
  {"ph": "B", "cat": "cpu_op", "name": "inner", "pid": 1, "tid": 1, "ts": 20},
  {"ph": "B", "cat": "user_annotation", "name": "other", "pid": 1, "tid": 2, "ts": 25},
  {"ph": "E", "pid": 1, "tid": 1, "ts": 30},
  {"ph": "E", "pid": 1, "tid": 2, "ts": 35},
  {"ph": "E", "pid": 1, "tid": 3, "ts": 40},
  {"ph": "B", "cat": "cpu_op", "name": "open", "pid": 1, "tid": 4, "ts": 45},
  {"ph": "E", "name": "outer", "pid": 1, "tid": 1, "ts": 50}
]}"#;
    let p = load_text("be", text);
    assert_warnings(&p, &[("unmatched_end", 1), ("unclosed_begin", 1)]);
    assert_eq!(
        events_of(&p, thread(&p, "1", "1")),
        vec![
            ev_("outer", 10_000, 40_000, 0),
            ev_("inner", 20_000, 10_000, 1)
        ]
    );
    assert_eq!(
        events_of(&p, thread(&p, "1", "2")),
        vec![ev("other", EventKind::UserAnnotation, 25_000, 10_000, 0)]
    );
    // The unmatched E made no event and no track.
    assert!(threads(&p, "1", "3").is_empty(), "{:?}", track_list(&p));
    // The unclosed B is extended to the end of the trace (50 µs).
    assert_eq!(
        events_of(&p, thread(&p, "1", "4")),
        vec![ev_("open", 45_000, 5_000, 0)]
    );
    assert_eq!(p.event_count(), 4);
}

/// "args of B and E merge" (Trace Event Format): a kernel written as a B/E pair keeps its
/// args, so its stream and correlation come from them as for an `X` kernel.
#[test]
fn begin_end_args_are_kept() {
    let text = r#"{"traceEvents": [
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"correlation": 3, "cbid": 211}},
  {"ph": "B", "cat": "kernel", "name": "k", "pid": 0, "tid": 1, "ts": 20, "args": {"device": 0, "stream": 9, "correlation": 3}},
  {"ph": "E", "pid": 0, "tid": 1, "ts": 30, "args": {"grid": [2, 1, 1]}}
]}"#;
    let p = load_text("be_args", text);
    assert_warnings(&p, &[]);
    let t = gpu_track(&p, 0, 9, GpuLane::Work);
    assert_eq!(
        events_of(&p, t),
        vec![ev("k", EventKind::Kernel, 20_000, 10_000, 0)]
    );
    let k = p.kernel_info(t, 0).expect("kernel info");
    assert_eq!(k.correlation, Some(3));
    assert_eq!(k.grid, Some([2, 1, 1]));
    assert_eq!(p.flows.len(), 1);
}

#[test]
fn instant_scopes() {
    let text = r#"{"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 100, "dur": 100},
  {"ph": "i", "s": "g", "name": "Iteration Start: PyTorch Profiler", "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": 100},
  {"ph": "I", "s": "p", "name": "process mark", "pid": 1, "tid": 1, "ts": 120},
  {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[mark]", "pid": 1, "tid": 1, "ts": 130, "args": {"Bytes": 512}},
  {"ph": "i", "name": "no scope", "pid": 1, "tid": 1, "ts": 140},
  {"ph": "I", "name": "legacy I", "pid": 1, "tid": 2, "ts": 150}
]}"#;
    let p = load_text("instants", text);
    assert_warnings(&p, &[]);
    let markers: Vec<(&str, i64)> = p
        .markers
        .iter()
        .map(|m| (m.name.as_str(), m.time_ns + p.origin.raw_ns))
        .collect();
    assert_eq!(
        markers,
        vec![
            ("Iteration Start: PyTorch Profiler", 100_000),
            ("process mark", 120_000)
        ]
    );
    let t1 = events_of(&p, thread(&p, "1", "1"));
    assert_eq!(t1.len(), 3);
    assert_eq!(
        t1[1..]
            .iter()
            .map(|e| (e.name.as_str(), e.kind, e.raw_start_ns, e.dur_ns))
            .collect::<Vec<_>>(),
        vec![
            ("[mark]", EventKind::Instant, 130_000, 0),
            ("no scope", EventKind::Instant, 140_000, 0)
        ]
    );
    let t2 = events_of(&p, thread(&p, "1", "2"));
    assert_eq!(t2, vec![ev("legacy I", EventKind::Instant, 150_000, 0, 0)]);
    // Global instants make no thread track of their own.
    assert!(threads(&p, "Traces", "Trace PyTorch Profiler").is_empty());
}

#[test]
fn counters_with_one_and_several_series() {
    let text = r#"{"traceEvents": [
  {"ph": "C", "name": "mem", "pid": 1, "ts": 20, "args": {"value": 10}},
  {"ph": "C", "name": "mem", "pid": 1, "ts": 10, "args": {"value": 5.5}},
  {"ph": "C", "name": "ctr", "pid": 1, "ts": 10, "args": {"a": 1, "b": "2"}},
  {"ph": "C", "name": "ctr", "pid": 1, "ts": 30, "args": {"a": 3, "b": 4}},
  {"ph": "C", "name": "ctr", "id": 5, "pid": 1, "ts": 30, "args": {"a": 7}},
  {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 10, "dur": 30}
]}"#;
    let p = load_text("counters", text);
    assert_warnings(&p, &[]);
    let mut got: Vec<(String, Vec<i64>, Vec<f64>)> = p
        .counters
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                c.time_ns.iter().map(|t| t + p.origin.raw_ns).collect(),
                c.value.clone(),
            )
        })
        .collect();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        got,
        vec![
            ("ctr 5 a".to_string(), vec![30_000], vec![7.0]),
            ("ctr a".to_string(), vec![10_000, 30_000], vec![1.0, 3.0]),
            ("ctr b".to_string(), vec![10_000, 30_000], vec![2.0, 4.0]),
            ("mem".to_string(), vec![10_000, 20_000], vec![5.5, 10.0]),
        ]
    );
    assert_eq!(p.event_count(), 1, "counters are not slices");
}

#[test]
fn metadata_names_sort_indices_and_trimming() {
    let text = r#"{"traceEvents": [
  {"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python3.10"}},
  {"ph": "M", "name": "process_labels", "pid": 100, "tid": 0, "args": {"labels": "CPU"}},
  {"ph": "M", "name": "process_sort_index", "pid": 100, "tid": 0, "args": {"sort_index": 100}},
  {"ph": "M", "name": "thread_name", "pid": 100, "tid": 481, "args": {"name": "thread 481 (python3)"}},
  {"ph": "M", "name": "thread_name", "pid": 100, "tid": 481, "args": {"name": "thread 481 (pt_autograd_0)  "}},
  {"ph": "M", "name": "thread_sort_index", "pid": 100, "tid": 481, "args": {"sort_index": 3}},
  {"ph": "M", "name": "thread_name", "pid": 100, "tid": 482, "args": {"name": "worker  "}},
  {"ph": "M", "name": "thread_sort_index", "pid": 100, "tid": 482, "args": {"sort_index": 1}},
  {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "python3.10"}},
  {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
  {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7 "}},
  {"ph": "M", "name": "process_name", "pid": 5, "tid": 0, "args": {"name": "python3.10"}},
  {"ph": "M", "name": "process_labels", "pid": 5, "tid": 0, "args": {"labels": "GPU 5"}},
  {"ph": "M", "name": "thread_name", "pid": 5, "tid": 7, "args": {"name": "stream 7 "}},
  {"ph": "M", "name": "process_name", "pid": "Allocators", "args": {"name": "Allocators"}},
  {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 100, "tid": 481, "ts": 10, "dur": 5},
  {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 100, "tid": 482, "ts": 10, "dur": 5}
]}"#;
    let text = format!(
        "{}, {}]}}",
        text.trim_end().trim_end_matches("]}"),
        kernel("k", "12", "1", 1)
    );
    let p = load_text("meta", &text);
    assert_warnings(&p, &[]);
    assert_eq!(
        p.process_name(warpscope_core::model::TraceId::Int(100)),
        Some("python3.10")
    );
    let t481 = thread(&p, "100", "481");
    assert!(
        t481.name.contains("thread 481 (python3)"),
        "{:?}",
        t481.name
    );
    assert!(
        t481.name.contains("thread 481 (pt_autograd_0)"),
        "{:?}",
        t481.name
    );
    assert_eq!(t481.name, t481.name.trim());
    assert_eq!(t481.sort_index, Some(3));
    let t482 = thread(&p, "100", "482");
    assert_eq!(t482.name, "worker");
    assert_eq!(t482.sort_index, Some(1));
    // Thread sort index orders the CPU tracks: 482 (1) before 481 (3).
    let order: Vec<&str> = p
        .tracks
        .iter()
        .filter(|t| !t.key.is_gpu())
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(order[0], "worker", "{order:?}");
    // The GPU stream is named without the trailing space; GPU 5 was declared but never used:
    // no track and no device for it.
    let gpu = gpu_track(&p, 0, 7, GpuLane::Work);
    assert_eq!(gpu.name, "stream 7");
    assert!(
        p.tracks.iter().all(|t| !t.events.is_empty()),
        "{:?}",
        track_list(&p)
    );
    assert!(p.devices.iter().all(|d| d.id != 5));
    assert_eq!(p.tracks.len(), 3, "{:?}", track_list(&p));
}

#[test]
fn tensorflow_metadata_without_ts_and_tid() {
    let text = r#"{"traceEvents": [
  {"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "Allocators"}},
  {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "/job:localhost/replica:0/task:0/device:CPU:0 Compute"}},
  {"ph": "X", "cat": "Op", "name": "MatMul", "pid": 1, "tid": 0, "ts": 1000, "dur": 5, "args": {"name": "dense/MatMul", "op": "MatMul"}}
]}"#;
    let p = load_text("tf_meta", text);
    assert_warnings(&p, &[]);
    assert_eq!(
        p.process_name(warpscope_core::model::TraceId::Int(1)),
        Some("/job:localhost/replica:0/task:0/device:CPU:0 Compute")
    );
    assert_eq!(
        p.process_name(warpscope_core::model::TraceId::Int(0)),
        Some("Allocators")
    );
    assert_eq!(p.event_count(), 1);
}

// ---------------------------------------------------------------------------------------------
// Pitfall 35: pid / tid
// ---------------------------------------------------------------------------------------------

#[test]
fn pid_and_tid_as_strings_empty_and_negative() {
    let text = r#"{"traceEvents": [
  {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 100, "dur": 50},
  {"ph": "X", "cat": "overhead", "name": "Activity Buffer Request", "pid": -1, "tid": -1, "ts": 110, "dur": 5},
  {"ph": "X", "cat": "cpu_op", "name": "empty ids", "pid": "", "tid": "", "ts": 120, "dur": 5},
  {"ph": "X", "cat": "Operator", "name": "aten::add", "pid": 25738, "tid": "25738", "ts": 130, "dur": 10},
  {"ph": "i", "s": "t", "name": "[mark]", "pid": 25738, "tid": 25738, "ts": 135},
  {"ph": "X", "cat": "Operator", "name": "aten::mul", "pid": "25738", "tid": 25738, "ts": 145, "dur": 1},
  {"ph": "X", "cat": "cpu_op", "name": "negative tid", "pid": 7, "tid": -481, "ts": 150, "dur": 1}
]}"#;
    let p = load_text("ids", text);
    assert_warnings(&p, &[]);
    assert_eq!(
        events_of(&p, thread(&p, "Spans", "PyTorch Profiler")),
        vec![ev(
            "PyTorch Profiler (0)",
            EventKind::Slice,
            100_000,
            50_000,
            0
        )]
    );
    assert_eq!(
        events_of(&p, thread(&p, "-1", "-1")),
        vec![ev(
            "Activity Buffer Request",
            EventKind::Overhead,
            110_000,
            5_000,
            0
        )]
    );
    assert_eq!(thread(&p, "", "").events.len(), 1);
    // "25738" and 25738 are one thread.
    let t = thread(&p, "25738", "25738");
    let names: Vec<String> = events_of(&p, t).into_iter().map(|e| e.name).collect();
    assert_eq!(names, vec!["aten::add", "[mark]", "aten::mul"]);
    assert!(matches!(
        t.key,
        TrackKey::Thread {
            pid: warpscope_core::model::TraceId::Int(25738),
            tid: warpscope_core::model::TraceId::Int(25738)
        }
    ));
    assert_eq!(thread(&p, "7", "-481").events.len(), 1);
    assert_eq!(p.tracks.len(), 5, "{:?}", track_list(&p));
}

#[test]
fn python_function_on_pid0_tid0_next_to_gpu0_stream7() {
    let text = object_form(&[
        r#"{"ph": "X", "cat": "python_function", "name": "torch/nn/modules/module.py(1736): _call_impl", "pid": 0, "tid": 0, "ts": 100, "dur": 50, "args": {"Python id": 1}}"#.to_string(),
        kernel("gemm", "110", "10", 1),
        kernel("gemm", "130", "10", 2),
        // A kernel with no args: device from pid, stream from the tid ("stream 7", 2021 style).
        r#"{"ph": "X", "cat": "Kernel", "name": "relu", "pid": 0, "tid": "stream 7", "ts": 145, "dur": 2}"#.to_string(),
    ]);
    let p = load_text("pid0", &text);
    assert_warnings(&p, &[]);
    let gpu = gpu_track(&p, 0, 7, GpuLane::Work);
    assert_eq!(
        events_of(&p, gpu)
            .iter()
            .map(|e| (e.name.as_str(), e.kind))
            .collect::<Vec<_>>(),
        vec![
            ("gemm", EventKind::Kernel),
            ("gemm", EventKind::Kernel),
            ("relu", EventKind::Kernel)
        ]
    );
    let cpu = thread(&p, "0", "0");
    assert_eq!(
        events_of(&p, cpu),
        vec![ev(
            "torch/nn/modules/module.py(1736): _call_impl",
            EventKind::PythonFunction,
            100_000,
            50_000,
            0
        )]
    );
    assert_eq!(p.tracks.len(), 2, "{:?}", track_list(&p));
    assert_eq!(common::kernel_streams(&p), vec![(0, 7)]);
}

// ---------------------------------------------------------------------------------------------
// Pitfalls 33/34: overlaps
// ---------------------------------------------------------------------------------------------

#[test]
fn overlapping_kernels_on_one_stream_are_both_kept() {
    let text = object_form(&[
        kernel("first", "100", "100", 1),
        kernel("second", "150", "100", 2),
        kernel("third", "300", "10", 3),
    ]);
    let p = load_text("gpu_overlap", &text);
    assert_warnings(&p, &[]);
    let gpu = gpu_track(&p, 0, 7, GpuLane::Work);
    assert_eq!(
        events_of(&p, gpu),
        vec![
            ev("first", EventKind::Kernel, 100_000, 100_000, 0),
            ev("second", EventKind::Kernel, 150_000, 100_000, 1),
            ev("third", EventKind::Kernel, 300_000, 10_000, 0),
        ]
    );
    assert_eq!(gpu.max_depth, 2);
    assert_eq!(analysis::gpu_total_ns(&p, TimeRange::ALL), 210_000);
    let rows = gpu_activities(&p, TimeRange::ALL);
    assert_eq!(rows.iter().map(|r| r.stats.calls).sum::<u64>(), 3);
}

#[test]
fn partial_overlaps_on_one_cpu_thread_are_kept_on_extra_rows() {
    let text = object_form(&[
        x("A", "user_annotation", 1, 1, "100", "100"),
        x("B", "cpu_op", 1, 1, "150", "100"),
        x("C", "python_function", 1, 1, "160", "10"),
        x("D", "cpu_op", 1, 1, "300", "1"),
    ]);
    let p = load_text("cpu_overlap", &text);
    assert_warnings(&p, &[]);
    let t = thread(&p, "1", "1");
    assert_eq!(t.events.depth, vec![0, 1, 2, 0]);
    assert_eq!(t.events.dur_ns, vec![100_000, 100_000, 10_000, 1_000]);
    assert_eq!(t.max_depth, 3);
}

// ---------------------------------------------------------------------------------------------
// Pitfall 37: flows
// ---------------------------------------------------------------------------------------------

fn flow_pairs(p: &Profile) -> Vec<(String, String, FlowKind)> {
    let mut v: Vec<_> = p
        .flows
        .iter()
        .map(|f| {
            let a = &p.tracks[f.from.track as usize];
            let b = &p.tracks[f.to.track as usize];
            (
                p.str(a.events.name[f.from.index as usize]).to_string(),
                p.str(b.events.name[f.to.index as usize]).to_string(),
                f.kind,
            )
        })
        .collect();
    v.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    v
}

fn s(name: &str, cat: &str, id: u64, pid: i64, tid: i64, ts: &str) -> String {
    format!(
        r#"{{"ph": "s", "cat": "{cat}", "name": "{name}", "id": {id}, "pid": {pid}, "tid": {tid}, "ts": {ts}}}"#
    )
}

fn f(name: &str, cat: &str, id: u64, pid: i64, tid: i64, ts: &str, bp_e: bool) -> String {
    let bp = if bp_e { r#", "bp": "e""# } else { "" };
    format!(
        r#"{{"ph": "f", "cat": "{cat}", "name": "{name}", "id": {id}, "pid": {pid}, "tid": {tid}, "ts": {ts}{bp}}}"#
    )
}

#[test]
fn fwdbwd_flows_with_bp_e_and_lone_ends() {
    let text = object_form(&[
        x("fwd", "cpu_op", 1, 1, "100", "50"),
        x("fwd_child", "cpu_op", 1, 1, "110", "10"),
        x("bwd", "cpu_op", 1, 2, "300", "50"),
        x("later", "cpu_op", 1, 2, "400", "5"),
        s("fwdbwd", "fwdbwd", 1, 1, 1, "100"),
        f("fwdbwd", "fwdbwd", 1, 1, 2, "300", true),
        // Without bp:e the end binds to the next slice starting at or after its ts.
        s("fwdbwd", "fwdbwd", 2, 1, 1, "140"),
        f("fwdbwd", "fwdbwd", 2, 1, 2, "360", false),
        // A lone f and a lone s: normal, not an error.
        f("fwdbwd", "fwdbwd", 3, 1, 2, "310", true),
        s("fwdbwd", "fwdbwd", 4, 1, 1, "115"),
        // The same id in another category is another flow.
        s("other", "my_flow", 1, 1, 2, "320"),
        f("other", "my_flow", 1, 1, 1, "112", true),
    ]);
    let p = load_text("fwdbwd", &text);
    assert_warnings(&p, &[]);
    assert_eq!(
        flow_pairs(&p),
        vec![
            ("bwd".to_string(), "fwd_child".to_string(), FlowKind::Other),
            (
                "fwd".to_string(),
                "bwd".to_string(),
                FlowKind::ForwardBackward
            ),
            (
                "fwd".to_string(),
                "later".to_string(),
                FlowKind::ForwardBackward
            ),
        ]
    );
}

/// The Trace Event Format does not require events to be sorted; a flow whose `f` comes first
/// in the file is still a flow.
#[test]
fn flow_end_before_start_in_file_order_still_links() {
    let text = object_form(&[
        f("fwdbwd", "fwdbwd", 1, 1, 2, "300", true),
        x("bwd", "cpu_op", 1, 2, "300", "50"),
        x("fwd", "cpu_op", 1, 1, "100", "50"),
        s("fwdbwd", "fwdbwd", 1, 1, 1, "100"),
    ]);
    let p = load_text("flow_order", &text);
    assert_warnings(&p, &[]);
    assert_eq!(
        flow_pairs(&p),
        vec![(
            "fwd".to_string(),
            "bwd".to_string(),
            FlowKind::ForwardBackward
        )]
    );
}

#[test]
fn ac2g_flows_link_launches_without_correlation_args() {
    // Legacy autograd / generic writers: no args.correlation; the s/f pair is the only link.
    let text = object_form(&[
        x("cudaLaunchKernel", "cuda_runtime", 1, 1, "100", "10"),
        x("cudaEventRecord", "cuda_runtime", 1, 1, "120", "2"),
        r#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 130, "dur": 5}"#
            .to_string(),
        s("ac2g", "ac2g", 42, 1, 1, "100"),
        f("ac2g", "ac2g", 42, 0, 7, "130", true),
        // Lone f on the CPU call that launched nothing.
        f("ac2g", "ac2g", 43, 1, 1, "120", true),
    ]);
    let p = load_text("ac2g", &text);
    assert_warnings(&p, &[]);
    assert_eq!(
        flow_pairs(&p),
        vec![(
            "cudaLaunchKernel".to_string(),
            "k".to_string(),
            FlowKind::Launch
        )]
    );
}

#[test]
fn launch_links_from_correlation_are_not_duplicated_by_flows() {
    let rt = |name: &str, ts: &str, corr: u64| {
        format!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "{name}", "pid": 1, "tid": 1, "ts": {ts}, "dur": 5, "args": {{"cbid": 211, "correlation": {corr}, "External id": 1}}}}"#
        )
    };
    let text = object_form(&[
        x("aten::mm", "cpu_op", 1, 1, "95", "40"),
        rt("cudaLaunchKernel", "100", 11),
        rt("cudaLaunchKernel", "110", 12),
        kernel("k", "120", "10", 11),
        kernel("k", "131", "10", 12),
        s("ac2g", "ac2g", 11, 1, 1, "100"),
        f("ac2g", "ac2g", 11, 0, 7, "120", true),
        s("ac2g", "ac2g", 12, 1, 1, "110"),
        f("ac2g", "ac2g", 12, 0, 7, "131", true),
    ]);
    let p = load_text("corr", &text);
    assert_warnings(&p, &[]);
    assert_eq!(
        flow_pairs(&p),
        vec![
            (
                "cudaLaunchKernel".to_string(),
                "k".to_string(),
                FlowKind::Launch
            ),
            (
                "cudaLaunchKernel".to_string(),
                "k".to_string(),
                FlowKind::Launch
            ),
        ]
    );
    // The GPU time of the kernels is attributed to the operator that launched them.
    let ops = analysis::cpu_ops(&p, TimeRange::ALL);
    assert_eq!(ops.len(), 1);
    assert_eq!(ops[0].gpu_ns, 20_000);
    assert_eq!(ops[0].self_ns, 30_000);
}

#[test]
fn v2_flows_bind_id_flow_in_flow_out() {
    let text = r#"{"traceEvents": [
  {"ph": "X", "name": "producer", "cat": "c", "pid": 1, "tid": 1, "ts": 100, "dur": 20, "bind_id": "0xa", "flow_out": true},
  {"ph": "X", "name": "consumer", "cat": "c", "pid": 1, "tid": 2, "ts": 130, "dur": 20, "bind_id": "0xa", "flow_in": true},
  {"ph": "X", "name": "unrelated", "cat": "c", "pid": 1, "tid": 2, "ts": 160, "dur": 20, "bind_id": 99, "flow_in": true}
]}"#;
    let p = load_text("v2", text);
    assert_warnings(&p, &[]);
    assert_eq!(
        flow_pairs(&p),
        vec![(
            "producer".to_string(),
            "consumer".to_string(),
            FlowKind::Other
        )]
    );
}

/// A v2 flow belongs to the event that carries `bind_id`, not to whatever event happens to
/// enclose its start time: a child starting at the same timestamp must not steal it.
#[test]
fn v2_flow_binds_to_the_event_that_carries_it() {
    let text = r#"{"traceEvents": [
  {"ph": "X", "name": "producer", "cat": "c", "pid": 1, "tid": 1, "ts": 100, "dur": 20, "bind_id": 5, "flow_out": true},
  {"ph": "X", "name": "producer_child", "cat": "c", "pid": 1, "tid": 1, "ts": 100, "dur": 5},
  {"ph": "X", "name": "consumer", "cat": "c", "pid": 1, "tid": 2, "ts": 130, "dur": 20, "bind_id": 5, "flow_in": true},
  {"ph": "X", "name": "consumer_child", "cat": "c", "pid": 1, "tid": 2, "ts": 130, "dur": 5}
]}"#;
    let p = load_text("v2_child", text);
    assert_warnings(&p, &[]);
    assert_eq!(
        flow_pairs(&p),
        vec![(
            "producer".to_string(),
            "consumer".to_string(),
            FlowKind::Other
        )]
    );
}

/// File order is not time order: a v2 `flow_in` event written before its `flow_out` event.
#[test]
fn v2_flow_in_before_flow_out_in_file_order() {
    let text = r#"{"traceEvents": [
  {"ph": "X", "name": "consumer", "cat": "c", "pid": 1, "tid": 2, "ts": 130, "dur": 20, "bind_id": 5, "flow_in": true},
  {"ph": "X", "name": "producer", "cat": "c", "pid": 1, "tid": 1, "ts": 100, "dur": 20, "bind_id": 5, "flow_out": true}
]}"#;
    let p = load_text("v2_order", text);
    assert_warnings(&p, &[]);
    assert_eq!(
        flow_pairs(&p),
        vec![(
            "producer".to_string(),
            "consumer".to_string(),
            FlowKind::Other
        )]
    );
}

// ---------------------------------------------------------------------------------------------
// Pitfalls 38/39: categories
// ---------------------------------------------------------------------------------------------

#[test]
fn legacy_and_modern_categories_case_insensitive() {
    let gpu = |cat: &str, name: &str, ts: u32, bytes: u64| {
        format!(
            r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 0, "tid": 7, "ts": {ts}, "dur": 1, "args": {{"device": 0, "stream": 7, "bytes": {bytes}}}}}"#
        )
    };
    let text = format!(
        "{{\"schemaVersion\": 1, \"traceEvents\": [{}]}}",
        [
            gpu("Kernel", "k1", 10, 0),
            gpu("KERNEL", "k2", 20, 0),
            gpu("kernel", "k3", 30, 0),
            gpu("Memcpy", "Memcpy HtoD (Pageable -> Device)", 40, 64),
            gpu("GPU_MEMCPY", "Memcpy DtoH (Device -> Pinned)", 50, 32),
            gpu("Memset", "Memset (Device)", 60, 16),
            gpu("gpu_memset", "Memset (Device)", 70, 16),
            x("cudaLaunchKernel", "Runtime", 1, 1, "10", "1"),
            x("hipLaunchKernel", "cuda_runtime", 1, 1, "12", "1"),
            x("cuLaunchKernel", "CUDA_DRIVER", 1, 1, "14", "1"),
            x("aten::add", "Operator", 1, 1, "16", "1"),
            x("aten::mul", "CPU_OP", 1, 1, "18", "1"),
            x("ProfilerStep#1", "User_Annotation", 1, 2, "5", "100"),
            x("fn", "Python", 1, 3, "5", "1"),
        ]
        .join(",")
    );
    let p = load_text("cats", &text);
    assert_warnings(&p, &[]);
    assert_eq!(common::gpu_kind_totals(&p, EventKind::Kernel), (3, 3_000));
    assert_eq!(common::gpu_kind_totals(&p, EventKind::Memcpy), (2, 2_000));
    assert_eq!(common::gpu_kind_totals(&p, EventKind::Memset), (2, 2_000));
    let copies: Vec<(String, u64, u64)> = copies_by_kind(&p, TimeRange::ALL)
        .into_iter()
        .map(|r| (r.kind, r.calls, r.bytes))
        .collect();
    let mut copies = copies;
    copies.sort();
    assert_eq!(
        copies,
        vec![
            ("DtoH".to_string(), 1, 32),
            ("HtoD".to_string(), 1, 64),
            ("Memset".to_string(), 2, 32),
        ]
    );
    let cpu: Vec<(String, EventKind)> = events_of(&p, thread(&p, "1", "1"))
        .into_iter()
        .map(|e| (e.name, e.kind))
        .collect();
    assert_eq!(
        cpu,
        vec![
            ("cudaLaunchKernel".to_string(), EventKind::Runtime),
            ("hipLaunchKernel".to_string(), EventKind::Runtime),
            ("cuLaunchKernel".to_string(), EventKind::Driver),
            ("aten::add".to_string(), EventKind::CpuOp),
            ("aten::mul".to_string(), EventKind::CpuOp),
        ]
    );
    assert_eq!(
        thread(&p, "1", "2").events.kind,
        vec![EventKind::UserAnnotation]
    );
    assert_eq!(
        thread(&p, "1", "3").events.kind,
        vec![EventKind::PythonFunction]
    );
    // Memory kinds from the memcpy name.
    let gpu_t = gpu_track(&p, 0, 7, GpuLane::Work);
    let infos: Vec<_> = (0..gpu_t.events.len())
        .filter_map(|i| p.copy_info(gpu_t, i))
        .filter(|c| c.kind == CopyKind::HtoD)
        .collect();
    assert_eq!(infos.len(), 1);
    assert_eq!(infos[0].src_kind, Some(MemoryKind::Pageable));
    assert_eq!(infos[0].dst_kind, Some(MemoryKind::Device));
}

#[test]
fn gpu_annotations_are_not_gpu_time() {
    let text = object_form(&[
        kernel("k", "100", "10", 1),
        r#"{"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "pid": 0, "tid": 7, "ts": 99.999, "dur": 10.002, "args": {"External id": 1}}"#.to_string(),
    ]);
    let p = load_text("gpu_annot", &text);
    assert_warnings(&p, &[]);
    assert_eq!(analysis::gpu_total_ns(&p, TimeRange::ALL), 10_000);
    let ann = gpu_track(&p, 0, 7, GpuLane::Annotations);
    assert_eq!(ann.events.kind, vec![EventKind::GpuAnnotation]);
    assert_eq!(ann.events.dur_ns, vec![10_002]);
    assert!(
        gpu_activities(&p, TimeRange::ALL)
            .iter()
            .all(|r| r.kind == ActivityKind::Kernel && r.name == "k")
    );
}

#[test]
fn kernel_args_are_kept() {
    let text = object_form(&[
        r#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100, "dur": 10,
            "args": {"External id": 77, "queued": 0, "device": 0, "context": 1, "stream": 7,
                     "correlation": 1234, "registers per thread": 64, "shared memory": 4096,
                     "blocks per SM": 0.5, "warps per SM": 4.0, "grid": [80, 2, 1],
                     "block": [256, 1, 1], "est. achieved occupancy %": 25}}"#
            .to_string(),
    ]);
    let p = load_text("kargs", &text);
    assert_warnings(&p, &[]);
    let t = gpu_track(&p, 0, 7, GpuLane::Work);
    let k = p.kernel_info(t, 0).expect("kernel info");
    assert_eq!(k.grid, Some([80, 2, 1]));
    assert_eq!(k.block, Some([256, 1, 1]));
    assert_eq!(k.registers_per_thread, Some(64));
    assert_eq!(k.shared_memory_bytes, Some(4096));
    assert_eq!(k.blocks_per_sm, Some(0.5));
    assert_eq!(k.warps_per_sm, Some(4.0));
    assert_eq!(k.occupancy_pct, Some(25.0));
    assert_eq!(k.correlation, Some(1234));
    assert_eq!(k.external_id, Some(77));
    assert!(matches!(t.key, TrackKey::Gpu { context: 1, .. }));
}

#[test]
fn runtime_named_invalid_is_named_from_its_cbid() {
    let text = object_form(&[
        r#"{"ph": "X", "cat": "cuda_runtime", "name": "INVALID", "pid": 1, "tid": 1, "ts": 100, "dur": 2, "args": {"cbid": 409, "correlation": 5}}"#.to_string(),
        r#"{"ph": "X", "cat": "cuda_runtime", "name": "INVALID", "pid": 1, "tid": 1, "ts": 110, "dur": 2, "args": {"cbid": 409, "correlation": 6}}"#.to_string(),
        r#"{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 120, "dur": 2, "args": {"cbid": 211, "correlation": 7}}"#.to_string(),
    ]);
    let p = load_text("invalid", &text);
    assert_warnings(&p, &[("invalid_api_name", 2)]);
    let names: Vec<String> = events_of(&p, thread(&p, "1", "1"))
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(
        names,
        vec![
            "cudaStreamGetCaptureInfo_v2",
            "cudaStreamGetCaptureInfo_v2",
            "cudaLaunchKernel"
        ]
    );
    let api = analysis::api_calls(&p, TimeRange::ALL);
    assert!(api.iter().all(|r| r.name != "INVALID"), "{api:?}");
}

#[test]
fn unknown_category_in_a_kineto_trace_is_counted() {
    let text = object_form(&[
        x("a", "brand_new_cat", 1, 1, "100", "1"),
        x("b", "brand_new_cat", 1, 1, "110", "1"),
        x("c", "Brand_New_Cat", 1, 1, "120", "1"),
        x("d", "another_cat", 1, 1, "130", "1"),
        x("e", "cpu_op", 1, 1, "140", "1"),
    ]);
    let p = load_text("unknown_cat", &text);
    // Shown as plain slices, each category reported with its count.
    assert_warnings(
        &p,
        &[
            ("unknown_category:brand_new_cat", 2),
            ("unknown_category:Brand_New_Cat", 1),
            ("unknown_category:another_cat", 1),
        ],
    );
    assert_eq!(p.event_count(), 5);
    let kinds = &thread(&p, "1", "1").events.kind;
    assert_eq!(kinds.iter().filter(|k| **k == EventKind::Slice).count(), 4);
    // In a generic (non-Kineto) Chrome trace, categories are free-form: no warning.
    let generic = format!("[{}]", x("a", "brand_new_cat", 1, 1, "100", "1"));
    let p = load_text("generic_cat", &generic);
    assert_warnings(&p, &[]);
    assert_eq!(p.event_count(), 1);
}

// ---------------------------------------------------------------------------------------------
// Pitfall 40: invalid JSON quirks
// ---------------------------------------------------------------------------------------------

#[test]
fn bare_na_nan_infinity_in_kernel_args() {
    let text = object_form(&[r#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100, "dur": 10,
        "args": {"device": 0, "stream": 7, "est. achieved occupancy %": N/A, "blocks per SM": NaN, "warps per SM": -Infinity, "queued": Infinity}}"#
        .to_string()]);
    let p = load_text("na_kernel", &text);
    assert_warnings(&p, &[("lenient_tokens", 4)]);
    let t = gpu_track(&p, 0, 7, GpuLane::Work);
    let k = p.kernel_info(t, 0).unwrap();
    assert_eq!(k.occupancy_pct, None);
    assert_eq!(k.blocks_per_sm, None);
    assert_eq!(k.warps_per_sm, None);
}

#[test]
fn bare_na_as_an_event_field() {
    let text = object_form(&[
        r#"{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 100, "dur": N/A}"#
            .to_string(),
        x("b", "cpu_op", 1, 1, "200", "1"),
    ]);
    let p = load_text("na_field", &text);
    assert_warnings(&p, &[("lenient_tokens", 1), ("missing_dur", 1)]);
    assert_eq!(p.event_count(), 2);
}

/// The tokens are "read as null and counted" wherever they are, also in the args of events
/// whose args the importer does not otherwise read.
#[test]
fn bare_tokens_in_args_that_are_not_read_do_not_break_loading() {
    // warpscope counts the invalid tokens in the fields it reads; the args of CPU operators are
    // skipped without being read, so tokens there change nothing and are not reported.
    let text = object_form(&[
        r#"{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 100, "dur": 1, "args": {"Input Dims": N/A, "Sequence number": NaN}}"#
            .to_string(),
    ]);
    let p = load_text("na_cpu", &text);
    assert_eq!(p.event_count(), 1);
    assert_warnings(&p, &[]);
}

/// Raw control characters inside strings are invalid JSON: load the event and report it.
#[test]
fn raw_control_characters_in_strings_load_with_a_warning() {
    let text = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\tb\u{1}c\nd\", \"pid\": 1, \"tid\": 1, \"ts\": 100, \"dur\": 1}]}";
    let p = load_text("ctrl", text);
    assert_eq!(p.event_count(), 1);
    let t = thread(&p, "1", "1");
    assert_eq!(p.str(t.events.name[0]), "a\tb\u{1}c\nd");
    assert_eq!(
        p.warnings.len(),
        1,
        "expected one warning counting the string with control characters:\n{}",
        warnings_text(&p)
    );
    assert_eq!(p.warnings[0].count, 1);
}

#[test]
fn raw_control_characters_do_not_break_loading() {
    // What is guaranteed today: the event loads with its name intact.
    let text = "[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\tb\u{1}c\", \"pid\": 1, \"tid\": 1, \"ts\": 100, \"dur\": 1}]";
    let p = load_text("ctrl_load", text);
    assert_eq!(p.event_count(), 1);
    assert_eq!(p.str(thread(&p, "1", "1").events.name[0]), "a\tb\u{1}c");
}

#[test]
fn invalid_utf8_in_a_name_is_repaired_and_counted() {
    let mut bytes =
        b"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ker".to_vec();
    bytes.extend_from_slice(b"\xff\xfe");
    bytes.extend_from_slice(
        b"nel\", \"pid\": 1, \"tid\": 1, \"ts\": 100, \"dur\": 1}, {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ok \xc3\xa9\", \"pid\": 1, \"tid\": 1, \"ts\": 200, \"dur\": 1}]}",
    );
    let p = load_bytes("utf8", "trace.json", &bytes);
    assert_warnings(&p, &[("invalid_utf8", 1)]);
    let names: Vec<String> = events_of(&p, thread(&p, "1", "1"))
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(names, vec!["ker\u{FFFD}\u{FFFD}nel", "ok é"]);
}

#[test]
fn escaped_strings_are_decoded() {
    let text = r#"[{"ph": "X", "cat": "cpu_op", "name": "a\"b\\c\u00e9\ud83d\ude00\/", "pid": 1, "tid": 1, "ts": 100, "dur": 1}]"#;
    let p = load_text("escapes", text);
    assert_warnings(&p, &[]);
    assert_eq!(p.str(thread(&p, "1", "1").events.name[0]), "a\"b\\cé😀/");
}

#[test]
fn broken_event_is_skipped_and_counted() {
    let text = object_form(&[
        x("a", "cpu_op", 1, 1, "100", "1"),
        r#"{"ph": "X", "cat": "cpu_op", "name": "broken", "pid": 1, "tid": 1, "ts": , "dur": 1}"#
            .to_string(),
        x("b", "cpu_op", 1, 1, "200", "1"),
    ]);
    let p = load_text("broken", &text);
    assert_warnings(&p, &[("bad_event_syntax", 1)]);
    let names: Vec<String> = all_events(&p).into_iter().map(|e| e.name).collect();
    assert_eq!(names, vec!["a", "b"]);
    let w = p
        .warnings
        .iter()
        .find(|w| w.code == "bad_event_syntax")
        .unwrap();
    assert!(w.message.contains("line 3"), "{}", w.message);
}

/// A lenient token counted before a broken event in the same block must still be reported.
#[test]
fn counts_survive_a_broken_event_in_the_same_block() {
    let text = object_form(&[
        r#"{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 100, "dur": NaN}"#
            .to_string(),
        r#"{"ph": "X", "cat": "cpu_op", "name": "broken", "pid": 1, "tid": 1, "ts": , "dur": 1}"#
            .to_string(),
        x("b", "cpu_op", 1, 1, "200", "1"),
    ]);
    let p = load_text("broken_counts", &text);
    assert_eq!(p.event_count(), 2);
    assert_warnings(
        &p,
        &[
            ("bad_event_syntax", 1),
            ("lenient_tokens", 1),
            ("missing_dur", 1),
        ],
    );
}

#[test]
fn non_object_elements_are_skipped_and_counted() {
    let text = format!(
        "[1, \"x\", null, [2], {}, true]",
        x("a", "cpu_op", 1, 1, "100", "1")
    );
    let p = load_text("nonobj", &text);
    assert_warnings(&p, &[("non_object_event", 5)]);
    assert_eq!(p.event_count(), 1);
}

// ---------------------------------------------------------------------------------------------
// Pitfall 41: outlier instants
// ---------------------------------------------------------------------------------------------

#[test]
fn record_window_end_far_in_the_future_does_not_stretch_the_span() {
    let day_us: i64 = 24 * 3600 * 1_000_000;
    let text = object_form(&[
        x("a", "cpu_op", 1, 1, "1000", "500"),
        kernel("k", "1200", "800", 1),
        format!(
            r#"{{"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": {}}}"#,
            1000 + 2 * day_us
        ),
    ]);
    let p = load_text("rwe", &text);
    assert_warnings(&p, &[]);
    assert_eq!(p.span_ns(), Some((0, 1_000_000)));
    assert_eq!(p.markers.len(), 1);
    assert_eq!(p.markers[0].name, "Record Window End");
    assert_eq!(p.markers[0].time_ns, 2 * day_us * 1000);
    assert_eq!(p.origin.raw_ns, 1_000_000);
}

/// `Profile::span_ns` promises that instants are left out "so an outlier marker cannot stretch
/// it"; a thread-scoped outlier instant must not stretch it either.
#[test]
fn thread_scoped_outlier_instant_does_not_stretch_the_span() {
    let day_us: i64 = 24 * 3600 * 1_000_000;
    let text = object_form(&[
        x("a", "cpu_op", 1, 1, "1000", "500"),
        format!(
            r#"{{"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "Record Window End", "pid": 1, "tid": 1, "ts": {}}}"#,
            1000 + 2 * day_us
        ),
    ]);
    let p = load_text("rwe_t", &text);
    assert_warnings(&p, &[]);
    assert_eq!(p.span_ns(), Some((0, 500_000)));
}

// ---------------------------------------------------------------------------------------------
// Pitfall 42: TensorFlow 1.x duplicated device events
// ---------------------------------------------------------------------------------------------

#[test]
fn tensorflow1_stream_all_and_memcpy_twins_are_dropped() {
    let m = |pid: u32, name: &str| {
        format!(
            r#"{{"name": "process_name", "ph": "M", "pid": {pid}, "args": {{"name": "{name}"}}}}"#
        )
    };
    let op = |pid: u32, tid: u32, name: &str, ts: u32, dur: u32| {
        format!(
            r#"{{"ph": "X", "cat": "Op", "name": "{name}", "pid": {pid}, "tid": {tid}, "ts": {ts}, "dur": {dur}, "args": {{"name": "node/{name}", "op": "{name}"}}}}"#
        )
    };
    let events = [
        m(0, "Allocators"),
        m(1, "/device:GPU:0/stream:all Compute"),
        m(2, "/device:GPU:0/memcpy Compute"),
        m(3, "/device:GPU:0/stream:13 Compute"),
        m(4, "/device:GPU:0/stream:14 Compute"),
        m(5, "/job:localhost/replica:0/task:0/device:GPU:0 Compute"),
        m(6, "/device:GPU:0/stream:13 Tensors"),
        m(7, "/device:GPU:0/stream:15 Compute"),
        // Kernels on stream 13, each also on stream:all.
        op(3, 0, "Conv2D", 100, 10),
        op(1, 0, "Conv2D", 100, 10),
        op(3, 0, "MatMul", 120, 5),
        op(1, 0, "MatMul", 120, 5),
        op(3, 0, "Conv2D", 130, 7),
        op(1, 1, "Conv2D", 130, 7),
        // A copy on stream 14 named MEMCPYHtoD, and one on stream 13 named after its op.
        op(4, 0, "MEMCPYHtoD", 90, 4),
        op(2, 0, "MEMCPYHtoD", 90, 4),
        op(3, 0, "Assign", 150, 2),
        op(2, 0, "Assign", 150, 2),
        // An event on stream 15 with no twin.
        op(7, 0, "Mystery", 160, 3),
        // The op-level view on the GPU:0 Compute pid and a flow.
        op(5, 0, "Conv2D", 95, 3),
        r#"{"ph": "s", "cat": "DataFlow", "name": "t", "id": 1, "pid": 5, "tid": 0, "ts": 95}"#
            .to_string(),
        r#"{"ph": "t", "cat": "DataFlow", "name": "t", "id": 1, "pid": 5, "tid": 0, "ts": 96}"#
            .to_string(),
    ];
    let p = load_text(
        "tf1",
        &format!("{{\"traceEvents\": [{}]}}", events.join(",\n")),
    );
    assert_eq!(p.source.tool, "TensorFlow 1.x timeline");
    assert_warnings(&p, &[("tf_unmatched", 1)]);
    let lanes: Vec<(u32, u64)> = p
        .tracks
        .iter()
        .filter_map(|t| match t.key {
            TrackKey::Gpu { device, stream, .. } => Some((device, stream)),
            _ => None,
        })
        .collect();
    assert_eq!(lanes, vec![(0, 13), (0, 14), (0, 15)]);
    let s13 = events_of(&p, gpu_track(&p, 0, 13, GpuLane::Work));
    assert_eq!(
        s13.iter()
            .map(|e| (e.name.as_str(), e.kind, e.depth))
            .collect::<Vec<_>>(),
        vec![
            ("Conv2D", EventKind::Kernel, 0),
            ("MatMul", EventKind::Kernel, 0),
            ("Conv2D", EventKind::Kernel, 0),
            ("Assign", EventKind::Memcpy, 0),
        ]
    );
    // Counted once each.
    assert_eq!(common::gpu_kind_totals(&p, EventKind::Kernel), (4, 25_000));
    assert_eq!(common::gpu_kind_totals(&p, EventKind::Memcpy), (2, 6_000));
    let mut copies: Vec<(String, u64)> = copies_by_kind(&p, TimeRange::ALL)
        .into_iter()
        .map(|r| (r.kind, r.calls))
        .collect();
    copies.sort();
    assert_eq!(
        copies,
        vec![("HtoD".to_string(), 1), ("Unknown".to_string(), 1)]
    );
    // Twin pids and per-stream pids leave no thread tracks behind; the op-level view stays.
    let thread_pids: Vec<String> = p
        .tracks
        .iter()
        .filter_map(|t| match t.key {
            TrackKey::Thread { pid, .. } => Some(p.id_text(pid)),
            _ => None,
        })
        .collect();
    assert_eq!(thread_pids, vec!["5".to_string()]);
    assert_eq!(thread(&p, "5", "0").events.len(), 1);
    assert!(
        p.tracks.iter().all(|t| !t.events.is_empty()),
        "{:?}",
        track_list(&p)
    );
}

/// A per-stream pid whose events use several tids becomes one GPU lane, with no empty thread
/// track left behind (pitfall 36: hide empty tracks).
#[test]
fn tensorflow1_stream_pid_with_several_tids_leaves_no_empty_track() {
    let text = r#"{"traceEvents": [
  {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "/device:GPU:0/stream:all Compute"}},
  {"name": "process_name", "ph": "M", "pid": 3, "args": {"name": "/device:GPU:0/stream:13 Compute"}},
  {"ph": "X", "cat": "Op", "name": "Conv2D", "pid": 3, "tid": 0, "ts": 100, "dur": 10},
  {"ph": "X", "cat": "Op", "name": "Conv2D", "pid": 1, "tid": 0, "ts": 100, "dur": 10},
  {"ph": "X", "cat": "Op", "name": "Relu", "pid": 3, "tid": 1, "ts": 105, "dur": 10},
  {"ph": "X", "cat": "Op", "name": "Relu", "pid": 1, "tid": 1, "ts": 105, "dur": 10}
]}"#;
    let p = load_text("tf1_tids", text);
    assert_warnings(&p, &[]);
    assert_eq!(common::gpu_kind_totals(&p, EventKind::Kernel), (2, 20_000));
    let s13 = gpu_track(&p, 0, 13, GpuLane::Work);
    assert_eq!(s13.events.depth, vec![0, 1]);
    assert_eq!(p.tracks.len(), 1, "{:?}", track_list(&p));
}

// ---------------------------------------------------------------------------------------------
// Pitfall 43: size, streaming across blocks
// ---------------------------------------------------------------------------------------------

#[test]
fn many_events_across_block_boundaries_with_tricky_strings() {
    let n = 40_000;
    let mut text = String::from("{\"traceEvents\": [\n");
    for i in 0..n {
        if i > 0 {
            text.push_str(",\n");
        }
        text.push_str(&format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "op]}}{{[\"{}\\", "pid": 1, "tid": {}, "ts": {}.{:03}, "dur": 0.5, "args": {{"s": "}}]],{{", "n": [[], {{}}]}}}}"#,
            i % 7,
            i % 3,
            i,
            i % 1000
        ));
    }
    text.push_str("\n], \"traceName\": \"big\"}");
    assert!(text.len() > 3 * (1 << 20), "spans several 1 MiB blocks");
    let p = load_text("big", &text);
    assert_warnings(&p, &[]);
    assert_eq!(p.event_count(), n);
    assert_eq!(p.tracks.len(), 3);
    let t = thread(&p, "1", "1");
    assert_eq!(t.events.len(), n / 3);
    assert_eq!(p.str(t.events.name[0]), "op]}{[\"1\\");
    assert!(t.events.dur_ns.iter().all(|&d| d == 500));
    // Cut the same text in the middle of an event of the second block.
    let cut = text.len() / 2;
    // Every event, and nothing else, ends with `"n": [[], {}]}}`.
    let complete = text[..cut].matches(r#""n": [[], {}]}}"#).count();
    assert!(complete > n / 3 && complete < n);
    let p = load_text("big_cut", &text[..cut]);
    assert_warnings(&p, &[("truncated", 1)]);
    assert_eq!(p.event_count(), complete);
}

// ---------------------------------------------------------------------------------------------
// Malformed input: errors
// ---------------------------------------------------------------------------------------------

#[test]
fn not_json_is_a_clear_error() {
    let dir = fixture_dir("notjson");
    let path = write(&dir, "bad.json", b"{ this is not json");
    let e = error_of(&path);
    assert!(e.contains("line 1"), "{e}");
    let path = write(&dir, "bad2.json", b"[{\"ph\": \"X\"} {");
    let _ = import_file(&path, &Progress::new()); // must not panic, whatever it decides
    let path = write(&dir, "text.txt", b"hello world\nthis is a text file\n");
    let e = error_of(&path);
    assert!(e.contains("not a recognised profile"), "{e}");
    let path = write(&dir, "string.json", b"\"just a string\"");
    error_of(&path);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn json_without_trace_events_is_a_clear_error() {
    let dir = fixture_dir("notrace");
    for (name, body) in [
        ("obj.json", r#"{"foo": 1, "bar": [1, 2]}"#),
        ("empty_obj.json", "{}"),
        ("events_not_array.json", r#"{"traceEvents": 5}"#),
    ] {
        let path = write(&dir, name, body.as_bytes());
        let e = error_of(&path);
        assert!(e.contains("traceEvents"), "{name}: {e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn empty_trace_event_lists_load_with_a_warning() {
    for (i, text) in ["[]", "{\"traceEvents\": []}", "{\"traceEvents\": []"]
        .into_iter()
        .enumerate()
    {
        let p = load_text(&format!("noevents{i}"), text);
        assert_eq!(p.event_count(), 0);
        let mut want = vec![("no_events", 1)];
        if i == 2 {
            want.push(("truncated", 1));
        }
        assert_warnings(&p, &want);
    }
}

#[test]
fn empty_binary_directory_and_missing_files_are_clear_errors() {
    let dir = fixture_dir("errors");
    let empty = write(&dir, "empty.json", b"");
    let e = error_of(&empty);
    assert!(e.contains("empty"), "{e}");
    let blanks = write(&dir, "blank.json", b"   \n\n  ");
    error_of(&blanks);
    let binary: Vec<u8> = (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect();
    let bin = write(&dir, "binary.json", &binary);
    let e = error_of(&bin);
    assert!(e.contains("binary"), "{e}");
    let gz_bin = write(&dir, "binary.json.gz", &gzip(&binary));
    let e = error_of(&gz_bin);
    assert!(e.contains("binary"), "{e}");
    let sub = dir.join("a_directory.json");
    std::fs::create_dir_all(&sub).unwrap();
    let e = error_of(&sub);
    assert!(e.contains("cannot read"), "{e}");
    let missing = dir.join("does_not_exist.json");
    let e = error_of(&missing);
    assert!(e.contains("cannot read"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn wrong_field_types_skip_the_event_with_a_count() {
    let text = object_form(&[
        x("ok1", "cpu_op", 1, 1, "100", "1"),
        r#"{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": true, "dur": 1}"#.to_string(),
        r#"{"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": false, "dur": 1}"#.to_string(),
        r#"{"ph": "X", "cat": "cpu_op", "name": "c", "pid": {}, "tid": 1, "ts": 100, "dur": 1}"#.to_string(),
        r#"{"ph": "X", "cat": "cpu_op", "name": "d", "pid": 1, "tid": [1], "ts": 100, "dur": 1}"#.to_string(),
        r#"{"ph": "X", "cat": "cpu_op", "name": "e", "pid": 1, "tid": 1, "ts": 100, "dur": {"v": 1}}"#.to_string(),
        r#"{"ph": "X", "cat": "cpu_op", "name": "f", "pid": 1, "tid": 1, "ts": "abc", "dur": 1}"#.to_string(),
        r#"{"cat": "cpu_op", "name": "g", "pid": 1, "tid": 1, "ts": 100, "dur": 1}"#.to_string(),
        r#"{"ph": "X", "cat": "cpu_op", "name": "h", "pid": 1, "tid": 1, "dur": 1}"#.to_string(),
        r#"{"ph": 5, "cat": "cpu_op", "name": "i", "pid": 1, "tid": 1, "ts": 100, "dur": 1}"#.to_string(),
        x("ok2", "cpu_op", 1, 1, "200", "1"),
    ]);
    let p = load_text("types", &text);
    assert_warnings(
        &p,
        &[
            ("bad_type_ts", 2),
            ("bad_type_pid", 1),
            ("bad_type_tid", 1),
            ("bad_type_dur", 1),
            ("bad_type_ph", 1),
            ("bad_ts", 1),
            ("missing_ph", 1),
            ("missing_ts", 1),
        ],
    );
    let names: Vec<String> = all_events(&p).into_iter().map(|e| e.name).collect();
    assert_eq!(names, vec!["ok1", "ok2"]);
}

#[test]
fn ignored_phases_are_counted() {
    let text = object_form(&[
        x("a", "cpu_op", 1, 1, "100", "1"),
        r#"{"ph": "N", "cat": "Tensor", "name": "t", "id": 1, "pid": 1, "tid": 1, "ts": 100}"#.to_string(),
        r#"{"ph": "O", "cat": "Tensor", "name": "t", "id": 1, "pid": 1, "tid": 1, "ts": 101, "args": {"snapshot": {}}}"#.to_string(),
        r#"{"ph": "D", "cat": "Tensor", "name": "t", "id": 1, "pid": 1, "tid": 1, "ts": 102}"#.to_string(),
        r#"{"ph": "P", "name": "sample", "pid": 1, "tid": 1, "ts": 103}"#.to_string(),
        r#"{"ph": "P", "name": "sample", "pid": 1, "tid": 1, "ts": 104}"#.to_string(),
    ]);
    let p = load_text("phases", &text);
    assert_warnings(
        &p,
        &[
            ("ignored_phase:N", 1),
            ("ignored_phase:O", 1),
            ("ignored_phase:D", 1),
            ("ignored_phase:P", 2),
        ],
    );
    assert_eq!(p.event_count(), 1);
}

#[test]
fn nestable_async_events() {
    let text = object_form(&[
        x("a", "cpu_op", 1, 1, "100", "100"),
        r#"{"ph": "b", "cat": "net", "name": "request", "id": "0x10", "pid": 1, "tid": 1, "ts": 110}"#.to_string(),
        r#"{"ph": "e", "cat": "net", "name": "request", "id": "0x10", "pid": 1, "tid": 2, "ts": 150}"#.to_string(),
        r#"{"ph": "e", "cat": "net", "name": "request", "id": "0x99", "pid": 1, "tid": 2, "ts": 160}"#.to_string(),
    ]);
    let p = load_text("async", &text);
    assert_warnings(&p, &[("unmatched_async_end", 1)]);
    let t = p
        .tracks
        .iter()
        .find(|t| matches!(t.key, TrackKey::Async { .. }))
        .expect("async track");
    assert_eq!(
        events_of(&p, t),
        vec![ev("request", EventKind::Slice, 110_000, 40_000, 0)]
    );
}

#[test]
fn distributed_info_and_device_properties() {
    let text = r#"{"schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42505273344, "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8, "pg_count": 2},
  "cuda_runtime_version": 12040, "cupti_version": 22,
  "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"device": 0, "stream": 7}}]}"#;
    let p = load_text("props", text);
    assert_warnings(&p, &[]);
    let d = p.device(0).expect("device 0");
    assert_eq!(d.name, "NVIDIA A100-SXM4-40GB");
    assert_eq!(d.compute_capability, Some((8, 0)));
    assert_eq!(d.sm_count, Some(108));
    assert_eq!(d.memory_bytes, Some(42_505_273_344));
    let dist = p.distributed.as_ref().unwrap();
    assert_eq!((dist.rank, dist.world_size), (Some(3), Some(8)));
    assert_eq!(p.source.tool, "PyTorch profiler (Kineto)");
    assert_eq!(p.source.schema_version.as_deref(), Some("1"));
    let _ = NO_PARENT;
}

// ---------------------------------------------------------------------------------------------
// Hostile input (issue 11): broken files that yield nothing, block boundaries anywhere,
// extreme times, many keys and names
// ---------------------------------------------------------------------------------------------

/// Imports in-memory bytes with the event array cut into blocks of `block_bytes`.
fn import_blocks(name: &str, data: &[u8], block_bytes: usize) -> Result<Profile, String> {
    import_threads(name, data, block_bytes, 2)
}

/// [`import_blocks`] with `workers` worker threads (0: every event parsed on one thread).
fn import_threads(
    name: &str,
    data: &[u8],
    block_bytes: usize,
    workers: usize,
) -> Result<Profile, String> {
    warpscope_core::import::chrome::import_with_workers(
        warpscope_core::Input::Bytes {
            name: Path::new(name),
            data,
        },
        &Progress::new(),
        block_bytes,
        workers,
    )
    .map(|(p, _)| p)
    .map_err(|e| e.to_string())
}

#[test]
fn flows_between_threads_bind_to_the_same_events_whichever_block_sees_a_thread_first() {
    // Flow i starts in slice src{i} on one of three threads (string and numeric ids) and ends
    // in dst{i} on the next; the elements of each flow are written in a different order, so
    // that the workers' blocks meet the threads in different orders and number them
    // differently from the importing thread.
    let threads = [
        (r#""1""#, r#""main""#),
        (r#""1""#, "7"),
        (r#""Spans""#, r#""loader""#),
    ];
    let mut events = Vec::new();
    for i in 0..300u64 {
        let (ap, at) = threads[(i % 3) as usize];
        let (bp, bt) = threads[((i + 1) % 3) as usize];
        let ts = 100 * i;
        let src = format!(
            r#"{{"ph": "X", "name": "src{i}", "pid": {ap}, "tid": {at}, "ts": {ts}, "dur": 10}}"#
        );
        let dst = format!(
            r#"{{"ph": "X", "name": "dst{i}", "pid": {bp}, "tid": {bt}, "ts": {}, "dur": 10}}"#,
            ts + 50
        );
        let s = format!(
            r#"{{"ph": "s", "cat": "fwd", "id": {i}, "pid": {ap}, "tid": {at}, "ts": {}}}"#,
            ts + 5
        );
        let f = format!(
            r#"{{"ph": "f", "cat": "fwd", "id": {i}, "pid": {bp}, "tid": {bt}, "ts": {}, "bp": "e"}}"#,
            ts + 55
        );
        match i % 4 {
            0 => events.extend([src, s, dst, f]),
            1 => events.extend([dst, src, s, f]),
            2 => events.extend([s, dst, f, src]),
            _ => events.extend([dst, s, f, src]),
        }
    }
    let data = format!("[{}]", events.join(",\n"));
    let expected: Vec<(String, String)> = (0..300)
        .map(|i| (format!("src{i}"), format!("dst{i}")))
        .collect();
    for block_bytes in [64, 300, 2000, 1 << 20] {
        for workers in [0, 2, 3, 5] {
            let p = import_threads("flows.json", data.as_bytes(), block_bytes, workers).unwrap();
            let name = |e: &warpscope_core::model::EventRef| {
                let t = &p.tracks[e.track as usize];
                p.str(t.events.name[e.index as usize]).to_string()
            };
            let mut got: Vec<(String, String)> = p
                .flows
                .iter()
                .map(|f| (name(&f.from), name(&f.to)))
                .collect();
            got.sort_by_key(|(from, _)| from[3..].parse::<u32>().unwrap_or(u32::MAX));
            assert_eq!(got, expected, "blocks of {block_bytes}, {workers} workers");
        }
    }
}

#[test]
fn a_file_that_yields_nothing_because_it_is_broken_is_an_error() {
    let first =
        r#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2}"#;
    let cases: Vec<(&str, String, &str)> = vec![
        ("bare_open.json", "[".to_string(), "line 1"),
        (
            "object_open.json",
            "{\"traceEvents\": [\n  ".to_string(),
            "line 2",
        ),
        (
            "cut_in_first.json",
            format!(
                "{{\"schemaVersion\": 1,\n\"traceEvents\": [\n{}",
                &first[..40]
            ),
            "line 3",
        ),
        (
            "only_broken.json",
            "{\"traceEvents\": [\n{\"ph\": \"X\", \"ts\": },\n{\"ph\" 1}\n]}".to_string(),
            "line 2",
        ),
        (
            "only_non_objects.json",
            "{\"traceEvents\": [1, \"x\",\n null]}".to_string(),
            "line 1",
        ),
        (
            "before_events.json",
            "{\"a\": 1,\n\"b\": [1, 2,".to_string(),
            "line 2",
        ),
    ];
    let dir = fixture_dir("yields_nothing");
    for (name, text, line) in &cases {
        for (file, bytes) in [
            (name.to_string(), text.as_bytes().to_vec()),
            (format!("{name}.gz"), gzip(text.as_bytes())),
        ] {
            let path = write(&dir, &file, &bytes);
            let e = error_of(&path);
            assert!(e.contains(line), "{file}: {e}");
            assert!(
                e.contains("byte") || e.contains("no event could be read"),
                "{file}: {e}"
            );
        }
    }
    // The gzip stream itself cut inside the first event.
    let text = format!("{{\"traceEvents\": [\n{first},\n{first}]}}");
    let gz = gzip(text.as_bytes());
    let path = write(&dir, "gz_cut.json.gz", &gz[..gz.len() / 2]);
    let e = error_of(&path);
    assert!(e.contains("line"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
    // Cut after the first event: what was read loads, with the cut counted.
    let p = load_text(
        "cut_after_first",
        &format!("{{\"traceEvents\": [\n{first},\n{}", &first[..30]),
    );
    assert_eq!(p.event_count(), 1);
    assert_warnings(&p, &[("truncated", 1)]);
}

/// Everything a user sees of a profile, as text, for comparing imports.
fn profile_text(p: &Profile) -> String {
    let mut out = String::new();
    for t in &p.tracks {
        out.push_str(&format!("{:?} {:?} {:?}\n", t.key, t.name, t.sort_index));
        for i in 0..t.events.len() {
            out.push_str(&format!(
                "  {} {} {} {:?} {} {}\n",
                p.str(t.events.name[i]),
                t.events.start_ns[i],
                t.events.dur_ns[i],
                t.events.kind[i],
                t.events.depth[i],
                t.events.detail[i],
            ));
        }
    }
    for w in &p.warnings {
        out.push_str(&format!("warning {} x{}: {}\n", w.code, w.count, w.message));
    }
    out.push_str(&format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n",
        p.kernels,
        p.copies,
        p.api_calls,
        p.counters,
        p.markers,
        p.devices,
        p.process_names,
        p.flows
    ));
    out
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn the_result_does_not_depend_on_where_blocks_are_cut() {
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    for rel in [
        "kineto-h100/alexnet_b8.pt.trace.json.gz",
        "chrome-kineto/hta_a100_triton_example.json.gz",
        "chrome-kineto/hta_mi250_rocm6.2_minitoy.json.gz",
        "chrome-tensorflow/tf1_dlprof_mnist_xla_timeline.ctf.json",
    ] {
        if let Some(path) = common::sample(rel) {
            inputs.push((rel.to_string(), std::fs::read(path).unwrap()));
        }
    }
    let k = |name: &str, ts: u32| {
        format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "{name}", "pid": 0, "tid": 7, "ts": {ts}, "dur": 2, "args": {{"stream": 7, "correlation": {ts}}}}}"#
        )
    };
    let tricky = [
        // Strings full of element-like text, escapes and nested containers.
        format!(
            "{{\"schemaVersion\": 1, \"deviceProperties\": [{{\"id\": 0, \"name\": \"G,{{\"}}],\n\"traceEvents\": [\n{},\n{{\"ph\": \"X\", \"name\": \"a,{{\\\"b\\\\\\\\\", \"ts\": 3, \"dur\": 1, \"args\": {{\"s\": \",{{,{{\", \"n\": [[{{}}, {{\"x\": \",{{\"}}]]}}}},\n{}\n], \"traceName\": \",{{\", \"baseTimeNanoseconds\": 1700000000000000000}}",
            k("k1", 1),
            k("k2", 5)
        ),
        // Broken and non-object elements between good ones, lenient tokens, a trailing comma.
        format!(
            "[{}, {{\"ph\": \"X\", \"ts\": }}, 7, \"s,{{\", {{\"ph\": \"X\", \"name\": \"n\", \"ts\": NaN}}, {{}}, {},]",
            k("a", 1),
            k("b", 9)
        ),
        // Cut in the middle of an event after some, object and array forms.
        format!("{{\"traceEvents\": [{}, {}, {{\"ph\": \"X\", \"name\": \"cut,{{here", k("a", 1), k("b", 2)),
        format!("[{}, {}, {{\"ph\": \"X\", \"args\": {{\"a\": [", k("a", 1), k("b", 2)),
        // Garbage after the array, and keys after it cut short.
        format!("[{}] trailing, {{\"x\": 1}}", k("a", 1)),
        format!("{{\"traceEvents\": [{}], \"traceName\": \"t\", \"warpscope\": {{\"labels\": [[\"a\",", k("a", 1)),
        // One element much bigger than the blocks, with cut candidates inside.
        format!("[{}, {{\"ph\": \"X\", \"name\": \"big\", \"ts\": 4, \"dur\": 1, \"args\": {{\"s\": \"{}\"}}}}, {}]", k("a", 1), ",{ ".repeat(3000), k("b", 2)),
        // Begin/end pairs and flows split anywhere.
        r#"[{"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 1, "args": {"x": 1}}, {"ph": "s", "cat": "fwdbwd", "id": 5, "pid": 1, "tid": 1, "ts": 2}, {"ph": "E", "pid": 1, "tid": 1, "ts": 10}, {"ph": "f", "cat": "fwdbwd", "id": 5, "pid": 1, "tid": 2, "ts": 11, "bp": "e"}, {"ph": "X", "name": "y", "pid": 1, "tid": 2, "ts": 11, "dur": 1}]"#.to_string(),
    ];
    for (i, t) in tricky.iter().enumerate() {
        inputs.push((format!("tricky{i}.json"), t.clone().into_bytes()));
    }
    for (name, data) in &inputs {
        // One block, every event parsed on the importing thread: the reference.
        let whole = import_threads(name, data, usize::MAX / 4, 0).map(|p| profile_text(&p));
        let default = import_blocks(name, data, warpscope_core::import::json::BLOCK_BYTES)
            .map(|p| profile_text(&p));
        assert_eq!(whole, default, "{name}: default blocks");
        let small: &[usize] = if data.len() > 200_000 {
            &[64, 4096, 65_536]
        } else {
            &[1, 7, 64, 4096]
        };
        // Plain text is cut into blocks where it lies; gzip is read as a stream and its blocks
        // copied out: both give the same profile, however they are cut.
        let other = if data.starts_with(&[0x1f, 0x8b]) {
            let mut plain = Vec::new();
            flate2::read::MultiGzDecoder::new(&data[..])
                .read_to_end(&mut plain)
                .unwrap();
            plain
        } else {
            gzip(data)
        };
        for &b in small {
            // Blocks imported on worker threads and merged, with one worker and with several.
            for workers in [0, 1, 3] {
                let got = import_threads(name, data, b, workers).map(|p| profile_text(&p));
                assert_eq!(whole, got, "{name}: blocks of {b} bytes, {workers} workers");
            }
            let got = import_threads(name, &other, b, 3).map(|p| profile_text(&p));
            assert_eq!(whole, got, "{name}: (un)compressed, blocks of {b} bytes");
        }
    }
}

#[test]
fn extreme_times_are_clamped_or_skipped_with_counted_warnings() {
    // 2^62 ns in µs, the edge of the times a trace may hold (the years 1824 to 2116).
    let lim_us = (1i64 << 62) / 1000;
    let max_us = i64::MAX / 1000;
    let text = format!(
        r#"{{"traceEvents": [
{{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": {lim_us}, "dur": {lim_us}}},
{{"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": -{lim_us}, "dur": 1e300}},
{{"ph": "B", "name": "c", "pid": 1, "tid": 2, "ts": -{lim_us}}},
{{"ph": "E", "pid": 1, "tid": 2, "ts": {lim_us}}},
{{"ph": "b", "name": "d", "cat": "x", "id": 1, "pid": 1, "ts": -{lim_us}}},
{{"ph": "e", "name": "d", "cat": "x", "id": 1, "pid": 1, "ts": {lim_us}}},
{{"ph": "X", "name": "e", "pid": 1, "tid": 1, "ts": 1e300, "dur": 1}},
{{"ph": "X", "name": "f", "pid": 1, "tid": 1, "ts": -1e300, "dur": 1}},
{{"ph": "X", "name": "g", "pid": 1, "tid": 1, "ts": 5, "dur": -5}},
{{"ph": "B", "name": "h", "pid": 1, "tid": 3, "ts": -{lim_us}}},
{{"ph": "X", "name": "i", "pid": 1, "tid": 3, "ts": {lim_us}, "dur": 0}},
{{"ph": "X", "name": "j", "pid": 1, "tid": 3, "ts": {max_us}, "dur": 0}},
{{"ph": "s", "cat": "fwdbwd", "id": 1, "pid": 1, "tid": 1, "ts": -{max_us}}},
{{"ph": "f", "cat": "fwdbwd", "id": 1, "pid": 1, "tid": 3, "ts": {max_us}}}
]}}"#
    );
    let p = load_text("extreme", &text);
    assert_warnings(
        &p,
        &[
            ("time_overflow", 2),
            ("dur_out_of_range", 1),
            ("ts_out_of_range", 5),
            ("negative_dur", 1),
            ("unclosed_begin", 1),
            // What is left spans 2^63 ns, more than a profile may (any two times must differ by
            // less than i64::MAX): the builder leaves out every event that does not fit within
            // 2^62 ns of the start the majority sets, here all seven.
            ("event_time_out_of_range", 7),
        ],
    );
    for t in &p.tracks {
        for i in 0..t.events.len() {
            assert!(t.events.dur_ns[i] >= 0, "{}: negative duration", t.name);
            assert!(
                t.events.start_ns[i]
                    .checked_add(t.events.dur_ns[i])
                    .is_some()
            );
        }
    }
    assert_eq!(p.event_count(), 0);
}

#[test]
fn many_top_level_keys_and_names_load_with_the_right_lines_and_names() {
    // 20 000 keys before the events, one per line, the last `traceName` winning, and an
    // unknown key with a big value that is skipped.
    let mut text = String::from("{\n");
    for i in 0..20_000 {
        text.push_str(&format!("\"k{i}\": {i},\n"));
    }
    text.push_str("\"traceName\": \"first\",\n\"traceName\": \"last\",\n");
    text.push_str(&format!(
        "\"junk\": [{}],\n",
        "{\"a\": [1, 2]},".repeat(50_000)
    ));
    let events: Vec<String> = (0..3000)
        .map(|i| format!(r#"{{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {{"name": "t{}"}}}}"#, i % 1000))
        .chain((0..3000).map(|i| format!(r#"{{"ph": "M", "name": "process_name", "pid": {i}, "args": {{"name": "p{i}"}}}}"#)))
        .chain([r#"{"ph": "X", "name": "x", "pid": 1, "tid": 1, "ts": 1, "dur": 1}"#.to_string()])
        .collect();
    text.push_str(&format!("\"traceEvents\": [{}]}}", events.join(",")));
    let p = load_text("many_keys", &text);
    assert_warnings(&p, &[]);
    let details: Vec<_> = p
        .source
        .details
        .iter()
        .filter(|(k, _)| k == "traceName")
        .collect();
    assert_eq!(
        details,
        vec![&("traceName".to_string(), "last".to_string())]
    );
    assert_eq!(p.process_names.len(), 3000);
    assert_eq!(
        thread(&p, "1", "1").name,
        "t0 / t1 / t2 / t3 / t4 / t5 / t6 / t7 (+992 more names)"
    );
    // A syntax error after the keys names its line.
    let bad = format!(
        "{{\n{}\"x\" 1, \"traceEvents\": []}}",
        "\"k\": 1,\n".repeat(20_000)
    );
    let dir = fixture_dir("many_keys_bad");
    let e = error_of(&write(&dir, "bad.json", bad.as_bytes()));
    assert!(e.contains("line 20002"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn thousands_of_unknown_categories_share_one_warning_after_the_first() {
    let events: Vec<String> = (0..40)
        .map(|i| format!(r#"{{"ph": "X", "cat": "c{i:02}", "name": "a", "ts": {i}, "dur": 1}}"#))
        .collect();
    let p = load_text(
        "cats",
        &format!(
            "{{\"schemaVersion\": 1, \"traceEvents\": [{}]}}",
            events.join(",")
        ),
    );
    let mut want: Vec<(String, u64)> = (0..32)
        .map(|i| (format!("unknown_category:c{i:02}"), 1))
        .collect();
    want.push(("unknown_categories_more".to_string(), 8));
    let want: Vec<(&str, u64)> = want.iter().map(|(c, n)| (c.as_str(), *n)).collect();
    assert_warnings(&p, &want);
}

#[test]
fn an_event_bigger_than_64_mib_is_skipped_and_counted_however_it_is_cut() {
    let small = |name: &str, ts: u32| {
        format!(r#"{{"ph": "X", "name": "{name}", "pid": 1, "tid": 1, "ts": {ts}, "dur": 1}}"#)
    };
    let big = format!(
        r#"{{"ph": "X", "name": "big", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {{"s": "{}"}}}}"#,
        "x,{ ".repeat(17 << 20)
    );
    let text = format!("[{}, {big}, {}]", small("a", 1), small("b", 3));
    for block in [warpscope_core::import::json::BLOCK_BYTES, usize::MAX / 4] {
        let p = import_blocks("big.json", text.as_bytes(), block).unwrap();
        assert_warnings(&p, &[("oversized_event", 1)]);
        assert_eq!(p.event_count(), 2, "blocks of {block}");
    }
}

#[test]
fn long_stretches_without_an_event_boundary_are_cut_and_read_the_same() {
    // One event with an 80 MiB string holding no `,{`, and 20 M elements that are not objects:
    // the reader has no candidate boundary to cut at, cuts anyway (holding a bounded amount),
    // and the result is what reading the whole text at once gives.
    let small = |name: &str, ts: u32| {
        format!(r#"{{"ph": "X", "name": "{name}", "pid": 1, "tid": 1, "ts": {ts}, "dur": 1}}"#)
    };
    let big = format!(
        r#"{{"ph": "X", "name": "big", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {{"s": "{}"}}}}"#,
        "x".repeat(80 << 20)
    );
    let text = format!("[{}, {big}, {}]", small("a", 1), small("b", 3));
    for block in [warpscope_core::import::json::BLOCK_BYTES, usize::MAX / 4] {
        let p = import_blocks("big.json", text.as_bytes(), block).unwrap();
        assert_warnings(&p, &[("oversized_event", 1)]);
        assert_eq!(p.event_count(), 2, "blocks of {block}");
    }

    let text = format!(
        "{{\"traceEvents\": [{}{}]}}",
        "0,".repeat(20_000_000),
        small("a", 1)
    );
    for block in [warpscope_core::import::json::BLOCK_BYTES, usize::MAX / 4] {
        let p = import_blocks("zeros.json", text.as_bytes(), block).unwrap();
        assert_warnings(&p, &[("non_object_event", 20_000_000)]);
        assert_eq!(p.event_count(), 1, "blocks of {block}");
    }
}

#[test]
fn a_hugely_negative_dur_is_a_negative_dur_not_a_huge_one() {
    let p = load_text(
        "neg",
        r#"{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 5, "dur": -1e300}]}"#,
    );
    assert_warnings(&p, &[("negative_dur", 1)]);
    let t = &p.tracks[0];
    assert_eq!(t.events.dur_ns[0], 0);
}
