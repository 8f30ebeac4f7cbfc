//! Importers: one module per format. [`import_file`] sniffs the content (gzip magic, SQLite
//! header, JSON, nvprof framing), never trusting the extension, and hands the file to the right
//! importer.

pub mod chrome;
pub mod json;
pub mod nvprof;
pub mod pickle;
pub mod read;
pub mod rocprof;
pub mod snapshot;
pub mod sqlite;

use std::fs::File;
use std::io::{self, Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use crate::model::Profile;
use read::{AppendRead, GZIP_MAGIC, Gunzip};

/// Why a file could not be imported. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file could not be opened or read.
    #[error("{path}: cannot read file: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The file is empty.
    #[error("{path}: file is empty")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The content is not any format warpscope reads.
    #[error("{path}: not a recognised profile ({detail})")]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        detail: String,
    },
    /// The file is of a known kind that is not a profile warpscope can read (Nsight Compute
    /// output, nvprof CPU-profiling trees).
    #[error("{path}: {detail}")]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// What it is and why it is not read.
        detail: String,
    },
    /// The file is of a known format but its content is broken.
    #[error("{path}: {location}: {detail}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Where (`line 12`, `byte 4096`, `table CUPTI_ACTIVITY_KIND_KERNEL`).
        location: String,
        /// What is wrong.
        detail: String,
    },
    /// The gzip stream is broken.
    #[error("{path}: corrupt gzip data: {source}")]
    Gzip {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The user cancelled the import.
    #[error("{path}: import cancelled")]
    Cancelled {
        /// The file.
        path: PathBuf,
    },
}

impl ImportError {
    /// A failure while reading the content: corrupt gzip data for a compressed file, an I/O
    /// error otherwise.
    pub fn reading(path: &Path, compressed: bool, source: io::Error) -> Self {
        let path = path.to_path_buf();
        if compressed {
            Self::Gzip { path, source }
        } else {
            Self::Io { path, source }
        }
    }
}

/// Progress of an import, shared between the loader thread and whoever shows it.
#[derive(Debug, Default)]
pub struct Progress {
    bytes_done: AtomicU64,
    bytes_total: AtomicU64,
    cancelled: AtomicBool,
}

impl Progress {
    /// A new progress tracker.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Fraction done in `[0, 1]`, or `None` before the size is known.
    pub fn fraction(&self) -> Option<f32> {
        let total = self.bytes_total.load(Ordering::Relaxed);
        if total == 0 {
            return None;
        }
        #[allow(clippy::cast_precision_loss)]
        let f = self.bytes_done.load(Ordering::Relaxed) as f32 / total as f32;
        Some(f.clamp(0.0, 1.0))
    }

    /// Asks the import to stop at the next opportunity.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// True once [`Progress::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    pub(crate) fn set_total(&self, bytes: u64) {
        self.bytes_total.store(bytes, Ordering::Relaxed);
    }

    pub(crate) fn set_done(&self, bytes: u64) {
        self.bytes_done.store(bytes, Ordering::Relaxed);
    }
}

/// Where the time of an import went, for `--timings` and benchmarks.
#[derive(Clone, Copy, Debug, Default)]
pub struct ImportTimings {
    /// Reading (and decompressing) the file, on the reader thread, overlapped with parsing.
    pub read: Duration,
    /// Parsing and building the columns on the calling thread.
    pub parse: Duration,
    /// Sorting, nesting and linking (`ProfileBuilder::finish`).
    pub index: Duration,
    /// Wall time of the whole import.
    pub total: Duration,
}

/// The result of [`sniff`]: which family of content a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sniffed {
    /// Chrome trace JSON.
    ChromeJson,
    /// SQLite database (nvprof, Nsight Systems, rocprofv3 rocpd, RPD or rocprof v1, told apart
    /// by its tables: `sqlite::SQLITE_FORMATS`).
    Sqlite,
    /// nvprof text or CSV output.
    Nvprof,
    /// Nsight Compute output.
    NsightCompute,
    /// A Python pickle of protocol 2 to 5 (a PyTorch CUDA memory snapshot, if it is one).
    PythonPickle,
    /// `rocminfo` text (the `results.sysinfo.txt` rocprof writes beside a run).
    RocmInfo,
    /// AMD profilers' text output: rocprof v1 `results.csv`/`results.json`, `--stats` summaries,
    /// rocprofv3 CSV traces, rocmProfileData's Chrome JSON (`rocprof::sniff` tells which).
    RocmText,
}

