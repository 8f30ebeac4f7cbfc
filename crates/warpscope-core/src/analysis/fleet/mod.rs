//! Cross-rank analysis of a distributed job: per rank its step time and time breakdown (from the
//! insight layer), per collective the same call matched across ranks with its arrival skew,
//! and stragglers ranked by a score. The rules are in `docs/fleet.md`.

mod checks;
mod collectives;
mod facts;
mod job;
#[cfg(test)]
mod tests;

pub use collectives::MatchedCollective;
pub use facts::{Breakdown, CollectiveCall, RankFacts, RankSource, StepFacts, collective_name};
pub use job::{Job, JobError, JobOptions, job_files, load_job, number_ranks};

use std::fmt::Write as _;

use serde::Serialize;

use crate::analysis::compare::rank_shifts_ns;
use crate::time::format_duration_ns;

/// One rank's row of the report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RankRow {
    /// The rank.
    pub rank: i64,
    /// Its trace.
    pub file: String,
    /// Where the rank number came from.
    pub rank_source: RankSource,
    /// Number of `ProfilerStep#N` steps.
    pub steps: usize,
    /// Mean step duration.
    pub step_ns: i64,
    /// Compute time, whole run.
    pub compute_ns: i64,
    /// Communication time not overlapped by compute, whole run.
    pub comm_ns: i64,
    /// Copies and sets only, whole run.
    pub memory_ns: i64,
    /// GPU idle time within its window, whole run.
    pub idle_ns: i64,
    /// Summed kernel durations.
    pub kernel_ns: i64,
    /// The window (first to last GPU activity).
    pub window_ns: i64,
    /// Times on this rank's trace plus this are times on the job's clock.
    pub shift_ns: i64,
}

/// One cell of the rank × step map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct StepCell {
    /// The rank.
    pub rank: i64,
    /// `N` of `ProfilerStep#N`.
    pub step: u64,
    /// Start of the step on the job's clock.
    pub start_ns: i64,
    /// Duration of the step.
    pub dur_ns: i64,
    /// Compute time within the step.
    pub compute_ns: i64,
    /// Communication time (not under compute) within the step.
    pub comm_ns: i64,
    /// GPU idle time within the step's GPU window.
    pub idle_ns: i64,
}

/// A rank that holds the others up, with the evidence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Straggler {
    /// The rank.
    pub rank: i64,
    /// `late_ns + extra_compute_ns`, in nanoseconds (`docs/fleet.md`).
    pub score: i64,
    /// Summed lateness past the median arrival, over the collectives it ran.
    pub late_ns: i64,
    /// Its compute time minus the median rank's (0 when below).
    pub extra_compute_ns: i64,
    /// Collectives it arrived at last.
    pub last_arrivals: usize,
    /// Collectives it took part in.
    pub collectives: usize,
    /// How long the others waited for it at the collectives it arrived at last.
    pub caused_wait_ns: i64,
    /// The evidence in words.
    pub reason: String,
}

/// The cross-rank analysis of a job.
#[derive(Clone, Debug, Serialize)]
pub struct FleetReport {
    /// Per rank, by rank.
    pub ranks: Vec<RankRow>,
    /// Collectives run by two ranks or more, by first arrival.
    pub collectives: Vec<MatchedCollective>,
    /// Ranks with a positive score, highest first.
    pub stragglers: Vec<Straggler>,
    /// The step numbers seen on any rank, sorted.
    pub step_numbers: Vec<u64>,
    /// Per rank and step, sorted by rank, then step.
    pub step_cells: Vec<StepCell>,
    /// Whether the ranks were placed on one clock (all traces give a Unix-epoch origin).
    pub aligned: bool,
    /// The median rank's compute time, the reference of `extra_compute_ns`: the median over
    /// the ranks with GPU activity.
    pub median_compute_ns: i64,
    /// Ranks whose trace holds no GPU activity (a trace that lost its GPU events, or a rank that
    /// only ran on the CPU), left out of the median compute, by rank.
    pub no_gpu_ranks: Vec<i64>,
    /// What the traces say about the job that does not add up (world sizes that disagree,
    /// ranks missing from the stated world or outside it), in words.
    pub warnings: Vec<String>,
}

impl FleetReport {
    /// The score of `rank` (0 when it is not a straggler).
    pub fn score_of(&self, rank: i64) -> i64 {
        self.stragglers
            .iter()
            .find(|s| s.rank == rank)
            .map_or(0, |s| s.score)
    }
}

