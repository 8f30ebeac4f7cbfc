//! Chrome Trace Event Format import: PyTorch profiler (Kineto, 2021 to now), TensorFlow 1.x
//! timelines and any other Trace Event Format file.
//!
//! The file is read on a second thread (decompressing gzip there) and cut into blocks of whole
//! events; worker threads import blocks into states of their own and this thread merges them
//! in file order, parsing itself what the workers left. See `docs/formats.md` sections
//! 6–8 and 10 for the variants handled here.
//!
//! - `mod.rs`: the driver ([`import`]) and the importer's state;
//! - `parallel.rs`: the workers, and merging what they built;
//! - `stream.rs`: blocks of the event array, what follows it, how the input ended;
//! - `tokenize.rs`: elements into raw events;
//! - `classify.rs`: categories, lanes and the GPU arguments kept;
//! - `events.rs`: one event into the builder;
//! - `memory.rs`: Kineto's `[memory]` and `[OutOfMemory]` instants into memory records;
//! - `amd.rs`: Kineto traces recorded on ROCm (AMD devices, their numbering);
//! - `metadata.rs`: top-level keys and the `"warpscope"` object warpscope's exporter writes;
//! - `finish.rs`: flows, TensorFlow layout, track names, devices and warnings at the end.

mod amd;
mod classify;
mod events;
mod finish;
mod flows;
mod memory;
mod metadata;
mod op_args;
mod parallel;
mod stream;
mod tokenize;

use std::io::Read;
use std::path::Path;
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use rustc_hash::FxHashMap;

use super::json::{self, Chunk, Place};
use super::read::AppendRead;
use super::{ImportError, ImportTimings, Input, Progress};
use crate::builder::{ProfileBuilder, TrackId};
use crate::model::{FlowKind, Format, Profile, TraceId, TrackKey};
use crate::strings::StrId;

pub(crate) use amd::gfx_from_kernel_name;
use classify::Class;
#[cfg(test)]
pub(crate) use classify::category_kind;
pub(crate) use classify::{LANE_ARG, gpu_lane, lane_text};
use metadata::Carried;
use parallel::Cooked;

/// Imports a Chrome trace JSON file (plain or gzip).
pub fn import(
    input: Input<'_>,
    progress: &Progress,
) -> Result<(Profile, ImportTimings), ImportError> {
    import_with_block_bytes(input, progress, json::BLOCK_BYTES)
}

/// [`import`] with the event array cut into blocks of about `block_bytes` (at least 1) instead
/// of [`json::BLOCK_BYTES`]: for tests and fuzzers, which put block boundaries inside events
/// with tiny blocks. The result does not depend on the block size.
#[doc(hidden)]
pub fn import_with_block_bytes(
    input: Input<'_>,
    progress: &Progress,
    block_bytes: usize,
) -> Result<(Profile, ImportTimings), ImportError> {
    let threads = crate::parallel::threads();
    import_with(input, progress, block_bytes, |gzip| {
        workers_for(threads, gzip)
    })
}

/// From this many threads up, the importing thread gets a core of its own: one worker fewer.
/// It merges every block in file order, and its work does not shrink with more cores (about
/// 0.2 s for the 1.4 GB trace) while the workers' does: on 16 cores it is busy for two thirds of
/// the parse phase, and waits for a core behind the workers if they have them all. On the
/// 16-core device machine (`taskset` to N cores, 9 interleaved runs of the 1.4 GB trace), N - 1
/// workers against N took 0.453 against 0.487 s on 16 cores and 0.529 against 0.547 s on 12,
/// but 0.862 against 0.777 s on 8 and 1.38 against 1.25 s on 4.
const OWN_CORE_FROM_THREADS: usize = 12;

/// How many worker threads to parse blocks on with `threads` threads, for a plain file or a
/// gzip-compressed one (`gzip`).
///
/// A gzip-compressed file is decompressed on the reader thread, which parses blocks itself only
/// when the workers are behind: it keeps a core of its own, and there is one worker fewer (at
/// least one). On 2 cores with one worker, the 139 MB trace gzipped took 0.140 s against 0.148 s
/// with two (21 interleaved runs), the 1.4 GB trace gzipped 1.34 s against 1.42 s (5 runs):
/// three busy threads on two cores were slower than two.
fn workers_for(threads: usize, gzip: bool) -> usize {
    let workers = if threads >= OWN_CORE_FROM_THREADS {
        threads - 1
    } else {
        threads
    };
    if gzip && workers > 1 {
        workers - 1
    } else {
        workers
    }
}