/// An importer: every one has this signature.
type Importer = fn(Input<'_>, &Progress) -> Result<(Profile, ImportTimings), ImportError>;

/// What warpscope does with a family of content.
#[derive(Clone, Copy)]
enum Handling {
    /// Reads it with this importer.
    Import(Importer),
    /// Refuses it: what it is, and what to open instead.
    Refuse(&'static str),
}

/// One family of content: how its first bytes look and what is done with it.
struct Family {
    /// Which family.
    sniffed: Sniffed,
    /// Its name in messages about unknown content (`JSON`).
    name: &'static str,
    /// True if the first bytes of the (decompressed) content are this family's.
    looks_like: fn(&[u8]) -> bool,
    /// What is done with it.
    handling: Handling,
}

/// Every family of content warpscope recognises, in the order they are tried: the one table a
/// new format is added to (formats that share a family, as SQLite databases do, have a table of
/// their own inside it: `sqlite::SQLITE_FORMATS`).
static FAMILIES: [Family; 7] = [
    // First: two of these are JSON (rocprof v1's and RPD's Chrome traces), which the general
    // Chrome reader would take, and the CSVs have headers no other family has.
    Family {
        sniffed: Sniffed::RocmText,
        name: "AMD profiler text output",
        looks_like: |head| rocprof::sniff(head).is_some(),
        handling: Handling::Import(import_rocm_text),
    },
    Family {
        sniffed: Sniffed::Sqlite,
        name: "SQLite",
        looks_like: |head| head.starts_with(SQLITE_MAGIC),
        handling: Handling::Import(sqlite::import),
    },
    Family {
        sniffed: Sniffed::PythonPickle,
        name: "a Python pickle (protocol 2 or later)",
        // `PROTO` and a protocol that has it (2 to 5); older pickles have no header.
        looks_like: |head| matches!(head, [0x80, 2..=5, ..]),
        handling: Handling::Import(snapshot::import),
    },
    Family {
        sniffed: Sniffed::ChromeJson,
        name: "JSON",
        looks_like: |head| {
            let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
            let first = text.iter().copied().find(|b| !b.is_ascii_whitespace());
            matches!(first, Some(b'{' | b'['))
        },
        handling: Handling::Import(chrome::import),
    },
    // Before the text formats: its separator lines (`=====================`) look like nvprof's
    // framing.
    Family {
        sniffed: Sniffed::RocmInfo,
        name: "rocminfo output",
        looks_like: |head| {
            text_lines(head).any(|l| {
                l.contains("HSA System Attributes")
                    || l.contains("HSA Agents")
                    || l.contains("ROCk module")
            })
        },
        handling: Handling::Refuse(
            "this is rocminfo output (rocprof writes it beside a run as results.sysinfo.txt): \
             it describes the machine but holds no trace; open the run's results.db, \
             results.json or results.csv instead",
        ),
    },
    Family {
        sniffed: Sniffed::NsightCompute,
        name: "Nsight Compute output",
        looks_like: |head| text_lines(head).any(|l| l.starts_with("==PROF==")),
        handling: Handling::Refuse(
            "this is Nsight Compute (ncu) output, which has per-kernel metrics but no \
             timeline; export a trace with nsys or the PyTorch profiler instead",
        ),
    },
    Family {
        sniffed: Sniffed::Nvprof,
        name: "nvprof output",
        looks_like: |head| text_lines(head).any(|l| is_nvprof_line(&l)),
        handling: Handling::Import(nvprof::import),
    },
];

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// The [`Importer`] of [`Sniffed::RocmText`]: which AMD text format it is, from the head again.
fn import_rocm_text(
    input: Input<'_>,
    progress: &Progress,
) -> Result<(Profile, ImportTimings), ImportError> {
    let (head, compressed) = read_head(input)?;
    match rocprof::sniff(&head) {
        Some(kind) => rocprof::import(input, progress, kind),
        None => Err(ImportError::UnknownFormat {
            path: input.path().to_path_buf(),
            detail: describe_unknown(&head, compressed),
        }),
    }
}

/// The lines of `head` as text (invalid UTF-8 replaced), a leading byte-order mark dropped.
fn text_lines(head: &[u8]) -> impl Iterator<Item = String> + '_ {
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    text.split(|&b| b == b'\n').map(|l| {
        String::from_utf8_lossy(l)
            .trim_end_matches('\r')
            .to_string()
    })
}

/// True for a line of nvprof's framing (`==123== ...`, `======== ...`).
fn is_nvprof_line(l: &str) -> bool {
    l.starts_with("========") || {
        let rest = l.strip_prefix("==").unwrap_or("");
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with("== ")
    }
}

/// The family of content of `head`, found by trying [`FAMILIES`] in order.
fn family_of(head: &[u8]) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| (f.looks_like)(head))
}

