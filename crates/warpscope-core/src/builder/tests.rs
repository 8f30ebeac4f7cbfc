//! Tests of the builder: sorting, nesting, linking, the time rules.

use super::*;
use crate::model::{GpuLane, TraceId};

fn thread() -> TrackKey {
    TrackKey::Thread {
        pid: TraceId::Int(1),
        tid: TraceId::Int(1),
    }
}

#[test]
fn finish_sorts_nests_and_shifts_to_the_first_event() {
    let mut b = ProfileBuilder::new("x.json".into(), Format::ChromeJson);
    let t = b.track(thread());
    let outer = b.intern("outer");
    let inner = b.intern("inner");
    b.push(t, 1_010, 5, inner, EventKind::CpuOp);
    b.push(t, 1_000, 100, outer, EventKind::CpuOp);
    b.push(t, 1_050, 100, inner, EventKind::CpuOp); // partial overlap with outer
    let p = b.finish();
    let ev = &p.tracks[0].events;
    assert_eq!(ev.start_ns, vec![0, 10, 50]);
    assert_eq!(ev.depth, vec![0, 1, 1]);
    assert_eq!(ev.parent, vec![NO_PARENT, 0, 0]);
    assert_eq!(p.origin.raw_ns, 1_000);
    assert_eq!(p.tracks[0].max_depth, 2);
}

#[test]
fn counter_samples_and_markers_before_the_first_event_set_time_zero() {
    let mut b = ProfileBuilder::new("x.json".into(), Format::ChromeJson);
    let t = b.track(thread());
    let op = b.intern("op");
    b.push(t, 1_000, 100, op, EventKind::CpuOp);
    b.counters.push(CounterTrack {
        pid: TraceId::Int(1),
        name: "memory".to_string(),
        time_ns: vec![900, 1_050],
        value: vec![1.0, 2.0],
    });
    b.markers.push(Marker {
        time_ns: 950,
        name: "Iteration Start".to_string(),
    });
    let p = b.finish();
    assert_eq!(p.origin.raw_ns, 900);
    assert_eq!(p.tracks[0].events.start_ns, vec![100]);
    assert_eq!(p.counters[0].time_ns, vec![0, 150]);
    assert_eq!(p.markers[0].time_ns, 50);
}

#[test]
fn correlation_links_api_calls_to_gpu_work_after_sorting() {
    let mut b = ProfileBuilder::new("x.json".into(), Format::ChromeJson);
    let cpu = b.track(thread());
    let gpu = b.track(TrackKey::Gpu {
        device: 0,
        context: 1,
        stream: 7,
        lane: GpuLane::Work,
    });
    let launch = b.intern("cudaLaunchKernel");
    let k = b.intern("kernel");
    let api = |c| ApiInfo {
        correlation: Some(c),
        ..ApiInfo::default()
    };
    b.push_api(cpu, 200, 5, launch, EventKind::Runtime, api(2), 0);
    b.push_api(cpu, 100, 5, launch, EventKind::Runtime, api(1), 0);
    let kinfo = |c| KernelInfo {
        correlation: Some(c),
        ..KernelInfo::default()
    };
    b.push_kernel(gpu, 300, 10, k, kinfo(2), 0);
    b.push_kernel(gpu, 150, 10, k, kinfo(1), 0);
    b.push_kernel(gpu, 400, 10, k, kinfo(99), 0);
    let p = b.finish();
    // GPU track sorts first.
    assert!(p.tracks[0].key.is_gpu());
    assert_eq!(p.flows.len(), 2);
    for f in &p.flows {
        let api_ev = &p.tracks[f.from.track as usize].events;
        let gpu_ev = &p.tracks[f.to.track as usize].events;
        let api_start = api_ev.start_ns[f.from.index as usize];
        let gpu_start = gpu_ev.start_ns[f.to.index as usize];
        // corr 1: api at 0 (100-100) → kernel at 50; corr 2: api at 100 → kernel at 200
        assert_eq!(
            gpu_start - api_start,
            50 + if api_start == 0 { 0 } else { 50 }
        );
    }
}

