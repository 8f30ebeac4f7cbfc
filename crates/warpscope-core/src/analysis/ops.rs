//! The CPU-operators table: framework operators (`cpu_op`) by name, with their CPU self and
//! total time and the GPU time of the work they launched. The CPU tracks are worked out in
//! pieces of whole nests of events ([`op_pieces`]), on all cores
//! ([`crate::parallel::threads`]), with one value per event in plain vectors rather than maps
//! keyed by event.

use std::ops::Range;

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::overlap_or_all;
use crate::model::{EventKind, EventRef, Flow, FlowKind, NO_PARENT, Profile, Track};
use crate::parallel::written_zeros;
use crate::strings::StrId;
use crate::time::TimeRange;

/// One row of the CPU-operators table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OpRow {
    /// Operator name (`aten::conv2d`).
    pub name: String,
    /// Number of calls.
    pub calls: u64,
    /// CPU time in the operator itself: its duration minus that of the events nested directly
    /// in it on its thread.
    pub self_ns: i64,
    /// CPU time including nested events.
    pub total_ns: i64,
    /// GPU time of the kernels, copies and sets launched while the operator ran (by it or by
    /// operators nested in it), found through the launch correlation ids.
    pub gpu_ns: i64,
    /// GPU time of the work launched by the operator itself, not by operators nested in it.
    pub gpu_self_ns: i64,
}

/// Below this many events in the profile, the table is worked out on the calling thread (the
/// viewer asks again for every range dragged on its timeline).
#[cfg(not(test))]
const SMALL_PROFILE_EVENTS: usize = 1 << 16;
/// Unit tests work out tiny profiles on several threads too.
#[cfg(test)]
const SMALL_PROFILE_EVENTS: usize = 2;

/// The (launching event, GPU time) of the launch flows that start on a track.
type Launches = Vec<(u32, i64)>;

/// The sums of one operator name, on one track or on all.
#[derive(Clone, Copy, Debug, Default)]
struct OpSums {
    calls: u64,
    self_ns: i64,
    total_ns: i64,
    gpu_ns: i64,
    gpu_self_ns: i64,
}

impl OpSums {
    /// Adds `other`. Every time added up is at least 0 (a finished profile has no negative
    /// duration, overlaps and the self times are clamped at 0), so saturating sums per track,
    /// added up afterwards, equal the sums over all events in any order.
    fn add(&mut self, other: &OpSums) {
        self.calls += other.calls;
        self.self_ns = self.self_ns.saturating_add(other.self_ns);
        self.total_ns = self.total_ns.saturating_add(other.total_ns);
        self.gpu_ns = self.gpu_ns.saturating_add(other.gpu_ns);
        self.gpu_self_ns = self.gpu_self_ns.saturating_add(other.gpu_self_ns);
    }
}

/// Framework operators (`cpu_op`) by name, with CPU self/total time and the GPU time of the work
/// they launched.
pub fn cpu_ops(profile: &Profile, range: TimeRange) -> Vec<OpRow> {
    // Only tracks with operators have rows (an Nsight Systems or nvprof profile has none).
    let has_ops: Vec<bool> = profile
        .tracks
        .iter()
        .map(|t| !t.key.is_gpu() && t.events.kind.contains(&EventKind::CpuOp))
        .collect();
    if !has_ops.contains(&true) {
        return Vec::new();
    }
    let ids: Vec<usize> = (0..profile.tracks.len()).filter(|&i| has_ops[i]).collect();
    let tracks: Vec<&Track> = ids.iter().map(|&i| &profile.tracks[i]).collect();
    // Flows sorted by where they start (as the builder leaves them): each piece reads the
    // launches that start in it on its own thread. Otherwise they are sorted out by track
    // first, on this thread.
    let flows = &profile.flows;
    let by_track = (!flows.is_sorted_by_key(|f| f.from))
        .then(|| launches_by_track(profile, &ids, &has_ops, range));
    let work = || {
        let mut jobs: Vec<(usize, Range<usize>)> = op_pieces(&tracks);
        // Each piece on one thread: the pieces already share the threads out.
        crate::parallel::map_mut(
            &mut jobs,
            |(_, span)| span.len(),
            |(t, span)| {
                crate::parallel::with_threads(1, || match &by_track {
                    Some(by_track) => {
                        let l = &by_track[*t];
                        let first = l.partition_point(|&(from, _)| (from as usize) < span.start);
                        let end = l.partition_point(|&(from, _)| (from as usize) < span.end);
                        span_ops(tracks[*t], span.clone(), &l[first..end], range)
                    }
                    None => {
                        let at = |index: usize| EventRef {
                            track: u32::try_from(ids[*t]).unwrap_or(u32::MAX),
                            index: u32::try_from(index).unwrap_or(u32::MAX),
                        };
                        let first = flows.partition_point(|f| f.from < at(span.start));
                        let end = flows.partition_point(|f| f.from < at(span.end));
                        let mine: Launches =
                            launch_times(profile, &flows[first..end], &has_ops, range)
                                .map(|(_, index, gpu_ns)| (index, gpu_ns))
                                .collect();
                        span_ops(tracks[*t], span.clone(), &mine, range)
                    }
                })
            },
        )
    };
    // A small profile is not worth starting threads for (the viewer asks again for every
    // range dragged on its timeline).
    let per_track = if profile.event_count() < SMALL_PROFILE_EVENTS {
        crate::parallel::with_threads(1, work)
    } else {
        work()
    };
    let mut groups: FxHashMap<StrId, OpSums> = FxHashMap::default();
    for sums in per_track {
        for (name, s) in sums {
            groups.entry(name).or_default().add(&s);
        }
    }
    let mut rows: Vec<OpRow> = groups
        .into_iter()
        .map(|(name, s)| OpRow {
            name: profile.str(name).to_string(),
            calls: s.calls,
            self_ns: s.self_ns,
            total_ns: s.total_ns,
            gpu_ns: s.gpu_ns,
            gpu_self_ns: s.gpu_self_ns,
        })
        .collect();
    super::by_total_then_name(&mut rows, |r| (r.total_ns, &r.name));
    rows
}

