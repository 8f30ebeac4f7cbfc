//! How many threads the importers use, and the parallel pieces they are built of: a map over
//! independent items ([`map_mut`]) and two jobs side by side ([`join`]), which every other
//! piece here runs its threads through; pieces of long lists, fills of a new vector, a gather,
//! zeros on written pages, a stable sort and an in-place sort.

use std::cell::Cell;

thread_local! {
    /// The thread count [`with_threads`] set for work on this thread.
    static OVERRIDE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Runs `f` with [`threads`] returning `n` on the calling thread: work that is already spread
/// over the cores one file per thread (a job's ranks) imports each file on its own thread.
pub fn with_threads<R>(n: usize, f: impl FnOnce() -> R) -> R {
    let before = OVERRIDE.with(|o| o.replace(Some(n)));
    let r = f();
    OVERRIDE.with(|o| o.set(before));
    r
}

/// Number of threads to work with: what [`with_threads`] set on this thread, else
/// `WARPSCOPE_THREADS` if set (0 or 1: everything on the calling thread), else the machine's
/// cores.
pub fn threads() -> usize {
    if let Some(n) = OVERRIDE.with(Cell::get) {
        return n;
    }
    if let Some(n) = std::env::var("WARPSCOPE_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        return n.min(256);
    }
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Applies `f` to every item on up to [`threads`] threads and returns the results in item
/// order. Items go to threads heaviest first (by `weight`, asked once per item), each to the
/// least loaded thread, so that one big item does not wait behind small ones. With one thread, or one item, it all
/// runs on the calling thread.
pub fn map_mut<T, R>(
    items: &mut [T],
    weight: impl Fn(&T) -> usize,
    f: impl Fn(&mut T) -> R + Sync,
) -> Vec<R>
where
    T: Send,
    R: Send,
{
    let threads = threads().min(items.len());
    if threads <= 1 {
        return items.iter_mut().map(f).collect();
    }
    let mut order: Vec<(usize, usize, &mut T)> = items
        .iter_mut()
        .enumerate()
        .map(|(i, t)| (i, weight(t), t))
        .collect();
    order.sort_by_key(|&(_, w, _)| std::cmp::Reverse(w));
    let mut buckets: Vec<(usize, Vec<(usize, &mut T)>)> =
        (0..threads).map(|_| (0, Vec::new())).collect();
    for (i, w, item) in order {
        if let Some(lightest) = buckets.iter_mut().min_by_key(|(load, _)| *load) {
            lightest.0 = lightest.0.saturating_add(w.max(1));
            lightest.1.push((i, item));
        }
    }
    let f = &f;
    let mut results: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = buckets
            .into_iter()
            .map(|(_, bucket)| {
                scope.spawn(move || {
                    bucket
                        .into_iter()
                        .map(|(i, item)| (i, f(item)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(r) => r,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Runs `a` and `b` side by side (`a` on a thread of its own, with the same [`threads`]) when
/// [`threads`] is more than one, else one after the other on the calling thread; returns both
/// results.
pub(crate) fn join<A: Send, B>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    let n = threads();
    if n <= 1 {
        return (a(), b());
    }
    std::thread::scope(|scope| {
        let a = scope.spawn(move || with_threads(n, a));
        let b = b();
        match a.join() {
            Ok(a) => (a, b),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// The smallest piece [`pieces`] cuts: below this, a thread costs more than it saves.
#[cfg(not(test))]
const MIN_PIECE: usize = 1 << 16;
/// Small pieces in unit tests, so that tests with a few thousand events cut tracks.
#[cfg(test)]
const MIN_PIECE: usize = 64;

/// The smallest piece [`pieces_for_searches`] cuts.
#[cfg(not(test))]
const MIN_SEARCH_PIECE: usize = 1 << 12;
/// Small pieces in unit tests, as [`MIN_PIECE`].
#[cfg(test)]
const MIN_SEARCH_PIECE: usize = 16;

/// Cuts lists of `lens[i]` items into pieces for [`map_mut`]: (list, range of its items), in
/// list order then item order, so that results joined in piece order are in item order. A
/// list is cut into pieces of about a quarter of one thread's share (at least [`MIN_PIECE`]),
/// so that one long list (a track with millions of events) is spread over the cores too; with
/// one thread, every list is one piece. Empty lists give no piece.
pub(crate) fn pieces(lens: &[usize]) -> Vec<(usize, std::ops::Range<usize>)> {
    pieces_of_at_least(lens, MIN_PIECE)
}

/// [`pieces`] for work that costs a search per item (a few cache misses), far more than a pass
/// over memory: pieces of at least [`MIN_SEARCH_PIECE`] items, so that a list of a hundred
/// thousand items is spread over the cores too.
pub(crate) fn pieces_for_searches(lens: &[usize]) -> Vec<(usize, std::ops::Range<usize>)> {
    pieces_of_at_least(lens, MIN_SEARCH_PIECE)
}

/// [`pieces`] of at least `min_piece` items (but the last of each list).
fn pieces_of_at_least(lens: &[usize], min_piece: usize) -> Vec<(usize, std::ops::Range<usize>)> {
    let threads = threads().max(1);
    let total: usize = lens.iter().sum();
    let size = if threads == 1 {
        usize::MAX
    } else {
        (total / (threads * 4)).max(min_piece)
    };
    let mut out = Vec::new();
    for (list, &len) in lens.iter().enumerate() {
        let mut start = 0;
        while start < len {
            let end = start.saturating_add(size).min(len);
            out.push((list, start..end));
            start = end;
        }
    }
    out
}

/// `0..n` cut into up to [`threads`] consecutive ranges of at least [`MIN_PIECE`] items each
/// (one range for a short list or one thread; none for an empty list).
pub(crate) fn ranges(n: usize) -> Vec<std::ops::Range<usize>> {
    let parts = threads().min(n / MIN_PIECE).max(1);
    let size = n.div_ceil(parts).max(1);
    (0..n)
        .step_by(size)
        .map(|start| start..(start + size).min(n))
        .collect()
}

/// `f` applied to each of `ranges` ([`ranges`] cuts at most one per thread), side by side,
/// results in range order.
pub(crate) fn map_ranges<R: Send>(
    ranges: &[std::ops::Range<usize>],
    f: impl Fn(std::ops::Range<usize>) -> R + Sync,
) -> Vec<R> {
    let mut items = ranges.to_vec();
    map_mut(&mut items, |r| r.len(), |r| f(r.clone()))
}

/// `v` cut into consecutive pieces of `lens` (which must add up to no more than its length),
/// each with its offset in `v`.
pub(crate) fn split_mut<T>(
    v: &mut [T],
    lens: impl IntoIterator<Item = usize>,
) -> Vec<(usize, &mut [T])> {
    let mut rest = v;
    let mut at = 0;
    lens.into_iter()
        .map(|len| {
            let (piece, tail) = std::mem::take(&mut rest).split_at_mut(len);
            rest = tail;
            at += len;
            (at - len, piece)
        })
        .collect()
}

/// Calls `f(start, piece)` for the consecutive pieces of `v` that [`ranges`] cuts, side by
/// side; `start` is the piece's offset in `v`.
pub(crate) fn for_each_piece_mut<T: Send>(v: &mut [T], f: impl Fn(usize, &mut [T]) + Sync) {
    let lens: Vec<usize> = ranges(v.len()).iter().map(ExactSizeIterator::len).collect();
    let mut pieces = split_mut(v, lens);
    map_mut(&mut pieces, |(_, p)| p.len(), |(at, p)| f(*at, p));
}

/// `(0..n).map(f).collect()`, written by up to [`threads`] threads, each a part of the result,
/// straight into the new vector's memory (filling it first with a placeholder would be one
/// more pass over it, on one thread).
pub(crate) fn map_indices<U: Copy + Send>(n: usize, f: impl Fn(usize) -> U + Sync) -> Vec<U> {
    let mut out: Vec<U> = Vec::with_capacity(n);
    let written = std::sync::atomic::AtomicUsize::new(0);
    for_each_piece_mut(&mut out.spare_capacity_mut()[..n], |start, piece| {
        for (k, slot) in piece.iter_mut().enumerate() {
            slot.write(f(start + k));
        }
        written.fetch_add(piece.len(), std::sync::atomic::Ordering::Relaxed);
    });
    set_len_written(&mut out, written.into_inner(), n);
    out
}

/// `n` zeros on pages already written, by up to [`threads`] threads: for a table read and
/// written at random afterwards. Fresh pages from the allocator are mapped to the shared zero
/// page by a first read, and the write after it copies the page and flushes the TLB of every
/// core the process ran on (5% of a summary's CPU on 2 cores); faulted in by random writes they
/// cost twice as much as in order. Writing one zero per page first, in order, avoids both.
pub(crate) fn written_zeros<T: bytemuck::Zeroable + Send>(n: usize) -> Vec<T> {
    let mut v: Vec<T> = bytemuck::allocation::zeroed_vec(n);
    let per_page = (4096 / std::mem::size_of::<T>().max(1)).max(1);
    for_each_piece_mut(&mut v, |_, piece| {
        for x in piece.iter_mut().step_by(per_page) {
            // An opaque zero: the compiler cannot drop the store as one of a value already there.
            *x = std::hint::black_box(T::zeroed());
        }
    });
    v
}

/// Sets the length of `v`, whose first `n` spare slots were written (`written` of them,
/// counted as they were): the one place the parallel pieces need `unsafe`.
#[allow(unsafe_code)]
fn set_len_written<T: Copy>(v: &mut Vec<T>, written: usize, n: usize) {
    assert!(
        written == n && v.is_empty() && v.capacity() >= n,
        "a parallel fill wrote {written} of {n} slots"
    );
    // SAFETY: the capacity holds `n` slots, and every one of them was initialised (each piece
    // writes each slot of its part once, and the parts cover `0..n`, as the count just checked
    // says); `T: Copy` has no drop to run.
    unsafe { v.set_len(n) };
}

/// `indices.iter().map(|&i| from[i]).collect()`, written by up to [`threads`] threads, each a
/// part of the result.
pub(crate) fn gather<T: Copy + Send + Sync>(from: &[T], indices: &[u32]) -> Vec<T> {
    map_indices(indices.len(), |k| from[indices[k] as usize])
}

/// Sorts `v` by `key` on up to [`threads`] threads, stably (elements with equal keys keep
/// their order), as `v.sort_by_key(key)` does: consecutive pieces are sorted on their own (with
/// the standard library's stable sort, quick on runs already in order, as a trace's events
/// mostly are), then merged, each thread writing one part of the result; equal keys fall in
/// one part, where the earlier piece's come first.
pub(crate) fn sort_by_key<T, K>(v: &mut Vec<T>, key: impl Fn(&T) -> K + Sync)
where
    T: Copy + Send + Sync,
    K: Ord,
{
    let n = v.len();
    let parts = threads().min(n / MIN_PIECE).max(1);
    let cmp = |a: &T, b: &T| key(a).cmp(&key(b));
    if parts <= 1 {
        v.sort_by(cmp);
        return;
    }
    let chunk = n.div_ceil(parts);
    let mut pieces: Vec<&mut [T]> = v.chunks_mut(chunk).collect();
    map_mut(&mut pieces, |p| p.len(), |p| p.sort_by(cmp));
    let runs: Vec<&[T]> = v.chunks(chunk).collect();
    // Splitters: quantiles of evenly spaced samples of the sorted runs.
    let per_run = parts * 4;
    let mut samples: Vec<&T> = runs
        .iter()
        .flat_map(|run| (0..per_run).map(move |j| &run[j * run.len() / per_run]))
        .collect();
    samples.sort_by(|a, b| cmp(a, b));
    let splitters: Vec<K> = (1..parts)
        .map(|p| key(samples[p * samples.len() / parts]))
        .collect();
    // Where each part starts in each run: its first element not below the part's splitter.
    let bounds: Vec<Vec<usize>> = runs
        .iter()
        .map(|run| {
            let mut b = vec![0];
            b.extend(
                splitters
                    .iter()
                    .map(|s| run.partition_point(|x| key(x) < *s)),
            );
            b.push(run.len());
            b
        })
        .collect();
    // Each part: its slice of every run, merged into its place in the result.
    let sources: Vec<Vec<&[T]>> = (0..parts)
        .map(|p| {
            runs.iter()
                .zip(&bounds)
                .map(|(run, b)| &run[b[p]..b[p + 1]])
                .collect()
        })
        .collect();
    let lens = sources.iter().map(|s| s.iter().map(|r| r.len()).sum());
    let mut out: Vec<T> = Vec::with_capacity(n);
    let mut merges: Vec<_> = split_mut(&mut out.spare_capacity_mut()[..n], lens)
        .into_iter()
        .map(|(_, part)| part)
        .zip(sources)
        .collect();
    let written: usize = map_mut(
        &mut merges,
        |(part, _)| part.len(),
        |(part, sources)| merge_into(part, std::mem::take(sources), &key),
    )
    .into_iter()
    .sum();
    set_len_written(&mut out, written, n);
    *v = out;
}

/// Sorts `v` by `key` on up to [`threads`] threads, in place, for keys that tell every element
/// apart (or elements equal wherever their keys are): any sort then gives the one order, so the
/// standard library's unstable sort is used, and no copy is made (a merge would need one as big
/// as `v`). Each level splits the slice at its median ([`slice::select_nth_unstable_by_key`],
/// linear) and sorts the halves side by side.
///
/// A slice made of a few runs already in order (a Kineto thread's operators, then its runtime
/// calls; a stream's kernels, then its step annotations last to first) goes to [`sort_by_key`]
/// instead: the standard library's stable sort finds the runs of each piece and merges them in
/// linear time per merge level, and the pieces are merged side by side, where splitting at the
/// median would scatter the runs and sort them again. That costs a copy of `v`.
pub(crate) fn sort_unique_by_key<T, K>(v: &mut Vec<T>, key: impl Fn(&T) -> K + Sync)
where
    T: Copy + Send + Sync,
    K: Ord,
{
    if runs(v, &key) <= v.len() / RUN_SPACING + 1 {
        sort_by_key(v, key);
        return;
    }
    let levels = usize::BITS - threads().max(1).saturating_sub(1).leading_zeros();
    split_sort(v, &key, levels);
}

/// [`sort_unique_by_key`] merges a slice with at most one run per this many elements: few
/// enough that merging them beats sorting on all cores.
const RUN_SPACING: usize = 4096;

/// About how many runs in order (rising, or falling as a trace's step annotations written last
/// to first are) `v` is made of by `key`: one, plus two for each stretch that falls.
fn runs<T: Sync, K: Ord>(v: &[T], key: &(impl Fn(&T) -> K + Sync)) -> usize {
    let falls = |i: usize| key(&v[i - 1]) > key(&v[i]);
    // Counted in pieces, each looking back at the pair before its first one.
    let stretches: usize = map_ranges(&ranges(v.len()), |r| {
        let mut falling = r.start >= 2 && falls(r.start - 1);
        let mut stretches = 0;
        for i in r.start.max(1)..r.end {
            let f = falls(i);
            if f && !falling {
                stretches += 1;
            }
            falling = f;
        }
        stretches
    })
    .into_iter()
    .sum();
    1 + 2 * stretches
}

fn split_sort<T: Send, K: Ord>(v: &mut [T], key: &(impl Fn(&T) -> K + Sync), levels: u32) {
    if levels == 0 || v.len() < 2 * MIN_PIECE {
        v.sort_unstable_by_key(key);
        return;
    }
    let mid = v.len() / 2;
    v.select_nth_unstable_by_key(mid, key);
    let (low, high) = v.split_at_mut(mid);
    join(
        || split_sort(low, key, levels - 1),
        || split_sort(high, key, levels - 1),
    );
}

/// Merges the sorted `sources` into `out` (as long as all of them together); on equal keys,
/// the earlier source's element comes first. The heads of the sources wait in a heap, so an
/// element costs a few comparisons however many sources there are.
/// Returns how many slots of `out` it wrote: all of them, as `sources` hold as many items.
fn merge_into<T: Copy, K: Ord>(
    out: &mut [std::mem::MaybeUninit<T>],
    mut sources: Vec<&[T]>,
    key: &impl Fn(&T) -> K,
) -> usize {
    let mut written = 0;
    use std::cmp::Reverse;
    // The least (key, source) first: on equal keys the earlier source, for stability.
    let mut heads: std::collections::BinaryHeap<Reverse<(K, usize)>> = sources
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.first().map(|x| Reverse((key(x), i))))
        .collect();
    for slot in out.iter_mut() {
        let Some(Reverse((_, i))) = heads.pop() else {
            break;
        };
        let Some((&first, rest)) = sources[i].split_first() else {
            continue;
        };
        slot.write(first);
        written += 1;
        sources[i] = rest;
        if let Some(next) = rest.first() {
            heads.push(Reverse((key(next), i)));
        }
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_item_order_whatever_the_weights() {
        let mut items: Vec<u64> = (0..50).collect();
        let got = map_mut(
            &mut items,
            |&v| (v % 7) as usize,
            |v| {
                *v += 100;
                *v * 2
            },
        );
        assert_eq!(got, (0..50).map(|v| (v + 100) * 2).collect::<Vec<_>>());
        assert_eq!(items, (100..150).collect::<Vec<_>>());
    }

    #[test]
    fn pieces_cover_every_item_once_in_order() {
        let lens = [0, 5, 3000, 1, 700];
        for (threads, searches) in [1, 2, 16].into_iter().flat_map(|t| [(t, false), (t, true)]) {
            let cut = |lens: &[usize]| {
                if searches {
                    pieces_for_searches(lens)
                } else {
                    pieces(lens)
                }
            };
            let got = with_threads(threads, || cut(&lens));
            let mut next = vec![0usize; lens.len()];
            let mut last_list = 0;
            for (list, range) in &got {
                assert!(*list >= last_list, "lists in order");
                last_list = *list;
                assert_eq!(range.start, next[*list], "no gap, no overlap");
                assert!(range.end > range.start, "no empty piece");
                next[*list] = range.end;
            }
            assert_eq!(next, lens.to_vec(), "{threads} threads");
            if threads == 1 {
                assert_eq!(got.len(), 4, "one piece per non-empty list");
            }
        }
        // 16 threads cut the long list in pieces of at least MIN_PIECE; work that searches
        // per item in smaller ones.
        let pieces_16 = with_threads(16, || pieces(&lens));
        assert!(pieces_16.len() > 4);
        // The first piece of the long list (the last of a list may be shorter).
        let first_of_long = |p: &[(usize, std::ops::Range<usize>)]| {
            p.iter().find(|(list, _)| *list == 2).map(|(_, r)| r.len())
        };
        assert!(first_of_long(&pieces_16) >= Some(MIN_PIECE));
        let searches_16 = with_threads(16, || pieces_for_searches(&lens));
        assert!(searches_16.len() > pieces_16.len());
        assert!(first_of_long(&searches_16) >= Some(MIN_SEARCH_PIECE));
        // A list too short for a quarter share per thread: pieces of the minimum each.
        let short = with_threads(16, || pieces_for_searches(&[200]));
        let lens: Vec<usize> = short.iter().map(|(_, r)| r.len()).collect();
        assert_eq!(
            lens[..lens.len() - 1],
            vec![MIN_SEARCH_PIECE; lens.len() - 1]
        );
        assert_eq!(lens.iter().sum::<usize>(), 200);
    }

    #[test]
    fn join_returns_both_results_and_both_sides_see_the_callers_threads() {
        for threads in [1, 2, 3, 16] {
            let ((a, a_threads), (b, b_threads)) = with_threads(threads, || {
                join(
                    || ((0..1_000u64).sum::<u64>(), super::threads()),
                    || ((0..10u64).product::<u64>(), super::threads()),
                )
            });
            assert_eq!((a, b), (499_500, 0), "{threads} threads");
            assert_eq!((a_threads, b_threads), (threads, threads));
            // A panic on either side reaches the caller.
            for side in ["a", "b"] {
                let caught = std::panic::catch_unwind(|| {
                    with_threads(threads, || {
                        join(|| assert_ne!(side, "a"), || assert_ne!(side, "b"))
                    })
                });
                assert!(caught.is_err(), "{threads} threads, panic in {side}");
            }
        }
    }

    #[test]
    fn a_sort_on_several_threads_gives_the_one_thread_order() {
        // Runs in order with a few out of place, as in a trace, and repeated keys.
        let items: Vec<(i64, u32)> = (0..5_000u32)
            .map(|i| (i64::from((i % 1_200) * 3 + (i * 7919) % 5), i % 13))
            .collect();
        let mut expected = items.clone();
        expected.sort_unstable();
        for threads in [1, 2, 3, 8, 16] {
            let mut v = items.clone();
            with_threads(threads, || sort_by_key(&mut v, |&x| x));
            assert_eq!(v, expected, "{threads} threads");
        }
        // Stable: equal keys keep their order, as with the standard library's stable sort.
        let mut stable = items.clone();
        stable.sort_by_key(|&(a, _)| std::cmp::Reverse(a));
        for threads in [2, 5, 16] {
            let mut by_first = items.clone();
            with_threads(threads, || {
                sort_by_key(&mut by_first, |&(a, _)| std::cmp::Reverse(a));
            });
            assert_eq!(by_first, stable, "{threads} threads");
        }
    }

    #[test]
    fn an_in_place_sort_of_unique_keys_on_several_threads_gives_the_one_order() {
        // Keys as a track's (start, longest first, index): runs in order, ties on start.
        let items: Vec<(i64, std::cmp::Reverse<i64>, u32)> = (0..20_000u32)
            .map(|i| {
                let start = i64::from((i % 3_000) * 3 + (i * 7919) % 5);
                (start, std::cmp::Reverse(i64::from(i % 7)), i)
            })
            .collect();
        let mut expected = items.clone();
        expected.sort();
        for threads in [0, 1, 2, 3, 8, 16, 64] {
            let mut v = items.clone();
            with_threads(threads, || sort_unique_by_key(&mut v, |&x| x));
            assert_eq!(v, expected, "{threads} threads");
        }
        let mut empty: Vec<u8> = Vec::new();
        with_threads(16, || sort_unique_by_key(&mut empty, |&x| x));
        assert!(empty.is_empty());
    }

    #[test]
    fn ranges_cover_every_index_once_and_pieces_see_their_offsets() {
        for threads in [1, 2, 16] {
            for n in [0, 1, 63, 64, 1_000, 5_000] {
                let r = with_threads(threads, || ranges(n));
                let covered: Vec<usize> = r.iter().cloned().flatten().collect();
                assert_eq!(
                    covered,
                    (0..n).collect::<Vec<_>>(),
                    "{threads} threads, {n}"
                );
                assert!(r.len() <= threads.max(1));
                let sums = with_threads(threads, || map_ranges(&r, |r| r.sum::<usize>()));
                assert_eq!(sums.iter().sum::<usize>(), (0..n).sum::<usize>());
                let squares = with_threads(threads, || map_indices(n, |i| i * i));
                assert_eq!(squares, (0..n).map(|i| i * i).collect::<Vec<_>>());
                let mut v = vec![0usize; n];
                with_threads(threads, || {
                    for_each_piece_mut(&mut v, |at, piece| {
                        for (k, x) in piece.iter_mut().enumerate() {
                            *x = at + k;
                        }
                    });
                });
                assert_eq!(v, (0..n).collect::<Vec<_>>());
            }
        }
        assert_eq!(with_threads(16, || ranges(5_000)).len(), 16);
    }

    #[test]
    fn written_zeros_are_zeros_on_any_number_of_threads() {
        for len in [0, 5_000, (1 << 20) + 4_097] {
            for threads in [1, 2, 16] {
                let v: Vec<i64> = with_threads(threads, || written_zeros(len));
                assert_eq!(v.len(), len);
                assert!(v.iter().all(|&x| x == 0));
                let slots: Vec<std::sync::atomic::AtomicU32> =
                    with_threads(threads, || written_zeros(len));
                assert_eq!(slots.len(), len);
                assert!(
                    slots
                        .iter()
                        .all(|s| s.load(std::sync::atomic::Ordering::Relaxed) == 0)
                );
            }
        }
    }

    #[test]
    fn a_few_runs_in_order_are_merged_into_the_same_order() {
        // A Kineto stream: operators in order, then runtime calls in order over the same span,
        // then step annotations from the last to the first.
        let ops = (0..30_000i64).map(|i| (i * 10, std::cmp::Reverse(5), 0u32));
        let calls = (0..20_000i64).map(|i| (i * 15 + 1, std::cmp::Reverse(2), 1));
        let steps = (0..60i64)
            .rev()
            .map(|i| (i * 5_000 + 3, std::cmp::Reverse(4_000), 2));
        let items: Vec<_> = ops.chain(calls).chain(steps).collect();
        // One rise, a fall to the calls, a fall into the steps and the steps falling.
        assert_eq!(runs(&items, &|&x| x), 5);
        assert!(runs(&items, &|&x| x) <= items.len() / RUN_SPACING + 1);
        let mut expected = items.clone();
        expected.sort();
        for threads in [1, 2, 16] {
            let mut v = items.clone();
            with_threads(threads, || sort_unique_by_key(&mut v, |&x| x));
            assert_eq!(v, expected, "{threads} threads");
        }
    }

    #[test]
    fn gather_on_several_threads_picks_the_one_thread_values() {
        let from: Vec<i64> = (0..3_000).map(|i| i * 10).collect();
        let indices: Vec<u32> = (0..2_500u32).map(|i| (i * 7919) % 3_000).collect();
        let expected: Vec<i64> = indices.iter().map(|&i| i64::from(i) * 10).collect();
        for threads in [1, 4, 16] {
            assert_eq!(with_threads(threads, || gather(&from, &indices)), expected);
        }
    }
}
