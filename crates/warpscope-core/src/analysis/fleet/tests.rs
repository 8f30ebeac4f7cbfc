//! Cross-rank analysis on synthetic jobs with planted stragglers (the rules of `docs/fleet.md`).

use super::*;
use crate::builder::ProfileBuilder;
use crate::model::{
    DistributedInfo, EventKind, Format, GpuLane, KernelInfo, Profile, TraceId, TrackKey,
};

const COMPUTE_NS: i64 = 1_000_000;
const XFER_NS: i64 = 50_000;
const EPOCH_NS: i64 = 1_764_000_000_000_000_000;

/// A planted straggler.
#[derive(Clone, Copy, Default)]
struct Plant {
    /// (rank, factor): that rank's compute kernels take `factor` times longer.
    slow: Option<(i64, f64)>,
    /// (rank, ns): that rank launches every collective this much later.
    late: Option<(i64, i64)>,
}

/// The traces of a job of `n` ranks and `steps` steps: per step, one compute kernel then one
/// all-reduce in group "0" that ends for everyone when the last rank has arrived plus
/// [`XFER_NS`]. Rank r's compute carries a jitter of r·37 ns, its launch one of r·11 ns, so
/// nothing ties. Each rank's trace starts (an `init` CPU op) (r+1)·1000 ns before the first
/// step, so each has its own time origin on one Unix clock: on the job's clock (from the
/// earliest origin) the steps start at n·1000.
fn job(n: i64, steps: u64, plant: Plant) -> Vec<Profile> {
    let compute = |r: i64| {
        let base = COMPUTE_NS + r * 37;
        match plant.slow {
            #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
            Some((s, f)) if s == r => (base as f64 * f) as i64,
            _ => base,
        }
    };
    let delay = |r: i64| r * 11 + plant.late.filter(|l| l.0 == r).map_or(0, |l| l.1);
    // The shared timeline: per step, each rank's (compute end, arrival), and the step end.
    let mut timeline = Vec::new();
    let mut start = 0i64;
    for _ in 0..steps {
        let arrivals: Vec<(i64, i64)> = (0..n)
            .map(|r| (start + compute(r), start + compute(r) + delay(r)))
            .collect();
        let end = arrivals.iter().map(|a| a.1).max().unwrap_or(start) + XFER_NS;
        timeline.push((start, arrivals, end));
        start = end + 10_000;
    }
    (0..n)
        .map(|r| {
            let path = format!("job_rank{r}.json");
            let mut b = ProfileBuilder::new(path.into(), Format::ChromeJson);
            b.distributed = Some(DistributedInfo {
                backend: Some("nccl".to_string()),
                rank: Some(r),
                world_size: Some(n),
            });
            let cpu = b.track(TrackKey::Thread {
                pid: TraceId::Int(100 + r),
                tid: TraceId::Int(100 + r),
            });
            let gpu = |stream| TrackKey::Gpu {
                device: 0,
                context: 1,
                stream,
                lane: GpuLane::Work,
            };
            let (work, comm) = (b.track(gpu(7)), b.track(gpu(20)));
            let gemm = b.intern("sm90_gemm");
            let allreduce = b.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)");
            let group = b.intern("0");
            let pos = usize::try_from(r).unwrap_or(0);
            let init = b.intern("init");
            b.push(cpu, -(r + 1) * 1_000, 500, init, EventKind::CpuOp);
            let local = |t: i64| t;
            for (step, (start, arrivals, end)) in timeline.iter().enumerate() {
                let (compute_end, arrival) = arrivals[pos];
                let name = b.intern(&format!("ProfilerStep#{}", step + 1));
                b.push(cpu, local(*start), end - start, name, EventKind::CpuOp);
                b.push_kernel(
                    work,
                    local(*start),
                    compute_end - start,
                    gemm,
                    KernelInfo::default(),
                    0,
                );
                let info = KernelInfo {
                    process_group: Some(group),
                    ..KernelInfo::default()
                };
                b.push_kernel(comm, local(arrival), end - arrival, allreduce, info, 0);
            }
            b.unix_offset_ns = Some(EPOCH_NS);
            b.finish()
        })
        .collect()
}