/// Where two API calls carry the same correlation id, the one pushed last launched the kernel,
/// even on another thread and earlier in time; a call `finish` leaves out (its time cannot be
/// placed) does not count. Checked with dense ids (the table index) and with two processes
/// (the hash map).
#[test]
fn the_last_call_pushed_wins_a_repeated_correlation_id() {
    for scopes in [[0, 0], [1, 2]] {
        let mut b = ProfileBuilder::new("x.json".into(), Format::NsysSqlite);
        let one = b.track(thread());
        let two = b.track(TrackKey::Thread {
            pid: TraceId::Int(1),
            tid: TraceId::Int(2),
        });
        let gpu = b.track(gpu());
        let (first, second, late) = (b.intern("first"), b.intern("second"), b.intern("late"));
        let k = b.intern("kernel");
        let api = |c| ApiInfo {
            correlation: Some(c),
            ..ApiInfo::default()
        };
        b.push_api(one, 500, 5, first, EventKind::Runtime, api(7), scopes[0]);
        b.push_api(two, 100, 5, second, EventKind::Runtime, api(7), scopes[0]);
        // Pushed last but left out: a duration past the time limit.
        b.push_api(
            one,
            600,
            i64::MAX,
            late,
            EventKind::Runtime,
            api(7),
            scopes[0],
        );
        b.push_api(one, 700, 5, first, EventKind::Runtime, api(8), scopes[1]);
        let kinfo = |c| KernelInfo {
            correlation: Some(c),
            ..KernelInfo::default()
        };
        b.push_kernel(gpu, 800, 10, k, kinfo(7), scopes[0]);
        b.push_kernel(gpu, 900, 10, k, kinfo(8), scopes[1]);
        let p = b.finish();
        let launcher = |to_start: i64| {
            let f = p
                .flows
                .iter()
                .find(|f| {
                    p.tracks[f.to.track as usize].events.start_ns[f.to.index as usize]
                        == to_start - 100
                })
                .expect("a flow to the kernel");
            let ev = &p.tracks[f.from.track as usize].events;
            p.str(ev.name[f.from.index as usize]).to_string()
        };
        assert_eq!(p.flows.len(), 2, "scopes {scopes:?}");
        assert_eq!(launcher(800), "second", "scopes {scopes:?}");
        assert_eq!(launcher(900), "first", "scopes {scopes:?}");
    }
}

#[test]
fn warnings_with_the_same_code_add_up() {
    let mut b = ProfileBuilder::new("x.json".into(), Format::ChromeJson);
    b.warn("unknown_category", 2, "first");
    b.warn("unknown_category", 3, "second");
    b.warn("other", 0, "ignored");
    let p = b.finish();
    assert_eq!(p.warnings.len(), 1);
    assert_eq!(p.warnings[0].count, 5);
    assert_eq!(p.warnings[0].message, "first");
}

fn gpu() -> TrackKey {
    TrackKey::Gpu {
        device: 0,
        context: 1,
        stream: 7,
        lane: GpuLane::Work,
    }
}

#[test]
fn finish_drops_events_whose_times_cannot_be_placed_and_counts_them() {
    let mut b = ProfileBuilder::new("x.json".into(), Format::ChromeJson);
    let cpu = b.track(thread());
    let g = b.track(gpu());
    let k = b.intern("k");
    let launch = b.intern("launch");
    let api = |c| ApiInfo {
        correlation: Some(c),
        ..ApiInfo::default()
    };
    let kinfo = |c| KernelInfo {
        correlation: Some(c),
        ..KernelInfo::default()
    };
    b.push_api(cpu, 1_000, 10, launch, EventKind::Runtime, api(1), 0);
    b.push_api(cpu, 1_100, 10, launch, EventKind::Runtime, api(2), 0);
    // A kernel ending past i64::MAX, one with a negative duration, one starting near
    // i64::MIN: none may reach the profile, and none may move time zero.
    b.push_kernel(g, i64::MAX - 5, 10, k, kinfo(2), 0);
    b.push_kernel(g, 1_200, -50, k, KernelInfo::default(), 0);
    b.push_kernel(g, i64::MIN + 1, 0, k, KernelInfo::default(), 0);
    b.push_kernel(g, 1_050, 20, k, kinfo(1), 0);
    b.counters.push(crate::model::CounterTrack {
        pid: TraceId::Int(1),
        name: "c".into(),
        time_ns: vec![1_000, i64::MIN, 1_010],
        value: vec![1.0, 2.0, 3.0],
    });
    b.markers.push(crate::model::Marker {
        time_ns: i64::MAX,
        name: "far".into(),
    });
    b.pending_flows.push(PendingFlow {
        from_track: cpu,
        from_ns: i64::MIN,
        to_track: g,
        to_ns: i64::MAX,
        to_enclosing: false,
        kind: FlowKind::Launch,
    });
    let p = b.finish();
    assert_eq!(p.origin.raw_ns, 1_000);
    let gpu_track = p.tracks.iter().find(|t| t.key.is_gpu()).unwrap();
    assert_eq!(gpu_track.events.start_ns, vec![50]);
    assert_eq!(gpu_track.events.dur_ns, vec![20]);
    // Only the launch of the kept kernel is linked.
    assert_eq!(p.flows.len(), 1);
    let w = p
        .warnings
        .iter()
        .find(|w| w.code == "event_time_out_of_range")
        .unwrap();
    assert_eq!(w.count, 3, "{w:?}");
    let w = p
        .warnings
        .iter()
        .find(|w| w.code == "sample_time_out_of_range")
        .unwrap();
    assert_eq!(w.count, 2); // one counter sample, one marker
    assert_eq!(p.counters[0].time_ns, vec![0, 10]);
    assert_eq!(p.counters[0].value, vec![1.0, 3.0]);
    assert!(p.markers.is_empty());
    assert!(p.warnings.iter().any(|w| w.code == "flow_unbound"));
    let (s, e) = p.span_ns().unwrap();
    assert_eq!((s, e), (0, 110));
}

