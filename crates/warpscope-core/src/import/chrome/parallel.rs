//! Blocks of events imported on worker threads and merged in file order.
//!
//! A worker imports the events of one block into a builder of its own (a whole `ChromeState`)
//! as far as it can do so without the state of the blocks before it: complete events, flows,
//! instants and events that are skipped. It stops at the first event that needs that state
//! (metadata, begin/end pairs, counters, async events) or that is not valid JSON; the importing
//! thread merges what the worker built ([`ChromeState::absorb`]) and parses the rest of the
//! block itself. Merging in file order gives the same profile as importing every event on one
//! thread: new strings and tracks are numbered in the order they first occur, events keep
//! their order on each track, and the counts add up.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Condvar, Mutex, PoisonError};

use super::ChromeState;
use super::tokenize::{Stop, tokenize};
use crate::import::json::Chunk;

/// A block imported on a worker: the events before `stop_at`, in a state of their own.
pub(super) struct Cooked {
    /// What the worker built; `None` when it built nothing.
    pub(super) state: Option<Box<ChromeState>>,
    /// Offset in the block up to which events were imported.
    pub(super) stop_at: usize,
}

impl Cooked {
    /// Nothing imported: the importing thread parses the whole block.
    pub(super) fn nothing() -> Self {
        Self {
            state: None,
            stop_at: 0,
        }
    }
}

/// True for phases whose events can be imported without the events before them.
fn is_independent(ph: u8) -> bool {
    !matches!(ph, b'M' | b'B' | b'E' | b'C' | b'b' | b'e' | b'n')
}

/// Imports the events of `bytes` (a block of the event array) into a state of its own, up to
/// the first event that depends on earlier ones or is not valid JSON.
pub(super) fn cook(bytes: &[u8], path: &Path) -> Cooked {
    let mut state = Box::new(ChromeState::new(path));
    // The tokenizer's counts up to the last event imported (the event it stops at is parsed
    // again by the importing thread, which counts it then).
    let mut counts = (0, 0, 0);
    let stop = tokenize(bytes, true, |ev, p| {
        let Ok(ev) = ev else { return false };
        if ev.keys > 0 && !is_independent(ev.ph) {
            return false;
        }
        state.events_read += 1;
        state.event(ev);
        counts = (p.lenient_tokens, p.repaired_strings, p.control_strings);
        true
    });
    state.lenient_tokens += counts.0;
    state.repaired_strings += counts.1;
    state.control_strings += counts.2;
    let stop_at = match stop {
        Stop::End => bytes.len(),
        Stop::Incomplete(at) | Stop::Error(at) | Stop::ArrayEnd(at) => at,
    };
    Cooked {
        state: (stop_at > 0).then_some(state),
        stop_at,
    }
}

impl ChromeState {
    /// Merges what a worker imported from the block that follows everything merged or parsed
    /// so far.
    pub(super) fn absorb(&mut self, other: ChromeState) {
        let remap = self.b.append(other.b);
        for ((pid, tid), track) in other.thread_tracks {
            self.thread_tracks
                .entry((remap.trace_id(pid), remap.trace_id(tid)))
                .or_insert(remap.track(track));
        }
        let threads: Vec<u32> = other
            .flow_threads
            .list
            .iter()
            .map(|&(pid, tid)| {
                self.flow_threads
                    .id(remap.trace_id(pid), remap.trace_id(tid))
            })
            .collect();
        self.flow_points
            .extend(other.flow_points.into_iter().map(|mut p| {
                p.key.0 = remap.string(p.key.0);
                // The worker numbered the point in its own table, which `threads` renumbers.
                p.thread = threads[p.thread as usize];
                p
            }));
        for (id, is_out, track, index, ts_ns) in other.bind_points {
            let (track, index) = remap.event((track, index));
            self.bind_points.push((id, is_out, track, index, ts_ns));
        }
        for (cat, n) in other.unknown_categories {
            *self.unknown_categories.entry(cat).or_insert(0) += n;
        }
        for (ph, n) in other.ignored_phases {
            *self.ignored_phases.entry(ph).or_insert(0) += n;
        }
        self.events_read += other.events_read;
        self.lenient_tokens += other.lenient_tokens;
        self.repaired_strings += other.repaired_strings;
        self.control_strings += other.control_strings;
    }
}

/// How far workers may run ahead of the importing thread, in blocks: bounds the memory held
/// by blocks waiting to be merged.
fn window(workers: usize) -> u64 {
    (workers as u64).saturating_mul(2).max(4)
}

/// Lets workers run at most [`window`] blocks ahead of the importing thread.
pub(super) struct Window {
    /// The next block the importing thread needs, and whether it stopped taking blocks.
    state: Mutex<(u64, bool)>,
    moved: Condvar,
    size: u64,
}

impl Window {
    pub(super) fn new(workers: usize) -> Self {
        Self {
            state: Mutex::new((0, false)),
            moved: Condvar::new(),
            size: window(workers),
        }
    }

