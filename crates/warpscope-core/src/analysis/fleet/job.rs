//! Opening a distributed job: every rank's trace in a directory (or a list of files), read in
//! parallel, one file per core, each reduced to its [`RankFacts`] as soon as it is read.
//! Profiles are kept only when asked (the viewer merges them into one timeline); otherwise
//! memory follows the facts, not the traces.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{FleetReport, RankFacts, RankSource, fleet_report};
use crate::import::{ImportError, Progress, import_file};
use crate::model::{Profile, Warning};

/// Why a job could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// A path is neither a file nor a directory that can be listed.
    #[error("{path}: cannot list the directory: {source}")]
    ListDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A directory holds no trace file.
    #[error(
        "{path}: no trace files in this directory (looked for names ending in {})",
        TRACE_ENDINGS.join(", ")
    )]
    NoTraces {
        /// The directory.
        path: PathBuf,
    },
    /// No path was given.
    #[error("no trace files given")]
    Empty,
    /// A rank's file could not be read.
    #[error(transparent)]
    Import(#[from] ImportError),
    /// Two files claim the same rank.
    #[error("{first} and {second} are both rank {rank}: are they traces of two jobs?")]
    DuplicateRank {
        /// The rank.
        rank: i64,
        /// The first file with that rank.
        first: PathBuf,
        /// The second file with that rank.
        second: PathBuf,
    },
}

/// What [`load_job`] keeps.
#[derive(Clone, Copy, Debug, Default)]
pub struct JobOptions {
    /// Keep every rank's profile (to merge them into one timeline) besides its facts.
    pub keep_profiles: bool,
}

/// An opened job.
#[derive(Debug)]
pub struct Job {
    /// Per rank, in file order.
    pub ranks: Vec<RankFacts>,
    /// The profiles, in file order, when [`JobOptions::keep_profiles`] was set; else empty. A
    /// profile whose trace gives no rank ([`RankSource::Position`]) carries the number the job
    /// gave it in its `distributed.rank`, so that merging the profiles
    /// ([`merge_ranks`](crate::analysis::compare::merge_ranks)) names its GPU as the report
    /// names the rank.
    pub profiles: Vec<Profile>,
    /// The cross-rank analysis.
    pub report: FleetReport,
}

/// Numbers the ranks whose trace gives none (see [`number_unranked`]) and checks that no two
/// files are one rank, as [`load_job`] does: for callers that build the [`RankFacts`] of a job
/// themselves (`warpscope export`).
///
/// # Errors
///
/// [`JobError::DuplicateRank`] for the lowest rank two files share.
pub fn number_ranks(ranks: &mut [RankFacts]) -> Result<(), JobError> {
    number_unranked(ranks);
    let mut by_rank: Vec<&RankFacts> = ranks.iter().collect();
    by_rank.sort_by_key(|r| r.rank);
    for pair in by_rank.windows(2) {
        if pair[0].rank == pair[1].rank {
            return Err(JobError::DuplicateRank {
                rank: pair[0].rank,
                first: pair[0].file.clone(),
                second: pair[1].file.clone(),
            });
        }
    }
    Ok(())
}

/// Numbers the ranks whose trace gives none ([`RankSource::Position`]), in file order: after
/// the highest rank a trace gives; when that would pass `i64::MAX` (a trace claiming rank
/// `i64::MAX`), the lowest numbers from 0 up that no trace claims, so that a made-up number
/// never collides with a real one (which would read as two traces of one rank).
fn number_unranked(ranks: &mut [RankFacts]) {
    let known: HashSet<i64> = ranks
        .iter()
        .filter(|r| r.rank_source == RankSource::Trace)
        .map(|r| r.rank)
        .collect();
    let mut next = known.iter().max().map_or(Some(0), |m| m.checked_add(1));
    let mut free = 0i64;
    for r in ranks
        .iter_mut()
        .filter(|r| r.rank_source == RankSource::Position)
    {
        r.rank = if let Some(n) = next {
            next = n.checked_add(1);
            n
        } else {
            while known.contains(&free) {
                free = free.saturating_add(1);
            }
            let n = free;
            free = free.saturating_add(1);
            n
        };
    }
}

/// True when `e` says the file is not a profile of any kind warpscope reads (empty, another
/// kind of JSON, a known non-profile format), as opposed to a profile that is broken.
fn is_not_a_profile(e: &ImportError) -> bool {
    matches!(
        e,
        ImportError::Empty { .. }
            | ImportError::UnknownFormat { .. }
            | ImportError::Unsupported { .. }
    )
}

/// True for names that look like a trace file: `.json`, `.json.gz`, `.gz`, `.sqlite`,
/// `.sqlite3`, `.db`, `.nvvp`.
fn looks_like_trace(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    !name.starts_with('.') && TRACE_ENDINGS.iter().any(|ext| name.ends_with(ext))
}

