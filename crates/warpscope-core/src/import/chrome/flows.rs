//! Flow points (`s`, `t`, `f`) chained into arrows, and v2 flows (`bind_id`) bound to the
//! events that carry them, after the last event.
//!
//! The points of one (category, id) are chained in file order. Each key is chained on its own,
//! so the keys are shared out among up to [`crate::parallel::threads`] threads by a hash of the
//! key, each thread reading the points in file order and keeping a small state per key of its
//! own: no sort of the points. Only each thread's arrows (one per two points in a Kineto trace,
//! the launch points left out) are sorted, by key, on that thread: the builder sorts all flows by
//! (from, to, kind) in the end, but binds them to events several times faster in this order (the
//! ids of a key space rise with time).

use rustc_hash::FxHashMap;

use super::{ChromeState, FlowPoint, RawFlow};
use crate::model::FlowKind;
use crate::strings::StrId;

/// Below this many points, one thread does it all.
#[cfg(not(test))]
const MIN_POINTS_PER_THREAD: usize = 1 << 15;
/// Unit tests use several threads for a few hundred points.
#[cfg(test)]
const MIN_POINTS_PER_THREAD: usize = 16;

/// No point: an empty [`Chain`] slot.
const NONE: u32 = u32::MAX;

/// Where the chaining of one key stands: the point an arrow starts from (the last `s` or `t`
/// with nothing after it yet) and an `f` read before any `s`, waiting for one; indices into
/// the points.
#[derive(Clone, Copy)]
struct Chain {
    from: u32,
    waiting: u32,
}

impl ChromeState {
    /// Chains the flow points of each (category, id) in file order: `s` starts an arrow, `t`
    /// continues it, `f` ends it. An end read before any start waits for the next start (the
    /// format does not require events in order). Ends that never get a start are normal
    /// (Kineto writes them for calls that launch nothing) and are dropped. `launches_linked`:
    /// see [`ChromeState::launches_have_correlations`].
    pub(super) fn match_flow_points(&mut self, launches_linked: bool) {
        let all = std::mem::take(&mut self.flow_points);
        // Correlation ids already link every launch (see `bind_flows`): the launch arrows, most
        // of the points in a Kineto trace, need no matching, unless flows without a category
        // share their (category, id) keys (launch points all have the empty category).
        let leave_out = launches_linked.then_some(self.unsorted_cat);
        self.raw_flows = match chain(&all, leave_out) {
            Some(flows) => flows,
            None => chain(&all, None).unwrap_or_default(),
        };
        drop(all);
        self.bind_v2_flows();
    }

    /// v2 flows bind to the very events that carry them: each `bind_id` end to the start of the
    /// same id before it (by time, a start before an end at the same time).
    fn bind_v2_flows(&mut self) {
        let mut points = std::mem::take(&mut self.bind_points);
        crate::parallel::sort_by_key(&mut points, |p| (p.0, p.4, !p.1));
        let mut open: Option<(u64, crate::builder::TrackId, u32)> = None;
        for (id, is_out, track, index, _) in points {
            if is_out {
                open = Some((id, track, index));
            } else if let Some((oid, otrack, oindex)) = open
                && oid == id
            {
                self.b
                    .push_exact_flow((otrack, oindex), (track, index), FlowKind::Other);
            }
        }
    }
}

/// An arrow: the key of its flow, and where its start and its end are in the points.
#[derive(Clone, Copy)]
struct Arrow {
    cat: StrId,
    id: u64,
    from: u32,
    to: u32,
}

