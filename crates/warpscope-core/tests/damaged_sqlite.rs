//! Damages every sample database under `../shared/samples/{nvprof-sqlite,nsys-sqlite}` and the
//! AMD ones under `../shared/samples/rocm` (rocprofv3, RPD, rocprof v1) in every systematic way
//! and loads each variant from memory: drop each table the importers read, drop
//! each column of those tables (the table rebuilt without it), set a column to NULL, put
//! `i64::MIN`, `i64::MAX`, 0, -1, ±1e300, text, a blob or a dangling string id in a cell,
//! empty the string table (every id dangles) and duplicate every row.
//!
//! Every variant must end in a clear error (the message starts with the file's name and names a
//! table) or a load; a load must have no negative duration, no end that overflows, a span that
//! is neither negative nor overflowing, and non-negative GPU totals in every summary table. A
//! damaged time (`start`, `end`, `timestamp`) must also give an error or a warning that names
//! the table, and so must a missing nvprof activity table. Panics are caught and reported by
//! variant.
//!
//! The default run covers a deterministic subset (every table-level damage, every damage of a
//! time column and every third of the others); `WARPSCOPE_SLOW_TESTS=1` runs the full matrix.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Mutex;

use rusqlite::types::Value;
use rusqlite::{Connection, MAIN_DB};
use warpscope_core::analysis::{gpu_total_ns, summary_report};
use warpscope_core::{Profile, Progress, TimeRange, import_bytes};

/// Tables the nvprof importer reads.
const NVPROF_TABLES: [&str; 15] = [
    "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMCPY2",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_DRIVER",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "CUPTI_ACTIVITY_KIND_CONTEXT",
    "CUPTI_ACTIVITY_KIND_DEVICE",
    "CUPTI_ACTIVITY_KIND_NAME",
    "CUPTI_ACTIVITY_KIND_MARKER",
    "CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER",
    "StringTable",
    "Version",
];

/// nvprof activity tables (nvprof writes them all, even empty).
const NVPROF_ACTIVITY: [&str; 8] = [
    "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_DRIVER",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "CUPTI_ACTIVITY_KIND_MARKER",
];

/// Tables the Nsight Systems importer reads.
const NSYS_TABLES: [&str; 14] = [
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "NVTX_EVENTS",
    "StringIds",
    "EXPORT_META_DATA",
    "META_DATA_EXPORT",
    "TARGET_INFO_SESSION_START_TIME",
    "TARGET_INFO_GPU",
    "TARGET_INFO_CUDA_DEVICE",
    "PROCESSES",
    "ThreadNames",
];

/// Columns that hold event times.
const TIME_COLUMNS: [&str; 5] = ["start", "end", "timestamp", "BeginNs", "EndNs"];

/// The time columns the AMD importers read, by table (a rocprofv3 table's name is this plus
/// its session suffix): a damaged value there must be reported. The other tables' times
/// (process and thread lifetimes, an allocation's end) are not read.
const AMD_TIMED: [(&str, &str); 18] = [
    ("rocpd_kernel_dispatch", "start"),
    ("rocpd_kernel_dispatch", "end"),
    ("rocpd_memory_copy", "start"),
    ("rocpd_memory_copy", "end"),
    ("rocpd_region", "start"),
    ("rocpd_region", "end"),
    ("rocpd_sample", "timestamp"),
    ("rocpd_memory_allocate", "start"),
    ("rocpd_op", "start"),
    ("rocpd_op", "end"),
    ("rocpd_api", "start"),
    ("rocpd_api", "end"),
    ("HIP", "BeginNs"),
    ("HIP", "EndNs"),
    ("OPS", "BeginNs"),
    ("OPS", "EndNs"),
    ("COPY", "BeginNs"),
    ("COPY", "EndNs"),
];