/// [`import_with_block_bytes`] with `workers` worker threads (0: every event is parsed on the
/// importing thread). The result does not depend on the number of workers.
#[doc(hidden)]
pub fn import_with_workers(
    input: Input<'_>,
    progress: &Progress,
    block_bytes: usize,
    workers: usize,
) -> Result<(Profile, ImportTimings), ImportError> {
    import_with(input, progress, block_bytes, |_| workers)
}

/// The import, with as many workers as `workers_of` gives for the content once it is opened
/// (true: gzip-compressed).
fn import_with(
    input: Input<'_>,
    progress: &Progress,
    block_bytes: usize,
    workers_of: impl FnOnce(bool) -> usize,
) -> Result<(Profile, ImportTimings), ImportError> {
    let started = Instant::now();
    let path = input.path();
    // A plain file is mapped and its blocks parsed where they lie; gzip is decompressed as a
    // stream on the reader thread.
    let whole = input.whole_text();
    let (source, compressed, file_bytes) = match whole {
        Some(text) => {
            let size = text.bytes().len() as u64;
            (Source::Whole(text), false, size)
        }
        None => {
            let (reader, compressed, size) = input.open()?;
            let counting = CountingReader {
                inner: reader,
                progress,
                read: 0,
                compressed,
            };
            (Source::Stream(counting), compressed, size)
        }
    };
    let workers = workers_of(compressed);
    progress.set_total(file_bytes);
    let mut state = ChromeState::new(path);
    state.b.source.compressed = compressed;
    state.b.source.file_bytes = file_bytes;

    let (tx, rx) = sync_channel::<Chunk<Cooked>>(workers.max(2));
    let mut parse_time = std::time::Duration::ZERO;
    let mut read_time = std::time::Duration::ZERO;
    let window = parallel::Window::new(workers);
    let jobs = parallel::Jobs::new(rx);
    let outcome = std::thread::scope(|scope| {
        let reader_thread = scope.spawn(move || {
            let t = Instant::now();
            let options = json::SplitOptions {
                block_bytes,
                keep_key: metadata::is_read_top_level_key,
            };
            // When the queue is full the reader imports a block itself (with no workers, it
            // leaves every block to the importing thread).
            let cook = |bytes: &[u8]| {
                if workers == 0 {
                    Cooked::nothing()
                } else {
                    parallel::cook(bytes, path)
                }
            };
            match source {
                Source::Whole(text) => json::split_shared(text, &tx, cook, options),
                Source::Stream(reader) => json::split_stream_with(reader, &tx, cook, options),
            }
            t.elapsed()
        });
        let mut result = Ok(());
        let mut blocks = parallel::blocks_in_order(scope, workers, &jobs, &window, path);
        for chunk in blocks.by_ref() {
            if progress.is_cancelled() {
                result = Err(ImportError::Cancelled {
                    path: path.to_path_buf(),
                });
                break;
            }
            if let Chunk::Events {
                bytes: json::Block::Shared { end, .. },
                ..
            } = &chunk
            {
                progress.set_done(*end as u64);
            }
            let t = Instant::now();
            result = state.chunk(chunk);
            parse_time += t.elapsed();
            if result.is_err() {
                break;
            }
        }
        // Stops the workers and the reader if we stopped early.
        blocks.stop();
        match reader_thread.join() {
            Ok(d) => read_time = d,
            // A bug on the reader thread must not pass for the end of the file.
            Err(panic) => std::panic::resume_unwind(panic),
        }
        result
    });
    outcome?;
    let t = Instant::now();
    let profile = state.finish()?;
    let index = t.elapsed();
    progress.set_done(file_bytes);
    Ok((
        profile,
        ImportTimings {
            read: read_time,
            parse: parse_time,
            index,
            total: started.elapsed(),
        },
    ))
}

/// Where the text comes from.
enum Source<'p, 'a> {
    /// Held whole (a mapped file): progress is counted as blocks are parsed.
    Whole(json::SharedText),
    /// Read as a stream, counting bytes as they are read.
    Stream(CountingReader<'p, 'a>),
}

/// Counts bytes as they are read, for the progress bar.
struct CountingReader<'p, 'a> {
    inner: Box<dyn AppendRead + Send + 'a>,
    progress: &'p Progress,
    read: u64,
    compressed: bool,
}

impl CountingReader<'_, '_> {
    /// Counts `n` more bytes read.
    fn count(&mut self, n: usize) {
        self.read += n as u64;
        // For gzip the decompressed size is unknown; estimate with a typical 12x ratio.
        let done = if self.compressed {
            self.read / 12
        } else {
            self.read
        };
        self.progress.set_done(done);
    }
}

impl Read for CountingReader<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.progress.is_cancelled() {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        self.count(n);
        Ok(n)
    }
}

