//! Cross-rank analysis on real multi-rank traces from `../shared/samples`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use warpscope_core::Progress;
use warpscope_core::analysis::fleet::{JobOptions, RankSource, load_job};
use warpscope_core::analysis::{AnalyzeOptions, analyze};
use warpscope_core::time::TimeRange;

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn world128_ranks_0_and_1_match_their_send_recv_collectives() {
    let files: Vec<_> = ["rank-0", "rank-1"]
        .iter()
        .filter_map(|r| common::sample(&format!("chrome-kineto/hta_world128_sampled_{r}.json.gz")))
        .collect();
    if files.len() < 2 {
        return;
    }
    let opts = JobOptions {
        keep_profiles: true,
    };
    let job = load_job(&files, opts, &Progress::default()).unwrap();
    let r = &job.report;
    assert!(r.aligned);
    assert_eq!(r.ranks.iter().map(|x| x.rank).collect::<Vec<_>>(), [0, 1]);
    assert!(job.ranks.iter().all(|f| f.world_size == Some(128)));
    assert!(job.ranks.iter().all(|f| f.rank_source == RankSource::Trace));
    // Each rank ran 10 SendRecv kernels; the traces name no process group.
    assert_eq!(r.collectives.len(), 10);
    assert!(
        r.collectives
            .iter()
            .all(|c| c.ranks == 2 && c.group.is_empty())
    );
    assert!(r.collectives.iter().all(|c| c.name == "SendRecv"));
    // Steps 551 and 552 on both ranks.
    assert_eq!(r.step_numbers, [551, 552]);
    assert_eq!(r.step_cells.len(), 4);
    // The per-rank figures are `analyze`'s, to the nanosecond.
    for (row, profile) in r.ranks.iter().zip(&job.profiles) {
        let insights = analyze(profile, TimeRange::ALL, &AnalyzeOptions::default());
        let sum = |f: fn(&warpscope_core::analysis::insight::DeviceBreakdown) -> i64| {
            insights.devices.iter().map(f).sum::<i64>()
        };
        assert_eq!(row.compute_ns, sum(|d| d.compute_ns));
        assert_eq!(row.comm_ns, sum(|d| d.comm_ns));
        assert_eq!(row.idle_ns, sum(|d| d.idle_ns));
        assert_eq!(row.kernel_ns, sum(|d| d.kernel_ns));
    }
    // Two ranks: at every collective one of them is last, and the skew is what the other
    // waited.
    for c in &r.collectives {
        assert_eq!(c.skew_ns, c.wait_ns);
    }
    let lasts: usize = r.stragglers.iter().map(|s| s.last_arrivals).sum();
    assert_eq!(lasts, 10);
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn ddp2_rank0_keeps_the_process_group_of_its_nccl_kernels() {
    let Some(file) = common::sample("chrome-kineto/hta_a100_ddp2_nccl_rank0.json.gz") else {
        return;
    };
    let job = load_job(&[file], JobOptions::default(), &Progress::default()).unwrap();
    let facts = &job.ranks[0];
    assert_eq!((facts.rank, facts.world_size), (0, Some(2)));
    let count = |name: &str| {
        facts
            .collectives
            .iter()
            .filter(|c| c.name == name && c.group == "0")
            .count()
    };
    assert_eq!((count("AllReduce"), count("Broadcast")), (15, 6));
    assert_eq!(facts.collectives.len(), 21);
    // One rank alone: nothing to match, nobody to wait for.
    assert!(job.report.collectives.is_empty());
    assert!(job.report.stragglers.iter().all(|s| s.late_ns == 0));
    assert_eq!(job.report.step_numbers, [4, 5, 6]);
}