/// Which importer a sample goes to, which decides what must be reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Nvprof,
    Nsys,
    /// rocprofv3 and RPD: 0 is a real time (only `start = end = 0` is "not collected").
    Amd,
    /// rocprof v1: a time of 0 is "not collected", as in nvprof.
    RocprofV1,
}

/// A string id no sample has.
const DANGLING_ID: i64 = 987_654_321;

/// One way of damaging a database.
#[derive(Clone, Debug)]
enum Damage {
    DropTable(String),
    DropColumn(String, String),
    /// Sets the column to NULL in every row.
    NullColumn(String, String),
    /// Sets the column of the table's first row.
    SetFirst(String, String, Value),
    DuplicateRows(String),
    /// Deletes every string, so that every string id dangles.
    EmptyStrings(String),
}

impl Damage {
    fn table(&self) -> &str {
        match self {
            Self::DropTable(t)
            | Self::DropColumn(t, _)
            | Self::NullColumn(t, _)
            | Self::SetFirst(t, _, _)
            | Self::DuplicateRows(t)
            | Self::EmptyStrings(t) => t,
        }
    }

    fn column(&self) -> Option<&str> {
        match self {
            Self::DropColumn(_, c) | Self::NullColumn(_, c) | Self::SetFirst(_, c, _) => Some(c),
            _ => None,
        }
    }

    /// True for damage no importer may accept silently: a time column holding a value outside
    /// the plausibility rule, or (nvprof, which writes every activity table even when empty) a
    /// missing activity table.
    fn must_be_reported(&self, kind: Kind) -> bool {
        if let Self::DropTable(t) = self {
            return kind == Kind::Nvprof && NVPROF_ACTIVITY.contains(&t.as_str());
        }
        let Self::SetFirst(t, c, v) = self else {
            return false;
        };
        if !TIME_COLUMNS.contains(&c.as_str()) {
            return false;
        }
        if matches!(kind, Kind::Amd | Kind::RocprofV1)
            && !AMD_TIMED.iter().any(|&(table, column)| {
                c == column
                    && (t == table
                        || t.strip_prefix(table)
                            .is_some_and(|suffix| suffix.starts_with("_0")))
            })
        {
            return false;
        }
        match v {
            Value::Integer(0) => matches!(kind, Kind::Nvprof | Kind::RocprofV1),
            Value::Integer(i) => *i < 0 || *i == i64::MAX,
            Value::Real(_) | Value::Text(_) | Value::Blob(_) => true,
            Value::Null => false,
        }
    }

    /// Table-level damages and damage to time columns always run; the rest by thirds.
    fn in_default_subset(&self, index: usize) -> bool {
        match self.column() {
            None => true,
            Some(c) if TIME_COLUMNS.contains(&c) => true,
            Some(_) => index.is_multiple_of(3),
        }
    }

    fn apply(&self, conn: &Connection) -> rusqlite::Result<()> {
        let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        match self {
            Self::DropTable(t) => conn.execute_batch(&format!("DROP TABLE {}", q(t))),
            Self::DropColumn(t, c) => {
                let cols = columns(conn, t)?;
                let kept: Vec<String> = cols.iter().filter(|x| *x != c).map(|x| q(x)).collect();
                conn.execute_batch(&format!(
                    "CREATE TABLE damaged AS SELECT {} FROM {t}; DROP TABLE {t};
                     ALTER TABLE damaged RENAME TO {t};",
                    kept.join(", "),
                    t = q(t)
                ))
            }
            Self::NullColumn(t, c) => conn
                .execute(&format!("UPDATE {} SET {} = NULL", q(t), q(c)), [])
                .map(drop),
            Self::SetFirst(t, c, v) => conn
                .execute(
                    &format!(
                        "UPDATE {t} SET {} = ?1 WHERE rowid = (SELECT min(rowid) FROM {t})",
                        q(c),
                        t = q(t)
                    ),
                    [v],
                )
                .map(drop),
            Self::DuplicateRows(t) => conn.execute_batch(&format!(
                "CREATE TABLE damaged AS SELECT * FROM {t}; INSERT INTO damaged SELECT * FROM {t};
                 DROP TABLE {t}; ALTER TABLE damaged RENAME TO {t};",
                t = q(t)
            )),
            Self::EmptyStrings(t) => conn.execute_batch(&format!("DELETE FROM {}", q(t))),
        }
    }
}

fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!("PRAGMA table_info(\"{table}\")"))?;
    let names = stmt.query_map([], |r| r.get::<_, String>(1))?;
    names.collect()
}

fn open_copy(data: &[u8]) -> Connection {
    let mut conn = Connection::open_in_memory().unwrap();
    conn.deserialize_read_exact(MAIN_DB, data, data.len(), false)
        .unwrap();
    conn
}

/// Every damage of one sample.
fn damages(data: &[u8], kind: Kind) -> Vec<Damage> {
    let conn = open_copy(data);
    // The AMD formats: every table of the file (their names carry a session suffix).
    let all: Vec<String> = {
        let mut stmt = conn
            .prepare(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
            )
            .unwrap();
        let names = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
        names.map(Result::unwrap).collect()
    };
    let read: Vec<&str> = match kind {
        Kind::Nvprof => NVPROF_TABLES.to_vec(),
        Kind::Nsys => NSYS_TABLES.to_vec(),
        Kind::Amd | Kind::RocprofV1 => all.iter().map(String::as_str).collect(),
    };
    let mut out = match kind {
        Kind::Nvprof => vec![Damage::EmptyStrings("StringTable".to_string())],
        Kind::Nsys => vec![Damage::EmptyStrings("StringIds".to_string())],
        Kind::Amd | Kind::RocprofV1 => all
            .iter()
            .filter(|t| t.starts_with("rocpd_string"))
            .map(|t| Damage::EmptyStrings(t.clone()))
            .collect(),
    };
    for t in read {
        let cols = columns(&conn, t).unwrap();
        if cols.is_empty() {
            continue; // not in this sample
        }
        let t = t.to_string();
        out.push(Damage::DropTable(t.clone()));
        let rows: i64 = conn
            .query_row(&format!("SELECT count(*) FROM \"{t}\""), [], |r| r.get(0))
            .unwrap();
        if rows == 0 {
            continue;
        }
        out.push(Damage::DuplicateRows(t.clone()));
        for c in cols {
            out.push(Damage::DropColumn(t.clone(), c.clone()));
            out.push(Damage::NullColumn(t.clone(), c.clone()));
            for v in [
                Value::Integer(i64::MIN),
                Value::Integer(i64::MAX),
                Value::Integer(0),
                Value::Integer(-1),
                Value::Integer(DANGLING_ID),
                Value::Real(1e300),
                Value::Real(-1e300),
                Value::Text("not a number".to_string()),
                Value::Blob(vec![0xFF, 0, 1]),
            ] {
                out.push(Damage::SetFirst(t.clone(), c.clone(), v));
            }
        }
    }
    out
}

/// How a variant ended.
#[derive(Default)]
struct Tally {
    errors: usize,
    warned: usize,
    clean: usize,
    not_applicable: usize,
    failures: Vec<String>,
}

