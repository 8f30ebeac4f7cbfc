"""Typed stub of warpscope's native module (crates/warpscope-python). Rules: docs/python.md."""

import os
from typing import Any, Iterable, Optional, Tuple, Union

import pyarrow

__version__: str

TABLES: list[str]
"""The tables ``Profile.table`` gives: ``events``, ``kernels``, ``copies``, ``api_calls``,
``flows``, ``memory``, ``devices``, ``runs`` (the Parquet export's) and ``cpu_ops``."""

PathLike = Union[str, "os.PathLike[str]"]

class WarpscopeError(Exception):
    """Base class of warpscope's errors."""

class LoadError(WarpscopeError):
    """A profile could not be read; the message names the file and the problem."""

class ProfileWarning(UserWarning):
    """A problem met while reading a profile that did not stop it (also in ``Profile.warnings``)."""

def load(source: Union[PathLike, bytes], *, name: Optional[str] = None) -> "Profile":
    """Reads a profile in any format the ``warpscope`` command reads, gzip-compressed or not,
    from a path or from bytes (``name`` names bytes in errors and in ``Profile.path``).

    The GIL is released while it parses, and the parse uses every core. Each problem that did
    not stop the read is issued as a :class:`ProfileWarning` and kept in ``Profile.warnings``.

    Raises :class:`LoadError` (naming the file) for a missing file, a directory, a file that is
    not a profile, or one that cannot be parsed; ``TypeError`` for anything but a path or bytes.
    """

def compare(
    runs: Iterable[Union["Profile", PathLike]], *, baseline: Optional[int] = None, top: int = 20
) -> dict[str, Any]:
    """``warpscope compare --format json`` as a dict: the runs (profiles or paths, read on all
    cores) labelled from their file names (``alexnet_b32`` is ``batch=32``), in the order of the
    swept number; ``baseline`` is an index into ``runs`` as given (default: the smallest swept
    number, else the first); ``top`` keeps the 20 longest rows of each table by default, as the command does (0: all).

    Unlike the command, files whose names differ only in the rank are not merged into one run.
    """

def fleet(paths: Union[PathLike, Iterable[PathLike]]) -> dict[str, Any]:
    """``warpscope fleet --format json`` as a dict: a directory of per-rank traces (or the files)
    as one job, read on all cores (docs/fleet.md). Raises :class:`LoadError`."""

class Profile:
    """A profile read by :func:`load`, or a view of a time range of one (:meth:`time_range`).

    Tables are ``pyarrow.Table``s that own their data (they outlive the profile); reports are
    plain dicts. Every method releases the GIL while it works, so threads can share a profile.
    Times are int64 nanoseconds from the profile's first event.
    """

    @property
    def path(self) -> str:
        """The file as given to :func:`load` (or the name given to bytes)."""
    @property
    def format(self) -> str:
        """The format: ``chrome-json``, ``nsys-sqlite``, ``nvprof-csv``, ..."""
    @property
    def tool(self) -> str:
        """The tool that wrote the file."""
    @property
    def warnings(self) -> list[dict[str, Any]]:
        """Problems met while reading: dicts of ``code``, ``message``, ``count``."""
    @property
    def event_count(self) -> int:
        """Number of events in the whole profile."""
    @property
    def range(self) -> Optional[Tuple[int, int]]:
        """The view's ``(start_ns, end_ns)``, or ``None`` for the whole profile."""
    @property
    def extent(self) -> Tuple[int, int]:
        """The first event's start and the last event's end, in nanoseconds."""
    def time_range(self, start_ns: int, end_ns: int) -> "Profile":
        """A view of ``[start_ns, end_ns)``: its tables keep the events that touch the range
        (whole, numbered as in the profile), the flows between two kept events and the memory
        records inside it; its reports analyse the range (``warpscope analyze --range``)."""
    def table(self, name: str) -> pyarrow.Table:
        """The table ``name``, one of :data:`TABLES`."""
    def events(self) -> pyarrow.Table:
        """Every event: run, rank, event, start_ns, dur_ns, name, kind, track, device, stream,
        process, thread, depth."""
    def kernels(self) -> pyarrow.Table:
        """The kernels: run, rank, event, start_ns, dur_ns, name, device, stream, grid_x/y/z,
        block_x/y/z, registers_per_thread, shared_memory_bytes, static_shared_bytes,
        dynamic_shared_bytes, achieved_occupancy_pct, blocks_per_sm, warps_per_sm, correlation,
        external_id, process_group, mangled_name."""
    def copies(self) -> pyarrow.Table:
        """Copies and sets: ..., kind, copy_kind, activity, bytes, src_kind, dst_kind, correlation."""
    def api_calls(self) -> pyarrow.Table:
        """CUDA runtime and driver calls: ..., kind, process, thread, correlation, cbid, external_id."""
    def flows(self) -> pyarrow.Table:
        """Flows between events: run, rank, from_event, to_event, kind."""
    def memory_records(self) -> pyarrow.Table:
        """The memory records (the export's ``memory`` table): record, time_ns, device, action,
        addr, bytes, allocated_bytes, reserved_bytes, stream, track, process, thread, operator,
        operator_stack, operator_event."""
    def devices(self) -> pyarrow.Table:
        """The GPUs: device, name, compute_major, compute_minor, sm_count, memory_bytes."""
    def cpu_ops(self) -> pyarrow.Table:
        """CPU operators by name: name, calls, self_ns, total_ns, gpu_ns, gpu_self_ns."""
    def summary(self, top: Optional[int] = None) -> dict[str, Any]:
        """``warpscope summary --format json`` (over the view's range): ``top`` rows per table."""
    def analyze(
        self,
        *,
        range: Optional[Tuple[int, int]] = None,
        step: Optional[int] = None,
        top: int = 10,
        kernel_wait_us: float = 10.0,
    ) -> dict[str, Any]:
        """``warpscope analyze --format json``: over ``range`` (ns), training step ``step``
        (``ProfilerStep#N``), or the view's range (docs/analysis.md)."""
    def memory(
        self,
        *,
        range: Optional[Tuple[int, int]] = None,
        step: Optional[int] = None,
        top: int = 10,
    ) -> dict[str, Any]:
        """``warpscope memory --format json``: peaks, what was live at them, the allocating
        operators, memory findings (docs/memory.md)."""