#[test]
fn a_given_origin_far_from_the_events_drops_them_instead_of_overflowing() {
    let mut b = ProfileBuilder::new("x.json".into(), Format::ChromeJson);
    let t = b.track(thread());
    let n = b.intern("n");
    b.origin_raw_ns = Some(i64::MIN);
    b.push(t, 5, 10, n, EventKind::CpuOp);
    b.push(t, i64::MIN + 3, 10, n, EventKind::CpuOp);
    let p = b.finish();
    assert_eq!(p.tracks[0].events.start_ns, vec![3]);
    assert_eq!(p.warnings[0].code, "event_time_out_of_range");
    assert_eq!(p.warnings[0].count, 1);
}

#[test]
fn warnings_at_places_name_every_place_with_its_count() {
    let mut b = ProfileBuilder::new("x.sqlite".into(), Format::NsysSqlite);
    b.warn_at("bad_time", 2, "KERNEL", "rows were skipped");
    b.warn_at("bad_time", 1, "RUNTIME", "ignored");
    b.warn_at("bad_time", 3, "KERNEL", "ignored");
    let p = b.finish();
    assert_eq!(p.warnings.len(), 1);
    assert_eq!(p.warnings[0].count, 6);
    assert_eq!(
        p.warnings[0].message,
        "KERNEL (5), RUNTIME (1): rows were skipped"
    );
}

/// Tracks finished on four threads (the larger ones sorted and reordered in pieces on all
/// threads, the others side by side) give the profile of one thread, column by column.
#[test]
fn finishing_on_four_threads_gives_the_one_thread_profile() {
    let build = || {
        let mut b = ProfileBuilder::new("x.json".into(), Format::ChromeJson);
        let names: Vec<StrId> = (0..5).map(|i| b.intern(&format!("op{i}"))).collect();
        let g = b.track(gpu());
        let threads: Vec<TrackId> = (0..3)
            .map(|tid| {
                b.track(TrackKey::Thread {
                    pid: TraceId::Int(1),
                    tid: TraceId::Int(tid),
                })
            })
            .collect();
        let mut launches = Vec::new();
        for k in 0..4000i64 {
            // Thread 0 gets most events; starts come out of order, durations nest and overlap.
            let t = if k % 5 < 3 {
                threads[0]
            } else {
                threads[1 + (k % 2) as usize]
            };
            let index = u32::try_from(b.tracks()[t.0 as usize].events.len()).unwrap();
            let start = (k * 7919) % 4000 * 10;
            b.push(
                t,
                start,
                5 + (k % 7) * 20,
                names[(k % 5) as usize],
                EventKind::CpuOp,
            );
            if k % 4 == 0 {
                let kernel = u32::try_from(b.tracks()[g.0 as usize].events.len()).unwrap();
                // Every ninth kernel has a negative duration: left out, with its flow.
                let dur = if k % 9 == 0 { -1 } else { 30 };
                b.push_kernel(g, start + 100, dur, names[0], KernelInfo::default(), 0);
                launches.push(((t, index), (g, kernel)));
            }
        }
        for (from, to) in launches {
            b.push_exact_flow(from, to, FlowKind::Other);
        }
        // From inside event k = 4 (on thread 1, at 36 760 for 85 ns).
        b.pending_flows.push(PendingFlow {
            from_track: threads[1],
            from_ns: 36_761,
            to_track: threads[0],
            to_ns: 7_000,
            to_enclosing: false,
            kind: FlowKind::Other,
        });
        // Flows bound by time, in several pieces: some fall on no event.
        for j in 0..300 {
            b.pending_flows.push(PendingFlow {
                from_track: threads[j % 3],
                from_ns: i64::try_from(j).unwrap() * 137,
                to_track: threads[(j + 1) % 3],
                to_ns: i64::try_from(j).unwrap() * 131,
                to_enclosing: j % 2 == 0,
                kind: FlowKind::Other,
            });
        }
        b
    };
    let one = crate::parallel::with_threads(1, || build().finish());
    let four = crate::parallel::with_threads(4, || build().finish());
    assert_eq!(one.tracks.len(), 4);
    assert_eq!(one.warnings, four.warnings);
    assert_eq!(one.warnings[0].code, "event_time_out_of_range");
    assert_eq!(one.warnings[0].count, 112);
    assert!(one.flows.len() > 1000 - 112 + 1);
    assert_eq!(one.flows, four.flows);
    assert_eq!(one.origin.raw_ns, four.origin.raw_ns);
    for (a, b) in one.tracks.iter().zip(&four.tracks) {
        assert_eq!(a.key, b.key);
        assert_eq!((a.max_depth, a.max_dur_ns), (b.max_depth, b.max_dur_ns));
        let (x, y) = (&a.events, &b.events);
        assert!(x.start_ns.windows(2).all(|w| w[0] <= w[1]), "sorted");
        assert_eq!(x.start_ns, y.start_ns);
        assert_eq!(x.dur_ns, y.dur_ns);
        assert_eq!(x.name, y.name);
        assert_eq!(x.kind, y.kind);
        assert_eq!(x.detail, y.detail);
        assert_eq!(x.depth, y.depth);
        assert_eq!(x.parent, y.parent);
    }
}