fn report(profiles: &[Profile]) -> FleetReport {
    let facts: Vec<RankFacts> = profiles
        .iter()
        .enumerate()
        .map(|(i, p)| RankFacts::of(p, i))
        .collect();
    fleet_report(&facts)
}

fn straggler_ranks(r: &FleetReport) -> Vec<i64> {
    r.stragglers.iter().map(|s| s.rank).collect()
}

#[test]
fn eight_ranks_the_late_rank_first_then_the_slow_one() {
    let plant = Plant {
        slow: Some((5, 1.3)),
        late: Some((2, 1_000_000)),
    };
    let r = report(&job(8, 4, plant));
    assert_eq!(&straggler_ranks(&r)[..2], &[2, 5]);
    let late = &r.stragglers[0];
    assert_eq!((late.last_arrivals, late.collectives), (4, 4));
    // Rank 2 arrives 400 µs after its compute; the median arrival (lower middle of 8) is rank
    // 3's... every step the same: rank 2's lateness is its arrival minus rank 3's.
    let arrive = |r: i64, slow: bool| {
        let c = COMPUTE_NS + r * 37;
        #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
        let c = if slow { (c as f64 * 1.3) as i64 } else { c };
        c + r * 11
    };
    // Sorted arrivals of one step: ranks 0,1,3,4,6,7 then 5 (slow) then 2 (late); the lower
    // median is the 4th: rank 4.
    let median = arrive(4, false);
    assert_eq!(late.late_ns, 4 * (arrive(2, false) + 1_000_000 - median));
    let slow = &r.stragglers[1];
    assert_eq!(slow.rank, 5);
    assert_eq!(slow.last_arrivals, 0);
    assert_eq!(slow.late_ns, 4 * (arrive(5, true) - median));
    // Median compute of 8 ranks (lower middle): rank 3's (ranks 0..7 but 5 in order).
    assert_eq!(r.median_compute_ns, 4 * (COMPUTE_NS + 3 * 37));
    assert_eq!(
        slow.extra_compute_ns,
        4 * (arrive(5, true) - 5 * 11) - r.median_compute_ns
    );
    assert_eq!(slow.score, slow.late_ns + slow.extra_compute_ns);
    assert!(
        late.reason.contains("last to arrive at 4 of them"),
        "{}",
        late.reason
    );
    assert!(slow.reason.contains("compute"), "{}", slow.reason);
}

#[test]
fn sixty_four_ranks_name_the_planted_straggler_first() {
    let slow_only = report(&job(
        64,
        3,
        Plant {
            slow: Some((41, 1.2)),
            late: None,
        },
    ));
    assert_eq!(slow_only.stragglers[0].rank, 41);
    assert_eq!(slow_only.stragglers[0].last_arrivals, 3);
    let late_only = report(&job(
        64,
        3,
        Plant {
            slow: None,
            late: Some((17, 300_000)),
        },
    ));
    assert_eq!(late_only.stragglers[0].rank, 17);
    assert_eq!(late_only.stragglers[0].extra_compute_ns, 0);
    assert_eq!(late_only.ranks.len(), 64);
    assert_eq!(late_only.collectives.len(), 3);
    assert!(
        late_only
            .collectives
            .iter()
            .all(|c| c.last_rank == 17 && c.ranks == 64)
    );
}

