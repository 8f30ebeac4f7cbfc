//! Launch flows from correlation ids: each kernel, copy or set is linked to the API call that
//! carries its (scope, correlation id). The events are read in pieces on all cores
//! ([`crate::parallel::pieces`]); the index from ids to calls is a table where the ids are
//! clustered (every tool numbers them upwards), filled with atomic updates whose result does not
//! depend on the order of the pieces, else a hash map.

use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};

use rustc_hash::FxHashMap;

use super::Scopes;
use crate::model::{ApiTable, CopyTable, EventKind, EventRef, Flow, FlowKind, KernelTable, Track};

/// Launch flows from each API call to the GPU work that carries its (scope, correlation id),
/// read off the finished tracks and the side tables, in the order of the GPU work (by track,
/// then event). `extra`: room to reserve for flows the caller adds afterwards.
pub(super) fn link_correlations(
    tracks: &[Track],
    kernels: &KernelTable,
    copies: &CopyTable,
    api_calls: &ApiTable,
    scopes: &Scopes,
    extra: usize,
) -> Vec<Flow> {
    if !api_calls.has_correlations() || !(kernels.has_correlations() || copies.has_correlations()) {
        return Vec::new();
    }
    let lens: Vec<usize> = tracks.iter().map(|t| t.events.len()).collect();
    let mut pieces = crate::parallel::pieces(&lens);
    let calls = Calls {
        tracks,
        api_calls,
        scopes,
    };
    let by_corr = CorrelationIndex::new(&calls, &mut pieces);
    let is_work = |k: &EventKind| {
        matches!(
            k,
            EventKind::Kernel | EventKind::Memcpy | EventKind::Memset | EventKind::UnifiedMemory
        )
    };
    // Room for a flow per piece's GPU work (at most one each), written side by side and then
    // closed up: the list is made once, at its final size, and never copied.
    let room: Vec<usize> = pieces
        .iter()
        .map(|(t, range)| {
            tracks[*t].events.kind[range.clone()]
                .iter()
                .filter(|k| is_work(k))
                .count()
        })
        .collect();
    let total: usize = room.iter().sum();
    let blank = Flow {
        from: EventRef { track: 0, index: 0 },
        to: EventRef { track: 0, index: 0 },
        kind: FlowKind::Launch,
    };
    let mut flows = vec![blank; total];
    flows.reserve(extra);
    let mut jobs: Vec<(&Piece, &mut [Flow])> = pieces
        .iter()
        .zip(crate::parallel::split_mut(&mut flows, room.iter().copied()))
        .map(|(piece, (_, out))| (piece, out))
        .collect();
    let written = crate::parallel::map_mut(
        &mut jobs,
        |(_, out)| out.len(),
        |((t, range), out)| {
            let ev = &tracks[*t].events;
            let mut n = 0;
            for i in range.clone() {
                let row = ev.detail[i] as usize;
                let (corr, scope) = match ev.kind[i] {
                    EventKind::Kernel => (kernels.correlation(row), scopes.kernels.get(row)),
                    EventKind::Memcpy | EventKind::Memset | EventKind::UnifiedMemory => {
                        (copies.correlation(row), scopes.copies.get(row))
                    }
                    _ => continue,
                };
                if let Some(corr) = corr
                    && let Some(from) = by_corr.get(scope.unwrap_or(0), corr)
                    && let Some(slot) = out.get_mut(n)
                {
                    *slot = Flow {
                        from,
                        to: EventRef {
                            track: u32::try_from(*t).unwrap_or(u32::MAX),
                            index: u32::try_from(i).unwrap_or(0),
                        },
                        kind: FlowKind::Launch,
                    };
                    n += 1;
                }
            }
            n
        },
    );
    drop(jobs);
    // Close up the pieces' flows, in piece order.
    let (mut start, mut end) = (0, 0);
    for (&n, &room) in written.iter().zip(&room) {
        flows.copy_within(start..start + n, end);
        end += n;
        start += room;
    }
    flows.truncate(end);
    flows
}

/// A piece of the tracks: (track, range of its events).
type Piece = (usize, Range<usize>);

/// An API call on a track, as [`CorrelationIndex::new`] reads it.
struct ApiCall {
    scope: u32,
    corr: u64,
    /// Its row in the API table (push order).
    row: u32,
    /// Where it is.
    at: EventRef,
}

/// What the API calls are read from.
struct Calls<'a> {
    tracks: &'a [Track],
    api_calls: &'a ApiTable,
    scopes: &'a Scopes,
}

