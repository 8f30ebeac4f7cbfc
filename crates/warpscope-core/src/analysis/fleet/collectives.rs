//! The same collective matched across ranks, and how late each rank arrived at it
//! (`docs/fleet.md`, "Collectives").
//!
//! NCCL requires every rank of a process group to issue that group's collectives in the same
//! order, so the k-th collective a rank ran in group G is the k-th collective of G on every
//! other rank of G. Counting restarts at each `ProfilerStep#N`, so that traces that do not
//! start at the same step still match. A rank arrives when its kernel starts; the collective
//! cannot finish before the last rank has arrived, so the others wait for it.

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::facts::RankFacts;

/// One collective matched across the ranks that ran it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MatchedCollective {
    /// The process group (empty when the traces do not say).
    pub group: String,
    /// The step it ran in (`None`: outside every `ProfilerStep#N`).
    pub step: Option<u64>,
    /// Its place among the group's collectives of that step, from 0.
    pub index: usize,
    /// The collective (`AllReduce`); `A/B` when ranks disagree (a sign of unmatched traces).
    pub name: String,
    /// How many ranks ran it.
    pub ranks: usize,
    /// First arrival, on the job's clock.
    pub first_start_ns: i64,
    /// The last rank to arrive.
    pub last_rank: i64,
    /// Last arrival minus first arrival.
    pub skew_ns: i64,
    /// How long the other ranks waited for the last one, summed over them.
    pub wait_ns: i64,
    /// Latest kernel end, on the job's clock.
    pub end_ns: i64,
}

/// Per rank, what the matched collectives say about it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Arrivals {
    /// Collectives the rank took part in (with at least one other rank).
    pub collectives: usize,
    /// Of those, how many it arrived at last, after at least one other rank.
    pub last: usize,
    /// Summed lateness past each collective's median arrival (positive parts only).
    pub late_ns: i64,
    /// How long the others waited for it, at the collectives it arrived at last.
    pub caused_wait_ns: i64,
}

/// Matches the collectives of `ranks` (each rank's times moved by its entry of `shifts_ns`)
/// by (process group, step, order within the group and step). Returns the collectives run by two ranks or
/// more, by first arrival, and per rank (in `ranks` order) its [`Arrivals`].
pub(crate) fn match_collectives(
    ranks: &[&RankFacts],
    shifts_ns: &[i64],
) -> (Vec<MatchedCollective>, Vec<Arrivals>) {
    // (group, step, index) → [(rank position, start, end, name)]
    type Calls<'a> = Vec<(usize, i64, i64, &'a str)>;
    let mut by_key: FxHashMap<(&str, Option<u64>, usize), Calls<'_>> = FxHashMap::default();
    for (pos, (rank, &shift)) in ranks.iter().zip(shifts_ns).enumerate() {
        let mut next: FxHashMap<(&str, Option<u64>), usize> = FxHashMap::default();
        for c in &rank.collectives {
            let slot = next.entry((c.group.as_str(), c.step)).or_insert(0);
            by_key
                .entry((c.group.as_str(), c.step, *slot))
                .or_default()
                .push((
                    pos,
                    c.start_ns.saturating_add(shift),
                    c.end_ns.saturating_add(shift),
                    c.name.as_str(),
                ));
            *slot += 1;
        }
    }
    let mut arrivals = vec![Arrivals::default(); ranks.len()];
    let mut matched = Vec::new();
    for ((group, step, index), mut calls) in by_key {
        if calls.len() < 2 {
            continue;
        }
        // Last arrival: latest start; ties go to the higher position (stable, documented).
        calls.sort_by_key(|&(pos, start, _, _)| (start, pos));
        let (last_pos, last_start, _, _) = calls[calls.len() - 1];
        let first_start = calls[0].1;
        let median = median_start(&calls);
        let mut wait_ns = 0i64;
        for &(pos, start, _, _) in &calls {
            let a = &mut arrivals[pos];
            a.collectives += 1;
            a.late_ns = a.late_ns.saturating_add((start - median).max(0));
            wait_ns = wait_ns.saturating_add(last_start - start);
        }
        // A tie (every rank at the same moment) makes nobody late.
        if last_start > first_start {
            let last = &mut arrivals[last_pos];
            last.last += 1;
            last.caused_wait_ns = last.caused_wait_ns.saturating_add(wait_ns);
        }
        let mut names: Vec<&str> = calls.iter().map(|c| c.3).collect();
        names.sort_unstable();
        names.dedup();
        matched.push(MatchedCollective {
            group: group.to_string(),
            step,
            index,
            name: names.join("/"),
            ranks: calls.len(),
            first_start_ns: first_start,
            last_rank: ranks[last_pos].rank,
            skew_ns: last_start - first_start,
            wait_ns,
            end_ns: calls.iter().map(|c| c.2).max().unwrap_or(last_start),
        });
    }
    matched.sort_by(|a, b| {
        (a.first_start_ns, &a.group, a.step, a.index).cmp(&(
            b.first_start_ns,
            &b.group,
            b.step,
            b.index,
        ))
    });
    (matched, arrivals)
}

/// Median of the starts of calls sorted by start (the lower middle one for an even count, so
/// that with two ranks the earlier is the reference and the later one is late by the skew).
fn median_start(sorted: &[(usize, i64, i64, &str)]) -> i64 {
    sorted[(sorted.len() - 1) / 2].1
}