#[test]
fn ranks_are_placed_on_one_clock_and_collectives_matched_with_skew_and_wait() {
    let r = report(&job(
        3,
        1,
        Plant {
            slow: None,
            late: Some((1, 100_000)),
        },
    ));
    assert!(r.aligned);
    assert_eq!(
        r.ranks.iter().map(|x| x.shift_ns).collect::<Vec<_>>(),
        [2_000, 1_000, 0]
    );
    let [c] = r.collectives.as_slice() else {
        panic!("one collective expected: {:?}", r.collectives)
    };
    // Arrivals on the job clock: rank 0 at C, rank 1 at C+37+11+100 µs, rank 2 at C+74+22.
    let a = [
        COMPUTE_NS,
        COMPUTE_NS + 37 + 11 + 100_000,
        COMPUTE_NS + 74 + 22,
    ];
    assert_eq!(
        (c.group.as_str(), c.index, c.name.as_str()),
        ("0", 0, "AllReduce")
    );
    assert_eq!((c.ranks, c.last_rank), (3, 1));
    assert_eq!(c.first_start_ns, 3_000 + a[0]);
    assert_eq!(c.skew_ns, a[1] - a[0]);
    assert_eq!(c.wait_ns, (a[1] - a[0]) + (a[1] - a[2]));
    assert_eq!(c.end_ns, 3_000 + a[1] + XFER_NS);
    // Step cells: one per rank, on the job clock.
    assert_eq!(r.step_cells.len(), 3);
    assert!(
        r.step_cells
            .iter()
            .all(|s| s.start_ns == 3_000 && s.step == 1)
    );
    let row = &r.ranks[0];
    assert_eq!(row.steps, 1);
    assert_eq!(row.step_ns, a[1] + XFER_NS);
    assert_eq!(row.compute_ns, COMPUTE_NS);
    // Rank 0's all-reduce runs from its arrival to the end; compute and comm do not overlap.
    assert_eq!(row.comm_ns, a[1] + XFER_NS - a[0]);
    assert_eq!(row.idle_ns, 0);
}

#[test]
fn collectives_of_different_process_groups_are_matched_apart() {
    // Ranks 0,1 in group "a", ranks 2,3 in group "b": each group's first collective is its own.
    let facts: Vec<RankFacts> = (0..4)
        .map(|r| RankFacts {
            rank: r,
            rank_source: RankSource::Trace,
            world_size: Some(4),
            file: format!("r{r}.json").into(),
            unix_origin_ns: Some(0),
            total: Breakdown::default(),
            steps: Vec::new(),
            collectives: vec![CollectiveCall {
                group: if r < 2 { "a" } else { "b" }.to_string(),
                name: "AllGather".to_string(),
                step: None,
                start_ns: 100 * r,
                end_ns: 1_000,
            }],
        })
        .collect();
    let r = fleet_report(&facts);
    let got: Vec<(&str, usize, i64, i64)> = r
        .collectives
        .iter()
        .map(|c| (c.group.as_str(), c.ranks, c.last_rank, c.skew_ns))
        .collect();
    assert_eq!(got, [("a", 2, 1, 100), ("b", 2, 3, 100)]);
    // With two ranks the earlier one is the reference: the later one is late by the skew.
    assert_eq!(straggler_ranks(&r), [1, 3]);
    assert_eq!(r.stragglers[0].late_ns, 100);
}

