//! PyTorch CUDA caching-allocator snapshots (`torch.cuda.memory._dump_snapshot`, a pickle,
//! plain or gzip-compressed): the segments and blocks at the end, the trace of allocator
//! actions per device with the totals replayed from it, the stacks the blocks and actions point
//! to, the allocator settings, and the annotations (`ProfilerStep#N`) as slices on a track.
//!
//! The pickle is read by [`super::pickle`]; this module walks the value tree. The rule for the
//! replayed totals is written in `docs/memory.md` ("Allocator snapshots").

mod walk;

use std::path::Path;
use std::time::Instant;

use super::pickle::{self, PickleError, PickleErrorKind, Value};
use super::read::GZIP_MAGIC;
use super::{ImportError, ImportTimings, Input, Progress};
use crate::builder::ProfileBuilder;
use crate::model::{Format, MemorySource, Profile};

/// The tool named as the profile's source.
pub const TOOL: &str = "PyTorch CUDA caching allocator";

/// Imports a CUDA caching-allocator snapshot pickle (plain or gzip-compressed).
///
/// # Errors
/// [`ImportError::Corrupt`] with the byte offset for a cut or malformed pickle,
/// [`ImportError::Unsupported`] for a pickle that names Python code or a snapshot with no CUDA
/// memory at all, [`ImportError::UnknownFormat`] for a pickle that is not a snapshot, and the
/// read errors ([`ImportError::Io`], [`ImportError::Gzip`], [`ImportError::Cancelled`]).
pub fn import(
    input: Input<'_>,
    progress: &Progress,
) -> Result<(Profile, ImportTimings), ImportError> {
    let started = Instant::now();
    let path = input.path();
    let (content, compressed, file_bytes) = read_content(input, progress)?;
    progress.set_total(file_bytes);
    let read = started.elapsed();
    let cancelled = || ImportError::Cancelled {
        path: path.to_path_buf(),
    };
    if progress.is_cancelled() {
        return Err(cancelled());
    }

    let content_bytes = content.bytes().len() as u64;
    let pk = pickle::parse(content.bytes()).map_err(|e| pickle_error(path, &e))?;
    drop(content);
    if progress.is_cancelled() {
        return Err(cancelled());
    }
    let mut b = ProfileBuilder::new(path.to_path_buf(), Format::TorchMemorySnapshot);
    b.source.tool = TOOL.to_string();
    b.source.compressed = compressed;
    b.source.file_bytes = file_bytes;
    b.source.content_bytes = content_bytes;
    b.source
        .details
        .push(("pickle protocol".to_string(), pk.protocol().to_string()));
    b.memory.source = MemorySource::AllocatorSnapshot;
    walk::convert(&pk, &mut b, path)?;
    drop(pk);
    let parse = started.elapsed().saturating_sub(read);
    if progress.is_cancelled() {
        return Err(cancelled());
    }

    let t = Instant::now();
    let profile = b.finish();
    let index = t.elapsed();
    progress.set_done(file_bytes);
    Ok((
        profile,
        ImportTimings {
            read,
            parse,
            index,
            total: started.elapsed(),
        },
    ))
}

/// The whole decompressed content.
enum Content<'a> {
    /// Plain bytes given in memory.
    Borrowed(&'a [u8]),
    /// A plain file mapped into memory.
    Mapped(super::json::SharedText),
    /// Read (and decompressed) into memory.
    Owned(Vec<u8>),
}

impl Content<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Content::Borrowed(b) => b,
            Content::Mapped(m) => m.bytes(),
            Content::Owned(v) => v,
        }
    }
}

/// How much is read at once from a stream, between checks for cancellation.
const READ_STEP: usize = 16 << 20;

/// Reads the content whole: (content, compressed, size of the file).
fn read_content<'a>(
    input: Input<'a>,
    progress: &Progress,
) -> Result<(Content<'a>, bool, u64), ImportError> {
    if let Input::Bytes { data, .. } = input
        && !data.starts_with(&GZIP_MAGIC)
    {
        return Ok((Content::Borrowed(data), false, data.len() as u64));
    }
    if let Some(text) = input.whole_text() {
        let size = text.bytes().len() as u64;
        return Ok((Content::Mapped(text), false, size));
    }
    let path = input.path();
    let (mut reader, compressed, size) = input.open()?;
    let mut buf = Vec::new();
    loop {
        if progress.is_cancelled() {
            return Err(ImportError::Cancelled {
                path: path.to_path_buf(),
            });
        }
        match reader.append(&mut buf, READ_STEP) {
            Ok(n) if n < READ_STEP => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ImportError::reading(path, compressed, e)),
        }
    }
    Ok((Content::Owned(buf), compressed, size))
}

/// The import error for a pickle the reader refused.
fn pickle_error(path: &Path, e: &PickleError) -> ImportError {
    let path = path.to_path_buf();
    match e.kind {
        PickleErrorKind::Refused { .. } | PickleErrorKind::Unsupported { .. } => {
            ImportError::Unsupported {
                path,
                detail: format!(
                    "a Python pickle that is not plain data (not a PyTorch memory snapshot): \
                     byte {}: {}",
                    e.offset, e.kind
                ),
            }
        }
        _ => ImportError::Corrupt {
            path,
            location: format!("byte {}", e.offset),
            detail: format!("broken Python pickle: {}", e.kind),
        },
    }
}

/// What a pickle's root is, for the message when it is not a snapshot.
fn not_a_snapshot(path: &Path, root: Value, detail: &str) -> ImportError {
    ImportError::UnknownFormat {
        path: path.to_path_buf(),
        detail: format!(
            "a Python pickle of a {}, but not a PyTorch memory snapshot: {detail}",
            root.type_name()
        ),
    }
}