    /// Waits until block `seq` may be worked on; false once the importing thread stopped.
    fn wait_for(&self, seq: u64) -> bool {
        let Ok(mut guard) = self.state.lock() else {
            return false;
        };
        loop {
            let (next, closed) = *guard;
            if closed {
                return false;
            }
            if seq < next.saturating_add(self.size) {
                return true;
            }
            guard = match self.moved.wait(guard) {
                Ok(g) => g,
                Err(_) => return false,
            };
        }
    }

    fn advance(&self, next: u64) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).0 = next;
        self.moved.notify_all();
    }

    /// The importing thread stopped: wake every worker so that it exits.
    pub(super) fn close(&self) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).1 = true;
        self.moved.notify_all();
    }
}

/// The blocks in stream order, numbered as they are taken.
pub(super) struct Jobs {
    rx: Mutex<Option<(Receiver<Chunk<Cooked>>, u64)>>,
}

impl Jobs {
    pub(super) fn new(rx: Receiver<Chunk<Cooked>>) -> Self {
        Self {
            rx: Mutex::new(Some((rx, 0))),
        }
    }

    /// The next block and its number; `None` at the end of the input.
    fn take(&self) -> Option<(u64, Chunk<Cooked>)> {
        let mut guard = self.rx.lock().ok()?;
        let (rx, next) = guard.as_mut()?;
        let chunk = rx.recv().ok()?;
        let seq = *next;
        *next += 1;
        Some((seq, chunk))
    }

    /// Drops the receiving end, so that the reader thread stops.
    fn hang_up(&self) {
        self.rx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

/// The blocks of the input in stream order, for the importing thread: straight from the reader
/// when there are no workers, else from `workers` worker threads started in `scope`, put back
/// in order. [`InOrder::stop`] ends the workers and the reader when the importing thread stops
/// early.
pub(super) fn blocks_in_order<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    workers: usize,
    jobs: &'env Jobs,
    window: &'env Window,
    path: &'env Path,
) -> InOrder<'env> {
    if workers == 0 {
        return InOrder::Direct(jobs);
    }
    let (done_tx, done) = std::sync::mpsc::sync_channel(workers.saturating_mul(2));
    for _ in 0..workers {
        let done_tx = done_tx.clone();
        scope.spawn(move || work(jobs, window, &done_tx, path));
    }
    InOrder::Workers {
        done,
        waiting: BTreeMap::new(),
        next: 0,
        jobs,
        window,
    }
}

/// See [`blocks_in_order`].
pub(super) enum InOrder<'a> {
    Direct(&'a Jobs),
    Workers {
        done: Receiver<(u64, Chunk<Cooked>)>,
        /// Blocks that arrived before the ones they follow.
        waiting: BTreeMap<u64, Chunk<Cooked>>,
        next: u64,
        jobs: &'a Jobs,
        window: &'a Window,
    },
}

impl Iterator for InOrder<'_> {
    type Item = Chunk<Cooked>;

    fn next(&mut self) -> Option<Chunk<Cooked>> {
        match self {
            Self::Direct(jobs) => jobs.take().map(|(_, chunk)| chunk),
            Self::Workers {
                done,
                waiting,
                next,
                window,
                ..
            } => loop {
                if let Some(chunk) = waiting.remove(next) {
                    *next += 1;
                    window.advance(*next);
                    return Some(chunk);
                }
                let (seq, chunk) = done.recv().ok()?;
                waiting.insert(seq, chunk);
            },
        }
    }
}

impl InOrder<'_> {
    /// The importing thread takes no more blocks: the workers and the reader stop.
    pub(super) fn stop(self) {
        match self {
            Self::Direct(jobs) => jobs.hang_up(),
            Self::Workers { jobs, window, .. } => {
                window.close();
                jobs.hang_up();
            }
        }
    }
}

/// A worker: takes blocks, imports them and hands them on, numbered, until the input ends or
/// the importing thread stops.
fn work(jobs: &Jobs, window: &Window, done: &SyncSender<(u64, Chunk<Cooked>)>, path: &Path) {
    // A worker that panics (a bug) must not leave the others and the importing thread waiting
    // for its block: they stop, and the panic reaches the caller when the threads are joined.
    struct StopOthersOnPanic<'a>(&'a Window, &'a Jobs);
    impl Drop for StopOthersOnPanic<'_> {
        fn drop(&mut self) {
            if std::thread::panicking() {
                self.0.close();
                self.1.hang_up();
            }
        }
    }
    let _guard = StopOthersOnPanic(window, jobs);
    while let Some((seq, chunk)) = jobs.take() {
        if !window.wait_for(seq) {
            break;
        }
        let chunk = match chunk {
            Chunk::Events {
                bytes,
                first_line,
                pre: None,
            } => {
                let pre = Some(cook(&bytes, path));
                Chunk::Events {
                    bytes,
                    first_line,
                    pre,
                }
            }
            other => other,
        };
        if done.send((seq, chunk)).is_err() {
            break;
        }
    }
    jobs.hang_up();
}