#[test]
fn a_job_in_a_directory_opens_in_file_order_and_a_duplicate_rank_is_an_error() {
    let dir = std::env::temp_dir().join(format!("warpscope-fleet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, p) in job(3, 2, Plant::default()).iter().enumerate() {
        crate::write::save_chrome_trace(p, &dir.join(format!("job_rank{i}.json"))).unwrap();
    }
    std::fs::write(dir.join("notes.txt"), "not a trace").unwrap();
    let files = job_files(std::slice::from_ref(&dir)).unwrap();
    assert_eq!(files.len(), 3);
    let job = load_job(&files, JobOptions::default(), &Progress::default()).unwrap();
    assert!(job.profiles.is_empty());
    assert_eq!(
        job.report.ranks.iter().map(|r| r.rank).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(job.report.collectives.len(), 2);
    assert_eq!(job.report.collectives[0].name, "AllReduce");
    let twice = [files[0].clone(), files[0].clone()];
    let err = load_job(&twice, JobOptions::default(), &Progress::default()).unwrap_err();
    assert!(err.to_string().contains("are both rank 0"), "{err}");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let err = job_files(&[empty]).unwrap_err();
    assert!(err.to_string().contains("no trace files"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

use crate::import::Progress;

/// The (rank, where it came from) of each file when `profiles` are saved as `names` in a
/// directory of their own (`tag` names it) and opened as a job. The job's profiles, merged
/// for the viewer, name each GPU after the rank the report gives it (a click on a rank's
/// cell finds its GPU by that name).
fn ranks_of_job_saved_as(
    tag: &str,
    names: &[&str],
    profiles: &[Profile],
) -> Vec<(i64, RankSource)> {
    let dir = std::env::temp_dir().join(format!("warpscope-fleet-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, p) in names.iter().zip(profiles) {
        crate::write::save_chrome_trace(p, &dir.join(name)).unwrap();
    }
    let files = job_files(std::slice::from_ref(&dir)).unwrap();
    let job = load_job(
        &files,
        JobOptions {
            keep_profiles: true,
        },
        &Progress::default(),
    )
    .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let ranks: Vec<(i64, RankSource)> = job.ranks.iter().map(|r| (r.rank, r.rank_source)).collect();
    let merged = crate::analysis::compare::merge_ranks(job.profiles).unwrap();
    for (rank, _) in &ranks {
        let who = format!("rank {rank}");
        assert!(
            merged
                .devices
                .iter()
                .any(|d| d.properties.iter().any(|(k, v)| k == "rank" && *v == who)),
            "no GPU of {who} in {:?}",
            merged.devices
        );
    }
    ranks
}

#[test]
fn a_file_without_a_rank_is_numbered_after_the_known_ranks() {
    let mut profiles = job(3, 1, Plant::default());
    // Rank 1's trace loses its distributedInfo and is saved under a name without a rank.
    profiles[1].distributed = None;
    // a_rank5.json says rank 0 in its distributedInfo, c_rank0.json rank 2: the highest known
    // rank is 2, so b.json becomes rank 3.
    assert_eq!(
        ranks_of_job_saved_as(
            "norank",
            &["a_rank5.json", "b.json", "c_rank0.json"],
            &profiles
        ),
        [
            (0, RankSource::Trace),
            (3, RankSource::Position),
            (2, RankSource::Trace)
        ]
    );
}

#[test]
fn traces_that_start_at_different_steps_match_their_collectives_by_step() {
    // Rank 0 was profiled from step 1, rank 1 only from step 2: counted over the whole trace,
    // rank 1's first all-reduce would be matched with rank 0's step-1 one.
    let rank = |r: i64, collectives: Vec<CollectiveCall>| RankFacts {
        world_size: Some(2),
        collectives,
        ..bare_rank(r, 0, 0)
    };
    let facts = [
        rank(0, vec![call("0", 1, 1_000), call("0", 2, 10_000)]),
        rank(1, vec![call("0", 2, 10_040)]),
    ];
    let r = fleet_report(&facts);
    let [c] = r.collectives.as_slice() else {
        panic!("{:?}", r.collectives)
    };
    assert_eq!((c.step, c.index, c.ranks), (Some(2), 0, 2));
    assert_eq!((c.last_rank, c.skew_ns), (1, 40));
}

#[test]
fn a_trace_claiming_rank_i64_max_leaves_room_for_the_unranked_files() {
    // Counting on after rank i64::MAX used to saturate, so the unranked b.json got i64::MAX too
    // and the job failed with "a.json and b.json are both rank 9223372036854775807".
    let mut profiles = job(4, 1, Plant::default());
    profiles[0].distributed.as_mut().unwrap().rank = Some(i64::MAX);
    profiles[1].distributed = None;
    profiles[2].distributed.as_mut().unwrap().rank = Some(0);
    profiles[3].distributed = None;
    // The unranked files take the lowest numbers no trace claims: 1 and 2 (0 is c.json's).
    assert_eq!(
        ranks_of_job_saved_as(
            "maxrank",
            &["a.json", "b.json", "c.json", "d.json"],
            &profiles
        ),
        [
            (i64::MAX, RankSource::Trace),
            (1, RankSource::Position),
            (0, RankSource::Trace),
            (2, RankSource::Position),
        ]
    );
}

/// A rank with only a whole-run breakdown: no steps, no collectives.
fn bare_rank(rank: i64, window_ns: i64, compute_ns: i64) -> RankFacts {
    RankFacts {
        rank,
        rank_source: RankSource::Trace,
        world_size: Some(3),
        file: format!("r{rank}.json").into(),
        unix_origin_ns: Some(0),
        total: Breakdown {
            window_ns,
            busy_ns: compute_ns,
            compute_ns,
            kernel_ns: compute_ns,
            idle_ns: window_ns - compute_ns,
            ..Breakdown::default()
        },
        steps: Vec::new(),
        collectives: Vec::new(),
    }
}

#[test]
fn a_rank_without_gpu_activity_is_left_out_of_the_median_compute() {
    // Rank 2's trace lost its GPU events. Counted in the median (the lower middle of 0, 2 ms,
    // 2.1 ms), it made rank 1 a straggler "2.1 ms (0.0%) above the median rank's 0ns".
    let facts = [
        bare_rank(0, 3_000_000, 2_000_000),
        bare_rank(1, 3_000_000, 2_100_000),
        bare_rank(2, 0, 0),
    ];
    let r = fleet_report(&facts);
    assert_eq!(r.no_gpu_ranks, [2]);
    assert_eq!(r.median_compute_ns, 2_000_000);
    let [s] = r.stragglers.as_slice() else {
        panic!("{:?}", r.stragglers)
    };
    assert_eq!((s.rank, s.extra_compute_ns), (1, 100_000));
    assert_eq!(
        s.reason,
        "compute 100.00µs (5.0%) above the median rank's 2.0000ms"
    );
}

#[test]
fn compute_above_a_median_of_nothing_gives_no_percentage() {
    // Ranks 0 and 1 ran only communication kernels: the median compute is 0, and "(0.0%)
    // above" would say the opposite of what happened.
    let facts = [
        bare_rank(0, 1_000, 0),
        bare_rank(1, 1_000, 0),
        bare_rank(2, 1_000, 700),
    ];
    let r = fleet_report(&facts);
    assert!(r.no_gpu_ranks.is_empty());
    let [s] = r.stragglers.as_slice() else {
        panic!("{:?}", r.stragglers)
    };
    assert_eq!(s.rank, 2);
    assert_eq!(
        s.reason,
        "compute 700ns where the median rank computes nothing"
    );
}

#[test]
fn world_sizes_that_do_not_add_up_are_warned_about() {
    let sized = |rank: i64, world: Option<i64>| RankFacts {
        world_size: world,
        ..bare_rank(rank, 1_000, 500)
    };
    let warnings = |facts: &[RankFacts]| fleet_report(facts).warnings;
    // Before, a job of 2 ranks whose traces said 16 read as the whole job.
    assert_eq!(
        warnings(&[sized(0, Some(16)), sized(1, Some(16))]),
        [
            "2 of the 16 ranks the traces give are here; missing: 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 \
          and 4 more"
        ]
    );
    assert_eq!(
        warnings(&[sized(0, Some(2)), sized(1, Some(16))]),
        ["the traces disagree on the world size: 2 (rank 0), 16 (rank 1); are they of one job?"]
    );
    assert_eq!(
        warnings(&[sized(-1, Some(2)), sized(i64::MAX, Some(2))]),
        [
            "rank -1, 9223372036854775807 outside the world of 2 ranks (0 to 1) the traces give",
            "0 of the 2 ranks the traces give are here; missing: 0, 1"
        ]
    );
    // A world of i64::MAX ranks: ten listed, the rest counted, without walking them all.
    assert_eq!(
        warnings(&[sized(0, Some(i64::MAX))]),
        [format!(
            "1 of the {} ranks the traces give are here; missing: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 \
             and {} more",
            i64::MAX,
            i64::MAX - 11
        )]
    );
    assert_eq!(
        warnings(&[sized(0, Some(0))]),
        ["the traces give a world size of 0"]
    );
    assert!(warnings(&[sized(0, Some(2)), sized(1, Some(2))]).is_empty());
    assert!(warnings(&[sized(0, None), sized(5, None)]).is_empty());
}

/// An all-reduce of group `group` in step `step`, from `start_ns` for 500 ns.
fn call(group: &str, step: u64, start_ns: i64) -> CollectiveCall {
    CollectiveCall {
        group: group.to_string(),
        name: "AllReduce".to_string(),
        step: Some(step),
        start_ns,
        end_ns: start_ns + 500,
    }
}

#[test]
fn ranks_that_ran_different_numbers_of_a_groups_collectives_are_warned_about() {
    let with_calls = |rank: i64, calls: Vec<CollectiveCall>| RankFacts {
        collectives: calls,
        ..bare_rank(rank, 1_000, 500)
    };
    let agree = [
        with_calls(0, vec![call("0", 1, 100), call("0", 1, 200)]),
        with_calls(1, vec![call("0", 1, 100), call("0", 1, 200)]),
        // Not in group "1": rank 2 is not compared there.
        with_calls(
            2,
            vec![call("0", 1, 100), call("0", 1, 200), call("1", 1, 300)],
        ),
    ];
    assert!(fleet_report(&agree).warnings.is_empty());
    let lost = [
        with_calls(0, vec![call("0", 1, 100), call("0", 1, 200)]),
        with_calls(1, vec![call("0", 1, 100)]),
        with_calls(2, vec![call("0", 1, 100), call("0", 1, 200)]),
    ];
    assert_eq!(
        fleet_report(&lost).warnings,
        [
            "ranks ran different numbers of a process group's collectives (group 0, step 1: rank 1 \
          ran 1, rank 0 ran 2): collectives are matched by their order, so those after the first \
          difference may be paired wrongly"
        ]
    );
}

#[test]
fn overlapping_steps_are_warned_about() {
    let step = |step: u64, start_ns: i64, end_ns: i64| StepFacts {
        step,
        start_ns,
        end_ns,
        breakdown: Breakdown::default(),
    };
    let with_steps = |rank: i64, steps: Vec<StepFacts>| RankFacts {
        steps,
        world_size: None,
        ..bare_rank(rank, 1_000, 500)
    };
    // Steps that touch do not overlap.
    let fine = [with_steps(0, vec![step(1, 0, 100), step(2, 100, 200)])];
    assert!(fleet_report(&fine).warnings.is_empty());
    let nested = [
        with_steps(0, vec![step(1, 0, 100), step(2, 100, 200)]),
        with_steps(1, vec![step(1, 0, 200), step(2, 50, 150)]),
    ];
    assert_eq!(
        fleet_report(&nested).warnings,
        [
            "steps overlap on 1 rank (rank 1: steps 1 and 2): a rank's mean step time counts the \
          overlap twice"
        ]
    );
}

#[test]
fn ranks_whose_clocks_start_hours_apart_are_warned_about() {
    let at = |rank: i64, origin_ns: i64| RankFacts {
        unix_origin_ns: Some(origin_ns),
        world_size: None,
        ..bare_rank(rank, 1_000, 500)
    };
    let hour_ns = 3_600 * 1_000_000_000i64;
    let day = 1_795_000_000 * 1_000_000_000i64;
    assert!(
        fleet_report(&[at(0, day), at(1, day + hour_ns)])
            .warnings
            .is_empty()
    );
    assert_eq!(
        fleet_report(&[
            at(0, day + 2 * hour_ns),
            at(1, day),
            at(2, day + hour_ns / 2)
        ])
        .warnings,
        [
            "the ranks' clocks start 2.0 hours apart (rank 1 first, rank 0 last): are they traces \
          of one run?"
        ]
    );
}
