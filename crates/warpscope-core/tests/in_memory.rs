//! The in-memory entry point (`import_bytes`) reads every sample exactly as `import_file` does,
//! including gzip-compressed SQLite databases, which go through a temporary file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::path::Path;

use warpscope_core::{Progress, import_bytes, import_file};

/// What a user would compare between two loads: the tool, the events per track and the
/// warnings.
fn fingerprint(p: &warpscope_core::Profile) -> String {
    let mut s = format!("{:?} {:?}\n", p.source.format, p.source.tool);
    for t in &p.tracks {
        let total: i64 = t.events.dur_ns.iter().sum();
        s.push_str(&format!(
            "{:?}: {} events, {} ns, first {:?}\n",
            t.key,
            t.events.len(),
            total,
            t.events.start_ns.first()
        ));
    }
    for w in &p.warnings {
        s.push_str(&format!("warning {} x{}\n", w.code, w.count));
    }
    s
}

fn all_samples() -> Vec<std::path::PathBuf> {
    let Some(dir) = common::samples_dir() else {
        eprintln!("skipping: ../shared/samples not found");
        return Vec::new();
    };
    let mut files = Vec::new();
    for sub in std::fs::read_dir(&dir).unwrap() {
        let sub = sub.unwrap().path();
        if !sub.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&sub).unwrap() {
            let f = f.unwrap().path();
            // The 9 MB 60-step trace adds nothing here that the others do not cover.
            if f.metadata().unwrap().len() < 4_000_000 {
                files.push(f);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn bytes_load_like_files() {
    let files = all_samples();
    for path in &files {
        let data = std::fs::read(path).unwrap();
        let from_file = import_file(path, &Progress::new());
        let from_bytes = import_bytes(path, &data, &Progress::new());
        match (from_file, from_bytes) {
            (Ok(a), Ok(b)) => assert_eq!(fingerprint(&a), fingerprint(&b), "{}", path.display()),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!(
                "{}: file {:?} but bytes {:?}",
                path.display(),
                a.err().map(|e| e.to_string()),
                b.err().map(|e| e.to_string())
            ),
        }
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn gzip_compressed_sqlite_loads_and_leaves_no_temporary_file() {
    let Some(path) = common::sample("nvprof-sqlite/csl7520_titanxpascal_matrix_profile.nvvp")
    else {
        return;
    };
    let plain = import_file(&path, &Progress::new()).unwrap();
    let gz = gzip(&std::fs::read(&path).unwrap());
    let from_bytes = import_bytes(Path::new("matrix.nvvp.gz"), &gz, &Progress::new()).unwrap();
    assert_eq!(fingerprint(&plain), fingerprint(&from_bytes));
    assert!(from_bytes.source.compressed);

    let dir = tempfile_dir();
    let file = dir.join("matrix.nvvp.gz");
    std::fs::write(&file, &gz).unwrap();
    let before = warpscope_temp_files();
    let from_file = import_file(&file, &Progress::new()).unwrap();
    assert_eq!(fingerprint(&plain), fingerprint(&from_file));
    assert_eq!(
        warpscope_temp_files(),
        before,
        "the decompressed copy was left behind"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ws-in-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn warpscope_temp_files() -> Vec<String> {
    let pid = format!("warpscope-{}-", std::process::id());
    let mut v: Vec<String> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&pid))
        .collect();
    v.sort();
    v
}

#[test]
fn broken_bytes_name_the_given_name() {
    let err = import_bytes(
        Path::new("memory.json"),
        b"{\"traceEvents\": [{\"ph\"",
        &Progress::new(),
    );
    if let Err(e) = err {
        assert!(e.to_string().starts_with("memory.json: "), "{e}");
    }
    let err = import_bytes(
        Path::new("db.sqlite"),
        b"SQLite format 3\0garbage",
        &Progress::new(),
    )
    .unwrap_err();
    assert!(err.to_string().starts_with("db.sqlite: "), "{err}");
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn a_cancelled_gzip_sqlite_import_stops_and_leaves_no_temporary_file() {
    let Some(path) = common::sample("nvprof-sqlite/csl7520_titanxpascal_matrix_profile.nvvp")
    else {
        return;
    };
    let gz = gzip(&std::fs::read(&path).unwrap());
    let progress = Progress::new();
    progress.cancel();
    let before = warpscope_temp_files();
    let err = import_bytes(Path::new("matrix.nvvp.gz"), &gz, &progress).unwrap_err();
    assert_eq!(err.to_string(), "matrix.nvvp.gz: import cancelled");
    assert_eq!(warpscope_temp_files(), before);
}

/// Everything of a profile, event by event: names as text, the details of kernels and API
/// calls, flows and warnings with their messages.
fn every_event(p: &warpscope_core::Profile) -> String {
    let mut s = String::new();
    for t in &p.tracks {
        s.push_str(&format!("{:?} {}\n", t.key, t.name));
        let ev = &t.events;
        for i in 0..ev.len() {
            s.push_str(&format!(
                "{} {} {} {:?} {:?} {:?} {:?}\n",
                ev.start_ns[i],
                ev.dur_ns[i],
                p.str(ev.name[i]),
                ev.kind[i],
                p.kernel_info(t, i),
                p.api_info(t, i),
                p.copy_info(t, i)
            ));
        }
    }
    for f in &p.flows {
        s.push_str(&format!("{f:?}\n"));
    }
    for w in &p.warnings {
        s.push_str(&format!("{} x{}: {}\n", w.code, w.count, w.message));
    }
    s
}

/// An Nsight Systems export read from a file reads its runtime table on a second connection
/// on another thread; from memory everything is read on one. The two must not differ in any
/// event, detail, flow or warning.
#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn nsys_tables_read_on_two_threads_give_the_profile_read_on_one() {
    let Some(dir) = common::sample("nsys-sqlite") else {
        return;
    };
    let mut checked = 0;
    for f in std::fs::read_dir(&dir).unwrap() {
        let path = f.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let (Ok(from_file), Ok(from_bytes)) = (
            import_file(&path, &Progress::new()),
            import_bytes(&path, &data, &Progress::new()),
        ) else {
            panic!("{} does not load", path.display());
        };
        let (a, b) = (every_event(&from_file), every_event(&from_bytes));
        assert!(a == b, "{} differs between the two reads", path.display());
        checked += usize::from(!from_file.api_calls.is_empty());
    }
    assert!(checked >= 3, "only {checked} exports with API calls");
}