impl AppendRead for CountingReader<'_, '_> {
    fn append(&mut self, buf: &mut Vec<u8>, max: usize) -> std::io::Result<usize> {
        if self.progress.is_cancelled() {
            return Ok(0);
        }
        let n = self.inner.append(buf, max)?;
        self.count(n);
        Ok(n)
    }
}

/// An open `B` event.
struct OpenBegin {
    ts_ns: i64,
    name: StrId,
    class: Class,
    /// The begin event's args (the end's are used when it has none).
    args: Option<Vec<u8>>,
}

/// One `s`/`t`/`f` event, in 32 bytes: a trace has millions, and the importing thread copies
/// every worker's points in file order.
#[derive(Clone, Copy)]
struct FlowPoint {
    /// The flow's category and id: the points of one flow share it.
    key: (StrId, u64),
    ts_ns: i64,
    /// Its (pid, tid): an index into [`FlowThreads`].
    thread: u32,
    ph: u8,
    enclosing: bool,
    kind: FlowKind,
}

const _: () = assert!(std::mem::size_of::<FlowPoint>() == 32);

/// The (pid, tid) pairs of flow points, numbered in the order they first occur.
#[derive(Default)]
struct FlowThreads {
    list: Vec<(TraceId, TraceId)>,
    ids: FxHashMap<(TraceId, TraceId), u32>,
    /// The pair asked for last, and its number (a thread's flow points come in runs).
    last: Option<((TraceId, TraceId), u32)>,
}

impl FlowThreads {
    /// The number of `(pid, tid)`, given one if new.
    fn id(&mut self, pid: TraceId, tid: TraceId) -> u32 {
        let key = (pid, tid);
        if let Some((last, id)) = self.last
            && last == key
        {
            return id;
        }
        let next = u32::try_from(self.list.len()).unwrap_or(u32::MAX);
        let id = *self.ids.entry(key).or_insert(next);
        if id == next {
            self.list.push(key);
        }
        self.last = Some((key, id));
        id
    }
}

/// An arrow as read, bound to tracks in `finish`: its ends' threads (numbers in the state's
/// [`FlowThreads`]: every point's number was given by that table, or renumbered into it by
/// `absorb`) and times.
#[derive(Clone, Copy)]
struct RawFlow {
    from: (u32, i64),
    to: (u32, i64),
    to_enclosing: bool,
    kind: FlowKind,
}