/// The message of the last panic, with its location (set by the hook installed in the test).
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Checks what a user would see of a loaded profile; returns the problems found.
fn check_profile(p: &Profile) -> Vec<String> {
    let mut problems = Vec::new();
    for t in &p.tracks {
        for i in 0..t.events.len() {
            let (s, d) = (t.events.start_ns[i], t.events.dur_ns[i]);
            if d < 0 {
                problems.push(format!("negative duration {d} on track {}", t.name));
            }
            if s.checked_add(d).is_none() {
                problems.push(format!("end overflows: start {s} + {d}"));
            }
        }
    }
    if let Some((s, e)) = p.span_ns() {
        match e.checked_sub(s) {
            Some(span) if span >= 0 => {}
            _ => problems.push(format!("span {s}..{e} is negative or overflows")),
        }
    }
    let total = gpu_total_ns(p, TimeRange::ALL);
    if total < 0 {
        problems.push(format!("negative GPU total {total}"));
    }
    let report = summary_report(p, TimeRange::ALL, None);
    if report.gpu_total_ns < 0 {
        problems.push(format!(
            "negative summary GPU total {}",
            report.gpu_total_ns
        ));
    }
    for r in &report.gpu_activities {
        if r.stats.total_ns < 0 || r.stats.min_ns < 0 || r.stats.avg_ns < 0 {
            problems.push(format!("negative GPU activity row {}", r.name));
        }
    }
    for r in &report.api {
        if r.stats.total_ns < 0 {
            problems.push("negative API row".to_string());
        }
    }
    problems
}

/// `(code, count)` of every warning.
fn warning_counts(p: &Profile) -> Vec<(String, u64)> {
    p.warnings
        .iter()
        .map(|w| (w.code.clone(), w.count))
        .collect()
}

fn run_variant(
    rel: &str,
    data: &[u8],
    baseline: &[(String, u64)],
    damage: &Damage,
    kind: Kind,
    tally: &mut Tally,
) {
    let conn = open_copy(data);
    if damage.apply(&conn).is_err() {
        // SQLite refuses it (a NULL or text in an INTEGER PRIMARY KEY, a dropped table
        // that a view needs): not a file anyone can write.
        tally.not_applicable += 1;
        return;
    }
    let bytes = {
        let mut conn = conn;
        conn.serialize(MAIN_DB).unwrap().to_vec()
    };
    let name = Path::new(rel);
    let what = format!("{rel}: {damage:?}");
    let result = catch_unwind(AssertUnwindSafe(|| {
        let loaded = import_bytes(name, &bytes, &Progress::new());
        let problems = loaded.as_ref().map(check_profile).unwrap_or_default();
        (loaded, problems)
    }));
    let Ok((loaded, problems)) = result else {
        let msg = LAST_PANIC.lock().unwrap().take().unwrap_or_default();
        tally.failures.push(format!("{what}: PANIC {msg}"));
        return;
    };
    for p in problems {
        tally.failures.push(format!("{what}: {p}"));
    }
    match loaded {
        Err(e) => {
            tally.errors += 1;
            let msg = e.to_string();
            if !msg.starts_with(rel) || !msg.contains("table") {
                tally
                    .failures
                    .push(format!("{what}: unclear error `{msg}`"));
            }
        }
        Ok(p) => {
            let now = warning_counts(&p);
            let new_warnings: Vec<&(String, u64)> =
                now.iter().filter(|w| !baseline.contains(w)).collect();
            if new_warnings.is_empty() {
                tally.clean += 1;
            } else {
                tally.warned += 1;
            }
            if damage.must_be_reported(kind) {
                let named = p.warnings.iter().any(|w| {
                    new_warnings.iter().any(|(c, _)| *c == w.code)
                        && w.message.contains(damage.table())
                });
                if !named {
                    tally.failures.push(format!(
                        "{what}: loaded without a warning naming the table (warnings: {:?})",
                        p.warnings
                    ));
                }
            }
        }
    }
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn every_damaged_sample_database_fails_clearly_or_loads_sanely() {
    let Some(dir) = common::samples_dir() else {
        eprintln!("skipping: ../shared/samples not found");
        return;
    };
    let slow = std::env::var("WARPSCOPE_SLOW_TESTS").is_ok_and(|v| v == "1");
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        *LAST_PANIC.lock().unwrap() = Some(info.to_string());
    }));
    let mut tally = Tally::default();
    let mut ran = 0usize;
    for (folder, folder_kind) in [
        ("nvprof-sqlite", Kind::Nvprof),
        ("nsys-sqlite", Kind::Nsys),
        ("rocm", Kind::Amd),
    ] {
        let mut files: Vec<_> = std::fs::read_dir(dir.join(folder))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                // The rocm folder holds text formats too: only its databases.
                std::fs::read(p).is_ok_and(|d| d.starts_with(b"SQLite format 3\0"))
            })
            .collect();
        files.sort();
        for path in files {
            let kind = if folder_kind == Kind::Amd
                && path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("rocprofv1"))
            {
                Kind::RocprofV1
            } else {
                folder_kind
            };
            let data = std::fs::read(&path).unwrap();
            let rel = format!("{folder}/{}", path.file_name().unwrap().to_string_lossy());
            let baseline = match import_bytes(Path::new(&rel), &data, &Progress::new()) {
                Ok(p) => warning_counts(&p),
                Err(e) => panic!("undamaged sample does not load: {e}"),
            };
            for (i, damage) in damages(&data, kind).iter().enumerate() {
                if slow || damage.in_default_subset(i) {
                    ran += 1;
                    run_variant(&rel, &data, &baseline, damage, kind, &mut tally);
                }
            }
        }
    }
    std::panic::set_hook(previous_hook);
    println!(
        "{ran} damaged variants ({}): {} errors, {} loads with warnings, {} clean loads, {} \
         damages SQLite refused",
        if slow {
            "full matrix"
        } else {
            "default subset"
        },
        tally.errors,
        tally.warned,
        tally.clean,
        tally.not_applicable
    );
    assert!(
        tally.failures.is_empty(),
        "{} of {ran} variants failed:\n{}",
        tally.failures.len(),
        tally.failures.join("\n")
    );
}