impl Calls<'_> {
    /// The API calls among events `range` of track `t` that carry a correlation id.
    fn on(&self, t: usize, range: Range<usize>) -> impl Iterator<Item = ApiCall> + '_ {
        let ev = &self.tracks[t].events;
        range.filter_map(move |i| {
            if !ev.kind[i].is_api() {
                return None;
            }
            let row = ev.detail[i];
            let corr = self.api_calls.correlation(row as usize)?;
            let scope = self.scopes.api_calls.get(row as usize).unwrap_or(0);
            Some(ApiCall {
                scope,
                corr,
                row,
                at: EventRef {
                    track: u32::try_from(t).ok()?,
                    index: u32::try_from(i).ok()?,
                },
            })
        })
    }
}

/// Ids per page of [`CorrelationIndex::Paged`]: 4096 (16 KiB of slots).
const PAGE_BITS: u32 = 12;
/// A page of [`CorrelationIndex::Paged`]'s directory that no call has.
const NO_PAGE: u32 = u32::MAX;
/// Marks a slot that holds a row, not yet a place.
const ROW_MARK: u32 = 1 << 31;

/// What the first reading of the calls finds out, per piece, then for all.
#[derive(Clone, Debug)]
struct CallStats {
    first: u64,
    last: u64,
    count: u64,
    /// The scope, while all calls so far had the same one.
    scope: Option<u32>,
    one_scope: bool,
    max_track: u32,
    max_index: u32,
    max_row: u32,
    /// The pages (id >> [`PAGE_BITS`]) that calls have, sorted, without repeats.
    pages: Vec<u64>,
}

impl CallStats {
    fn of(calls: impl Iterator<Item = ApiCall>) -> Self {
        let mut s = CallStats {
            first: u64::MAX,
            last: 0,
            count: 0,
            scope: None,
            one_scope: true,
            max_track: 0,
            max_index: 0,
            max_row: 0,
            pages: Vec::new(),
        };
        for call in calls {
            s.first = s.first.min(call.corr);
            s.last = s.last.max(call.corr);
            s.count += 1;
            s.one_scope &= call.scope == *s.scope.get_or_insert(call.scope);
            s.max_track = s.max_track.max(call.at.track);
            s.max_index = s.max_index.max(call.at.index);
            s.max_row = s.max_row.max(call.row);
            let page = call.corr >> PAGE_BITS;
            if s.pages.last() != Some(&page) {
                s.pages.push(page);
            }
        }
        s.pages.sort_unstable();
        s.pages.dedup();
        s
    }

    /// The statistics of the calls of all of `parts`: their pages are sorted together once
    /// (joining them pairwise would sort the growing list again for every part).
    fn join_all(parts: Vec<CallStats>) -> Self {
        let mut all = CallStats::of(std::iter::empty());
        for other in parts {
            if other.count == 0 {
                continue;
            }
            if all.count == 0 {
                all = other;
                continue;
            }
            all.first = all.first.min(other.first);
            all.last = all.last.max(other.last);
            all.count += other.count;
            all.one_scope &= other.one_scope && all.scope == other.scope;
            all.max_track = all.max_track.max(other.max_track);
            all.max_index = all.max_index.max(other.max_index);
            all.max_row = all.max_row.max(other.max_row);
            all.pages.extend(other.pages);
        }
        all.pages.sort_unstable();
        all.pages.dedup();
        all
    }
}

/// The API call of each (scope, correlation id); the last one pushed (the highest row) wins
/// where ids repeat, and among calls of one row (never seen: each row is pushed once), the
/// first by track and index.
enum CorrelationIndex {
    /// One scope whose ids cluster on few pages of 4096 ids (tools number them from 1 up; a
    /// trace made of several runs has a cluster per run), and whose calls' places pack into 30
    /// bits: a directory of pages from the first id's page, and a table of 4 bytes per id of
    /// the pages that have calls, several times faster to fill and to read than a hash map and
    /// at most 64 bytes per call. Each slot holds 0 where no call has the id, a packed place
    /// plus one (track above `index_bits` bits of index), or, while the table is being
    /// filled, the row of the winning call so far marked by [`ROW_MARK`].
    Paged {
        scope: u32,
        first_page: u64,
        index_bits: u32,
        directory: Vec<u32>,
        slots: Vec<AtomicU32>,
    },
    /// Sparse ids, several scopes or places too large to pack: the row of the winning call so
    /// far, and its place.
    Map(FxHashMap<(u32, u64), (u32, EventRef)>),
}

