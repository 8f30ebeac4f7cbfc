//! `warpscope export`: profiles, or every rank of a job, written as Parquet tables for cluster
//! engines (`warpscope-parquet`), or as CSV files of the ranked tables.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::ValueEnum;
use warpscope_core::analysis::compare::{file_stem, profile_rank};
use warpscope_core::analysis::fleet::{RankFacts, fleet_report, job_files, number_ranks};
use warpscope_core::analysis::summary_report;
use warpscope_core::{Progress, TimeRange, import_file};
use warpscope_parquet::{RunMeta, TABLES, write_parquet};

use crate::output::OutputFormat;

/// What `warpscope export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// Parquet tables, one directory per table, one file per run (docs/export.md).
    Parquet,
    /// CSV: each file's ranked tables (`summary --format csv`) as `run-00000-<name>.summary.csv`,
    /// and for several files the per-rank table of `fleet` (`fleet_ranks.csv`).
    Csv,
}

/// What one file's export wrote.
struct RunDone {
    rows: Vec<(&'static str, usize)>,
    /// What `fleet_ranks.csv` needs of the file (CSV only).
    facts: Option<RankFacts>,
    /// The files written.
    files: Vec<PathBuf>,
}

/// Writes the files (and the trace files of the directories) given under `out`, each file on
/// its own thread (all cores). Returns the lines to print.
///
/// # Errors
///
/// A file that cannot be read or written; the message names it.
pub fn export(paths: &[PathBuf], out: &Path, format: ExportFormat) -> Result<String> {
    let files = job_files(paths)?;
    if out.exists() && !out.is_dir() {
        anyhow::bail!(
            "{}: --out must be a directory, and this is a file",
            out.display()
        );
    }
    std::fs::create_dir_all(out).with_context(|| format!("{}: cannot create", out.display()))?;
    let mut slots: Vec<(usize, PathBuf)> = files.iter().cloned().enumerate().collect();
    let results = warpscope_core::parallel::map_mut(
        &mut slots,
        |(_, f)| std::fs::metadata(f).map_or(0, |m| usize::try_from(m.len()).unwrap_or(0)),
        |(position, file)| {
            warpscope_core::parallel::with_threads(1, || export_one(file, *position, out, format))
        },
    );
    let mut done = Vec::with_capacity(results.len());
    for r in results {
        done.push(r?);
    }
    let mut written: HashSet<PathBuf> = done.iter().flat_map(|d| d.files.clone()).collect();
    let mut text = String::new();
    let fleet_csv = write_fleet_csv(out, format, &mut done, &mut text)?;
    written.extend(fleet_csv);
    // Only once everything is written: what an earlier export left and this one did not
    // overwrite goes, so that an export that fails half-way leaves the earlier one readable.
    let stale = remove_earlier_export(out, format, &written)?;
    if stale > 0 {
        text.push_str(&format!(
            "removed {stale} file{} of an earlier export from {}/\n",
            if stale == 1 { "" } else { "s" },
            out.display()
        ));
    }
    match format {
        ExportFormat::Parquet => {
            text.push_str(&format!(
                "wrote {} run{} as Parquet under {}/:\n",
                done.len(),
                if done.len() == 1 { "" } else { "s" },
                out.display()
            ));
            for (t, table) in TABLES.iter().enumerate() {
                let rows: usize = done.iter().map(|d| d.rows[t].1).sum();
                text.push_str(&format!("  {table}/  {rows} rows\n"));
            }
        }
        ExportFormat::Csv => {
            text.push_str(&format!("wrote CSV under {}/\n", out.display()));
        }
    }
    Ok(text)
}

/// With CSV and several files: `fleet_ranks.csv`, the ranks as `warpscope fleet` numbers them
/// (files of one rank are not one job: then a line in `text` says why there is none). Returns
/// the file written.
fn write_fleet_csv(
    out: &Path,
    format: ExportFormat,
    done: &mut [RunDone],
    text: &mut String,
) -> Result<Option<PathBuf>> {
    if format != ExportFormat::Csv || done.len() < 2 {
        return Ok(None);
    }
    let mut facts: Vec<RankFacts> = done.iter_mut().filter_map(|d| d.facts.take()).collect();
    match number_ranks(&mut facts) {
        Ok(()) => {
            let report = fleet_report(&facts);
            let path = out.join("fleet_ranks.csv");
            std::fs::write(&path, crate::report::fleet(&report, 0, OutputFormat::Csv)?)
                .with_context(|| format!("{}: cannot write", path.display()))?;
            Ok(Some(path))
        }
        Err(e) => {
            text.push_str(&format!(
                "no fleet_ranks.csv, the files are not the ranks of one job: {e}\n"
            ));
            Ok(None)
        }
    }
}

/// Removes the files an earlier export left under `out` (`<table>/run-NNNNN.parquet`, or
/// `run-NNNNN-*.summary.csv` and `fleet_ranks.csv`) that this one did not write (`written`), so
/// that a job of fewer ranks written over a larger one does not leave the larger one's ranks to
/// be read with it (every engine reads a table as all the files of its directory). Other files
/// are left alone. Returns how many went.
fn remove_earlier_export(
    out: &Path,
    format: ExportFormat,
    written: &HashSet<PathBuf>,
) -> Result<usize> {
    let mut removed = 0;
    let mut remove_matching = |dir: &Path, is_ours: &dyn Fn(&str) -> bool| -> Result<()> {
        let Ok(list) = std::fs::read_dir(dir) else {
            return Ok(());
        };
        for entry in list.filter_map(Result::ok) {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_file() && is_ours(&name) && !written.contains(&path) {
                std::fs::remove_file(&path)
                    .with_context(|| format!("{}: cannot remove", path.display()))?;
                removed += 1;
            }
        }
        Ok(())
    };
    match format {
        ExportFormat::Parquet => {
            for table in TABLES {
                remove_matching(&out.join(table), &|n| {
                    n.strip_prefix("run-")
                        .and_then(|n| n.strip_suffix(".parquet"))
                        .is_some_and(is_run_number)
                })?;
            }
        }
        ExportFormat::Csv => remove_matching(out, &|n| {
            n == "fleet_ranks.csv"
                || (n.ends_with(".summary.csv")
                    && n.strip_prefix("run-")
                        .and_then(|n| n.split_once('-'))
                        .is_some_and(|(number, _)| is_run_number(number)))
        })?,
    }
    Ok(removed)
}

/// True for the run numbers the export writes: five digits or more.
fn is_run_number(text: &str) -> bool {
    text.len() >= 5 && text.bytes().all(|b| b.is_ascii_digit())
}

/// Reads one file and writes it as run `position`.
fn export_one(file: &Path, position: usize, out: &Path, format: ExportFormat) -> Result<RunDone> {
    let profile = import_file(file, &Progress::default())?;
    // What the tables written leave out, before the list of what was written.
    for w in &profile.warnings {
        eprintln!(
            "warpscope: warning: {}: {}",
            file.display(),
            crate::warning_text(w)
        );
    }
    let mut facts = None;
    let mut files = Vec::new();
    let rows = match format {
        ExportFormat::Parquet => {
            let meta = RunMeta {
                run: i32::try_from(position).context("more than 2^31 files")?,
                rank: profile_rank(&profile),
                world_size: profile.distributed.as_ref().and_then(|d| d.world_size),
            };
            write_parquet(&profile, meta, out)?
                .tables
                .into_iter()
                .map(|(t, file, rows)| {
                    files.push(file);
                    (t, rows)
                })
                .collect()
        }
        ExportFormat::Csv => {
            facts = Some(RankFacts::of(&profile, position));
            let summary = summary_report(&profile, TimeRange::ALL, None);
            // Numbered like the Parquet files: two files of one name in two folders do not
            // overwrite each other.
            let stem = file_stem(&file.to_string_lossy()).to_string();
            let path = out.join(format!("run-{position:05}-{stem}.summary.csv"));
            std::fs::write(&path, crate::report::summary(&summary, OutputFormat::Csv)?)
                .with_context(|| format!("{}: cannot write", path.display()))?;
            files.push(path);
            Vec::new()
        }
    };
    Ok(RunDone { rows, facts, files })
}