/// Decides the family of content from the first bytes of the (decompressed) content.
pub fn sniff(head: &[u8]) -> Option<Sniffed> {
    family_of(head).map(|f| f.sniffed)
}

/// What an importer reads: a file on disk, or bytes already in memory (tests, fuzzing, a
/// caller that has the content) under a name that errors and the profile's source use.
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    /// A file, opened and read by the importer.
    File(&'a Path),
    /// Content in memory, plain or gzip-compressed, and the name to show for it.
    Bytes {
        /// Shown in errors and kept as the profile's source path.
        name: &'a Path,
        /// The content.
        data: &'a [u8],
    },
}

impl<'a> Input<'a> {
    /// The file, or the name given to the bytes.
    pub fn path(&self) -> &'a Path {
        match *self {
            Input::File(path) | Input::Bytes { name: path, .. } => path,
        }
    }

    /// Opens the content for reading and says whether it is gzip-compressed, and its size on
    /// disk (or in memory).
    pub(crate) fn open(&self) -> Result<(Box<dyn AppendRead + Send + 'a>, bool, u64), ImportError> {
        match *self {
            Input::File(path) => {
                let io_err = |source| ImportError::Io {
                    path: path.to_path_buf(),
                    source,
                };
                let mut file = File::open(path).map_err(io_err)?;
                let size = file.metadata().map_err(io_err)?.len();
                let mut magic = [0u8; 2];
                let n = read_up_to(&mut file, &mut magic).map_err(io_err)?;
                file.rewind().map_err(io_err)?;
                if n == 2 && magic == GZIP_MAGIC {
                    Ok((Box::new(Gunzip::new(file)), true, size))
                } else {
                    Ok((Box::new(file), false, size))
                }
            }
            Input::Bytes { data, .. } => {
                let size = data.len() as u64;
                if data.starts_with(&GZIP_MAGIC) {
                    Ok((Box::new(Gunzip::new(data)), true, size))
                } else {
                    Ok((Box::new(data), false, size))
                }
            }
        }
    }
}

impl Input<'_> {
    /// The content held whole in memory without reading it through: a plain (not gzip) regular
    /// file mapped into memory, or plain bytes (copied once). `None` for gzip, for what is not a
    /// regular file, and where mapping fails: those are read as a stream.
    pub(crate) fn whole_text(&self) -> Option<json::SharedText> {
        match *self {
            Input::File(path) => {
                let file = File::open(path).ok()?;
                let meta = file.metadata().ok()?;
                if !meta.is_file() || meta.len() < 2 {
                    return None;
                }
                let map = MappedFile::map(&file)?;
                (!map.map.starts_with(&GZIP_MAGIC)).then(|| Arc::new(map) as json::SharedText)
            }
            Input::Bytes { data, .. } if !data.starts_with(&GZIP_MAGIC) => {
                Some(Arc::new(data.to_vec()))
            }
            Input::Bytes { .. } => None,
        }
    }
}

/// A file mapped into memory, read only.
struct MappedFile {
    map: Arc<memmap2::Mmap>,
    /// Pages below this offset were given back.
    released: AtomicUsize,
    /// Where ranges of pages to give back are sent, to a thread of their own (started with the
    /// first): giving back walks the page tables, time the importing thread, which calls
    /// [`json::WholeText::release`], does not have to spend.
    releaser: std::sync::OnceLock<Option<std::sync::mpsc::Sender<(usize, usize)>>>,
}