/// The name endings of the files a job directory contributes.
const TRACE_ENDINGS: [&str; 6] = [".json", ".gz", ".sqlite", ".sqlite3", ".db", ".nvvp"];

/// The files of a job: each argument that is a file as it is, each directory's trace files
/// (see [`looks_like_trace`]; not recursive) sorted by name.
///
/// # Errors
///
/// [`JobError::ListDir`] for a directory that cannot be read, [`JobError::NoTraces`] for one
/// without trace files, [`JobError::Empty`] for no arguments.
pub fn job_files(args: &[PathBuf]) -> Result<Vec<PathBuf>, JobError> {
    let mut files = Vec::new();
    for arg in args {
        if !arg.is_dir() {
            files.push(arg.clone());
            continue;
        }
        let list = std::fs::read_dir(arg).map_err(|source| JobError::ListDir {
            path: arg.clone(),
            source,
        })?;
        let mut found: Vec<PathBuf> = list
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file() && looks_like_trace(p))
            .collect();
        if found.is_empty() {
            return Err(JobError::NoTraces { path: arg.clone() });
        }
        found.sort();
        files.extend(found);
    }
    if files.is_empty() {
        return Err(JobError::Empty);
    }
    Ok(files)
}

/// Reads the ranks of one job from `files` on all cores ([`crate::parallel::threads`]), one
/// file per thread, each file parsed on its own thread; `progress` counts finished files and
/// its cancel stops the files not yet started.
///
/// # Errors
///
/// The first file (in order) that cannot be read, or [`JobError::DuplicateRank`]. A file that
/// is not a profile at all ([`is_not_a_profile`]: an analysis output or a config beside the
/// traces) is left out with a warning in the report; it is an error only when no file is left.
pub fn load_job(files: &[PathBuf], opts: JobOptions, progress: &Progress) -> Result<Job, JobError> {
    if files.is_empty() {
        return Err(JobError::Empty);
    }
    progress.set_total(files.len() as u64);
    let done = AtomicU64::new(0);
    let mut slots: Vec<(usize, PathBuf)> = files.iter().cloned().enumerate().collect();
    let results = crate::parallel::map_mut(
        &mut slots,
        |(_, f)| std::fs::metadata(f).map_or(0, |m| usize::try_from(m.len()).unwrap_or(usize::MAX)),
        |(position, path)| -> Result<(RankFacts, Option<Profile>, Vec<Warning>), ImportError> {
            if progress.is_cancelled() {
                return Err(ImportError::Cancelled { path: path.clone() });
            }
            let profile =
                crate::parallel::with_threads(1, || import_file(path, &Progress::default()))?;
            let facts = RankFacts::of(&profile, *position);
            progress.set_done(done.fetch_add(1, Ordering::Relaxed) + 1);
            let warnings = profile.warnings.clone();
            Ok((facts, opts.keep_profiles.then_some(profile), warnings))
        },
    );
    let mut ranks = Vec::with_capacity(files.len());
    let mut profiles = Vec::new();
    let mut not_profiles = Vec::new();
    let mut import_warnings = Vec::new();
    for r in results {
        let (facts, profile, warnings) = match r {
            Ok(rank) => rank,
            Err(e) if is_not_a_profile(&e) => {
                not_profiles.push(e);
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        ranks.push(facts);
        profiles.extend(profile);
        import_warnings.push(warnings);
    }
    if ranks.is_empty() && !not_profiles.is_empty() {
        return Err(not_profiles.swap_remove(0).into());
    }
    number_ranks(&mut ranks)?;
    for (facts, profile) in ranks.iter().zip(profiles.iter_mut()) {
        if facts.rank_source == RankSource::Position {
            profile
                .distributed
                .get_or_insert_with(Default::default)
                .rank = Some(facts.rank);
        }
    }
    let mut report = fleet_report(&ranks);
    // What a rank's file left out (cut off, events skipped) comes before the cross-rank checks.
    let rank_warnings = ranks.iter().zip(&import_warnings).flat_map(|(r, ws)| {
        ws.iter().map(move |w| {
            let times = if w.count > 1 {
                format!(" ({} times)", w.count)
            } else {
                String::new()
            };
            format!(
                "rank {} ({}): {}{times}",
                r.rank,
                r.file.display(),
                w.message
            )
        })
    });
    report.warnings.splice(0..0, rank_warnings);
    if !not_profiles.is_empty() {
        let n = not_profiles.len();
        let listed: Vec<String> = not_profiles.iter().map(ToString::to_string).collect();
        report.warnings.insert(
            0,
            format!(
                "{n} {} not {} and {} left out: {}",
                if n == 1 { "file is" } else { "files are" },
                if n == 1 { "a profile" } else { "profiles" },
                if n == 1 { "was" } else { "were" },
                listed.join("; ")
            ),
        );
    }
    Ok(Job {
        ranks,
        profiles,
        report,
    })
}
