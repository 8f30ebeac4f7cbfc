//! PyTorch CUDA caching-allocator snapshots (`torch.cuda.memory._dump_snapshot`): the real
//! sample in `../shared/samples/kineto-h200-mem` (skipped when absent), the pickle reader
//! against Python's own `pickle` on it (skipped without `python3`), and synthetic pickles
//! assembled opcode by opcode below.
//!
//! Figures of the sample were computed with Python (`pickle`, `gzip`) from the same file:
//! counts per action, the replay of the totals by the rule of `docs/memory.md`, the stacks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use warpscope_core::import::pickle::{self, Pickle, Value, python_float_repr};
use warpscope_core::model::memory::{BlockState, NO_STACK};
use warpscope_core::model::{
    EventKind, Format, MemoryAction, MemoryDevice, MemorySource, Profile, TrackKey,
};
use warpscope_core::{ImportError, Progress, import_bytes, import_file};

const SAMPLE: &str = "kineto-h200-mem/resnet50_b32_fp32_mem_flops.snapshot.pickle.gz";

fn load_sample() -> Option<Profile> {
    let path = common::sample(SAMPLE)?;
    assert!(path.is_file(), "sample missing: {}", path.display());
    Some(import_file(&path, &Progress::new()).unwrap_or_else(|e| panic!("{e}")))
}

fn actions(p: &Profile) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for a in &p.memory.events.action {
        *m.entry(a.as_str()).or_default() += 1;
    }
    m
}

// ---------------------------------------------------------------------------------------------
// The sample