/// The arrows of `points` (in file order), each key chained on its own: a list per chaining
/// thread, by key (those of one key in the order they were chained), the order in which the
/// builder finds the flows' events fastest (the ids of a key space rise with time). With
/// `leave_out_launches`, the launch points are left out, or `None` is returned if another point
/// has that category (the launch points' key space: they must then be chained together).
///
/// On up to [`crate::parallel::threads`] threads: each reads a piece of the points and sorts
/// where they are out by the thread that will chain their key ([`shard`]); then each thread
/// chains its keys, reading the pieces' lists in order, with a small state per key.
fn chain(points: &[FlowPoint], leave_out_launches: Option<StrId>) -> Option<Vec<Vec<RawFlow>>> {
    let threads = crate::parallel::threads()
        .min(points.len() / MIN_POINTS_PER_THREAD)
        .max(1);
    let sort_out = |first: usize, piece: &[FlowPoint]| -> Option<Vec<Vec<u32>>> {
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); threads];
        for (i, p) in piece.iter().enumerate() {
            if let Some(uncategorised) = leave_out_launches {
                if p.kind == FlowKind::Launch {
                    continue;
                }
                if p.key.0 == uncategorised {
                    return None;
                }
            }
            lists[shard(p.key, threads)].push(u32::try_from(first + i).unwrap_or(NONE));
        }
        Some(lists)
    };
    let chunk = points.len().div_ceil(threads).max(1);
    let mut pieces: Vec<(usize, &[FlowPoint])> = points
        .chunks(chunk)
        .enumerate()
        .map(|(n, piece)| (n * chunk, piece))
        .collect();
    let sorted_out = crate::parallel::with_threads(threads, || {
        crate::parallel::map_mut(
            &mut pieces,
            |(_, piece)| piece.len(),
            |(first, piece)| sort_out(*first, piece),
        )
    });
    // Each thread's lists, one per piece, in file order.
    let mut mine: Vec<Vec<Vec<u32>>> = (0..threads).map(|_| Vec::new()).collect();
    for lists in sorted_out {
        for (s, list) in lists?.into_iter().enumerate() {
            mine[s].push(list);
        }
    }
    let parts = crate::parallel::with_threads(threads, || {
        crate::parallel::map_mut(
            &mut mine,
            |lists| lists.iter().map(Vec::len).sum(),
            |lists| chain_shard(points, lists),
        )
    });
    Some(parts)
}

