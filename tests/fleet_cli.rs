//! `warpscope fleet` end to end: jobs written by `scripts/gen_ranks.py` with planted stragglers,
//! and the real multi-rank samples.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{stderr, stdout, warpscope};
use serde_json::Value;

/// A fresh directory under the system's temporary one.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpscope-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes a job with `scripts/gen_ranks.py`, or `None` when python3 cannot run.
fn generate(name: &str, args: &[&str]) -> Option<PathBuf> {
    let dir = temp_dir(name);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen_ranks.py");
    let out = match Command::new("python3")
        .arg(&script)
        .arg(&dir)
        .args(args)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipping: python3 cannot run: {e}");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(dir)
}

fn fleet_json(dir: &Path) -> Value {
    let out = warpscope(&["fleet", dir.to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("fleet JSON")
}

fn ranks_of(v: &Value, key: &str) -> Vec<i64> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rank"].as_i64().unwrap())
        .collect()
}

#[test]
fn eight_ranks_the_late_rank_then_the_slow_one() {
    let Some(dir) = generate("fleet8", &["--ranks", "8"]) else {
        return;
    };
    let v = fleet_json(&dir);
    assert_eq!(ranks_of(&v, "ranks"), (0..8).collect::<Vec<_>>());
    assert_eq!(&ranks_of(&v, "stragglers")[..2], &[2, 5]);
    // The documented keys, integers in ns.
    for row in v["ranks"].as_array().unwrap() {
        for key in ["steps", "step_ns", "compute_ns", "comm_ns", "idle_ns"] {
            assert!(row[key].is_i64(), "{key} in {row}");
        }
        assert!(row["file"].as_str().unwrap().ends_with(".json"));
        assert_eq!(row["steps"], 4);
    }
    let top = &v["stragglers"][0];
    assert!(top["score"].is_i64());
    assert!(top["reason"].as_str().unwrap().contains("last to arrive"));
    // 4 steps × 3 buckets of all-reduce in group 0, and per step one all-gather in each half.
    let c = v["collectives"].as_array().unwrap();
    let count = |g: &str| c.iter().filter(|x| x["group"] == g).count();
    assert_eq!((count("0"), count("1"), count("2")), (12, 4, 4));
    assert!(
        c.iter()
            .filter(|x| x["group"] == "0")
            .all(|x| x["ranks"] == 8)
    );
    assert!(
        c.iter()
            .filter(|x| x["group"] != "0")
            .all(|x| x["ranks"] == 4)
    );
    // Rank 5 computes 30% longer than the others.
    let compute = |r: usize| v["ranks"][r]["compute_ns"].as_i64().unwrap();
    #[allow(clippy::cast_precision_loss)]
    let ratio = compute(5) as f64 / compute(0) as f64;
    assert!((1.25..1.35).contains(&ratio), "{ratio}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn sixty_four_ranks_name_the_planted_straggler_first() {
    for (name, args, want) in [
        (
            "fleet64slow",
            ["--slow-rank", "41", "--late-rank", "-1"],
            41,
        ),
        (
            "fleet64late",
            ["--slow-rank", "-1", "--late-rank", "17"],
            17,
        ),
    ] {
        let mut all = vec!["--ranks", "64", "--steps", "2", "--gzip"];
        all.extend(args);
        let Some(dir) = generate(name, &all) else {
            return;
        };
        let v = fleet_json(&dir);
        assert_eq!(v["ranks"].as_array().unwrap().len(), 64);
        assert_eq!(ranks_of(&v, "stragglers")[0], want, "{name}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}

#[test]
fn the_table_names_the_stragglers_and_the_worst_collectives() {
    let Some(dir) = generate(
        "fleet4",
        &["--ranks", "4", "--slow-rank", "3", "--late-rank", "-1"],
    ) else {
        return;
    };
    let out = warpscope(&["fleet", dir.to_str().unwrap(), "--top", "3"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Job of 4 ranks, on one clock"), "{text}");
    assert!(text.contains("  1. rank 3: score "), "{text}");
    assert!(text.contains("compute "), "{text}");
    assert!(
        text.contains("Collectives matched across ranks: 20"),
        "{text}"
    );
    let csv = stdout(&warpscope(&[
        "fleet",
        dir.to_str().unwrap(),
        "--format",
        "csv",
    ]));
    assert!(
        csv.starts_with("rank,file,steps,step_ns,compute_ns"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 5);
    std::fs::remove_dir_all(dir).unwrap();
}

/// A JSON file beside the ranks that is not a trace (an analysis written there, a config) is
/// left out with one warning naming it; the ranks that are traces make the job.
#[test]
fn a_file_that_is_not_a_profile_is_left_out_with_a_warning() {
    let Some(dir) = generate(
        "fleet-extra",
        &["--ranks", "4", "--slow-rank", "3", "--late-rank", "-1"],
    ) else {
        return;
    };
    std::fs::write(dir.join("analysis.json"), "{\"stragglers\": [3]}").unwrap();
    std::fs::write(dir.join("config.json"), "").unwrap();
    let out = warpscope(&["fleet", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Job of 4 ranks"), "{text}");
    let warnings: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("not a profile") || l.contains("not profiles"))
        .collect();
    assert_eq!(warnings.len(), 1, "{text}");
    assert!(warnings[0].starts_with("warning: 2 files are not profiles and were left out: "));
    assert!(
        warnings[0].contains("analysis.json: not a recognised profile"),
        "{text}"
    );
    assert!(warnings[0].contains("config.json: file is empty"), "{text}");
    let v = fleet_json(&dir);
    assert_eq!(v["ranks"].as_array().unwrap().len(), 4);
    assert_eq!(ranks_of(&v, "stragglers")[0], 3);
    // Only files that are not profiles: that is an error, naming one.
    let only = temp_dir("fleet-only-extra");
    std::fs::write(only.join("analysis.json"), "{\"stragglers\": [3]}").unwrap();
    let out = warpscope(&["fleet", only.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("analysis.json: not a recognised profile"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(only).unwrap();
}

#[test]
fn bad_input_is_named() {
    let dir = temp_dir("fleet-empty");
    let out = warpscope(&["fleet", dir.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no trace files in this directory"),
        "{}",
        stderr(&out)
    );
    std::fs::write(dir.join("job_rank0.json"), "{\"traceEvents\": [").unwrap();
    let out = warpscope(&["fleet", dir.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("job_rank0.json"), "{}", stderr(&out));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn export_writes_one_parquet_file_per_table_and_run_and_csv_tables() {
    let Some(dir) = generate("fleet-export", &["--ranks", "3"]) else {
        return;
    };
    let out = dir.join("pq");
    let o = warpscope(&[
        "export",
        "--out",
        out.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("wrote 3 runs as Parquet"), "{text}");
    // 3 ranks × 4 steps × (3 buckets × (6 compute + 1 all-reduce)) kernels; no half groups
    // with 3 ranks.
    assert!(text.contains("  kernels/  252 rows"), "{text}");
    for table in warpscope_parquet::TABLES {
        for run in 0..3 {
            let f = out.join(table).join(format!("run-0000{run}.parquet"));
            assert!(f.is_file(), "{}", f.display());
        }
    }
    let csv = dir.join("csv");
    let o = warpscope(&[
        "export",
        "--format",
        "csv",
        "--out",
        csv.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ranks = std::fs::read_to_string(csv.join("fleet_ranks.csv")).unwrap();
    assert_eq!(ranks.lines().count(), 4);
    let summary = std::fs::read_to_string(csv.join("run-00001-job_rank1.summary.csv")).unwrap();
    assert!(summary.contains("ncclDevKernel_AllReduce"), "{summary}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn hostile_process_group_names_keep_the_table_readable() {
    let Some(dir) = generate(
        "fleet-pgname",
        &["--ranks", "2", "--steps", "2", "--no-subgroups"],
    ) else {
        return;
    };
    // A 1 MB process-group name with a newline: printed as written, it made each row of the
    // collectives table a megabyte long and split it in two.
    let group = format!("{}\nevil", "x".repeat(1 << 20));
    for name in ["job_rank0.json", "job_rank1.json"] {
        let path = dir.join(name);
        let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for e in v["traceEvents"].as_array_mut().unwrap() {
            if e["args"]["Process Group Name"].is_string() {
                e["args"]["Process Group Name"] = Value::from(group.as_str());
            }
        }
        std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    }
    let out = warpscope(&["fleet", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let cut = format!("{}... ", "x".repeat(21));
    assert_eq!(
        text.lines().filter(|l| l.starts_with(&cut)).count(),
        6,
        "{text}"
    );
    assert!(
        text.lines()
            .all(|l| l.len() < 300 && !l.starts_with("evil"))
    );
    // The JSON keeps the name whole.
    let v = fleet_json(&dir);
    assert_eq!(v["collectives"][0]["group"].as_str(), Some(group.as_str()));
    // --top 0 lists no row and says how many were left out, in both tables.
    let out = warpscope(&["fleet", dir.to_str().unwrap(), "--top", "0"]);
    let text = stdout(&out);
    assert!(text.ends_with("  ... 6 more\n"), "{text}");
    assert!(!text.contains(&cut), "{text}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_job_short_of_the_world_size_its_traces_give_says_so() {
    let Some(dir) = generate("fleet-world", &["--ranks", "2", "--steps", "1"]) else {
        return;
    };
    for name in ["job_rank0.json", "job_rank1.json"] {
        let path = dir.join(name);
        let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        v["distributedInfo"]["world_size"] = Value::from(4);
        std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    }
    let out = warpscope(&["fleet", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .contains("\nwarning: 2 of the 4 ranks the traces give are here; missing: 2, 3\n"),
        "{}",
        stdout(&out)
    );
    let v = fleet_json(&dir);
    assert_eq!(v["warnings"].as_array().unwrap().len(), 1);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_export_over_an_earlier_one_leaves_none_of_its_runs_behind() {
    let Some(dir) = generate("fleet-export-again", &["--ranks", "3", "--steps", "1"]) else {
        return;
    };
    let export = |format: &str, out: &Path, input: &Path| {
        let o = warpscope(&[
            "export",
            "--format",
            format,
            "--out",
            out.to_str().unwrap(),
            input.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let files_in = |d: &Path| {
        let mut names: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    // Three ranks, then one file into the same directory: runs 1 and 2 of the first export used
    // to stay, and `OUT/kernels/*.parquet` read them as part of the second. Run 0 is written
    // again; the 16 files (8 tables) of runs 1 and 2 go once the new export is complete.
    let pq = dir.join("pq");
    let rank0 = dir.join("job_rank0.json");
    export("parquet", &pq, &dir);
    std::fs::write(pq.join("kernels").join("notes.txt"), "mine").unwrap();
    let text = export("parquet", &pq, &rank0);
    assert!(
        text.starts_with(&format!(
            "removed 16 files of an earlier export from {}/\n",
            pq.display()
        )),
        "{text}"
    );
    assert_eq!(
        files_in(&pq.join("kernels")),
        ["notes.txt", "run-00000.parquet"]
    );
    assert_eq!(files_in(&pq.join("runs")), ["run-00000.parquet"]);
    let csv = dir.join("csv");
    export("csv", &csv, &dir);
    let text = export("csv", &csv, &rank0);
    assert!(
        text.starts_with("removed 3 files of an earlier export"),
        "{text}"
    );
    assert_eq!(files_in(&csv), ["run-00000-job_rank0.summary.csv"]);
    // --out naming a file.
    let o = warpscope(&[
        "export",
        "--out",
        rank0.to_str().unwrap(),
        rank0.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert_eq!(
        stderr(&o).trim_end(),
        format!(
            "warpscope: error: {}: --out must be a directory, and this is a file",
            rank0.display()
        )
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_csv_export_numbers_ranks_as_fleet_does() {
    let Some(dir) = generate("fleet-export-ranks", &["--ranks", "2", "--steps", "1"]) else {
        return;
    };
    // a.json says rank 1; b.json says nothing and has no rank in its name: `fleet` makes it
    // rank 2, but the CSV export numbered it by position (1), so fleet_ranks.csv had two rows
    // of rank 1, each with the score of the first.
    let job = dir.join("job");
    std::fs::create_dir_all(&job).unwrap();
    for (from, to, rank) in [
        ("job_rank0.json", "a.json", Some(1)),
        ("job_rank1.json", "b.json", None),
    ] {
        let mut v: Value = serde_json::from_slice(&std::fs::read(dir.join(from)).unwrap()).unwrap();
        match rank {
            Some(r) => v["distributedInfo"]["rank"] = Value::from(r),
            None => {
                v.as_object_mut().unwrap().remove("distributedInfo");
            }
        }
        std::fs::write(job.join(to), serde_json::to_vec(&v).unwrap()).unwrap();
    }
    let csv = dir.join("csv");
    let args = |out: &Path| {
        vec![
            "export".to_string(),
            "--format".into(),
            "csv".into(),
            "--out".into(),
            out.display().to_string(),
            job.display().to_string(),
        ]
    };
    let run = |a: Vec<String>| warpscope(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let o = run(args(&csv));
    assert!(o.status.success(), "{}", stderr(&o));
    let exported = std::fs::read_to_string(csv.join("fleet_ranks.csv")).unwrap();
    let fleet = warpscope(&["fleet", job.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(exported, stdout(&fleet));
    let ranks: Vec<&str> = exported
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(ranks, ["1", "2"]);
    // Two files of one rank: the summaries are written, the job table is not, and it says why.
    std::fs::copy(job.join("a.json"), job.join("c_rank1.json")).unwrap();
    let o = run(args(&csv));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!(
            "no fleet_ranks.csv, the files are not the ranks of one job: {} and {} are both rank \
             1: are they traces of two jobs?\n",
            job.join("a.json").display(),
            job.join("c_rank1.json").display()
        )),
        "{}",
        stdout(&o)
    );
    assert!(!csv.join("fleet_ranks.csv").exists());
    std::fs::remove_dir_all(dir).unwrap();
}
