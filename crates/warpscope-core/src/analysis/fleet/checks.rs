//! What a job's traces say about themselves that does not add up: world sizes that disagree,
//! ranks missing from the stated world, ranks outside it, ranks that ran different numbers of a
//! process group's collectives in one step, steps that overlap, clocks that start far apart. Each is a warning in the report, not an error (a
//! user may open a subset of the ranks on purpose), but the report must say so.

use std::collections::{BTreeMap, BTreeSet};

use super::RankFacts;

/// Missing ranks listed one by one at most; the rest are counted.
const MISSING_LISTED: usize = 10;

/// The warnings about the ranks of one job, sorted by rank, in words.
pub(super) fn job_warnings(ranks: &[&RankFacts]) -> Vec<String> {
    let mut warnings = Vec::new();
    let sizes: BTreeSet<i64> = ranks.iter().filter_map(|r| r.world_size).collect();
    if sizes.len() > 1 {
        let said: Vec<String> = sizes
            .iter()
            .map(|&s| {
                let first = ranks.iter().find(|r| r.world_size == Some(s));
                let rank = first.map_or(0, |r| r.rank);
                format!("{s} (rank {rank})")
            })
            .collect();
        warnings.push(format!(
            "the traces disagree on the world size: {}; are they of one job?",
            said.join(", ")
        ));
        return warnings;
    }
    let Some(&world) = sizes.first() else {
        return warnings;
    };
    if world <= 0 {
        warnings.push(format!("the traces give a world size of {world}"));
        return warnings;
    }
    let outside: Vec<String> = ranks
        .iter()
        .filter(|r| r.rank < 0 || r.rank >= world)
        .map(|r| r.rank.to_string())
        .collect();
    if !outside.is_empty() {
        warnings.push(format!(
            "rank {} outside the world of {world} ranks (0 to {}) the traces give",
            outside.join(", "),
            world - 1
        ));
    }
    let present: BTreeSet<i64> = ranks.iter().map(|r| r.rank).collect();
    let in_world = present.range(0..world).count();
    let missing_count = usize::try_from(world)
        .unwrap_or(usize::MAX)
        .saturating_sub(in_world);
    if missing_count > 0 {
        // At most MISSING_LISTED + in_world numbers are looked at, whatever the world size.
        let missing: Vec<String> = (0..world)
            .filter(|r| !present.contains(r))
            .take(MISSING_LISTED)
            .map(|r| r.to_string())
            .collect();
        let more = missing_count - missing.len();
        warnings.push(format!(
            "{in_world} of the {world} ranks the traces give are here; missing: {}{}",
            missing.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    warnings
}

/// Process groups and steps listed one by one at most, in the collective-count warning.
const MISMATCHES_LISTED: usize = 3;

/// Collectives are matched by their order within a process group and step
/// (`collectives::match_collectives`): where ranks of a group ran different numbers of its
/// collectives in one step (a trace that lost events, or ranks of different jobs), the calls
/// after the first difference may be paired with the wrong ones. Ranks without any call of the
/// group in that step are not compared (they need not belong to it). The warning names the
/// first few such groups and steps with the counts.
pub(super) fn collective_count_warnings(ranks: &[&RankFacts]) -> Vec<String> {
    // (group, step) → rank → calls.
    let mut counts: BTreeMap<(&str, Option<u64>), BTreeMap<i64, usize>> = BTreeMap::new();
    for r in ranks {
        for c in &r.collectives {
            *counts
                .entry((c.group.as_str(), c.step))
                .or_default()
                .entry(r.rank)
                .or_default() += 1;
        }
    }
    let mismatched: Vec<String> = counts
        .iter()
        .filter_map(|((group, step), per_rank)| {
            let (lo, hi) = (per_rank.values().min()?, per_rank.values().max()?);
            if lo == hi {
                return None;
            }
            let rank_of = |n: usize| per_rank.iter().find(|&(_, &c)| c == n).map(|(&r, _)| r);
            let group = match *group {
                "" => "(unnamed)".to_string(),
                g if g.chars().count() > 40 => {
                    format!("{}…", g.chars().take(40).collect::<String>())
                }
                g => g.to_string(),
            };
            let step =
                step.map_or_else(|| "outside the steps".to_string(), |s| format!("step {s}"));
            Some(format!(
                "group {group}, {step}: rank {} ran {lo}, rank {} ran {hi}",
                rank_of(*lo)?,
                rank_of(*hi)?
            ))
        })
        .collect();
    if mismatched.is_empty() {
        return Vec::new();
    }
    let more = mismatched.len().saturating_sub(MISMATCHES_LISTED);
    vec![format!(
        "ranks ran different numbers of a process group's collectives ({}{}): collectives are \
         matched by their order, so those after the first difference may be paired wrongly",
        mismatched[..mismatched.len().min(MISMATCHES_LISTED)].join("; "),
        if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        }
    )]
}

/// Steps of a rank that start before the step before them ends (a `ProfilerStep#N` range
/// recorded twice, or nested in another): the rank's mean step time then counts the overlap
/// twice. One warning for the job, naming the first overlap of up to three ranks.
pub(super) fn overlapping_step_warnings(ranks: &[&RankFacts]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut count = 0usize;
    for r in ranks {
        let mut steps: Vec<(i64, i64, u64)> = r
            .steps
            .iter()
            .map(|s| (s.start_ns, s.end_ns, s.step))
            .collect();
        steps.sort_unstable();
        if let Some(w) = steps.windows(2).find(|w| w[1].0 < w[0].1) {
            count += 1;
            if found.len() < MISMATCHES_LISTED {
                found.push(format!("rank {}: steps {} and {}", r.rank, w[0].2, w[1].2));
            }
        }
    }
    if count == 0 {
        return Vec::new();
    }
    let more = count - found.len();
    vec![format!(
        "steps overlap on {count} rank{} ({}{}): a rank's mean step time counts the overlap twice",
        if count == 1 { "" } else { "s" },
        found.join("; "),
        if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        }
    )]
}

/// How far apart the ranks' Unix-epoch origins may be before the report doubts they are of one
/// run: the ranks of a job start profiling within seconds of each other.
pub(super) const ONE_RUN_SPREAD_NS: i64 = 3_600 * 1_000_000_000;

/// Ranks whose clocks start more than [`ONE_RUN_SPREAD_NS`] apart: they are put on one time
/// axis all the same, but are probably traces of different runs.
pub(super) fn clock_spread_warnings(ranks: &[&RankFacts]) -> Vec<String> {
    let with_origin = || {
        ranks
            .iter()
            .filter_map(|r| Some((r.unix_origin_ns?, r.rank)))
    };
    let (Some(first), Some(last)) = (with_origin().min(), with_origin().max()) else {
        return Vec::new();
    };
    let spread_ns = last.0.saturating_sub(first.0);
    if spread_ns <= ONE_RUN_SPREAD_NS {
        return Vec::new();
    }
    let hours = spread_ns as f64 / 3.6e12;
    vec![format!(
        "the ranks' clocks start {hours:.1} hours apart (rank {} first, rank {} last): are they \
         traces of one run?",
        first.1, last.1
    )]
}