/// Where the consumer is in the event array.
#[derive(Default)]
struct StreamState {
    /// An incomplete element at the end of the previous block (blank when the cut was right).
    carry: Vec<u8>,
    /// Where `carry` starts.
    carry_line: Place,
    /// True while `carry` holds an element that runs on past what was parsed: it is parsed again
    /// only once `carry_scan` sees its end, or `carry` has doubled since (so a huge element
    /// costs a few passes in all, not one per block), or the input ends.
    carry_pending: bool,
    /// Finds the end of the element in `carry`, and how far it has looked.
    carry_scan: json::ValueScanner,
    /// How far `carry_scan` has looked into `carry`.
    carry_scanned: usize,
    /// Length of `carry` when it was last parsed.
    carry_parsed_len: usize,
    /// True once the event array closed: what follows is collected in `tail`.
    in_tail: bool,
    /// True for the bare-array form, where nothing but blanks may follow the array.
    array_form: bool,
    /// True once the trace's closing `}`, or text that cannot be part of a trace, followed the
    /// array: the rest of the input is ignored.
    tail_done: bool,
    /// What follows the event array and was not read yet (a member that runs on).
    tail: Vec<u8>,
    /// Length of `tail` when it was last read.
    tail_parsed_len: usize,
    /// Elements of the event array skipped for broken JSON (counted here and warned about at
    /// the end, so that warnings come in the same order however the input was cut).
    bad_syntax: u64,
    /// Line and description of the first of them.
    first_bad_syntax: Option<(Place, &'static str)>,
    /// Elements of the event array that are not objects.
    non_objects: u64,
    /// Events skipped for being bigger than `tokenize::MAX_EVENT_BYTES`.
    oversized: u64,
    /// True while inside such an event that runs on past a block: `carry_scan` looks for its
    /// end and nothing is kept.
    skipping: bool,
    /// Line and description of the first broken or non-object element.
    first_broken: Option<(Place, &'static str)>,
    /// The lines of text held whole, for the places above.
    lines: Option<json::Lines>,
}

/// The distinct names one thread was given, in file order.
#[derive(Default)]
struct ThreadNames {
    list: Vec<String>,
    seen: rustc_hash::FxHashSet<String>,
}

impl ThreadNames {
    /// Names shown in a track name; more are counted.
    const SHOWN: usize = 8;

    /// The track name: the names joined with ` / `.
    fn joined(&self) -> String {
        let shown = &self.list[..self.list.len().min(Self::SHOWN)];
        let mut name = shown.join(" / ");
        if self.list.len() > shown.len() {
            name.push_str(&format!(" (+{} more names)", self.list.len() - shown.len()));
        }
        name
    }
}

struct ChromeState {
    b: ProfileBuilder,
    /// Scratch space for the key of an operator's recorded inputs (`op_args.rs`).
    op_key: Vec<u8>,
    stream: StreamState,
    base_time_ns: Option<i64>,
    is_kineto: bool,
    /// (pid, tid) → the track its slices went to (for binding flows).
    thread_tracks: FxHashMap<(TraceId, TraceId), TrackId>,
    last_track: Option<(TrackKey, TrackId)>,
    open_begins: FxHashMap<(TraceId, TraceId), Vec<OpenBegin>>,
    open_async: FxHashMap<(TraceId, StrId, u64), Vec<(i64, StrId)>>,
    /// Flow points (`s`, `t`, `f`) in file order, grouped by (category, id) and matched at the
    /// end (one flat list: a map of small vectors cost an allocation per flow).
    flow_points: Vec<FlowPoint>,
    /// The (pid, tid) pairs of `flow_points`.
    flow_threads: FlowThreads,
    /// v2 flow ends (`bind_id`): (id, is the start, the event's track and index).
    bind_points: Vec<(u64, bool, TrackId, u32, i64)>,
    /// The arrows of the flow points, a list per thread that chained them ([`flows`]).
    raw_flows: Vec<Vec<RawFlow>>,
    counters: FxHashMap<(TraceId, String), usize>,
    thread_names: FxHashMap<(TraceId, TraceId), ThreadNames>,
    /// Where each pid is in the builder's `process_names`.
    process_index: FxHashMap<TraceId, usize>,
    thread_sort: FxHashMap<(TraceId, TraceId), i64>,
    process_labels: FxHashMap<TraceId, String>,
    unknown_categories: FxHashMap<String, u64>,
    ignored_phases: FxHashMap<u8, u64>,
    unsorted_cat: StrId,
    /// The top-level `"warpscope"` object of a trace warpscope wrote.
    carried: Option<Carried>,
    events_read: u64,
    lenient_tokens: u64,
    repaired_strings: u64,
    control_strings: u64,
}

impl ChromeState {
    fn new(path: &Path) -> Self {
        let mut b = ProfileBuilder::new(path.to_path_buf(), Format::ChromeJson);
        b.source.tool = "Chrome trace".to_string();
        let unsorted_cat = b.intern("");
        Self {
            b,
            stream: StreamState::default(),
            base_time_ns: None,
            is_kineto: false,
            thread_tracks: FxHashMap::default(),
            last_track: None,
            open_begins: FxHashMap::default(),
            open_async: FxHashMap::default(),
            flow_points: Vec::new(),
            flow_threads: FlowThreads::default(),
            bind_points: Vec::new(),
            raw_flows: Vec::new(),
            counters: FxHashMap::default(),
            thread_names: FxHashMap::default(),
            process_index: FxHashMap::default(),
            thread_sort: FxHashMap::default(),
            process_labels: FxHashMap::default(),
            unknown_categories: FxHashMap::default(),
            ignored_phases: FxHashMap::default(),
            unsorted_cat,
            carried: None,
            events_read: 0,
            op_key: Vec::new(),
            lenient_tokens: 0,
            repaired_strings: 0,
            control_strings: 0,
        }
    }

    fn path(&self) -> &Path {
        &self.b.source.path
    }

    /// The line of `place`, for a message.
    fn line(&mut self, place: Place) -> u64 {
        match (place, self.stream.lines.as_mut()) {
            (Place::Line(line), _) => line,
            (Place::Byte(_), Some(lines)) => lines.line(place),
            (Place::Byte(_), None) => 0,
        }
    }

    fn corrupt(&self, line: u64, detail: impl Into<String>) -> ImportError {
        ImportError::Corrupt {
            path: self.path().to_path_buf(),
            location: format!("line {line}"),
            detail: detail.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::workers_for;

    #[test]
    fn the_importing_thread_gets_a_core_of_its_own_from_twelve_threads_up() {
        let workers: Vec<usize> = [0, 1, 2, 8, 11, 12, 16, 64]
            .into_iter()
            .map(|threads| workers_for(threads, false))
            .collect();
        assert_eq!(workers, [0, 1, 2, 8, 11, 11, 15, 63]);
    }

    #[test]
    fn gzip_leaves_a_core_to_the_thread_decompressing_it() {
        let workers: Vec<usize> = [1, 2, 3, 8, 11, 12, 16]
            .into_iter()
            .map(|threads| workers_for(threads, true))
            .collect();
        assert_eq!(workers, [1, 1, 2, 7, 10, 10, 14]);
    }
}