/// The launches of each operator track (`ids`, tracks with operators `has_ops`), in the order
/// of their events on it, for flows not sorted by where they start.
fn launches_by_track(
    profile: &Profile,
    ids: &[usize],
    has_ops: &[bool],
    range: TimeRange,
) -> Vec<Launches> {
    let mut op_track = vec![usize::MAX; profile.tracks.len()];
    for (n, &i) in ids.iter().enumerate() {
        op_track[i] = n;
    }
    let mut launches: Vec<Launches> = vec![Vec::new(); ids.len()];
    for (track, index, gpu_ns) in launch_times(profile, &profile.flows, has_ops, range) {
        launches[op_track[track as usize]].push((index, gpu_ns));
    }
    // A piece finds its launches by where they are on the track.
    for l in &mut launches {
        if !l.is_sorted_by_key(|&(from, _)| from) {
            l.sort_unstable_by_key(|&(from, _)| from);
        }
    }
    launches
}

/// The (track, event, GPU time) of the launch flows among `flows` that start on a track with
/// operators (`has_ops`) and end on GPU work that touches `range` (the GPU time within it).
fn launch_times<'a>(
    profile: &'a Profile,
    flows: &'a [Flow],
    has_ops: &'a [bool],
    range: TimeRange,
) -> impl Iterator<Item = (u32, u32, i64)> + 'a {
    flows
        .iter()
        .filter(|f| f.kind == FlowKind::Launch && has_ops[f.from.track as usize])
        .filter_map(move |flow| {
            let gpu = &profile.tracks[flow.to.track as usize].events;
            let gi = flow.to.index as usize;
            if !gpu.kind[gi].is_gpu_activity() {
                return None;
            }
            let gpu_dur_ns = overlap_or_all(&range, gpu.start_ns[gi], gpu.dur_ns[gi])?;
            Some((flow.from.track, flow.from.index, gpu_dur_ns))
        })
}

/// Pieces of the operator tracks for [`span_ops`]: (track, range of its events), cut only
/// where no event after the cut has its parent before it, so that every event of a piece has
/// its parent (if any) in the piece and nothing nested in a piece's event is outside it. The
/// cuts are looked for near those [`crate::parallel::pieces`] makes, on all threads: each
/// piece takes the first place in its part of the track where the lowest parent of all the
/// events from there on is not before it (a nesting by stack cuts at every top-level event).
fn op_pieces(tracks: &[&Track]) -> Vec<(usize, Range<usize>)> {
    let lens: Vec<usize> = tracks.iter().map(|t| t.events.len()).collect();
    let mut parts = crate::parallel::pieces(&lens);
    // Each part: its lowest parent, and the first place where the lowest parent of the part's
    // events from there on is not before it (no later place is allowed if that one is not:
    // the lowest parent of all the events from a place on only falls as the place goes back).
    let found = crate::parallel::map_mut(
        &mut parts,
        |(_, r)| r.len(),
        |(t, r)| {
            let parents = &tracks[*t].events.parent[r.clone()];
            let mut lowest = NO_PARENT;
            let mut first = None;
            for (b, &p) in (r.start..r.end).zip(parents).rev() {
                lowest = lowest.min(p);
                if lowest as usize >= b {
                    first = Some(b);
                }
            }
            (lowest, first)
        },
    );
    // The lowest parent of the parts after each on its track decides whether the cut stands.
    let mut pieces: Vec<(usize, Range<usize>)> = Vec::new();
    let mut after = NO_PARENT;
    for (j, ((t, _), &(lowest, first))) in parts.iter().zip(&found).enumerate().rev() {
        if j + 1 < parts.len() && parts[j + 1].0 != *t {
            after = NO_PARENT;
        }
        if let Some(cut) = first.filter(|&b| after as usize >= b) {
            let end = match pieces.last() {
                Some((last_t, last)) if last_t == t => last.start,
                _ => lens[*t],
            };
            pieces.push((*t, cut..end));
        }
        after = after.min(lowest);
    }
    pieces.reverse();
    pieces
}