/// How much of a mapped file is given back at once: each call flushes the page tables of
/// every core the import runs on, so it is made once per 8 MiB rather than once per block.
const RELEASE_BATCH: usize = 8 << 20;

impl MappedFile {
    /// Maps `file`; `None` where the system refuses.
    #[allow(unsafe_code)]
    fn map(file: &File) -> Option<Self> {
        // SAFETY: the mapping is read only and private, and the bytes are only ever read as
        // bytes (the JSON layer validates everything it reads). What the OS cannot promise is
        // that no other process changes the file meanwhile: a trace being rewritten while it is
        // imported reads as whatever it holds at that moment (as a read would), and one cut
        // short underneath us ends the process with SIGBUS, the risk every tool that maps its
        // input (ripgrep, Perfetto's trace processor) takes for the speed.
        let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
        Some(Self {
            map: Arc::new(map),
            released: AtomicUsize::new(0),
            releaser: std::sync::OnceLock::new(),
        })
    }

    /// The sender to the thread that gives pages back, started on first use; `None` where no
    /// thread could be started (pages are then given back on the calling thread).
    fn releaser(&self) -> Option<&std::sync::mpsc::Sender<(usize, usize)>> {
        self.releaser
            .get_or_init(|| {
                let (tx, rx) = std::sync::mpsc::channel::<(usize, usize)>();
                // The thread holds the mapping: it outlives this handle if it has to, and ends
                // when the sender is dropped with it.
                let map = Arc::clone(&self.map);
                std::thread::Builder::new()
                    .name("warpscope-release".to_string())
                    .spawn(move || {
                        for (from, to) in rx {
                            give_back(&map, from, to);
                        }
                    })
                    .ok()
                    .map(|_| tx)
            })
            .as_ref()
    }
}

/// Drops the process's page-table entries for `map[from..to]` (page aligned).
#[allow(unsafe_code)]
fn give_back(map: &memmap2::Mmap, from: usize, to: usize) {
    // SAFETY: `MADV_DONTNEED` on a read-only private file mapping drops the process's
    // page-table entries only: the mapping was never written, so there are no private copies
    // to lose, and a later read of these pages (a block parsed late) reads them from the file
    // again. An error (a system with bigger pages refuses the alignment) leaves the pages
    // where they are.
    let _ =
        unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, to - from) };
}