/// An Nsight Systems export of `n` runtime calls, each with its own name, thread and process,
/// and a `StringIds` table with (`indexed`) or without an index on its ids.
fn many_names_export(n: i64, indexed: bool) -> Vec<u8> {
    let mut c = Connection::open_in_memory().unwrap();
    let key = if indexed {
        "INTEGER PRIMARY KEY"
    } else {
        "INTEGER"
    };
    c.execute_batch(&format!(
        "CREATE TABLE StringIds (id {key}, value TEXT);
         CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT);
         CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, nameId INTEGER,
             eventClass INTEGER, globalTid INTEGER, correlationId INTEGER);
         CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);"
    ))
    .unwrap();
    let tx = c.transaction().unwrap();
    for i in 0..n {
        let g = ((i + 1) << 24) | 1;
        tx.execute(
            "INSERT INTO StringIds VALUES (?1, ?2)",
            (i, format!("cudaCall{i}")),
        )
        .unwrap();
        tx.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?1, ?2, ?3, 0, ?4, ?5)",
            (i * 10, i * 10 + 5, i, g, i),
        )
        .unwrap();
        tx.execute(
            "INSERT INTO PROCESSES VALUES (?1, ?2, ?3)",
            ((i + 1) << 24, i + 1, format!("p{i}")),
        )
        .unwrap();
    }
    tx.commit().unwrap();
    c.serialize(MAIN_DB).unwrap().to_vec()
}

/// Prints import times of exports with many distinct names, threads and processes (string
/// lookups without an index, process names checked against a list were quadratic). A
/// measurement, not a check: `cargo test -p warpscope-core --test all -- --ignored measure_many
/// --nocapture`.
#[test]
#[ignore = "measurement"]
fn measure_many_distinct_names() {
    for n in [20_000, 50_000, 200_000] {
        for indexed in [true, false] {
            let data = many_names_export(n, indexed);
            let t = std::time::Instant::now();
            let p = import_bytes(Path::new("many.sqlite"), &data, &Progress::new()).unwrap();
            println!(
                "{n} calls, string ids {}: {:.2} s ({} events)",
                if indexed { "indexed" } else { "not indexed" },
                t.elapsed().as_secs_f64(),
                p.event_count()
            );
        }
    }
}