/// Analyses the ranks of one job (any order; sorted by rank in the report).
pub fn fleet_report(ranks: &[RankFacts]) -> FleetReport {
    let mut order: Vec<usize> = (0..ranks.len()).collect();
    order.sort_by_key(|&i| ranks[i].rank);
    let ranks: Vec<&RankFacts> = order.iter().map(|&i| &ranks[i]).collect();
    let origins: Vec<Option<i64>> = ranks.iter().map(|r| r.unix_origin_ns).collect();
    let (shifts_ns, aligned) = rank_shifts_ns(&origins);
    let (collectives, arrivals) = collectives::match_collectives(&ranks, &shifts_ns);

    // A rank without GPU activity would make the median 0 and every other rank a straggler.
    let no_gpu_ranks: Vec<i64> = ranks
        .iter()
        .filter(|r| r.total.window_ns == 0)
        .map(|r| r.rank)
        .collect();
    let median_compute_ns = lower_median(
        ranks
            .iter()
            .filter(|r| r.total.window_ns > 0)
            .map(|r| r.total.compute_ns)
            .collect(),
    );
    let mut stragglers: Vec<Straggler> = ranks
        .iter()
        .zip(&arrivals)
        .map(|(r, a)| {
            let extra_compute_ns = (r.total.compute_ns - median_compute_ns).max(0);
            Straggler {
                rank: r.rank,
                score: a.late_ns.saturating_add(extra_compute_ns),
                late_ns: a.late_ns,
                extra_compute_ns,
                last_arrivals: a.last,
                collectives: a.collectives,
                caused_wait_ns: a.caused_wait_ns,
                reason: reason(a, extra_compute_ns, median_compute_ns),
            }
        })
        .filter(|s| s.score > 0)
        .collect();
    stragglers.sort_by(|a, b| b.score.cmp(&a.score).then(a.rank.cmp(&b.rank)));

    let mut step_numbers: Vec<u64> = ranks
        .iter()
        .flat_map(|r| r.steps.iter().map(|s| s.step))
        .collect();
    step_numbers.sort_unstable();
    step_numbers.dedup();
    let step_cells = ranks
        .iter()
        .zip(&shifts_ns)
        .flat_map(|(r, &shift)| {
            r.steps.iter().map(move |s| StepCell {
                rank: r.rank,
                step: s.step,
                start_ns: s.start_ns.saturating_add(shift),
                dur_ns: s.end_ns - s.start_ns,
                compute_ns: s.breakdown.compute_ns,
                comm_ns: s.breakdown.comm_ns,
                idle_ns: s.breakdown.idle_ns,
            })
        })
        .collect();
    let rows = ranks
        .iter()
        .zip(&shifts_ns)
        .map(|(r, &shift_ns)| RankRow {
            rank: r.rank,
            file: r.file.display().to_string(),
            rank_source: r.rank_source,
            steps: r.steps.len(),
            step_ns: r.mean_step_ns(),
            compute_ns: r.total.compute_ns,
            comm_ns: r.total.comm_ns,
            memory_ns: r.total.memory_ns,
            idle_ns: r.total.idle_ns,
            kernel_ns: r.total.kernel_ns,
            window_ns: r.total.window_ns,
            shift_ns,
        })
        .collect();
    FleetReport {
        ranks: rows,
        collectives,
        stragglers,
        step_numbers,
        step_cells,
        aligned,
        median_compute_ns,
        no_gpu_ranks,
        warnings: checks::job_warnings(&ranks)
            .into_iter()
            .chain(checks::collective_count_warnings(&ranks))
            .chain(checks::overlapping_step_warnings(&ranks))
            .chain(checks::clock_spread_warnings(&ranks))
            .collect(),
    }
}

/// The evidence of a straggler in words.
fn reason(a: &collectives::Arrivals, extra_compute_ns: i64, median_compute_ns: i64) -> String {
    let mut parts = Vec::new();
    if a.late_ns > 0 {
        let mut text = format!(
            "{} after the median arrival, summed over {} collectives",
            format_duration_ns(a.late_ns),
            a.collectives,
        );
        if a.last > 0 {
            let _ = write!(
                text,
                "; last to arrive at {} of them, the others waited {} for it",
                a.last,
                format_duration_ns(a.caused_wait_ns),
            );
        }
        parts.push(text);
    }
    if extra_compute_ns > 0 && median_compute_ns == 0 {
        parts.push(format!(
            "compute {} where the median rank computes nothing",
            format_duration_ns(extra_compute_ns),
        ));
    } else if extra_compute_ns > 0 {
        parts.push(format!(
            "compute {} ({:.1}%) above the median rank's {}",
            format_duration_ns(extra_compute_ns),
            crate::analysis::pct(extra_compute_ns, median_compute_ns),
            format_duration_ns(median_compute_ns),
        ));
    }
    parts.join("; ")
}

/// The lower median (the middle value, or the lower of the two middle ones), 0 for none.
fn lower_median(mut values: Vec<i64>) -> i64 {
    if values.is_empty() {
        return 0;
    }
    let mid = (values.len() - 1) / 2;
    *values.select_nth_unstable(mid).1
}