#[test]
fn sample_segments_records_and_totals() {
    let Some(p) = load_sample() else { return };
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(p.source.format, Format::TorchMemorySnapshot);
    assert_eq!(p.source.tool, "PyTorch CUDA caching allocator");
    assert!(p.source.compressed);
    let m = &p.memory;
    assert_eq!(m.source, MemorySource::AllocatorSnapshot);
    assert_eq!(m.segments.len(), 122);
    assert_eq!(
        m.segments.iter().map(|s| s.blocks.len()).sum::<usize>(),
        904
    );
    let states = |st: BlockState| {
        m.segments
            .iter()
            .flat_map(|s| &s.blocks)
            .filter(|b| b.state == st)
            .count()
    };
    assert_eq!(states(BlockState::ActiveAllocated), 806);
    assert_eq!(states(BlockState::Inactive), 98);
    assert!(m.segments.windows(2).all(|w| w[0].addr < w[1].addr));
    // Σ allocated_size of the segments: torch.cuda.memory_allocated() at the end
    // (pytorch_truth.json).
    assert_eq!(
        m.segments.iter().map(|s| s.allocated_bytes).sum::<u64>(),
        483_554_816
    );
    assert_eq!(m.events.len(), 13_231);
    assert_eq!(
        actions(&p),
        BTreeMap::from([
            ("alloc", 4583),
            ("free", 4097),
            ("free_requested", 4097),
            ("segment_alloc", 281),
            ("segment_free", 173),
        ])
    );
    assert!(m.events.device.iter().all(|&d| d == MemoryDevice::Gpu(0)));
    // Ends on the segments; the replayed peaks (Python, same rule). The reserved peak is
    // torch.cuda.max_memory_reserved() of the run; max_memory_allocated() (7,865,240,064) also
    // covers what happened before the history was recorded.
    let ev = &m.events;
    assert_eq!(*ev.allocated_bytes.last().unwrap(), 483_554_816);
    assert_eq!(*ev.reserved_bytes.last().unwrap(), 3_932_160_000);
    assert_eq!(*ev.allocated_bytes.iter().max().unwrap(), 7_855_809_240);
    assert_eq!(*ev.reserved_bytes.iter().max().unwrap(), 8_071_938_048);
    assert_eq!(ev.allocated_bytes[0], 108_712_992);
    assert_eq!(ev.reserved_bytes[0], 123_731_968 + 20_971_520);
    // Time: Unix-epoch microseconds; time zero is the first annotation (ProfilerStep#0).
    assert_eq!(p.origin.raw_ns, 1_795_903_031_611_767_000);
    assert_eq!(p.origin.unix_ns, Some(1_795_903_031_611_767_000));
    assert_eq!(ev.time_ns[0], 1_795_903_031_623_420_000 - p.origin.raw_ns);
    assert!(ev.time_ns.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn sample_stacks_and_annotations() {
    let Some(p) = load_sample() else { return };
    let m = &p.memory;
    // 314 distinct non-empty frame lists of 8,749 list objects; 394 distinct frames.
    assert_eq!(m.stacks.len(), 314);
    assert_eq!(m.stacks.frames.len(), 394);
    // The largest block: its innermost frame that is not the allocator's own.
    let block = m
        .segments
        .iter()
        .flat_map(|s| &s.blocks)
        .find(|b| b.addr == 139_932_081_324_032)
        .unwrap();
    assert_eq!(
        (block.bytes, block.requested_bytes),
        (33_554_432, 33_554_432)
    );
    let frames: Vec<_> = m.stacks.frames_of(block.stack).collect();
    assert_eq!(frames.len(), 27);
    assert_eq!(p.str(frames[0].name), "torch::unwind::unwind()");
    let skip = [
        "unwind::unwind",
        "CapturedTraceback::gather",
        "gather_with_cpp",
        "CUDACachingAllocator",
        "at::detail::empty",
    ];
    let first = frames
        .iter()
        .find(|f| !skip.iter().any(|s| p.str(f.name).contains(s)))
        .unwrap();
    assert_eq!(
        p.str(first.name),
        "at::cuda::setWorkspaceForHandle(cublasContext*, c10::cuda::CUDAStream)"
    );
    // Every alloc has a stack.
    let ev = &m.events;
    assert!(
        (0..ev.len())
            .filter(|&i| ev.action[i] == MemoryAction::Alloc)
            .all(|i| ev.stack[i] != NO_STACK)
    );
    // 16 START/END pairs: 16 slices on one track.
    let tracks: Vec<_> = p
        .tracks
        .iter()
        .filter(|t| t.events.kind.contains(&EventKind::UserAnnotation))
        .collect();
    assert_eq!(tracks.len(), 1);
    assert!(matches!(tracks[0].key, TrackKey::Thread { .. }));
    assert_eq!(tracks[0].events.len(), 16);
    let steps = (0..16)
        .filter(|&i| p.str(tracks[0].events.name[i]).starts_with("ProfilerStep#"))
        .count();
    assert_eq!(steps, 6);
    assert_eq!(p.str(tracks[0].events.name[0]), "ProfilerStep#0");
    assert_eq!(tracks[0].events.start_ns[0], 0);
    // Settings, nested dicts flattened.
    let setting = |k: &str| {
        m.settings
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(setting("max_split_size"), Some("-1"));
    assert_eq!(setting("garbage_collection_threshold"), Some("0.0"));
    assert_eq!(setting("expandable_segments"), Some("False"));
    assert_eq!(setting("roundup_power2_divisions.1024"), Some("0"));
}

// ---------------------------------------------------------------------------------------------
// The pickle reader against Python

/// JSON text of `v` as `json.dumps(v, sort_keys=True, separators=(",", ":"))` writes it
/// (tuples as lists, non-ASCII escaped). Renderings of shared containers are kept, so that
/// the quarter of a million references to frame lists are rendered once.
struct Canonical<'p> {
    pk: &'p Pickle,
    done: BTreeMap<(u8, u32), String>,
}

impl Canonical<'_> {
    fn write(&mut self, v: Value, depth: usize, out: &mut String) {
        assert!(depth < 200, "nesting too deep (a cycle?)");
        let key = match v {
            Value::List(i) | Value::Tuple(i) => Some((0, i)),
            Value::Dict(i) => Some((1, i)),
            _ => None,
        };
        if let Some(text) = key.and_then(|k| self.done.get(&k)) {
            out.push_str(text);
            return;
        }
        let mut s = String::new();
        match v {
            Value::None => s.push_str("null"),
            Value::Bool(b) => s.push_str(if b { "true" } else { "false" }),
            Value::Int(_) | Value::BigInt(_) => s.push_str(&self.pk.int_text(v).unwrap()),
            Value::Float(f) if f.is_nan() => s.push_str("NaN"),
            Value::Float(f) if f.is_infinite() => {
                s.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
            }
            Value::Float(f) => s.push_str(&python_float_repr(f)),
            Value::Str(_) => json_string(self.pk.str(v).unwrap(), &mut s),
            Value::List(_) | Value::Tuple(_) => {
                s.push('[');
                for (n, x) in self.pk.items(v).unwrap().enumerate() {
                    if n > 0 {
                        s.push(',');
                    }
                    self.write(x, depth + 1, &mut s);
                }
                s.push(']');
            }
            Value::Dict(_) => {
                let mut pairs: Vec<(&str, Value)> = self
                    .pk
                    .dict(v)
                    .unwrap()
                    .map(|(k, x)| (self.pk.str(k).expect("str keys"), x))
                    .collect();
                pairs.sort_by(|a, b| a.0.cmp(b.0));
                s.push('{');
                for (n, (k, x)) in pairs.into_iter().enumerate() {
                    if n > 0 {
                        s.push(',');
                    }
                    json_string(k, &mut s);
                    s.push(':');
                    self.write(x, depth + 1, &mut s);
                }
                s.push('}');
            }
            other => panic!("json cannot write a {}", other.type_name()),
        }
        out.push_str(&s);
        if let Some(k) = key {
            self.done.insert(k, s);
        }
    }
}

/// A JSON string as Python's `json` writes it with `ensure_ascii=True`.
fn json_string(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    write!(out, "\\u{u:04x}").unwrap();
                }
            }
        }
    }
    out.push('"');
}

