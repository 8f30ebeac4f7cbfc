//! What a job's traces say about themselves that does not add up: world sizes that disagree,
//! ranks missing from the stated world, ranks outside it. Each is a warning in the report, not
//! an error (a user may open a subset of the ranks on purpose), but the report must say so.

use std::collections::BTreeSet;

use super::RankFacts;

/// Missing ranks listed one by one at most; the rest are counted.
const MISSING_LISTED: usize = 10;

/// The warnings about the ranks of one job, sorted by rank, in words.
pub(super) fn job_warnings(ranks: &[RankFacts]) -> Vec<String> {
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