/// The operators of events `span` of a CPU track by name, the events nested in them all in the
/// span ([`op_pieces`]); `launches` are the (launching event, GPU time) of the launch flows
/// that start in the span.
///
/// One pass from the last event to the first: an event's parent comes before it (events are
/// sorted by start, longer first), so when the pass reaches an event, everything nested in it
/// has been added to it, and it adds itself to its parent. GPU time enters at the parent of
/// the launching event; it goes up to every op above (`gpu_incl_ns`) and, for `gpu_self_only_ns`, up to
/// the first op only.
fn span_ops(
    track: &Track,
    span: Range<usize>,
    launches: &[(u32, i64)],
    range: TimeRange,
) -> FxHashMap<StrId, OpSums> {
    let ev = &track.events;
    // Per-event values are kept for the span only: event `i` at `i - first`.
    let first = span.start;
    let n = span.len();
    let (mut gpu_incl_ns, mut gpu_self_only_ns): (Vec<i64>, Vec<i64>) = if launches.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        (written_zeros(n), written_zeros(n))
    };
    for &(from, gpu_dur_ns) in launches {
        let p = ev.parent[from as usize];
        if p != NO_PARENT {
            let p = p as usize - first;
            gpu_incl_ns[p] = gpu_incl_ns[p].saturating_add(gpu_dur_ns);
            gpu_self_only_ns[p] = gpu_self_only_ns[p].saturating_add(gpu_dur_ns);
        }
    }
    // Time of the events nested directly in each op: only the part of a child that lies inside
    // its parent.
    let mut child_ns: Vec<i64> = written_zeros(n);
    let mut groups: FxHashMap<StrId, OpSums> = FxHashMap::default();
    for i in span.rev() {
        let at = i - first;
        let is_op = ev.kind[i] == EventKind::CpuOp;
        if is_op && let Some(in_range_ns) = overlap_or_all(&range, ev.start_ns[i], ev.dur_ns[i]) {
            let row = groups.entry(ev.name[i]).or_default();
            row.calls += 1;
            row.total_ns = row.total_ns.saturating_add(in_range_ns);
            let own_ns = ev.dur_ns[i]
                .saturating_sub(child_ns[at])
                .clamp(0, in_range_ns);
            row.self_ns = row.self_ns.saturating_add(own_ns);
            row.gpu_ns = row
                .gpu_ns
                .saturating_add(gpu_incl_ns.get(at).copied().unwrap_or(0));
            row.gpu_self_ns = row
                .gpu_self_ns
                .saturating_add(gpu_self_only_ns.get(at).copied().unwrap_or(0));
        }
        let p = ev.parent[i];
        if p == NO_PARENT {
            continue;
        }
        let p = p as usize;
        debug_assert!(
            p < i && p >= first,
            "a parent comes before its children, in the span"
        );
        let pa = p - first;
        if ev.kind[p] == EventKind::CpuOp {
            let child_dur_ns = (ev.end_ns(i).min(ev.end_ns(p)) - ev.start_ns[i]).max(0);
            child_ns[pa] = child_ns[pa].saturating_add(child_dur_ns);
        }
        if !gpu_incl_ns.is_empty() {
            gpu_incl_ns[pa] = gpu_incl_ns[pa].saturating_add(gpu_incl_ns[at]);
            if !is_op {
                gpu_self_only_ns[pa] = gpu_self_only_ns[pa].saturating_add(gpu_self_only_ns[at]);
            }
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{ProfileBuilder, TrackId};
    use crate::model::{ApiInfo, Format, GpuLane, KernelInfo, TraceId, TrackKey};
    use crate::parallel::with_threads;

    /// Stream 7 of GPU 0.
    fn stream(b: &mut ProfileBuilder) -> TrackId {
        b.track(TrackKey::Gpu {
            device: 0,
            context: 1,
            stream: 7,
            lane: GpuLane::Work,
        })
    }

    /// Thread `tid` of process 1.
    fn thread(b: &mut ProfileBuilder, tid: i64) -> TrackId {
        b.track(TrackKey::Thread {
            pid: TraceId::Int(1),
            tid: TraceId::Int(tid),
        })
    }

    /// A `cudaLaunchKernel` call [`at_ns`, +`dur_ns`) on `t` and the kernel `k` it launches on
    /// `gpu` at `kernel` (start, duration), linked by correlation id `corr`.
    fn launch(
        b: &mut ProfileBuilder,
        (t, at_ns, dur_ns): (TrackId, i64, i64),
        (gpu, kernel): (TrackId, (i64, i64)),
        corr: u64,
    ) {
        let (call, k) = (b.intern("cudaLaunchKernel"), b.intern("k"));
        let api = ApiInfo {
            correlation: Some(corr),
            ..ApiInfo::default()
        };
        b.push_api(t, at_ns, dur_ns, call, EventKind::Runtime, api, 0);
        let info = KernelInfo {
            correlation: Some(corr),
            ..KernelInfo::default()
        };
        b.push_kernel(gpu, kernel.0, kernel.1, k, info, 0);
    }

    /// `threads` CPU threads, each with `outer` [0, 100) around `inner` [10, 50) around a
    /// launch [20, 25) of a 30 ns kernel, and a launch [60, 64) of a 7 ns kernel straight under
    /// `outer`; thread k starts 1000·k ns later and its kernels last k ns longer.
    fn profile(threads: u32) -> Profile {
        let mut b = ProfileBuilder::new("ops.json".into(), Format::ChromeJson);
        let gpu = stream(&mut b);
        let (outer, inner) = (b.intern("outer"), b.intern("inner"));
        let mut corr = 0u64;
        for k in 0..threads {
            let t = thread(&mut b, i64::from(k));
            let at = i64::from(k) * 1000;
            b.push(t, at, 100, outer, EventKind::CpuOp);
            b.push(t, at + 10, 40, inner, EventKind::CpuOp);
            for (start, dur, gpu_dur) in [(20, 5, 30), (60, 4, 7)] {
                corr += 1;
                let kernel = (at + start + 100, gpu_dur + i64::from(k));
                launch(&mut b, (t, at + start, dur), (gpu, kernel), corr);
            }
        }
        b.finish()
    }

    #[test]
    fn self_total_and_gpu_time_of_nested_operators() {
        let rows = cpu_ops(&profile(1), TimeRange::ALL);
        let outer = OpRow {
            name: "outer".to_string(),
            calls: 1,
            // 100 minus inner (40) and the launch directly under it (4).
            self_ns: 56,
            total_ns: 100,
            gpu_ns: 37,
            gpu_self_ns: 7,
        };
        let inner = OpRow {
            name: "inner".to_string(),
            calls: 1,
            self_ns: 35,
            total_ns: 40,
            gpu_ns: 30,
            gpu_self_ns: 30,
        };
        assert_eq!(rows, vec![outer, inner]);
    }

    #[test]
    fn tracks_worked_out_on_several_threads_give_the_one_thread_table() {
        let p = profile(6);
        for range in [TimeRange::ALL, TimeRange::new(1_015, 4_030)] {
            let one = with_threads(1, || cpu_ops(&p, range));
            let four = with_threads(4, || cpu_ops(&p, range));
            assert_eq!(one, four, "{range:?}");
        }
        let all = cpu_ops(&p, TimeRange::ALL);
        // Six threads: the kernels under outer last 30 + k and 7 + k ns, k = 0..5.
        assert_eq!(all[0].name, "outer");
        assert_eq!(all[0].calls, 6);
        assert_eq!(all[0].gpu_ns, 6 * 37 + 2 * 15);
        assert_eq!(all[1].gpu_self_ns, 6 * 30 + 15);
    }

    #[test]
    fn gpu_time_launched_under_an_annotation_goes_to_the_op_around_it() {
        let mut b = ProfileBuilder::new("ops.json".into(), Format::ChromeJson);
        let gpu = stream(&mut b);
        let t = thread(&mut b, 1);
        let (op, note) = (b.intern("op"), b.intern("## forward ##"));
        b.push(t, 0, 100, op, EventKind::CpuOp);
        b.push(t, 5, 90, note, EventKind::UserAnnotation);
        launch(&mut b, (t, 10, 2), (gpu, (50, 40)), 1);
        let rows = cpu_ops(&b.finish(), TimeRange::ALL);
        assert_eq!(rows.len(), 1);
        // The annotation is no op: its 90 ns count as nested time, its launch as the op's own.
        assert_eq!((rows[0].self_ns, rows[0].total_ns), (10, 100));
        assert_eq!((rows[0].gpu_ns, rows[0].gpu_self_ns), (40, 40));
    }

    /// One CPU thread of 120 steps [1000 k, 1000 k + 900): `op` [+10, +400) around `inner`
    /// [+20, +100) around a launch at +30 of a kernel lasting 10 + k % 7 ns, and `tail`
    /// [+390, +450) sticking out of `op`; and an `epoch` op over the first 40 steps, so that
    /// no cut can fall inside it.
    fn long_thread() -> Profile {
        let mut b = ProfileBuilder::new("ops.json".into(), Format::ChromeJson);
        let gpu = stream(&mut b);
        let t = thread(&mut b, 1);
        let [step, epoch, op, inner, tail] =
            ["step", "epoch", "op", "inner", "tail"].map(|n| b.intern(n));
        b.push(t, 0, 40_000, epoch, EventKind::CpuOp);
        for k in 0..120i64 {
            let at = k * 1000;
            b.push(t, at, 900, step, EventKind::UserAnnotation);
            b.push(t, at + 10, 390, op, EventKind::CpuOp);
            b.push(t, at + 20, 80, inner, EventKind::CpuOp);
            b.push(t, at + 390, 60, tail, EventKind::CpuOp);
            let corr = u64::try_from(k).unwrap_or(0) + 1;
            launch(&mut b, (t, at + 30, 5), (gpu, (at + 40, 10 + k % 7)), corr);
        }
        b.finish()
    }

    #[test]
    fn pieces_hold_whole_nests_and_give_the_one_thread_table() {
        let p = long_thread();
        let cpu: Vec<&Track> = p.tracks.iter().filter(|t| !t.key.is_gpu()).collect();
        let n = cpu[0].events.len();
        for threads in [1, 2, 16] {
            let pieces = with_threads(threads, || op_pieces(&cpu));
            // The pieces cover the track in order, and every parent is in its child's piece.
            assert_eq!(pieces.first().map(|(_, r)| r.start), Some(0));
            assert_eq!(pieces.last().map(|(_, r)| r.end), Some(n));
            for w in pieces.windows(2) {
                assert_eq!(w[0].1.end, w[1].1.start, "{threads} threads");
            }
            for (_, r) in &pieces {
                for i in r.clone() {
                    let parent = cpu[0].events.parent[i];
                    assert!(parent == NO_PARENT || r.contains(&(parent as usize)));
                }
            }
            if threads > 1 {
                assert!(pieces.len() > 2, "{threads} threads cut the track");
                // No cut inside the epoch: its 40 steps come first, whole.
                assert!(pieces[0].1.end > 40 * 5, "{:?}", pieces[0]);
            }
        }
        // Flows not sorted by where they start (a profile not made by the builder) are sorted
        // out by track first: the same table.
        let mut reversed = long_thread();
        reversed.flows.reverse();
        for range in [TimeRange::ALL, TimeRange::new(35_500, 80_200)] {
            let one = with_threads(1, || cpu_ops(&p, range));
            for threads in [1, 2, 16] {
                let got = with_threads(threads, || cpu_ops(&p, range));
                assert_eq!(got, one, "{range:?}");
                let got = with_threads(threads, || cpu_ops(&reversed, range));
                assert_eq!(got, one, "reversed flows, {range:?}");
            }
        }
        let all = cpu_ops(&p, TimeRange::ALL);
        let row = |name: &str| all.iter().find(|r| r.name == name).cloned();
        // Every kernel is under `inner` (GPU self time) and `op` (GPU time); the first 40 also
        // under `epoch`. Kernels last 10 + k % 7 ns.
        let gpu_ns: i64 = (0..120).map(|k| 10 + k % 7).sum();
        let first_40: i64 = (0..40).map(|k| 10 + k % 7).sum();
        let inner_row = row("inner").expect("inner");
        assert_eq!((inner_row.calls, inner_row.gpu_self_ns), (120, gpu_ns));
        assert_eq!(row("op").expect("op").gpu_ns, gpu_ns);
        assert_eq!(row("epoch").expect("epoch").gpu_ns, first_40);
        // `op`'s self time: 390 minus `inner` (80) minus the 10 ns of `tail` inside it.
        assert_eq!(row("op").expect("op").self_ns, 120 * 300);
    }
}