impl CorrelationIndex {
    /// Reads the calls on `pieces` of the tracks: on all cores, to see whether the ids
    /// cluster, then (paged) to find the highest row of each id and to put its place in;
    /// otherwise it fills the map in one pass.
    fn new(calls: &Calls<'_>, pieces: &mut [(usize, Range<usize>)]) -> Self {
        let stats = CallStats::join_all(crate::parallel::map_mut(
            pieces,
            |(_, range)| range.len(),
            |(t, range)| CallStats::of(calls.on(*t, range.clone())),
        ));
        let bits = |v: u32| u32::BITS - v.leading_zeros();
        let index_bits = bits(stats.max_index);
        let packs = bits(stats.max_track) + index_bits <= 30 && stats.max_row < ROW_MARK;
        let page_slots = (stats.pages.len() as u64) << PAGE_BITS;
        let clustered = page_slots <= stats.count.saturating_mul(16) + (1 << PAGE_BITS);
        let first_page = stats.first >> PAGE_BITS;
        let directory_len = (stats.last >> PAGE_BITS).saturating_sub(first_page) + 1;
        if stats.count > 0 && stats.one_scope && packs && clustered && directory_len <= stats.count
        {
            return Self::paged(calls, pieces, &stats, index_bits);
        }
        // One pass, each entry keeping the row it came from to compare.
        let mut map: FxHashMap<(u32, u64), (u32, EventRef)> = FxHashMap::default();
        map.reserve(usize::try_from(stats.count).unwrap_or(0));
        for (t, range) in pieces.iter() {
            for call in calls.on(*t, range.clone()) {
                map.entry((call.scope, call.corr))
                    .and_modify(|(row, at)| {
                        if call.row > *row {
                            (*row, *at) = (call.row, call.at);
                        }
                    })
                    .or_insert((call.row, call.at));
            }
        }
        Self::Map(map)
    }

    /// The paged table of the calls on `pieces`, which `stats` describe.
    fn paged(
        calls: &Calls<'_>,
        pieces: &mut [(usize, Range<usize>)],
        stats: &CallStats,
        index_bits: u32,
    ) -> Self {
        let first_page = stats.first >> PAGE_BITS;
        let directory_len = (stats.last >> PAGE_BITS) - first_page + 1;
        let mut directory = vec![NO_PAGE; usize::try_from(directory_len).unwrap_or(0)];
        for (n, &page) in stats.pages.iter().enumerate() {
            directory[usize::try_from(page - first_page).unwrap_or(0)] =
                u32::try_from(n).unwrap_or(NO_PAGE);
        }
        // Zeroed by the allocator rather than slot by slot on this thread (11 ms for the 1.4 GB
        // trace), its pages written in order before the fill below writes them at random.
        let slots: Vec<AtomicU32> = crate::parallel::written_zeros(stats.pages.len() << PAGE_BITS);
        let slot = |corr: u64| -> &AtomicU32 {
            let page = directory[usize::try_from((corr >> PAGE_BITS) - first_page).unwrap_or(0)];
            let offset = corr & ((1 << PAGE_BITS) - 1);
            &slots[((page as usize) << PAGE_BITS) | usize::try_from(offset).unwrap_or(0)]
        };
        // The highest row of each id: the maximum does not depend on the order.
        crate::parallel::map_mut(
            pieces,
            |(_, range)| range.len(),
            |(t, range)| {
                for call in calls.on(*t, range.clone()) {
                    slot(call.corr).fetch_max(ROW_MARK | call.row, Ordering::Relaxed);
                }
            },
        );
        // The place of the winning call. Were a row on two events, the first by (track,
        // index), the smallest place, would win, whatever the order of the pieces.
        let row_at = |place: u32| {
            let (t, i) = (place >> index_bits, place & ((1 << index_bits) - 1));
            calls.tracks[t as usize].events.detail[i as usize]
        };
        crate::parallel::map_mut(
            pieces,
            |(_, range)| range.len(),
            |(t, range)| {
                for call in calls.on(*t, range.clone()) {
                    let s = slot(call.corr);
                    let mine = ((call.at.track << index_bits) | call.at.index) + 1;
                    let mut current = s.load(Ordering::Relaxed);
                    loop {
                        let take = current == ROW_MARK | call.row
                            || (current != 0
                                && current < ROW_MARK
                                && mine < current
                                && row_at(current - 1) == call.row);
                        if !take {
                            break;
                        }
                        match s.compare_exchange(
                            current,
                            mine,
                            Ordering::Relaxed,
                            Ordering::Relaxed,
                        ) {
                            Ok(_) => break,
                            Err(now) => current = now,
                        }
                    }
                }
            },
        );
        Self::Paged {
            scope: stats.scope.unwrap_or(0),
            first_page,
            index_bits,
            directory,
            slots,
        }
    }