impl json::WholeText for MappedFile {
    fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Gives back the pages below `end` once a batch of them was parsed, so that what the
    /// process holds of the file is the blocks in flight, not the whole file.
    fn release(&self, end: usize) {
        const PAGE: usize = 4096;
        let to = end / PAGE * PAGE;
        let from = self.released.load(Ordering::Relaxed);
        if to < from.saturating_add(RELEASE_BATCH)
            || self
                .released
                .compare_exchange(from, to, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let sent = self
            .releaser()
            .is_some_and(|tx| tx.send((from, to)).is_ok());
        if !sent {
            give_back(&self.map, from, to);
        }
    }
}

/// Reads the first bytes of the decompressed content for sniffing.
fn read_head(input: Input<'_>) -> Result<(Vec<u8>, bool), ImportError> {
    let (mut reader, compressed, _) = input.open()?;
    let mut head = vec![0u8; 64 * 1024];
    let n = read_up_to(&mut reader, &mut head)
        .map_err(|source| ImportError::reading(input.path(), compressed, source))?;
    head.truncate(n);
    Ok((head, compressed))
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // A cut-off gzip stream: sniff what could be decompressed.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof && n > 0 => break,
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Imports any supported file, detecting its format from the content.
pub fn import_file(path: &Path, progress: &Progress) -> Result<Profile, ImportError> {
    import_timed(Input::File(path), progress).map(|(p, _)| p)
}

/// Like [`import_file`], and also says where the time went.
pub fn import_file_timed(
    path: &Path,
    progress: &Progress,
) -> Result<(Profile, ImportTimings), ImportError> {
    import_timed(Input::File(path), progress)
}

/// Imports content already in memory (plain or gzip-compressed, any supported format), naming
/// it `name` in errors and in the profile's source. What tests and the fuzzers call.
pub fn import_bytes(name: &Path, data: &[u8], progress: &Progress) -> Result<Profile, ImportError> {
    import_timed(Input::Bytes { name, data }, progress).map(|(p, _)| p)
}

/// Imports any [`Input`], detecting its format from the content, and says where the time went.
pub fn import_timed(
    input: Input<'_>,
    progress: &Progress,
) -> Result<(Profile, ImportTimings), ImportError> {
    let path = input.path();
    if let Input::File(dir) = input
        && dir.is_dir()
        && rocprof::is_run_dir(dir)
    {
        return rocprof::import_dir(dir, progress);
    }
    let (head, compressed) = read_head(input)?;
    if head.is_empty() {
        return Err(ImportError::Empty {
            path: path.to_path_buf(),
        });
    }
    match family_of(&head).map(|f| f.handling) {
        Some(Handling::Import(import)) => import(input, progress),
        Some(Handling::Refuse(detail)) => Err(ImportError::Unsupported {
            path: path.to_path_buf(),
            detail: detail.to_string(),
        }),
        None => Err(ImportError::UnknownFormat {
            path: path.to_path_buf(),
            detail: describe_unknown(&head, compressed),
        }),
    }
}

/// `s` cut to at most `n` characters, for messages that quote the file.
pub(crate) fn shown(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => s.get(..i).unwrap_or_default().to_string(),
        None => s.to_string(),
    }
}

fn describe_unknown(head: &[u8], compressed: bool) -> String {
    let what = if compressed {
        "gzip content"
    } else {
        "content"
    };
    // The families warpscope reads, in the table's words.
    let read: Vec<&str> = FAMILIES
        .iter()
        .filter(|f| matches!(f.handling, Handling::Import(_)))
        .map(|f| f.name)
        .collect();
    let known = match read.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => read.join(""),
    };
    let printable = head
        .iter()
        .take(512)
        .filter(|b| b.is_ascii_graphic() || b.is_ascii_whitespace())
        .count();
    if printable * 10 < head.len().min(512) * 9 {
        return format!("{what} is binary data, not {known}");
    }
    let first_line: String = String::from_utf8_lossy(head)
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(60)
        .collect();
    format!("{what} starts with {first_line:?}, not {known}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing_looks_at_content() {
        assert_eq!(
            sniff(b"\n  {\"traceEvents\": []}"),
            Some(Sniffed::ChromeJson)
        );
        assert_eq!(sniff(b"[{\"ph\":\"X\"}"), Some(Sniffed::ChromeJson));
        assert_eq!(sniff(b"SQLite format 3\0rest"), Some(Sniffed::Sqlite));
        assert_eq!(
            sniff(b"==308065== NVPROF is profiling process 308065"),
            Some(Sniffed::Nvprof)
        );
        assert_eq!(
            sniff(b"\n======== CPU profiling result"),
            Some(Sniffed::Nvprof)
        );
        assert_eq!(
            sniff(b"==PROF== Connected to process"),
            Some(Sniffed::NsightCompute)
        );
        assert_eq!(sniff(b"\x80\x04\x95rest"), Some(Sniffed::PythonPickle));
        assert_eq!(sniff(b"\x80\x02}q\x00"), Some(Sniffed::PythonPickle));
        assert_eq!(sniff(b"\x80\x01}"), None);
        assert_eq!(sniff(b"\x80\x06}"), None);
        assert_eq!(sniff(b"hello world"), None);
        assert_eq!(sniff(b"==abc== x"), None);
        assert_eq!(
            sniff(b"\x1b[37mROCk module version 6.7.6 is loaded\n=====================    \nHSA System Attributes"),
            Some(Sniffed::RocmInfo)
        );
    }

    #[test]
    fn unknown_content_lists_what_is_read() {
        assert_eq!(
            describe_unknown(b"hello", false),
            "content starts with \"hello\", not AMD profiler text output, SQLite, a Python \
             pickle (protocol 2 or later), JSON or nvprof output"
        );
    }
}