/// Sorted events as a Kineto thread has them: steps one after another, each holding nested
/// operators (some overlapping their parent's end), and one event spanning several steps.
fn nested_steps(steps: i64) -> Events {
    let mut ev = Events::default();
    let mut push = |start: i64, dur: i64| {
        ev.start_ns.push(start);
        ev.dur_ns.push(dur);
        ev.name.push(StrId(0));
        ev.kind.push(EventKind::CpuOp);
        ev.detail.push(NO_DETAIL);
    };
    for s in 0..steps {
        let t = s * 1_000;
        // Steps 10 to 12 lie under one event that ends inside step 12.
        if s == 10 {
            push(t, 2_500);
        }
        push(t, 900);
        for k in 0..6 {
            let op = t + 10 + k * 140;
            push(op, 130);
            push(op + 5, 60 + (k % 2) * 100); // every other one ends after its parent
            push(op + 20, 10);
        }
    }
    ev
}

#[test]
fn nesting_a_long_track_in_pieces_gives_the_one_pass_result() {
    let ev = nested_steps(60);
    let one = crate::parallel::with_threads(1, || nest(&ev));
    for threads in [2, 3, 16] {
        let cuts = crate::parallel::with_threads(threads, || top_level_cuts(&ev));
        assert!(cuts.len() > 2, "{threads} threads cut the track: {cuts:?}");
        for &c in &cuts[1..cuts.len() - 1] {
            let reach = (0..c).map(|i| ev.end_ns(i)).max().unwrap();
            assert!(ev.start_ns[c] >= reach, "nothing is open at cut {c}");
        }
        let many = crate::parallel::with_threads(threads, || nest(&ev));
        assert_eq!(one, many, "{threads} threads");
    }
    // Step 11 lies under the long event that opens step 10 (19 events per step before it).
    let long = 10 * 19;
    let step_11 = long + 1 + 19;
    assert_eq!((ev.start_ns[long], ev.dur_ns[long]), (10_000, 2_500));
    assert_eq!((ev.start_ns[step_11], ev.dur_ns[step_11]), (11_000, 900));
    assert_eq!(one.1[step_11], u32::try_from(long).unwrap());
    assert_eq!(one.0[step_11], 1);
    assert!(
        one.3 > 0,
        "operators that end after their parent are counted"
    );
}

#[test]
fn a_track_that_is_one_open_event_is_nested_in_one_piece() {
    let mut ev = nested_steps(20);
    // One event over the whole track: nowhere to cut.
    ev.start_ns.insert(0, 0);
    ev.dur_ns.insert(0, 1_000_000);
    ev.name.insert(0, StrId(0));
    ev.kind.insert(0, EventKind::CpuOp);
    ev.detail.insert(0, NO_DETAIL);
    let cuts = crate::parallel::with_threads(16, || top_level_cuts(&ev));
    assert_eq!(cuts, vec![0, ev.len()]);
    let one = crate::parallel::with_threads(1, || nest(&ev));
    assert_eq!(one, crate::parallel::with_threads(16, || nest(&ev)));
    assert!(one.1[1..].iter().all(|&p| p != NO_PARENT));
}