#[test]
fn pickle_reader_matches_python_on_the_sample() {
    let Some(path) = common::sample(SAMPLE) else {
        return;
    };
    let script = "import gzip, json, pickle, sys\n\
                  d = pickle.loads(gzip.open(sys.argv[1]).read())\n\
                  sys.stdout.write(json.dumps(d, sort_keys=True, separators=(',', ':')))\n";
    let out = match std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&path)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipping: python3 not found ({e})");
            return;
        }
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let gz = std::fs::read(&path).unwrap();
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut raw).unwrap();
    let pk = pickle::parse(&raw).unwrap();
    let mut ours = String::new();
    Canonical {
        pk: &pk,
        done: BTreeMap::new(),
    }
    .write(pk.root(), 0, &mut ours);
    let theirs = String::from_utf8(out.stdout).unwrap();
    if ours != theirs {
        let at = ours
            .bytes()
            .zip(theirs.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(ours.len().min(theirs.len()));
        let from = at.saturating_sub(80);
        panic!(
            "differs at byte {at} (lengths {} and {}):\nours:   {}\npython: {}",
            ours.len(),
            theirs.len(),
            &ours[from..(at + 80).min(ours.len())],
            &theirs[from..(at + 80).min(theirs.len())]
        );
    }
    assert_eq!(ours.len(), 95_123_070);
}

// ---------------------------------------------------------------------------------------------
// Synthetic pickles