/// The thread that chains `key` among `shards`: a hash of its own (the maps hash keys with
/// another function, so a thread's keys still spread over its map).
fn shard(key: (StrId, u64), shards: usize) -> usize {
    let mixed = (key.1 ^ (u64::from(key.0.0) << 40)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // The high half, which every bit of the key reaches; below 2^32, so it fits usize.
    usize::try_from(mixed >> 32).unwrap_or(0) % shards
}

/// The arrows of the points in `lists` (one after the other, in file order), as the format
/// chains them, by key: those of one key in the order they were chained, the order of their
/// ends (an arrow ends on the point being read, or on an `f` read before its start that no
/// arrow of the key has ended on since, so never before an earlier arrow's end).
fn chain_shard(points: &[FlowPoint], lists: &[Vec<u32>]) -> Vec<RawFlow> {
    let count: usize = lists.iter().map(Vec::len).sum();
    let mut chains: FxHashMap<(StrId, u64), Chain> = FxHashMap::default();
    chains.reserve(count / 2);
    let mut out = Vec::with_capacity(count / 2);
    for &i in lists.iter().flatten() {
        let p = &points[i as usize];
        let arrow = |from: u32, to: u32| Arrow {
            cat: p.key.0,
            id: p.key.1,
            from,
            to,
        };
        let ph = p.ph;
        let c = chains.entry(p.key).or_insert(Chain {
            from: NONE,
            waiting: NONE,
        });
        match (ph, c.from) {
            (b's', _) => {
                if c.waiting == NONE {
                    c.from = i;
                } else {
                    out.push(arrow(i, c.waiting));
                    c.waiting = NONE;
                }
            }
            (_, from) if from != NONE => {
                out.push(arrow(from, i));
                c.from = if ph == b't' { i } else { NONE };
            }
            (b'f', _) => c.waiting = i,
            _ => {}
        }
    }
    // An end is the end of one arrow only: the key tells every arrow apart.
    out.sort_unstable_by_key(|a| (a.cat, a.id, a.to));
    out.iter()
        .map(|a| {
            let (from, to) = (&points[a.from as usize], &points[a.to as usize]);
            RawFlow {
                from: (from.thread, from.ts_ns),
                to: (to.thread, to.ts_ns),
                to_enclosing: to.enclosing,
                kind: to.kind,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::with_threads;

    /// A point on thread (1, `cat`).
    fn point(cat: u32, id: u64, ph: u8, ts: i64, kind: FlowKind) -> FlowPoint {
        FlowPoint {
            key: (StrId(cat), id),
            ts_ns: ts,
            thread: cat,
            ph,
            enclosing: ph == b't',
            kind,
        }
    }

    /// The arrows as (from time, to time, to_enclosing, kind), sorted: the order they come out
    /// in does not matter.
    fn arrows(flows: &[Vec<RawFlow>]) -> Vec<(i64, i64, bool, u8)> {
        let mut v: Vec<_> = flows
            .iter()
            .flatten()
            .map(|f| (f.from.1, f.to.1, f.to_enclosing, f.kind as u8))
            .collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn starts_steps_and_ends_are_chained_per_key_in_file_order() {
        let points = [
            // Key (1, 7): s → t → f, with another key's points in between.
            point(1, 7, b's', 10, FlowKind::ForwardBackward),
            point(2, 7, b'f', 11, FlowKind::Other),
            point(1, 7, b't', 20, FlowKind::ForwardBackward),
            // Key (2, 7): an end read before its start waits for it.
            point(2, 7, b's', 5, FlowKind::Other),
            point(1, 7, b'f', 30, FlowKind::ForwardBackward),
            // Key (1, 8): an end with no start is dropped; a lone start gives nothing.
            point(1, 8, b'f', 40, FlowKind::ForwardBackward),
            point(1, 9, b's', 50, FlowKind::ForwardBackward),
        ];
        let fb = FlowKind::ForwardBackward as u8;
        let expected = vec![
            (5, 11, false, FlowKind::Other as u8),
            (10, 20, true, fb),
            (20, 30, false, fb),
        ];
        for threads in [1, 2, 16] {
            let got = with_threads(threads, || chain(&points, None)).unwrap_or_default();
            assert_eq!(arrows(&got), expected, "{threads} threads");
        }
    }

    #[test]
    fn many_keys_on_several_threads_give_the_one_thread_arrows() {
        // 600 keys, each s, t, f or f, s, with the keys' points interleaved.
        let mut points = Vec::new();
        for round in 0..3i64 {
            for id in 0..600u64 {
                let ts = round * 1_000_000 + i64::try_from(id).unwrap_or(0) * 10;
                let ph = match (id % 2, round) {
                    (0, 0) | (1, 1) => b's',
                    (0, 1) => b't',
                    _ => b'f',
                };
                points.push(point(
                    u32::try_from(id % 3).unwrap_or(0),
                    id,
                    ph,
                    ts,
                    FlowKind::Other,
                ));
            }
        }
        let one = arrows(&with_threads(1, || chain(&points, None)).unwrap_or_default());
        // Even ids give two arrows, odd ids one (their first f is dropped, no s before it).
        assert_eq!(one.len(), 300 * 2 + 300);
        for threads in [2, 3, 16] {
            assert_eq!(
                arrows(&with_threads(threads, || chain(&points, None)).unwrap_or_default()),
                one
            );
        }
    }

    #[test]
    fn launch_points_are_left_out_unless_another_flow_has_no_category() {
        // 200 launch arrows (empty category 0) and 200 forward-backward arrows (category 3),
        // written from the highest id down (times rise with the id, as a format that does not
        // require events in order allows), so that only a sort by key puts them in order.
        let mut points: Vec<FlowPoint> = Vec::new();
        for id in (0..200u64).rev() {
            let ts = i64::try_from(id).unwrap_or(0) * 10;
            points.push(point(0, id, b's', ts, FlowKind::Launch));
            points.push(point(3, id, b's', ts + 1, FlowKind::ForwardBackward));
            points.push(point(0, id, b'f', ts + 2, FlowKind::Launch));
            points.push(point(3, id, b'f', ts + 3, FlowKind::ForwardBackward));
        }
        let fb = FlowKind::ForwardBackward as u8;
        for threads in [1, 2, 16] {
            let kept = with_threads(threads, || chain(&points, Some(StrId(0))));
            let kept = kept.expect("no other flow without a category").concat();
            assert_eq!(kept.len(), 200, "{threads} threads");
            assert!(kept.iter().all(|f| f.kind == FlowKind::ForwardBackward));
            // By key on each thread: one run of rising ids (and times) per thread at most, where
            // file order has a fall at every arrow.
            let falls = kept
                .windows(2)
                .filter(|w| w[0].from.1 > w[1].from.1)
                .count();
            assert!(falls < threads, "{threads} threads: {falls} falls");
            let all = with_threads(threads, || chain(&points, None)).unwrap_or_default();
            assert_eq!(all.concat().len(), 400, "{threads} threads");
            assert_eq!(arrows(&all).iter().filter(|a| a.3 == fb).count(), 200);
            // A flow of another kind with no category shares the launches' keys.
            let mut mixed = points.clone();
            mixed.push(point(0, 5, b'f', 3, FlowKind::Other));
            assert!(with_threads(threads, || chain(&mixed, Some(StrId(0)))).is_none());
        }
    }
}