    fn get(&self, scope: u32, corr: u64) -> Option<EventRef> {
        match self {
            Self::Paged {
                scope: s,
                first_page,
                index_bits,
                directory,
                slots,
            } => {
                if scope != *s {
                    return None;
                }
                let dir = usize::try_from((corr >> PAGE_BITS).checked_sub(*first_page)?).ok()?;
                let page = *directory.get(dir)?;
                if page == NO_PAGE {
                    return None;
                }
                let offset = usize::try_from(corr & ((1 << PAGE_BITS) - 1)).ok()?;
                let slot = slots
                    .get(((page as usize) << PAGE_BITS) | offset)?
                    .load(Ordering::Relaxed);
                (slot != 0 && slot < ROW_MARK).then(|| {
                    let place = slot - 1;
                    EventRef {
                        track: place >> index_bits,
                        index: place & ((1u32 << index_bits) - 1),
                    }
                })
            }
            Self::Map(map) => map.get(&(scope, corr)).map(|&(_, at)| at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::ProfileBuilder;
    use crate::model::{ApiInfo, Format, GpuLane, KernelInfo, TraceId, TrackKey};
    use crate::parallel::with_threads;

    /// 3000 launches on three threads and two streams, pushed out of time order, their ids in
    /// two clusters a million apart (as in a trace of two runs), the odd ones in scope
    /// `odd_scope`; id 4 is carried again by a call `again`, pushed last, on another thread.
    fn builder(odd_scope: u32) -> ProfileBuilder {
        let mut b = ProfileBuilder::new("corr.json".into(), Format::NsysSqlite);
        let threads: Vec<_> = (0..3)
            .map(|tid| {
                b.track(TrackKey::Thread {
                    pid: TraceId::Int(1),
                    tid: TraceId::Int(tid),
                })
            })
            .collect();
        let streams: Vec<_> = (7..9)
            .map(|stream| {
                b.track(TrackKey::Gpu {
                    device: 0,
                    context: 1,
                    stream,
                    lane: GpuLane::Work,
                })
            })
            .collect();
        let (launch, again, kernel) = (b.intern("launch"), b.intern("again"), b.intern("k"));
        for k in 0..3000u32 {
            let corr = u64::from(k) + if k % 2 == 0 { 0 } else { 1_000_000 };
            let scope = if k % 2 == 0 { 0 } else { odd_scope };
            let at = i64::from((k * 7919) % 3000) * 100;
            let api = ApiInfo {
                correlation: Some(corr),
                ..ApiInfo::default()
            };
            let thread = threads[k as usize % 3];
            b.push_api(thread, at, 5, launch, EventKind::Runtime, api, scope);
            let info = KernelInfo {
                correlation: Some(corr),
                ..KernelInfo::default()
            };
            let stream = streams[k as usize % 2];
            b.push_kernel(stream, at + 50, 10, kernel, info, scope);
        }
        let api = ApiInfo {
            correlation: Some(4),
            ..ApiInfo::default()
        };
        b.push_api(threads[0], 1, 2, again, EventKind::Runtime, api, 0);
        b
    }

    #[test]
    fn every_kernel_is_linked_to_the_call_with_its_id_the_last_pushed_winning() {
        for odd_scope in [0, 1] {
            let p = with_threads(4, || builder(odd_scope).finish());
            assert_eq!(p.flows.len(), 3000, "scope {odd_scope}");
            for f in &p.flows {
                let from = &p.tracks[f.from.track as usize].events;
                let to = &p.tracks[f.to.track as usize].events;
                let api_row = from.detail[f.from.index as usize] as usize;
                let kernel_row = to.detail[f.to.index as usize] as usize;
                let corr = p.kernels.correlation(kernel_row);
                assert_eq!(p.api_calls.correlation(api_row), corr);
                let name = p.str(from.name[f.from.index as usize]);
                assert_eq!(name == "again", corr == Some(4), "{name} for id {corr:?}");
            }
        }
    }

    #[test]
    fn clustered_ids_of_one_scope_get_the_table_and_two_scopes_the_map() {
        for (odd_scope, paged) in [(0, true), (1, false)] {
            let b = builder(odd_scope);
            let lens: Vec<usize> = b.tracks.iter().map(|t| t.events.len()).collect();
            let calls = Calls {
                tracks: &b.tracks,
                api_calls: &b.api_calls,
                scopes: &b.scopes,
            };
            let index = with_threads(4, || {
                let mut pieces = crate::parallel::pieces(&lens);
                CorrelationIndex::new(&calls, &mut pieces)
            });
            assert_eq!(matches!(index, CorrelationIndex::Paged { .. }), paged);
            // Id 4 was carried again by the call pushed last on thread 0, after its 1000 launches.
            let at = index.get(0, 4).expect("id 4 has a call");
            assert_eq!((at.track, at.index), (0, 1000));
            assert_eq!(index.get(0, 999_999), None);
        }
    }

    #[test]
    fn links_found_on_four_threads_are_those_found_on_one() {
        for odd_scope in [0, 1] {
            let one = with_threads(1, || builder(odd_scope).finish());
            let four = with_threads(4, || builder(odd_scope).finish());
            assert_eq!(one.flows, four.flows, "scope {odd_scope}");
        }
    }
}