/// A value to pickle; `Put(v, i)` stores `v` in memo slot `i`, `Get(i)` refers to it again.
#[derive(Clone)]
enum P {
    None,
    Bool(bool),
    Int(i64),
    Str(&'static str),
    List(Vec<P>),
    Dict(Vec<(&'static str, P)>),
    Put(Box<P>, u32),
    Get(u32),
}

/// Pickles `v` with the opcodes of `protocol` (2 to 5; FRAME from 4).
fn dumps(v: &P, protocol: u8) -> Vec<u8> {
    let mut body = Vec::new();
    emit(v, &mut body);
    body.push(b'.');
    let mut out = vec![0x80, protocol];
    if protocol >= 4 {
        out.push(0x95);
        out.extend((body.len() as u64).to_le_bytes());
    }
    out.extend(body);
    out
}

fn emit(v: &P, out: &mut Vec<u8>) {
    match v {
        P::None => out.push(b'N'),
        P::Bool(b) => out.push(if *b { 0x88 } else { 0x89 }),
        P::Int(i) => {
            if let Ok(b) = u8::try_from(*i) {
                out.extend([b'K', b]);
            } else if let Ok(i) = i32::try_from(*i) {
                out.push(b'J');
                out.extend(i.to_le_bytes());
            } else {
                out.extend([0x8a, 8]);
                out.extend(i.to_le_bytes());
            }
        }
        P::Str(s) => {
            out.push(b'X');
            out.extend((s.len() as u32).to_le_bytes());
            out.extend(s.as_bytes());
        }
        P::List(items) => {
            out.extend([b']', b'(']);
            items.iter().for_each(|x| emit(x, out));
            out.push(b'e');
        }
        P::Dict(pairs) => {
            out.extend([b'}', b'(']);
            for (k, x) in pairs {
                emit(&P::Str(k), out);
                emit(x, out);
            }
            out.push(b'u');
        }
        P::Put(x, i) => {
            emit(x, out);
            out.push(b'r');
            out.extend(i.to_le_bytes());
        }
        P::Get(i) => {
            out.push(b'j');
            out.extend(i.to_le_bytes());
        }
    }
}

fn frame(name: &'static str, line: i64) -> P {
    P::Dict(vec![
        ("name", P::Str(name)),
        ("filename", P::Str("model.py")),
        ("line", P::Int(line)),
    ])
}

fn entry(action: &'static str, addr: i64, size: i64, time_us: i64, frames: P) -> P {
    P::Dict(vec![
        ("action", P::Str(action)),
        ("addr", P::Int(addr)),
        ("size", P::Int(size)),
        ("stream", P::Int(0)),
        ("time_us", P::Int(time_us)),
        ("frames", frames),
    ])
}

/// A snapshot of one 2 MiB segment holding one 512-byte block allocated in the trace, a
/// block freed in the trace, and 1024 bytes allocated before it. The frames list in memo slot
/// 0 (stored with the block) is shared by the block and three trace entries.
fn small_snapshot(extra_entries: Vec<P>) -> P {
    let shared = P::Put(
        Box::new(P::List(vec![frame("alloc_here", 7), frame("train", 3)])),
        0,
    );
    let t0 = 1_700_000_000_000_000;
    let mut entries = vec![
        entry("segment_alloc", 0x10000, 2 << 20, t0, P::List(vec![])),
        entry("alloc", 0x10000 + 1024, 512, t0 + 10, P::Get(0)),
        entry("alloc", 0x10000 + 2048, 256, t0 + 20, P::Get(0)),
        entry("free_requested", 0x10000 + 2048, 256, t0 + 30, P::Get(0)),
        entry("free_completed", 0x10000 + 2048, 256, t0 + 40, P::Get(0)),
    ];
    entries.extend(extra_entries);
    let block = |addr: i64, size: i64, state: &'static str, frames: P| {
        P::Dict(vec![
            ("address", P::Int(addr)),
            ("size", P::Int(size)),
            ("requested_size", P::Int(size)),
            ("state", P::Str(state)),
            ("frames", frames),
        ])
    };
    let rest = (2 << 20) - 1024 - 512;
    P::Dict(vec![
        (
            "segments",
            P::List(vec![P::Dict(vec![
                ("device", P::Int(0)),
                ("address", P::Int(0x10000)),
                ("total_size", P::Int(2 << 20)),
                ("allocated_size", P::Int(1536)),
                ("stream", P::Int(0)),
                ("segment_type", P::Str("small")),
                ("is_expandable", P::Bool(false)),
                (
                    "blocks",
                    P::List(vec![
                        block(0x10000, 1024, "active_allocated", P::List(vec![])),
                        block(0x10000 + 1024, 512, "active_allocated", shared),
                        block(0x10000 + 1536, rest, "inactive", P::None),
                    ]),
                ),
            ])]),
        ),
        ("device_traces", P::List(vec![P::List(entries)])),
        (
            "allocator_settings",
            P::Dict(vec![
                ("max_split_size", P::Int(-1)),
                ("roundup", P::Dict(vec![("1", P::Int(0))])),
            ]),
        ),
        (
            "external_annotations",
            P::List(vec![
                P::Dict(vec![
                    ("stage", P::Str("START")),
                    ("name", P::Str("ProfilerStep#0")),
                    ("device", P::Int(0)),
                    ("time_us", P::Int(t0 + 5)),
                ]),
                P::Dict(vec![
                    ("stage", P::Str("END")),
                    ("name", P::Str("ProfilerStep#0")),
                    ("device", P::Int(0)),
                    ("time_us", P::Int(t0 + 35)),
                ]),
                P::Dict(vec![
                    ("stage", P::Str("END")),
                    ("name", P::Str("never started")),
                    ("device", P::Int(0)),
                    ("time_us", P::Int(t0 + 36)),
                ]),
            ]),
        ),
    ])
}

fn load(name: &str, data: &[u8]) -> Result<Profile, ImportError> {
    import_bytes(Path::new(name), data, &Progress::new())
}

#[test]
fn synthetic_snapshot_in_protocols_2_to_5_and_gzip() {
    let snap = small_snapshot(vec![]);
    for protocol in 2..=5 {
        let data = dumps(&snap, protocol);
        let p = load("small.pickle", &data).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            p.source.format,
            Format::TorchMemorySnapshot,
            "protocol {protocol}"
        );
        let ev = &p.memory.events;
        assert_eq!(ev.len(), 5);
        // 1024 bytes were allocated before the trace; the segment is new.
        assert_eq!(ev.allocated_bytes, [1024, 1536, 1792, 1792, 1536]);
        assert_eq!(ev.reserved_bytes, [2 << 20; 5]);
        assert_eq!(ev.time_ns, [0, 10_000, 20_000, 30_000, 40_000]);
        assert_eq!(p.origin.unix_ns, Some(1_700_000_000_000_000_000));
        assert_eq!(ev.addr[1], 0x10400);
        // The shared frames list is one stack, also for the block.
        assert_eq!(p.memory.stacks.len(), 1);
        assert_eq!(ev.stack[0], NO_STACK);
        assert!(ev.stack[1..].iter().all(|&s| s == 0));
        let seg = &p.memory.segments[0];
        assert_eq!(seg.pool, "small");
        assert_eq!(seg.blocks.len(), 3);
        assert_eq!(seg.blocks[1].stack, 0);
        assert_eq!(seg.blocks[0].stack, NO_STACK);
        let names: Vec<&str> = p
            .memory
            .stacks
            .frames_of(0)
            .map(|f| p.str(f.name))
            .collect();
        assert_eq!(names, ["alloc_here", "train"]);
        assert_eq!(
            p.memory.settings,
            [
                ("max_split_size".to_string(), "-1".to_string()),
                ("roundup.1".to_string(), "0".to_string())
            ]
        );
        // One slice, one unmatched END.
        let t = p
            .tracks
            .iter()
            .find(|t| t.name == "allocator annotations (GPU 0)")
            .unwrap();
        assert_eq!((t.events.start_ns[0], t.events.dur_ns[0]), (5_000, 30_000));
        let codes: Vec<&str> = p.warnings.iter().map(|w| w.code.as_str()).collect();
        assert_eq!(codes, ["annotation_unmatched_end"]);
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &dumps(&snap, 4)).unwrap();
    let p = load("small.pickle.gz", &gz.finish().unwrap()).unwrap();
    assert!(p.source.compressed);
    assert_eq!(p.memory.events.len(), 5);
}

#[test]
fn unknown_actions_and_states_are_counted() {
    let odd = vec![
        entry(
            "workspace_snapshot",
            0,
            0,
            1_700_000_000_000_050,
            P::List(vec![]),
        ),
        entry("alloc", 0, 8, 1_700_000_000_000_001, P::List(vec![])),
        P::Int(3),
    ];
    let p = load("odd.pickle", &dumps(&small_snapshot(odd), 4)).unwrap();
    let count = |code: &str| {
        p.warnings
            .iter()
            .find(|w| w.code == code)
            .map_or(0, |w| w.count)
    };
    assert_eq!(count("snapshot_unknown_action"), 1);
    assert_eq!(count("snapshot_time_backwards"), 1);
    assert_eq!(count("snapshot_bad_trace_entry"), 1);
    assert_eq!(p.memory.events.len(), 6);
    // The late alloc was moved up to the time before it, and stays last.
    assert_eq!(*p.memory.events.time_ns.last().unwrap(), 40_000);
    assert_eq!(*p.memory.events.allocated_bytes.last().unwrap(), 1536);
}

#[test]
fn cpu_only_snapshot_is_a_clear_error() {
    let snap = P::Dict(vec![
        ("segments", P::List(vec![])),
        ("device_traces", P::List(vec![])),
        ("allocator_settings", P::Dict(vec![])),
    ]);
    let e = load("cpu_run.pickle", &dumps(&snap, 4)).unwrap_err();
    assert!(matches!(e, ImportError::Unsupported { .. }), "{e}");
    let text = e.to_string();
    assert!(text.starts_with("cpu_run.pickle: "), "{text}");
    assert!(text.contains("no CUDA memory"), "{text}");
}

#[test]
fn pickles_that_are_not_snapshots_are_refused() {
    let e = load("list.pickle", &dumps(&P::List(vec![P::Int(1)]), 4)).unwrap_err();
    assert!(matches!(e, ImportError::UnknownFormat { .. }), "{e}");
    assert!(e.to_string().contains("a Python pickle of a list"), "{e}");
    let e = load("dict.pickle", &dumps(&P::Dict(vec![("a", P::None)]), 2)).unwrap_err();
    assert!(e.to_string().contains("no `segments` key"), "{e}");
    // Protocol 1 has no header: not sniffed as a pickle.
    let e = load("p1.pickle", b"]q\x00.").unwrap_err();
    assert!(matches!(e, ImportError::UnknownFormat { .. }), "{e}");
}

#[test]
fn every_refused_opcode_names_itself_and_its_offset() {
    for (code, name) in [
        (b'c', "GLOBAL"),
        (0x93, "STACK_GLOBAL"),
        (b'R', "REDUCE"),
        (b'b', "BUILD"),
        (b'i', "INST"),
        (b'o', "OBJ"),
        (0x81, "NEWOBJ"),
        (0x92, "NEWOBJ_EX"),
        (b'P', "PERSID"),
        (b'Q', "BINPERSID"),
        (0x82, "EXT1"),
        (0x83, "EXT2"),
        (0x84, "EXT4"),
    ] {
        let mut data = dumps(&P::Dict(vec![("segments", P::List(vec![]))]), 2);
        let at = data.len() - 1;
        data.insert(at, code);
        let e = load("evil.pickle", &data).unwrap_err();
        assert!(matches!(e, ImportError::Unsupported { .. }), "{name}: {e}");
        let text = e.to_string();
        assert!(text.contains(name), "{text}");
        assert!(text.contains(&format!("byte {at}")), "{text}");
    }
}

#[test]
fn a_cut_at_every_byte_is_an_error_never_a_panic() {
    let data = dumps(&small_snapshot(vec![]), 4);
    for n in 0..data.len() {
        let e = load("cut.pickle", &data[..n]).unwrap_err();
        if n >= 2 {
            assert!(matches!(e, ImportError::Corrupt { .. }), "cut at {n}: {e}");
            assert!(e.to_string().contains("byte "), "{e}");
        }
    }
    // A cut without FRAME (protocol 2) too.
    let data = dumps(&small_snapshot(vec![]), 2);
    for n in 2..data.len() {
        let e = load("cut.pickle", &data[..n]).unwrap_err();
        assert!(matches!(e, ImportError::Corrupt { .. }), "cut at {n}: {e}");
    }
}

#[test]
fn a_shared_trace_list_is_read_once() {
    // Device 1 shares device 0's trace list.
    let entries = P::Put(Box::new(P::List(vec![entry("alloc", 1, 2, 5, P::None)])), 7);
    let snap = P::Dict(vec![
        ("segments", P::List(vec![])),
        ("device_traces", P::List(vec![entries, P::Get(7)])),
    ]);
    let p = load("shared.pickle", &dumps(&snap, 4)).unwrap();
    assert_eq!(p.memory.events.len(), 1);
    assert_eq!(p.warnings[0].code, "snapshot_shared_list");
}
